//! Group moves: many units ordered to one goal, with one search from the
//! goal serving them all ([`NavQuery::find_paths_to`]).

use glam::Vec2;

use super::group_tree::GoalTree;
use super::hierarchical::{cheapest_pair, legs, pull_all, pulled_leg_cost, walk_leg_to};
use super::{Ends, Goal, NavQuery, Path, QueryFilter};
use crate::error::QueryError;
use crate::geometry::morton_spread;
use crate::mesh::hierarchy::HierarchyData;
use crate::mesh::NavMesh;
use crate::search::{astar, Leg, NavGraph, SearchContext, Via, LEG};

/// What a group move knows of its goal, kept from one unit to the next.
#[derive(Debug, Clone, Default)]
pub(super) struct GroupGoalState {
    /// The search from the goal over the nav nodes (on a mesh whose
    /// hierarchy is searched rather than tabled).
    pub(super) search: SearchContext<Via>,
    /// The goal's legs.
    pub(super) legs: Vec<Leg>,
    /// The corridors grown from the goal.
    pub(super) tree: GoalTree,
    /// On a tabled hierarchy, instead of `search`: per nav node, its tabled
    /// distance to the goal (through the best goal leg) and that leg's
    /// place in `legs`.
    pub(super) dist: Vec<(f32, u32)>,
    /// Expansions the last search from a goal made.
    pub(super) work: u32,
    /// The order the units are answered in.
    pub(super) order: Vec<u128>,
}

/// The goal of a group move once its search has run.
#[derive(Debug, Clone, Copy)]
pub(super) struct GroupGoal {
    /// Where the goal resolved to, and its dense region.
    at: Vec2,
    region: u32,
    cluster: u32,
    /// The distances come from the all-pairs table (`group_dist`), not
    /// from a search (`group`).
    tabled: bool,
}

impl GroupGoal {
    /// The goal as its search resolved it, for each unit's query.
    pub(super) fn goal(&self) -> Goal {
        Goal::Resolved(self.at, self.region)
    }
}

/// How far below every other node's guess (relative) a unit's first nav
/// node must come for [`NavQuery::first_by_bounds`] to take it: above the
/// rounding by which a leg's estimate can fall below its straight line
/// (a few ulps of a leg, against a margin of the whole route's length).
const CHOICE_MARGIN: f32 = 1e-6;

impl NavQuery {
    /// Paths from every start in `starts` to one `goal`, in order: a
    /// box-selected army sent across the map.
    ///
    /// The goal's legs are pulled once, and every nav node's distance to the
    /// goal is known once: from the all-pairs table through the best goal
    /// leg, or, on a mesh whose hierarchy is searched rather than tabled
    /// (more than 2,048 nav nodes), from one Dijkstra from the goal over the
    /// nav nodes. Each unit then needs only its own legs to its cluster's
    /// nav nodes (pulled lazily on a tabled mesh, as a query does), and
    /// pulls its own path taut through its own corridor. That is the route
    /// the unit's own query would choose: the cheapest of leg + distance to
    /// the goal over its legs, so its path is what [`NavQuery::find_path`]
    /// gives but where two routes cost the same. Units the hierarchy does
    /// not serve (near the goal, or with a filter that excludes areas), and
    /// every unit on a mesh without a hierarchy, get exactly
    /// [`NavQuery::find_path`]'s answer. Units standing on the same point
    /// share one answer.
    ///
    /// # Example
    /// ```
    /// use glam::vec2;
    /// use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};
    ///
    /// let level = Level::from_json_str(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]],
    ///     "obstacles": [[[15,15],[25,15],[25,25],[15,25]]]}"#)?;
    /// let mesh = NavMesh::bake(&level, &BakeConfig::default())?;
    /// let mut query = NavQuery::new();
    /// let army: Vec<_> = (0..100)
    ///     .map(|i| vec2(2.0 + (i % 10) as f32 * 0.5, 2.0 + (i / 10) as f32 * 0.5))
    ///     .collect();
    /// let filter = QueryFilter::default();
    /// let paths = query.find_paths_to(&mesh, &army, vec2(35.0, 35.0), &filter);
    /// for (start, path) in army.iter().zip(&paths) {
    ///     let alone = query.find_path(&mesh, *start, vec2(35.0, 35.0), &filter)?;
    ///     assert!(path.as_ref().unwrap().length() <= alone.length() + 1e-4);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn find_paths_to(
        &mut self,
        mesh: &NavMesh,
        starts: &[Vec2],
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Vec<Result<Path, QueryError>> {
        let mut out = Vec::new();
        self.find_paths_to_into(mesh, starts, goal, filter, &mut out);
        out
    }

