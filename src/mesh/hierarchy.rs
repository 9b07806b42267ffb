//! The L2 level: nav points linked by corridors cached in the bake.
//!
//! The regions are partitioned into clusters. Every portal between two
//! clusters carries automatic nav points (its midpoint, and for wide portals
//! points next to both ends); designer nav points from the level join the
//! cluster of the region they stand in. Inside each cluster the bake caches
//! the corridor (a list of portal crossings) and its cost between every pair
//! of the cluster's nav points, and between every ordered pair of designer nav
//! points across the whole mesh. Those corridors are the edges of the L2 graph.
//!
//! To connect an arbitrary point to the nav points of its cluster without a
//! search over regions, each cluster also keeps a *leg table*: for every leg
//! point of the cluster (samples of the cluster's portals and its designer
//! points) and every nav point of the cluster, the length of the shortest
//! path between them inside the cluster and its route, as a step of a tree
//! of portal crossings grown from the nav point. A query adds the distance
//! from its start to the points on its region's boundary and follows the
//! table.
//! Built by [`crate::bake`], read by [`crate::query`].

use glam::Vec2;
use serde::{Deserialize, Serialize};

use super::validate::HierarchyError;
use super::{crossing_out_of, entered, Tables};
use crate::geometry::Aabb;
use crate::search::{astar, NavGraph, SearchContext, Via, LEG};

/// Marks a leg route without crossings, and the root of a route tree.
/// Steps are numbered from 1 within their cluster (step `s` of cluster `c`
/// is `leg_steps[step_start[c] + s - 1]`), so the numbers in the file stay
/// small and their variable-length encoding short.
pub(crate) const NO_STEP: u32 = 0;

/// Portal crossings all corridors together may hold per region of the
/// mesh (plus [`CROSSINGS_SLACK`]): the bake leaves out a hierarchy whose
/// corridors would hold more, and loading refuses a file whose leg tables
/// would derive more, so deriving corridors costs time linear in the mesh.
/// The Moving AI maps need at most 34.
pub(crate) const CROSSINGS_PER_REGION: u64 = 256;
/// What [`crossings_budget`] allows even on the smallest mesh.
pub(crate) const CROSSINGS_SLACK: u64 = 1 << 16;

/// Most portal crossings the corridors of a mesh of `regions` regions may hold.
pub(crate) fn crossings_budget(regions: usize) -> u64 {
    CROSSINGS_PER_REGION * regions as u64 + CROSSINGS_SLACK
}

/// Most landmarks a hierarchy may carry (the bake uses 16).
pub(crate) const MAX_LANDMARKS: usize = 64;

/// Largest [`crate::BakeConfig::cluster_size`], checked on bake and load:
/// the matching grows clusters to twice the size at most (dead ends to 16
/// times, `bake::hierarchy::DEAD_END_GROWTH`), and a leg table holds a
/// cluster's leg points times its nav nodes.
pub(crate) const MAX_CLUSTER_SIZE: u32 = 1024;

/// Most nav nodes for which the hierarchy has the all-pairs L2 table
/// ([`HierarchyData::l2_table`]): it costs a search from every node on bake
/// and on load (rows on rayon's threads), and 6 bytes per ordered pair in
/// memory, so at most 24 MiB. Every map of both development sets but the
/// two random 20% obstacle fields (9,700 nav nodes) is under it; the
/// largest, random512-40-3 (1,569 nodes), takes about half a second to
/// load and 15 MB.
pub(crate) const MAX_TABLE_NODES: usize = 2048;

/// Most bytes of all-pairs table per byte the hierarchy stores (less its
/// landmarks and stats, which differ with and without a table), so that
/// loading a file holds memory in proportion to it: a table is n^2 entries
/// for n nav nodes, which a file of a few kilobytes can name. The wide and
/// bundled maps' bakes need at most 7.4 (random512-40-3) at the default
/// cluster size; clusters of 3 to 5 regions needed up to 64, and now
/// search the nav nodes instead.
pub(crate) const TABLE_BYTES_PER_STORED_BYTE: u64 = 16;

/// Bytes of one all-pairs table entry: the distance (`f32`) and the
/// corridor it arrives by (`u16`).
const TABLE_ENTRY_BYTES: u64 = (std::mem::size_of::<f32>() + std::mem::size_of::<u16>()) as u64;

/// All-pairs L2 shortest routes: what a query looks up instead of
/// searching L2. Never stored: computed from the corridors on bake and on
/// load ([`HierarchyData::compute_table`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct L2Table {
    /// The L2 distance from nav node `a` to `b` at `a * n + b`, infinite
    /// when `b` is out of reach.
    pub full: Vec<f32>,
    /// At `a * n + b`: the corridor by which the shortest route from `a`
    /// arrives at `b`, as 1 + its place in `b`'s corridor list
    /// ([`HierarchyTables::corridors_at`]), or 0 when `b` is `a` or out of
    /// reach.
    pub via: Vec<u16>,
}

/// An all-pairs table being computed a few rows at a time
/// ([`HierarchyData::compute_table`] in one go, `TileCache::refresh_table`
/// across frames): the rows are independent, so the table is the same
/// however the rows are split.
#[derive(Debug, Clone)]
pub(crate) struct TableBuild {
    /// Per corridor, its place in each end's list (1-based), which the
    /// table holds.
    place: Vec<[u16; 2]>,
    table: L2Table,
    /// Rows computed so far, of `nodes`.
    done: usize,
    nodes: usize,
}

impl TableBuild {
    /// An empty table for `h` (whose L2 graph is `ht`), or `None` when it
    /// cannot have one: no nav node, more than [`MAX_TABLE_NODES`], a
    /// table over [`TABLE_BYTES_PER_STORED_BYTE`] times what `h` stores, or
    /// a node whose corridor list is too long to name a place in.
    pub(crate) fn new(h: &HierarchyData, ht: &HierarchyTables) -> Option<TableBuild> {
        if !TableBuild::possible(h, ht, h.table_allowance()) {
            return None;
        }
        let n = h.nodes.len();
        let mut place = vec![[0u16; 2]; h.corridors.len()];
        for b in 0..n as u32 {
            for (k, e) in ht.corridors_at(b).iter().enumerate() {
                let k = u16::try_from(k + 1).ok()?;
                let ends = h.corridors[e.corridor as usize].ends;
                let slot = &mut place[e.corridor as usize][usize::from(ends[0] != b)];
                if *slot == 0 {
                    *slot = k;
                }
            }
        }
        // the n x n rows are allocated by the first `advance`: asking
        // whether a hierarchy can have a table costs only `place`
        Some(TableBuild {
            place,
            table: L2Table::default(),
            done: 0,
            nodes: n,
        })
    }

    /// Whether [`TableBuild::new`] gives `h` a table, `allowance` being
    /// [`HierarchyData::table_allowance`] (a bake knows it already:
    /// measuring it passes over the leg tables), without the per-corridor
    /// places a build needs.
    pub(crate) fn possible(h: &HierarchyData, ht: &HierarchyTables, allowance: u64) -> bool {
        let n = h.nodes.len();
        n != 0
            && n <= MAX_TABLE_NODES
            && TABLE_ENTRY_BYTES * (n * n) as u64 <= TABLE_BYTES_PER_STORED_BYTE * allowance
            && (0..n as u32).all(|b| ht.corridors_at(b).len() <= usize::from(u16::MAX))
    }

    /// Whether every row is computed.
    pub(crate) fn is_complete(&self) -> bool {
        self.done == self.nodes
    }

