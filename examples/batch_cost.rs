//! Times 1,000 distinct scenario queries of a map (spread over its whole
//! scenario list, short and long) answered one by one on one thread,
//! through polyanya 0.18 one by one on the same thread, and as one
//! `BatchQuery` call on rayon's threads, hierarchy on; then a group move:
//! the first 1,000 scenario starts sent to the last scenario's goal, one by
//! one against one `NavQuery::find_paths_to_into` call (one thread, the
//! units' paths kept from one call to the next), and the same group sent to arrival slots 1 unit apart
//! (`NavQuery::find_paths_to_slots`).
//!
//! `cargo run --release --example batch_cost -- data/maps/Aurora.map`
use std::time::Instant;

use portalnav::{bake, BakeConfig, BatchQuery, Level, NavMesh, NavQuery, QueryFilter, Scenario};

#[path = "../benches/common/peers.rs"]
mod peers;

/// The median of seven timings (ms) of `run`.
fn median_of_7(mut run: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[3]
}

/// Median ms of 7 rounds of `starts` sent to `goal` one by one and as one
/// group move, taking turns.
fn group_against_alone(
    query: &mut NavQuery,
    mesh: &NavMesh,
    starts: &[glam::Vec2],
    goal: glam::Vec2,
) -> (f64, f64) {
    let filter = QueryFilter::default();
    let mut path = portalnav::Path::default();
    let (mut alone, mut group) = (Vec::new(), Vec::new());
    // the units' paths, kept from one order to the next as a game keeps them
    let mut paths = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for &a in starts {
            let _ = query.find_path_into(mesh, a, goal, &filter, &mut path);
        }
        alone.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        query.find_paths_to_into(mesh, starts, goal, &filter, &mut paths);
        group.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(paths.len(), starts.len());
    }
    alone.sort_by(f64::total_cmp);
    group.sort_by(f64::total_cmp);
    (alone[3], group[3])
}

fn main() {
    let map = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "data/maps/Aurora.map".to_string());
    let level = Level::from_file(&map).expect("map");
    let config = BakeConfig::default();
    let mesh = NavMesh::bake(&level, &config).expect("bake");
    let scen = Scenario::load_file(format!("{map}.scen")).expect("scenarios");
    let soup = bake::triangulate(&level, &config).expect("triangles");
    let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
    peers::polyanya_prepare(&mut peer);
    // 1,000 distinct requests, evenly over the list (which runs short to long)
    let n = scen.len().min(1000);
    let mut requests: Vec<_> = (0..n)
        .map(|k| &scen[k * scen.len() / n])
        .map(|s| (s.start_point(), s.goal_point()))
        .collect();
    requests.sort_by(|a, b| {
        (a.0.x, a.0.y, a.1.x, a.1.y)
            .partial_cmp(&(b.0.x, b.0.y, b.1.x, b.1.y))
            .expect("finite")
    });
    requests.dedup();
    let filter = QueryFilter::default();
    let (mut query, mut batch) = (NavQuery::new(), BatchQuery::new());
    let mut path = portalnav::Path::default();
    // one loop after the other: rayon's threads, still looking for work
    // after a batch, would otherwise share the cores with the loops on one
    let alone = median_of_7(|| {
        for &(a, b) in &requests {
            let _ = query.find_path_into(&mesh, a, b, &filter, &mut path);
        }
    });
    let theirs = median_of_7(|| {
        for &(a, b) in &requests {
            let _ = peers::polyanya_path_length(&peer, a, b);
        }
    });
    let batched = median_of_7(|| batch.find_paths(&mesh, &requests, &filter));
    println!(
        "{map}: {} distinct requests: polyanya one by one {theirs:.1} ms, ours one by one \
         {alone:.1} ms ({:.1}x), batch {batched:.1} ms on {} threads ({:.2}x ours one by one), \
         median of 7",
        requests.len(),
        theirs / alone,
        rayon::current_num_threads(),
        alone / batched
    );

    let goal = scen.last().expect("a scenario").goal_point();
    let starts: Vec<_> = scen.iter().take(1000).map(|s| s.start_point()).collect();
    let (alone, group) = group_against_alone(&mut query, &mesh, &starts, goal);
    println!(
        "{map}: {} units to one goal, one by one {alone:.1} ms, group move {group:.1} ms \
         ({:.2}x), median of 7",
        starts.len(),
        alone / group
    );

    // an army standing together (the 1,000 free cell centres nearest the
    // first scenario's start, on its island) sent to the same goal
    let base = scen[0].start_point();
    let island = |p: glam::Vec2| {
        mesh.locate(p)
            .and_then(|r| mesh.region(r))
            .map(|r| r.component())
    };
    let mut army: Vec<glam::Vec2> = (-40..=40)
        .flat_map(|dy| (-40..=40).map(move |dx| base + glam::vec2(dx as f32, dy as f32)))
        .filter(|&p| island(p).is_some() && island(p) == island(base))
        .collect();
    army.sort_by(|a, b| a.distance(base).total_cmp(&b.distance(base)));
    army.truncate(1000);
    let (alone, group) = group_against_alone(&mut query, &mesh, &army, goal);
    println!(
        "{map}: an army of {} units standing together to the same goal ({:.0} away), one by one \
         {alone:.1} ms, group move {group:.1} ms ({:.2}x), median of 7",
        army.len(),
        base.distance(goal),
        alone / group
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
