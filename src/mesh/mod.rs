//! The baked data: convex regions linked by portals, their connected
//! components and a point locator. Built by [`crate::bake`], read by
//! [`crate::query`]; immutable, `Send + Sync`.

pub(crate) mod hierarchy;
pub(crate) mod keys;
pub(crate) mod locator;
mod validate;

pub use hierarchy::{HierarchyStats, NavNode, NavPointKind};
pub use validate::{HierarchyError, ValidationError};

use glam::Vec2;
use serde::{Deserialize, Serialize};
use slotmap::new_key_type;

use crate::geometry::Aabb;
use crate::level::{AgentClass, NavPoint};
pub(crate) use locator::Locator;

new_key_type! {
    /// Key of a [`Region`] in the mesh that handed it out. A mesh a runtime
    /// edit makes (`TileCache`) hands out new keys for all its regions, kept
    /// or new, and a key of another mesh of its lineage is stale there:
    /// [`NavMesh::region`] answers `None` rather than another region, and
    /// [`NavMesh::region_after_edit`] gives a kept region's new key.
    pub struct RegionId;
    /// Key of a [`Portal`] in the mesh that handed it out; stale after a
    /// runtime edit as a [`RegionId`] is.
    pub struct PortalId;
}

/// A convex, counter-clockwise polygon of walkable space with one movement cost.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Region {
    pub(crate) vertices: Vec<Vec2>,
    /// Per edge `i` (from `vertices[i]` to `vertices[i + 1]`): the portal across it, if any.
    pub(crate) portals: Vec<Option<PortalId>>,
    pub(crate) area: u16,
    pub(crate) component: u32,
    pub(crate) index: u32,
    /// The key generation its portals' keys are at ([`keys`]).
    #[serde(skip)]
    pub(crate) key_generation: u32,
}

/// As the derived form would write it, its portals' keys at key generation
/// 0, the baked file's (see `mesh/keys.rs`).
impl Serialize for Region {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let g = self.key_generation;
        let portals = Unshifted(&self.portals, g);
        let mut st = s.serialize_struct("Region", 5)?;
        st.serialize_field("vertices", &self.vertices)?;
        st.serialize_field("portals", &portals)?;
        st.serialize_field("area", &self.area)?;
        st.serialize_field("component", &self.component)?;
        st.serialize_field("index", &self.index)?;
        st.end()
    }
}

/// Optional keys written at generation 0 (see [`keys`]).
struct Unshifted<'a, K>(&'a [Option<K>], u32);

impl<K: slotmap::Key + Serialize> Serialize for Unshifted<'_, K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let g = self.1;
        s.collect_seq(self.0.iter().map(|k| k.map(|k| keys::unshifted(k, g))))
    }
}

impl Region {
    /// Corners, counter-clockwise.
    #[must_use]
    pub fn vertices(&self) -> &[Vec2] {
        &self.vertices
    }

    /// Per edge `i` (from corner `i` to corner `i + 1`), the portal across it;
    /// `None` for walls.
    #[must_use]
    pub fn edge_portals(&self) -> &[Option<PortalId>] {
        &self.portals
    }

    /// Index into [`NavMesh::areas`] of this region's area kind (0 is plain ground).
    #[must_use]
    pub fn area(&self) -> u16 {
        self.area
    }

    /// Connected component; regions of different components cannot reach each other.
    #[must_use]
    pub fn component(&self) -> u32 {
        self.component
    }

    /// Dense index of the region, `0..region_count()`.
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Area in square world units.
    #[must_use]
    pub fn area_size(&self) -> f64 {
        crate::geometry::signed_area(&self.vertices)
    }

    /// Mean of the corners.
    #[must_use]
    pub fn centroid(&self) -> Vec2 {
        self.vertices.iter().copied().sum::<Vec2>() / self.vertices.len() as f32
    }
}

/// The shared edge of two regions.
///
/// Seen from `regions()[0]` looking into `regions()[1]`, `left()` is on the
/// left hand and `right()` on the right.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Portal {
    pub(crate) regions: [RegionId; 2],
    pub(crate) left: Vec2,
    pub(crate) right: Vec2,
    pub(crate) index: u32,
    /// The key generation its regions' keys are at ([`keys`]).
    #[serde(skip)]
    pub(crate) key_generation: u32,
}

/// As the derived form would write it, its regions' keys at key generation
/// 0, the baked file's (see `mesh/keys.rs`).
impl Serialize for Portal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let g = self.key_generation;
        let regions = self.regions.map(|k| keys::unshifted(k, g));
        let mut st = s.serialize_struct("Portal", 4)?;
        st.serialize_field("regions", &regions)?;
        st.serialize_field("left", &self.left)?;
        st.serialize_field("right", &self.right)?;
        st.serialize_field("index", &self.index)?;
        st.end()
    }
}

impl Portal {
    /// The two regions; crossing goes from the first to the second for `left`/`right`.
    #[must_use]
    pub fn regions(&self) -> [RegionId; 2] {
        self.regions
    }

