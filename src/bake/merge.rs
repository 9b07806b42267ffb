//! Hertel–Mehlhorn merging of triangles into convex polygons.
//!
//! Interior edges are removed whenever both of their ends stay convex, in
//! two orders (longest first, shortest first), and the partition with fewer
//! polygons is kept: fewer, fatter regions make every query faster. Edges
//! between different area kinds are never removed, so each polygon has one
//! cost.

use glam::DVec2;

use super::triangulate::Triangulated;
use crate::geometry::orient_f64;

/// A merged convex polygon: CCW vertex indices and its area kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MergedPolygon {
    pub vertices: Vec<u32>,
    pub area: u16,
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let p = parent[x as usize];
        parent[x as usize] = parent[p as usize];
        x = p;
    }
    x
}

/// The order in which interior edges are offered for removal.
#[derive(Clone, Copy)]
enum Order {
    LongestFirst,
    ShortestFirst,
}

/// Merges with two removal orders and keeps the partition with fewer
/// polygons. Neither order wins everywhere: longest-first suits rooms and open
/// fields, shortest-first the staircase outlines of diagonal walls (region
/// counts in BENCHMARKS.md). The two run side by side; ties go to
/// longest-first, so the bake is deterministic.
pub(crate) fn merge(tri: &Triangulated) -> Vec<MergedPolygon> {
    let (longest, shortest) = std::thread::scope(|s| {
        let shortest = s.spawn(|| merge_in_order(tri, Order::ShortestFirst));
        let longest = merge_in_order(tri, Order::LongestFirst);
        (longest, shortest.join().expect("merge does not panic"))
    });
    if shortest.len() < longest.len() {
        shortest
    } else {
        longest
    }
}

fn merge_in_order(tri: &Triangulated, order: Order) -> Vec<MergedPolygon> {
    let pts: &[DVec2] = &tri.points;
    let n = tri.tris.len();
    // Each polygon is a cycle of half-edges: `3 t + k` runs from corner `k`
    // of triangle `t` to corner `k + 1`. Removing a diagonal splices two
    // cycles into one; no half-edge is ever made, so a diagonal's two
    // half-edges name it until it is removed. `head` is where the cycle of a
    // polygon's root triangle starts: the vertex order the output lists.
    let origin = |h: u32| tri.tris[(h / 3) as usize][(h % 3) as usize];
    let mut next: Vec<u32> = (0..3 * n as u32).map(|h| h - h % 3 + (h + 1) % 3).collect();
    let mut prev: Vec<u32> = (0..3 * n as u32).map(|h| h - h % 3 + (h + 2) % 3).collect();
    let mut head: Vec<u32> = (0..n as u32).map(|t| 3 * t).collect();
    let mut parent: Vec<u32> = (0..n as u32).collect();

    // candidate diagonals: (length², a, b, half-edge a -> b, half-edge b -> a),
    // from the triangle of lower index so each appears once
    let mut diagonals: Vec<(f64, u32, u32, u32, u32)> = Vec::new();
    for (t, nb) in tri.neighbours.iter().enumerate() {
        for (k, &other) in nb.iter().enumerate() {
            if let Some(u) = other {
                if (t as u32) < u && tri.tri_area[t] == tri.tri_area[u as usize] {
                    let a = tri.tris[t][k];
                    let b = tri.tris[t][(k + 1) % 3];
                    let Some(j) = (0..3).find(|&j| tri.tris[u as usize][j] == b) else {
                        continue;
                    };
                    if tri.tris[u as usize][(j + 1) % 3] != a {
                        continue;
                    }
                    let len = pts[a as usize].distance_squared(pts[b as usize]);
                    let h = 3 * t as u32 + k as u32;
                    diagonals.push((len, a, b, h, 3 * u + j as u32));
                }
            }
        }
    }
    // ties broken by the vertex ids so the bake is deterministic
    let by_ids =
        |x: &(f64, u32, u32, u32, u32), y: &(f64, u32, u32, u32, u32)| (x.1, x.2).cmp(&(y.1, y.2));
    match order {
        Order::LongestFirst => {
            diagonals.sort_unstable_by(|x, y| y.0.total_cmp(&x.0).then(by_ids(x, y)))
        }
        Order::ShortestFirst => {
            diagonals.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then(by_ids(x, y)))
        }
    }
    for &(_, a, b, h1, h2) in &diagonals {
        let pa = find(&mut parent, h1 / 3);
        let pb = find(&mut parent, h2 / 3);
        if pa == pb {
            continue;
        }
        // around a: before it in pa's cycle, after it in pb's (b -> a, then a -> ...)
        let a_prev = origin(prev[h1 as usize]);
        let a_next = origin(next[next[h2 as usize] as usize]);
        // around b: before it in pb's cycle, after it in pa's
        let b_prev = origin(prev[h2 as usize]);
        let b_next = origin(next[next[h1 as usize] as usize]);
        let p = |i: u32| pts[i as usize];
        if !convex_turn(p(a_prev), p(a), p(a_next)) || !convex_turn(p(b_prev), p(b), p(b_next)) {
            continue;
        }
        // merged: pa's cycle from b around to a, then pb's strictly between a and b
        let (n1, p1) = (next[h1 as usize], prev[h1 as usize]);
        let (n2, p2) = (next[h2 as usize], prev[h2 as usize]);
        next[p1 as usize] = n2;
        prev[n2 as usize] = p1;
        next[p2 as usize] = n1;
        prev[n1 as usize] = p2;
        head[pa as usize] = n1;
        parent[pb as usize] = pa;
    }

    let mut out = Vec::new();
    for t in 0..n as u32 {
        if find(&mut parent, t) != t {
            continue;
        }
        let mut poly = Vec::new();
        let first = head[t as usize];
        let mut h = first;
        loop {
            poly.push(origin(h));
            h = next[h as usize];
            if h == first {
                break;
            }
        }
        out.push(MergedPolygon {
            vertices: drop_collinear_duplicates(poly),
            area: tri.tri_area[t as usize],
        });
    }
    out
}

