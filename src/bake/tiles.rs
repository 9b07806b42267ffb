//! Tiled bakes and runtime obstacles ([`TileCache`]).
//!
//! A tiled bake cuts the plane into square tiles of [`BakeConfig::tile_size`]
//! on a fixed grid anchored at the origin, and bakes each tile on its own
//! from its canonical inputs: the level's walkable contours, obstacles and
//! areas clipped to the tile, plus the runtime obstacles over it. A tile's
//! result depends only on that set of inputs (obstacles are sorted by their
//! coordinates before the booleans), so re-baking the tiles an edit touches
//! gives exactly what a fresh bake of the edited level gives, in any order of
//! edits. The idea is Recast's tile cache; each tile runs the untiled bake's
//! booleans, constrained Delaunay triangulation and merge.
//!
//! ```text
//! level -> clip per tile -> (booleans, CDT, merge) per tile -> assemble -> NavMesh
//!                 ^ runtime obstacles re-bake only the tiles they overlap,
//!                   and only those and their neighbours are assembled again
//! ```
//!
//! Regions never cross a tile border. Where two tiles meet, both sides have
//! the same border points (the clipper computes a crossing from the original
//! edge, whichever tile asks), and the assembly splits a border edge at any
//! border point of the other side, so every border segment is a portal or a
//! wall on both sides.

use std::borrow::Cow;
use std::sync::Arc;

use glam::{DVec2, Vec2};
use slotmap::SlotMap;

use super::merge::MergedPolygon;
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay_rule::OverlayRule;

use super::hierarchy::{LandmarkBuild, LANDMARKS};
use super::outline::Outline;
use super::outline::{as_points, counter_clockwise, Contours, Grid, Pens};
use super::{
    assemble, finish, merged_polygons, regions_by_kind, AssemblyScratch, BakeConfig, Replacing,
    NO_TWIN,
};
use crate::error::{BakeError, EditError};
use crate::fxmap::FxHashMap;
use crate::geometry::Aabb;
use crate::level::{validate_obstacle, Level};
use crate::mesh::hierarchy::{HierarchyData, TableBuild};
use crate::mesh::{
    AreaKind, Linked, MeshData, NavMesh, Region, RegionId, Sized, SizedSlot, Succession, TileGrid,
};

slotmap::new_key_type! {
    /// A runtime obstacle of a [`TileCache`]; stale after
    /// [`TileCache::remove_obstacle`].
    pub struct ObstacleId;
}

/// One edit of a batch ([`TileCache::apply`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Adds an obstacle with this outline (any winding, simple).
    Add(Vec<Vec2>),
    /// Removes an obstacle added earlier.
    Remove(ObstacleId),
}

/// Most tiles a tiled bake may have (each holds its inputs and results; a
/// tile size far below the level's features would only slow everything).
pub const MAX_TILES: usize = 1 << 20;

/// What one tile is baked from, besides runtime obstacles: the level's
/// walkable contours, obstacles (counter-clockwise) and costed areas (with
/// their area kind), clipped to the tile.
#[derive(Debug, Clone, Default)]
struct TileInputs {
    walkable: Vec<Vec<DVec2>>,
    obstacles: Vec<Vec<DVec2>>,
    areas: Vec<(u16, Vec<DVec2>)>,
}

/// A baked tile: its vertices and convex polygons (area kinds as in the
/// mesh). Never changed once made, and shared: a mesh an edit carries for a
/// wider agent takes each tile it does not derive again by reference.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TileMesh {
    points: Arc<[DVec2]>,
    polygons: Arc<[MergedPolygon]>,
    triangles: u32,
    dropped: u32,
    walkable_area: f64,
}

/// A runtime obstacle: the outline as given, counter-clockwise in f64, and
/// the tiles it overlaps.
#[derive(Debug, Clone)]
struct Obstacle {
    outline: Vec<Vec2>,
    ccw: Vec<DVec2>,
    /// Its bounding box.
    lo: DVec2,
    hi: DVec2,
    /// The tiles it overlaps, `None` when it lies off the tile grid.
    tiles: Option<TileRange>,
    /// [`TileCache::generation`] of the edit that added it.
    added: u64,
}

/// Tiles `x0..=x1` by `y0..=y1`, as indices into the cache's tile grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TileRange {
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
}

/// The tile grid of a level: which tiles exist and where they are.
#[derive(Debug, Clone, Copy)]
struct Tiling {
    size: f64,
    /// Tile coordinates (multiples of `size`) of the first tile.
    first: [i64; 2],
    /// Tiles along x and y.
    count: [usize; 2],
}

impl Tiling {
    /// Per tile, whether it is at most `k` tiles away (along x and y) from
    /// one of `tiles`.
    fn around(&self, tiles: &[usize], k: usize) -> Vec<bool> {
        let mut out = vec![false; self.len()];
        let (w, h) = (self.count[0], self.count[1]);
        for &d in tiles {
            let (x, y) = (d % w, d / w);
            for ty in y.saturating_sub(k)..=(y + k).min(h - 1) {
                for tx in x.saturating_sub(k)..=(x + k).min(w - 1) {
                    out[ty * w + tx] = true;
                }
            }
        }
        out
    }

    /// The tile grid covering walkable space (bounding box `lo`..`hi`).
    fn new(size: f64, lo: DVec2, hi: DVec2) -> Tiling {
        let first = [(lo.x / size).floor() as i64, (lo.y / size).floor() as i64];
        let last = [
            ((hi.x / size).ceil() as i64 - 1).max(first[0]),
            ((hi.y / size).ceil() as i64 - 1).max(first[1]),
        ];
        Tiling {
            size,
            first,
            count: [
                (last[0] - first[0] + 1) as usize,
                (last[1] - first[1] + 1) as usize,
            ],
        }
    }

    /// The tiling a mesh records.
    fn of(grid: TileGrid) -> Tiling {
        Tiling {
            size: grid.size,
            first: grid.first,
            count: grid.count.map(|c| c as usize),
        }
    }

    fn len(&self) -> usize {
        self.count[0] * self.count[1]
    }

    /// The tile a point inside the tiling lies in (clamped to it).
    fn tile_of(&self, p: DVec2) -> usize {
        let axis = |k: usize, v: f64| {
            let i = (v / self.size).floor() as i64 - self.first[k];
            i.clamp(0, self.count[k] as i64 - 1) as usize
        };
        axis(1, p.y) * self.count[0] + axis(0, p.x)
    }

    /// The rectangle of tile `index` (row-major from the lowest y).
    fn rect(&self, index: usize) -> [DVec2; 2] {
        let (tx, ty) = (
            self.first[0] + (index % self.count[0]) as i64,
            self.first[1] + (index / self.count[0]) as i64,
        );
        let lo = DVec2::new(tx as f64 * self.size, ty as f64 * self.size);
        [lo, lo + DVec2::splat(self.size)]
    }

    /// The tiles a box overlaps with some area, or `None` when it misses them all.
    fn range(&self, lo: DVec2, hi: DVec2) -> Option<TileRange> {
        let axis = |k: usize, lo: f64, hi: f64| {
            let a = (lo / self.size).floor() as i64 - self.first[k];
            let b = ((hi / self.size).ceil() as i64 - 1 - self.first[k]).max(a);
            let n = self.count[k] as i64;
            if b < 0 || a >= n {
                return None;
            }
            Some((a.max(0) as usize, b.min(n - 1) as usize))
        };
        let (x0, x1) = axis(0, lo.x, hi.x)?;
        let (y0, y1) = axis(1, lo.y, hi.y)?;
        Some(TileRange { x0, x1, y0, y1 })
    }

    fn tiles(&self, r: TileRange) -> impl Iterator<Item = usize> + '_ {
        (r.y0..=r.y1).flat_map(move |y| (r.x0..=r.x1).map(move |x| y * self.count[0] + x))
    }

    fn contains(&self, r: TileRange, tile: usize) -> bool {
        let (x, y) = (tile % self.count[0], tile / self.count[0]);
        (r.x0..=r.x1).contains(&x) && (r.y0..=r.y1).contains(&y)
    }

    /// Pieces of a polygon clipped to each tile it overlaps.
    fn spread(&self, polygon: &[DVec2]) -> Vec<(usize, Vec<DVec2>)> {
        let (lo, hi) = bounds(polygon);
        let Some(range) = self.range(lo, hi) else {
            return Vec::new();
        };
        self.tiles(range)
            .map(|t| (t, clip(polygon, self.rect(t))))
            .filter(|(_, part)| !part.is_empty())
            .collect()
    }

    /// `tiles` (one flag per tile) with the four neighbours of each added.
    fn with_neighbours(&self, tiles: &[bool]) -> Vec<bool> {
        let (w, h) = (self.count[0], self.count[1]);
        let mut out = tiles.to_vec();
        for t in (0..tiles.len()).filter(|&t| tiles[t]) {
            let (x, y) = (t % w, t / w);
            if x > 0 {
                out[t - 1] = true;
            }
            if x + 1 < w {
                out[t + 1] = true;
            }
            if y > 0 {
                out[t - w] = true;
            }
            if y + 1 < h {
                out[t + w] = true;
            }
        }
        out
    }

    /// Whether `v` lies on a border between two tiles along `axis`.
    fn on_border(&self, axis: usize, v: f64) -> bool {
        let k = (v / self.size).round();
        k * self.size == v
            && k as i64 > self.first[axis]
            && (k as i64) < self.first[axis] + self.count[axis] as i64
    }
}

