//! The booleans' answer without the booleans, for outlines that do not meet.
//!
//! When no two contours of a subtraction touch or cross once snapped to the
//! grid (every contour a simple closed curve apart from all the others, as
//! the obstacles of most hand-made levels are), the result's boundary is a
//! subset of the input contours: a contour bounds the result exactly when
//! the fill differs on its two sides. The winding numbers beside each
//! contour follow from the contour directly below its lowest-leftmost
//! vertex, found by one sweep ([`crate::geometry::directly_below`]), so the
//! whole costs O(n log n). The general booleans (i_overlay) split segments
//! in time that grows faster than that with many long edges side by side:
//! 16,000 thin wedges converging on a point took 1.8 s.

use glam::DVec2;

use super::outline::{Grid, Shapes};
use crate::geometry::{directly_below, first_conflict, orient_f64, segments_cross};

/// A contour snapped to the grid, without repeated points or vertices that
/// lie on the straight line between their neighbours.
struct Snapped {
    points: Vec<DVec2>,
    /// Its lowest-leftmost vertex.
    lowest: usize,
    /// +1 counter-clockwise, -1 clockwise (once the contour is known to be
    /// simple: the turn at its lowest-leftmost vertex).
    sign: i32,
    clip: bool,
}

impl Snapped {
    fn new(points: Vec<DVec2>, clip: bool) -> Snapped {
        let n = points.len();
        let lowest = (0..n)
            .min_by(|&a, &b| sweep_order(points[a], points[b]))
            .expect("a contour has 3 points or more");
        let (prev, next) = (points[(lowest + n - 1) % n], points[(lowest + 1) % n]);
        let sign = if orient_f64(prev, points[lowest], next) > 0.0 {
            1
        } else {
            -1
        };
        Snapped {
            points,
            lowest,
            sign,
            clip,
        }
    }

    /// The edge (by its first vertex) leaving the lowest-leftmost vertex
    /// below the other one: the next edge on a counter-clockwise contour,
    /// the previous one on a clockwise contour.
    fn lower_edge(&self) -> usize {
        let n = self.points.len();
        if self.sign > 0 {
            self.lowest
        } else {
            (self.lowest + n - 1) % n
        }
    }
}

fn sweep_order(p: DVec2, q: DVec2) -> std::cmp::Ordering {
    p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y))
}

