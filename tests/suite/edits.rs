//! Runtime obstacles ([`TileCache`]): after any sequence of edits the mesh is
//! byte for byte a fresh tiled bake of the level with the surviving
//! obstacles added to its static ones, whatever the order of the edits; bad
//! edits are refused with a typed error and leave the mesh as it was.

use glam::{vec2, Vec2};
use portalnav::{
    BakeConfig, Edit, EditError, Level, NavMesh, NavQuery, QueryError, QueryFilter, TileCache,
};
use proptest::prelude::*;

use crate::common::{data_dir, movingai_dir};

fn rts_base() -> Level {
    Level::from_file(data_dir().join("levels/rts_base.json")).unwrap()
}

fn tiled(tile: f32, corridors: bool) -> BakeConfig {
    BakeConfig {
        tile_size: Some(tile),
        corridors,
        ..BakeConfig::default()
    }
}

fn bytes(mesh: &NavMesh) -> Vec<u8> {
    mesh.to_bytes().unwrap()
}

/// The oracle: a fresh bake of the level with the cache's obstacles in it.
fn fresh_bytes(cache: &TileCache, config: &BakeConfig) -> Vec<u8> {
    bytes(&NavMesh::bake(&cache.level_with_obstacles(), config).unwrap())
}

/// A building: an axis-aligned rectangle, a rotated rectangle or a triangle
/// with its corner at `at`, `size` wide and high.
fn building(shape: u8, at: Vec2, size: Vec2, angle: f32) -> Vec<Vec2> {
    let (s, c) = angle.sin_cos();
    let turn = |p: Vec2| at + vec2(p.x * c - p.y * s, p.x * s + p.y * c);
    match shape % 3 {
        0 => vec![at, at + vec2(size.x, 0.), at + size, at + vec2(0., size.y)],
        1 => [vec2(0., 0.), vec2(size.x, 0.), size, vec2(0., size.y)]
            .map(turn)
            .to_vec(),
        _ => [vec2(0., 0.), vec2(size.x, 0.), vec2(0., size.y)]
            .map(turn)
            .to_vec(),
    }
}

/// One step of an edit sequence: remove a live obstacle (picked by `pick`)
/// or add a building; `aligned` puts it on whole tiles' corners.
type Step = (u8, (f32, f32), (f32, f32), f32, bool, prop::sample::Index);

fn step() -> impl Strategy<Value = Step> {
    (
        0u8..5,
        (-20.0f32..270.0, -20.0f32..270.0),
        (0.5f32..60.0, 0.5f32..60.0),
        0.0f32..6.3,
        any::<bool>(),
        any::<prop::sample::Index>(),
    )
}

fn outline_of(&(shape, (x, y), (w, h), angle, aligned, _): &Step, tile: f32) -> Vec<Vec2> {
    if aligned {
        let snap = |v: f32| (v / tile).round() * tile;
        let at = vec2(snap(x), snap(y));
        return building(0, at, vec2(snap(w).max(tile), snap(h).max(tile)), 0.0);
    }
    building(shape, vec2(x, y), vec2(w, h), angle)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]

    /// Random builds and demolitions on an RTS level: after every edit the
    /// mesh validates and equals a fresh bake, and a second cache given the
    /// survivors in the opposite order in one batch ends up the same.
    #[test]
    fn edits_equal_a_fresh_bake(
        steps in proptest::collection::vec(step(), 1..10),
        tile in prop_oneof![Just(16.0f32), Just(32.0), Just(50.0)],
        corridors in any::<bool>(),
    ) {
        let config = tiled(tile, corridors);
        let level = rts_base();
        let mut cache = TileCache::new(&level, &config).unwrap();
        let mut live = Vec::new();
        for s in &steps {
            if s.0 == 0 && !live.is_empty() {
                let id = live.swap_remove(s.5.index(live.len()));
                cache.remove_obstacle(id).unwrap();
            } else {
                live.push(cache.add_obstacle(&outline_of(s, tile)).unwrap());
            }
            cache.mesh().validate().unwrap();
            prop_assert!(bytes(cache.mesh()) == fresh_bytes(&cache, &config), "differs from a fresh bake after {} obstacles", live.len());
        }
        let mut other = TileCache::new(&level, &config).unwrap();
        let mut survivors: Vec<Edit> = cache.obstacles().map(|(_, o)| Edit::Add(o.to_vec())).collect();
        survivors.reverse();
        other.apply(&survivors).unwrap();
        prop_assert!(bytes(other.mesh()) == bytes(cache.mesh()), "edit order changed the mesh");
    }
}