    /// Computes up to `rows` more rows (on rayon's threads with the
    /// `parallel` feature); true when the table is complete.
    pub(crate) fn advance(&mut self, h: &HierarchyData, ht: &HierarchyTables, rows: usize) -> bool {
        let n = self.nodes;
        debug_assert_eq!(n, h.nodes.len(), "a table build for another hierarchy");
        if self.table.full.is_empty() {
            self.table = L2Table {
                full: vec![f32::INFINITY; n * n],
                via: vec![0; n * n],
            };
        }
        let first = self.done;
        let last = first.saturating_add(rows).min(n);
        let place = &self.place;
        // row `a`: the distances from `a` and the corridors its routes arrive by
        let row = |ctx: &mut SearchContext<Via>, a: usize, full: &mut [f32], via: &mut [u16]| {
            let graph = NavGraph::whole(h, ht);
            astar(
                &graph,
                ctx,
                &[(a as u32, 0.0, Via::leg(u32::MAX))],
                u32::MAX,
            );
            for b in 0..n {
                full[b] = ctx.cost(b as u32).unwrap_or(f32::INFINITY);
                via[b] = match ctx.payload(b as u32).map(|v| v.corridor) {
                    Some(c) if b != a && c != LEG => {
                        let ends = h.corridors[c as usize].ends;
                        place[c as usize][usize::from(ends[0] != b as u32)]
                    }
                    _ => 0,
                };
            }
        };
        let full = &mut self.table.full[first * n..last * n];
        let via = &mut self.table.via[first * n..last * n];
        // rows are independent: the same table on any number of threads
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            full.par_chunks_mut(n)
                .zip(via.par_chunks_mut(n))
                .enumerate()
                .for_each_init(SearchContext::new, |ctx, (k, (full, via))| {
                    row(ctx, first + k, full, via);
                });
        }
        #[cfg(not(feature = "parallel"))]
        {
            let mut ctx = SearchContext::new();
            for (k, (full, via)) in full.chunks_mut(n).zip(via.chunks_mut(n)).enumerate() {
                row(&mut ctx, first + k, full, via);
            }
        }
        self.done = last;
        self.is_complete()
    }

    /// Rows computed so far.
    pub(crate) fn rows_done(&self) -> usize {
        self.done
    }

    /// The finished table (complete or not: the caller checks).
    pub(crate) fn into_table(self) -> L2Table {
        self.table
    }
}

/// What a nav point stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NavPointKind {
    /// Automatic: the midpoint of a portal between two clusters (dense portal index).
    Boundary {
        /// Dense index of the portal.
        portal: u32,
    },
    /// Placed by the designer: index into [`crate::NavMesh::nav_points`].
    Designer {
        /// Index of the level's nav point.
        index: u32,
    },
}

/// A node of the L2 graph.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NavNode {
    /// Position, world units.
    pub at: Vec2,
    /// Boundary portal or designer point.
    pub kind: NavPointKind,
    /// The clusters it belongs to: the two sides of a boundary portal, or the
    /// designer point's cluster twice.
    pub clusters: [u32; 2],
    /// Dense region of each cluster's side: `regions[i]` is in `clusters[i]`.
    pub regions: [u32; 2],
}

impl NavNode {
    /// Its region on cluster `c`'s side (the second side unless `c` is the
    /// first).
    #[inline]
    pub(crate) fn region_in(&self, c: u32) -> u32 {
        self.regions[usize::from(self.clusters[0] != c)]
    }
}

/// A cached corridor: an edge of the L2 graph.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Corridor {
    /// Nav nodes at its ends; the crossings run from `ends[0]` to `ends[1]`.
    pub ends: [u32; 2],
    /// Dense regions where it starts and ends.
    pub regions: [u32; 2],
    /// Cluster it was searched in, or `u32::MAX` for a designer pair searched over the whole mesh.
    pub cluster: u32,
    pub cost: f32,
    /// Crossing nodes (`2p` or `2p + 1`, as in the portal graph) in `crossings[first..first + len]`.
    pub first: u32,
    pub len: u32,
}

/// Figures about the hierarchy, kept in the baked file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HierarchyStats {
    /// Clusters the regions were partitioned into.
    pub clusters: u32,
    /// Regions per cluster the partition aimed for: the configured
    /// [`crate::BakeConfig::cluster_size`], or less on a small mesh, so that
    /// it has enough clusters for long queries to use the hierarchy, or 16
    /// on a small mesh whose hierarchy at both breaks the byte bound (wide
    /// rooms).
    pub cluster_aim: u32,
    /// L2 nodes: samples of portals between clusters plus designer nav points.
    pub nav_nodes: u32,
    /// Cached corridors (L2 edges).
    pub corridors: u32,
    /// Portal crossings stored over all corridors.
    pub crossings: u32,
    /// Entries of the leg tables.
    pub leg_entries: u32,
    /// The hierarchy's size as the byte bound
    /// ([`crate::BakeConfig::max_hierarchy_ratio`]) measures it: its bytes
    /// in the baked file (clusters, leg tables, designer corridors,
    /// landmarks), counted with these stats at their defaults, but each leg
    /// cost at the four bytes of an `f32` (the file codes most of them in
    /// one byte), so more than the file holds.
    pub bytes: u64,
    /// Whether the hierarchy has the all-pairs L2 table (at most
    /// 2,048 nav nodes, and 16 bytes of table per byte the hierarchy
    /// stores): long queries look their route up
    /// instead of searching the nav nodes. The table is not stored; loading
    /// computes it again. After a runtime edit this is already true while
    /// the table is still pending (`TileCache::table_pending`), as the
    /// saved file says: queries search the nav nodes until it is refreshed.
    pub all_pairs_table: bool,
    /// Wall-clock milliseconds to build it (not saved).
    #[serde(skip)]
    pub bake_ms: f64,
}

/// The hierarchy as stored in the baked file (its fields in the order they
/// are written, those the file does not hold marked "not stored"; see
/// [`HierarchyData`]'s `Serialize` for how the leg costs are written).
#[derive(Debug, Clone)]
pub(crate) struct HierarchyData {
    /// The configured cluster size ([`crate::BakeConfig::cluster_size`]),
    /// which a mesh derived for another radius is baked with again; the
    /// partition aimed for `stats.cluster_aim`, this or on a small mesh less
    /// (`bake::hierarchy::cluster_sizes`).
    pub cluster_size: u32,
    /// Cluster of each dense region.
    pub region_cluster: Vec<u32>,
    /// CSR: nav nodes of cluster `c` are `cluster_nodes[cluster_start[c]..cluster_start[c + 1]]`.
    pub cluster_start: Vec<u32>,
    pub cluster_nodes: Vec<u32>,
    pub nodes: Vec<NavNode>,
    /// Cached corridors (the L2 edges): every cluster's, then the designer
    /// points'. Not stored: [`HierarchyData::derive_corridors`] rebuilds
    /// them from the leg tables on bake and on load (a runtime edit takes
    /// those of the clusters it kept from the hierarchy it replaces).
    pub corridors: Vec<Corridor>,
    /// Crossings of `corridors`, each corridor's a run of them.
    pub crossings: Vec<u32>,
    /// Corridors between designer points, from the flat search (so not
    /// derivable), with their crossings (`first` counts from the start of
    /// `designer_crossings`).
    pub designer_corridors: Vec<Corridor>,
    pub designer_crossings: Vec<u32>,
    /// CSR: leg points of cluster `c` are
    /// `points[point_start[c]..point_start[c + 1]]`.
    pub point_start: Vec<u32>,
    pub points: Vec<LegPoint>,
    /// Per cluster: where its leg table starts in `leg_cost` / `leg_route`;
    /// the entry of local point `i` and the cluster's `k`-th nav node is at
    /// `leg_start[c] + i * node_count(c) + k`.
    pub leg_start: Vec<u32>,
    /// Length of the shortest path inside the cluster between the point and
    /// the nav node (infinite if there is none). Stored as codes against
    /// the straight line between the two ([`leg_cost_code`]).
    pub leg_cost: Vec<f32>,
    /// The step of the cluster's route trees by which that path reaches the
    /// point (numbered from 1 in the cluster, see [`NO_STEP`]), or
    /// [`NO_STEP`] if it crosses no portal (the point is on the boundary of
    /// the nav node's region, or unreachable).
    pub leg_route: Vec<u32>,
    /// CSR: the route steps of cluster `c` are
    /// `leg_steps[step_start[c]..step_start[c + 1]]`.
    pub step_start: Vec<u32>,
    /// The routes of the leg tables, as trees grown from each nav node:
    /// `[parent, crossing]`, the step before (a lower number in the same
    /// cluster, or [`NO_STEP`] for a first crossing out of the nav node's
    /// region) and the crossing
    /// made, in the direction away from the nav node.
    pub leg_steps: Vec<[u32; 2]>,
    /// Landmarks for the L2 heuristic (ALT): `landmark_dist[n * landmarks + i]`
    /// is the L2 distance between nav node `n` and landmark `i` (infinite
    /// across components).
    pub landmarks: u32,
    pub landmark_dist: Vec<f32>,
    /// Landmarks picked at run time for a tabled hierarchy whose table an
    /// edit left pending (`TileCache::refresh_table`), in `landmark_dist`'s
    /// layout: they serve the L2 search until the table is in. Not stored
    /// (a tabled file has no landmarks).
    pub pending_landmarks: (u32, Vec<f32>),
    /// All-pairs L2 shortest routes, for graphs of at most
    /// [`MAX_TABLE_NODES`] nav nodes (empty otherwise); not stored.
    pub l2_table: L2Table,
    /// Built only as far as its leg tables, which were already over the
    /// byte bound (`bake::hierarchy::build`): no corridors, no landmarks.
    /// A tiled mesh keeps such an attempt aside for its next edit's leg
    /// tables; nothing else uses it. Not stored.
    pub unfinished: bool,
    /// Per cluster, whether its leg tables were left unsearched (empty): an
    /// unfinished attempt whose tables' least size was over the byte bound
    /// before their searches. Empty when every cluster has its tables.
    /// Not stored.
    pub legs_missing: Vec<bool>,
    pub stats: HierarchyStats,
}

