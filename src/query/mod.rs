//! The runtime side: [`NavQuery`] answers path, locate, nearest-point and
//! raycast queries over a shared [`NavMesh`]. Never imports the bake.

use glam::Vec2;

use crate::error::QueryError;
use crate::geometry::{self, Aabb};
use crate::mesh::{NavMesh, RegionId};
mod batch;
mod follow;
mod group;
mod group_tree;
mod hierarchical;
mod schedule;
mod slots;

pub use batch::BatchQuery;
pub use follow::{FollowEvent, PathFollower, Steering};
pub use schedule::{Answer, PathScheduler, RequestId};

use crate::search::{ActiveLandmark, Between, PortalSearch, SearchContext, SearchOutcome, Via};

/// A query's goal: a point to resolve, or one resolved already (where it
/// snapped to, and its dense region).
#[derive(Debug, Clone, Copy)]
enum Goal {
    Point(Vec2),
    Resolved(Vec2, u32),
}

/// Both ends of a query, resolved: points and dense regions.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ends {
    start: Vec2,
    start_region: u32,
    goal: Vec2,
    goal_region: u32,
}

/// Default expansion budget of a [`NavQuery`]: enough for any path on a
/// 4096 x 4096 map's mesh; a game with a frame budget sets its own.
pub const DEFAULT_MAX_EXPANSIONS: u32 = 1 << 22;

/// What a query may use, and how to treat points just off the mesh.
///
/// Small and `Copy`: pass a different one per unit type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryFilter {
    /// Bit `k` set: regions of area kind `k` ([`NavMesh::areas`]) may not be entered.
    pub excluded_areas: u64,
    /// A start or goal off the mesh is moved to the nearest walkable point
    /// within this distance, world units (0 = never snap).
    pub snap_distance: f32,
    /// When the expansion budget runs out, answer with the path to the
    /// explored point nearest the goal ([`PathStatus::Partial`]) instead of
    /// [`QueryError::BudgetExhausted`].
    pub allow_partial: bool,
}

impl Default for QueryFilter {
    fn default() -> Self {
        QueryFilter {
            excluded_areas: 0,
            snap_distance: 0.0,
            allow_partial: true,
        }
    }
}

/// Whether a path reaches the goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathStatus {
    /// Ends at the goal.
    #[default]
    Complete,
    /// The search ran out of budget; the path ends at the explored point nearest the goal.
    Partial,
}

/// Which level of the hierarchy answered a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchLevel {
    /// Start and goal share a region: a straight line, no search.
    #[default]
    SameRegion,
    /// A* over portal crossings (L1): close ends, a mesh without hierarchy,
    /// a filter that excludes areas, or a query told not to use the hierarchy.
    Regions,
    /// Live legs and an A* over the nav-point graph (L2), stitched over cached corridors.
    NavPoints,
    /// Both ends are designer nav points: their cached corridor, no search at all.
    CachedCorridor,
}

/// Why a query was answered by the flat search (L1) rather than through
/// the hierarchy ([`NavQuery::last_fallback`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fallback {
    /// The mesh has no hierarchy: baked without one, or it would not pay.
    NoHierarchy,
    /// The query was told not to use it ([`NavQuery::set_use_hierarchy`]).
    HierarchyOff,
    /// The filter excludes areas, which the cached corridors cannot avoid.
    ExcludedAreas,
    /// Start and goal lie in one cluster or in two neighbouring ones: the
    /// flat search is the query there, by design.
    NearClusters,
    /// The start or the goal has no live leg to any nav node of its
    /// cluster (none there, or none it reaches inside the cluster).
    NoNavNodes,
    /// The search over the nav nodes found no route within the query's
    /// budget (or none: the ends are joined only through regions the
    /// clusters' tables do not connect).
    NoRoute,
    /// The route's legs and corridors did not join up into one corridor.
    BrokenStitch,
    /// A shorter path might pass through a part of the mesh the hierarchy
    /// leaves open (a hub region whose corridors would not pay): the
    /// hierarchy's path was longer than the way to that part and on.
    OpenZone,
}

/// A path: waypoints from start to goal, never leaving walkable space.
///
/// Two paths are equal when their waypoints, corridor, length, status and
/// level are, whichever copy of a mesh they were found on.
#[derive(Debug, Default)]
pub struct Path {
    waypoints: Vec<Vec2>,
    corridor: Vec<RegionId>,
    length: f32,
    status: PathStatus,
    level: SearchLevel,
    /// [`NavMesh::serial`] of the mesh the path was found on.
    mesh: u64,
}

impl Clone for Path {
    fn clone(&self) -> Path {
        let mut path = Path::default();
        path.clone_from(self);
        path
    }

