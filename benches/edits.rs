//! Runtime obstacles end to end: a 4 x 4-cell building placed on a tiled
//! bake and removed again (mesh and hierarchy repaired), beside what a game
//! without edits would pay for the same building: our full re-bake, and
//! polyanya 0.18's rebuild of the same map (its mesh from our constrained
//! triangulation, then its merge and bake). Issue 12's goal is a median of
//! 0.1 ms per edit.
//!
//! `cargo bench --bench edits` (`-- den520d` for one map).

#[path = "common/buildings.rs"]
mod buildings;
#[path = "common/maps.rs"]
mod maps;
#[path = "common/peers.rs"]
mod peers;

use criterion::{criterion_group, criterion_main, Criterion};
use portalnav::{bake, BakeConfig, Grid, NavMesh, TileCache};

fn bench_edits(c: &mut Criterion) {
    let mut group = c.benchmark_group("edits");
    group.sample_size(10);
    for name in ["den520d", "Aurora"] {
        let path = maps::dir().join(format!("{name}.map"));
        let grid = Grid::from_file(&path).expect("bundled map loads");
        let level = grid.to_level();
        let spots = buildings::places(&grid, 4, 1000);
        let config = BakeConfig {
            tile_size: Some(32.0),
            ..BakeConfig::default()
        };
        let mut cache = TileCache::new(&level, &config).expect("bakes");
        let mut next = 0;
        group.bench_function(format!("{name}/add_and_remove"), |b| {
            b.iter(|| {
                let id = cache
                    .add_obstacle(&spots[next % spots.len()])
                    .expect("added");
                cache.remove_obstacle(id).expect("removed");
                next += 1;
            })
        });
        let mut with_building = level.clone();
        with_building.obstacles.push(spots[0].to_vec());
        group.bench_function(format!("{name}/portalnav_full_rebake"), |b| {
            b.iter(|| NavMesh::bake(&with_building, &BakeConfig::default()).expect("bakes"))
        });
        let flat = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        group.bench_function(format!("{name}/polyanya_rebuild"), |b| {
            b.iter(|| {
                let soup = bake::triangulate(&with_building, &flat).expect("triangulates");
                let mut mesh = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
                peers::polyanya_prepare(&mut mesh);
                mesh
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_edits);
criterion_main!(benches);