    /// Left end seen crossing from `regions()[0]` to `regions()[1]`.
    #[must_use]
    pub fn left(&self) -> Vec2 {
        self.left
    }

    /// Right end seen crossing from `regions()[0]` to `regions()[1]`.
    #[must_use]
    pub fn right(&self) -> Vec2 {
        self.right
    }

    /// Length of the shared edge, world units.
    #[must_use]
    pub fn width(&self) -> f32 {
        self.left.distance(self.right)
    }

    /// Dense index of the portal, `0..portal_count()`.
    #[must_use]
    pub fn index(&self) -> u32 {
        self.index
    }
}

/// An area kind with its cost multiplier (index 0 is plain ground, cost 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AreaKind {
    /// Name from the level file.
    pub kind: String,
    /// Cost multiplier per world unit walked (> 0).
    pub cost: f32,
}

/// Figures about one bake, kept in the baked file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BakeStats {
    /// Walkable triangles of the constrained Delaunay triangulation.
    pub triangles: u32,
    /// Convex regions after merging.
    pub regions: u32,
    /// Portals between regions.
    pub portals: u32,
    /// Connected components.
    pub components: u32,
    /// Constraint edges the triangulation had to drop (crossing inputs).
    pub dropped_constraints: u32,
    /// Walkable area in square world units.
    pub walkable_area: f64,
    /// Wall-clock milliseconds of the bake; not saved, so baked files stay byte-identical.
    #[serde(skip)]
    pub bake_ms: f64,
    /// Milliseconds per stage: booleans, triangulation, merge, portals and
    /// components (not saved).
    #[serde(skip)]
    pub stage_ms: [f64; 4],
}

/// What the baked file stores: the regions, portals and everything a query needs
/// that cannot be cheaply derived.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MeshData {
    pub name: String,
    pub agent_radius: f32,
    /// Largest radius [`NavMesh::for_radius`] serves (at least `agent_radius`).
    pub max_radius: f32,
    /// The level's agent classes, for [`NavMesh::for_agent`].
    pub agents: Vec<AgentClass>,
    /// Steps per world unit of the grid the bake snapped every point to (a
    /// power of two): [`NavMesh::for_radius`] erodes on the same grid.
    pub snap_scale: f64,
    /// The tiles of a tiled bake (`BakeConfig::tile_size`): regions stop at
    /// their borders, and [`NavMesh::for_radius`] derives tile by tile.
    pub tiling: Option<TileGrid>,
    pub regions: keys::Keyed<RegionId, Region>,
    pub portals: keys::Keyed<PortalId, Portal>,
    pub areas: Vec<AreaKind>,
    pub nav_points: Vec<NavPoint>,
    pub stats: BakeStats,
    /// The L2 nav-point graph and its cached corridors, when baked with them.
    pub hierarchy: Option<hierarchy::HierarchyData>,
}

impl MeshData {
    /// The key generation its keys are handed out at ([`keys`]).
    pub(crate) fn key_generation(&self) -> u32 {
        self.regions.generation()
    }

    /// The dense index of the region with this key, `None` for a stale or
    /// foreign key.
    pub(crate) fn dense_index(&self, key: RegionId) -> Option<u32> {
        self.regions.get(key).map(|r| r.index)
    }

    /// What deriving the tables relies on, checked before they are derived
    /// from data read from a file: dense indices in order, at least three
    /// finite corners per region and an edge slot for each.
    /// Everything else is [`NavMesh::validate`]'s job.
    pub(crate) fn check_before_tables(&self) -> Result<(), ValidationError> {
        for (i, r) in self.regions.values().enumerate() {
            if r.index as usize != i {
                return Err(validate::region_error(
                    i,
                    format!("carries index {}", r.index),
                ));
            }
            // the tables and the locator take a region's box and edges
            let n = r.vertices.len();
            if n < 3 || r.portals.len() != n {
                return Err(validate::region_error(
                    i,
                    format!("has {n} vertices and {} edge slots", r.portals.len()),
                ));
            }
            if r.vertices.iter().any(|v| !v.is_finite()) {
                return Err(validate::region_error(i, "has a non-finite vertex"));
            }
        }
        for (i, p) in self.portals.values().enumerate() {
            if p.index as usize != i {
                return Err(validate::portal_error(
                    i,
                    format!("carries index {}", p.index),
                ));
            }
        }
        Ok(())
    }
}

