//! One generic A* for every level of the hierarchy.
//!
//! The graph supplies the policy (successors with their costs, heuristic, goal
//! test) through [`SearchGraph`]; a reusable [`SearchContext`] holds the open
//! list (a binary heap of packed integer keys) and per-node marks stamped
//! with a generation counter, so a new search never clears arrays and a warm
//! context does not allocate.
//!
//! Nodes may carry a small `Copy` payload, set when the node is reached: the
//! portal graph stores each state's funnel there.
//!
//! A graph may also hand out successors as [`NEW_NODE`]: each such state
//! becomes a node of its own, numbered after the graph's fixed nodes, so the
//! same A* runs a tree search (the portal graph's states are never merged;
//! the graph prunes the dominated ones itself).

mod nav_graph;
mod portal_graph;

pub(crate) use nav_graph::{ActiveLandmark, Leg, NavGraph, Via, ACTIVE_LANDMARKS, LEG};
pub(crate) use portal_graph::{Between, PortalSearch};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A graph A* can run on.
pub trait SearchGraph {
    /// Data attached to a node when it is reached (e.g. a crossing point).
    type Payload: Copy + Default;

    /// Number of fixed nodes; their ids are `0..node_count()`. Successors
    /// visited as [`NEW_NODE`] are numbered from there on.
    fn node_count(&self) -> usize;

    /// Calls `visit(next, step)` for every successor of `node` (`next` is
    /// [`NEW_NODE`] for a state that is a node of its own), where
    /// `step()` computes the step cost (finite) and the successor's payload.
    /// The search calls `step` only for successors not yet expanded, so a
    /// graph can put costly work there. A step may be negative when the
    /// heuristic depends on the payload, as long as g + h never falls along
    /// an edge (the portal graph's cost to a moving crossing point).
    fn expand<F: FnMut(u32, &dyn Fn() -> (f32, Self::Payload))>(
        &self,
        node: u32,
        payload: Self::Payload,
        visit: F,
    );

    /// A lower bound on the remaining cost from `node` with this payload;
    /// admissible, and consistent (g + h never falls along an edge).
    fn heuristic(&self, node: u32, payload: Self::Payload) -> f32;

    /// True when [`SearchGraph::heuristic`] depends on the node alone, not
    /// on the payload: a node reached again at no lower cost is then
    /// dropped before its heuristic is computed, and one reached again at a
    /// lower cost takes the h kept in its mark (on the L2 graph, whose
    /// landmark bound reads a row per node, most relaxations are such).
    const HEURISTIC_BY_NODE: bool = false;

    /// True when `node` ends the search.
    fn is_goal(&self, node: u32) -> bool;
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchOutcome {
    /// A goal node was taken from the open list: its path is optimal.
    Found(u32),
    /// The open list ran empty: no goal is reachable.
    Exhausted,
    /// The expansion budget ran out; the node is the expanded one with the
    /// smallest heuristic, the best place for a partial path to end.
    OutOfBudget(u32),
}

/// An open-list entry: f, then h (on equal f, prefer the node nearer the
/// goal), then the node id, then g, packed most significant first into one
/// integer so that the heap compares entries with a single comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct OpenEntry(u128);

impl OpenEntry {
    fn new(f: f32, h: f32, node: u32, g: f32) -> Self {
        OpenEntry(
            u128::from(order_bits(f)) << 96
                | u128::from(order_bits(h)) << 64
                | u128::from(node) << 32
                | u128::from(order_bits(g)),
        )
    }

    fn f(self) -> f32 {
        from_order_bits((self.0 >> 96) as u32)
    }

    fn h(self) -> f32 {
        from_order_bits((self.0 >> 64) as u32)
    }