/// A leg point: a sample of a portal of the cluster, or a designer point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct LegPoint {
    pub at: Vec2,
    /// A dense portal index, or a designer nav point standing in `region`.
    pub portal: Option<u32>,
    /// The region (of this cluster) the point is reached from: one side of
    /// the portal, or the designer point's region.
    pub region: u32,
}

/// How a leg cost is stored: the difference between its bits and those of
/// `straight`, the straight-line length between the entry's leg point and
/// nav node (a lower bound of the cost, and equal to it, bit for bit, where
/// the path is one straight segment, as most are: BENCHMARKS.md, session
/// 41). The file writes it as a zigzag varint (postcard's `i32`): one byte
/// for those, three or four for most others, where an `f32` takes four.
/// Lossless for every cost, finite or not: [`leg_cost_from_code`] inverts
/// it exactly, given the same `straight`, which both sides compute from the
/// stored positions alone.
#[inline]
fn leg_cost_code(cost: f32, straight: f32) -> i32 {
    cost.to_bits().wrapping_sub(straight.to_bits()) as i32
}

/// The leg cost that [`leg_cost_code`] wrote as `code` against `straight`.
#[inline]
fn leg_cost_from_code(code: i32, straight: f32) -> f32 {
    f32::from_bits(straight.to_bits().wrapping_add(code as u32))
}

/// Bytes postcard writes for an `i32`: a varint of its zigzag form.
#[inline]
#[cfg(test)]
fn code_bytes(code: i32) -> u32 {
    varint(((code << 1) ^ (code >> 31)) as u32)
}

/// Bytes postcard writes for a `u32` (LEB128: 7 bits a byte); counted by
/// comparisons, which vectorise.
#[inline]
fn varint(v: u32) -> u32 {
    1 + u32::from(v >= 1 << 7)
        + u32::from(v >= 1 << 14)
        + u32::from(v >= 1 << 21)
        + u32::from(v >= 1 << 28)
}

/// What leg tables' entries add to [`HierarchyData::measured_bytes`], their
/// offsets and lengths aside: the `points` as postcard writes them, `costs`
/// leg costs at four bytes, and the varints of the `route` and `steps`.
/// Additive: a cluster's part of the tables measures its share.
pub(crate) fn leg_entry_bytes(
    points: &[LegPoint],
    costs: usize,
    route: &[u32],
    steps: &[[u32; 2]],
) -> u64 {
    let point = |p: &LegPoint| 9 + p.portal.map_or(0, varint) + varint(p.region);
    let step = |&[a, b]: &[u32; 2]| varint(a) + varint(b);
    let route = bytes_of(route, |&x| varint(x));
    bytes_of(points, point) + 4 * costs as u64 + route + bytes_of(steps, step)
}

/// The sum of `bytes` over `v`, at most 32 a value: summed in u32 over runs
/// short enough not to overflow (the sums vectorise).
fn bytes_of<T>(v: &[T], bytes: impl Fn(&T) -> u32) -> u64 {
    const RUN: usize = 1 << 24;
    let runs = v.chunks(RUN);
    runs.map(|r| u64::from(r.iter().map(&bytes).sum::<u32>()))
        .sum()
}

/// [`HierarchyData`] as written, borrowed: its stored fields in order, the
/// leg costs as their codes.
#[derive(Serialize)]
struct StoredRef<'a> {
    cluster_size: u32,
    region_cluster: &'a [u32],
    cluster_start: &'a [u32],
    cluster_nodes: &'a [u32],
    nodes: &'a [NavNode],
    designer_corridors: &'a [Corridor],
    designer_crossings: &'a [u32],
    point_start: &'a [u32],
    points: &'a [LegPoint],
    leg_start: &'a [u32],
    leg_cost: Vec<i32>,
    leg_route: &'a [u32],
    step_start: &'a [u32],
    leg_steps: &'a [[u32; 2]],
    landmarks: u32,
    landmark_dist: &'a [f32],
    stats: &'a HierarchyStats,
}

/// [`HierarchyData`] as read: [`StoredRef`]'s fields, owned.
#[derive(Deserialize)]
struct Stored {
    cluster_size: u32,
    region_cluster: Vec<u32>,
    cluster_start: Vec<u32>,
    cluster_nodes: Vec<u32>,
    nodes: Vec<NavNode>,
    designer_corridors: Vec<Corridor>,
    designer_crossings: Vec<u32>,
    point_start: Vec<u32>,
    points: Vec<LegPoint>,
    leg_start: Vec<u32>,
    leg_cost: Vec<i32>,
    leg_route: Vec<u32>,
    step_start: Vec<u32>,
    leg_steps: Vec<[u32; 2]>,
    landmarks: u32,
    landmark_dist: Vec<f32>,
    stats: HierarchyStats,
}

impl Serialize for HierarchyData {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut codes = vec![0; self.leg_cost.len()];
        self.for_each_straight(codes.len(), |i, straight| {
            codes[i] = leg_cost_code(self.leg_cost[i], straight);
        });
        StoredRef {
            cluster_size: self.cluster_size,
            region_cluster: &self.region_cluster,
            cluster_start: &self.cluster_start,
            cluster_nodes: &self.cluster_nodes,
            nodes: &self.nodes,
            designer_corridors: &self.designer_corridors,
            designer_crossings: &self.designer_crossings,
            point_start: &self.point_start,
            points: &self.points,
            leg_start: &self.leg_start,
            leg_cost: codes,
            leg_route: &self.leg_route,
            step_start: &self.step_start,
            leg_steps: &self.leg_steps,
            landmarks: self.landmarks,
            landmark_dist: &self.landmark_dist,
            stats: &self.stats,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for HierarchyData {
    /// Decodes the leg costs by the layout the file gives; a damaged
    /// layout decodes to costs [`HierarchyData::check`] never lets through.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = Stored::deserialize(deserializer)?;
        let mut h = HierarchyData {
            cluster_size: s.cluster_size,
            region_cluster: s.region_cluster,
            cluster_start: s.cluster_start,
            cluster_nodes: s.cluster_nodes,
            nodes: s.nodes,
            corridors: Vec::new(),
            crossings: Vec::new(),
            designer_corridors: s.designer_corridors,
            designer_crossings: s.designer_crossings,
            point_start: s.point_start,
            points: s.points,
            leg_start: s.leg_start,
            leg_cost: Vec::new(),
            leg_route: s.leg_route,
            step_start: s.step_start,
            leg_steps: s.leg_steps,
            landmarks: s.landmarks,
            landmark_dist: s.landmark_dist,
            pending_landmarks: (0, Vec::new()),
            l2_table: L2Table::default(),
            unfinished: false,
            legs_missing: Vec::new(),
            stats: s.stats,
        };
        let codes = s.leg_cost;
        let mut costs = vec![0.0; codes.len()];
        h.for_each_straight(codes.len(), |i, straight| {
            costs[i] = leg_cost_from_code(codes[i], straight);
        });
        h.leg_cost = costs;
        Ok(h)
    }
}

impl HierarchyData {
    /// Checks every index and length the query follows, so a hierarchy read
    /// from a file can be trusted not to send a query out of bounds, and the
    /// layout the bake writes (contiguous corridors and leg tables, so a small
    /// file cannot make this check slow). Also checks that each corridor's
    /// crossings lead from its first region to its last, and that nodes and
    /// corridors agree with the mesh and the clusters. `portal_regions`
    /// (dense) and `regions` describe the mesh.
    pub(crate) fn check(
        &self,
        portal_regions: &[[u32; 2]],
        regions: usize,
    ) -> Result<(), HierarchyError> {
        self.check_stored(portal_regions, regions)?;
        self.check_corridors(portal_regions)
    }

