//! Queries on grids checked against the grid itself: every path starts and
//! ends where asked and stays in free cells, and every raycast agrees with
//! the cells its segment crosses. The first bytes draw the grid.
#![no_main]

use glam::vec2;
use libfuzzer_sys::fuzz_target;
use portalnav::{BakeConfig, Grid, NavMesh, NavQuery, QueryFilter};

#[path = "../../tests/suite/common/mod.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let (w, h) = (usize::from(data[0] % 12) + 1, usize::from(data[1] % 12) + 1);
    let cells = w * h;
    let bits = &data[2..];
    if bits.len() * 8 < cells {
        return;
    }
    let free: Vec<bool> = (0..cells)
        .map(|i| bits[i / 8] & (1 << (i % 8)) == 0)
        .collect();
    let queries = &bits[cells.div_ceil(8)..];
    let grid = Grid::from_mask(w, h, free.clone());
    let config = BakeConfig {
        cluster_size: 3,
        ..BakeConfig::default()
    };
    let Ok(mesh) = NavMesh::bake(&grid.to_level(), &config) else {
        return;
    };
    let check = oracle::CheckGrid::from_mask(w as i64, h as i64, free);
    let centre = |b: u8| {
        let i = usize::from(b) % cells;
        vec2((i % w) as f32 + 0.5, (i / w) as f32 + 0.5)
    };
    let mut query = NavQuery::new();
    for pair in queries.chunks_exact(2).take(32) {
        let (a, b) = (centre(pair[0]), centre(pair[1]));
        if mesh.locate(a).is_none() || mesh.locate(b).is_none() {
            continue;
        }
        for hierarchy in [true, false] {
            query.set_use_hierarchy(hierarchy);
            if let Ok(path) = query.find_path(&mesh, a, b, &QueryFilter::default()) {
                let p = path.waypoints();
                assert_eq!((p[0], p[p.len() - 1]), (a, b), "runs from start to goal");
                for s in p.windows(2) {
                    if let Some(problem) = check.segment_problem(s[0], s[1]) {
                        panic!("path segment {} -> {} {problem}", s[0], s[1]);
                    }
                }
            }
        }
        let ray = query
            .raycast(&mesh, a, b)
            .expect("the start is on the mesh");
        let blocked = check.segment_problem(a, b);
        assert_eq!(
            ray.is_some(),
            blocked.is_some(),
            "raycast {a} -> {b}: {blocked:?}"
        );
    }
});
