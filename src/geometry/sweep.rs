//! A sweep over segments that finds a conflicting pair in O(n log n)
//! (Shamos and Hoey's test): segments are kept in a balanced tree ordered
//! bottom to top along a vertical line sweeping left to right, and only
//! segments that become neighbours in that order are tested.
//!
//! It is exact as long as no two segments that the caller allows to coexist
//! cross: the order of the segments crossing the sweep line then never
//! changes, so it can be decided where the later of two segments starts.
//! Touching at shared endpoints is allowed by the caller's `conflict` test
//! and keeps that order consistent.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

use glam::DVec2;

use super::orient_f64;

/// A segment with its ends in sweep order (smaller x first, then smaller y).
#[derive(Debug, Clone, Copy)]
struct Swept {
    left: DVec2,
    right: DVec2,
    index: usize,
}

fn sweep_order(a: DVec2, b: DVec2) -> Ordering {
    a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y))
}

impl Swept {
    fn new(a: DVec2, b: DVec2, index: usize) -> Swept {
        if sweep_order(a, b) == Ordering::Greater {
            Swept {
                left: b,
                right: a,
                index,
            }
        } else {
            Swept {
                left: a,
                right: b,
                index,
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Comparisons made by this thread's sweeps (the resource test reads it).
    static COMPARISONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Bottom to top where both cross the sweep line: the segment that starts
/// later is placed by its left end (or, if that lies on the other's line, its
/// right end) against the other one. Collinear segments fall back to their
/// index, so that the order is total.
impl Ord for Swept {
    fn cmp(&self, other: &Swept) -> Ordering {
        #[cfg(test)]
        COMPARISONS.with(|c| c.set(c.get() + 1));
        if self.index == other.index {
            return Ordering::Equal;
        }
        let self_later = sweep_order(self.left, other.left) != Ordering::Less;
        let (probe, base) = if self_later {
            (self, other)
        } else {
            (other, self)
        };
        let mut side = orient_f64(base.left, base.right, probe.left);
        if side == 0.0 {
            side = orient_f64(base.left, base.right, probe.right);
        }
        let probe_vs_base = if side > 0.0 {
            Ordering::Greater
        } else if side < 0.0 {
            Ordering::Less
        } else {
            probe.index.cmp(&base.index)
        };
        if self_later {
            probe_vs_base
        } else {
            probe_vs_base.reverse()
        }
    }
}

impl PartialOrd for Swept {
    fn partial_cmp(&self, other: &Swept) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Swept {
    fn eq(&self, other: &Swept) -> bool {
        self.index == other.index
    }
}

impl Eq for Swept {}

/// A pair of `segments` (by index, smaller first) for which `conflict`
/// holds, if there is one. Every segment has two distinct ends.
///
/// `conflict(i, j)` says whether segments `i` and `j` may not coexist, in
/// exact arithmetic (typically: they cross, overlap, or touch other than at
/// an allowed shared end). Pairs it allows must not cross, or the answer may
/// miss a conflict further right. O(n log n) comparisons plus one `conflict`
/// test per new neighbour pair.
pub(crate) fn first_conflict(
    segments: &[(DVec2, DVec2)],
    mut conflict: impl FnMut(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    debug_assert!(
        segments.iter().all(|(a, b)| a != b),
        "a zero-length segment"
    );
    let swept: Vec<Swept> = segments
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| Swept::new(a, b, i))
        .collect();
    // events: (point, 0 = start / 1 = end, segment); at one point, ends come
    // first: a segment ending there and one starting there share only that
    // point (which `conflict` allows), and the order of segments that meet
    // at one point is not defined there
    let mut events: Vec<(DVec2, u8, usize)> = Vec::with_capacity(2 * swept.len());
    for s in &swept {
        events.push((s.left, 0, s.index));
        events.push((s.right, 1, s.index));
    }
    events.sort_unstable_by(|a, b| {
        sweep_order(a.0, b.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    let mut status: BTreeSet<Swept> = BTreeSet::new();
    let mut test = |a: &Swept, b: &Swept| {
        let (i, j) = (a.index.min(b.index), a.index.max(b.index));
        conflict(i, j).then_some((i, j))
    };
    for (_, kind, index) in events {
        let s = swept[index];
        let below = status.range(..s).next_back().copied();
        let above = status
            .range((Bound::Excluded(s), Bound::Unbounded))
            .next()
            .copied();
        if kind == 0 {
            for n in [below, above].into_iter().flatten() {
                if let Some(pair) = test(&s, &n) {
                    return Some(pair);
                }
            }
            status.insert(s);
        } else {
            status.remove(&s);
            if let (Some(b), Some(a)) = (below, above) {
                if let Some(pair) = test(&b, &a) {
                    return Some(pair);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use glam::DVec2;
    use proptest::prelude::*;

    use super::first_conflict;
    use crate::geometry::segments_conflict;

    fn conflict(s: &[(DVec2, DVec2)], i: usize, j: usize) -> bool {
        let ((a0, a1), (b0, b1)) = (s[i], s[j]);
        segments_conflict(a0, a1, b0, b1, false)
    }

    fn brute_force(s: &[(DVec2, DVec2)]) -> bool {
        (0..s.len()).any(|i| (i + 1..s.len()).any(|j| conflict(s, i, j)))
    }

    /// Segments on a small integer grid: vertical, collinear, overlapping and
    /// end-sharing segments are common.
    fn segments() -> impl Strategy<Value = Vec<(DVec2, DVec2)>> {
        prop::collection::vec((0i8..7, 0i8..7, 0i8..7, 0i8..7), 1..16).prop_map(|v| {
            v.into_iter()
                .map(|(a, b, c, d)| {
                    let p = DVec2::new(f64::from(a), f64::from(b));
                    let q = DVec2::new(f64::from(c), f64::from(d));
                    (p, if p == q { q + DVec2::X } else { q })
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// The sweep finds a conflict exactly when some pair conflicts, and
        /// the pair it names does.
        #[test]
        fn the_sweep_agrees_with_every_pair(s in segments()) {
            let found = first_conflict(&s, |i, j| conflict(&s, i, j));
            prop_assert_eq!(found.is_some(), brute_force(&s), "{:?}", s);
            if let Some((i, j)) = found {
                prop_assert!(i < j && conflict(&s, i, j));
            }
        }
    }

    /// A comb of long teeth standing on a spine.
    fn comb(teeth: u32) -> Vec<(DVec2, DVec2)> {
        let mut s = vec![(DVec2::ZERO, DVec2::new(f64::from(teeth) * 2.0, 0.0))];
        for k in 0..teeth {
            let x = f64::from(k) * 2.0;
            s.push((DVec2::new(x, 1.0), DVec2::new(x, 1000.0)));
            s.push((DVec2::new(x, 1000.0), DVec2::new(x + 1.0, 1000.0)));
            s.push((DVec2::new(x + 1.0, 1000.0), DVec2::new(x + 1.0, 1.0)));
        }
        s
    }

    /// A spiral: many long segments cross the sweep line at once.
    fn spiral(turns: u32) -> Vec<(DVec2, DVec2)> {
        let mut points = Vec::new();
        for k in 0..turns * 4 {
            let r = f64::from(k) + 1.0;
            let (sx, sy) = [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)][(k % 4) as usize];
            points.push(DVec2::new(sx * r, sy * r));
        }
        points.windows(2).map(|w| (w[0], w[1])).collect()
    }

    /// Comparisons made by one sweep over `s` that finds no conflict.
    fn comparisons(s: &[(DVec2, DVec2)]) -> u64 {
        let before = super::COMPARISONS.with(std::cell::Cell::get);
        assert_eq!(first_conflict(s, |i, j| conflict(s, i, j)), None);
        super::COMPARISONS.with(std::cell::Cell::get) - before
    }

    /// Resource test (hostile-input campaign: a 32,000-tooth comb took 113 s
    /// to check): the work of a sweep grows as n log n on combs and spirals,
    /// where many segments cross the sweep line at once.
    #[test]
    fn the_sweep_grows_as_n_log_n_on_combs_and_spirals() {
        for (name, small, large) in [
            ("comb", comb(1000), comb(8000)),
            ("spiral", spiral(250), spiral(2000)),
        ] {
            let n = large.len() as f64 / small.len() as f64;
            let work = comparisons(&large) as f64 / comparisons(&small) as f64;
            // n log n from 1,000 to 8,000 segments (or 3,000 to 24,000) is
            // about 8 x 1.3; quadratic would be 64
            assert!(
                work < n * 1.5,
                "{name}: {n:.1}x the segments, {work:.1}x the work"
            );
        }
    }

    #[test]
    fn a_comb_has_no_conflict_and_a_crossing_tooth_has_one() {
        let mut s = comb(200);
        assert_eq!(first_conflict(&s, |i, j| conflict(&s, i, j)), None);
        s.push((DVec2::new(-1.0, 500.0), DVec2::new(5.0, 500.0)));
        assert!(first_conflict(&s, |i, j| conflict(&s, i, j)).is_some());
    }
}
