//! The request scheduler against one-by-one queries: the same answers, in
//! priority order, within the per-tick budget.

use std::time::{Duration, Instant};

use glam::vec2;
use portalnav::{
    BakeConfig, Level, NavMesh, NavQuery, PathScheduler, PathStatus, QueryError, QueryFilter,
    RequestId, Scenario, TileCache,
};

use crate::common::data_dir;

fn den520d() -> (NavMesh, Vec<Scenario>) {
    let map = data_dir().join("maps/den520d.map");
    let mesh = NavMesh::bake(&Level::from_file(&map).unwrap(), &BakeConfig::default()).unwrap();
    let scen = Scenario::load_file(data_dir().join("maps/den520d.map.scen")).unwrap();
    (mesh, scen)
}

/// Runs the scheduler until it is empty: the answers in the order given,
/// how many ticks answered nothing (a search sliced over ticks) and how
/// many ticks it took.
fn drain(
    scheduler: &mut PathScheduler,
    mesh: &NavMesh,
    budget: u32,
) -> (Vec<portalnav::Answer>, usize, usize) {
    let (mut answers, mut quiet) = (Vec::new(), 0);
    for ticks in 0..1_000_000 {
        if scheduler.is_empty() {
            return (answers, quiet, ticks);
        }
        let got = scheduler.tick(mesh, budget);
        quiet += usize::from(got.is_empty());
        answers.extend_from_slice(got);
        assert!(
            scheduler.last_work() <= budget + 1,
            "{} > {budget}",
            scheduler.last_work()
        );
    }
    panic!("the scheduler never emptied");
}

/// With a budget that covers the hierarchy, every request is answered, in
/// priority order, with the path `find_path` gives for it alone.
#[test]
fn scheduled_answers_equal_one_by_one_in_priority_order() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(1000);
    let mut requests = Vec::new();
    for (i, s) in scen.iter().step_by(4).enumerate() {
        let priority = (i * 7 % 5) as u8;
        let (id, first) = scheduler
            .submit(&mesh, s.start_point(), s.goal_point(), &filter, priority)
            .unwrap();
        assert!(first.is_none());
        requests.push((id, priority, s));
    }
    let budget = PathScheduler::hierarchy_budget(&mesh);
    let (answers, _, ticks) = drain(&mut scheduler, &mesh, budget);
    let mut order: Vec<(u8, RequestId)> = requests.iter().map(|r| (r.1, r.0)).collect();
    order.sort_by_key(|&(p, id)| (std::cmp::Reverse(p), id));
    let answered: Vec<RequestId> = answers.iter().map(|a| a.id).collect();
    assert_eq!(answered, order.iter().map(|o| o.1).collect::<Vec<_>>());
    let mut alone = NavQuery::new();
    for answer in &answers {
        let s = requests.iter().find(|r| r.0 == answer.id).unwrap().2;
        let expected = alone.find_path(&mesh, s.start_point(), s.goal_point(), &filter);
        assert_eq!(answer.result, expected, "request {:?}", answer.id);
    }
    assert!(
        ticks > 10,
        "the budget spread the work over ticks ({ticks})"
    );
}

/// A budget below the hierarchy's worst case slices flat searches over many
/// ticks; each answer is the flat search's, bit for bit.
#[test]
fn small_budgets_slice_flat_searches_to_the_same_answers() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(100);
    let picked: Vec<&Scenario> = scen.iter().rev().step_by(9).take(40).collect();
    for s in &picked {
        scheduler
            .submit(&mesh, s.start_point(), s.goal_point(), &filter, 0)
            .unwrap();
    }
    let (answers, quiet, _) = drain(&mut scheduler, &mesh, 7);
    assert_eq!(answers.len(), picked.len());
    assert!(quiet > 100, "long searches took many ticks ({quiet})");
    let mut flat = NavQuery::new();
    flat.set_use_hierarchy(false);
    for (answer, s) in answers.iter().zip(&picked) {
        let expected = flat.find_path(&mesh, s.start_point(), s.goal_point(), &filter);
        assert_eq!(answer.result, expected);
    }
}

