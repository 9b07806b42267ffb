//! The nav-point hierarchy: designer nav points answered from their cached
//! corridor, the baked file round trip with corridors, and the switches that
//! turn the hierarchy off.

use portalnav::{
    BakeConfig, Fallback, Level, NavMesh, NavPointKind, NavQuery, QueryFilter, Scenario,
    SearchLevel,
};

use crate::common::{data_dir, movingai_dir};

fn level(name: &str) -> Level {
    Level::from_json_file(data_dir().join("levels").join(name)).unwrap()
}

/// Between two designer nav points the query takes the corridor the bake
/// cached, expands nothing, and returns exactly the flat search's path.
#[test]
fn designer_nav_points_use_their_cached_corridor_and_match_flat() {
    for name in ["moba_lanes.json", "rts_base.json", "maze.json"] {
        let level = level(name);
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let designer_nodes = mesh
            .nav_nodes()
            .iter()
            .filter(|n| matches!(n.kind, NavPointKind::Designer { .. }))
            .count();
        let on_mesh: Vec<_> = level
            .nav_points
            .iter()
            .filter(|n| mesh.locate(n.at).is_some())
            .collect();
        assert_eq!(
            designer_nodes,
            on_mesh.len(),
            "{name}: one node per nav point on the mesh"
        );
        let mut hier = NavQuery::new();
        let mut flat = NavQuery::new();
        flat.set_use_hierarchy(false);
        let mut cached = 0;
        for a in &on_mesh {
            for b in &on_mesh {
                if a.name == b.name {
                    continue;
                }
                let f = QueryFilter::default();
                let flat_path = flat.find_path(&mesh, a.at, b.at, &f);
                let path = hier.find_path(&mesh, a.at, b.at, &f);
                let (Ok(flat_path), Ok(path)) = (flat_path, path) else {
                    // the maze's island: both must say unreachable
                    assert_eq!(
                        flat.find_path(&mesh, a.at, b.at, &f).err(),
                        hier.find_path(&mesh, a.at, b.at, &f).err(),
                        "{name}: {} -> {}",
                        a.name,
                        b.name
                    );
                    continue;
                };
                if path.level() == SearchLevel::SameRegion {
                    continue;
                }
                assert_eq!(
                    path.level(),
                    SearchLevel::CachedCorridor,
                    "{name}: {} -> {}",
                    a.name,
                    b.name
                );
                assert_eq!(hier.last_expansions(), 0, "no search at all");
                assert_eq!(
                    path.waypoints(),
                    flat_path.waypoints(),
                    "{name}: {} -> {}",
                    a.name,
                    b.name
                );
                assert_eq!(path.length(), flat_path.length());
                cached += 1;
            }
        }
        assert!(cached > 0, "{name}: some pairs use a cached corridor");
    }
}

/// Saving and loading keeps the hierarchy byte for byte, and the loaded mesh
/// answers every query exactly as the baked one.
#[test]
fn baked_file_round_trips_with_corridors() {
    let level = Level::from_movingai_file(movingai_dir().join("den520d.map")).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let stats = mesh
        .hierarchy_stats()
        .expect("baked with corridors")
        .clone();
    assert!(stats.corridors > 0 && stats.nav_nodes > 0 && stats.clusters > 1);
    let bytes = mesh.to_bytes().unwrap();
    let loaded = NavMesh::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes().unwrap(), bytes);
    let loaded_stats = loaded.hierarchy_stats().unwrap();
    assert_eq!(loaded_stats.corridors, stats.corridors);
    assert_eq!(loaded_stats.bytes, stats.bytes);
    assert_eq!(loaded.nav_nodes(), mesh.nav_nodes());
    assert_eq!(loaded.nav_graph().edge_count(), stats.corridors as usize);

    let scens = Scenario::load_file(movingai_dir().join("den520d.map.scen")).unwrap();
    let (mut a, mut b) = (NavQuery::new(), NavQuery::new());
    let mut via_nav_points = 0;
    for s in scens.iter().step_by(5) {
        let f = QueryFilter::default();
        let p = a
            .find_path(&mesh, s.start_point(), s.goal_point(), &f)
            .unwrap();
        let q = b
            .find_path(&loaded, s.start_point(), s.goal_point(), &f)
            .unwrap();
        assert_eq!(p, q);
        if p.level() == SearchLevel::NavPoints {
            via_nav_points += 1;
        }
    }
    assert!(via_nav_points > 0, "the loaded hierarchy is used");
}

