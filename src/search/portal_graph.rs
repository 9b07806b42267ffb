//! The region level as a tree search over funnels, exact on single-cost
//! meshes.
//!
//! A state is a funnel ([`Deque`]) in the classic deque form: the apex (the
//! last corner every path along its corridor must wrap) with the exact cost
//! to it, and the taut chains from the apex to both ends of the portal just
//! crossed, of any length (they live in a [`Corners`] shared by the
//! search). Its cost g is the length of the taut path to `at`, the point
//! where the shortest path to the goal through the funnel crosses the
//! portal, so g + h is the length of that path: a lower bound on every path
//! along the corridor, which never falls along an edge although g alone can
//! (`at` moves along each portal). An exploration, which has no goal,
//! orders its states by a cheaper bound instead (see `toward_window`).
//!
//! States are never merged by crossing: each is a node of its own (a tree
//! search, as polyanya's intervals are), and only states that cannot lie on
//! a shorter path are dropped:
//! - **root pruning** (polyanya's): a state whose apex has been reached more
//!   cheaply (by more than [`TIE`]) by another state goes. Every state along
//!   a shortest path has as apex a corner of that path, reached at its
//!   shortest distance, so no such state is ever dropped;
//! - a funnel **closed on its apex** (both ends of its portal are the apex,
//!   as when it walks round the regions around a vertex) goes when a funnel
//!   closed on the same point at the same crossing cost no more: the two are
//!   the same funnel.
//!
//! So a flat path is the shortest within [`TIE`], but for one approximation:
//! a run is charged at the rate of the region where it ends (exact on
//! single-cost meshes).

use std::cell::RefCell;
use std::collections::hash_map::Entry;

use glam::Vec2;

use super::{astar_below, astar_resume, SearchContext, SearchGraph, SearchOutcome, NEW_NODE};
use crate::fxmap::FxHashMap;
use crate::geometry::{closest_on_segment, orient, taut_point_on_segment, Corners, Deque};
use crate::mesh::Tables;

/// The node every search starts from.
const START_NODE: u32 = 0;
/// The node every search ends at.
const GOAL_NODE: u32 = 1;
/// The crossing of the start and goal states, which make none.
const NO_CROSSING: u32 = u32::MAX;

/// Relative difference within which two costs to one apex count as equal:
/// about 80 times f32's rounding, more than a sum over a long corridor
/// accumulates. Paths come out within this of the shortest.
const TIE: f32 = 1e-5;

/// What a portal search runs between, and what it may not enter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Between {
    pub start: Vec2,
    pub start_region: u32,
    pub goal: Vec2,
    pub goal_region: u32,
    /// Bit `k` set: regions of area kind `k` may not be entered (kinds >= 64 are never excluded).
    pub excluded_areas: u64,
}

/// Scratch for portal searches, reused across them: the A* context, the
/// funnels' corners and the pruning tables.
#[derive(Debug, Clone, Default)]
pub(crate) struct PortalSearch {
    ctx: SearchContext<Funnel>,
    scratch: Scratch,
}

impl PortalSearch {
    /// Runs the search for `between` (or resumes the one under way, which
    /// must be for the same `between` on the same mesh) until it has made
    /// `budget` expansions in all.
    pub(crate) fn run(
        &mut self,
        tables: &Tables,
        between: &Between,
        budget: u32,
        resume: bool,
    ) -> SearchOutcome {
        self.search(tables, between, Within::Mesh, budget, resume, f32::INFINITY)
    }

    /// As [`Self::run`], started afresh and looking only for a path that
    /// costs less than `bound` (the cost of one in hand) by more than
    /// [`TIE`]: [`SearchOutcome::Exhausted`] when there is none. Nothing
    /// that cannot beat the bound is opened, so proving that the path in
    /// hand is the shortest costs fewer states than finding it again; and
    /// within the tie the search would only find the same path.
    pub(crate) fn run_below(
        &mut self,
        tables: &Tables,
        between: &Between,
        budget: u32,
        bound: f32,
    ) -> SearchOutcome {
        // (an infinite bound stays one: less the tie it would be NaN)
        let bound = if bound.is_finite() {
            bound - TIE * bound.max(1.0)
        } else {
            bound
        };
        self.search(tables, between, Within::Mesh, budget, false, bound)
    }

