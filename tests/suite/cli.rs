//! The command line as a script or an editor runs it: arguments, exit codes,
//! stdout and stderr (built with the default `cli` feature).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::data_dir;

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("portalnav-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn portalnav(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_portalnav"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A 20 x 20 square centred on the origin, with a square obstacle `half`
/// units either way of the centre, written as `dir/name`.
fn square_level(dir: &Path, name: &str, half: i32) -> String {
    let path = dir.join(name);
    let h = half;
    std::fs::write(
        &path,
        format!(
            r#"{{"walkable": [[[-10,-10],[10,-10],[10,10],[-10,10]]],
                "obstacles": [[[-{h},-{h}],[{h},-{h}],[{h},{h}],[-{h},{h}]]]}}"#
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// A 20 x 20 square centred on the origin, with a pillar in the middle.
fn centred_level(dir: &Path) -> String {
    square_level(dir, "centred.json", 2)
}

#[test]
fn negative_and_scientific_coordinates_are_accepted() {
    let dir = scratch("negative");
    let level = centred_level(&dir);
    for args in [
        ["-5", "-5", "5", "5"],
        ["-5e0", "-5", "5", "5.0e0"],
        ["-5", "-5.", "5", "5"],
    ] {
        let mut all = vec!["path", level.as_str()];
        all.extend(args);
        let out = portalnav(&all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let mut lines = stdout.lines();
        assert!(lines.next().unwrap().starts_with("length "), "{stdout}");
        let points: Vec<&str> = lines.collect();
        assert_eq!(points.first(), Some(&"-5 -5"), "{stdout}");
        assert_eq!(points.last(), Some(&"5 5"), "{stdout}");
        // the pillar is in the way: the path wraps one of its corners
        assert_eq!(points.len(), 3, "{stdout}");
    }
}

#[test]
fn bake_json_is_one_object_with_the_summary() {
    let dir = scratch("bake-json");
    let out_file = dir.join("rts_base.nav");
    let level = data_dir().join("levels/rts_base.json");
    let out = portalnav(&[
        "bake",
        level.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.trim().lines().count(), 1, "one line: {stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let mesh = portalnav::NavMesh::load(&out_file).unwrap();
    assert_eq!(v["regions"], mesh.region_count());
    assert_eq!(v["portals"], mesh.portal_count());
    assert_eq!(v["bytes"], std::fs::metadata(&out_file).unwrap().len());
    assert_eq!(v["name"], "rts_base");
    let h = mesh.hierarchy_stats().expect("baked with the hierarchy");
    assert_eq!(v["hierarchy"]["nav_nodes"], h.nav_nodes);
    assert!(v["bake_ms"].as_f64().unwrap() > 0.0);
    assert!(v["warnings"].is_array());
}

#[test]
fn scen_json_counts_the_problems() {
    let maps = data_dir().join("maps");
    let (map, scen) = (maps.join("arena.map"), maps.join("arena.map.scen"));
    for flat in [false, true] {
        let mut args = vec![
            "scen",
            map.to_str().unwrap(),
            scen.to_str().unwrap(),
            "--json",
        ];
        if flat {
            args.push("--flat");
        }
        let out = portalnav(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        let problems = portalnav::Scenario::load_file(&scen).unwrap().len();
        assert_eq!(v["problems"], problems);
        assert_eq!(v["solved"], problems);
        assert_eq!(v["mode"], if flat { "flat" } else { "hierarchical" });
        let ratio = v["mean_length_over_optimum"].as_f64().unwrap();
        assert!(ratio > 0.9 && ratio <= 1.0 + 1e-6, "{ratio}");
    }
}

#[test]
fn a_missing_file_exits_3() {
    let out = portalnav(&["path", "no/such/level.json", "1", "1", "2", "2"]);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("error: no/such/level.json"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_corrupt_baked_file_exits_3() {
    let dir = scratch("corrupt");
    let nav = dir.join("level.nav");
    let level = centred_level(&dir);
    let out = portalnav(&["bake", &level, "-o", nav.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut bytes = std::fs::read(&nav).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&nav, &bytes).unwrap();
    let out = portalnav(&["path", nav.to_str().unwrap(), "-5", "-5", "5", "5"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("corrupted"));
}

#[test]
fn an_off_mesh_point_exits_5() {
    let dir = scratch("off-mesh");
    let level = centred_level(&dir);
    // inside the pillar
    let out = portalnav(&["path", &level, "0", "0", "5", "5"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not on the navigation mesh"));
    assert!(out.stdout.is_empty());
}

#[test]
fn bake_refuses_to_write_over_its_input() {
    let dir = scratch("overwrite");
    let level = centred_level(&dir);
    let before = std::fs::read(&level).unwrap();
    let out = portalnav(&["bake", &level, "-o", &level]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(&level).unwrap(),
        before,
        "the level is intact"
    );
}

/// Outputs are written whole or not at all: a bake that fails leaves the
/// file of the last one that worked, and no temporary file beside it.
#[test]
fn a_failed_bake_leaves_the_previous_file() {
    let dir = scratch("failed-bake");
    let level = centred_level(&dir);
    let nav = dir.join("level.nav");
    let out = portalnav(&["bake", &level, "-o", nav.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = std::fs::read(&nav).unwrap();
    // an obstacle over the whole square: nothing walkable
    let covered = square_level(&dir, "covered.json", 11);
    let out = portalnav(&["bake", &covered, "-o", nav.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&nav).unwrap(), before, "the last good file");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["centred.json", "covered.json", "level.nav"]);
    // a scenario run's table: whole (a header and a row a problem), with no
    // temporary file left beside it
    let csv = dir.join("paths.csv");
    let scen = data_dir().join("maps/arena.map.scen");
    let map = data_dir().join("maps/arena.map");
    let args = [
        "scen",
        map.to_str().unwrap(),
        scen.to_str().unwrap(),
        "--out",
        csv.to_str().unwrap(),
    ];
    let out = portalnav(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = std::fs::read_to_string(&csv).unwrap();
    let rows = std::fs::read_to_string(&scen).unwrap().lines().count() - 1;
    assert_eq!(
        table.lines().count(),
        rows + 1,
        "a header and a row a problem"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
    // an output that is not a regular file is written row by row; one in a
    // folder that is not there fails before the queries run
    let mut to = args;
    to[4] = "/dev/null";
    let out = portalnav(&to);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let missing = dir.join("no/such/folder/paths.csv");
    to[4] = missing.to_str().unwrap();
    let out = portalnav(&to);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("folder does not exist"));
}

#[test]
fn a_bad_command_line_exits_2() {
    let out = portalnav(&["path", "level.json", "1", "x", "2", "2"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `scen --buildings`: buildings placed and removed by runtime edits; the
/// stamped map it writes is the oracle: every path valid on it, reachable
/// exactly when it connects the ends; the same seed gives the same map.
#[test]
fn scen_with_buildings_answers_as_the_stamped_map_says() {
    let dir = scratch("buildings");
    let map = data_dir().join("maps/den520d.map");
    let scen = data_dir().join("maps/den520d.map.scen");
    let run = |stamped: &Path, csv: &Path| {
        let out = portalnav(&[
            "scen",
            map.to_str().unwrap(),
            scen.to_str().unwrap(),
            "--flat",
            "--buildings",
            "40",
            "--remove",
            "10",
            "--seed",
            "7",
            "--stamped",
            stamped.to_str().unwrap(),
            "--out",
            csv.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let (stamped, csv) = (dir.join("stamped.map"), dir.join("paths.csv"));
    let stderr = run(&stamped, &csv);
    assert!(
        stderr.contains("placed 40 buildings of 4 x 4 cells"),
        "{stderr}"
    );
    assert!(stderr.contains("removed 10"), "{stderr}");
    let again = dir.join("again.map");
    run(&again, &dir.join("again.csv"));
    assert_eq!(
        std::fs::read(&stamped).unwrap(),
        std::fs::read(&again).unwrap()
    );

    let grid = crate::common::CheckGrid::load(&stamped);
    let original = crate::common::CheckGrid::load(&map);
    let blocked = |g: &crate::common::CheckGrid| {
        (0..g.height)
            .flat_map(|y| (0..g.width).map(move |x| (x, y)))
            .filter(|&(x, y)| !g.free(x, y))
            .count()
    };
    let added = blocked(&grid) - blocked(&original);
    assert!(added > 0 && added <= 30 * 16, "{added} cells stamped");
    let scenarios = portalnav::Scenario::load_file(&scen).unwrap();
    let rows = std::fs::read_to_string(&csv).unwrap();
    let (mut ok, mut unreachable) = (0, 0);
    for (row, s) in rows.lines().skip(1).zip(&scenarios) {
        let cols: Vec<&str> = row.split(',').collect();
        let cell = |(x, y): (u32, u32)| (i64::from(x), i64::from(y));
        let optimum =
            crate::common::octile_optimum(|x, y| grid.free(x, y), cell(s.start), cell(s.goal));
        match cols[1] {
            "ok" => {
                ok += 1;
                assert!(
                    optimum.is_some(),
                    "{row}: the stamped map does not connect the ends"
                );
                let points: Vec<glam::Vec2> = cols[4]
                    .split(';')
                    .map(|p| {
                        let (x, y) = p.split_once(' ').unwrap();
                        glam::vec2(x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect();
                for seg in points.windows(2) {
                    assert_eq!(grid.segment_problem(seg[0], seg[1]), None, "{row}");
                }
                let length: f64 = cols[2].parse().unwrap();
                assert!(
                    length <= optimum.unwrap() + 1e-3,
                    "{row}: over the stamped octile optimum {optimum:?}"
                );
            }
            "unreachable" => {
                unreachable += 1;
                assert_eq!(optimum, None, "{row}: the stamped map connects the ends");
            }
            other => panic!("{row}: {other}"),
        }
    }
    assert_eq!(ok + unreachable, scenarios.len());
}

/// One baked file serves every agent class and any radius up to its
/// maximum; above it, the command line is refused naming the maximum.
#[test]
fn one_baked_file_serves_every_radius_up_to_its_maximum() {
    let dir = scratch("radii");
    let level = data_dir().join("levels/rts_base.json");
    let nav = dir.join("rts_base.nav");
    let nav = nav.to_str().unwrap();
    let out = portalnav(&["bake", level.to_str().unwrap(), "-o", nav]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let path = |extra: &[&str]| {
        let mut args = vec!["path", nav, "8", "8", "90", "50"];
        args.extend_from_slice(extra);
        portalnav(&args)
    };
    let lengths: Vec<f32> = [
        &[][..],
        &["--agent", "infantry"],
        &["--radius", "1.2"],
        &["--agent", "tank"],
    ]
    .iter()
    .map(|extra| {
        let out = path(extra);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        stdout.split_whitespace().nth(1).unwrap().parse().unwrap()
    })
    .collect();
    // a wider unit keeps further from the corners: never a shorter path
    assert!(
        lengths.windows(2).all(|w| w[0] <= w[1] + 1e-4),
        "{lengths:?}"
    );
    assert!(lengths[3] > lengths[0] + 0.5, "{lengths:?}");
    for bad in [&["--radius", "-1"][..], &["--radius", "NaN"]] {
        let out = path(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out.stderr));
    }
    // a level baked on the fly serves the radius asked for
    let level = level.to_str().unwrap();
    let out = portalnav(&["path", level, "8", "8", "90", "50", "--radius", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = portalnav(&["path", level, "8", "8", "90", "50", "--radius", "-3"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = path(&["--radius", "2.5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("maximum 2"),
        "{}",
        text(&out.stderr)
    );
    let out = path(&["--agent", "titan"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// `scen --radius` with runtime buildings: the mesh for the radius is
/// derived from the edited mesh, and every path keeps the radius from every
/// blocked cell of the stamped map it writes.
#[test]
fn scen_for_a_radius_keeps_it_from_the_stamped_buildings() {
    let dir = scratch("radius-buildings");
    let map = data_dir().join("maps/den520d.map");
    let scen = data_dir().join("maps/den520d.map.scen");
    let (stamped, csv) = (dir.join("stamped.map"), dir.join("paths.csv"));
    let out = portalnav(&[
        "scen",
        map.to_str().unwrap(),
        scen.to_str().unwrap(),
        "--flat",
        "--radius",
        "0.95",
        "--buildings",
        "30",
        "--stamped",
        stamped.to_str().unwrap(),
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let grid = crate::common::CheckGrid::load(&stamped);
    let rows = std::fs::read_to_string(&csv).unwrap();
    let (mut ok, mut worst) = (0, f64::INFINITY);
    for row in rows.lines().skip(1) {
        let cols: Vec<&str> = row.split(',').collect();
        if cols[1] != "ok" {
            assert!(["no_room", "unreachable"].contains(&cols[1]), "{row}");
            continue;
        }
        ok += 1;
        let points: Vec<glam::Vec2> = cols[4]
            .split(';')
            .map(|p| {
                let mut xy = p.split(' ').map(|v| v.parse::<f32>().unwrap());
                glam::vec2(xy.next().unwrap(), xy.next().unwrap())
            })
            .collect();
        for w in points.windows(2) {
            worst = worst.min(grid.clearance(w[0], w[1], 2.0));
        }
    }
    assert!(ok > 300, "{ok} paths");
    assert!(
        worst >= 0.95 - 1e-3,
        "a path passes {worst} from a blocked cell"
    );
}

/// `render --by-radius` colours by the level's agent classes, or by the
/// radii given (baking a grid map to serve the widest); a mesh that serves
/// no radius above its own, with none given, is a usage error.
#[test]
fn render_colours_by_the_largest_radius_that_passes() {
    let dir = scratch("by-radius");
    let svg = dir.join("by.svg");
    let level = data_dir().join("levels/rts_base.json");
    let out = portalnav(&[
        "render",
        level.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
        "--by-radius",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("up to radius"), "a legend");
    let map = data_dir().join("maps/den520d.map");
    let map = map.to_str().unwrap();
    let out = portalnav(&["render", map, "-o", svg.to_str().unwrap(), "--by-radius"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = portalnav(&[
        "render",
        map,
        "-o",
        svg.to_str().unwrap(),
        "--by-radius",
        "0.45",
        "1.45",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("up to radius 1.45"));
    let out = portalnav(&[
        "render",
        map,
        "-o",
        svg.to_str().unwrap(),
        "--by-radius",
        "NaN",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