    /// Reuses `self`'s buffers.
    fn clone_from(&mut self, source: &Path) {
        self.waypoints.clone_from(&source.waypoints);
        self.corridor.clone_from(&source.corridor);
        self.length = source.length;
        self.status = source.status;
        self.level = source.level;
        self.mesh = source.mesh;
    }
}

impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        self.waypoints == other.waypoints
            && self.corridor == other.corridor
            && self.length == other.length
            && self.status == other.status
            && self.level == other.level
    }
}

impl Path {
    /// Start, the corners the path wraps around, and the end.
    #[must_use]
    pub fn waypoints(&self) -> &[Vec2] {
        &self.waypoints
    }

    /// Regions the path passes through, in order.
    #[must_use]
    pub fn corridor(&self) -> &[RegionId] {
        &self.corridor
    }

    /// Euclidean length, the sum of the segments, world units.
    #[must_use]
    pub fn length(&self) -> f32 {
        self.length
    }

    /// Complete or partial.
    #[must_use]
    pub fn status(&self) -> PathStatus {
        self.status
    }

    /// The level of the hierarchy that answered.
    #[must_use]
    pub fn level(&self) -> SearchLevel {
        self.level
    }

    fn finish(&mut self, status: PathStatus) {
        self.status = status;
        self.length = self.waypoints.windows(2).map(|w| w[0].distance(w[1])).sum();
    }
}

/// Where a ray stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaycastHit {
    /// The point where the ray meets the wall.
    pub point: Vec2,
    /// Fraction of the segment travelled, 0..=1.
    pub t: f32,
    /// The wall segment that was hit.
    pub wall: [Vec2; 2],
    /// The region the ray was in when it hit.
    pub region: RegionId,
}

/// Per-thread query scratch: the A* context and buffers, reused across queries
/// so steady-state queries do not allocate.
#[derive(Debug, Clone)]
pub struct NavQuery {
    flat: PortalSearch,
    nodes: Vec<u32>,
    portals: Vec<[Vec2; 2]>,
    candidates: Vec<u32>,
    /// Dense regions of the corridor being built.
    regions: Vec<u32>,
    /// Per region: (stamp, position in `regions`) while a corridor is built.
    region_stamp: Vec<(u32, u32)>,
    stamp: u32,
    max_expansions: u32,
    use_hierarchy: bool,
    /// L2 search scratch: payload is how a nav node was reached ([`Via`]).
    l2: SearchContext<Via>,
    /// A group move's goal: its search, legs and tree of corridors.
    group: group::GroupGoalState,
    l2_nodes: Vec<u32>,
    /// The L2 route: nav nodes from the first to the last, each with the
    /// corridor it is reached by (the first by its leg).
    l2_route: Vec<(u32, u32)>,
    /// The legs of the query's start and of its goal.
    start_side: hierarchical::LegSet,
    goal_side: hierarchical::LegSet,
    /// Crossings of a stitched corridor, and a leg walked backwards.
    crossings: Vec<u32>,
    leg_buffer: Vec<u32>,
    /// Portal ends of a leg being pulled taut.
    leg_ends: Vec<[Vec2; 2]>,
    /// Per start leg: the cheapest table distance + goal leg, and that goal leg.
    partner: Vec<(f32, u32)>,
    /// The landmarks an L2 search reads.
    landmarks: Vec<ActiveLandmark>,
    /// Bit set of the clusters a stitched corridor passes through.
    route_clusters: Vec<u64>,
    /// A raycast's outward-facing edges of the region it is leaving.
    ray_edges: Vec<(usize, f64, f64)>,
    /// Crossings made around a vertex a ray passes exactly through.
    ray_crossings: Vec<u32>,
    /// Regions a surface move visited: (region, index of the one it was
    /// entered from, crossing it was entered by).
    visit: Vec<(u32, u32, u32)>,
    /// Arrival slots being grown or handed out.
    slots: slots::Slots,
    last_expansions: u32,
    /// Why the last query ran the flat search, if it did.
    last_fallback: Option<Fallback>,
}

impl Default for NavQuery {
    fn default() -> Self {
        NavQuery::new()
    }
}

