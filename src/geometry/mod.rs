//! Pure 2D math on [`glam::Vec2`]: orientation predicates, convex polygons,
//! segments and bounding boxes. Nothing here knows about meshes.

mod crossing_points;
mod crossings;
mod funnel;
mod sweep;

#[cfg(test)]
pub(crate) use funnel::testing;
pub(crate) use funnel::{committed_corners_while, push_point, Corners, Deque};
pub use funnel::{pull, pull_corners, pull_corners_while};

use glam::{DVec2, Vec2};

#[cfg(test)]
pub(crate) use crossing_points::comparisons as crossing_comparisons;
pub(crate) use crossing_points::{cut_at_crossings, Point as GridPoint};
pub(crate) use crossings::{count_crossings, proper_crossing, TooMany, MAX_WORK};
#[cfg(test)]
pub(crate) use sweep::comparisons as sweep_comparisons;
pub(crate) use sweep::{below_each, ends_inside, first_conflict, first_double_cover};

/// Largest absolute coordinate a level may use, world units.
///
/// f32 keeps about 7 significant digits; at 2^20 the spacing between
/// representable values is 1/8 of a unit, the coarsest we accept for a level.
pub const MAX_COORD: f32 = 1_048_576.0;

/// The low 16 bits of `x` spread to the even bits: half a Morton code
/// (`spread(x) | spread(y) << 1` orders cells along a Z curve).
#[inline]
pub(crate) fn morton_spread(mut x: u32) -> u32 {
    x &= 0xffff;
    x = (x | x << 8) & 0x00ff_00ff;
    x = (x | x << 4) & 0x0f0f_0f0f;
    x = (x | x << 2) & 0x3333_3333;
    (x | x << 1) & 0x5555_5555
}

/// The Morton code of `p`'s cell on a grid of 65,536 x 65,536 cells over the
/// box from `lo` of `size` (a point off the box takes the nearest cell).
#[inline]
pub(crate) fn morton_key(p: DVec2, lo: DVec2, size: DVec2) -> u32 {
    let cell = |k: usize| ((p[k] - lo[k]) / size[k] * 65535.0).clamp(0.0, 65535.0) as u32;
    morton_spread(cell(0)) | morton_spread(cell(1)) << 1
}

/// Twice the signed area of triangle `a b c` (positive when counter-clockwise).
#[inline]
#[must_use]
pub fn orient(a: Vec2, b: Vec2, c: Vec2) -> f32 {
    (b - a).perp_dot(c - a)
}

/// [`orient`] in f64 with an exact sign (Shewchuk's adaptive predicate,
/// the `robust` crate): positive when `c` is left of `a -> b`, zero only
/// when the three points are exactly collinear. The bake, the level checks
/// and the sweep over a loaded file's edges rely on the sign being exact.
#[inline]
#[must_use]
pub fn orient_f64(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    let at = |p: DVec2| robust::Coord { x: p.x, y: p.y };
    robust::orient2d(at(a), at(b), at(c))
}

/// Signed area of a closed polygon (positive when counter-clockwise), accumulated in f64.
#[must_use]
pub fn signed_area(points: &[Vec2]) -> f64 {
    let n = points.len();
    let mut twice = 0.0f64;
    for i in 0..n {
        let a = points[i].as_dvec2();
        let b = points[(i + 1) % n].as_dvec2();
        twice += a.perp_dot(b);
    }
    twice * 0.5
}

/// True when `p` lies inside or on the boundary of the convex CCW polygon `poly`,
/// allowing `eps` (world units times edge length) of slack on each edge.
#[inline]
#[must_use]
pub fn convex_contains(poly: &[Vec2], p: Vec2, eps: f32) -> bool {
    let n = poly.len();
    let mut prev = poly[n - 1];
    for &cur in poly {
        let edge = cur - prev;
        // distance outside the edge's line above eps, without a square root
        let d = edge.perp_dot(p - prev);
        if d < 0.0 && d * d > eps * eps * edge.length_squared() {
            return false;
        }
        prev = cur;
    }
    true
}

/// The point of segment `a b` closest to `p`.
#[inline]
#[must_use]
pub fn closest_on_segment(a: Vec2, b: Vec2, p: Vec2) -> Vec2 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= 0.0 {
        return a;
    }
    let t = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
    a + ab * t
}

/// The point `q` on segment `a b` that minimises `|p - q| + |q - g|`: where a
/// taut string from `p` to `g` would cross the segment.
///
/// When `p` and `g` lie on the same side of the line, `g` is mirrored across it
/// first; the sum is convex along the segment, so clamping the unconstrained
/// minimum to the segment gives the constrained one.
#[inline]
#[must_use]
pub fn taut_point_on_segment(a: Vec2, b: Vec2, p: Vec2, g: Vec2) -> Vec2 {
    let ab = b - a;
    let len2 = ab.length_squared();
    if len2 <= 0.0 {
        return a;
    }
    let dp = ab.perp_dot(p - a);
    let mut dg = ab.perp_dot(g - a);
    let mut g2 = g;
    if (dp > 0.0) == (dg > 0.0) && dg != 0.0 {
        // mirror g across the line through a, b
        let t = (g - a).dot(ab) / len2;
        let foot = a + ab * t;
        g2 = foot * 2.0 - g;
        dg = -dg;
    }
    let denom = dp - dg;
    let t = if denom.abs() > f32::EPSILON * (dp.abs() + dg.abs()) {
        // point on p->g2 where the signed distance to the line is zero
        let s = dp / denom;
        let x = p + (g2 - p) * s;
        (x - a).dot(ab) / len2
    } else {
        // p and g2 both on the line: pick the projection of p
        (p - a).dot(ab) / len2
    };
    a + ab * t.clamp(0.0, 1.0)
}