/// Whether the boundary may turn at `v` (from `prev` to `next`) in a convex
/// counter-clockwise polygon: left, or straight on. Going straight back
/// (two polygons sharing two edges around `v`) would leave a zero-width
/// spike, so it is not.
fn convex_turn(prev: glam::DVec2, v: glam::DVec2, next: glam::DVec2) -> bool {
    let turn = orient_f64(prev, v, next);
    turn > 0.0 || (turn == 0.0 && (v - prev).dot(next - v) > 0.0)
}

/// Removes repeated consecutive indices (never happens in a valid
/// triangulation, kept as a guard); collinear vertices stay, they are portal ends.
fn drop_collinear_duplicates(mut poly: Vec<u32>) -> Vec<u32> {
    poly.dedup();
    while poly.len() > 1 && poly.first() == poly.last() {
        poly.pop();
    }
    poly
}

#[cfg(test)]
mod tests {
    use glam::DVec2;

    use super::convex_turn;

    /// Regression (found by the overlap check in validate): two polygons
    /// sharing two edges around a vertex were merged across one of them,
    /// which turns straight back at the vertex and leaves a zero-width
    /// spike; no point could be located in the region that had it.
    #[test]
    fn a_turn_straight_back_is_not_convex() {
        let (a, v) = (DVec2::new(0.0, 0.0), DVec2::new(1.0, 0.0));
        assert!(!convex_turn(a, v, a), "straight back to the same point");
        assert!(
            !convex_turn(a, v, DVec2::new(0.5, 0.0)),
            "back along the edge"
        );
        assert!(convex_turn(a, v, DVec2::new(2.0, 0.0)), "straight on");
        assert!(convex_turn(a, v, DVec2::new(1.0, 1.0)), "left");
        assert!(!convex_turn(a, v, DVec2::new(1.0, -1.0)), "right");
    }
}
