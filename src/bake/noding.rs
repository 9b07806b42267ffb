//! Noding the outline's constraints before the triangulation: wherever a
//! costed area's edge meets a wall or another area's edge, the point becomes
//! a vertex of both, so that no two constraints cross and spade keeps them
//! all.
//!
//! Each costed area keeps its own outline (not clipped to walkable space),
//! so where it crosses a slanted wall, or another area, the crossing is a
//! point off the snapping grid. Left as they are, such edges cross, spade
//! has to drop one of them, and the triangles around it take the wrong
//! area kind.
//!
//! The noder works on the grid's integers, so the output stays on the grid
//! (the file stores it exactly). An end lying inside another segment
//! (collinear overlaps included) splits that segment there, which moves
//! nothing. Where two segments cross properly, all of them are snap rounded
//! (Hobby, "Practical segment intersection with finite precision output",
//! 1999): the pixel of a grid point is the half-open unit square around it,
//! a pixel is hot when it holds a crossing or an end, and every segment is
//! bent through the centre of every hot pixel it passes. No two pieces then
//! cross, and no point of a segment moves by more than half a pixel's
//! diagonal (0.71 steps). A piece can pass exactly through another's end,
//! so a check round follows, which then only splits.
//!
//! Rounding only the crossings and bending only the two segments through
//! each (what this module did before) does not settle: a bent piece passing
//! near another's end can cross a neighbour again, round after round.

/// A point of the snapping grid, in steps.
pub(crate) type Point = [i64; 2];

/// A segment with what it bounds: [`WALL`] or the outline slot of an area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    pub ends: [Point; 2],
    pub tag: u32,
}

/// The tag of a wall.
pub(crate) const WALL: u32 = u32::MAX;

/// Rounds of splitting at most: a snap rounding round leaves nothing
/// crossing, and the check round after it only splits at ends.
const MAX_ROUNDS: usize = 16;

/// Segment-in-cell entries and pairs tested at most, over all rounds: about
/// the work of the crossing guard that runs before the booleans.
const MAX_WORK: u64 = 1 << 27;

/// Splits `segments` where they meet, as the module says. The segments from
/// `first_new` on (the areas' edges) are tested against all; those before it
/// (the walls, which the booleans leave crossing nothing) only against
/// them. Returns whether no two segments cross any more: false when the
/// work bound or the rounds ran out first (what still crosses is left for
/// the triangulation to drop).
pub(crate) fn node(segments: &mut Vec<Segment>, first_new: usize) -> bool {
    node_within(segments, first_new, MAX_WORK)
}

/// [`node`] under a bound of `max_work` on the work.
fn node_within(segments: &mut Vec<Segment>, first_new: usize, max_work: u64) -> bool {
    let mut dirty: Vec<bool> = (0..segments.len()).map(|i| i >= first_new).collect();
    let mut work = 0u64;
    for _ in 0..MAX_ROUNDS {
        if !dirty.contains(&true) {
            return true;
        }
        // one index per round serves both the tests and the snapping
        let Some(index) = CellIndex::new(segments, (&mut work, max_work)) else {
            return false;
        };
        let Some((mut splits, crossings)) =
            find_meetings(segments, &dirty, &index, (&mut work, max_work))
        else {
            return false;
        };
        if !crossings.is_empty() {
            // the exact splits are among the snaps: an end on a segment is
            // a hot pixel's centre that the segment passes
            splits = match snap(segments, crossings, &index, (&mut work, max_work)) {
                Some(s) => s,
                None => return false,
            };
        }
        if splits.iter().all(Vec::is_empty) {
            return true;
        }
        let mut next = Vec::with_capacity(segments.len());
        let mut next_dirty = Vec::with_capacity(next.capacity());
        for (segment, mut at) in segments.iter().zip(splits) {
            if at.is_empty() {
                next.push(*segment);
                next_dirty.push(false);
                continue;
            }
            let [a, b] = segment.ends;
            at.sort_unstable_by_key(|&p| (along(segment.ends, p).0, p));
            at.dedup();
            let mut from = a;
            for p in at.into_iter().chain(std::iter::once(b)) {
                if p != from {
                    next.push(Segment {
                        ends: [from, p],
                        tag: segment.tag,
                    });
                    next_dirty.push(true);
                    from = p;
                }
            }
        }
        *segments = next;
        dirty = next_dirty;
    }
    false
}