impl NavQuery {
    /// A query object with the default budget ([`DEFAULT_MAX_EXPANSIONS`]).
    #[must_use]
    pub fn new() -> NavQuery {
        NavQuery {
            flat: PortalSearch::default(),
            nodes: Vec::new(),
            portals: Vec::new(),
            candidates: Vec::new(),
            regions: Vec::new(),
            region_stamp: Vec::new(),
            stamp: 0,
            max_expansions: DEFAULT_MAX_EXPANSIONS,
            use_hierarchy: true,
            l2: SearchContext::new(),
            group: group::GroupGoalState::default(),
            l2_nodes: Vec::new(),
            l2_route: Vec::new(),
            start_side: hierarchical::LegSet::default(),
            goal_side: hierarchical::LegSet::default(),
            crossings: Vec::new(),
            leg_buffer: Vec::new(),
            leg_ends: Vec::new(),
            partner: Vec::new(),
            landmarks: Vec::new(),
            route_clusters: Vec::new(),
            ray_edges: Vec::new(),
            ray_crossings: Vec::new(),
            visit: Vec::new(),
            slots: slots::Slots::default(),
            last_expansions: 0,
            last_fallback: None,
        }
    }

    /// Whether long queries may use the mesh's nav-point hierarchy (default
    /// true); false forces the region-level search, e.g. to compare the two.
    pub fn set_use_hierarchy(&mut self, on: bool) -> &mut Self {
        self.use_hierarchy = on;
        self
    }

    /// Sets the most nodes one search may expand (>= 1): funnels (states
    /// at portal crossings) in the flat search, nav nodes in L2.
    pub fn set_max_expansions(&mut self, budget: u32) -> &mut Self {
        self.max_expansions = budget.max(1);
        self
    }

    /// Nodes expanded by the last query's searches: portal-crossing states
    /// (L1) plus nav nodes (L2); 0 for a straight line, a cached corridor,
    /// or an L2 route looked up in the all-pairs table.
    #[must_use]
    pub fn last_expansions(&self) -> u32 {
        self.last_expansions
    }

