//! The input side: the [`Level`] model and its two file formats, JSON levels
//! and Moving AI `.map` grids (with their `.scen` scenario files).

mod json;
mod movingai;

pub use movingai::{Grid, Scenario};

use glam::Vec2;

use crate::error::LevelError;
use crate::geometry::{self, MAX_COORD};

/// Name used in errors for levels that did not come from a file.
pub(crate) const MEMORY_SOURCE: &str = "<memory>";

/// Walkable space and what sits on it, before baking.
///
/// This is plain data: build it in code or load it with
/// [`Level::from_json_file`] / [`Level::from_movingai_file`]. The bake
/// validates it again, so a hand-built level with a NaN gets an error, not a panic.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Level {
    /// Name shown in summaries.
    pub name: String,
    /// Oriented contours of walkable space. Counter-clockwise contours add
    /// walkable space, clockwise ones remove it, and a point is walkable where
    /// the winding number is positive: so overlapping counter-clockwise polygons
    /// are unioned, and traced grids keep pockets inside obstacles at any depth.
    pub walkable: Vec<Vec<Vec2>>,
    /// Obstacles subtracted from walkable space (any winding; they may overlap
    /// each other and cross the walkable boundary).
    pub obstacles: Vec<Vec<Vec2>>,
    /// Areas that change the cost of walking inside them.
    pub areas: Vec<Area>,
    /// Named points for the designer (bases, towers, lane ends).
    pub nav_points: Vec<NavPoint>,
    /// Unit classes with their radius; one mesh is baked per class.
    pub agents: Vec<AgentClass>,
    /// Promise that `walkable` is already resolved: every contour simple,
    /// outer ones counter-clockwise, holes clockwise, and contours meeting at
    /// most at shared vertices. The grid tracer sets it; the bake then skips
    /// the boolean pass when nothing is subtracted. A broken promise gives a
    /// mesh that fails [`crate::NavMesh::validate`]'s area check.
    pub walkable_is_resolved: bool,
}

/// A polygon of walkable space with its own movement cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Area {
    /// The kind, e.g. `road`, `river`, `lava`.
    pub kind: String,
    /// Cost multiplier per world unit walked inside (> 0); `None` makes it impassable.
    pub cost: Option<f32>,
    /// The outline (any winding, simple).
    pub polygon: Vec<Vec2>,
}

/// A named point placed by the designer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NavPoint {
    /// Unique name.
    pub name: String,
    /// Position, world units.
    pub at: Vec2,
}

/// A class of units that share a radius.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentClass {
    /// Unique name.
    pub name: String,
    /// Radius in world units (>= 0); walkable space is eroded by it.
    pub radius: f32,
}

impl Level {
    /// Loads a JSON level (the schema is in the README, "Level format").
    ///
    /// # Errors
    /// [`LevelError`] naming the file, the field and the reason for unreadable
    /// files, malformed JSON, bad coordinates or degenerate and
    /// self-intersecting polygons.
    pub fn from_json_file(path: impl AsRef<std::path::Path>) -> Result<Level, LevelError> {
        let (source_name, text) = read_text(path.as_ref())?;
        json::parse(&text, &source_name)
    }

    /// Parses a JSON level held in memory.
    ///
    /// # Errors
    /// As [`Level::from_json_file`].
    pub fn from_json_str(text: &str) -> Result<Level, LevelError> {
        json::parse(text, MEMORY_SOURCE)
    }

    /// Loads a Moving AI `.map` grid and traces its free cells into contours.
    ///
    /// # Errors
    /// [`LevelError::Map`] with the line of a malformed header or row, or
    /// [`LevelError::Empty`] when no cell is free.
    pub fn from_movingai_file(path: impl AsRef<std::path::Path>) -> Result<Level, LevelError> {
        let path = path.as_ref();
        let grid = Grid::from_file(path)?;
        let mut level = grid.to_level();
        if let Some(stem) = path.file_stem() {
            level.name = stem.to_string_lossy().into_owned();
        }
        Ok(level)
    }

