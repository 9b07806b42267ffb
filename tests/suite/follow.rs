//! Moving along the surface and following paths: property tests on random
//! levels against the rasterised oracle, and the follower's answers to
//! strays, moving goals, edits and bad input.

use glam::{vec2, Vec2};
use portalnav::{
    BakeConfig, FollowEvent, Level, NavMesh, NavQuery, PathFollower, QueryError, QueryFilter,
    TileCache,
};
use proptest::prelude::*;

use crate::common::CheckGrid;
use crate::properties::{obstacles, oracle, rect, SIDE};

/// A random level's mesh with its oracle, or `None` when nothing is walkable.
fn random_level(obs: &[(i64, i64, i64, i64)]) -> Option<(NavMesh, CheckGrid, Vec<i32>)> {
    let level = Level {
        walkable: vec![rect(0, 0, SIDE, SIDE)],
        obstacles: obs.iter().map(|&(a, b, c, d)| rect(a, b, c, d)).collect(),
        ..Level::default()
    };
    let (grid, label) = oracle(obs);
    let config = BakeConfig {
        cluster_size: 3,
        ..BakeConfig::default()
    };
    NavMesh::bake(&level, &config)
        .ok()
        .map(|mesh| (mesh, grid, label))
}

fn centre(x: i64, y: i64) -> Vec2 {
    vec2(x as f32 + 0.5, y as f32 + 0.5)
}

/// The cell label of a point strictly inside a cell, -1 for blocked cells
/// and points outside the level.
fn label_at(label: &[i32], p: Vec2) -> i32 {
    let (x, y) = (p.x.floor() as i64, p.y.floor() as i64);
    if (0..SIDE).contains(&x) && (0..SIDE).contains(&y) {
        label[(y * SIDE + x) as usize]
    } else {
        -1
    }
}