/// Bounding box of some points.
fn bounds<'a>(points: impl IntoIterator<Item = &'a DVec2>) -> (DVec2, DVec2) {
    points.into_iter().fold(
        (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    )
}

/// Where the segment `a`-`b` crosses the line where coordinate `axis` is
/// `c`, computed from the segment's lesser end whichever way it is given,
/// so two tiles clipping the same edge at their common border agree.
fn crossing(a: DVec2, b: DVec2, axis: usize, c: f64) -> DVec2 {
    let (p, q) = if (a.x, a.y) <= (b.x, b.y) {
        (a, b)
    } else {
        (b, a)
    };
    let t = (c - p[axis]) / (q[axis] - p[axis]);
    let mut r = p + (q - p) * t;
    r[axis] = c;
    r
}

/// Sutherland–Hodgman clipping of a polygon to an axis-aligned rectangle.
/// Each output vertex remembers the original edge leaving it (`None` for
/// edges along a side of the rectangle), and every crossing is computed from
/// an original edge ([`crossing`]). The result may run along the rectangle's
/// sides in both directions where the polygon leaves and comes back; the
/// booleans' winding rule resolves that.
fn clip(polygon: &[DVec2], [lo, hi]: [DVec2; 2]) -> Vec<DVec2> {
    let n = polygon.len();
    let mut cur: Vec<(DVec2, Option<[DVec2; 2]>)> = (0..n)
        .map(|i| (polygon[i], Some([polygon[i], polygon[(i + 1) % n]])))
        .collect();
    for (axis, c, keep_greater) in [
        (0, lo.x, true),
        (0, hi.x, false),
        (1, lo.y, true),
        (1, hi.y, false),
    ] {
        let inside = |p: DVec2| {
            if keep_greater {
                p[axis] >= c
            } else {
                p[axis] <= c
            }
        };
        let mut out = Vec::with_capacity(cur.len() + 4);
        for i in 0..cur.len() {
            let (p, edge) = cur[i];
            let q = cur[(i + 1) % cur.len()].0;
            let cut = || match edge {
                Some([a, b]) => crossing(a, b, axis, c),
                None => {
                    // along an earlier side: perpendicular to this one
                    let mut r = p;
                    r[axis] = c;
                    r
                }
            };
            match (inside(p), inside(q)) {
                (true, true) => out.push((p, edge)),
                (true, false) => {
                    out.push((p, edge));
                    out.push((cut(), None));
                }
                (false, true) => out.push((cut(), edge)),
                (false, false) => {}
            }
        }
        cur = out;
        if cur.is_empty() {
            break;
        }
    }
    let mut points: Vec<DVec2> = cur.into_iter().map(|(p, _)| p).collect();
    points.dedup();
    while points.len() > 1 && points.first() == points.last() {
        points.pop();
    }
    if points.len() < 3 {
        points.clear();
    }
    points
}

/// Total order on contours by their coordinates, for a canonical input order.
fn by_coordinates(a: &[DVec2], b: &[DVec2]) -> std::cmp::Ordering {
    for (p, q) in a.iter().zip(b) {
        let o = p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y));
        if o.is_ne() {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Bakes one tile from its inputs and the runtime obstacles over it (each
/// clipped to the tile): booleans on `grid`, then the CDT and the merge.
fn bake_tile(
    grid: Grid,
    inputs: &TileInputs,
    runtime: &[Vec<DVec2>],
) -> Result<TileMesh, BakeError> {
    if inputs.walkable.is_empty() {
        return Ok(TileMesh::default());
    }
    let mut obstacles: Vec<&Vec<DVec2>> = inputs.obstacles.iter().chain(runtime).collect();
    obstacles.sort_by(|a, b| by_coordinates(a, b));
    let subject: Contours = inputs.walkable.iter().map(|c| as_points(c)).collect();
    let clip: Contours = obstacles.iter().map(|c| as_points(c)).collect();
    let shapes = grid.subtract(&subject, &clip);
    if shapes.is_empty() {
        return Ok(TileMesh::default());
    }
    let areas = inputs
        .areas
        .iter()
        .map(|(kind, polygon)| (usize::from(*kind), vec![as_points(polygon)]));
    TileMesh::of(&grid.outline(shapes, areas))
}

impl TileMesh {
    /// A tile from its outline (areas tagged with the mesh's kinds).
    fn of(outline: &Outline) -> Result<TileMesh, BakeError> {
        let (tri, polygons) = merged_polygons(outline)?;
        Ok(TileMesh {
            points: tri.points.into(),
            polygons: polygons.into(),
            triangles: tri.tris.len() as u32,
            dropped: tri.dropped,
            walkable_area: tri.walkable_area,
        })
    }
}

/// A tiled navigation mesh that takes runtime obstacles: buildings placed
/// and destroyed during a match.
///
/// Each edit re-bakes only the tiles its obstacles overlap, and the mesh is
/// then the same, down to the bytes of its saved file, as a fresh tiled
/// bake of the level with the surviving obstacles added to its static ones
/// ([`TileCache::level_with_obstacles`]), whatever the order of the edits:
/// what lockstep multiplayer, replays and save games need.
///
/// # Example
/// ```
/// use glam::vec2;
/// use portalnav::{BakeConfig, Level, NavMesh, TileCache};
///
/// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[64,0],[64,64],[0,64]]]}"#)?;
/// let config = BakeConfig { tile_size: Some(16.0), ..BakeConfig::default() };
/// let mut cache = TileCache::new(&level, &config)?;
/// let barracks = cache.add_obstacle(&[vec2(20., 20.), vec2(30., 20.), vec2(30., 28.), vec2(20., 28.)])?;
/// assert!(cache.mesh().locate(vec2(25., 24.)).is_none());
/// // the same mesh as a fresh bake with the barracks as a static obstacle
/// let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config)?;
/// assert_eq!(fresh.to_bytes()?, cache.mesh().to_bytes()?);
/// cache.remove_obstacle(barracks)?;
/// assert!(cache.mesh().locate(vec2(25., 24.)).is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TileCache {
    level: Level,
    config: BakeConfig,
    grid: Grid,
    tiling: Tiling,
    /// Per tile, row-major.
    inputs: Vec<TileInputs>,
    tiles: Vec<TileMesh>,
    /// Per tile, the runtime obstacles over it, in the order they were added.
    tile_obstacles: Vec<Vec<ObstacleId>>,
    obstacles: SlotMap<ObstacleId, Obstacle>,
    areas: Vec<AreaKind>,
    /// Shared, so a game can keep querying the mesh an edit is replacing
    /// ([`TileCache::shared_mesh`]).
    mesh: Arc<NavMesh>,
    generation: u64,
    /// The polygons and points the last rebuild gathered (every tile's on
    /// the first, the changed tiles' and their neighbours' on an edit), and
    /// the old regions' lists, kept so the next rebuild reuses their storage.
    scratch: MeshScratch,
    /// The rows of the current mesh's all-pairs table computed so far by
    /// [`TileCache::refresh_table`].
    table: Option<TableBuild>,
    /// The landmarks [`TileCache::refresh_table`] picks first for the
    /// current mesh, until they are in its hierarchy.
    landmarks: Option<LandmarkBuild>,
    /// The rows computed so far of the all-pairs tables the last edit left
    /// pending in the meshes it carried for wider agents, by the carried
    /// mesh's serial.
    carried_tables: Vec<(u64, TableBuild)>,
    /// Per radius carried (its bits), the storage its last derivation
    /// gathered in and the lists of the carried mesh an edit replaced,
    /// which the next edit's derivation for that radius reuses, as
    /// `scratch` serves the base mesh.
    sized_scratch: Vec<(u32, MeshScratch)>,
    /// [`TileCache::changed_area`].
    changed_area: Option<Aabb>,
}

/// Storage [`build_mesh`] reuses from one edit to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeshScratch {
    polygons: Vec<MergedPolygon>,
    points: Vec<DVec2>,
    ids: FxHashMap<(u64, u64), u32>,
    local: Vec<u32>,
    /// The points on borders between tiles, and per polygon whether it has
    /// one: only those edges can need splitting.
    border: Vec<u32>,
    touches_border: Vec<bool>,
    /// Per tile, its first polygon in `polygons` (and their count at the
    /// end); a tile not gathered has none.
    tile_start: Vec<u32>,
    reassembly: ReassemblyScratch,
    assembly: AssemblyScratch,
}

/// Storage [`reassemble`] reuses from one edit to the next.
#[derive(Debug, Clone, Default)]
struct ReassemblyScratch {
    /// Per region of the mesh being replaced, its index in the new one
    /// (`u32::MAX` in the tiles that change).
    remap: Vec<u32>,
    /// Edges to pair by their ends' coordinates: (region, edge slot), with
    /// [`edge_ends`].
    unpaired: Vec<((u32, u32), [u32; 4])>,
    by_ends: FxHashMap<[u32; 4], (u32, u32)>,
}

impl TileCache {
    /// Bakes `level` in tiles of `config.tile_size` (required) and keeps
    /// what edits need.
    ///
    /// # Errors
    /// As [`NavMesh::bake`]; [`BakeError::Config`] also when `tile_size` is
    /// missing, not a positive multiple of the snapping step, or combined
    /// with an agent radius above 0 (tiles bake for radius 0).
    pub fn new(level: &Level, config: &BakeConfig) -> Result<TileCache, BakeError> {
        level.validate()?;
        super::outline::check_crossings(level)?;
        config.check_hierarchy()?;
        let radius = config.radius_for(level)?;
        config.max_radius_for(level, radius)?;
        super::check_area_count(level)?;
        if radius != 0.0 {
            return Err(BakeError::Config {
                field: "agent_radius",
                reason: format!("a tiled bake needs radius 0, found {radius}"),
            });
        }
        let size = match config.tile_size {
            Some(s) if s.is_finite() && s >= 1.0 => f64::from(s),
            other => {
                return Err(BakeError::Config {
                    field: "tile_size",
                    reason: format!("must be a finite number >= 1, found {other:?}"),
                })
            }
        };
        let walkable: Vec<Vec<DVec2>> = level
            .walkable
            .iter()
            .map(|c| c.iter().map(|p| p.as_dvec2()).collect())
            .collect();
        let (lo, hi) = bounds(walkable.iter().flatten());
        let tiling = Tiling::new(size, lo, hi);
        if tiling.count[0].saturating_mul(tiling.count[1]) > MAX_TILES {
            return Err(BakeError::Config {
                field: "tile_size",
                reason: format!(
                    "{size} gives {} x {} tiles over this level, more than the {MAX_TILES} allowed",
                    tiling.count[0], tiling.count[1]
                ),
            });
        }
        let far = tiling.rect(tiling.len() - 1)[1];
        let near = tiling.rect(0)[0];
        let extent = [near.x, near.y, far.x, far.y]
            .iter()
            .map(|v| v.abs())
            .fold(0.0, f64::max);
        let grid = Grid::new(extent);
        if (size * grid.scale).fract() != 0.0 {
            return Err(BakeError::Config {
                field: "tile_size",
                reason: format!(
                    "must be a multiple of the snapping step {} at this level's size, found {size}",
                    1.0 / grid.scale
                ),
            });
        }

        let mut inputs = vec![TileInputs::default(); tiling.len()];
        for c in &walkable {
            for (t, part) in tiling.spread(c) {
                inputs[t].walkable.push(part);
            }
        }
        let impassable = level.areas.iter().filter(|a| a.cost.is_none());
        for polygon in level.obstacles.iter().chain(impassable.map(|a| &a.polygon)) {
            for (t, part) in tiling.spread(&counter_clockwise(polygon)) {
                inputs[t].obstacles.push(part);
            }
        }
        let (areas, kind_of) = super::area_kinds(level);
        for (area, &kind) in level.areas.iter().zip(&kind_of) {
            if area.cost.is_none() {
                continue;
            }
            for (t, part) in tiling.spread(&counter_clockwise(&area.polygon)) {
                inputs[t].areas.push((kind, part));
            }
        }

        let tiles = inputs
            .iter()
            .map(|t| bake_tile(grid, t, &[]))
            .collect::<Result<Vec<_>, _>>()?;
        let mut scratch = MeshScratch::default();
        let mesh = build_mesh(
            level,
            config,
            (&tiling, &tiles, grid),
            (areas.clone(), 0.0, 0),
            &mut scratch,
            (None, None),
        )?;
        Ok(TileCache {
            level: level.clone(),
            config: config.clone(),
            grid,
            tiling,
            tile_obstacles: vec![Vec::new(); inputs.len()],
            inputs,
            tiles,
            obstacles: SlotMap::with_key(),
            areas,
            mesh: Arc::new(mesh),
            generation: 0,
            scratch,
            table: None,
            landmarks: None,
            carried_tables: Vec::new(),
            sized_scratch: Vec::new(),
            changed_area: None,
        })
    }

    /// The current mesh.
    #[must_use]
    pub fn mesh(&self) -> &NavMesh {
        &self.mesh
    }

    /// The current mesh, shared: a handle that outlives the next edit. A
    /// game can hand it to the threads that query and move units while
    /// another thread runs [`TileCache::apply`], and switch to the new mesh
    /// when the edit is done; followers then keep their corridors through
    /// the switch as after any edit ([`PathFollower`](crate::PathFollower)).
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavQuery, QueryFilter, TileCache};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[64,0],[64,64],[0,64]]]}"#)?;
    /// let config = BakeConfig { tile_size: Some(16.0), ..BakeConfig::default() };
    /// let mut cache = TileCache::new(&level, &config)?;
    /// let before = cache.shared_mesh();
    /// let filter = QueryFilter::default();
    /// let building = [vec2(20., 20.), vec2(30., 20.), vec2(30., 30.), vec2(20., 30.)];
    /// let (added, path) = std::thread::scope(|s| {
    ///     let answer =
    ///         s.spawn(|| NavQuery::new().find_path(&before, vec2(10., 25.), vec2(40., 25.), &filter));
    ///     (cache.add_obstacle(&building), answer.join().unwrap())
    /// });
    /// added?;
    /// // answered on the mesh before the edit: straight through the new building
    /// assert_eq!(path?.waypoints().len(), 2);
    /// assert!(cache.mesh().locate(vec2(25., 25.)).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn shared_mesh(&self) -> Arc<NavMesh> {
        Arc::clone(&self.mesh)
    }

    /// Gives back a handle from [`TileCache::shared_mesh`]. When it is the
    /// last one to a mesh an edit has replaced, that mesh's storage serves
    /// the next edit (as it does when no handle outlives an edit) instead
    /// of being freed.
    pub fn release(&mut self, mesh: Arc<NavMesh>) {
        if Arc::ptr_eq(&mesh, &self.mesh) {
            return;
        }
        if let Ok(mut replaced) = Arc::try_unwrap(mesh) {
            self.scratch.assembly.take_storage(&mut replaced);
            // and each mesh it carried for a wider agent that nothing else
            // holds (a radius whose mesh the edit kept is held by the new one)
            let sized = replaced.sized.0.get_mut();
            let sized = std::mem::take(sized.unwrap_or_else(std::sync::PoisonError::into_inner));
            for (bits, slot) in sized {
                let Some(Some(carried)) = Arc::into_inner(slot).and_then(|s| s.into_inner()) else {
                    continue;
                };
                let Some(mut carried) = Arc::into_inner(carried.mesh) else {
                    continue;
                };
                if let Some((_, scratch)) = self.sized_scratch.iter_mut().find(|(b, _)| *b == bits)
                {
                    scratch.assembly.take_storage(&mut carried);
                }
            }
        }
    }

    /// The current mesh, giving up the cache (a copy if a handle from
    /// [`TileCache::shared_mesh`] still holds it), with its all-pairs table
    /// computed if an edit left it pending, and those of the meshes it
    /// carries for wider agents (a copy of one that a handle from
    /// [`NavMesh::for_radius`] holds).
    #[must_use]
    pub fn into_mesh(mut self) -> NavMesh {
        self.refresh(usize::MAX, false);
        let table = self.table.take();
        let mut mesh = Arc::try_unwrap(self.mesh).unwrap_or_else(|shared| (*shared).clone());
        install(&mut mesh, table);
        // only the next edit would have used them, here and in the meshes
        // carried for wider agents that no handle holds
        mesh.unkept = Vec::new();
        let slots = mesh
            .sized
            .0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (_, slot) in slots.iter_mut() {
            let carried = Arc::get_mut(slot)
                .and_then(|s| s.get_mut())
                .and_then(Option::as_mut);
            if let Some(carried) = carried.and_then(|s| Arc::get_mut(&mut s.mesh)) {
                carried.unkept = Vec::new();
            }
            // a carried mesh whose table a handle kept out: a copy with it
            let Some(Some(sized)) = slot.get() else {
                continue;
            };
            let pending = sized.mesh.data.hierarchy.as_ref();
            if !pending.is_some_and(HierarchyData::table_pending) {
                continue;
            }
            let mut carried = (*sized.mesh).clone();
            carried.unkept = Vec::new();
            if let Some(h) = carried.data.hierarchy.as_mut() {
                h.compute_table(&carried.hier);
            }
            let sized = Sized {
                mesh: Arc::new(carried),
                tiles: sized.tiles.clone(),
            };
            *slot = Arc::new(std::sync::OnceLock::from(Some(sized)));
        }
        mesh
    }

    /// Rows of the all-pairs L2 tables still to compute, and rows in all,
    /// when an edit left tables pending ([`TileCache::refresh_table`]):
    /// the mesh's, and those of the meshes it carried for wider agents;
    /// `None` when nothing is pending. The landmarks picked first for the
    /// mesh's count as rows too (a row or a pick is one Dijkstra over the
    /// L2 graph).
    #[must_use]
    pub fn table_pending(&self) -> Option<(usize, usize)> {
        let (mut left, mut all) = self.base_table_pending().unwrap_or((0, 0));
        for mesh in self.carried_pending() {
            let nodes = mesh.data.hierarchy.as_ref().map_or(0, |h| h.nodes.len());
            let done = self
                .carried_tables
                .iter()
                .find(|(s, _)| *s == mesh.serial)
                .map_or(0, |(_, b)| b.rows_done());
            left += nodes - done;
            all += nodes;
        }
        (all > 0).then_some((left, all))
    }

    /// [`TileCache::table_pending`] for the mesh's own table.
    fn base_table_pending(&self) -> Option<(usize, usize)> {
        let h = self.mesh.data.hierarchy.as_ref()?;
        if !h.table_pending() {
            return None;
        }
        let nodes = h.nodes.len();
        let picks = nodes.min(LANDMARKS as usize);
        let picked = if h.pending_landmarks.0 > 0 {
            picks
        } else {
            self.landmarks.as_ref().map_or(0, LandmarkBuild::rows_done)
        };
        let done = self.table.as_ref().map_or(0, TableBuild::rows_done);
        Some((nodes + picks - done - picked, nodes + picks))
    }

    /// The meshes carried for wider agents whose all-pairs table is
    /// pending.
    fn carried_pending(&self) -> Vec<Arc<NavMesh>> {
        let slots = self
            .mesh
            .sized
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        slots
            .iter()
            .filter_map(|(_, slot)| match slot.get() {
                Some(Some(sized)) => Some(Arc::clone(&sized.mesh)),
                _ => None,
            })
            .filter(|m| (m.data.hierarchy.as_ref()).is_some_and(HierarchyData::table_pending))
            .collect()
    }

    /// Computes up to `rows` more rows of the all-pairs L2 table that the
    /// last edit left pending (on rayon's threads with the `parallel`
    /// feature), and installs the table
    /// once every row is done. True when no table is pending any more.
    ///
    /// An edit repairs the hierarchy's clusters, leg tables and corridors
    /// at once, but not the all-pairs table (a search from every nav node:
    /// on a large map most of an edit's cost). Until it is installed,
    /// queries that would look a route up search the L2 graph instead:
    /// exact over the same graph, so as short, only slower. A row is one
    /// Dijkstra over the whole L2 graph, so a game calls this once per
    /// frame with the rows its frame can spare. Unless the call finishes
    /// the table, the first rows' worth (16, or the nav nodes if fewer)
    /// pick the landmarks of that search (one Dijkstra each on one thread,
    /// as a bake without the table picks them), which speed it up until
    /// the table is in; they are never saved. The rows done are
    /// kept across calls and dropped by the next edit; the table does not
    /// depend on how the rows were split. The saved file is the same before
    /// and after: it holds only the flag that the mesh has a table, as a
    /// fresh bake's does.
    ///
    /// The meshes an edit carries for wider agents
    /// ([`NavMesh::for_radius`]) leave their tables pending the same way;
    /// once the mesh's own table is in, the rows go to theirs, each
    /// installed when complete (no landmarks are picked for them: their
    /// queries search the L2 graph with the straight-line bound until
    /// then). [`TileCache::table_pending`] counts their rows too.
    ///
    /// While a handle from [`TileCache::shared_mesh`] holds the mesh (or
    /// one from [`NavMesh::for_radius`] a carried mesh), finished
    /// landmarks and a finished table wait (false) until the handle is
    /// released.
    pub fn refresh_table(&mut self, rows: usize) -> bool {
        self.refresh(rows, true)
    }

    /// [`TileCache::refresh_table`], picking the landmarks first or not
    /// ([`TileCache::into_mesh`] has no use for them): the mesh's table
    /// first, then those of the meshes carried for wider agents.
    fn refresh(&mut self, mut rows: usize, landmarks_first: bool) -> bool {
        self.refresh_base(&mut rows, landmarks_first) && self.refresh_carried(&mut rows)
    }

    /// The mesh's own table: up to `rows` rows, less those it computes.
    fn refresh_base(&mut self, rows: &mut usize, landmarks_first: bool) -> bool {
        let Some(h) = self.mesh.data.hierarchy.as_ref() else {
            return true;
        };
        if !h.table_pending() {
            self.table = None;
            self.landmarks = None;
            return true;
        }
        let ht = &self.mesh.hier;
        let build = match &mut self.table {
            Some(build) => build,
            None => match TableBuild::new(h, ht) {
                Some(build) => self.table.insert(build),
                // the edit's build checked that the table fits
                None => return true,
            },
        };
        // landmarks only serve until the table is in: none when this call
        // finishes it
        let finishes = *rows >= h.nodes.len() - build.rows_done();
        if landmarks_first && !finishes && h.pending_landmarks.0 == 0 {
            let picking = self
                .landmarks
                .get_or_insert_with(|| LandmarkBuild::new(h, LANDMARKS));
            let before = picking.rows_done();
            picking.advance(h, ht, *rows);
            *rows -= picking.rows_done() - before;
        }
        // the first row allocates the whole table: not before one is due
        let before = build.rows_done();
        let complete = build.is_complete() || (*rows > 0 && build.advance(h, ht, *rows));
        *rows -= build.rows_done() - before;
        let Some(mesh) = Arc::get_mut(&mut self.mesh) else {
            return false;
        };
        if complete {
            install(mesh, self.table.take());
            self.landmarks = None;
            return true;
        }
        if let Some(h) = mesh.data.hierarchy.as_mut() {
            if self
                .landmarks
                .as_ref()
                .is_some_and(LandmarkBuild::is_complete)
            {
                h.pending_landmarks = self.landmarks.take().expect("checked").into_rows();
            }
        }
        false
    }

    /// The tables the last edit left pending in the meshes it carried for
    /// wider agents: up to `rows` rows in all, each table installed once
    /// complete. True when none is pending.
    fn refresh_carried(&mut self, rows: &mut usize) -> bool {
        let pending = self.carried_pending();
        // builds for meshes no longer carried (a radius dropped) go
        self.carried_tables
            .retain(|(serial, _)| pending.iter().any(|m| m.serial == *serial));
        let (mut complete, mut waiting) = (Vec::new(), 0);
        for mesh in &pending {
            let Some(h) = mesh.data.hierarchy.as_ref() else {
                continue;
            };
            let serial = mesh.serial;
            let at = match self.carried_tables.iter().position(|(s, _)| *s == serial) {
                Some(at) => at,
                None => match TableBuild::new(h, &mesh.hier) {
                    Some(build) => {
                        self.carried_tables.push((serial, build));
                        self.carried_tables.len() - 1
                    }
                    // its bake checked that the table fits; were it not
                    // to, nothing could be done, so nothing waits
                    None => continue,
                },
            };
            let build = &mut self.carried_tables[at].1;
            if !build.is_complete() && *rows > 0 {
                let before = build.rows_done();
                build.advance(h, &mesh.hier, *rows);
                *rows -= build.rows_done() - before;
            }
            if build.is_complete() {
                complete.push(serial);
            } else {
                waiting += 1;
            }
        }
        // the handles taken above must go before the meshes can change
        drop(pending);
        if complete.is_empty() {
            return waiting == 0;
        }
        let Some(mesh) = Arc::get_mut(&mut self.mesh) else {
            return false;
        };
        let slots = mesh
            .sized
            .0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (_, slot) in slots.iter_mut() {
            let carried = Arc::get_mut(slot)
                .and_then(std::sync::OnceLock::get_mut)
                .and_then(Option::as_mut);
            // a slot being derived, or a mesh that a `for_radius` handle
            // holds, waits: counted below if its table is complete
            let Some(Sized { mesh, .. }) = carried else {
                continue;
            };
            let Some(mesh) = Arc::get_mut(mesh) else {
                continue;
            };
            if let Some(at) = complete.iter().position(|&s| s == mesh.serial) {
                complete.swap_remove(at);
                let at = self
                    .carried_tables
                    .iter()
                    .position(|(s, _)| *s == mesh.serial)
                    .expect("a complete build");
                install(mesh, Some(self.carried_tables.swap_remove(at).1));
            }
        }
        // finished tables whose mesh a handle holds wait for the next call
        waiting += complete.len();
        waiting == 0
    }

    /// Where the last edit could change regions: the box of the tiles it
    /// baked again and their four neighbours (whose border edges it may
    /// split); `None` before the first edit, or when the last changed no
    /// tile (an obstacle off the level). Every region of the mesh before
    /// it that lies outside the box is in the mesh after it, as it was:
    /// [`NavMesh::region_after_edit`] gives its new key. What a game keeps
    /// per region or per place (cover points, influence maps) needs a look
    /// again only inside it.
    #[must_use]
    pub fn changed_area(&self) -> Option<Aabb> {
        self.changed_area
    }

    /// Counts the successful edits ([`TileCache::apply`] calls, and the
    /// single-edit calls): 0 after the bake. Keep it with a path to ask
    /// [`TileCache::path_affected`] later.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether a path planned at generation `since` crosses an obstacle
    /// added after it and still in place: the unit should replan. Removals
    /// never affect a path (they only open space), and a path that runs
    /// along a new building's wall or touches its corner is still walkable.
    /// Costs one segment-against-outline test per new obstacle whose box the
    /// path's box meets.
    #[must_use]
    pub fn path_affected(&self, waypoints: &[Vec2], since: u64) -> bool {
        let (lo, hi) = waypoints.iter().fold(
            (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(p.as_dvec2()), hi.max(p.as_dvec2())),
        );
        self.obstacles.values().any(|o| {
            o.added > since
                && o.lo.cmple(hi).all()
                && lo.cmple(o.hi).all()
                && waypoints.windows(2).any(|s| {
                    crate::geometry::segment_enters_polygon(
                        s[0].as_dvec2(),
                        s[1].as_dvec2(),
                        &o.ccw,
                    )
                })
        })
    }

    /// Runtime obstacles in place, with the outlines they were added with.
    pub fn obstacles(&self) -> impl Iterator<Item = (ObstacleId, &[Vec2])> {
        self.obstacles
            .iter()
            .map(|(id, o)| (id, o.outline.as_slice()))
    }

    /// The level with every runtime obstacle in place added to its static
    /// obstacles: a fresh tiled bake of it gives [`TileCache::mesh`].
    #[must_use]
    pub fn level_with_obstacles(&self) -> Level {
        let mut level = self.level.clone();
        level
            .obstacles
            .extend(self.obstacles.values().map(|o| o.outline.clone()));
        level
    }

    /// Adds an obstacle (any simple polygon; it may overlap anything, and one
    /// over no walkable space changes nothing) and re-bakes the tiles under it.
    ///
    /// # Errors
    /// [`EditError::Polygon`] for a polygon that is not finite, out of range,
    /// self-intersecting or of zero area; [`EditError::Bake`] if a tile
    /// fails to bake, or with [`BakeError::NothingWalkable`] when nothing
    /// walkable would be left (a fresh bake of that level fails the same
    /// way). The mesh is left as it was.
    pub fn add_obstacle(&mut self, outline: &[Vec2]) -> Result<ObstacleId, EditError> {
        let ids = self.apply(&[Edit::Add(outline.to_vec())])?;
        Ok(ids[0].expect("an added obstacle has an id"))
    }

    /// Removes an obstacle and re-bakes the tiles it covered.
    ///
    /// # Errors
    /// [`EditError::UnknownObstacle`] for an id removed already or from
    /// another cache; the mesh is left as it was.
    pub fn remove_obstacle(&mut self, id: ObstacleId) -> Result<(), EditError> {
        self.apply(&[Edit::Remove(id)]).map(drop)
    }

    /// Applies a batch of edits with one repair: each touched tile is
    /// re-baked once, and the mesh is rebuilt once. Returns, per edit, the id
    /// of the obstacle it added (`None` for removals).
    ///
    /// # Errors
    /// As [`TileCache::add_obstacle`] and [`TileCache::remove_obstacle`],
    /// naming the first bad edit (also an id removed twice in the batch).
    /// Nothing is applied then: the mesh is left as it was.
    pub fn apply(&mut self, edits: &[Edit]) -> Result<Vec<Option<ObstacleId>>, EditError> {
        if edits.is_empty() {
            return Ok(Vec::new()); // nothing to repair, and no new generation
        }
        // check everything before changing anything
        let mut added = Vec::new();
        let mut removed: Vec<ObstacleId> = Vec::new();
        for (index, edit) in edits.iter().enumerate() {
            match edit {
                Edit::Add(outline) => {
                    validate_obstacle(&format!("edit {index}"), outline)
                        .map_err(|error| EditError::Polygon { index, error })?;
                    let ccw = counter_clockwise(outline);
                    let (lo, hi) = bounds(&ccw);
                    let obstacle = Obstacle {
                        outline: outline.clone(),
                        lo,
                        hi,
                        tiles: self.tiling.range(lo, hi),
                        ccw,
                        added: self.generation + 1,
                    };
                    added.push((index, obstacle));
                }
                Edit::Remove(id) => {
                    if !self.obstacles.contains_key(*id) || removed.contains(id) {
                        return Err(EditError::UnknownObstacle { index, id: *id });
                    }
                    removed.push(*id);
                }
            }
        }
        // the tiles to re-bake, and the runtime obstacles over each
        let mut dirty: Vec<usize> = Vec::new();
        let obstacles = added.iter().map(|(_, o)| o);
        for o in obstacles.chain(removed.iter().map(|&id| &self.obstacles[id])) {
            dirty.extend(o.tiles.iter().flat_map(|&r| self.tiling.tiles(r)));
        }
        dirty.sort_unstable();
        dirty.dedup();
        let rebaked = in_order(dirty.len(), |k| {
            let t = dirty[k];
            let rect = self.tiling.rect(t);
            let mut runtime: Vec<Vec<DVec2>> = self.tile_obstacles[t]
                .iter()
                .filter(|id| !removed.contains(id))
                .map(|&id| clip(&self.obstacles[id].ccw, rect))
                .collect();
            for (_, o) in &added {
                if o.tiles.is_some_and(|r| self.tiling.contains(r, t)) {
                    runtime.push(clip(&o.ccw, rect));
                }
            }
            runtime.retain(|c| !c.is_empty());
            bake_tile(self.grid, &self.inputs[t], &runtime)
        })?;
        // rebuild the mesh with the new tiles; keep the old ones until it stands
        let old: Vec<TileMesh> = dirty
            .iter()
            .zip(rebaked)
            .map(|(&t, new)| std::mem::replace(&mut self.tiles[t], new))
            .collect();
        let (before, tiles) = (&*self.mesh, &self.tiles);
        let mut rebaked_tiles = vec![false; tiles.len()];
        for &t in &dirty {
            rebaked_tiles[t] = true;
        }
        let mut was = dirty.iter().zip(&old).peekable();
        let old_counts = tiles.iter().enumerate().map(|(t, tile)| {
            let old_tile = was.next_if(|(&d, _)| d == t).map_or(tile, |(_, o)| o);
            old_tile.polygons.len()
        });
        let reuse = Reuse::new(&self.tiling, before, old_counts, &rebaked_tiles);
        let changed = &reuse.changed;
        let changed_area = (0..tiles.len())
            .filter(|&t| changed[t])
            .map(|t| {
                let [lo, hi] = self.tiling.rect(t);
                Aabb {
                    min: lo.as_vec2(),
                    max: hi.as_vec2(),
                }
            })
            .reduce(|a, b| Aabb {
                min: a.min.min(b.min),
                max: a.max.max(b.max),
            });
        let kept = |after: &NavMesh| succession(before, after, tiles, (&dirty, &old), changed);
        let replacing = Replacing {
            old: before,
            succession: &kept,
            changed: &[],
        };
        // the new mesh's keys are the next generation's: every key of the
        // old one is stale in it (`crate::mesh::keys`)
        let key_generation = before.data.key_generation().wrapping_add(1);
        let mesh = match build_mesh(
            &self.level,
            &self.config,
            (&self.tiling, &self.tiles, self.grid),
            (self.areas.clone(), 0.0, key_generation),
            &mut self.scratch,
            (Some(replacing), Some(&reuse)),
        ) {
            Ok(mesh) => mesh,
            Err(e) => {
                for (&t, tile) in dirty.iter().zip(old) {
                    self.tiles[t] = tile;
                }
                return Err(e.into());
            }
        };
        let mut mesh = mesh;
        let carried = carry_sizes(&self.mesh, &mesh, &dirty, &mut self.sized_scratch);
        *mesh
            .sized
            .0
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = carried;
        let replaced = std::mem::replace(&mut self.mesh, Arc::new(mesh));
        self.release(replaced);
        self.table = None;
        self.landmarks = None;
        // (the carried tables' builds are by mesh: one whose radius kept its
        // mesh goes on, the others go at the next refresh)
        self.generation += 1;
        self.changed_area = changed_area;
        for id in removed {
            let o = self.obstacles.remove(id).expect("checked above");
            for t in o.tiles.iter().flat_map(|&r| self.tiling.tiles(r)) {
                self.tile_obstacles[t].retain(|&x| x != id);
            }
        }
        let mut ids = vec![None; edits.len()];
        for (index, obstacle) in added {
            let tiles = obstacle.tiles;
            let id = self.obstacles.insert(obstacle);
            for t in tiles.iter().flat_map(|&r| self.tiling.tiles(r)) {
                self.tile_obstacles[t].push(id);
            }
            ids[index] = Some(id);
        }
        Ok(ids)
    }
}