/// Without corridors the mesh has no hierarchy and every query is flat; a
/// filter that excludes areas also searches flat (cached corridors ignore
/// filters); the query says which of these sent it to the flat search.
#[test]
fn hierarchy_can_be_left_out_or_bypassed() {
    let level = Level::from_movingai_file(movingai_dir().join("den520d.map")).unwrap();
    let flat_mesh = NavMesh::bake(
        &level,
        &BakeConfig {
            corridors: false,
            ..BakeConfig::default()
        },
    )
    .unwrap();
    assert!(flat_mesh.hierarchy_stats().is_none());
    assert!(flat_mesh.nav_nodes().is_empty());
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    assert_eq!(
        flat_mesh.region_count(),
        mesh.region_count(),
        "the hierarchy does not change the regions"
    );
    let scens = Scenario::load_file(movingai_dir().join("den520d.map.scen")).unwrap();
    let s = scens.last().unwrap(); // the longest problem
    let mut q = NavQuery::new();
    let f = QueryFilter::default();
    let long = q
        .find_path(&mesh, s.start_point(), s.goal_point(), &f)
        .unwrap();
    assert_eq!(long.level(), SearchLevel::NavPoints);
    assert_eq!(q.last_fallback(), None);
    let plain = q
        .find_path(&flat_mesh, s.start_point(), s.goal_point(), &f)
        .unwrap();
    assert_eq!(plain.level(), SearchLevel::Regions);
    assert_eq!(q.last_fallback(), Some(Fallback::NoHierarchy));
    let filtered = QueryFilter {
        excluded_areas: 1 << 5,
        ..QueryFilter::default()
    };
    let p = q
        .find_path(&mesh, s.start_point(), s.goal_point(), &filtered)
        .unwrap();
    assert_eq!(p.level(), SearchLevel::Regions);
    assert_eq!(q.last_fallback(), Some(Fallback::ExcludedAreas));
    assert_eq!(
        p.waypoints(),
        plain.waypoints(),
        "same mesh regions, same flat path"
    );
    q.set_use_hierarchy(false);
    let off = q
        .find_path(&mesh, s.start_point(), s.goal_point(), &f)
        .unwrap();
    assert_eq!(q.last_fallback(), Some(Fallback::HierarchyOff));
    assert_eq!(off.waypoints(), plain.waypoints());
    q.set_use_hierarchy(true);
    // ends in one cluster: the flat search by design (as are ends in two
    // clusters that share a portal)
    let near: Vec<_> = scens
        .iter()
        .filter(|p| {
            let cluster_of = |at| mesh.locate(at).and_then(|r| mesh.region_cluster(r));
            let (a, b) = (cluster_of(p.start_point()), cluster_of(p.goal_point()));
            a.is_some() && a == b
        })
        .take(20)
        .collect();
    assert!(!near.is_empty());
    for p in near {
        let path = q
            .find_path(&mesh, p.start_point(), p.goal_point(), &f)
            .unwrap();
        match path.level() {
            SearchLevel::SameRegion => assert_eq!(q.last_fallback(), None),
            level => {
                assert_eq!(level, SearchLevel::Regions);
                assert_eq!(q.last_fallback(), Some(Fallback::NearClusters));
            }
        }
    }
    // a query that ends in an error leaves no reason behind
    assert!(q
        .find_path(&mesh, glam::vec2(-5.0, -5.0), s.goal_point(), &f)
        .is_err());
    assert_eq!(q.last_fallback(), None);
}