/// Under a deadline far off, `tick_until` answers tick by tick what `tick`
/// answers, with a budget just below the hierarchy's worst case (the flat
/// search alone: searches cut into time slices resume to the same paths)
/// and with the hierarchy's; under a deadline already past it does nothing.
#[test]
fn a_deadline_stops_a_tick_and_slices_change_no_answer() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let hierarchy = PathScheduler::hierarchy_budget(&mesh);
    for budget in [hierarchy - 1, hierarchy] {
        let (mut by_work, mut by_time) = (PathScheduler::new(100), PathScheduler::new(100));
        for s in scen.iter().rev().step_by(11).take(30) {
            for scheduler in [&mut by_work, &mut by_time] {
                scheduler
                    .submit(&mesh, s.start_point(), s.goal_point(), &filter, 0)
                    .unwrap();
            }
        }
        let waiting = by_time.len();
        assert!(by_time.tick_until(&mesh, budget, Instant::now()).is_empty());
        assert_eq!((by_time.last_work(), by_time.len()), (0, waiting));
        let far = Instant::now() + Duration::from_secs(3600);
        let mut ticks = 0;
        while !by_work.is_empty() {
            let expected = by_work.tick(&mesh, budget).to_vec();
            assert_eq!(
                by_time.tick_until(&mesh, budget, far),
                expected,
                "tick {ticks}"
            );
            assert_eq!(by_time.last_work(), by_work.last_work());
            ticks += 1;
        }
        assert!(by_time.is_empty());
        assert!(ticks > 3, "{ticks}");
    }
}

/// A full queue refuses with a typed error; cancelled requests are never
/// answered; bad requests are answered with their error.
#[test]
fn a_full_queue_is_an_error_and_cancel_withdraws() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(3);
    let s = &scen[100];
    let ids: Vec<RequestId> = (0..3)
        .map(|_| {
            scheduler
                .submit(&mesh, s.start_point(), s.goal_point(), &filter, 1)
                .unwrap()
                .0
        })
        .collect();
    assert_eq!(
        scheduler.submit(&mesh, s.start_point(), s.goal_point(), &filter, 1),
        Err(QueryError::QueueFull { capacity: 3 })
    );
    assert!(scheduler.cancel(ids[1]));
    assert!(!scheduler.cancel(ids[1]));
    let bad = scheduler
        .submit(&mesh, vec2(-5.0, -5.0), s.goal_point(), &filter, 1)
        .unwrap()
        .0;
    let (answers, _, _) = drain(&mut scheduler, &mesh, 10_000);
    let answered: Vec<RequestId> = answers.iter().map(|a| a.id).collect();
    assert_eq!(answered, [ids[0], ids[2], bad]);
    assert!(matches!(
        answers[2].result,
        Err(QueryError::OffMesh { which: "start", .. })
    ));
}

/// A cancel finds its request whatever its priority (by number, not by a
/// scan of the queue), and an answered or cancelled request cannot be
/// cancelled again.
#[test]
fn cancel_finds_requests_of_any_priority() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(16);
    let ids: Vec<RequestId> = (0..8u8)
        .map(|k| {
            let s = &scen[100 + usize::from(k) * 50];
            let (a, b) = (s.start_point(), s.goal_point());
            scheduler.submit(&mesh, a, b, &filter, k * 30).unwrap().0
        })
        .collect();
    for &id in ids.iter().step_by(2) {
        assert!(scheduler.cancel(id));
    }
    let (answers, _, _) = drain(&mut scheduler, &mesh, 100_000);
    let answered: Vec<RequestId> = answers.iter().map(|a| a.id).collect();
    // the others, highest priority first
    let expected: Vec<RequestId> = ids.iter().skip(1).step_by(2).rev().copied().collect();
    assert_eq!(answered, expected);
    for &id in &ids {
        assert!(!scheduler.cancel(id));
    }
}