    /// As [`NavQuery::find_paths_to`], writing the answers into `out`
    /// (resized to `starts`): each path reuses the buffers of the path
    /// already in its place, so a game that keeps its units' paths from one
    /// order to the next does not allocate per unit once they have grown.
    pub fn find_paths_to_into(
        &mut self,
        mesh: &NavMesh,
        starts: &[Vec2],
        goal: Vec2,
        filter: &QueryFilter,
        out: &mut Vec<Result<Path, QueryError>>,
    ) {
        let shared = self.search_from_goal(mesh, goal, filter);
        out.resize_with(starts.len(), || Ok(Path::default()));
        // units are answered in the order of a curve through the map, so
        // the next unit's regions, legs and tree steps lie near the last
        // one's in memory; a unit's path does not depend on that order
        let mut order = std::mem::take(&mut self.group.order);
        morton_order(mesh, starts, &mut order);
        let mut last: Option<usize> = None;
        for &i in &order {
            let i = (i & u128::from(u32::MAX)) as usize;
            let mut path = std::mem::replace(&mut out[i], Ok(Path::default())).unwrap_or_default();
            // a unit on the same point as the one before shares its answer
            let answer = match last.filter(|&j| starts[j] == starts[i]) {
                Some(j) => match &out[j] {
                    Ok(same) => {
                        path.clone_from(same);
                        Ok(())
                    }
                    Err(e) => Err(e.clone()),
                },
                None => match (shared, mesh.data.hierarchy.as_ref()) {
                    (Some(g), Some(h)) => self.group_path(mesh, h, starts[i], g, filter, &mut path),
                    _ => self.find_path_into(mesh, starts[i], goal, filter, &mut path),
                },
            };
            out[i] = answer.map(|()| path);
            last = Some(i);
        }
        self.group.order = order;
    }

    /// Runs the Dijkstra from `goal` over the nav nodes into `self.group.search`,
    /// with the goal's legs in `self.group.legs`; `None` when the group move
    /// has nothing to share (see [`NavQuery::find_paths_to`]).
    pub(super) fn search_from_goal(
        &mut self,
        mesh: &NavMesh,
        goal: Vec2,
        filter: &QueryFilter,
    ) -> Option<GroupGoal> {
        let h = mesh.data.hierarchy.as_ref()?;
        // a unit's own query may take the flat search past an open zone
        // (`Fallback::OpenZone`), which the goal's tree would not follow
        if !self.use_hierarchy || filter.excluded_areas != 0 || !mesh.hier.open_zones.is_empty() {
            return None;
        }
        let (at, region) = self
            .resolve(mesh, goal, "goal", filter.snap_distance)
            .ok()?;
        let cluster = h.region_cluster[region as usize];
        legs(mesh, h, region, at, &mut self.group.legs);
        pull_all(
            mesh,
            h,
            &mut self.group.legs,
            (at, region),
            (&mut self.leg_buffer, &mut self.leg_ends),
        );
        if self.group.legs.is_empty() {
            return None;
        }
        let slots = if h.has_table() {
            self.group.legs.len()
        } else {
            1
        };
        self.group.tree.reset(mesh, h, (at, region), slots);
        if h.has_table() {
            // the distances are read when a unit first needs them
            // (`tabled_distances`): a move whose units all stand near the
            // goal takes the flat search and reads none
            self.group.dist.clear();
            self.group.work = 1;
            return Some(GroupGoal {
                at,
                region,
                cluster,
                tabled: true,
            });
        }
        let graph = NavGraph {
            h,
            ht: &mesh.hier,
            start_legs: &self.group.legs,
            goal_legs: &[],
            start: at,
            goal: at,
            heuristic_scale: 0.0,
            start_cluster: cluster,
            alternate: true,
            landmarks: &[],
        };
        // no goal node: the search runs until every nav node is settled
        astar(
            &graph,
            &mut self.group.search,
            &[(graph.start_node(), 0.0, Via::leg(u32::MAX))],
            u32::MAX,
        );
        self.group.work = self.group.search.expansions();
        Some(GroupGoal {
            at,
            region,
            cluster,
            tabled: false,
        })
    }

    /// On a tabled hierarchy, fills `self.group.dist` for the last group
    /// search's goal legs, unless it is filled: per nav node, the cheapest
    /// tabled distance + goal leg, and that leg.
    fn tabled_distances(&mut self, h: &HierarchyData) {
        if !self.group.dist.is_empty() {
            return;
        }
        self.group.dist.extend((0..h.nodes.len() as u32).map(|n| {
            let mut best = (f32::INFINITY, u32::MAX);
            for (k, l) in self.group.legs.iter().enumerate() {
                let d = h.l2_distance(n, l.node) + l.cost;
                if d < best.0 {
                    best = (d, k as u32);
                }
            }
            best
        }));
    }