    fn node(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn g(self) -> f32 {
        from_order_bits(self.0 as u32)
    }
}

/// The bits of `x` as an integer that orders like the float: negatives
/// flipped whole, positives with the sign bit set; `-0.0` counts as `0.0`
/// (as the float comparison has it) and NaN above infinity.
#[inline]
fn order_bits(x: f32) -> u32 {
    let b = (x + 0.0).to_bits();
    b ^ (((b as i32) >> 31) as u32 | 0x8000_0000)
}

/// Inverse of [`order_bits`] (up to the sign of zero).
#[inline]
fn from_order_bits(b: u32) -> f32 {
    let mask = if b & 0x8000_0000 != 0 {
        0x8000_0000
    } else {
        u32::MAX
    };
    f32::from_bits(b ^ mask)
}

/// Reusable scratch space for [`astar`]: open list and generation-stamped node marks.
#[derive(Debug, Clone, Default)]
pub struct SearchContext<P> {
    generation: u32,
    /// Per node, one cache line holds everything a relaxation reads.
    marks: Vec<Mark>,
    pool: Vec<P>,
    heap: BinaryHeap<Reverse<OpenEntry>>,
    /// Cheapest cost at which a goal node has been reached in this search,
    /// or the bound it was given ([`astar_below`]) until one beats it.
    incumbent: f32,
    expansions: u32,
    /// The expanded node nearest the goal (smallest heuristic), with it.
    best: Option<(f32, u32)>,
    /// The id the next [`NEW_NODE`] gets.
    next_node: u32,
}

/// What the search knows of one node.
#[derive(Debug, Clone, Copy)]
struct Mark {
    /// Generation in which the node was last reached; other fields are stale otherwise.
    seen: u32,
    /// Generation in which the node was expanded.
    closed: u32,
    g: f32,
    /// h of the state the node holds. A state replaces it only with a
    /// lower g + h (with a payload-dependent heuristic, a lower g alone can
    /// belong to a worse state); with a heuristic by node, a node reached
    /// again takes its h from here instead of computing it again.
    h: f32,
    parent: u32,
    /// Index into `pool` of the node's payload. Payloads live in a pool
    /// filled in the order nodes are reached, so large payloads are written
    /// sequentially rather than scattered over a node-sized array.
    slot: u32,
}

const UNSEEN: Mark = Mark {
    seen: 0,
    closed: 0,
    g: 0.0,
    h: 0.0,
    parent: NO_PARENT,
    slot: 0,
};

/// Marks the parent of a start node.
const NO_PARENT: u32 = u32::MAX;

/// A successor that is a node of its own: the search gives it the next free
/// id (see the module docs).
pub const NEW_NODE: u32 = u32::MAX;

impl<P: Copy + Default> SearchContext<P> {
    /// An empty context; it grows to the graph on first use.
    #[must_use]
    pub fn new() -> Self {
        SearchContext {
            generation: 0,
            marks: Vec::new(),
            pool: Vec::new(),
            heap: BinaryHeap::new(),
            incumbent: f32::INFINITY,
            expansions: 0,
            best: None,
            next_node: 0,
        }
    }

    fn begin(&mut self, nodes: usize) {
        if self.marks.len() < nodes {
            self.marks.resize(nodes, UNSEEN);
        }
        self.next_node = nodes as u32;
        self.heap.clear();
        self.pool.clear();
        self.expansions = 0;
        self.best = None;
        self.incumbent = f32::INFINITY;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // after 2^32 searches the stamps wrap: clear them once
            self.marks.fill(UNSEEN);
            self.generation = 1;
        }
    }

    /// Records that `node` was reached at cost `g` from `parent` and opens
    /// it, unless the state it holds is as good (no higher g + h) or it cannot
    /// beat a goal already reached (or the search's bound, [`astar_below`]).
    #[inline(always)]
    fn reach<G: SearchGraph<Payload = P>>(
        &mut self,
        graph: &G,
        mut node: u32,
        g: f32,
        parent: u32,
        payload: P,
    ) {
        let mut known_h = None;
        if G::HEURISTIC_BY_NODE {
            // the same h: g + h would be no lower than the mark's
            if let Some(m) = self.marks.get(node as usize) {
                if m.seen == self.generation {
                    if m.g <= g {
                        return;
                    }
                    known_h = Some(m.h);
                }
            }
        }
        let h = known_h.unwrap_or_else(|| graph.heuristic(node, payload));
        if node == NEW_NODE {
            if g + h >= self.incumbent {
                return;
            }
            node = self.next_node;
            self.next_node += 1;
            if self.marks.len() <= node as usize {
                self.marks.push(UNSEEN);
            }
        }
        let m = self.marks[node as usize];
        if m.seen == self.generation && m.g + m.h <= g + h {
            return;
        }
        if graph.is_goal(node) {
            if g >= self.incumbent {
                return; // no cheaper than a goal reached, or than the bound
            }
            self.incumbent = g;
        } else if g + h >= self.incumbent {
            // cannot beat a goal already reached
            return;
        }
        self.marks[node as usize] = Mark {
            seen: self.generation,
            closed: m.closed,
            g,
            h,
            parent,
            slot: self.pool.len() as u32,
        };
        self.pool.push(payload);
        self.heap.push(Reverse(OpenEntry::new(g + h, h, node, g)));
    }

