//! Noding the outline's constraints before the triangulation: wherever a
//! costed area's edge meets a wall or another area's edge, the point becomes
//! a vertex of both, so that no two constraints cross and spade keeps them
//! all.
//!
//! Each costed area is clipped to walkable space by its own boolean, so the
//! point where its outline crosses a slanted wall is rounded to the snapping
//! grid independently of the wall, and lands a fraction of a step off it;
//! two overlapping areas cross each other at points that are not on the grid
//! at all. Left as they are, such edges cross, spade has to drop one of
//! them, and the triangles around it take the wrong area kind.
//!
//! The noder works on the grid's integers. A crossing is rounded to the
//! nearest grid point and both segments are bent through it (the rounding of
//! crossings from snap rounding, without its hot pixels: a segment passing
//! near another's end is not bent to it), the output stays on the grid (so
//! the file stores it exactly), and the pieces are tested again, since a
//! bent piece can cross a neighbour that the straight segment missed. Points where one segment
//! ends inside another, and collinear overlaps, split the other at that end.
//! A crossing that rounds to within a step of an end of either segment is
//! moved onto that end: two vertices a step apart made pieces that crossed
//! again round after round. So one bend moves a segment by at most 1.5
//! steps along each axis (2.2 steps), and a piece bent again in a later
//! round can move further (see `SNAP_MARGIN` in `outline.rs`).

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

/// Rounds of splitting at most. Snap rounding settles in one or two rounds
/// on the levels tried; a round finds only crossings that the last made.
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
        let splits = match find_splits(segments, &dirty, (&mut work, max_work)) {
            Some(s) => s,
            None => return false,
        };
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

/// For each segment, the points to split it at, from testing each dirty
/// segment against its neighbours; `None` when the work bound is passed.
fn find_splits(
    segments: &[Segment],
    dirty: &[bool],
    (work, max_work): (&mut u64, u64),
) -> Option<Vec<Vec<Point>>> {
    let mut splits = vec![Vec::new(); segments.len()];
    if !dirty.contains(&true) {
        return Some(splits);
    }
    let index = CellIndex::new(segments, (work, max_work))?;
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
                meet(s.ends, segments[j].ends, |k, p| {
                    splits[if k == 0 { i } else { j }].push(p);
                });
            }
        }
    }
    Some(splits)
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

/// Where segments `s` (0) and `t` (1) meet other than at a shared end:
/// calls `split(k, p)` for each point `p` segment `k` must be split at.
fn meet(s: [Point; 2], t: [Point; 2], mut split: impl FnMut(usize, Point)) {
    let boxes_meet = (0..2).all(|k| {
        s[0][k].min(s[1][k]) <= t[0][k].max(t[1][k]) && t[0][k].min(t[1][k]) <= s[0][k].max(s[1][k])
    });
    if !boxes_meet {
        return;
    }
    let (o1, o2) = (orient(t[0], t[1], s[0]), orient(t[0], t[1], s[1]));
    let (o3, o4) = (orient(s[0], s[1], t[0]), orient(s[0], s[1], t[1]));
    // an end of one on the other (collinear overlaps included)
    for (k, &o) in [o3, o4].iter().enumerate() {
        if o == 0 && strictly_inside(t[k], s) {
            split(0, t[k]);
        }
    }
    for (k, &o) in [o1, o2].iter().enumerate() {
        if o == 0 && strictly_inside(s[k], t) {
            split(1, s[k]);
        }
    }
    // a proper crossing: both bend through the nearest grid point
    if o1.signum() * o2.signum() < 0 && o3.signum() * o4.signum() < 0 {
        let den = o1 - o2;
        let round = |a: i64, b: i64| {
            let num = i128::from(a) * den + i128::from(b - a) * o1;
            let (num, den) = if den < 0 { (-num, -den) } else { (num, den) };
            (2 * num + den).div_euclid(2 * den) as i64
        };
        let mut h = [round(s[0][0], s[1][0]), round(s[0][1], s[1][1])];
        // rounded past an end of either (the crossing was within a step of
        // it): that end is the shared vertex, so no piece turns back on the
        // segment it came from
        for [a, b] in [s, t] {
            let (along, length) = along([a, b], h);
            if along <= 0 {
                h = a;
            } else if along >= length {
                h = b;
            }
        }
        // rounded next to an end (within a step either way): that end is
        // the shared vertex; two pieces a step apart would cross again
        let near = |e: Point| (h[0] - e[0]).abs().max((h[1] - e[1]).abs()) <= 1;
        let gap = |e: Point| (h[0] - e[0]).pow(2) + (h[1] - e[1]).pow(2);
        if let Some(e) = [s[0], s[1], t[0], t[1]]
            .into_iter()
            .filter(|&e| near(e))
            .min_by_key(|&e| gap(e))
        {
            h = e;
        }
        if h != s[0] && h != s[1] {
            split(0, h);
        }
        if h != t[0] && h != t[1] {
            split(1, h);
        }
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
    use super::{meet, node, node_within, Segment, MAX_WORK, WALL};

    fn crossings(segments: &[Segment]) -> usize {
        let mut n = 0;
        for i in 0..segments.len() {
            for j in i + 1..segments.len() {
                meet(segments[i].ends, segments[j].ends, |_, _| n += 1);
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

    /// Random tangles of segments (all tested, as areas' edges are): the
    /// noder finishes every one, and then no two pieces meet but at shared
    /// ends (checked pair by pair, so a pair the cell index missed shows).
    #[test]
    fn random_tangles_end_with_nothing_crossing() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as i64
        };
        let mut finished = 0;
        for _ in 0..200 {
            let span = [8, 64, 1 << 20][next(3) as usize];
            let mut segments: Vec<Segment> = (0..next(30) + 2)
                .map(|k| Segment {
                    ends: [[next(span), next(span)], [next(span), next(span)]],
                    tag: k as u32,
                })
                .filter(|s| s.ends[0] != s.ends[1])
                .collect();
            if node(&mut segments, 0) {
                finished += 1;
                assert_eq!(crossings(&segments), 0);
            }
        }
        assert_eq!(finished, 200);
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
