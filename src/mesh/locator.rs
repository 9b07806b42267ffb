//! Point location: a uniform grid over the mesh bounds (on a mesh a runtime
//! edit made, over the bounds of the mesh whose grid it kept) whose cells
//! list the regions whose bounding boxes overlap them.

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

/// A region listed in a cell, as its tile and its place among the tile's
/// regions ([`Tables::tile_start`]), with its bounding box grown by
/// [`LOCATE_EPS`]: a cheap test before the polygon one (thin regions list in
/// many cells). Regions are in tile order, so items in (tile, local) order
/// are in dense order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Item {
    tile: u32,
    local: u32,
    bounds: Aabb,
}

impl Item {
    /// The dense index of the region listed.
    #[inline]
    fn region(&self, tables: &Tables) -> u32 {
        tables.tile_start[self.tile as usize] + self.local
    }
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
            .map(|r| entry_box(tables.polygon(r)))
            .collect();
        // Regions whose boxes cover many cells (long thin diagonals, or the
        // overlapping regions of a crafted file) would make the lists grow
        // as regions x cells: coarsen the grid until they fit the budget.
        loop {
            let grid = Locator {
                origin: bounds.min,
                inv_cell: (cols as f32 / size.x).min(rows as f32 / size.y),
                cols,
                rows,
                starts: Vec::new(),
                items: Vec::new(),
            };
            let entries: u64 = boxes.iter().map(|b| grid.cells_under(b)).sum();
            let fits =
                entries <= MAX_ENTRIES_PER_REGION * n as u64 && entries < u64::from(u32::MAX);
            if fits || (cols == 1 && rows == 1) {
                return grid.filled(&boxes, &tables.tile_start);
            }
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        }
    }

    /// This grid (its lists ignored) listing every region of `boxes`, in
    /// tiles starting at `tile_start`.
    fn filled(mut self, boxes: &[Aabb], tile_start: &[u32]) -> Locator {
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
            tile: u32::MAX,
            local: u32::MAX,
            bounds: Aabb::EMPTY,
        };
        let mut items = vec![unfilled; counts[cells] as usize];
        let mut tile = 0;
        for (r, b) in boxes.iter().enumerate() {
            let r = r as u32;
            while tile + 2 < tile_start.len() && tile_start[tile + 1] <= r {
                tile += 1;
            }
            let local = r - tile_start[tile];
            self.for_cells_under(b, |c| {
                items[fill[c] as usize] = Item {
                    tile: tile as u32,
                    local,
                    bounds: *b,
                };
                fill[c] += 1;
            });
        }
        self.starts = counts;
        self.items = items;
        self
    }

    /// The locator of a mesh a runtime edit made from the one `old` serves,
    /// without listing every region again. The tiles flagged in `changed`
    /// were assembled again; every other tile's regions are the old ones, in
    /// the same order ([`Tables::tile_start`] in both meshes has one entry
    /// per tile of the same tiling). The grid stays `old`'s: each cell keeps
    /// its entries of the tiles kept as they were (an entry names its tile
    /// and its place there, so nothing is renumbered) and takes those of
    /// the changed tiles' regions whose boxes cover it, in dense order, as
    /// [`Locator::build`] would on that grid.
    ///
    /// Lookups answer as a fresh locator's would: a cell lists every region
    /// whose grown box covers it, in index order, so [`Locator::locate`]
    /// gives the lowest-index region holding the point and
    /// [`Locator::candidates_in`] every region within the box, whatever the
    /// grid. `None` where the old grid does not cover the new mesh's
    /// bounds or has fewer than half a cell a region, where the meshes are
    /// not tiled alike, or where the lists would go over the budget: build
    /// afresh then.
    pub(crate) fn rebuilt(
        (old, old_tables): (&Locator, &Tables),
        tables: &Tables,
        changed: &[bool],
    ) -> Option<Locator> {
        let n = tables.region_keys.len();
        let bounds = tables.bounds;
        if old.starts.is_empty() || n == 0 || bounds.is_empty() {
            return None;
        }
        let tiles = changed.len();
        if tables.tile_start.len() != tiles + 1 || old_tables.tile_start.len() != tiles + 1 {
            return None;
        }
        // a kept tile holds as many regions as before (its entries name
        // places in it)
        let size = |starts: &[u32], t: usize| starts[t + 1].checked_sub(starts[t]);
        let same = |t: usize| size(&tables.tile_start, t) == size(&old_tables.tile_start, t);
        if !(0..tiles).all(|t| changed[t] || same(t)) {
            return None;
        }
        // the same arithmetic `locate` uses to turn points away
        let (lo, hi) = (
            (bounds.min - old.origin) * old.inv_cell,
            (bounds.max - old.origin) * old.inv_cell,
        );
        if lo.cmplt(Vec2::ZERO).any() || hi.x > old.cols as f32 || hi.y > old.rows as f32 {
            return None;
        }
        // edits that added many regions: a grid chosen afresh would have
        // about one cell a region, not fewer than half of one
        if n as u64 > 2 * u64::from(old.cols) * u64::from(old.rows) {
            return None;
        }
        // the changed tiles' entries, by cell, each cell's in dense order
        let mut added: Vec<(u32, Item)> = Vec::new();
        for t in (0..tiles).filter(|&t| changed[t]) {
            let first = tables.tile_start[t];
            for r in first..tables.tile_start[t + 1] {
                let bounds = entry_box(tables.polygon(r));
                let item = Item {
                    tile: t as u32,
                    local: r - first,
                    bounds,
                };
                old.for_cells_under(&bounds, |c| added.push((c as u32, item)));
            }
        }
        added.sort_unstable_by_key(|&(c, item)| (c, item.tile, item.local));
        // list positions fit in u32 (copied runs shift theirs unchecked)
        u32::try_from(old.items.len() + added.len()).ok()?;
        let cells = (old.cols * old.rows) as usize;
        // the cells whose lists change: those of the changed tiles' old
        // regions and of their new ones; the others are copied in runs
        let mut dirty = vec![false; cells];
        for t in (0..tiles).filter(|&t| changed[t]) {
            for r in old_tables.tile_start[t]..old_tables.tile_start[t + 1] {
                old.for_cells_under(&entry_box(old_tables.polygon(r)), |c| dirty[c] = true);
            }
        }
        for &(c, _) in &added {
            dirty[c as usize] = true;
        }
        let mut starts = Vec::with_capacity(cells + 1);
        let mut items = Vec::with_capacity(old.items.len() + added.len());
        let mut next = added.iter().peekable();
        let kept = |item: &Item| !changed.get(item.tile as usize).copied().unwrap_or(true);
        let mut c = 0;
        while c < cells {
            if !dirty[c] {
                let end = dirty[c..].iter().position(|&d| d).map_or(cells, |k| c + k);
                let (from, to) = (old.starts[c] as usize, old.starts[end] as usize);
                let at = items.len();
                starts.extend(
                    old.starts[c..end]
                        .iter()
                        .map(|&s| (s as usize - from + at) as u32),
                );
                items.extend_from_slice(&old.items[from..to]);
                c = end;
                continue;
            }
            starts.push(u32::try_from(items.len()).ok()?);
            // the kept tiles' entries here, merged with the new ones (both
            // in (tile, local) order)
            let mut listed = &old.items[old.starts[c] as usize..old.starts[c + 1] as usize];
            while let Some(&&(_, item)) = next.peek().filter(|(at, _)| *at as usize == c) {
                let before =
                    listed.partition_point(|k| (k.tile, k.local) < (item.tile, item.local));
                copy_kept(&listed[..before], kept, &mut items);
                listed = &listed[before..];
                items.push(item);
                next.next();
            }
            copy_kept(listed, kept, &mut items);
            c += 1;
        }
        starts.push(u32::try_from(items.len()).ok()?);
        if items.len() as u64 > MAX_ENTRIES_PER_REGION * n as u64 {
            return None;
        }
        #[cfg(test)]
        tests::REBUILT.with(|k| k.set(k.get() + 1));
        Some(Locator {
            starts,
            items,
            ..*old
        })
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
            let region = item.region(tables);
            let polygon = tables.polygon(region);
            (polygon.len() >= 3 && geometry::convex_contains(polygon, p, LOCATE_EPS))
                .then_some(region)
        })
    }

    /// Dense indices of the regions listed in the cells that the box `b` covers
    /// (may repeat a region); used by nearest-point searches.
    pub(crate) fn candidates_in(&self, tables: &Tables, b: Aabb, out: &mut Vec<u32>) {
        out.clear();
        if self.starts.is_empty() {
            return;
        }
        self.for_cells_under(&b, |c| {
            let listed = &self.items[self.starts[c] as usize..self.starts[c + 1] as usize];
            out.extend(listed.iter().map(|item| item.region(tables)));
        });
    }
}