    /// Ids the last search has handed out: the graph's own nodes, then
    /// the [`NEW_NODE`] successors it numbered.
    #[must_use]
    pub fn node_count(&self) -> u32 {
        self.next_node
    }

    /// Nodes expanded by the last search.
    #[must_use]
    pub fn expansions(&self) -> u32 {
        self.expansions
    }

    /// Cost from the start to `node` in the last search, if it was reached.
    #[must_use]
    pub fn cost(&self, node: u32) -> Option<f32> {
        self.mark(node).map(|m| m.g)
    }

    /// The node's mark if it was reached in the last search.
    #[inline]
    fn mark(&self, node: u32) -> Option<&Mark> {
        self.marks
            .get(node as usize)
            .filter(|m| m.seen == self.generation)
    }

    /// Payload of `node` in the last search, if it was reached.
    #[must_use]
    pub fn payload(&self, node: u32) -> Option<P> {
        self.mark(node).map(|m| self.pool[m.slot as usize])
    }

    /// The node `node` was reached from in the last search; `None` for a
    /// start or a node not reached.
    #[must_use]
    pub fn parent(&self, node: u32) -> Option<u32> {
        self.mark(node)
            .map(|m| m.parent)
            .filter(|&p| p != NO_PARENT)
    }

    /// Writes the nodes from a start to `node` (inclusive) into `out`.
    pub fn path_to(&self, node: u32, out: &mut Vec<u32>) {
        out.clear();
        let mut n = node;
        while let Some(m) = self.mark(n) {
            out.push(n);
            let p = m.parent;
            if p == NO_PARENT || out.len() > self.marks.len() {
                break;
            }
            n = p;
        }
        out.reverse();
    }
}

/// Runs A* from `starts` (node, initial cost, payload) until a goal is
/// expanded, the open list is empty, or `budget` expansions were made.
pub fn astar<G: SearchGraph>(
    graph: &G,
    ctx: &mut SearchContext<G::Payload>,
    starts: &[(u32, f32, G::Payload)],
    budget: u32,
) -> SearchOutcome {
    astar_below(graph, ctx, starts, budget, f32::INFINITY)
}

/// As [`astar`], looking only for a goal cheaper than `bound`: nothing
/// that cannot beat it is opened (a cost already known, as of a path in
/// hand), so a search that finds none ends [`SearchOutcome::Exhausted`].
pub fn astar_below<G: SearchGraph>(
    graph: &G,
    ctx: &mut SearchContext<G::Payload>,
    starts: &[(u32, f32, G::Payload)],
    budget: u32,
    bound: f32,
) -> SearchOutcome {
    ctx.begin(graph.node_count());
    ctx.incumbent = bound;
    for &(node, g, payload) in starts {
        ctx.reach(graph, node, g, NO_PARENT, payload);
    }
    astar_resume(graph, ctx, budget)
}

/// Continues the last search in `ctx` (over the same graph) until a goal
/// is expanded, the open list is empty, or `budget` expansions were made in
/// all: a search stopped by its budget resumes where it stopped, so a long
/// one can be run in slices with the same outcome as in one go.
pub fn astar_resume<G: SearchGraph>(
    graph: &G,
    ctx: &mut SearchContext<G::Payload>,
    budget: u32,
) -> SearchOutcome {
    let generation = ctx.generation;
    while let Some(&Reverse(entry)) = ctx.heap.peek() {
        let node = entry.node();
        let i = node as usize;
        let m = ctx.marks[i];
        if m.closed == generation || (entry.f(), entry.g()) != (m.g + m.h, m.g) {
            ctx.heap.pop();
            continue; // expanded already, or a stale entry of a node reached more cheaply since
        }
        if graph.is_goal(node) {
            return SearchOutcome::Found(node);
        }
        if ctx.expansions >= budget {
            // the entry stays open for a resumed search
            return SearchOutcome::OutOfBudget(ctx.best.map_or(node, |b| b.1));
        }
        ctx.heap.pop();
        ctx.marks[i].closed = generation;
        ctx.expansions += 1;
        let h = entry.h();
        if ctx.best.is_none_or(|b| h < b.0) {
            ctx.best = Some((h, node));
        }
        let g_here = m.g;
        let payload_here = ctx.pool[m.slot as usize];
        graph.expand(node, payload_here, |next, step| {
            if let Some(m) = ctx.marks.get(next as usize) {
                if m.seen == generation && m.closed == generation {
                    return;
                }
            }
            let (step, payload) = step();
            ctx.reach(graph, next, g_here + step, node, payload);
        });
    }
    SearchOutcome::Exhausted
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain weighted digraph for tests.
    struct Weighted {
        adj: Vec<Vec<(u32, f32)>>,
        goal: u32,
    }

    impl SearchGraph for Weighted {
        type Payload = ();
        fn node_count(&self) -> usize {
            self.adj.len()
        }
        fn expand<F: FnMut(u32, &dyn Fn() -> (f32, ()))>(&self, node: u32, _: (), mut visit: F) {
            for &(n, c) in &self.adj[node as usize] {
                visit(n, &|| (c, ()));
            }
        }
        fn heuristic(&self, _: u32, _: ()) -> f32 {
            0.0
        }
        fn is_goal(&self, node: u32) -> bool {
            node == self.goal
        }
    }

    #[test]
    fn finds_the_cheaper_of_two_routes_and_reuses_the_context() {
        //   0 --1--> 1 --1--> 3
        //   0 --5--> 2 --0--> 3
        let g = Weighted {
            adj: vec![
                vec![(1, 1.0), (2, 5.0)],
                vec![(3, 1.0)],
                vec![(3, 0.0)],
                vec![],
            ],
            goal: 3,
        };
        let mut ctx = SearchContext::new();
        for _ in 0..3 {
            assert_eq!(
                astar(&g, &mut ctx, &[(0, 0.0, ())], u32::MAX),
                SearchOutcome::Found(3)
            );
            assert_eq!(ctx.cost(3), Some(2.0));
            let mut p = Vec::new();
            ctx.path_to(3, &mut p);
            assert_eq!(p, vec![0, 1, 3]);
        }
        assert_eq!(
            astar(&g, &mut ctx, &[(0, 0.0, ())], 1),
            SearchOutcome::OutOfBudget(0)
        );
        let unreachable = Weighted {
            adj: vec![vec![], vec![]],
            goal: 1,
        };
        assert_eq!(
            astar(&unreachable, &mut ctx, &[(0, 0.0, ())], u32::MAX),
            SearchOutcome::Exhausted
        );
    }

    /// The digraph of `n` nodes with `edges` (ends taken modulo `n`, costs
    /// in quarters, so sums of them are exact in f32) towards `goal` (modulo
    /// `n`), and the goal's cost from node 0 by petgraph's Dijkstra (`None`
    /// when unreachable): the oracle of the A* properties.
    fn digraph(n: usize, edges: &[(usize, usize, u32)], goal: usize) -> (Weighted, Option<f32>) {
        let goal = (goal % n) as u32;
        let mut adj = vec![Vec::new(); n];
        let mut pg = petgraph::graph::DiGraph::<(), f32>::new();
        let nodes: Vec<_> = (0..n).map(|_| pg.add_node(())).collect();
        for &(a, b, c) in edges {
            let (a, b, c) = (a % n, b % n, c as f32 * 0.25);
            adj[a].push((b as u32, c));
            pg.add_edge(nodes[a], nodes[b], c);
        }
        let to = nodes[goal as usize];
        let oracle = petgraph::algo::dijkstra(&pg, nodes[0], Some(to), |e| *e.weight());
        (Weighted { adj, goal }, oracle.get(&to).copied())
    }

    proptest::proptest! {
        /// Packed keys order like the floats they pack (zeros of both signs
        /// equal), and unpack to the same values.
        #[test]
        fn order_bits_order_like_floats(a in proptest::num::f32::ANY, b in proptest::num::f32::ANY) {
            proptest::prop_assume!(!a.is_nan() && !b.is_nan());
            proptest::prop_assert_eq!(order_bits(a).cmp(&order_bits(b)), a.partial_cmp(&b).unwrap());
            proptest::prop_assert_eq!(from_order_bits(order_bits(a)), a);
            let e = OpenEntry::new(a, b, 7, -a);
            proptest::prop_assert_eq!((e.f(), e.h(), e.node(), e.g()), (a, b, 7, -a));
        }
    }

    proptest::proptest! {
        /// A* with a zero heuristic agrees with petgraph's Dijkstra on random digraphs.
        #[test]
        fn agrees_with_petgraph_dijkstra(
            n in 2usize..40,
            edges in proptest::collection::vec((0usize..40, 0usize..40, 0u32..100), 0..160),
            goal in 0usize..40,
        ) {
            let (graph, cost) = digraph(n, &edges, goal);
            let goal = graph.goal;
            let mut ctx = SearchContext::new();
            match astar(&graph, &mut ctx, &[(0, 0.0, ())], u32::MAX) {
                SearchOutcome::Found(g) => {
                    proptest::prop_assert_eq!(g, goal);
                    let ours = ctx.cost(goal).unwrap();
                    let theirs = cost.expect("petgraph reaches it too");
                    proptest::prop_assert!((ours - theirs).abs() < 1e-3, "{} vs {}", ours, theirs);
                    // the recorded path leads back to the start
                    let mut p = Vec::new();
                    ctx.path_to(goal, &mut p);
                    proptest::prop_assert_eq!(p[0], 0);
                }
                SearchOutcome::Exhausted => proptest::prop_assert!(cost.is_none()),
                SearchOutcome::OutOfBudget(_) => proptest::prop_assert!(false, "unlimited budget"),
            }
        }

        /// Under a bound, A* finds the goal exactly when its cost (petgraph's
        /// Dijkstra) is below the bound, at that cost, and expands no more
        /// than without it; a bound equal to the cost finds nothing.
        #[test]
        fn a_bound_finds_only_cheaper_goals(
            n in 2usize..40,
            edges in proptest::collection::vec((0usize..40, 0usize..40, 0u32..100), 0..160),
            goal in 0usize..40,
            quarters in 0u32..200,
        ) {
            let (graph, cost) = digraph(n, &edges, goal);
            let goal = graph.goal;
            // costs and bounds are quarters: sums of them are exact in f32
            let bound = quarters as f32 * 0.25;
            let mut ctx = SearchContext::new();
            let free = astar(&graph, &mut ctx, &[(0, 0.0, ())], u32::MAX);
            let unbounded = ctx.expansions();
            let outcome = astar_below(&graph, &mut ctx, &[(0, 0.0, ())], u32::MAX, bound);
            match cost {
                Some(c) if c < bound => {
                    proptest::prop_assert_eq!(outcome, SearchOutcome::Found(goal));
                    proptest::prop_assert_eq!(ctx.cost(goal), Some(c));
                }
                _ => proptest::prop_assert_eq!(outcome, SearchOutcome::Exhausted),
            }
            if matches!(free, SearchOutcome::Found(_)) {
                proptest::prop_assert!(ctx.expansions() <= unbounded);
            }
            if let Some(c) = cost {
                let at_cost = astar_below(&graph, &mut ctx, &[(0, 0.0, ())], u32::MAX, c);
                proptest::prop_assert_eq!(at_cost, SearchOutcome::Exhausted);
            }
        }
    }
}
