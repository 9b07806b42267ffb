//! Loads a level from data/, bakes it (or loads a baked file), answers a few
//! queries and writes an SVG with the paths.
//!
//! ```sh
//! cargo run --release --example navigate -- data/maps/den520d.map out.svg
//! ```

use std::path::PathBuf;

use glam::Vec2;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/maps/den520d.map"));
    let output = args.next().unwrap_or_else(|| "navigate.svg".to_string()); // in the current folder

    let mesh = if input.extension().is_some_and(|e| e == "nav") {
        NavMesh::load(&input)?
    } else {
        let level = Level::from_file(&input)?;
        NavMesh::bake(&level, &BakeConfig::default())?
    };
    println!(
        "{}: {} regions, {} portals",
        input.display(),
        mesh.region_count(),
        mesh.portal_count()
    );
    if let Some(h) = mesh.hierarchy_stats() {
        println!(
            "hierarchy: {} clusters, {} nav nodes, {} cached corridors",
            h.clusters, h.nav_nodes, h.corridors
        );
    }

    // a few queries between region centres spread over the mesh
    let centres: Vec<Vec2> = mesh.regions().map(|(_, r)| r.centroid()).collect();
    let mut query = NavQuery::new();
    let mut paths = Vec::new();
    let step = (centres.len() / 6).max(1);
    for i in (0..centres.len()).step_by(step).take(6) {
        let (a, b) = (centres[i], centres[(i + centres.len() / 2) % centres.len()]);
        match query.find_path(&mesh, a, b, &QueryFilter::default()) {
            Ok(path) => {
                println!(
                    "{a} -> {b}: length {:.2}, {} waypoints, answered by {:?}",
                    path.length(),
                    path.waypoints().len(),
                    path.level()
                );
                paths.push(path.waypoints().to_vec());
            }
            Err(e) => println!("{a} -> {b}: {e}"),
        }
    }
    let refs: Vec<&[Vec2]> = paths.iter().map(Vec::as_slice).collect();
    std::fs::write(&output, portalnav::render::svg(&mesh, &refs))?;
    println!("wrote {output}");
    Ok(())
}
