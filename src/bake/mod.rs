//! The build side: level in, [`NavMesh`] out. The only code that touches spade
//! and polygon booleans.
//!
//! ```text
//! Level -> outline (booleans, radius) -> CDT (spade) -> walkable triangles
//!       -> convex merge (Hertel–Mehlhorn) -> portals -> components -> NavMesh
//! ```

mod hierarchy;
mod merge;
mod noding;
pub(crate) mod outline;
mod sized;
mod tiles;
mod triangulate;
pub(crate) mod uncrossed;

use std::time::Instant;

use glam::Vec2;
use petgraph::unionfind::UnionFind;
use slotmap::SlotMap;

pub use outline::MAX_CROSSINGS;
pub use sized::MAX_DERIVED_RADII;
pub(crate) use tiles::TileMesh;
pub use tiles::{Edit, ObstacleId, TileCache, MAX_TILES};
pub use triangulate::TriangleSoup;

use crate::error::BakeError;
use crate::geometry::morton_key;
use crate::level::Level;
use crate::mesh::{
    keys, AreaKind, BakeStats, EdgeTwins, Linked, MeshData, NavMesh, Portal, PortalId, Region,
    RegionId, Succession,
};

/// How to bake a level.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeConfig {
    /// Agent radius in world units (>= 0): walkable space is eroded by it so a
    /// unit's centre on the mesh keeps its body clear of walls. Ignored when
    /// `agent` names a class of the level.
    pub agent_radius: f32,
    /// Name of an agent class of the level whose radius to use.
    pub agent: Option<String>,
    /// Build the nav-point hierarchy: clusters, nav points and the cached
    /// corridors between them, so long queries search a small graph. It is
    /// left out, and every query uses the flat search, when it would not
    /// pay for itself: more than 16 corridors or 256 corridor crossings per
    /// region (plus 65,536 on any mesh), or regions with so many portals
    /// that the leg tables grow with their square (a hub region with
    /// thousands of neighbours).
    pub corridors: bool,
    /// Regions per cluster of the hierarchy (2..=1024; the second merge
    /// phase lets small pockets take a cluster up to twice this). Larger
    /// clusters mean fewer nav points but longer leg tables and more
    /// corridors. A mesh of fewer than 64 times this many regions aims for
    /// smaller clusters, regions / 64 rounded up to a power of two but never
    /// below 32 nor above this, so that long queries use the hierarchy (with
    /// 64 here: 32 below 2,112 regions), unless that hierarchy breaks a
    /// budget; then this size, then (on such a mesh) clusters of 16 as a
    /// last resort. A larger mesh starts at this size and tries half of it
    /// (at least 32) if that breaks a budget;
    /// [`crate::HierarchyStats::cluster_aim`] says which size it got. The
    /// byte bound does not apply to a level with nav points: it keeps the
    /// first hierarchy built if none is within the bound. With clusters
    /// below 16 regions, queries refine routes through as many clusters as
    /// hold 48 regions, and group moves answer each unit as its own query.
    pub cluster_size: u32,
    /// Portals wider than this (world units, above 0 and at most the
    /// default, 4) get nav points and leg-table points next to both ends as
    /// well as at the middle, and more between them the wider they are:
    /// paths that wrap a corner cross there, and a midpoint far from the
    /// path misjudges it. A smaller value samples more portals (more bytes,
    /// and a hierarchy over the byte bound is left out); a larger one is
    /// refused, because routes chosen on sparser samples go a street over
    /// (on AR0015SR at 64, 6 of 414 problems came out over the octile
    /// optimum).
    pub wide_portal: f32,
    /// Most bytes the hierarchy may take, as a multiple of the rest of the
    /// baked file (> 0; infinite for no bound), counted as the file writes
    /// it but each leg cost at the four bytes it takes in memory
    /// ([`crate::HierarchyStats::bytes`]; the file codes most in one, so
    /// the hierarchy takes less than this in it). A hierarchy over
    /// it is left out, and every query uses the flat search, unless the
    /// level has designer nav points (their cached corridors are what it
    /// asks for). The default, 3,
    /// is the bound the any-map issue sets; of the 53 Moving AI maps of the
    /// development sets only three small maps of wide rooms are over it,
    /// and there the flat search is as fast or half as fast (figures in
    /// BENCHMARKS.md). Sampling portals more coarsely instead would keep
    /// a hierarchy, but its paths came out up to 7.6% over the optimum there.
    pub max_hierarchy_ratio: f32,
    /// Bake in square tiles of this side (world units, a multiple of the
    /// snapping step, at least 1), each from its own part of the level, so
    /// that a [`TileCache`] can re-bake only the tiles a runtime obstacle
    /// touches. Regions stop at tile borders, so smaller tiles mean more
    /// regions and slower queries (figures in BENCHMARKS.md), and a larger
    /// hierarchy: with [`BakeConfig::corridors`] on, tiles too small for the
    /// hierarchy to fit [`BakeConfig::max_hierarchy_ratio`] leave the mesh
    /// without one, and every edit still pays for building and dropping it
    /// (ARCHITECTURE.md, "Tiles and runtime obstacles"). `None` bakes the
    /// level whole. Tiles need an agent radius of 0.
    pub tile_size: Option<f32>,
    /// Largest agent radius the baked mesh serves ([`NavMesh::for_radius`]),
    /// world units, at least the mesh's own radius. `None`: the level's
    /// largest agent class (0 on a grid map, which has none).
    pub max_radius: Option<f32>,
}

