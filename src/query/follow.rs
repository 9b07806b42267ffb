//! Moving along the surface, and following a path tick by tick.
//!
//! [`NavQuery::move_along`] clamps a move to walkable space the way Detour's
//! `moveAlongSurface` does: a breadth-first walk over the regions a circle
//! around the move touches, answering the move's end if one of them holds
//! it and otherwise the point of their walls nearest to it (a unit slides
//! along the wall it runs into).
//!
//! [`PathFollower`] keeps one unit's corridor (in the spirit of Detour's
//! `dtPathCorridor`): the regions from the unit's own to the goal's and the
//! portals between them. Each tick the game feeds the unit's position; the
//! follower drops the regions the unit has left, joins it back to the
//! corridor when it strayed (a skip to the corridor region it landed in,
//! else searches with a small budget to the goal and to a corridor region a
//! few ahead, and only then a full replan), and pulls
//! the next few corners taut from where it stands. When the mesh is
//! replaced (a runtime edit), a follower whose corridor's regions the edit
//! left alone only renumbers them; otherwise it walks its remaining path on
//! the new mesh, keeps the path if the walk is clear and replans only if
//! something now stands in the way.

use std::collections::VecDeque;

use glam::Vec2;

use super::{NavQuery, Path, PathStatus, QueryFilter};
use crate::error::QueryError;
use crate::geometry;
use crate::mesh::{NavMesh, RegionId};

/// Marks "no parent" in [`NavQuery`]'s surface-walk list.
const NONE: u32 = u32::MAX;

/// Slack of the follower's point-in-region tests, world units: the point
/// locator's, so a point on a portal counts as in both regions.
const IN_REGION_EPS: f32 = crate::mesh::locator::LOCATE_EPS;

/// Regions ahead of the unit (its own included) the follower looks in for
/// it each tick; a strayed unit is joined back to the last of them.
const WINDOW: usize = 8;

/// Expansion budget of the flat search that joins a strayed unit back to
/// its corridor before the follower replans with the whole budget.
const LOCAL_BUDGET: u32 = 256;

