//! Scenario suite: every problem of every bundled Moving AI map is solved with a
//! valid path (in free space, from the start centre to the goal centre), by
//! the flat region search and through the nav-point hierarchy, and the
//! hierarchy's paths stay within the documented bound of the flat ones.
//!
//! No path, flat or hierarchical, is longer than the octile optimum (within
//! the rounding of the optimum as printed in the scenario file).

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, Path, QueryFilter, Scenario, SearchLevel};

use crate::common::{bundled_maps, movingai_dir, CheckGrid};

/// Bound on a hierarchical path against the flat one on the same problem
/// (ARCHITECTURE.md, "Hierarchy"): the mean ratio per map, and any single path.
const MEAN_HIERARCHY_RATIO: f64 = 1.005;
const MAX_HIERARCHY_RATIO: f64 = 1.10;

#[test]
fn every_scenario_on_every_bundled_map_is_solved_validly() {
    run_suite();
}

fn check_path(grid: &CheckGrid, what: &str, s: &Scenario, path: &Path) {
    let (a, b) = (s.start_point(), s.goal_point());
    let w = path.waypoints();
    assert_eq!(w[0], a, "{what} starts at the start");
    assert_eq!(*w.last().unwrap(), b, "{what} ends at the goal");
    for seg in w.windows(2) {
        if let Some(problem) = grid.segment_problem(seg[0], seg[1]) {
            panic!("{what}: segment {} -> {} {problem}", seg[0], seg[1]);
        }
    }
    let len = f64::from(path.length());
    let sum: f64 = w.windows(2).map(|s| f64::from(s[0].distance(s[1]))).sum();
    assert!(
        (len - sum).abs() < 1e-3 * len.max(1.0),
        "{what}: length is the sum of segments"
    );
}

fn run_suite() {
    let mut over_optimum = Vec::new();
    for name in bundled_maps() {
        let map_path = movingai_dir().join(format!("{name}.map"));
        let grid = CheckGrid::load(&map_path);
        let level = Level::from_movingai_file(&map_path).unwrap();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let scens = Scenario::load_file(movingai_dir().join(format!("{name}.map.scen"))).unwrap();
        let mut hier = NavQuery::new();
        let mut flat = NavQuery::new();
        flat.set_use_hierarchy(false);
        let (mut ratio_sum, mut ratios, mut via_nav_points) = (0.0, Vec::new(), 0);
        for (i, s) in scens.iter().enumerate() {
            let (a, b) = (s.start_point(), s.goal_point());
            let f = QueryFilter::default();
            let p_flat = flat
                .find_path(&mesh, a, b, &f)
                .unwrap_or_else(|e| panic!("{name} #{i} flat: {e}"));
            let p_hier = hier
                .find_path(&mesh, a, b, &f)
                .unwrap_or_else(|e| panic!("{name} #{i} hierarchical: {e}"));
            assert_ne!(p_flat.level(), SearchLevel::NavPoints);
            check_path(&grid, &format!("{name} #{i} flat"), s, &p_flat);
            check_path(&grid, &format!("{name} #{i} hierarchical"), s, &p_hier);
            let (lf, lh) = (f64::from(p_flat.length()), f64::from(p_hier.length()));
            if p_hier.level() == SearchLevel::NavPoints {
                via_nav_points += 1;
            }
            if lf > 0.0 {
                let r = lh / lf;
                assert!(
                    r <= MAX_HIERARCHY_RATIO,
                    "{name} #{i}: hierarchical {lh} vs flat {lf}"
                );
                ratios.push(r);
            }
            assert!(
                lf <= s.optimal + s.tolerance,
                "{name} #{i} flat: {lf:.3} is longer than the octile optimum {}",
                s.optimal
            );
            if lh > s.optimal + s.tolerance {
                over_optimum.push(format!("{name} #{i}: {lh:.3} > {}", s.optimal));
            }
            if s.optimal > 0.0 {
                ratio_sum += lh / s.optimal;
            }
        }
        ratios.sort_by(f64::total_cmp);
        let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
        let p99 = ratios.get(ratios.len() * 99 / 100).copied().unwrap_or(1.0);
        let worst = ratios.last().copied().unwrap_or(1.0);
        eprintln!(
            "{name}: {} scenarios, {via_nav_points} via nav points; hierarchical / octile optimum {:.4}; hierarchical / flat mean {mean:.4}, p99 {p99:.4}, worst {worst:.4}",
            scens.len(),
            ratio_sum / scens.len() as f64
        );
        assert!(
            mean <= MEAN_HIERARCHY_RATIO,
            "{name}: mean hierarchical / flat {mean}"
        );
        if mesh.region_count() > 500 {
            assert!(
                via_nav_points * 2 > scens.len(),
                "{name}: most problems should be long enough for the hierarchy"
            );
        }
    }
    eprintln!(
        "{} hierarchical paths above the octile optimum:",
        over_optimum.len()
    );
    for o in &over_optimum {
        eprintln!("  {o}");
    }
    assert!(
        over_optimum.is_empty(),
        "no path is longer than the octile optimum"
    );
}

/// Regression: Aurora's start (659.5, 165.5) lies exactly on a portal; the
/// funnel took the portal as seen edge-on and detoured around its far end
/// (83.26 against an octile optimum of 73.66).
#[test]
fn start_on_a_portal_goes_straight() {
    let level = Level::from_movingai_file(movingai_dir().join("Aurora.map")).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let (a, b) = (glam::vec2(659.5, 165.5), glam::vec2(731.5, 161.5));
    let path = NavQuery::new()
        .find_path(&mesh, a, b, &QueryFilter::default())
        .unwrap();
    assert_eq!(
        path.waypoints(),
        &[a, b],
        "open field: one straight segment"
    );
}
