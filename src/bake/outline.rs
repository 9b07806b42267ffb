//! Polygon booleans (i_overlay): walkable contours resolved by the winding
//! rule, obstacles and impassable areas subtracted, the result eroded by the
//! agent radius, and each costed area clipped to what is left.
//!
//! Every result is snapped to one grid: multiples of a power of two, anchored
//! at the origin, fine enough that each multiple in the level's range is an
//! f32 value ([`Grid`]). The later stages then work on points that the baked
//! file stores exactly, so rounding to f32 can neither merge two vertices nor
//! flip a triangle: what spade's exact predicates decide stays true.

use glam::DVec2;
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay::ShapeType;
use i_overlay::core::overlay_rule::OverlayRule;
use i_overlay::float::overlay::FloatOverlay;
use i_overlay::i_float::adapter::FloatPointAdapter;
use i_overlay::i_float::float::rect::FloatRect;
use ordered_float::OrderedFloat;

use crate::error::BakeError;
use crate::geometry::{morton_key, TooMany};
use crate::level::Level;

pub(crate) type Contours = Vec<Vec<[f64; 2]>>;

/// What the booleans return: shapes, each an outer contour and its holes.
pub(crate) type Shapes = Vec<Contours>;

/// Resolved walkable space and the costed areas inside it.
pub(crate) struct Outline {
    /// Closed contours bounding walkable space (outer CCW, holes CW); they do
    /// not cross and touch only at shared vertices.
    pub walkable: Vec<Vec<DVec2>>,
    /// Per costed area of the level (by index into `Level::areas`), its own
    /// outline as closed contours, not clipped to walkable space: the walls
    /// alone bound that. A clipped copy would carry every wall it meets a
    /// second time, resolved apart from the walls, and where the noding then
    /// bends the two differently (an obstacle thinner than a step) its
    /// slivers take walkable ground out of the area.
    pub areas: Vec<(usize, Vec<Vec<DVec2>>)>,
    /// Steps per world unit of the level's snapping grid, which every point
    /// lies on when there are areas (the triangulation nodes their edges on
    /// it) and which the baked file records.
    pub scale: f64,
}

fn contours_of(polys: &[Vec<glam::Vec2>]) -> Contours {
    polys
        .iter()
        .map(|p| p.iter().map(|v| [f64::from(v.x), f64::from(v.y)]).collect())
        .collect()
}

pub(crate) fn flatten(shapes: Shapes) -> Vec<Vec<DVec2>> {
    shapes
        .into_iter()
        .flatten()
        .filter(|c| c.len() >= 3)
        .map(|c| c.into_iter().map(|[x, y]| DVec2::new(x, y)).collect())
        .collect()
}

/// The snapping grid of a level: `2^-e` world units, anchored at the origin.
///
/// `e` is chosen so that the largest coordinate, in grid steps, stays below
/// 2^23: every grid point is then an f32 value (24-bit mantissa), and well
/// inside the 32-bit integers i_overlay computes with. The step is at most
/// twice f32's own spacing at the level's largest coordinate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Grid {
    /// Largest absolute coordinate the grid must hold (at least 1).
    pub extent: f64,
    /// Steps per world unit, `2^e`.
    pub scale: f64,
}

impl Grid {
    /// Walkable space `subject` (where its winding is positive) less the
    /// counter-clockwise obstacles `clip`, on this grid. Where many edges'
    /// boxes overlap ([`crowded`]), which the booleans' splitting pays for
    /// pair by pair, the outlines are resolved by sweeps instead
    /// ([`super::uncrossed`]), unless those give up.
    pub(crate) fn subtract(self, subject: &[Vec<[f64; 2]>], clip: &[Vec<[f64; 2]>]) -> Shapes {
        if crowded(subject.iter().chain(clip)) {
            if let Some(shapes) = super::uncrossed::subtract(self, subject, clip) {
                return shapes;
            }
        }
        if clip.is_empty() {
            self.overlay(subject, &[], OverlayRule::Subject, FillRule::Positive)
        } else {
            self.overlay(subject, clip, OverlayRule::Difference, FillRule::Positive)
        }
    }

    /// The outline of walkable `shapes` with each costed area's outline on
    /// this grid (areas given with the number the outline should carry them
    /// under; see [`Outline::areas`] for why they are not clipped).
    pub(crate) fn outline(
        self,
        shapes: Shapes,
        areas: impl IntoIterator<Item = (usize, Contours)>,
    ) -> Outline {
        let mut parts = Vec::new();
        for (i, poly) in areas {
            let part = self.overlay(&poly, &[], OverlayRule::Subject, FillRule::NonZero);
            if !part.is_empty() {
                parts.push((i, flatten(part)));
            }
        }
        Outline {
            walkable: flatten(shapes),
            areas: parts,
            scale: self.scale,
        }
    }

