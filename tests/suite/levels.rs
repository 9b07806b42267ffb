//! The bundled JSON levels: bake for every agent class, validate, and route
//! between their nav points.

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter};

use crate::common::data_dir;

fn level(name: &str) -> Level {
    Level::from_json_file(data_dir().join("levels").join(name)).unwrap()
}

fn nav_point(level: &Level, name: &str) -> glam::Vec2 {
    level.nav_points.iter().find(|n| n.name == name).unwrap().at
}

#[test]
fn every_bundled_level_bakes_for_every_agent() {
    let mut count = 0;
    for entry in std::fs::read_dir(data_dir().join("levels")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let level = Level::from_json_file(&path).unwrap();
        assert!(!level.agents.is_empty(), "{}", path.display());
        for agent in &level.agents {
            let config = BakeConfig {
                agent: Some(agent.name.clone()),
                ..BakeConfig::default()
            };
            let mesh = NavMesh::bake(&level, &config).unwrap();
            mesh.validate()
                .unwrap_or_else(|e| panic!("{} / {}: {e}", path.display(), agent.name));
            assert_eq!(mesh.agent_radius(), agent.radius);
            let on_mesh = level
                .nav_points
                .iter()
                .filter(|n| mesh.locate(n.at).is_some())
                .count();
            assert!(
                on_mesh * 2 >= level.nav_points.len(),
                "{}: most nav points are on the mesh",
                path.display()
            );
            let bytes = mesh.to_bytes().unwrap();
            assert_eq!(
                NavMesh::from_bytes(&bytes).unwrap().to_bytes().unwrap(),
                bytes
            );
        }
        count += 1;
    }
    assert!(count >= 3, "three hand-made levels are bundled");
}

#[test]
fn maze_entrance_reaches_exit_and_island_is_cut_off() {
    let maze = level("maze.json");
    let mesh = NavMesh::bake(
        &maze,
        &BakeConfig {
            agent: Some("walker".into()),
            ..BakeConfig::default()
        },
    )
    .unwrap();
    let mut q = NavQuery::new();
    let (entrance, exit) = (nav_point(&maze, "entrance"), nav_point(&maze, "exit"));
    let path = q
        .find_path(&mesh, entrance, exit, &QueryFilter::default())
        .unwrap();
    assert!(
        path.length() > 2.0 * entrance.distance(exit),
        "a maze route winds: {}",
        path.length()
    );
    let hit = q.raycast(&mesh, entrance, exit).unwrap();
    assert!(hit.is_some(), "walls block the straight line");
    let island = nav_point(&maze, "island");
    assert_eq!(
        q.find_path(&mesh, entrance, island, &QueryFilter::default()),
        Err(QueryError::Unreachable)
    );
}

#[test]
fn a_wider_agent_gets_a_smaller_mesh() {
    let rts = level("rts_base.json");
    let small = NavMesh::bake(
        &rts,
        &BakeConfig {
            agent: Some("infantry".into()),
            ..BakeConfig::default()
        },
    )
    .unwrap();
    let large = NavMesh::bake(
        &rts,
        &BakeConfig {
            agent: Some("tank".into()),
            ..BakeConfig::default()
        },
    )
    .unwrap();
    assert!(large.stats().walkable_area < small.stats().walkable_area);
    let (hq, approach) = (nav_point(&rts, "hq"), nav_point(&rts, "enemy_approach"));
    for mesh in [&small, &large] {
        let path = NavQuery::new()
            .find_path(mesh, hq, approach, &QueryFilter::default())
            .unwrap();
        assert_eq!(path.waypoints()[0], hq);
    }
}

/// A level that breaks a rule is a `BakeError::Level` that keeps the
/// `LevelError` (field and reason) as its source, not a flattened string.
#[test]
fn an_invalid_level_keeps_its_cause() {
    let mut level =
        Level::from_json_str(r#"{"walkable": [[[0,0],[10,0],[10,10],[0,10]]]}"#).unwrap();
    level.walkable[0][2] = glam::vec2(f32::NAN, 10.0);
    let error = NavMesh::bake(&level, &BakeConfig::default()).unwrap_err();
    let portalnav::BakeError::Level(portalnav::LevelError::Field { field, .. }) = &error else {
        panic!("expected BakeError::Level(LevelError::Field), got {error:?}");
    };
    assert_eq!(field, "walkable[0][2]");
    let source = std::error::Error::source(&error).expect("the level error is the source");
    assert!(source.to_string().contains("walkable[0][2]"), "{source}");
}
