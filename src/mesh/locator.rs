//! Point location: a uniform grid over the mesh bounds whose cells list the
//! regions whose bounding boxes overlap them.

use glam::Vec2;

use super::Tables;
use crate::geometry::{self, Aabb};

/// Slack allowed when testing whether a point lies in a region, world units.
/// Points on a shared edge are then found in one of its regions despite f32
/// rounding of coordinates up to about 10^4.
pub(crate) const LOCATE_EPS: f32 = 1e-4;

/// Most cell entries the grid holds per region before it is coarsened: the
/// grid's memory stays linear in the number of regions whatever their shapes
/// (a 1 x 1 grid lists each region once). Real meshes need far fewer; the
/// bound is met by coarsening, which only costs candidate tests.
const MAX_ENTRIES_PER_REGION: u64 = 16;

/// Uniform grid of region candidates.
#[derive(Debug, Clone, Default)]
pub(crate) struct Locator {
    origin: Vec2,
    inv_cell: f32,
    cols: u32,
    rows: u32,
    /// CSR: regions of cell c are `items[starts[c]..starts[c+1]]`, each with
    /// its bounding box beside it, so a cell's candidates are one read (20
    /// bytes an entry rather than 4, and a region has an entry in every cell
    /// its box covers).
    starts: Vec<u32>,
    items: Vec<Item>,
}

/// A region listed in a cell, with its bounding box grown by
/// [`LOCATE_EPS`]: a cheap test before the polygon one (thin regions list in
/// many cells).
#[derive(Debug, Clone, Copy)]
struct Item {
    region: u32,
    bounds: Aabb,
}