    /// Why the last query was answered by the flat search rather than the
    /// hierarchy (also when the flat search then failed); `None` when it
    /// was not (the hierarchy answered it, or it needed no search: a
    /// straight line within one region, or an error before any search).
    /// The first reason that applies, in the order `HierarchyOff`,
    /// `ExcludedAreas`, then the hierarchy's own. After a group move, the
    /// reason of the unit answered last (units are answered in an order of
    /// their own, not the list's).
    ///
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Fallback, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]],
    ///     "obstacles": [[[15,15],[25,15],[25,25],[15,25]]]}"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// query.set_use_hierarchy(false);
    /// query.find_path(&mesh, vec2(2.0, 2.0), vec2(38.0, 38.0), &QueryFilter::default())?;
    /// assert_eq!(query.last_fallback(), Some(Fallback::HierarchyOff));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn last_fallback(&self) -> Option<Fallback> {
        self.last_fallback
    }

    /// Finds a path from `start` to `goal`.
    ///
    /// # Errors
    /// [`QueryError::NonFinite`] for NaN or infinite input,
    /// [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]) for points not on the mesh (after snapping, if
    /// the filter allows it), [`QueryError::Unreachable`] when the goal is on
    /// another island (answered at once from component ids) or behind
    /// excluded areas, [`QueryError::BudgetExhausted`] when the budget ran out
    /// and the filter does not allow partial paths.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter};
    ///
    /// // two rooms joined by a door in the wall at x = 10
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
    ///     "obstacles": [[[9,0],[11,0],[11,4],[9,4]], [[9,6],[11,6],[11,10],[9,10]]]
    /// }"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new(); // one per thread, reused
    /// let filter = QueryFilter::default();
    /// let path = query.find_path(&mesh, vec2(2., 1.), vec2(18., 1.), &filter)?;
    /// // through the door, wrapping its corners
    /// assert_eq!(
    ///     path.waypoints(),
    ///     &[vec2(2., 1.), vec2(9., 4.), vec2(11., 4.), vec2(18., 1.)]
    /// );
    /// assert!((path.length() - (2.0 * 58f32.sqrt() + 2.0)).abs() < 1e-4);
    /// // inside the wall: a typed error, not a panic
    /// let error = query.find_path(&mesh, vec2(10., 2.), vec2(18., 1.), &filter);
    /// assert!(matches!(error, Err(QueryError::OffMesh { which: "start", .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find_path(
        &mut self,
        mesh: &NavMesh,
        start: Vec2,
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Result<Path, QueryError> {
        let mut path = Path::default();
        self.find_path_into(mesh, start, goal, filter, &mut path)?;
        Ok(path)
    }

    /// As [`NavQuery::find_path`], writing into `path` to reuse its buffers.
    ///
    /// # Errors
    /// As [`NavQuery::find_path`].
    pub fn find_path_into(
        &mut self,
        mesh: &NavMesh,
        start: Vec2,
        goal: Vec2,
        filter: &QueryFilter,
        path: &mut Path,
    ) -> Result<(), QueryError> {
        let Some(ends) = self.prepare(mesh, start, goal, filter, path)? else {
            return Ok(());
        };
        self.answer(mesh, &ends, filter, path)
    }

    /// What a query does once [`NavQuery::prepare`] has resolved its ends:
    /// the hierarchy when it serves them, else the flat search.
    fn answer(
        &mut self,
        mesh: &NavMesh,
        ends: &Ends,
        filter: &QueryFilter,
        path: &mut Path,
    ) -> Result<(), QueryError> {
        let hierarchical = if !self.use_hierarchy {
            Err(Fallback::HierarchyOff)
        } else if filter.excluded_areas != 0 {
            Err(Fallback::ExcludedAreas)
        } else {
            self.try_hierarchical(mesh, ends, path)
        };
        if let Err(why) = hierarchical {
            self.last_fallback = Some(why);
            self.run_flat(mesh, ends, filter, path, false, self.max_expansions)?;
        }
        Ok(())
    }

    /// What every query does first: resolves both ends, answers
    /// `Unreachable` from component ids and a straight line within one
    /// region (`Ok(None)`, `path` filled), and otherwise clears `path` and
    /// hands back the resolved ends.
    fn prepare(
        &mut self,
        mesh: &NavMesh,
        start: Vec2,
        goal: Vec2,
        filter: &QueryFilter,
        path: &mut Path,
    ) -> Result<Option<Ends>, QueryError> {
        self.prepare_to(mesh, start, Goal::Point(goal), filter, path)
    }

    /// [`NavQuery::prepare`] towards a goal that may be resolved already
    /// (a group move's, the same for every unit).
    fn prepare_to(
        &mut self,
        mesh: &NavMesh,
        start: Vec2,
        goal: Goal,
        filter: &QueryFilter,
        path: &mut Path,
    ) -> Result<Option<Ends>, QueryError> {
        self.last_expansions = 0;
        self.last_fallback = None;
        let (start, start_region) = self.resolve(mesh, start, "start", filter.snap_distance)?;
        let (goal, goal_region) = match goal {
            Goal::Point(p) => self.resolve(mesh, p, "goal", filter.snap_distance)?,
            Goal::Resolved(at, region) => (at, region),
        };
        let t = &mesh.tables;
        if t.region_component[start_region as usize] != t.region_component[goal_region as usize] {
            return Err(QueryError::Unreachable);
        }
        path.waypoints.clear();
        path.corridor.clear();
        path.mesh = mesh.serial;
        if start_region == goal_region {
            path.waypoints.push(start);
            if goal != start {
                path.waypoints.push(goal);
            }
            path.corridor.push(t.region_keys[start_region as usize]);
            path.finish(PathStatus::Complete);
            path.level = SearchLevel::SameRegion;
            return Ok(None);
        }
        Ok(Some(Ends {
            start,
            start_region,
            goal,
            goal_region,
        }))
    }

    /// Runs the flat search between `ends` (or resumes the one in
    /// `self.ctx`) until it has made `budget` expansions in all; on an
    /// answer, fills `path`. `Ok(false)`: stopped by `budget` below the
    /// query's own budget, so it can be resumed.
    fn run_flat(
        &mut self,
        mesh: &NavMesh,
        ends: &Ends,
        filter: &QueryFilter,
        path: &mut Path,
        resume: bool,
        budget: u32,
    ) -> Result<bool, QueryError> {
        let between = Between {
            start: ends.start,
            start_region: ends.start_region,
            goal: ends.goal,
            goal_region: ends.goal_region,
            excluded_areas: filter.excluded_areas,
        };
        let budget = budget.min(self.max_expansions);
        let before = if resume { self.flat.expansions() } else { 0 };
        let outcome = self.flat.run(&mesh.tables, &between, budget, resume);
        self.last_expansions += self.flat.expansions() - before;
        let (end_node, end, status) = match outcome {
            SearchOutcome::Found(node) => (node, ends.goal, PathStatus::Complete),
            SearchOutcome::Exhausted => return Err(QueryError::Unreachable),
            SearchOutcome::OutOfBudget(_) if budget < self.max_expansions => return Ok(false),
            SearchOutcome::OutOfBudget(best) => {
                if !filter.allow_partial {
                    return Err(QueryError::BudgetExhausted {
                        budget: self.max_expansions,
                    });
                }
                (
                    best,
                    self.flat.at(best).unwrap_or(ends.start),
                    PathStatus::Partial,
                )
            }
        };
        self.flat
            .crossings(end_node, &mut self.nodes, &mut self.crossings);
        path.level = SearchLevel::Regions;
        self.path_along_crossings(mesh, ends.start_region, ends.start, end, status, path);
        Ok(true)
    }

    /// Fills `path` from the crossings in `self.crossings`, made from
    /// `start_region`: the corridor without loops, and the funnel from `start`
    /// to `end` across it.
    fn path_along_crossings(
        &mut self,
        mesh: &NavMesh,
        start_region: u32,
        start: Vec2,
        end: Vec2,
        status: PathStatus,
        path: &mut Path,
    ) {
        self.corridor_without_loops(mesh, start_region);
        path.corridor.clear();
        path.corridor.extend(
            self.regions
                .iter()
                .map(|&r| mesh.tables.region_keys[r as usize]),
        );
        geometry::pull(start, end, &self.portals, &mut path.waypoints);
        path.finish(status);
    }

    /// The point on the mesh nearest to `p` within `max_distance` (world
    /// units), with its region; `p` itself when it is on the mesh. `None`
    /// when nothing walkable is that close, or for a non-finite `p` or a
    /// negative or NaN `max_distance`.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery};
    ///
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
    ///     "obstacles": [[[8,2],[12,2],[12,8],[8,8]]]
    /// }"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// // a click inside the obstacle snaps to its nearest face
    /// let (p, region) = query.nearest_point(&mesh, vec2(8.5, 5.), 2.).expect("within 2");
    /// assert_eq!(p, vec2(8., 5.));
    /// assert_eq!(mesh.locate(p), Some(region));
    /// // too far from anything walkable
    /// assert_eq!(query.nearest_point(&mesh, vec2(40., 5.), 2.), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn nearest_point(
        &mut self,
        mesh: &NavMesh,
        p: Vec2,
        max_distance: f32,
    ) -> Option<(Vec2, RegionId)> {
        if !p.is_finite() || max_distance.is_nan() || max_distance < 0.0 {
            return None;
        }
        if let Some(r) = mesh.locate(p) {
            return Some((p, r));
        }
        let max_distance = max_distance.min(mesh.bounds().size().length() + 1.0);
        let query_box = Aabb {
            min: p - Vec2::splat(max_distance),
            max: p + Vec2::splat(max_distance),
        };
        if mesh.bounds().is_empty()
            || query_box.max.cmplt(mesh.bounds().min).any()
            || query_box.min.cmpgt(mesh.bounds().max).any()
        {
            return None;
        }
        mesh.locator
            .candidates_in(&mesh.tables, query_box, &mut self.candidates);
        let mut best: Option<(f32, Vec2, u32)> = None;
        for &r in &self.candidates {
            let v = mesh.tables.polygon(r);
            for k in 0..v.len() {
                let q = geometry::closest_on_segment(v[k], v[(k + 1) % v.len()], p);
                let d = q.distance_squared(p);
                if best.is_none_or(|b| d < b.0 || (d == b.0 && r < b.2)) {
                    best = Some((d, q, r));
                }
            }
        }
        let (d, q, r) = best?;
        (d <= max_distance * max_distance).then(|| (q, mesh.tables.region_keys[r as usize]))
    }

    /// Walks the segment `from -> to` across regions. `Ok(None)` when the whole
    /// segment is walkable (line of sight), otherwise the first wall it hits.
    ///
    /// The segment may run along walls and graze their corners; it is blocked
    /// where it would enter an obstacle or squeeze through a point where two
    /// obstacles touch. An end point exactly on a wall is still seen. The
    /// walls are the mesh's, whose corners the bake put on its snapping
    /// grid (ARCHITECTURE.md, "The bake, and what keeps it exact"): a ray
    /// passing one of the level's corners closer than that grid's step may
    /// stop on it or pass it.
    ///
    /// # Errors
    /// [`QueryError::NonFinite`] or [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]) for a bad `from`,
    /// [`QueryError::NonFinite`] for a bad `to`.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery};
    ///
    /// // a 20 x 10 room with a wall from the floor up to y = 7
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
    ///     "obstacles": [[[8,0],[12,0],[12,7],[8,7]]]
    /// }"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// // over the wall: clear
    /// assert_eq!(query.raycast(&mesh, vec2(2., 9.), vec2(18., 9.))?, None);
    /// // through it: stopped on its near face
    /// let hit = query.raycast(&mesh, vec2(2., 2.), vec2(18., 2.))?.expect("the wall");
    /// assert_eq!(hit.point, vec2(8., 2.));
    /// assert_eq!(hit.t, 6. / 16.);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn raycast(
        &mut self,
        mesh: &NavMesh,
        from: Vec2,
        to: Vec2,
    ) -> Result<Option<RaycastHit>, QueryError> {
        let (from, region) = self.resolve(mesh, from, "start", 0.0)?;
        if !to.is_finite() {
            return Err(QueryError::NonFinite {
                which: "goal",
                x: to.x,
                y: to.y,
            });
        }
        Ok(self.walk_segment(mesh, region, from, to, false).err())
    }

    /// Walks the segment `from -> to` from dense `region` (which holds
    /// `from`) across regions: the region holding `to`, or the first wall
    /// in the way. With `record`, the crossings made are appended to
    /// `self.crossings`.
    pub(crate) fn walk_segment(
        &mut self,
        mesh: &NavMesh,
        mut region: u32,
        from: Vec2,
        to: Vec2,
        record: bool,
    ) -> Result<u32, RaycastHit> {
        let (o, d) = (from.as_dvec2(), to.as_dvec2() - from.as_dvec2());
        let mut t_in = 0.0f64;
        // Each step crosses a portal outwards along the ray, at a ray
        // parameter that never decreases: within one region that rules out
        // coming back. The bound only guards against a malformed mesh.
        for _ in 0..=mesh.region_count() {
            let key = mesh.tables.region_keys[region as usize];
            let v = mesh.tables.polygon(region);
            let Some(exit) = exit_point(v, o, d, &mut self.ray_edges) else {
                return Ok(region);
            };
            if exit.t >= 1.0 {
                return Ok(region);
            }
            let t = exit.t.max(t_in);
            let portals = &mesh.data.regions[key].portals;
            let next = match exit.at {
                ExitAt::Edge(k) => match portals[k].and_then(|pid| crossing(mesh, pid, region)) {
                    Some((c, r)) => {
                        if record {
                            self.crossings.push(c);
                        }
                        Ok(r)
                    }
                    None => Err(((o + d * t).as_vec2(), [v[k], v[(k + 1) % v.len()]])),
                },
                ExitAt::Vertex(m) => {
                    let around = around_vertex(mesh, region, m, d, &mut self.ray_crossings);
                    if record && around.is_ok() {
                        self.crossings.extend_from_slice(&self.ray_crossings);
                    }
                    around.map_err(|wall| (v[m], wall))
                }
            };
            match next {
                Ok(r) => {
                    region = r;
                    t_in = t;
                }
                Err((point, wall)) => {
                    return Err(RaycastHit {
                        point,
                        // within 0..=1, and +0 rather than -0 for a ray
                        // stopped where it starts (adding 0 turns -0 into +0)
                        t: (t as f32).clamp(0.0, 1.0) + 0.0,
                        wall,
                        region: key,
                    });
                }
            }
        }
        Ok(region)
    }

    /// Turns the crossings in `self.crossings`, made from `start_region`,
    /// into the corridor (`self.regions`) and its portals (`self.portals`,
    /// portal `i` between regions `i` and `i + 1`), cutting out loops: the
    /// search's estimates can make a detour that leaves a region and comes
    /// back look cheap, stitched pieces can overlap at their seams, and
    /// because regions are convex the path can always go straight from the
    /// first visit to the last exit.
    ///
    /// Loops are cut walking back from the goal (a region met again drops
    /// everything met since its first meeting), so a corridor's end towards
    /// the goal does not depend on where it starts: a group move's tree of
    /// corridors from its goal (`query/group_tree.rs`) cuts the same loops.
    fn corridor_without_loops(&mut self, mesh: &NavMesh, start_region: u32) {
        let t = &mesh.tables;
        let n = self.crossings.len();
        let stamp = self.fresh_stamp(mesh.region_count());
        // filled from the back: the corridor kept so far is `regions[w..]`,
        // with portal `i` (out of region `i`) in `portals[i]`, and a region's
        // stamp holds its place there
        self.regions.clear();
        self.regions.resize(n + 1, 0);
        self.portals.clear();
        self.portals.resize(n, [Vec2::ZERO; 2]);
        let (crossings, regions, portals) = (
            &self.crossings[..],
            &mut self.regions[..],
            &mut self.portals[..],
        );
        let stamps = &mut self.region_stamp[..];
        let goal_region = crossings.last().map_or(start_region, |&c| t.entered(c));
        regions[n] = goal_region;
        stamps[goal_region as usize] = (stamp, n as u32);
        let mut w = n;
        for i in (0..n).rev() {
            // walked backwards, crossing `i` enters the region it leaves forwards
            let r = match i.checked_sub(1) {
                Some(before) => t.entered(crossings[before]),
                None => start_region,
            };
            let (seen, at) = stamps[r as usize];
            let at = at as usize;
            if seen == stamp && at >= w && regions[at] == r {
                // back in a region already visited: drop the loop
                w = at;
                continue;
            }
            w -= 1;
            portals[w] = t.crossing_ends(crossings[i]);
            regions[w] = r;
            stamps[r as usize] = (stamp, w as u32);
        }
        self.regions.drain(..w);
        self.portals.drain(..w);
    }

    fn resolve(
        &mut self,
        mesh: &NavMesh,
        p: Vec2,
        which: &'static str,
        snap: f32,
    ) -> Result<(Vec2, u32), QueryError> {
        if !p.is_finite() {
            return Err(QueryError::NonFinite {
                which,
                x: p.x,
                y: p.y,
            });
        }
        if let Some(r) = mesh.locator.locate(&mesh.tables, p) {
            return Ok((p, r));
        }
        if snap > 0.0 {
            if let Some((q, key)) = self.nearest_point(mesh, p, snap) {
                return Ok((q, mesh.data.regions[key].index));
            }
        }
        let radius = mesh.data.agent_radius;
        if radius > 0.0 {
            return Err(QueryError::NoRoom {
                which,
                point: p,
                radius,
            });
        }
        Err(QueryError::OffMesh { which, point: p })
    }
}