/// Default [`BakeConfig::max_hierarchy_ratio`].
pub const DEFAULT_MAX_HIERARCHY_RATIO: f32 = 3.0;

/// Default [`BakeConfig::wide_portal`], world units (grid cells on Moving AI maps).
pub const DEFAULT_WIDE_PORTAL: f32 = 4.0;

/// Default [`BakeConfig::cluster_size`], regions per cluster: chosen by the
/// query bench on the Moving AI maps (figures in BENCHMARKS.md).
pub const DEFAULT_CLUSTER_SIZE: u32 = 64;

impl Default for BakeConfig {
    fn default() -> Self {
        BakeConfig {
            agent_radius: 0.0,
            agent: None,
            corridors: true,
            cluster_size: DEFAULT_CLUSTER_SIZE,
            wide_portal: DEFAULT_WIDE_PORTAL,
            max_hierarchy_ratio: DEFAULT_MAX_HIERARCHY_RATIO,
            tile_size: None,
            max_radius: None,
        }
    }
}

impl BakeConfig {
    /// A config for a given radius, world units.
    #[must_use]
    pub fn with_radius(radius: f32) -> BakeConfig {
        BakeConfig {
            agent_radius: radius,
            ..BakeConfig::default()
        }
    }

    /// Checks the hierarchy settings when the hierarchy is built.
    fn check_hierarchy(&self) -> Result<(), BakeError> {
        if !self.corridors {
            return Ok(());
        }
        if !(2..=hierarchy::MAX_CLUSTER_SIZE).contains(&self.cluster_size) {
            return Err(BakeError::Config {
                field: "cluster_size",
                reason: format!(
                    "must be in 2..={}, found {}",
                    hierarchy::MAX_CLUSTER_SIZE,
                    self.cluster_size
                ),
            });
        }
        if self.max_hierarchy_ratio.is_nan() || self.max_hierarchy_ratio <= 0.0 {
            return Err(BakeError::Config {
                field: "max_hierarchy_ratio",
                reason: format!("must be > 0, found {}", self.max_hierarchy_ratio),
            });
        }
        if !(self.wide_portal > 0.0 && self.wide_portal <= DEFAULT_WIDE_PORTAL) {
            return Err(BakeError::Config {
                field: "wide_portal",
                reason: format!(
                    "must be > 0 and at most {DEFAULT_WIDE_PORTAL} (sparser samples give paths over the optimum), found {}",
                    self.wide_portal
                ),
            });
        }
        Ok(())
    }

    fn radius_for(&self, level: &Level) -> Result<f32, BakeError> {
        let radius = match &self.agent {
            Some(name) => level
                .agents
                .iter()
                .find(|a| &a.name == name)
                .map(|a| a.radius)
                .ok_or_else(|| BakeError::UnknownAgent(name.clone()))?,
            None => self.agent_radius,
        };
        if !(radius.is_finite() && radius >= 0.0) {
            return Err(BakeError::Config {
                field: "agent_radius",
                reason: format!("must be a finite number >= 0, found {radius}"),
            });
        }
        Ok(radius)
    }