/// On a hierarchy searched rather than tabled (Aurora in clusters of 16:
/// more nav nodes than a table may have), a query whose budget the search
/// over the nav nodes runs out of says so, and goes to the flat search.
#[test]
fn a_search_over_nav_nodes_out_of_budget_is_a_fallback() {
    let level = Level::from_movingai_file(movingai_dir().join("Aurora.map")).unwrap();
    let config = BakeConfig {
        cluster_size: 16,
        ..BakeConfig::default()
    };
    let mesh = NavMesh::bake(&level, &config).unwrap();
    let stats = mesh.hierarchy_stats().unwrap();
    assert!(!stats.all_pairs_table, "{} nav nodes", stats.nav_nodes);
    let scens = Scenario::load_file(movingai_dir().join("Aurora.map.scen")).unwrap();
    let s = scens.last().unwrap(); // the longest problem
    let f = QueryFilter::default();
    let mut q = NavQuery::new();
    let path = q
        .find_path(&mesh, s.start_point(), s.goal_point(), &f)
        .unwrap();
    assert_eq!(path.level(), SearchLevel::NavPoints);
    assert_eq!(q.last_fallback(), None);
    q.set_max_expansions(3);
    let _ = q.find_path(&mesh, s.start_point(), s.goal_point(), &f);
    assert_eq!(q.last_fallback(), Some(Fallback::NoRoute));
}

