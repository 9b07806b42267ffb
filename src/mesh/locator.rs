//! Point location: per tile of a tiled mesh (one part over any other mesh),
//! a uniform grid over the bounds of the tile's regions whose cells list the
//! regions whose bounding boxes overlap them. A tile's part depends on its
//! own regions alone, so a runtime edit lists again only the tiles it
//! assembled again and shares every other part with the mesh it replaced.

use std::sync::Arc;

use glam::Vec2;

use super::{Tables, TileGrid};
use crate::geometry::{self, Aabb};

/// Slack allowed when testing whether a point lies in a region, world units.
/// Points on a shared edge are then found in one of its regions despite f32
/// rounding of coordinates up to about 10^4.
pub(crate) const LOCATE_EPS: f32 = 1e-4;

/// Most cell entries a part holds per region before its grid is coarsened:
/// the grid's memory stays linear in the number of regions whatever their
/// shapes (a 1 x 1 grid lists each region once). Real meshes need far
/// fewer; the bound is met by coarsening, which only costs candidate tests.
const MAX_ENTRIES_PER_REGION: u64 = 16;

/// The point locator: its parts, one per tile of a tiled mesh in tile order
/// (or one over the whole mesh), and where they lie.
#[derive(Debug, Clone, Default)]
pub(crate) struct Locator {
    /// The tiles of a tiled mesh (`None`: one part over the whole mesh).
    tiles: Option<Tiles>,
    /// Per part, the union of its entries' boxes: what it can answer for.
    bounds: Vec<Aabb>,
    parts: Vec<Arc<Part>>,
}

/// Square tiles from `origin`, `cols` x `rows` of them in row-major order
/// ([`TileGrid`] in world units).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tiles {
    origin: Vec2,
    size: f32,
    cols: u32,
    rows: u32,
}

impl Tiles {
    /// The tile holding `p`, clamped to the tiling, as (column, row).
    #[inline]
    fn tile_of(&self, p: Vec2) -> (u32, u32) {
        let c = ((p - self.origin) / self.size).max(Vec2::ZERO);
        (
            (c.x as u32).min(self.cols - 1),
            (c.y as u32).min(self.rows - 1),
        )
    }

    /// The columns and rows of the tiles of the box `b` and the ring around
    /// them: `[x0, y0, x1, y1]`, inclusive.
    fn ring(&self, b: &Aabb) -> [u32; 4] {
        let (x0, y0) = self.tile_of(b.min);
        let (x1, y1) = self.tile_of(b.max);
        [
            x0.saturating_sub(1),
            y0.saturating_sub(1),
            (x1 + 1).min(self.cols - 1),
            (y1 + 1).min(self.rows - 1),
        ]
    }

    /// Tile `t`'s rectangle.
    fn rect(&self, t: usize) -> Aabb {
        let (x, y) = (t as u32 % self.cols, t as u32 / self.cols);
        let min = self.origin + Vec2::new(x as f32, y as f32) * self.size;
        Aabb {
            min,
            max: min + Vec2::splat(self.size),
        }
    }
}

/// A uniform grid over the bounds of some regions: the regions numbered
/// from one index on (a tile's, or the whole mesh's).
#[derive(Debug, Clone, Default, PartialEq)]
struct Part {
    /// How many regions it lists.
    regions: u32,
    origin: Vec2,
    inv_cell: f32,
    cols: u32,
    rows: u32,
    /// CSR: regions of cell c are `items[starts[c]..starts[c+1]]`, each with
    /// its bounding box beside it, so a cell's candidates are one read (a
    /// region has an entry in every cell its box covers).
    starts: Vec<u32>,
    items: Vec<Item>,
}

/// A region listed in a cell, by its place among the part's regions, with
/// its bounding box grown by [`LOCATE_EPS`]: a cheap test before the polygon
/// one (thin regions list in many cells). A cell lists its regions in index
/// order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Item {
    local: u32,
    bounds: Aabb,
}

