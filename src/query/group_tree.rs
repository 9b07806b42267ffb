//! A group move's corridors as one tree grown from its goal.
//!
//! Every unit of a group move ends its corridor along the same few routes
//! into the goal: the tabled route from a nav node to a goal leg node is
//! that node's row walked towards it ([`HierarchyData::tabled_route`]), and
//! the goal's own search is a tree, so the routes from every nav node form
//! a tree rooted at the goal. [`GoalTree`] walks those routes backwards from
//! the goal, region by region, cutting loops as
//! [`NavQuery::corridor_without_loops`] does (backwards), and keeps at each
//! step the funnel ([`Deque`]) of everything between it and the goal. A
//! unit then walks only its own start leg back from where it joins the tree
//! and closes the funnel on its start: the corridor's shared part is walked
//! and funnelled once per group, not once per unit.

use glam::Vec2;

use super::hierarchical::crossing_at;
use super::hierarchical::{refined_route_clusters, REFINED_ROUTE_CLUSTERS};
use super::{Path, PathStatus, SearchLevel};
use crate::geometry::{push_point, Corners, Deque};
use crate::mesh::hierarchy::HierarchyData;
use crate::mesh::{reversed_crossings, NavMesh, RegionId};

const NONE: u32 = u32::MAX;

/// Clusters a corridor passes through that the tree counts exactly; more
/// count as one more. A unit whose corridor passes through at most
/// [`refined_route_clusters`] clusters is refined by the query's own rule
/// (`NavQuery::refine`), which the tree does not do: the count is that
/// rule's on meshes whose clusters aim for 16 regions or more, and on
/// others the tree serves no unit ([`GoalTree::tells_refined`]).
const COUNTED_CLUSTERS: usize = REFINED_ROUTE_CLUSTERS as usize;

/// One region of a corridor walked back from the goal.
#[derive(Debug, Clone, Copy)]
struct Step {
    parent: u32,
    /// An ancestor for level-ancestor jumps (Myers' skew-binary pointers:
    /// any ancestor is reached in O(log depth) jumps and parent steps).
    jump: u32,
    depth: u32,
    /// The crossing, walked from the goal, that entered `region` (`NONE` at
    /// the root).
    crossing: u32,
    region: u32,
    /// The funnel from the goal through every portal up to this step.
    funnel: Deque,
    /// The funnel's apex in `GoalTree::apexes`, `NONE` for the goal itself.
    apex: u32,
    /// The next step in the same region.
    same_region: u32,
    first_child: u32,
    next_sibling: u32,
    /// The first distinct clusters between here and the goal, and how many
    /// there are (at most `COUNTED_CLUSTERS + 1`).
    clusters: [u32; COUNTED_CLUSTERS],
    cluster_count: u8,
    /// Where the corridor from here to the goal (`depth + 1` regions) is
    /// written out in `GoalTree::corridors`, `NONE` until a unit needs it.
    corridor_at: u32,
}

/// The tree of a group move's corridors, from its goal (see the module).
#[derive(Debug, Clone, Default)]
pub(super) struct GoalTree {
    steps: Vec<Step>,
    corners: Corners,
    /// Corners the funnels' apexes moved over: the point, the corner after
    /// it towards the goal (`NONE` for the goal), and how many corners
    /// there are from it to the goal.
    apexes: Vec<(Vec2, u32, u32)>,
    /// Per dense region: (stamp, first step in it).
    region_head: Vec<(u32, u32)>,
    stamp: u32,
    /// Per (exit slot, nav node): the step where the node's route to the
    /// goal starts, `NONE` until walked.
    memo: Vec<u32>,
    nodes: usize,
    goal: Vec2,
    route: Vec<(u32, u32)>,
    leg: Vec<u32>,
    corners_out: Vec<Vec2>,
    /// Corridors from steps to the goal, written out once per step where
    /// units join the tree ([`GoalTree::write_corridor`]), so a unit's path copies
    /// the shared part instead of walking it step by step.
    corridors: Vec<RegionId>,
    /// Scratch: regions of steps not written out yet, from a step upwards.
    corridor_scratch: Vec<RegionId>,
}