/// With first paths on, a request far away gets a partial path at once and
/// the full one later; a near one is answered at once and not queued; bad
/// ends are refused at once.
#[test]
fn first_paths_come_at_once() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(10);
    scheduler.set_first_path_budget(16);
    let far = scen.last().unwrap();
    let (id, first) = scheduler
        .submit(&mesh, far.start_point(), far.goal_point(), &filter, 0)
        .unwrap();
    let first = first.unwrap();
    assert_eq!(first.status(), PathStatus::Partial);
    assert_eq!(first.waypoints()[0], far.start_point());
    assert!(
        first.waypoints().last().unwrap().distance(far.goal_point())
            < far.start_point().distance(far.goal_point())
    );
    assert_eq!(scheduler.len(), 1);
    let p = far.start_point();
    let (_, near) = scheduler.submit(&mesh, p, p, &filter, 0).unwrap();
    assert_eq!(near.unwrap().status(), PathStatus::Complete);
    assert_eq!(scheduler.len(), 1, "answered at once, not queued");
    assert!(scheduler
        .submit(&mesh, vec2(f32::NAN, 0.0), p, &filter, 0)
        .is_err());
    let (answers, _, _) = drain(&mut scheduler, &mesh, 100_000);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].id, id);
    let full = answers[0].result.as_ref().unwrap();
    assert_eq!(full.status(), PathStatus::Complete);
    assert!(f64::from(full.length()) <= far.optimal + far.tolerance);
}

/// Submitting many requests at once is submitting them one after the
/// other: the same ids, first paths (complete, partial), errors (a bad
/// point, a full queue) and queue, so the same answers later.
#[test]
fn submitting_many_at_once_is_submitting_them_in_turn() {
    let (mesh, scen) = den520d();
    let filter = QueryFilter::default();
    let mut requests: Vec<_> = scen
        .iter()
        .step_by(37)
        .map(|s| (s.start_point(), s.goal_point()))
        .collect();
    let p = requests[0].0;
    requests.insert(3, (p, p)); // complete at once
    requests.insert(5, (vec2(f32::NAN, 0.0), p));
    requests.insert(7, (vec2(-50.0, -50.0), p)); // off the mesh
    let capacity = 12; // the last few find the queue full
    let (mut one, mut many) = (PathScheduler::new(capacity), PathScheduler::new(capacity));
    one.set_first_path_budget(8);
    many.set_first_path_budget(8);
    one.submit(&mesh, p, requests[1].1, &filter, 3).unwrap();
    many.submit(&mesh, p, requests[1].1, &filter, 3).unwrap();
    let in_turn: Vec<_> = requests
        .iter()
        .map(|&(a, b)| one.submit(&mesh, a, b, &filter, 1))
        .collect();
    let at_once = many.submit_many(&mesh, &requests, &filter, 1);
    // by their printed form: the NaN in an error is not equal to itself
    assert_eq!(format!("{at_once:?}"), format!("{in_turn:?}"));
    let full = at_once
        .iter()
        .filter(|r| matches!(r, Err(QueryError::QueueFull { .. })))
        .count();
    assert!(full >= 2, "{full}");
    assert!(at_once.iter().any(|r| r.as_ref().is_ok_and(|(_, f)| f
        .as_ref()
        .is_some_and(|f| f.status() == PathStatus::Partial))));
    assert_eq!(many.len(), one.len());
    assert_eq!(
        drain(&mut many, &mesh, 5_000).0,
        drain(&mut one, &mesh, 5_000).0
    );
}