    /// The largest radius the mesh baked for `radius` will serve.
    fn max_radius_for(&self, level: &Level, radius: f32) -> Result<f32, BakeError> {
        let classes = level.agents.iter().map(|a| a.radius);
        let max = self
            .max_radius
            .unwrap_or_else(|| classes.fold(radius, f32::max));
        if !(max.is_finite() && max >= radius) {
            return Err(BakeError::Config {
                field: "max_radius",
                reason: format!(
                    "must be a finite number at least the agent radius {radius}, found {max}"
                ),
            });
        }
        Ok(max)
    }
}

/// Triangulates a level's walkable space exactly as the bake does, before merging.
///
/// # Errors
/// As [`NavMesh::bake`].
pub fn triangulate(level: &Level, config: &BakeConfig) -> Result<TriangleSoup, BakeError> {
    let (_, outline) = resolve_outline(level, config)?;
    Ok(triangulate::triangulate(&outline)?.soup())
}

/// Validates the level and config, then runs the booleans: the agent radius
/// used and the resolved outline.
fn resolve_outline(
    level: &Level,
    config: &BakeConfig,
) -> Result<(f32, outline::Outline), BakeError> {
    level.validate()?;
    let radius = config.radius_for(level)?;
    config.max_radius_for(level, radius)?;
    config.check_hierarchy()?;
    check_area_count(level)?;
    Ok((radius, outline::resolve(level, radius)?))
}

/// The CDT of `outline` merged into convex polygons, each polygon's area
/// the kind its outline area is tagged with (the triangulation numbers
/// areas by their place in the outline).
fn merged_polygons(
    outline: &outline::Outline,
) -> Result<(triangulate::Triangulated, Vec<merge::MergedPolygon>), BakeError> {
    let tri = triangulate::triangulate(outline)?;
    let mut polygons = merge::merge(&tri);
    number_areas(outline, &mut polygons, |kind| kind as u16);
    Ok((tri, polygons))
}

/// Orders the merged polygons of a mesh baked whole along a Morton curve
/// through their centroids (over the box of `points`; ties in the merge's
/// order), so that regions near each other are near each other in the
/// dense tables, and so are the portals and nav nodes numbered after them:
/// a search's reads stay within fewer cache lines (the merge's own order
/// follows the triangulation's sweep, rings round the middle). A tiled
/// bake keeps its regions tile by tile instead.
fn in_curve_order(points: &[glam::DVec2], polygons: &mut [merge::MergedPolygon]) {
    let (lo, hi) = points.iter().fold(
        (
            glam::DVec2::splat(f64::INFINITY),
            glam::DVec2::splat(f64::NEG_INFINITY),
        ),
        |(lo, hi), &p| (lo.min(p), hi.max(p)),
    );
    let size = (hi - lo).max(glam::DVec2::splat(f64::MIN_POSITIVE));
    // stable: ties keep the merge's order
    polygons.sort_by_cached_key(|poly| {
        let sum: glam::DVec2 = poly.vertices.iter().map(|&v| points[v as usize]).sum();
        morton_key(sum / poly.vertices.len().max(1) as f64, lo, size)
    });
}

/// Gives each merged polygon its area kind: the triangulation numbers areas
/// by their place in the outline (1 + index), and `kind` turns the tag an
/// outline area carries into the mesh's kind.
fn number_areas(
    outline: &outline::Outline,
    polygons: &mut [merge::MergedPolygon],
    kind: impl Fn(usize) -> u16,
) {
    for p in polygons {
        if p.area > 0 {
            p.area = kind(outline.areas[usize::from(p.area) - 1].0);
        }
    }
}