/// Puts a finished all-pairs table into `mesh`'s hierarchy.
fn install(mesh: &mut NavMesh, table: Option<TableBuild>) {
    if let (Some(build), Some(h)) = (table, mesh.data.hierarchy.as_mut()) {
        debug_assert!(build.is_complete(), "a table installed before its last row");
        h.l2_table = build.into_table();
        // the table replaces them
        h.pending_landmarks = (0, Vec::new());
    }
}

/// The regions and the walls (edges without a portal) of a tiled mesh, by
/// tile: what deriving a tile for a wider agent reads, whatever the radius.
#[derive(Debug, Clone, PartialEq)]
struct ByTile {
    regions: Vec<Vec<u32>>,
    walls: Vec<Vec<[DVec2; 2]>>,
}

impl ByTile {
    fn of(mesh: &NavMesh, tiling: &Tiling) -> ByTile {
        let mut by = ByTile::empty(tiling);
        for (i, region) in mesh.data.regions.values().enumerate() {
            by.add(tiling, i as u32, region, None);
        }
        by
    }

    /// [`ByTile::of`] for the tiles flagged in `window` alone (the others
    /// left empty), from the regions of those tiles and their neighbours
    /// (a wall on a border can be either side's) where the mesh lists its
    /// regions tile by tile, as a tiled bake or edit does; from every
    /// region otherwise.
    fn within(mesh: &NavMesh, tiling: &Tiling, window: &[bool]) -> ByTile {
        let regions = mesh.tables.region_keys.len();
        let tile_start = &mesh.tables.tile_start;
        if tile_start.len() != tiling.len() + 1 || tile_start[tiling.len()] as usize != regions {
            return ByTile::of(mesh, tiling);
        }
        let mut by = ByTile::empty(tiling);
        let inside: Vec<usize> = (0..tiling.len()).filter(|&t| window[t]).collect();
        let near_window = tiling.around(&inside, 1);
        // tiles in order, each's regions in order: every list in the order
        // `of` makes it
        for u in (0..tiling.len()).filter(|&u| near_window[u]) {
            for i in tile_start[u]..tile_start[u + 1] {
                let key = mesh.tables.region_keys[i as usize];
                let region = mesh.data.regions.get(key).expect("a key of the mesh");
                by.add(tiling, i, region, Some(window));
            }
        }
        by
    }

