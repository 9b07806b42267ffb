//! Bake time and region count, portalnav against polyanya 0.18 on the same
//! constrained triangulation (polyanya's own Triangulation cannot hold walkable
//! pockets inside obstacles, so it gets our triangles through its Mesh
//! constructor, then its merge_polygons and bake). The comparison bakes the
//! mesh alone (no hierarchy, as polyanya has none); `full` is the whole bake
//! with clusters, nav points and cached corridors, also on a 1024 x 1024 map
//! made by tiling den520d.

#[path = "common/maps.rs"]
mod maps;
#[path = "common/peers.rs"]
mod peers;

use criterion::{criterion_group, criterion_main, Criterion};
use portalnav::{bake, BakeConfig, Grid, Level, NavMesh};

fn map(name: &str) -> Level {
    let path = maps::dir().join(format!("{name}.map"));
    Level::from_movingai_file(path).expect("bundled map loads")
}

/// A 1024 x 1024 Moving AI map: den520d repeated 4 x 4 (cropped).
fn tiled_1024() -> Level {
    let path = maps::dir().join("den520d.map");
    let text = std::fs::read_to_string(path).expect("den520d readable");
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "map")
        .skip(1)
        .filter(|l| !l.is_empty())
        .collect();
    let mut out = String::from("type octile\nheight 1024\nwidth 1024\nmap\n");
    for y in 0..1024 {
        let row = rows[y % rows.len()].as_bytes();
        out.extend((0..1024).map(|x| row[x % row.len()] as char));
        out.push('\n');
    }
    Grid::parse(&out, "den520d_tiled_1024.map")
        .expect("tiled map parses")
        .to_level()
}

fn bench_full(c: &mut Criterion) {
    let mut group = c.benchmark_group("full");
    group.sample_size(10);
    for (name, level) in [("Aurora", map("Aurora")), ("tiled_1024", tiled_1024())] {
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).expect("bakes");
        let h = mesh.hierarchy_stats().expect("hierarchy");
        eprintln!(
            "{name}: {} regions, {} clusters, {} nav nodes, {} corridors, hierarchy {} bytes",
            mesh.region_count(),
            h.clusters,
            h.nav_nodes,
            h.corridors,
            h.bytes
        );
        group.bench_function(format!("{name}/with_corridors"), |b| {
            b.iter(|| NavMesh::bake(&level, &BakeConfig::default()).expect("bakes"))
        });
    }
    group.finish();
}

fn bench_bake(c: &mut Criterion) {
    let mut group = c.benchmark_group("bake");
    group.sample_size(10);
    for name in ["Aurora", "den520d", "AR0011SR"] {
        let level = map(name);
        let config = BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).expect("bakes");
        mesh.validate().expect("valid");
        let soup = bake::triangulate(&level, &config).expect("triangulates");
        let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
        peers::polyanya_prepare(&mut peer);
        eprintln!(
            "{name}: {} triangles; portalnav {} regions, polyanya {} polygons",
            soup.triangles.len(),
            mesh.region_count(),
            peers::polyanya_polygon_count(&peer)
        );
        assert!(
            mesh.region_count() <= peers::polyanya_polygon_count(&peer),
            "{name}: more regions than polyanya"
        );
        group.bench_function(format!("{name}/portalnav"), |b| {
            b.iter(|| NavMesh::bake(&level, &config).expect("bakes"))
        });
        group.bench_function(format!("{name}/polyanya"), |b| {
            b.iter(|| {
                let mut m = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
                peers::polyanya_prepare(&mut m);
                m
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_bake, bench_full);
criterion_main!(benches);
