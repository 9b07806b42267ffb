//! Moving AI `.map` grids: parsing never panics; small grids are baked (with
//! small clusters, so the hierarchy is exercised) and checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::{BakeConfig, Grid, NavMesh};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(grid) = Grid::parse(text, "fuzz.map") else {
        return;
    };
    if grid.width() * grid.height() > 64 * 64 {
        return;
    }
    let config = BakeConfig {
        cluster_size: 4,
        ..BakeConfig::default()
    };
    if let Ok(mesh) = NavMesh::bake(&grid.to_level(), &config) {
        common::check_baked(&mesh);
        common::poke(&mesh, data);
    }
});
