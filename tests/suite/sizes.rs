//! Unit sizes from one baked mesh (`NavMesh::for_radius`): the derived mesh
//! against a bake of the level for that radius, clearance against the
//! level's own geometry, and bad radii.

use portalnav::{
    BakeConfig, BakeError, Level, NavMesh, NavQuery, QueryError, QueryFilter, RadiusError, Scenario,
};

use glam::DVec2;

use crate::common::{data_dir, inside_even_odd, point_segment_distance, CheckGrid};

/// Radii that tie with no grid width (a gap of whole cells is never exactly
/// one of their diameters).
const RADII: [f32; 4] = [0.45, 0.95, 1.45, 2.45];

/// An axis-aligned square building with its lowest corner at (`x`, `y`).
fn square(x: f32, y: f32, side: f32) -> Vec<glam::Vec2> {
    use glam::vec2;
    vec![
        vec2(x, y),
        vec2(x + side, y),
        vec2(x + side, y + side),
        vec2(x, y + side),
    ]
}

fn config(max_radius: f32) -> BakeConfig {
    BakeConfig {
        max_radius: Some(max_radius),
        ..BakeConfig::default()
    }
}

/// The derived mesh is, byte for byte, the bake of the level for its radius:
/// on a grid map (with the hierarchy) and on JSON levels with areas, agent
/// classes and nav points.
#[test]
fn a_mesh_for_a_radius_is_the_bake_of_the_level_for_it() {
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let base = NavMesh::bake(&level, &config(2.45)).unwrap();
    for radius in [0.45, 1.45] {
        let derived = base.for_radius(radius).unwrap();
        derived.validate().unwrap();
        let fresh = NavMesh::bake(
            &level,
            &BakeConfig {
                agent_radius: radius,
                ..config(2.45)
            },
        )
        .unwrap();
        assert!(derived.hierarchy_stats().is_some());
        assert_eq!(
            derived.to_bytes().unwrap(),
            fresh.to_bytes().unwrap(),
            "den520d at {radius}"
        );
    }
    for name in ["rts_base", "moba_lanes", "maze"] {
        let level =
            Level::from_json_file(data_dir().join("levels").join(format!("{name}.json"))).unwrap();
        let base = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        assert_eq!(base.agents().len(), level.agents.len());
        for class in &level.agents {
            let derived = base.for_agent(&class.name).unwrap();
            let fresh = NavMesh::bake(
                &level,
                &BakeConfig {
                    agent: Some(class.name.clone()),
                    ..BakeConfig::default()
                },
            )
            .unwrap();
            assert_eq!(derived.agent_radius(), class.radius);
            assert_eq!(
                derived.to_bytes().unwrap(),
                fresh.to_bytes().unwrap(),
                "{name} for {}",
                class.name
            );
        }
    }
}

/// Every path for a radius keeps at least the radius (within 1e-3) from
/// every blocked cell, measured against the grid itself, at radii that tie
/// with no grid width; starts and goals closer than the radius to a wall
/// are moved out within the snap distance, or refused naming the radius.
#[test]
fn paths_for_every_radius_keep_it_from_every_blocked_cell() {
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let base = NavMesh::bake(&level, &config(2.45)).unwrap();
    let grid = CheckGrid::load(&map);
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let mut query = NavQuery::new();
    for radius in RADII {
        let mesh = base.for_radius(radius).unwrap();
        let filter = QueryFilter {
            snap_distance: radius + 1.0,
            ..QueryFilter::default()
        };
        let (mut paths, mut refused, mut worst) = (0, 0, f64::INFINITY);
        for s in scens.iter().step_by(3) {
            let (a, b) = (s.start_point(), s.goal_point());
            match query.find_path(&mesh, a, b, &filter) {
                Ok(path) => {
                    paths += 1;
                    let w = path.waypoints();
                    assert!(w[0].distance(a) <= filter.snap_distance);
                    assert!(w[w.len() - 1].distance(b) <= filter.snap_distance);
                    for pair in w.windows(2) {
                        worst = worst.min(grid.clearance(pair[0], pair[1], 3.0));
                    }
                }
                Err(QueryError::Unreachable) => refused += 1,
                Err(QueryError::NoRoom { radius: named, .. }) => {
                    assert_eq!(named, radius);
                    refused += 1;
                }
                Err(e) => panic!("radius {radius}: {e}"),
            }
        }
        eprintln!("radius {radius}: {paths} paths, {refused} refused, closest {worst:.4}");
        assert!(paths > 100, "radius {radius}: {paths} paths");
        assert!(
            worst >= f64::from(radius) - 1e-3,
            "radius {radius}: a path passes {worst} from a blocked cell"
        );
    }
}

