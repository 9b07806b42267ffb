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
//! admissible and never falls along an edge, although g alone can (`at`
//! moves along each portal). Searching over region centroids or fixed portal
//! points instead picks corridors that look short but pull badly.
//!
//! Two earlier designs left paths above the octile optimum, and the Moving AI
//! scenario suite is what told them apart (all 12,448 problems):
//! - steps clamped at zero, and apexes moved to corners of the string to one
//!   point (not corners every path must wrap), overestimated the cost of the
//!   right corridor: 20 paths above the optimum, up to 5.1%;
//! - one state per crossing (the first expansion wins) kept 5; states told
//!   apart by apex, 2 slots, kept 2; 4 slots keep none.
//!
//! What remains approximate: states whose apexes share a slot, chains longer
//! than [`CHAIN`], and runs charged at the rate of the region where they end
//! (exact on single-cost meshes).

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

    /// A node making `crossing` (for walking a known corridor).
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
        self.tables.entered(node / SLOTS)
    }

    /// `[left, right]` of a crossing node as seen by someone making the crossing.
    #[inline]
    pub(crate) fn crossing_ends(&self, node: u32) -> [Vec2; 2] {
        self.tables.crossing_ends(node / SLOTS)
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
/// root for the same reason). The cost is more expansions: on Aurora the mean
/// went from 1,241 (one slot) to 1,750.
const SLOTS: u32 = 4;

/// The slot of a state with this apex: a hash of its bits.
#[inline]
fn slot(apex: Vec2) -> u32 {
    let h = (apex.x.to_bits() ^ apex.y.to_bits().rotate_left(16)).wrapping_mul(0x9E37_79B1);
    (h >> 16) % SLOTS
}

/// Corners a side of a [`Funnel`] holds. A longer chain drops its corner
/// nearest the apex, which can only shorten the estimate; the chains of the
/// Moving AI maps stay well under this.
const CHAIN: usize = 8;

/// The search state carried by a crossing node (see the module docs): a
/// funnel in the classic deque form.
///
/// The apex is the last corner every path through the corridor so far must
/// wrap, with the exact cost to it; the left and right chains are the taut
/// paths from the apex to the two ends of the portal just crossed (convex,
/// apex excluded; an empty chain means that end is the apex).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Funnel {
    /// Where the taut string from the apex to the goal crosses this portal.
    pub at: Vec2,
    /// Cost from the start to `at`: the taut path through the funnel.
    cost: f32,
    apex: Vec2,
    apex_cost: f32,
    /// Chain lengths: `left[..nl]`, `right[..nr]`.
    nl: u8,
    nr: u8,
    left: [Vec2; CHAIN],
    right: [Vec2; CHAIN],
}

/// Which side of the funnel a chain is on; `sign` turns the left side's
/// orientation tests into the right side's.
#[derive(Clone, Copy)]
enum Side {
    Left,
    Right,
}

impl Side {
    /// Positive when `c` lies outward of `a -> b` on this side (left of it
    /// for the left chain).
    #[inline]
    fn outward(self, a: Vec2, b: Vec2, c: Vec2) -> f32 {
        match self {
            Side::Left => orient(a, b, c),
            Side::Right => -orient(a, b, c),
        }
    }

    /// `c` lies outward of the line `a -> b` by more than rounding (about
    /// 1e-6 of the coordinates' size): a crossing point computed on a portal
    /// that the apex stands on must not wrap `b` and come back.
    #[inline]
    fn clearly_outward(self, a: Vec2, b: Vec2, c: Vec2) -> bool {
        let l1 = |v: Vec2| v.x.abs() + v.y.abs();
        self.outward(a, b, c) > 1e-6 * l1(b - a) * (l1(a) + l1(b) + l1(c))
    }

    fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

impl Funnel {
    pub(crate) fn start(p: Vec2) -> Funnel {
        Funnel {
            at: p,
            apex: p,
            ..Funnel::default()
        }
    }

    #[inline]
    fn chain(&self, side: Side) -> &[Vec2] {
        match side {
            Side::Left => &self.left[..self.nl as usize],
            Side::Right => &self.right[..self.nr as usize],
        }
    }

    #[inline]
    fn chain_mut(&mut self, side: Side) -> (&mut [Vec2; CHAIN], &mut u8) {
        match side {
            Side::Left => (&mut self.left, &mut self.nl),
            Side::Right => (&mut self.right, &mut self.nr),
        }
    }

    /// The end of the portal on `side` (the apex when its chain is empty).
    #[inline]
    fn end(&self, side: Side) -> Vec2 {
        self.chain(side).last().copied().unwrap_or(self.apex)
    }

    /// Moves the end of `side` to `p`, keeping the chain taut. When `p` lies
    /// across the other side's chain, the corners of that chain it passes
    /// become certain: the apex moves over them, charged at `rate`.
    #[inline]
    fn narrow(&mut self, side: Side, p: Vec2, rate: f32) {
        // drop the corners `p` is seen past from the corner before them
        let apex = self.apex;
        let (chain, n) = self.chain_mut(side);
        while *n > 0 {
            let k = *n as usize;
            let base = if k >= 2 { chain[k - 2] } else { apex };
            if side.clearly_outward(base, chain[k - 1], p) {
                break; // `p` lies outward of the last edge: it wraps that corner
            }
            *n -= 1;
        }
        if *n == 0 && p != apex {
            // seen from the apex: has it crossed the other side?
            let other = side.other();
            let theirs = self.chain(other);
            let (mut moved, mut from, mut run) = (0usize, apex, 0.0);
            while moved < theirs.len() && other.outward(from, theirs[moved], p) >= 0.0 {
                run += from.distance(theirs[moved]);
                from = theirs[moved];
                moved += 1;
            }
            if moved > 0 {
                self.apex = from;
                self.apex_cost += run * rate;
                let (chain, n) = self.chain_mut(other);
                chain.copy_within(moved..*n as usize, 0);
                *n -= moved as u8;
            }
        }
        let apex = self.apex;
        let (chain, n) = self.chain_mut(side);
        if *n as usize == CHAIN {
            chain.copy_within(1.., 0);
            *n -= 1;
        }
        if apex != p {
            chain[*n as usize] = p;
            *n += 1;
        }
    }