/// Dense tables derived from [`MeshData`] when a mesh is built or loaded: the
/// search reads these, never the slot maps.
#[derive(Debug, Clone)]
pub(crate) struct Tables {
    pub region_keys: Vec<RegionId>,
    /// On a mesh a tile cache built: per tile, its first dense region (a
    /// tile's regions are consecutive, in tile order), and the count at the
    /// end; `[0, n]` on other meshes (one "tile"). The point locator has a
    /// part per tile, addressing its regions from the tile's first.
    pub tile_start: Vec<u32>,
    /// CSR: portals of region r are `region_portals[region_start[r]..region_start[r+1]]`.
    pub region_start: Vec<u32>,
    pub region_portals: Vec<u32>,
    /// Dense region indices of each portal, as in [`Portal::regions`].
    pub portal_regions: Vec<[u32; 2]>,
    /// `[left, right]` of each portal, as in [`Portal::left`].
    pub portal_ends: Vec<[Vec2; 2]>,
    pub region_cost: Vec<f32>,
    pub region_area: Vec<u16>,
    pub region_component: Vec<u32>,
    /// Per region: `u32::MAX` for regions on a cycle of the region graph (its
    /// 2-core), otherwise the core region its dead-end tree hangs from (or the
    /// tree's own root when a component has no cycle). A search never needs
    /// to enter a tree that does not hold its goal.
    pub region_tree: Vec<u32>,
    pub min_cost: f32,
    pub bounds: Aabb,
    /// Every region's polygon, packed in dense order: region `r`'s vertices
    /// are `corners[corner_start[r]..corner_start[r + 1]]`. Point location,
    /// nearest points and raycasts read them here rather than through the
    /// slot map and each region's own vertex list (two dependent loads fewer
    /// per region).
    pub corner_start: Vec<u32>,
    pub corners: Vec<Vec2>,
}

/// A baked navigation mesh: convex regions linked by portals.
///
/// Bake it once with [`NavMesh::bake`] (or load a baked file with
/// [`NavMesh::load`]) and share it between threads; each thread queries it
/// through its own [`crate::NavQuery`].
#[derive(Debug, Clone)]
pub struct NavMesh {
    pub(crate) data: MeshData,
    pub(crate) tables: Tables,
    pub(crate) locator: Locator,
    pub(crate) hier: hierarchy::HierarchyTables,
    /// Told apart from every other mesh built in this process (clones share
    /// it): what a [`crate::PathFollower`] checks to notice that the mesh it
    /// holds region indices of was replaced, e.g. by a runtime edit. Not
    /// saved, so it does not affect the baked bytes.
    pub(crate) serial: u64,
    /// Set on a mesh that replaced another through a runtime edit: which of
    /// the older mesh's regions this one kept unchanged, so a follower can
    /// keep its corridor without walking its path again.
    pub(crate) succession: Option<Succession>,
    /// On a tiled mesh: the hierarchies its bake or last edit built and
    /// dropped for going over the byte bound (one per cluster aim tried),
    /// kept only so the next runtime edit can take the leg tables of the
    /// clusters it leaves alone (as it does from a hierarchy the mesh kept);
    /// most stopped once their leg tables were over the bound
    /// (`HierarchyData::unfinished`). Never used by queries, never saved.
    pub(crate) unkept: Vec<hierarchy::HierarchyData>,
    /// Meshes for wider agents derived from this one ([`NavMesh::for_radius`]).
    pub(crate) sized: SizedCache,
    /// On a tiled mesh: its regions' edges paired as its assembly paired
    /// them, kept so the next runtime edit copies the regions it keeps
    /// without looking their portals up. Empty on other meshes; never saved.
    pub(crate) twins: EdgeTwins,
}

/// Per region and edge, the edge of the neighbouring region it pairs with:
/// dense region `i`'s edge `k` (from its vertex `k` to the next) is
/// `list[start[i] + k]`, as (dense region, edge slot), or [`EdgeTwins::WALL`].
#[derive(Debug, Clone, Default)]
pub(crate) struct EdgeTwins {
    pub(crate) start: Vec<u32>,
    pub(crate) list: Vec<(u32, u32)>,
}

impl EdgeTwins {
    /// An edge without a twin: a wall.
    pub(crate) const WALL: (u32, u32) = (u32::MAX, u32::MAX);

    pub(crate) fn clear(&mut self) {
        self.start.clear();
        self.list.clear();
    }

    /// Whether these are the pairs of a mesh of `regions` regions.
    pub(crate) fn covers(&self, regions: usize) -> bool {
        self.start.len() == regions + 1
    }

    /// Dense region `i`'s twins, one per edge.
    #[inline]
    pub(crate) fn of(&self, i: u32) -> &[(u32, u32)] {
        let i = i as usize;
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Square tiles on a grid anchored at the origin: `count` tiles along x
/// and y from tile coordinates `first` (multiples of `size`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct TileGrid {
    pub size: f64,
    pub first: [i64; 2],
    pub count: [u32; 2],
}

/// A mesh for one agent radius ([`NavMesh::for_radius`]): the mesh asked,
/// when it was baked for that radius, or one derived from it. It derefs to
/// the [`NavMesh`] to query.
#[derive(Debug, Clone)]
pub enum SizedMesh<'a> {
    /// The mesh itself.
    Baked(&'a NavMesh),
    /// A mesh derived from it for a larger radius, shared with its cache.
    Derived(std::sync::Arc<NavMesh>),
}

impl std::ops::Deref for SizedMesh<'_> {
    type Target = NavMesh;

    fn deref(&self) -> &NavMesh {
        match self {
            SizedMesh::Baked(mesh) => mesh,
            SizedMesh::Derived(mesh) => mesh,
        }
    }
}