    /// `shapes` with their walls pushed out by `radius` (world units, >= 0):
    /// what is left where a pen ([`pen`]) holding the disc of the radius,
    /// swept along every wall, does not reach. A wall along an axis or a
    /// diagonal (every wall of a grid map) is swept by the octagon and moves
    /// out by exactly the radius; any other by the 16-sided pen, no more
    /// than 1.9% beyond it. Corners are cut by the pens' sides (1 or 3
    /// chords on a right-angled corner's arc), each outside the circle.
    /// Each wall's sweep depends on that wall alone, so a tile can be
    /// eroded from the walls near it ([`crate::NavMesh::for_radius`] on a
    /// tiled mesh, which subtracts them in one difference where this unites
    /// them in patches first: the two round differently, each within the
    /// margin). Walls go a further [`SNAP_MARGIN`] steps so that
    /// rounding to this grid cannot bring one nearer than the radius.
    ///
    /// On a crowded level ([`crowded`]: near a hub the sweeps of walls far
    /// apart along the Morton curve overlap too) the patches are united
    /// [`SWEPT_FAN`] at a time up a tree, each level rounding once more
    /// ([`CROWDED_LEVEL_MARGIN`]), and the difference, which then meets no
    /// crossing, is the sweeps' ([`super::uncrossed`]).
    pub(crate) fn erode(self, shapes: Shapes, radius: f32) -> Shapes {
        let tree = crowded(shapes.iter().flatten());
        self.erode_with(shapes, radius, tree)
    }

    /// [`Grid::erode`], its patches united up a tree or not.
    fn erode_with(self, shapes: Shapes, radius: f32, tree: bool) -> Shapes {
        if radius <= 0.0 || shapes.is_empty() {
            return shapes;
        }
        let levels = tree.then(|| {
            let walls: usize = shapes.iter().flatten().map(Vec::len).sum();
            let (mut patches, mut levels) = (walls.div_ceil(SWEPT_GROUP), 0);
            while patches > 1 {
                patches = patches.div_ceil(SWEPT_FAN);
                levels += 1;
            }
            levels
        });
        let margin = SNAP_MARGIN + CROWDED_LEVEL_MARGIN * f64::from(levels.unwrap_or(0));
        let pens = &self.pens_with(radius, margin);
        // a pen wider than walkable space's whole box leaves nothing (and
        // sweeps stay within a few times the box, in i_overlay's integers)
        let (lo, hi) = shapes.iter().flatten().flatten().fold(
            ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]),
            |(lo, hi), p| {
                (
                    [lo[0].min(p[0]), lo[1].min(p[1])],
                    [hi[0].max(p[0]), hi[1].max(p[1])],
                )
            },
        );
        if f64::from(radius) >= (hi[0] - lo[0]).hypot(hi[1] - lo[1]) {
            return Vec::new();
        }
        // the sweeps reach beyond the walls: the grid's box must hold them
        let wide = Grid {
            extent: self.extent.max(
                lo[0]
                    .abs()
                    .max(lo[1].abs())
                    .max(hi[0].abs())
                    .max(hi[1].abs()),
            ) + pens.reach(),
            scale: self.scale,
        };
        // walls in the order of a Morton curve over the box, so that each
        // run of SWEPT_GROUP is a compact patch of walls
        let size = [
            (hi[0] - lo[0]).max(f64::MIN_POSITIVE),
            (hi[1] - lo[1]).max(f64::MIN_POSITIVE),
        ];
        let mut walls: Vec<(u32, [f64; 2], [f64; 2])> = shapes
            .iter()
            .flatten()
            .flat_map(|c| {
                let n = c.len();
                (0..n).map(move |i| {
                    let (a, b) = (c[i], c[(i + 1) % n]);
                    // a cell of 1/65536 of the box at the wall's midpoint
                    let middle = DVec2::new(0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]));
                    (morton_key(middle, DVec2::from(lo), DVec2::from(size)), a, b)
                })
            })
            .collect();
        walls.sort_by_key(|w| w.0);
        let unite = |contours: &Contours| -> Contours {
            let united = wide.overlay(contours, &[], OverlayRule::Subject, FillRule::NonZero);
            united.into_iter().flatten().collect()
        };
        let mut patches: Vec<Contours> = walls
            .chunks(SWEPT_GROUP)
            .map(|group| unite(&group.iter().map(|w| pens.sweep(w.1, w.2)).collect()))
            .collect();
        for _ in 0..levels.unwrap_or(0) {
            patches = patches
                .chunks(SWEPT_FAN)
                .map(|group| unite(&group.concat()))
                .collect();
        }
        debug_assert!(levels.is_none() || patches.len() <= 1, "one outline left");
        let swept_walls: Contours = patches.into_iter().flatten().collect();
        let walkable: Contours = shapes.into_iter().flatten().collect();
        // every wall lies inside its sweep: once the sweeps are one outline,
        // walkable space's edges cross none of its edges, so the sweeps'
        // difference rounds no crossing (the margin counts none; if one
        // crossed, the booleans would take it)
        let uncrossed = levels
            .and_then(|_| super::uncrossed::subtract_uncrossed(wide, &walkable, &swept_walls));
        #[cfg(test)]
        if levels.is_some() && uncrossed.is_none() {
            tests::TREE_FALLBACKS.with(|n| n.set(n.get() + 1));
        }
        uncrossed.unwrap_or_else(|| {
            wide.overlay(
                &walkable,
                &swept_walls,
                OverlayRule::Difference,
                FillRule::NonZero,
            )
        })
    }

    /// The pens an erosion by `radius` sweeps on this grid: their sides the
    /// radius plus [`SNAP_MARGIN`] steps from their centre.
    pub(crate) fn pens(self, radius: f32) -> Pens {
        self.pens_with(radius, SNAP_MARGIN)
    }

    /// The pens of [`Grid::pens`] with `margin` steps beyond the radius.
    fn pens_with(self, radius: f32, margin: f64) -> Pens {
        let inradius = f64::from(radius) + margin / self.scale;
        Pens {
            octagon: pen(inradius, 8),
            sixteen: pen(inradius, 16),
            shortest_octagon: SHORTEST_OCTAGON / self.scale,
        }
    }

    /// The grid of `scale` steps per world unit (a power of two, as
    /// [`Grid::new`] chooses), holding every coordinate it can.
    pub(crate) fn with_scale(scale: f64) -> Grid {
        Grid {
            extent: 2f64.powi(23) / scale,
            scale,
        }
    }

    pub(crate) fn new(extent: f64) -> Grid {
        let extent = extent.max(1.0);
        let e = 22 - extent.log2().floor() as i32;
        Grid {
            extent,
            scale: 2f64.powi(e),
        }
    }

    fn adapter(self) -> FloatPointAdapter<[f64; 2], f64> {
        let m = self.extent;
        FloatPointAdapter {
            dir_scale: self.scale,
            inv_scale: 1.0 / self.scale,
            offset: [0.0, 0.0],
            rect: FloatRect::new(-m, m, -m, m),
        }
    }

    /// `subject` combined with `clip` by `rule`, on this grid.
    pub(crate) fn overlay(
        self,
        subject: &[Vec<[f64; 2]>],
        clip: &[Vec<[f64; 2]>],
        rule: OverlayRule,
        fill: FillRule,
    ) -> Shapes {
        let capacity = subject.iter().chain(clip).map(Vec::len).sum();
        FloatOverlay::with_adapter(self.adapter(), capacity)
            .unsafe_add_source(subject, ShapeType::Subject)
            .unsafe_add_source(clip, ShapeType::Clip)
            .overlay(rule, fill)
    }
}