    /// Expansions of the last group search ([`NavQuery::search_from_goal`]).
    pub(super) fn group_expansions(&self) -> u32 {
        self.group.work
    }

    /// One unit's path of a group move to `g` (see [`NavQuery::find_paths_to`]).
    fn group_path(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        start: Vec2,
        g: GroupGoal,
        filter: &QueryFilter,
        path: &mut Path,
    ) -> Result<(), QueryError> {
        // the goal as its search resolved it, not once per unit
        let Some(ends) = self.prepare_to(mesh, start, g.goal(), filter, path)? else {
            return Ok(());
        };
        if !self.path_from_group(mesh, h, &ends, g, path) {
            self.answer(mesh, &ends, filter, path)?;
        }
        Ok(())
    }

    /// Fills `path` for a unit with resolved `ends` from the goal's search
    /// (`g`), if it serves the unit: false for a unit in or beside the
    /// goal's cluster, or with no leg to a nav node the search settled.
    /// A unit the tree does not serve is stitched and pulled as its own
    /// query is, whose refinement may search ([`NavQuery::last_expansions`]
    /// grows by its expansions, at most `refine_budget`); no other search.
    pub(super) fn path_from_group(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        ends: &Ends,
        g: GroupGoal,
        path: &mut Path,
    ) -> bool {
        let cs = h.region_cluster[ends.start_region as usize];
        if cs == g.cluster || mesh.hier.neighbours(cs, g.cluster) {
            return false;
        }
        if g.tabled {
            self.tabled_distances(h);
        }
        let Some(first) = self.group_first(mesh, h, ends, g.tabled) else {
            return false;
        };
        if GoalTree::tells_refined(h) && self.path_from_tree(mesh, h, ends, g, first, path) {
            return true;
        }
        // as the unit's own query: stitched, pulled, refined
        let routed = self.group_route(mesh, h, first, g.tabled) && {
            self.goal_side.legs.clone_from(&self.group.legs);
            self.stitch(mesh, h, ends.start_region, g.region)
        };
        if routed {
            self.pull_route(mesh, h, ends, path);
        }
        routed
    }

    /// The unit's path from the group's tree of corridors
    /// ([`GoalTree`](super::group_tree::GoalTree)), by the route from its
    /// first nav node `first`; false when the tree does not serve it (the
    /// pieces do not join, or a corridor the query would refine).
    fn path_from_tree(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        ends: &Ends,
        g: GroupGoal,
        first: u32,
        path: &mut Path,
    ) -> bool {
        let (group, ht, start_node) = (&self.group.search, &mesh.hier, h.nodes.len() as u32);
        // the exit slot is the goal leg the route ends on (one slot when searched)
        let (slot, exit) = if g.tabled {
            let k = self.group.dist[first as usize].1 as usize;
            match self.group.legs.get(k) {
                Some(leg) => (k, leg.node),
                None => return false,
            }
        } else {
            (0, u32::MAX)
        };
        let next = |v: u32| {
            if g.tabled {
                return if v == exit {
                    Some(None)
                } else {
                    h.tabled_step(ht, v, exit).map(Some)
                };
            }
            match group.parent(v)? {
                p if p == start_node => Some(None),
                p => Some(Some((p, group.payload(v)?.corridor))),
            }
        };
        let legs = &self.group.legs;
        let goal_leg = |v: u32, out: &mut Vec<u32>| walk_leg_to(mesh, h, legs, v, g.region, out);
        let Some(at) = self
            .group
            .tree
            .node_step(mesh, h, (slot, first), next, goal_leg)
        else {
            return false;
        };
        self.leg_buffer.clear();
        let Some(leg_end) = walk_leg_to(
            mesh,
            h,
            &self.start_side.legs,
            first,
            ends.start_region,
            &mut self.leg_buffer,
        ) else {
            return false;
        };
        self.group.tree.unit_path(
            mesh,
            h,
            at,
            (first, &self.leg_buffer, leg_end),
            (ends.start, ends.start_region),
            path,
        )
    }

