//! The booleans' answer without the booleans, for crowded outlines (see
//! `outline::crowded`: on ordinary levels the booleans are about ten
//! times quicker per edge, but their splitting tests every pair of edges
//! whose boxes overlap).
//!
//! Edges that cross at a point inside both, once snapped to the grid, are
//! first cut there ([`crate::geometry::cut_at_crossings`]: a sweep finds
//! every crossing in O((n + k) log n) for k crossings, each is rounded to
//! the grid, and the rounds repeat while something crosses, at most
//! [`MAX_ROUNDS`] times before the booleans take over). What is left may
//! touch and overlap (obstacles against the boundary, walls meeting end to
//! end, as in most hand-made levels) but needs no new point, and the
//! result is found in three sweeps, O(n log n):
//!
//! 1. every edge is split where another's end lies inside it
//!    ([`crate::geometry::ends_inside`]), and equal pieces are merged, their
//!    windings added: what is left meets only at ends;
//! 2. bottom to top along the sweep ([`crate::geometry::below_each`]), the
//!    winding numbers (walkable, obstacles) below each piece are those
//!    above the piece below it, and a piece adds its own to what is above
//!    it;
//! 3. the pieces across which the fill changes are the result's boundary,
//!    each turned to have the result on its left, and joined into contours:
//!    at each point, each piece coming in continues along the first piece
//!    going out clockwise from it. A contour may touch itself or another
//!    at a vertex (a hole against the boundary joins the boundary's
//!    contour there), never cross.
//!
//! The general booleans (i_overlay) take over when the rounds do not
//! settle, when coordinates are beyond the exact arithmetic's range, when
//! edges cross more than about once each (i_overlay is quicker there: 300
//! thin bars crossing 90,000 times took it 96 ms, the sweep and the rounds
//! 1.2 s), and when the splitting passes a limit on the places it finds
//! (n nested rectangles standing on one line put n^2 ends inside their
//! bottoms).
//! Their segment splitting grows faster than n log n with many long edges
//! side by side: 16,000 thin wedges crossing a square's sides took them
//! 3.3 s, and these sweeps 0.47 s (the whole booleans stage).

use std::collections::HashMap;

use glam::DVec2;

use super::outline::{Grid, Shapes};
use crate::geometry::{
    below_each, cut_at_crossings, ends_inside, first_conflict, orient_f64, proper_crossing,
    GridPoint,
};

/// Rounds of cutting at crossings before the booleans take over. One
/// settles almost every level; three settle 991 of 1,000 random crowded
/// inputs (`crossing_points`' `rounds_settle_on_nearly_all_crowded_inputs`).
/// Rounding only the crossings is not snap rounding: where many edges run
/// within a step of one another, each round's bends make new crossings (an
/// erosion's overlapping sweeps near a hub, all at once, still had 16 after
/// 8 rounds), so the rounds stop early rather than spend time the booleans
/// will spend again. (An erosion on a crowded level unites its sweeps by
/// the booleans first and leaves these sweeps a difference with nothing to
/// round: `outline::Grid::erode`.)
const MAX_ROUNDS: usize = 3;

/// `subject` (filled where its winding is positive) less `clip` (filled
/// where its winding is positive), on `grid`, its edges cut where they
/// cross (each crossing rounded to the grid); `None` when the cutting does
/// not settle, cannot be exact or would cut more than about once per edge,
/// or when stacked collinear edges would make the splitting quadratic (the
/// caller then runs the booleans). Each contour of the result is a shape
/// of its own, with the result on its left (counter-clockwise around what
/// it fills); contours may touch themselves or one another at a vertex.
pub(crate) fn subtract(
    grid: Grid,
    subject: &[Vec<[f64; 2]>],
    clip: &[Vec<[f64; 2]>],
) -> Option<Shapes> {
    subtract_within(grid, subject, clip, MAX_ROUNDS)
}

/// [`subtract`] where the edges must not cross once snapped: `None` if
/// they do, so that no crossing is rounded (the caller's margin counts
/// none).
pub(crate) fn subtract_uncrossed(
    grid: Grid,
    subject: &[Vec<[f64; 2]>],
    clip: &[Vec<[f64; 2]>],
) -> Option<Shapes> {
    subtract_within(grid, subject, clip, 0)
}

