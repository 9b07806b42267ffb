//! The portalnav command line: bake, path, scen, render.
//!
//! Every failure is one line on stderr (`error: ...`) and an exit code that
//! says what kind of failure it was (see [`Failure`] and the README).

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path as FsPath, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use glam::Vec2;
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter, Scenario};
use serde_json::json;

#[derive(Parser)]
#[command(
    name = "portalnav",
    version,
    about = "Bake and query 2D navigation meshes",
    after_help = "Exit codes: 0 success, 2 bad command line, 3 an input cannot be read or is invalid, \
                  4 the bake failed, 5 the query has no answer, 6 an output cannot be written."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Runtime buildings for `scen`: placed and removed by edits of a tiled bake
/// before the scenarios run.
#[derive(clap::Args, Clone)]
struct Buildings {
    /// Buildings of SIZE x SIZE cells to place by runtime edits at free
    /// places drawn from the seed (never on a scenario's start or goal cell).
    #[arg(long, default_value_t = 0)]
    buildings: usize,
    /// How many of them to remove again, also by edits.
    #[arg(long, default_value_t = 0)]
    remove: usize,
    /// Side of a building, cells.
    #[arg(long, default_value_t = 4)]
    size: u32,
    /// Seed for the places.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the map with the surviving buildings stamped in as blocked cells.
    #[arg(long)]
    stamped: Option<PathBuf>,
    /// Tile side of the bake the buildings edit, cells.
    #[arg(long, default_value_t = 32.0)]
    tile: f32,
}

#[derive(Subcommand)]
enum Command {
    /// Bake a level (.json or Moving AI .map) into a .nav file.
    #[command(
        after_help = "Example:\n  portalnav bake data/levels/rts_base.json -o rts_base.nav --json"
    )]
    Bake {
        /// The level file.
        level: PathBuf,
        /// Where to write the baked file (never the level itself).
        #[arg(short, long)]
        output: PathBuf,
        /// Agent class of the level to bake for (default: radius 0).
        #[arg(long)]
        agent: Option<String>,
        /// Largest agent radius the file serves, world units (default: the
        /// level's largest agent class, 0 on a grid map).
        #[arg(long)]
        max_radius: Option<f32>,
        /// Skip the nav-point hierarchy and its cached corridors.
        #[arg(long)]
        no_corridors: bool,
        /// Print the summary as one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Find one path and print its waypoints.
    #[command(
        allow_negative_numbers = true,
        after_help = "Example:\n  portalnav path data/levels/moba_lanes.json 10 10 190 110\n  \
                      portalnav path level.nav -5 -5 1.2e2 3e1"
    )]
    Path {
        /// A .nav file or a level file (baked on the fly).
        mesh: PathBuf,
        /// Start x, world units.
        sx: f32,
        /// Start y, world units.
        sy: f32,
        /// Goal x, world units.
        gx: f32,
        /// Goal y, world units.
        gy: f32,
        /// Agent class of the level to find the path for.
        #[arg(long, conflicts_with = "radius")]
        agent: Option<String>,
        /// Agent radius to find the path for, world units (a level is baked
        /// to serve it).
        #[arg(long)]
        radius: Option<f32>,
    },
    /// Run a Moving AI scenario file and write one CSV row per problem.
    #[command(
        after_help = "Example:\n  portalnav scen data/maps/den520d.map data/maps/den520d.map.scen --out paths.csv"
    )]
    Scen {
        /// The Moving AI map.
        map: PathBuf,
        /// Its scenario file.
        scen: PathBuf,
        /// Bake without the nav-point hierarchy: plain region-level search, for comparison.
        #[arg(long)]
        flat: bool,
        /// Agent radius to find the paths for, world units (the map is baked
        /// once, for radius 0 with this maximum).
        #[arg(long, default_value_t = 0.0)]
        radius: f32,
        /// CSV output (default: standard output, or none with --json).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the summary as one JSON object on stdout.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        buildings: Buildings,
    },
    /// Draw a mesh (and optionally a path) as SVG.
    #[command(
        allow_negative_numbers = true,
        after_help = "Example:\n  portalnav render data/levels/rts_base.json -o rts_base.svg --path 8 8 90 50"
    )]
    Render {
        /// A .nav file or a level file.
        mesh: PathBuf,
        /// The SVG to write.
        #[arg(short, long)]
        output: PathBuf,
        /// A path to draw: SX SY GX GY.
        #[arg(long, num_args = 4, value_names = ["SX", "SY", "GX", "GY"])]
        path: Option<Vec<f32>>,
        /// Draw the mesh (and path) for this agent class of the level.
        #[arg(long, conflicts_with = "radius")]
        agent: Option<String>,
        /// Draw the mesh (and path) for this agent radius, world units.
        #[arg(long)]
        radius: Option<f32>,
        /// Colour regions and portals by the largest of these radii that
        /// passes them (none given: the level's agent classes, or eight even
        /// steps up to the mesh's maximum radius).
        #[arg(long, num_args = 0.., value_name = "R", conflicts_with_all = ["agent", "radius"])]
        by_radius: Option<Vec<f32>>,
    },
}

