//! JSON levels: parsing never panics; a level that parses and is small
//! enough is baked, and the mesh validates, loads back and answers queries,
//! whose paths stay on the level's walkable ground (read from its polygons,
//! not the mesh); its regions carry the area kind the level gives them;
//! the mesh for each agent class derived from the radius-0 bake validates
//! and equals the class's own bake.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};

#[path = "common.rs"]
mod common;

#[path = "../../tests/suite/common/mod.rs"]
mod oracle;

/// Paths between points drawn from a hash of `data` stay on the level's
/// walkable ground, within the rounding of its largest coordinates.
fn paths_stay_on_the_level(level: &Level, mesh: &NavMesh, data: &[u8]) {
    let walls = oracle::LevelWalls::new(level);
    let largest = walls
        .walls
        .iter()
        .flatten()
        .map(|v| v.abs().max_element())
        .fold(1.0f32, f32::max);
    let near = 1e-3 + 8.0 * f64::from(largest) * f64::from(f32::EPSILON);
    // the points from a hash of the whole input: its first bytes are JSON's
    // few printable characters, the same opening in every seed
    let mut state = portalnav::fuzzing::checksum(data);
    let mut unit = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let b = mesh.bounds();
    let mut point = || {
        glam::vec2(
            b.min.x + (b.max.x - b.min.x) * unit(),
            b.min.y + (b.max.y - b.min.y) * unit(),
        )
    };
    let mut query = NavQuery::new();
    query.set_max_expansions(10_000);
    for _ in 0..8 {
        let (a, g) = (point(), point());
        if let Ok(path) = query.find_path(mesh, a, g, &QueryFilter::default()) {
            if let Some(problem) = walls.path_problem(path.waypoints(), near) {
                panic!("{a} -> {g}: {problem}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(level) = Level::from_json_str(text) else {
        return;
    };
    let vertices: usize = level
        .walkable
        .iter()
        .chain(&level.obstacles)
        .chain(level.areas.iter().map(|a| &a.polygon))
        .map(Vec::len)
        .sum();
    if vertices > common::MAX_BAKED_VERTICES {
        return;
    }
    // the level's own radii too (erosion is where rounding bit before),
    // without the hierarchy: under the sanitizers a hierarchy costs seconds
    // on the bundled levels, and the grid target covers it
    let mut configs = vec![BakeConfig::default()];
    configs.extend(level.agents.iter().take(2).map(|a| BakeConfig {
        agent: Some(a.name.clone()),
        corridors: false,
        ..BakeConfig::default()
    }));
    for config in &configs {
        if let Ok(mesh) = NavMesh::bake(&level, config) {
            common::check_baked(&mesh);
            common::poke(&mesh, data);
            paths_stay_on_the_level(&level, &mesh, data);
            if let Some(problem) = oracle::area_kind_problem(&level, &mesh) {
                panic!("{problem}");
            }
        }
    }
    // one mesh for every class: each class's mesh derived from the radius-0
    // bake validates and, without costed areas, is
    // the class's own bake byte for byte
    let flat = BakeConfig {
        corridors: false,
        ..BakeConfig::default()
    };
    let Ok(base) = NavMesh::bake(&level, &flat) else {
        return;
    };
    let plain = level.areas.iter().all(|a| a.cost.is_none());
    for config in &configs[1..] {
        let name = config.agent.as_deref().expect("a class");
        let (Ok(derived), Ok(fresh)) = (base.for_agent(name), NavMesh::bake(&level, config)) else {
            continue;
        };
        common::check_baked(&derived);
        if plain {
            assert_eq!(
                derived.to_bytes().unwrap(),
                fresh.to_bytes().unwrap(),
                "{name}"
            );
        }
    }
});