    /// Searches from `from` (in dense region `region`) to everywhere in the
    /// cluster `cluster` of `region_cluster`, with no goal: afterwards
    /// [`Self::for_each_state`] tells the exact cost to any point of the
    /// cluster (the least over the states of its region), as polyanya does
    /// for a goal. Stops after `budget` expansions; whatever was found by
    /// then is still the cost of a real path.
    pub(crate) fn explore(
        &mut self,
        tables: &Tables,
        (from, region): (Vec2, u32),
        (region_cluster, cluster): (&[u32], u32),
        budget: u32,
    ) -> SearchOutcome {
        let between = Between {
            start: from,
            start_region: region,
            goal: from,
            goal_region: u32::MAX,
            excluded_areas: 0,
        };
        let within = Within::Cluster(region_cluster, cluster);
        self.search(tables, &between, within, budget, false, f32::INFINITY)
    }

    /// The search behind [`Self::run`] and [`Self::explore`]: from
    /// `between.start`, going where `within` lets it, started afresh or
    /// resumed.
    fn search(
        &mut self,
        tables: &Tables,
        between: &Between,
        within: Within<'_>,
        budget: u32,
        resume: bool,
        bound: f32,
    ) -> SearchOutcome {
        if !resume {
            self.scratch.begin(between.start);
        }
        let graph = PortalGraph {
            tables,
            between,
            // an exploration has no goal to head for
            heuristic_scale: match within {
                Within::Cluster(..) => 0.0,
                Within::Mesh => tables.min_cost,
            },
            within,
            scratch: RefCell::new(&mut self.scratch),
        };
        if resume {
            astar_resume(&graph, &mut self.ctx, budget)
        } else {
            let start = [(START_NODE, 0.0, Funnel::start(between.start))];
            astar_below(&graph, &mut self.ctx, &start, budget, bound)
        }
    }

    /// Calls `visit(node, region, reach)` for every state of the last
    /// search ([`Self::explore`]'s): `region` is the dense region it
    /// entered (`start_region` for the start), and `reach` tells the cost
    /// of the path through its funnel to a point of that region
    /// ([`StateCost::cost_to`]).
    pub(crate) fn for_each_state(
        &self,
        tables: &Tables,
        start_region: u32,
        mut visit: impl FnMut(u32, u32, StateCost<'_>),
    ) {
        let corners = &self.scratch.corners;
        for node in 0..self.ctx.node_count() {
            let Some(funnel) = self.ctx.payload(node).filter(|_| node != GOAL_NODE) else {
                continue;
            };
            let region = if funnel.crossing == NO_CROSSING {
                start_region
            } else {
                tables.entered(funnel.crossing)
            };
            let rate = tables.region_cost[region as usize];
            // the region left behind charges the same: the parent's funnel
            // prices the portal's points as this one would
            let x = funnel.crossing;
            let parent_prices = (x != NO_CROSSING
                && tables.region_cost[tables.entered(x ^ 1) as usize] == rate)
                .then_some(x / 2);
            visit(
                node,
                region,
                StateCost {
                    funnel,
                    corners,
                    rate,
                    parent_prices,
                },
            );
        }
    }

    /// Nodes expanded by the search under way.
    pub(crate) fn expansions(&self) -> u32 {
        self.ctx.expansions()
    }

    /// Cost from the start to `node` in the search under way.
    pub(crate) fn cost(&self, node: u32) -> Option<f32> {
        self.ctx.cost(node)
    }

    /// Where the state at `node` crosses its portal toward the goal.
    pub(crate) fn at(&self, node: u32) -> Option<Vec2> {
        self.ctx.payload(node).map(|f| f.at)
    }

    /// Nodes of the search under way, numbered from 0: its states and the
    /// goal's slot, which [`Self::for_each_state`] skips.
    pub(crate) fn states(&self) -> u32 {
        self.ctx.node_count()
    }

    /// The state `node` was made from in the search under way and the
    /// crossing it made; `None` for the start (or a node not reached).
    pub(crate) fn made_from(&self, node: u32) -> Option<(u32, u32)> {
        let parent = self.ctx.parent(node)?;
        Some((parent, self.ctx.payload(node)?.crossing))
    }

    /// Writes the crossings made on the way to `node` into `out` (cleared
    /// first), using `nodes` as scratch.
    pub(crate) fn crossings(&self, node: u32, nodes: &mut Vec<u32>, out: &mut Vec<u32>) {
        self.ctx.path_to(node, nodes);
        out.clear();
        out.extend(
            nodes
                .iter()
                .filter_map(|&n| self.ctx.payload(n))
                .map(|f| f.crossing)
                .filter(|&c| c != NO_CROSSING),
        );
    }
}

/// One state of an exploration, as [`PortalSearch::for_each_state`] hands
/// it out: what it costs to reach a point of the region it entered.
#[derive(Clone, Copy)]
pub(crate) struct StateCost<'a> {
    funnel: Funnel,
    corners: &'a Corners,
    rate: f32,
    /// See [`Self::priced_by_parent`].
    parent_prices: Option<u32>,
}