impl GoalTree {
    /// True when the tree tells every route that a query refines on `h`
    /// (through at most [`refined_route_clusters`] clusters) from the rest,
    /// so it may serve units there.
    pub(super) fn tells_refined(h: &HierarchyData) -> bool {
        refined_route_clusters(h) as usize <= COUNTED_CLUSTERS
    }

    /// Forgets the last group and starts a tree at `goal` (in dense region
    /// `goal_region`) for routes towards `slots` exit nodes.
    pub(super) fn reset(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        goal: (Vec2, u32),
        slots: usize,
    ) {
        self.steps.clear();
        self.corridors.clear();
        self.corners.clear();
        self.apexes.clear();
        self.goal = goal.0;
        self.nodes = h.nodes.len();
        self.memo.clear();
        self.memo.resize(slots * self.nodes, NONE);
        let regions = mesh.region_count();
        if self.region_head.len() < regions {
            self.region_head.resize(regions, (0, NONE));
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.region_head.fill((0, NONE));
            self.stamp = 1;
        }
        let cluster = h.region_cluster[goal.1 as usize];
        self.steps.push(Step {
            parent: NONE,
            jump: 0,
            depth: 0,
            crossing: NONE,
            region: goal.1,
            funnel: Deque::new(goal.0),
            apex: NONE,
            same_region: NONE,
            first_child: NONE,
            next_sibling: NONE,
            clusters: [cluster; COUNTED_CLUSTERS],
            cluster_count: 1,
            corridor_at: NONE,
        });
        self.region_head[goal.1 as usize] = (self.stamp, 0);
    }

    /// The ancestor of `x` at `depth` (at most `x`'s own).
    fn ancestor_at(&self, mut x: u32, depth: u32) -> u32 {
        while self.steps[x as usize].depth > depth {
            let s = &self.steps[x as usize];
            x = if self.steps[s.jump as usize].depth >= depth {
                s.jump
            } else {
                s.parent
            };
        }
        x
    }

    /// The regions from step `s` to the goal, written out in `self.corridors`
    /// (once per step): the steps up to the nearest ancestor already
    /// written out, then that ancestor's regions copied.
    fn write_corridor(&mut self, mesh: &NavMesh, s: u32) {
        let above = self.regions_up_to_written(mesh, s);
        let start = self.corridors.len();
        self.corridors.extend_from_slice(&self.corridor_scratch);
        if let Some(above) = above {
            self.corridors.extend_from_within(above);
        }
        self.steps[s as usize].corridor_at = start as u32;
    }

    /// Writes into `self.corridor_scratch` the regions of the steps from `s`
    /// up to, not including, the nearest one whose corridor is written out;
    /// that one's place in `self.corridors` (`None` when the walk reached past
    /// the goal).
    fn regions_up_to_written(
        &mut self,
        mesh: &NavMesh,
        mut s: u32,
    ) -> Option<std::ops::Range<usize>> {
        self.corridor_scratch.clear();
        while s != NONE {
            let step = &self.steps[s as usize];
            if step.corridor_at != NONE {
                let at = step.corridor_at as usize;
                return Some(at..at + step.depth as usize + 1);
            }
            self.corridor_scratch
                .push(mesh.tables.region_keys[step.region as usize]);
            s = step.parent;
        }
        None
    }

    /// The step after walking `crossing` (from the goal's side) from step
    /// `at`: the region it enters, unless that region is already on the way
    /// from `at` to the goal, in which case the loop is cut there.
    #[inline]
    fn extend(&mut self, mesh: &NavMesh, h: &HierarchyData, at: u32, crossing: u32) -> u32 {
        let mut k = self.steps[at as usize].first_child;
        while k != NONE {
            let s = &self.steps[k as usize];
            if s.crossing == crossing {
                return k;
            }
            k = s.next_sibling;
        }
        self.grow(mesh, h, at, crossing)
    }

