//! The region level as a search graph whose nodes are portal crossings.
//!
//! Crossing `2p` crosses portal `p` from `regions[0]` into `regions[1]`,
//! crossing `2p + 1` the other way. Each crossing has [`SLOTS`] nodes, told
//! apart by the apex of the state that reaches them; two extra nodes stand
//! for the start and the goal.
//!
//! Each node's payload is a funnel ([`Funnel`]) in the classic deque form:
//! the apex (the last corner every path along the corridor must wrap) with
//! the exact cost to it, and the taut chains from the apex to both ends of
//! the portal just crossed. The node's cost is the exact length of the
//! taut path to `at`, the point where the shortest path to the goal through
//! the funnel crosses the portal, so g + h is the length of that path: it is
//! admissible and, on a single-cost mesh, never falls along an edge,
//! although g alone can (`at` moves along each portal). Searching over region centroids or fixed portal
//! points instead picks corridors that look short but pull badly.
//!
//! Steps may be negative and the apex moves only over corners every path
//! must wrap, so costs are exact but for the approximations below; with
//! [`SLOTS`] states per crossing, the scenario suite asserts that no flat
//! path is longer than the octile optimum (the figures behind these choices
//! are in BENCHMARKS.md).
//!
//! What remains approximate: states whose apexes share a slot, chains longer
//! than [`CHAIN`], and runs charged at the rate of the region where they end
//! (exact on single-cost meshes).

use glam::Vec2;

use super::SearchGraph;
use crate::geometry::{orient, taut_point_on_segment, Deque};
use crate::mesh::Tables;

/// Offset of the start node after the `2 * SLOTS * portal_count` crossing nodes.
pub(crate) const START_NODE_OFFSET: u32 = 0;
/// Offset of the goal node after the `2 * SLOTS * portal_count` crossing nodes.
pub(crate) const GOAL_NODE_OFFSET: u32 = 1;

/// A borrowed view of the mesh for one query.
pub(crate) struct PortalGraph<'a> {
    pub tables: &'a Tables,
    pub start_region: u32,
    pub goal_region: u32,
    pub goal: Vec2,
    /// Bit `k` set: regions of area kind `k` may not be entered (kinds >= 64 are never excluded).
    pub excluded_areas: u64,
    pub heuristic_scale: f32,
}

impl PortalGraph<'_> {
    #[inline]
    pub(crate) fn start_node(&self) -> u32 {
        2 * SLOTS * self.tables.portal_regions.len() as u32 + START_NODE_OFFSET
    }

    #[inline]
    pub(crate) fn goal_node(&self) -> u32 {
        2 * SLOTS * self.tables.portal_regions.len() as u32 + GOAL_NODE_OFFSET
    }

    /// The crossing a crossing node makes.
    #[inline]
    pub(crate) fn crossing_of(&self, node: u32) -> u32 {
        node / SLOTS
    }

    /// The first of the [`SLOTS`] nodes making `crossing`.
    #[inline]
    pub(crate) fn node_of(&self, crossing: u32) -> u32 {
        crossing * SLOTS
    }

    /// Region a node enters (the start node "enters" the start region).
    #[inline]
    pub(crate) fn entered(&self, node: u32) -> u32 {
        if node >= self.start_node() {
            return if node == self.start_node() {
                self.start_region
            } else {
                self.goal_region
            };
        }
        self.tables.entered(self.crossing_of(node))
    }

    #[inline]
    fn allowed(&self, region: u32) -> bool {
        let area = self.tables.region_area[region as usize];
        area >= 64 || self.excluded_areas & (1u64 << area) == 0
    }
}

/// Nodes per directed crossing. States reaching a crossing with different
/// apexes usually land in different slots, so a state that looks worse at
/// this portal but turns better later is kept (polyanya keeps one state per
/// root for the same reason). More slots cost more expansions; with 1 or 2
/// the scenario suite's octile bound fails (see BENCHMARKS.md).
const SLOTS: u32 = 4;