/// Whether `p` is walkable: on the mesh, or within rounding of it.
fn on_mesh(mesh: &NavMesh, query: &mut NavQuery, p: Vec2) -> bool {
    mesh.locate(p).is_some() || query.nearest_point(mesh, p, 1e-3).is_some()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A move ends on walkable space, reachable from where it began; it ends
    /// at its target when the straight line there is clear, and never
    /// farther from the target than a ray stopped by the first wall.
    #[test]
    fn moves_along_the_surface_stay_walkable_and_slide(
        obs in obstacles(),
        moves in prop::collection::vec((0..SIDE, 0..SIDE, -3.0f32..19.0, -3.0f32..19.0), 12),
    ) {
        let Some((mesh, grid, label)) = random_level(&obs) else { return Ok(()) };
        let mut q = NavQuery::new();
        let filter = QueryFilter::default();
        for &(x, y, tx, ty) in &moves {
            let (from, to) = (centre(x, y), vec2(tx, ty));
            if label_at(&label, from) < 0 {
                prop_assert!(q.move_along(&mesh, from, to, &filter).is_err());
                continue;
            }
            let (p, region) = q.move_along(&mesh, from, to, &filter).unwrap();
            prop_assert!(on_mesh(&mesh, &mut q, p), "{from} -> {to}: ended off the mesh at {p}");
            let r = mesh.region(region).unwrap();
            prop_assert!(portalnav::geometry::convex_contains(r.vertices(), p, 1e-3));
            // reachable: the region it ends in is on the same island
            let start_region = mesh.region(mesh.locate(from).unwrap()).unwrap();
            prop_assert_eq!(r.component(), start_region.component(), "{} -> {}: {} unreachable", from, to, p);
            match q.raycast(&mesh, from, to).unwrap() {
                None => {
                    prop_assert_eq!(p, to, "{} -> {}: clear line", from, to);
                    prop_assert!(grid.segment_problem(from, to).is_none());
                }
                Some(hit) => prop_assert!(
                    p.distance(to) <= hit.point.distance(to) + 1e-4,
                    "{} -> {}: slid to {} but the ray reached {}", from, to, p, hit.point
                ),
            }
        }
    }

    /// Fed its own steering at a random speed, a unit reaches the goal in
    /// the ticks its path needs, never steers through a wall and never needs
    /// a repair; pushed at random it is joined back and still arrives.
    #[test]
    fn a_follower_walks_its_unit_to_the_goal(
        obs in obstacles(),
        ends in prop::collection::vec((0..SIDE, 0..SIDE, 0..SIDE, 0..SIDE), 4),
        speed in 0.05f32..3.0,
        pushes in prop::collection::vec((0u8..4, -2.0f32..2.0, -2.0f32..2.0), 64),
    ) {
        let Some((mesh, grid, label)) = random_level(&obs) else { return Ok(()) };
        let mut q = NavQuery::new();
        let filter = QueryFilter::default();
        for (round, &(sx, sy, gx, gy)) in ends.iter().enumerate() {
            let (start, goal) = (centre(sx, sy), centre(gx, gy));
            let component = label_at(&label, start);
            if component < 0 || component != label_at(&label, goal) {
                continue;
            }
            let path = q.find_path(&mesh, start, goal, &filter).unwrap();
            let mut unit = PathFollower::new();
            unit.plan(&mesh, &mut q, start, goal, &filter).unwrap();
            let pushed = round % 2 == 1;
            let mut steering = unit.update(&mesh, &mut q, start).unwrap();
            let mut ticks = 0usize;
            let mut pushes_made = 0usize;
            let limit = if pushed { 4000 } else {
                (path.length() / speed) as usize + path.waypoints().len() + 4
            };
            while !steering.arrived {
                prop_assert!(ticks < limit, "{start} -> {goal}: not there after {ticks} ticks at {}", steering.position);
                let (pos, target) = (steering.position, steering.target);
                prop_assert!(on_mesh(&mesh, &mut q, target), "target {target} off the mesh");
                let problem = grid.segment_problem(pos, target);
                prop_assert!(problem.is_none(), "steering {} -> {}: {:?}", pos, target, problem);
                let next = pos + (target - pos).clamp_length_max(speed);
                steering = unit.move_position(&mesh, &mut q, next).unwrap();
                if !pushed {
                    prop_assert_eq!(steering.position, next, "an unpushed unit is never clamped");
                    prop_assert_eq!(steering.event, FollowEvent::Followed);
                } else if let Some(&(kind, dx, dy)) = pushes.get(ticks % pushes.len()) {
                    // a push by a collision: anywhere free in the same component
                    let to = steering.position + vec2(dx, dy);
                    if kind == 0 && ticks < 2000 && label_at(&label, to) == component {
                        steering = unit.update(&mesh, &mut q, to).unwrap();
                        prop_assert_eq!(steering.position, to);
                        pushes_made += 1;
                    }
                }
                ticks += 1;
            }
            prop_assert!(steering.position.distance(goal) <= 1e-3);
            if !pushed {
                prop_assert_eq!((unit.replans(), unit.recoveries()), (0, 0));
            } else {
                prop_assert!(unit.replans() as usize <= pushes_made);
            }
        }
    }
}

/// An open 100 x 100 level with a 2-wide wall down the middle from y = 0 to
/// y = 80, baked in tiles so buildings can be placed.
fn walled_cache() -> TileCache {
    let level = Level::from_json_str(
        r#"{"walkable": [[[0,0],[100,0],[100,100],[0,100]]],
            "obstacles": [[[49,0],[51,0],[51,80],[49,80]]]}"#,
    )
    .unwrap();
    let config = BakeConfig {
        tile_size: Some(16.0),
        corridors: false,
        ..BakeConfig::default()
    };
    TileCache::new(&level, &config).unwrap()
}

fn square(x: f32, y: f32, side: f32) -> Vec<Vec2> {
    vec![
        vec2(x, y),
        vec2(x + side, y),
        vec2(x + side, y + side),
        vec2(x, y + side),
    ]
}