/// The same on a grid map: buildings on a traced Moving AI map.
#[test]
fn edits_on_a_grid_map_equal_a_fresh_bake() {
    let level = Level::from_file(movingai_dir().join("den520d.map")).unwrap();
    // tiles of 64 keep the hierarchy within its byte bound (at 32 the bake
    // drops it), so its repair is compared too
    let config = tiled(64.0, true);
    let mut cache = TileCache::new(&level, &config).unwrap();
    assert!(cache.mesh().hierarchy_stats().is_some());
    let walls: Vec<Edit> = (0..12)
        .map(|k| {
            let at = vec2(40.0 + 17.3 * k as f32, 30.0 + 11.1 * k as f32);
            Edit::Add(building(k as u8, at, vec2(9.0, 5.5), 0.4 * k as f32))
        })
        .collect();
    let ids = cache.apply(&walls).unwrap();
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));
    for id in ids.iter().step_by(3).flatten() {
        cache.remove_obstacle(*id).unwrap();
    }
    cache.mesh().validate().unwrap();
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));
}

/// An edit repairs the hierarchy but leaves the all-pairs L2 table to
/// `refresh_table`: meanwhile the saved bytes are a fresh bake's and
/// queries, which search L2 instead, are as long as the fresh bake's; once
/// the rows are done, in any split, every path is the fresh bake's, point
/// for point. A finished table waits for a shared handle to be released.
#[test]
fn an_edit_leaves_the_all_pairs_table_to_refresh_and_paths_keep_their_length() {
    let level = Level::from_file(movingai_dir().join("den520d.map")).unwrap();
    let config = tiled(64.0, true);
    let mut cache = TileCache::new(&level, &config).unwrap();
    assert!(cache.mesh().hierarchy_stats().unwrap().all_pairs_table);
    assert_eq!(cache.table_pending(), None, "a bake computes its table");
    assert!(cache.refresh_table(0), "nothing to refresh");
    let walls: Vec<Edit> = (0..6)
        .map(|k| {
            let at = vec2(60.0 + 31.0 * k as f32, 50.0 + 23.0 * k as f32);
            Edit::Add(building(k as u8, at, vec2(9.0, 5.5), 0.3 * k as f32))
        })
        .collect();
    cache.apply(&walls).unwrap();
    // a row per nav node, and one per landmark picked first
    let nodes = cache.mesh().nav_nodes().len();
    assert!(nodes > 16);
    let rows = nodes + 16;
    assert_eq!(cache.table_pending(), Some((rows, rows)));
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));

    let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).unwrap();
    let scenarios =
        portalnav::Scenario::load_file(movingai_dir().join("den520d.map.scen")).unwrap();
    let filter = QueryFilter::default();
    let (mut ours, mut theirs) = (NavQuery::new(), NavQuery::new());
    let mut compare = |mesh: &NavMesh, identical: bool| {
        let mut hierarchical = 0;
        for s in scenarios.iter().step_by(3) {
            let (a, b) = (s.start_point(), s.goal_point());
            let want = theirs.find_path(&fresh, a, b, &filter);
            let got = ours.find_path(mesh, a, b, &filter);
            match (got, want) {
                (Ok(got), Ok(want)) => {
                    if got.level() == portalnav::SearchLevel::NavPoints {
                        hierarchical += 1;
                    }
                    if identical {
                        assert_eq!(got.waypoints(), want.waypoints(), "{a} -> {b}");
                    } else {
                        let (g, w) = (got.length(), want.length());
                        assert!(
                            (g - w).abs() <= w * 1e-4 + 1e-4,
                            "{a} -> {b}: {g} against {w}"
                        );
                    }
                }
                (got, want) => assert_eq!(got.is_ok(), want.is_ok(), "{a} -> {b}"),
            }
        }
        assert!(hierarchical > 50, "only {hierarchical} long queries");
    };
    compare(cache.mesh(), false);

    // rows in three calls, a handle holding the mesh at the end
    let third = rows / 3 + 1;
    assert!(!cache.refresh_table(third));
    assert_eq!(cache.table_pending(), Some((rows - third, rows)));
    assert!(!cache.refresh_table(third));
    let handle = cache.shared_mesh();
    assert!(!cache.refresh_table(third), "the handle holds the mesh");
    assert_eq!(cache.table_pending(), Some((0, rows)));
    cache.release(handle);
    assert!(cache.refresh_table(0), "installed once the handle is back");
    assert_eq!(cache.table_pending(), None);
    compare(cache.mesh(), true);
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));

    // into_mesh finishes a pending table
    cache
        .apply(&[Edit::Add(building(
            0,
            vec2(150.0, 150.0),
            vec2(6.0, 6.0),
            0.0,
        ))])
        .unwrap();
    assert!(cache.table_pending().is_some());
    let level = cache.level_with_obstacles();
    let mesh = cache.into_mesh();
    let fresh = NavMesh::bake(&level, &config).unwrap();
    let last = scenarios.last().unwrap();
    let (a, b) = (last.start_point(), last.goal_point());
    let (got, want) = (
        NavQuery::new().find_path(&mesh, a, b, &filter),
        NavQuery::new().find_path(&fresh, a, b, &filter),
    );
    assert_eq!(
        got.map(|p| p.waypoints().to_vec()),
        want.map(|p| p.waypoints().to_vec())
    );
}

