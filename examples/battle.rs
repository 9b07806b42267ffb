//! A small headless battle: two armies on a StarCraft map, ordered across
//! it every few seconds, buildings going up and coming down mid-battle, and
//! every unit moved by its own follower each tick at a fixed timestep.
//!
//! Per tick it runs, in order: the edits of that tick (a `TileCache`; the
//! oldest building destroyed and a new one placed in one batch), an order
//! to one army every two seconds (one `PathScheduler::submit_many` for all
//! its units, their first paths searched on rayon's threads), the request
//! scheduler within its budget of expansions and at most until 3 ms into
//! the tick (`tick_until`), and every unit's follower (a clamped move
//! towards its steering target, units spread over rayon's threads). It checks each unit's
//! position every tick against the map's grid with the buildings stamped
//! in (independently of the mesh), and prints the per-tick time (median,
//! p99, max), paths answered, replans and recoveries. With `--svg OUT` it
//! writes pictures of three moments (`OUT-0.svg`, ...).
//!
//! `cargo run --release --example battle -- [data/maps/BigGameHunters.map] [--units 2000] [--ticks 900] [--svg battle]`
use std::time::{Duration, Instant};

use glam::{vec2, Vec2};
use portalnav::{
    BakeConfig, Edit, Grid, Level, NavQuery, ObstacleId, PathFollower, PathScheduler, PathStatus,
    QueryFilter, RequestId, TileCache,
};
use rayon::prelude::*;

/// Ticks per second of the fixed timestep.
const HZ: u32 = 30;
/// World units a unit walks per tick (3 cells a second).
const SPEED: f32 = 0.1;
/// Ticks between two orders to an army.
const ORDER_EVERY: u32 = 4 * HZ;
/// Ticks between two edits (a building placed, the oldest destroyed once
/// there are more than `MAX_BUILDINGS`).
const BUILD_EVERY: u32 = 2 * HZ;
const MAX_BUILDINGS: usize = 8;
/// Search expansions the scheduler may spend per tick.
const TICK_BUDGET: u32 = 3_000;
/// Time from the start of a tick by which its navigation work (edits,
/// orders, the scheduler) should be done: the scheduler stops there even
/// with expansions left, so a tick with an edit or an order leaves its
/// searches to the next ticks.
const NAV_DEADLINE: Duration = Duration::from_millis(3);
/// Expansions of the first path a unit gets at once when ordered.
const FIRST_PATH_BUDGET: u32 = 8;

/// A small deterministic generator (xorshift64*), so runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Unit {
    army: usize,
    position: Vec2,
    follower: PathFollower,
    /// The request waiting for this unit's path, if any.
    waiting: Option<RequestId>,
    goal: Vec2,
}

/// The map's free cells with buildings stamped in: the independent check.
struct Stamped {
    width: usize,
    height: usize,
    free: Vec<bool>,
}

impl Stamped {
    fn free(&self, x: i64, y: i64) -> bool {
        x >= 0
            && y >= 0
            && (x as usize) < self.width
            && (y as usize) < self.height
            && self.free[y as usize * self.width + x as usize]
    }

    /// Whether `p` is inside an obstacle or off the map: every cell it
    /// touches (up to 1e-3) is blocked. A point on a wall is not.
    fn blocked_at(&self, p: Vec2) -> bool {
        let touching = |v: f32| {
            let k = v.round();
            if (v - k).abs() <= 1e-3 {
                [k as i64 - 1, k as i64]
            } else {
                [v.floor() as i64; 2]
            }
        };
        let (xs, ys) = (touching(p.x), touching(p.y));
        !xs.iter().any(|&x| ys.iter().any(|&y| self.free(x, y)))
    }
}