/// [`subtract`] with at most `max_rounds` rounds of cutting.
fn subtract_within(
    grid: Grid,
    subject: &[Vec<[f64; 2]>],
    clip: &[Vec<[f64; 2]>],
    max_rounds: usize,
) -> Option<Shapes> {
    let snap = |v: f64| (v * grid.scale).round() / grid.scale + 0.0;
    // directed edges: (from, to, 0 = walkable / 1 = obstacle)
    let mut edges: Vec<(DVec2, DVec2, usize)> = Vec::new();
    let tagged = subject
        .iter()
        .map(|c| (c, 0))
        .chain(clip.iter().map(|c| (c, 1)));
    for (contour, unit) in tagged {
        let points: Vec<DVec2> = contour
            .iter()
            .map(|&[x, y]| DVec2::new(snap(x), snap(y)))
            .collect();
        let n = points.len();
        for i in 0..n {
            let (a, b) = (points[i], points[(i + 1) % n]);
            if a != b {
                edges.push((a, b, unit));
            }
        }
    }
    let crossing = |segments: &[(DVec2, DVec2)]| {
        let cross = |i: usize, j: usize| {
            let ((a0, a1), (b0, b1)) = (segments[i], segments[j]);
            proper_crossing(a0, a1, b0, b1).is_some()
        };
        first_conflict(segments, cross).is_some()
    };
    let mut segments: Vec<(DVec2, DVec2)> = edges.iter().map(|&(a, b, _)| (a, b)).collect();
    let mut rounds = 0;
    while crossing(&segments) {
        // cut where they cross, on the grid's integers, unless they cross
        // more than about once per edge (the booleans are quicker there)
        rounds += 1;
        if rounds > max_rounds {
            return None;
        }
        let step = |v: f64| (v * grid.scale) as i64;
        let on_grid = edges
            .iter()
            .map(|&(a, b, unit)| ([[step(a.x), step(a.y)], [step(b.x), step(b.y)]], unit))
            .collect();
        // 2 events per edge, 8 per crossing
        let max_events = 10 * edges.len() + 4096;
        let world = |p: GridPoint| DVec2::new(p[0] as f64, p[1] as f64) / grid.scale + DVec2::ZERO;
        edges = cut_at_crossings(on_grid, max_events)?
            .into_iter()
            .map(|([a, b], unit)| (world(a), world(b), unit))
            .collect();
        segments = edges.iter().map(|&(a, b, _)| (a, b)).collect();
    }

    // 1. pieces that meet only at their ends, each once, left end first,
    // with what it adds to the windings above it
    let mut splits: Vec<Vec<DVec2>> = vec![Vec::new(); segments.len()];
    // each end lies inside at most one segment unless collinear segments
    // are stacked; many stacked (n nested rectangles on one line) would
    // make n^2 places, which the booleans are left to resolve
    for (i, p) in ends_inside(&segments, 4 * segments.len() + 4096)? {
        splits[i].push(p);
    }
    let mut pieces: HashMap<[u64; 4], [i32; 2]> = HashMap::with_capacity(segments.len());
    for (i, &(a, b, unit)) in edges.iter().enumerate() {
        let cuts = &mut splits[i];
        cuts.sort_unstable_by(|p, q| {
            (*p - a)
                .length_squared()
                .total_cmp(&(*q - a).length_squared())
        });
        let mut from = a;
        for to in cuts.iter().copied().chain(std::iter::once(b)) {
            // the side left of travel winds one more: above a rightward piece
            let (left, right, up) = if sweep_less(from, to) {
                (from, to, 1)
            } else {
                (to, from, -1)
            };
            pieces.entry(key(left, right)).or_insert([0, 0])[unit] += up;
            from = to;
        }
    }
    let mut pieces: Vec<([u64; 4], [i32; 2])> =
        pieces.into_iter().filter(|(_, w)| *w != [0, 0]).collect();
    pieces.sort_unstable_by_key(|p| p.0);
    let ends: Vec<(DVec2, DVec2)> = pieces.iter().map(|(k, _)| unkey(*k)).collect();

    // 2. windings above each piece, bottom to top
    let mut above: Vec<[i32; 2]> = vec![[0, 0]; pieces.len()];
    for (i, below) in below_each(&ends) {
        let mut w = below.map_or([0, 0], |b| above[b]);
        w[0] += pieces[i].1[0];
        w[1] += pieces[i].1[1];
        above[i] = w;
    }

    // 3. the boundary, the result on its left
    let filled = |w: [i32; 2]| w[0] > 0 && w[1] <= 0;
    let mut boundary: Vec<(DVec2, DVec2)> = Vec::new();
    for (i, &(left, right)) in ends.iter().enumerate() {
        let up = above[i];
        let down = [up[0] - pieces[i].1[0], up[1] - pieces[i].1[1]];
        match (filled(down), filled(up)) {
            (false, true) => boundary.push((left, right)),
            (true, false) => boundary.push((right, left)),
            _ => {}
        }
    }
    join(&boundary).map(|contours| contours.into_iter().map(|c| vec![c]).collect())
}

