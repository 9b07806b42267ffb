//! Long queries over the nav-point hierarchy (see [`crate::mesh::hierarchy`]).
//!
//! ```text
//! start --live leg--> nav node A --cached--> ... --cached--> B --live leg--> goal
//! ```
//! The legs come from the clusters' leg tables (pulled taut where it
//! matters), the middle from the all-pairs table or, on larger L2 graphs, an
//! A* over it; the pieces are concatenated into one list of portal
//! crossings, loops are cut, and ONE funnel runs over the whole corridor, so
//! the path never bends at a nav point it does not need. A short route
//! (through three clusters, or more where clusters are small) is then
//! refined by the flat search within a budget.

use glam::Vec2;

use super::{Ends, Fallback, NavQuery, Path, PathStatus, SearchLevel};
use crate::mesh::hierarchy::{Corridor, HierarchyData, NavPointKind};
use crate::mesh::{reversed_crossings, NavMesh};
use crate::search::{
    astar, ActiveLandmark, Between, Leg, NavGraph, SearchOutcome, Via, ACTIVE_LANDMARKS, LEG,
};

impl NavQuery {
    /// Answers a query through the hierarchy when the mesh has one and the
    /// ends are in clusters that are not neighbours (or both are designer nav
    /// points). Otherwise leaves `path` alone and says why the caller should
    /// run the flat search instead.
    pub(super) fn try_hierarchical(
        &mut self,
        mesh: &NavMesh,
        ends: &Ends,
        path: &mut Path,
    ) -> Result<(), Fallback> {
        let &Ends {
            start,
            start_region,
            goal,
            goal_region,
        } = ends;
        let Some(h) = mesh.data.hierarchy.as_ref() else {
            return Err(Fallback::NoHierarchy);
        };
        if self.cached_designer_corridor(mesh, h, (start, start_region), (goal, goal_region)) {
            self.path_along_crossings(mesh, start_region, start, goal, PathStatus::Complete, path);
            path.level = SearchLevel::CachedCorridor;
            return Ok(());
        }
        let (cs, cg) = (
            h.region_cluster[start_region as usize],
            h.region_cluster[goal_region as usize],
        );
        if cs == cg || mesh.hier.neighbours(cs, cg) {
            return Err(Fallback::NearClusters);
        }
        legs(mesh, h, start_region, start, &mut self.start_side.legs);
        legs(mesh, h, goal_region, goal, &mut self.goal_side.legs);
        if self.start_side.legs.is_empty() || self.goal_side.legs.is_empty() {
            return Err(Fallback::NoNavNodes); // nothing to stitch
        }
        let routed = if !h.has_table() {
            // every leg is pulled taut here: the search dominates the time
            let scratch = (&mut self.leg_buffer, &mut self.leg_ends);
            pull_all(
                mesh,
                h,
                &mut self.start_side.legs,
                (start, start_region),
                scratch,
            );
            let scratch = (&mut self.leg_buffer, &mut self.leg_ends);
            pull_all(
                mesh,
                h,
                &mut self.goal_side.legs,
                (goal, goal_region),
                scratch,
            );
            self.l2_route_by_search(mesh, h, (start, cs), goal)
        } else {
            self.l2_route_from_table(mesh, h, (start, start_region), (goal, goal_region))
        };
        if !routed {
            return Err(Fallback::NoRoute); // the flat search decides
        }
        if !self.stitch(mesh, h, start_region, goal_region) {
            return Err(Fallback::BrokenStitch);
        }
        self.pull_route(mesh, h, ends, path);
        let between = (start, goal);
        if mesh
            .hier
            .open_zone_might_be_shorter(mesh.tables.min_cost, between, path.length())
        {
            return Err(Fallback::OpenZone);
        }
        Ok(())
    }

    /// Fills `path` from the stitched corridor in `self.crossings` between
    /// `ends`, refined first when the route is short ([`NavQuery::refine`])
    /// and its pulled path is not already a straight line at the cheapest
    /// rate.
    pub(super) fn pull_route(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        ends: &Ends,
        path: &mut Path,
    ) {
        let (start, region, goal) = (ends.start, ends.start_region, ends.goal);
        self.path_along_crossings(mesh, region, start, goal, PathStatus::Complete, path);
        let t = &mesh.tables;
        let straight = path.waypoints.len() == 2
            && self
                .regions
                .iter()
                .all(|&r| t.region_cost[r as usize] == t.min_cost);
        if !straight && self.refine(mesh, h, ends, path.length()) {
            self.path_along_crossings(mesh, region, start, goal, PathStatus::Complete, path);
        }
        path.level = SearchLevel::NavPoints;
    }

