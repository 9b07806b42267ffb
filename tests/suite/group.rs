//! Group moves: many units to one goal, each checked against the unit's own
//! query and against the map's cells.

use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryFilter, Scenario, SearchLevel};

use crate::common::{data_dir, CheckGrid};

fn load(name: &str) -> (NavMesh, CheckGrid, Vec<Scenario>) {
    load_with(name, &BakeConfig::default())
}

fn load_with(name: &str, config: &BakeConfig) -> (NavMesh, CheckGrid, Vec<Scenario>) {
    let map = data_dir().join("maps").join(format!("{name}.map"));
    let level = Level::from_movingai_file(&map).unwrap();
    let mesh = NavMesh::bake(&level, config).unwrap();
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    (mesh, CheckGrid::load(&map), scens)
}

/// Aurora in clusters of 16 regions: too many nav nodes for the all-pairs
/// table, so group moves share one search from the goal.
pub(crate) fn searched_aurora() -> BakeConfig {
    BakeConfig {
        cluster_size: 16,
        ..BakeConfig::default()
    }
}

/// On a searched hierarchy (Aurora in small clusters) the group shares one
/// search from the goal. Every unit's path is valid and no longer than its
/// own query's; most go through the nav nodes.
#[test]
fn a_group_on_a_searched_hierarchy_matches_its_units_own_queries() {
    let (mesh, grid, scens) = load_with("Aurora", &searched_aurora());
    assert!(!mesh.hierarchy_stats().unwrap().all_pairs_table);
    group_matches_own_queries(&mesh, &grid, &scens);
}

/// As above on Aurora's default bake, which has the all-pairs table: the
/// goal's legs are pulled once and its distance from every nav node comes
/// from the table.
#[test]
fn a_group_on_a_tabled_aurora_matches_its_units_own_queries() {
    let (mesh, grid, scens) = load("Aurora");
    assert!(mesh.hierarchy_stats().unwrap().all_pairs_table);
    group_matches_own_queries(&mesh, &grid, &scens);
}

