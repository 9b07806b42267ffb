//! The L2 level as a search graph: nav nodes linked by cached corridors, plus
//! a start node linked to the nav nodes of the start's cluster and a goal node
//! linked from those of the goal's cluster (the live legs).

use glam::Vec2;

use super::SearchGraph;
use crate::mesh::hierarchy::{HierarchyData, HierarchyTables};

/// Corridor of a node reached by a live leg rather than a corridor.
pub(crate) const LEG: u32 = u32::MAX;

/// How the L2 search reached a nav node: the corridor (or [`LEG`]) and the
/// cluster it runs in, which expanding the node needs (see
/// [`NavGraph`]'s `expand`) without reading the corridor back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Via {
    pub corridor: u32,
    /// The corridor's cluster; for a leg, the cluster the leg runs in
    /// (`u32::MAX`: none, as for a search seed).
    pub cluster: u32,
}

impl Via {
    /// A search seed or a leg: no corridor, in `cluster`.
    pub(crate) const fn leg(cluster: u32) -> Via {
        Via {
            corridor: LEG,
            cluster,
        }
    }
}

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
    /// The landmarks the heuristic reads ([`ActiveLandmark::pick`]).
    pub landmarks: &'a [ActiveLandmark],
}

/// A landmark `L` as one query's heuristic uses it, with both sides of its
/// bound on what a nav node `n` still has to pay (see
/// [`NavGraph::heuristic`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ActiveLandmark {
    /// Its place in the hierarchy's landmark rows.
    pub index: u32,
    /// `d(L, goal) = min over goal legs l of d(L, l) + leg(l)`: the bound
    /// `near - d(L, n)`.
    pub near: f32,
    /// `max over goal legs l of d(L, l) - leg(l)`: the bound `d(L, n) - back`.
    pub back: f32,
    /// The bound where the search starts (the least over the start legs'
    /// nodes; minus infinity for a landmark in another component), by
    /// which [`ActiveLandmark::pick`] ranks it.
    pub at_start: f32,
}

/// Landmarks a query's L2 search reads per node it reaches: the ones whose
/// bound is highest at its start. On random512-20-0 (BENCHMARKS.md,
/// session 20) 4 cost fewer instructions than 2 or 8: the bound is read at
/// each of the thousands of nodes a search reaches, and more landmarks
/// save fewer expansions than they cost. Any count is exact.
pub(crate) const ACTIVE_LANDMARKS: usize = 4;

impl ActiveLandmark {
    /// Into `out`, the `count` of the `landmarks` (a query takes
    /// [`ACTIVE_LANDMARKS`] of the hierarchy's) whose bound is highest at
    /// the start (the least over the start legs' nodes; ties by index), for
    /// the goal reached through `goal_legs`. `row(n)` is
    /// nav node `n`'s distances to the landmarks
    /// ([`HierarchyData::landmark_row`]).
    pub(crate) fn pick<'r>(
        (landmarks, row): (u32, impl Fn(u32) -> &'r [f32]),
        (start_legs, goal_legs): (&[Leg], &[Leg]),
        count: usize,
        out: &mut Vec<ActiveLandmark>,
    ) {
        out.clear();
        for index in 0..landmarks {
            let (mut near, mut back) = (f32::INFINITY, f32::NEG_INFINITY);
            for l in goal_legs {
                let d = row(l.node)[index as usize];
                near = near.min(d + l.cost);
                back = back.max(d - l.cost);
            }
            let mut landmark = ActiveLandmark {
                index,
                near,
                back,
                at_start: f32::INFINITY,
            };
            // a landmark in another component bounds nothing (NaN): it
            // counts as no bound at all, never as the highest
            landmark.at_start = start_legs
                .iter()
                .map(|l| landmark.bound(row(l.node)[index as usize]))
                .map(|b| if b.is_nan() { f32::NEG_INFINITY } else { b })
                .fold(f32::INFINITY, f32::min);
            out.push(landmark);
        }
        // highest first, ties by index
        out.sort_by(|a, b| {
            b.at_start
                .total_cmp(&a.at_start)
                .then(a.index.cmp(&b.index))
        });
        out.truncate(count);
    }

