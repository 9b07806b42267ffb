//! Group moves: many units to one goal, each checked against the unit's own
//! query and against the map's cells.

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter, Scenario, SearchLevel};

use crate::common::{data_dir, CheckGrid};

fn load(name: &str) -> (NavMesh, CheckGrid, Vec<Scenario>) {
    let map = data_dir().join("maps").join(format!("{name}.map"));
    let level = Level::from_movingai_file(&map).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    (mesh, CheckGrid::load(&map), scens)
}

/// Aurora's hierarchy is searched (over 512 nav nodes), so the group shares
/// one search from the goal. Every unit's path is valid and no longer than
/// its own query's; most go through the nav nodes.
#[test]
fn a_group_on_a_searched_hierarchy_matches_its_units_own_queries() {
    let (mesh, grid, scens) = load("Aurora");
    assert!(mesh.hierarchy_stats().unwrap().nav_nodes > 512);
    let goal = scens.last().unwrap().goal_point();
    let mut starts: Vec<_> = scens.iter().step_by(7).map(|s| s.start_point()).collect();
    starts.push(starts[3]); // two units on one point
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    let paths = query.find_paths_to(&mesh, &starts, goal, &filter);
    assert_eq!(paths.len(), starts.len());
    let mut via_nav_points = 0;
    for (&start, group) in starts.iter().zip(&paths) {
        let alone = query.find_path(&mesh, start, goal, &filter);
        let (group, alone) = match (group, alone) {
            (Ok(g), Ok(a)) => (g, a),
            (g, a) => {
                assert_eq!(g.as_ref().err(), a.as_ref().err(), "{start}");
                continue;
            }
        };
        let w = group.waypoints();
        assert_eq!((w[0], *w.last().unwrap()), (start, goal));
        for s in w.windows(2) {
            assert_eq!(grid.segment_problem(s[0], s[1]), None, "{start}: {s:?}");
        }
        assert!(
            group.length() <= alone.length() + 1e-4,
            "{start}: group {} vs alone {}",
            group.length(),
            alone.length()
        );
        via_nav_points += usize::from(group.level() == SearchLevel::NavPoints);
    }
    assert!(
        via_nav_points * 2 > starts.len(),
        "{via_nav_points} of {}",
        starts.len()
    );
    assert_eq!(paths[3], paths[starts.len() - 1]);
}

/// With the all-pairs table (den520d) a group move is its units' own
/// queries, path for path.
#[test]
fn a_group_on_a_tabled_hierarchy_is_its_units_own_queries() {
    let (mesh, _, scens) = load("den520d");
    assert!(mesh.hierarchy_stats().unwrap().nav_nodes <= 512);
    let goal = scens[0].goal_point();
    let starts: Vec<_> = scens.iter().step_by(5).map(|s| s.start_point()).collect();
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    let paths = query.find_paths_to(&mesh, &starts, goal, &filter);
    for (&start, group) in starts.iter().zip(&paths) {
        assert_eq!(
            group,
            &query.find_path(&mesh, start, goal, &filter),
            "{start}"
        );
    }
}