    /// On a route through at most [`refined_route_clusters`] clusters,
    /// replaces the stitched corridor in `self.crossings` by the shortest
    /// path's (the flat search, free to leave the route's clusters), which
    /// is never longer; true if it did. Keeps the stitched one when that
    /// search makes more than [`refine_budget`] expansions, or when the path
    /// pulled along it (`length` world units) is the shortest: on a route
    /// at one rate the search looks only for shorter paths
    /// ([`crate::search::PortalSearch::run_below`]), so it opens none of the states that
    /// could only match it.
    fn refine(&mut self, mesh: &NavMesh, h: &HierarchyData, ends: &Ends, length: f32) -> bool {
        let t = &mesh.tables;
        let clusters = h.cluster_start.len().saturating_sub(1);
        self.route_clusters.clear();
        self.route_clusters.resize(clusters.div_ceil(64), 0);
        let regions =
            std::iter::once(ends.start_region).chain(self.crossings.iter().map(|&c| t.entered(c)));
        // distinct clusters, counted until there are too many: a long
        // route stops early
        let (limit, mut passed) = (refined_route_clusters(h), 0);
        let mut one_rate = true;
        for r in regions {
            one_rate &= t.region_cost[r as usize] == t.min_cost;
            let c = h.region_cluster[r as usize] as usize;
            let (word, bit) = (&mut self.route_clusters[c / 64], 1u64 << (c % 64));
            if *word & bit == 0 {
                *word |= bit;
                passed += 1;
                if passed > limit {
                    return false;
                }
            }
        }
        let between = Between {
            start: ends.start,
            start_region: ends.start_region,
            goal: ends.goal,
            goal_region: ends.goal_region,
            excluded_areas: 0,
        };
        // on a route at one rate the path in hand costs its length at that
        // rate, and only a shorter path replaces it
        let bound = if one_rate {
            length * t.min_cost
        } else {
            f32::INFINITY
        };
        let outcome = self.flat.run_below(t, &between, refine_budget(h), bound);
        self.last_expansions += self.flat.expansions();
        let SearchOutcome::Found(node) = outcome else {
            return false;
        };
        self.flat
            .crossings(node, &mut self.nodes, &mut self.crossings);
        true
    }

    /// The L2 route by the generic A* over nav nodes (landmark heuristic),
    /// into `self.l2_route`.
    fn l2_route_by_search(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        (start, start_cluster): (Vec2, u32),
        goal: Vec2,
    ) -> bool {
        ActiveLandmark::pick(
            (h.landmark_count(), |n| h.landmark_row(n)),
            (&self.start_side.legs, &self.goal_side.legs),
            ACTIVE_LANDMARKS,
            &mut self.landmarks,
        );
        let graph = NavGraph {
            landmarks: &self.landmarks,
            h,
            ht: &mesh.hier,
            start_legs: &self.start_side.legs,
            goal_legs: &self.goal_side.legs,
            start,
            goal,
            heuristic_scale: mesh.tables.min_cost,
            start_cluster,
            alternate: true,
        };
        let outcome = astar(
            &graph,
            &mut self.l2,
            &[(graph.start_node(), 0.0, Via::leg(u32::MAX))],
            self.max_expansions,
        );
        self.last_expansions += self.l2.expansions();
        let SearchOutcome::Found(end) = outcome else {
            return false;
        };
        self.l2.path_to(end, &mut self.l2_nodes);
        self.l2_route.clear();
        if self.l2_nodes.len() < 3 {
            return false;
        }
        for &n in &self.l2_nodes[1..self.l2_nodes.len() - 1] {
            let via = self.l2.payload(n).map_or(LEG, |v| v.corridor);
            self.l2_route.push((n, via));
        }
        true
    }