/// After an edit the follower walks its remaining path on the new mesh:
/// a building away from it keeps the path (the same points), one across it
/// makes a replan around it, and a removal keeps the path it has.
#[test]
fn a_follower_replans_only_when_an_edit_blocks_its_path() {
    let mut cache = walled_cache();
    let mut q = NavQuery::new();
    let filter = QueryFilter::default();
    let mut unit = PathFollower::new();
    let (start, goal) = (vec2(10.0, 10.0), vec2(90.0, 10.0));
    let path = q.find_path(cache.mesh(), start, goal, &filter).unwrap();
    unit.plan(cache.mesh(), &mut q, start, goal, &filter)
        .unwrap();
    let s = unit.update(cache.mesh(), &mut q, start).unwrap();
    assert!(path.waypoints().contains(&vec2(49.0, 80.0)));
    // straight to the wall's end: the plan's corridor was straightened
    assert_eq!(s.target, vec2(49.0, 80.0));
    let s = unit
        .move_position(cache.mesh(), &mut q, vec2(12.0, 15.0))
        .unwrap();
    assert_eq!(s.event, FollowEvent::Followed);
    let mut before = Vec::new();
    unit.remaining_path(&mut before);

    // far from the path
    cache.add_obstacle(&square(80.0, 40.0, 8.0)).unwrap();
    let s = unit.update(cache.mesh(), &mut q, s.position).unwrap();
    assert_eq!(s.event, FollowEvent::Rebound);
    let mut after = Vec::new();
    unit.remaining_path(&mut after);
    assert_eq!(after, before, "a building away from the path keeps it");
    assert_eq!(unit.replans(), 0);
    assert!(unit.corridor(cache.mesh()).count() > 1);

    // across the path, above the wall's end
    let across = cache.add_obstacle(&square(45.0, 78.0, 10.0)).unwrap();
    let s = unit.update(cache.mesh(), &mut q, s.position).unwrap();
    assert_eq!(s.event, FollowEvent::Replanned);
    assert_eq!(unit.replans(), 1);
    unit.remaining_path(&mut after);
    assert_ne!(after, before);
    assert!(
        !cache.path_affected(&after, 0),
        "the new path avoids both buildings"
    );
    assert!(
        after.iter().any(|p| p.y >= 88.0),
        "around the building's top"
    );

    // a removal does not block anything: the path is kept
    let kept = after.clone();
    cache.remove_obstacle(across).unwrap();
    let s = unit.update(cache.mesh(), &mut q, s.position).unwrap();
    assert_eq!(s.event, FollowEvent::Rebound);
    assert_eq!(unit.replans(), 1);
    // over the freed ground the corridor's regions are larger, so the path
    // pulled through them may only get shorter
    unit.remaining_path(&mut after);
    let length = |p: &[Vec2]| p.windows(2).map(|w| w[0].distance(w[1])).sum::<f32>();
    assert!(length(&after) <= length(&kept) + 1e-3);
    for w in after.windows(2) {
        assert_eq!(q.raycast(cache.mesh(), w[0], w[1]).unwrap(), None);
    }
}