/// The area kinds of a level's mesh: plain ground, then every costed area
/// of the level in its order, whether or not any of it is left, so kind
/// numbers are the same at every radius and in a tiled bake; and the kind
/// of each level area (0 for an impassable one).
fn area_kinds(level: &Level) -> (Vec<AreaKind>, Vec<u16>) {
    let mut kinds = vec![AreaKind {
        kind: "ground".to_string(),
        cost: 1.0,
    }];
    let mut kind_of = vec![0u16; level.areas.len()];
    for (i, a) in level.areas.iter().enumerate() {
        if let Some(cost) = a.cost {
            kind_of[i] = kinds.len() as u16;
            kinds.push(AreaKind {
                kind: a.kind.clone(),
                cost,
            });
        }
    }
    (kinds, kind_of)
}

/// Each area kind's regions of `mesh` among `regions` (all when `None`), as
/// contours, by kind (at least one list, for plain ground).
fn regions_by_kind(mesh: &NavMesh, regions: Option<&[u32]>) -> Vec<outline::Contours> {
    let data = &mesh.data;
    let mut kinds = vec![Vec::new(); data.areas.len().max(1)];
    let mut add = |region: &Region| {
        let polygon = region
            .vertices
            .iter()
            .map(|v| [f64::from(v.x), f64::from(v.y)]);
        kinds[usize::from(region.area)].push(polygon.collect());
    };
    match regions {
        Some(list) => {
            for &i in list {
                add(&data.regions[mesh.tables.region_keys[i as usize]]);
            }
        }
        None => data.regions.values().for_each(add),
    }
    kinds
}

/// Refuses a level with more areas than a region's `u16` kind can number.
fn check_area_count(level: &Level) -> Result<(), BakeError> {
    if level.areas.len() >= usize::from(u16::MAX) {
        return Err(BakeError::TooComplex {
            reason: format!(
                "it has {} areas, more than the {} area kinds a mesh numbers",
                level.areas.len(),
                u16::MAX - 1
            ),
        });
    }
    Ok(())
}

impl NavMesh {
    /// Bakes a level into a navigation mesh: the editor's baking step.
    ///
    /// The same level and config always give the same mesh, down to the bytes
    /// of the saved file (except the recorded bake time).
    ///
    /// # Errors
    /// [`BakeError::Level`] for an invalid level, [`BakeError::Config`] for
    /// an invalid config,
    /// [`BakeError::NothingWalkable`] when obstacles or the radius leave no
    /// walkable space.
    ///
    /// # Example
    /// ```
    /// use portalnav::{BakeConfig, Level, NavMesh};
    ///
    /// // a 30 x 20 field with a pond in the middle and a slow marsh strip
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[30,0],[30,20],[0,20]]],
    ///     "obstacles": [[[12,8],[18,8],[18,12],[12,12]]],
    ///     "areas": [{"kind": "marsh", "cost": 2.0, "polygon": [[0,16],[30,16],[30,20],[0,20]]}]
    /// }"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// mesh.validate()?;
    /// assert_eq!(mesh.stats().walkable_area, 30.0 * 20.0 - 6.0 * 4.0);
    /// assert_eq!(mesh.component_count(), 1);
    /// assert!(mesh.locate(glam::vec2(15.0, 10.0)).is_none(), "in the pond");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bake(level: &Level, config: &BakeConfig) -> Result<NavMesh, BakeError> {
        if config.tile_size.is_some() {
            return TileCache::new(level, config).map(TileCache::into_mesh);
        }
        let started = Instant::now();
        let mut lap = Instant::now();
        let mut stage_ms = [0.0; 4];
        let mut stage = |k: usize| {
            stage_ms[k] = lap.elapsed().as_secs_f64() * 1e3;
            lap = Instant::now();
        };
        let (radius, outline) = resolve_outline(level, config)?;
        stage(0);
        let tri = triangulate::triangulate(&outline)?;
        if tri.tris.is_empty() {
            return Err(BakeError::NothingWalkable { radius });
        }
        stage(1);
        let mut polygons = merge::merge(&tri);
        stage(2);

        let (areas, kind_of) = area_kinds(level);
        number_areas(&outline, &mut polygons, |level_area| kind_of[level_area]);
        in_curve_order(&tri.points, &mut polygons);
        let (mut data, linked) = assemble(
            &tri.points,
            &polygons,
            (areas, 0),
            &mut AssemblyScratch::default(),
        );
        stage(3);
        data.stats.stage_ms = stage_ms;
        data.stats.triangles = tri.tris.len() as u32;
        data.stats.dropped_constraints = tri.dropped;
        // from the triangulation's walls, not the regions, so validate()'s
        // area check compares the merge's output with its input
        data.stats.walkable_area = tri.walkable_area;
        data.snap_scale = outline.scale;
        finish((data, linked), level, config, (radius, started), None)
    }
}

