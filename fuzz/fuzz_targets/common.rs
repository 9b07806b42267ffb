//! What every target checks of a mesh it gets: it validates, its file
//! loads back, and queries on it answer without panicking.
#![allow(dead_code)] // each target uses part of it

use glam::{vec2, Vec2};
use portalnav::{NavMesh, NavQuery, QueryFilter};

/// Most vertices a fuzzed level may have before the target skips the bake
/// (the bake's cost on huge inputs is bounded elsewhere, not here).
pub const MAX_BAKED_VERTICES: usize = 200;

/// A baked mesh must validate and load back from its own file.
pub fn check_baked(mesh: &NavMesh) {
    if let Err(e) = mesh.validate() {
        panic!("the bake returned an invalid mesh: {e}");
    }
    // the triangulation nodes the areas' edges against the walls and each
    // other: a dropped constraint means regions of the wrong area kind
    assert_eq!(
        mesh.stats().dropped_constraints,
        0,
        "the bake dropped constraints"
    );
    let bytes = mesh.to_bytes().expect("a baked mesh encodes");
    if let Err(e) = NavMesh::from_bytes(&bytes) {
        panic!("the bake's file does not load: {e}");
    }
}

/// Queries between points read from `data`, which must not panic, and whose
/// paths run from the start to the goal.
pub fn poke(mesh: &NavMesh, data: &[u8]) {
    let b = mesh.bounds();
    let mut query = NavQuery::new();
    query.set_max_expansions(10_000);
    let point = |c: &[u8]| -> Vec2 {
        let f = |x: u8, lo: f32, hi: f32| lo + (hi - lo) * (f32::from(x) / 255.0);
        vec2(
            f(c[0], b.min.x - 1.0, b.max.x + 1.0),
            f(c[1], b.min.y - 1.0, b.max.y + 1.0),
        )
    };
    for c in data.chunks_exact(4).take(16) {
        let (a, g) = (point(&c[..2]), point(&c[2..]));
        if let Ok(path) = query.find_path(mesh, a, g, &QueryFilter::default()) {
            let w = path.waypoints();
            assert!(!w.is_empty(), "a path has waypoints");
            assert!(path.length().is_finite());
        }
        let _ = query.raycast(mesh, a, g);
        let _ = query.nearest_point(mesh, a, 5.0);
        let _ = mesh.locate(g);
    }
}