/// A failed command: its exit code and what to print.
struct Failure {
    code: u8,
    error: Box<dyn std::error::Error>,
}

/// The command line asks for something that cannot be done (clap itself
/// exits with this code on malformed arguments).
const EXIT_USAGE: u8 = 2;
/// An input (level, map, scenario or baked file) cannot be read or is invalid.
const EXIT_INPUT: u8 = 3;
/// The bake failed.
const EXIT_BAKE: u8 = 4;
/// The query has no answer (point off the mesh, unreachable goal, ...).
const EXIT_QUERY: u8 = 5;
/// An output cannot be written.
const EXIT_OUTPUT: u8 = 6;

fn fail<E: Into<Box<dyn std::error::Error>>>(code: u8) -> impl FnOnce(E) -> Failure {
    move |e| Failure {
        code,
        error: e.into(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let mut message = f.error.to_string();
            let mut source = f.error.source();
            while let Some(s) = source {
                let text = s.to_string();
                if !message.contains(&text) {
                    message.push_str(": ");
                    message.push_str(&text);
                }
                source = s.source();
            }
            eprintln!("error: {message}");
            ExitCode::from(f.code)
        }
    }
}

/// A spinner on stderr, drawn only when stderr is a terminal.
fn spinner(message: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner().with_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar counting `len` steps on stderr, drawn only when stderr is a terminal.
fn counter(len: usize) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    indicatif::ProgressBar::new(len as u64)
}

fn bake_level(path: &FsPath, config: &BakeConfig) -> Result<NavMesh, Failure> {
    let level = Level::from_file(path).map_err(fail(EXIT_INPUT))?;
    let bar = spinner(&format!("baking {}", path.display()));
    let mesh = NavMesh::bake(&level, config);
    bar.finish_and_clear();
    mesh.map_err(fail(EXIT_BAKE))
}

/// A baked file, or a level baked for radius 0 serving radii up to
/// `max_radius` (or its largest agent class).
fn mesh_from(path: &FsPath, max_radius: Option<f32>) -> Result<NavMesh, Failure> {
    if path.extension().is_some_and(|e| e == "nav") {
        NavMesh::load(path).map_err(fail(EXIT_INPUT))
    } else {
        let config = BakeConfig {
            max_radius,
            ..BakeConfig::default()
        };
        bake_level(path, &config)
    }
}

/// Refuses a radius that is not a finite number >= 0 before anything is
/// baked for it.
fn check_radius(radius: Option<f32>) -> Result<(), Failure> {
    match radius {
        Some(radius) if !(radius.is_finite() && radius >= 0.0) => {
            Err(fail(EXIT_USAGE)(portalnav::RadiusError::Invalid { radius }))
        }
        _ => Ok(()),
    }
}