/// Distance between segments `a`-`b` and `c`-`d` (0 when they cross).
pub(crate) fn segment_distance(a: DVec2, b: DVec2, c: DVec2, d: DVec2) -> f64 {
    let orient = |p: DVec2, q: DVec2, r: DVec2| (q - p).perp_dot(r - p);
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    if o1 * o2 < 0.0 && o3 * o4 < 0.0 {
        return 0.0;
    }
    point_segment_distance(c, d, a)
        .min(point_segment_distance(c, d, b))
        .min(point_segment_distance(a, b, c))
        .min(point_segment_distance(a, b, d))
}

/// The walls of a JSON level as it was written, as segments: every edge of
/// an obstacle or impassable area, and the parts of walkable contours that
/// no other walkable contour covers (walkable polygons are unioned).
/// The bake snaps every outline to its grid, and a part of an obstacle
/// thinner than a step there can vanish, so with `thinnest` above 0:
/// obstacles thinner than it (twice their area over their longest side)
/// are left out (a 0.07 sliver at 1,040,000, where the step is 1/8, was
/// found by the generated-level property), and so are their sharp tips, up
/// to where they are twice `thinnest` wide (a tip of a 3.4-wide triangle
/// crossing walkable space at 1,040,000 was found the same way), as far
/// as the next corner when the tip is that thin all the way (a 0.16 degree
/// spike of an impassable area at 100,000, where the step is 1/128, whose
/// 1.7 units were under a step wide).
fn level_walls(level: &Level, thinnest: f64) -> Vec<[DVec2; 2]> {
    let impassable = level.areas.iter().filter(|a| a.cost.is_none());
    let mut walls = Vec::new();
    let thickness = |v: &[DVec2]| {
        let longest = (0..v.len())
            .map(|i| v[i].distance(v[(i + 1) % v.len()]))
            .fold(0.0, f64::max);
        twice_area(v).abs() / longest.max(1e-300)
    };
    for p in level.obstacles.iter().chain(impassable.map(|a| &a.polygon)) {
        let v: Vec<DVec2> = p.iter().map(|v| v.as_dvec2()).collect();
        if thickness(&v) < thinnest {
            continue;
        }
        let v = without_tips(&v, thinnest);
        for i in 0..v.len() {
            walls.push([v[i], v[(i + 1) % v.len()]]);
        }
    }
    for (j, p) in level.walkable.iter().enumerate() {
        let others: Vec<&Vec<glam::Vec2>> = (level.walkable.iter().enumerate())
            .filter(|(k, _)| *k != j)
            .map(|(_, o)| o)
            .collect();
        for i in 0..p.len() {
            let (a, b) = (p[i].as_dvec2(), p[(i + 1) % p.len()].as_dvec2());
            // split where other contours cross it, keep the uncovered pieces
            let mut cuts = vec![0.0, 1.0];
            for o in &others {
                for k in 0..o.len() {
                    let (c, d) = (o[k].as_dvec2(), o[(k + 1) % o.len()].as_dvec2());
                    let denom = (b - a).perp_dot(d - c);
                    if denom != 0.0 {
                        let t = (c - a).perp_dot(d - c) / denom;
                        let u = (c - a).perp_dot(b - a) / denom;
                        if (0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&u) {
                            cuts.push(t);
                        }
                    }
                }
            }
            cuts.sort_by(f64::total_cmp);
            for w in cuts.windows(2) {
                let mid = a + (b - a) * (0.5 * (w[0] + w[1]));
                if w[1] > w[0] && !others.iter().any(|o| inside_even_odd(o, mid)) {
                    walls.push([a + (b - a) * w[0], a + (b - a) * w[1]]);
                }
            }
        }
    }
    walls
}