/// Whether `p` comes before `q` in the sweep (left to right, bottom to top).
fn sweep_less(p: DVec2, q: DVec2) -> bool {
    p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y)).is_lt()
}

fn key(a: DVec2, b: DVec2) -> [u64; 4] {
    [a.x.to_bits(), a.y.to_bits(), b.x.to_bits(), b.y.to_bits()]
}

fn unkey(k: [u64; 4]) -> (DVec2, DVec2) {
    let f = f64::from_bits;
    (DVec2::new(f(k[0]), f(k[1])), DVec2::new(f(k[2]), f(k[3])))
}

/// Joins directed pieces that meet only at their ends into closed contours
/// without straight-through vertices (except where other pieces meet them): at each point, a piece coming in
/// continues along the piece going out that is next clockwise from it
/// (across the filled side). `None` if ins and outs do not alternate
/// around a point (pieces that do not bound one fill).
fn join(boundary: &[(DVec2, DVec2)]) -> Option<Vec<Vec<[f64; 2]>>> {
    // per point: (direction away from it, piece, coming in)
    let mut at: HashMap<[u64; 2], Vec<(DVec2, usize, bool)>> = HashMap::new();
    let bits = |p: DVec2| [p.x.to_bits(), p.y.to_bits()];
    for (i, &(a, b)) in boundary.iter().enumerate() {
        at.entry(bits(a)).or_default().push((b - a, i, false));
        at.entry(bits(b)).or_default().push((a - b, i, true));
    }
    let mut next = vec![usize::MAX; boundary.len()];
    for around in at.values_mut() {
        // counter-clockwise from the positive x axis
        let half = |d: DVec2| usize::from(!(d.y > 0.0 || (d.y == 0.0 && d.x > 0.0)));
        around.sort_unstable_by(|p, q| {
            half(p.0)
                .cmp(&half(q.0))
                .then_with(|| 0.0_f64.total_cmp(&orient_f64(DVec2::ZERO, p.0, q.0)))
        });
        let n = around.len();
        for k in 0..n {
            let (_, piece, coming_in) = around[k];
            if coming_in {
                // the filled side of a piece coming in is clockwise of it
                let (_, out, out_is_in) = around[(k + n - 1) % n];
                if out_is_in {
                    return None;
                }
                next[piece] = out;
            }
        }
    }
    let mut done = vec![false; boundary.len()];
    let mut contours = Vec::new();
    for first in 0..boundary.len() {
        if done[first] {
            continue;
        }
        let mut points: Vec<DVec2> = Vec::new();
        let mut piece = first;
        while !done[piece] {
            done[piece] = true;
            points.push(boundary[piece].0);
            piece = next[piece];
            if piece == usize::MAX {
                return None;
            }
        }
        if piece != first {
            return None;
        }
        // a point other pieces meet stays a vertex of each contour through it
        let junction = |p: DVec2| at.get(&bits(p)).is_some_and(|a| a.len() > 2);
        let points = without_straight_vertices(points, junction);
        if points.len() >= 3 {
            contours.push(points.iter().map(|p| [p.x, p.y]).collect());
        }
    }
    Some(contours)
}