fn group_matches_own_queries(mesh: &NavMesh, grid: &CheckGrid, scens: &[Scenario]) {
    let goal = scens.last().unwrap().goal_point();
    let mut starts: Vec<_> = scens.iter().step_by(7).map(|s| s.start_point()).collect();
    starts.push(starts[3]); // two units on one point
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    let paths = query.find_paths_to(mesh, &starts, goal, &filter);
    assert_eq!(paths.len(), starts.len());
    let mut via_nav_points = 0;
    for (&start, group) in starts.iter().zip(&paths) {
        let alone = query.find_path(mesh, start, goal, &filter);
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
    assert!(mesh.hierarchy_stats().unwrap().all_pairs_table);
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

/// A group's answers do not depend on the order its units are answered in
/// (their own order, not the list's): each unit's answer is the one it gets
/// in a group of its own, and its place in the list changes nothing.
/// Writing them over an earlier group's answers (`find_paths_to_into`:
/// more of them, fewer, errors where paths were and paths where errors
/// were) gives exactly the fresh answers, and a query that answered one
/// group answers the next as a new query does. Aurora's tabled bake and a
/// searched one.
#[test]
fn group_answers_do_not_depend_on_unit_order_or_reused_buffers() {
    for config in [BakeConfig::default(), searched_aurora()] {
        let (mesh, _, scens) = load_with("Aurora", &config);
        let filter = QueryFilter::default();
        let goal = scens.last().unwrap().goal_point();
        let mut starts: Vec<_> = scens.iter().step_by(5).map(|s| s.start_point()).collect();
        // a unit off the map, and two units on each of two points (one of
        // them the unit off the map), apart in the list
        starts.insert(7, glam::vec2(-500.0, -500.0));
        starts.push(starts[3]);
        starts.push(starts[7]);
        let mut query = NavQuery::new();
        let fresh = query.find_paths_to(&mesh, &starts, goal, &filter);
        assert!(fresh[7].is_err() && fresh.iter().filter(|p| p.is_ok()).count() > 100);
        assert_eq!(fresh[3], fresh[starts.len() - 2]);
        assert!(fresh[starts.len() - 1].is_err());

        // each unit alone: the same answer as in the group
        for k in (0..starts.len()).step_by(9) {
            let alone = query.find_paths_to(&mesh, &starts[k..=k], goal, &filter);
            assert_eq!(alone[0], fresh[k], "unit {k} at {}", starts[k]);
        }
        // the same units listed backwards: the same answer per unit
        let reversed: Vec<_> = starts.iter().rev().copied().collect();
        let backwards = query.find_paths_to(&mesh, &reversed, goal, &filter);
        for (k, answer) in backwards.iter().rev().enumerate() {
            assert_eq!(answer, &fresh[k], "unit {k} at {}", starts[k]);
        }

        // over the answers of another group, then those of this one again
        let other_goal = scens[scens.len() / 2].goal_point();
        let many: Vec<_> = scens.iter().step_by(3).map(|s| s.start_point()).collect();
        let many_fresh = query.find_paths_to(&mesh, &many, other_goal, &filter);
        assert!(many.len() > starts.len() && many_fresh[7].is_ok());
        // a query that answered another group first answers as a new one
        let new_query = NavQuery::new().find_paths_to(&mesh, &many, other_goal, &filter);
        assert!(
            many_fresh == new_query,
            "a group's answers depend on the group before"
        );
        let mut out = Vec::new();
        query.find_paths_to_into(&mesh, &starts, goal, &filter, &mut out);
        assert_eq!(out, fresh);
        // more units, a path where an error was
        query.find_paths_to_into(&mesh, &many, other_goal, &filter, &mut out);
        assert_eq!(out, many_fresh);
        // fewer units, an error where a path was
        query.find_paths_to_into(&mesh, &starts, goal, &filter, &mut out);
        assert_eq!(out, fresh);
        query.find_paths_to_into(&mesh, &starts[..50], goal, &filter, &mut out);
        assert_eq!(out[..], fresh[..50]);
        assert_eq!(out.len(), 50);
    }
}

// ---- arrival slots ----

fn json_mesh(json: &str) -> NavMesh {
    NavMesh::bake(&Level::from_json_str(json).unwrap(), &BakeConfig::default()).unwrap()
}

/// Every pair of points at least `spacing` apart (less f32 rounding).
fn assert_spread(points: &[glam::Vec2], spacing: f32) {
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            assert!(a.distance(*b) >= spacing - 1e-3, "{a} and {b} too close");
        }
    }
}

/// On Aurora, slots around a scenario goal are distinct, on free cells of
/// the map, reachable from the target, and nearest first in open ground.
#[test]
fn arrival_slots_are_distinct_free_and_reachable() {
    let (mesh, grid, scens) = load("Aurora");
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    for s in scens.iter().step_by(500) {
        let target = s.goal_point();
        let slots = query
            .arrival_slots(&mesh, target, 60, 1.5, &filter)
            .unwrap();
        assert!(!slots.is_empty() && slots[0] == target);
        assert_spread(&slots, 1.5);
        for &p in &slots {
            assert!(grid.free(p.x.floor() as i64, p.y.floor() as i64), "{p}");
            let back = query.find_path(&mesh, target, p, &filter).unwrap();
            // joined by short clear steps: no slot is a long walk away
            assert!(
                back.length() <= 3.0 * target.distance(p) + 1.5,
                "{target} -> {p}"
            );
        }
    }
}

/// A wall beside the target splits the puddle: no slot lies beyond it, and
/// a pocket too small for the group gives the slots it holds.
#[test]
fn arrival_slots_stay_on_the_targets_side_and_in_its_pocket() {
    let mesh = json_mesh(
        r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]], [[50,0],[53,0],[53,3],[50,3]]],
            "obstacles": [[[0,20],[30,20],[30,20.5],[0,20.5]]]}"#,
    );
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let slots = query
        .arrival_slots(&mesh, glam::vec2(10.0, 19.0), 80, 1.0, &filter)
        .unwrap();
    assert_eq!(slots.len(), 80);
    assert!(slots.iter().all(|p| p.y < 20.0), "{slots:?}");
    assert_spread(&slots, 1.0);

    let pocket = query
        .arrival_slots(&mesh, glam::vec2(51.5, 1.5), 100, 1.0, &filter)
        .unwrap();
    assert!(pocket.len() > 3 && pocket.len() < 20, "{}", pocket.len());
    assert!(pocket
        .iter()
        .all(|p| (50.0..=53.0).contains(&p.x) && (0.0..=3.0).contains(&p.y)));
}