    fn empty(tiling: &Tiling) -> ByTile {
        ByTile {
            regions: vec![Vec::new(); tiling.len()],
            walls: vec![Vec::new(); tiling.len()],
        }
    }

    /// Lists region `i` and its walls under their tiles (those in `window`).
    fn add(&mut self, tiling: &Tiling, i: u32, region: &Region, window: Option<&[bool]>) {
        let wanted = |t: usize| window.is_none_or(|w| w[t]);
        let v = &region.vertices;
        // regions stop at tile borders: a point inside one names its tile
        let inside = v.iter().map(|p| p.as_dvec2()).sum::<DVec2>() / v.len() as f64;
        let t = tiling.tile_of(inside);
        if wanted(t) {
            self.regions[t].push(i);
        }
        for (k, portal) in region.portals.iter().enumerate() {
            if portal.is_none() {
                let (a, b) = (v[k].as_dvec2(), v[(k + 1) % v.len()].as_dvec2());
                let t = tiling.tile_of((a + b) * 0.5);
                if wanted(t) {
                    self.walls[t].push([a, b]);
                }
            }
        }
    }
}

/// What a mesh for a wider agent derives from a tiled mesh: the tiling,
/// the grid, the pen and how far it reaches, and the mesh's regions and
/// walls by tile.
pub(crate) struct TiledDerivation<'a> {
    base: &'a NavMesh,
    tiling: Tiling,
    grid: Grid,
    pens: Pens,
    /// Tiles away (along x and y) a wall can be and still reach a tile.
    hops: usize,
    reach: f64,
    by_tile: Cow<'a, ByTile>,
}