impl Locator {
    pub(crate) fn build(tables: &Tables) -> Locator {
        let (n, bounds) = (tables.region_keys.len(), tables.bounds);
        if n == 0 || bounds.is_empty() {
            return Locator::default();
        }
        let size = bounds.size().max(Vec2::splat(1e-3));
        // about one cell per region, square cells
        let cell = ((size.x * size.y) / n as f32).sqrt().max(1e-3);
        let mut cols = ((size.x / cell).ceil() as u32).clamp(1, 4096);
        let mut rows = ((size.y / cell).ceil() as u32).clamp(1, 4096);
        let boxes: Vec<Aabb> = (0..n as u32)
            .map(|r| {
                let b = Aabb::from_points(tables.polygon(r));
                Aabb {
                    min: b.min - Vec2::splat(LOCATE_EPS),
                    max: b.max + Vec2::splat(LOCATE_EPS),
                }
            })
            .collect();
        // Regions whose boxes cover many cells (long thin diagonals, or the
        // overlapping regions of a crafted file) would make the lists grow
        // as regions x cells: coarsen the grid until they fit the budget.
        let (mut loc, ranges) = loop {
            let loc = Locator {
                origin: bounds.min,
                inv_cell: (cols as f32 / size.x).min(rows as f32 / size.y),
                cols,
                rows,
                starts: Vec::new(),
                items: Vec::new(),
            };
            let ranges: Vec<(u32, u32, u32, u32)> = boxes
                .iter()
                .map(|b| {
                    let (x0, y0) = loc.cell_of(b.min);
                    let (x1, y1) = loc.cell_of(b.max);
                    (x0, y0, x1, y1)
                })
                .collect();
            let entries: u64 = ranges
                .iter()
                .map(|&(x0, y0, x1, y1)| u64::from(x1 - x0 + 1) * u64::from(y1 - y0 + 1))
                .sum();
            let fits =
                entries <= MAX_ENTRIES_PER_REGION * n as u64 && entries < u64::from(u32::MAX);
            if fits || (cols == 1 && rows == 1) {
                break (loc, ranges);
            }
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        };
        let cells = (cols * rows) as usize;
        let mut counts = vec![0u32; cells + 1];
        for &(x0, y0, x1, y1) in &ranges {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    counts[(y * cols + x) as usize + 1] += 1;
                }
            }
        }
        for c in 0..cells {
            counts[c + 1] += counts[c];
        }
        let mut fill = counts.clone();
        let unfilled = Item {
            region: u32::MAX,
            bounds: Aabb::EMPTY,
        };
        let mut items = vec![unfilled; counts[cells] as usize];
        for (r, &(x0, y0, x1, y1)) in ranges.iter().enumerate() {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = (y * cols + x) as usize;
                    items[fill[c] as usize] = Item {
                        region: r as u32,
                        bounds: boxes[r],
                    };
                    fill[c] += 1;
                }
            }
        }
        loc.starts = counts;
        loc.items = items;
        loc
    }

    #[inline]
    fn cell_of(&self, p: Vec2) -> (u32, u32) {
        let c = ((p - self.origin) * self.inv_cell).max(Vec2::ZERO);
        (
            (c.x as u32).min(self.cols.saturating_sub(1)),
            (c.y as u32).min(self.rows.saturating_sub(1)),
        )
    }

    /// Dense index of a region containing `p`.
    pub(crate) fn locate(&self, tables: &Tables, p: Vec2) -> Option<u32> {
        if self.starts.is_empty() {
            return None;
        }
        let local = (p - self.origin) * self.inv_cell;
        let slack = LOCATE_EPS * self.inv_cell;
        if local.x < -slack
            || local.y < -slack
            || local.x > self.cols as f32 + slack
            || local.y > self.rows as f32 + slack
        {
            return None;
        }
        let (x, y) = self.cell_of(p);
        let c = (y * self.cols + x) as usize;
        let candidates = &self.items[self.starts[c] as usize..self.starts[c + 1] as usize];
        candidates.iter().find_map(|item| {
            let b = &item.bounds;
            if p.cmplt(b.min).any() || p.cmpgt(b.max).any() {
                return None;
            }
            let polygon = tables.polygon(item.region);
            (polygon.len() >= 3 && geometry::convex_contains(polygon, p, LOCATE_EPS))
                .then_some(item.region)
        })
    }

    /// Dense indices of the regions listed in the cells that the box `b` covers
    /// (may repeat a region); used by nearest-point searches.
    pub(crate) fn candidates_in(&self, b: Aabb, out: &mut Vec<u32>) {
        out.clear();
        if self.starts.is_empty() {
            return;
        }
        let (x0, y0) = self.cell_of(b.min);
        let (x1, y1) = self.cell_of(b.max);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let c = (y * self.cols + x) as usize;
                out.extend(
                    self.items[self.starts[c] as usize..self.starts[c + 1] as usize]
                        .iter()
                        .map(|item| item.region),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::vec2;

    use crate::{BakeConfig, Level, NavMesh};

    fn entries_per_region(mesh: &NavMesh) -> f64 {
        mesh.locator.items.len() as f64 / mesh.region_count() as f64
    }

    /// Real maps keep the fine grid: far under the budget.
    #[test]
    fn a_real_map_keeps_about_one_cell_per_region() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/maps/den520d.map");
        let mesh = NavMesh::bake(
            &Level::from_movingai_file(path).unwrap(),
            &BakeConfig::default(),
        )
        .unwrap();
        let per_region = entries_per_region(&mesh);
        assert!(per_region < 4.0, "{per_region}");
        assert!(mesh.locator.cols as usize * mesh.locator.rows as usize >= mesh.region_count() / 2);
    }

    /// Regression (hostile-input campaign): thousands of long thin diagonal
    /// regions listed in every cell their boxes cover took memory growing as
    /// regions x cells. The lists now stay within the budget, and every
    /// point is still found.
    #[test]
    fn thin_diagonal_regions_stay_within_the_budget() {
        // a field cut by many thin diagonal walls: long diagonal regions
        let mut obstacles = String::new();
        for i in 0..200 {
            let x = i as f32 * 3.0;
            if i > 0 {
                obstacles.push(',');
            }
            obstacles.push_str(&format!(
                "[[{x},0],[{},0],[{},600],[{},600]]",
                x + 0.5,
                x + 300.5,
                x + 300.0
            ));
        }
        let level = Level::from_json_str(&format!(
            r#"{{"walkable": [[[0,0],[1000,0],[1000,600],[0,600]]], "obstacles": [{obstacles}]}}"#
        ))
        .unwrap();
        let config = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        let per_region = entries_per_region(&mesh);
        eprintln!("{} regions, {per_region} entries each", mesh.region_count());
        assert!(
            per_region <= super::MAX_ENTRIES_PER_REGION as f64,
            "{per_region}"
        );
        for (key, region) in mesh.regions() {
            assert_eq!(mesh.locate(region.centroid()), Some(key));
        }
        assert_eq!(mesh.locate(vec2(-1.0, 5.0)), None);
    }
}