    /// The L2 route from the all-pairs table: the pair of legs with the
    /// cheapest start leg + tabled route + goal leg, into `self.l2_route`.
    ///
    /// Leg estimates run over the path pulled taut along them, most on large
    /// regions, which can pick the wrong corridor, and pulling every leg
    /// ([`pulled_leg_cost`]) would make the query much slower (see
    /// BENCHMARKS.md). So legs are pulled lazily: until it is pulled, a leg
    /// counts at a lower bound ([`optimistic`]), and the loop pulls the legs
    /// of the cheapest pair until both of that pair's legs are pulled, or
    /// until that pair at its legs' estimates (upper bounds) beats every
    /// other at its lower bounds: the pair it ends on is the cheapest with
    /// every leg pulled.
    fn l2_route_from_table(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        (start, start_region): (Vec2, u32),
        (goal, goal_region): (Vec2, u32),
    ) -> bool {
        let rate = mesh.tables.min_cost;
        self.start_side.guess_lazily(start, (h, rate));
        self.goal_side.guess_lazily(goal, (h, rate));
        let (start_legs, goal_legs) = (&self.start_side.legs, &self.goal_side.legs);
        let (buffer, ends) = (&mut self.leg_buffer, &mut self.leg_ends);
        let chosen = cheapest_pair(
            (&mut self.start_side.guess, &mut self.start_side.pulled),
            (&mut self.goal_side.guess, &mut self.goal_side.pulled),
            |i, j| h.l2_distance(start_legs[i].node, goal_legs[j].node),
            (
                |end, k| match end {
                    End::Start => start_legs[k].cost,
                    End::Goal => goal_legs[k].cost,
                },
                |end, k| match end {
                    End::Start => pulled_leg_cost(
                        mesh,
                        h,
                        start_legs,
                        k,
                        (start, start_region),
                        (buffer, ends),
                    ),
                    End::Goal => {
                        pulled_leg_cost(mesh, h, goal_legs, k, (goal, goal_region), (buffer, ends))
                    }
                },
            ),
            &mut self.partner,
        );
        let Some((i, j)) = chosen else {
            return false;
        };
        let (a, b) = (self.start_side.legs[i].node, self.goal_side.legs[j].node);
        if !h.tabled_route(&mesh.hier, a, b, &mut self.l2_route) {
            return false;
        }
        self.l2_route.insert(0, (a, LEG));
        true
    }

    /// When `start` and `goal` are two designer nav points with a cached
    /// corridor between them, puts its crossings in `self.crossings`.
    fn cached_designer_corridor(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        (start, start_region): (Vec2, u32),
        (goal, goal_region): (Vec2, u32),
    ) -> bool {
        let designers = &mesh.data.nav_points;
        let node_at = |p: Vec2| {
            let i = designers.iter().position(|d| d.at == p)?;
            let n = *mesh.hier.designer_node.get(i)?;
            (n != u32::MAX).then_some(n)
        };
        let (Some(a), Some(b)) = (node_at(start), node_at(goal)) else {
            return false;
        };
        let Some(e) = mesh.hier.corridors_at(a).iter().find_map(|e| {
            let c = &h.corridors[e.corridor as usize];
            (c.cluster == u32::MAX && c.ends == [a, b] && c.regions == [start_region, goal_region])
                .then_some(c)
        }) else {
            return false;
        };
        self.crossings.clear();
        append_corridor(h, e, a, &mut self.crossings);
        true
    }

    /// Concatenates start leg, corridors and goal leg of the L2 route in
    /// `self.l2_route` into `self.crossings`. False if the pieces do not join
    /// up (a damaged leg table can make it so; the checks on load rule out
    /// the rest): the caller then answers with the flat search rather than a
    /// broken path.
    pub(super) fn stitch(
        &mut self,
        mesh: &NavMesh,
        h: &HierarchyData,
        start_region: u32,
        goal_region: u32,
    ) -> bool {
        self.crossings.clear();
        let Some(&(first, _)) = self.l2_route.first() else {
            return false;
        };
        let Some(mut region) = walk_leg_to(
            mesh,
            h,
            &self.start_side.legs,
            first,
            start_region,
            &mut self.crossings,
        ) else {
            return false;
        };
        for w in self.l2_route.windows(2) {
            let (from, (_, via)) = (w[0].0, w[1]);
            let Some(e) = h.corridors.get(via as usize) else {
                return false;
            };
            let (entry, exit) = if e.ends[0] == from {
                (e.regions[0], e.regions[1])
            } else {
                (e.regions[1], e.regions[0])
            };
            if !bridge(mesh, h, from, &mut region, entry, &mut self.crossings) {
                return false;
            }
            append_corridor(h, e, from, &mut self.crossings);
            region = exit;
        }
        // goal leg: walked from the goal towards the last node, then reversed
        let Some(&(last, _)) = self.l2_route.last() else {
            return false;
        };
        self.leg_buffer.clear();
        let Some(entry) = walk_leg_to(
            mesh,
            h,
            &self.goal_side.legs,
            last,
            goal_region,
            &mut self.leg_buffer,
        ) else {
            return false;
        };
        if !bridge(mesh, h, last, &mut region, entry, &mut self.crossings) {
            return false;
        }
        self.crossings.extend(reversed_crossings(&self.leg_buffer));
        true
    }
}