fn main() {
    let mut map = "data/maps/BigGameHunters.map".to_string();
    let (mut units_n, mut ticks, mut svg) = (2000usize, 30 * HZ, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--units" => units_n = args.next().and_then(|v| v.parse().ok()).expect("--units N"),
            "--ticks" => ticks = args.next().and_then(|v| v.parse().ok()).expect("--ticks N"),
            "--svg" => svg = args.next(),
            _ => map = a,
        }
    }
    let grid = Grid::from_file(&map).expect("a Moving AI map");
    let level = Level::from_file(&map).expect("a Moving AI map");
    let config = BakeConfig {
        tile_size: Some(32.0),
        corridors: false,
        ..BakeConfig::default()
    };
    let t = Instant::now();
    let mut cache = TileCache::new(&level, &config).expect("bake");
    println!(
        "{map}: tiled bake {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let mut stamped = Stamped {
        width: grid.width(),
        height: grid.height(),
        free: grid.mask().to_vec(),
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let filter = QueryFilter::default();

    // the largest island, by free cells
    let free_cells: Vec<(i64, i64)> = (0..stamped.height as i64)
        .flat_map(|y| (0..stamped.width as i64).map(move |x| (x, y)))
        .filter(|&(x, y)| stamped.free(x, y))
        .collect();
    let centre = |c: (i64, i64)| vec2(c.0 as f32 + 0.5, c.1 as f32 + 0.5);
    let component_of = |p: Vec2| {
        let mesh = cache.mesh();
        mesh.locate(p)
            .and_then(|r| mesh.region(r))
            .map(|r| r.component())
    };
    let mut sizes = std::collections::HashMap::new();
    for &c in free_cells.iter().step_by(7) {
        if let Some(k) = component_of(centre(c)) {
            *sizes.entry(k).or_insert(0usize) += 1;
        }
    }
    let island = sizes
        .iter()
        .max_by_key(|&(k, n)| (*n, *k))
        .map(|(k, _)| *k)
        .expect("free cells");
    let land: Vec<(i64, i64)> = free_cells
        .iter()
        .copied()
        .filter(|&c| component_of(centre(c)) == Some(island))
        .collect();

    // two bases far apart; each army on the cells nearest its base
    let base_a = land[rng.below(land.len())];
    let base_b = *(0..64)
        .map(|_| &land[rng.below(land.len())])
        .max_by_key(|c| (c.0 - base_a.0).pow(2) + (c.1 - base_a.1).pow(2))
        .unwrap();
    let mut units = Vec::new();
    for (army, base) in [base_a, base_b].into_iter().enumerate() {
        let mut near = land.clone();
        near.sort_by_key(|c| ((c.0 - base.0).pow(2) + (c.1 - base.1).pow(2), c.0, c.1));
        for &c in near.iter().take(units_n / 2) {
            units.push(Unit {
                army,
                position: centre(c),
                follower: PathFollower::new(),
                waiting: None,
                goal: centre(c),
            });
        }
    }

    // the island's cells, for placing orders' spots without a scan
    let mut on_land = vec![false; stamped.width * stamped.height];
    for &(x, y) in &land {
        on_land[y as usize * stamped.width + x as usize] = true;
    }
    // which unit waits for which request
    let mut waiting: std::collections::HashMap<RequestId, usize> = Default::default();
    let mut scheduler = PathScheduler::new(units.len() * 2);
    scheduler.set_first_path_budget(FIRST_PATH_BUDGET);
    let mut buildings: std::collections::VecDeque<(ObstacleId, (i64, i64))> = Default::default();
    let (mut per_tick, mut edit_ms) = (Vec::new(), Vec::new());
    // per kind of tick (0 plain, 1 with an edit, 2 with an order): its times
    let mut by_kind: [Vec<f64>; 3] = Default::default();
    let (mut answered, mut orders, mut violations, mut lost) = (0usize, 0usize, 0usize, 0usize);
    let mut pictures = 0;
    for tick in 0..ticks {
        let started = Instant::now();
        // edits
        let kind = if tick % (ORDER_EVERY / 2) == 0 {
            2
        } else {
            usize::from(tick % BUILD_EVERY == BUILD_EVERY / 2)
        };
        if tick % BUILD_EVERY == BUILD_EVERY / 2 {
            let e = Instant::now();
            // the oldest building destroyed and a new one placed: one batch,
            // one repair
            let mut edits = Vec::new();
            if buildings.len() >= MAX_BUILDINGS {
                let (id, (x, y)) = buildings.pop_front().unwrap();
                edits.push(Edit::Remove(id));
                for cy in y..y + 4 {
                    for cx in x..x + 4 {
                        stamped.free[cy as usize * stamped.width + cx as usize] = true;
                    }
                }
            }
            // a 4 x 4 building on free ground with no unit on or next to it
            let mut placed = None;
            for _ in 0..50 {
                let (x, y) = land[rng.below(land.len())];
                let cells_free = (y..y + 4).all(|cy| (x..x + 4).all(|cx| stamped.free(cx, cy)));
                let clear = units.iter().all(|u| {
                    let p = u.position;
                    p.x < x as f32 - 1.0
                        || p.x > (x + 5) as f32
                        || p.y < y as f32 - 1.0
                        || p.y > (y + 5) as f32
                });
                if !cells_free || !clear {
                    continue;
                }
                let (fx, fy) = (x as f32, y as f32);
                edits.push(Edit::Add(vec![
                    vec2(fx, fy),
                    vec2(fx + 4.0, fy),
                    vec2(fx + 4.0, fy + 4.0),
                    vec2(fx, fy + 4.0),
                ]));
                for cy in y..y + 4 {
                    for cx in x..x + 4 {
                        stamped.free[cy as usize * stamped.width + cx as usize] = false;
                    }
                }
                placed = Some((x, y));
                break;
            }
            let ids = cache.apply(&edits).expect("a building removed or placed");
            if let (Some(cell), Some(Some(id))) = (placed, ids.last()) {
                buildings.push_back((*id, cell));
            }
            edit_ms.push(e.elapsed().as_secs_f64() * 1e3);
        }
        let mesh = cache.mesh();
        // orders, to each army in turn: its units to the cells around a
        // random place, one spot each
        if tick % (ORDER_EVERY / 2) == 0 {
            let army = (tick / (ORDER_EVERY / 2)) as usize % 2;
            let target = land[rng.below(land.len())];
            let mut spots: Vec<(i64, i64)> = (target.1 - 20..=target.1 + 20)
                .flat_map(|y| (target.0 - 20..=target.0 + 20).map(move |x| (x, y)))
                .filter(|&(x, y)| {
                    stamped.free(x, y) && on_land[y as usize * stamped.width + x as usize]
                })
                .collect();
            spots.sort_by_key(|c| ((c.0 - target.0).pow(2) + (c.1 - target.1).pow(2), c.0, c.1));
            if spots.is_empty() {
                spots.push(target); // on a building: the units stop beside it
            }
            let ordered: Vec<usize> = (0..units.len())
                .filter(|&i| units[i].army == army)
                .collect();
            for (k, &i) in ordered.iter().enumerate() {
                let u = &mut units[i];
                u.goal = centre(spots[k % spots.len()]);
                if let Some(old) = u.waiting.take() {
                    scheduler.cancel(old);
                    waiting.remove(&old);
                }
            }
            // one submission for the whole army: first paths in parallel
            let requests: Vec<_> = ordered
                .iter()
                .map(|&i| (units[i].position, units[i].goal))
                .collect();
            let mut firsts: Vec<_> = (0..units.len()).map(|_| None).collect();
            for (&i, submitted) in ordered
                .iter()
                .zip(scheduler.submit_many(mesh, &requests, &filter, 1))
            {
                match submitted {
                    Ok((id, first)) => {
                        // a complete first path is the answer, a partial
                        // one waits for the rest
                        if first
                            .as_ref()
                            .is_none_or(|p| p.status() != PathStatus::Complete)
                        {
                            units[i].waiting = Some(id);
                            waiting.insert(id, i);
                        }
                        firsts[i] = first;
                    }
                    Err(_) => lost += 1,
                }
            }
            // each unit walks its first path at once
            units
                .par_iter_mut()
                .zip(firsts.par_iter())
                .for_each(|(u, first)| {
                    if let Some(path) = first {
                        let _ = u.follower.follow(mesh, path, u.goal, &filter);
                    }
                });
            orders += 1;
        }
        // the scheduler's share of the tick
        for answer in scheduler.tick_until(mesh, TICK_BUDGET, started + NAV_DEADLINE) {
            answered += 1;
            if let Some(u) = waiting.remove(&answer.id).map(|i| &mut units[i]) {
                u.waiting = None;
                match &answer.result {
                    Ok(path) => {
                        if u.follower.follow(mesh, path, u.goal, &filter).is_err() {
                            lost += 1;
                        }
                    }
                    Err(_) => lost += 1,
                }
            }
        }
        // movement: followers are independent, so units move on rayon's
        // threads, each with its own query scratch
        lost += units
            .par_iter_mut()
            .map_init(NavQuery::new, |query, u| {
                if !u.follower.has_path() {
                    return 0;
                }
                let target = u.follower.corners().first().copied().unwrap_or(u.position);
                let to = u.position + (target - u.position).clamp_length_max(SPEED);
                match u.follower.move_position(mesh, query, to) {
                    Ok(steering) => {
                        u.position = steering.position;
                        0
                    }
                    Err(_) => 1,
                }
            })
            .sum::<usize>();
        per_tick.push(started.elapsed().as_secs_f64() * 1e3);
        by_kind[kind].push(started.elapsed().as_secs_f64() * 1e3);
        violations += units
            .iter()
            .filter(|u| stamped.blocked_at(u.position))
            .count();
        if let Some(out) = &svg {
            if tick == 0 || tick == ticks / 2 || tick + 1 == ticks {
                let mut picture = portalnav::render::svg(mesh, &[]);
                let dots: String = units
                    .iter()
                    .map(|u| {
                        let colour = if u.army == 0 { "#d62728" } else { "#1f77b4" };
                        format!(
                            r#"<circle cx="{}" cy="{}" r="0.9" fill="{colour}"/>"#,
                            u.position.x, u.position.y
                        )
                    })
                    .collect();
                picture = picture.replace("</svg>", &format!("{dots}\n</svg>"));
                std::fs::write(format!("{out}-{pictures}.svg"), picture)
                    .expect("write the picture");
                pictures += 1;
            }
        }
    }
    per_tick.sort_by(f64::total_cmp);
    edit_ms.sort_by(f64::total_cmp);
    let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    let (replans, recoveries) = units.iter().fold((0, 0), |(a, b), u| {
        (a + u.follower.replans(), b + u.follower.recoveries())
    });
    println!(
        "{} units, {ticks} ticks at {HZ} Hz: per tick median {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
         edits {} (median {:.2} ms, max {:.2} ms); orders {orders}, paths answered {answered}, \
         replans {replans}, recoveries {recoveries}, requests lost {lost}",
        units.len(),
        at(&per_tick, 0.5),
        at(&per_tick, 0.99),
        at(&per_tick, 1.0),
        edit_ms.len(),
        at(&edit_ms, 0.5),
        at(&edit_ms, 1.0),
    );
    for (name, times) in ["plain", "with an edit", "with an order"]
        .iter()
        .zip(&mut by_kind)
    {
        times.sort_by(f64::total_cmp);
        if !times.is_empty() {
            println!(
                "  ticks {name}: {} (median {:.2} ms, max {:.2} ms)",
                times.len(),
                at(times, 0.5),
                at(times, 1.0)
            );
        }
    }
    assert_eq!(violations, 0, "unit positions inside obstacles");
    println!("no unit ever stood in an obstacle or off the map (checked against the stamped grid every tick)");
}