/// Many units through a sequence of buildings placed and destroyed: after
/// each edit every follower's corridor is a chain of neighbouring regions of
/// the new mesh (whether it kept its corridor's regions under their new
/// indices or walked its path again), and its remaining path is clear on
/// the new mesh. Renumbering the kept regions wrongly (checked by hand: one
/// off) breaks the neighbour check.
#[test]
fn followers_keep_valid_corridors_through_many_edits() {
    let mut cache = walled_cache();
    let mut q = NavQuery::new();
    let filter = QueryFilter::default();
    let mut units = Vec::new();
    for k in 0..24 {
        let (x, y) = ((k * 37 % 90) as f32 + 3.5, (k * 53 % 90) as f32 + 3.5);
        let (gx, gy) = (96.0 - x, 96.0 - y);
        let mut unit = PathFollower::new();
        if unit
            .plan(cache.mesh(), &mut q, vec2(x, y), vec2(gx, gy), &filter)
            .is_ok()
        {
            units.push(unit);
        }
    }
    assert!(units.len() > 16, "{}", units.len());
    let mut placed = Vec::new();
    let mut kept_paths = 0;
    for e in 0..12 {
        let (x, y) = ((e * 29 % 80) as f32 + 4.0, (e * 41 % 80) as f32 + 4.0);
        match cache.add_obstacle(&square(x, y, 4.0)) {
            Ok(id) => placed.push(id),
            Err(err) => panic!("{err}"),
        }
        if e % 3 == 2 {
            cache.remove_obstacle(placed.remove(0)).unwrap();
        }
        let mesh = cache.mesh();
        for unit in &mut units {
            let mut before = Vec::new();
            unit.remaining_path(&mut before);
            let Ok(s) = unit.update(mesh, &mut q, unit.position()) else {
                continue; // walled in by a building: no path is right
            };
            let corridor: Vec<_> = unit.corridor(mesh).collect();
            for w in corridor.windows(2) {
                let linked = mesh
                    .region(w[0])
                    .unwrap()
                    .edge_portals()
                    .iter()
                    .flatten()
                    .any(|&p| mesh.portal(p).unwrap().regions().contains(&w[1]));
                assert!(
                    linked,
                    "edit {e}: {:?} and {:?} are not neighbours",
                    w[0], w[1]
                );
            }
            let mut after = Vec::new();
            unit.remaining_path(&mut after);
            for w in after.windows(2) {
                assert_eq!(
                    q.raycast(mesh, w[0], w[1]).unwrap(),
                    None,
                    "edit {e}: {w:?}"
                );
            }
            kept_paths += usize::from(s.event == FollowEvent::Rebound && after == before);
        }
    }
    assert!(kept_paths > units.len() * 6, "{kept_paths}");
}

/// A unit shoved sideways off its corridor is joined back by a local walk,
/// not a replan; one carried over the wall is joined by a local search or,
/// failing that, a replan, and keeps going to the goal.
#[test]
fn a_strayed_unit_is_joined_back_locally() {
    let cache = walled_cache();
    let mesh = cache.mesh();
    let mut q = NavQuery::new();
    let filter = QueryFilter::default();
    let mut unit = PathFollower::new();
    let (start, goal) = (vec2(10.0, 10.0), vec2(90.0, 10.0));
    unit.plan(mesh, &mut q, start, goal, &filter).unwrap();
    unit.update(mesh, &mut q, start).unwrap();
    // shoved sideways, away from the corridor (which runs to the wall's top
    // end through the tiles right of x = 16)
    let shoved = vec2(5.0, 60.0);
    let s = unit.update(mesh, &mut q, shoved).unwrap();
    assert_eq!(s.event, FollowEvent::Recovered);
    let fresh = q.find_path(mesh, shoved, goal, &filter).unwrap();
    let mut rest = Vec::new();
    unit.remaining_path(&mut rest);
    let length: f32 = rest.windows(2).map(|w| w[0].distance(w[1])).sum();
    assert!(
        length <= fresh.length() * 1.01,
        "{length} vs {}",
        fresh.length()
    );
    assert_eq!((unit.replans(), unit.recoveries()), (0, 1));
    // carried over the wall: the goal is now straight ahead
    let s = unit.update(mesh, &mut q, vec2(60.0, 10.0)).unwrap();
    assert!(matches!(
        s.event,
        FollowEvent::Recovered | FollowEvent::Replanned
    ));
    assert_eq!(s.target, goal);
    let mut rest = Vec::new();
    unit.remaining_path(&mut rest);
    assert_eq!(rest, vec![vec2(60.0, 10.0), goal]);
}