    /// [`Self::extend`] where `at` has no child by `crossing` yet: the
    /// step it enters, new unless the region is on the way to the goal.
    #[inline(never)]
    fn grow(&mut self, mesh: &NavMesh, h: &HierarchyData, at: u32, crossing: u32) -> u32 {
        let t = &mesh.tables;
        let region = t.entered(crossing);
        let depth = self.steps[at as usize].depth;
        let (seen, mut s) = self.region_head[region as usize];
        if seen == self.stamp {
            while s != NONE {
                let step = &self.steps[s as usize];
                if step.depth <= depth && self.ancestor_at(at, step.depth) == s {
                    return s; // back in a region on the way: drop the loop
                }
                s = step.same_region;
            }
        }
        let here = self.steps[at as usize];
        let (mut funnel, mut apex) = (here.funnel, here.apex);
        let apexes = &mut self.apexes;
        funnel.add(&mut self.corners, t.crossing_ends(crossing), |p| {
            let count = apexes.get(apex as usize).map_or(0, |a| a.2);
            apexes.push((p, apex, count + 1));
            apex = apexes.len() as u32 - 1;
        });
        let (mut clusters, mut cluster_count) = (here.clusters, here.cluster_count);
        let c = h.region_cluster[region as usize];
        let counted = usize::from(cluster_count).min(COUNTED_CLUSTERS);
        if !clusters[..counted].contains(&c) {
            if counted < COUNTED_CLUSTERS {
                clusters[counted] = c;
            }
            cluster_count = (cluster_count + 1).min(COUNTED_CLUSTERS as u8 + 1);
        }
        let pj = &self.steps[here.jump as usize];
        let jump = if depth - pj.depth == pj.depth - self.steps[pj.jump as usize].depth {
            pj.jump
        } else {
            at
        };
        let id = self.steps.len() as u32;
        let (head_seen, head) = self.region_head[region as usize];
        self.steps.push(Step {
            parent: at,
            jump,
            depth: depth + 1,
            crossing,
            region,
            funnel,
            apex,
            same_region: if head_seen == self.stamp { head } else { NONE },
            first_child: NONE,
            next_sibling: here.first_child,
            clusters,
            cluster_count,
            corridor_at: NONE,
        });
        // the new step heads its parent's children and its region's steps
        self.steps[at as usize].first_child = id;
        self.region_head[region as usize] = (self.stamp, id);
        id
    }

    /// Walks `crossings` (as walked from the goal's side) from step `at`.
    fn walk(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        mut at: u32,
        crossings: impl IntoIterator<Item = u32>,
    ) -> u32 {
        for c in crossings {
            at = self.extend(mesh, h, at, c);
        }
        at
    }

    /// From step `at`, standing in the region where the route beyond nav
    /// node `node` starts, walks back across `node`'s portal into `region`
    /// (where the piece before it ends), if that is another region.
    fn bridge_back(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        at: u32,
        node: u32,
        region: u32,
    ) -> Option<u32> {
        let here = self.steps[at as usize].region;
        if here == region {
            return Some(at);
        }
        // the crossing walked forwards, out of `region` into `here`
        let crossing = crossing_at(mesh, h, node, region, here)?;
        Some(self.extend(mesh, h, at, crossing ^ 1))
    }

