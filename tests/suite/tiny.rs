//! Tiny levels you can draw: bake, validate, query, errors.

use glam::{vec2, Vec2};
use portalnav::{BakeConfig, Level, NavMesh, NavQuery, QueryError, QueryFilter};

fn rect(x0: f32, y0: f32, x1: f32, y1: f32) -> Vec<Vec2> {
    vec![vec2(x0, y0), vec2(x1, y0), vec2(x1, y1), vec2(x0, y1)]
}

fn bake(level: &Level) -> NavMesh {
    let mesh = NavMesh::bake(level, &BakeConfig::default()).unwrap();
    mesh.validate().unwrap();
    mesh
}

#[test]
fn square_is_one_region() {
    let mesh = bake(&Level {
        walkable: vec![rect(0., 0., 10., 10.)],
        ..Level::default()
    });
    assert_eq!(mesh.region_count(), 1);
    assert_eq!(mesh.portal_count(), 0);
    let path = NavQuery::new()
        .find_path(&mesh, vec2(1., 1.), vec2(9., 9.), &QueryFilter::default())
        .unwrap();
    assert_eq!(path.waypoints(), &[vec2(1., 1.), vec2(9., 9.)]);
    assert!((path.length() - 128f32.sqrt()).abs() < 1e-5);
}

#[test]
fn square_with_hole_goes_around_a_corner() {
    // +----------+
    // |  +----+  |
    // |S |hole|  |   S at (1,5), G at (9,5): the path wraps a hole corner
    // |  +----+ G|
    // +----------+
    let level = Level {
        walkable: vec![rect(0., 0., 10., 10.)],
        obstacles: vec![rect(3., 2., 7., 8.)],
        ..Level::default()
    };
    let mesh = bake(&level);
    assert_eq!(mesh.component_count(), 1);
    assert!((mesh.stats().walkable_area - 76.0).abs() < 1e-6);
    let path = NavQuery::new()
        .find_path(&mesh, vec2(1., 5.), vec2(9., 5.), &QueryFilter::default())
        .unwrap();
    let w = path.waypoints();
    assert_eq!(w.len(), 4, "start, two corners of the hole, goal: {w:?}");
    assert!(w[1] == vec2(3., 2.) || w[1] == vec2(3., 8.), "{w:?}");
    let expected = 2.0 * (4f32 + 9.0).sqrt() + 4.0;
    assert!(
        (path.length() - expected).abs() < 1e-4,
        "{} vs {expected}",
        path.length()
    );
}

#[test]
fn l_shape_wraps_the_inner_corner() {
    // (0,10)+--+(2,10)
    //       |  |
    //       |  +-------+(10,2)
    //       +----------+
    let l = vec![
        vec2(0., 0.),
        vec2(10., 0.),
        vec2(10., 2.),
        vec2(2., 2.),
        vec2(2., 10.),
        vec2(0., 10.),
    ];
    let mesh = bake(&Level {
        walkable: vec![l],
        ..Level::default()
    });
    let path = NavQuery::new()
        .find_path(&mesh, vec2(9., 1.), vec2(1., 9.), &QueryFilter::default())
        .unwrap();
    assert_eq!(
        path.waypoints(),
        &[vec2(9., 1.), vec2(2., 2.), vec2(1., 9.)]
    );
}

#[test]
fn two_islands_are_unreachable_at_once() {
    let level = Level {
        walkable: vec![rect(0., 0., 4., 4.), rect(10., 0., 14., 4.)],
        ..Level::default()
    };
    let mesh = bake(&level);
    assert_eq!(mesh.component_count(), 2);
    let mut q = NavQuery::new();
    let err = q
        .find_path(&mesh, vec2(1., 1.), vec2(11., 1.), &QueryFilter::default())
        .unwrap_err();
    assert_eq!(err, QueryError::Unreachable);
    assert_eq!(
        q.last_expansions(),
        0,
        "answered from component ids, no search"
    );
}

#[test]
fn corner_touching_cells_are_not_connected() {
    let grid =
        portalnav::Grid::parse("type octile\nheight 2\nwidth 2\nmap\n.@\n@.\n", "t.map").unwrap();
    let mesh = bake(&grid.to_level());
    assert_eq!(mesh.component_count(), 2);
    let err = NavQuery::new()
        .find_path(
            &mesh,
            vec2(0.5, 0.5),
            vec2(1.5, 1.5),
            &QueryFilter::default(),
        )
        .unwrap_err();
    assert_eq!(err, QueryError::Unreachable);
}