/// Twice the signed area of a polygon.
fn twice_area(v: &[DVec2]) -> f64 {
    (0..v.len())
        .map(|i| v[i].perp_dot(v[(i + 1) % v.len()]))
        .sum()
}

/// The polygon with each convex corner cut where its sides are `2 * width`
/// apart. A cut may run the whole length of a side, up to the next corner,
/// when that corner cuts nothing there (a thin spike between two reflex
/// corners is forgiven whole); two corners that both reach past the middle
/// of the side between them meet there.
fn without_tips(v: &[DVec2], width: f64) -> Vec<DVec2> {
    let turn = twice_area(v).signum();
    let n = v.len();
    // how far along both its sides each corner would cut, sides assumed
    // straight (0 where it cuts nothing)
    let reach: Vec<f64> = (0..n)
        .map(|i| {
            let (u, c, w) = (v[(i + n - 1) % n], v[i], v[(i + 1) % n]);
            let (a, b) = (u - c, w - c);
            if width <= 0.0 || b.perp_dot(a) * turn <= 0.0 || a.length() == 0.0 || b.length() == 0.0
            {
                return 0.0;
            }
            width / (0.5 * a.angle_to(b).abs()).sin().max(1e-12)
        })
        .collect();
    // the part of a side of length `side` a corner reaching `mine` along it
    // takes, when the corner at its other end reaches `theirs`
    let share = |mine: f64, theirs: f64, side: f64| mine.min((0.5 * side).max(side - theirs));
    let mut out = Vec::with_capacity(2 * n);
    for i in 0..n {
        let (p, q) = ((i + n - 1) % n, (i + 1) % n);
        let (u, c, w) = (v[p], v[i], v[q]);
        if reach[i] == 0.0 {
            out.push(c);
            continue;
        }
        let (a, b) = (u - c, w - c);
        let back = share(reach[i], reach[p], a.length());
        let ahead = share(reach[i], reach[q], b.length());
        out.push(c + a * (back / a.length()));
        out.push(c + b * (ahead / b.length()));
    }
    out
}

/// On the JSON levels, paths for each agent class and for radii between
/// them keep the radius from every wall of the level as written (its
/// polygons, not the mesh), and every path starts and ends where asked.
#[test]
fn paths_on_polygon_levels_keep_the_radius_from_the_level_walls() {
    for name in ["rts_base", "moba_lanes", "maze"] {
        let level =
            Level::from_json_file(data_dir().join("levels").join(format!("{name}.json"))).unwrap();
        let largest = level.agents.iter().map(|a| a.radius).fold(0.0, f32::max);
        let base = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let walls = level_walls(&level, 0.0);
        let bounds = base.bounds();
        let mut query = NavQuery::new();
        let mut rng = crate::common::Xorshift(0x9e37_79b9_7f4a_7c15);
        let mut random = || rng.below(1_000_000) as f32 / 1_000_000.0;
        for radius in [largest * 0.3, largest * 0.7, largest] {
            let mesh = base.for_radius(radius).unwrap();
            let (mut paths, mut worst) = (0, f64::INFINITY);
            for _ in 0..200 {
                let mut point =
                    || bounds.min + (bounds.max - bounds.min) * glam::vec2(random(), random());
                let (a, b) = (point(), point());
                let Ok(path) = query.find_path(&mesh, a, b, &QueryFilter::default()) else {
                    continue;
                };
                paths += 1;
                let w = path.waypoints();
                assert_eq!((w[0], w[w.len() - 1]), (a, b));
                for pair in w.windows(2) {
                    let (p, q) = (pair[0].as_dvec2(), pair[1].as_dvec2());
                    for [c, d] in &walls {
                        worst = worst.min(segment_distance(p, q, *c, *d));
                    }
                }
            }
            eprintln!("{name} at {radius}: {paths} paths, closest {worst:.4}");
            assert!(paths >= 20, "{name} at {radius}: {paths} paths");
            assert!(
                worst >= f64::from(radius) - 1e-3,
                "{name} at {radius}: a path passes {worst} from a wall"
            );
        }
    }
}