/// Where a ray `o + t d` leaves a convex polygon.
#[derive(Debug, Clone, Copy)]
struct Exit {
    /// Ray parameter of the exit point.
    t: f64,
    at: ExitAt,
}

#[derive(Debug, Clone, Copy)]
enum ExitAt {
    /// Through the inside of edge `v[k] -> v[k + 1]`.
    Edge(usize),
    /// Exactly through vertex `v[m]`.
    Vertex(usize),
}

/// The crossing out of `region` through portal `pid` and the region on its
/// other side (dense indices); `None` if the portal does not touch `region`.
fn crossing(mesh: &NavMesh, pid: crate::mesh::PortalId, region: u32) -> Option<(u32, u32)> {
    let portal = mesh.data.portals.get(pid)?;
    mesh.tables.crossing_out_of(portal.index, region)
}

/// Relative tolerance on ray and edge parameters. Coordinates are f32 and
/// the parameters are computed in f64, so two edges on one line give the
/// same ray parameter, and a ray through a vertex meets the vertex, up to
/// rounding far below this.
const SAME_PARAMETER: f64 = 1e-9;

/// Where the ray `o + t d` leaves the convex, counter-clockwise polygon `v`,
/// or `None` when it never does (`d` is zero).
///
/// The exit point lies on the first line among the outward-facing edges'.
/// Several edges can share that line (regions keep collinear vertices where
/// portals end), so the exit is told by where on the line the point falls:
/// inside one edge, or exactly on a vertex.
fn exit_point(
    v: &[Vec2],
    o: glam::DVec2,
    d: glam::DVec2,
    outward: &mut Vec<(usize, f64, f64)>,
) -> Option<Exit> {
    let n = v.len();
    // per outward-facing edge: (edge, ray parameter, where along the edge
    // the ray's line meets it: 0..=1 on it); parallel edges and edges
    // facing into the region are left out
    outward.clear();
    for k in 0..n {
        let (a, b) = (v[k].as_dvec2(), v[(k + 1) % n].as_dvec2());
        let e = b - a;
        let denom = d.perp_dot(e);
        if denom > 0.0 {
            let w = a - o;
            outward.push((k, w.perp_dot(e) / denom, w.perp_dot(d) / denom));
        }
    }
    let t = outward.iter().map(|&(_, t, _)| t).min_by(f64::total_cmp)?;
    let tol = SAME_PARAMETER * t.abs().max(1.0);
    // among the edges on that line (or through that vertex): the one whose
    // inside holds the exit point, else the one ending nearest to it
    let mut nearest: Option<(f64, usize, f64)> = None;
    for &(k, tk, s) in outward.iter() {
        if tk > t + tol {
            continue;
        }
        if s > SAME_PARAMETER && s < 1.0 - SAME_PARAMETER {
            return Some(Exit {
                t,
                at: ExitAt::Edge(k),
            });
        }
        let off = s.abs().min((s - 1.0).abs());
        if nearest.is_none_or(|(best, _, _)| off < best) {
            nearest = Some((off, k, s));
        }
    }
    let (_, k, s) = nearest.expect("the edge that gave t");
    let m = if s < 0.5 { k } else { (k + 1) % n };
    Some(Exit {
        t,
        at: ExitAt::Vertex(m),
    })
}