/// A region's bounding box grown by [`LOCATE_EPS`], as its entries hold it.
fn entry_box(polygon: &[Vec2]) -> Aabb {
    let b = Aabb::from_points(polygon);
    Aabb {
        min: b.min - Vec2::splat(LOCATE_EPS),
        max: b.max + Vec2::splat(LOCATE_EPS),
    }
}

impl Locator {
    /// The locator of a mesh with `tables`, in parts by tile when the mesh
    /// is tiled as `tiling` says (its regions numbered tile by tile,
    /// [`Tables::tile_start`], each within its tile).
    #[cfg(test)]
    pub(crate) fn build(tables: &Tables, tiling: Option<&TileGrid>) -> Locator {
        Locator::rebuilt(None, tables, tiling)
    }

    /// [`Locator::build`], sharing the parts of `old`'s tiles that `old`
    /// flags as kept: tiles whose regions are the old ones, in the same
    /// order. A part depends on its tile's regions alone, so the result is
    /// what building afresh gives. Nothing is shared where the tilings
    /// differ, the flags are not one per tile, or a kept tile's region count
    /// changed.
    pub(crate) fn rebuilt(
        old: Option<(&Locator, &[bool])>,
        tables: &Tables,
        tiling: Option<&TileGrid>,
    ) -> Locator {
        let n = tables.region_keys.len() as u32;
        if n == 0 || tables.bounds.is_empty() {
            return Locator::default();
        }
        let Some((tiles, count)) = tiling.and_then(|g| tiles_of(g, &tables.tile_start)) else {
            return Locator::whole(tables);
        };
        let kept = |t: usize| -> Option<Arc<Part>> {
            let (old, changed) = old?;
            if old.tiles != Some(tiles) || changed.len() != count || changed[t] {
                return None;
            }
            old.parts.get(t).cloned()
        };
        let mut locator = Locator {
            tiles: Some(tiles),
            bounds: Vec::with_capacity(count),
            parts: Vec::with_capacity(count),
        };
        for t in 0..count {
            let first = tables.tile_start[t];
            let regions = tables.tile_start[t + 1] - first;
            let polygon = |local: u32| tables.polygon(first + local);
            let (part, bounds) = match kept(t) {
                // the kept part lists as many regions as the tile holds
                Some(part) if part.regions == regions => {
                    let bounds = old.map_or(Aabb::EMPTY, |(o, _)| o.bounds[t]);
                    (part, bounds)
                }
                _ => {
                    let (part, bounds) = Part::build(regions, polygon);
                    (Arc::new(part), bounds)
                }
            };
            // a part reaching past the ring of tiles around its own would
            // not be asked: one part over the whole mesh then
            let rect = tiles.rect(t);
            let reach = Vec2::splat(0.5 * tiles.size);
            if !bounds.is_empty()
                && (bounds.min.cmplt(rect.min - reach).any()
                    || bounds.max.cmpgt(rect.max + reach).any())
            {
                return Locator::whole(tables);
            }
            locator.bounds.push(bounds);
            locator.parts.push(part);
        }
        locator
    }

    /// One part over the whole mesh.
    fn whole(tables: &Tables) -> Locator {
        let n = tables.region_keys.len() as u32;
        let (part, bounds) = Part::build(n, |r| tables.polygon(r));
        Locator {
            tiles: None,
            bounds: vec![bounds],
            parts: vec![Arc::new(part)],
        }
    }