    /// The taut path from the apex to `p` (a point on or beyond the portal)
    /// inside the funnel: its length and its last corner before `p`.
    #[inline]
    fn taut_to(&self, p: Vec2) -> (f32, Vec2) {
        for side in [Side::Left, Side::Right] {
            let chain = self.chain(side);
            if chain
                .first()
                .is_some_and(|&c| side.clearly_outward(self.apex, c, p))
            {
                let mut run = self.apex.distance(chain[0]);
                let mut k = 0;
                while k + 1 < chain.len() && side.clearly_outward(chain[k], chain[k + 1], p) {
                    run += chain[k].distance(chain[k + 1]);
                    k += 1;
                }
                return (run, chain[k]);
            }
        }
        (0.0, self.apex)
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

    /// The state after crossing the portal `[l, r]` (see [`Funnel::cross`]).
    #[inline]
    fn through(&self, ends: [Vec2; 2], goal: Vec2, rate: f32) -> Funnel {
        let mut next = *self;
        let [l, r] = narrow_edge_on(next.apex, ends);
        next.narrow(Side::Right, r, rate);
        next.narrow(Side::Left, l, rate);
        let (l, r) = (next.end(Side::Left), next.end(Side::Right));
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
            let (_, pivot) = next.taut_to(target);
            taut_point_on_segment(l, r, pivot, goal)
        };
        let (run, last) = next.taut_to(next.at);
        next.cost = next.apex_cost + (run + last.distance(next.at)) * rate;
        next
    }

    /// The state on reaching the goal from the last portal crossed.
    #[inline]
    fn reach_goal(&self, goal: Vec2, rate: f32) -> Funnel {
        let mut next = *self;
        let (run, last) = next.taut_to(goal);
        next.at = goal;
        next.cost = next.apex_cost + (run + last.distance(goal)) * rate;
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
            node / SLOTS / 2
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
            let (cost, to) = step(Some(next));
            visit(next * SLOTS + slot(to.apex), &|| (cost, to));
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

    /// Checks the funnel against the pulled path: at the goal, and at each
    /// crossing point on the way.
    fn check_exact(a: Vec2, b: Vec2, portals: &[[Vec2; 2]]) -> Result<(), String> {
        let want = pulled_length(a, b, portals);
        let got = funnel_cost(a, b, portals);
        if (got - want).abs() > 1e-3 * want.max(1.0) {
            return Err(format!("goal: {got} vs {want}"));
        }
        let mut f = Funnel::start(a);
        for (i, &p) in portals.iter().enumerate() {
            f = f.through(p, b, 1.0);
            let want = pulled_length(a, f.at, &portals[..i]);
            if (f.cost - want).abs() > 1e-3 * want.max(1.0) {
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
        ) {
            let mut xs = (0.0f32, 0.0f32);
            let t: Vec<Vec2> = top.iter().map(|&(dx, dy)| { xs.0 += dx; vec2(xs.0, 5.0 + dy) }).collect();
            let u: Vec<Vec2> = bottom.iter().map(|&(dx, dy)| { xs.1 += dx; vec2(xs.1, -5.0 + dy) }).collect();
            // merge the two chains by x into a strip of portals [top, bottom]
            let (mut i, mut j) = (0, 0);
            let mut portals = vec![[t[0], u[0]]];
            while i + 1 < t.len() || j + 1 < u.len() {
                if j + 1 >= u.len() || (i + 1 < t.len() && t[i + 1].x < u[j + 1].x) {
                    i += 1;
                } else {
                    j += 1;
                }
                portals.push([t[i], u[j]]);
            }
            let a = vec2(t[0].x.min(u[0].x) - 1.0, ay);
            let end = t.last().unwrap().x.max(u.last().unwrap().x) + 1.0;
            let b = vec2(end, by);
            // only strips that move forward: each new vertex lies beyond the
            // portal before it, so the triangles do not fold over
            // and that start before the first portal and end beyond the last
            let beyond = |[l, r]: [Vec2; 2], p: Vec2| crate::geometry::orient(l, r, p) > 0.0;
            let valid = portals.windows(2).all(|w| {
                let new = if w[0][0] == w[1][0] { w[1][1] } else { w[1][0] };
                beyond(w[0], new)
            }) && !beyond(portals[0], a)
                && beyond(*portals.last().unwrap(), b);
            proptest::prop_assume!(valid);
            proptest::prop_assert_eq!(check_exact(a, b, &portals), Ok(()));
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
            let want = pulled_length(a, b, &portals);
            let got = funnel_cost(a, b, &portals);
            proptest::prop_assert!((got - want).abs() < 1e-3 * want, "{} vs {}", got, want);
            // and on the way, the cost to each crossing point is exact
            let mut f = Funnel::start(a);
            for (i, &p) in portals.iter().enumerate() {
                f = f.through(p, b, 1.0);
                let want = pulled_length(a, f.at, &portals[..i]);
                proptest::prop_assert!((f.cost - want).abs() <= 1e-3 * want.max(1.0), "portal {}: {} vs {}", i, f.cost, want);
            }
        }
    }
}