/// Whether the edges of `contours` are crowded enough that the booleans'
/// splitting, which tests the pairs of edges whose boxes overlap, would
/// cost more than the sweeps of [`super::uncrossed`] (about ten times the
/// booleans' cost per edge on ordinary levels, but O(n log n) however the
/// boxes overlap). Two signs, each O(n log n) at most:
/// - the boxes of the edges cover the level's box [`CROWDED_DEPTH`] times
///   over (long slanted edges: a hub of 500 thin wedges covers it 78
///   times, 1,000 wedges 156; hand-made levels and 20,000 scattered boxes
///   at most 2);
/// - or, the boxes being small, their projections overlap more than
///   [`CROWDED_PAIRS`] times per edge on both axes (many short edges in
///   one spot; 20,000 scattered boxes: 182).
///
/// Measured (BENCHMARKS.md, session 31): 20,000 scattered boxes took the
/// booleans 60 ms and the sweeps 596; a hub of 1,000 wedges 6.8 and 5.9 ms,
/// of 4,000 wedges 252 and 27 ms.
fn crowded<'a>(contours: impl Iterator<Item = &'a Vec<[f64; 2]>> + Clone) -> bool {
    let edges = || {
        contours
            .clone()
            .flat_map(|c| (0..c.len()).map(move |k| (c[k], c[(k + 1) % c.len()])))
    };
    let (mut lo, mut hi, mut covered, mut n) = ([f64::MAX; 2], [f64::MIN; 2], 0.0, 0u64);
    for (a, b) in edges() {
        for k in 0..2 {
            lo[k] = lo[k].min(a[k]).min(b[k]);
            hi[k] = hi[k].max(a[k]).max(b[k]);
        }
        covered += (a[0] - b[0]).abs() * (a[1] - b[1]).abs();
        n += 1;
    }
    if n == 0 {
        return false;
    }
    let area = (hi[0] - lo[0]) * (hi[1] - lo[1]);
    if covered > CROWDED_DEPTH * area {
        return true;
    }
    // pairs whose projections overlap, per axis, up to the limit
    let limit = CROWDED_PAIRS * n;
    (0..2).all(|k| {
        let mut spans: Vec<(f64, f64)> = edges()
            .map(|(a, b)| (a[k].min(b[k]), a[k].max(b[k])))
            .collect();
        spans.sort_unstable_by(|p, q| p.0.total_cmp(&q.0));
        let mut ends = std::collections::BinaryHeap::new();
        let mut pairs = 0u64;
        for (start, end) in spans {
            // the spans still open: a min-heap of their ends
            while ends
                .peek()
                .is_some_and(|e: &std::cmp::Reverse<OrderedFloat<f64>>| e.0 .0 < start)
            {
                ends.pop();
            }
            pairs += ends.len() as u64;
            if pairs > limit {
                return true;
            }
            ends.push(std::cmp::Reverse(OrderedFloat(end)));
        }
        false
    })
}