/// Routes through at most this many clusters are refined by the flat
/// search ([`NavQuery::refine`]) on meshes whose clusters aim for at least
/// 16 regions ([`REFINED_REACH`] / 3): three is the fewest a route through the
/// hierarchy passes (the start's cluster, one between, the goal's), and
/// the shortest routes are where a nav node's place costs the most
/// relative to the path.
pub(super) const REFINED_ROUTE_CLUSTERS: u32 = 3;

/// Regions a refined route's clusters hold at the least (in aims): on a mesh
/// of smaller clusters (a `cluster_size` below 16) routes through as many
/// clusters as hold this many are refined. Three clusters of 16, the
/// smallest aim the bake picks on its own (its last resort, so no aim it
/// picks alone is affected): with smaller clusters, ends a few regions
/// apart pass through more than three clusters, and the route the sampled
/// crossings choose can go round a block (ARCHITECTURE.md, "Hierarchy").
const REFINED_REACH: u32 = 48;

/// Expansions per region of the refined clusters (counted as twice
/// the clusters' aim in regions each, what the matching makes at most; a cluster
/// grown by dead ends holds more, and its refinement may run out) that the
/// refinement may make: a cap on its
/// worst case, which the scheduler must be able to budget for, well above
/// what it needs on the wide map set (BENCHMARKS.md). A refinement that
/// hits it keeps the stitched corridor, the same way every time.
const REFINE_EXPANSIONS_PER_REGION: u32 = 2;

/// Most expansions [`NavQuery::refine`] makes on `h`.
pub(super) fn refine_budget(h: &HierarchyData) -> u32 {
    refined_route_clusters(h)
        .saturating_mul(2 * REFINE_EXPANSIONS_PER_REGION)
        .saturating_mul(h.stats.cluster_aim)
}

/// Routes through at most this many clusters of `h` are refined: three, or
/// as many as hold [`REFINED_REACH`] regions at `h`'s aim if that is more.
pub(super) fn refined_route_clusters(h: &HierarchyData) -> u32 {
    REFINED_REACH
        .div_ceil(h.stats.cluster_aim.max(1))
        .max(REFINED_ROUTE_CLUSTERS)
}

/// The live legs between `p` (in dense region `region`) and every nav node of
/// its cluster: straight to each leg point of the cluster on the
/// region's boundary (or in it), then along the cluster's leg table.
pub(super) fn legs(mesh: &NavMesh, h: &HierarchyData, region: u32, p: Vec2, out: &mut Vec<Leg>) {
    let t = &mesh.tables;
    out.clear();
    let c = h.region_cluster[region as usize];
    let points = h.points_of(c);
    let nodes = h.nodes_of(c);
    let rate = t.region_cost[region as usize];
    out.extend(nodes.iter().enumerate().map(|(k, &n)| Leg {
        node: n,
        k: k as u32,
        cost: f32::INFINITY,
        first_point: 0,
    }));
    let table = h.leg_costs(c);
    for &i in mesh.hier.points_touching(region) {
        let to_point = p.distance(points[i as usize].at) * rate;
        for (leg, &d) in out.iter_mut().zip(table.row(i as usize)) {
            let cost = to_point + d;
            if cost < leg.cost {
                leg.cost = cost;
                leg.first_point = i;
            }
        }
    }
    out.retain(|l| l.cost.is_finite());
}