/// The meshes [`NavMesh::for_radius`] derived, by radius (its bits), oldest
/// first. Each is a slot filled once: the list is locked only to find or
/// add a slot, so deriving one radius holds back only callers of that
/// radius. A slot holds `None` when its derivation failed. A clone of a
/// mesh starts with none: they are derived again on demand rather than
/// shared between meshes that may be edited apart.
#[derive(Debug, Default)]
pub(crate) struct SizedCache(pub std::sync::Mutex<Vec<(u32, SizedSlot)>>);

/// A radius's place in a [`SizedCache`].
pub(crate) type SizedSlot = std::sync::Arc<std::sync::OnceLock<Option<Sized>>>;

/// One derived mesh, and for a tiled mesh its tiles, which the next edit
/// derives again only where it can change them.
#[derive(Debug, Clone)]
pub(crate) struct Sized {
    pub mesh: std::sync::Arc<NavMesh>,
    pub tiles: Option<std::sync::Arc<Vec<crate::bake::TileMesh>>>,
}

impl Clone for SizedCache {
    fn clone(&self) -> Self {
        SizedCache::default()
    }
}

/// How a mesh took over from the one an edit replaced
/// ([`crate::TileCache::apply`]).
#[derive(Debug, Clone)]
pub(crate) struct Succession {
    /// [`NavMesh::serial`] of the mesh before the edit.
    pub from: u64,
    /// Per dense region of the mesh before: the dense index of the same
    /// region here (the same polygon, area and cost, so the same portal to
    /// any other region kept), or `u32::MAX` where the edit changed it.
    pub regions: Vec<u32>,
    /// Per dense region of the mesh before: its key there (ascending: a
    /// mesh's slot map holds its regions in dense order).
    pub keys: Vec<RegionId>,
}