/// Depth of cover by the edges' boxes past which [`crowded`] says so.
const CROWDED_DEPTH: f64 = 64.0;

/// Overlapping projections per edge, on both axes, past which [`crowded`]
/// says so.
const CROWDED_PAIRS: u64 = 4096;

/// Most points where a level's outlines (walkable contours, obstacles,
/// areas) may cross each other. The booleans' output, and their time, grows
/// with the crossings (thin obstacles crossing each other: 62,000 crossings
/// take 0.3 s to bake, 250,000 take 2.3 s; see BENCHMARKS.md); at this limit
/// a bake stays near a second.
pub const MAX_CROSSINGS: u64 = 1 << 17;

/// Refuses a level whose outlines cross each other more than
/// [`MAX_CROSSINGS`] times, before the booleans would spend minutes on it.
pub(crate) fn check_crossings(level: &Level) -> Result<(), BakeError> {
    if level.walkable_is_resolved && level.obstacles.is_empty() && level.areas.is_empty() {
        return Ok(());
    }
    let mut segments = Vec::new();
    let polygons = level
        .walkable
        .iter()
        .chain(&level.obstacles)
        .chain(level.areas.iter().map(|a| &a.polygon));
    for c in polygons {
        let n = c.len();
        segments.extend((0..n).map(|i| (c[i].as_dvec2(), c[(i + 1) % n].as_dvec2())));
    }
    match crate::geometry::count_crossings(&segments, MAX_CROSSINGS) {
        Ok(_) => Ok(()),
        Err(TooMany::Crossings(found)) => Err(BakeError::TooComplex {
            reason: format!(
                "its outlines cross each other more than {MAX_CROSSINGS} times (found {found} before stopping)"
            ),
        }),
        Err(TooMany::Crowded) => Err(BakeError::TooComplex {
            reason: format!(
                "so many of its edges end in one spot that counting their crossings would take more than {} steps",
                crate::geometry::MAX_WORK
            ),
        }),
    }
}

/// Runs the booleans for one agent radius (world units, >= 0).
pub(crate) fn resolve(level: &Level, radius: f32) -> Result<Outline, BakeError> {
    let nothing_to_subtract = level.obstacles.is_empty() && level.areas.is_empty() && radius == 0.0;
    if level.walkable_is_resolved && nothing_to_subtract {
        let walkable = level
            .walkable
            .iter()
            .map(|c| c.iter().map(|v| v.as_dvec2()).collect())
            .collect();
        return Ok(Outline {
            walkable,
            areas: Vec::new(),
            scale: level_grid(level).scale,
        });
    }
    check_crossings(level)?;
    let subject = contours_of(&level.walkable);
    // obstacles may be given either way round: make each count positively
    let impassable = level.areas.iter().filter(|a| a.cost.is_none());
    let clip: Contours = level
        .obstacles
        .iter()
        .chain(impassable.map(|a| &a.polygon))
        .map(|c| as_points(&counter_clockwise(c)))
        .collect();
    let grid = level_grid(level);
    let shapes = grid.erode(grid.subtract(&subject, &clip), radius);
    if shapes.is_empty() {
        return Err(BakeError::NothingWalkable { radius });
    }
    let costed = level
        .areas
        .iter()
        .enumerate()
        .filter(|(_, a)| a.cost.is_some());
    Ok(grid.outline(
        shapes,
        costed.map(|(i, a)| (i, contours_of(std::slice::from_ref(&a.polygon)))),
    ))
}