    /// The stored parts: everything but the corridors.
    fn check_stored(
        &self,
        portal_regions: &[[u32; 2]],
        regions: usize,
    ) -> Result<(), HierarchyError> {
        let portals = portal_regions.len();
        let sizes = 2..=MAX_CLUSTER_SIZE;
        if !sizes.contains(&self.cluster_size)
            || !(2..=self.cluster_size).contains(&self.stats.cluster_aim)
        {
            return fail(
                "clusters",
                format!(
                    "cluster sizes {} (aimed for {}) are not in {sizes:?} with the aim at most the size",
                    self.cluster_size, self.stats.cluster_aim
                ),
            );
        }
        if self.region_cluster.len() != regions {
            return fail(
                "clusters",
                format!(
                    "hierarchy covers {} regions of {regions}",
                    self.region_cluster.len()
                ),
            );
        }
        let clusters = self.cluster_start.len().saturating_sub(1);
        if let Some(r) = self
            .region_cluster
            .iter()
            .position(|&c| c as usize >= clusters)
        {
            return fail(
                "clusters",
                format!("region {r} is in a cluster that does not exist"),
            );
        }
        csr_ok(
            "clusters",
            "cluster_start",
            &self.cluster_start,
            self.cluster_nodes.len(),
        )?;
        csr_ok(
            "leg tables",
            "point_start",
            &self.point_start,
            self.points.len(),
        )?;
        if self.point_start.len() != clusters + 1 || self.leg_start.len() != clusters {
            return fail("leg tables", "leg tables do not match the clusters");
        }
        let n = self.nodes.len();
        if self.cluster_nodes.iter().any(|&x| x as usize >= n) {
            return fail("clusters", "a cluster lists a missing nav node");
        }
        let region_ok = |r: u32| (r as usize) < regions;
        for (i, node) in self.nodes.iter().enumerate() {
            let sides_ok = match node.kind {
                NavPointKind::Boundary { portal } => {
                    portal_regions.get(portal as usize) == Some(&node.regions)
                }
                NavPointKind::Designer { .. } => node.regions[0] == node.regions[1],
            };
            if !sides_ok
                || !node.regions.iter().all(|&r| region_ok(r))
                || !node.at.is_finite()
                || (0..2).any(|s| self.region_cluster[node.regions[s] as usize] != node.clusters[s])
            {
                return fail("nav nodes", format!("nav node {i} does not match the mesh"));
            }
        }
        for (i, p) in self.points.iter().enumerate() {
            if p.portal.is_some_and(|q| q as usize >= portals)
                || !region_ok(p.region)
                || !p.at.is_finite()
            {
                return fail(
                    "leg tables",
                    format!("leg point {i} refers outside the mesh"),
                );
            }
        }
        let mut table_end = 0usize;
        for c in 0..clusters {
            let (k, m) = (
                self.nodes_of(c as u32).len(),
                self.points_of(c as u32).len(),
            );
            let start = self.leg_start[c] as usize;
            let end = k.checked_mul(m).and_then(|km| km.checked_add(start));
            if start != table_end
                || end.is_none_or(|e| e > self.leg_cost.len() || e > self.leg_route.len())
            {
                return fail(
                    "leg tables",
                    format!("leg table of cluster {c} is out of place"),
                );
            }
            table_end = end.unwrap_or(0);
        }
        if table_end != self.leg_cost.len() || table_end != self.leg_route.len() {
            return fail("leg tables", "leg tables have stray entries");
        }
        csr_ok(
            "leg tables",
            "step_start",
            &self.step_start,
            self.leg_steps.len(),
        )?;
        if self.step_start.len() != clusters + 1 {
            return fail("leg tables", "route steps do not match the clusters");
        }
        for c in 0..clusters {
            let (first, last) = (self.step_start[c] as usize, self.step_start[c + 1] as usize);
            let count = (last - first) as u64;
            let table = &self.leg_route[self.leg_start[c] as usize..];
            let table = &table[..self.nodes_of(c as u32).len() * self.points_of(c as u32).len()];
            if table.iter().any(|&s| u64::from(s) > count) {
                return fail(
                    "leg tables",
                    format!("a leg route of cluster {c} names a missing step"),
                );
            }
            // parents come first, so every walk back to a root ends
            for (i, &[parent, crossing]) in self.leg_steps[first..last].iter().enumerate() {
                if parent as usize > i || crossing as usize / 2 >= portals {
                    return fail(
                        "leg tables",
                        format!("leg step {} is out of place", first + i),
                    );
                }
            }
        }
        if self.landmarks as usize > n.min(MAX_LANDMARKS)
            || Some(self.landmark_dist.len()) != n.checked_mul(self.landmarks as usize)
        {
            return fail("landmarks", "landmark table does not match the nav nodes");
        }
        Ok(())
    }

    /// Checks a hierarchy read from a file and derives its corridors: the
    /// stored parts first ([`HierarchyData::check`]'s), then the corridors
    /// walked from the leg tables, then what refers to the corridors; then
    /// the all-pairs table if the file has its flag. Returns the L2 tables
    /// (for a mesh with `designers` designer points), which the table was
    /// computed over and the mesh keeps.
    pub(crate) fn check_and_derive(
        &mut self,
        portal_regions: &[[u32; 2]],
        regions: usize,
        designers: usize,
    ) -> Result<HierarchyTables, HierarchyError> {
        self.check_stored(portal_regions, regions)?;
        self.derive_corridors(portal_regions)?;
        self.check_corridors(portal_regions)?;
        let tables = HierarchyTables::build(self, portal_regions, designers);
        if self.stats.all_pairs_table && !self.compute_table(&tables) {
            let n = self.nodes.len() as u64;
            return fail(
                "all-pairs table",
                format!(
                    "{n} nav nodes cannot have the all-pairs table (at most {MAX_TABLE_NODES}, \
                     and at most {TABLE_BYTES_PER_STORED_BYTE} bytes of table, {} here, per \
                     byte the hierarchy stores less its landmarks and stats, {} here)",
                    n.saturating_mul(n).saturating_mul(TABLE_ENTRY_BYTES),
                    self.table_allowance(),
                ),
            );
        }
        Ok(tables)
    }

    /// The corridors (cluster and designer) join up and match the nodes and
    /// the mesh.
    fn check_corridors(&self, portal_regions: &[[u32; 2]]) -> Result<(), HierarchyError> {
        let clusters = self.cluster_start.len().saturating_sub(1);
        let mut next_first = 0u32;
        for (i, e) in self.corridors.iter().enumerate() {
            let end_ok = |s: usize| {
                self.nodes.get(e.ends[s] as usize).is_some_and(|node| {
                    node.regions.contains(&e.regions[s])
                        && (e.cluster == u32::MAX || node.clusters.contains(&e.cluster))
                })
            };
            let in_place = e.first == next_first
                && (e.first as usize)
                    .checked_add(e.len as usize)
                    .is_some_and(|end| end <= self.crossings.len())
                && (e.cluster == u32::MAX || (e.cluster as usize) < clusters)
                && e.cost.is_finite()
                && e.cost >= 0.0;
            if !in_place || !end_ok(0) || !end_ok(1) {
                return fail("corridors", format!("corridor {i} does not match the mesh"));
            }
            next_first = e.first + e.len;
            let mut region = e.regions[0];
            for &x in self.crossings_of(e) {
                let Some(&[a, b]) = portal_regions.get((x / 2) as usize) else {
                    return fail(
                        "corridors",
                        format!("corridor {i} crosses a missing portal"),
                    );
                };
                let (from, to) = if x % 2 == 0 { (a, b) } else { (b, a) };
                if from != region {
                    return fail(
                        "corridors",
                        format!("corridor {i} is broken at crossing {x}"),
                    );
                }
                region = to;
            }
            if region != e.regions[1] {
                return fail(
                    "corridors",
                    format!("corridor {i} does not end where it says"),
                );
            }
        }
        if next_first as usize != self.crossings.len() {
            return fail("corridors", "corridor crossings have stray entries");
        }
        Ok(())
    }

