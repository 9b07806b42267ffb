//! Bake time and region count, portalnav against polyanya 0.18 on the same
//! constrained triangulation (polyanya's own Triangulation cannot hold walkable
//! pockets inside obstacles, so it gets our triangles through its Mesh
//! constructor, then its merge_polygons and bake).

#[path = "common/peers.rs"]
mod peers;

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use portalnav::{bake, BakeConfig, Level, NavMesh};

fn map(name: &str) -> Level {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../shared/data/movingai/{name}.map"));
    Level::from_movingai_file(path).expect("shared map loads")
}

fn bench_bake(c: &mut Criterion) {
    let mut group = c.benchmark_group("bake");
    group.sample_size(10);
    for name in ["Aurora", "den520d", "AR0011SR"] {
        let level = map(name);
        let config = BakeConfig::default();
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

criterion_group!(benches, bench_bake);
criterion_main!(benches);