/// The snapping grid of a level baked whole: fine enough for its largest
/// coordinate, of walkable contours, obstacles and areas alike.
pub(crate) fn level_grid(level: &Level) -> Grid {
    let extent = level
        .walkable
        .iter()
        .chain(&level.obstacles)
        .chain(level.areas.iter().map(|a| &a.polygon))
        .flatten()
        .map(|v| f64::from(v.x.abs().max(v.y.abs())))
        .fold(0.0, f64::max);
    Grid::new(extent)
}

/// Grid steps an erosion pushes walls beyond the radius (see
/// [`Grid::erode`]), for what rounding to the grid can move a wall back:
/// a crossing rounded to the grid moves under a step (0.71) each time the
/// swept outlines are resolved (twice: a patch's union, [`SWEPT_GROUP`],
/// then the difference; i_overlay's own snapping can move an end further
/// when it splits again, its snap radius growing pass by pass), and as
/// much again where the noding snap rounds a wall through a hot pixel
/// ([`super::noding`]), which a derived mesh can meet twice (its base's
/// walls were bent, then its own): about 3.6 steps, not a proven bound;
/// the clearance tests (`sizes`, `bake_maps`) are the check. The margin was 6
/// when the noding could bend a wall by 2.2 steps and more; it is kept. At
/// a level's largest coordinates a step is up to 1/4 unit: with no margin
/// an edge came 0.242 from a wall at radius 0.25 near 1,040,000, and with
/// 2 steps an edge bent through an area's crossing came 0.516 from one at
/// 0.55 (both found by
/// `sizes::a_derived_mesh_is_the_bake_for_its_radius_on_generated_levels`).
const SNAP_MARGIN: f64 = 6.0;

/// Swept walls united before the erosion's difference, a patch of walls
/// next to each other on a Morton curve at a time: the difference then
/// meets one outline per patch where the sweeps overlap, not every pair of
/// overlapping sweeps. Neighbouring walls' sweeps always overlap (at least
/// at their shared corner), and near a hub of thin wedges hundreds do. A
/// patch's union rounds its crossings to the grid once more before the
/// difference rounds its own, within [`SNAP_MARGIN`]. Chosen by the
/// booleans' time at radius 0.5 on the bundled and wide maps (BENCHMARKS.md,
/// session 31): 16 to 64 are alike on maps; 32 is the fastest on hubs.
const SWEPT_GROUP: usize = 32;

/// Patches an erosion on a crowded level ([`Grid::erode`]) unites at a
/// time, level by level, until one outline is left. Near a hub the swept
/// walls of the whole level overlap; each level unites neighbouring
/// patches, whose overlapping sweeps merge, so the next level meets fewer
/// edges than it would have. Each level passes over every edge left, so
/// fewer levels cost less: on a hub of 4,000 thin wedges at radius 0.5
/// (`tests/alloc.rs`' hub, about 12,000 walls, 376 patches) i_overlay's
/// unions took 1.9 s two at a time, 1.2 s four, 0.7 s eight and 0.9 s
/// sixteen; one union of all the patches by the crate's sweeps took 1.8 s
/// (BENCHMARKS.md, session 32).
const SWEPT_FAN: usize = 8;

/// Steps added to [`SNAP_MARGIN`] per level of the union of an erosion's
/// patches on a crowded level ([`Grid::erode`]): an estimate, not a proven
/// bound. Rounding a crossing to the nearest grid point moves it up to
/// sqrt(1/2) steps (the argument of
/// `crossing_points::tests::rounds_keep_pieces_near_their_segment`, about
/// the crate's own cutting), but i_overlay, which runs these unions, may
/// split again within one overlay and snap a crossing to an end within a
/// radius that grows pass by pass, as [`SNAP_MARGIN`] already allows for.
/// The clearance tests (`crowded_erosions_keep_the_radius_and_the_space`)
/// are the check.
const CROWDED_LEVEL_MARGIN: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Steps a wall along an axis or a diagonal runs at least to be swept by
/// the octagon. Shorter ones are pieces of a slanted wall that the noding
/// bent through a hot pixel ([`super::noding`]): the octagon's corners
/// (8.2% beyond the radius) would bite into the room its slanted
/// neighbours' 16-sided sweeps leave, where the level's unbent wall leaves
/// it. Walls of grid maps run a cell, thousands of steps.
const SHORTEST_OCTAGON: f64 = 64.0;