    /// The unit's first nav node (its legs in `self.start_side.legs`, or only
    /// that node's leg when [`Self::first_by_bounds`] decides it): the
    /// cheapest leg + distance from its nav node to the goal, from the
    /// table (legs pulled lazily) or the goal's search (legs pulled). `None`
    /// when no leg reaches a nav node the goal can be reached from.
    fn group_first(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        ends: &Ends,
        tabled: bool,
    ) -> Option<u32> {
        if tabled {
            if let Some(first) = self.first_by_bounds(mesh, h, ends) {
                return Some(first);
            }
        }
        legs(
            mesh,
            h,
            ends.start_region,
            ends.start,
            &mut self.start_side.legs,
        );
        let end = (ends.start, ends.start_region);
        if tabled {
            return self.cheapest_tabled_leg(mesh, h, end);
        }
        let scratch = (&mut self.leg_buffer, &mut self.leg_ends);
        pull_all(mesh, h, &mut self.start_side.legs, end, scratch);
        let first = self
            .start_side
            .legs
            .iter()
            .filter_map(|l| Some((l.cost + self.group.search.cost(l.node)?, l.node)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        first.map(|(_, first)| first)
    }

    /// The L2 route from the unit's first nav node `first` into
    /// `self.l2_route`: from the table to the node's best goal leg, or the
    /// goal's search tree walked back from the node, each step along the
    /// corridor its node was reached by.
    fn group_route(&mut self, mesh: &NavMesh, h: &HierarchyData, first: u32, tabled: bool) -> bool {
        if tabled {
            let leg = self.group.dist[first as usize].1 as usize;
            let Some(exit) = self.group.legs.get(leg).map(|l| l.node) else {
                return false;
            };
            if !h.tabled_route(&mesh.hier, first, exit, &mut self.l2_route) {
                return false;
            }
            self.l2_route.insert(0, (first, LEG));
            return true;
        }
        // from the goal's search start to `first`, then turned round
        self.group.search.path_to(first, &mut self.l2_nodes);
        self.l2_route.clear();
        self.l2_route.push((first, LEG));
        for w in self.l2_nodes[1..].windows(2).rev() {
            let via = self.group.search.payload(w[1]).map_or(LEG, |v| v.corridor);
            self.l2_route.push((w[0], via));
        }
        true
    }

    /// The choice [`Self::cheapest_tabled_leg`] makes, when it can be made
    /// from bounds without the unit's every leg: the node `m` whose straight
    /// line at the cheapest rate plus tabled distance is least, if its leg's
    /// estimate plus distance is below every other node's straight line plus
    /// distance (less [`CHOICE_MARGIN`] of it), at its leg's estimate or,
    /// failing that, pulled taut. Then the lazy choice takes `m` too (its
    /// steps on `m` are these), and `self.start_side.legs` holds only its leg,
    /// all the rest of the unit's path reads. One leg's points instead of
    /// every leg's: most units of an army pass. `None` when it does not
    /// (the caller computes the legs).
    fn first_by_bounds(&mut self, mesh: &NavMesh, h: &HierarchyData, ends: &Ends) -> Option<u32> {
        let t = &mesh.tables;
        let (p, region) = (ends.start, ends.start_region);
        let c = h.region_cluster[region as usize];
        let nodes = h.nodes_of(c);
        // the least and second least straight line + distance
        let (mut best, mut second) = ((f32::INFINITY, usize::MAX), f32::INFINITY);
        for (k, &n) in nodes.iter().enumerate() {
            let to_goal = self.group.dist[n as usize].0;
            let d = p.distance(h.nodes[n as usize].at) * t.min_cost + to_goal;
            if d < best.0 {
                second = best.0;
                best = (d, k);
            } else if d < second {
                second = d;
            }
        }
        let k = best.1;
        let &node = nodes.get(k)?;
        // its leg's estimate, as `legs` computes it (there points outer,
        // nodes inner: the same minimum, first point on a tie)
        let (rate, table) = (t.region_cost[region as usize], h.leg_costs(c));
        let points = h.points_of(c);
        let mut leg = Leg {
            node,
            k: k as u32,
            cost: f32::INFINITY,
            first_point: 0,
        };
        for &i in mesh.hier.points_touching(region) {
            let cost = p.distance(points[i as usize].at) * rate + table.row(i as usize)[k];
            if cost < leg.cost {
                leg.cost = cost;
                leg.first_point = i;
            }
        }
        // the lazy choice's steps on `node`: taken at once when its leg's
        // estimate is below every other node's guess (a leg that is a
        // straight line at the cheapest rate is); else its leg is pulled,
        // and taken if that is below
        if !leg.cost.is_finite() {
            return None; // no leg inside the cluster: `legs` drops the node
        }
        let to_goal = self.group.dist[node as usize].0;
        let below = if second.is_finite() {
            second - second.abs() * CHOICE_MARGIN
        } else {
            f32::INFINITY
        };
        self.start_side.legs.clear();
        self.start_side.legs.push(leg);
        if leg.cost + to_goal < below {
            return Some(node);
        }
        let scratch = (&mut self.leg_buffer, &mut self.leg_ends);
        let pulled = pulled_leg_cost(mesh, h, &self.start_side.legs, 0, (p, region), scratch);
        (pulled + to_goal < below).then_some(node)
    }

    /// The start leg with the cheapest leg + tabled distance to the goal
    /// (`group_dist`), legs pulled lazily by the query's own rule
    /// ([`cheapest_pair`], whose goal side is here one pulled leg of cost 0:
    /// `group_dist` already holds the goal legs), so the choice is the one
    /// pulling every leg would make. Its nav node.
    fn cheapest_tabled_leg(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        end: (Vec2, u32),
    ) -> Option<u32> {
        self.start_side
            .guess_lazily(end.0, (h, mesh.tables.min_cost));
        let (legs, to_goal) = (&self.start_side.legs, &self.group.dist);
        let (guess, pulled) = (&mut self.start_side.guess, &mut self.start_side.pulled);
        let (buffer, ends) = (&mut self.leg_buffer, &mut self.leg_ends);
        let (i, _) = cheapest_pair(
            (guess, pulled),
            (&mut [0.0], &mut [true]),
            |i, _| to_goal[legs[i].node as usize].0,
            (
                |_, k| legs[k].cost,
                |_, k| pulled_leg_cost(mesh, h, legs, k, end, (buffer, ends)),
            ),
            &mut self.partner,
        )?;
        Some(legs[i].node)
    }
}

/// The indices of `points` (the low 32 bits of each key) in the order of a
/// Morton curve over the mesh's bounds, equal points next to each other
/// (then by index). A point off the bounds takes the nearest cell on
/// them, a NaN coordinate the first.
fn morton_order(mesh: &NavMesh, points: &[Vec2], order: &mut Vec<u128>) {
    debug_assert!(
        u32::try_from(points.len()).is_ok(),
        "a unit index fits in 32 bits"
    );
    let b = mesh.bounds();
    let scale = (b.max - b.min).max(Vec2::splat(f32::MIN_POSITIVE)).recip() * 65535.0;
    order.clear();
    order.extend(points.iter().enumerate().map(|(i, &p)| {
        // glam's clamp takes a NaN to the lower end
        let q = ((p - b.min) * scale).clamp(Vec2::ZERO, Vec2::splat(65535.0));
        let cell = morton_spread(q.x as u32) | morton_spread(q.y as u32) << 1;
        let bits = u64::from(p.x.to_bits()) << 32 | u64::from(p.y.to_bits());
        u128::from(cell) << 96 | u128::from(bits) << 32 | i as u128
    }));
    order.sort_unstable();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BakeConfig;

    /// Wherever `first_by_bounds` decides, every leg computed and the lazy
    /// rule run over them (`cheapest_tabled_leg`) choose the same nav node,
    /// on Aurora's table, where many units need their leg pulled.
    #[test]
    fn the_bounds_choose_the_first_nav_node_the_lazy_rule_chooses() {
        let level = crate::test_data::bundled_level("maps/Aurora.map");
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        assert!(h.has_table());
        let filter = QueryFilter::default();
        let mut q = NavQuery::new();
        let b = mesh.bounds();
        let goal = b.min + (b.max - b.min) * glam::vec2(0.83, 0.21);
        let g = q
            .search_from_goal(&mesh, goal, &filter)
            .expect("a group goal");
        q.tabled_distances(h);
        let (mut decided, mut compared) = (0, 0);
        for i in 0..3000 {
            let f = glam::vec2(
                (i as f32 * 0.618_034).fract(),
                (i as f32 * 0.414_213_5).fract(),
            );
            let start = b.min + (b.max - b.min) * f;
            let mut scratch = Path::default();
            let Ok(Some(ends)) = q.prepare_to(&mesh, start, g.goal(), &filter, &mut scratch) else {
                continue;
            };
            let cs = h.region_cluster[ends.start_region as usize];
            if cs == g.cluster || mesh.hier.neighbours(cs, g.cluster) {
                continue;
            }
            compared += 1;
            let Some(by_bounds) = q.first_by_bounds(&mesh, h, &ends) else {
                continue;
            };
            decided += 1;
            legs(
                &mesh,
                h,
                ends.start_region,
                ends.start,
                &mut q.start_side.legs,
            );
            let lazy = q.cheapest_tabled_leg(&mesh, h, (ends.start, ends.start_region));
            assert_eq!(Some(by_bounds), lazy, "start {start}");
        }
        assert!(
            decided > compared / 2 && compared > 1000,
            "{decided} decided of {compared}"
        );
    }
}