/// A closed contour without the vertices it runs straight through, but
/// for those where `keep` holds.
fn without_straight_vertices(points: Vec<DVec2>, keep: impl Fn(DVec2) -> bool) -> Vec<DVec2> {
    let straight = |a: DVec2, b: DVec2, c: DVec2| {
        orient_f64(a, b, c) == 0.0 && (b - a).dot(c - b) > 0.0 && !keep(b)
    };
    let mut out: Vec<DVec2> = Vec::with_capacity(points.len());
    for p in points {
        while out.len() >= 2 && straight(out[out.len() - 2], out[out.len() - 1], p) {
            out.pop();
        }
        out.push(p);
    }
    // the seam
    let mut start = 0;
    loop {
        let n = out.len();
        if n < start + 3 {
            break;
        }
        if straight(out[n - 2], out[n - 1], out[start]) {
            out.pop();
        } else if straight(out[n - 1], out[start], out[start + 1]) {
            start += 1;
        } else {
            break;
        }
    }
    out.split_off(start)
}

#[cfg(test)]
pub(super) mod tests {
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
    pub(in crate::bake) fn area(shapes: &Shapes) -> f64 {
        shapes
            .iter()
            .flatten()
            .map(|c| {
                let p: Vec<DVec2> = c.iter().map(|&[x, y]| DVec2::new(x, y)).collect();
                twice_area(&p) / 2.0
            })
            .sum()
    }