/// Whether a mesh's walkable space is a sliver: its area at most `2 * step`
/// times the length of its walls.
fn sliver(mesh: &NavMesh, step: f64) -> bool {
    let walls: f64 = crate::common::mesh_walls(mesh)
        .map(|[a, b]| f64::from(a.distance(b)))
        .sum();
    mesh.stats().walkable_area <= 2.0 * step * walls
}

/// Walkable area of each area kind of a mesh.
fn kind_areas(mesh: &NavMesh) -> Vec<f64> {
    let mut out = vec![0.0; mesh.areas().len()];
    for (_, r) in mesh.regions() {
        let v = r.vertices();
        let twice: f64 = (0..v.len())
            .map(|i| v[i].as_dvec2().perp_dot(v[(i + 1) % v.len()].as_dvec2()))
            .sum();
        out[usize::from(r.area())] += 0.5 * twice;
    }
    out
}

/// With the hierarchy on, a mesh carried for a radius takes the leg tables
/// of the clusters an edit kept, as the base mesh's edits do: after each
/// edit (two buildings, then a removal) it is still byte for byte the one
/// derived from a fresh tiled bake, hierarchy included. Its all-pairs table
/// is left pending, counted by `table_pending` and computed by
/// `refresh_table`; before and after, its paths are the fresh one's.
#[test]
fn carried_meshes_with_a_hierarchy_follow_runtime_edits_as_fresh_bakes_give_them() {
    use portalnav::TileCache;
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let config = BakeConfig {
        tile_size: Some(64.0),
        ..config(0.95)
    };
    let mut cache = TileCache::new(&level, &config).unwrap();
    cache.mesh().for_radius(0.95).unwrap();
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let filter = QueryFilter {
        snap_distance: 2.0,
        ..QueryFilter::default()
    };
    let paths = |mesh: &NavMesh| -> Vec<Option<Vec<glam::Vec2>>> {
        let mut query = NavQuery::new();
        scens
            .iter()
            .step_by(37)
            .map(|s| {
                let path = query.find_path(mesh, s.start_point(), s.goal_point(), &filter);
                path.ok().map(|p| p.waypoints().to_vec())
            })
            .collect()
    };
    let check = |cache: &mut TileCache, what: &str| {
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).unwrap();
        let fresh = fresh.for_radius(0.95).unwrap();
        let (left, all) = cache.table_pending().expect("the carried table is pending");
        assert_eq!(left, all, "{what}: no row computed yet");
        {
            let carried = cache.mesh().for_radius(0.95).unwrap();
            // the mesh's rows and landmark picks, and the carried mesh's rows
            let base = cache.mesh().hierarchy_stats().expect("a hierarchy");
            let n = cache.mesh().nav_nodes().len();
            let own = if base.all_pairs_table {
                n + n.min(16)
            } else {
                0
            };
            assert_eq!(all, own + carried.nav_nodes().len(), "{what}");
            let h = carried
                .hierarchy_stats()
                .expect("the derived mesh keeps a hierarchy");
            assert!(h.all_pairs_table, "{what}: a table to compare");
            assert!(
                carried.to_bytes().unwrap() == fresh.to_bytes().unwrap(),
                "{what}: the carried mesh is not the fresh one"
            );
            // searched over the L2 graph until the table is in: as short
            let length = |p: &[glam::Vec2]| p.windows(2).map(|w| w[0].distance(w[1])).sum::<f32>();
            for (a, b) in paths(&carried).iter().zip(paths(&fresh)) {
                let (a, b) = (a.as_deref().map(length), b.as_deref().map(length));
                assert_eq!(a.is_some(), b.is_some(), "{what}: pending");
                if let (Some(a), Some(b)) = (a, b) {
                    assert!(
                        (a - b).abs() <= 1e-4 * b.max(1.0),
                        "{what}: pending, {a} against {b}"
                    );
                }
            }
        }
        // a few rows, then the rest
        assert!(!cache.refresh_table(3));
        assert!(cache.table_pending().is_some_and(|(l, _)| l + 3 == left));
        assert!(cache.refresh_table(usize::MAX));
        assert_eq!(cache.table_pending(), None);
        let carried = cache.mesh().for_radius(0.95).unwrap();
        assert_eq!(paths(&carried), paths(&fresh), "{what}: tabled");
    };
    let barracks = cache.add_obstacle(&square(76.0, 76.0, 6.0)).unwrap();
    check(&mut cache, "a building");
    cache.add_obstacle(&square(88.0, 77.0, 5.0)).unwrap();
    check(&mut cache, "a second building");
    cache.remove_obstacle(barracks).unwrap();
    check(&mut cache, "the first removed");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 120, ..Default::default() })]

    /// On generated levels anywhere in the coordinate range (obstacles,
    /// costed and impassable areas), the mesh derived for a radius is the
    /// bake of the level for it, byte for byte (without costed areas; with
    /// them, the same walkable space and each kind's share of it up to the
    /// snapping step), and a radius that leaves no room is refused by both.
    #[test]
    fn a_derived_mesh_is_the_bake_for_its_radius_on_generated_levels(
        (level, radius) in crate::hostile::level_strategy(),
        extra in proptest::sample::select(vec![0.25f32, 0.95, 2.45]),
    ) {
        let radius = radius + extra;
        let base = NavMesh::bake(&level, &config(radius));
        proptest::prop_assume!(base.is_ok());
        let base = base.unwrap();
        // the triangulation keeps every constraint (they are noded)
        proptest::prop_assert_eq!(base.stats().dropped_constraints, 0);
        let fresh = NavMesh::bake(&level, &BakeConfig { agent_radius: radius, ..config(radius) });
        proptest::prop_assert_eq!(fresh.as_ref().map_or(0, |m| m.stats().dropped_constraints), 0);
        let derived = base.for_radius(radius);
        if let Ok(derived) = &derived {
            // every region's edges keep the radius from the level's own walls
            let step = crate::common::grid_step(&level);
            let walls = level_walls(&level, 2.0 * step);
            for (_, region) in derived.regions() {
                let v = region.vertices();
                for i in 0..v.len() {
                    let (p, q) = (v[i].as_dvec2(), v[(i + 1) % v.len()].as_dvec2());
                    for [c, d] in &walls {
                        let gap = segment_distance(p, q, *c, *d);
                        proptest::prop_assert!(
                            gap >= f64::from(radius) - 1e-3,
                            "an edge {p} {q} of the mesh for {radius} is {gap} from a wall"
                        );
                    }
                }
            }
        }
        // where a costed area's edge crosses a wall, the derived mesh has it
        // from the snapped base regions and the bake from the level, and each
        // bends the wall through its own rounding of the crossing: the same
        // up to the snapping step along the outlines
        let step = crate::common::grid_step(&level);
        let length = |p: &Vec<glam::Vec2>| {
            (0..p.len()).map(|i| f64::from(p[i].distance(p[(i + 1) % p.len()]))).sum::<f64>()
        };
        let outline: f64 = level.areas.iter().map(|a| length(&a.polygon))
            .chain(level.walkable.iter().chain(&level.obstacles).map(length))
            .sum();
        let slack = 2.0 * step * outline;
        let costed = level.areas.iter().any(|a| a.cost.is_some());
        match (derived, fresh) {
            (Ok(derived), Ok(fresh)) if !costed => {
                proptest::prop_assert_eq!(derived.to_bytes().unwrap(), fresh.to_bytes().unwrap());
            }
            (Ok(derived), Ok(fresh)) => {
                proptest::prop_assert_eq!(derived.stats().dropped_constraints, 0);
                let (d, f) = (kind_areas(&derived), kind_areas(&fresh));
                let (dw, fw) = (derived.stats().walkable_area, fresh.stats().walkable_area);
                proptest::prop_assert!((dw - fw).abs() <= slack, "walkable {dw} against {fw}");
                for (a, b) in d.iter().zip(&f) {
                    proptest::prop_assert!((a - b).abs() <= slack, "{:?} against {:?}", d, f);
                }
            }
            (Err(RadiusError::Bake { error: BakeError::NothingWalkable { .. }, .. }),
             Err(BakeError::NothingWalkable { .. })) => {}
            // a sliver that the snapping step decides: room on one side only,
            // under a few steps wide (its area at most 2 steps times its
            // walls' length)
            (Err(RadiusError::Bake { error: BakeError::NothingWalkable { .. }, .. }), Ok(only))
                if costed && sliver(&only, step) => {}
            (Ok(only), Err(BakeError::NothingWalkable { .. }))
                if costed && sliver(&only, step) => {}
            (derived, fresh) => proptest::prop_assert!(
                false,
                "derived {:?} but fresh {:?}",
                derived.map(|m| (m.region_count(), m.stats().walkable_area)),
                fresh.map(|m| (m.region_count(), m.stats().walkable_area))
            ),
        }
    }
}

