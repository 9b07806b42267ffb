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

/// Position of directed edge `a -> b` in the cyclic polygon `poly`.
fn edge_at(poly: &[u32], a: u32, b: u32) -> Option<usize> {
    let n = poly.len();
    (0..n).find(|&i| poly[i] == a && poly[(i + 1) % n] == b)
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
    let mut polys: Vec<Vec<u32>> = tri.tris.iter().map(|t| t.to_vec()).collect();
    let mut parent: Vec<u32> = (0..n as u32).collect();

    // candidate diagonals: (length², a, b, t, u) with t < u so each appears once
    let mut diagonals: Vec<(f64, u32, u32, u32, u32)> = Vec::new();
    for (t, nb) in tri.neighbours.iter().enumerate() {
        for (k, &other) in nb.iter().enumerate() {
            if let Some(u) = other {
                if (t as u32) < u && tri.tri_area[t] == tri.tri_area[u as usize] {
                    let a = tri.tris[t][k];
                    let b = tri.tris[t][(k + 1) % 3];
                    let len = pts[a as usize].distance_squared(pts[b as usize]);
                    diagonals.push((len, a, b, t as u32, u));
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
    for &(_, a, b, t, u) in &diagonals {
        let pa = find(&mut parent, t);
        let pb = find(&mut parent, u);
        if pa == pb {
            continue;
        }
        let (Some(ia), Some(ib)) = (
            edge_at(&polys[pa as usize], a, b),
            edge_at(&polys[pb as usize], b, a),
        ) else {
            continue;
        };
        let poly_a = &polys[pa as usize];
        let poly_b = &polys[pb as usize];
        let (na, nb) = (poly_a.len(), poly_b.len());
        // around a: previous in poly_a, next in poly_b (after b -> a comes a -> ...)
        let a_prev = poly_a[(ia + na - 1) % na];
        let a_next = poly_b[(ib + 2) % nb];
        // around b: previous in poly_b (before b -> a), next in poly_a
        let b_prev = poly_b[(ib + nb - 1) % nb];
        let b_next = poly_a[(ia + 2) % na];
        let p = |i: u32| pts[i as usize];
        if !convex_turn(p(a_prev), p(a), p(a_next)) || !convex_turn(p(b_prev), p(b), p(b_next)) {
            continue;
        }
        // merged: poly_a from b around to a, then poly_b strictly between a and b
        let mut merged = Vec::with_capacity(na + nb - 2);
        for k in 0..na {
            merged.push(poly_a[(ia + 1 + k) % na]);
        }
        for k in 0..nb - 2 {
            merged.push(poly_b[(ib + 2 + k) % nb]);
        }
        polys[pa as usize] = merged;
        polys[pb as usize] = Vec::new();
        parent[pb as usize] = pa;
    }

    let mut out = Vec::new();
    for (t, poly) in polys.into_iter().enumerate() {
        if !poly.is_empty() && find(&mut parent, t as u32) == t as u32 {
            let poly = drop_collinear_duplicates(poly);
            out.push(MergedPolygon {
                vertices: poly,
                area: tri.tri_area[t],
            });
        }
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