/// A handle to the mesh taken before an edit still answers on that mesh;
/// given back, its storage serves the next edit, whose mesh is still a
/// fresh bake's, byte for byte.
#[test]
fn a_shared_mesh_outlives_an_edit_and_its_storage_serves_the_next() {
    let level = rts_base();
    let config = tiled(16.0, false);
    let mut cache = TileCache::new(&level, &config).unwrap();
    let filter = QueryFilter::default();
    let mut query = NavQuery::new();
    let (a, b) = (vec2(5.0, 5.0), vec2(100.0, 5.0));
    let straight = query.find_path(cache.mesh(), a, b, &filter).unwrap();
    let before = cache.shared_mesh();
    let wall = building(0, vec2(50.0, 0.0), vec2(4.0, 10.0), 0.0);
    let id = cache.add_obstacle(&wall).unwrap();
    assert_eq!(query.find_path(&before, a, b, &filter).unwrap(), straight);
    let around = query.find_path(cache.mesh(), a, b, &filter).unwrap();
    assert!(around.length() > straight.length());
    cache.release(before);
    cache.remove_obstacle(id).unwrap();
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));
    cache.add_obstacle(&wall).unwrap();
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));
    assert_eq!(
        query
            .find_path(cache.mesh(), a, b, &filter)
            .unwrap()
            .length(),
        around.length()
    );
}