/// Group moves, surface moves, rays and nearest points on the mesh for a
/// radius all keep the radius from every blocked cell: they run on that
/// mesh as on any other.
#[test]
fn group_moves_surface_moves_rays_and_nearest_points_keep_the_radius() {
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let base = NavMesh::bake(&level, &config(1.45)).unwrap();
    let mesh = base.for_radius(1.45).unwrap();
    let grid = CheckGrid::load(&map);
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let filter = QueryFilter {
        snap_distance: 2.5,
        ..QueryFilter::default()
    };
    let mut query = NavQuery::new();
    let radius = 1.45 - 1e-3;
    // a group to one goal: every unit's path, and no longer than its own query
    let goal = scens[scens.len() - 1].goal_point();
    let starts: Vec<glam::Vec2> = scens.iter().step_by(9).map(|s| s.start_point()).collect();
    let mut found = 0;
    for (start, group) in starts
        .iter()
        .zip(query.find_paths_to(&mesh, &starts, goal, &filter))
    {
        let Ok(group) = group else { continue };
        found += 1;
        let alone = query.find_path(&mesh, *start, goal, &filter).unwrap();
        assert!(group.length() <= alone.length() + 1e-4);
        for w in group.waypoints().windows(2) {
            assert!(grid.clearance(w[0], w[1], 2.0) >= radius, "{w:?}");
        }
    }
    assert!(found > 40, "{found} units found a path");
    // surface moves, rays and nearest points from points all over the map
    let (mut moves, mut rays) = (0, 0);
    for s in scens.iter().step_by(5) {
        let Some((from, _)) = query.nearest_point(&mesh, s.start_point(), 2.5) else {
            continue;
        };
        assert!(grid.clearance(from, from, 2.0) >= radius, "{from}");
        let to = s.goal_point();
        // a surface move may slide along walls: where it ends keeps the radius
        if let Ok((end, _)) = query.move_along(&mesh, from, to, &filter) {
            moves += 1;
            assert!(grid.clearance(end, end, 2.0) >= radius, "{from} -> {end}");
        }
        let hit = query.raycast(&mesh, from, to).unwrap();
        let end = hit.map_or(to, |h| h.point);
        if hit.is_some() {
            rays += 1;
        }
        assert!(
            grid.clearance(from, end, 2.0) >= radius,
            "ray {from} -> {end}"
        );
    }
    assert!(moves > 50 && rays > 50, "{moves} moves, {rays} rays");
}

