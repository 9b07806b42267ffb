//! String pulling across a corridor of portals (the "simple stupid funnel").
//!
//! ```text
//!        l1      l2                 the funnel is the wedge apex->left,
//!   apex  \ ____ /   goal           apex->right; each portal narrows it;
//!     *----\----/-----*             when one side crosses the other, that
//!          r1   r2                  corner becomes the new apex (a waypoint)
//! ```

use glam::Vec2;

use super::{narrow_edge_on, orient};

/// Writes to `out` the taut path from `start` to `goal` through `portals`
/// (`[left, right]` as seen travelling along the corridor). `out` is cleared first.
pub fn pull(start: Vec2, goal: Vec2, portals: &[[Vec2; 2]], out: &mut Vec<Vec2>) {
    out.clear();
    out.push(start);
    pull_corners(start, goal, portals, |p, _| push_point(out, p));
    push_point(out, goal);
}

/// Calls `corner(point, portal)` for each corner the taut path from `start`
/// to `goal` wraps, in order, with the index of the portal the corner is an
/// end of. Start and goal are not reported.
pub fn pull_corners(
    start: Vec2,
    goal: Vec2,
    portals: &[[Vec2; 2]],
    mut corner: impl FnMut(Vec2, usize),
) {
    let n = portals.len() + 1;
    let portal = |i: usize| {
        if i < portals.len() {
            portals[i]
        } else {
            [goal, goal]
        }
    };
    let (mut apex, mut left, mut right) = (start, start, start);
    let (mut left_i, mut right_i) = (0usize, 0usize);
    let mut i = 0usize;
    while i < n {
        let [l, r] = narrow_edge_on(apex, portal(i));
        // narrow the right side
        if orient(apex, right, r) >= 0.0 {
            if apex == right || orient(apex, left, r) < 0.0 {
                right = r;
                right_i = i;
            } else {
                // the right side crossed the left one: its corner is a waypoint
                apex = left;
                if apex != goal {
                    corner(apex, left_i);
                }
                right = apex;
                i = left_i + 1;
                right_i = left_i;
                continue;
            }
        }
        // narrow the left side
        if orient(apex, left, l) <= 0.0 {
            if apex == left || orient(apex, right, l) > 0.0 {
                left = l;
                left_i = i;
            } else {
                apex = right;
                if apex != goal {
                    corner(apex, right_i);
                }
                left = apex;
                i = right_i + 1;
                left_i = right_i;
                continue;
            }
        }
        i += 1;
    }
}

fn push_point(out: &mut Vec<Vec2>, p: Vec2) {
    if out.last() != Some(&p) {
        out.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec2;

    #[test]
    fn straight_corridor_is_one_segment() {
        let portals = [[vec2(1., 1.), vec2(1., -1.)], [vec2(2., 1.), vec2(2., -1.)]];
        let mut out = Vec::new();
        pull(vec2(0., 0.), vec2(3., 0.), &portals, &mut out);
        assert_eq!(out, vec![vec2(0., 0.), vec2(3., 0.)]);
    }

    #[test]
    fn wraps_around_a_corner() {
        // an L-shaped corridor turning left around the corner (1, 1):
        //   goal (0.5, 3)
        //      |  |
        //      |  +---- (1,1) corner
        //  start (0.5,0.5) -> portal x=1..? going up
        let portals = [
            [vec2(0., 1.), vec2(1., 1.)], // crossing upwards: left is x=0, right is x=1
            [vec2(0., 2.), vec2(1., 2.)],
        ];
        let mut out = Vec::new();
        pull(vec2(3., 0.5), vec2(0.5, 3.), &portals, &mut out);
        assert_eq!(out, vec![vec2(3., 0.5), vec2(1., 1.), vec2(0.5, 3.)]);
    }
}