    /// Loads a level by its extension: `.map` as a Moving AI grid, anything else as JSON.
    ///
    /// # Errors
    /// As the loader chosen.
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Level, LevelError> {
        let path = path.as_ref();
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("map"))
        {
            Level::from_movingai_file(path)
        } else {
            Level::from_json_file(path)
        }
    }

    /// Checks what the bake relies on: every contour has at least three points,
    /// every coordinate is finite and within [`MAX_COORD`], costs and radii are
    /// in range, names are unique, and some walkable contour exists.
    ///
    /// Self-intersecting walkable contours are resolved by the winding rule
    /// here; JSON files are held to a stricter standard when loaded.
    ///
    /// # Errors
    /// [`LevelError::Field`] naming the first bad field.
    pub fn validate(&self) -> Result<(), LevelError> {
        validate_level(self, MEMORY_SOURCE, false)
    }

    /// Total walkable area before baking (obstacles and areas ignored),
    /// by the winding rule's signed areas.
    #[must_use]
    pub fn walkable_contour_area(&self) -> f64 {
        self.walkable.iter().map(|c| geometry::signed_area(c)).sum()
    }
}

/// Reads a text file for a loader: the name to use in errors, and the text
/// (invalid UTF-8 replaced, so the parser reports where it is).
pub(crate) fn read_text(path: &std::path::Path) -> Result<(String, String), LevelError> {
    let source_name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            Ok((source_name, text))
        }
        Err(error) => Err(LevelError::Io { source_name, error }),
    }
}

fn field_error(source_name: &str, field: String, reason: impl Into<String>) -> LevelError {
    LevelError::Field {
        source_name: source_name.to_string(),
        field,
        reason: reason.into(),
    }
}

/// Checks one point; `field` names it in an error, and is written only
/// then.
fn validate_point(
    source_name: &str,
    field: impl FnOnce() -> String,
    p: Vec2,
) -> Result<(), LevelError> {
    if !p.is_finite() {
        return Err(field_error(
            source_name,
            field(),
            "coordinate is not finite",
        ));
    }
    if p.x.abs() > MAX_COORD || p.y.abs() > MAX_COORD {
        return Err(field_error(
            source_name,
            field(),
            format!("coordinate ({}, {}) is outside +-{MAX_COORD}", p.x, p.y),
        ));
    }
    Ok(())
}

/// Checks one polygon; `strict` also rejects zero area and self-intersections.
/// `field` names it in an error, and is written only then.
fn validate_polygon(
    source_name: &str,
    field: impl Fn() -> String,
    poly: &[Vec2],
    strict: bool,
) -> Result<(), LevelError> {
    for (i, &p) in poly.iter().enumerate() {
        validate_point(source_name, || format!("{}[{i}]", field()), p)?;
    }
    let mut distinct: Vec<Vec2> = poly.to_vec();
    distinct.dedup();
    if distinct.len() > 1 && distinct.first() == distinct.last() {
        distinct.pop();
    }
    if distinct.len() < 3 {
        return Err(field_error(
            source_name,
            field(),
            format!(
                "a polygon needs at least 3 distinct points, found {}",
                distinct.len()
            ),
        ));
    }
    if !strict {
        return Ok(());
    }
    let area = geometry::signed_area(&distinct);
    if area.abs() < 1e-9 {
        return Err(field_error(source_name, field(), "polygon has zero area"));
    }
    if let Some((i, j)) = first_self_intersection(&distinct) {
        return Err(field_error(
            source_name,
            field(),
            format!("polygon intersects itself: edge {i} crosses edge {j}"),
        ));
    }
    Ok(())
}

/// Checks a runtime obstacle polygon as strictly as a JSON level's: finite,
/// in range, at least 3 distinct points, nonzero area, not self-intersecting.
pub(crate) fn validate_obstacle(field: &str, poly: &[Vec2]) -> Result<(), LevelError> {
    validate_polygon(MEMORY_SOURCE, || field.to_string(), poly, true)
}

/// Whether polygon edges `i` and `j` (`i < j`) may not coexist: adjacent
/// edges may only share their common vertex (folding back onto each other
/// is a conflict), other edges may touch only at a shared end.
fn edges_conflict(poly: &[Vec2], i: usize, j: usize) -> bool {
    let n = poly.len();
    let edge = |k: usize| (poly[k].as_dvec2(), poly[(k + 1) % n].as_dvec2());
    let ((a0, a1), (b0, b1)) = (edge(i), edge(j));
    if j == (i + 1) % n || i == (j + 1) % n {
        let shared = if j == (i + 1) % n { a1 } else { a0 };
        let (p, q) = if j == (i + 1) % n { (a0, b1) } else { (a1, b0) };
        let o = geometry::orient_f64(p, shared, q);
        return o == 0.0 && (p - shared).dot(q - shared) > 0.0;
    }
    geometry::segments_conflict(a0, a1, b0, b1, false)
}

