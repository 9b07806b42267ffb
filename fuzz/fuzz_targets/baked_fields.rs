//! Baked files changed field by field (`portalnav::fuzzing::mutate_baked`):
//! a corner moved, an index pointed elsewhere, a list cut short, a table
//! entry made NaN, and the file encoded again with a valid header, so each
//! change reaches the checks of loading. Loading never panics; a file that
//! loads validates, saves to a file that loads, and answers queries.
//! Byte 0 picks a baked seed (a grid with a hierarchy of small clusters, the
//! bundled levels with areas, a tiled bake); the rest is the script of
//! changes, then the query points.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use portalnav::fuzzing::{mutate_baked, CHANGE_BYTES};
use portalnav::{BakeConfig, Grid, Level, NavMesh};

#[path = "common.rs"]
mod common;

fn seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let grid = Grid::parse(
            "type octile\nheight 6\nwidth 12\nmap\n............\n.@@@@..@@@@.\n............\n.@@..@@@..@.\n............\n.....@@.....",
            "seed.map",
        )
        .expect("the seed grid parses")
        .to_level();
        let small = BakeConfig {
            cluster_size: 2,
            ..BakeConfig::default()
        };
        let tiled = BakeConfig {
            tile_size: Some(4.0),
            cluster_size: 3,
            ..BakeConfig::default()
        };
        let moba = Level::from_json_str(include_str!("../../data/levels/moba_lanes.json"))
            .expect("the bundled level parses");
        let base = Level::from_json_str(include_str!("../../data/levels/rts_base.json"))
            .expect("the bundled level parses");
        [
            (&grid, &small),
            (&grid, &tiled),
            (&moba, &BakeConfig::default()),
            (&base, &BakeConfig::default()),
        ]
        .iter()
        .map(|(level, config)| {
            let mesh = NavMesh::bake(level, config).expect("the seeds bake");
            mesh.to_bytes().expect("the seeds encode")
        })
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let seeds = seeds();
    let seed = &seeds[usize::from(pick) % seeds.len()];
    let changes = usize::from(pick / 16) % 8 + 1;
    let script = &rest[..rest.len().min(changes * CHANGE_BYTES)];
    let points = &rest[script.len()..];
    let Some(file) = mutate_baked(seed, script) else {
        return;
    };
    if let Ok(mesh) = NavMesh::from_bytes(&file) {
        common::check_baked(&mesh);
        common::poke(&mesh, points);
    }
});
