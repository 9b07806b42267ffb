//! Times a map's whole scenario list answered one by one on one thread
//! against one `BatchQuery` call (rayon's threads), hierarchy on; then a
//! group move: the first 1,000 scenario starts sent to the last scenario's
//! goal, one by one against one `NavQuery::find_paths_to` call (one thread),
//! and the same group sent to arrival slots 1 unit apart
//! (`NavQuery::find_paths_to_slots`).
//!
//! `cargo run --release --example batch_cost -- data/maps/Aurora.map`
use std::time::Instant;

use portalnav::{BakeConfig, BatchQuery, Level, NavMesh, NavQuery, QueryFilter, Scenario};

fn main() {
    let map = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/maps/Aurora.map".to_string());
    let level = Level::from_file(&map).expect("map");
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bake");
    let scen = Scenario::load_file(format!("{map}.scen")).expect("scenarios");
    let requests: Vec<_> = scen
        .iter()
        .map(|s| (s.start_point(), s.goal_point()))
        .collect();
    let filter = QueryFilter::default();
    let (mut query, mut batch) = (NavQuery::new(), BatchQuery::new());
    let mut path = portalnav::Path::default();
    let (mut alone, mut batched) = (Vec::new(), Vec::new());
    // one loop after the other: rayon's threads, still looking for work
    // after a batch, would otherwise share the cores with the loop one by one
    for _ in 0..7 {
        let t = Instant::now();
        for &(a, b) in &requests {
            let _ = query.find_path_into(&mesh, a, b, &filter, &mut path);
        }
        alone.push(t.elapsed().as_secs_f64() * 1e3);
    }
    for _ in 0..7 {
        let t = Instant::now();
        batch.find_paths(&mesh, &requests, &filter);
        batched.push(t.elapsed().as_secs_f64() * 1e3);
    }
    alone.sort_by(f64::total_cmp);
    batched.sort_by(f64::total_cmp);
    println!(
        "{map}: {} requests, one by one {:.1} ms, batch {:.1} ms on {} threads ({:.2}x), median of 7",
        requests.len(),
        alone[3],
        batched[3],
        rayon::current_num_threads(),
        alone[3] / batched[3]
    );

    let goal = scen.last().expect("a scenario").goal_point();
    let starts: Vec<_> = scen.iter().take(1000).map(|s| s.start_point()).collect();
    let (mut alone, mut group) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        for &a in &starts {
            let _ = query.find_path_into(&mesh, a, goal, &filter, &mut path);
        }
        alone.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let paths = query.find_paths_to(&mesh, &starts, goal, &filter);
        group.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(paths.len(), starts.len());
    }
    alone.sort_by(f64::total_cmp);
    group.sort_by(f64::total_cmp);
    println!(
        "{map}: {} units to one goal, one by one {:.1} ms, group move {:.1} ms ({:.2}x), median of 7",
        starts.len(),
        alone[3],
        group[3],
        alone[3] / group[3]
    );

    let mut slots = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let paths = query.find_paths_to_slots(&mesh, &starts, goal, 1.0, &filter);
        slots.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(paths.len(), starts.len());
    }
    slots.sort_by(f64::total_cmp);
    println!(
        "{map}: the same units to arrival slots 1 unit apart {:.1} ms, median of 7",
        slots[3]
    );
}
