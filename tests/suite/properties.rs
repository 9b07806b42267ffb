//! Property tests on random levels: grid-aligned rectangles as obstacles in a
//! square, checked against a rasterised oracle of the same cells.

use glam::{vec2, Vec2};
use portalnav::{
    BakeConfig, BakeError, Level, NavMesh, NavQuery, Path, QueryError, QueryFilter, SearchLevel,
};
use proptest::prelude::*;

use crate::common::CheckGrid;

pub const SIDE: i64 = 16;

/// Bound on a hierarchical path against the flat one on random levels
/// (ARCHITECTURE.md, "Hierarchy"). Clusters of 3 regions make these small
/// levels use the hierarchy for most queries, far more often than a real map.
const HIERARCHY_BOUND: f32 = 1.25;

fn check_path(grid: &CheckGrid, a: Vec2, b: Vec2, path: &Path) -> Result<(), TestCaseError> {
    let w = path.waypoints();
    prop_assert_eq!(w[0], a);
    prop_assert_eq!(*w.last().unwrap(), b);
    prop_assert!(path.length() >= a.distance(b) - 1e-4);
    for s in w.windows(2) {
        let problem = grid.segment_problem(s[0], s[1]);
        prop_assert!(problem.is_none(), "{} -> {}: {:?}", s[0], s[1], problem);
    }
    Ok(())
}

pub fn rect(x0: i64, y0: i64, x1: i64, y1: i64) -> Vec<Vec2> {
    let (a, b, c, d) = (x0 as f32, y0 as f32, x1 as f32, y1 as f32);
    vec![vec2(a, b), vec2(c, b), vec2(c, d), vec2(a, d)]
}

/// Free-cell mask and 4-connected component labels of the cells.
pub fn oracle(obstacles: &[(i64, i64, i64, i64)]) -> (CheckGrid, Vec<i32>) {
    let mut free = vec![true; (SIDE * SIDE) as usize];
    for &(x0, y0, x1, y1) in obstacles {
        for y in y0.max(0)..y1.min(SIDE) {
            for x in x0.max(0)..x1.min(SIDE) {
                free[(y * SIDE + x) as usize] = false;
            }
        }
    }
    let mut label = vec![-1i32; free.len()];
    let mut next = 0;
    for start in 0..free.len() {
        if !free[start] || label[start] >= 0 {
            continue;
        }
        let mut stack = vec![start];
        label[start] = next;
        while let Some(c) = stack.pop() {
            let (x, y) = (c as i64 % SIDE, c as i64 / SIDE);
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if (0..SIDE).contains(&nx) && (0..SIDE).contains(&ny) {
                    let n = (ny * SIDE + nx) as usize;
                    if free[n] && label[n] < 0 {
                        label[n] = next;
                        stack.push(n);
                    }
                }
            }
        }
        next += 1;
    }
    (CheckGrid::from_mask(SIDE, SIDE, free), label)
}

pub fn obstacles() -> impl Strategy<Value = Vec<(i64, i64, i64, i64)>> {
    prop::collection::vec(
        (-2..SIDE, -2..SIDE, 1..8i64, 1..8i64).prop_map(|(x, y, w, h)| (x, y, x + w, y + h)),
        0..7,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_levels_bake_validate_and_route(obs in obstacles(), picks in prop::collection::vec((0..SIDE, 0..SIDE, 0..SIDE, 0..SIDE), 8)) {
        let level = Level {
            walkable: vec![rect(0, 0, SIDE, SIDE)],
            obstacles: obs.iter().map(|&(a, b, c, d)| rect(a, b, c, d)).collect(),
            ..Level::default()
        };
        let (grid, label) = oracle(&obs);
        let free_cells = label.iter().filter(|&&l| l >= 0).count();
        let config = BakeConfig { cluster_size: 3, ..BakeConfig::default() };
        let mesh = match NavMesh::bake(&level, &config) {
            Ok(mesh) => mesh,
            Err(BakeError::NothingWalkable { .. }) => {
                prop_assert_eq!(free_cells, 0);
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("bake failed: {e}"))),
        };
        prop_assert!(mesh.validate().is_ok(), "{:?}", mesh.validate());
        prop_assert!((mesh.stats().walkable_area - free_cells as f64).abs() < 1e-6,
            "area {} vs {} free cells", mesh.stats().walkable_area, free_cells);

        let mut q = NavQuery::new();
        let mut flat = NavQuery::new();
        flat.set_use_hierarchy(false);
        for &(sx, sy, gx, gy) in &picks {
            let (ls, lg) = (label[(sy * SIDE + sx) as usize], label[(gy * SIDE + gx) as usize]);
            let (a, b) = (vec2(sx as f32 + 0.5, sy as f32 + 0.5), vec2(gx as f32 + 0.5, gy as f32 + 0.5));
            let result = q.find_path(&mesh, a, b, &QueryFilter::default());
            if ls < 0 || lg < 0 {
                prop_assert!(matches!(result, Err(QueryError::OffMesh { .. })), "{:?}", result);
                continue;
            }
            if ls != lg {
                prop_assert_eq!(result, Err(QueryError::Unreachable));
                continue;
            }
            let path = result.map_err(|e| TestCaseError::fail(format!("{a} -> {b}: {e}")))?;
            check_path(&grid, a, b, &path)?;
            let flat_path = flat.find_path(&mesh, a, b, &QueryFilter::default()).unwrap();
            check_path(&grid, a, b, &flat_path)?;
            prop_assert!(flat_path.level() != SearchLevel::NavPoints);
            prop_assert!(path.length() <= flat_path.length() * HIERARCHY_BOUND + 1e-3,
                "{} -> {}: hierarchical {} ({:?}) vs flat {}", a, b, path.length(), path.level(), flat_path.length());
            let again = q.find_path(&mesh, a, b, &QueryFilter::default()).unwrap();
            prop_assert_eq!(&again, &path, "repeated queries give identical paths");
        }
    }
}

