//! The whole-corpus check: every Moving AI map of a folder, every (or every
//! N-th) scenario, portalnav against polyanya (optimal any-angle, on a mesh
//! made from the same triangulation) in one run, one row per map and mode.
//!
//! ```sh
//! cargo run --release --example sweep -- PATH/TO/MAPS --stride 10 --out sweep.md
//! cargo run --release --example sweep -- data/maps --flat --json
//! ```
//!
//! Per row: problems run, solved, paths with a segment outside free space
//! (checked cell by cell against the map, independently of the library),
//! paths over the scenario's octile optimum, length against polyanya's
//! (mean, 99th percentile, worst), median query time of both and their
//! ratio, the share of problems the flat search answered (in the JSON, by
//! [`portalnav::Fallback`] reason), bake time, baked bytes and the
//! hierarchy's share, and the
//! process's peak memory while the map was baked and queried. A last row
//! gives geometric means of the ratios and sums of the counts. Each
//! problem's time is its faster of two rounds, the engines taking turns.
//! An example rather than a `portalnav` command because polyanya is a
//! development dependency only.

use std::io::IsTerminal as _;
use std::path::{Path as FsPath, PathBuf};
use std::time::Instant;

use portalnav::{bake, BakeConfig, Grid, NavMesh, NavQuery, Path, QueryFilter, Scenario};
use serde_json::json;

#[path = "../tests/suite/common/mod.rs"]
mod check;
#[path = "../benches/common/peers.rs"]
mod peers;
#[path = "../benches/common/stats.rs"]
mod stats;

use stats::median;

struct Options {
    dir: PathBuf,
    modes: Vec<bool>,
    stride: usize,
    out: Option<PathBuf>,
    json: bool,
}

fn options() -> Result<Options, String> {
    let usage = "usage: sweep DIR [--flat | --hierarchical] [--stride N] [--out TABLE.md] [--json]";
    let mut args = std::env::args().skip(1);
    let (mut dir, mut modes, mut stride, mut out, mut json) =
        (None, vec![true, false], 1, None, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--flat" => modes = vec![false],
            "--hierarchical" => modes = vec![true],
            "--json" => json = true,
            "--stride" => {
                stride = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n: &usize| n > 0)
                    .ok_or("--stride takes a positive integer")?;
            }
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out takes a file")?)),
            "-h" | "--help" => return Err(usage.to_string()),
            _ if a.starts_with('-') => return Err(format!("unknown option {a}\n{usage}")),
            _ => dir = Some(PathBuf::from(a)),
        }
    }
    Ok(Options {
        dir: dir.ok_or(usage)?,
        modes,
        stride,
        out,
        json,
    })
}