    /// Rebuilds `corridors` and `crossings`: for each cluster in order, the
    /// corridor of every pair of its nav nodes, walked from the leg table
    /// (the route from the point where the first stands to the second, at
    /// that entry's cost; pairs with no route get none), then the stored
    /// designer corridors. The bake and the loader both build them here, so
    /// a loaded mesh has exactly the corridors its bake had. Run it on
    /// checked leg tables ([`HierarchyData::check`]'s stored parts).
    ///
    /// # Errors
    /// A nav node with no leg point where it stands in one of its clusters,
    /// or designer corridors past `u32` crossings (a damaged file).
    pub(crate) fn derive_corridors(
        &mut self,
        portal_regions: &[[u32; 2]],
    ) -> Result<(), HierarchyError> {
        let cap = crossings_budget(self.region_cluster.len());
        self.derive_cluster_corridors(portal_regions, cap)?;
        self.append_designer_corridors()
    }

    /// The clusters' part of [`HierarchyData::derive_corridors`], replacing
    /// every corridor.
    ///
    /// # Errors
    /// As [`HierarchyData::derive_corridors`], and when the walks would
    /// cross more than `cap` portals (the bake and the loader pass
    /// [`crossings_budget`]; the bake leaves such a hierarchy out).
    pub(crate) fn derive_cluster_corridors(
        &mut self,
        portal_regions: &[[u32; 2]],
        cap: u64,
    ) -> Result<(), HierarchyError> {
        self.derive_cluster_corridors_reusing(portal_regions, cap, |_, _, _, _| false)
    }

    /// [`HierarchyData::derive_cluster_corridors`], where `reuse(c, nodes,
    /// corridors, crossings)` (`nodes`: `c`'s nav nodes) may append cluster
    /// `c`'s corridors itself,
    /// exactly as the walks would make them, and return true (false: it
    /// appended nothing): a rebuild takes those of the clusters an edit
    /// left alone from the hierarchy it replaces. Their crossings count
    /// towards `cap` (a walk that makes no corridor, which a bake's own
    /// tables never have, would count too).
    ///
    /// # Errors
    /// As [`HierarchyData::derive_cluster_corridors`].
    pub(crate) fn derive_cluster_corridors_reusing(
        &mut self,
        portal_regions: &[[u32; 2]],
        cap: u64,
        mut reuse: impl FnMut(u32, &[u32], &mut Vec<Corridor>, &mut Vec<u32>) -> bool,
    ) -> Result<(), HierarchyError> {
        let mut corridors = std::mem::take(&mut self.corridors);
        let mut crossings = std::mem::take(&mut self.crossings);
        corridors.clear();
        crossings.clear();
        let (mut from, mut route) = (Vec::new(), Vec::new());
        // what the walks may cost, so a crafted file cannot make it slow
        let mut walked = 0u64;
        for c in 0..self.cluster_start.len().saturating_sub(1) as u32 {
            let before = (corridors.len(), crossings.len());
            let reused = reuse(c, self.nodes_of(c), &mut corridors, &mut crossings);
            debug_assert!(
                reused || (corridors.len(), crossings.len()) == before,
                "a refused reuse appended nothing"
            );
            if reused {
                let before = before.1;
                walked += (crossings.len() - before) as u64;
                if walked > cap {
                    return fail(
                        "corridors",
                        format!("corridors would cross more than {cap} portals"),
                    );
                }
                continue;
            }
            let (nodes, points) = (self.nodes_of(c), self.points_of(c));
            from.clear();
            for &n in nodes {
                let Some(i) = point_of_node(points, &self.nodes[n as usize], c) else {
                    return fail(
                        "leg tables",
                        format!("nav node {n} has no leg point in cluster {c}"),
                    );
                };
                from.push(i);
            }
            for a in 0..nodes.len() {
                for b in a + 1..nodes.len() {
                    let cost = self.leg(c, from[a], b);
                    if !cost.is_finite() {
                        continue;
                    }
                    route.clear();
                    let start = points[from[a]].region;
                    let end = self.walk_leg(portal_regions, c, from[a], b, start, &mut route);
                    walked += route.len() as u64;
                    if walked > cap {
                        return fail(
                            "corridors",
                            format!("corridors would cross more than {cap} portals"),
                        );
                    }
                    let Some(end) = end else {
                        continue;
                    };
                    corridors.push(Corridor {
                        ends: [nodes[a], nodes[b]],
                        regions: [start, end],
                        cluster: c,
                        cost,
                        first: crossings.len() as u32,
                        len: route.len() as u32,
                    });
                    crossings.extend_from_slice(&route);
                }
            }
        }
        self.corridors = corridors;
        self.crossings = crossings;
        Ok(())
    }

    /// Appends the stored designer corridors after the clusters' ones.
    pub(crate) fn append_designer_corridors(&mut self) -> Result<(), HierarchyError> {
        let base = self.crossings.len() as u32;
        for e in &self.designer_corridors {
            let Some(first) = e.first.checked_add(base) else {
                return fail("corridors", "designer corridors are out of place");
            };
            self.corridors.push(Corridor { first, ..*e });
        }
        self.crossings.extend_from_slice(&self.designer_crossings);
        Ok(())
    }

    /// The stored bytes a table is measured against
    /// ([`TABLE_BYTES_PER_STORED_BYTE`]): all but the landmarks and the
    /// stats, which differ with and without a table.
    pub(crate) fn table_allowance(&self) -> u64 {
        self.measured_bytes()
            - stored_size(&self.landmarks)
            - stored_size(&self.landmark_dist)
            - stored_size(&self.stats)
    }

    /// Calls `f(i, straight)` for each of the first `entries` entries of the
    /// leg tables, in order: `i` its index in `leg_cost`, `straight` the
    /// straight-line length between its leg point and nav node. The
    /// entries are taken as the bake lays them out (the layout
    /// [`HierarchyData::check`] requires): clusters in order, each a row
    /// over its nav nodes per leg point; where a damaged layout places
    /// none, `straight` is 0. Visits each entry once, and each cluster, leg
    /// point and nav node at most once more, so a crafted file cannot make
    /// it slow.
    fn for_each_straight(&self, entries: usize, mut f: impl FnMut(usize, f32)) {
        let clusters = self.cluster_start.len().saturating_sub(1);
        let span =
            |start: &[u32], c: usize| Some(*start.get(c)? as usize..*start.get(c + 1)? as usize);
        let mut i = 0;
        'clusters: for c in 0..clusters {
            let nodes = span(&self.cluster_start, c).and_then(|r| self.cluster_nodes.get(r));
            let points = span(&self.point_start, c).and_then(|r| self.points.get(r));
            let (Some(nodes), Some(points)) = (nodes, points) else {
                break;
            };
            if nodes.is_empty() {
                continue;
            }
            for p in points {
                for &n in nodes {
                    if i == entries {
                        break 'clusters;
                    }
                    let node = self.nodes.get(n as usize);
                    f(i, node.map_or(0.0, |node| p.at.distance(node.at)));
                    i += 1;
                }
            }
        }
        for i in i..entries {
            f(i, 0.0);
        }
    }

    /// The bytes the leg costs' codes take in the file (without the
    /// list's length), where [`HierarchyData::measured_bytes`] counts four
    /// a cost.
    #[cfg(test)]
    pub(crate) fn leg_cost_code_bytes(&self) -> u64 {
        let mut bytes = 0;
        self.for_each_straight(self.leg_cost.len(), |i, straight| {
            bytes += u64::from(code_bytes(leg_cost_code(self.leg_cost[i], straight)));
        });
        bytes
    }

    /// The hierarchy's size as the byte bound (`BakeConfig::max_hierarchy_ratio`)
    /// and the table allowance measure it: its stored fields as postcard
    /// writes them, but each leg cost at the four bytes it takes in memory
    /// (the file codes most in one, [`leg_cost_code`]). Counting the codes
    /// instead would let smaller clusters fit on some maps, whose routes
    /// are not those the development sets were checked on (BENCHMARKS.md,
    /// session 41). The long tables are counted directly rather than
    /// through serde (an edit measures every hierarchy it builds).
    pub(crate) fn measured_bytes(&self) -> u64 {
        let (points, costs) = (&self.points, self.leg_cost.len());
        self.measured_bytes_with(leg_entry_bytes(
            points,
            costs,
            &self.leg_route,
            &self.leg_steps,
        ))
    }