/// A rebuild replacing a mesh (a runtime edit): the old mesh, and how to
/// tell which of its regions the new one kept.
struct Replacing<'a> {
    old: &'a NavMesh,
    succession: &'a dyn Fn(&NavMesh) -> Succession,
    /// Per tile: whether the rebuild assembled its regions again rather than
    /// copying them from `old` as they were. Empty where it copied nothing
    /// from `old` (`build_mesh` fills it from its reassembly).
    changed: &'a [bool],
}

/// The last steps of every bake: the level's name and nav points, the search
/// tables, the hierarchy when asked for, and the bake time. A rebuild that
/// replaces a mesh records what it kept of it (`NavMesh::succession`), and
/// the hierarchy takes the leg tables of the clusters it kept.
fn finish(
    (mut data, linked): (MeshData, Linked),
    level: &Level,
    config: &BakeConfig,
    (radius, started): (f32, Instant),
    replacing: Option<Replacing<'_>>,
) -> Result<NavMesh, BakeError> {
    data.name = level.name.clone();
    data.agent_radius = radius;
    data.max_radius = config.max_radius_for(level, radius)?;
    data.agents = level.agents.clone();
    data.nav_points = level.nav_points.clone();
    let changed = replacing.as_ref().map(|r| (r.old, r.changed));
    let changed = changed.filter(|(_, c)| !c.is_empty());
    let mut mesh = NavMesh::from_data_after(data, Some(linked), changed);
    // an edit leaves the all-pairs table to `TileCache::refresh_table`
    let table_now = replacing.is_none();
    let succession = replacing.map(|r| (r.old, (r.succession)(&mesh)));
    if config.corridors {
        // the old mesh's hierarchies, kept or dropped for their bytes: an
        // attempt takes leg tables from the one of its own aim (those
        // stopped before searching some have them for the others)
        let previous = |aim: u32| {
            let (old, kept) = succession.as_ref()?;
            let mut built = old.data.hierarchy.iter().chain(&old.unkept);
            let hierarchy = built
                .clone()
                .find(|h| h.stats.cluster_aim == aim)
                .or_else(|| built.next())?;
            Some(hierarchy::Previous {
                tables: &old.tables,
                hierarchy,
                regions: &kept.regions,
            })
        };
        // a level with nav points asked for their cached corridors: it keeps
        // them; any other keeps a hierarchy within a multiple of the bytes of
        // the rest of the file (measured, not written: no copy of the file
        // in memory)
        let asked = !level.nav_points.is_empty();
        let rest = crate::mesh::hierarchy::stored_size(&mesh.data) as f64;
        let bound = f64::from(config.max_hierarchy_ratio) * rest;
        // an attempt that stopped over the bound is never kept
        let within = |h: &crate::mesh::hierarchy::HierarchyData| {
            !h.unfinished && h.stats.bytes as f64 <= bound
        };
        // the first size whose hierarchy keeps within its budgets; each
        // attempt leaves the all-pairs table for later (`hierarchy::build`),
        // as only the one kept needs it
        let (mut kept, mut dropped) = (None, Vec::new());
        for aim in hierarchy::cluster_sizes(config.cluster_size, mesh.region_count()) {
            let sizes = (config.cluster_size, aim, config.wide_portal);
            // a level with nav points keeps one whatever its bytes: built whole
            let limit = (!asked).then_some(bound);
            match hierarchy::build(&mesh, &level.nav_points, sizes, previous(aim), limit) {
                Some(built) if within(&built.0) => {
                    kept = Some(built);
                    break;
                }
                Some(built) => dropped.push(built),
                None => {}
            }
        }
        // with nav points, the first one built whatever its bytes
        if kept.is_none() && asked && !dropped.is_empty() {
            kept = Some(dropped.remove(0));
        }
        match kept {
            Some((mut h, tables)) => {
                if table_now && h.stats.all_pairs_table {
                    let started = Instant::now();
                    h.compute_table(&tables);
                    h.stats.bake_ms += started.elapsed().as_secs_f64() * 1e3;
                }
                mesh.set_hierarchy_with(h, tables);
            }
            None => mesh.set_hierarchy(None),
        }
        // a tiled mesh keeps the ones over its byte bound aside for its
        // next edit
        if config.tile_size.is_some() {
            mesh.unkept = dropped.into_iter().map(|(h, _)| h).collect();
        }
    }
    mesh.succession = succession.map(|(_, kept)| kept);
    mesh.data.stats.bake_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(mesh)
}