    /// Quadrilaterals with corners on a grid of `step`: their lower left
    /// corner among `cells` x `cells` points, their sides `1..sizes` steps,
    /// slanted (the right side raised by half the width) when `slants`;
    /// walkable or obstacles, either way round.
    fn quads(
        cells: i32,
        sizes: i32,
        step: f64,
        slants: bool,
    ) -> impl Strategy<Value = Vec<(Vec<[f64; 2]>, bool)>> {
        let slant = if slants {
            any::<bool>().boxed()
        } else {
            Just(false).boxed()
        };
        prop::collection::vec(
            (
                0..cells,
                0..cells,
                1..sizes,
                1..sizes,
                slant,
                any::<bool>(),
                any::<bool>(),
            ),
            1..9,
        )
        .prop_map(move |v| {
            v.into_iter()
                .map(|(x, y, w, h, slant, clockwise, clip)| {
                    let (x, y, w, h) = (
                        f64::from(x) * step,
                        f64::from(y) * step,
                        f64::from(w) * step,
                        f64::from(h) * step,
                    );
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

    /// `subtract` covers what the booleans cover. With `rounded` false
    /// (corners and crossings on grid points) it must answer, with the same
    /// area and the same answer at every sample point. With `rounded` true
    /// (crossings between grid points, each rounded by under a step, 2^-16
    /// units here) it may give up when its rounds do not settle; where it
    /// answers, areas agree within 0.01 and samples 0.01 or more from every
    /// input edge agree. Either way no two result edges cross or touch but
    /// at shared ends.
    fn agrees_with_the_booleans(
        input: &[(Vec<[f64; 2]>, bool)],
        rounded: bool,
    ) -> Result<(), TestCaseError> {
        let grid = Grid::new(64.0);
        let subject: Contours = input.iter().filter(|c| !c.1).map(|c| c.0.clone()).collect();
        let mut clip: Contours = input.iter().filter(|c| c.1).map(|c| c.0.clone()).collect();
        for c in &mut clip {
            let p: Vec<DVec2> = c.iter().map(|&[x, y]| DVec2::new(x, y)).collect();
            if twice_area(&p) < 0.0 {
                c.reverse();
            }
        }
        let input_edges: Vec<(DVec2, DVec2)> = subject
            .iter()
            .chain(&clip)
            .flat_map(|c| (0..c.len()).map(move |k| (c[k], c[(k + 1) % c.len()])))
            .map(|([ax, ay], [bx, by])| (DVec2::new(ax, ay), DVec2::new(bx, by)))
            .collect();
        let fast = subtract(grid, &subject, &clip);
        let Some(fast) = fast else {
            prop_assert!(rounded, "the sweeps gave up on crossings at grid points");
            return Ok(());
        };
        let slow = if clip.is_empty() {
            grid.overlay(&subject, &[], OverlayRule::Subject, FillRule::Positive)
        } else {
            grid.overlay(&subject, &clip, OverlayRule::Difference, FillRule::Positive)
        };
        let tolerance = if rounded { 0.01 } else { 1e-9 };
        prop_assert!(
            (area(&fast) - area(&slow)).abs() < tolerance,
            "{} against {}",
            area(&fast),
            area(&slow)
        );
        let contours = |s: &Shapes| -> Vec<Vec<DVec2>> {
            s.iter()
                .flatten()
                .map(|c| c.iter().map(|&[x, y]| DVec2::new(x, y)).collect())
                .collect()
        };
        let (f, s) = (contours(&fast), contours(&slow));
        let far = |p: DVec2| {
            !rounded
                || input_edges.iter().all(|&(a, b)| {
                    let t =
                        ((p - a).dot(b - a) / (b - a).length_squared().max(1e-12)).clamp(0.0, 1.0);
                    (a + (b - a) * t).distance(p) >= 0.01
                })
        };
        for i in 0..60 {
            for j in 0..60 {
                let p = DVec2::new(f64::from(i) + 0.25, f64::from(j) + 0.375);
                if far(p) {
                    prop_assert_eq!(winding(&f, p) > 0, winding(&s, p) > 0, "at {:?}", p);
                }
            }
        }
        let edges: Vec<(DVec2, DVec2)> = f
            .iter()
            .flat_map(|c| (0..c.len()).map(move |k| (c[k], c[(k + 1) % c.len()])))
            .collect();
        for (a, &(a0, a1)) in edges.iter().enumerate() {
            for &(b0, b1) in &edges[a + 1..] {
                prop_assert!(
                    !crate::geometry::segments_cross(a0, a1, b0, b1),
                    "{:?} crosses {:?}",
                    (a0, a1),
                    (b0, b1)
                );
            }
        }
        Ok(())
    }

    /// Triangles with whole corners among 0..60: crossings at any slope,
    /// most of them between grid points (rounded, in one round or more).
    fn triangles() -> impl Strategy<Value = Vec<(Vec<[f64; 2]>, bool)>> {
        let corner = (0..60i32, 0..60i32).prop_map(|(x, y)| [f64::from(x), f64::from(y)]);
        prop::collection::vec(
            ([corner.clone(), corner.clone(), corner], any::<bool>()),
            1..9,
        )
        .prop_map(|v| v.into_iter().map(|(c, clip)| (c.to_vec(), clip)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        /// Triangles at any slope: crossings rounded to the grid.
        fn crossing_triangles_agree_with_the_booleans(input in triangles()) {
            agrees_with_the_booleans(&input, true)?;
        }

        #[test]
        /// Boxes on a fine grid, some slanted: nested, apart, touching,
        /// crossing (cut where they cross, at grid points here).
        fn slanted_boxes_agree_with_the_booleans(input in quads(48, 12, 1.0, true)) {
            agrees_with_the_booleans(&input, false)?;
        }

        #[test]
        /// Rectangles on a coarse grid: sides along one another, ends on
        /// other sides, corners on corners, and sometimes a crossing.
        fn tiled_rectangles_agree_with_the_booleans(input in quads(10, 5, 4.0, false)) {
            agrees_with_the_booleans(&input, false)?;
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
        // an obstacle touching the border at a corner, another lying along
        // it, and a spike on the border: resolved here, no booleans needed
        let along = vec![vec![[20.0, 0.0], [40.0, 0.0], [30.0, 5.0]]];
        let corner = vec![vec![[0.0, 0.0], [10.0, 5.0], [5.0, 10.0]]];
        let spiked = [vec![
            [0.0, 0.0],
            [60.0, 0.0],
            [80.0, 0.0],
            [70.0, 0.0],
            [100.0, 0.0],
            [100.0, 100.0],
            [0.0, 100.0],
        ]];
        for (subject, clip, expected) in [
            (&subject[..1], &corner, 10_000.0 - 37.5),
            (&subject[..1], &along, 10_000.0 - 50.0),
            (&spiked[..], &corner, 10_000.0 - 37.5),
        ] {
            let shapes = subtract(grid, subject, clip).expect("nothing crosses");
            assert!(
                (area(&shapes) - expected).abs() < 1e-9,
                "{} against {expected}",
                area(&shapes)
            );
        }
        // an obstacle crossing the border (at grid points): cut there
        let crossing = vec![vec![[-10.0, 50.0], [10.0, 40.0], [10.0, 60.0]]];
        let shapes = subtract(grid, &subject[..1], &crossing).expect("cut where they cross");
        assert!((area(&shapes) - (10_000.0 - 150.0)).abs() < 1e-9);
    }

    /// Resource test (hostile-input campaign: 16,000 thin wedges converging
    /// on a point took the booleans 1.8 s touching the boundary, 3.3 s
    /// crossing it): a hub whose wedges reach the boundary (four of them
    /// touch it) or cross it is resolved here, in n log n comparisons.
    #[test]
    fn a_hub_of_wedges_costs_n_log_n() {
        let hub = |n: u32, reach: f64| -> Contours {
            let turn = std::f64::consts::TAU / f64::from(n);
            (0..n)
                .map(|i| {
                    let (a, b) = (turn * f64::from(i), turn * (f64::from(i) + 0.5));
                    let at = |r: f64, t: f64| [r * t.cos(), r * t.sin()];
                    vec![at(20.0, a), at(reach, a), at(reach, b)]
                })
                .collect()
        };
        let walkable = vec![vec![
            [-2000.0, -2000.0],
            [2000.0, -2000.0],
            [2000.0, 2000.0],
            [-2000.0, 2000.0],
        ]];
        let work = |n: u32, reach: f64| {
            let grid = Grid::new(reach);
            let before =
                crate::geometry::sweep_comparisons() + crate::geometry::crossing_comparisons();
            let shapes = subtract(grid, &walkable, &hub(n, reach)).expect("resolved here");
            if reach == 2000.0 {
                // a contour per wedge and the boundary's, which the four
                // wedges touching it (at right angles) join
                assert_eq!(shapes.len(), n as usize - 3);
            } else {
                // the boundary's contour, notched by every wedge crossing
                // it, and a contour per wedge inside it (near the diagonals)
                let inside = |p: &[f64; 2]| p[0].abs().max(p[1].abs()) < 2000.0;
                let apart = hub(n, reach)
                    .iter()
                    .filter(|w| w.iter().all(inside))
                    .count();
                assert!(apart > 0 && apart < n as usize / 2);
                assert_eq!(shapes.len(), 1 + apart);
            }
            crate::geometry::sweep_comparisons() + crate::geometry::crossing_comparisons() - before
        };
        // wedges touching the boundary, then crossing it (cut where they do)
        for reach in [2000.0, 2500.0] {
            let (small, large) = (work(1000, reach), work(8000, reach));
            let ratio = large as f64 / small as f64;
            // 8x the wedges: n log n is about 8 x 1.3, quadratic 64
            assert!(
                ratio < 8.0 * 1.5,
                "reach {reach}: 8x the wedges, {ratio:.1}x the work"
            );
        }
    }

    /// Review finding: n nested rectangles standing on one line put n^2
    /// ends inside one another's bottoms. The splitting stops at its limit
    /// and hands the input to the booleans instead of growing as n^2.
    #[test]
    fn stacked_collinear_edges_go_to_the_booleans() {
        let n = 3000;
        let side = f64::from(2 * n);
        let walkable = vec![vec![
            [-1.0, -1.0],
            [side + 1.0, -1.0],
            [side + 1.0, side],
            [-1.0, side],
        ]];
        let nested: Contours = (0..n)
            .map(|i| {
                let (lo, hi, top) = (f64::from(i), f64::from(2 * n - i), f64::from(n - i));
                vec![[lo, 0.0], [hi, 0.0], [hi, top], [lo, top]]
            })
            .collect();
        let grid = Grid::new(side + 1.0);
        assert!(subtract(grid, &walkable, &nested).is_none());
        // a few of them are split here
        assert!(subtract(grid, &walkable, &nested[..20]).is_some());
    }
}