    /// [`HierarchyData::measured_bytes`] with the leg tables' entries
    /// counted as `entries` bytes, their [`leg_entry_bytes`] (which the
    /// caller summed cluster by cluster).
    pub(crate) fn measured_bytes_with(&self, entries: u64) -> u64 {
        // postcard writes integers as LEB128 varints, lengths included
        fn length(n: usize) -> u64 {
            stored_size(&n)
        }
        fn u32s(v: &[u32]) -> u64 {
            length(v.len()) + bytes_of(v, |&x| varint(x))
        }
        fn f32s(v: &[f32]) -> u64 {
            length(v.len()) + 4 * v.len() as u64
        }
        // every stored field, in the struct's order, the leg tables' entries
        // counted together
        stored_size(&self.cluster_size)
            + u32s(&self.region_cluster)
            + u32s(&self.cluster_start)
            + u32s(&self.cluster_nodes)
            + stored_size(&self.nodes)
            + stored_size(&self.designer_corridors)
            + u32s(&self.designer_crossings)
            + u32s(&self.point_start)
            + length(self.points.len())
            + u32s(&self.leg_start)
            + length(self.leg_cost.len())
            + length(self.leg_route.len())
            + u32s(&self.step_start)
            + length(self.leg_steps.len())
            + entries
            + stored_size(&self.landmarks)
            + f32s(&self.landmark_dist)
            + stored_size(&self.stats)
    }

    /// Whether cluster `c`'s leg tables were left unsearched
    /// ([`HierarchyData::legs_missing`]).
    pub(crate) fn legs_missing_in(&self, c: u32) -> bool {
        self.legs_missing.get(c as usize) == Some(&true)
    }

    /// Whether some cluster has its leg tables (none are missing, or not
    /// all).
    pub(crate) fn has_some_legs(&self) -> bool {
        self.legs_missing.is_empty() || self.legs_missing.contains(&false)
    }

    /// Nav nodes of cluster `c`.
    #[inline]
    pub(crate) fn nodes_of(&self, c: u32) -> &[u32] {
        let c = c as usize;
        &self.cluster_nodes[self.cluster_start[c] as usize..self.cluster_start[c + 1] as usize]
    }

    /// Leg points of cluster `c`.
    #[inline]
    pub(crate) fn points_of(&self, c: u32) -> &[LegPoint] {
        let c = c as usize;
        &self.points[self.point_start[c] as usize..self.point_start[c + 1] as usize]
    }

    /// Where the leg-table entry of local point `i` and the `k`-th nav node of `c` is.
    #[inline]
    fn leg_entry(&self, c: u32, i: usize, k: usize) -> usize {
        self.leg_start[c as usize] as usize + i * self.nodes_of(c).len() + k
    }

    /// Leg-table cost from local point `i` to the `k`-th nav node of `c`.
    #[inline]
    pub(crate) fn leg(&self, c: u32, i: usize, k: usize) -> f32 {
        self.leg_cost[self.leg_entry(c, i, k)]
    }

    /// Cluster `c`'s leg-table costs ([`LegCosts`]).
    #[inline]
    pub(crate) fn leg_costs(&self, c: u32) -> LegCosts<'_> {
        let nodes = self.nodes_of(c).len();
        LegCosts {
            cost: &self.leg_cost[self.leg_start[c as usize] as usize..],
            nodes,
        }
    }

    /// Crossings of corridor `e`, from `ends[0]` to `ends[1]`.
    #[inline]
    pub(crate) fn crossings_of(&self, e: &Corridor) -> &[u32] {
        &self.crossings[e.first as usize..(e.first + e.len) as usize]
    }

    /// Appends to `out` the crossings of the leg-table route from local point
    /// `from` (entered in region `region`) to the `k`-th nav node of cluster `c`,
    /// and returns the region where it ends; `None` if there is no route or
    /// it does not join up (only a damaged file can make it so).
    pub(crate) fn walk_leg(
        &self,
        portal_regions: &[[u32; 2]],
        c: u32,
        from: usize,
        k: usize,
        mut region: u32,
        out: &mut Vec<u32>,
    ) -> Option<u32> {
        let target = self.nodes[self.nodes_of(c)[k] as usize].region_in(c);
        let entry = self.leg_entry(c, from, k);
        if !self.leg_cost[entry].is_finite() {
            return None;
        }
        let steps = &self.leg_steps[self.step_start[c as usize] as usize..];
        // step `s` of the cluster, numbered from 1 (`NO_STEP` is none)
        let at = |s: u32| s.checked_sub(1).and_then(|s| steps.get(s as usize));
        let mut step = self.leg_route[entry];
        // the region the route reaches the point in; a point on a portal is
        // on the boundary of the regions of both sides
        let reached = match at(step) {
            Some(&[_, crossing]) => entered(portal_regions, crossing),
            None => target,
        };
        if region != reached {
            let portal = self.points_of(c)[from].portal?;
            let (crossing, into) = crossing_out_of(portal_regions, portal, region)?;
            if into != reached {
                return None;
            }
            out.push(crossing);
            region = into;
        }
        // the tree's steps lead away from the nav node: walk them back
        while let Some(&[parent, crossing]) = at(step) {
            if entered(portal_regions, crossing) != region {
                return None;
            }
            let back = crossing ^ 1;
            out.push(back);
            region = entered(portal_regions, back);
            step = parent;
        }
        (region == target).then_some(region)
    }

    /// True when the hierarchy is to have the all-pairs table (its file
    /// says so) but its rows are not in yet: an edit left them pending.
    pub(crate) fn table_pending(&self) -> bool {
        self.stats.all_pairs_table && !self.has_table()
    }

    /// True when the hierarchy has the all-pairs table.
    #[inline]
    pub(crate) fn has_table(&self) -> bool {
        !self.l2_table.via.is_empty()
    }

    /// The tabled L2 distance between nav nodes `a` and `b`.
    #[inline]
    pub(crate) fn l2_distance(&self, a: u32, b: u32) -> f32 {
        self.l2_table.full[a as usize * self.nodes.len() + b as usize]
    }

    /// Computes the all-pairs table from the corridors: one Dijkstra (the
    /// generic A*, no goal) from each nav node over the whole L2 graph.
    /// `ht` is the L2 graph built over these corridors. False, with no
    /// table, for more than [`MAX_TABLE_NODES`] nav nodes or a node whose
    /// corridor list is too long to name a place in.
    pub(crate) fn compute_table(&mut self, ht: &HierarchyTables) -> bool {
        self.l2_table = L2Table::default();
        let Some(mut build) = TableBuild::new(self, ht) else {
            return false;
        };
        build.advance(self, ht, usize::MAX);
        self.l2_table = build.into_table();
        true
    }

    /// Writes to `out` the corridors of the tabled shortest route from nav
    /// node `a` to `b`, in order, with the node each one arrives at; `ht`
    /// holds the corridor lists the table points into. The route is `b`'s
    /// row walked from `a` ([`HierarchyData::tabled_step`]), so the routes
    /// to one node form a tree: a group move shares their ends. False when
    /// there is no table entry or the route does not reach `b` within `n`
    /// steps.
    pub(crate) fn tabled_route(
        &self,
        ht: &HierarchyTables,
        a: u32,
        b: u32,
        out: &mut Vec<(u32, u32)>,
    ) -> bool {
        out.clear();
        let mut at = a;
        while at != b {
            let Some(step) = self.tabled_step(ht, at, b) else {
                return false;
            };
            if out.len() >= self.nodes.len() {
                return false;
            }
            out.push(step);
            at = step.0;
        }
        true
    }

    /// The first step of the tabled shortest route from nav node `a` to
    /// `b` (`a != b`): the next node and the corridor to it, the corridor
    /// by which `b`'s shortest route reaches `a` (the corridors are
    /// undirected). `None` without a table entry.
    #[inline]
    pub(crate) fn tabled_step(&self, ht: &HierarchyTables, a: u32, b: u32) -> Option<(u32, u32)> {
        let n = self.nodes.len();
        let via = *self.l2_table.via.get(b as usize * n + a as usize)?;
        let e = (via as usize)
            .checked_sub(1)
            .and_then(|k| ht.corridors_at(a).get(k))?;
        Some((e.to, e.corridor))
    }

    /// How many landmarks the L2 search has: the stored ones, or those
    /// picked while the table is pending.
    #[inline]
    pub(crate) fn landmark_count(&self) -> u32 {
        if self.landmarks > 0 {
            self.landmarks
        } else {
            self.pending_landmarks.0
        }
    }

    /// Distances from nav node `n` to the landmarks.
    #[inline]
    pub(crate) fn landmark_row(&self, n: u32) -> &[f32] {
        let (l, dist) = if self.landmarks > 0 {
            (self.landmarks as usize, &self.landmark_dist)
        } else {
            (self.pending_landmarks.0 as usize, &self.pending_landmarks.1)
        };
        &dist[n as usize * l..(n as usize + 1) * l]
    }
}