/// `subject` (filled where its winding is positive) less `clip` (filled
/// where its winding is positive), on `grid`, when the snapped contours
/// neither cross nor touch one another nor themselves; `None` otherwise
/// (the caller runs the booleans). Each contour of the result is a shape of
/// its own: outer contours counter-clockwise, holes clockwise.
pub(crate) fn subtract(
    grid: Grid,
    subject: &[Vec<[f64; 2]>],
    clip: &[Vec<[f64; 2]>],
) -> Option<Shapes> {
    let mut contours = Vec::with_capacity(subject.len() + clip.len());
    let tagged = subject
        .iter()
        .map(|c| (c, false))
        .chain(clip.iter().map(|c| (c, true)));
    for (c, is_clip) in tagged {
        if let Some(points) = snapped(grid, c)? {
            contours.push(Snapped::new(points, is_clip));
        }
    }
    // every edge, with the contour it belongs to and its place there
    let mut edges = Vec::new();
    let mut owner = Vec::new();
    for (k, c) in contours.iter().enumerate() {
        let n = c.points.len();
        for i in 0..n {
            edges.push((c.points[i], c.points[(i + 1) % n]));
            owner.push((k, i, n));
        }
    }
    let adjacent = |a: usize, b: usize| {
        let ((ka, ia, n), (kb, ib, _)) = (owner[a], owner[b]);
        ka == kb && (ib == (ia + 1) % n || ia == (ib + 1) % n)
    };
    let meet = |a: usize, b: usize| {
        let ((a0, a1), (b0, b1)) = (edges[a], edges[b]);
        // neighbours on a contour share one end and (collinear points gone,
        // spikes refused) nothing else; any other pair shares nothing
        if adjacent(a, b) {
            return false;
        }
        segments_cross(a0, a1, b0, b1) || a0 == b0 || a0 == b1 || a1 == b0 || a1 == b1
    };
    if first_conflict(&edges, meet).is_some() {
        return None;
    }

    // per contour, its lowest-leftmost vertex's lower edge: what lies
    // directly below that edge lies directly outside the contour
    let mut probes = Vec::with_capacity(contours.len());
    let mut start = 0;
    for c in &contours {
        probes.push(start + c.lower_edge());
        start += c.points.len();
    }
    let below = directly_below(&edges, &probes);

    // winding numbers (subject, clip) just outside each contour, settled in
    // sweep order of the lowest vertices: the contour below one's vertex
    // has its own lowest vertex earlier
    let mut order: Vec<usize> = (0..contours.len()).collect();
    let lowest = |k: usize| contours[k].points[contours[k].lowest];
    order.sort_unstable_by(|&a, &b| sweep_order(lowest(a), lowest(b)));
    let mut outside: Vec<Option<[i32; 2]>> = vec![None; contours.len()];
    for k in order {
        let w = match below[k] {
            None => [0, 0],
            Some(e) => {
                let d = owner[e].0;
                let c = &contours[d];
                let mut w = outside[d].expect("the contour below was settled first");
                // the edge's own contour winds one more on its left, which is
                // above a rightward edge: the inside when counter-clockwise
                let rightwards = edges[e].0.x < edges[e].1.x;
                w[usize::from(c.clip)] += i32::from(rightwards) - i32::from(c.sign < 0);
                w
            }
        };
        outside[k] = Some(w);
    }

    let filled = |w: [i32; 2]| w[0] > 0 && w[1] <= 0;
    let mut shapes = Vec::new();
    for (k, c) in contours.into_iter().enumerate() {
        let out = outside[k].expect("every contour settled");
        let mut inside = out;
        inside[usize::from(c.clip)] += c.sign;
        if filled(out) == filled(inside) {
            continue;
        }
        let mut points: Vec<[f64; 2]> = c.points.iter().map(|p| [p.x, p.y]).collect();
        // the result on the left: counter-clockwise around what it fills
        if (c.sign > 0) != filled(inside) {
            points.reverse();
        }
        shapes.push(vec![points]);
    }
    Some(shapes)
}

