//! Flat paths are the shortest: checked against polyanya 0.18, an optimal
//! any-angle search that shares no code with portalnav, on random levels
//! baked whole and in tiles (tile corners are vertices a corridor can bend
//! round without a wall there).

use glam::{vec2, Vec2};
use portalnav::{bake, BakeConfig, BakeError, Level, NavMesh, NavQuery, QueryFilter};
use proptest::prelude::*;

use crate::properties::{oracle, rect, SIDE};

#[path = "../../benches/common/peers.rs"]
mod peers;

/// Relative slack on a length: the search keeps ties within 1e-5.
const SLACK: f32 = 1e-4;

fn flat_length(mesh: &NavMesh, a: Vec2, b: Vec2) -> f32 {
    let mut query = NavQuery::new();
    query.set_use_hierarchy(false);
    query
        .find_path(mesh, a, b, &QueryFilter::default())
        .map(|p| p.length())
        .unwrap_or_else(|e| panic!("{a} -> {b}: {e}"))
}

/// The reproducer from the any-map issue: a wall from the bottom edge up to
/// y = 80 between two points near the bottom. In tiles of 16 the old search
/// closed a crossing with a funnel that bent round a tile corner and
/// dropped the wider one, and the path came out bent at (32, 48).
#[test]
fn a_wall_between_two_points_is_passed_at_its_end_in_tiles() {
    let level = Level::from_json_str(
        r#"{"walkable":[[[0,0],[100,0],[100,100],[0,100]]],
            "obstacles":[[[49,0],[51,0],[51,80],[49,80]]]}"#,
    )
    .unwrap();
    let want = 2.0 * vec2(39.0, 70.0).length() + 2.0;
    for tile_size in [None, Some(16.0), Some(10.0)] {
        let config = BakeConfig {
            tile_size,
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = NavMesh::bake(&level, &config).unwrap();
        let got = flat_length(&mesh, vec2(10.0, 10.0), vec2(90.0, 10.0));
        assert!(
            (got - want).abs() <= SLACK * want,
            "tiles {tile_size:?}: {got} vs {want}"
        );
    }
}

/// Many small blocks: many corners for a path to choose between.
fn blocks() -> impl Strategy<Value = Vec<(i64, i64, i64, i64)>> {
    prop::collection::vec(
        (0..SIDE, 0..SIDE, 1..4i64, 1..4i64).prop_map(|(x, y, w, h)| (x, y, x + w, y + h)),
        4..16,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn flat_paths_are_as_short_as_polyanyas(
        obs in blocks(),
        tile in prop::option::of(2..9i64),
        picks in prop::collection::vec((0..SIDE, 0..SIDE, 0..SIDE, 0..SIDE), 12),
    ) {
        let level = Level {
            walkable: vec![rect(0, 0, SIDE, SIDE)],
            obstacles: obs.iter().map(|&(a, b, c, d)| rect(a, b, c, d)).collect(),
            ..Level::default()
        };
        let config = BakeConfig {
            tile_size: tile.map(|t| t as f32),
            corridors: false,
            ..BakeConfig::default()
        };
        let mesh = match NavMesh::bake(&level, &config) {
            Ok(mesh) => mesh,
            Err(BakeError::NothingWalkable { .. }) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(format!("bake failed: {e}"))),
        };
        // polyanya on the untiled triangulation: the same free space
        let soup = bake::triangulate(&level, &BakeConfig::default()).unwrap();
        let mut peer = peers::polyanya_from_triangles(&soup.vertices, &soup.triangles);
        peers::polyanya_prepare(&mut peer);
        let (_, label) = oracle(&obs);
        for &(sx, sy, gx, gy) in &picks {
            let (ls, lg) = (label[(sy * SIDE + sx) as usize], label[(gy * SIDE + gx) as usize]);
            if ls < 0 || ls != lg {
                continue;
            }
            let (a, b) = (vec2(sx as f32 + 0.5, sy as f32 + 0.5), vec2(gx as f32 + 0.5, gy as f32 + 0.5));
            let ours = flat_length(&mesh, a, b);
            let theirs = peers::polyanya_path_length(&peer, a, b)
                .ok_or_else(|| TestCaseError::fail(format!("polyanya found no path {a} -> {b}")))?;
            prop_assert!(ours <= theirs * (1.0 + SLACK) + SLACK,
                "{} -> {} in tiles {:?}: ours {} vs polyanya {}", a, b, tile, ours, theirs);
        }
    }
}