/// What testing each dirty segment against its neighbours in `index` finds: for each
/// segment, the points on it where another ends (to split it at, exactly),
/// and the hot pixels of the proper crossings; `None` when the work bound
/// is passed.
fn find_meetings(
    segments: &[Segment],
    dirty: &[bool],
    index: &CellIndex,
    (work, max_work): (&mut u64, u64),
) -> Option<(Vec<Vec<Point>>, Vec<Point>)> {
    let mut splits = vec![Vec::new(); segments.len()];
    let mut crossings = Vec::new();
    let mut seen = vec![u32::MAX; segments.len()];
    for (i, s) in segments.iter().enumerate() {
        if !dirty[i] {
            continue;
        }
        for cell in index.cells_of(s) {
            for &j in index.in_cell(cell) {
                let j = j as usize;
                if j == i || seen[j] == i as u32 {
                    continue;
                }
                seen[j] = i as u32;
                // a pair of dirty segments is tested once
                if dirty[j] && j < i {
                    continue;
                }
                *work += 1;
                if *work > max_work {
                    return None;
                }
                match meet(s.ends, segments[j].ends) {
                    Meeting::Apart => {}
                    Meeting::Ends(on_s, on_t) => {
                        splits[i].extend(on_s.into_iter().flatten());
                        splits[j].extend(on_t.into_iter().flatten());
                    }
                    Meeting::Crossing(h) => crossings.push(h),
                }
            }
        }
    }
    Some((splits, crossings))
}

/// Snap rounding's step: the hot pixels are the pixels of `crossings` and
/// of every segment's ends, and each segment is split at the centre of
/// every hot pixel it passes through (its own ends aside); `None` when the
/// work bound is passed.
fn snap(
    segments: &[Segment],
    mut hot: Vec<Point>,
    index: &CellIndex,
    (work, max_work): (&mut u64, u64),
) -> Option<Vec<Vec<Point>>> {
    hot.extend(segments.iter().flat_map(|s| s.ends));
    hot.sort_unstable();
    hot.dedup();
    let mut splits = vec![Vec::new(); segments.len()];
    let mut seen = vec![u32::MAX; segments.len()];
    for (k, &h) in hot.iter().enumerate() {
        for cell in index.cells_near(h) {
            for &j in index.in_cell(cell) {
                let j = j as usize;
                if seen[j] == k as u32 {
                    continue;
                }
                seen[j] = k as u32;
                *work += 1;
                if *work > max_work {
                    return None;
                }
                let ends = segments[j].ends;
                if h != ends[0] && h != ends[1] && passes(ends, h) {
                    splits[j].push(h);
                }
            }
        }
    }
    Some(splits)
}

/// Whether segment `a`-`b` passes through the pixel of `h`: the square
/// `[h - 1/2, h + 1/2)` on each axis, half-open so that every point lies in
/// one pixel, the one its coordinates round to (halves up).
fn passes([a, b]: [Point; 2], h: Point) -> bool {
    // the box: ends are whole steps, so it meets the pixel's when each axis's
    // range holds the centre's coordinate
    if (0..2).any(|k| h[k] < a[k].min(b[k]) || h[k] > a[k].max(b[k])) {
        return false;
    }
    // the line: on doubled coordinates (the pixel's corners are whole), the
    // corners on no one side of it; the top and right sides, which the
    // pixel leaves out, are moved in by an infinitesimal
    let d = [i128::from(b[0] - a[0]), i128::from(b[1] - a[1])];
    let (mut below, mut above) = (false, false);
    for (ex, ey) in [(0i128, 0i128), (1, 0), (0, 1), (1, 1)] {
        let c = [
            i128::from(2 * (h[0] - a[0]) - 1) + 2 * ex,
            i128::from(2 * (h[1] - a[1]) - 1) + 2 * ey,
        ];
        let side = d[0] * c[1] - d[1] * c[0];
        let side = if side != 0 {
            side.signum()
        } else {
            (d[1] * ex - d[0] * ey).signum()
        };
        below |= side <= 0;
        above |= side >= 0;
    }
    below && above
}