impl<'a> TiledDerivation<'a> {
    /// For `base` (baked in tiles) and an agent of `radius` (above its own).
    pub(crate) fn new(base: &'a NavMesh, radius: f32) -> Option<TiledDerivation<'a>> {
        let tiling = Tiling::of(base.data.tiling?);
        let by_tile = Cow::Owned(ByTile::of(base, &tiling));
        Some(Self::with(base, radius, (tiling, by_tile)))
    }

    /// How far the pen for an agent of `radius` reaches from a wall of
    /// `base` (its corners, and a step of rounding).
    fn reach_of(base: &NavMesh, radius: f32) -> f64 {
        let grid = Grid::with_scale(base.data.snap_scale);
        Self::reach_with(&grid.pens(radius - base.data.agent_radius), grid)
    }

    fn reach_with(pens: &Pens, grid: Grid) -> f64 {
        pens.reach() + 1.0 / grid.scale
    }

    /// Tiles away (along x and y) a wall can be and still reach a tile,
    /// for a pen reaching `reach` over tiles of `size`.
    fn wall_hops(reach: f64, size: f64) -> usize {
        (reach / size).ceil() as usize
    }

    /// Tiles away from a re-baked tile a derived tile can change: those
    /// within the pen's reach of it (tiles k apart along an axis have
    /// k - 1 tiles between them).
    fn affected_span(reach: f64, size: f64) -> usize {
        1 + (reach / size).floor() as usize
    }

    /// As [`TiledDerivation::new`], with `base`'s tiling and its regions and
    /// walls by tile, which serve every radius.
    fn with(
        base: &'a NavMesh,
        radius: f32,
        (tiling, by_tile): (Tiling, Cow<'a, ByTile>),
    ) -> TiledDerivation<'a> {
        let grid = Grid::with_scale(base.data.snap_scale);
        let pens = grid.pens(radius - base.data.agent_radius);
        let reach = Self::reach_with(&pens, grid);
        let hops = Self::wall_hops(reach, tiling.size);
        TiledDerivation {
            base,
            tiling,
            grid,
            pens,
            hops,
            reach,
            by_tile,
        }
    }

    /// Tiles whose derived tile changes when tiles `dirty` of `before` (the
    /// base this one replaces, derived for the same radius) are re-baked.
    /// Only tiles within the pen's reach of a dirty tile can: that holds
    /// the dirty tiles' walls and regions, and the neighbours whose border
    /// edges (regions and walls on the shared border) the re-bake may have
    /// split differently. Of those, a tile whose reads
    /// ([`TiledDerivation::reads`]) are the same in both bases derives the
    /// same tile, so only the others are affected: a building inside one
    /// tile usually changes that tile alone.
    pub(crate) fn affected(&self, dirty: &[usize], before: &TiledDerivation<'_>) -> Vec<bool> {
        debug_assert_eq!(
            self.tiling.count, before.tiling.count,
            "one tile cache's meshes"
        );
        let k = Self::affected_span(self.reach, self.tiling.size);
        let mut out = self.tiling.around(dirty, k);
        // each tile in reach compared once, however many dirty tiles reach it
        for (t, near) in out.iter_mut().enumerate() {
            *near = *near && self.reads(t) != before.reads(t);
        }
        out
    }

    /// Tile `t` of the mesh for the wider agent: the base's regions in it,
    /// less what the pen covers swept along every wall that reaches it
    /// (each sweep clipped to the tile, so both sides of a border cut it
    /// at the same points), then the CDT and the merge. It depends on
    /// nothing but [`TiledDerivation::reads`] of `t` (and the radius).
    fn tile(&self, t: usize) -> Result<TileMesh, BakeError> {
        let Some((kinds, walls)) = self.reads(t) else {
            return Ok(TileMesh::default());
        };
        let rect = self.tiling.rect(t);
        let mut sweeps: Contours = Vec::new();
        for [a, b] in walls {
            let hull: Vec<DVec2> = (self.pens.sweep([a.x, a.y], [b.x, b.y]))
                .into_iter()
                .map(|[x, y]| DVec2::new(x, y))
                .collect();
            let part = clip(&hull, rect);
            if !part.is_empty() {
                sweeps.push(as_points(&part));
            }
        }
        let walkable: Contours = kinds.iter().flatten().cloned().collect();
        let shapes = self.grid.overlay(
            &walkable,
            &sweeps,
            OverlayRule::Difference,
            FillRule::NonZero,
        );
        if shapes.is_empty() {
            return Ok(TileMesh::default());
        }
        let costed = kinds.into_iter().enumerate().skip(1);
        TileMesh::of(
            &self
                .grid
                .outline(shapes, costed.filter(|(_, c)| !c.is_empty())),
        )
    }

    /// What deriving tile `t` reads of the base: its regions' polygons by
    /// area kind, and the walls that reach it, each in the order the
    /// derivation takes them; `None` for a tile without regions. Two bases
    /// that read the same for a tile derive the same tile from it.
    fn reads(&self, t: usize) -> Option<(Vec<Contours>, Vec<[DVec2; 2]>)> {
        let regions = &self.by_tile.regions[t];
        if regions.is_empty() {
            return None;
        }
        let rect = self.tiling.rect(t);
        let (lo, hi) = (
            rect[0] - DVec2::splat(self.reach),
            rect[1] + DVec2::splat(self.reach),
        );
        let w = self.tiling.count[0];
        let (x, y) = (t % w, t / w);
        let mut walls = Vec::new();
        for uy in y.saturating_sub(self.hops)..=(y + self.hops).min(self.tiling.count[1] - 1) {
            for ux in x.saturating_sub(self.hops)..=(x + self.hops).min(w - 1) {
                walls.extend(
                    self.by_tile.walls[uy * w + ux]
                        .iter()
                        .filter(|&&[a, b]| !(a.max(b).cmplt(lo).any() || a.min(b).cmpgt(hi).any())),
                );
            }
        }
        Some((regions_by_kind(self.base, Some(regions)), walls))
    }

    /// The mesh for an agent of `radius` and its tiles: every tile derived,
    /// or, given the tiles of an earlier derivation and which of them an
    /// edit affected, only those.
    pub(crate) fn derive(
        &self,
        radius: f32,
        earlier: Option<Earlier<'_>>,
    ) -> Result<(NavMesh, Vec<TileMesh>), BakeError> {
        // a pen wider than the whole mesh leaves nothing (and would have
        // every tile look at every other)
        let bounds = self.base.tables.bounds;
        let extra = radius - self.base.data.agent_radius;
        if extra >= bounds.size().length() {
            return Err(BakeError::NothingWalkable { radius });
        }
        let tiles = in_order(self.tiling.len(), |t| match &earlier {
            Some(e) if !e.affected[t] => Ok(e.tiles[t].clone()),
            _ => self.tile(t),
        })?;
        let Some(Earlier {
            tiles: old_tiles,
            affected,
            mesh: old,
            scratch,
        }) = earlier
        else {
            let scratch = &mut MeshScratch::default();
            return Ok((self.mesh(radius, &tiles, (None, None), scratch)?, tiles));
        };
        // the regions of the tiles derived again and their neighbours are
        // assembled again; the others are the earlier mesh's
        let old_counts = old_tiles.iter().map(|t| t.polygons.len());
        let reuse = Reuse::new(&self.tiling, old, old_counts, affected);
        // and the hierarchy takes the leg tables of the clusters it kept,
        // as the base mesh's edits do
        let dirty: Vec<usize> = (0..tiles.len()).filter(|&t| affected[t]).collect();
        let was: Vec<TileMesh> = dirty.iter().map(|&t| old_tiles[t].clone()).collect();
        let kept = |after: &NavMesh| succession(old, after, &tiles, (&dirty, &was), &reuse.changed);
        let replacing = Replacing {
            old,
            succession: &kept,
            changed: &[],
        };
        let mesh = self.mesh(radius, &tiles, (Some(replacing), Some(&reuse)), scratch)?;
        Ok((mesh, tiles))
    }

    /// The mesh for the wider agent from its tiles, replacing an earlier
    /// one (`None`s for the first), built in `scratch`.
    fn mesh(
        &self,
        radius: f32,
        tiles: &[TileMesh],
        (replacing, reuse): (Option<Replacing<'_>>, Option<&Reuse<'_>>),
        scratch: &mut MeshScratch,
    ) -> Result<NavMesh, BakeError> {
        let (level, mut config) = super::sized::finishing(self.base, radius);
        config.tile_size = Some(self.tiling.size as f32);
        // keys at the base's generation: two meshes of this radius at one
        // generation are derivations of one base, the same mesh, whether
        // carried through edits or derived afresh after the radius was
        // forgotten (`crate::mesh::keys`)
        let key_generation = self.base.data.key_generation();
        // the hierarchies dropped for their bytes are kept, as the base
        // mesh's are: without them each edit built every dropped attempt's
        // leg tables whole again (BENCHMARKS.md, session 43)
        build_mesh(
            &level,
            &config,
            (&self.tiling, tiles, self.grid),
            (self.base.data.areas.clone(), radius, key_generation),
            scratch,
            (replacing, reuse),
        )
    }
}

/// What an earlier derivation for the same radius left, which deriving
/// again after an edit starts from.
pub(crate) struct Earlier<'a> {
    /// Its tiles.
    pub tiles: &'a [TileMesh],
    /// Per tile, whether the edit affects it ([`TiledDerivation::affected`]).
    pub affected: &'a [bool],
    /// Its mesh.
    pub mesh: &'a NavMesh,
    /// The storage it was built in.
    pub scratch: &'a mut MeshScratch,
}

/// `f(0)`, ..., `f(n - 1)` in order (on rayon's threads with the
/// `parallel` feature): the tiles an edit bakes or derives again are
/// independent. The first error in that order, whatever the thread count.
fn in_order<T: Send, E: Send>(
    n: usize,
    f: impl Fn(usize) -> Result<T, E> + Sync + Send,
) -> Result<Vec<T>, E> {
    map_in_order(n, f).into_iter().collect()
}

/// `f(0)`, ..., `f(n - 1)`, in order, on rayon's threads with the
/// `parallel` feature.
fn map_in_order<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        (0..n).map(f).collect()
    }
}