/// Appends the crossings of the live leg (one of `legs`) between dense
/// `region` and nav node `node`, walked from the region; returns the region
/// where it ends, or `None` if `node` has no leg.
pub(super) fn walk_leg_to(
    mesh: &NavMesh,
    h: &HierarchyData,
    legs: &[Leg],
    node: u32,
    region: u32,
    out: &mut Vec<u32>,
) -> Option<u32> {
    let leg = legs.iter().find(|l| l.node == node)?;
    walk_leg(mesh, h, leg, region, out)
}

/// Appends the crossings of `leg`, walked from dense `region`; returns the
/// region where it ends.
fn walk_leg(
    mesh: &NavMesh,
    h: &HierarchyData,
    leg: &Leg,
    region: u32,
    out: &mut Vec<u32>,
) -> Option<u32> {
    let c = h.region_cluster[region as usize];
    let (from, k) = (leg.first_point as usize, leg.k as usize);
    h.walk_leg(&mesh.tables.portal_regions, c, from, k, region, out)
}

/// What a leg not yet pulled taut counts as when choosing the L2 route: a
/// lower bound on what pulling can give, the straight line to its nav node
/// at the cheapest rate. So the lazy choice is the one pulling every leg
/// would make.
fn optimistic(leg: &Leg, p: Vec2, h: &HierarchyData, rate: f32) -> f32 {
    (p.distance(h.nodes[leg.node as usize].at) * rate).min(leg.cost)
}

/// One end's legs to the nav nodes of its cluster, with what
/// [`cheapest_pair`] reads of them while it chooses a route.
#[derive(Debug, Clone, Default)]
pub(super) struct LegSet {
    pub(super) legs: Vec<Leg>,
    /// Per leg, what it counts as so far: a lower bound until it is pulled,
    /// then its cost pulled taut.
    pub(super) guess: Vec<f32>,
    /// Per leg, whether it has been pulled taut (or has nothing to gain).
    pub(super) pulled: Vec<bool>,
}

impl LegSet {
    /// How [`cheapest_pair`] starts on the legs from `p`: each leg counts
    /// at its [`optimistic`] guess, and one whose estimate is already that
    /// guess (its straight line) counts as pulled, having nothing to gain.
    pub(super) fn guess_lazily(&mut self, p: Vec2, (h, rate): (&HierarchyData, f32)) {
        let legs = &self.legs;
        self.guess.clear();
        self.guess
            .extend(legs.iter().map(|l| optimistic(l, p, h, rate)));
        self.pulled.clear();
        self.pulled
            .extend(legs.iter().zip(&self.guess).map(|(l, &g)| l.cost <= g));
    }
}

/// Which end of the query a leg belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    Start,
    Goal,
}