    /// The step where the route of nav node `node` to the goal starts (in
    /// the region its first corridor, or its goal leg, starts from), for
    /// exit slot `slot`. `next(v)` is the next node and the corridor to it
    /// on `v`'s route, `Some(None)` at the exit, `None` if the route is
    /// broken; `goal_leg(v, out)` writes the
    /// exit `v`'s goal leg walked from the goal and returns where it ends.
    pub(super) fn node_step(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        (slot, node): (usize, u32),
        next: impl Fn(u32) -> Option<Option<(u32, u32)>>,
        mut goal_leg: impl FnMut(u32, &mut Vec<u32>) -> Option<u32>,
    ) -> Option<u32> {
        let base = slot * self.nodes;
        let mut route = std::mem::take(&mut self.route);
        route.clear();
        let mut v = node;
        let outcome = 'walk: {
            while self.memo[base + v as usize] == NONE {
                let Some(step) = next(v) else {
                    break 'walk None;
                };
                let Some((w, corridor)) = step else {
                    // the exit: its goal leg, walked from the goal
                    let mut leg = std::mem::take(&mut self.leg);
                    leg.clear();
                    let end = goal_leg(v, &mut leg);
                    let at = self.walk(mesh, h, 0, leg.iter().copied());
                    self.leg = leg;
                    match end {
                        Some(end) if self.steps[at as usize].region == end => {
                            self.memo[base + v as usize] = at;
                        }
                        _ => break 'walk None,
                    }
                    break;
                };
                if route.len() >= self.nodes {
                    break 'walk None;
                }
                route.push((v, corridor));
                v = w;
            }
            // back along the route, each corridor from the node after it
            for &(u, corridor) in route.iter().rev() {
                let e = h.corridors.get(corridor as usize)?;
                // stored from `u` to `w`, or the other way round
                let from_u = e.ends[0] == u;
                let (w, entry, exit) = if from_u {
                    (e.ends[1], e.regions[0], e.regions[1])
                } else {
                    (e.ends[0], e.regions[1], e.regions[0])
                };
                let Some(at) = self.bridge_back(mesh, h, self.memo[base + w as usize], w, exit)
                else {
                    break 'walk None;
                };
                let x = h.crossings_of(e);
                let at = if from_u {
                    self.walk(mesh, h, at, reversed_crossings(x))
                } else {
                    self.walk(mesh, h, at, x.iter().copied())
                };
                if self.steps[at as usize].region != entry {
                    break 'walk None;
                }
                self.memo[base + u as usize] = at;
            }
            Some(self.memo[base + node as usize])
        };
        self.route = route;
        outcome
    }

    /// A unit's path: from step `at` (where the route of its first nav node
    /// `first` starts), back across `first`'s portal and along its start leg
    /// (`leg`, walked from its start region towards `first`, ending in
    /// `leg_end`), then the funnel closed on `start`. False, with `path`
    /// untouched, when the pieces do not join or the corridor passes
    /// through at most `COUNTED_CLUSTERS` clusters (the query refines
    /// those; the caller answers the unit as a query does).
    pub(super) fn unit_path(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        at: u32,
        (first, leg, leg_end): (u32, &[u32], u32),
        (start, start_region): (Vec2, u32),
        path: &mut Path,
    ) -> bool {
        let Some(at) = self.bridge_back(mesh, h, at, first, leg_end) else {
            return false;
        };
        let end = self.walk(mesh, h, at, reversed_crossings(leg));
        let step = self.steps[end as usize];
        if step.region != start_region || usize::from(step.cluster_count) <= COUNTED_CLUSTERS {
            return false;
        }
        self.corners_out.clear();
        let out = &mut self.corners_out;
        step.funnel.taut_to(&self.corners, start, |p| out.push(p));
        // each unit's path is its own: sized once, not grown
        let corners = self.apexes.get(step.apex as usize).map_or(0, |a| a.2);
        path.waypoints.clear();
        path.waypoints
            .reserve_exact(self.corners_out.len() + corners as usize + 2);
        path.waypoints.push(start);
        for &p in self.corners_out.iter().rev() {
            push_point(&mut path.waypoints, p);
        }
        let mut a = step.apex;
        while a != NONE {
            let (p, next, _) = self.apexes[a as usize];
            push_point(&mut path.waypoints, p);
            a = next;
        }
        push_point(&mut path.waypoints, self.goal);
        if self.steps[at as usize].corridor_at == NONE {
            self.write_corridor(mesh, at);
        }
        let above = self.regions_up_to_written(mesh, end);
        path.corridor.clear();
        path.corridor.reserve_exact(step.depth as usize + 1);
        path.corridor.extend_from_slice(&self.corridor_scratch);
        if let Some(above) = above {
            path.corridor.extend_from_slice(&self.corridors[above]);
        }
        path.finish(PathStatus::Complete);
        path.level = SearchLevel::NavPoints;
        true
    }
}