/// A regular polygon of `sides` (a multiple of 8) around the origin whose
/// sides are `inradius` from it, one facing each axis and each diagonal: it
/// holds the disc of that radius, its corners are `1 / cos(pi / sides)` of
/// the inradius away (8.2% beyond it with 8 sides, 1.9% with 16).
fn pen(inradius: f64, sides: usize) -> Vec<[f64; 2]> {
    let k = sides as f64;
    let circumradius = inradius / (std::f64::consts::PI / k).cos();
    (0..sides)
        .map(|j| {
            let angle = (2.0 * j as f64 + 1.0) * std::f64::consts::PI / k;
            [circumradius * angle.cos(), circumradius * angle.sin()]
        })
        .collect()
}

/// The two pens an erosion sweeps ([`Grid::erode`]): the octagon along
/// walls that run along an axis or a diagonal, 16 sides along the others.
pub(crate) struct Pens {
    octagon: Vec<[f64; 2]>,
    sixteen: Vec<[f64; 2]>,
    /// How long a wall along an axis or a diagonal is at least to take the
    /// octagon ([`SHORTEST_OCTAGON`] steps).
    shortest_octagon: f64,
}

impl Pens {
    /// What the pen for the wall `a`-`b` covers swept along it.
    pub(crate) fn sweep(&self, a: [f64; 2], b: [f64; 2]) -> Vec<[f64; 2]> {
        let (dx, dy) = ((b[0] - a[0]).abs(), (b[1] - a[1]).abs());
        if (dx == 0.0 || dy == 0.0 || dx == dy) && dx.max(dy) >= self.shortest_octagon {
            swept(&self.octagon, a, b)
        } else {
            swept(&self.sixteen, a, b)
        }
    }

    /// How far from a wall a sweep reaches: the octagon's corners.
    pub(crate) fn reach(&self) -> f64 {
        self.octagon
            .iter()
            .map(|p| p[0].hypot(p[1]))
            .fold(0.0, f64::max)
    }
}

/// The region the pen covers moving from `a` to `b`: the convex hull of
/// the pen at both ends, counter-clockwise.
fn swept(pen: &[[f64; 2]], a: [f64; 2], b: [f64; 2]) -> Vec<[f64; 2]> {
    let mut points: Vec<[f64; 2]> = pen
        .iter()
        .flat_map(|p| [[a[0] + p[0], a[1] + p[1]], [b[0] + p[0], b[1] + p[1]]])
        .collect();
    points.sort_by(|p, q| p[0].total_cmp(&q[0]).then(p[1].total_cmp(&q[1])));
    let cross = |o: [f64; 2], p: [f64; 2], q: [f64; 2]| {
        (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0])
    };
    // Andrew's monotone chain: the lower hull left to right, then the upper
    // right to left, each without its last point (the other's first)
    let chain = |ordered: &mut dyn Iterator<Item = [f64; 2]>| {
        let mut half: Vec<[f64; 2]> = Vec::new();
        for p in ordered {
            while half.len() >= 2 && cross(half[half.len() - 2], half[half.len() - 1], p) <= 0.0 {
                half.pop();
            }
            half.push(p);
        }
        half.pop();
        half
    };
    let mut hull = chain(&mut points.iter().copied());
    hull.extend(chain(&mut points.iter().rev().copied()));
    hull
}

/// A polygon as f64 points, turned counter-clockwise.
pub(crate) fn counter_clockwise(polygon: &[glam::Vec2]) -> Vec<DVec2> {
    let mut out: Vec<DVec2> = polygon.iter().map(|p| p.as_dvec2()).collect();
    if crate::geometry::signed_area(polygon) < 0.0 {
        out.reverse();
    }
    out
}

/// Points in the booleans' form.
pub(crate) fn as_points(contour: &[DVec2]) -> Vec<[f64; 2]> {
    contour.iter().map(|p| [p.x, p.y]).collect()
}