impl NavQuery {
    /// Moves from `from` towards `to` along walkable space, as a unit
    /// sliding along the walls it runs into: `to` when a walk over the
    /// regions around the move reaches it, otherwise the reachable wall
    /// point nearest to `to`; with the region the move ends in.
    ///
    /// The walk visits the regions a circle through `from` and `to` touches
    /// and that can be reached from `from`'s region without leaving it, so
    /// its cost grows with the length of the move (a unit's move per tick is
    /// short). Regions of area kinds the filter excludes are walls.
    ///
    /// # Errors
    /// [`QueryError::NonFinite`] for NaN or infinite input,
    /// [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]) when `from` is not on the mesh (after
    /// snapping, if the filter allows it).
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// // a 20 x 10 room with a wall from the floor up to y = 7
    /// let level = Level::from_json_str(r#"{
    ///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
    ///     "obstacles": [[[8,0],[12,0],[12,7],[8,7]]]
    /// }"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// let filter = QueryFilter::default();
    /// // a free move ends where it was asked to
    /// let (p, _) = query.move_along(&mesh, vec2(2., 9.), vec2(5., 8.), &filter)?;
    /// assert_eq!(p, vec2(5., 8.));
    /// // into the wall: stopped on its face, as near the target as it gets
    /// let (p, region) = query.move_along(&mesh, vec2(6., 2.), vec2(10., 3.), &filter)?;
    /// assert_eq!(p, vec2(8., 3.));
    /// assert_eq!(mesh.locate(p), Some(region));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn move_along(
        &mut self,
        mesh: &NavMesh,
        from: Vec2,
        to: Vec2,
        filter: &QueryFilter,
    ) -> Result<(Vec2, RegionId), QueryError> {
        let (from, region) = self.resolve(mesh, from, "start", filter.snap_distance)?;
        if !to.is_finite() {
            return Err(QueryError::NonFinite {
                which: "goal",
                x: to.x,
                y: to.y,
            });
        }
        let (p, end) = self.surface_walk(mesh, from, region, to, filter.excluded_areas);
        Ok((
            p,
            mesh.tables.region_keys[self.visit[end as usize].0 as usize],
        ))
    }

    /// The walk behind [`NavQuery::move_along`] from `from` in dense
    /// `region`: the point reached and the entry of `self.visit` (region,
    /// parent entry, crossing it was entered by) it ends in. Entry 0 is
    /// `region`; following parents from the end leads back to it.
    pub(crate) fn surface_walk(
        &mut self,
        mesh: &NavMesh,
        from: Vec2,
        region: u32,
        to: Vec2,
        excluded_areas: u64,
    ) -> (Vec2, u32) {
        let t = &mesh.tables;
        let stamp = self.fresh_stamp(mesh.region_count());
        let center = (from + to) * 0.5;
        let radius = from.distance(to) * 0.5 + IN_REGION_EPS;
        let radius2 = radius * radius;
        self.visit.clear();
        self.visit.push((region, NONE, NONE));
        self.region_stamp[region as usize] = (stamp, 0);
        let mut best = (f32::INFINITY, from, 0u32);
        let mut i = 0;
        while i < self.visit.len() {
            let r = self.visit[i].0;
            let v = t.polygon(r);
            if geometry::convex_contains(v, to, 0.0) {
                return (to, i as u32);
            }
            let key = t.region_keys[r as usize];
            for (k, portal) in mesh.data.regions[key].portals.iter().enumerate() {
                let (a, b) = (v[k], v[(k + 1) % v.len()]);
                let next = portal
                    .and_then(|pid| super::crossing(mesh, pid, r))
                    .filter(|&(_, beyond)| t.allowed(beyond, excluded_areas));
                match next {
                    Some((crossing, beyond)) => {
                        if self.region_stamp[beyond as usize].0 == stamp
                            || geometry::closest_on_segment(a, b, center).distance_squared(center)
                                > radius2
                        {
                            continue;
                        }
                        self.region_stamp[beyond as usize] = (stamp, self.visit.len() as u32);
                        self.visit.push((beyond, i as u32, crossing));
                    }
                    None => {
                        let q = geometry::closest_on_segment(a, b, to);
                        let d = q.distance_squared(to);
                        if d < best.0 {
                            best = (d, q, i as u32);
                        }
                    }
                }
            }
            i += 1;
        }
        (best.1, best.2)
    }

    /// A stamp for `self.region_stamp` that no region holds yet.
    pub(crate) fn fresh_stamp(&mut self, regions: usize) -> u32 {
        if self.region_stamp.len() < regions {
            self.region_stamp.resize(regions, (0, 0));
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.region_stamp.fill((0, 0));
            self.stamp = 1;
        }
        self.stamp
    }
}

/// What a [`PathFollower`] had to do to answer a tick, from the least work
/// to the most (a tick that did several reports the last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum FollowEvent {
    /// The unit was on its corridor; at most the regions it left were dropped.
    #[default]
    Followed,
    /// The unit had left its corridor and was joined back to it by a local
    /// walk or a small search.
    Recovered,
    /// The mesh was replaced (a runtime edit) and the rest of the path is
    /// still clear on the new one: the path was kept.
    Rebound,
    /// A full search from the unit to the goal: the local repair failed, the
    /// goal moved out of reach of a local walk, or an edit blocked the path.
    Replanned,
}

/// A follower's answer for one tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steering {
    /// Where the follower holds the unit to be (the position it was given,
    /// or the point it was snapped or clamped to).
    pub position: Vec2,
    /// The next corner of the path pulled taut from `position` (the goal on
    /// the last stretch): steer towards it.
    pub target: Vec2,
    /// The unit stands on the goal (within the follower's arrival tolerance).
    pub arrived: bool,
    /// What the follower had to do this tick.
    pub event: FollowEvent,
}

