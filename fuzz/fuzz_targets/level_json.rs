//! JSON levels: parsing never panics; a level that parses and is small
//! enough is baked, and the mesh validates, loads back and answers queries;
//! the mesh for each agent class derived from the radius-0 bake validates
//! and equals the class's own bake.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::{BakeConfig, Level, NavMesh};

#[path = "common.rs"]
mod common;

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