#[test]
fn bad_queries_get_typed_errors() {
    let mesh = bake(&Level {
        walkable: vec![rect(0., 0., 10., 10.)],
        obstacles: vec![rect(4., 4., 6., 6.)],
        ..Level::default()
    });
    let mut q = NavQuery::new();
    let f = QueryFilter::default();
    let ok = vec2(1., 1.);
    assert!(matches!(
        q.find_path(&mesh, vec2(f32::NAN, 1.), ok, &f),
        Err(QueryError::NonFinite { which: "start", .. })
    ));
    assert!(matches!(
        q.find_path(&mesh, ok, vec2(1., f32::INFINITY), &f),
        Err(QueryError::NonFinite { which: "goal", .. })
    ));
    assert!(matches!(
        q.find_path(&mesh, vec2(1e30, -1e30), ok, &f),
        Err(QueryError::OffMesh { which: "start", .. })
    ));
    assert!(matches!(
        q.find_path(&mesh, ok, vec2(5., 5.), &f),
        Err(QueryError::OffMesh { which: "goal", .. })
    ));
    // snapping moves the goal out of the obstacle to its nearest edge
    let snap = QueryFilter {
        snap_distance: 2.0,
        ..f
    };
    let path = q.find_path(&mesh, ok, vec2(5., 4.5), &snap).unwrap();
    assert_eq!(*path.waypoints().last().unwrap(), vec2(5., 4.));
}

#[test]
fn raycast_and_nearest_point() {
    let mesh = bake(&Level {
        walkable: vec![rect(0., 0., 10., 10.)],
        obstacles: vec![rect(4., 0., 6., 8.)],
        ..Level::default()
    });
    let mut q = NavQuery::new();
    assert_eq!(
        q.raycast(&mesh, vec2(1., 9.), vec2(9., 9.)).unwrap(),
        None,
        "clear above the wall"
    );
    let hit = q
        .raycast(&mesh, vec2(1., 4.), vec2(9., 4.))
        .unwrap()
        .expect("the wall blocks");
    assert!((hit.point - vec2(4., 4.)).length() < 1e-4, "{hit:?}");
    assert!((hit.t - 3.0 / 8.0).abs() < 1e-5);
    let (p, _) = q.nearest_point(&mesh, vec2(4.5, 3.), 1.0).unwrap();
    assert!((p - vec2(4., 3.)).length() < 1e-5, "{p}");
    assert!(q.nearest_point(&mesh, vec2(50., 50.), 1.0).is_none());
}

#[test]
fn area_costs_steer_the_path_and_impassable_areas_block() {
    // a 30x10 field; a costly band across the middle except a cheap road at the top
    let level = Level::from_json_str(
        r#"{"walkable": [[[0,0],[30,0],[30,10],[0,10]]],
            "areas": [{"kind": "swamp", "cost": 8, "polygon": [[10,0],[20,0],[20,8],[10,8]]},
                      {"kind": "lava", "cost": null, "polygon": [[0,9],[2,9],[2,10],[0,10]]}]}"#,
    )
    .unwrap();
    let mesh = bake(&level);
    assert!((mesh.stats().walkable_area - 298.0).abs() < 1e-4);
    let path = NavQuery::new()
        .find_path(&mesh, vec2(5., 4.), vec2(25., 4.), &QueryFilter::default())
        .unwrap();
    assert!(
        path.waypoints().iter().any(|p| p.y >= 8.0 - 1e-4),
        "goes round the swamp: {:?}",
        path.waypoints()
    );
    // excluding ground's neighbour kinds: swamp is area kind 1
    let no_swamp = QueryFilter {
        excluded_areas: 1 << 1,
        ..QueryFilter::default()
    };
    let avoid = NavQuery::new()
        .find_path(&mesh, vec2(5., 4.), vec2(25., 4.), &no_swamp)
        .unwrap();
    assert!(avoid.length() >= path.length() - 1e-4);
    assert!(
        NavQuery::new()
            .find_path(&mesh, vec2(1., 9.5), vec2(5., 5.), &QueryFilter::default())
            .is_err(),
        "lava is not walkable"
    );
}

#[test]
fn bake_is_deterministic_and_round_trips() {
    let level = Level {
        walkable: vec![rect(0., 0., 40., 30.)],
        obstacles: vec![
            rect(5., 5., 12., 9.),
            rect(10., 7., 20., 25.),
            rect(30., -5., 35., 20.),
        ],
        ..Level::default()
    };
    let a = bake(&level).to_bytes().unwrap();
    let b = bake(&level).to_bytes().unwrap();
    assert_eq!(a, b, "same level, same bytes");
    let loaded = NavMesh::from_bytes(&a).unwrap();
    assert_eq!(
        loaded.to_bytes().unwrap(),
        a,
        "load then save gives the same bytes"
    );
    assert_eq!(loaded.region_count(), bake(&level).region_count());
}

