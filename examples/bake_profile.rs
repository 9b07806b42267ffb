//! Bakes one map many times, for profiling the bake (`perf record`).
//!
//! ```sh
//! cargo run --release --example bake_profile -- data/maps/Aurora.map 10
//! ```

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: bake_profile MAP [TIMES]")?;
    let times: usize = args.next().map_or(Ok(10), |t| t.parse())?;
    let level = portalnav::Level::from_file(&path)?;
    let (mut total, mut stages) = (0.0, [0.0; 4]);
    for _ in 0..times {
        let mesh = portalnav::NavMesh::bake(&level, &portalnav::BakeConfig::default())?;
        total += mesh.stats().bake_ms;
        for (s, t) in stages.iter_mut().zip(mesh.stats().stage_ms) {
            *s += t / times as f64;
        }
    }
    println!("{path}: mean bake {:.2} ms over {times}; booleans, triangulation, merge, portals: {stages:.2?} ms", total / times as f64);
    Ok(())
}