/// The next [`NavMesh::serial`].
fn next_serial() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl NavMesh {
    /// Wraps baked data, deriving the search tables and the point locator.
    pub(crate) fn from_data(data: MeshData) -> NavMesh {
        NavMesh::from_data_after(data, None, None)
    }

    /// [`NavMesh::from_data`], with the dense links of the assembly that
    /// made `data` when there was one, for a mesh a runtime edit made from
    /// `old` whose tiles flagged `changed` it assembled again (the others'
    /// regions copied as they were): the point locator shares the old one's
    /// parts of the tiles kept ([`Locator::rebuilt`]).
    pub(crate) fn from_data_after(
        mut data: MeshData,
        linked: Option<Linked>,
        old: Option<(&NavMesh, &[bool])>,
    ) -> NavMesh {
        let tables = Tables::build(&data, linked);
        let old = old.map(|(old, changed)| (&old.locator, changed));
        let locator = Locator::rebuilt(old, &tables, data.tiling.as_ref());
        let hierarchy = data.hierarchy.take();
        let mut mesh = NavMesh {
            data,
            tables,
            locator,
            hier: hierarchy::HierarchyTables::default(),
            serial: 0,
            succession: None,
            sized: SizedCache::default(),
            unkept: Vec::new(),
            twins: EdgeTwins::default(),
        };
        mesh.set_hierarchy(hierarchy);
        mesh
    }

    /// Replaces the hierarchy (the bake's last step, or loading) and derives its tables.
    pub(crate) fn set_hierarchy(&mut self, h: Option<hierarchy::HierarchyData>) {
        self.hier = h.as_ref().map_or_else(Default::default, |h| {
            let mut tables = hierarchy::HierarchyTables::build(
                h,
                &self.tables.portal_regions,
                self.data.nav_points.len(),
            );
            tables.set_open_zones(h, &self.tables);
            tables
        });
        self.data.hierarchy = h;
        self.serial = next_serial();
    }

    /// Sets the hierarchy with the tables derived from it (the bake built
    /// them for its own searches): [`Self::set_hierarchy`] without
    /// deriving them again.
    pub(crate) fn set_hierarchy_with(
        &mut self,
        h: hierarchy::HierarchyData,
        mut tables: hierarchy::HierarchyTables,
    ) {
        tables.set_open_zones(&h, &self.tables);
        self.hier = tables;
        self.data.hierarchy = Some(h);
        self.serial = next_serial();
    }

    /// Figures about the nav-point hierarchy, if the mesh was baked with one.
    #[must_use]
    pub fn hierarchy_stats(&self) -> Option<&HierarchyStats> {
        self.data.hierarchy.as_ref().map(|h| &h.stats)
    }

    /// Bytes the hierarchy takes in the baked file ([`NavMesh::to_bytes`]),
    /// if the mesh has one: fewer than [`HierarchyStats::bytes`], the size
    /// the byte bound measures, which counts each leg cost at four bytes.
    /// Measured by encoding it, so not for a frame's time.
    #[must_use]
    pub fn hierarchy_file_bytes(&self) -> Option<u64> {
        self.data.hierarchy.as_ref().map(hierarchy::stored_size)
    }

    /// Nodes of the L2 graph (boundary portals and designer nav points);
    /// empty without a hierarchy.
    #[must_use]
    pub fn nav_nodes(&self) -> &[NavNode] {
        self.data.hierarchy.as_ref().map_or(&[], |h| &h.nodes)
    }

    /// Cluster of a region, if the mesh has a hierarchy.
    #[must_use]
    pub fn region_cluster(&self, id: RegionId) -> Option<u32> {
        let h = self.data.hierarchy.as_ref()?;
        let r = self.region(id)?;
        h.region_cluster.get(r.index as usize).copied()
    }

    /// The L2 graph as a petgraph graph: one node per nav node (weight: its
    /// index in [`NavMesh::nav_nodes`]), one edge per cached corridor (weight:
    /// its cost). Empty without a hierarchy.
    #[must_use]
    pub fn nav_graph(&self) -> petgraph::graph::UnGraph<u32, f32> {
        let mut g = petgraph::graph::UnGraph::default();
        if let Some(h) = &self.data.hierarchy {
            for i in 0..h.nodes.len() {
                g.add_node(i as u32);
            }
            for e in &h.corridors {
                g.add_edge(
                    petgraph::graph::NodeIndex::new(e.ends[0] as usize),
                    petgraph::graph::NodeIndex::new(e.ends[1] as usize),
                    e.cost,
                );
            }
        }
        g
    }

    /// Name of the level it was baked from.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.data.name
    }

    /// Agent radius it was baked for, world units.
    #[must_use]
    pub fn agent_radius(&self) -> f32 {
        self.data.agent_radius
    }

    /// Largest agent radius [`NavMesh::for_radius`] serves from this mesh,
    /// world units ([`crate::BakeConfig::max_radius`]).
    #[must_use]
    pub fn max_radius(&self) -> f32 {
        self.data.max_radius
    }

    /// The agent classes of the level it was baked from, for
    /// [`NavMesh::for_agent`].
    #[must_use]
    pub fn agents(&self) -> &[AgentClass] {
        &self.data.agents
    }

    /// Number of regions.
    #[must_use]
    pub fn region_count(&self) -> usize {
        self.data.regions.len()
    }

    /// Number of portals.
    #[must_use]
    pub fn portal_count(&self) -> usize {
        self.data.portals.len()
    }

    /// The region with this key, or `None` for a stale or foreign key.
    #[must_use]
    pub fn region(&self, id: RegionId) -> Option<&Region> {
        self.data.regions.get(id)
    }

    /// On a mesh a runtime edit made ([`crate::TileCache`]): the key here of
    /// the region that `key` named in the mesh the edit replaced, if the
    /// edit left that region as it was; `None` if the edit removed or
    /// changed it (or `key` is not a key of that mesh, or this mesh was not
    /// made by an edit). Every key of the replaced mesh is stale here
    /// ([`NavMesh::region`] answers `None`): this is how a game carries the
    /// regions it keeps ids of through an edit.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, TileCache};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[64,0],[64,64],[0,64]]]}"#)?;
    /// let config = BakeConfig { tile_size: Some(16.0), ..BakeConfig::default() };
    /// let mut cache = TileCache::new(&level, &config)?;
    /// let (far, near) = (vec2(60., 60.), vec2(6., 6.));
    /// let (far_key, near_key) = (cache.mesh().locate(far).unwrap(), cache.mesh().locate(near).unwrap());
    /// cache.add_obstacle(&[vec2(4., 4.), vec2(8., 4.), vec2(8., 8.), vec2(4., 8.)])?;
    /// let mesh = cache.mesh();
    /// assert!(mesh.region(far_key).is_none(), "stale after the edit");
    /// assert_eq!(mesh.region_after_edit(far_key), mesh.locate(far), "left alone");
    /// assert_eq!(mesh.region_after_edit(near_key), None, "built over");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn region_after_edit(&self, key: RegionId) -> Option<RegionId> {
        let s = self.succession.as_ref()?;
        let slot = |k: &RegionId| slotmap::Key::data(k).as_ffi() & 0xffff_ffff;
        let old = s.keys.binary_search_by_key(&slot(&key), slot).ok()?;
        if s.keys[old] != key {
            return None;
        }
        let new = *s.regions.get(old)?;
        self.tables.region_keys.get(new as usize).copied()
    }

    /// The portal with this key, or `None` for a stale or foreign key.
    #[must_use]
    pub fn portal(&self, id: PortalId) -> Option<&Portal> {
        self.data.portals.get(id)
    }

    /// All regions with their keys, in dense index order.
    pub fn regions(&self) -> impl ExactSizeIterator<Item = (RegionId, &Region)> + '_ {
        self.data.regions.iter()
    }

    /// All portals with their keys, in dense index order.
    pub fn portals(&self) -> impl ExactSizeIterator<Item = (PortalId, &Portal)> + '_ {
        self.data.portals.iter()
    }

    /// Key of the region with dense index `index`.
    #[must_use]
    pub fn region_key(&self, index: u32) -> Option<RegionId> {
        self.tables.region_keys.get(index as usize).copied()
    }

    /// Area kinds; [`Region::area`] indexes this list.
    #[must_use]
    pub fn areas(&self) -> &[AreaKind] {
        &self.data.areas
    }

    /// Cost multiplier of a region (its area kind's cost).
    #[must_use]
    pub fn region_cost(&self, id: RegionId) -> Option<f32> {
        self.region(id)
            .map(|r| self.tables.region_cost[r.index as usize])
    }

    /// Designer nav points carried over from the level.
    #[must_use]
    pub fn nav_points(&self) -> &[NavPoint] {
        &self.data.nav_points
    }

    /// Figures from the bake.
    #[must_use]
    pub fn stats(&self) -> &BakeStats {
        &self.data.stats
    }

    /// Number of connected components.
    #[must_use]
    pub fn component_count(&self) -> u32 {
        self.data.stats.components
    }

    /// Bounding box of all regions.
    #[must_use]
    pub fn bounds(&self) -> Aabb {
        self.tables.bounds
    }

    /// The region containing `p` (on an edge: one of the regions sharing it),
    /// found through a uniform grid over region bounds in near-constant time.
    #[must_use]
    pub fn locate(&self, p: Vec2) -> Option<RegionId> {
        if !p.is_finite() {
            return None;
        }
        self.locator
            .locate(&self.tables, p)
            .map(|r| self.tables.region_keys[r as usize])
    }

    /// The region graph as a petgraph graph: one node per region (weight: its
    /// key), one edge per portal (weight: its key). Used by tools and test oracles.
    #[must_use]
    pub fn region_graph(&self) -> petgraph::graph::UnGraph<RegionId, PortalId> {
        let mut g =
            petgraph::graph::UnGraph::with_capacity(self.region_count(), self.portal_count());
        for (key, _) in self.regions() {
            g.add_node(key);
        }
        for (key, p) in self.portals() {
            let [a, b] = self.tables.portal_regions[p.index as usize];
            g.add_edge(
                petgraph::graph::NodeIndex::new(a as usize),
                petgraph::graph::NodeIndex::new(b as usize),
                key,
            );
        }
        g
    }
}

