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
use i_overlay::mesh::outline::offset::OutlineOffset;
use i_overlay::mesh::style::{LineJoin, OutlineStyle};

use crate::error::BakeError;
use crate::geometry::TooMany;
use crate::level::Level;

pub(crate) type Contours = Vec<Vec<[f64; 2]>>;

/// What the booleans return: shapes, each an outer contour and its holes.
pub(crate) type Shapes = Vec<Contours>;

/// Resolved walkable space and the costed areas inside it.
pub(crate) struct Outline {
    /// Closed contours bounding walkable space (outer CCW, holes CW); they do
    /// not cross and touch only at shared vertices.
    pub walkable: Vec<Vec<DVec2>>,
    /// Per costed area of the level (by index into `Level::areas`), its part
    /// of walkable space as closed contours.
    pub areas: Vec<(usize, Vec<Vec<DVec2>>)>,
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
    /// counter-clockwise obstacles `clip`, on this grid.
    pub(crate) fn subtract(self, subject: &[Vec<[f64; 2]>], clip: &[Vec<[f64; 2]>]) -> Shapes {
        if clip.is_empty() {
            self.overlay(subject, &[], OverlayRule::Subject, FillRule::Positive)
        } else {
            self.overlay(subject, clip, OverlayRule::Difference, FillRule::Positive)
        }
    }

    /// The outline of walkable `shapes` with each costed area's part of it
    /// (areas given with the number the outline should carry them under).
    pub(crate) fn outline(
        self,
        shapes: Shapes,
        areas: impl IntoIterator<Item = (usize, Contours)>,
    ) -> Outline {
        let mut parts = Vec::new();
        let mut areas = areas.into_iter().peekable();
        if areas.peek().is_some() {
            let walkable: Contours = shapes.iter().flatten().cloned().collect();
            for (i, poly) in areas {
                let part =
                    self.overlay(&walkable, &poly, OverlayRule::Intersect, FillRule::NonZero);
                if !part.is_empty() {
                    parts.push((i, flatten(part)));
                }
            }
        }
        Outline {
            walkable: flatten(shapes),
            areas: parts,
        }
    }

    /// `shapes` with their walls pushed out by `radius` (world units, >= 0;
    /// see [`erosion`]), on this grid. The offset's points are rounded to
    /// its own finer grid, then to this one: each moves less than a step
    /// (half a step per coordinate on each grid), so walls go out
    /// [`SNAP_MARGIN`] steps further and still keep the radius after both
    /// roundings (at a level's largest coordinates a step is up to 1/8
    /// unit: without the margin an edge came 0.242 from a wall at radius
    /// 0.25 near 1,040,000).
    pub(crate) fn erode(self, shapes: Shapes, radius: f32) -> Shapes {
        if radius <= 0.0 || shapes.is_empty() {
            return shapes;
        }
        let (distance, step) = erosion(f64::from(radius));
        let distance = distance + SNAP_MARGIN / self.scale;
        let style = OutlineStyle::new(-distance).line_join(LineJoin::Round(step));
        // the offset picks its own integer grid: bring the result back to ours
        let eroded: Contours = shapes.outline(&style).into_iter().flatten().collect();
        self.overlay(&eroded, &[], OverlayRule::Subject, FillRule::NonZero)
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

/// How far walls are pushed out for an agent of `radius` (world units),
/// and the angle step of the arcs round obstacle corners. The offset
/// approximates each arc by chords, every one spanning less than twice the
/// step, so a chord of an arc drawn at `distance` lies at least
/// `distance * cos(step)` from its corner: with `distance = radius /
/// cos(step)` no chord comes closer than `radius`. Walls then move out
/// `1 / cos(step) - 1` of the radius too far (3.2% at the step of 0.25
/// rad), so a gap up to that much wider than the agent stays closed to
/// it. A finer step would waste less width but makes every corner's arc
/// longer: at 0.067 rad (0.1% of a radius of 0.45) den520d eroded by 0.45
/// had 14,693 regions against 3,934 and baked 2.8 times slower.
fn erosion(radius: f64) -> (f64, f64) {
    (radius / EROSION_STEP.cos(), EROSION_STEP)
}

/// Grid steps an erosion pushes walls beyond the radius, for rounding
/// (see [`Grid::erode`]).
const SNAP_MARGIN: f64 = 2.0;

/// The angle step of the eroded arcs (see [`erosion`]).
const EROSION_STEP: f64 = 0.25;

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
    #[test]
    fn erosion_keeps_the_radius_at_corners_and_overshoots_walls_by_a_bounded_share() {
        for radius in [0.05, 0.45, 1.0, 3.0, 40.0] {
            let (distance, step) = super::erosion(radius);
            // the worst chord spans just under twice the step
            assert!(distance * step.cos() >= radius * (1.0 - 1e-12), "{radius}");
            let over = (distance - radius) / radius;
            assert!((0.0..0.033).contains(&over), "{radius}: {over}");
        }
    }
}