/// Appends the entries of `listed` that `kept` keeps, run by run.
fn copy_kept(listed: &[Item], kept: impl Fn(&Item) -> bool, out: &mut Vec<Item>) {
    let mut rest = listed;
    while !rest.is_empty() {
        let run = rest
            .iter()
            .position(|item| !kept(item))
            .unwrap_or(rest.len());
        out.extend_from_slice(&rest[..run]);
        rest = rest.get(run + 1..).unwrap_or(&[]);
    }
}

#[cfg(test)]
mod tests {
    use glam::vec2;

    use crate::{BakeConfig, Level, NavMesh};

    thread_local! {
        /// Locators this thread derived from an old one
        /// ([`super::Locator::rebuilt`]).
        pub(super) static REBUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

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

    /// A runtime edit's locator keeps the grid of the mesh it replaced, and
    /// its cells list what listing every region afresh on that grid gives:
    /// the same regions, in the same order, with the same boxes. So does
    /// one derived with every tile flagged as assembled again.
    #[test]
    fn an_edit_lists_the_cells_a_fresh_listing_on_its_grid_gives() {
        use super::{entry_box, Locator};
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
        let mut placed = Vec::new();
        // three buildings, one across a tile border and one over open
        // ground wider than several cells (cells that only the old regions'
        // boxes covered), then all removed
        let middle = vec2(189.0, 66.0);
        let mut recounted = 0;
        assert!(cache.mesh().locate(middle).is_some(), "open ground");
        for step in 0..6 {
            let before = cache.shared_mesh();
            REBUILT.with(|k| k.set(0));
            if step < 3 {
                let at = [
                    (76.0, 76.0, 7.0, 5.0),
                    (60.0, 28.0, 7.0, 5.0),
                    (175.0, 55.0, 28.0, 22.0),
                ];
                let (x, y, w, h) = at[step];
                placed.push(cache.add_obstacle(&building(x, y, w, h)).unwrap());
            } else {
                cache.remove_obstacle(placed.pop().unwrap()).unwrap();
            }
            assert_eq!(
                cache.mesh().locate(middle).is_none(),
                step == 2,
                "step {step}"
            );
            assert_eq!(
                REBUILT.with(std::cell::Cell::get),
                1,
                "derived from the old one"
            );
            let mesh = cache.mesh();
            let (old, loc) = (&before.locator, &mesh.locator);
            assert_eq!(
                (loc.origin, loc.inv_cell, loc.cols, loc.rows),
                (old.origin, old.inv_cell, old.cols, old.rows)
            );
            let boxes: Vec<_> = (0..mesh.region_count() as u32)
                .map(|r| entry_box(mesh.tables.polygon(r)))
                .collect();
            let grid = Locator {
                starts: Vec::new(),
                items: Vec::new(),
                ..*loc
            };
            let fresh = grid.clone().filled(&boxes, &mesh.tables.tile_start);
            assert_eq!(loc.starts, fresh.starts, "step {step}");
            assert!(loc.items == fresh.items, "step {step}");
            // the entries name each region by its tile: the same dense
            // indices as listing by dense index on one "tile"
            let dense = |l: &Locator, tile_start: &[u32]| -> Vec<u32> {
                let base = |t: u32| tile_start[t as usize];
                l.items.iter().map(|i| base(i.tile) + i.local).collect()
            };
            let one_tile = grid.filled(&boxes, &[0, mesh.region_count() as u32]);
            assert_eq!(
                dense(loc, &mesh.tables.tile_start),
                dense(&one_tile, &[0, mesh.region_count() as u32]),
                "step {step}"
            );
            // with every tile assembled again: the same lists
            let tiles = mesh.tables.tile_start.len() - 1;
            assert!(tiles > 1, "a tiled mesh");
            let every = vec![true; tiles];
            let again = Locator::rebuilt((old, &before.tables), &mesh.tables, &every).unwrap();
            assert_eq!(again.starts, fresh.starts, "step {step}");
            assert!(again.items == fresh.items, "step {step}");
            // flags of another tiling are refused, and so are flags keeping
            // a tile whose regions are not as many as before
            let short = &every[1..];
            assert!(Locator::rebuilt((old, &before.tables), &mesh.tables, short).is_none());
            let count = |starts: &[u32], t: usize| starts[t + 1] - starts[t];
            let (was, now) = (&before.tables.tile_start, &mesh.tables.tile_start);
            if (0..tiles).any(|t| count(was, t) != count(now, t)) {
                recounted += 1;
                let none = vec![false; tiles];
                assert!(Locator::rebuilt((old, &before.tables), &mesh.tables, &none).is_none());
            }
            cache.release(before);
        }
        assert!(recounted > 0, "an edit changed a tile's region count");
    }

    /// A mesh reaching past the old grid's cover gets no locator derived
    /// from it (a point there would be turned away), and neither do flags
    /// of another tiling; one within the cover does.
    #[test]
    fn a_mesh_past_the_old_grid_is_not_renumbered() {
        use super::Locator;
        let room = |w: f32| {
            let json = format!(r#"{{"walkable": [[[0,0],[{w},0],[{w},10],[0,10]]]}}"#);
            let config = BakeConfig {
                corridors: false,
                ..BakeConfig::default()
            };
            NavMesh::bake(&Level::from_json_str(&json).unwrap(), &config).unwrap()
        };
        let (small, large) = (room(10.0), room(12.0));
        // every region new, on meshes of one "tile" each
        let every = [true];
        let old = (&small.locator, &small.tables);
        assert!(Locator::rebuilt(old, &large.tables, &every).is_none());
        // flags of another tiling
        let within = Locator::rebuilt((&large.locator, &large.tables), &small.tables, &[]);
        assert!(within.is_none());
        // within the cover
        let within = Locator::rebuilt((&large.locator, &large.tables), &small.tables, &every);
        let within = within.expect("inside the old grid");
        assert_eq!(within.locate(&small.tables, vec2(5.0, 5.0)), Some(0));
        assert_eq!(within.locate(&small.tables, vec2(11.0, 5.0)), None);
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