/// [`Tables::entered`] over the dense portal sides alone (what a loaded
/// hierarchy has before the tables exist).
#[inline]
pub(crate) fn entered(portal_regions: &[[u32; 2]], crossing: u32) -> u32 {
    let [a, b] = portal_regions[(crossing / 2) as usize];
    if crossing % 2 == 0 {
        b
    } else {
        a
    }
}

/// [`Tables::crossing_out_of`] over the dense portal sides alone.
#[inline]
pub(crate) fn crossing_out_of(
    portal_regions: &[[u32; 2]],
    portal: u32,
    region: u32,
) -> Option<(u32, u32)> {
    let [a, b] = *portal_regions.get(portal as usize)?;
    if a == region {
        Some((2 * portal, b))
    } else if b == region {
        Some((2 * portal + 1, a))
    } else {
        None
    }
}

/// The dense links of a mesh as the assembly that numbered its portals
/// made them (`bake::link`), handed to [`Tables::build`] so it need not
/// look them up by key again.
#[derive(Debug, Clone, Default)]
pub(crate) struct Linked {
    /// Per region, its portals in the order of its edges:
    /// `region_portals[region_start[i]..region_start[i + 1]]`.
    pub(crate) region_start: Vec<u32>,
    pub(crate) region_portals: Vec<u32>,
    /// Per portal, its two regions as its `regions` keys name them.
    pub(crate) portal_regions: Vec<[u32; 2]>,
    /// [`Tables::tile_start`], when the regions were assembled by tile
    /// (empty otherwise).
    pub(crate) tile_start: Vec<u32>,
    /// [`Tables::corner_start`] and [`Tables::corners`]: the regions'
    /// polygons in one array, as the assembly wrote them.
    pub(crate) corner_start: Vec<u32>,
    pub(crate) corners: Vec<Vec2>,
}

impl Linked {
    /// The links of `data` looked up by key, and its polygons gathered (a
    /// mesh read from a file).
    fn looked_up(data: &MeshData) -> Linked {
        let mut region_start = Vec::with_capacity(data.regions.len() + 1);
        let mut region_portals = Vec::with_capacity(data.portals.len() * 2);
        for region in data.regions.values() {
            region_start.push(region_portals.len() as u32);
            let portals = region.portals.iter().flatten();
            region_portals.extend(portals.filter_map(|&p| data.portals.get(p).map(|p| p.index)));
        }
        region_start.push(region_portals.len() as u32);
        let index_of = |k: RegionId| data.dense_index(k).unwrap_or(u32::MAX);
        let portal_regions = data
            .portals
            .values()
            .map(|p| [index_of(p.regions[0]), index_of(p.regions[1])])
            .collect();
        let mut corner_start = Vec::with_capacity(data.regions.len() + 1);
        let mut corners = Vec::with_capacity(data.regions.values().map(|r| r.vertices.len()).sum());
        for region in data.regions.values() {
            corner_start.push(corners.len() as u32);
            corners.extend_from_slice(&region.vertices);
        }
        corner_start.push(corners.len() as u32);
        Linked {
            region_start,
            region_portals,
            portal_regions,
            tile_start: Vec::new(),
            corner_start,
            corners,
        }
    }
}