/// Every region has a cluster, clusters stay near their aim (or grew by
/// dead ends, and no small dead end is left), and each boundary nav point
/// sits on a portal between two different clusters.
#[test]
fn clusters_and_boundary_nav_points_are_consistent() {
    // AR0011SR has 939 regions: asked for 64 per cluster it aims for 32 (a
    // mesh of fewer than 64 times the size aims for regions / 64 rounded up
    // to a power of two, never below 32); Aurora (15,502) is large enough
    // for 64
    for (map, size, aim) in [
        ("AR0011SR.map", 16, 16),
        ("AR0011SR.map", 64, 32),
        ("Aurora.map", 64, 64),
    ] {
        let level = Level::from_movingai_file(movingai_dir().join(map)).unwrap();
        let config = BakeConfig {
            cluster_size: size,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        mesh.validate().unwrap();
        let stats = mesh.hierarchy_stats().unwrap();
        let clusters = stats.clusters as usize;
        assert_eq!(stats.cluster_aim, aim, "{map} at {size}");
        let size = stats.cluster_aim;
        let mut count = vec![0u32; clusters];
        for (key, _) in mesh.regions() {
            count[mesh.region_cluster(key).unwrap() as usize] += 1;
        }
        // the matching makes clusters of at most twice the size; a cluster
        // grows past that only by taking in dead ends (clusters of at most a
        // quarter of the size with no other neighbour), to 16 times at most
        let mut neighbours = vec![std::collections::BTreeSet::new(); clusters];
        for (_, p) in mesh.portals() {
            let [a, b] = p
                .regions()
                .map(|r| mesh.region_cluster(r).unwrap() as usize);
            if a != b {
                neighbours[a].insert(b);
                neighbours[b].insert(a);
            }
        }
        assert!(count.iter().all(|&c| c >= 1 && c <= 16 * size), "{count:?}");
        let grown = count.iter().filter(|&&c| c > 2 * size).count();
        for c in 0..clusters {
            if let [d] = neighbours[c].iter().copied().collect::<Vec<_>>()[..] {
                assert!(
                    count[c] > size / 4 || count[c] + count[d] > 16 * size,
                    "cluster {c} of {} regions is a dead end beside {d} of {}",
                    count[c],
                    count[d]
                );
            }
        }
        eprintln!(
            "{map}, clusters of {size}: {clusters}, {grown} grown past twice the size by dead ends"
        );
        if size == 16 {
            // the phase acts here: one cluster took in dead ends past twice the size
            assert!(grown > 0, "no cluster of {size} grew by dead ends");
        }
        for n in mesh.nav_nodes() {
            if let NavPointKind::Boundary { portal } = n.kind {
                assert_ne!(n.clusters[0], n.clusters[1]);
                let (_, p) = mesh.portals().nth(portal as usize).unwrap();
                let [a, b] = p.regions();
                assert_eq!(mesh.region_cluster(a), Some(n.clusters[0]));
                assert_eq!(mesh.region_cluster(b), Some(n.clusters[1]));
                // the nav point lies on the portal
                let (l, r) = (p.left(), p.right());
                let t = (n.at - l).dot(r - l) / l.distance_squared(r);
                assert!((0.0..=1.0).contains(&t), "{t}");
                assert!((l + (r - l) * t).distance(n.at) < 1e-3);
            }
        }
    }
}

/// Regression (issue 11, found by the wide set at stride 1): with only a
/// midpoint between a wide portal's end samples, the route chosen on the
/// samples went a street over, 2.1% over the octile optimum on
/// Milan_0_512 (an 85-unit portal) and 0.1% on AR0015SR. Wide portals are
/// now sampled at most 32 units apart. Each map keeps only the problem
/// that caught it (`data/regressions/README.md`), answered through the
/// hierarchy.
#[test]
fn routes_past_wide_portals_stay_under_the_octile_optimum() {
    let dir = data_dir().join("regressions");
    for map in ["Milan_0_512", "AR0015SR"] {
        let level = Level::from_movingai_file(dir.join(format!("{map}.map"))).unwrap();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let problems = Scenario::load_file(dir.join(format!("{map}.map.scen"))).unwrap();
        assert_eq!(problems.len(), 1, "{map}");
        let (mut query, filter) = (NavQuery::new(), QueryFilter::default());
        for s in &problems {
            let path = query
                .find_path(&mesh, s.start_point(), s.goal_point(), &filter)
                .unwrap();
            assert_eq!(
                path.level(),
                SearchLevel::NavPoints,
                "{map}: through the hierarchy"
            );
            assert!(
                f64::from(path.length()) <= s.optimal + s.tolerance,
                "{map}: {} over the octile optimum {}",
                path.length(),
                s.optimal
            );
        }
    }
}

/// Hierarchy settings out of range are a typed error, not a clamp or a panic.
#[test]
fn bad_hierarchy_settings_are_config_errors() {
    let level = level("rts_base.json");
    for config in [
        BakeConfig {
            cluster_size: 0,
            ..BakeConfig::default()
        },
        BakeConfig {
            cluster_size: 1_000_000,
            ..BakeConfig::default()
        },
        BakeConfig {
            wide_portal: f32::NAN,
            ..BakeConfig::default()
        },
        BakeConfig {
            wide_portal: 0.0,
            ..BakeConfig::default()
        },
        // sparser samples than the default's give paths over the optimum
        BakeConfig {
            wide_portal: portalnav::DEFAULT_WIDE_PORTAL * 1.01,
            ..BakeConfig::default()
        },
        BakeConfig {
            max_hierarchy_ratio: 0.0,
            ..BakeConfig::default()
        },
        BakeConfig {
            max_hierarchy_ratio: f32::NAN,
            ..BakeConfig::default()
        },
    ] {
        assert!(
            matches!(
                NavMesh::bake(&level, &config),
                Err(portalnav::BakeError::Config { .. })
            ),
            "{config:?}"
        );
    }
    // without corridors they are not used, so not checked
    let flat = BakeConfig {
        corridors: false,
        cluster_size: 0,
        ..BakeConfig::default()
    };
    assert!(NavMesh::bake(&level, &flat).is_ok());
    // denser samples are served
    let dense = BakeConfig {
        wide_portal: 1.0,
        ..BakeConfig::default()
    };
    assert!(NavMesh::bake(&level, &dense).is_ok());
}

/// On every bundled map the hierarchy takes at most 3 times the bytes of the
/// rest of the file (the default bound), as the bound measures it (its leg
/// costs at four bytes each), and the file holds no more than that; a
/// tighter bound leaves it out, and the mesh still answers, by the flat
/// search.
#[test]
fn the_hierarchy_stays_within_its_byte_bound() {
    let maps = data_dir().join("maps");
    let mut names: Vec<_> = std::fs::read_dir(&maps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "map"))
        .collect();
    names.sort();
    for map in &names {
        let level = Level::from_movingai_file(map).unwrap();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let file = mesh.to_bytes().unwrap().len() as f64;
        let bytes = mesh.hierarchy_stats().map_or(0, |h| h.bytes) as f64;
        let rest = crate::common::rest_of_file(&level, &BakeConfig::default()) as f64;
        assert!(
            bytes <= 3.0 * rest && file - rest <= bytes,
            "{}: {bytes} measured, {} in the file, against {rest}",
            map.display(),
            file - rest
        );
    }
    let map = maps.join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let tight = BakeConfig {
        max_hierarchy_ratio: 0.5,
        ..BakeConfig::default()
    };
    let mesh = NavMesh::bake(&level, &tight).unwrap();
    assert!(mesh.hierarchy_stats().is_none());
    let loose = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    assert!(
        loose.hierarchy_stats().is_some(),
        "den520d keeps it by default"
    );
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let grid = crate::common::CheckGrid::load(&map);
    let mut query = NavQuery::new();
    for s in scens.iter().step_by(40) {
        let path = query
            .find_path(
                &mesh,
                s.start_point(),
                s.goal_point(),
                &QueryFilter::default(),
            )
            .unwrap();
        for w in path.waypoints().windows(2) {
            assert_eq!(grid.segment_problem(w[0], w[1]), None);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 150, ..Default::default() })]

    /// On a map of three clusters every hierarchical route passes through
    /// all three (its ends' clusters are not neighbours), so the refinement
    /// of three-cluster routes makes every hierarchical path the flat one's
    /// length: without it, sampled crossings give longer paths here.
    #[test]
    fn three_cluster_routes_are_as_short_as_flat_paths(
        w in 8usize..20, h in 8usize..20, seed in proptest::prelude::any::<u64>(),
    ) {
        let grid = crate::common::random_grid(w, h, seed);
        let level = grid.to_level();
        let three = (2..64).find_map(|cluster_size| {
            let config = BakeConfig { cluster_size, ..BakeConfig::default() };
            let mesh = NavMesh::bake(&level, &config).ok()?;
            (mesh.hierarchy_stats()?.clusters == 3).then_some(mesh)
        });
        let Some(mesh) = three else { return Ok(()) };
        let cells: Vec<glam::Vec2> = (0..h as i64)
            .flat_map(|y| (0..w as i64).map(move |x| (x, y)))
            .filter(|&(x, y)| grid.is_free(x, y))
            .map(|(x, y)| glam::vec2(x as f32 + 0.5, y as f32 + 0.5))
            .collect();
        let (mut hier, mut flat) = (NavQuery::new(), NavQuery::new());
        flat.set_use_hierarchy(false);
        let filter = QueryFilter::default();
        for (i, &a) in cells.iter().enumerate() {
            for &b in cells.iter().skip(i + 1).step_by(2) {
                let (Ok(p), Ok(q)) = (hier.find_path(&mesh, a, b, &filter), flat.find_path(&mesh, a, b, &filter)) else {
                    continue;
                };
                proptest::prop_assert!(
                    p.length() <= q.length() * (1.0 + 1e-4) + 1e-4,
                    "{a} -> {b}: {:?} path {} against flat {}", p.level(), p.length(), q.length()
                );
            }
        }
    }
}