/// Relative area below which a portal counts as seen edge-on: twice the
/// triangle (apex, l, r) against |lr| times the apex's distance to both ends,
/// i.e. about the sine of the angle the portal subtends; 1e-6 sits above f32
/// rounding of cell-sized coordinates up to 2^20.
const EDGE_ON: f32 = 1e-6;

/// A portal seen edge-on from the apex (the apex lies on its line) leaves a
/// funnel of zero width whose sides cannot be told apart. The path passes
/// through the apex itself when the apex lies on the portal (a start point on
/// a region edge), and otherwise through the portal's end nearer the apex; the
/// portal is narrowed to that point.
#[inline]
#[must_use]
pub fn narrow_edge_on(apex: Vec2, portal: [Vec2; 2]) -> [Vec2; 2] {
    match edge_on_point(apex, portal) {
        Some(point) => [point, point],
        None => portal,
    }
}

/// The point [`narrow_edge_on`] narrows the portal to, or `None` when the
/// portal is not seen edge-on and stays as it is.
#[inline]
#[must_use]
pub(crate) fn edge_on_point(apex: Vec2, [l, r]: [Vec2; 2]) -> Option<Vec2> {
    let (to_l, to_r) = (l - apex, r - apex);
    if clearly_not_edge_on(to_l, to_r) {
        return None;
    }
    // the same test with |lr| itself, in L1 then exactly: L1 lengths bound
    // the Euclidean ones from above, so clearing the bound with them clears
    // it exactly too
    let twice_area = to_l.perp_dot(to_r).abs();
    if l == r
        || twice_area > EDGE_ON * l1(r - l) * (l1(to_l) + l1(to_r))
        || twice_area > EDGE_ON * l.distance(r) * (apex.distance(l) + apex.distance(r))
    {
        return None;
    }
    let t = (apex - l).dot(r - l) / l.distance_squared(r);
    Some(if (0.0..=1.0).contains(&t) {
        apex
    } else if apex.distance_squared(l) <= apex.distance_squared(r) {
        l
    } else {
        r
    })
}

/// The first, cheapest test of [`edge_on_point`], on the portal's ends
/// relative to the apex: true when the portal is certainly not seen edge-on,
/// with |lr| bounded by the sum of the apex's L1 distances to its ends (and
/// L1 lengths bounding Euclidean ones from above).
#[inline]
#[must_use]
pub(crate) fn clearly_not_edge_on(to_l: Vec2, to_r: Vec2) -> bool {
    let reach = l1(to_l) + l1(to_r);
    to_l.perp_dot(to_r).abs() > EDGE_ON * reach * reach
}

/// The L1 length of `v`, an upper bound on its Euclidean length that needs
/// no square root.
#[inline]
pub(crate) fn l1(v: Vec2) -> f32 {
    v.x.abs() + v.y.abs()
}

/// True when two segments share a point other than a common endpoint, in exact
/// f64 arithmetic (used to reject self-intersecting level polygons).
#[must_use]
pub fn segments_cross(a0: DVec2, a1: DVec2, b0: DVec2, b1: DVec2) -> bool {
    let d1 = orient_f64(b0, b1, a0);
    let d2 = orient_f64(b0, b1, a1);
    let d3 = orient_f64(a0, a1, b0);
    let d4 = orient_f64(a0, a1, b1);
    if ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0))
        && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
    {
        return true;
    }
    let on = |p: DVec2, q0: DVec2, q1: DVec2, d: f64| {
        d == 0.0
            && p != q0
            && p != q1
            && p.x >= q0.x.min(q1.x)
            && p.x <= q0.x.max(q1.x)
            && p.y >= q0.y.min(q1.y)
            && p.y <= q0.y.max(q1.y)
    };
    on(a0, b0, b1, d1) || on(a1, b0, b1, d2) || on(b0, a0, a1, d3) || on(b1, a0, a1, d4)
}

/// True when two segments may not both be edges of one planar layout: they
/// cross or touch other than at a common endpoint ([`segments_cross`]), or
/// are the same segment the same way round, or (unless `reversed_ok`) the
/// other way round.
#[must_use]
pub fn segments_conflict(a0: DVec2, a1: DVec2, b0: DVec2, b1: DVec2, reversed_ok: bool) -> bool {
    segments_cross(a0, a1, b0, b1)
        || (a0 == b0 && a1 == b1)
        || (!reversed_ok && a0 == b1 && a1 == b0)
}