impl StateCost<'_> {
    /// The portal the state came through into its region, when the state
    /// it was made from reaches that portal's points by the same path at
    /// the same price: the region behind charges the same rate (a run is
    /// charged at the rate of the region it ends in, so across a change of
    /// rate the two differ). `None` for the start.
    #[inline]
    pub(crate) fn priced_by_parent(&self) -> Option<u32> {
        self.parent_prices
    }

    /// The cost of the path through the funnel to `p`, or infinity without
    /// pulling it when the straight line from the funnel's apex already
    /// costs clearly more than `below` (the path is never shorter than that
    /// line).
    #[inline]
    pub(crate) fn cost_to(&self, p: Vec2, below: f32) -> f32 {
        let f = &self.funnel;
        let at_least = f.apex_cost + f.deque.apex().distance(p) * self.rate;
        // the margin keeps rounding from dropping a path that ties
        if at_least > below + below.abs() * 1e-5 {
            return f32::INFINITY;
        }
        f.apex_cost + f.taut_length(self.corners, p) * self.rate
    }
}

/// What the search's states share: their corners and the pruning tables
/// (see the module docs).
#[derive(Debug, Clone, Default)]
struct Scratch {
    corners: Corners,
    /// Per apex (its coordinates' bits): the lowest cost at which a state
    /// has had it as apex.
    best: FxHashMap<u64, f32>,
    /// Per crossing and point: the lowest cost of a funnel closed on that
    /// point at that crossing.
    closed: FxHashMap<(u32, u64), f32>,
}

impl Scratch {
    fn begin(&mut self, start: Vec2) {
        self.corners.clear();
        self.best.clear();
        self.closed.clear();
        self.best.insert(key(start), 0.0);
    }

    /// Whether a new state `to`, made from `from`, can lie on a shortest
    /// path as far as the pruning tables tell; records it in them if so.
    #[inline]
    fn admit(&mut self, from: &Funnel, to: &Funnel) -> bool {
        let apex = to.deque.apex();
        let moved = apex != from.deque.apex();
        if !moved && !to.deque.is_closed() {
            return true; // same apex, same cost: checked when `from` was
        }
        let k = key(apex);
        if moved {
            match self.best.entry(k) {
                Entry::Occupied(mut e) => {
                    if worse(to.apex_cost, *e.get()) {
                        return false;
                    }
                    if to.apex_cost < *e.get() {
                        e.insert(to.apex_cost);
                    }
                }
                Entry::Vacant(e) => {
                    e.insert(to.apex_cost);
                }
            }
        }
        if to.deque.is_closed() {
            match self.closed.entry((to.crossing, k)) {
                Entry::Occupied(mut e) => {
                    if *e.get() <= to.apex_cost {
                        return false;
                    }
                    e.insert(to.apex_cost);
                }
                Entry::Vacant(e) => {
                    e.insert(to.apex_cost);
                }
            }
        }
        true
    }
}