/// How far along segment `a`-`b` the projection of `p` falls, as the dot
/// product of `p - a` with `b - a`, and the squared length it reaches at `b`.
fn along([a, b]: [Point; 2], p: Point) -> (i128, i128) {
    let d = [i128::from(b[0] - a[0]), i128::from(b[1] - a[1])];
    let at = i128::from(p[0] - a[0]) * d[0] + i128::from(p[1] - a[1]) * d[1];
    (at, d[0] * d[0] + d[1] * d[1])
}

fn orient(p: Point, q: Point, r: Point) -> i128 {
    i128::from(q[0] - p[0]) * i128::from(r[1] - p[1])
        - i128::from(q[1] - p[1]) * i128::from(r[0] - p[0])
}

/// Whether `p`, on the line of `s`, lies strictly between its ends.
fn strictly_inside(p: Point, [a, b]: [Point; 2]) -> bool {
    p != a && p != b && (0..2).all(|k| a[k].min(b[k]) <= p[k] && p[k] <= a[k].max(b[k]))
}

/// How two segments meet, other than at a shared end.
#[derive(Debug, PartialEq)]
enum Meeting {
    Apart,
    /// The ends of the other that lie inside each (collinear overlaps
    /// included): at most two per segment.
    Ends([Option<Point>; 2], [Option<Point>; 2]),
    /// A proper crossing, by the pixel it lies in.
    Crossing(Point),
}

/// How segments `s` and `t` meet.
fn meet(s: [Point; 2], t: [Point; 2]) -> Meeting {
    let boxes_meet = (0..2).all(|k| {
        s[0][k].min(s[1][k]) <= t[0][k].max(t[1][k]) && t[0][k].min(t[1][k]) <= s[0][k].max(s[1][k])
    });
    if !boxes_meet {
        return Meeting::Apart;
    }
    let (o1, o2) = (orient(t[0], t[1], s[0]), orient(t[0], t[1], s[1]));
    let (o3, o4) = (orient(s[0], s[1], t[0]), orient(s[0], s[1], t[1]));
    if o1.signum() * o2.signum() < 0 && o3.signum() * o4.signum() < 0 {
        // the crossing is s[0] + (s[1] - s[0]) * o1 / (o1 - o2); its pixel
        // is where it rounds to, halves up
        let den = o1 - o2;
        let round = |a: i64, b: i64| {
            let num = i128::from(a) * den + i128::from(b - a) * o1;
            let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
            (2 * num + den).div_euclid(2 * den) as i64
        };
        return Meeting::Crossing([round(s[0][0], s[1][0]), round(s[0][1], s[1][1])]);
    }
    let on = |o: [i128; 2], ends: [Point; 2], other: [Point; 2]| {
        [0, 1].map(|k| (o[k] == 0 && strictly_inside(ends[k], other)).then_some(ends[k]))
    };
    let (on_s, on_t) = (on([o3, o4], t, s), on([o1, o2], s, t));
    if on_s == [None; 2] && on_t == [None; 2] {
        Meeting::Apart
    } else {
        Meeting::Ends(on_s, on_t)
    }
}

/// Segments listed by the square cells of a uniform grid they pass through.
struct CellIndex {
    origin: Point,
    side: i64,
    columns: i64,
    rows: i64,
    /// Per cell, the start of its run in `entries`.
    start: Vec<u32>,
    entries: Vec<u32>,
}

