//! Times runtime obstacle edits on a tiled bake of a map: add and remove one
//! building at many places, with and without the hierarchy.
//!
//! `cargo run --release --example edit_cost -- data/maps/den520d.map [TILE] [flat]`
//! (`flat`: without the hierarchy only)
use std::time::Instant;

use glam::vec2;
use portalnav::{BakeConfig, Level, TileCache};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "data/maps/den520d.map".to_string());
    let tile: f32 = args.next().map_or(32.0, |t| t.parse().expect("tile size"));
    let flat_only = args.next().is_some_and(|a| a == "flat");
    let level = Level::from_file(&path).expect("level");
    for corridors in [false, true] {
        if corridors && flat_only {
            break;
        }
        let config = BakeConfig {
            tile_size: Some(tile),
            corridors,
            ..BakeConfig::default()
        };
        let started = Instant::now();
        let mut cache = TileCache::new(&level, &config).expect("bake");
        let bake_ms = started.elapsed().as_secs_f64() * 1e3;
        let b = cache.mesh().bounds();
        let mut add = Vec::new();
        let mut remove = Vec::new();
        for k in 0..40 {
            let f = (k as f32 + 0.5) / 40.0;
            let at = vec2(
                b.min.x + (b.max.x - b.min.x) * f,
                b.min.y + (b.max.y - b.min.y) * ((f * 7.3) % 1.0),
            );
            let outline = [
                at,
                at + vec2(6.0, 0.0),
                at + vec2(6.0, 4.0),
                at + vec2(0.0, 4.0),
            ];
            let t = Instant::now();
            let id = cache.add_obstacle(&outline).expect("add");
            add.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            cache.remove_obstacle(id).expect("remove");
            remove.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "{path} tile {tile} corridors {corridors}: bake {bake_ms:.1} ms, {} regions; add median {:.0} us, remove median {:.0} us",
            cache.mesh().region_count(),
            median(&mut add),
            median(&mut remove)
        );
    }
}
