//! Times path following: one follower per scenario of a map walks its unit
//! to the goal at 1 unit per tick; per tick, the time of all followers'
//! answers divided by the units still walking. Reported twice: feeding each
//! unit's position (`update`, the game moved it) and moving it through the
//! follower (`move_position`: a clamped surface move, then `update`).
//!
//! `cargo run --release --example follow_cost -- data/maps/Aurora.map [units]`
use std::time::Instant;

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, PathFollower, QueryFilter, Scenario};

fn main() {
    let mut args = std::env::args().skip(1);
    let map = args
        .next()
        .unwrap_or_else(|| "data/maps/Aurora.map".to_string());
    let units: usize = args.next().map_or(1000, |n| n.parse().expect("units"));
    let level = Level::from_file(&map).expect("map");
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bake");
    let scen = Scenario::load_file(format!("{map}.scen")).expect("scenarios");
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    for moved in [false, true] {
        let mut followers = Vec::new();
        for s in scen.iter().rev().take(units) {
            let mut f = PathFollower::new();
            if f.plan(&mesh, &mut query, s.start_point(), s.goal_point(), &filter)
                .is_ok()
            {
                followers.push((f, s.start_point(), false));
            }
        }
        let mut per_unit = Vec::new();
        let (mut ticks, mut off_mesh) = (0, 0);
        loop {
            let walking = followers.iter().filter(|f| !f.2).count();
            if walking == 0 || ticks == 20_000 {
                break;
            }
            let t = Instant::now();
            for (f, position, arrived) in followers.iter_mut().filter(|f| !f.2) {
                let steering = if moved {
                    let to = *position + (f.corners()[0] - *position).clamp_length_max(1.0);
                    f.move_position(&mesh, &mut query, to)
                } else {
                    f.update(&mesh, &mut query, *position)
                }
                .expect("a walking unit");
                *position = if moved {
                    steering.position
                } else {
                    steering.position + (steering.target - steering.position).clamp_length_max(1.0)
                };
                *arrived = steering.arrived;
            }
            per_unit.push(t.elapsed().as_secs_f64() * 1e6 / walking as f64);
            off_mesh += followers
                .iter()
                .filter(|f| {
                    mesh.locate(f.1).is_none() && query.nearest_point(&mesh, f.1, 1e-3).is_none()
                })
                .count();
            ticks += 1;
        }
        per_unit.sort_by(f64::total_cmp);
        let at = |q: f64| per_unit[((per_unit.len() - 1) as f64 * q) as usize];
        let (replans, recoveries) = followers.iter().fold((0, 0), |(a, b), f| {
            (a + f.0.replans(), b + f.0.recoveries())
        });
        println!(
            "{map}: {} units, {} {ticks} ticks: {:.3} us per unit per tick median, p99 {:.3}, max {:.3}; \
             arrived {}, replans {replans}, recoveries {recoveries}, positions off the mesh {off_mesh}",
            followers.len(),
            if moved { "move_position" } else { "update" },
            at(0.5),
            at(0.99),
            at(1.0),
            followers.iter().filter(|f| f.2).count(),
        );
    }
}
