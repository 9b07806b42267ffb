//! Counting the points where segments cross, up to a limit, in time that the
//! limit bounds: the guard that keeps the polygon booleans from a level whose
//! outlines cross each other millions of times (their output, and so their
//! cost, grows with the number of crossings).
//!
//! Cells of a quadtree are split until each holds few segment ends. In a
//! cell, a segment that passes right through it is a chord of the (convex)
//! cell, and two chords cross inside the cell exactly when their ends
//! alternate around its boundary: those pairs are counted by sorting the
//! ends along the boundary, in O(k log k) for k chords, so thousands of long
//! parallel walls cost no pairwise tests. Only pairs involving a segment
//! that ends in the cell are tested one by one. A segment through c cells
//! is handled in each of them: long segments over a fine quadtree make
//! the work grow as n^1.5 at worst, not n^2.

use glam::DVec2;

use super::orient_f64;

/// Why [`count_crossings`] stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooMany {
    /// More than the limit of proper crossings.
    Crossings(u64),
    /// So many segments end in one spot that the quadtree cannot separate
    /// them and testing them pairwise would cost more than [`MAX_WORK`].
    Crowded,
}

/// Pieces handled and pairs tested at most: a second or so of work.
pub(crate) const MAX_WORK: u64 = 1 << 27;

/// A cell with at most this many segment ends is not split further.
const LEAF_ENDS: usize = 24;

/// Depth at which cells stop splitting (ends in one spot).
const MAX_DEPTH: u32 = 24;

/// Counts the pairs of segments that cross at a point inside both (touching
/// ends and overlaps do not count), or says which bound was passed.
pub(crate) fn count_crossings(segments: &[(DVec2, DVec2)], limit: u64) -> Result<u64, TooMany> {
    count_with_work(segments, limit).0
}

/// [`count_crossings`] with the work it did.
fn count_with_work(segments: &[(DVec2, DVec2)], limit: u64) -> (Result<u64, TooMany>, u64) {
    if segments.len() < 2 {
        return (Ok(0), 0);
    }
    let (mut lo, mut hi) = (DVec2::splat(f64::INFINITY), DVec2::splat(f64::NEG_INFINITY));
    for &(a, b) in segments {
        lo = lo.min(a).min(b);
        hi = hi.max(a).max(b);
    }
    let mut counter = Counter {
        segments,
        root: [lo, hi],
        limit,
        crossings: 0,
        work: 0,
    };
    let all: Vec<u32> = (0..segments.len() as u32).collect();
    let outcome = counter.cell([lo, hi], &all, 0).map(|()| counter.crossings);
    (outcome, counter.work)
}

struct Counter<'a> {
    segments: &'a [(DVec2, DVec2)],
    root: [DVec2; 2],
    limit: u64,
    crossings: u64,
    work: u64,
}