/// A pair of edges that cross, overlap or touch other than as
/// [`edges_conflict`] allows, found by a sweep in O(n log n).
fn first_self_intersection(poly: &[Vec2]) -> Option<(usize, usize)> {
    let n = poly.len();
    let edges: Vec<_> = (0..n)
        .map(|k| (poly[k].as_dvec2(), poly[(k + 1) % n].as_dvec2()))
        .collect();
    geometry::first_conflict(&edges, |i, j| edges_conflict(poly, i, j))
}

pub(crate) fn validate_level(
    level: &Level,
    source_name: &str,
    strict: bool,
) -> Result<(), LevelError> {
    if level.walkable.is_empty() {
        return Err(LevelError::Empty {
            source_name: source_name.to_string(),
        });
    }
    for (i, poly) in level.walkable.iter().enumerate() {
        validate_polygon(source_name, || format!("walkable[{i}]"), poly, strict)?;
    }
    for (i, poly) in level.obstacles.iter().enumerate() {
        validate_polygon(source_name, || format!("obstacles[{i}]"), poly, strict)?;
    }
    for (i, area) in level.areas.iter().enumerate() {
        validate_polygon(
            source_name,
            || format!("areas[{i}].polygon"),
            &area.polygon,
            strict,
        )?;
        if let Some(cost) = area.cost {
            if !(cost.is_finite() && cost > 0.0 && cost <= 1.0e6) {
                return Err(field_error(
                    source_name,
                    format!("areas[{i}].cost"),
                    format!(
                        "cost must be > 0 and at most 1e6 (or null for impassable), found {cost}"
                    ),
                ));
            }
        }
    }
    for (i, p) in level.nav_points.iter().enumerate() {
        validate_point(source_name, || format!("nav_points[{i}].at"), p.at)?;
        if level.nav_points[..i].iter().any(|q| q.name == p.name) {
            return Err(field_error(
                source_name,
                format!("nav_points[{i}].name"),
                format!("duplicate nav point name {:?}", p.name),
            ));
        }
    }
    for (i, a) in level.agents.iter().enumerate() {
        if !(a.radius.is_finite() && a.radius >= 0.0 && a.radius <= MAX_COORD) {
            return Err(field_error(
                source_name,
                format!("agents[{i}].radius"),
                format!("radius must be a finite number >= 0, found {}", a.radius),
            ));
        }
        if level.agents[..i].iter().any(|b| b.name == a.name) {
            return Err(field_error(
                source_name,
                format!("agents[{i}].name"),
                format!("duplicate agent name {:?}", a.name),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::vec2;

    #[test]
    fn bowtie_is_self_intersecting() {
        let bowtie = [vec2(0., 0.), vec2(2., 2.), vec2(2., 0.), vec2(0., 2.)];
        assert!(first_self_intersection(&bowtie).is_some());
        let square = [vec2(0., 0.), vec2(2., 0.), vec2(2., 2.), vec2(0., 2.)];
        assert_eq!(first_self_intersection(&square), None);
        // a spike folding back on its own edge
        let spike = [vec2(0., 0.), vec2(4., 0.), vec2(2., 0.), vec2(2., 2.)];
        assert!(first_self_intersection(&spike).is_some());
    }

    #[test]
    fn nan_and_huge_coordinates_are_rejected() {
        let mut level = Level {
            walkable: vec![vec![vec2(0., 0.), vec2(1., 0.), vec2(f32::NAN, 1.)]],
            ..Level::default()
        };
        let err = level.validate().unwrap_err().to_string();
        assert!(
            err.contains("walkable[0][2]") && err.contains("not finite"),
            "{err}"
        );
        level.walkable[0][2] = vec2(1e9, 1.);
        let err = level.validate().unwrap_err().to_string();
        assert!(err.contains("outside"), "{err}");
    }
}