impl Tables {
    /// The search tables of `data`, taking its dense links from `linked`
    /// when they are there (a mesh just assembled) and from its keys
    /// otherwise (a loaded mesh).
    pub(crate) fn build(data: &MeshData, linked: Option<Linked>) -> Tables {
        let region_keys: Vec<RegionId> = data.regions.keys().collect();
        let Linked {
            region_start,
            region_portals,
            portal_regions,
            tile_start,
            corner_start,
            corners,
        } = linked
            .filter(|l| {
                l.region_start.len() == region_keys.len() + 1
                    && l.portal_regions.len() == data.portals.len()
                    && l.corner_start.len() == region_keys.len() + 1
                    && l.corner_start.last().map(|&e| e as usize) == Some(l.corners.len())
            })
            .unwrap_or_else(|| Linked::looked_up(data));
        // tiles of consecutive regions covering them all, or one tile
        let n = region_keys.len() as u32;
        let by_tile = tile_start.first() == Some(&0)
            && tile_start.last() == Some(&n)
            && tile_start.windows(2).all(|w| w[0] <= w[1]);
        let tile_start = if by_tile { tile_start } else { vec![0, n] };
        let mut region_cost = Vec::with_capacity(region_keys.len());
        let mut region_area = Vec::with_capacity(region_keys.len());
        let mut region_component = Vec::with_capacity(region_keys.len());
        let mut min_cost = f32::INFINITY;
        debug_assert!(data
            .regions
            .values()
            .enumerate()
            .all(|(r, region)| region.vertices[..]
                == corners[corner_start[r] as usize..corner_start[r + 1] as usize]));
        for region in data.regions.values() {
            let cost = data.areas.get(region.area as usize).map_or(1.0, |a| a.cost);
            min_cost = min_cost.min(cost);
            region_cost.push(cost);
            region_area.push(region.area);
            region_component.push(region.component);
        }
        let bounds = Aabb::from_points(&corners);
        let portal_ends = data.portals.values().map(|p| [p.left, p.right]).collect();
        let region_tree = dead_end_trees(&region_start, &region_portals, &portal_regions);
        Tables {
            region_tree,
            region_keys,
            tile_start,
            region_start,
            region_portals,
            portal_regions,
            portal_ends,
            region_cost,
            region_area,
            region_component,
            min_cost: if min_cost.is_finite() { min_cost } else { 1.0 },
            bounds,
            corner_start,
            corners,
        }
    }

    /// Dense region `r`'s polygon.
    #[inline]
    pub(crate) fn polygon(&self, r: u32) -> &[Vec2] {
        let r = r as usize;
        &self.corners[self.corner_start[r] as usize..self.corner_start[r + 1] as usize]
    }

    /// Whether dense `region` may be entered by a query whose filter
    /// excludes the area kinds set in `excluded_areas` (bit `k` for kind `k`;
    /// kinds from 64 up are never excluded).
    #[inline]
    pub(crate) fn allowed(&self, region: u32, excluded_areas: u64) -> bool {
        let area = self.region_area[region as usize];
        area >= 64 || excluded_areas & (1u64 << area) == 0
    }

    /// The crossing node from dense region `a` into `b`; `None` when they
    /// are not neighbours.
    pub(crate) fn crossing_between(&self, a: u32, b: u32) -> Option<u32> {
        self.portals_of(a).iter().find_map(|&p| {
            let (crossing, beyond) = self.crossing_out_of(p, a)?;
            (beyond == b).then_some(crossing)
        })
    }

    /// True when a search from `start_region` to `goal_region` may need to
    /// enter `region`: it is on a cycle, or in the dead-end tree of either end.
    #[inline]
    pub(crate) fn worth_entering(&self, region: u32, start_region: u32, goal_region: u32) -> bool {
        let tree = self.region_tree[region as usize];
        tree == u32::MAX
            || tree == self.region_tree[goal_region as usize]
            || tree == self.region_tree[start_region as usize]
    }

    /// Region a portal crossing node (`2p` into `portal_regions[p][1]`,
    /// `2p + 1` into `portal_regions[p][0]`) enters.
    #[inline]
    pub(crate) fn entered(&self, crossing: u32) -> u32 {
        entered(&self.portal_regions, crossing)
    }

    /// The crossing node that leaves dense `region` through `portal`, and the
    /// region it enters; `None` if the portal does not touch the region.
    #[inline]
    pub(crate) fn crossing_out_of(&self, portal: u32, region: u32) -> Option<(u32, u32)> {
        crossing_out_of(&self.portal_regions, portal, region)
    }

