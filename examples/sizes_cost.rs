//! What serving four agent radii from one baked file costs, per level: the
//! baked file and its bake against one eroded bake per radius; deriving each
//! radius's mesh (`NavMesh::for_radius`); the median query at each radius
//! against radius 0 over the requests both answered (starts and goals near
//! walls snapped out by up to the radius plus one, radius 0 too); path length against polyanya 0.18 on
//! the same eroded space (the optimum there); and one runtime edit (a 4 x 4
//! building, tiles of 64, no hierarchy) for radius 0 alone against the edit
//! of a cache whose mesh has every radius derived (the edit carries them).
//!
//! `cargo run --release --example sizes_cost -- [LEVEL ...]` (default:
//! Aurora, Berlin_0_512 and the RTS level; grid maps get radii 0.45, 0.95,
//! 1.45 and 2.45, JSON levels a quarter, a half, three quarters and all of
//! their largest agent class).
use std::time::Instant;

use glam::{vec2, Vec2};
use portalnav::{bake, BakeConfig, Level, NavMesh, NavQuery, QueryFilter, Scenario, TileCache};

#[path = "../benches/common/peers.rs"]
mod peers;
#[path = "../benches/common/stats.rs"]
mod stats;

use stats::median;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// xorshift in 0..1
struct Random(u64);

impl Random {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 1_000_000) as f32 / 1_000_000.0
    }
}

/// Per request, its best µs over three rounds if it was answered.
fn query_cost(mesh: &NavMesh, requests: &[(Vec2, Vec2)], filter: &QueryFilter) -> Vec<Option<f64>> {
    let mut query = NavQuery::new();
    let mut path = portalnav::Path::default();
    let mut best = vec![Some(f64::INFINITY); requests.len()];
    for _ in 0..3 {
        for (i, &(a, b)) in requests.iter().enumerate() {
            let t = Instant::now();
            let ok = query.find_path_into(mesh, a, b, filter, &mut path).is_ok();
            let us = t.elapsed().as_secs_f64() * 1e6;
            best[i] = best[i].filter(|_| ok).map(|b| b.min(us));
        }
    }
    best
}

/// The medians of `a` and `b` over the requests both answered, and how many.
fn medians_of_both(a: &[Option<f64>], b: &[Option<f64>]) -> (f64, f64, usize) {
    let both: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .filter_map(|(&x, &y)| Some((x?, y?)))
        .collect();
    let n = both.len();
    let (xs, ys) = both.into_iter().unzip();
    (median(xs), median(ys), n)
}

/// How many requests were answered.
fn answered(times: &[Option<f64>]) -> usize {
    times.iter().filter(|t| t.is_some()).count()
}

/// Starts and goals near walls are moved out by up to this beyond the
/// radius, at every radius (radius 0 too), so that each radius answers
/// alike what it can.
fn snapping(r: f32) -> QueryFilter {
    QueryFilter {
        snap_distance: r + 1.0,
        ..QueryFilter::default()
    }
}

