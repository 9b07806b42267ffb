//! Loads one baked file many times, for profiling the load (`perf record`).
//!
//! ```sh
//! cargo run --release -- bake data/maps/Aurora.map -o aurora.nav
//! cargo run --release --example load_profile -- aurora.nav 20
//! ```

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: load_profile FILE.nav [TIMES]")?;
    let times: usize = args.next().map_or(Ok(20), |t| t.parse())?;
    let bytes = std::fs::read(&path)?;
    let started = std::time::Instant::now();
    for _ in 0..times {
        portalnav::NavMesh::from_bytes(&bytes)?;
    }
    let ms = started.elapsed().as_secs_f64() * 1e3 / times as f64;
    println!("{path}: {ms:.1} ms per load ({} bytes)", bytes.len());
    Ok(())
}