/// On a tiled mesh the mesh for a radius is derived tile by tile, and a
/// runtime edit derives again only the tiles near it: after every edit (an
/// axis-aligned building, a rotated one, a batch, a removal) the meshes for
/// two radii, carried through the edits, are byte for byte the ones derived
/// from a fresh tiled bake of the level with the surviving obstacles.
#[test]
fn meshes_for_radii_follow_runtime_edits_as_fresh_bakes_give_them() {
    use glam::vec2;
    use portalnav::{Edit, TileCache};
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let config = BakeConfig {
        tile_size: Some(32.0),
        corridors: false,
        ..config(1.45)
    };
    let mut cache = TileCache::new(&level, &config).unwrap();
    for r in [0.95, 1.45] {
        cache.mesh().for_radius(r).unwrap();
    }
    let tilted = vec![
        vec2(100.0, 60.0),
        vec2(106.0, 63.0),
        vec2(103.0, 69.0),
        vec2(97.0, 66.0),
    ];
    let barracks = cache.add_obstacle(&square(60.0, 100.0, 6.0)).unwrap();
    let check = |cache: &TileCache, what: &str| {
        let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).unwrap();
        for r in [0.95, 1.45] {
            let carried = cache.mesh().for_radius(r).unwrap();
            carried.validate().unwrap();
            let fresh = fresh.for_radius(r).unwrap();
            assert!(
                carried.to_bytes().unwrap() == fresh.to_bytes().unwrap(),
                "{what} at {r}: the carried mesh is not the fresh one"
            );
        }
    };
    check(&cache, "a building");
    cache.add_obstacle(&tilted).unwrap();
    check(&cache, "a rotated building");
    // small buildings on free cells just inside a tile's border: they
    // change what the pen leaves in the tile beyond it, which the edit did
    // not re-bake
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let near: Vec<glam::Vec2> = scens
        .iter()
        .map(|s| s.start_point())
        .filter(|p| (p.x.floor() as i64).rem_euclid(32) == 31)
        .take(3)
        .collect();
    assert!(!near.is_empty());
    for p in near {
        cache
            .add_obstacle(&square(p.x.floor() + 0.25, p.y.floor() + 0.25, 0.5))
            .unwrap();
        check(&cache, "a building by a tile's border");
    }
    cache
        .apply(&[
            Edit::Add(square(30.0, 31.0, 3.0)),
            Edit::Add(square(200.0, 150.0, 8.0)),
            Edit::Remove(barracks),
        ])
        .unwrap();
    check(&cache, "a batch with a removal");
}