/// The process's peak resident memory since the last reset, MiB (Linux).
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn reset_peak() {
    // "5" resets the peak resident set size to the current one (Linux 4.0+)
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn p99_and_max(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let p99 = v
        .get((v.len() * 99 / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN);
    (mean, p99, v.last().copied().unwrap_or(f64::NAN))
}

fn geometric_mean(v: &[f64]) -> f64 {
    let v: Vec<f64> = v
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

/// One map in one mode.
fn run_map(
    dir: &FsPath,
    name: &str,
    hierarchy: bool,
    stride: usize,
) -> Result<serde_json::Value, String> {
    let map_path = dir.join(format!("{name}.map"));
    let grid = Grid::from_file(&map_path).map_err(|e| e.to_string())?;
    let cells = check::CheckGrid::load(&map_path);
    let scens =
        Scenario::load_file(dir.join(format!("{name}.map.scen"))).map_err(|e| e.to_string())?;
    let scens: Vec<&Scenario> = scens.iter().step_by(stride).collect();
    reset_peak();
    let level = grid.to_level();
    let config = BakeConfig {
        corridors: hierarchy,
        ..BakeConfig::default()
    };
    let started = Instant::now();
    let mesh = NavMesh::bake(&level, &config).map_err(|e| e.to_string())?;
    let bake_ms = started.elapsed().as_secs_f64() * 1e3;
    let bytes = mesh.to_bytes().map_err(|e| e.to_string())?.len();
    let hierarchy_bytes = mesh.hierarchy_file_bytes().unwrap_or(0);
    let soup = bake::triangulate(&level, &config).map_err(|e| e.to_string())?;
    let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
    peers::polyanya_prepare(&mut peer);

    let n = scens.len();
    let (mut ours_us, mut theirs_us) = (vec![f64::INFINITY; n], vec![f64::INFINITY; n]);
    let (mut ours_len, mut theirs_len) = (vec![None; n], vec![None; n]);
    let (mut invalid, mut over_optimum) = (0usize, 0usize);
    // why queries went to the flat search, by reason
    let mut fallbacks = std::collections::BTreeMap::<String, usize>::new();
    let mut query = NavQuery::new();
    query.set_use_hierarchy(hierarchy);
    let filter = QueryFilter::default();
    let mut path = Path::default();
    for round in 0..2 {
        for engine in [round % 2, 1 - round % 2] {
            for (i, s) in scens.iter().enumerate() {
                let (a, b) = (s.start_point(), s.goal_point());
                let t = Instant::now();
                if engine == 0 {
                    let ok = query
                        .find_path_into(&mesh, a, b, &filter, &mut path)
                        .is_ok()
                        && path.status() == portalnav::PathStatus::Complete;
                    ours_us[i] = ours_us[i].min(t.elapsed().as_secs_f64() * 1e6);
                    if round == 0 {
                        if let Some(why) = query.last_fallback() {
                            *fallbacks.entry(format!("{why:?}")).or_default() += 1;
                        }
                    }
                    if round == 0 && ok {
                        let w = path.waypoints();
                        let valid = w.first() == Some(&a)
                            && w.last() == Some(&b)
                            && w.windows(2)
                                .all(|s| cells.segment_problem(s[0], s[1]).is_none());
                        invalid += usize::from(!valid);
                        let len = f64::from(path.length());
                        over_optimum += usize::from(len > s.optimal + s.tolerance);
                        ours_len[i] = Some(len);
                    }
                } else {
                    let len = peers::polyanya_path_length(&peer, a, b);
                    theirs_us[i] = theirs_us[i].min(t.elapsed().as_secs_f64() * 1e6);
                    theirs_len[i] = len.map(f64::from);
                }
            }
        }
    }
    let peak = peak_mib();
    let solved = ours_len.iter().filter(|l| l.is_some()).count();
    let ratios: Vec<f64> = ours_len
        .iter()
        .zip(&theirs_len)
        .filter_map(|(o, t)| Some((o.as_ref()?, t.as_ref()?)))
        .filter(|(_, t)| **t > 0.0)
        .map(|(o, t)| o / t)
        .collect();
    let (mean, p99, max) = p99_and_max(ratios);
    let (ours_median, theirs_median) = (median(ours_us), median(theirs_us));
    Ok(json!({
        "map": name,
        "mode": if hierarchy { "hierarchical" } else { "flat" },
        "problems": n,
        "solved": solved,
        "invalid": invalid,
        "over_octile_optimum": over_optimum,
        "flat_share": fallbacks.values().sum::<usize>() as f64 / n.max(1) as f64,
        "fallbacks": fallbacks,
        "length_over_polyanya": { "mean": mean, "p99": p99, "max": max },
        "median_us": ours_median,
        "polyanya_median_us": theirs_median,
        "speedup": theirs_median / ours_median,
        "bake_ms": bake_ms,
        "bytes": bytes,
        "hierarchy_bytes": hierarchy_bytes,
        "peak_mib": peak,
        "width": grid.width(),
        "height": grid.height(),
    }))
}

fn main() {
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if !options.dir.is_dir() {
        eprintln!("error: {}: not a folder", options.dir.display());
        std::process::exit(3);
    }
    let names = check::map_names(&options.dir);
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new((names.len() * options.modes.len()) as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut rows = Vec::new();
    for name in &names {
        for &hierarchy in &options.modes {
            bar.set_message(name.clone());
            match run_map(&options.dir, name, hierarchy, options.stride) {
                Ok(row) => rows.push(row),
                Err(e) => eprintln!("warning: {name}: {e}"),
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let mut summary = serde_json::Map::new();
    for mode in ["hierarchical", "flat"] {
        let of: Vec<&serde_json::Value> = rows.iter().filter(|r| r["mode"] == mode).collect();
        if of.is_empty() {
            continue;
        }
        let f = |key: &str| -> Vec<f64> { of.iter().filter_map(|r| r[key].as_f64()).collect() };
        let sum = |key: &str| -> u64 { of.iter().filter_map(|r| r[key].as_u64()).sum() };
        let large: Vec<f64> = of
            .iter()
            .filter(|r| {
                r["width"].as_u64().unwrap_or(0) >= 512 || r["height"].as_u64().unwrap_or(0) >= 512
            })
            .filter_map(|r| r["speedup"].as_f64())
            .collect();
        let mean_lengths: Vec<f64> = of
            .iter()
            .filter_map(|r| r["length_over_polyanya"]["mean"].as_f64())
            .collect();
        summary.insert(
            mode.to_string(),
            json!({
                "maps": of.len(),
                "problems": sum("problems"),
                "solved": sum("solved"),
                "invalid": sum("invalid"),
                "over_octile_optimum": sum("over_octile_optimum"),
                "speedup_geomean": geometric_mean(&f("speedup")),
                "speedup_geomean_512_or_more": geometric_mean(&large),
                "speedup_min_512_or_more": large.iter().copied().fold(f64::INFINITY, f64::min),
                "length_mean_geomean": geometric_mean(&mean_lengths),
                "length_max": of
                    .iter()
                    .filter_map(|r| r["length_over_polyanya"]["max"].as_f64())
                    .fold(0.0, f64::max),
                "bake_ms_max": f("bake_ms").into_iter().fold(0.0, f64::max),
            }),
        );
    }

    let mut table = String::from(
        "| map | mode | problems | solved | invalid | over octile | length / polyanya mean, p99, max | median us | polyanya us | speedup | flat % | bake ms | bytes | hierarchy bytes | peak MiB |\n|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        let l = &r["length_over_polyanya"];
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.4}, {:.4}, {:.4} | {:.1} | {:.1} | {:.1}x | {:.0} | {:.0} | {} | {} | {:.0} |\n",
            r["map"].as_str().unwrap_or(""),
            r["mode"].as_str().unwrap_or(""),
            r["problems"],
            r["solved"],
            r["invalid"],
            r["over_octile_optimum"],
            l["mean"].as_f64().unwrap_or(f64::NAN),
            l["p99"].as_f64().unwrap_or(f64::NAN),
            l["max"].as_f64().unwrap_or(f64::NAN),
            r["median_us"].as_f64().unwrap_or(f64::NAN),
            r["polyanya_median_us"].as_f64().unwrap_or(f64::NAN),
            r["speedup"].as_f64().unwrap_or(f64::NAN),
            r["flat_share"].as_f64().unwrap_or(f64::NAN) * 100.0,
            r["bake_ms"].as_f64().unwrap_or(f64::NAN),
            r["bytes"],
            r["hierarchy_bytes"],
            r["peak_mib"].as_f64().unwrap_or(f64::NAN),
        ));
    }
    for (mode, s) in &summary {
        table.push_str(&format!(
            "| **all ({} maps)** | {mode} | {} | {} | {} | {} | geo mean {:.4}, max {:.4} | | | {:.1}x (geo mean; maps of 512+: {:.1}x, min {:.1}x) | | max {:.0} | | | |\n",
            s["maps"],
            s["problems"],
            s["solved"],
            s["invalid"],
            s["over_octile_optimum"],
            s["length_mean_geomean"].as_f64().unwrap_or(f64::NAN),
            s["length_max"].as_f64().unwrap_or(f64::NAN),
            s["speedup_geomean"].as_f64().unwrap_or(f64::NAN),
            s["speedup_geomean_512_or_more"].as_f64().unwrap_or(f64::NAN),
            s["speedup_min_512_or_more"].as_f64().unwrap_or(f64::NAN),
            s["bake_ms_max"].as_f64().unwrap_or(f64::NAN),
        ));
    }
    if let Some(out) = &options.out {
        if let Err(e) = portalnav::write_atomically(out, table.as_bytes()) {
            eprintln!("error: {e}");
            std::process::exit(6);
        }
    }
    if options.json {
        println!("{}", json!({ "maps": rows, "summary": summary }));
    } else if options.out.is_none() {
        print!("{table}");
    } else {
        eprint!("{table}");
    }
}
