//! Makes the README's picture: the bundled RTS base level baked with small
//! clusters (so the hierarchy shows), and paths from a squad beside the HQ
//! to four nav points, written to `data/pictures/rts_base.svg`.
//!
//! ```sh
//! cargo run --release --example readme_picture
//! ```

use std::path::PathBuf;

use glam::Vec2;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let level = Level::from_json_file(root.join("data/levels/rts_base.json"))?;
    let config = BakeConfig {
        cluster_size: 8,
        ..BakeConfig::default()
    };
    let mesh = NavMesh::bake(&level, &config)?;
    let at = |name: &str| -> Result<Vec2, String> {
        level
            .nav_points
            .iter()
            .find(|n| n.name == name)
            .map(|n| n.at)
            .ok_or_else(|| format!("no nav point {name:?} in rts_base.json"))
    };
    let mut query = NavQuery::new();
    let mut paths = Vec::new();
    let squad = at("hq")? + Vec2::new(-14.0, 20.0);
    for goal in ["gold_mine", "enemy_approach", "rally", "factory"] {
        let path = query.find_path(&mesh, squad, at(goal)?, &QueryFilter::default())?;
        println!(
            "squad -> {goal}: length {:.1}, {} waypoints, answered by {:?}",
            path.length(),
            path.waypoints().len(),
            path.level()
        );
        paths.push(path.waypoints().to_vec());
    }
    let refs: Vec<&[Vec2]> = paths.iter().map(Vec::as_slice).collect();
    let out = root.join("data/pictures/rts_base.svg");
    portalnav::write_atomically(&out, portalnav::render::svg(&mesh, &refs).as_bytes())?;
    println!("wrote {}", out.display());
    Ok(())
}