fn main() {
    let mut levels: Vec<String> = std::env::args().skip(1).collect();
    if levels.is_empty() {
        levels = [
            "data/maps/Aurora.map",
            "data/maps/Berlin_0_512.map",
            "data/levels/rts_base.json",
        ]
        .map(String::from)
        .to_vec();
    }
    for path in levels {
        let level = Level::from_file(&path).expect("level");
        let grid_map = path.ends_with(".map");
        let largest = level.agents.iter().map(|a| a.radius).fold(0.0, f32::max);
        let radii = if grid_map {
            vec![0.45, 0.95, 1.45, 2.45]
        } else {
            [0.25, 0.5, 0.75, 1.0].map(|k| k * largest).to_vec()
        };
        let max = radii[radii.len() - 1];
        let config = BakeConfig {
            max_radius: Some(max),
            ..BakeConfig::default()
        };
        let t = Instant::now();
        let base = NavMesh::bake(&level, &config).expect("bake");
        let base_ms = ms(t);
        let base_bytes = base.to_bytes().expect("bytes").len();

        // requests: scenario pairs of a grid map, random points of a level
        let requests: Vec<(Vec2, Vec2)> = if grid_map {
            let scen = Scenario::load_file(format!("{path}.scen")).expect("scenarios");
            let n = scen.len().min(1000);
            (0..n)
                .map(|k| &scen[k * scen.len() / n])
                .map(|s| (s.start_point(), s.goal_point()))
                .collect()
        } else {
            let (lo, hi) = (base.bounds().min, base.bounds().max);
            let mut random = Random(0x9e37_79b9_7f4a_7c15);
            let mut point = || lo + (hi - lo) * vec2(random.next(), random.next());
            (0..1000).map(|_| (point(), point())).collect()
        };
        let zero = query_cost(&base, &requests, &snapping(0.0));
        let zero_all: Vec<f64> = zero.iter().flatten().copied().collect();
        println!(
            "{path}: radius 0: {} regions, bake {base_ms:.0} ms, {base_bytes} bytes (serving up to {max}); \
             {} of {} requests solved, median {:.2} us",
            base.region_count(),
            zero_all.len(),
            requests.len(),
            median(zero_all.clone())
        );

        let mut per_radius_bytes = 0;
        let mut per_radius_ms = 0.0;
        for &r in &radii {
            let t = Instant::now();
            let sized = base.for_radius(r).expect("radius");
            let derive_ms = ms(t);
            let eroded = BakeConfig {
                agent_radius: r,
                ..config.clone()
            };
            let t = Instant::now();
            let fresh = NavMesh::bake(&level, &eroded).expect("eroded bake");
            let fresh_ms = ms(t);
            per_radius_ms += fresh_ms;
            per_radius_bytes += fresh.to_bytes().expect("bytes").len();
            let filter = snapping(r);
            let times = query_cost(&sized, &requests, &filter);
            let (us, zero_us, both) = medians_of_both(&times, &zero);
            // lengths against polyanya on the same eroded space
            let soup = bake::triangulate(&level, &eroded).expect("triangles");
            let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
            peers::polyanya_prepare(&mut peer);
            let mut query = NavQuery::new();
            let (mut ratios, mut theirs_us) = (Vec::new(), Vec::new());
            for &(a, b) in &requests {
                let Ok(ours) = query.find_path(&sized, a, b, &filter) else {
                    continue;
                };
                let w = ours.waypoints();
                let (a, b) = (w[0], w[w.len() - 1]);
                let t = Instant::now();
                let optimum = peers::polyanya_path_length(&peer, a, b);
                theirs_us.push(t.elapsed().as_secs_f64() * 1e6);
                if let Some(o) = optimum.filter(|&o| o > 1e-3) {
                    ratios.push(f64::from(ours.length() / o));
                }
            }
            let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
            let worst = ratios.iter().copied().fold(0.0, f64::max);
            println!(
                "  radius {r}: derived in {derive_ms:.0} ms ({} regions, {}), eroded bake {fresh_ms:.0} ms; \
                 {} solved, median {us:.2} us against {zero_us:.2} at radius 0 ({:.2}x, the {both} \
                 both answered), polyanya {:.1} us; \
                 length / polyanya mean {mean:.4}, max {worst:.4} over {} paths",
                sized.region_count(),
                if sized.hierarchy_stats().is_some() { "hierarchy" } else { "flat" },
                answered(&times),
                us / zero_us,
                median(theirs_us),
                ratios.len()
            );
        }
        println!(
            "  one file: {base_bytes} bytes against {per_radius_bytes} for one eroded file per radius ({:.2}x); \
             bake {base_ms:.0} ms against {per_radius_ms:.0} ms",
            per_radius_bytes as f64 / base_bytes as f64
        );

        // one building for radius 0, and for every radius
        let tiled = BakeConfig {
            tile_size: Some(64.0),
            corridors: false,
            ..config.clone()
        };
        // the same buildings on two caches: one serving radius 0 only, one
        // with every radius derived first, which each edit then carries
        let mut alone_cache = TileCache::new(&level, &tiled).expect("tiles");
        let mut all_cache = TileCache::new(&level, &tiled).expect("tiles");
        for &r in &radii {
            all_cache.mesh().for_radius(r).expect("radius");
        }
        let (lo, hi) = (
            alone_cache.mesh().bounds().min,
            alone_cache.mesh().bounds().max,
        );
        let mut random = Random(7);
        let (mut alone, mut all) = (Vec::new(), Vec::new());
        for _ in 0..9 {
            let at =
                (lo + (hi - lo - Vec2::splat(4.0)) * vec2(random.next(), random.next())).floor();
            let square = [
                at,
                at + vec2(4.0, 0.0),
                at + vec2(4.0, 4.0),
                at + vec2(0.0, 4.0),
            ];
            let t = Instant::now();
            alone_cache.add_obstacle(&square).expect("edit");
            alone.push(ms(t));
            let t = Instant::now();
            all_cache.add_obstacle(&square).expect("edit");
            for &r in &radii {
                all_cache.mesh().for_radius(r).expect("radius");
            }
            all.push(ms(t));
        }
        println!(
            "  one building (tiles of 64, flat), median of 9: radius 0 alone {:.1} ms, with the {} radii carried {:.1} ms ({:.1}x)",
            median(alone.clone()),
            radii.len(),
            median(all.clone()),
            median(all) / median(alone)
        );
    }
}
