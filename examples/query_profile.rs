//! Answers one map's scenarios many times on one baked mesh, for profiling
//! the query alone (`perf record`), without the bake in the samples.
//!
//! ```sh
//! cargo run --release -- bake data/maps/Aurora.map -o aurora.nav
//! cargo run --release --example query_profile -- aurora.nav data/maps/Aurora.map.scen 20
//! ```
//!
//! With `group` after TIMES it profiles a group move instead: the first
//! 1,000 scenario starts sent to the last scenario's goal
//! (`NavQuery::find_paths_to_into`, over the paths of the last move), TIMES
//! times.

use portalnav::{NavMesh, NavQuery, QueryFilter, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: query_profile FILE.nav SCEN [TIMES [group]]";
    let nav = args.next().ok_or(usage)?;
    let scen = args.next().ok_or(usage)?;
    let times: usize = args.next().map_or(Ok(20), |t| t.parse())?;
    let mesh = NavMesh::load(&nav)?;
    let problems = Scenario::load_file(&scen)?;
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    if args.next().is_some_and(|a| a == "group") {
        let goal = problems.last().ok_or("no scenarios")?.goal_point();
        let starts: Vec<_> = problems
            .iter()
            .take(1000)
            .map(|p| p.start_point())
            .collect();
        // the units' paths, kept from one move to the next as a game keeps them
        let mut paths = Vec::new();
        let started = std::time::Instant::now();
        let mut total = 0.0f64;
        for _ in 0..times {
            query.find_paths_to_into(&mesh, &starts, goal, &filter, &mut paths);
            for path in paths.iter().flatten() {
                total += f64::from(path.length());
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / times as f64;
        println!(
            "{nav}: {ms:.2} ms per group move of {} units (length sum {total:.0})",
            starts.len()
        );
        return Ok(());
    }
    // one untimed round for the expansions, so the timed loop does only queries
    let mut expansions: Vec<u32> = problems
        .iter()
        .filter_map(|p| {
            let found = query.find_path(&mesh, p.start_point(), p.goal_point(), &filter);
            found.ok().map(|_| query.last_expansions())
        })
        .collect();
    expansions.sort_unstable();
    let median = expansions.get(expansions.len() / 2).copied().unwrap_or(0);
    let started = std::time::Instant::now();
    let mut total = 0.0f64;
    for _ in 0..times {
        for p in &problems {
            if let Ok(path) = query.find_path(&mesh, p.start_point(), p.goal_point(), &filter) {
                total += f64::from(path.length());
            }
        }
    }
    let us = started.elapsed().as_secs_f64() * 1e6 / (times * problems.len()) as f64;
    println!("{nav}: {us:.2} us per query, mean over {} problems (length sum {total:.0}), median expansions {median}", problems.len());
    Ok(())
}
