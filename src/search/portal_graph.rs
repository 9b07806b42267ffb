//! The region level as a search graph whose nodes are portal crossings.
//!
//! Node `2p` crosses portal `p` from `regions[0]` into `regions[1]`, node
//! `2p + 1` the other way; two extra nodes stand for the start and the goal.
//!
//! Each node's payload is a one-step funnel ([`Funnel`]): the last corner the
//! pulled path must wrap around (the apex) with the exact cost to it, the
//! funnel's left and right edges, and the point where a taut string from the
//! apex to the goal crosses this portal. The node's cost is the apex cost plus
//! the straight run from the apex to that point, so the corridor chosen is the
//! one whose pulled path is (nearly) the cheapest; searching over region
//! centroids or fixed portal points instead picks corridors that look short
//! but pull badly.
//!
//! The funnel is approximate in one way: when an apex moves, the funnel
//! restarts at the current portal rather than re-scanning the portals since
//! the corner, and the cost of a run is charged at the rate of the region
//! where the run ends (exact on meshes with a single area cost).

use glam::Vec2;

use super::SearchGraph;
use crate::geometry::{narrow_edge_on, orient, taut_point_on_segment};
use crate::mesh::Tables;

/// Offset of the start node after the `2 * portal_count` crossing nodes.
pub(crate) const START_NODE_OFFSET: u32 = 0;
/// Offset of the goal node after the `2 * portal_count` crossing nodes.
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
        2 * self.tables.portal_regions.len() as u32 + START_NODE_OFFSET
    }

    #[inline]
    pub(crate) fn goal_node(&self) -> u32 {
        2 * self.tables.portal_regions.len() as u32 + GOAL_NODE_OFFSET
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
        let [a, b] = self.tables.portal_regions[(node / 2) as usize];
        if node % 2 == 0 {
            b
        } else {
            a
        }
    }

    /// `[left, right]` of a crossing node as seen by someone making the crossing.
    #[inline]
    pub(crate) fn crossing_ends(&self, node: u32) -> [Vec2; 2] {
        let [l, r] = self.tables.portal_ends[(node / 2) as usize];
        if node % 2 == 0 {
            [l, r]
        } else {
            [r, l]
        }
    }

    #[inline]
    fn allowed(&self, region: u32) -> bool {
        let area = self.tables.region_area[region as usize];
        area >= 64 || self.excluded_areas & (1u64 << area) == 0
    }
}

/// The search state carried by a crossing node (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Funnel {
    /// Where the taut string from the apex to the goal crosses this portal.
    pub at: Vec2,
    apex: Vec2,
    apex_cost: f32,
    left: Vec2,
    right: Vec2,
}

impl Funnel {
    pub(crate) fn start(p: Vec2) -> Funnel {
        Funnel {
            at: p,
            apex: p,
            apex_cost: 0.0,
            left: p,
            right: p,
        }
    }

    /// Cost from the start to `at`.
    #[inline]
    fn cost(&self, rate: f32) -> f32 {
        self.apex_cost + self.apex.distance(self.at) * rate
    }

    /// The funnel after crossing portal `[l, r]` (as seen crossing), charging
    /// `rate` per unit; `goal` picks the crossing point.
    #[inline]
    fn cross(mut self, l: Vec2, r: Vec2, rate: f32, goal: Vec2) -> Funnel {
        let a = self.apex;
        let [l, r] = narrow_edge_on(a, [l, r]);
        let mut moved = false;
        if self.right == a || orient(a, self.right, r) >= 0.0 {
            if self.left == a || orient(a, self.left, r) < 0.0 {
                self.right = r;
            } else {
                // the new right end passes the left edge: wrap around the left corner
                self.apex_cost += a.distance(self.left) * rate;
                self.apex = self.left;
                self.left = l;
                self.right = r;
                moved = true;
            }
        }
        if !moved && (self.left == a || orient(a, self.left, l) <= 0.0) {
            if self.right == a || orient(a, self.right, l) > 0.0 {
                self.left = l;
            } else {
                self.apex_cost += a.distance(self.right) * rate;
                self.apex = self.right;
                self.left = l;
                self.right = r;
            }
        }
        self.at = if l == r {
            l
        } else {
            taut_point_on_segment(l, r, self.apex, goal)
        };
        self
    }
}

impl SearchGraph for PortalGraph<'_> {
    type Payload = Funnel;

    fn node_count(&self) -> usize {
        2 * self.tables.portal_regions.len() + 2
    }

    #[inline]
    fn expand<F: FnMut(u32, f32, Funnel)>(&self, node: u32, state: Funnel, mut visit: F) {
        let region = self.entered(node);
        let cost = self.tables.region_cost[region as usize];
        let here = state.cost(cost);
        // steps are differences of estimates, which may dip by rounding or when
        // an apex moves: never below zero, as A* requires
        let mut emit = |next: u32, to: Funnel| visit(next, (to.cost(cost) - here).max(0.0), to);
        if region == self.goal_region {
            emit(
                self.goal_node(),
                state.cross(self.goal, self.goal, cost, self.goal),
            );
        }
        let came_through = if node < self.start_node() {
            node / 2
        } else {
            u32::MAX
        };
        for &p in self.tables.portals_of(region) {
            if p == came_through {
                continue;
            }
            let [a, b] = self.tables.portal_regions[p as usize];
            let (next, beyond) = if a == region {
                (2 * p, b)
            } else {
                (2 * p + 1, a)
            };
            if !self.allowed(beyond)
                || !self
                    .tables
                    .worth_entering(beyond, self.start_region, self.goal_region)
            {
                continue;
            }
            let [l, r] = self.crossing_ends(next);
            emit(next, state.cross(l, r, cost, self.goal));
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