/// A chased goal moving a little each tick extends the corridor without a
/// search; one that jumps behind a wall is replanned.
#[test]
fn a_moving_goal_updates_the_corridor_cheaply() {
    let cache = walled_cache();
    let mesh = cache.mesh();
    let mut q = NavQuery::new();
    let filter = QueryFilter::default();
    let mut unit = PathFollower::new();
    unit.plan(mesh, &mut q, vec2(10.0, 10.0), vec2(30.0, 50.0), &filter)
        .unwrap();
    let mut s = unit.update(mesh, &mut q, vec2(10.0, 10.0)).unwrap();
    for k in 0..40 {
        let goal = vec2(30.0 + k as f32 * 0.4, 50.0 + k as f32 * 0.25);
        assert_eq!(
            unit.set_goal(mesh, &mut q, goal).unwrap(),
            FollowEvent::Followed
        );
        let next = s.position + (s.target - s.position).clamp_length_max(0.3);
        s = unit.move_position(mesh, &mut q, next).unwrap();
        assert_eq!(s.event, FollowEvent::Followed);
        // open ground: about straight to the goal (the planned corridor can
        // bend at a tile corner, issue 11), through no wall
        let mut rest = Vec::new();
        unit.remaining_path(&mut rest);
        let length: f32 = rest.windows(2).map(|w| w[0].distance(w[1])).sum();
        assert!(length <= s.position.distance(goal) * 1.01, "{rest:?}");
        for w in rest.windows(2) {
            assert_eq!(q.raycast(mesh, w[0], w[1]).unwrap(), None);
        }
    }
    assert_eq!(unit.replans(), 0);
    // behind the wall
    assert_eq!(
        unit.set_goal(mesh, &mut q, vec2(70.0, 50.0)).unwrap(),
        FollowEvent::Replanned
    );
    unit.update(mesh, &mut q, s.position).unwrap();
    let mut rest = Vec::new();
    unit.remaining_path(&mut rest);
    assert!(rest.contains(&vec2(49.0, 80.0)), "{rest:?}");
}

/// Bad input gets typed errors and leaves the follower as it was.
#[test]
fn a_follower_refuses_bad_input() {
    let cache = walled_cache();
    let mesh = cache.mesh();
    let mut q = NavQuery::new();
    let filter = QueryFilter::default();
    let mut unit = PathFollower::new();
    assert_eq!(
        unit.update(mesh, &mut q, vec2(1.0, 1.0)),
        Err(QueryError::NoPath)
    );
    assert_eq!(
        unit.set_goal(mesh, &mut q, vec2(1.0, 1.0)),
        Err(QueryError::NoPath)
    );
    assert!(unit
        .plan(mesh, &mut q, vec2(50.0, 10.0), vec2(90.0, 10.0), &filter)
        .is_err());
    assert!(!unit.has_path());
    unit.plan(mesh, &mut q, vec2(10.0, 10.0), vec2(90.0, 10.0), &filter)
        .unwrap();
    let before = unit.clone();
    for bad in [
        vec2(f32::NAN, 1.0),
        vec2(f32::INFINITY, 1.0),
        vec2(1e30, 1e30),
        vec2(50.0, 10.0), // inside the wall
    ] {
        assert!(unit.update(mesh, &mut q, bad).is_err(), "{bad}");
        assert!(unit.set_goal(mesh, &mut q, bad).is_err(), "{bad}");
        assert!(unit.has_path());
        assert_eq!(unit.position(), before.position());
        assert_eq!(unit.goal(), before.goal());
    }
    assert_eq!(unit.corners(), before.corners());
    // a path found on another mesh
    let other = NavMesh::bake(
        &Level::from_json_str(r#"{"walkable": [[[0,0],[10,0],[10,10],[0,10]]]}"#).unwrap(),
        &BakeConfig::default(),
    )
    .unwrap();
    let foreign = q
        .find_path(&other, vec2(1.0, 1.0), vec2(9.0, 9.0), &filter)
        .unwrap();
    assert_eq!(
        unit.follow(mesh, &foreign, vec2(9.0, 9.0), &filter),
        Err(QueryError::StalePath)
    );
    assert_eq!(unit.corners(), before.corners());
    // moves into walls are clamped, never errors
    let s = unit.move_position(mesh, &mut q, vec2(60.0, 10.0)).unwrap();
    assert_eq!(s.position.x, 49.0);
}
