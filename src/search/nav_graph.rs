//! The L2 level as a search graph: nav nodes linked by cached corridors, plus
//! a start node linked to the nav nodes of the start's cluster and a goal node
//! linked from those of the goal's cluster (the live legs).

use glam::Vec2;

use super::SearchGraph;
use crate::mesh::hierarchy::{HierarchyData, HierarchyTables};

/// Payload of a node reached by a live leg rather than a corridor.
pub(crate) const LEG: u32 = u32::MAX;

/// A live leg between the start (or goal) and a nav node of its cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Leg {
    pub node: u32,
    /// Position of the node in its cluster's node list.
    pub k: u32,
    pub cost: f32,
    /// Local leg point of the cluster the leg goes to first.
    pub first_point: u32,
}

/// A borrowed view of the hierarchy for one query.
pub(crate) struct NavGraph<'a> {
    pub h: &'a HierarchyData,
    pub ht: &'a HierarchyTables,
    pub start_legs: &'a [Leg],
    pub goal_legs: &'a [Leg],
    pub start: Vec2,
    pub goal: Vec2,
    pub heuristic_scale: f32,
    /// Cluster of the start (its legs run there).
    pub start_cluster: u32,
    /// Leave every nav node through its other cluster (see `expand`); off
    /// for the bake's landmark distances, which need the whole graph.
    pub alternate: bool,
    /// Per landmark: its L2 distance to the goal through the goal legs.
    pub landmark_goal: &'a [f32],
}

impl<'a> NavGraph<'a> {
    /// The L2 graph alone, for the bake's searches from one nav node to all:
    /// no legs, no heuristic, and every corridor at every node.
    pub(crate) fn whole(h: &'a HierarchyData, ht: &'a HierarchyTables) -> Self {
        NavGraph {
            h,
            ht,
            start_legs: &[],
            goal_legs: &[],
            start: Vec2::ZERO,
            goal: Vec2::ZERO,
            heuristic_scale: 0.0,
            start_cluster: u32::MAX,
            alternate: false,
            landmark_goal: &[],
        }
    }

    #[inline]
    pub(crate) fn start_node(&self) -> u32 {
        self.h.nodes.len() as u32
    }

    #[inline]
    pub(crate) fn goal_node(&self) -> u32 {
        self.h.nodes.len() as u32 + 1
    }
}

impl SearchGraph for NavGraph<'_> {
    /// The corridor a node was reached by, or [`LEG`].
    type Payload = u32;

    const HEURISTIC_BY_NODE: bool = true;

    fn node_count(&self) -> usize {
        self.h.nodes.len() + 2
    }

    #[inline]
    fn expand<F: FnMut(u32, &dyn Fn() -> (f32, u32))>(&self, node: u32, via: u32, mut visit: F) {
        if node == self.start_node() {
            for leg in self.start_legs {
                visit(leg.node, &|| (leg.cost, LEG));
            }
            return;
        }
        // a node reached through cluster X leaves through its other cluster:
        // going on inside X is what X's direct corridor from the previous node
        // already offers (HPA*'s alternation of intra- and inter-cluster edges)
        let arrived_in = match self.h.corridors.get(via as usize) {
            Some(c) => c.cluster,
            None => self.start_cluster,
        };
        let leaves = |cluster: u32| !self.alternate || cluster != arrived_in || cluster == u32::MAX;
        match self.ht.corridor_runs(node) {
            // a run of one cluster is taken or skipped whole, in order
            Some(runs) => {
                for run in runs
                    .into_iter()
                    .filter(|r| r.first().is_some_and(|e| leaves(e.cluster)))
                {
                    for e in run {
                        visit(e.to, &|| (e.cost, e.corridor));
                    }
                }
            }
            None => {
                for e in self
                    .ht
                    .corridors_at(node)
                    .iter()
                    .filter(|e| leaves(e.cluster))
                {
                    visit(e.to, &|| (e.cost, e.corridor));
                }
            }
        }
        if let Some(leg) = self.goal_legs.iter().find(|l| l.node == node) {
            visit(self.goal_node(), &|| (leg.cost, LEG));
        }
    }

    /// The larger of the straight line and the landmark bound (ALT): for a
    /// landmark `L`, `d(n, goal) >= d(L, goal) - d(L, n)` by the triangle
    /// inequality, with `d(L, goal)` taken through the goal legs. (The other
    /// side, `d(L, n) - d(L, goal)`, is not used: `d(L, n)` is measured
    /// without the goal node, so it could overestimate.) Both bounds are
    /// admissible and consistent, so their maximum is too.
    #[inline]
    fn heuristic(&self, node: u32, _: u32) -> f32 {
        let n = node as usize;
        if n >= self.h.nodes.len() {
            let at = if node == self.start_node() {
                self.start
            } else {
                self.goal
            };
            return at.distance(self.goal) * self.heuristic_scale;
        }
        let euclid = self.h.nodes[n].at.distance(self.goal) * self.heuristic_scale;
        // A landmark in another component is infinitely far from both the
        // node and the goal (both are in the start's component): its bound is
        // NaN, which the comparisons below ignore. Four lanes let the loop vectorise.
        // no landmark distances to the goal (the bake's searches): no bound
        let row = &self.h.landmark_row(node)[..self.landmark_goal.len()];
        let mut lanes = [euclid; 4];
        let mut pairs = row.chunks_exact(4).zip(self.landmark_goal.chunks_exact(4));
        // `if b > lane` rather than `f32::max`: a NaN compares false, and the
        // comparison compiles to one max instruction per lane
        let raise = |lane: &mut f32, b: f32| {
            if b > *lane {
                *lane = b;
            }
        };
        for (dn, dg) in &mut pairs {
            for i in 0..4 {
                raise(&mut lanes[i], dg[i] - dn[i]);
            }
        }
        let tail = row.len() / 4 * 4;
        for (&dn, &dg) in row[tail..].iter().zip(&self.landmark_goal[tail..]) {
            raise(&mut lanes[0], dg - dn);
        }
        let [a, b, c, d] = lanes;
        let (mut x, y) = (if b > a { b } else { a }, if d > c { d } else { c });
        raise(&mut x, y);
        x
    }

    #[inline]
    fn is_goal(&self, node: u32) -> bool {
        node == self.goal_node()
    }
}