/// The slot of a state with this apex: a hash of its bits.
#[inline]
fn slot(apex: Vec2) -> u32 {
    let h = (apex.x.to_bits() ^ apex.y.to_bits().rotate_left(16)).wrapping_mul(0x9E37_79B1);
    (h >> 16) % SLOTS
}

/// Corners a side of a [`Funnel`] holds. A longer chain drops its corner
/// nearest the apex, which can only shorten the estimate. 6 is the shortest
/// length tried that keeps the scenario suite's octile bound; longer chains
/// make the payload larger and each step dearer (see BENCHMARKS.md).
const CHAIN: usize = 6;

/// The search state carried by a crossing node (see the module docs): a
/// funnel ([`Deque`]) with the exact cost to its apex, and the crossing
/// point `at` toward the goal with the cost to it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Funnel {
    /// Where the taut string from the apex to the goal crosses this portal.
    pub at: Vec2,
    /// Cost from the start to `at`: the taut path through the funnel.
    cost: f32,
    apex_cost: f32,
    deque: Deque<CHAIN>,
}

impl Funnel {
    pub(crate) fn start(p: Vec2) -> Funnel {
        Funnel {
            at: p,
            deque: Deque::new(p),
            ..Funnel::default()
        }
    }

    /// Length of the taut path from the apex to `p` through the funnel.
    #[inline]
    fn taut_length(&self, p: Vec2) -> f32 {
        let mut from = self.deque.apex();
        let mut run = 0.0;
        let last = self.deque.taut_to(p, |c| {
            run += from.distance(c);
            from = c;
        });
        run + last.distance(p)
    }

    /// The state after making `crossing` (or reaching the goal, for `None`),
    /// charging `rate` per unit.
    ///
    /// The portal narrows the funnel; `at` is where the taut path from the
    /// apex to the goal crosses the portal, and the cost to it is exact
    /// (while no chain outgrows [`CHAIN`]), so a node's f-value is the
    /// length of the shortest path to the goal through its funnel, ignoring
    /// walls beyond it: it never falls along an edge, even where the cost
    /// to `at` does.
    #[inline]
    fn cross(&self, graph: &PortalGraph<'_>, crossing: Option<u32>, rate: f32) -> Funnel {
        match crossing {
            Some(node) => self.through(graph.tables.crossing_ends(node), graph.goal, rate),
            None => self.reach_goal(graph.goal, rate),
        }
    }

    /// The state after crossing the portal `ends` (see [`Funnel::cross`]).
    #[inline]
    fn through(&self, ends: [Vec2; 2], goal: Vec2, rate: f32) -> Funnel {
        let mut next = *self;
        let mut from = next.deque.apex();
        let mut run = 0.0;
        next.deque.add(ends, |c| {
            run += from.distance(c);
            from = c;
        });
        next.apex_cost += run * rate;
        let [l, r] = next.deque.ends();
        next.at = if l == r {
            l
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
            let pivot = next.deque.taut_to(target, |_| {});
            taut_point_on_segment(l, r, pivot, goal)
        };
        next.cost = next.apex_cost + next.taut_length(next.at) * rate;
        next
    }

    /// The state on reaching the goal from the last portal crossed.
    #[inline]
    fn reach_goal(&self, goal: Vec2, rate: f32) -> Funnel {
        let mut next = *self;
        next.at = goal;
        next.cost = next.apex_cost + next.taut_length(goal) * rate;
        next
    }
}