/// An axis-aligned bounding box.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec2,
    /// Largest corner.
    pub max: Vec2,
}

impl Aabb {
    /// A box that contains nothing; growing it by a point gives that point's box.
    pub const EMPTY: Aabb = Aabb {
        min: Vec2::splat(f32::INFINITY),
        max: Vec2::splat(f32::NEG_INFINITY),
    };

    /// The box around `points`.
    #[must_use]
    pub fn from_points(points: &[Vec2]) -> Aabb {
        points.iter().fold(Aabb::EMPTY, |b, &p| b.grown(p))
    }

    /// This box grown to contain `p`.
    #[must_use]
    pub fn grown(self, p: Vec2) -> Aabb {
        Aabb {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The union of two boxes.
    #[must_use]
    pub fn union(self, other: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// True when the box contains nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x || self.min.y > self.max.y
    }

    /// Width and height.
    #[must_use]
    pub fn size(&self) -> Vec2 {
        self.max - self.min
    }
}

/// Whether the segment `p`-`q` passes through the interior of the simple
/// polygon `poly` (either winding); running along its boundary or touching
/// a corner does not count. The segment is cut where it meets the boundary
/// and the middle of each piece is tested, so collinear runs and passes
/// through corners are decided like any other case.
#[must_use]
pub fn segment_enters_polygon(p: DVec2, q: DVec2, poly: &[DVec2]) -> bool {
    let n = poly.len();
    if n < 3 {
        return false;
    }
    let d = q - p;
    let mut cuts = vec![0.0, 1.0];
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let e = b - a;
        let denom = d.perp_dot(e);
        if denom != 0.0 {
            let t = (a - p).perp_dot(e) / denom;
            let s = (a - p).perp_dot(d) / denom;
            if (0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&s) {
                cuts.push(t);
            }
        } else if d != DVec2::ZERO {
            // parallel: the corners of the edge that lie on the segment's line
            for c in [a, b] {
                if orient_f64(p, q, c) == 0.0 {
                    let t = (c - p).dot(d) / d.length_squared();
                    if (0.0..=1.0).contains(&t) {
                        cuts.push(t);
                    }
                }
            }
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.windows(2)
        .filter(|w| w[1] > w[0])
        .any(|w| strictly_inside(p + d * ((w[0] + w[1]) * 0.5), poly))
}

/// Whether `m` lies inside `poly` and not on its boundary (crossing number).
fn strictly_inside(m: DVec2, poly: &[DVec2]) -> bool {
    let n = poly.len();
    let mut inside = false;
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        if orient_f64(a, b, m) == 0.0 && m.cmpge(a.min(b)).all() && m.cmple(a.max(b)).all() {
            return false;
        }
        if (a.y > m.y) != (b.y > m.y) && m.x < a.x + (m.y - a.y) / (b.y - a.y) * (b.x - a.x) {
            inside = !inside;
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec2;

    #[test]
    fn orientation_and_area() {
        let sq = [vec2(0., 0.), vec2(2., 0.), vec2(2., 2.), vec2(0., 2.)];
        assert_eq!(signed_area(&sq), 4.0);
        let rev: Vec<Vec2> = sq.iter().rev().copied().collect();
        assert_eq!(signed_area(&rev), -4.0);
        assert!(orient(sq[0], sq[1], sq[2]) > 0.0);
        assert!(convex_contains(&sq, vec2(1., 1.), 0.0));
        assert!(convex_contains(&sq, vec2(2., 1.), 0.0), "boundary counts");
        assert!(!convex_contains(&sq, vec2(2.1, 1.), 0.0));
    }

    #[test]
    fn taut_point_crosses_or_clamps() {
        // p and g on opposite sides: the straight line crosses at x = 1
        let q = taut_point_on_segment(vec2(0., 0.), vec2(4., 0.), vec2(1., -1.), vec2(1., 1.));
        assert!((q - vec2(1., 0.)).length() < 1e-6);
        // line misses the segment: clamp to the nearer end
        let q = taut_point_on_segment(vec2(0., 0.), vec2(1., 0.), vec2(3., -1.), vec2(3., 1.));
        assert_eq!(q, vec2(1., 0.));
        // same side: mirror g, so the string bounces at x = 2
        let q = taut_point_on_segment(vec2(0., 0.), vec2(4., 0.), vec2(1., 1.), vec2(3., 1.));
        assert!((q - vec2(2., 0.)).length() < 1e-6);
    }

    #[test]
    fn crossing_segments() {
        let d = |x: f64, y: f64| DVec2::new(x, y);
        assert!(segments_cross(d(0., 0.), d(2., 2.), d(0., 2.), d(2., 0.)));
        assert!(
            !segments_cross(d(0., 0.), d(1., 0.), d(1., 0.), d(2., 1.)),
            "shared endpoint"
        );
        assert!(
            segments_cross(d(0., 0.), d(2., 0.), d(1., 0.), d(1., 1.)),
            "T junction"
        );
        assert!(!segments_cross(d(0., 0.), d(1., 0.), d(0., 1.), d(1., 1.)));
    }
}