/// A request in flight when an edit replaces the mesh starts again on the
/// new mesh and gets its answer there.
#[test]
fn an_edit_restarts_a_request_in_flight() {
    let level =
        Level::from_json_str(r#"{"walkable": [[[0,0],[100,0],[100,100],[0,100]]]}"#).unwrap();
    let config = BakeConfig {
        tile_size: Some(8.0),
        corridors: false,
        ..BakeConfig::default()
    };
    let mut cache = TileCache::new(&level, &config).unwrap();
    let filter = QueryFilter::default();
    let mut scheduler = PathScheduler::new(10);
    let (a, b) = (vec2(5.0, 50.0), vec2(95.0, 50.0));
    scheduler.submit(cache.mesh(), a, b, &filter, 0).unwrap();
    assert!(scheduler.tick(cache.mesh(), 3).is_empty(), "in flight");
    let wall = [
        vec2(40.0, 10.0),
        vec2(60.0, 10.0),
        vec2(60.0, 90.0),
        vec2(40.0, 90.0),
    ];
    cache.add_obstacle(&wall).unwrap();
    let (answers, _, _) = drain(&mut scheduler, cache.mesh(), 3);
    let path = answers[0].result.as_ref().unwrap();
    let expected = NavQuery::new()
        .find_path(cache.mesh(), a, b, &filter)
        .unwrap();
    assert_eq!(path, &expected);
    assert!(!cache.path_affected(path.waypoints(), 0));
}

/// On a searched hierarchy (Aurora in small clusters), requests for one goal are merged into
/// a group move: each merged answer is the group move's path for that unit
/// (so no longer than its own query's), priorities still come first, and
/// the queue drains in far fewer ticks than with merging off.
#[test]
fn duplicate_goals_are_merged_into_group_moves() {
    let map = data_dir().join("maps/Aurora.map");
    let config = crate::group::searched_aurora();
    let mesh = NavMesh::bake(&Level::from_file(&map).unwrap(), &config).unwrap();
    let scen = Scenario::load_file(data_dir().join("maps/Aurora.map.scen")).unwrap();
    assert!(!mesh.hierarchy_stats().unwrap().all_pairs_table);
    let filter = QueryFilter::default();
    let goal = scen.last().unwrap().goal_point();
    let other = scen[scen.len() / 2].goal_point();
    // 120 units to one goal at priority 1, with requests elsewhere between
    // them, and one urgent request submitted last
    let mut requests = Vec::new();
    for (i, s) in scen.iter().step_by(20).take(120).enumerate() {
        requests.push((s.start_point(), goal, 1u8));
        if i % 10 == 0 {
            requests.push((s.start_point(), other, 1));
        }
    }
    requests.push((scen[0].start_point(), other, 7));
    let budget = PathScheduler::hierarchy_budget(&mesh);
    let run = |merge: bool| {
        let mut scheduler = PathScheduler::new(1000);
        scheduler.set_merge_goals(merge);
        let ids: Vec<RequestId> = requests
            .iter()
            .map(|&(a, b, p)| scheduler.submit(&mesh, a, b, &filter, p).unwrap().0)
            .collect();
        let (answers, _, ticks) = drain(&mut scheduler, &mesh, budget);
        (ids, answers, ticks)
    };
    let (ids, answers, merged_ticks) = run(true);
    assert_eq!(answers.len(), requests.len());
    assert_eq!(answers[0].id, *ids.last().unwrap(), "the urgent one first");
    let mut group = NavQuery::new();
    let mut alone = NavQuery::new();
    let priorities: Vec<u8> = answers
        .iter()
        .map(|a| requests[ids.iter().position(|&id| id == a.id).unwrap()].2)
        .collect();
    assert!(
        priorities.windows(2).all(|w| w[0] >= w[1]),
        "{priorities:?}"
    );
    for answer in &answers {
        let k = ids.iter().position(|&id| id == answer.id).unwrap();
        let (start, to, _) = requests[k];
        let own = alone.find_path(&mesh, start, to, &filter).unwrap();
        let path = answer.result.as_ref().unwrap();
        assert!(path.length() <= own.length() + 1e-4, "request {k}");
        if to == goal {
            let expected = group.find_paths_to(&mesh, &[start], goal, &filter);
            assert_eq!(Some(path), expected[0].as_ref().ok(), "request {k}");
        } else {
            assert_eq!(path, &own, "request {k}");
        }
    }
    // every request was answered once
    let mut seen: Vec<RequestId> = answers.iter().map(|a| a.id).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), requests.len());
    let (_, unmerged, unmerged_ticks) = run(false);
    assert_eq!(unmerged.len(), requests.len());
    assert!(
        merged_ticks * 4 < unmerged_ticks,
        "merged {merged_ticks} ticks, one by one {unmerged_ticks}"
    );
}