    /// The parts whose bounds meet the box `b` (those of its tiles and the
    /// ring around them), in index order, each with the dense index of its
    /// first region.
    fn parts_near<'a>(
        &'a self,
        tables: &'a Tables,
        b: Aabb,
    ) -> impl Iterator<Item = (&'a Part, u32)> + 'a {
        let (cols, [x0, y0, x1, y1]) = match &self.tiles {
            Some(tiles) => (tiles.cols, tiles.ring(&b)),
            None => (1, [0; 4]),
        };
        (y0..=y1)
            .flat_map(move |y| (x0..=x1).map(move |x| (y * cols + x) as usize))
            .filter(move |&t| {
                self.bounds
                    .get(t)
                    .is_some_and(|p| !(b.max.cmplt(p.min).any() || b.min.cmpgt(p.max).any()))
            })
            .map(move |t| {
                let first = tables.tile_start.get(t).copied().unwrap_or(0);
                (&*self.parts[t], first)
            })
    }

    /// Dense index of a region containing `p`: the lowest one.
    pub(crate) fn locate(&self, tables: &Tables, p: Vec2) -> Option<u32> {
        let at = |t: usize| {
            let b = self.bounds.get(t)?;
            if p.cmplt(b.min).any() || p.cmpgt(b.max).any() {
                return None;
            }
            let first = tables.tile_start.get(t).copied().unwrap_or(0);
            let local = self.parts[t].locate(p, |local| tables.polygon(first + local))?;
            Some(first + local)
        };
        let Some(tiles) = &self.tiles else {
            return at(0);
        };
        // the parts of the tile holding `p` and of the ring around it, in
        // index order
        let [x0, y0, x1, y1] = tiles.ring(&Aabb { min: p, max: p });
        (y0..=y1).find_map(|y| (x0..=x1).find_map(|x| at((y * tiles.cols + x) as usize)))
    }

    /// Dense indices of the regions listed in the cells that the box `b`
    /// covers (may repeat a region); used by nearest-point searches.
    pub(crate) fn candidates_in(&self, tables: &Tables, b: Aabb, out: &mut Vec<u32>) {
        out.clear();
        for (part, first) in self.parts_near(tables, b) {
            if part.starts.is_empty() {
                continue;
            }
            part.for_cells_under(&b, |c| {
                let listed = &part.items[part.starts[c] as usize..part.starts[c + 1] as usize];
                out.extend(listed.iter().map(|item| first + item.local));
            });
        }
    }
}

/// The locator's tiles for a mesh tiled as `g` whose regions start at
/// `tile_start` per tile, and how many there are; `None` when the regions
/// are not numbered by those tiles (a loaded mesh is one run).
fn tiles_of(g: &TileGrid, tile_start: &[u32]) -> Option<(Tiles, usize)> {
    let count = (g.count[0] as usize).checked_mul(g.count[1] as usize)?;
    if count == 0 || tile_start.len() != count + 1 || !g.size.is_finite() || g.size <= 0.0 {
        return None;
    }
    let origin = Vec2::new(
        (g.first[0] as f64 * g.size) as f32,
        (g.first[1] as f64 * g.size) as f32,
    );
    let tiles = Tiles {
        origin,
        size: g.size as f32,
        cols: g.count[0],
        rows: g.count[1],
    };
    (origin.is_finite() && tiles.size > 0.0).then_some((tiles, count))
}