/// The meshes for wider agents that `before` had derived, derived again
/// for `after` (which re-baked tiles `dirty`): only the tiles the edit can
/// change are derived again, the others are taken as they were. A radius
/// whose derivation now fails is left out (asking for it again reports why).
/// Each radius derives in its storage in `scratches`, which ends holding
/// one per radius carried.
fn carry_sizes(
    before: &NavMesh,
    after: &NavMesh,
    dirty: &[usize],
    scratches: &mut Vec<(u32, MeshScratch)>,
) -> Vec<(u32, SizedSlot)> {
    let earlier = before
        .sized
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let (Some(now), Some(was)) = (after.data.tiling, before.data.tiling) else {
        return Vec::new();
    };
    let (now, was) = (Tiling::of(now), Tiling::of(was));
    // the radii derived from `before` by tiles
    let sizes: Vec<(u32, &Sized, &SizedSlot)> = earlier
        .iter()
        .filter_map(|(bits, slot)| match slot.get() {
            Some(Some(sized)) if sized.tiles.is_some() => Some((*bits, sized, slot)),
            _ => None,
        })
        .collect();
    // a radius no longer carried gives its storage up
    let mut taken = std::mem::take(scratches);
    if sizes.is_empty() {
        return Vec::new();
    }
    let storage: Vec<std::sync::Mutex<MeshScratch>> = sizes
        .iter()
        .map(
            |&(bits, ..)| match taken.iter().position(|(b, _)| *b == bits) {
                Some(k) => taken.swap_remove(k).1,
                None => MeshScratch::default(),
            },
        )
        .map(std::sync::Mutex::new)
        .collect();
    // both meshes' regions and walls by tile, gathered once for every
    // radius, where the widest pen can read them: in the tiles whose
    // derivation it can change and the tiles whose walls reach those
    let reach = sizes
        .iter()
        .map(|&(bits, ..)| TiledDerivation::reach_of(after, f32::from_bits(bits)))
        .fold(0.0, f64::max);
    let span = TiledDerivation::affected_span(reach, now.size)
        + TiledDerivation::wall_hops(reach, now.size);
    let window = now.around(dirty, span);
    let (by_now, by_was) = (
        ByTile::within(after, &now, &window),
        ByTile::within(before, &was, &window),
    );
    let carry = |&(bits, sized, slot): &(u32, &Sized, &SizedSlot), scratch: &mut MeshScratch| {
        let radius = f32::from_bits(bits);
        let tiles = sized.tiles.as_deref().expect("filtered");
        let tiled = TiledDerivation::with(after, radius, (now, Cow::Borrowed(&by_now)));
        let earlier = TiledDerivation::with(before, radius, (was, Cow::Borrowed(&by_was)));
        let affected = tiled.affected(dirty, &earlier);
        if !affected.contains(&true) {
            // every tile reads the same: the same mesh
            return Some((bits, Arc::clone(slot)));
        }
        let earlier = Earlier {
            tiles,
            affected: &affected,
            mesh: &sized.mesh,
            scratch,
        };
        let (mesh, tiles) = tiled.derive(radius, Some(earlier)).ok()?;
        let sized = Sized {
            mesh: Arc::new(mesh),
            tiles: Some(Arc::new(tiles)),
        };
        Some((bits, Arc::new(std::sync::OnceLock::from(Some(sized)))))
    };
    // each radius on its own, kept in the order they were derived
    let carried = map_in_order(sizes.len(), |k| {
        let mut scratch = storage[k]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        carry(&sizes[k], &mut scratch)
    });
    let storage = storage.into_iter().map(|m| {
        m.into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    scratches.extend(sizes.iter().map(|&(bits, ..)| bits).zip(storage));
    carried.into_iter().flatten().collect()
}

/// Which regions of `before` an edit kept in `after` ([`Succession`]).
/// Regions are laid out tile by tile, each tile's polygons in order, so a
/// tile that was not re-baked (not in `dirty`, whose old tiles are `old_tiles`)
/// holds as many regions in both meshes, in the same order. Each of those
/// is kept if its polygon, area and cost are the same: one next to a
/// re-baked tile may have had a border edge split differently. Those of a
/// tile the rebuild took whole from `before` (not `changed`) are the same.
/// Where the counts do not add up, no region is kept (never a wrong match).
fn succession(
    before: &NavMesh,
    after: &NavMesh,
    tiles: &[TileMesh],
    (dirty, old_tiles): (&[usize], &[TileMesh]),
    changed: &[bool],
) -> Succession {
    let (old, new) = (&before.tables, &after.tables);
    let (before_n, after_n) = (old.region_keys.len(), new.region_keys.len());
    let mut regions = Vec::with_capacity(before_n);
    let mut rebaked = dirty.iter().zip(old_tiles).peekable();
    let mut at = 0;
    for (t, tile) in tiles.iter().enumerate() {
        let now = tile.polygons.len();
        if let Some((_, was)) = rebaked.next_if(|(&d, _)| d == t) {
            regions.resize(regions.len() + was.polygons.len(), u32::MAX);
        } else if !changed[t] && regions.len() + now <= before_n && at + now <= after_n {
            regions.extend(at as u32..(at + now) as u32);
        } else {
            for k in at..at + now {
                let r = regions.len();
                let same = r < before_n
                    && k < after_n
                    && old.polygon(r as u32) == new.polygon(k as u32)
                    && old.region_area[r] == new.region_area[k]
                    && old.region_cost[r] == new.region_cost[k];
                regions.push(if same { k as u32 } else { u32::MAX });
            }
        }
        at += now;
    }
    if regions.len() != before_n || at != after_n {
        regions.clear();
        regions.resize(before_n, u32::MAX);
    }
    Succession {
        from: before.serial,
        regions,
        keys: old.region_keys.clone(),
    }
}

/// Marks, in `build_mesh`'s per-tile table of global point ids, a point on
/// a border between tiles (ids stay below it: 2^31 points would take 32 GiB
/// of coordinates).
const ON_BORDER: u32 = 1 << 31;

/// The mesh of a set of baked tiles: vertices shared by coordinates, border
/// edges split at the other side's border points, then the untiled bake's
/// assembly (portals, components) and hierarchy. With `reuse`, only the
/// tiles that can change and their neighbours are gathered, and the
/// assembly is [`reassemble`]'s.
fn build_mesh(
    level: &Level,
    config: &BakeConfig,
    (tiling, tiles, grid): (&Tiling, &[TileMesh], Grid),
    (areas, radius, key_generation): (Vec<AreaKind>, f32, u32),
    scratch: &mut MeshScratch,
    (replacing, reuse): (Option<Replacing<'_>>, Option<&Reuse<'_>>),
) -> Result<NavMesh, BakeError> {
    let started = std::time::Instant::now();
    // a rebuild takes from the mesh it replaces the regions of the tiles it
    // cannot change (a mesh laid out otherwise than the tiles say is
    // assembled whole), and gathers the others and their neighbours (whose
    // border points split theirs)
    let reuse = reuse.filter(|r| {
        let regions = r.old.tables.region_keys.len();
        r.changed.len() == tiles.len()
            && r.old_start.len() == tiles.len() + 1
            && r.old_start[tiles.len()] as usize == regions
            && r.old.twins.covers(regions)
    });
    let gathered = reuse.map(|reuse| tiling.with_neighbours(&reuse.changed));
    let key = |p: DVec2| (p.x.to_bits(), p.y.to_bits());
    // only a point on a border between tiles can be another tile's too (a
    // tile's own points are distinct): the others need no look-up
    let shared = |p: DVec2| tiling.on_border(0, p.x) || tiling.on_border(1, p.y);
    let MeshScratch {
        polygons,
        points,
        ids,
        local,
        border,
        touches_border,
        tile_start,
        reassembly,
        assembly,
    } = scratch;
    ids.clear();
    points.clear();
    border.clear();
    touches_border.clear();
    tile_start.clear();
    let mut used = 0;
    for (t, tile) in tiles.iter().enumerate() {
        tile_start.push(used as u32);
        if gathered.as_ref().is_some_and(|g| !g[t]) {
            continue;
        }
        // a neighbour gathered only for its border points needs no split
        let ring = reuse.is_some_and(|r| !r.changed[t]);
        // a point strictly inside its tile's square is on no border line
        // (the lines are the squares' sides, `rect` exact multiples of the
        // tile size): no rounding needed for it
        let [lo, hi] = tiling.rect(t);
        let on_border = |p: DVec2| {
            let inside = lo.x < p.x && p.x < hi.x && lo.y < p.y && p.y < hi.y;
            !inside && shared(p)
        };
        local.clear();
        local.resize(tile.points.len(), u32::MAX);
        for poly in tile.polygons.iter() {
            // each polygon's vertex list is the last rebuild's, refilled
            if used == polygons.len() {
                polygons.push(MergedPolygon {
                    vertices: Vec::new(),
                    area: 0,
                });
            }
            let out = &mut polygons[used];
            used += 1;
            out.area = poly.area;
            out.vertices.clear();
            let mut touches = false;
            out.vertices.extend(poly.vertices.iter().map(|&v| {
                if local[v as usize] == u32::MAX {
                    let p = tile.points[v as usize];
                    local[v as usize] = if on_border(p) {
                        *ids.entry(key(p)).or_insert_with(|| {
                            points.push(p);
                            border.push(points.len() as u32 - 1);
                            points.len() as u32 - 1
                        }) | ON_BORDER
                    } else {
                        points.push(p);
                        points.len() as u32 - 1
                    };
                }
                touches |= local[v as usize] & ON_BORDER != 0;
                local[v as usize] & !ON_BORDER
            }));
            touches_border.push(touches && !ring);
        }
    }
    tile_start.push(used as u32);
    polygons.truncate(used);
    debug_assert!(points.len() < ON_BORDER as usize);
    let (points, polygons) = (&*points, &mut polygons[..]);
    split_border_edges(tiling, points, (border, touches_border), polygons);
    let (mut data, mut linked) = match reuse {
        None => assemble(points, polygons, (areas, key_generation), assembly),
        Some(reuse) => {
            let gathered = Gathered {
                points,
                polygons,
                tile_start,
            };
            let scratch = (&mut *reassembly, &mut *assembly);
            reassemble(&gathered, tiles, reuse, (areas, key_generation), scratch)
        }
    };
    // regions in tile order: the point locator lists them by tile
    linked.tile_start = first_regions(tiles.iter().map(|t| t.polygons.len()));
    // the tiles the rebuild copied whole let the new mesh derive its point
    // locator from the old one's
    let replacing = replacing.map(|r| {
        // the tiles are those of the mesh the reassembly copied from
        debug_assert!(reuse.is_none_or(|reuse| std::ptr::eq(reuse.old, r.old)));
        let changed: &[bool] = match reuse {
            Some(reuse) => &reuse.changed,
            None => &[],
        };
        Replacing { changed, ..r }
    });
    data.stats.triangles = tiles.iter().map(|t| t.triangles).sum();
    data.stats.dropped_constraints = tiles.iter().map(|t| t.dropped).sum();
    data.stats.walkable_area = tiles.iter().map(|t| t.walkable_area).sum();
    data.snap_scale = grid.scale;
    data.tiling = Some(TileGrid {
        size: tiling.size,
        first: tiling.first,
        count: tiling.count.map(|c| c as u32),
    });
    if data.regions.is_empty() {
        return Err(BakeError::NothingWalkable { radius });
    }
    let mut mesh = finish((data, linked), level, config, (radius, started), replacing)?;
    // the next edit copies the regions it keeps with their pairs
    mesh.twins = std::mem::take(&mut assembly.twins);
    Ok(mesh)
}

/// Per tile holding `counts` regions, in tile order, its first region's
/// index, and the count of all at the end.
fn first_regions(counts: impl Iterator<Item = usize>) -> Vec<u32> {
    let mut starts = vec![0];
    for n in counts {
        starts.push(starts[starts.len() - 1] + n as u32);
    }
    starts
}

/// What an edit's rebuild (of the base mesh, or of one derived for a wider
/// agent) takes from the mesh it replaces: the regions of the tiles it
/// cannot change, with their portals between them.
struct Reuse<'a> {
    old: &'a NavMesh,
    /// Per tile, the index of its first region in `old` (and their count at
    /// the end).
    old_start: Vec<u32>,
    /// Per tile, whether its regions can change: the re-baked tiles and
    /// their four neighbours (a border edge is split at the other side's
    /// points; a tile's other regions keep their vertices, and their edges
    /// on its borders with the others keep their pairs).
    changed: Vec<bool>,
}

impl<'a> Reuse<'a> {
    /// What a rebuild of `old` (whose tiles held `old_counts` regions) can
    /// take when the tiles flagged in `rebaked` were baked again.
    fn new(
        tiling: &Tiling,
        old: &'a NavMesh,
        old_counts: impl Iterator<Item = usize>,
        rebaked: &[bool],
    ) -> Reuse<'a> {
        let old_start = first_regions(old_counts);
        Reuse {
            old,
            old_start,
            changed: tiling.with_neighbours(rebaked),
        }
    }
}

/// The polygons [`build_mesh`] gathered (some of the tiles), their border
/// edges split.
struct Gathered<'a> {
    points: &'a [DVec2],
    polygons: &'a [MergedPolygon],
    tile_start: &'a [u32],
}