/// Every region and portal key a mesh handed out is stale in the mesh an
/// edit makes of it, kept regions' included: `region` and `portal` answer
/// `None`, never another region (the keys of a fresh slot map would be
/// handed out again). The new mesh's own keys resolve and agree with each
/// other, its file is still a fresh bake's, and the mesh for a wider agent
/// carried through the edit goes stale with it. `region_after_edit` carries
/// the last mesh's keys of the regions the edit kept, which include every
/// region outside `changed_area` (the wall touches a tile border, so the
/// area must take in the neighbouring tile whose border edges it splits).
#[test]
fn keys_of_a_replaced_mesh_are_stale_in_the_next() {
    let level = rts_base();
    let config = tiled(16.0, false);
    // the largest agent class, the mesh's maximum radius
    let radius = level.agents.iter().map(|a| a.radius).fold(0.0, f32::max);
    assert!(radius > 0.0, "the RTS level has agent classes");
    let mut cache = TileCache::new(&level, &config).unwrap();
    let (near, far) = (vec2(46.0, 5.0), vec2(5.0, 5.0));
    let wide_before = cache.mesh().for_radius(radius).unwrap();
    let wide_keys: Vec<_> = wide_before.regions().map(|(k, _)| k).collect();
    drop(wide_before);
    let mut seen: Vec<Vec<portalnav::RegionId>> = Vec::new();
    let mut seen_portals: Vec<Vec<portalnav::PortalId>> = Vec::new();
    // a wall against the border at x = 48 of tiles of 16: it splits the
    // edges of the neighbouring tile's regions along that border
    let wall = building(0, vec2(44.0, 0.0), vec2(4.0, 10.0), 0.0);
    let mut id = None;
    // the regions at the far point and beside the wall, in the last mesh
    let mut located: Option<[portalnav::RegionId; 2]> = None;
    // the last mesh's regions, with their corners
    let mut shapes: Vec<(portalnav::RegionId, Vec<Vec2>)> = Vec::new();
    for step in 0..4 {
        let mesh = cache.mesh();
        let keys: Vec<_> = mesh.regions().map(|(k, _)| k).collect();
        let portals: Vec<_> = mesh.portals().map(|(k, _)| k).collect();
        // this mesh's keys resolve, and what they store names each other
        for (k, r) in mesh.regions() {
            assert_eq!(mesh.region(k), Some(r));
            for p in r.edge_portals().iter().flatten() {
                let portal = mesh.portal(*p).expect("a region's portal resolves");
                assert!(portal.regions().contains(&k));
            }
        }
        for (k, p) in mesh.portals() {
            for r in p.regions() {
                let region = mesh.region(r).expect("a portal's region resolves");
                assert!(region.edge_portals().contains(&Some(k)));
            }
        }
        assert!(mesh.locate(far).is_some_and(|k| keys.contains(&k)));
        // every earlier mesh's keys are stale here, the far region's too,
        // and the last mesh's carry over where the edit left their region
        for old in seen.iter().flatten() {
            assert!(mesh.region(*old).is_none(), "step {step}: {old:?}");
        }
        if let Some([far_was, near_was]) = located {
            assert_eq!(mesh.region_after_edit(far_was), mesh.locate(far));
            assert_eq!(mesh.region_after_edit(near_was), None, "step {step}");
        }
        // outside the area the edit could change, every region is kept,
        // and the key the last mesh had for it leads to it
        if let Some(area) = cache.changed_area().filter(|_| step > 0) {
            let (lo, hi) = (area.min, area.max);
            assert!(lo.cmple(vec2(44.0, 0.0)).all() && hi.cmpge(vec2(48.0, 10.0)).all());
            let mut outside = 0;
            for (k, vertices) in &shapes {
                let b = vertices
                    .iter()
                    .fold((hi, lo), |(a, b), &v| (a.min(v), b.max(v)));
                if b.1.cmple(lo).any() || b.0.cmpge(hi).any() {
                    let now = mesh
                        .region_after_edit(*k)
                        .expect("a region outside is kept");
                    assert_eq!(mesh.region(now).unwrap().vertices(), &vertices[..]);
                    outside += 1;
                }
            }
            assert!(outside > shapes.len() / 2, "{outside} of {}", shapes.len());
        }
        shapes = mesh
            .regions()
            .map(|(k, r)| (k, r.vertices().to_vec()))
            .collect();
        let older = seen.len().saturating_sub(1);
        for old in seen.iter().take(older).flatten() {
            assert_eq!(mesh.region_after_edit(*old), None);
        }
        assert!(keys.iter().all(|&k| mesh.region_after_edit(k).is_none()));
        located = Some([
            mesh.locate(far).unwrap(),
            mesh.locate(vec2(46.5, 10.5)).unwrap(),
        ]);
        for old in seen_portals.iter().flatten() {
            assert!(mesh.portal(*old).is_none(), "step {step}: {old:?}");
        }
        assert_eq!(bytes(mesh), fresh_bytes(&cache, &config));
        seen.push(keys);
        seen_portals.push(portals);
        id = match id {
            None => Some(cache.add_obstacle(&wall).unwrap()),
            Some(id) => {
                cache.remove_obstacle(id).unwrap();
                None
            }
        };
        assert!(cache.mesh().locate(near).is_some() == id.is_none());
    }
    // the wider agent's mesh was carried through the edits: its keys moved on
    let wide = cache.mesh().for_radius(radius).unwrap();
    assert!(wide.regions().count() > 0);
    assert!(wide_keys.iter().all(|&k| wide.region(k).is_none()));
    drop(wide);
    // a radius forgotten before an edit (more radii asked for since than a
    // mesh keeps) and derived afresh after it: its old keys are stale too
    let mut cache = TileCache::new(&level, &config).unwrap();
    let first = cache.mesh().for_radius(radius).unwrap();
    let first_keys: Vec<_> = first.regions().map(|(k, _)| k).collect();
    drop(first);
    for k in 1..=12 {
        cache.mesh().for_radius(radius * k as f32 / 13.0).unwrap();
    }
    cache.add_obstacle(&wall).unwrap();
    let again = cache.mesh().for_radius(radius).unwrap();
    assert!(first_keys.iter().all(|&k| again.region(k).is_none()));
}