/// The radii `render --by-radius` colours by: those given, or the mesh's
/// agent classes above its own radius, or eight even steps up to its
/// maximum; an error when the mesh serves no radius above its own.
fn radius_classes(mesh: &NavMesh, given: Vec<f32>) -> Result<Vec<f32>, Failure> {
    let (own, max) = (mesh.agent_radius(), mesh.max_radius());
    let radii = if !given.is_empty() {
        given
    } else {
        let mut classes: Vec<f32> = mesh
            .agents()
            .iter()
            .map(|a| a.radius)
            .filter(|&r| r > own && r <= max)
            .collect();
        if classes.is_empty() && max > own {
            classes = (1..=8)
                .map(|k| (own + (max - own) * k as f32 / 8.0).min(max))
                .collect();
        }
        classes
    };
    if radii.is_empty() {
        return Err(fail(EXIT_USAGE)(format!(
            "the mesh serves no radius above its own ({own}): give the radii, or bake it with --max-radius"
        )));
    }
    Ok(radii)
}

/// The exit code for a radius the mesh refuses.
fn radius_failure(e: portalnav::RadiusError) -> Failure {
    let code = match e {
        portalnav::RadiusError::Bake { .. } => EXIT_BAKE,
        _ => EXIT_USAGE,
    };
    fail(code)(e)
}

/// The mesh for an agent class or radius (none: the mesh itself).
fn sized<'m>(
    mesh: &'m NavMesh,
    agent: Option<&str>,
    radius: Option<f32>,
) -> Result<portalnav::SizedMesh<'m>, Failure> {
    let sized = match (agent, radius) {
        (Some(name), _) => mesh.for_agent(name),
        (None, Some(r)) => mesh.for_radius(r),
        (None, None) => mesh.for_radius(mesh.agent_radius()),
    };
    sized.map_err(radius_failure)
}