/// Storage [`assemble`] can reuse: a rebuild that replaces a mesh (a
/// runtime edit) hands it the old mesh's per-region lists, so assembling
/// the new one allocates (and dropping the old one frees) almost nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct AssemblyScratch {
    /// A region's vertex and portal lists, emptied, ready to refill.
    spare: Vec<(Vec<Vec2>, Vec<Option<PortalId>>)>,
    /// Directed edges by their first point: those from point `a` are
    /// `edges[edge_start[a]..edge_start[a + 1]]`, as (second point,
    /// region, edge slot), in polygon order.
    edge_start: Vec<u32>,
    edges: Vec<(u32, u32, u32)>,
    /// The edge the other way round that pairs with each region's edges,
    /// ended by the count of edges in `twins.start` once complete.
    pub(crate) twins: EdgeTwins,
    /// Per edge of `twins`, the dense portal `link` made of it.
    edge_portal: Vec<u32>,
    /// Per edge of `twins`, its first corner: the regions' corners in one
    /// array, region `i`'s at `corners[twins.start[i]..twins.start[i + 1]]`,
    /// written as the regions are, so that `link` and the search tables read
    /// them in order instead of from each region's own list.
    pub(crate) corners: Vec<Vec2>,
}

/// An edge without a twin: a wall.
pub(crate) const NO_TWIN: (u32, u32) = EdgeTwins::WALL;

impl AssemblyScratch {
    /// Keeps `data`'s per-region lists for the next [`assemble`], at most
    /// one mesh's worth in all.
    fn recycle(&mut self, data: &mut MeshData) {
        let limit = data.regions.len();
        self.spare.extend(data.regions.drain().map(|r| {
            let (mut vertices, mut portals) = (r.vertices, r.portals);
            vertices.clear();
            portals.clear();
            (vertices, portals)
        }));
        self.spare.truncate(limit);
    }

    /// Keeps the storage of `replaced` (a mesh an edit replaced, held
    /// nowhere else) for the next [`assemble`]: its per-region lists, its
    /// edge pairs and its corners.
    pub(crate) fn take_storage(&mut self, replaced: &mut crate::NavMesh) {
        self.recycle(&mut replaced.data);
        self.twins = std::mem::take(&mut replaced.twins);
        self.corners = std::mem::take(&mut replaced.tables.corners);
    }

    /// How many regions' lists are kept for the next assembly.
    #[cfg(test)]
    pub(crate) fn spare_lists(&self) -> usize {
        self.spare.len()
    }

    /// Emptied vertex and portal lists for one more region.
    pub(crate) fn lists(&mut self) -> (Vec<Vec2>, Vec<Option<PortalId>>) {
        self.spare.pop().unwrap_or_default()
    }
}