/// Whether a cost to an apex is worse than the best one known by more than
/// [`TIE`]: sums of the same lengths in another order differ in their last
/// bits, and the state that loses such a tie may be the only one whose
/// funnel goes on the right way.
#[inline]
fn worse(cost: f32, best: f32) -> bool {
    cost > best + TIE * best.max(1.0)
}

/// A point as a hash key.
#[inline]
fn key(p: Vec2) -> u64 {
    (u64::from(p.x.to_bits()) << 32) | u64::from(p.y.to_bits())
}

/// A borrowed view of the mesh and the scratch for one search.
struct PortalGraph<'a> {
    tables: &'a Tables,
    between: &'a Between,
    heuristic_scale: f32,
    within: Within<'a>,
    scratch: RefCell<&'a mut Scratch>,
}

/// Where a search may go.
#[derive(Clone, Copy)]
enum Within<'a> {
    /// Anywhere the filter allows, dead ends skipped.
    Mesh,
    /// Every region of one cluster ([`PortalSearch::explore`]): the cluster
    /// of each region, and the one the search stays in.
    Cluster(&'a [u32], u32),
}

impl PortalGraph<'_> {
    #[inline]
    fn allowed(&self, region: u32) -> bool {
        self.tables.allowed(region, self.between.excluded_areas)
    }
}

/// The search state (see the module docs): a funnel with the exact cost to
/// its apex, the crossing it made, and the crossing point `at` toward the
/// goal with the cost to it (in an exploration, which has no goal, the
/// point of the window nearest the apex and the straight line's cost:
/// `Funnel::toward_window`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Funnel {
    /// Where the taut string from the apex to the goal crosses this portal.
    pub at: Vec2,
    /// Cost from the start to `at`: the taut path through the funnel.
    cost: f32,
    apex_cost: f32,
    /// The crossing this state made ([`NO_CROSSING`] at the start and the
    /// goal).
    crossing: u32,
    deque: Deque,
}

impl Funnel {
    pub(crate) fn start(p: Vec2) -> Self {
        Funnel {
            at: p,
            crossing: NO_CROSSING,
            deque: Deque::new(p),
            ..Funnel::default()
        }
    }

    /// Length of the taut path from the apex to `p` through the funnel.
    #[inline]
    fn taut_length(&self, corners: &Corners, p: Vec2) -> f32 {
        let mut from = self.deque.apex();
        let mut run = 0.0;
        let last = self.deque.taut_to(corners, p, |c| {
            run += from.distance(c);
            from = c;
        });
        run + last.distance(p)
    }

    /// The state after making `crossing` through the portal `ends`,
    /// charging `rate` per unit.
    ///
    /// The portal narrows the funnel; `at` is where the taut path from the
    /// apex to the goal crosses the portal, and the cost to it is exact, so
    /// a state's f-value is the length of the shortest path to the goal
    /// through its funnel, ignoring walls beyond it: it never falls along
    /// an edge, even where the cost to `at` does.
    #[inline]
    fn through(
        &self,
        corners: &mut Corners,
        crossing: u32,
        ends: [Vec2; 2],
        goal: Vec2,
        rate: f32,
    ) -> Self {
        let mut next = self.narrowed(corners, crossing, ends, rate);
        let [l, r] = next.deque.ends(corners);
        let taut = if l == r {
            next.at = l;
            next.taut_length(corners, l)
        } else {
            // the taut path to the goal through the funnel, with a goal on
            // this side of the portal mirrored to the far side (only the
            // sum of the two distances to points on the portal matters)
            let [pl, pr] = ends;
            let beyond = orient(pl, pr, goal);
            let target = if beyond > 0.0 || pl == pr {
                goal
            } else {
                let d = pr - pl;
                goal - d.perp() * (2.0 * beyond / d.length_squared())
            };
            let (mut from, mut run) = (next.deque.apex(), 0.0);
            let pivot = next.deque.taut_to(corners, target, |c| {
                run += from.distance(c);
                from = c;
            });
            next.at = taut_point_on_segment(l, r, pivot, goal);
            // `at` lies on the string from the pivot on: the taut path to it
            // wraps the same corners
            run + pivot.distance(next.at)
        };
        next.cost = next.apex_cost + taut * rate;
        next
    }