/// The mesh data [`assemble`] would give for all of `tiles`, from the
/// polygons of the tiles that changed (in `gathered`, which also holds their
/// neighbours' for the splitting) and the regions of the others in the mesh
/// being replaced. Those are copied, their edges paired as before
/// (renumbered); only the edges of changed regions, and the others' edges
/// that were paired with one, are paired again, by their ends' coordinates
/// (every corner is on the snapping grid, which `f32` holds exactly, and
/// distinct points have distinct coordinates, so equal coordinates are the
/// same point).
fn reassemble(
    gathered: &Gathered<'_>,
    tiles: &[TileMesh],
    reuse: &Reuse<'_>,
    areas: (Vec<AreaKind>, u32),
    (reassembly, scratch): (&mut ReassemblyScratch, &mut AssemblyScratch),
) -> (MeshData, Linked) {
    let ReassemblyScratch {
        remap,
        unpaired,
        by_ends,
    } = reassembly;
    let (old, old_start, changed) = (&reuse.old, &reuse.old_start, &reuse.changed);
    let old_keys = &old.tables.region_keys;
    remap.clear();
    remap.resize(old_keys.len(), u32::MAX);
    let mut at = 0;
    for (t, tile) in tiles.iter().enumerate() {
        if !changed[t] {
            for (k, r) in (old_start[t]..old_start[t + 1]).enumerate() {
                remap[r as usize] = at + k as u32;
            }
        }
        at += tile.polygons.len() as u32;
    }
    let mut regions: SlotMap<RegionId, Region> = SlotMap::with_capacity_and_key(at as usize);
    scratch.twins.clear();
    scratch.corners.clear();
    unpaired.clear();
    for (t, tile) in tiles.iter().enumerate() {
        if changed[t] {
            let range = gathered.tile_start[t] as usize..gathered.tile_start[t + 1] as usize;
            debug_assert_eq!(range.len(), tile.polygons.len());
            for poly in &gathered.polygons[range] {
                let i = regions.len() as u32;
                let (mut vertices, portals) = scratch.lists();
                let points = poly.vertices.iter();
                vertices.extend(points.map(|&v| gathered.points[v as usize].as_vec2()));
                scratch.corners.extend_from_slice(&vertices);
                let twins = &mut scratch.twins;
                twins.start.push(twins.list.len() as u32);
                for k in 0..vertices.len() {
                    twins.list.push(NO_TWIN);
                    unpaired.push(((i, k as u32), edge_ends(&vertices, k)));
                }
                regions.insert(Region {
                    vertices,
                    portals,
                    area: poly.area,
                    component: 0,
                    key_generation: 0,
                    index: i,
                });
            }
            continue;
        }
        // the old regions as the old mesh's tables hold them, their edges
        // paired as its assembly paired them
        for r in old_start[t]..old_start[t + 1] {
            let i = regions.len() as u32;
            let polygon = old.tables.polygon(r);
            let twins = &mut scratch.twins;
            twins.start.push(twins.list.len() as u32);
            debug_assert_eq!(old.twins.of(r).len(), polygon.len());
            for (k, &(j, slot)) in old.twins.of(r).iter().enumerate() {
                if j == NO_TWIN.0 {
                    twins.list.push(NO_TWIN);
                    continue;
                }
                match remap[j as usize] {
                    // paired with a region that changes: pair it again
                    u32::MAX => {
                        twins.list.push(NO_TWIN);
                        unpaired.push(((i, k as u32), edge_ends(polygon, k)));
                    }
                    j => twins.list.push((j, slot)),
                }
            }
            let (mut vertices, portals) = scratch.lists();
            vertices.extend_from_slice(polygon);
            scratch.corners.extend_from_slice(polygon);
            regions.insert(Region {
                vertices,
                portals,
                area: old.tables.region_area[r as usize],
                component: 0,
                key_generation: 0,
                index: i,
            });
        }
    }
    // pair the rest by their ends' coordinates
    by_ends.clear();
    for &(edge, ends) in unpaired.iter() {
        // regions are convex and do not overlap: each directed edge is one
        // region's (`assemble` would take the last listed)
        let earlier = by_ends.insert(ends, edge);
        debug_assert!(earlier.is_none(), "edge {edge:?} listed twice");
    }
    let twins = &mut scratch.twins;
    twins.start.push(twins.list.len() as u32);
    for &((i, k), [ax, ay, bx, by]) in unpaired.iter() {
        if let Some(&twin) = by_ends.get(&[bx, by, ax, ay]) {
            twins.list[(twins.start[i as usize] + k) as usize] = twin;
        }
    }
    super::link(regions, areas, scratch)
}

/// The bits of the coordinates of edge `k`'s ends (from `v[k]` to the next
/// vertex): equal for the same directed edge of two regions.
fn edge_ends(v: &[Vec2], k: usize) -> [u32; 4] {
    let (a, b) = (v[k], v[(k + 1) % v.len()]);
    [a.x.to_bits(), a.y.to_bits(), b.x.to_bits(), b.y.to_bits()]
}