/// Side of the levels of the group-move property in clusters of 32:
/// large enough that many units start several clusters from the goal.
const GROUP_SIDE: i64 = 128;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A group move on random levels, in clusters of 32 regions on a side
    /// of 128 (units far from the goal go through the group's tree of
    /// corridors, with its loops and seams) or of 3 on a side of 64 (below
    /// 16 regions the query refines longer routes than the tree tells
    /// apart, so the tree must serve no unit). Every unit gets its own
    /// query's outcome, a valid path, never longer (1e-4).
    #[test]
    fn group_moves_match_their_units_own_queries(
        small in any::<bool>(),
        obs in prop::collection::vec(
            (-2..GROUP_SIDE, -2..GROUP_SIDE, 1..8i64, 1..8i64)
                .prop_map(|(x, y, w, h)| (x, y, x + w, y + h)),
            80..360,
        ),
        goal in (0..GROUP_SIDE, 0..GROUP_SIDE),
        starts in prop::collection::vec((0..GROUP_SIDE, 0..GROUP_SIDE), 32),
    ) {
        let (side, cluster_size) = if small { (GROUP_SIDE / 2, 3) } else { (GROUP_SIDE, 32) };
        let obs: Vec<_> = obs.into_iter().filter(|&(x, y, _, _)| x < side && y < side).collect();
        let level = Level {
            walkable: vec![rect(0, 0, side, side)],
            obstacles: obs.iter().map(|&(a, b, c, d)| rect(a, b, c, d)).collect(),
            ..Level::default()
        };
        let mut free = vec![true; (side * side) as usize];
        for &(x0, y0, x1, y1) in &obs {
            for y in y0.max(0)..y1.min(side) {
                for x in x0.max(0)..x1.min(side) {
                    free[(y * side + x) as usize] = false;
                }
            }
        }
        let grid = CheckGrid::from_mask(side, side, free);
        // these levels' hierarchies often break the byte bound
        let config = BakeConfig {
            cluster_size,
            max_hierarchy_ratio: 1000.0,
            ..BakeConfig::default()
        };
        let Ok(mesh) = NavMesh::bake(&level, &config) else {
            return Ok(());
        };
        let centre = |(x, y): (i64, i64)| vec2((x % side) as f32 + 0.5, (y % side) as f32 + 0.5);
        let goal = centre(goal);
        let starts: Vec<Vec2> = starts.into_iter().map(centre).collect();
        let filter = QueryFilter::default();
        let mut q = NavQuery::new();
        let group = q.find_paths_to(&mesh, &starts, goal, &filter);
        prop_assert_eq!(group.len(), starts.len());
        for (&a, got) in starts.iter().zip(&group) {
            let alone = q.find_path(&mesh, a, goal, &filter);
            match (got, &alone) {
                (Ok(path), Ok(own)) => {
                    check_path(&grid, a, goal, path)?;
                    prop_assert!(path.length() <= own.length() + 1e-4,
                        "{} -> {}: group {} vs own {}", a, goal, path.length(), own.length());
                }
                (got, alone) => prop_assert_eq!(got.as_ref().err(), alone.as_ref().err()),
            }
        }
    }
}

#[test]
fn threads_get_identical_paths() {
    let level =
        Level::from_movingai_file(crate::common::movingai_dir().join("den520d.map")).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let scens =
        portalnav::Scenario::load_file(crate::common::movingai_dir().join("den520d.map.scen"))
            .unwrap();
    let run = |mesh: &NavMesh| {
        let mut q = NavQuery::new();
        scens
            .iter()
            .step_by(7)
            .map(|s| {
                q.find_path(
                    mesh,
                    s.start_point(),
                    s.goal_point(),
                    &QueryFilter::default(),
                )
                .unwrap()
            })
            .collect::<Vec<_>>()
    };
    let alone = run(&mesh);
    let threaded: Vec<Vec<portalnav::Path>> = std::thread::scope(|s| {
        (0..3)
            .map(|_| s.spawn(|| run(&mesh)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    for t in threaded {
        assert_eq!(t, alone);
    }
}