impl Part {
    /// The part listing `n` regions, `polygon(i)` the `i`-th, and the union
    /// of their entries' boxes.
    fn build<'a>(n: u32, polygon: impl Fn(u32) -> &'a [Vec2]) -> (Part, Aabb) {
        let boxes: Vec<Aabb> = (0..n).map(|r| entry_box(polygon(r))).collect();
        let bounds = boxes.iter().fold(Aabb::EMPTY, |a, b| a.union(*b));
        if n == 0 || bounds.is_empty() {
            return (Part::default(), Aabb::EMPTY);
        }
        let size = bounds.size().max(Vec2::splat(1e-3));
        // about one cell per region, square cells
        let cell = ((size.x * size.y) / n as f32).sqrt().max(1e-3);
        let mut cols = ((size.x / cell).ceil() as u32).clamp(1, 4096);
        let mut rows = ((size.y / cell).ceil() as u32).clamp(1, 4096);
        // Regions whose boxes cover many cells (long thin diagonals, or the
        // overlapping regions of a crafted file) would make the lists grow
        // as regions x cells: coarsen the grid until they fit the budget.
        loop {
            let grid = Part {
                regions: n,
                origin: bounds.min,
                inv_cell: (cols as f32 / size.x).min(rows as f32 / size.y),
                cols,
                rows,
                starts: Vec::new(),
                items: Vec::new(),
            };
            let entries: u64 = boxes.iter().map(|b| grid.cells_under(b)).sum();
            let fits =
                entries <= MAX_ENTRIES_PER_REGION * u64::from(n) && entries < u64::from(u32::MAX);
            if fits || (cols == 1 && rows == 1) {
                return (grid.filled(&boxes), bounds);
            }
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        }
    }

    /// This grid (its lists ignored) listing every region of `boxes`.
    fn filled(mut self, boxes: &[Aabb]) -> Part {
        let cells = (self.cols * self.rows) as usize;
        let mut counts = vec![0u32; cells + 1];
        for b in boxes {
            self.for_cells_under(b, |c| counts[c + 1] += 1);
        }
        for c in 0..cells {
            counts[c + 1] += counts[c];
        }
        let mut fill = counts.clone();
        let unfilled = Item {
            local: u32::MAX,
            bounds: Aabb::EMPTY,
        };
        let mut items = vec![unfilled; counts[cells] as usize];
        for (local, b) in boxes.iter().enumerate() {
            self.for_cells_under(b, |c| {
                items[fill[c] as usize] = Item {
                    local: local as u32,
                    bounds: *b,
                };
                fill[c] += 1;
            });
        }
        self.starts = counts;
        self.items = items;
        self
    }

    /// How many cells the box `b` covers (none when it is empty).
    fn cells_under(&self, b: &Aabb) -> u64 {
        let (x0, y0) = self.cell_of(b.min);
        let (x1, y1) = self.cell_of(b.max);
        let span = |lo: u32, hi: u32| u64::from(hi.saturating_add(1).saturating_sub(lo));
        span(x0, x1) * span(y0, y1)
    }

    /// Calls `f` with each cell the box `b` covers, row by row.
    fn for_cells_under(&self, b: &Aabb, mut f: impl FnMut(usize)) {
        let (x0, y0) = self.cell_of(b.min);
        let (x1, y1) = self.cell_of(b.max);
        for y in y0..=y1 {
            for x in x0..=x1 {
                f((y * self.cols + x) as usize);
            }
        }
    }

    #[inline]
    fn cell_of(&self, p: Vec2) -> (u32, u32) {
        let c = ((p - self.origin) * self.inv_cell).max(Vec2::ZERO);
        (
            (c.x as u32).min(self.cols.saturating_sub(1)),
            (c.y as u32).min(self.rows.saturating_sub(1)),
        )
    }

    /// The lowest of the part's regions containing `p`, `polygon(i)` the
    /// `i`-th.
    fn locate<'a>(&self, p: Vec2, polygon: impl Fn(u32) -> &'a [Vec2]) -> Option<u32> {
        if self.starts.is_empty() {
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
            let polygon = polygon(item.local);
            (polygon.len() >= 3 && geometry::convex_contains(polygon, p, LOCATE_EPS))
                .then_some(item.local)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::{vec2, Vec2};

    use super::{entry_box, Locator, LOCATE_EPS};
    use crate::geometry::{self, Aabb};
    use crate::{BakeConfig, Level, NavMesh};

    fn entries_per_region(mesh: &NavMesh) -> f64 {
        let entries: usize = mesh.locator.parts.iter().map(|p| p.items.len()).sum();
        entries as f64 / mesh.region_count() as f64
    }

    /// What a locator must answer, by testing every region: the lowest one
    /// whose grown box and polygon hold `p`.
    fn lowest_holding(mesh: &NavMesh, p: Vec2) -> Option<u32> {
        (0..mesh.region_count() as u32).find(|&r| {
            let polygon = mesh.tables.polygon(r);
            let b = entry_box(polygon);
            !(p.cmplt(b.min).any() || p.cmpgt(b.max).any())
                && polygon.len() >= 3
                && geometry::convex_contains(polygon, p, LOCATE_EPS)
        })
    }

    /// Points to locate over a mesh: a lattice over its bounds and past
    /// them, points on and just beside the borders of tiles of `tile`, and
    /// every region's corners and centre.
    fn probes(mesh: &NavMesh, tile: f32) -> Vec<Vec2> {
        let b = mesh.tables.bounds;
        let mut out = Vec::new();
        for i in 0..=60 {
            for j in 0..=60 {
                let f = Vec2::new(i as f32, j as f32) / 60.0 * 1.02 - Vec2::splat(0.01);
                out.push(b.min + b.size() * f);
            }
        }
        let first = (b.min / tile).floor() * tile;
        let steps = ((b.max - first) / tile).ceil();
        for k in 0..=steps.x.max(steps.y) as u32 {
            for j in 0..200 {
                let along = b.min + b.size() * (j as f32 + 0.5) / 200.0;
                let at = first + Vec2::splat(k as f32 * tile);
                for d in [0.0, 0.5 * LOCATE_EPS, -0.5 * LOCATE_EPS, -2.0 * LOCATE_EPS] {
                    out.push(vec2(at.x + d, along.y));
                    out.push(vec2(along.x, at.y + d));
                }
            }
        }
        for r in 0..mesh.region_count() as u32 {
            let polygon = mesh.tables.polygon(r);
            out.extend_from_slice(polygon);
            out.push(polygon.iter().copied().sum::<Vec2>() / polygon.len() as f32);
        }
        out
    }

    /// Every probe is answered as testing every region answers, and the
    /// candidates of a box hold every region whose grown box meets it.
    fn assert_answers_as_every_region(mesh: &NavMesh, tile: f32) {
        let mut candidates = Vec::new();
        for (k, p) in probes(mesh, tile).into_iter().enumerate() {
            let found = mesh.locator.locate(&mesh.tables, p);
            assert_eq!(found, lowest_holding(mesh, p), "{p}");
            if k % 7 == 0 {
                let b = Aabb {
                    min: p - Vec2::splat(2.5),
                    max: p + Vec2::splat(2.5),
                };
                mesh.locator.candidates_in(&mesh.tables, b, &mut candidates);
                for r in 0..mesh.region_count() as u32 {
                    let e = entry_box(mesh.tables.polygon(r));
                    if !(b.max.cmplt(e.min).any() || b.min.cmpgt(e.max).any()) {
                        assert!(candidates.contains(&r), "region {r} near {p}");
                    }
                }
            }
        }
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
        assert_eq!(mesh.locator.parts.len(), 1, "one part on a mesh not tiled");
        let part = &mesh.locator.parts[0];
        assert!(part.cols as usize * part.rows as usize >= mesh.region_count() / 2);
        assert_answers_as_every_region(&mesh, 64.0);
    }

    /// On a tiled mesh through runtime edits (a building across a tile
    /// border, one over open ground wider than a tile's cells, then both
    /// removed), the locator is what building it afresh gives, the parts of
    /// the tiles an edit kept are the old mesh's own, and every point is
    /// found in the region testing every region finds, on tile borders too.
    #[test]
    fn an_edit_shares_the_parts_of_the_tiles_it_kept() {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        let config = BakeConfig {
            tile_size: Some(32.0),
            corridors: false,
            ..BakeConfig::default()
        };
        let building = |x: f32, y: f32, w: f32, h: f32| {
            [
                vec2(x, y),
                vec2(x + w, y),
                vec2(x + w, y + h),
                vec2(x, y + h),
            ]
        };
        let mut cache = crate::TileCache::new(&level, &config).unwrap();
        let tiles = cache.mesh().tables.tile_start.len() - 1;
        assert!(tiles > 1 && cache.mesh().locator.parts.len() == tiles);
        assert_answers_as_every_region(cache.mesh(), 32.0);
        let middle = vec2(189.0, 66.0);
        assert!(cache.mesh().locate(middle).is_some(), "open ground");
        let (mut placed, mut recounts) = (Vec::new(), 0);
        for step in 0..4 {
            let before = cache.shared_mesh();
            if step < 2 {
                let at = [(60.0, 28.0, 7.0, 5.0), (175.0, 55.0, 28.0, 22.0)];
                let (x, y, w, h) = at[step];
                placed.push(cache.add_obstacle(&building(x, y, w, h)).unwrap());
            } else {
                cache.remove_obstacle(placed.pop().unwrap()).unwrap();
            }
            let mesh = cache.mesh();
            assert_eq!(mesh.locate(middle).is_none(), step == 1, "step {step}");
            let fresh = Locator::build(&mesh.tables, mesh.data.tiling.as_ref());
            let loc = &mesh.locator;
            assert_eq!(loc.tiles, fresh.tiles);
            assert_eq!(loc.bounds, fresh.bounds, "step {step}");
            assert!(loc.parts == fresh.parts, "step {step}");
            let shared = (0..tiles)
                .filter(|&t| Arc::ptr_eq(&loc.parts[t], &before.locator.parts[t]))
                .count();
            assert!(
                shared < tiles && shared + 12 >= tiles,
                "step {step}: {shared} of {tiles}"
            );
            // flags that keep every tile share no part of a tile whose
            // region count changed
            let none = vec![false; tiles];
            let tiling = mesh.data.tiling.as_ref();
            let again = Locator::rebuilt(Some((&before.locator, &none)), &mesh.tables, tiling);
            let count = |starts: &[u32], t: usize| starts[t + 1] - starts[t];
            let (was, now) = (&before.tables.tile_start, &mesh.tables.tile_start);
            let recounted: Vec<usize> = (0..tiles)
                .filter(|&t| count(was, t) != count(now, t))
                .collect();
            recounts += recounted.len();
            for t in recounted {
                assert!(!Arc::ptr_eq(&again.parts[t], &before.locator.parts[t]));
                assert!(again.parts[t] == fresh.parts[t]);
            }
            assert_answers_as_every_region(mesh, 32.0);
            cache.release(before);
        }
        assert!(recounts > 0, "an edit changed a tile's region count");
    }

    /// Nothing is shared with a locator of other tiles, or with flags that
    /// are not one per tile, and the result is the fresh one all the same;
    /// with the same tiles and every one kept, every part is shared.
    #[test]
    fn parts_are_shared_only_by_a_locator_of_the_same_tiles() {
        let json = r#"{"walkable": [[[0,0],[40,0],[40,10],[0,10]]],
            "obstacles": [[[9,3],[13,3],[13,6],[9,6]], [[22,5],[30,5],[30,7]]]}"#;
        let level = Level::from_json_str(json).unwrap();
        let bake = |tile: Option<f32>| {
            let config = BakeConfig {
                corridors: false,
                tile_size: tile,
                ..BakeConfig::default()
            };
            match tile {
                Some(_) => crate::TileCache::new(&level, &config).unwrap().into_mesh(),
                None => NavMesh::bake(&level, &config).unwrap(),
            }
        };
        let (whole, tiled, other) = (bake(None), bake(Some(8.0)), bake(Some(5.0)));
        assert_eq!(whole.locator.parts.len(), 1);
        let tiles = tiled.locator.parts.len();
        assert!(tiles > 1 && other.locator.parts.len() > 1);
        let tiling = tiled.data.tiling.as_ref();
        let unflagged = |n: usize| vec![false; n];
        for (old, flags) in [
            (&other.locator, unflagged(other.locator.parts.len())),
            (&whole.locator, unflagged(tiles)),
            (&tiled.locator, unflagged(tiles - 1)),
        ] {
            let again = Locator::rebuilt(Some((old, &flags)), &tiled.tables, tiling);
            assert!(again.parts == tiled.locator.parts);
            assert!((0..tiles).all(|t| !Arc::ptr_eq(&again.parts[t], &tiled.locator.parts[t])));
        }
        let kept = unflagged(tiles);
        let again = Locator::rebuilt(Some((&tiled.locator, &kept)), &tiled.tables, tiling);
        assert!((0..tiles).all(|t| Arc::ptr_eq(&again.parts[t], &tiled.locator.parts[t])));
        // a tiling whose tiles the regions do not keep to (shifted by a
        // tile and a half): one part over the whole mesh
        let mut shifted = *tiling.unwrap();
        shifted.first[0] -= 1;
        shifted.size *= 1.5;
        let one = Locator::build(&tiled.tables, Some(&shifted));
        assert!(one.tiles.is_none() && one.parts.len() == 1);
        for mesh in [&whole, &tiled, &other] {
            assert_answers_as_every_region(mesh, 8.0);
            assert_answers_as_every_region(mesh, 5.0);
            assert_eq!(mesh.locate(vec2(41.0, 5.0)), None);
        }
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