/// A filter that excludes an area keeps the slots out of it.
#[test]
fn arrival_slots_honour_excluded_areas() {
    let mesh = json_mesh(
        r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]],
            "areas": [{"kind": "lava", "cost": 1.0, "polygon": [[12,0],[40,0],[40,40],[12,40]]}]}"#,
    );
    let lava = mesh.areas().iter().position(|a| a.kind == "lava").unwrap();
    let filter = QueryFilter {
        excluded_areas: 1 << lava,
        ..QueryFilter::default()
    };
    let mut query = NavQuery::new();
    let slots = query
        .arrival_slots(&mesh, glam::vec2(10.0, 20.0), 100, 1.0, &filter)
        .unwrap();
    assert_eq!(slots.len(), 100);
    assert!(slots.iter().all(|p| p.x <= 12.0), "{slots:?}");
    let open = query
        .arrival_slots(
            &mesh,
            glam::vec2(10.0, 20.0),
            100,
            1.0,
            &QueryFilter::default(),
        )
        .unwrap();
    assert!(open.iter().any(|p| p.x > 12.0));
}

#[test]
fn arrival_slots_reject_bad_spacings_and_targets() {
    let mesh = json_mesh(r#"{"walkable": [[[0,0],[40,0],[40,40],[0,40]]]}"#);
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let at = glam::vec2(20.0, 20.0);
    for spacing in [0.0, -1.0, f32::NAN, f32::INFINITY, 1e-9] {
        assert!(
            matches!(
                query.arrival_slots(&mesh, at, 5, spacing, &filter),
                Err(portalnav::QueryError::BadSpacing { .. })
            ),
            "{spacing}"
        );
    }
    assert!(matches!(
        query.arrival_slots(&mesh, glam::vec2(50.0, 50.0), 5, 1.0, &filter),
        Err(portalnav::QueryError::OffMesh { .. })
    ));
    assert_eq!(query.arrival_slots(&mesh, at, 0, 1.0, &filter), Ok(vec![]));
}

/// A group sent to slots on Aurora: every path is valid on the map's cells,
/// starts at its unit and ends on its own slot; the slots are the ones
/// `arrival_slots` gives; no path is much longer than the unit's path to
/// the target plus the walk from the target to its slot.
#[test]
fn a_group_sent_to_slots_ends_on_distinct_slots() {
    let (mesh, grid, scens) = load("Aurora");
    let target = scens.last().unwrap().goal_point();
    let starts: Vec<_> = scens.iter().step_by(13).map(|s| s.start_point()).collect();
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    let paths = query.find_paths_to_slots(&mesh, &starts, target, 1.2, &filter);
    let to_target = query.find_paths_to(&mesh, &starts, target, &filter);
    let mut ends = Vec::new();
    for ((&start, path), plain) in starts.iter().zip(&paths).zip(&to_target) {
        let (path, plain) = match (path, plain) {
            (Ok(p), Ok(q)) => (p, q),
            (p, q) => {
                assert_eq!(p.as_ref().err(), q.as_ref().err(), "{start}");
                continue;
            }
        };
        let w = path.waypoints();
        assert_eq!(w[0], start);
        for s in w.windows(2) {
            assert_eq!(grid.segment_problem(s[0], s[1]), None, "{start}: {s:?}");
        }
        let end = *w.last().unwrap();
        let walk = query
            .find_path(&mesh, target, end, &filter)
            .unwrap()
            .length();
        assert!(path.length() <= plain.length() + walk + 1e-3, "{start}");
        assert!(path.length() >= start.distance(end) - 1e-3);
        ends.push(end);
    }
    assert!(ends.len() > 100);
    assert_spread(&ends, 1.2);
    let mut slots = query
        .arrival_slots(&mesh, target, ends.len(), 1.2, &filter)
        .unwrap();
    let key = |p: &glam::Vec2| (p.x.to_bits(), p.y.to_bits());
    slots.sort_by_key(key);
    ends.sort_by_key(key);
    assert_eq!(slots, ends);
}