/// Refuses an output that is one of the inputs: a failed write would destroy it.
fn check_output(output: &FsPath, inputs: &[&FsPath]) -> Result<(), Failure> {
    let Ok(out) = output.canonicalize() else {
        return Ok(()); // does not exist yet
    };
    for input in inputs {
        if input.canonicalize().is_ok_and(|i| i == out) {
            return Err(fail(EXIT_OUTPUT)(format!(
                "{}: the output would overwrite the input {}",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

fn query_failure(e: QueryError) -> Failure {
    fail(EXIT_QUERY)(e)
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Bake {
            level,
            output,
            agent,
            max_radius,
            no_corridors,
            json,
        } => {
            let config = BakeConfig {
                agent,
                max_radius,
                corridors: !no_corridors,
                ..BakeConfig::default()
            };
            run_bake(&level, &output, &config, json)
        }
        Command::Path {
            mesh,
            sx,
            sy,
            gx,
            gy,
            agent,
            radius,
        } => {
            check_radius(radius)?;
            let mesh = mesh_from(&mesh, radius)?;
            let mesh = sized(&mesh, agent.as_deref(), radius)?;
            let path = NavQuery::new()
                .find_path(
                    &mesh,
                    Vec2::new(sx, sy),
                    Vec2::new(gx, gy),
                    &QueryFilter::default(),
                )
                .map_err(query_failure)?;
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
            json,
            buildings,
        } => run_scen(&map, &scen, radius, !flat, out.as_deref(), json, &buildings),
        Command::Render {
            mesh,
            output,
            path,
            agent,
            radius,
            by_radius,
        } => {
            check_output(&output, &[&mesh])?;
            check_radius(radius)?;
            for &r in by_radius.iter().flatten() {
                check_radius(Some(r))?;
            }
            // a level baked here serves the largest radius asked for
            let widest = by_radius.iter().flatten().copied().reduce(f32::max);
            let mesh = mesh_from(&mesh, radius.or(widest))?;
            let classes = by_radius.map(|radii| radius_classes(&mesh, radii));
            let mesh = sized(&mesh, agent.as_deref(), radius)?;
            let mut paths = Vec::new();
            if let Some(p) = path {
                let found = NavQuery::new()
                    .find_path(
                        &mesh,
                        Vec2::new(p[0], p[1]),
                        Vec2::new(p[2], p[3]),
                        &QueryFilter::default(),
                    )
                    .map_err(query_failure)?;
                paths.push(found.waypoints().to_vec());
            }
            let refs: Vec<&[Vec2]> = paths.iter().map(Vec::as_slice).collect();
            let picture = match classes {
                Some(radii) => {
                    let radii = radii?;
                    portalnav::render::svg_by_radius(&mesh, &radii, &refs)
                        .map_err(radius_failure)?
                }
                None => portalnav::render::svg(&mesh, &refs),
            };
            portalnav::write_atomically(&output, picture.as_bytes()).map_err(fail(EXIT_OUTPUT))?;
            eprintln!("wrote {}", output.display());
            Ok(())
        }
    }
}

fn run_bake(
    level: &FsPath,
    output: &FsPath,
    config: &BakeConfig,
    json: bool,
) -> Result<(), Failure> {
    check_output(output, &[level])?;
    let mesh = bake_level(level, config)?;
    let bytes = mesh.to_bytes().map_err(fail(EXIT_BAKE))?;
    // what the game pays: reading the file back, checked and validated
    let load_started = Instant::now();
    NavMesh::from_bytes(&bytes).map_err(fail(EXIT_BAKE))?;
    let load_ms = load_started.elapsed().as_secs_f64() * 1e3;
    portalnav::write_atomically(output, &bytes).map_err(fail(EXIT_OUTPUT))?;
    let size = bytes.len() as u64;
    let hierarchy_file_bytes = mesh.hierarchy_file_bytes().unwrap_or(0);
    let s = mesh.stats();
    let warnings = warnings(&mesh);
    if json {
        let hierarchy = mesh.hierarchy_stats().map(|h| {
            json!({
                "clusters": h.clusters,
                "cluster_aim": h.cluster_aim,
                "nav_nodes": h.nav_nodes,
                "corridors": h.corridors,
                "crossings": h.crossings,
                "leg_entries": h.leg_entries,
                "bytes": h.bytes,
                "file_bytes": hierarchy_file_bytes,
                "bake_ms": h.bake_ms,
            })
        });
        let summary = json!({
            "level": level.display().to_string(),
            "output": output.display().to_string(),
            "name": mesh.name(),
            "triangles": s.triangles,
            "regions": s.regions,
            "portals": s.portals,
            "components": s.components,
            "nav_points": mesh.nav_points().len(),
            "walkable_area": s.walkable_area,
            "bake_ms": s.bake_ms,
            "load_ms": load_ms,
            "bytes": size,
            "hierarchy": hierarchy,
            "warnings": warnings,
        });
        println!("{summary}");
        return Ok(());
    }
    eprintln!(
        "{}: {} triangles, {} regions, {} portals, {} components, {} nav points, bake {:.1} ms, load {load_ms:.1} ms, {size} bytes -> {}",
        mesh.name(),
        s.triangles,
        s.regions,
        s.portals,
        s.components,
        mesh.nav_points().len(),
        s.bake_ms,
        output.display()
    );
    match mesh.hierarchy_stats() {
        Some(h) => eprintln!(
            "hierarchy: {} clusters (aiming for {} regions each), {} nav nodes, {} corridors ({} crossings), {} leg-table entries, {}all-pairs table, {} bytes in the file, {} as the byte bound counts them ({:.2}x the file without it), built in {:.1} ms",
            h.clusters,
            h.cluster_aim,
            h.nav_nodes,
            h.corridors,
            h.crossings,
            h.leg_entries,
            if h.all_pairs_table { "" } else { "no " },
            hierarchy_file_bytes,
            h.bytes,
            h.bytes as f64 / (size.saturating_sub(hierarchy_file_bytes).max(1)) as f64,
            h.bake_ms
        ),
        None if !config.corridors => eprintln!("hierarchy: none (--no-corridors)"),
        None => eprintln!(
            "hierarchy: none (it would not pay for itself on this mesh, or not within 3 times the bytes of the rest of the file: every query uses the flat search)"
        ),
    }
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    Ok(())
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
        QueryError::NoRoom { .. } => "no_room",
        QueryError::Unreachable => "unreachable",
        QueryError::BudgetExhausted { .. } => "budget_exhausted",
        _ => "error",
    }
}

/// Bakes `map` in tiles, places and removes the buildings by runtime edits
/// (reporting edit times on stderr), writes the stamped map if asked, and
/// returns the edited mesh (radius 0, serving radii up to `max_radius`).
fn place_buildings(
    map: &FsPath,
    scenarios: &[Scenario],
    (hierarchy, max_radius): (bool, f32),
    b: &Buildings,
    json: bool,
) -> Result<NavMesh, Failure> {
    let grid = portalnav::Grid::from_file(map).map_err(fail(EXIT_INPUT))?;
    let config = BakeConfig {
        corridors: hierarchy,
        tile_size: Some(b.tile),
        max_radius: Some(max_radius),
        ..BakeConfig::default()
    };
    let mut cache =
        portalnav::TileCache::new(&grid.to_level(), &config).map_err(fail(EXIT_BAKE))?;
    let (w, h, k) = (
        grid.width() as i64,
        grid.height() as i64,
        i64::from(b.size.max(1)),
    );
    let keep_clear: std::collections::HashSet<(i64, i64)> = scenarios
        .iter()
        .flat_map(|s| [s.start, s.goal])
        .map(|(x, y)| (i64::from(x), i64::from(y)))
        .collect();
    // xorshift64*, so the places depend on the seed alone
    let mut state = b.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut draw = |n: i64| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) % n.max(1) as u64
    };
    let mut placed = Vec::with_capacity(b.buildings);
    let mut add_us = Vec::with_capacity(b.buildings);
    let mut tries = 0usize;
    while placed.len() < b.buildings && tries < 1000 * b.buildings.max(1) {
        tries += 1;
        let (x, y) = (draw(w - k + 1) as i64, draw(h - k + 1) as i64);
        let clear = (y..y + k).all(|cy| (x..x + k).all(|cx| !keep_clear.contains(&(cx, cy))));
        if !grid.is_free(x, y) || !clear {
            continue;
        }
        let (fx, fy, side) = (x as f32, y as f32, k as f32);
        let outline = [
            Vec2::new(fx, fy),
            Vec2::new(fx + side, fy),
            Vec2::new(fx + side, fy + side),
            Vec2::new(fx, fy + side),
        ];
        let t = Instant::now();
        let id = cache.add_obstacle(&outline).map_err(fail(EXIT_BAKE))?;
        add_us.push(t.elapsed().as_secs_f64() * 1e6);
        placed.push((id, x, y));
    }
    let mut remove_us = Vec::with_capacity(b.remove);
    for _ in 0..b.remove.min(placed.len()) {
        let (id, _, _) = placed.swap_remove(draw(placed.len() as i64) as usize);
        let t = Instant::now();
        cache.remove_obstacle(id).map_err(fail(EXIT_BAKE))?;
        remove_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    if let Some(path) = &b.stamped {
        let mut free = grid.mask().to_vec();
        for &(_, x, y) in &placed {
            for cy in y..y + k {
                for cx in x..x + k {
                    free[(cy * w + cx) as usize] = false;
                }
            }
        }
        let mut text = format!("type octile\nheight {h}\nwidth {w}\nmap\n");
        for row in free.chunks(w as usize) {
            text.extend(row.iter().map(|&f| if f { '.' } else { '@' }));
            text.push('\n');
        }
        portalnav::write_atomically(path, text.as_bytes())
            .map_err(|e| fail(EXIT_OUTPUT)(format!("{}: {e}", path.display())))?;
    }
    // the all-pairs table the edits left pending, as a game would refresh
    // it over the frames after them
    let t = Instant::now();
    let pending = cache.table_pending().map(|(_, rows)| rows);
    cache.refresh_table(usize::MAX);
    let refresh_ms = t.elapsed().as_secs_f64() * 1e3;
    if !json {
        let stats = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let at = |q: f64| {
                v.get(((v.len() as f64 - 1.0) * q).round() as usize)
                    .copied()
                    .unwrap_or(0.0)
            };
            format!(
                "median {:.0} us, p99 {:.0} us, max {:.0} us",
                at(0.5),
                at(0.99),
                at(1.0)
            )
        };
        eprintln!(
            "placed {} buildings of {k} x {k} cells (asked {}), removed {}: add {}; remove {}",
            add_us.len(),
            b.buildings,
            remove_us.len(),
            stats(&mut add_us),
            stats(&mut remove_us)
        );
        if let Some(rows) = pending {
            eprintln!("all-pairs table refreshed after the edits: {rows} rows, {refresh_ms:.1} ms");
        }
    }
    Ok(cache.into_mesh())
}

fn run_scen(
    map: &FsPath,
    scen: &FsPath,
    radius: f32,
    hierarchy: bool,
    out: Option<&FsPath>,
    json: bool,
    buildings: &Buildings,
) -> Result<(), Failure> {
    if let Some(out) = out {
        check_output(out, &[map, scen])?;
    }
    if let Some(stamped) = &buildings.stamped {
        check_output(stamped, &[map, scen])?;
    }
    check_radius(Some(radius))?;
    let scenarios = Scenario::load_file(scen).map_err(fail(EXIT_INPUT))?;
    let started = Instant::now();
    let mesh = if buildings.buildings == 0 {
        let config = BakeConfig {
            max_radius: Some(radius),
            corridors: hierarchy,
            ..BakeConfig::default()
        };
        bake_level(map, &config)?
    } else {
        place_buildings(map, &scenarios, (hierarchy, radius), buildings, json)?
    };
    let bake_ms = started.elapsed().as_secs_f64() * 1e3;
    if !json {
        eprintln!(
            "baked {}{}: {} regions, {} portals, {} in {bake_ms:.1} ms",
            map.display(),
            if buildings.buildings > 0 {
                " and edited"
            } else {
                ""
            },
            mesh.region_count(),
            mesh.portal_count(),
            mesh.hierarchy_stats()
                .map_or("flat (no hierarchy)".to_string(), |h| format!(
                    "{} clusters, {} nav nodes, {} corridors",
                    h.clusters, h.nav_nodes, h.corridors
                )),
        );
    }
    let started = Instant::now();
    let mesh = sized(&mesh, None, Some(radius))?;
    let derive_ms = started.elapsed().as_secs_f64() * 1e3;
    if !json && radius > 0.0 {
        eprintln!(
            "derived the mesh for radius {radius}: {} regions, {} portals in {derive_ms:.1} ms",
            mesh.region_count(),
            mesh.portal_count()
        );
    }
    // a CSV file is written whole at the end, atomically (an interrupted
    // run leaves the previous file); standard output, and an output that is
    // not a regular file (/dev/null, a pipe), row by row
    let special = out.filter(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file()));
    let atomic = out.filter(|_| special.is_none());
    if let Some(p) = atomic {
        // a folder that is not there fails now, not after every query
        let folder = p.parent().filter(|f| !f.as_os_str().is_empty());
        if folder.is_some_and(|f| !f.is_dir()) {
            return Err(fail(EXIT_OUTPUT)(format!(
                "{}: its folder does not exist",
                p.display()
            )));
        }
    }
    let mut csv = Vec::new();
    let mut writer: Option<Box<dyn std::io::Write + '_>> = match (atomic, special) {
        (Some(_), _) => Some(Box::new(&mut csv)),
        (None, Some(p)) => Some(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .map_err(|e| fail(EXIT_OUTPUT)(format!("{}: {e}", p.display())))?,
        ))),
        (None, None) if json => None,
        (None, None) => Some(Box::new(std::io::BufWriter::new(std::io::stdout().lock()))),
    };
    let write_failed = |e: std::io::Error| fail(EXIT_OUTPUT)(e);
    if let Some(w) = writer.as_mut() {
        writeln!(w, "id,status,length,micros,waypoints").map_err(write_failed)?;
    }
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let mut micros = Vec::with_capacity(scenarios.len());
    let (mut solved, mut partial, mut ratio_sum, mut ratio_n) = (0usize, 0usize, 0.0f64, 0usize);
    let mut failures: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut path = portalnav::Path::default();
    let bar = counter(scenarios.len());
    let mut line = String::new();
    for (id, s) in scenarios.iter().enumerate() {
        let t = Instant::now();
        let result =
            query.find_path_into(&mesh, s.start_point(), s.goal_point(), &filter, &mut path);
        let us = t.elapsed().as_secs_f64() * 1e6;
        bar.inc(1);
        micros.push(us);
        line.clear();
        match result {
            Ok(()) => {
                let status = if path.status() == portalnav::PathStatus::Complete {
                    solved += 1;
                    if s.optimal > 0.0 {
                        ratio_sum += f64::from(path.length()) / s.optimal;
                        ratio_n += 1;
                    }
                    "ok"
                } else {
                    partial += 1;
                    "partial"
                };
                use std::fmt::Write as _;
                let _ = write!(line, "{id},{status},{:.6},{us:.2},", path.length());
                for (k, p) in path.waypoints().iter().enumerate() {
                    let sep = if k == 0 { "" } else { ";" };
                    let _ = write!(line, "{sep}{} {}", p.x, p.y);
                }
            }
            Err(e) => {
                *failures.entry(error_kind(&e)).or_default() += 1;
                line = format!("{id},{},,{us:.2},", error_kind(&e));
            }
        }
        if let Some(w) = writer.as_mut() {
            writeln!(w, "{line}").map_err(write_failed)?;
        }
    }
    bar.finish_and_clear();
    if let Some(w) = writer.as_mut() {
        w.flush().map_err(write_failed)?;
    }
    drop(writer);
    if let Some(path) = atomic {
        portalnav::write_atomically(path, &csv).map_err(fail(EXIT_OUTPUT))?;
    }
    micros.sort_by(f64::total_cmp);
    let median = micros.get(micros.len() / 2).copied().unwrap_or(0.0);
    let mean = micros.iter().sum::<f64>() / micros.len().max(1) as f64;
    let ratio = (ratio_n > 0).then(|| ratio_sum / ratio_n as f64);
    if json {
        let summary = json!({
            "map": map.display().to_string(),
            "scenarios": scen.display().to_string(),
            "mode": if mesh.hierarchy_stats().is_some() { "hierarchical" } else { "flat" },
            "radius": radius,
            "regions": mesh.region_count(),
            "bake_ms": bake_ms,
            "derive_ms": derive_ms,
            "problems": scenarios.len(),
            "solved": solved,
            "partial": partial,
            "failed": failures,
            "mean_length_over_optimum": ratio,
            "median_us": median,
            "mean_us": mean,
        });
        println!("{summary}");
    } else {
        eprintln!(
            "solved {solved}/{}, mean length / octile optimum {:.4}, median {median:.1} us, mean {mean:.1} us",
            scenarios.len(),
            ratio.unwrap_or(0.0)
        );
    }
    Ok(())
}