/// Regions and portals from merged polygons, with components, their keys
/// handed out at `key_generation` ([`crate::mesh::keys`]).
fn assemble(
    points: &[glam::DVec2],
    polygons: &[merge::MergedPolygon],
    (areas, key_generation): (Vec<AreaKind>, u32),
    scratch: &mut AssemblyScratch,
) -> (MeshData, Linked) {
    // the directed edges, grouped by first point (a counting sort)
    let (edge_start, edges) = (&mut scratch.edge_start, &mut scratch.edges);
    edge_start.clear();
    edge_start.resize(points.len() + 2, 0);
    for poly in polygons {
        for &a in &poly.vertices {
            edge_start[a as usize + 2] += 1;
        }
    }
    for a in 2..edge_start.len() {
        edge_start[a] += edge_start[a - 1];
    }
    edges.clear();
    edges.resize(edge_start[points.len() + 1] as usize, (0, 0, 0));
    for (i, poly) in polygons.iter().enumerate() {
        let n = poly.vertices.len();
        for k in 0..n {
            let (a, b) = (poly.vertices[k], poly.vertices[(k + 1) % n]);
            let at = &mut edge_start[a as usize + 1];
            edges[*at as usize] = (b, i as u32, k as u32);
            *at += 1;
        }
    }
    // now edges from point `a` are edges[edge_start[a]..edge_start[a + 1]];
    // an edge a -> b pairs with the edge b -> a (the last listed, should two
    // polygons share it)
    let twins = &mut scratch.twins;
    twins.clear();
    for poly in polygons {
        twins.start.push(twins.list.len() as u32);
        let n = poly.vertices.len();
        for k in 0..n {
            let (a, b) = (poly.vertices[k], poly.vertices[(k + 1) % n]);
            let from_b =
                &edges[edge_start[b as usize] as usize..edge_start[b as usize + 1] as usize];
            let twin = from_b.iter().rev().find(|e| e.0 == a);
            twins
                .list
                .push(twin.map_or(NO_TWIN, |&(_, j, slot)| (j, slot)));
        }
    }
    twins.start.push(twins.list.len() as u32);
    let mut regions: SlotMap<RegionId, Region> = SlotMap::with_capacity_and_key(polygons.len());
    scratch.corners.clear();
    for (i, poly) in polygons.iter().enumerate() {
        let (mut vertices, portals) = scratch.lists();
        vertices.extend(poly.vertices.iter().map(|&v| points[v as usize].as_vec2()));
        scratch.corners.extend_from_slice(&vertices);
        regions.insert(Region {
            vertices,
            portals,
            area: poly.area,
            component: 0,
            key_generation: 0,
            index: i as u32,
        });
    }
    link(regions, (areas, key_generation), scratch)
}

