//! Batch queries ([`BatchQuery`]) against the oracle of one-by-one queries:
//! the same answers, bit for bit, in request order, whatever the thread count.

use glam::{vec2, Vec2};
use portalnav::{
    BakeConfig, BatchQuery, Level, NavMesh, NavQuery, Path, QueryError, QueryFilter, Scenario,
};

use crate::common::movingai_dir;

/// Every scenario of a bundled map, plus requests that must fail: a NaN, a
/// point off the mesh, the same point twice.
fn requests(map: &str) -> Vec<(Vec2, Vec2)> {
    let scen = movingai_dir().join(format!("{map}.map.scen"));
    let mut r: Vec<_> = Scenario::load_file(scen)
        .unwrap()
        .iter()
        .map(|s| (s.start_point(), s.goal_point()))
        .collect();
    let first = r[0].0;
    r.insert(5, (vec2(f32::NAN, 1.0), first));
    r.insert(9, (first, vec2(-100.0, -100.0)));
    r.push((first, first));
    r
}

/// Bit for bit the same answer (errors by their description: a NaN in one
/// is not equal to itself).
fn same(got: Result<&Path, &QueryError>, want: Result<&Path, &QueryError>) -> bool {
    match (got, want) {
        (Ok(p), Ok(q)) => {
            p == q
                && p.length().to_bits() == q.length().to_bits()
                && p.waypoints()
                    .iter()
                    .zip(q.waypoints())
                    .all(|(a, b)| a.x.to_bits() == b.x.to_bits() && a.y.to_bits() == b.y.to_bits())
        }
        (Err(e), Err(f)) => format!("{e:?}") == format!("{f:?}"),
        _ => false,
    }
}

fn check(mesh: &NavMesh, requests: &[(Vec2, Vec2)], hierarchy: bool) {
    let filter = QueryFilter::default();
    let mut alone = NavQuery::new();
    alone.set_use_hierarchy(hierarchy);
    let want: Vec<_> = requests
        .iter()
        .map(|&(a, b)| {
            // a fresh query per request: nothing carried over from earlier ones
            let mut fresh = NavQuery::new();
            fresh.set_use_hierarchy(hierarchy);
            let got = fresh.find_path(mesh, a, b, &filter);
            let reused = alone.find_path(mesh, a, b, &filter);
            assert!(
                same(got.as_ref(), reused.as_ref()),
                "{a} -> {b}: a reused query differs"
            );
            got
        })
        .collect();
    for threads in [1, 2, 8] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut batch = BatchQuery::with_settings(&alone);
        pool.install(|| {
            // twice: the second call reuses every buffer
            for round in 0..2 {
                batch.find_paths(mesh, requests, &filter);
                assert_eq!(batch.len(), requests.len());
                for (i, (got, want)) in batch.iter().zip(&want).enumerate() {
                    assert!(
                        same(got, want.as_ref()),
                        "{threads} threads, round {round}, request {i}: {got:?} vs {want:?}"
                    );
                }
            }
        });
        // a smaller batch after a larger one answers only its own requests
        batch.find_paths(mesh, &requests[..3], &filter);
        assert_eq!(batch.len(), 3);
        assert!(batch.get(3).is_none());
    }
}

#[test]
fn a_batch_answers_as_one_query_at_a_time() {
    for map in ["den520d", "AR0011SR"] {
        let level = Level::from_file(movingai_dir().join(format!("{map}.map"))).unwrap();
        let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
        let r = requests(map);
        check(&mesh, &r, true);
        check(&mesh, &r, false);
    }
}