/// A mesh for a radius derived tile by tile covers the same walkable space
/// as one derived whole, and a path exists on one exactly when it does on
/// the other.
#[test]
fn a_tiled_derivation_covers_what_a_whole_one_does() {
    let map = data_dir().join("maps").join("den520d.map");
    let level = Level::from_movingai_file(&map).unwrap();
    let whole = NavMesh::bake(&level, &config(1.45)).unwrap();
    let tiled = NavMesh::bake(
        &level,
        &BakeConfig {
            tile_size: Some(32.0),
            ..config(1.45)
        },
    )
    .unwrap();
    let scens = Scenario::load_file(map.with_extension("map.scen")).unwrap();
    let mut query = NavQuery::new();
    let filter = QueryFilter::default();
    for r in [0.45, 1.45] {
        let (a, b) = (whole.for_radius(r).unwrap(), tiled.for_radius(r).unwrap());
        let (wa, ta) = (a.stats().walkable_area, b.stats().walkable_area);
        assert!(
            (wa - ta).abs() <= 1e-6 * wa,
            "radius {r}: {wa} against {ta}"
        );
        assert!(b.region_count() >= a.region_count());
        for s in scens.iter().step_by(4) {
            let (p, q) = (s.start_point(), s.goal_point());
            let (x, y) = (
                query.find_path(&a, p, q, &filter),
                query.find_path(&b, p, q, &filter),
            );
            assert_eq!(
                x.is_ok(),
                y.is_ok(),
                "radius {r}: {p} -> {q}: {x:?} against {y:?}"
            );
            if let (Ok(x), Ok(y)) = (x, y) {
                // the tiled mesh's corridor can differ: lengths within 2%
                assert!((x.length() - y.length()).abs() <= 0.02 * x.length().max(1.0));
            }
        }
    }
}