/// The mesh of `regions` (inserted in index order into an empty map, their
/// portal lists empty) with the pairs of edges in `scratch.twins` made
/// portals, numbered in the order of their first region and its edges, and
/// the components numbered by their first region; its keys handed out, and
/// stored, at `key_generation` ([`crate::mesh::keys`]).
pub(crate) fn link(
    mut regions: SlotMap<RegionId, Region>,
    (areas, key_generation): (Vec<AreaKind>, u32),
    scratch: &mut AssemblyScratch,
) -> (MeshData, Linked) {
    let keys: Vec<RegionId> = regions.keys().collect();
    for region in regions.values_mut() {
        region.portals.resize(region.vertices.len(), None);
        region.key_generation = key_generation;
    }
    let handed_out = |k: RegionId| keys::shifted(k, key_generation);
    let mut portals: SlotMap<PortalId, Portal> =
        SlotMap::with_capacity_and_key(scratch.twins.list.len() / 2);
    // components: union-find over the portals, numbered by first region
    let mut uf = UnionFind::<u32>::new(keys.len());
    // the dense links: per region the portals of its edges in edge order,
    // an edge paired with an earlier region taking the portal numbered
    // there (`edge_portal`, written only for those)
    let twins = &scratch.twins;
    let corners = std::mem::take(&mut scratch.corners);
    debug_assert_eq!(corners.len(), twins.list.len(), "a corner per edge");
    let edge_portal = &mut scratch.edge_portal;
    edge_portal.clear();
    edge_portal.resize(twins.list.len(), u32::MAX);
    let mut portal_regions = Vec::with_capacity(twins.list.len() / 2);
    let mut region_start = Vec::with_capacity(keys.len() + 1);
    let mut region_portals = Vec::with_capacity(twins.list.len());
    for (i, &key) in keys.iter().enumerate() {
        region_start.push(region_portals.len() as u32);
        for (k, &(j, slot)) in twins.of(i as u32).iter().enumerate() {
            // each pair once, from its first region; `NO_TWIN` is a wall
            if j == NO_TWIN.0 {
                continue;
            }
            if j as usize <= i {
                let earlier = edge_portal[(twins.start[i] + k as u32) as usize];
                if earlier != u32::MAX {
                    region_portals.push(earlier);
                }
                continue;
            }
            let index = portals.len() as u32;
            region_portals.push(index);
            edge_portal[(twins.start[j as usize] + slot) as usize] = index;
            portal_regions.push([i as u32, j]);
            let v = &corners[twins.start[i] as usize..twins.start[i + 1] as usize];
            let n = v.len();
            // region i has the edge a -> b counter-clockwise: crossing from i
            // into j, b is on the left hand and a on the right
            let pid = portals.insert(Portal {
                regions: [handed_out(key), handed_out(keys[j as usize])],
                left: v[(k + 1) % n],
                right: v[k],
                key_generation,
                index,
            });
            let pid = keys::shifted(pid, key_generation);
            regions[key].portals[k] = Some(pid);
            regions[keys[j as usize]].portals[slot as usize] = Some(pid);
            uf.union(i as u32, j);
        }
    }
    region_start.push(region_portals.len() as u32);
    let mut component_of_root = vec![u32::MAX; keys.len()];
    let mut components = 0;
    for (i, key) in keys.iter().enumerate() {
        let c = &mut component_of_root[uf.find(i as u32) as usize];
        if *c == u32::MAX {
            *c = components;
            components += 1;
        }
        regions[*key].component = *c;
    }
    let linked = Linked {
        region_start,
        region_portals,
        portal_regions,
        tile_start: Vec::new(),
        corner_start: twins.start.clone(),
        corners,
    };
    let stats = BakeStats {
        regions: regions.len() as u32,
        portals: portals.len() as u32,
        components,
        ..BakeStats::default()
    };
    let data = MeshData {
        name: String::new(),
        agent_radius: 0.0,
        max_radius: 0.0,
        agents: Vec::new(),
        snap_scale: 1.0,
        tiling: None,
        regions: keys::Keyed::at_generation(regions, key_generation),
        portals: keys::Keyed::at_generation(portals, key_generation),
        areas,
        nav_points: Vec::new(),
        stats,
        hierarchy: None,
    };
    (data, linked)
}

#[cfg(test)]
mod tests {
    use glam::DVec2;

    use crate::geometry::morton_key;
    use crate::{BakeConfig, NavMesh};

    /// The share of a mesh's consecutive regions whose centroids are in
    /// Morton order over the box of its vertices.
    fn share_in_curve_order(mesh: &NavMesh) -> f64 {
        let t = &mesh.tables;
        let (lo, hi) = (t.bounds.min.as_dvec2(), t.bounds.max.as_dvec2());
        let size = (hi - lo).max(DVec2::splat(f64::MIN_POSITIVE));
        let key = |r: u32| {
            let polygon = t.polygon(r);
            let sum: DVec2 = polygon.iter().map(|v| v.as_dvec2()).sum();
            morton_key(sum / polygon.len() as f64, lo, size)
        };
        let n = mesh.region_count() as u32;
        let ordered = (1..n).filter(|&r| key(r - 1) <= key(r)).count();
        ordered as f64 / f64::from(n - 1)
    }

    /// A mesh baked whole lists its regions along a Morton curve, and so
    /// does the mesh derived from it for a wider agent (the keys here are
    /// taken from the regions' f32 corners, so a few neighbours may swap);
    /// a tiled bake keeps them tile by tile.
    #[test]
    fn regions_baked_whole_follow_a_morton_curve() {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        let config = BakeConfig {
            max_radius: Some(1.0),
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        let wider = mesh.for_radius(1.0).unwrap();
        for m in [&mesh, &*wider] {
            let share = share_in_curve_order(m);
            assert!(share > 0.99, "{share}");
        }
        let tiled = BakeConfig {
            tile_size: Some(64.0),
            ..config
        };
        let tiled = NavMesh::bake(&level, &tiled).unwrap();
        let share = share_in_curve_order(&tiled);
        assert!(share < 0.9, "tile by tile: {share}");
    }
}