    /// The bound at a node `d` from the landmark (NaN where the landmark is
    /// in another component).
    #[inline]
    fn bound(&self, d: f32) -> f32 {
        let (a, b) = (self.near - d, d - self.back);
        if b > a {
            b
        } else {
            a
        }
    }
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
            landmarks: &[],
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
    /// The corridor a node was reached by (or [`LEG`]), with its cluster.
    type Payload = Via;

    const HEURISTIC_BY_NODE: bool = true;

    fn node_count(&self) -> usize {
        self.h.nodes.len() + 2
    }

    #[inline]
    fn expand<F: FnMut(u32, &dyn Fn() -> (f32, Via))>(&self, node: u32, via: Via, mut visit: F) {
        if node == self.start_node() {
            let arrived = Via::leg(self.start_cluster);
            for leg in self.start_legs {
                visit(leg.node, &|| (leg.cost, arrived));
            }
            return;
        }
        // a node reached through cluster X leaves through its other cluster:
        // going on inside X is what X's direct corridor from the previous node
        // already offers (HPA*'s alternation of intra- and inter-cluster edges)
        let arrived_in = via.cluster;
        let leaves = |cluster: u32| !self.alternate || cluster != arrived_in || cluster == u32::MAX;
        match self.ht.corridor_runs(node) {
            // a run of one cluster is taken or skipped whole, in order
            Some(runs) => {
                for run in runs
                    .into_iter()
                    .filter(|r| r.first().is_some_and(|e| leaves(e.cluster)))
                {
                    for e in run {
                        visit(e.to, &|| (e.cost, e.via()));
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
                    visit(e.to, &|| (e.cost, e.via()));
                }
            }
        }
        if let Some(leg) = self.goal_legs.iter().find(|l| l.node == node) {
            visit(self.goal_node(), &|| {
                (leg.cost, Via::leg(self.start_cluster))
            });
        }
    }

    /// The larger of the straight line and the landmark bounds (ALT).
    /// `d(L, v)` is the shortest-path metric of the whole corridor graph
    /// (the landmark's search over it), which is undirected: every corridor
    /// is listed at both ends with one cost. This search's graph only drops
    /// corridors (the alternation of clusters) and adds a start and a goal
    /// node with no way back, so what a node `n` still has to pay here is at
    /// least `min over goal legs l of d(n, l) + leg(l)`. By the triangle
    /// inequality on `d(n, l)`, for each landmark `L` that is at least
    /// `near(L) - d(L, n)` and at least `d(L, n) - back(L)`
    /// ([`ActiveLandmark`]). Each bound changes by at most a corridor's cost
    /// along it, and is at most `leg(n)` at a goal leg's node `n`, so the
    /// maximum is admissible and consistent.
    #[inline]
    fn heuristic(&self, node: u32, _: Via) -> f32 {
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
        // a landmark in another component is infinitely far from both the
        // node and the goal: its bound is NaN, which `>` ignores
        let row = self.h.landmark_row(node);
        let mut best = euclid;
        for l in self.landmarks {
            let b = l.bound(row[l.index as usize]);
            if b > best {
                best = b;
            }
        }
        best
    }

    #[inline]
    fn is_goal(&self, node: u32) -> bool {
        node == self.goal_node()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{astar, SearchContext, SearchGraph};
    use crate::{BakeConfig, NavMesh};

    /// Every landmark's two-sided bound, on a searched hierarchy (Aurora in
    /// clusters of 16: no all-pairs table) and goal legs of any cost, is
    /// admissible (at most what a node still has to pay, by a Dijkstra from
    /// the goal legs) and consistent (it falls by at most a corridor's cost
    /// along it), so the L2 A* stays exact.
    #[test]
    fn both_sides_of_the_landmark_bound_are_admissible_and_consistent() {
        let level = crate::test_data::bundled_level("maps/Aurora.map");
        let config = BakeConfig {
            cluster_size: 16,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).expect("bakes");
        let h = mesh.data.hierarchy.as_ref().expect("hierarchy");
        assert!(!h.has_table() && h.landmark_count() == 16);
        let clusters = h.cluster_start.len() as u32 - 1;
        let (mut picked, mut ctx) = (Vec::new(), SearchContext::new());
        let mut raised = 0;
        for trial in 0..12u32 {
            // goal legs to the nodes of one cluster, start legs of another
            let legs_of = |c: u32, salt: u32| -> Vec<Leg> {
                h.nodes_of(c % clusters)
                    .iter()
                    .enumerate()
                    .map(|(k, &node)| Leg {
                        node,
                        k: k as u32,
                        cost: ((k as u32 * 37 + salt * 11) % 50) as f32,
                        first_point: 0,
                    })
                    .collect()
            };
            let goal_legs = legs_of(trial * 97 + 5, trial);
            let start_legs = legs_of(trial * 31 + 200, trial + 3);
            let rows = (h.landmark_count(), |n| h.landmark_row(n));
            ActiveLandmark::pick(rows, (&start_legs, &goal_legs), usize::MAX, &mut picked);
            assert_eq!(picked.len(), 16);
            let graph = NavGraph {
                landmarks: &picked,
                heuristic_scale: 0.0,
                ..NavGraph::whole(h, &mesh.hier)
            };
            // what each node still pays: a Dijkstra from the goal legs
            let seeds: Vec<_> = goal_legs
                .iter()
                .map(|l| (l.node, l.cost, Via::leg(u32::MAX)))
                .collect();
            astar(&NavGraph::whole(h, &mesh.hier), &mut ctx, &seeds, u32::MAX);
            let bound = |n: u32| graph.heuristic(n, Via::default());
            for n in 0..h.nodes.len() as u32 {
                let (b, to_goal) = (bound(n), ctx.cost(n).unwrap_or(f32::INFINITY));
                if to_goal.is_finite() {
                    assert!(
                        b <= to_goal * (1.0 + 1e-5) + 1e-3,
                        "node {n}: {b} > {to_goal}"
                    );
                }
                raised += usize::from(b > 0.0);
            }
            for e in &h.corridors {
                let (a, b) = (bound(e.ends[0]), bound(e.ends[1]));
                let slack = e.cost * (1.0 + 1e-5) + 1e-3;
                assert!(a <= b + slack && b <= a + slack, "corridor {e:?}: {a}, {b}");
            }
        }
        assert!(raised > 12 * h.nodes.len() / 2, "the bounds bind: {raised}");
    }

    /// The pick takes the landmarks with the highest bound at the start,
    /// and never one in another component (its bound is NaN): on rows made
    /// up for four nav nodes, landmark 0 unreachable from all of them.
    #[test]
    fn the_pick_prefers_binding_landmarks_and_skips_other_components() {
        let inf = f32::INFINITY;
        // per node: distances to landmarks 0, 1, 2
        let rows = [
            [inf, 0.0, 30.0],
            [inf, 2.0, 28.0],
            [inf, 40.0, 10.0],
            [inf, 41.0, 12.0],
        ];
        let leg = |node: u32, cost: f32| Leg {
            node,
            k: 0,
            cost,
            first_point: 0,
        };
        let (start, goal) = ([leg(0, 1.0), leg(1, 1.0)], [leg(2, 3.0), leg(3, 1.0)]);
        let mut out = Vec::new();
        let rows = (3, |n: u32| &rows[n as usize][..]);
        ActiveLandmark::pick(rows, (&start, &goal), 3, &mut out);
        let order: Vec<_> = out.iter().map(|l| l.index).collect();
        // landmark 1: near = min(43, 42) = 42, bound at node 0: 42, node 1:
        // 40; landmark 2: back = max(7, 11) = 11, bounds 19 and 17
        assert_eq!(order, [1, 2, 0]);
        assert_eq!((out[0].at_start, out[1].at_start), (40.0, 17.0));
        assert_eq!(out[2].at_start, f32::NEG_INFINITY);
        ActiveLandmark::pick(rows, (&start, &goal), 2, &mut out);
        assert!(out.iter().all(|l| l.index != 0));
    }
}