#[test]
fn every_corruption_of_a_baked_file_is_an_error() {
    let mesh = bake(&Level {
        walkable: vec![rect(0., 0., 10., 10.)],
        obstacles: vec![rect(3., 3., 5., 5.)],
        ..Level::default()
    });
    let bytes = mesh.to_bytes().unwrap();
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= flip;
            assert!(
                NavMesh::from_bytes(&bad).is_err(),
                "flipping byte {i} by {flip:#x} went unnoticed"
            );
        }
    }
    for len in 0..bytes.len() {
        assert!(
            NavMesh::from_bytes(&bytes[..len]).is_err(),
            "truncated to {len}"
        );
    }
    let mut version = bytes.clone();
    version[8] = 99;
    assert!(matches!(
        NavMesh::from_bytes(&version),
        Err(portalnav::FileError::UnsupportedVersion { found: 99, .. })
    ));
}

#[test]
fn agent_radius_keeps_paths_clear_of_walls() {
    let level = Level {
        walkable: vec![rect(0., 0., 20., 20.)],
        obstacles: vec![rect(8., 0., 12., 15.)],
        ..Level::default()
    };
    let mesh = NavMesh::bake(&level, &BakeConfig::with_radius(1.0)).unwrap();
    mesh.validate().unwrap();
    let path = NavQuery::new()
        .find_path(&mesh, vec2(3., 3.), vec2(17., 3.), &QueryFilter::default())
        .unwrap();
    // every point of every segment stays at least 1 from the obstacle and the
    // border (within 1e-3)
    for s in path.waypoints().windows(2) {
        for k in 0..=50 {
            let p = s[0].lerp(s[1], k as f32 / 50.0);
            let dx = (8.0 - p.x).max(p.x - 12.0).max(0.0);
            let dy = (p.y - 15.0).max(0.0);
            let to_obstacle = (dx * dx + dy * dy).sqrt();
            let to_border = p.x.min(p.y).min(20.0 - p.x).min(20.0 - p.y);
            assert!(
                to_obstacle >= 1.0 - 1e-3 && to_border >= 1.0 - 1e-3,
                "{p} is too close: {to_obstacle} / {to_border}"
            );
        }
    }
    assert!(
        NavQuery::new()
            .find_path(&mesh, vec2(0.5, 3.), vec2(17., 3.), &QueryFilter::default())
            .is_err(),
        "eroded border"
    );
}

#[test]
fn a_small_budget_gives_a_partial_path_or_an_error() {
    let grid =
        portalnav::Grid::from_file(crate::common::movingai_dir().join("den520d.map")).unwrap();
    let mesh = bake(&grid.to_level());
    let scen =
        portalnav::Scenario::load_file(crate::common::movingai_dir().join("den520d.map.scen"))
            .unwrap();
    let s = scen.last().unwrap();
    let (a, b) = (s.start_point(), s.goal_point());
    // the flat search: through the hierarchy this map's L2 route is a table
    // lookup, which expands nothing, so no budget runs out
    let mut q = NavQuery::new();
    q.set_use_hierarchy(false);
    q.set_max_expansions(3);
    let partial = q.find_path(&mesh, a, b, &QueryFilter::default()).unwrap();
    assert_eq!(partial.status(), portalnav::PathStatus::Partial);
    assert_eq!(partial.waypoints()[0], a);
    assert_ne!(*partial.waypoints().last().unwrap(), b);
    let strict = QueryFilter {
        allow_partial: false,
        ..QueryFilter::default()
    };
    assert_eq!(
        q.find_path(&mesh, a, b, &strict),
        Err(QueryError::BudgetExhausted { budget: 3 })
    );
    q.set_max_expansions(u32::MAX);
    assert_eq!(
        q.find_path(&mesh, a, b, &strict).unwrap().status(),
        portalnav::PathStatus::Complete
    );
    // through the hierarchy the same budget does not bind: the L2 route is
    // looked up in the all-pairs table, which expands nothing
    let mut h = NavQuery::new();
    h.set_max_expansions(3);
    let long = h.find_path(&mesh, a, b, &strict).unwrap();
    assert_eq!(long.status(), portalnav::PathStatus::Complete);
    assert_eq!(long.level(), portalnav::SearchLevel::NavPoints);
    assert_eq!(h.last_expansions(), 0);
}