/// Splits every polygon edge that runs along a border between tiles at the
/// points of the other side's polygons on that border, so both sides have
/// the same border segments and the assembly links each into a portal.
fn split_border_edges(
    tiling: &Tiling,
    points: &[DVec2],
    (border, touches_border): (&[u32], &[bool]),
    polygons: &mut [MergedPolygon],
) {
    // per border line (axis, coordinate bits): the points on it, sorted along it
    let mut lines: FxHashMap<(usize, u64), Vec<u32>> = FxHashMap::default();
    for &v in border {
        let p = points[v as usize];
        for axis in 0..2 {
            if tiling.on_border(axis, p[axis]) {
                lines.entry((axis, p[axis].to_bits())).or_default().push(v);
            }
        }
    }
    if lines.is_empty() {
        return;
    }
    for (&(axis, _), on_line) in lines.iter_mut() {
        let along = 1 - axis;
        on_line.sort_unstable_by(|&a, &b| {
            points[a as usize][along].total_cmp(&points[b as usize][along])
        });
    }
    let mut out = Vec::new();
    // an edge on a border line has both ends on it
    for (poly, _) in polygons
        .iter_mut()
        .zip(touches_border)
        .filter(|(_, &touches)| touches)
    {
        out.clear();
        let n = poly.vertices.len();
        let mut changed = false;
        for k in 0..n {
            let (a, b) = (poly.vertices[k], poly.vertices[(k + 1) % n]);
            out.push(a);
            let (pa, pb) = (points[a as usize], points[b as usize]);
            for axis in 0..2 {
                if pa[axis] != pb[axis] {
                    continue;
                }
                let Some(on_line) = lines.get(&(axis, pa[axis].to_bits())) else {
                    continue;
                };
                let along = 1 - axis;
                let (from, to) = (pa[along], pb[along]);
                let (lo, hi) = (from.min(to), from.max(to));
                let start = on_line.partition_point(|&v| points[v as usize][along] <= lo);
                let end = on_line.partition_point(|&v| points[v as usize][along] < hi);
                if start < end {
                    changed = true;
                    if from < to {
                        out.extend_from_slice(&on_line[start..end]);
                    } else {
                        out.extend(on_line[start..end].iter().rev());
                    }
                }
            }
        }
        if changed {
            poly.vertices.clone_from(&out);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::BakeConfig;

    /// den520d in tiles of 32 without the hierarchy, serving radius 1.0.
    fn den520d_flat_carrying_one() -> TileCache {
        let (level, mut config) = den520d_tiled(32.0);
        config.corridors = false;
        config.max_radius = Some(1.0);
        TileCache::new(&level, &config).expect("bakes")
    }

    /// The bundled den520d map as a level, and a tiled config for it.
    pub(crate) fn den520d_tiled(tile: f32) -> (Level, BakeConfig) {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        let config = BakeConfig {
            tile_size: Some(tile),
            ..BakeConfig::default()
        };
        (level, config)
    }

    /// A 7 x 5 building with its corner at (`x`, `y`).
    pub(crate) fn building(x: f32, y: f32) -> Vec<Vec2> {
        vec![
            Vec2::new(x, y),
            Vec2::new(x + 7.0, y),
            Vec2::new(x + 7.0, y + 5.0),
            Vec2::new(x, y + 5.0),
        ]
    }

    /// The next edit really takes leg tables from the hierarchies dropped
    /// for their bytes, each attempt from the one of its own cluster aim:
    /// tampered with, they show up in what the edit builds.
    #[test]
    fn an_edit_takes_leg_tables_from_the_unkept_hierarchy() {
        let (level, config) = den520d_tiled(32.0);
        // every aim tried was over the bound: each attempt takes the tables
        // of its own aim
        let costs = |cache: &TileCache| -> Vec<Vec<f32>> {
            let unkept = &cache.mesh().unkept;
            let aims: Vec<u32> = unkept.iter().map(|h| h.stats.cluster_aim).collect();
            assert_eq!(aims, [32, 64, 16], "every aim dropped for its bytes");
            unkept.iter().map(|h| h.leg_cost.clone()).collect()
        };
        let mut honest = TileCache::new(&level, &config).expect("bakes");
        let mut tampered = TileCache::new(&level, &config).expect("bakes");
        let mesh = Arc::get_mut(&mut tampered.mesh).expect("no handle out");
        for h in &mut mesh.unkept {
            for c in &mut h.leg_cost {
                *c += 1.0;
            }
        }
        for cache in [&mut honest, &mut tampered] {
            cache.add_obstacle(&building(70.0, 60.0)).expect("edit");
        }
        assert_tables_mostly_taken(&costs(&honest), &costs(&tampered));
    }

    /// Leg costs of attempts built from honest and from tampered old
    /// tables (every cost one more): more than half of each attempt's
    /// entries differ, so they were taken from the old tables.
    fn assert_tables_mostly_taken(honest: &[Vec<f32>], tampered: &[Vec<f32>]) {
        assert_eq!(honest.len(), tampered.len());
        for (a, b) in honest.iter().zip(tampered) {
            assert_eq!(a.len(), b.len());
            let reused = a.iter().zip(b).filter(|(x, y)| x != y).count();
            assert!(
                reused > a.len() / 2,
                "{reused} of {} entries taken",
                a.len()
            );
        }
    }

    /// A mesh carried for a wider agent keeps the hierarchies it dropped
    /// for their bytes, and its next edit takes leg tables from them as the
    /// base mesh's does; a cache given up drops them.
    #[test]
    fn a_carried_mesh_takes_leg_tables_from_its_unkept_hierarchies() {
        // Aurora's mesh at 2.45 in tiles of 64 keeps clusters of 32, having
        // dropped those of 64 for their bytes
        let level = crate::test_data::bundled_level("maps/Aurora.map");
        let config = BakeConfig {
            tile_size: Some(64.0),
            max_radius: Some(2.45),
            ..BakeConfig::default()
        };
        fn carried(cache: &mut TileCache) -> &mut NavMesh {
            let mesh = Arc::get_mut(&mut cache.mesh).expect("no handle out");
            let slots = mesh.sized.0.get_mut().unwrap();
            let slot = Arc::get_mut(&mut slots[0].1).expect("no handle out");
            let sized = slot.get_mut().and_then(Option::as_mut).expect("derived");
            Arc::get_mut(&mut sized.mesh).expect("no handle out")
        }
        let costs = |cache: &mut TileCache| -> Vec<Vec<f32>> {
            let unkept = &carried(cache).unkept;
            assert!(!unkept.is_empty(), "an aim dropped for its bytes");
            unkept.iter().map(|h| h.leg_cost.clone()).collect()
        };
        let mut honest = TileCache::new(&level, &config).expect("bakes");
        let mut tampered = TileCache::new(&level, &config).expect("bakes");
        for cache in [&mut honest, &mut tampered] {
            cache.mesh().for_radius(2.45).expect("derives");
        }
        for h in &mut carried(&mut tampered).unkept {
            for c in &mut h.leg_cost {
                *c += 1.0;
            }
        }
        let before = carried(&mut honest).serial;
        for cache in [&mut honest, &mut tampered] {
            cache.add_obstacle(&building(250.0, 320.0)).expect("edit");
        }
        assert_ne!(carried(&mut honest).serial, before, "derived again");
        assert_tables_mostly_taken(&costs(&mut honest), &costs(&mut tampered));
        let mesh = honest.into_mesh();
        match mesh.for_radius(2.45).expect("carried") {
            crate::SizedMesh::Derived(m) => assert!(m.unkept.is_empty()),
            crate::SizedMesh::Baked(_) => panic!("a derived mesh"),
        }
    }

    /// An edit copies the regions it keeps with the edge pairs the old
    /// mesh's assembly made, and hands the search tables the links it made:
    /// both must be what looking every key up again gives.
    #[test]
    fn links_carried_through_edits_are_those_the_keys_give() {
        let mut cache = den520d_flat_carrying_one();
        let check = |mesh: &NavMesh, what: &str| {
            let looked_up = crate::mesh::Tables::build(&mesh.data, None);
            let t = &mesh.tables;
            assert_eq!(t.region_start, looked_up.region_start, "{what}");
            assert_eq!(t.region_portals, looked_up.region_portals, "{what}");
            assert_eq!(t.portal_regions, looked_up.portal_regions, "{what}");
            // the pairs kept for the next edit: each edge's twin is the
            // region across its portal, at the edge holding that portal
            assert!(mesh.twins.covers(mesh.region_count()), "{what}");
            let keys = &t.region_keys;
            for (i, key) in keys.iter().enumerate() {
                let region = &mesh.data.regions[*key];
                let twins = mesh.twins.of(i as u32);
                assert_eq!(twins.len(), region.vertices.len(), "{what}");
                for (k, &(j, slot)) in twins.iter().enumerate() {
                    match region.portals[k] {
                        None => assert_eq!((j, slot), NO_TWIN, "{what}: region {i} edge {k}"),
                        Some(pid) => {
                            let other = &mesh.data.regions[keys[j as usize]];
                            assert_eq!(other.portals[slot as usize], Some(pid), "{what}");
                        }
                    }
                }
            }
        };
        check(cache.mesh(), "bake");
        // derived now, so every edit carries it
        check(
            &cache.mesh().for_radius(1.0).expect("derives"),
            "derived radius",
        );
        for (x, y) in [(70.0, 60.0), (31.0, 95.0), (64.0, 64.0)] {
            cache.add_obstacle(&building(x, y)).expect("edit");
            check(cache.mesh(), "edit");
            let wide = cache.mesh().for_radius(1.0).expect("carried");
            check(&wide, "carried radius");
        }
    }

    /// The succession an edit records (which skips comparing the regions of
    /// tiles the rebuild took whole) is the one comparing every region of
    /// the tiles not re-baked gives; it keeps most regions, not all.
    #[test]
    fn the_succession_is_what_comparing_every_region_gives() {
        let (level, mut config) = den520d_tiled(32.0);
        config.corridors = false;
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        for (x, y) in [(70.0, 60.0), (31.0, 95.0), (150.0, 30.0), (64.0, 64.0)] {
            let outline = building(x, y);
            let (lo, hi) = bounds(&counter_clockwise(&outline));
            let range = cache.tiling.range(lo, hi).expect("on the tiles");
            let dirty: Vec<usize> = cache.tiling.tiles(range).collect();
            let before = cache.shared_mesh();
            let old: Vec<TileMesh> = dirty.iter().map(|&t| cache.tiles[t].clone()).collect();
            cache.add_obstacle(&outline).expect("edit");
            let everywhere = vec![true; cache.tiles.len()];
            let compared = succession(
                &before,
                cache.mesh(),
                &cache.tiles,
                (&dirty, &old),
                &everywhere,
            );
            let recorded = cache.mesh().succession.as_ref().expect("recorded");
            assert_eq!(recorded.from, before.serial);
            assert_eq!(recorded.regions, compared.regions, "building at ({x}, {y})");
            let kept = compared.regions.iter().filter(|&&k| k != u32::MAX).count();
            assert!(kept > compared.regions.len() / 2 && kept < compared.regions.len());
            cache.release(before);
        }
    }

    /// A building inside one tile, away from its borders, derives that
    /// tile again alone; one whose walls reach into the next tile derives
    /// that one too, though its regions are the same (the other tiles in
    /// reach are not derived again). The meshes carried for the radius are
    /// compared with fresh derivations by the suite (`tests/suite/sizes.rs`).
    #[test]
    fn an_edit_derives_again_only_the_tiles_whose_reads_changed() {
        let mut cache = den520d_flat_carrying_one();
        let w = cache.tiling.count[0];
        // open ground in tile (2, 2), which spans 64..96 on both axes
        for (x, y, expected) in [
            (76.0, 76.0, vec![2 * w + 2]),
            (88.5, 76.0, vec![2 * w + 2, 2 * w + 3]),
        ] {
            let outline = building(x, y);
            let (lo, hi) = bounds(&counter_clockwise(&outline));
            let range = cache.tiling.range(lo, hi).expect("on the tiles");
            let dirty: Vec<usize> = cache.tiling.tiles(range).collect();
            assert_eq!(dirty, [2 * w + 2]);
            let before = cache.shared_mesh();
            let id = cache.add_obstacle(&outline).expect("edit");
            let (now, was) = (
                TiledDerivation::new(cache.mesh(), 0.5).expect("tiled"),
                TiledDerivation::new(&before, 0.5).expect("tiled"),
            );
            let affected = now.affected(&dirty, &was);
            let derived: Vec<usize> = (0..affected.len()).filter(|&t| affected[t]).collect();
            assert_eq!(derived, expected, "building at ({x}, {y})");
            // the tiles left out derive as they did
            for (t, _) in affected.iter().enumerate().filter(|(_, &a)| !a) {
                assert_eq!(now.tile(t).expect("derives"), was.tile(t).expect("derives"));
            }
            cache.release(before);
            cache.remove_obstacle(id).expect("edit");
        }
    }

    /// The mesh an edit carries for a wider agent, once replaced and held
    /// nowhere else, leaves its storage to the next edit's derivation for
    /// that radius; a radius no longer carried gives its storage up.
    #[test]
    fn carried_meshes_leave_their_storage_to_the_next_edit() {
        let mut cache = den520d_flat_carrying_one();
        let spare = |cache: &TileCache| -> Vec<(u32, usize)> {
            let lists = |s: &MeshScratch| s.assembly.spare_lists();
            cache
                .sized_scratch
                .iter()
                .map(|(b, s)| (*b, lists(s)))
                .collect()
        };
        let regions = |r: f32, mesh: &NavMesh| match mesh.for_radius(r).expect("carried") {
            crate::SizedMesh::Derived(m) => m.region_count(),
            crate::SizedMesh::Baked(_) => panic!("a derived mesh"),
        };
        let (half, one) = (0.5f32.to_bits(), 1.0f32.to_bits());
        let derived = [regions(0.5, cache.mesh()), regions(1.0, cache.mesh())];
        // buildings on open ground, each changing what both radii read
        let first = cache.add_obstacle(&building(76.0, 76.0)).expect("edit");
        assert_eq!(spare(&cache), [(half, derived[0]), (one, derived[1])]);
        let held = cache.shared_mesh();
        let carried = [regions(0.5, &held), regions(1.0, &held)];
        assert_ne!(carried, derived);
        cache.add_obstacle(&building(140.0, 140.0)).expect("edit");
        // the edit took what the first meshes left, and a handle holds the
        // meshes it replaced: nothing came back
        let left = spare(&cache);
        assert!(
            left[0].1 < derived[0] / 10 && left[1].1 < derived[1] / 10,
            "{left:?}"
        );
        cache.release(held);
        assert_eq!(spare(&cache), [(half, carried[0]), (one, carried[1])]);
        // a radius forgotten is not carried: its storage goes
        cache
            .mesh()
            .sized
            .0
            .lock()
            .unwrap()
            .retain(|(b, _)| *b == one);
        cache.remove_obstacle(first).expect("edit");
        assert_eq!(spare(&cache).len(), 1);
        assert_eq!(spare(&cache)[0].0, one);
    }

    /// The regions and walls gathered around an edit's tiles are those a
    /// pass over the whole mesh lists in them, in the same order; the
    /// other tiles are left empty.
    #[test]
    fn regions_and_walls_gathered_around_tiles_are_those_of_the_whole_pass() {
        let mut cache = den520d_flat_carrying_one();
        // a building across a border between tiles, so the mesh is an edit's
        cache.add_obstacle(&building(88.5, 76.0)).expect("edit");
        let (mesh, tiling) = (cache.mesh(), &cache.tiling);
        let whole = ByTile::of(mesh, tiling);
        let w = tiling.count[0];
        for (dirty, k) in [
            (vec![2 * w + 2], 1),
            (vec![0, tiling.len() - 1], 2),
            (vec![w + 3], 0),
        ] {
            let window = tiling.around(&dirty, k);
            let within = ByTile::within(mesh, tiling, &window);
            let mut expected = ByTile::empty(tiling);
            for t in (0..tiling.len()).filter(|&t| window[t]) {
                expected.regions[t].clone_from(&whole.regions[t]);
                expected.walls[t].clone_from(&whole.walls[t]);
            }
            assert_eq!(within, expected, "around {dirty:?}");
            let filled = (0..tiling.len()).filter(|&t| !within.walls[t].is_empty());
            assert!(filled.count() > 0, "walls around {dirty:?}");
        }
    }

    /// A carried mesh's table that a `for_radius` handle kept from being
    /// installed is computed by `into_mesh`, in a copy: the mesh given up
    /// has it, the handle's mesh is left as it was.
    #[test]
    fn into_mesh_tables_the_carried_meshes_a_handle_held() {
        let (level, mut config) = den520d_tiled(64.0);
        config.max_radius = Some(1.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        cache.mesh().for_radius(0.95).expect("derives");
        cache.add_obstacle(&building(76.0, 76.0)).expect("edit");
        let derived = |mesh: &NavMesh| match mesh.for_radius(0.95).expect("carried") {
            crate::SizedMesh::Derived(m) => m,
            crate::SizedMesh::Baked(_) => panic!("a derived mesh"),
        };
        let tabled = |mesh: &NavMesh| {
            let h = mesh.data.hierarchy.as_ref().expect("a hierarchy");
            assert!(h.stats.all_pairs_table);
            h.has_table()
        };
        let held = derived(cache.mesh());
        assert!(!tabled(&held), "left pending by the edit");
        // the rows are computed, but the handle keeps the table out
        assert!(!cache.refresh_table(usize::MAX));
        let mesh = cache.into_mesh();
        assert!(tabled(&derived(&mesh)));
        assert!(!tabled(&held));
    }

    /// An edit that changes no tile a radius's derivation reads (a building
    /// on blocked ground) keeps that radius's mesh itself.
    #[test]
    fn a_radius_no_tile_of_which_changes_keeps_its_mesh() {
        let (level, mut config) = den520d_tiled(64.0);
        config.max_radius = Some(1.0);
        config.corridors = false;
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let derived = |mesh: &NavMesh| match mesh.for_radius(0.95).expect("carried") {
            crate::SizedMesh::Derived(m) => m,
            crate::SizedMesh::Baked(_) => panic!("a derived mesh"),
        };
        let before = derived(cache.mesh());
        // the map's walls at its corner
        cache.add_obstacle(&building(1.0, 1.0)).expect("edit");
        assert!(Arc::ptr_eq(&before, &derived(cache.mesh())));
        // on open ground: derived again
        cache.add_obstacle(&building(76.0, 76.0)).expect("edit");
        assert!(!Arc::ptr_eq(&before, &derived(cache.mesh())));
    }

    /// A carried radius that keeps its mesh through an edit keeps the rows
    /// of its pending table computed so far.
    #[test]
    fn a_kept_carried_mesh_keeps_its_table_rows_through_an_edit() {
        let (level, mut config) = den520d_tiled(64.0);
        config.max_radius = Some(1.0);
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let carried = |cache: &TileCache| {
            cache
                .mesh()
                .for_radius(0.95)
                .expect("derives")
                .nav_nodes()
                .len()
        };
        let own = |cache: &TileCache| {
            let n = cache.mesh().nav_nodes().len();
            n + n.min(LANDMARKS as usize)
        };
        carried(&cache);
        cache.add_obstacle(&building(76.0, 76.0)).expect("edit");
        let (nb, nc) = (cache.mesh().nav_nodes().len(), carried(&cache));
        assert_eq!(
            cache.table_pending(),
            Some((own(&cache) + nc, own(&cache) + nc))
        );
        // the mesh's rows (no landmarks when the call finishes them), then
        // two of the carried mesh's
        assert!(!cache.refresh_table(nb + 2));
        assert_eq!(cache.table_pending(), Some((nc - 2, nc)));
        // on blocked ground: the carried mesh stays, and so do its rows
        cache.add_obstacle(&building(1.0, 1.0)).expect("edit");
        assert_eq!(carried(&cache), nc);
        let all = own(&cache) + nc;
        assert_eq!(cache.table_pending(), Some((all - 2, all)));
        assert!(cache.refresh_table(usize::MAX));
    }
}