/// `render::passing_radii` on two rooms joined by a doorway 2 wide: every
/// portal inside the doorway passes radius 0.9 and not 1.1, the rooms pass
/// the widest radius, and a radius above the maximum is refused.
#[test]
fn portals_and_regions_know_the_largest_radius_that_passes() {
    let level = Level::from_json_str(
        r#"{
        "walkable": [[[0,0],[20,0],[20,10],[0,10]]],
        "obstacles": [[[9,0],[11,0],[11,4],[9,4]], [[9,6],[11,6],[11,10],[9,10]]]
    }"#,
    )
    .unwrap();
    let mesh = NavMesh::bake(&level, &config(1.5)).unwrap();
    let radii = [1.5, 0.5, 1.1, 0.9];
    let passing = portalnav::render::passing_radii(&mesh, &radii).unwrap();
    assert_eq!(passing.radii, [0.5, 0.9, 1.1, 1.5], "sorted");
    let in_doorway = |p: glam::Vec2| (9.0..=11.0).contains(&p.x) && (4.0..=6.0).contains(&p.y);
    let mut doorway = 0;
    for &(id, best) in &passing.portals {
        let p = mesh.portal(id).unwrap();
        if in_doorway(p.left()) && in_doorway(p.right()) {
            doorway += 1;
            assert_eq!(
                best,
                Some(1),
                "{:?}-{:?} passes up to 0.9",
                p.left(),
                p.right()
            );
        }
    }
    assert!(doorway > 0, "the doorway has portals");
    let room = |x: f32| {
        passing
            .regions
            .iter()
            .filter(|(id, _)| mesh.locate(glam::vec2(x, 5.0)) == Some(*id))
            .map(|&(_, best)| best)
            .next()
            .unwrap()
    };
    assert_eq!(room(4.5), Some(3), "the left room takes the widest unit");
    assert_eq!(room(15.5), Some(3));
    assert!(
        passing.regions.iter().all(|&(_, best)| best.is_some()),
        "0.5 fits everywhere"
    );
    let svg = portalnav::render::svg_by_radius(&mesh, &radii, &[]).unwrap();
    assert!(svg.contains("up to radius 1.5") && svg.contains("radius 0 only"));
    assert!(matches!(
        portalnav::render::passing_radii(&mesh, &[2.0]),
        Err(RadiusError::AboveMaximum { .. })
    ));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 12, ..Default::default() })]

    /// Random edits on a level with costed areas and agent classes, in tiles
    /// of 16: after each, the meshes for two radii carried through the
    /// edits (the tiles near an edit derived again, the rest of the mesh
    /// taken from the earlier one) are byte for byte the ones derived from a
    /// fresh tiled bake of the level with the surviving obstacles.
    #[test]
    fn carried_meshes_for_radii_follow_random_edits_on_a_level_with_areas(
        steps in proptest::collection::vec(
            (0.0f32..1.0, 0.0f32..1.0, 1.0f32..9.0, 1.0f32..9.0, proptest::bool::weighted(0.3)),
            1..5,
        ),
    ) {
        use glam::vec2;
        use portalnav::TileCache;
        let level = Level::from_file(data_dir().join("levels/rts_base.json")).unwrap();
        let config = BakeConfig {
            tile_size: Some(16.0),
            corridors: false,
            ..BakeConfig::default()
        };
        let mut cache = TileCache::new(&level, &config).unwrap();
        let top = cache.mesh().max_radius();
        let radii = [top * 0.5, top];
        for r in radii {
            cache.mesh().for_radius(r).unwrap();
        }
        let b = cache.mesh().bounds();
        let mut live = Vec::new();
        for (fx, fy, w, h, remove) in steps {
            if remove && !live.is_empty() {
                cache.remove_obstacle(live.remove(0)).unwrap();
            } else {
                let at = b.min + (b.max - b.min) * vec2(fx, fy);
                let outline = vec![at, at + vec2(w, 0.0), at + vec2(w, h), at + vec2(0.0, h)];
                match cache.add_obstacle(&outline) {
                    Ok(id) => live.push(id),
                    // covering all that is walkable: refused, the mesh unchanged
                    Err(_) => continue,
                }
            }
            let fresh = NavMesh::bake(&cache.level_with_obstacles(), &config).unwrap();
            for r in radii {
                let carried = cache.mesh().for_radius(r);
                let derived = fresh.for_radius(r);
                match (carried, derived) {
                    (Ok(carried), Ok(derived)) => proptest::prop_assert!(
                        carried.to_bytes().unwrap() == derived.to_bytes().unwrap(),
                        "radius {r}: the carried mesh is not the fresh one"
                    ),
                    (Err(_), Err(_)) => {}
                    (carried, derived) => proptest::prop_assert!(
                        false,
                        "radius {r}: carried {:?}, fresh {:?}",
                        carried.err(),
                        derived.err()
                    ),
                }
            }
        }
    }
}