impl Counter<'_> {
    fn spend(&mut self, work: u64) -> Result<(), TooMany> {
        self.work += work;
        if self.work > MAX_WORK {
            return Err(TooMany::Crowded);
        }
        Ok(())
    }

    fn found(&mut self, count: u64) -> Result<(), TooMany> {
        self.crossings += count;
        if self.crossings > self.limit {
            return Err(TooMany::Crossings(self.crossings));
        }
        Ok(())
    }

    /// Counts the crossings inside `rect` (half-open: a crossing on a
    /// shared side belongs to the cell above or right of it) of the
    /// segments `ids`, which all meet the rectangle.
    fn cell(&mut self, rect: [DVec2; 2], ids: &[u32], depth: u32) -> Result<(), TooMany> {
        self.spend(ids.len() as u64)?;
        let inside = |p: DVec2| p.cmpge(rect[0]).all() && p.cmple(rect[1]).all();
        let (mut chords, mut ending) = (Vec::new(), Vec::new());
        let mut ends = 0;
        for &i in ids {
            let (a, b) = self.segments[i as usize];
            let n = usize::from(inside(a)) + usize::from(inside(b));
            ends += n;
            if n == 0 {
                chords.push(i);
            } else {
                ending.push(i);
            }
        }
        let size = rect[1] - rect[0];
        if ends > LEAF_ENDS && depth < MAX_DEPTH && size.min_element() > 0.0 {
            let mid = (rect[0] + rect[1]) * 0.5;
            for quadrant in 0..4 {
                let lo = DVec2::new(
                    if quadrant & 1 == 0 { rect[0].x } else { mid.x },
                    if quadrant & 2 == 0 { rect[0].y } else { mid.y },
                );
                let hi = DVec2::new(
                    if quadrant & 1 == 0 { mid.x } else { rect[1].x },
                    if quadrant & 2 == 0 { mid.y } else { rect[1].y },
                );
                let sub: Vec<u32> = ids
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let (a, b) = self.segments[i as usize];
                        meets_rect(a, b, [lo, hi])
                    })
                    .collect();
                if sub.len() >= 2 {
                    self.cell([lo, hi], &sub, depth + 1)?;
                }
            }
            return Ok(());
        }
        // chord against chord: by the order of their ends around the cell
        let chord_crossings = self.chords(rect, &chords)?;
        self.found(chord_crossings)?;
        // anything against a segment that ends here: one by one
        self.spend(ending.len() as u64 * ids.len() as u64)?;
        // cells are half-open boxes, closed on the root's far sides, so a
        // crossing is counted in one cell
        let root = self.root;
        let owns = |p: DVec2| {
            (0..2).all(|k| {
                p[k] >= rect[0][k]
                    && (p[k] < rect[1][k] || (p[k] == rect[1][k] && p[k] == root[1][k]))
            })
        };
        let mut count = 0;
        for (k, &i) in ending.iter().enumerate() {
            let (a0, a1) = self.segments[i as usize];
            let others = ending[k + 1..].iter().chain(&chords);
            for &j in others {
                let (b0, b1) = self.segments[j as usize];
                if let Some(p) = proper_crossing(a0, a1, b0, b1) {
                    count += u64::from(owns(p));
                }
            }
        }
        self.found(count)
    }

    /// Pairs of chords of `rect` whose ends alternate around its boundary.
    fn chords(&mut self, rect: [DVec2; 2], chords: &[u32]) -> Result<u64, TooMany> {
        if chords.len() < 2 {
            return Ok(0);
        }
        self.spend(chords.len() as u64 * 8)?;
        // each chord's two ends as positions along the boundary
        let mut ends: Vec<(f64, u32)> = Vec::with_capacity(chords.len() * 2);
        for (k, &i) in chords.iter().enumerate() {
            let (a, b) = self.segments[i as usize];
            let Some((s, t)) = clip_params(a, b, rect) else {
                continue;
            };
            let d = b - a;
            ends.push((perimeter(a + d * s, rect), k as u32));
            ends.push((perimeter(a + d * t, rect), k as u32));
        }
        ends.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        // walking around: a chord opens at its first end and closes at its
        // second; the chords opened after it and still open alternate with it
        let mut opened_at = vec![u32::MAX; chords.len()];
        let mut tree = Fenwick::new(ends.len());
        let mut count = 0u64;
        for (position, &(_, k)) in ends.iter().enumerate() {
            let k = k as usize;
            if opened_at[k] == u32::MAX {
                opened_at[k] = position as u32;
                tree.add(position, 1);
            } else {
                let from = opened_at[k] as usize;
                count += (tree.prefix(position) - tree.prefix(from + 1)) as u64;
                tree.add(from, -1);
            }
        }
        Ok(count)
    }
}

