//! Runtime obstacle edits on small grids, checked against two oracles: after
//! every edit the mesh validates and is byte for byte a fresh bake of the
//! level with the surviving obstacles (and so is the mesh it carries for a
//! wider agent, when one was derived first), and paths stay in the cells the
//! surviving buildings leave free. The first bytes draw the grid and pick the
//! tile size and whether to carry a radius, and which; then 4 bytes per edit
//! (add a building of whole cells, or remove one, the old mesh held across
//! the edit or not), and pairs of cells to path between.
#![no_main]

use glam::vec2;
use libfuzzer_sys::fuzz_target;
use portalnav::{
    BakeConfig, BakeError, EditError, Grid, NavMesh, NavQuery, QueryFilter, SizedMesh, TileCache,
};

#[path = "../../tests/suite/common/mod.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (w, h) = (usize::from(data[0] % 12) + 1, usize::from(data[1] % 12) + 1);
    let tile = f32::from(data[2] % 6) + 1.0;
    // a quarter to a whole cell, or none
    let radius = match data[2] / 6 % 5 {
        0 => None,
        k => Some(f32::from(k) * 0.25),
    };
    let cells = w * h;
    let bits = &data[3..];
    if bits.len() * 8 < cells {
        return;
    }
    let free: Vec<bool> = (0..cells)
        .map(|i| bits[i / 8] & (1 << (i % 8)) == 0)
        .collect();
    let rest = &bits[cells.div_ceil(8)..];
    let edit_count = rest.first().map_or(0, |&b| usize::from(b % 8));
    let rest = rest.get(1..).unwrap_or(&[]);
    let level = Grid::from_mask(w, h, free.clone()).to_level();
    let config = BakeConfig {
        cluster_size: 3,
        tile_size: Some(tile),
        max_radius: Some(1.0),
        ..BakeConfig::default()
    };
    let Ok(mut cache) = TileCache::new(&level, &config) else {
        return;
    };
    // the mesh for a wider agent, derived once and then carried by the edits
    let wider = |mesh: &NavMesh, r: f32| match mesh.for_radius(r) {
        Ok(SizedMesh::Derived(m)) => Some(m.to_bytes().expect("encodes")),
        Ok(SizedMesh::Baked(_)) => panic!("a radius above the bake's is derived"),
        Err(_) => None,
    };
    if let Some(r) = radius {
        wider(cache.mesh(), r);
    }
    // buildings of whole cells, with their cells
    let mut live: Vec<(portalnav::ObstacleId, [usize; 4])> = Vec::new();
    for op in rest.chunks_exact(4).take(edit_count) {
        // a handle on the mesh the edit replaces, given back after it (its
        // storage, and its carried meshes', serve the next edit then)
        let held = (op[0] % 8 >= 4).then(|| cache.shared_mesh());
        if op[0] % 4 == 0 && !live.is_empty() {
            let (id, _) = live.swap_remove(usize::from(op[1]) % live.len());
            cache
                .remove_obstacle(id)
                .expect("a live obstacle is removed");
        } else {
            let (x, y) = (usize::from(op[1]) % w, usize::from(op[2]) % h);
            let (bw, bh) = (usize::from(op[3] % 4) + 1, usize::from(op[3] / 4 % 4) + 1);
            let (x1, y1) = ((x + bw).min(w), (y + bh).min(h));
            let (fx, fy, gx, gy) = (x as f32, y as f32, x1 as f32, y1 as f32);
            let outline = [vec2(fx, fy), vec2(gx, fy), vec2(gx, gy), vec2(fx, gy)];
            match cache.add_obstacle(&outline) {
                Ok(id) => live.push((id, [x, y, x1, y1])),
                // a building over everything walkable: refused, as a fresh
                // bake of the level with it is
                Err(EditError::Bake(BakeError::NothingWalkable { .. })) => {
                    let mut level = cache.level_with_obstacles();
                    level.obstacles.push(outline.to_vec());
                    let fresh = NavMesh::bake(&level, &config);
                    assert!(
                        matches!(fresh, Err(BakeError::NothingWalkable { .. })),
                        "refused an edit that a fresh bake serves"
                    );
                }
                Err(e) => panic!("a building is refused: {e}"),
            }
        }
        if let Some(held) = held {
            cache.release(held);
        }
        cache.mesh().validate().expect("an edited mesh validates");
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config);
        let edited = cache.mesh().to_bytes().expect("encodes");
        match &fresh {
            Ok(m) => assert!(
                m.to_bytes().expect("encodes") == edited,
                "the edited mesh differs from a fresh bake"
            ),
            Err(e) => panic!("the fresh bake fails where the edits did not: {e}"),
        }
        if let (Some(r), Ok(fresh)) = (radius, &fresh) {
            assert!(
                wider(cache.mesh(), r) == wider(fresh, r),
                "the mesh carried for radius {r} differs from a fresh bake's"
            );
        }
    }
    let mut stamped = free;
    for (_, [x0, y0, x1, y1]) in &live {
        for y in *y0..*y1 {
            for x in *x0..*x1 {
                stamped[y * w + x] = false;
            }
        }
    }
    let check = oracle::CheckGrid::from_mask(w as i64, h as i64, stamped);
    let centre = |b: u8| {
        let i = usize::from(b) % cells;
        vec2((i % w) as f32 + 0.5, (i / w) as f32 + 0.5)
    };
    let rest = &rest[(4 * edit_count).min(rest.len())..];
    let mut query = NavQuery::new();
    let mesh = cache.mesh();
    for pair in rest.chunks_exact(2).take(16) {
        let (a, b) = (centre(pair[0]), centre(pair[1]));
        if mesh.locate(a).is_none() || mesh.locate(b).is_none() {
            continue;
        }
        if let Ok(path) = query.find_path(mesh, a, b, &QueryFilter::default()) {
            for s in path.waypoints().windows(2) {
                if let Some(problem) = check.segment_problem(s[0], s[1]) {
                    panic!("path segment {} -> {} {problem}", s[0], s[1]);
                }
            }
        }
    }
});