/// `contour` on the grid, its repeated points and straight-through
/// vertices removed: `Some(None)` when nothing with an area is left,
/// `None` when it folds back on itself (a spike), which the booleans
/// resolve.
fn snapped(grid: Grid, contour: &[[f64; 2]]) -> Option<Option<Vec<DVec2>>> {
    let snap = |v: f64| (v * grid.scale).round() / grid.scale;
    let mut out: Vec<DVec2> = Vec::with_capacity(contour.len());
    let push = |out: &mut Vec<DVec2>, p: DVec2| -> Option<()> {
        if out.last() == Some(&p) {
            return Some(());
        }
        while out.len() >= 2 {
            let (a, b) = (out[out.len() - 2], out[out.len() - 1]);
            if orient_f64(a, b, p) != 0.0 {
                break;
            }
            if (a - b).dot(p - b) >= 0.0 {
                return None;
            }
            out.pop();
        }
        out.push(p);
        Some(())
    };
    for &[x, y] in contour {
        push(&mut out, DVec2::new(snap(x), snap(y)))?;
    }
    // the seam: the first points against the last ones
    let mut start = 0;
    loop {
        while out.len() > start + 1 && out.last() == Some(&out[start]) {
            out.pop();
        }
        if out.len() < start + 3 {
            return Some(None);
        }
        let n = out.len();
        let (a, b, c) = (out[n - 2], out[n - 1], out[start]);
        if orient_f64(a, b, c) == 0.0 {
            if (a - b).dot(c - b) >= 0.0 {
                return None;
            }
            out.pop();
            continue;
        }
        let (a, b, c) = (out[n - 1], out[start], out[start + 1]);
        if orient_f64(a, b, c) == 0.0 {
            if (a - b).dot(c - b) >= 0.0 {
                return None;
            }
            start += 1;
            continue;
        }
        break;
    }
    // a contour that is not simple (zero area among them) meets itself,
    // which the sweep finds
    Some(Some(out.split_off(start)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bake::outline::Contours;
    use i_overlay::core::fill_rule::FillRule;
    use i_overlay::core::overlay_rule::OverlayRule;
    use proptest::prelude::*;

    /// Twice the signed area of a closed contour.
    fn twice_area(points: &[DVec2]) -> f64 {
        let n = points.len();
        (0..n)
            .map(|i| points[i].perp_dot(points[(i + 1) % n]))
            .sum()
    }

    /// The area a set of shapes encloses, holes subtracted.
    fn area(shapes: &Shapes) -> f64 {
        shapes
            .iter()
            .flatten()
            .map(|c| {
                let p: Vec<DVec2> = c.iter().map(|&[x, y]| DVec2::new(x, y)).collect();
                twice_area(&p) / 2.0
            })
            .sum()
    }

    /// Axis-aligned and slanted boxes on a small grid, some nested, some
    /// apart, some touching or crossing (which the fast path hands back).
    fn boxes() -> impl Strategy<Value = Vec<(Vec<[f64; 2]>, bool)>> {
        prop::collection::vec(
            (
                0i32..48,
                0i32..48,
                1i32..12,
                1i32..12,
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            ),
            1..9,
        )
        .prop_map(|v| {
            v.into_iter()
                .map(|(x, y, w, h, slant, clockwise, clip)| {
                    let (x, y, w, h) = (f64::from(x), f64::from(y), f64::from(w), f64::from(h));
                    let s = if slant { 0.5 * w } else { 0.0 };
                    let mut c = vec![[x, y], [x + w, y + s], [x + w, y + h + s], [x, y + h]];
                    if clockwise {
                        c.reverse();
                    }
                    (c, clip)
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Wherever the fast path answers, it covers what the booleans
        /// cover: the same area, and the same answer at sample points.
        #[test]
        fn the_fast_path_agrees_with_the_booleans(input in boxes()) {
            let grid = Grid::new(64.0);
            let subject: Contours = input.iter().filter(|c| !c.1).map(|c| c.0.clone()).collect();
            let mut clip: Contours = input.iter().filter(|c| c.1).map(|c| c.0.clone()).collect();
            for c in &mut clip {
                let p: Vec<DVec2> = c.iter().map(|&[x, y]| DVec2::new(x, y)).collect();
                if twice_area(&p) < 0.0 {
                    c.reverse();
                }
            }
            let Some(fast) = subtract(grid, &subject, &clip) else { return Ok(()) };
            let slow = if clip.is_empty() {
                grid.overlay(&subject, &[], OverlayRule::Subject, FillRule::Positive)
            } else {
                grid.overlay(&subject, &clip, OverlayRule::Difference, FillRule::Positive)
            };
            prop_assert!((area(&fast) - area(&slow)).abs() < 1e-9, "{} against {}", area(&fast), area(&slow));
            let contours = |s: &Shapes| -> Vec<Vec<DVec2>> {
                s.iter().flatten().map(|c| c.iter().map(|&[x, y]| DVec2::new(x, y)).collect()).collect()
            };
            let (f, s) = (contours(&fast), contours(&slow));
            for i in 0..60 {
                for j in 0..60 {
                    let p = DVec2::new(f64::from(i) + 0.25, f64::from(j) + 0.375);
                    prop_assert_eq!(winding(&f, p) > 0, winding(&s, p) > 0, "at {:?}", p);
                }
            }
        }
    }

    /// The winding number of closed contours around `p` (not on them).
    fn winding(contours: &[Vec<DVec2>], p: DVec2) -> i32 {
        let mut w = 0;
        for c in contours {
            let n = c.len();
            for i in 0..n {
                let (a, b) = (c[i], c[(i + 1) % n]);
                if a.y <= p.y && b.y > p.y && orient_f64(a, b, p) > 0.0 {
                    w += 1;
                } else if a.y > p.y && b.y <= p.y && orient_f64(a, b, p) < 0.0 {
                    w -= 1;
                }
            }
        }
        w
    }

    #[test]
    fn nested_contours_bound_the_result_only_where_the_fill_changes() {
        let square = |x: f64, y: f64, s: f64| vec![[x, y], [x + s, y], [x + s, y + s], [x, y + s]];
        let grid = Grid::new(100.0);
        // walkable 0..100 and again 50..60 inside it (wound twice there),
        // an obstacle 10..40 with a second one inside it, one outside
        // everything, and a clockwise walkable contour 70..80 (wound 0)
        let mut clockwise = square(70.0, 70.0, 10.0);
        clockwise.reverse();
        let subject = vec![square(0.0, 0.0, 100.0), square(50.0, 50.0, 10.0), clockwise];
        let clip = vec![
            square(10.0, 10.0, 30.0),
            square(15.0, 15.0, 5.0),
            square(200.0, 0.0, 5.0),
        ];
        let shapes = subtract(grid, &subject, &clip).expect("nothing meets");
        // the outer square, the obstacle's hole and the clockwise square's
        assert_eq!(shapes.len(), 3);
        assert!((area(&shapes) - (10_000.0 - 900.0 - 100.0)).abs() < 1e-9);
        let contours: Vec<Vec<DVec2>> = shapes
            .iter()
            .flatten()
            .map(|c| c.iter().map(|&[x, y]| DVec2::new(x, y)).collect())
            .collect();
        for (p, inside) in [
            ((5.0, 5.0), true),
            ((12.0, 12.0), false),
            ((17.0, 17.0), false),
            ((55.0, 55.0), true),
            ((75.0, 75.0), false),
            ((202.0, 2.0), false),
        ] {
            assert_eq!(
                winding(&contours, DVec2::new(p.0, p.1)) > 0,
                inside,
                "at {p:?}"
            );
        }
        // an obstacle touching the border at a corner: the booleans decide
        let touching = vec![vec![[0.0, 0.0], [10.0, 5.0], [5.0, 10.0]]];
        assert!(subtract(grid, &subject[..1], &touching).is_none());
        // a spike folds back: the booleans decide
        let spike = vec![vec![
            [0.0, 0.0],
            [10.0, 0.0],
            [20.0, 0.0],
            [15.0, 0.0],
            [10.0, 10.0],
        ]];
        assert!(subtract(grid, &spike, &[]).is_none());
    }

    /// Resource test (hostile-input campaign: 16,000 thin wedges converging
    /// on a point took the booleans 1.8 s): a hub whose wedges touch
    /// nothing is resolved here, in n log n comparisons.
    #[test]
    fn a_hub_of_wedges_costs_n_log_n() {
        let hub = |n: u32| -> Contours {
            let turn = std::f64::consts::TAU / f64::from(n);
            (0..n)
                .map(|i| {
                    let (a, b) = (turn * f64::from(i), turn * (f64::from(i) + 0.5));
                    let at = |r: f64, t: f64| [r * t.cos(), r * t.sin()];
                    vec![at(20.0, a), at(2000.0, a), at(2000.0, b)]
                })
                .collect()
        };
        let walkable = vec![vec![
            [-2100.0, -2100.0],
            [2100.0, -2100.0],
            [2100.0, 2100.0],
            [-2100.0, 2100.0],
        ]];
        let grid = Grid::new(2100.0);
        let work = |n: u32| {
            let before = crate::geometry::sweep_comparisons();
            let shapes = subtract(grid, &walkable, &hub(n)).expect("no wedge meets another");
            assert_eq!(shapes.len(), n as usize + 1);
            crate::geometry::sweep_comparisons() - before
        };
        let (small, large) = (work(1000), work(8000));
        let ratio = large as f64 / small as f64;
        // 8x the wedges: n log n is about 8 x 1.3, quadratic 64
        assert!(ratio < 8.0 * 1.5, "8x the wedges, {ratio:.1}x the work");
    }
}