/// The pair (start leg, goal leg) with the cheapest leg + `dist(i, j)` + leg,
/// pulling legs taut lazily: `cost[k]` is what each leg counts as so far (an
/// optimistic guess until `pulled[k]`), `pull(end, k)` pulls a leg and returns
/// its cost, and the loop pulls the legs of the cheapest pair until both are
/// pulled. `upper(end, k)` is what a leg costs at most once pulled (its
/// estimate): a pair that costs less at its upper bounds than any other pair
/// at its guesses is the cheapest whatever the pulls would give, so it is
/// chosen without pulling (the choice pulling would make, as it is the only
/// cheapest pair). `partner` is scratch: per start leg, its cheapest goal leg.
pub(super) fn cheapest_pair(
    (start_cost, start_pulled): (&mut [f32], &mut [bool]),
    (goal_cost, goal_pulled): (&mut [f32], &mut [bool]),
    dist: impl Fn(usize, usize) -> f32,
    (upper, mut pull): (impl Fn(End, usize) -> f32, impl FnMut(End, usize) -> f32),
    partner: &mut Vec<(f32, u32)>,
) -> Option<(usize, usize)> {
    let best_partner = |i: usize, goal_cost: &[f32]| {
        let mut best = (f32::INFINITY, u32::MAX);
        for (j, &c) in goal_cost.iter().enumerate() {
            let d = dist(i, j) + c;
            if d < best.0 {
                best = (d, j as u32);
            }
        }
        best
    };
    partner.clear();
    partner.extend((0..start_cost.len()).map(|i| best_partner(i, goal_cost)));
    loop {
        let i = (0..start_cost.len())
            .filter(|&i| partner[i].1 != u32::MAX)
            .min_by(|&x, &y| {
                (start_cost[x] + partner[x].0).total_cmp(&(start_cost[y] + partner[y].0))
            })?;
        let j = partner[i].1 as usize;
        if start_pulled[i] && goal_pulled[j] {
            return Some((i, j));
        }
        // the pair at its upper bounds against every other at its guesses:
        // another start leg with its partner, or this one with another goal leg
        let at_most = if start_pulled[i] {
            start_cost[i]
        } else {
            upper(End::Start, i)
        } + dist(i, j)
            + if goal_pulled[j] {
                goal_cost[j]
            } else {
                upper(End::Goal, j)
            };
        let others = (0..start_cost.len())
            .filter(|&k| k != i && partner[k].1 != u32::MAX)
            .map(|k| start_cost[k] + partner[k].0)
            .chain(
                (0..goal_cost.len())
                    .filter(|&l| l != j)
                    .map(|l| start_cost[i] + dist(i, l) + goal_cost[l]),
            )
            .fold(f32::INFINITY, f32::min);
        if at_most < others {
            return Some((i, j));
        }
        if !start_pulled[i] {
            start_cost[i] = pull(End::Start, i);
            start_pulled[i] = true;
            debug_assert!(
                start_cost[i] <= upper(End::Start, i),
                "a pulled leg above its bound"
            );
        }
        if !goal_pulled[j] {
            let before = goal_cost[j];
            goal_cost[j] = pull(End::Goal, j);
            debug_assert!(
                goal_cost[j] <= upper(End::Goal, j),
                "a pulled leg above its bound"
            );
            goal_pulled[j] = true;
            let cheaper = goal_cost[j] < before;
            for (k, p) in partner.iter_mut().enumerate() {
                if cheaper {
                    // cheaper than guessed: a better partner for anyone
                    let d = dist(k, j) + goal_cost[j];
                    if d < p.0 {
                        *p = (d, j as u32);
                    }
                } else if p.1 as usize == j {
                    // dearer: those it partnered look again
                    *p = best_partner(k, goal_cost);
                }
            }
        }
    }
}

/// The cost of `legs[k]` pulled taut: the length of the path pulled from `p`
/// along the leg's route to its nav node, when that is cheaper than the
/// estimate (it usually is: the estimate goes straight to a point on the
/// region's boundary and is pulled only from there). A leg through areas of
/// another cost keeps its estimate.
pub(super) fn pulled_leg_cost(
    mesh: &NavMesh,
    h: &HierarchyData,
    legs: &[Leg],
    k: usize,
    (p, region): (Vec2, u32),
    (crossings, ends): (&mut Vec<u32>, &mut Vec<[Vec2; 2]>),
) -> f32 {
    let leg = legs[k];
    crossings.clear();
    if walk_leg(mesh, h, &leg, region, crossings).is_none() {
        return leg.cost;
    }
    let to = h.nodes[leg.node as usize].at;
    match mesh.tables.pulled_cost((p, region), to, crossings, ends) {
        Some(pulled) => leg.cost.min(pulled),
        None => leg.cost,
    }
}

/// Pulls every one of `legs` taut ([`pulled_leg_cost`]) from `end`.
pub(super) fn pull_all(
    mesh: &NavMesh,
    h: &HierarchyData,
    legs: &mut [Leg],
    end: (Vec2, u32),
    (crossings, ends): (&mut Vec<u32>, &mut Vec<[Vec2; 2]>),
) {
    for k in 0..legs.len() {
        legs[k].cost = pulled_leg_cost(mesh, h, legs, k, end, (crossings, ends));
    }
}

/// Appends the crossings of corridor `e` walked away from nav node `from`.
fn append_corridor(h: &HierarchyData, e: &Corridor, from: u32, out: &mut Vec<u32>) {
    let x = h.crossings_of(e);
    if e.ends[0] == from {
        out.extend_from_slice(x);
    } else {
        out.extend(reversed_crossings(x));
    }
}