impl CellIndex {
    fn new(segments: &[Segment], (work, max_work): (&mut u64, u64)) -> Option<CellIndex> {
        let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
        for s in segments {
            for p in s.ends {
                for k in 0..2 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
        // about as many cells as segments
        let (w, h) = ((hi[0] - lo[0] + 1) as f64, (hi[1] - lo[1] + 1) as f64);
        let side = ((w * h / segments.len().max(1) as f64).sqrt().ceil() as i64).max(1);
        let mut index = CellIndex {
            origin: lo,
            side,
            columns: (hi[0] - lo[0]) / side + 1,
            rows: (hi[1] - lo[1]) / side + 1,
            start: Vec::new(),
            entries: Vec::new(),
        };
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(segments.len() * 2);
        for (i, s) in segments.iter().enumerate() {
            for cell in index.cells_of(s) {
                *work += 1;
                if *work > max_work {
                    return None;
                }
                pairs.push((cell, i as u32));
            }
        }
        pairs.sort_unstable();
        let cells = (index.columns * index.rows) as usize;
        index.start = vec![0; cells + 1];
        for &(cell, _) in &pairs {
            index.start[cell as usize + 1] += 1;
        }
        for c in 0..cells {
            index.start[c + 1] += index.start[c];
        }
        index.entries = pairs.into_iter().map(|(_, i)| i).collect();
        Some(index)
    }

    fn in_cell(&self, cell: u32) -> &[u32] {
        &self.entries[self.start[cell as usize] as usize..self.start[cell as usize + 1] as usize]
    }

    /// The cells that hold every segment passing through the pixel of `h`:
    /// each point of the pixel lies within a step of `h` on each axis, and
    /// a segment is listed in every cell it passes through.
    fn cells_near(&self, h: Point) -> impl Iterator<Item = u32> + '_ {
        let column =
            |x: i64| ((x - self.origin[0]).div_euclid(self.side)).clamp(0, self.columns - 1);
        let row = |y: i64| ((y - self.origin[1]).div_euclid(self.side)).clamp(0, self.rows - 1);
        let (c0, c1) = (column(h[0] - 1), column(h[0] + 1));
        let (r0, r1) = (row(h[1] - 1), row(h[1] + 1));
        (r0..=r1).flat_map(move |r| (c0..=c1).map(move |c| (r * self.columns + c) as u32))
    }

    /// The cells a segment passes through, column by column (with the
    /// cells it only touches at a side or corner).
    fn cells_of(&self, s: &Segment) -> impl Iterator<Item = u32> + '_ {
        let [a, b] = s.ends;
        let (a, b) = if a[0] <= b[0] { (a, b) } else { (b, a) };
        let column = |x: i64| ((x - self.origin[0]) / self.side).clamp(0, self.columns - 1);
        let row = |y: i64| ((y - self.origin[1]) / self.side).clamp(0, self.rows - 1);
        let (first, last) = (column(a[0]), column(b[0]));
        (first..=last).flat_map(move |c| {
            // the segment's y over this column's x range, widened to whole steps
            let x0 = (self.origin[0] + c * self.side).max(a[0]);
            let x1 = (self.origin[0] + (c + 1) * self.side).min(b[0]);
            let y_at = |x: i64| -> f64 {
                if b[0] == a[0] {
                    a[1] as f64
                } else {
                    a[1] as f64 + (b[1] - a[1]) as f64 * ((x - a[0]) as f64 / (b[0] - a[0]) as f64)
                }
            };
            let (ya, yb) = if b[0] == a[0] {
                (a[1].min(b[1]) as f64, a[1].max(b[1]) as f64)
            } else {
                let (u, v) = (y_at(x0), y_at(x1));
                (u.min(v), u.max(v))
            };
            let (r0, r1) = (row(ya.floor() as i64 - 1), row(yb.ceil() as i64 + 1));
            (r0..=r1).map(move |r| (r * self.columns + c) as u32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{meet, node, node_within, Meeting, Point, Segment, MAX_WORK, WALL};

    fn crossings(segments: &[Segment]) -> usize {
        let mut n = 0;
        for i in 0..segments.len() {
            for j in i + 1..segments.len() {
                if meet(segments[i].ends, segments[j].ends) != Meeting::Apart {
                    n += 1;
                }
            }
        }
        n
    }

    /// An area's edge crossing a slanted wall, and two area edges crossing
    /// each other: both bend through the rounded crossing, and afterwards
    /// nothing crosses.
    #[test]
    fn crossings_become_shared_vertices() {
        let mut segments = vec![
            Segment {
                ends: [[0, 0], [30, 10]],
                tag: WALL,
            },
            Segment {
                ends: [[7, -5], [8, 20]],
                tag: 0,
            },
            Segment {
                ends: [[0, 5], [12, 6]],
                tag: 1,
            },
        ];
        assert!(crossings(&segments) > 0);
        assert!(node(&mut segments, 1));
        assert_eq!(crossings(&segments), 0);
        // the wall was split once (at the area's crossing, rounded)
        let walls: Vec<_> = segments.iter().filter(|s| s.tag == WALL).collect();
        assert_eq!(walls.len(), 2);
        assert_eq!(walls[0].ends[1], walls[1].ends[0]);
        let h = walls[0].ends[1];
        // the true crossing is at x = 7.2..., y = 2.4...: the nearest grid point
        assert_eq!(h, [7, 2]);
    }

    /// Squared distance from `p` to segment `a`-`b`, in steps.
    fn distance_squared(p: [f64; 2], [a, b]: [Point; 2]) -> f64 {
        let (a, b) = ([a[0] as f64, a[1] as f64], [b[0] as f64, b[1] as f64]);
        let d = [b[0] - a[0], b[1] - a[1]];
        let t = ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / (d[0] * d[0] + d[1] * d[1]);
        let t = t.clamp(0.0, 1.0);
        (p[0] - a[0] - t * d[0]).powi(2) + (p[1] - a[1] - t * d[1]).powi(2)
    }

    /// Random tangles of segments (all tested, as areas' edges are): the
    /// noder finishes every one, and then no two pieces meet but at shared
    /// ends (checked pair by pair, so a pair the cell index missed shows),
    /// and every piece lies within half a pixel's diagonal of the segment
    /// it came from (snap rounding's bound).
    #[test]
    fn random_tangles_end_with_nothing_crossing() {
        let mut rng = crate::test_data::Xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = |n: i64| rng.below(n as u64) as i64;
        let mut finished = 0;
        for _ in 0..2000 {
            let span = [8, 64, 1 << 20][next(3) as usize];
            let original: Vec<Segment> = (0..next(30) + 2)
                .map(|k| Segment {
                    ends: [[next(span), next(span)], [next(span), next(span)]],
                    tag: k as u32,
                })
                .filter(|s| s.ends[0] != s.ends[1])
                .collect();
            let mut segments = original.clone();
            if node(&mut segments, 0) {
                finished += 1;
                assert_eq!(crossings(&segments), 0);
            }
            for piece in &segments {
                let from = original.iter().find(|s| s.tag == piece.tag).unwrap();
                for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
                    let [a, b] = piece.ends;
                    let p = [
                        a[0] as f64 + t * (b[0] - a[0]) as f64,
                        a[1] as f64 + t * (b[1] - a[1]) as f64,
                    ];
                    assert!(
                        distance_squared(p, from.ends) <= 0.5 + 1e-9,
                        "{piece:?} from {from:?}"
                    );
                }
            }
        }
        assert_eq!(finished, 2000);
    }

    /// A tangle beyond the work bound is reported unfinished, not noded in
    /// part as if it were done.
    #[test]
    fn a_tangle_over_the_work_bound_is_reported() {
        let grid = |k: i64, vertical: bool| Segment {
            ends: if vertical {
                [[k * 10, -1000], [k * 10, 1000]]
            } else {
                [[-1000, k * 10], [1000, k * 10]]
            },
            tag: k as u32,
        };
        let tangle: Vec<Segment> = (-50..50)
            .flat_map(|k| [grid(k, true), grid(k, false)])
            .collect();
        let mut small = tangle.clone();
        assert!(!node_within(&mut small, 0, 1_000));
        let mut whole = tangle;
        assert!(node_within(&mut whole, 0, MAX_WORK));
        assert_eq!(crossings(&whole), 0);
    }

    /// An end lying inside another segment splits that segment there.
    #[test]
    fn an_end_on_a_segment_splits_it() {
        let mut segments = vec![
            Segment {
                ends: [[0, 0], [10, 0]],
                tag: WALL,
            },
            Segment {
                ends: [[4, 0], [4, 5]],
                tag: 0,
            },
            Segment {
                ends: [[2, 0], [6, 0]],
                tag: 1,
            },
        ];
        assert!(node(&mut segments, 1));
        let mut walls: Vec<_> = segments
            .iter()
            .filter(|s| s.tag == WALL)
            .map(|s| s.ends)
            .collect();
        walls.sort();
        assert_eq!(
            walls,
            vec![
                [[0, 0], [2, 0]],
                [[2, 0], [4, 0]],
                [[4, 0], [6, 0]],
                [[6, 0], [10, 0]]
            ]
        );
        let mut overlap: Vec<_> = segments
            .iter()
            .filter(|s| s.tag == 1)
            .map(|s| s.ends)
            .collect();
        overlap.sort();
        assert_eq!(overlap, vec![[[2, 0], [4, 0]], [[4, 0], [6, 0]]]);
    }
}
