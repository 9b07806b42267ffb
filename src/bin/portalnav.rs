//! The portalnav command line: bake, path, scen, render (contracts in DESIGN.md).

use std::io::Write as _;
use std::path::{Path as FsPath, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use glam::Vec2;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter, Scenario};

#[derive(Parser)]
#[command(
    name = "portalnav",
    version,
    about = "Bake and query 2D navigation meshes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a level (.json or Moving AI .map) into a .nav file.
    Bake {
        /// The level file.
        level: PathBuf,
        /// Where to write the baked file.
        #[arg(short, long)]
        output: PathBuf,
        /// Agent class of the level to bake for (default: radius 0).
        #[arg(long)]
        agent: Option<String>,
        /// Skip the nav-point hierarchy and its cached corridors.
        #[arg(long)]
        no_corridors: bool,
    },
    /// Find one path and print its waypoints.
    Path {
        /// A .nav file or a level file (baked on the fly).
        mesh: PathBuf,
        sx: f32,
        sy: f32,
        gx: f32,
        gy: f32,
        /// Agent class to bake for when given a level.
        #[arg(long)]
        agent: Option<String>,
    },
    /// Run a Moving AI scenario file and write one CSV row per problem.
    Scen {
        map: PathBuf,
        scen: PathBuf,
        /// Bake without the nav-point hierarchy: plain region-level search, for comparison.
        #[arg(long)]
        flat: bool,
        /// Agent radius to bake with, world units.
        #[arg(long, default_value_t = 0.0)]
        radius: f32,
        /// CSV output (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Draw a mesh (and optionally a path) as SVG.
    Render {
        /// A .nav file or a level file.
        mesh: PathBuf,
        /// The SVG to write.
        #[arg(short, long)]
        output: PathBuf,
        /// A path to draw: SX SY GX GY.
        #[arg(long, num_args = 4, value_names = ["SX", "SY", "GX", "GY"])]
        path: Option<Vec<f32>>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error>;

fn spinner(message: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner().with_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn bake_level(
    path: &FsPath,
    agent: Option<String>,
    radius: f32,
    corridors: bool,
) -> Result<NavMesh, BoxError> {
    let bar = spinner(&format!("baking {}", path.display()));
    let level = Level::from_file(path)?;
    let config = BakeConfig {
        agent_radius: radius,
        agent,
        corridors,
        ..BakeConfig::default()
    };
    let mesh = NavMesh::bake(&level, &config);
    bar.finish_and_clear();
    Ok(mesh?)
}

fn mesh_from(path: &FsPath, agent: Option<String>) -> Result<NavMesh, BoxError> {
    if path.extension().is_some_and(|e| e == "nav") {
        Ok(NavMesh::load(path)?)
    } else {
        bake_level(path, agent, 0.0, true)
    }
}

fn run(command: Command) -> Result<(), BoxError> {
    match command {
        Command::Bake {
            level,
            output,
            agent,
            no_corridors,
        } => {
            let mesh = bake_level(&level, agent, 0.0, !no_corridors)?;
            mesh.save(&output)?;
            let bytes = std::fs::metadata(&output).map(|m| m.len()).unwrap_or(0);
            // what the game pays: reading the file back, checked and validated
            let load_started = Instant::now();
            NavMesh::load(&output)?;
            let load_ms = load_started.elapsed().as_secs_f64() * 1e3;
            let s = mesh.stats();
            eprintln!(
                "{}: {} triangles, {} regions, {} portals, {} components, {} nav points, bake {:.1} ms, load {load_ms:.1} ms, {} bytes -> {}",
                mesh.name(),
                s.triangles,
                s.regions,
                s.portals,
                s.components,
                mesh.nav_points().len(),
                s.bake_ms,
                bytes,
                output.display()
            );
            match mesh.hierarchy_stats() {
                Some(h) => eprintln!(
                    "hierarchy: {} clusters, {} nav nodes, {} corridors ({} crossings), {} leg-table entries, {} bytes ({:.2}x the file without it), built in {:.1} ms",
                    h.clusters,
                    h.nav_nodes,
                    h.corridors,
                    h.crossings,
                    h.leg_entries,
                    h.bytes,
                    h.bytes as f64 / (bytes.saturating_sub(h.bytes).max(1)) as f64,
                    h.bake_ms
                ),
                None => eprintln!("hierarchy: none (--no-corridors), 0 corridors"),
            }
            for warning in warnings(&mesh) {
                eprintln!("warning: {warning}");
            }
            Ok(())
        }
        Command::Path {
            mesh,
            sx,
            sy,
            gx,
            gy,
            agent,
        } => {
            let mesh = mesh_from(&mesh, agent)?;
            let path = NavQuery::new().find_path(
                &mesh,
                Vec2::new(sx, sy),
                Vec2::new(gx, gy),
                &QueryFilter::default(),
            )?;
            println!(
                "length {:.4} ({:?}, {} regions, answered by {:?})",
                path.length(),
                path.status(),
                path.corridor().len(),
                path.level()
            );
            for p in path.waypoints() {
                println!("{} {}", p.x, p.y);
            }
            Ok(())
        }
        Command::Scen {
            map,
            scen,
            flat,
            radius,
            out,
        } => run_scen(&map, &scen, radius, !flat, out.as_deref()),
        Command::Render { mesh, output, path } => {
            let mesh = mesh_from(&mesh, None)?;
            let mut paths = Vec::new();
            if let Some(p) = path {
                let found = NavQuery::new().find_path(
                    &mesh,
                    Vec2::new(p[0], p[1]),
                    Vec2::new(p[2], p[3]),
                    &QueryFilter::default(),
                )?;
                paths.push(found.waypoints().to_vec());
            }
            let refs: Vec<&[Vec2]> = paths.iter().map(Vec::as_slice).collect();
            std::fs::write(&output, portalnav::render::svg(&mesh, &refs))?;
            eprintln!("wrote {}", output.display());
            Ok(())
        }
    }
}

/// Nav points off the mesh and islands too small to matter.
fn warnings(mesh: &NavMesh) -> Vec<String> {
    let mut out = Vec::new();
    for n in mesh.nav_points() {
        if mesh.locate(n.at).is_none() {
            out.push(format!(
                "nav point {:?} at ({}, {}) is off the mesh",
                n.name, n.at.x, n.at.y
            ));
        }
    }
    let mut area = vec![0.0f64; mesh.component_count() as usize];
    for (_, r) in mesh.regions() {
        area[r.component() as usize] += r.area_size();
    }
    let tiny = area.iter().filter(|&&a| a < 4.0).count();
    if tiny > 0 {
        out.push(format!(
            "{tiny} islands smaller than 4 square units (of {} components)",
            area.len()
        ));
    }
    out
}

fn error_kind(e: &QueryError) -> &'static str {
    match e {
        QueryError::NonFinite { .. } => "non_finite",
        QueryError::OffMesh { .. } => "off_mesh",
        QueryError::Unreachable => "unreachable",
        QueryError::BudgetExhausted { .. } => "budget_exhausted",
        _ => "error",
    }
}

fn run_scen(
    map: &FsPath,
    scen: &FsPath,
    radius: f32,
    hierarchy: bool,
    out: Option<&FsPath>,
) -> Result<(), BoxError> {
    let started = Instant::now();
    let mesh = bake_level(map, None, radius, hierarchy)?;
    eprintln!(
        "baked {}: {} regions, {} portals, {} in {:.1} ms",
        map.display(),
        mesh.region_count(),
        mesh.portal_count(),
        mesh.hierarchy_stats()
            .map_or("flat (no hierarchy)".to_string(), |h| format!(
                "{} clusters, {} nav nodes, {} corridors",
                h.clusters, h.nav_nodes, h.corridors
            )),
        started.elapsed().as_secs_f64() * 1e3
    );
    let scenarios = Scenario::load_file(scen)?;
    let mut writer: Box<dyn std::io::Write> = match out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    writeln!(writer, "id,status,length,micros,waypoints")?;
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let mut micros = Vec::with_capacity(scenarios.len());
    let (mut solved, mut ratio_sum, mut ratio_n) = (0usize, 0.0f64, 0usize);
    let mut path = portalnav::Path::default();
    for (id, s) in scenarios.iter().enumerate() {
        let t = Instant::now();
        let result =
            query.find_path_into(&mesh, s.start_point(), s.goal_point(), &filter, &mut path);
        let us = t.elapsed().as_secs_f64() * 1e6;
        micros.push(us);
        match result {
            Ok(()) => {
                solved += 1;
                if s.optimal > 0.0 {
                    ratio_sum += f64::from(path.length()) / s.optimal;
                    ratio_n += 1;
                }
                let status = if path.status() == portalnav::PathStatus::Complete {
                    "ok"
                } else {
                    "partial"
                };
                let points: Vec<String> = path
                    .waypoints()
                    .iter()
                    .map(|p| format!("{} {}", p.x, p.y))
                    .collect();
                writeln!(
                    writer,
                    "{id},{status},{:.6},{us:.2},{}",
                    path.length(),
                    points.join(";")
                )?;
            }
            Err(e) => writeln!(writer, "{id},{},,{us:.2},", error_kind(&e))?,
        }
    }
    writer.flush()?;
    micros.sort_by(f64::total_cmp);
    let median = micros.get(micros.len() / 2).copied().unwrap_or(0.0);
    let mean = micros.iter().sum::<f64>() / micros.len().max(1) as f64;
    eprintln!(
        "solved {solved}/{}, mean length / octile optimum {:.4}, median {median:.1} us, mean {mean:.1} us",
        scenarios.len(),
        if ratio_n > 0 { ratio_sum / ratio_n as f64 } else { 0.0 }
    );
    Ok(())
}