    /// Cost of the path from `a` (in `first_region`) pulled taut through
    /// `crossings` to `b`, or `None` when the crossings enter a region of
    /// another cost (the pulled path does not say how much of it runs where).
    /// `ends` is scratch space.
    pub(crate) fn pulled_cost(
        &self,
        (a, first_region): (Vec2, u32),
        b: Vec2,
        crossings: &[u32],
        ends: &mut Vec<[Vec2; 2]>,
    ) -> Option<f32> {
        let rate = self.region_cost[first_region as usize];
        ends.clear();
        for &x in crossings {
            if self.region_cost[self.entered(x) as usize] != rate {
                return None;
            }
            ends.push(self.crossing_ends(x));
        }
        let (mut length, mut prev) = (0.0, a);
        crate::geometry::pull_corners(a, b, ends, |p| {
            length += prev.distance(p);
            prev = p;
        });
        Some((length + prev.distance(b)) * rate)
    }

    /// `[left, right]` of a crossing node as seen by someone making the crossing.
    #[inline]
    pub(crate) fn crossing_ends(&self, crossing: u32) -> [Vec2; 2] {
        let ends = self.portal_ends[(crossing / 2) as usize];
        // the portal's own order for an even crossing, swapped for an odd
        // one (picked by index: no branch on which way the crossing goes)
        let d = (crossing & 1) as usize;
        [ends[d], ends[d ^ 1]]
    }

    /// Dense portal indices of dense region `r`.
    #[inline]
    pub(crate) fn portals_of(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.region_portals[self.region_start[r] as usize..self.region_start[r + 1] as usize]
    }
}

/// A list of crossings walked backwards: the same portals in reverse order,
/// each crossed the other way.
pub(crate) fn reversed_crossings(crossings: &[u32]) -> impl Iterator<Item = u32> + '_ {
    crossings.iter().rev().map(|&x| x ^ 1)
}

/// Peels regions with a single portal until only cycles remain, and labels
/// each peeled region with the core region its tree hangs from.
fn dead_end_trees(
    region_start: &[u32],
    region_portals: &[u32],
    portal_regions: &[[u32; 2]],
) -> Vec<u32> {
    let n = region_start.len().saturating_sub(1);
    let portals =
        |r: usize| &region_portals[region_start[r] as usize..region_start[r + 1] as usize];
    let other = |p: u32, r: u32| {
        let [a, b] = portal_regions[p as usize];
        if a == r {
            b
        } else {
            a
        }
    };
    let mut degree: Vec<u32> = (0..n).map(|r| portals(r).len() as u32).collect();
    let mut peeled = vec![false; n];
    let mut stack: Vec<u32> = (0..n as u32).filter(|&r| degree[r as usize] <= 1).collect();
    let mut order = Vec::new();
    while let Some(r) = stack.pop() {
        if peeled[r as usize] {
            continue;
        }
        peeled[r as usize] = true;
        order.push(r);
        for &p in portals(r as usize) {
            let o = other(p, r);
            if o as usize >= n || peeled[o as usize] {
                continue;
            }
            // saturating: a crafted file may list a portal on one side only
            // (validate rejects it, but the tables are derived first)
            degree[o as usize] = degree[o as usize].saturating_sub(1);
            if degree[o as usize] <= 1 {
                stack.push(o);
            }
        }
    }
    // label from the core outwards: a peeled region takes the label of its
    // neighbour that was peeled after it (or is in the core)
    let mut tree = vec![u32::MAX; n];
    for &r in order.iter().rev() {
        let mut label = r; // a tree with no core is labelled by its last peeled region
        for &p in portals(r as usize) {
            let o = other(p, r);
            if (o as usize) < n && tree[o as usize] != u32::MAX {
                label = tree[o as usize];
            } else if (o as usize) < n && !peeled[o as usize] {
                label = o;
            }
        }
        tree[r as usize] = label;
    }
    tree
}

// Compile-time check of the threading contract.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<NavMesh>();
};

#[cfg(test)]
mod tests {
    use super::dead_end_trees;

    #[test]
    fn dead_end_trees_hang_from_the_core() {
        //   1       regions 0, 1, 2 form a cycle; 3 hangs off 0 and 4 off 3;
        //  / \      5 - 6 is a component without a cycle
        // 0---2
        // |
        // 3 - 4     5 - 6
        let portal_regions = [[0, 1], [1, 2], [2, 0], [0, 3], [3, 4], [5, 6]];
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); 7];
        for (p, [a, b]) in portal_regions.iter().enumerate() {
            lists[*a as usize].push(p as u32);
            lists[*b as usize].push(p as u32);
        }
        let mut start = vec![0u32];
        let mut flat = Vec::new();
        for l in &lists {
            flat.extend_from_slice(l);
            start.push(flat.len() as u32);
        }
        let tree = dead_end_trees(&start, &flat, &portal_regions);
        assert_eq!(&tree[..3], &[u32::MAX; 3]);
        assert_eq!(tree[3], 0);
        assert_eq!(tree[4], 0);
        assert_eq!(tree[5], tree[6], "a cycle-free component is one tree");
        assert_ne!(tree[5], u32::MAX);
    }
}