/// Per cluster, the clusters its boundary nav nodes lead to, ascending and
/// without repeats, as CSR offsets and list.
fn cluster_neighbours(h: &HierarchyData) -> (Vec<u32>, Vec<u32>) {
    let clusters = h.cluster_start.len().saturating_sub(1);
    let pairs = h
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NavPointKind::Boundary { .. }))
        .map(|n| n.clusters)
        .filter(|&[a, b]| a != b && (a as usize) < clusters && (b as usize) < clusters)
        .flat_map(|[a, b]| [(a, b), (b, a)]);
    let (mut start, mut list) = bucketed(clusters, pairs);
    // each cluster's list sorted and deduplicated, compacted in place
    let mut kept = 0;
    for c in 0..clusters {
        let (from, to) = (start[c] as usize, start[c + 1] as usize);
        list[from..to].sort_unstable();
        start[c] = kept as u32;
        let mut last = None;
        for i in from..to {
            if last != Some(list[i]) {
                last = Some(list[i]);
                list[kept] = list[i];
                kept += 1;
            }
        }
    }
    start[clusters] = kept as u32;
    list.truncate(kept);
    (start, list)
}

/// `items` (key, value) grouped by key, keys below `keys`, in their order
/// within a key (a counting sort): CSR offsets, `keys + 1` of them, and the
/// values.
pub(crate) fn bucketed<T: Copy + Default>(
    keys: usize,
    items: impl Iterator<Item = (u32, T)> + Clone,
) -> (Vec<u32>, Vec<T>) {
    let (mut start, mut values) = (Vec::new(), Vec::new());
    bucketed_into(keys, items, (&mut start, &mut values));
    (start, values)
}

/// [`bucketed`] into the buffers `start` and `values` (emptied first).
pub(crate) fn bucketed_into<T: Copy + Default>(
    keys: usize,
    items: impl Iterator<Item = (u32, T)> + Clone,
    (start, values): (&mut Vec<u32>, &mut Vec<T>),
) {
    start.clear();
    start.resize(keys + 1, 0);
    for (k, _) in items.clone() {
        start[k as usize + 1] += 1;
    }
    for k in 0..keys {
        start[k + 1] += start[k];
    }
    values.clear();
    values.resize(start[keys] as usize, T::default());
    // each key's next place, kept in `start` shifted by one key: the
    // offsets are whole again once every value is placed
    for (k, v) in items {
        let at = &mut start[k as usize];
        values[*at as usize] = v;
        *at += 1;
    }
    start.rotate_right(1);
    start[0] = 0;
}

/// The local point nav node `node` stands on in cluster `c`.
fn point_of_node(points: &[LegPoint], node: &NavNode, c: u32) -> Option<usize> {
    points.iter().position(|p| match node.kind {
        NavPointKind::Boundary { portal } => {
            p.portal == Some(portal) && p.region == node.region_in(c) && p.at == node.at
        }
        NavPointKind::Designer { .. } => p.portal.is_none() && p.at == node.at,
    })
}

/// One cluster's leg-table costs: a row per local leg point, in it an
/// entry per nav node of the cluster in the order of
/// [`HierarchyData::nodes_of`].
#[derive(Clone, Copy)]
pub(crate) struct LegCosts<'a> {
    cost: &'a [f32],
    nodes: usize,
}

impl<'a> LegCosts<'a> {
    /// The costs from local point `i` to every nav node.
    #[inline]
    pub(crate) fn row(self, i: usize) -> &'a [f32] {
        &self.cost[i * self.nodes..(i + 1) * self.nodes]
    }
}

/// A failed hierarchy check.
fn fail<T>(part: &'static str, reason: impl Into<String>) -> Result<T, HierarchyError> {
    Err(HierarchyError::new(part, reason))
}

/// How many bytes `value` takes in the baked file's encoding (postcard).
pub(crate) fn stored_size<T: Serialize + ?Sized>(value: &T) -> u64 {
    postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default())
        .map_or(0, |n| n as u64)
}

/// A CSR offset array: starts at 0, never decreases, ends at `len`.
fn csr_ok(part: &'static str, what: &str, start: &[u32], len: usize) -> Result<(), HierarchyError> {
    let ok = start.first() == Some(&0)
        && start.windows(2).all(|w| w[0] <= w[1])
        && start.last().is_some_and(|&l| l as usize == len);
    if ok {
        Ok(())
    } else {
        fail(part, format!("offsets {what} are inconsistent"))
    }
}

/// An L2 edge seen from one of its ends: packed so a search reads one cache
/// line for several neighbours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct L2Edge {
    pub to: u32,
    pub cost: f32,
    pub corridor: u32,
    /// Cluster the corridor runs in (`u32::MAX` for a designer pair).
    pub cluster: u32,
}

impl L2Edge {
    /// How a node reached along this edge was reached.
    #[inline]
    pub(crate) fn via(&self) -> Via {
        Via {
            corridor: self.corridor,
            cluster: self.cluster,
        }
    }
}

/// Derived from [`HierarchyData`] on build and load: the L2 adjacency.
#[derive(Debug, Clone, Default)]
pub(crate) struct HierarchyTables {
    /// CSR: corridors at nav node `n` are `node_corridors[node_start[n]..node_start[n + 1]]`.
    pub node_start: Vec<u32>,
    /// Per nav node, where the second and third runs of its corridors
    /// start: a node's corridors come in corridor order, which is cluster
    /// order with the designer pairs last, so they form at most three runs
    /// of one cluster each (its two clusters, then designer pairs), and a
    /// search that leaves through one cluster skips another's run whole.
    /// `None` for a node whose corridors form more runs (not from a bake).
    pub node_runs: Vec<Option<[u32; 2]>>,
    pub node_corridors: Vec<L2Edge>,
    /// CSR by dense region: the local points of its cluster that touch it
    /// (`region_points[region_point_start[r]..region_point_start[r + 1]]`).
    pub region_point_start: Vec<u32>,
    pub region_points: Vec<u32>,
    /// Designer nav point index -> nav node.
    pub designer_node: Vec<u32>,
    /// CSR by cluster: the clusters it shares a portal with, ascending
    /// (`cluster_neighbours[neighbour_start[c]..neighbour_start[c + 1]]`).
    pub neighbour_start: Vec<u32>,
    pub cluster_neighbours: Vec<u32>,
    /// The boxes of the open zones ([`open_zones`]): parts of the mesh the
    /// hierarchy leaves to the flat search.
    pub open_zones: Vec<Aabb>,
    /// The dearest region's cost per unit length, with [`Tables::min_cost`]
    /// the bounds of a path's cost from its length.
    pub max_cost: f32,
}

/// Open zones a hierarchy may leave ([`open_zones`]); the bake keeps no
/// hierarchy that would leave more, and a file whose hierarchy does fails
/// [`crate::NavMesh::validate`]. A query tests its path against every
/// zone's box.
pub(crate) const MAX_OPEN_ZONES: usize = 64;

/// What [`HierarchyTables::open_zone_might_be_shorter`] takes off its
/// lower bound, relative, for the f32 rounding of the distances it adds
/// and of a path's length (a few ulps each).
const OPEN_ZONE_ROUNDING: f32 = 1e-5;

/// The open zones of hierarchy `h` on a mesh of tables `t`, its `open`
/// clusters ([`open_clusters`]) given: the clusters it leaves open (those that share a portal with another cluster but hold
/// no nav node: the bake left their corridors out, as they would not pay,
/// see `bake::hierarchy::unpaying_clusters`), joined where they share portals,
/// each as the box of its regions, numbered by their first region. No
/// route of the hierarchy passes through one; a path that might is the
/// flat search's.
pub(crate) fn open_zones(h: &HierarchyData, t: &Tables, open: &[bool]) -> Vec<Aabb> {
    let is_open = |r: u32| {
        let c = h.region_cluster.get(r as usize).map(|&c| c as usize);
        c.is_some_and(|c| open.get(c) == Some(&true))
    };
    if !open.contains(&true) {
        return Vec::new();
    }
    // regions of open clusters, joined across their portals
    let n = t.region_keys.len();
    let mut joined = petgraph::unionfind::UnionFind::<u32>::new(n);
    for &[a, b] in &t.portal_regions {
        if is_open(a) && is_open(b) {
            joined.union(a, b);
        }
    }
    let mut zone_of_set = vec![u32::MAX; n];
    let mut zones: Vec<Aabb> = Vec::new();
    for r in (0..n as u32).filter(|&r| is_open(r)) {
        let set = joined.find_mut(r) as usize;
        if zone_of_set[set] == u32::MAX {
            zone_of_set[set] = zones.len() as u32;
            zones.push(Aabb::EMPTY);
        }
        let z = &mut zones[zone_of_set[set] as usize];
        *z = z.union(Aabb::from_points(t.polygon(r)));
    }
    zones
}