impl SearchGraph for PortalGraph<'_> {
    type Payload = Funnel;

    fn node_count(&self) -> usize {
        2 * SLOTS as usize * self.tables.portal_regions.len() + 2
    }

    #[inline]
    fn expand<F: FnMut(u32, &dyn Fn() -> (f32, Funnel))>(
        &self,
        node: u32,
        state: Funnel,
        mut visit: F,
    ) {
        let region = self.entered(node);
        let cost = self.tables.region_cost[region as usize];
        let here = state.cost;
        // the cost to `at` may fall along an edge (`at` moves); g + h does not
        let step = |crossing: Option<u32>| {
            let to = state.cross(self, crossing, cost);
            (to.cost - here, to)
        };
        if region == self.goal_region {
            visit(self.goal_node(), &|| step(None));
        }
        let came_through = if node < self.start_node() {
            self.crossing_of(node) / 2
        } else {
            u32::MAX
        };
        for &p in self.tables.portals_of(region) {
            if p == came_through {
                continue;
            }
            let Some((next, beyond)) = self.tables.crossing_out_of(p, region) else {
                continue;
            };
            if !self.allowed(beyond)
                || !self
                    .tables
                    .worth_entering(beyond, self.start_region, self.goal_region)
            {
                continue;
            }
            // computed before the search sees the node, even for a node it
            // has closed: the slot depends on the state's apex
            let (cost, to) = step(Some(next));
            visit(self.node_of(next) + slot(to.deque.apex()), &|| (cost, to));
        }
    }

    #[inline]
    fn heuristic(&self, _node: u32, state: Funnel) -> f32 {
        state.at.distance(self.goal) * self.heuristic_scale
    }

    #[inline]
    fn is_goal(&self, node: u32) -> bool {
        node == self.goal_node()
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

    fn funnel_cost(start: Vec2, goal: Vec2, portals: &[[Vec2; 2]]) -> f32 {
        let mut f = Funnel::start(start);
        for &p in portals {
            f = f.through(p, goal, 1.0);
        }
        f.reach_goal(goal, 1.0).cost
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

    /// Checks the funnel against the pulled path, at the goal and at each
    /// crossing point on the way: equal while no chain can outgrow [`CHAIN`]
    /// (`exact`), never longer otherwise (a full chain forgets a corner).
    fn check_funnel(a: Vec2, b: Vec2, portals: &[[Vec2; 2]], exact: bool) -> Result<(), String> {
        let agrees = |got: f32, want: f32| {
            let tolerance = 1e-3 * want.max(1.0);
            if exact {
                (got - want).abs() <= tolerance
            } else {
                got <= want + tolerance
            }
        };
        let want = pulled_length(a, b, portals);
        let got = funnel_cost(a, b, portals);
        if !agrees(got, want) {
            return Err(format!("goal: {got} vs {want}"));
        }
        let mut f = Funnel::start(a);
        for (i, &p) in portals.iter().enumerate() {
            f = f.through(p, b, 1.0);
            let want = pulled_length(a, f.at, &portals[..i]);
            if !agrees(f.cost, want) {
                return Err(format!("portal {i}: {} vs {want}", f.cost));
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// A triangle strip: consecutive portals share an end, as in a mesh.
        #[test]
        fn strip_costs_are_exact(
            top in proptest::collection::vec((0.2f32..3.0, -2.5f32..2.5), 1..20),
            bottom in proptest::collection::vec((0.2f32..3.0, -2.5f32..2.5), 1..20),
            ay in -2.0f32..2.0,
            by in -2.0f32..2.0,
            wave in 0.0f32..8.0,
        ) {
            let strip = crate::geometry::testing::strip(&top, &bottom, ay, by, wave);
            proptest::prop_assume!(strip.is_some());
            let (a, b, portals) = strip.unwrap();
            // a chain holds corners of one side: at most that side's vertices
            let exact = top.len() <= CHAIN && bottom.len() <= CHAIN;
            proptest::prop_assert_eq!(check_funnel(a, b, &portals, exact), Ok(()));
        }

        /// The funnel's cost at the goal is the length of the path pulled
        /// taut through the same portals, for any corridor.
        #[test]
        fn goal_cost_is_the_pulled_length(
            spans in proptest::collection::vec((-10.0f32..10.0, 0.1f32..6.0), 1..30),
            ay in -10.0f32..10.0,
            by in -10.0f32..10.0,
        ) {
            let spans: Vec<_> = spans
                .iter()
                .enumerate()
                .map(|(i, &(lo, w))| (i as f32 + 1.0, lo, lo + w))
                .collect();
            let portals = corridor(&spans);
            let (a, b) = (vec2(0.0, ay), vec2(spans.len() as f32 + 1.0, by));
            let exact = portals.len() <= CHAIN;
            proptest::prop_assert_eq!(check_funnel(a, b, &portals, exact), Ok(()));
        }
    }
}
