//! Queries side by side in one process on the same Moving AI scenarios:
//! portalnav, polyanya 0.18 (mesh from the same triangulation, merged and
//! baked) and grid A* (pathfinding crate, 8-connected, no corner cutting).
//!
//! `cargo bench --bench query` prints per map: median and mean microseconds of
//! each, the time ratios, and mean and 99th percentile of portalnav length /
//! polyanya length. Every answer is checked: the same problems must be solved
//! by all three. Grid A* runs on every 10th problem to keep the run short.

#[path = "common/peers.rs"]
mod peers;

use std::path::PathBuf;
use std::time::Instant;

use portalnav::{bake, BakeConfig, Grid, NavMesh, NavQuery, Path, QueryFilter, Scenario};

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v.iter().sum::<f64>() / v.len() as f64)
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai");
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!("| map | portalnav median/mean us | polyanya median/mean us | grid A* median/mean us | polyanya/portalnav (median) | grid/portalnav (median) | length ratio mean | p99 |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut speedups = Vec::new();
    for name in [
        "Aurora",
        "BigGameHunters",
        "Caldera",
        "AR0011SR",
        "8room_000",
        "Berlin_0_512",
        "den520d",
        "arena",
    ] {
        if !only.is_empty() && !only.iter().any(|o| o == name) {
            continue;
        }
        let grid = Grid::from_file(dir.join(format!("{name}.map"))).expect("map");
        let level = grid.to_level();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        let soup = bake::triangulate(&level, &BakeConfig::default()).expect("triangulates");
        let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
        peers::polyanya_prepare(&mut peer);
        let grid_peer = peers::GridPeer::new(grid.width(), grid.height(), grid.mask().to_vec());
        let scens = Scenario::load_file(dir.join(format!("{name}.map.scen"))).expect("scen");

        let mut q = NavQuery::new();
        let mut path = Path::default();
        let filter = QueryFilter::default();
        let (mut ours, mut theirs, mut grid_t, mut ratios) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, s) in scens.iter().enumerate() {
            let (a, b) = (s.start_point(), s.goal_point());
            let t = Instant::now();
            q.find_path_into(&mesh, a, b, &filter, &mut path)
                .expect("portalnav solves every scenario");
            ours.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let len = peers::polyanya_path_length(&peer, a, b);
            theirs.push(t.elapsed().as_secs_f64() * 1e6);
            let len = len.expect("polyanya solves every scenario");
            if len > 0.0 {
                ratios.push(f64::from(path.length()) / f64::from(len));
            }
            if i % 10 == 0 {
                let t = Instant::now();
                let g = grid_peer.astar_length(
                    (s.start.0 as usize, s.start.1 as usize),
                    (s.goal.0 as usize, s.goal.1 as usize),
                );
                grid_t.push(t.elapsed().as_secs_f64() * 1e6);
                assert!((g.expect("grid A* solves it") - s.optimal).abs() <= s.tolerance + 1e-6);
            }
        }
        let (om, oa) = stats(ours);
        let (pm, pa) = stats(theirs);
        let (gm, ga) = stats(grid_t);
        ratios.sort_by(f64::total_cmp);
        let mean_ratio = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let p99 = ratios[(ratios.len() * 99 / 100).min(ratios.len() - 1)];
        if grid.width() >= 512 || grid.height() >= 512 {
            speedups.push(pm / om);
        }
        println!("| {name} | {om:.1} / {oa:.1} | {pm:.1} / {pa:.1} | {gm:.1} / {ga:.1} | {:.2}x | {:.1}x | {mean_ratio:.4} | {p99:.4} |", pm / om, gm / om);
    }
    if !speedups.is_empty() {
        let geo = (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp();
        println!("geometric mean of polyanya/portalnav median time over maps of 512 cells or more: {geo:.2}x");
    }
}
