//! Times runtime obstacle edits on a tiled bake of a map: add and remove one
//! building at many places, with and without the hierarchy, and says
//! whether the tiled mesh kept a hierarchy.
//!
//! `cargo run --release --example edit_cost -- data/maps/den520d.map [TILE] [flat|hierarchy]`
//! (`flat`: without the hierarchy only; `hierarchy`: with it only)
use std::time::Instant;

use glam::vec2;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter, Scenario, TileCache};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/maps/den520d.map".to_string());
    let tile: f32 = args.next().map_or(32.0, |t| t.parse().expect("tile size"));
    let only = args.next();
    let flat_only = only.as_deref() == Some("flat");
    let hierarchy_only = only.as_deref() == Some("hierarchy");
    let level = Level::from_file(&path).expect("level");
    for corridors in [false, true] {
        if (corridors && flat_only) || (!corridors && hierarchy_only) {
            continue;
        }
        let config = BakeConfig {
            tile_size: Some(tile),
            corridors,
            ..BakeConfig::default()
        };
        let started = Instant::now();
        let mut cache = TileCache::new(&level, &config).expect("bake");
        let bake_ms = started.elapsed().as_secs_f64() * 1e3;
        let b = cache.mesh().bounds();
        let mut add = Vec::new();
        let mut remove = Vec::new();
        for k in 0..40 {
            let f = (k as f32 + 0.5) / 40.0;
            let at = vec2(
                b.min.x + (b.max.x - b.min.x) * f,
                b.min.y + (b.max.y - b.min.y) * ((f * 7.3) % 1.0),
            );
            let outline = [
                at,
                at + vec2(6.0, 0.0),
                at + vec2(6.0, 4.0),
                at + vec2(0.0, 4.0),
            ];
            let t = Instant::now();
            let id = cache.add_obstacle(&outline).expect("add");
            add.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            cache.remove_obstacle(id).expect("remove");
            remove.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        // a tile too small for the hierarchy's byte bound leaves none, though
        // every edit still builds (and drops) it
        let hierarchy = match (corridors, cache.mesh().hierarchy_stats()) {
            (false, _) => String::new(),
            (true, Some(h)) => format!(", hierarchy at aim {} ({} bytes)", h.cluster_aim, h.bytes),
            (true, None) => ", no hierarchy kept (over its byte bound)".to_string(),
        };
        println!(
            "{path} tile {tile} corridors {corridors}: bake {bake_ms:.1} ms, {} regions{hierarchy}; add median {:.0} us, remove median {:.0} us",
            cache.mesh().region_count(),
            median(&mut add),
            median(&mut remove)
        );
        if cache.table_pending().is_some() {
            // queries while the edit's all-pairs table is pending (they
            // search L2), then after refreshing it
            let scen = format!("{path}.scen");
            let problems = Scenario::load_file(&scen).unwrap_or_default();
            let mut query = NavQuery::new();
            let filter = QueryFilter::default();
            let mut time_queries = |mesh: &NavMesh| {
                let mut us: Vec<f64> = problems
                    .iter()
                    .map(|s| {
                        let t = Instant::now();
                        let _ = query.find_path(mesh, s.start_point(), s.goal_point(), &filter);
                        t.elapsed().as_secs_f64() * 1e6
                    })
                    .collect();
                if us.is_empty() {
                    0.0
                } else {
                    median(&mut us)
                }
            };
            let pending_us = time_queries(cache.mesh());
            // the first rows' worth picks the landmarks the L2 search uses
            // until the table is in
            let t = Instant::now();
            cache.refresh_table(16);
            let landmarks_ms = t.elapsed().as_secs_f64() * 1e3;
            let landmarked_us = time_queries(cache.mesh());
            let rows = cache.table_pending().map_or(0, |(left, _)| left);
            let t = Instant::now();
            let mut calls = 0;
            while !cache.refresh_table(64) {
                calls += 1;
            }
            let refresh_ms = t.elapsed().as_secs_f64() * 1e3;
            let tabled_us = time_queries(cache.mesh());
            println!(
                "  all-pairs table: landmarks in {landmarks_ms:.1} ms, then {rows} rows refreshed in \
                 {refresh_ms:.1} ms ({} calls of 64 rows); median query over {} scenarios \
                 {pending_us:.1} us pending, {landmarked_us:.1} us pending with landmarks, \
                 {tabled_us:.1} us after",
                calls + 1,
                problems.len()
            );
        }
    }
}