    /// The funnel narrowed by the portal `ends` of `crossing`, with the
    /// cost to its apex charged at `rate`; `at` and the cost to it are
    /// left to the caller.
    #[inline]
    fn narrowed(&self, corners: &mut Corners, crossing: u32, ends: [Vec2; 2], rate: f32) -> Self {
        let mut next = *self;
        next.crossing = crossing;
        let mut from = next.deque.apex();
        let mut run = 0.0;
        next.deque.add(corners, ends, |c| {
            run += from.distance(c);
            from = c;
        });
        next.apex_cost += run * rate;
        next
    }

    /// The state after making `crossing` through the portal `ends` in a
    /// search with no goal ([`PortalSearch::explore`]), charging `rate`
    /// per unit: the apex and its cost as [`Self::through`] gives them, but
    /// `at` the point of the funnel's window nearest the apex and the cost
    /// to it the straight line's at `rate` (on a single-cost mesh, a lower
    /// bound on the cost of anything beyond the portal). Only the order of
    /// expansion depends on it: an exploration runs until no state is left
    /// (or its budget is spent) and reads its costs off the apexes
    /// ([`PortalSearch::for_each_state`]), so the order changes how many
    /// states it makes and, between states of equal cost, which one a leg
    /// point's route comes from, not the costs. It saves `through`'s walk
    /// along the funnel to a goal.
    #[inline]
    fn toward_window(
        &self,
        corners: &mut Corners,
        crossing: u32,
        ends: [Vec2; 2],
        rate: f32,
    ) -> Self {
        let mut next = self.narrowed(corners, crossing, ends, rate);
        let [l, r] = next.deque.ends(corners);
        let apex = next.deque.apex();
        next.at = closest_on_segment(l, r, apex);
        next.cost = next.apex_cost + apex.distance(next.at) * rate;
        next
    }

    /// The state on reaching the goal from the last portal crossed.
    #[inline]
    fn reach_goal(&self, corners: &Corners, goal: Vec2, rate: f32) -> Self {
        let mut next = *self;
        next.at = goal;
        next.crossing = NO_CROSSING;
        next.cost = next.apex_cost + next.taut_length(corners, goal) * rate;
        next
    }
}