/// The region a ray leaving `region` exactly through its vertex `m` goes on
/// into, or the wall that stops it there: it enters an obstacle at the
/// vertex, or squeezes through a point where two obstacles touch.
///
/// The regions around the vertex are walked across portals, both ways round
/// from `region`, until one holds the ray's direction `d` in its corner at
/// the vertex (a ray along an edge counts as inside). A wall met first on
/// one side closes that side; the wall reported is the first side's.
fn around_vertex(
    mesh: &NavMesh,
    region: u32,
    m: usize,
    d: glam::DVec2,
    crossings: &mut Vec<u32>,
) -> Result<u32, [Vec2; 2]> {
    let t = &mesh.tables;
    let corner = t.polygon(region)[m];
    let c = corner.as_dvec2();
    let mut first_wall = None;
    for forward in [false, true] {
        let (mut r, mut at) = (region, m);
        crossings.clear();
        for _ in 0..mesh.region_count() {
            let v = t.polygon(r);
            let n = v.len();
            // forward: leave across the edge out of the vertex, otherwise
            // across the edge into it
            let k = if forward { at } else { (at + n - 1) % n };
            let key = t.region_keys[r as usize];
            let Some(pid) = mesh.data.regions[key].portals[k] else {
                first_wall.get_or_insert([v[k], v[(k + 1) % n]]);
                break;
            };
            let Some((x, beyond)) = crossing(mesh, pid, r) else {
                break; // not a conforming mesh
            };
            crossings.push(x);
            r = beyond;
            let v = t.polygon(r);
            let n = v.len();
            let Some(j) = v.iter().position(|&p| p == corner) else {
                break; // not a conforming mesh
            };
            let (before, after) = (v[(j + n - 1) % n].as_dvec2(), v[(j + 1) % n].as_dvec2());
            if (c - before).perp_dot(d) >= 0.0 && (after - c).perp_dot(d) >= 0.0 {
                return Ok(r);
            }
            at = j;
        }
    }
    crossings.clear();
    let v = t.polygon(region);
    Err(first_wall.unwrap_or([v[m], v[(m + 1) % v.len()]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks of random crossings over a real mesh, going back and round
    /// often: the corridor without loops is what cutting every loop from
    /// the goal back gives (a list walked from the goal, cut after a
    /// region's first place when the walk meets it again), written out
    /// slowly; and it is a corridor: a region once, each portal between its
    /// two regions, from the start region to the goal's.
    #[test]
    fn a_corridor_without_loops_cuts_every_loop_from_the_goal_back() {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        let config = crate::BakeConfig {
            corridors: false,
            ..crate::BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).expect("bakes");
        let t = &mesh.tables;
        let mut query = NavQuery::new();
        let mut rng = crate::test_data::Xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = |k: usize| rng.below(k as u64) as usize;
        let mut looped = 0;
        for _ in 0..2_000 {
            let start = next(mesh.region_count()) as u32;
            query.crossings.clear();
            let mut at = start;
            for _ in 0..next(60) {
                let portals = t.portals_of(at);
                if portals.is_empty() {
                    break;
                }
                let p = portals[next(portals.len())];
                let (crossing, beyond) = t.crossing_out_of(p, at).expect("its portal");
                query.crossings.push(crossing);
                at = beyond;
            }
            // the oracle: the walk's regions from the goal back, each with
            // the crossing it was left by towards the goal
            let walk: Vec<u32> = std::iter::once(start)
                .chain(query.crossings.iter().map(|&c| t.entered(c)))
                .collect();
            let mut kept: Vec<(u32, Option<u32>)> = Vec::new();
            for (k, &r) in walk.iter().enumerate().rev() {
                match kept.iter().position(|e| e.0 == r) {
                    Some(p) => kept.truncate(p + 1),
                    None => kept.push((r, query.crossings.get(k).copied())),
                }
            }
            kept.reverse();
            query.corridor_without_loops(&mesh, start);
            let regions: Vec<u32> = kept.iter().map(|e| e.0).collect();
            assert_eq!(query.regions, regions, "walk {walk:?}");
            let portals: Vec<[Vec2; 2]> = kept
                .iter()
                .filter_map(|e| e.1.map(|x| t.crossing_ends(x)))
                .collect();
            assert_eq!(query.portals, portals, "walk {walk:?}");
            looped += usize::from(kept.len() < walk.len());
            for (i, pair) in query.regions.windows(2).enumerate() {
                assert!(
                    t.portals_of(pair[0]).iter().any(|&p| {
                        t.crossing_out_of(p, pair[0]).is_some_and(|(x, b)| {
                            b == pair[1] && t.crossing_ends(x) == query.portals[i]
                        })
                    }),
                    "portal {i} of {walk:?}"
                );
            }
        }
        assert!(looped > 500, "{looped} walks with loops");
    }
}