impl Outline {
    /// Area of walkable space: outer contours count positive, holes negative.
    pub(crate) fn walkable_area(&self) -> f64 {
        self.walkable
            .iter()
            .map(|c| {
                let twice: f64 = (0..c.len())
                    .map(|i| c[i].perp_dot(c[(i + 1) % c.len()]))
                    .sum();
                twice * 0.5
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{crowded, pen, swept, Contours, Grid};
    use crate::bake::uncrossed::tests::area;
    use std::cell::Cell;

    thread_local! {
        /// Erosions united up a tree whose difference the sweeps refused
        /// (the booleans ran it), on this thread.
        pub(super) static TREE_FALLBACKS: Cell<usize> = const { Cell::new(0) };
    }

    /// Hand-made levels are not crowded; a hub of long slanted wedges is
    /// (its edges' boxes cover the level many times over), and so are many
    /// short edges in one spot (their boxes are small but overlap).
    #[test]
    fn hubs_and_clusters_are_crowded_levels_are_not() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/levels");
        for name in ["maze.json", "moba_lanes.json", "rts_base.json"] {
            let level = crate::Level::from_file(dir.join(name)).expect("bundled level");
            let contours: Vec<Vec<[f64; 2]>> = (level.walkable.iter().chain(&level.obstacles))
                .map(|c| c.iter().map(|v| [f64::from(v.x), f64::from(v.y)]).collect())
                .collect();
            assert!(!crowded(contours.iter()), "{name}");
        }
        let field = vec![[0.0, 0.0], [4000.0, 0.0], [4000.0, 4000.0], [0.0, 4000.0]];
        let wedges = |n: usize| -> Vec<Vec<[f64; 2]>> {
            let turn = std::f64::consts::TAU / n as f64;
            let at = |r: f64, t: f64| [2000.0 + r * t.cos(), 2000.0 + r * t.sin()];
            let mut c: Vec<Vec<[f64; 2]>> = (0..n)
                .map(|i| {
                    let t = turn * i as f64;
                    vec![at(20.0, t), at(1900.0, t), at(1900.0, t + 0.5 * turn)]
                })
                .collect();
            c.push(field.clone());
            c
        };
        assert!(!crowded(wedges(50).iter()));
        assert!(crowded(wedges(1000).iter()));
        // 10,000 unit squares stacked on one spot of the field
        let mut pile: Vec<Vec<[f64; 2]>> = (0..10_000)
            .map(|i| {
                let o = 1000.0 + f64::from(i) * 1e-4;
                vec![[o, o], [o + 1.0, o], [o + 1.0, o + 1.0], [o, o + 1.0]]
            })
            .collect();
        assert!(!crowded(pile[..100].iter().chain([&field])));
        pile.push(field);
        assert!(crowded(pile.iter()));
    }

    /// A hub of 600 thin wedges is crowded: its erosion unites the swept
    /// walls up a tree and subtracts them by the sweeps. At radius 0.5 that
    /// keeps the radius from the level's own edges and leaves the space the
    /// erosion without the tree leaves ([`check_crowded_erosion`]).
    #[test]
    fn a_crowded_erosion_united_up_a_tree_keeps_the_radius_and_the_space() {
        let n = 600;
        let turn = std::f64::consts::TAU / f64::from(n);
        let at = |r: f64, t: f64| [2000.0 + r * t.cos(), 2000.0 + r * t.sin()];
        let wedges: Contours = (0..n)
            .map(|i| {
                let t = turn * f64::from(i);
                vec![at(20.0, t), at(1900.0, t), at(1900.0, t + 0.5 * turn)]
            })
            .collect();
        check_crowded_erosion(4000.0, &wedges, 0.5).unwrap();
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8))]

