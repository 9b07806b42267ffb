//! JSON level files (the schema is in the README, "Level format").

use glam::Vec2;
use serde::Deserialize;

use super::{field_error, validate_level, AgentClass, Area, Level, NavPoint};
use crate::error::LevelError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLevel {
    #[serde(default)]
    name: Option<String>,
    walkable: Vec<Vec<[f64; 2]>>,
    #[serde(default)]
    obstacles: Vec<Vec<[f64; 2]>>,
    #[serde(default)]
    areas: Vec<RawArea>,
    #[serde(default)]
    nav_points: Vec<RawNavPoint>,
    #[serde(default)]
    agents: Vec<RawAgent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArea {
    kind: String,
    cost: Option<f64>,
    polygon: Vec<[f64; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNavPoint {
    name: String,
    at: [f64; 2],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    name: String,
    radius: f64,
}

/// Converts an f64 coordinate to f32, refusing values that f32 cannot hold.
fn to_vec2(source_name: &str, field: &str, p: [f64; 2]) -> Result<Vec2, LevelError> {
    let v = Vec2::new(p[0] as f32, p[1] as f32);
    if !v.is_finite() {
        return Err(field_error(
            source_name,
            field.to_string(),
            format!("coordinate ({}, {}) is not a finite f32", p[0], p[1]),
        ));
    }
    Ok(v)
}

fn to_polygon(source_name: &str, field: &str, poly: &[[f64; 2]]) -> Result<Vec<Vec2>, LevelError> {
    poly.iter()
        .enumerate()
        .map(|(i, &p)| to_vec2(source_name, &format!("{field}[{i}]"), p))
        .collect()
}

/// Makes a polygon counter-clockwise (either winding is accepted in files).
fn ccw(mut poly: Vec<Vec2>) -> Vec<Vec2> {
    if crate::geometry::signed_area(&poly) < 0.0 {
        poly.reverse();
    }
    poly
}

pub(super) fn parse(text: &str, source_name: &str) -> Result<Level, LevelError> {
    let raw: RawLevel = serde_json::from_str(text).map_err(|e| LevelError::Json {
        source_name: source_name.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let mut level = Level {
        name: raw.name.unwrap_or_else(|| "level".to_string()),
        ..Level::default()
    };
    for (i, poly) in raw.walkable.iter().enumerate() {
        level.walkable.push(ccw(to_polygon(
            source_name,
            &format!("walkable[{i}]"),
            poly,
        )?));
    }
    for (i, poly) in raw.obstacles.iter().enumerate() {
        level.obstacles.push(ccw(to_polygon(
            source_name,
            &format!("obstacles[{i}]"),
            poly,
        )?));
    }
    for (i, a) in raw.areas.iter().enumerate() {
        let polygon = ccw(to_polygon(
            source_name,
            &format!("areas[{i}].polygon"),
            &a.polygon,
        )?);
        let cost = a.cost.map(|c| c as f32);
        level.areas.push(Area {
            kind: a.kind.clone(),
            cost,
            polygon,
        });
    }
    for (i, n) in raw.nav_points.iter().enumerate() {
        level.nav_points.push(NavPoint {
            name: n.name.clone(),
            at: to_vec2(source_name, &format!("nav_points[{i}].at"), n.at)?,
        });
    }
    for a in &raw.agents {
        level.agents.push(AgentClass {
            name: a.name.clone(),
            radius: a.radius as f32,
        });
    }
    validate_level(&level, source_name, true)?;
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_design_example() {
        let text = r#"{
          "name": "two_lanes",
          "walkable": [ [[0,0],[200,0],[200,120],[0,120]] ],
          "obstacles": [ [[40,40],[40,80],[60,80],[60,40]] ],
          "areas": [ { "kind": "road", "cost": 0.7, "polygon": [[0,55],[200,55],[200,65],[0,65]] },
                     { "kind": "lava", "cost": null, "polygon": [[100,0],[110,0],[110,10]] } ],
          "nav_points": [ { "name": "red_base", "at": [10,60] } ],
          "agents": [ { "name": "infantry", "radius": 0.5 }, { "name": "tank", "radius": 1.5 } ]
        }"#;
        let level = parse(text, "two_lanes.json").unwrap();
        assert_eq!(level.name, "two_lanes");
        assert!(
            crate::geometry::signed_area(&level.obstacles[0]) > 0.0,
            "made CCW"
        );
        assert_eq!(level.areas[1].cost, None);
        assert_eq!(level.agents[1].radius, 1.5);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"walkable": [[[0,0],[1,0]]]}"#, "walkable[0]"),
            (
                r#"{"walkable": [[[0,0],[4,4],[4,0],[0,2]]]}"#,
                "intersects itself",
            ),
            (r#"{"walkable": [[[0,0],[1,0],[2,0]]]}"#, "zero area"),
            (
                r#"{"walkable": [[[0,0],[1,0],[1,1e300]]]}"#,
                "walkable[0][2]",
            ),
            (r#"{"walkable": []}"#, "no walkable area"),
            (
                r#"{"walkable": [[[0,0],[1,0],[1,1]]], "areas":[{"kind":"a","cost":-1,"polygon":[[0,0],[1,0],[1,1]]}]}"#,
                "areas[0].cost",
            ),
            (
                r#"{"walkable": [[[0,0],[1,0],[1,1]]], "agents":[{"name":"a","radius":-1}]}"#,
                "agents[0].radius",
            ),
            (r#"{"walkable": "nope"}"#, "line 1"),
            (
                r#"{"walkable": [[[0,0],[1,0],[1,1]]], "extra": 1}"#,
                "unknown field",
            ),
        ];
        for (text, needle) in cases {
            let err = parse(text, "f.json").unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(err.starts_with("f.json"), "{err}");
        }
    }
}
