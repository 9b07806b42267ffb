//! Queries on a map after many runtime buildings, beside what a game without
//! edits would query: polyanya 0.18 rebuilt on the map with the same
//! buildings, and our own fresh bake of it. Issue 12 asks that after 500
//! buildings the query speed against polyanya stays within the any-map
//! goals.
//!
//! Per map: 500 buildings of 4 x 4 cells ([`buildings::places`], the edits
//! bench's places) are added one by one to a tiled bake (tiles of 64, the
//! hierarchy on), the all-pairs table is refreshed, and the map's
//! scenarios whose ends are not under a building run on three meshes: the
//! edited one, a fresh untiled bake of the level with the buildings as
//! static obstacles, and polyanya's mesh of that level (from our
//! constrained triangulation). Each engine runs the list back to back,
//! taking turns for 3 rounds; a problem's time is its fastest round (as in
//! the query bench). Every problem must be solved by all three or by none.
//!
//! `cargo bench --bench stamped` (`-- den520d` for one map).

#[path = "common/buildings.rs"]
mod buildings;
#[path = "common/maps.rs"]
mod maps;
#[path = "common/peers.rs"]
mod peers;
#[path = "common/stats.rs"]
mod stats;

use std::time::Instant;

use portalnav::{
    bake, BakeConfig, Grid, NavMesh, NavQuery, Path, QueryFilter, Scenario, TileCache,
};

/// Buildings placed before the queries.
const BUILDINGS: usize = 500;

/// Tile side of the edited bake, cells.
const TILE: f32 = 64.0;

/// Rounds each engine runs the scenario list.
const ROUNDS: usize = 3;

fn main() {
    let (dir, named) = (maps::dir(), maps::named());
    println!("| map | buildings | hierarchy kept | edit median / p99 ms | table refresh ms | problems solved (unreachable) | edited median us | fresh bake median us | polyanya median us | polyanya/edited | polyanya/fresh | edited length / polyanya mean, max |");
    println!("|---|---:|---|---|---:|---|---:|---:|---:|---:|---:|---|");
    for name in ["den520d", "Aurora"] {
        if !named(name) {
            continue;
        }
        let grid = Grid::from_file(dir.join(format!("{name}.map"))).expect("bundled map loads");
        let level = grid.to_level();
        let spots = buildings::places(&grid, 4, BUILDINGS);
        let config = BakeConfig {
            tile_size: Some(TILE),
            ..BakeConfig::default()
        };
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let mut edit_ms = Vec::with_capacity(spots.len());
        for spot in &spots {
            let t = Instant::now();
            cache.add_obstacle(spot).expect("a building on free cells");
            edit_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let t = Instant::now();
        assert!(cache.refresh_table(usize::MAX), "no handle holds the mesh");
        let refresh_ms = t.elapsed().as_secs_f64() * 1e3;
        let edited = cache.mesh();
        let stamped = cache.level_with_obstacles();
        let fresh = NavMesh::bake(&stamped, &BakeConfig::default()).expect("bakes");
        let flat = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let soup = bake::triangulate(&stamped, &flat).expect("triangulates");
        let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
        peers::polyanya_prepare(&mut peer);

        // scenario ends are cell centres: under a building or not, never on its edge
        let covered = |p: glam::Vec2| {
            spots
                .iter()
                .any(|s| s[0].x < p.x && p.x < s[2].x && s[0].y < p.y && p.y < s[2].y)
        };
        let scens: Vec<Scenario> = Scenario::load_file(dir.join(format!("{name}.map.scen")))
            .expect("scen")
            .into_iter()
            .filter(|s| !covered(s.start_point()) && !covered(s.goal_point()))
            .collect();
        let n = scens.len();
        let mut times = [
            vec![f64::INFINITY; n],
            vec![f64::INFINITY; n],
            vec![f64::INFINITY; n],
        ];
        let mut lengths = [vec![None; n], vec![None; n], vec![None; n]];
        let (mut query, mut path, filter) =
            (NavQuery::new(), Path::default(), QueryFilter::default());
        for round in 0..ROUNDS {
            for engine in (0..3).map(|k| (k + round) % 3) {
                for (i, s) in scens.iter().enumerate() {
                    let (a, b) = (s.start_point(), s.goal_point());
                    let t = Instant::now();
                    let length = match engine {
                        2 => peers::polyanya_path_length(&peer, a, b),
                        _ => {
                            let mesh = if engine == 0 { edited } else { &fresh };
                            query
                                .find_path_into(mesh, a, b, &filter, &mut path)
                                .ok()
                                .map(|()| path.length())
                        }
                    };
                    times[engine][i] = times[engine][i].min(t.elapsed().as_secs_f64() * 1e6);
                    lengths[engine][i] = length;
                }
            }
        }
        let solved: Vec<usize> = (0..n).filter(|&i| lengths[2][i].is_some()).collect();
        for i in 0..n {
            let got = lengths.each_ref().map(|l| l[i].is_some());
            assert!(
                got == [got[2]; 3],
                "{name}: problem {i} solved by edited, fresh, polyanya: {got:?}"
            );
        }
        let at = |engine: usize| stats::median(solved.iter().map(|&i| times[engine][i]).collect());
        let (edited_us, fresh_us, peer_us) = (at(0), at(1), at(2));
        let ratios: Vec<f64> = solved
            .iter()
            .filter_map(|&i| {
                let (ours, theirs) = (lengths[0][i]?, lengths[2][i]?);
                (theirs > 0.0).then(|| f64::from(ours) / f64::from(theirs))
            })
            .collect();
        let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
        let max = ratios.iter().copied().fold(1.0, f64::max);
        println!(
            "| {name} | {BUILDINGS} | {} | {:.2} / {:.2} | {refresh_ms:.1} | {} ({}) | {edited_us:.1} | {fresh_us:.1} | {peer_us:.1} | {:.1}x | {:.1}x | {mean:.4}, {max:.4} |",
            if edited.hierarchy_stats().is_some() { "yes" } else { "no" },
            stats::median(edit_ms.clone()),
            stats::p99(edit_ms),
            solved.len(),
            n - solved.len(),
            peer_us / edited_us,
            peer_us / fresh_us,
        );
    }
}