        /// The same on fields crossed by long thin bars side by side, from
        /// one half of a side of the field to the other half of the
        /// opposite side (crowded: each bar's box covers half the field),
        /// at random spacings and widths and any radius.
        #[test]
        fn crowded_erosions_keep_the_radius_and_the_space(
            bars in proptest::collection::vec((0.05..1.0f64, 0.05..1.0f64, 0.1..0.6f64), 230..260),
            radius in 0.05..1.0f32,
            across in proptest::bool::ANY,
        ) {
            // cumulative gaps, scaled to leave each half of a side for the
            // bars' ends: bar i starts after bar i - 1 ends, at both ends
            let widths: f64 = bars.iter().map(|b| b.2).sum();
            let ends = |k: usize| {
                let gaps: f64 = bars.iter().map(|b| if k == 0 { b.0 } else { b.1 }).sum();
                let scale = (495.0 - widths) / gaps;
                let mut at = if k == 0 { 2.0 } else { 502.0 };
                bars.iter()
                    .map(|b| {
                        at += (if k == 0 { b.0 } else { b.1 }) * scale;
                        let here = at;
                        at += b.2;
                        here
                    })
                    .collect::<Vec<f64>>()
            };
            let (from, to) = (ends(0), ends(1));
            let flip = |p: [f64; 2]| if across { [p[1], p[0]] } else { p };
            let bars: Contours = (0..bars.len())
                .map(|i| {
                    let w = bars[i].2;
                    let (a, b) = ([from[i], 0.0], [to[i], 1000.0]);
                    let mut bar = [a, [a[0] + w, 0.0], [b[0] + w, 1000.0], b].map(flip).to_vec();
                    if across {
                        // mirrored: counter-clockwise again
                        bar.reverse();
                    }
                    bar
                })
                .collect();
            check_crowded_erosion(1000.0, &bars, radius)
                .map_err(proptest::test_runner::TestCaseError::fail)?;
        }
    }

    /// Erodes a square field of side `side` with `obstacles` by `radius`,
    /// with the tree and without it: the tree's outline keeps every
    /// obstacle and side of the field at least the radius away, and its
    /// area is the other's within the outline's length times 8 steps (a
    /// loose bound: the two share their pens and patches, and differ by the
    /// tree's extra margin, 1.4 steps at two levels, and their roundings;
    /// about 1 step is measured).
    fn check_crowded_erosion(side: f64, obstacles: &Contours, radius: f32) -> Result<(), String> {
        let field = vec![[0.0, 0.0], [side, 0.0], [side, side], [0.0, side]];
        let grid = Grid::new(side);
        let shapes = grid.subtract(std::slice::from_ref(&field), obstacles);
        if !crowded(shapes.iter().flatten()) {
            return Err(format!(
                "not crowded: {} contours, {} edges, {:?}",
                shapes.len(),
                shapes.iter().flatten().map(Vec::len).sum::<usize>(),
                obstacles.first()
            ));
        }
        let fallbacks = TREE_FALLBACKS.with(Cell::get);
        let tree = grid.erode_with(shapes.clone(), radius, true);
        if TREE_FALLBACKS.with(Cell::get) != fallbacks {
            return Err("the sweeps refused the tree's difference".into());
        }
        let plain = grid.erode_with(shapes, radius, false);

        let edges = |c: &Vec<[f64; 2]>| {
            let c = c.clone();
            (0..c.len()).map(move |i| (c[i], c[(i + 1) % c.len()]))
        };
        let walls: Vec<([f64; 2], [f64; 2])> =
            obstacles.iter().chain([&field]).flat_map(edges).collect();
        let mut closest = f64::INFINITY;
        for (a, b) in tree.iter().flatten().flat_map(edges) {
            for &(c, d) in &walls {
                closest = closest.min(segment_distance(a, b, c, d));
            }
        }
        if closest < f64::from(radius) {
            return Err(format!("an edge {closest} from a wall"));
        }
        let length: f64 = tree
            .iter()
            .flatten()
            .flat_map(edges)
            .map(|(a, b)| (b[0] - a[0]).hypot(b[1] - a[1]))
            .sum();
        let (a, b) = (area(&tree), area(&plain));
        if (a - b).abs() >= length * 8.0 / grid.scale {
            return Err(format!("areas {a} and {b}, outline {length}"));
        }
        Ok(())
    }

    /// Distance between segments `a`-`b` and `c`-`d` (0 when they cross).
    fn segment_distance(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> f64 {
        let v = |p: [f64; 2]| glam::DVec2::new(p[0], p[1]);
        let (a, b, c, d) = (v(a), v(b), v(c), v(d));
        let orient = |p: glam::DVec2, q: glam::DVec2, r: glam::DVec2| (q - p).perp_dot(r - p);
        if orient(a, b, c) * orient(a, b, d) < 0.0 && orient(c, d, a) * orient(c, d, b) < 0.0 {
            return 0.0;
        }
        let to = |p: glam::DVec2, s: glam::DVec2, e: glam::DVec2| {
            let t = ((p - s).dot(e - s) / (e - s).length_squared().max(f64::MIN_POSITIVE))
                .clamp(0.0, 1.0);
            p.distance(s + (e - s) * t)
        };
        to(a, c, d)
            .min(to(b, c, d))
            .min(to(c, a, b))
            .min(to(d, a, b))
    }

    /// The pen holds the disc: every side is the inradius from the centre
    /// (so its edges are no nearer), and a swept outline holds the pen at
    /// both ends and is convex and counter-clockwise.
    #[test]
    fn the_pen_holds_the_disc_and_a_sweep_holds_the_pen_at_both_ends() {
        for sides in [8, 16] {
            let p = pen(0.45, sides);
            assert_eq!(p.len(), sides);
            for i in 0..sides {
                let (a, b) = (p[i], p[(i + 1) % sides]);
                let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
                assert!((mid[0].hypot(mid[1]) - 0.45).abs() < 1e-12);
            }
            // one side faces +x: walls along the axes move out by the inradius
            assert!(p.iter().map(|v| v[0]).fold(0.0, f64::max) - 0.45 < 1e-12);
            let (a, b) = ([1.0, 2.0], [4.0, -3.0]);
            let hull = swept(&p, a, b);
            let n = hull.len();
            let cross = |o: [f64; 2], p: [f64; 2], q: [f64; 2]| {
                (p[0] - o[0]) * (q[1] - o[1]) - (p[1] - o[1]) * (q[0] - o[0])
            };
            for i in 0..n {
                assert!(cross(hull[i], hull[(i + 1) % n], hull[(i + 2) % n]) > 0.0);
            }
            for end in [a, b] {
                for v in &p {
                    let q = [end[0] + v[0], end[1] + v[1]];
                    assert!((0..n).all(|i| cross(hull[i], hull[(i + 1) % n], q) >= -1e-12));
                }
            }
        }
    }
}
