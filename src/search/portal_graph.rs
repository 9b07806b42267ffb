//! The region level as a search graph whose nodes are portal crossings.
//!
//! Node `2p` crosses portal `p` from `regions[0]` into `regions[1]`, node
//! `2p + 1` the other way; two extra nodes stand for the start and the goal.
//!
//! Each node's payload is a small funnel ([`Funnel`]): the last corner the
//! pulled path wraps (the apex) with the exact cost to it, the crossings made
//! since, and the point where a taut string from the apex to the goal crosses
//! this portal. The node's cost is the length of the path pulled taut from the
//! apex through those crossings to that point, so the corridor chosen is the
//! one whose pulled path is (nearly) the cheapest; searching over region
//! centroids or fixed portal points instead picks corridors that look short
//! but pull badly, and a funnel that forgets the portals behind its apex sees
//! through walls (it underestimated chosen corridors by up to 43% on Aurora).
//!
//! What remains approximate: one state per directed portal (the first
//! expansion wins), the window of [`WINDOW`] crossings, and runs charged at
//! the rate of the region where they end (exact on single-cost meshes).

use glam::Vec2;

use super::SearchGraph;
use crate::geometry::{pull_corners, taut_point_on_segment};
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
        self.tables.entered(node)
    }

    /// `[left, right]` of a crossing node as seen by someone making the crossing.
    #[inline]
    pub(crate) fn crossing_ends(&self, node: u32) -> [Vec2; 2] {
        self.tables.crossing_ends(node)
    }

    #[inline]
    fn allowed(&self, region: u32) -> bool {
        let area = self.tables.region_area[region as usize];
        area >= 64 || self.excluded_areas & (1u64 << area) == 0
    }
}

/// Portals a [`Funnel`] remembers since its apex.
/// Crossings a [`Funnel`] remembers since its apex. 16 keeps nearly every
/// funnel exact on the Moving AI maps (8 left 28 paths above the octile
/// optimum, 16 and 32 both 24, before the edge-on fix for start points on portals) while the payload stays under 100 bytes.
const WINDOW: usize = 16;

/// The search state carried by a crossing node (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Funnel {
    /// Where the taut string from the apex to the goal crosses this portal.
    pub at: Vec2,
    /// Cost from the start to `at`.
    cost: f32,
    apex: Vec2,
    apex_cost: f32,
    /// Crossing nodes since the apex, oldest first: `crossings[..len]`.
    len: u8,
    crossings: [u32; WINDOW],
}

impl Funnel {
    pub(crate) fn start(p: Vec2) -> Funnel {
        Funnel {
            at: p,
            apex: p,
            ..Funnel::default()
        }
    }

    /// The state after making `crossing` (or reaching the goal, for `None`),
    /// charging `rate` per unit.
    ///
    /// The path since the apex is pulled taut through the remembered
    /// crossings: its corners move the apex forward, so the cost to `at` is
    /// the exact length of the taut path inside the corridor, as long as no
    /// more than [`WINDOW`] portals separate two corners (older ones are
    /// forgotten, which can only shorten the estimate).
    #[inline]
    fn cross(&self, graph: &PortalGraph<'_>, crossing: Option<u32>, rate: f32) -> Funnel {
        let mut next = *self;
        let goal = graph.goal;
        let [l, r] = match crossing {
            Some(node) => {
                if next.len as usize == WINDOW {
                    next.crossings.copy_within(1.., 0);
                    next.len -= 1;
                }
                next.crossings[next.len as usize] = node;
                next.len += 1;
                graph.crossing_ends(node)
            }
            None => [goal, goal],
        };
        // the portals before the one `at` lies on
        let behind = next.len as usize - usize::from(crossing.is_some());
        let mut ends = [[Vec2::ZERO; 2]; WINDOW];
        for (end, &node) in ends.iter_mut().zip(&next.crossings[..behind]) {
            *end = graph.crossing_ends(node);
        }
        next.at = if l == r {
            l
        } else {
            taut_point_on_segment(l, r, next.apex, goal)
        };
        // pull the string from the apex to `at`: its corners become the new apex
        let mut prev = next.apex;
        let mut run = 0.0;
        let mut last = None;
        pull_corners(next.apex, next.at, &ends[..behind], |c, i| {
            run += prev.distance(c);
            prev = c;
            last = Some(i);
        });
        next.cost = next.apex_cost + (run + prev.distance(next.at)) * rate;
        if let Some(i) = last {
            next.apex_cost += run * rate;
            next.apex = prev;
            next.crossings.copy_within(i + 1..next.len as usize, 0);
            next.len -= (i + 1) as u8;
        }
        next
    }
}

impl SearchGraph for PortalGraph<'_> {
    type Payload = Funnel;

    fn node_count(&self) -> usize {
        2 * self.tables.portal_regions.len() + 2
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
        // steps are differences of estimates, which may dip by rounding or when
        // an apex moves: never below zero, as A* requires
        let step = |crossing: Option<u32>| {
            let to = state.cross(self, crossing, cost);
            ((to.cost - here).max(0.0), to)
        };
        if region == self.goal_region {
            visit(self.goal_node(), &|| step(None));
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
            visit(next, &|| step(Some(next)));
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