/// Joins two pieces at nav node `node`: when the next piece starts on the
/// other side of the node's portal, crosses it. False if they cannot join.
fn bridge(
    mesh: &NavMesh,
    h: &HierarchyData,
    node: u32,
    region: &mut u32,
    entry: u32,
    out: &mut Vec<u32>,
) -> bool {
    if *region == entry {
        return true;
    }
    let Some(crossing) = crossing_at(mesh, h, node, *region, entry) else {
        return false;
    };
    out.push(crossing);
    *region = entry;
    true
}

/// The crossing of nav node `node`'s portal out of dense region `from`
/// into `into`; `None` for a designer node or a portal between other
/// regions.
pub(super) fn crossing_at(
    mesh: &NavMesh,
    h: &HierarchyData,
    node: u32,
    from: u32,
    into: u32,
) -> Option<u32> {
    let NavPointKind::Boundary { portal } = h.nodes[node as usize].kind else {
        return None;
    };
    let (crossing, entered) = mesh.tables.crossing_out_of(portal, from)?;
    (entered == into).then_some(crossing)
}

#[cfg(test)]
mod tests {
    use super::{cheapest_pair, End};

    /// Runs [`cheapest_pair`] with these (guess, true cost, already pulled)
    /// legs, true costs times `loose` as upper bounds, and this table.
    fn choose(
        start: &[(f32, f32, bool)],
        goal: &[(f32, f32, bool)],
        table: &[Vec<f32>],
        loose: f32,
    ) -> Option<(usize, usize)> {
        let (mut sc, mut sp): (Vec<f32>, Vec<bool>) = start.iter().map(|l| (l.0, l.2)).unzip();
        let (mut gc, mut gp): (Vec<f32>, Vec<bool>) = goal.iter().map(|l| (l.0, l.2)).unzip();
        let mut partner = Vec::new();
        let cost = |end, k: usize| match end {
            End::Start => start[k].1,
            End::Goal => goal[k].1,
        };
        cheapest_pair(
            (&mut sc, &mut sp),
            (&mut gc, &mut gp),
            |i, j| table[i][j],
            (|end, k| cost(end, k) * loose, cost),
            &mut partner,
        )
    }

    /// A goal leg that pulls cheaper than its guess must be offered to start
    /// legs that paired with another goal leg (found in review).
    #[test]
    fn a_goal_leg_cheaper_than_guessed_finds_new_partners() {
        // (guess, pulled cost, already pulled)
        let start = [(10.0, 50.0, false), (20.0, 20.0, true)];
        let goal = [(90.0, 78.0, false), (95.0, 95.0, true)];
        let table = [vec![0.0, 200.0], vec![6.0, 0.0]];
        // I2 + table(I2, J1) + J1 = 20 + 6 + 78 = 104, the cheapest
        for loose in [1.0, 1.5, 100.0] {
            assert_eq!(choose(&start, &goal, &table, loose), Some((1, 0)));
        }
    }

    proptest::proptest! {
        /// With guesses at most the pulled costs and upper bounds at least
        /// them, the lazy choice costs what pulling every leg and trying
        /// every pair costs.
        #[test]
        fn lazy_choice_matches_pulling_everything(
            start in proptest::collection::vec((1.0f32..100.0, 0.3f32..1.0, proptest::bool::ANY), 1..6),
            goal in proptest::collection::vec((1.0f32..100.0, 0.3f32..1.0, proptest::bool::ANY), 1..6),
            table in proptest::collection::vec(proptest::collection::vec(0.0f32..200.0, 6), 6),
            loose in 1.0f32..3.0,
        ) {
            let legs = |v: &[(f32, f32, bool)]| -> Vec<(f32, f32, bool)> {
                v.iter().map(|&(cost, f, pulled)| (if pulled { cost } else { cost * f }, cost, pulled)).collect()
            };
            let (start, goal) = (legs(&start), legs(&goal));
            let total = |i: usize, j: usize| start[i].1 + table[i][j] + goal[j].1;
            let best = (0..start.len())
                .flat_map(|i| (0..goal.len()).map(move |j| (i, j)))
                .map(|(i, j)| total(i, j))
                .fold(f32::INFINITY, f32::min);
            let (i, j) = choose(&start, &goal, &table, loose).expect("a pair");
            proptest::prop_assert!((total(i, j) - best).abs() <= 1e-3 * best, "{} vs {}", total(i, j), best);
        }
    }
}