/// A wall across the level splits it in two and removing it joins it again.
#[test]
fn a_wall_can_split_the_level_and_its_removal_joins_it() {
    let level = Level::from_json_str(r#"{"walkable": [[[0,0],[100,0],[100,40],[0,40]]]}"#).unwrap();
    let mut cache = TileCache::new(&level, &tiled(16.0, false)).unwrap();
    let (a, b) = (vec2(10.0, 20.0), vec2(90.0, 20.0));
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let before = query
        .find_path(cache.mesh(), a, b, &filter)
        .unwrap()
        .length();
    assert!((before - 80.0).abs() < 1e-3, "{before}");
    // a wall of 50 segments, one batch, overlapping the level's edge
    let segments: Vec<Edit> = (0..50)
        .map(|k| {
            let y = -2.0 + k as f32 * 0.9;
            Edit::Add(vec![
                vec2(49.0, y),
                vec2(51.0, y),
                vec2(51.0, y + 1.0),
                vec2(49.0, y + 1.0),
            ])
        })
        .collect();
    let ids = cache.apply(&segments).unwrap();
    assert_eq!(cache.mesh().component_count(), 2);
    assert!(matches!(
        query.find_path(cache.mesh(), a, b, &filter),
        Err(QueryError::Unreachable)
    ));
    // a gate: one segment destroyed
    cache.remove_obstacle(ids[25].unwrap()).unwrap();
    assert_eq!(cache.mesh().component_count(), 1);
    let through_gate = query.find_path(cache.mesh(), a, b, &filter).unwrap();
    assert!(through_gate.length() > before);
    let all: Vec<Edit> = ids
        .iter()
        .flatten()
        .filter(|&&id| Some(id) != ids[25])
        .map(|&id| Edit::Remove(id))
        .collect();
    cache.apply(&all).unwrap();
    assert_eq!(
        bytes(cache.mesh()),
        bytes(&NavMesh::bake(&level, &tiled(16.0, false)).unwrap())
    );
}

/// Bad edits get typed errors and change nothing; an obstacle over no
/// walkable space is accepted and changes nothing.
#[test]
fn bad_edits_are_refused_and_leave_the_mesh_alone() {
    let level = rts_base();
    let config = tiled(32.0, false);
    let mut cache = TileCache::new(&level, &config).unwrap();
    let id = cache
        .add_obstacle(&building(0, vec2(150.0, 150.0), vec2(10.0, 10.0), 0.0))
        .unwrap();
    let before = bytes(cache.mesh());
    let bad: [(Vec<Vec2>, &str); 4] = [
        (
            vec![vec2(0., 0.), vec2(f32::NAN, 0.), vec2(1., 1.)],
            "not finite",
        ),
        (
            vec![vec2(0., 0.), vec2(4., 2.), vec2(4., 0.), vec2(0., 3.)],
            "intersects itself",
        ),
        (vec![vec2(0., 0.), vec2(1., 1.), vec2(2., 2.)], "zero area"),
        (vec![vec2(0., 0.), vec2(1e9, 0.), vec2(1., 1.)], "outside"),
    ];
    for (outline, why) in bad {
        let err = cache.add_obstacle(&outline).unwrap_err();
        assert!(
            matches!(err, EditError::Polygon { index: 0, .. }),
            "{err:?}"
        );
        let text = format!("{err}: {}", std::error::Error::source(&err).unwrap());
        assert!(text.contains(why), "{text}");
        assert_eq!(bytes(cache.mesh()), before);
    }
    // a batch with a bad edit applies nothing, and names the edit
    let batch = [
        Edit::Add(building(0, vec2(60.0, 150.0), vec2(8.0, 8.0), 0.0)),
        Edit::Remove(id),
        Edit::Remove(id),
    ];
    let err = cache.apply(&batch).unwrap_err();
    assert!(
        matches!(err, EditError::UnknownObstacle { index: 2, .. }),
        "{err:?}"
    );
    assert_eq!(bytes(cache.mesh()), before);
    assert_eq!(cache.obstacles().count(), 1);
    // an empty batch changes nothing, not even the generation
    let generation = cache.generation();
    assert_eq!(cache.apply(&[]).unwrap(), Vec::new());
    assert_eq!(
        (cache.generation(), bytes(cache.mesh())),
        (generation, before.clone())
    );
    // stale ids
    cache.remove_obstacle(id).unwrap();
    assert!(matches!(
        cache.remove_obstacle(id),
        Err(EditError::UnknownObstacle { index: 0, .. })
    ));
    // outside the level entirely, or inside a static obstacle
    let empty = bytes(cache.mesh());
    let away = cache
        .add_obstacle(&building(0, vec2(1000.0, 1000.0), vec2(5.0, 5.0), 0.0))
        .unwrap();
    let inside_static = cache
        .add_obstacle(&building(0, vec2(14.0, 14.0), vec2(4.0, 4.0), 0.0))
        .unwrap();
    assert_eq!(bytes(cache.mesh()), empty);
    cache.remove_obstacle(away).unwrap();
    cache.remove_obstacle(inside_static).unwrap();
    assert_eq!(bytes(cache.mesh()), empty);
}

/// Bad tile settings are refused at bake time.
#[test]
fn tiled_bakes_refuse_bad_settings() {
    let level = rts_base();
    for tile in [0.0, -8.0, f32::NAN, f32::INFINITY, 0.5] {
        assert!(
            NavMesh::bake(&level, &tiled(tile, false)).is_err(),
            "{tile}"
        );
    }
    let wide = BakeConfig {
        agent_radius: 1.0,
        ..tiled(32.0, false)
    };
    assert!(NavMesh::bake(&level, &wide).is_err());
    // a level a million units wide in tiles of 1: refused, not allocated
    let huge = Level::from_json_str(r#"{"walkable": [[[-1000000,-1000000],[1000000,-1000000],[1000000,1000000],[-1000000,1000000]]]}"#).unwrap();
    let err = NavMesh::bake(&huge, &tiled(1.0, false)).unwrap_err();
    assert!(err.to_string().contains("tiles"), "{err}");
}

/// Tiled bakes of every bundled map and level hold the same walkable space
/// as the whole bake (area, components), and the seams are open: no edge
/// along a tile border is a wall where walkable space lies just across it.
#[test]
fn tiles_meet_without_seams() {
    let mut levels: Vec<Level> = crate::common::bundled_maps()
        .iter()
        .map(|m| Level::from_file(movingai_dir().join(format!("{m}.map"))).unwrap())
        .collect();
    for name in ["rts_base", "maze"] {
        levels.push(Level::from_file(data_dir().join(format!("levels/{name}.json"))).unwrap());
    }
    for level in &levels {
        let whole = NavMesh::bake(
            level,
            &BakeConfig {
                corridors: false,
                ..BakeConfig::default()
            },
        )
        .unwrap();
        for tile in [16.0f32, 37.0] {
            let mesh = NavMesh::bake(level, &tiled(tile, false)).unwrap();
            mesh.validate().unwrap();
            let (a, b) = (mesh.stats().walkable_area, whole.stats().walkable_area);
            assert!((a - b).abs() <= 1e-6 * b, "{}: area {a} vs {b}", level.name);
            assert_eq!(
                mesh.component_count(),
                whole.component_count(),
                "{}",
                level.name
            );
            let on_border = |v: f32| (v / tile).round() * tile == v;
            for (_, r) in mesh.regions() {
                let v = r.vertices();
                for (k, portal) in r.edge_portals().iter().enumerate() {
                    let (p, q) = (v[k], v[(k + 1) % v.len()]);
                    let vertical = p.x == q.x && on_border(p.x);
                    let horizontal = p.y == q.y && on_border(p.y);
                    if portal.is_some() || !(vertical || horizontal) {
                        continue;
                    }
                    // just outside the region (it is counter-clockwise)
                    let out = (q - p).perp().normalize() * -1e-3;
                    let across = (p + q) * 0.5 + out;
                    assert!(
                        whole.locate(across).is_none(),
                        "{} tile {tile}: wall {p} -> {q} has walkable space across",
                        level.name
                    );
                }
            }
        }
    }
}

/// Stamped grids: buildings of 4 x 4 cells placed at random free places on a
/// bundled map by edits (never on a checked scenario's start or goal), some
/// removed again; every scenario is then answered as the map with the
/// surviving buildings stamped in as blocked cells says: reachable exactly
/// when that grid connects start and goal, every path valid on it, none
/// flat path longer than its octile optimum (an independent grid A*);
/// hierarchical paths are held to validity and reachability only, as
/// everywhere until the any-map issue bounds them.
#[test]
fn scenarios_on_a_map_with_buildings_follow_the_stamped_grid() {
    let name = "den520d";
    let path = movingai_dir().join(format!("{name}.map"));
    let grid = portalnav::Grid::from_file(&path).unwrap();
    let scenarios: Vec<_> =
        portalnav::Scenario::load_file(movingai_dir().join(format!("{name}.map.scen")))
            .unwrap()
            .into_iter()
            .step_by(4)
            .collect();
    let config = tiled(32.0, true);
    let mut cache = TileCache::new(&grid.to_level(), &config).unwrap();
    let (w, h) = (grid.width() as i64, grid.height() as i64);
    let keep_clear: std::collections::HashSet<(i64, i64)> = scenarios
        .iter()
        .flat_map(|s| [s.start, s.goal])
        .map(|(x, y)| (i64::from(x), i64::from(y)))
        .collect();
    let mut rng = crate::common::Xorshift(0x9e37_79b9_7f4a_7c15);
    let mut next = |n: i64| rng.below(n as u64) as i64;
    let mut placed = Vec::new();
    while placed.len() < 80 {
        let (x, y) = (next(w - 4), next(h - 4));
        let cells = || (y..y + 4).flat_map(move |cy| (x..x + 4).map(move |cx| (cx, cy)));
        if !grid.is_free(x, y) || cells().any(|c| keep_clear.contains(&c)) {
            continue;
        }
        let (fx, fy) = (x as f32, y as f32);
        let outline = [
            vec2(fx, fy),
            vec2(fx + 4.0, fy),
            vec2(fx + 4.0, fy + 4.0),
            vec2(fx, fy + 4.0),
        ];
        placed.push((cache.add_obstacle(&outline).unwrap(), (x, y)));
    }
    for k in 0..25 {
        let (id, _) = placed.swap_remove(next(placed.len() as i64) as usize);
        cache.remove_obstacle(id).unwrap();
        if k == 0 {
            cache.mesh().validate().unwrap();
        }
    }
    let mut free = grid.mask().to_vec();
    for &(_, (x, y)) in &placed {
        for cy in y..y + 4 {
            for cx in x..x + 4 {
                free[(cy * w + cx) as usize] = false;
            }
        }
    }
    let stamped = crate::common::CheckGrid::from_mask(w, h, free);
    let mut query = NavQuery::new();
    let (mut reachable, mut blocked) = (0, 0);
    for s in &scenarios {
        let (a, b) = (s.start_point(), s.goal_point());
        let cell = |(x, y): (u32, u32)| (i64::from(x), i64::from(y));
        let optimum =
            crate::common::octile_optimum(|x, y| stamped.free(x, y), cell(s.start), cell(s.goal));
        for hierarchy in [false, true] {
            query.set_use_hierarchy(hierarchy);
            match (
                query.find_path(cache.mesh(), a, b, &QueryFilter::default()),
                optimum,
            ) {
                (Ok(path), Some(optimum)) => {
                    for seg in path.waypoints().windows(2) {
                        assert_eq!(stamped.segment_problem(seg[0], seg[1]), None, "{a} -> {b}");
                    }
                    // hierarchical paths can be over it: the any-map issue's bound
                    assert!(
                        hierarchy || f64::from(path.length()) <= optimum + 1e-3,
                        "{a} -> {b}: {} is over the stamped octile optimum {optimum}",
                        path.length()
                    );
                    reachable += usize::from(!hierarchy);
                }
                (Err(QueryError::Unreachable), None) => blocked += usize::from(!hierarchy),
                (got, optimum) => panic!("{a} -> {b}: {got:?}, stamped grid optimum {optimum:?}"),
            }
        }
    }
    assert!(
        reachable > 100 && blocked < reachable,
        "{reachable} reachable, {blocked} blocked"
    );
}

/// Paths in flight: a path through a new building is affected, one beside
/// it or far from it is not, and a removal affects no path.
#[test]
fn a_game_can_ask_whether_a_path_is_affected() {
    let level =
        Level::from_json_str(r#"{"walkable": [[[0,0],[100,0],[100,100],[0,100]]]}"#).unwrap();
    let mut cache = TileCache::new(&level, &tiled(16.0, false)).unwrap();
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    let planned_at = cache.generation();
    let across = query
        .find_path(cache.mesh(), vec2(5.0, 50.0), vec2(95.0, 50.0), &filter)
        .unwrap();
    let far = query
        .find_path(cache.mesh(), vec2(5.0, 90.0), vec2(95.0, 90.0), &filter)
        .unwrap();
    let along = [vec2(40.0, 40.0), vec2(60.0, 40.0)]; // the building's lower wall
    let corner = [vec2(30.0, 30.0), vec2(40.0, 40.0), vec2(50.0, 30.0)]; // touches a corner
    let building = [
        vec2(40.0, 40.0),
        vec2(60.0, 40.0),
        vec2(60.0, 60.0),
        vec2(40.0, 60.0),
    ];
    let id = cache.add_obstacle(&building).unwrap();
    assert_eq!(cache.generation(), planned_at + 1);
    assert!(cache.path_affected(across.waypoints(), planned_at));
    assert!(!cache.path_affected(far.waypoints(), planned_at));
    assert!(!cache.path_affected(&along, planned_at));
    assert!(!cache.path_affected(&corner, planned_at));
    // through two opposite corners: no edge is crossed, the interior is
    assert!(cache.path_affected(&[vec2(30.0, 30.0), vec2(70.0, 70.0)], planned_at));
    // a path planned after the building went up knows about it
    let replanned_at = cache.generation();
    let around = query
        .find_path(cache.mesh(), vec2(5.0, 50.0), vec2(95.0, 50.0), &filter)
        .unwrap();
    assert!(!cache.path_affected(around.waypoints(), planned_at));
    assert!(!cache.path_affected(across.waypoints(), replanned_at));
    cache.remove_obstacle(id).unwrap();
    assert!(!cache.path_affected(across.waypoints(), planned_at));
    assert!(!cache.path_affected(around.waypoints(), replanned_at));
}

/// Found by the edit_sequences fuzz target: a building over all of a small
/// map's walkable space. The edit is refused with a typed error and the
/// mesh left as it was, as a fresh bake of the level with it fails.
#[test]
fn a_building_over_everything_walkable_is_refused_as_a_fresh_bake_is() {
    let grid = portalnav::Grid::from_mask(4, 1, vec![true, true, false, true]);
    let config = tiled(5.0, true);
    let mut cache = TileCache::new(&grid.to_level(), &config).unwrap();
    let before = bytes(cache.mesh());
    let everything = [vec2(0., 0.), vec2(4., 0.), vec2(4., 1.), vec2(0., 1.)];
    let err = cache.add_obstacle(&everything).unwrap_err();
    assert!(
        matches!(
            err,
            EditError::Bake(portalnav::BakeError::NothingWalkable { .. })
        ),
        "{err:?}"
    );
    assert_eq!((bytes(cache.mesh()), cache.generation()), (before, 0));
    let mut level = cache.level_with_obstacles();
    level.obstacles.push(everything.to_vec());
    assert!(matches!(
        NavMesh::bake(&level, &config),
        Err(portalnav::BakeError::NothingWalkable { .. })
    ));
}

/// A refused edit puts the old tiles back, so the next edit (which takes the
/// regions of the tiles it cannot change from the mesh) still gives a fresh
/// bake's bytes, on a level of many tiles with and without the hierarchy.
#[test]
fn after_a_refused_edit_the_next_still_equals_a_fresh_bake() {
    for corridors in [false, true] {
        let config = tiled(16.0, corridors);
        let mut cache = TileCache::new(&rts_base(), &config).unwrap();
        let before = bytes(cache.mesh());
        let b = cache.mesh().bounds();
        let everything = [
            b.min - 1.0,
            vec2(b.max.x + 1.0, b.min.y - 1.0),
            b.max + 1.0,
            vec2(b.min.x - 1.0, b.max.y + 1.0),
        ];
        let err = cache.add_obstacle(&everything).unwrap_err();
        assert!(matches!(err, EditError::Bake(_)), "{err:?}");
        assert_eq!(bytes(cache.mesh()), before);
        let centre = (b.min + b.max) * 0.5;
        let id = cache
            .add_obstacle(&building(0, centre, vec2(5.0, 3.0), 0.0))
            .unwrap();
        assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config));
        cache.remove_obstacle(id).unwrap();
        assert_eq!(bytes(cache.mesh()), before);
    }
}

/// A mesh large enough to start at the configured cluster size tries half
/// of it when the configured size breaks the byte bound (as 500 buildings
/// on Aurora make it do); edits of a mesh kept at half the size still
/// equal a fresh bake byte for byte. Berlin_0_512 in tiles of 32 (5,218
/// regions) under a bound between the two sizes' bytes.
#[test]
fn edits_of_a_mesh_kept_at_half_its_cluster_size_equal_a_fresh_bake() {
    let level = Level::from_file(data_dir().join("maps/Berlin_0_512.map")).unwrap();
    let config = |cluster_size, max_hierarchy_ratio| BakeConfig {
        cluster_size,
        max_hierarchy_ratio,
        ..tiled(32.0, true)
    };
    // hierarchy bytes (as the bound measures them) over the rest of the
    // file, the mesh without its hierarchy, at one cluster size
    let rest = crate::common::rest_of_file(&level, &tiled(32.0, true)) as f32;
    let ratio_at = |size| {
        let mesh = NavMesh::bake(&level, &config(size, f32::INFINITY)).unwrap();
        let stats = mesh.hierarchy_stats().expect("no bound").clone();
        assert_eq!(stats.cluster_aim, size);
        stats.bytes as f32 / rest
    };
    let (configured, half) = (ratio_at(64), ratio_at(32));
    assert!(half < configured, "{half} against {configured}");
    let config = config(64, (half + configured) / 2.0);
    let mut cache = TileCache::new(&level, &config).unwrap();
    let aim = |cache: &TileCache| cache.mesh().hierarchy_stats().map(|s| s.cluster_aim);
    assert_eq!(aim(&cache), Some(32));
    let mut ids = Vec::new();
    for (k, at) in [vec2(130.0, 250.0), vec2(300.0, 180.0), vec2(255.0, 390.0)]
        .into_iter()
        .enumerate()
    {
        let outline = building(k as u8, at, vec2(6.0, 4.0), 0.4);
        ids.push(cache.add_obstacle(&outline).unwrap());
        assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config), "add {k}");
    }
    cache.remove_obstacle(ids[1]).unwrap();
    assert_eq!(bytes(cache.mesh()), fresh_bytes(&cache, &config), "removed");
    assert_eq!(aim(&cache), Some(32));
}
