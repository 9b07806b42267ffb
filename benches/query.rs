//! Queries side by side in one process on the same Moving AI scenarios:
//! portalnav through its nav-point hierarchy, portalnav flat (the same mesh,
//! region-level search only), polyanya 0.18 (mesh from the same
//! triangulation, merged and baked) and grid A* (pathfinding crate,
//! 8-connected, no corner cutting).
//!
//! `cargo bench --bench query` prints per map: median and mean microseconds of
//! each, the time ratios, and mean and 99th percentile of portalnav length /
//! polyanya length for both modes. Every answer is checked: the same problems
//! must be solved by all. Grid A* runs on every 10th problem to keep the run short.
//!
//! Timing: each engine runs the whole list back to back, as a game queries one
//! engine. Portalnav (both modes) and polyanya take turns for [`ROUNDS`]
//! rounds, in an order that rotates each round, and a problem's time is its
//! fastest round: the warm-cache best case of each engine, medians and means
//! over the problems. Taking turns puts the engines under the same drift of
//! a shared machine's speed, and spares the engine that happens to run first
//! after the bake from paying alone for cold caches (BENCHMARKS.md has how
//! far one pass drifts). Grid A* (ms per query, for scale only) gets one
//! untimed pass and one timed, so the grid/hierarchical column compares one
//! pass with a best of [`ROUNDS`].

#[path = "common/maps.rs"]
mod maps;
#[path = "common/peers.rs"]
mod peers;

use std::time::Instant;

use portalnav::{bake, BakeConfig, Grid, NavMesh, NavQuery, Path, QueryFilter, Scenario};

/// Rounds each engine runs the scenario list; a problem's time is its
/// fastest. `PORTALNAV_BENCH_ROUNDS=1` gives one pass per engine.
const ROUNDS: usize = 3;

fn rounds() -> usize {
    match std::env::var("PORTALNAV_BENCH_ROUNDS") {
        Err(_) => ROUNDS,
        Ok(r) => match r.parse() {
            Ok(r) if r > 0 => r,
            _ => panic!("PORTALNAV_BENCH_ROUNDS must be a whole number above 0, not {r:?}"),
        },
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v.iter().sum::<f64>() / v.len() as f64)
}

fn mean_p99(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let p99 = v
        .get((v.len() * 99 / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(1.0);
    (mean, p99)
}

fn main() {
    let (dir, named) = (maps::dir(), maps::named());
    println!("| map | hierarchical median/mean us | flat median/mean us | polyanya median/mean us | grid A* median/mean us | polyanya/hierarchical | polyanya/flat | grid/hierarchical | hierarchical length / polyanya mean, p99 | flat length / polyanya mean, p99 |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let (mut speedups, mut flat_speedups) = (Vec::new(), Vec::new());
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
        if !named(name) {
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
        let mut flat = NavQuery::new();
        flat.set_use_hierarchy(false);
        let mut path = Path::default();
        let filter = QueryFilter::default();
        let n = scens.len();
        let (mut ours, mut flat_t, mut theirs) = (
            vec![f64::INFINITY; n],
            vec![f64::INFINITY; n],
            vec![f64::INFINITY; n],
        );
        let (mut hier_len, mut flat_len, mut poly_len) =
            (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
        for round in 0..rounds() {
            for engine in (0..3).map(|k| (k + round) % 3) {
                if engine == 2 {
                    for (i, s) in scens.iter().enumerate() {
                        let t = Instant::now();
                        let len =
                            peers::polyanya_path_length(&peer, s.start_point(), s.goal_point());
                        theirs[i] = theirs[i].min(t.elapsed().as_secs_f64() * 1e6);
                        poly_len[i] = len.expect("polyanya solves every scenario");
                    }
                    continue;
                }
                let (query, times, lengths) = if engine == 0 {
                    (&mut q, &mut ours, &mut hier_len)
                } else {
                    (&mut flat, &mut flat_t, &mut flat_len)
                };
                for (i, s) in scens.iter().enumerate() {
                    let t = Instant::now();
                    query
                        .find_path_into(&mesh, s.start_point(), s.goal_point(), &filter, &mut path)
                        .expect("portalnav solves every scenario");
                    times[i] = times[i].min(t.elapsed().as_secs_f64() * 1e6);
                    lengths[i] = path.length();
                }
            }
        }
        let mut grid_t = Vec::new();
        let (mut ratios, mut flat_ratios) = (Vec::new(), Vec::new());
        for i in 0..n {
            if poly_len[i] > 0.0 {
                ratios.push(f64::from(hier_len[i]) / f64::from(poly_len[i]));
                flat_ratios.push(f64::from(flat_len[i]) / f64::from(poly_len[i]));
            }
        }
        for s in scens.iter().step_by(10) {
            // untimed pass
            grid_peer.astar_length(
                (s.start.0 as usize, s.start.1 as usize),
                (s.goal.0 as usize, s.goal.1 as usize),
            );
        }
        for s in scens.iter().step_by(10) {
            let t = Instant::now();
            let g = grid_peer.astar_length(
                (s.start.0 as usize, s.start.1 as usize),
                (s.goal.0 as usize, s.goal.1 as usize),
            );
            grid_t.push(t.elapsed().as_secs_f64() * 1e6);
            assert!((g.expect("grid A* solves it") - s.optimal).abs() <= s.tolerance + 1e-6);
        }
        let (om, oa) = stats(ours);
        let (fm, fa) = stats(flat_t);
        let (pm, pa) = stats(theirs);
        let (gm, ga) = stats(grid_t);
        let (rm, r99) = mean_p99(ratios);
        let (frm, fr99) = mean_p99(flat_ratios);
        if grid.width() >= 512 || grid.height() >= 512 {
            speedups.push(pm / om);
            flat_speedups.push(pm / fm);
        }
        println!("| {name} | {om:.1} / {oa:.1} | {fm:.1} / {fa:.1} | {pm:.1} / {pa:.1} | {gm:.1} / {ga:.1} | {:.1}x | {:.2}x | {:.0}x | {rm:.4}, {r99:.4} | {frm:.4}, {fr99:.4} |", pm / om, pm / fm, gm / om);
    }
    let geo = |v: &[f64]| (v.iter().map(|s| s.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    if !speedups.is_empty() {
        println!(
            "geometric mean of polyanya/portalnav median time over maps of 512 cells or more: hierarchical {:.2}x, flat {:.2}x",
            geo(&speedups),
            geo(&flat_speedups)
        );
    }
}