/// A Fenwick tree of counts.
struct Fenwick(Vec<i64>);

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick(vec![0; n + 1])
    }

    fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i < self.0.len() {
            self.0[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of the first `i` entries.
    fn prefix(&self, i: usize) -> i64 {
        let (mut i, mut s) = (i, 0);
        while i > 0 {
            s += self.0[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// The parameters where segment `a`-`b` enters and leaves `rect`
/// (Liang and Barsky), if it meets it.
fn clip_params(a: DVec2, b: DVec2, rect: [DVec2; 2]) -> Option<(f64, f64)> {
    let d = b - a;
    let (mut s, mut t) = (0.0f64, 1.0f64);
    for axis in 0..2 {
        if d[axis] == 0.0 {
            if a[axis] < rect[0][axis] || a[axis] > rect[1][axis] {
                return None;
            }
            continue;
        }
        let (u, v) = (
            (rect[0][axis] - a[axis]) / d[axis],
            (rect[1][axis] - a[axis]) / d[axis],
        );
        s = s.max(u.min(v));
        t = t.min(u.max(v));
    }
    (s <= t).then_some((s, t))
}

fn meets_rect(a: DVec2, b: DVec2, rect: [DVec2; 2]) -> bool {
    clip_params(a, b, rect).is_some()
}

/// Position of a boundary point going counter-clockwise around `rect` from
/// its lower left corner (the point is put on the nearest side).
fn perimeter(p: DVec2, [lo, hi]: [DVec2; 2]) -> f64 {
    let size = hi - lo;
    let distances = [p.y - lo.y, hi.x - p.x, hi.y - p.y, p.x - lo.x];
    let side = (0..4)
        .min_by(|&i, &j| distances[i].abs().total_cmp(&distances[j].abs()))
        .unwrap_or(0);
    match side {
        0 => (p.x - lo.x).clamp(0.0, size.x),
        1 => size.x + (p.y - lo.y).clamp(0.0, size.y),
        2 => size.x + size.y + (hi.x - p.x).clamp(0.0, size.x),
        _ => 2.0 * size.x + size.y + (hi.y - p.y).clamp(0.0, size.y),
    }
}

/// Where two segments cross at a point inside both, if they do.
pub(crate) fn proper_crossing(a0: DVec2, a1: DVec2, b0: DVec2, b1: DVec2) -> Option<DVec2> {
    let d1 = orient_f64(b0, b1, a0);
    let d2 = orient_f64(b0, b1, a1);
    let d3 = orient_f64(a0, a1, b0);
    let d4 = orient_f64(a0, a1, b1);
    let opposite = |p: f64, q: f64| (p > 0.0 && q < 0.0) || (p < 0.0 && q > 0.0);
    if !(opposite(d1, d2) && opposite(d3, d4)) {
        return None;
    }
    Some(a0 + (a1 - a0) * (d1 / (d1 - d2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A brute-force count of proper crossings.
    fn brute(segments: &[(DVec2, DVec2)]) -> u64 {
        let mut count = 0;
        for i in 0..segments.len() {
            for j in i + 1..segments.len() {
                let ((a0, a1), (b0, b1)) = (segments[i], segments[j]);
                count += u64::from(proper_crossing(a0, a1, b0, b1).is_some());
            }
        }
        count
    }

    #[test]
    fn a_grid_of_lines_crosses_at_every_meeting() {
        // 30 horizontal and 40 vertical lines: 1,200 crossings
        let mut s = Vec::new();
        for i in 0..30 {
            let y = f64::from(i) + 0.5;
            s.push((DVec2::new(-1.0, y), DVec2::new(41.0, y)));
        }
        for i in 0..40 {
            let x = f64::from(i) + 0.25;
            s.push((DVec2::new(x, -1.0), DVec2::new(x, 31.0)));
        }
        assert_eq!(count_crossings(&s, u64::MAX), Ok(1200));
        // chords are counted a cell at a time, so the count can pass the limit by a cell's worth
        assert!(matches!(count_crossings(&s, 1000), Err(TooMany::Crossings(n)) if n > 1000));
    }

    /// `n` long walls side by side across a square, as thin rectangles
    /// (four edges each), none crossing another.
    fn parallel_walls(n: usize) -> Vec<(DVec2, DVec2)> {
        let mut s = Vec::new();
        for i in 0..n {
            let x = i as f64 * 3.0;
            let (a, b) = (DVec2::new(x, 0.0), DVec2::new(x + 500.0, 1000.0));
            let w = DVec2::new(1.0, 0.0);
            let corners = [a, b, b + w, a + w];
            s.extend((0..4).map(|k| (corners[k], corners[(k + 1) % 4])));
        }
        s
    }

    /// Thousands of long walls that cross nothing: counted as none, with
    /// no pairwise tests, and the work grows as n log n (4,000 -> 16,000
    /// edges: 4.4 times the work).
    #[test]
    fn long_parallel_walls_cost_no_pairwise_tests() {
        let (small, big) = (parallel_walls(1000), parallel_walls(4000));
        let (count_small, work_small) = count_with_work(&small, u64::MAX);
        let (count_big, work_big) = count_with_work(&big, u64::MAX);
        assert_eq!((count_small, count_big), (Ok(0), Ok(0)));
        let ratio = work_big as f64 / work_small as f64;
        let n_log_n = 4.0 * (16_000f64.log2() / 4_000f64.log2());
        assert!(
            ratio <= n_log_n * 1.1,
            "4x the walls, {ratio:.2}x the work ({work_small} -> {work_big})"
        );
    }

    proptest::proptest! {
        /// Random segments, long and short: the grid count is the brute one
        /// (a crossing point computed just off its cell can be counted in
        /// none or two cells, so allow a little).
        #[test]
        fn the_count_matches_brute_force(
            raw in proptest::collection::vec((-50.0f64..50.0, -50.0f64..50.0, -50.0f64..50.0, -50.0f64..50.0), 2..120),
        ) {
            let s: Vec<_> = raw.iter().map(|&(a, b, c, d)| (DVec2::new(a, b), DVec2::new(c, d))).collect();
            let want = brute(&s);
            let got = count_crossings(&s, u64::MAX).unwrap();
            proptest::prop_assert!(got.abs_diff(want) <= want / 100 + 1, "{got} vs {want}");
        }
    }
}
