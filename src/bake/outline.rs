//! Polygon booleans (i_overlay): walkable contours resolved by the winding
//! rule, obstacles and impassable areas subtracted, the result eroded by the
//! agent radius, and each costed area clipped to what is left.

use glam::DVec2;
use i_overlay::core::fill_rule::FillRule;
use i_overlay::core::overlay_rule::OverlayRule;
use i_overlay::float::single::SingleFloatOverlay;
use i_overlay::mesh::outline::offset::OutlineOffset;
use i_overlay::mesh::style::{LineJoin, OutlineStyle};

use crate::error::BakeError;
use crate::level::Level;

type Contours = Vec<Vec<[f64; 2]>>;

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

fn flatten(shapes: Vec<Vec<Vec<[f64; 2]>>>) -> Vec<Vec<DVec2>> {
    shapes
        .into_iter()
        .flatten()
        .filter(|c| c.len() >= 3)
        .map(|c| c.into_iter().map(|[x, y]| DVec2::new(x, y)).collect())
        .collect()
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
    let subject = contours_of(&level.walkable);
    let mut clip = contours_of(&level.obstacles);
    for area in level.areas.iter().filter(|a| a.cost.is_none()) {
        clip.push(contours_of(std::slice::from_ref(&area.polygon)).remove(0));
    }
    // obstacles may be given either way round: make each count positively
    for c in &mut clip {
        let twice: f64 = (0..c.len())
            .map(|i| {
                let (a, b) = (c[i], c[(i + 1) % c.len()]);
                a[0] * b[1] - a[1] * b[0]
            })
            .sum();
        if twice < 0.0 {
            c.reverse();
        }
    }
    let mut shapes = if clip.is_empty() {
        subject.overlay(&Contours::new(), OverlayRule::Subject, FillRule::Positive)
    } else {
        subject.overlay(&clip, OverlayRule::Difference, FillRule::Positive)
    };
    if radius > 0.0 {
        let style = OutlineStyle::new(-f64::from(radius)).line_join(LineJoin::Round(0.25));
        shapes = shapes.outline(&style);
    }
    if shapes.is_empty() {
        return Err(BakeError::NothingWalkable { radius });
    }
    let mut areas = Vec::new();
    for (i, area) in level.areas.iter().enumerate() {
        if area.cost.is_none() {
            continue;
        }
        let poly = contours_of(std::slice::from_ref(&area.polygon));
        let part = shapes.overlay(&poly, OverlayRule::Intersect, FillRule::NonZero);
        if !part.is_empty() {
            areas.push((i, flatten(part)));
        }
    }
    Ok(Outline {
        walkable: flatten(shapes),
        areas,
    })
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