/// Follows one unit's path tick by tick (see the module docs): the game
/// feeds the unit's position each tick and steers towards the target it is
/// given; the corridor is repaired locally when the unit strays, cheaply
/// when the goal moves, and the path is replanned only when that fails or
/// an edit blocks it.
///
/// # Example
/// ```
/// use glam::vec2;
/// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, PathFollower, QueryFilter};
///
/// // two rooms joined by a door in the wall at x = 10
/// let level = Level::from_json_str(r#"{
///     "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
///     "obstacles": [[[9,0],[11,0],[11,4],[9,4]], [[9,6],[11,6],[11,10],[9,10]]]
/// }"#)?;
/// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
/// let mut query = NavQuery::new();
/// let mut unit = PathFollower::new();
/// unit.plan(&mesh, &mut query, vec2(2., 1.), vec2(18., 1.), &QueryFilter::default())?;
/// let mut steering = unit.update(&mesh, &mut query, vec2(2., 1.))?;
/// assert_eq!(steering.target, vec2(9., 4.)); // the door's near corner
/// let mut ticks = 0;
/// while !steering.arrived {
///     // a unit walking 0.5 a tick straight at its target
///     let to_target = steering.target - steering.position;
///     let step = to_target.clamp_length_max(0.5);
///     steering = unit.move_position(&mesh, &mut query, steering.position + step)?;
///     ticks += 1;
/// }
/// assert_eq!(steering.position, vec2(18., 1.));
/// assert!(ticks <= 40);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct PathFollower {
    /// [`NavMesh::serial`] of the mesh `regions` indexes.
    serial: u64,
    filter: QueryFilter,
    position: Vec2,
    goal: Vec2,
    /// Where the corridor ends: the goal, or where a partial path's search stopped.
    end: Vec2,
    status: PathStatus,
    /// Dense regions from the unit's to the goal's.
    regions: VecDeque<u32>,
    /// `[left, right]` of the portal between `regions[i]` and `regions[i + 1]`.
    portals: VecDeque<[Vec2; 2]>,
    /// The next corners from `position`, at most `lookahead`, the goal last
    /// when it is among them.
    corners: Vec<Vec2>,
    lookahead: usize,
    arrival: f32,
    replans: u32,
    recoveries: u32,
    /// Scratch: the remaining path, and regions of a repair.
    scratch_points: Vec<Vec2>,
    scratch_regions: Vec<(u32, [Vec2; 2])>,
}

impl Default for PathFollower {
    fn default() -> Self {
        PathFollower::new()
    }
}

impl PathFollower {
    /// A follower with no path, looking 4 corners ahead, arriving within
    /// 0.001 world units of the goal.
    #[must_use]
    pub fn new() -> PathFollower {
        PathFollower {
            serial: 0,
            filter: QueryFilter::default(),
            position: Vec2::ZERO,
            goal: Vec2::ZERO,
            end: Vec2::ZERO,
            status: PathStatus::Complete,
            regions: VecDeque::new(),
            portals: VecDeque::new(),
            corners: Vec::new(),
            lookahead: 4,
            arrival: 1e-3,
            replans: 0,
            recoveries: 0,
            scratch_points: Vec::new(),
            scratch_regions: Vec::new(),
        }
    }

    /// Sets how many corners ahead [`PathFollower::corners`] holds (at least 1).
    pub fn set_lookahead(&mut self, corners: usize) -> &mut Self {
        self.lookahead = corners.max(1);
        self
    }

