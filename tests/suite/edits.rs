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
    let config = tiled(32.0, true);
    let mut cache = TileCache::new(&level, &config).unwrap();
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