impl SearchGraph for PortalGraph<'_> {
    type Payload = Funnel;

    fn node_count(&self) -> usize {
        2
    }

    #[inline]
    fn expand<F: FnMut(u32, &dyn Fn() -> (f32, Funnel))>(
        &self,
        _node: u32,
        state: Funnel,
        mut visit: F,
    ) {
        let t = self.tables;
        let b = self.between;
        let (region, came_through) = if state.crossing == NO_CROSSING {
            (b.start_region, u32::MAX)
        } else {
            (t.entered(state.crossing), state.crossing / 2)
        };
        let mut scratch = self.scratch.borrow_mut();
        // root pruning after the fact: the apex was reached more cheaply since
        let best = scratch.best.get(&key(state.deque.apex())).copied();
        if best.is_some_and(|best| worse(state.apex_cost, best)) {
            return;
        }
        let rate = t.region_cost[region as usize];
        let here = state.cost;
        // the cost to `at` may fall along an edge (`at` moves); g + h does not
        if region == b.goal_region {
            let to = state.reach_goal(&scratch.corners, b.goal, rate);
            visit(GOAL_NODE, &|| (to.cost - here, to));
        }
        for &p in t.portals_of(region) {
            if p == came_through {
                continue;
            }
            let Some((next, beyond)) = t.crossing_out_of(p, region) else {
                continue;
            };
            let open =
                || self.allowed(beyond) && t.worth_entering(beyond, b.start_region, b.goal_region);
            let enter = match self.within {
                Within::Cluster(region_cluster, c) => region_cluster[beyond as usize] == c,
                Within::Mesh => open(),
            };
            if !enter {
                continue;
            }
            let ends = t.crossing_ends(next);
            let to = match self.within {
                Within::Cluster(..) => state.toward_window(&mut scratch.corners, next, ends, rate),
                Within::Mesh => state.through(&mut scratch.corners, next, ends, b.goal, rate),
            };
            if scratch.admit(&state, &to) {
                visit(NEW_NODE, &|| (to.cost - here, to));
            }
        }
    }

    #[inline]
    fn heuristic(&self, _node: u32, state: Funnel) -> f32 {
        state.at.distance(self.between.goal) * self.heuristic_scale
    }

    #[inline]
    fn is_goal(&self, node: u32) -> bool {
        node == GOAL_NODE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::pull;
    use glam::vec2;

    /// Portals across a corridor running along +x: at `x`, open from `lo`
    /// to `hi` (crossing it, left is +y).
    fn corridor(spans: &[(f32, f32, f32)]) -> Vec<[Vec2; 2]> {
        spans
            .iter()
            .map(|&(x, lo, hi)| [vec2(x, hi), vec2(x, lo)])
            .collect()
    }

    /// Portals at x = 1, 2, ..., each open from `lo` to `lo + width`.
    fn unit_spaced(spans: &[(f32, f32)]) -> Vec<[Vec2; 2]> {
        let spans: Vec<_> = spans
            .iter()
            .enumerate()
            .map(|(i, &(lo, width))| (i as f32 + 1.0, lo, lo + width))
            .collect();
        corridor(&spans)
    }

    fn funnel_cost(start: Vec2, goal: Vec2, portals: &[[Vec2; 2]]) -> f32 {
        let mut corners = Corners::default();
        let mut f = Funnel::start(start);
        for &p in portals {
            f = f.through(&mut corners, 0, p, goal, 1.0);
        }
        f.reach_goal(&corners, goal, 1.0).cost
    }

    fn pulled_length(start: Vec2, goal: Vec2, portals: &[[Vec2; 2]]) -> f32 {
        let mut out = Vec::new();
        pull(start, goal, portals, &mut out);
        out.windows(2).map(|w| w[0].distance(w[1])).sum()
    }

    #[test]
    fn zigzag_costs_the_pulled_length() {
        let portals = corridor(&[
            (1.0, 0.0, 1.0),
            (2.0, 3.0, 4.0),
            (3.0, -2.0, 0.0),
            (4.0, 0.0, 5.0),
            (5.0, 4.0, 5.0),
        ]);
        let (a, b) = (vec2(0.0, 0.5), vec2(6.0, 0.0));
        let want = pulled_length(a, b, &portals);
        assert!((funnel_cost(a, b, &portals) - want).abs() < 1e-4);
    }

    /// Costs agree to 1e-3, relative above 1.
    fn agrees(got: f32, want: f32) -> bool {
        (got - want).abs() <= 1e-3 * want.max(1.0)
    }

    /// Checks the funnel against the pulled path, at the goal and at each
    /// crossing point on the way.
    fn check_funnel(a: Vec2, b: Vec2, portals: &[[Vec2; 2]]) -> Result<(), String> {
        let want = pulled_length(a, b, portals);
        let got = funnel_cost(a, b, portals);
        if !agrees(got, want) {
            return Err(format!("goal: {got} vs {want}"));
        }
        check_crossings(a, b, portals)
    }

    /// Checks each state's cost against the pulled path to its crossing
    /// point, whatever the goal the crossing points head for.
    fn check_crossings(a: Vec2, goal: Vec2, portals: &[[Vec2; 2]]) -> Result<(), String> {
        let mut corners = Corners::default();
        let mut f = Funnel::start(a);
        for (i, &p) in portals.iter().enumerate() {
            f = f.through(&mut corners, 0, p, goal, 1.0);
            let want = pulled_length(a, f.at, &portals[..i]);
            if !agrees(f.cost, want) {
                return Err(format!("portal {i}: {} vs {want}", f.cost));
            }
        }
        Ok(())
    }

    /// A search under the cost of a path in hand finds the shortest path
    /// exactly when it is shorter than that by more than the tie, at the
    /// cost the search without a bound finds, in no more expansions; under
    /// the shortest path's own cost it finds nothing (den520d's scenarios).
    #[test]
    fn a_bounded_search_finds_only_shorter_paths() {
        let level = crate::test_data::bundled_level("maps/den520d.map");
        let config = crate::BakeConfig {
            corridors: false,
            ..crate::BakeConfig::default()
        };
        let mesh = crate::NavMesh::bake(&level, &config).expect("bakes");
        let scen = crate::Scenario::load_file(crate::test_data::bundled("maps/den520d.map.scen"))
            .expect("scenarios");
        let t = &mesh.tables;
        let mut search = PortalSearch::default();
        let mut checked = 0;
        for s in scen.iter().step_by(17) {
            let (a, b) = (s.start_point(), s.goal_point());
            let locate = |p| mesh.locator.locate(t, p);
            let (Some(ra), Some(rb)) = (locate(a), locate(b)) else {
                continue;
            };
            let between = Between {
                start: a,
                start_region: ra,
                goal: b,
                goal_region: rb,
                excluded_areas: 0,
            };
            let SearchOutcome::Found(goal) = search.run(t, &between, u32::MAX, false) else {
                panic!("scenario {a} -> {b} unsolved");
            };
            let (cost, free) = (search.cost(goal).expect("cost"), search.expansions());
            assert_eq!(
                search.run_below(t, &between, u32::MAX, cost),
                SearchOutcome::Exhausted,
                "{a} -> {b}: found under its own cost {cost}"
            );
            assert!(search.expansions() <= free, "{a} -> {b}");
            let above = cost * 1.001 + 1e-3;
            let SearchOutcome::Found(goal) = search.run_below(t, &between, u32::MAX, above) else {
                panic!("{a} -> {b}: nothing under {above}");
            };
            assert_eq!(search.cost(goal), Some(cost), "{a} -> {b}");
            assert!(search.expansions() <= free, "{a} -> {b}");
            // no bound: the search without one
            let SearchOutcome::Found(goal) = search.run_below(t, &between, u32::MAX, f32::INFINITY)
            else {
                panic!("{a} -> {b}: nothing under no bound");
            };
            assert_eq!((search.cost(goal), search.expansions()), (Some(cost), free));
            checked += 1;
        }
        assert!(checked > 50, "{checked} scenarios");
    }

    proptest::proptest! {
        /// A state's cost is the pulled length to its crossing point also
        /// when the goal lies behind a portal, or beside the corridor (the
        /// goal mirrored across the portal, as a flat search meets it when
        /// its corridor turns back).
        #[test]
        fn crossing_costs_are_exact_for_any_goal(
            spans in proptest::collection::vec((-10.0f32..10.0, 0.1f32..6.0), 1..30),
            ay in -10.0f32..10.0,
            goal in (-5.0f32..40.0, -20.0f32..20.0),
        ) {
            let portals = unit_spaced(&spans);
            let (a, goal) = (vec2(0.0, ay), vec2(goal.0, goal.1));
            proptest::prop_assert_eq!(check_crossings(a, goal, &portals), Ok(()));
        }

        /// A triangle strip: consecutive portals share an end, as in a mesh.
        #[test]
        fn strip_costs_are_exact((a, b, portals) in crate::geometry::testing::strips(30)) {
            proptest::prop_assert_eq!(check_funnel(a, b, &portals), Ok(()));
        }

        /// The funnel's cost at the goal is the length of the path pulled
        /// taut through the same portals, for any corridor.
        #[test]
        fn goal_cost_is_the_pulled_length(
            spans in proptest::collection::vec((-10.0f32..10.0, 0.1f32..6.0), 1..30),
            ay in -10.0f32..10.0,
            by in -10.0f32..10.0,
        ) {
            let portals = unit_spaced(&spans);
            let (a, b) = (vec2(0.0, ay), vec2(spans.len() as f32 + 1.0, by));
            proptest::prop_assert_eq!(check_funnel(a, b, &portals), Ok(()));
        }
    }
}