    /// Sets how near the goal counts as arrived, world units (at least 0).
    pub fn set_arrival_tolerance(&mut self, distance: f32) -> &mut Self {
        self.arrival = if distance.is_finite() {
            distance.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// Plans a path from `start` to `goal` and follows it from now on; the
    /// filter is kept for later repairs and replans. On error the follower
    /// is left as it was.
    ///
    /// # Errors
    /// As [`NavQuery::find_path`].
    pub fn plan(
        &mut self,
        mesh: &NavMesh,
        query: &mut NavQuery,
        start: Vec2,
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Result<PathStatus, QueryError> {
        let path = query.find_path(mesh, start, goal, filter)?;
        self.follow(mesh, &path, goal, filter)?;
        self.shortcut(mesh, query);
        Ok(path.status())
    }

    /// Follows `path`, found on `mesh` towards `goal` (for a partial path the
    /// goal asked for, which a replan will aim at); the filter is kept for
    /// repairs and replans. On error the follower is left as it was.
    ///
    /// # Errors
    /// [`QueryError::StalePath`] when the path was found on another mesh
    /// (or a copy of this one made before an edit) or is empty;
    /// [`QueryError::NonFinite`] for a bad goal.
    pub fn follow(
        &mut self,
        mesh: &NavMesh,
        path: &Path,
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Result<(), QueryError> {
        if !goal.is_finite() {
            return Err(QueryError::NonFinite {
                which: "goal",
                x: goal.x,
                y: goal.y,
            });
        }
        let (Some(&start), Some(&end)) = (path.waypoints().first(), path.waypoints().last()) else {
            return Err(QueryError::StalePath);
        };
        if path.mesh != mesh.serial {
            return Err(QueryError::StalePath);
        }
        self.scratch_regions.clear();
        let mut previous: Option<u32> = None;
        for &key in path.corridor() {
            let r = mesh
                .data
                .regions
                .get(key)
                .ok_or(QueryError::StalePath)?
                .index;
            if let Some(p) = previous {
                let ends = portal_between(mesh, p, r).ok_or(QueryError::StalePath)?;
                if let Some(last) = self.scratch_regions.last_mut() {
                    last.1 = ends;
                }
            }
            self.scratch_regions.push((r, [Vec2::ZERO; 2]));
            previous = Some(r);
        }
        let t = &mesh.tables;
        let holds = |r: u32, p: Vec2| geometry::convex_contains(t.polygon(r), p, IN_REGION_EPS);
        match (self.scratch_regions.first(), self.scratch_regions.last()) {
            (Some(&(first, _)), Some(&(last, _))) if holds(first, start) && holds(last, end) => {}
            _ => return Err(QueryError::StalePath),
        }
        self.regions.clear();
        self.portals.clear();
        let n = self.scratch_regions.len();
        for (i, &(r, ends)) in self.scratch_regions.iter().enumerate() {
            self.regions.push_back(r);
            if i + 1 < n {
                self.portals.push_back(ends);
            }
        }
        self.serial = mesh.serial;
        self.filter = *filter;
        self.position = start;
        self.goal = if path.status() == PathStatus::Complete {
            end
        } else {
            goal
        };
        self.end = end;
        self.status = path.status();
        self.refresh_corners();
        Ok(())
    }

    /// Feeds the unit's position this tick (where the game's movement and
    /// collisions put it) and answers where to steer. A position off the
    /// mesh is snapped within the filter's snap distance.
    ///
    /// # Errors
    /// [`QueryError::NoPath`] before a path was planned (or after a replan
    /// failed), [`QueryError::NonFinite`] or [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]) for a
    /// bad position (the follower is left as it was), and the errors of a
    /// replan ([`NavQuery::find_path`]), after which the follower has no path.
    pub fn update(
        &mut self,
        mesh: &NavMesh,
        query: &mut NavQuery,
        position: Vec2,
    ) -> Result<Steering, QueryError> {
        self.ready(position, "point")?;
        let target = self.corners.first().copied();
        let mut event = FollowEvent::Followed;
        if mesh.serial != self.serial {
            event = self.rebind(mesh, query)?;
        }
        let mut position = position;
        if let Some(j) = self.find_ahead(mesh, position) {
            self.drop_front(j);
        } else {
            let (at, repair) = self.recover(mesh, query, position)?;
            position = at;
            event = event.max(repair);
        }
        let straight_on = event == FollowEvent::Followed && self.on_first_leg(position);
        self.position = position;
        if straight_on {
            // a unit that kept to the first leg has the same corners ahead
            return Ok(self.steering(event));
        }
        self.refresh_corners();
        if self.corners.first().copied() != target || event != FollowEvent::Followed {
            self.shortcut(mesh, query);
        }
        Ok(self.steering(event))
    }

    /// Straightens the corridor up to the farthest corner in view: for the
    /// last corner of [`PathFollower::corners`] that the unit sees (the first
    /// excepted), the corridor up to it is replaced by the regions the
    /// segment there crosses (Detour's visibility optimisation). The path can
    /// only get shorter. [`PathFollower::update`] calls it each time the unit
    /// passes a corner, and planning and moving the goal do; call it after
    /// pushing the unit around, if you like. Costs one ray per corner tried.
    pub fn shortcut(&mut self, mesh: &NavMesh, query: &mut NavQuery) {
        if mesh.serial != self.serial {
            return;
        }
        for k in (1..self.corners.len()).rev() {
            let far = self.corners[k];
            query.crossings.clear();
            let Ok(end) = query.walk_segment(mesh, self.regions[0], self.position, far, true)
            else {
                continue;
            };
            let Some(j) = self.regions.iter().position(|&r| r == end) else {
                continue;
            };
            query.corridor_without_loops(mesh, self.regions[0]);
            if query.regions.last() != Some(&end) {
                continue;
            }
            self.drop_front(j);
            self.prepend_query_corridor(query);
            self.refresh_corners();
            return;
        }
    }

    /// Moves the unit from its position towards `desired` along walkable
    /// space ([`NavQuery::move_along`]: it slides along walls), then answers
    /// as [`PathFollower::update`] from where it ends.
    ///
    /// # Errors
    /// As [`PathFollower::update`].
    pub fn move_position(
        &mut self,
        mesh: &NavMesh,
        query: &mut NavQuery,
        desired: Vec2,
    ) -> Result<Steering, QueryError> {
        self.ready(desired, "point")?;
        let mut event = FollowEvent::Followed;
        if mesh.serial != self.serial {
            event = self.rebind(mesh, query)?;
        }
        let (p, _) = query.surface_walk(
            mesh,
            self.position,
            self.regions[0],
            desired,
            self.filter.excluded_areas,
        );
        let mut steering = self.update(mesh, query, p)?;
        steering.event = steering.event.max(event);
        Ok(steering)
    }

    /// Moves the goal (a unit chasing another): the corridor's end is
    /// extended by a surface walk from the old goal when that reaches the new
    /// one, and the path is replanned otherwise. On error the follower is
    /// left as it was.
    ///
    /// # Errors
    /// [`QueryError::NoPath`] before a path was planned,
    /// [`QueryError::NonFinite`] or [`QueryError::OffMesh`] (on a mesh above radius 0, [`QueryError::NoRoom`]) for a bad goal,
    /// and the errors of [`NavQuery::find_path`] when a replan finds no way.
    pub fn set_goal(
        &mut self,
        mesh: &NavMesh,
        query: &mut NavQuery,
        goal: Vec2,
    ) -> Result<FollowEvent, QueryError> {
        self.ready(goal, "goal")?;
        let (goal, _) = query.resolve(mesh, goal, "goal", self.filter.snap_distance)?;
        let (p, end) = if mesh.serial == self.serial && self.status == PathStatus::Complete {
            let last = *self.regions.back().expect("a path");
            query.surface_walk(mesh, self.goal, last, goal, self.filter.excluded_areas)
        } else {
            (self.goal, 0)
        };
        if p != goal {
            // a full search; a goal it cannot reach leaves the old path
            let (filter, position) = (self.filter, self.position);
            let path = query.find_path(mesh, position, goal, &filter)?;
            self.follow(mesh, &path, goal, &filter)?;
            self.replans += 1;
            return Ok(FollowEvent::Replanned);
        }
        // the walk's regions from the old goal's to the new one's
        self.scratch_regions.clear();
        let mut at = end;
        while at != 0 {
            let (r, parent, crossing) = query.visit[at as usize];
            self.scratch_regions
                .push((r, mesh.tables.crossing_ends(crossing)));
            at = parent;
        }
        self.scratch_regions.reverse();
        // keep the corridor up to the last region the walk shares with it
        let tail = self.regions.len().saturating_sub(WINDOW);
        let mut cut = None;
        for (k, &(r, _)) in self.scratch_regions.iter().enumerate().rev() {
            if let Some(j) = (tail..self.regions.len())
                .rev()
                .find(|&j| self.regions[j] == r)
            {
                cut = Some((k + 1, j));
                break;
            }
        }
        let (from, keep) = cut.unwrap_or((0, self.regions.len() - 1));
        self.regions.truncate(keep + 1);
        self.portals.truncate(keep);
        for &(r, ends) in &self.scratch_regions[from..] {
            self.portals.push_back(ends);
            self.regions.push_back(r);
        }
        self.goal = goal;
        self.end = goal;
        self.refresh_corners();
        self.shortcut(mesh, query);
        Ok(FollowEvent::Followed)
    }

    /// Where the corridor ends: the goal, or for a partial path the point
    /// its search reached (replan from there, or before).
    #[must_use]
    pub fn end(&self) -> Vec2 {
        self.end
    }

    /// Where the follower holds the unit to be.
    #[must_use]
    pub fn position(&self) -> Vec2 {
        self.position
    }

    /// The goal followed to.
    #[must_use]
    pub fn goal(&self) -> Vec2 {
        self.goal
    }

    /// Whether the path followed reaches the goal, or ends where a search
    /// ran out of budget (replan when the unit gets there).
    #[must_use]
    pub fn status(&self) -> PathStatus {
        self.status
    }

    /// Whether the follower has a path.
    #[must_use]
    pub fn has_path(&self) -> bool {
        !self.regions.is_empty()
    }

    /// The next corners of the path pulled taut from the unit's position,
    /// the goal last when it is among them.
    #[must_use]
    pub fn corners(&self) -> &[Vec2] {
        &self.corners
    }

    /// Regions from the unit's to the goal's; none when `mesh` is not the
    /// mesh the follower last saw (it rebinds on its next update).
    pub fn corridor<'m>(&'m self, mesh: &'m NavMesh) -> impl Iterator<Item = RegionId> + 'm {
        let stale = mesh.serial != self.serial;
        self.regions
            .iter()
            .filter(move |_| !stale)
            .map(|&r| mesh.tables.region_keys[r as usize])
    }

    /// The rest of the path from the unit's position, pulled taut through
    /// the whole corridor, into `out` (cleared first).
    pub fn remaining_path(&mut self, out: &mut Vec<Vec2>) {
        out.clear();
        if self.regions.is_empty() {
            return;
        }
        geometry::pull(self.position, self.end, self.portals.make_contiguous(), out);
    }

    /// Full searches this follower has made after its first plan.
    #[must_use]
    pub fn replans(&self) -> u32 {
        self.replans
    }

    /// Times the unit strayed from its corridor and was joined back locally.
    #[must_use]
    pub fn recoveries(&self) -> u32 {
        self.recoveries
    }

    fn steering(&self, event: FollowEvent) -> Steering {
        let target = self.corners.first().copied().unwrap_or(self.goal);
        let arrived = self.status == PathStatus::Complete
            && self.position.distance(self.goal) <= self.arrival;
        Steering {
            position: self.position,
            target,
            arrived,
            event,
        }
    }

    /// The first of the next [`WINDOW`] corridor regions that holds `p`.
    fn find_ahead(&self, mesh: &NavMesh, p: Vec2) -> Option<usize> {
        let t = &mesh.tables;
        (0..self.regions.len().min(WINDOW))
            .find(|&j| geometry::convex_contains(t.polygon(self.regions[j]), p, IN_REGION_EPS))
    }

    /// Errors for a follower without a path or a non-finite point.
    fn ready(&self, p: Vec2, which: &'static str) -> Result<(), QueryError> {
        if self.regions.is_empty() {
            return Err(QueryError::NoPath);
        }
        if !p.is_finite() {
            return Err(QueryError::NonFinite {
                which,
                x: p.x,
                y: p.y,
            });
        }
        Ok(())
    }

    /// Puts the corridor the query just built (its regions and portals)
    /// in front of the follower's, but for its last region, which must be
    /// the follower's first.
    fn prepend_query_corridor(&mut self, query: &NavQuery) {
        for (&r, &ends) in query.regions.iter().zip(&query.portals).rev() {
            self.portals.push_front(ends);
            self.regions.push_front(r);
        }
    }

    fn drop_front(&mut self, j: usize) {
        self.regions.drain(..j);
        self.portals.drain(..j);
    }

    /// Joins a unit that is not in the next [`WINDOW`] regions back to its
    /// corridor: the position it is held at and how.
    fn recover(
        &mut self,
        mesh: &NavMesh,
        query: &mut NavQuery,
        position: Vec2,
    ) -> Result<(Vec2, FollowEvent), QueryError> {
        let (position, region) =
            query.resolve(mesh, position, "point", self.filter.snap_distance)?;
        // 1. it skipped ahead along its corridor (carried, or a long step)
        if let Some(j) = self.regions.iter().position(|&r| r == region) {
            self.drop_front(j);
            self.recoveries += 1;
            return Ok((position, FollowEvent::Recovered));
        }
        self.position = position;
        let (budget, hierarchy) = (query.max_expansions, query.use_hierarchy);
        query.max_expansions = LOCAL_BUDGET;
        query.use_hierarchy = false;
        let local_filter = QueryFilter {
            allow_partial: false,
            ..self.filter
        };
        // 2. a small search to the goal, which a unit carried past walls
        // may now be near
        if self.status == PathStatus::Complete {
            if let Ok(path) = query.find_path(mesh, position, self.goal, &local_filter) {
                (query.max_expansions, query.use_hierarchy) = (budget, hierarchy);
                let (goal, filter) = (self.goal, self.filter);
                self.follow(mesh, &path, goal, &filter)?;
                self.recoveries += 1;
                return Ok((position, FollowEvent::Recovered));
            }
        }
        // 3. a small search to a region a few ahead, joined to the rest
        let j = self.regions.len().min(WINDOW) - 1;
        let v = mesh.tables.polygon(self.regions[j]);
        let inside = v.iter().copied().sum::<Vec2>() / v.len() as f32;
        let local = query.find_path(mesh, position, inside, &local_filter);
        (query.max_expansions, query.use_hierarchy) = (budget, hierarchy);
        if let Ok(local) = local {
            // the search leaves its corridor in the query: regions and portals
            let joins = local.corridor().len() == query.regions.len()
                && query.regions.last() == Some(&self.regions[j])
                && query.regions.first() == Some(&region);
            if joins {
                // local regions but the last (which is `regions[j]`), each
                // with the portal out of it
                self.drop_front(j);
                self.prepend_query_corridor(query);
                self.recoveries += 1;
                return Ok((position, FollowEvent::Recovered));
            }
        }
        // 4. a full replan
        self.replan(mesh, query)?;
        Ok((self.position, FollowEvent::Replanned))
    }

    /// A full search from the unit's position to the goal. On error the
    /// follower has no path.
    fn replan(&mut self, mesh: &NavMesh, query: &mut NavQuery) -> Result<FollowEvent, QueryError> {
        self.replans += 1;
        let goal = self.goal;
        let filter = self.filter;
        match query.find_path(mesh, self.position, goal, &filter) {
            Ok(path) => {
                self.follow(mesh, &path, goal, &filter)?;
                Ok(FollowEvent::Replanned)
            }
            Err(e) => {
                self.regions.clear();
                self.portals.clear();
                self.corners.clear();
                Err(e)
            }
        }
    }

    /// The mesh was replaced: keeps the corridor when the new mesh took
    /// over from this follower's and kept every region of it (a runtime edit
    /// elsewhere; only the indices change), else walks the rest of the path
    /// on the new mesh and keeps it if the walk is clear, else replans.
    fn rebind(&mut self, mesh: &NavMesh, query: &mut NavQuery) -> Result<FollowEvent, QueryError> {
        if let Some(kept) = mesh.succession.as_ref().filter(|s| s.from == self.serial) {
            let now = |r: u32| kept.regions.get(r as usize).copied().unwrap_or(u32::MAX);
            if self.regions.iter().all(|&r| now(r) != u32::MAX) {
                for r in &mut self.regions {
                    *r = now(*r);
                }
                self.serial = mesh.serial;
                return Ok(FollowEvent::Rebound);
            }
        }
        let mut points = std::mem::take(&mut self.scratch_points);
        self.remaining_path(&mut points);
        let kept = (|| {
            let (_, start_region) = query.resolve(mesh, self.position, "point", 0.0).ok()?;
            query.crossings.clear();
            let mut region = start_region;
            for w in points.windows(2) {
                region = query.walk_segment(mesh, region, w[0], w[1], true).ok()?;
            }
            Some(start_region)
        })();
        self.scratch_points = points;
        let Some(start_region) = kept else {
            return self.replan(mesh, query);
        };
        query.corridor_without_loops(mesh, start_region);
        self.regions.clear();
        self.portals.clear();
        self.regions.extend(query.regions.iter().copied());
        self.portals.extend(query.portals.iter().copied());
        self.serial = mesh.serial;
        self.refresh_corners();
        Ok(FollowEvent::Rebound)
    }

    /// Whether `p` lies on the path's first leg, from the position to the
    /// first corner (that corner excluded), up to rounding: the rest of a
    /// shortest path is the shortest path from any point on it, so the
    /// corners ahead stay the same.
    fn on_first_leg(&self, p: Vec2) -> bool {
        let Some(&corner) = self.corners.first() else {
            return false;
        };
        let (leg, moved) = (corner - self.position, p - self.position);
        let length2 = leg.length_squared();
        let along = moved.dot(leg);
        along >= 0.0 && along < length2 && moved.perp_dot(leg).abs() <= 1e-6 * length2
    }

    /// Pulls the next corners from the position towards the corridor's end,
    /// stopping after `lookahead`.
    fn refresh_corners(&mut self) {
        self.corners.clear();
        let (position, end, lookahead) = (self.position, self.end, self.lookahead);
        let corners = &mut self.corners;
        let mut stopped = false;
        geometry::pull_corners_while(position, end, self.portals.make_contiguous(), |p| {
            if p != position {
                corners.push(p);
            }
            stopped = corners.len() >= lookahead;
            !stopped
        });
        if !stopped {
            self.corners.push(end);
        }
    }
}

/// `[left, right]` of the portal from dense region `a` into `b`, as seen
/// crossing it; `None` when they are not neighbours.
fn portal_between(mesh: &NavMesh, a: u32, b: u32) -> Option<[Vec2; 2]> {
    let t = &mesh.tables;
    t.crossing_between(a, b).map(|c| t.crossing_ends(c))
}
