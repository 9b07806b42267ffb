//! Unit sizes from one baked mesh (`NavMesh::for_radius`): the derived mesh
//! against a bake of the level for that radius, clearance against the
//! level's own geometry, and bad radii.

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter, Scenario};

use crate::common::{data_dir, CheckGrid};

/// Radii that tie with no grid width (a gap of whole cells is never exactly
/// one of their diameters).
const RADII: [f32; 4] = [0.45, 0.95, 1.45, 2.45];

fn config(max_radius: f32) -> BakeConfig {
    BakeConfig {
        max_radius: Some(max_radius),
        ..BakeConfig::default()
    }
}

/// The derived mesh is, byte for byte, the bake of the level for its radius:
/// on a grid map (with the hierarchy) and on JSON levels with areas, agent
/// classes and nav points.
#[test]
fn a_mesh_for_a_radius_is_the_bake_of_the_level_for_it() {
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let base = NavMesh::bake(&level, &config(2.45)).unwrap();
    for radius in [0.45, 1.45] {
        let derived = base.for_radius(radius).unwrap();
        derived.validate().unwrap();
        let fresh = NavMesh::bake(
            &level,
            &BakeConfig {
                agent_radius: radius,
                ..config(2.45)
            },
        )
        .unwrap();
        assert!(derived.hierarchy_stats().is_some());
        assert_eq!(
            derived.to_bytes().unwrap(),
            fresh.to_bytes().unwrap(),
            "den520d at {radius}"
        );
    }
    for name in ["rts_base", "moba_lanes", "maze"] {
        let level = Level::from_json_file(data_dir().join("levels").join(format!("{name}.json")))
            .unwrap();
        let base = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        assert_eq!(base.agents().len(), level.agents.len());
        for class in &level.agents {
            let derived = base.for_agent(&class.name).unwrap();
            let fresh = NavMesh::bake(
                &level,
                &BakeConfig {
                    agent: Some(class.name.clone()),
                    ..BakeConfig::default()
                },
            )
            .unwrap();
            assert_eq!(derived.agent_radius(), class.radius);
            assert_eq!(
                derived.to_bytes().unwrap(),
                fresh.to_bytes().unwrap(),
                "{name} for {}",
                class.name
            );
        }
    }
}