/// Per cluster of `h` on the mesh of tables `t`: whether it is open (it
/// shares a portal with another cluster but holds no nav node).
pub(crate) fn open_clusters(h: &HierarchyData, t: &Tables) -> Vec<bool> {
    let clusters = h.cluster_start.len().saturating_sub(1);
    let cluster_of = |r: u32| h.region_cluster.get(r as usize).map(|&c| c as usize);
    let mut bordered = vec![false; clusters];
    for &[a, b] in &t.portal_regions {
        if let (Some(ca), Some(cb)) = (cluster_of(a), cluster_of(b)) {
            if ca != cb && ca < clusters && cb < clusters {
                bordered[ca] = true;
                bordered[cb] = true;
            }
        }
    }
    (0..clusters)
        .map(|c| bordered[c] && h.nodes_of(c as u32).is_empty())
        .collect()
}

impl HierarchyTables {
    pub(crate) fn build(h: &HierarchyData, portal_regions: &[[u32; 2]], designers: usize) -> Self {
        let n = h.nodes.len();
        // each corridor listed at both ends (once for a loop), in corridor
        // order: counted, then placed (plain loops: this runs on every edit)
        let mut node_start = vec![0u32; n + 1];
        for e in &h.corridors {
            node_start[e.ends[0] as usize + 1] += 1;
            if e.ends[1] != e.ends[0] {
                node_start[e.ends[1] as usize + 1] += 1;
            }
        }
        for v in 0..n {
            node_start[v + 1] += node_start[v];
        }
        let mut fill = node_start.clone();
        let none = L2Edge {
            to: u32::MAX,
            cost: 0.0,
            corridor: u32::MAX,
            cluster: u32::MAX,
        };
        let mut node_corridors = vec![none; node_start[n] as usize];
        for (i, e) in h.corridors.iter().enumerate() {
            for k in 0..if e.ends[1] != e.ends[0] { 2 } else { 1 } {
                let at = &mut fill[e.ends[k] as usize];
                node_corridors[*at as usize] = L2Edge {
                    to: e.ends[1 - k],
                    cost: e.cost,
                    corridor: i as u32,
                    cluster: e.cluster,
                };
                *at += 1;
            }
        }
        let regions = h.region_cluster.len();
        // each point touches at most the two regions of its portal
        let mut touching: Vec<(u32, u32)> = Vec::with_capacity(2 * h.points.len());
        for c in 0..h.point_start.len().saturating_sub(1) {
            for (i, p) in h.points_of(c as u32).iter().enumerate() {
                let sides = match p.portal.and_then(|q| portal_regions.get(q as usize)) {
                    Some(&[a, b]) => [Some(a), Some(b)],
                    None => [Some(p.region), None],
                };
                for r in sides.into_iter().flatten() {
                    if h.region_cluster.get(r as usize) == Some(&(c as u32)) {
                        touching.push((r, i as u32));
                    }
                }
            }
        }
        // a region lies in one cluster, whose points were visited in
        // order, so each region lists its points in order
        let (region_point_start, region_points) = bucketed(regions, touching.iter().copied());
        let mut designer_node = vec![u32::MAX; designers];
        for (i, node) in h.nodes.iter().enumerate() {
            if let NavPointKind::Designer { index } = node.kind {
                if let Some(d) = designer_node.get_mut(index as usize) {
                    *d = i as u32;
                }
            }
        }
        let node_runs = (0..n)
            .map(|v| {
                let edges = &node_corridors[node_start[v] as usize..node_start[v + 1] as usize];
                let mut starts =
                    (1..edges.len()).filter(|&i| edges[i].cluster != edges[i - 1].cluster);
                let second = starts.next().unwrap_or(edges.len());
                let third = starts.next().unwrap_or(edges.len());
                starts
                    .next()
                    .is_none()
                    .then_some([second as u32, third as u32])
            })
            .collect();
        let (neighbour_start, cluster_neighbours) = cluster_neighbours(h);
        HierarchyTables {
            node_start,
            node_runs,
            node_corridors,
            region_point_start,
            region_points,
            designer_node,
            neighbour_start,
            cluster_neighbours,
            open_zones: Vec::new(),
            max_cost: 0.0,
        }
    }

    /// Sets the open zones of `h` on the mesh of tables `t` ([`open_zones`]).
    pub(crate) fn set_open_zones(&mut self, h: &HierarchyData, t: &Tables) {
        self.open_zones = open_zones(h, t, &open_clusters(h, t));
        self.max_cost = t.region_cost.iter().copied().fold(t.min_cost, f32::max);
    }

    /// Whether a path of `length` from `start` to `goal` might be beaten by
    /// one through an open zone: whether such a path's least cost (the
    /// cheapest rate times the way to the zone's box and on from it, less
    /// [`OPEN_ZONE_ROUNDING`] of it) is below this one's greatest (the
    /// dearest rate times its length).
    pub(crate) fn open_zone_might_be_shorter(
        &self,
        min_cost: f32,
        (start, goal): (Vec2, Vec2),
        length: f32,
    ) -> bool {
        let away = |b: &Aabb, p: Vec2| (b.min - p).max(p - b.max).max(Vec2::ZERO).length();
        let least = |b: &Aabb| min_cost * (away(b, start) + away(b, goal));
        self.open_zones
            .iter()
            .any(|b| least(b) * (1.0 - OPEN_ZONE_ROUNDING) < self.max_cost * length)
    }

    /// True when clusters `a` and `b` share a portal (so nav nodes stand
    /// between them).
    #[inline]
    pub(crate) fn neighbours(&self, a: u32, b: u32) -> bool {
        let a = a as usize;
        match self.neighbour_start.get(a..a + 2) {
            Some(&[from, to]) => self.cluster_neighbours[from as usize..to as usize]
                .binary_search(&b)
                .is_ok(),
            _ => false,
        }
    }

    /// Local points (of its cluster) touching dense region `r`.
    #[inline]
    pub(crate) fn points_touching(&self, r: u32) -> &[u32] {
        let r = r as usize;
        &self.region_points
            [self.region_point_start[r] as usize..self.region_point_start[r + 1] as usize]
    }

    /// The corridors at nav node `n` as its runs of one cluster each (see
    /// `node_runs`), in order, empty runs where it has fewer; `None` for a
    /// node of more runs.
    #[inline]
    pub(crate) fn corridor_runs(&self, n: u32) -> Option<[&[L2Edge]; 3]> {
        let [second, third] = self.node_runs[n as usize]?;
        let (first, rest) = self.corridors_at(n).split_at(second as usize);
        let (middle, last) = rest.split_at((third - second) as usize);
        Some([first, middle, last])
    }

    /// Corridor ids at nav node `n`.
    #[inline]
    pub(crate) fn corridors_at(&self, n: u32) -> &[L2Edge] {
        let n = n as usize;
        &self.node_corridors[self.node_start[n] as usize..self.node_start[n + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any cost, NaN and infinities included, comes back bit for bit
        /// from its code against any straight length, and the code's bytes
        /// are what postcard writes for it.
        #[test]
        fn leg_cost_codes_are_lossless(cost in any::<u32>(), straight in any::<u32>()) {
            let (cost, straight) = (f32::from_bits(cost), f32::from_bits(straight));
            let code = leg_cost_code(cost, straight);
            prop_assert_eq!(leg_cost_from_code(code, straight).to_bits(), cost.to_bits());
            prop_assert_eq!(u64::from(code_bytes(code)), stored_size(&code));
        }
    }

    /// A cost equal to its straight line takes one byte, where an `f32`
    /// takes four; one a little longer, three; an unreachable pair's
    /// infinite cost, five.
    #[test]
    fn a_straight_leg_cost_takes_one_byte() {
        let straight = Vec2::new(3.0, 1.0).distance(Vec2::new(40.5, 17.25));
        assert_eq!(code_bytes(leg_cost_code(straight, straight)), 1);
        assert_eq!(code_bytes(leg_cost_code(straight * 1.01, straight)), 3);
        assert_eq!(code_bytes(leg_cost_code(f32::INFINITY, straight)), 5);
    }
}
