//! The region level as a search graph whose nodes are portal crossings.
//!
//! Node `2p` crosses portal `p` from `regions[0]` into `regions[1]`, node
//! `2p + 1` the other way; two extra nodes stand for the start and the goal.
//! Each node's payload is where the path crosses the portal: the point of the
//! portal a taut string from the previous crossing to the goal would pass
//! through. Costs are straight segments between crossings times the cost of
//! the region they run through, so the corridor chosen is the one whose pulled
//! path is (nearly) the cheapest; searching over region centroids instead
//! picks corridors that look short but pull badly.

use glam::Vec2;

use super::SearchGraph;
use crate::geometry::taut_point_on_segment;
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
    pub region_area: &'a [u16],
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
            return if node == self.start_node() { self.start_region } else { self.goal_region };
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
        let area = self.region_area[region as usize];
        area >= 64 || self.excluded_areas & (1u64 << area) == 0
    }
}

impl SearchGraph for PortalGraph<'_> {
    type Payload = Vec2;

    fn node_count(&self) -> usize {
        2 * self.tables.portal_regions.len() + 2
    }

    #[inline]
    fn expand<F: FnMut(u32, f32, Vec2)>(&self, node: u32, at: Vec2, mut visit: F) {
        let region = self.entered(node);
        let cost = self.tables.region_cost[region as usize];
        if region == self.goal_region {
            visit(self.goal_node(), at.distance(self.goal) * cost, self.goal);
        }
        let came_through = if node < self.start_node() { node / 2 } else { u32::MAX };
        for &p in self.tables.portals_of(region) {
            if p == came_through {
                continue;
            }
            let [a, b] = self.tables.portal_regions[p as usize];
            let (next, beyond) = if a == region { (2 * p, b) } else { (2 * p + 1, a) };
            if !self.allowed(beyond) {
                continue;
            }
            let [l, r] = self.tables.portal_ends[p as usize];
            let q = taut_point_on_segment(l, r, at, self.goal);
            visit(next, at.distance(q) * cost, q);
        }
    }

    #[inline]
    fn heuristic(&self, _node: u32, at: Vec2) -> f32 {
        at.distance(self.goal) * self.heuristic_scale
    }

    #[inline]
    fn is_goal(&self, node: u32) -> bool {
        node == self.goal_node()
    }
}
