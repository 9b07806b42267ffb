//! What the process allocates: a warm batch allocates nothing per request,
//! and loading a file takes memory in proportion to its size. Its own test
//! binary, because it counts every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use portalnav::{BakeConfig, BatchQuery, Level, NavMesh, QueryFilter, Scenario};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated now, and the most since [`PEAK`] was last reset.
static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
/// Bytes ever allocated (growth by realloc included): a measure of work.
static ALLOCATED: AtomicU64 = AtomicU64::new(0);

fn grew(bytes: usize) {
    ALLOCATED.fetch_add(bytes as u64, Ordering::Relaxed);
    let live = LIVE.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: forwards to the system allocator, only counting calls and bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        grew(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The most memory `f` holds at once beyond what was allocated before it
/// (the tests of this binary take turns, see [`TURN`]).
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// A field crossed by `n` thin diagonal walls (long thin regions, whose
/// boxes overlap many others: a 270 KB file of such a bake once took 533 MB
/// to load), a hub of `n` thin wedges (reaching the boundary, or crossing
/// it: "crossing hub"), a comb of `n` teeth (one region with
/// `n` neighbours) or a spiral wall of `n` / 32 turns.
fn hostile_level(shape: &str, n: usize) -> Level {
    let mut obstacles = Vec::new();
    let width = match shape {
        "diagonals" => {
            for i in 0..n {
                let x = i as f64 * 3.0;
                obstacles.push(format!(
                    "[[{x},0],[{},0],[{},600],[{},600]]",
                    x + 0.5,
                    x + 300.5,
                    x + 300.0
                ));
            }
            n as f64 * 3.0 + 400.0
        }
        "comb" => {
            for i in 0..n {
                let x = i as f64 * 2.0 + 1.0;
                obstacles.push(format!(
                    "[[{x},1],[{},1],[{},100],[{x},100]]",
                    x + 1.0,
                    x + 1.0
                ));
            }
            n as f64 * 2.0 + 2.0
        }
        "spiral" => {
            // a wall 0.5 thick winding out from the centre, 3 apart, its
            // corners every 1/32 of a turn
            let step = std::f64::consts::TAU / 32.0;
            let at = |k: usize, side: f64| {
                let t = k as f64 * step + std::f64::consts::TAU;
                let r = 3.0 * t / std::f64::consts::TAU + side;
                format!("[{:.4},{:.4}]", r * t.cos(), r * t.sin())
            };
            let outer: Vec<String> = (0..n).map(|k| at(k, 0.25)).collect();
            let inner: Vec<String> = (0..n).rev().map(|k| at(k, -0.25)).collect();
            obstacles.push(format!("[{},{}]", outer.join(","), inner.join(",")));
            3.0 * n as f64 / 32.0 + 10.0
        }
        _ => {
            // the wedges reach the boundary, or cross it
            let reach = if shape == "crossing hub" {
                2500.0
            } else {
                2000.0
            };
            for i in 0..n {
                let turn = std::f64::consts::TAU / n as f64;
                let (a, b) = (turn * i as f64, turn * (i as f64 + 0.5));
                let at = |r: f64, t: f64| format!("[{:.4},{:.4}]", r * t.cos(), r * t.sin());
                obstacles.push(format!(
                    "[{},{},{}]",
                    at(20.0, a),
                    at(reach, a),
                    at(reach, b)
                ));
            }
            2000.0
        }
    };
    let (lo, hi) = match shape {
        "diagonals" | "comb" => (0.0, width),
        _ => (-width, width),
    };
    Level::from_json_str(&format!(
        r#"{{"walkable": [[[{lo},{lo}],[{hi},{lo}],[{hi},{hi}],[{lo},{hi}]]], "obstacles": [{}]}}"#,
        obstacles.join(",")
    ))
    .unwrap()
}

/// The mesh alone: an all-pairs table is a bounded extra (24 MiB at most).
fn hostile(shape: &str, n: usize) -> NavMesh {
    let config = BakeConfig {
        corridors: false,
        ..BakeConfig::default()
    };
    NavMesh::bake(&hostile_level(shape, n), &config).unwrap()
}

/// Resource test (hostile-input campaign: a 74 KB comb took 38 s to bake,
/// 3,000 long obstacles 2.9 s): the bake, hierarchy included, allocates in
/// proportion to the level on combs, spirals, hubs and long diagonal
/// walls (bytes ever allocated, a measure of work that wall time on a
/// shared machine is not), and on a hub whose wedges cross the boundary.
/// The hubs' and the diagonal walls' edges are crowded (their boxes cover
/// the level many times over), so their booleans are the crate's own
/// sweeps (n log n comparisons, checked on both hubs by
/// `bake::uncrossed`'s resource test); the comb's and the spiral's are the
/// boolean crate's, linear on them. That crate grew about 3x for 2x the
/// wedges on a hub while allocating little for it (BENCHMARKS.md, session
/// 29): this test would not see that, the resource test does.
#[test]
fn baking_allocates_in_proportion_to_the_level() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for shape in ["comb", "spiral", "hub", "crossing hub", "diagonals"] {
        let work = |n: usize| {
            let level = hostile_level(shape, n);
            let before = ALLOCATED.load(Ordering::Relaxed);
            let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
            let bytes = (ALLOCATED.load(Ordering::Relaxed) - before) as f64;
            // the all-pairs table grows as the square of its nav nodes up
            // to its cap (6 bytes a pair): one at the small size only would
            // flatter the ratio by its bytes
            let table = mesh
                .hierarchy_stats()
                .filter(|h| h.all_pairs_table)
                .map_or(0.0, |h| 6.0 * f64::from(h.nav_nodes).powi(2));
            (bytes, table)
        };
        let ((large, large_table), (small, small_table)) = (work(4000), work(500));
        // a hub keeps a hierarchy beside its open centre at 500 wedges and
        // drops it over its byte bound at 4,000, after its leg tables
        assert!(
            (large_table > 0.0) == (small_table > 0.0) || small_table < 0.01 * small,
            "{shape}: a table at one size only, {small_table} bytes of {small}"
        );
        let ratio = large / small;
        // 8x the level: n log n is about 8 x 1.3, quadratic 64
        assert!(
            ratio < 8.0 * 1.5,
            "{shape}: 8x the level, {ratio:.1}x the bytes allocated"
        );
    }
}

/// Resource test (hostile-input campaign: files whose load took thousands
/// of times their size): loading holds at most a small multiple of the
/// file's bytes, the same multiple at two sizes.
#[test]
fn loading_holds_memory_in_proportion_to_the_file() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for shape in ["diagonals", "hub"] {
        let mut per_byte = Vec::new();
        for n in [500, 4000] {
            let bytes = hostile(shape, n).to_bytes().unwrap();
            let (loaded, peak) = peak_during(|| NavMesh::from_bytes(&bytes));
            loaded.unwrap();
            per_byte.push(peak as f64 / bytes.len() as f64);
        }
        // about 16 and 11 bytes held a byte of file (diagonals, hub)
        assert!(per_byte.iter().all(|&m| m < 40.0), "{shape}: {per_byte:?}");
        assert!(per_byte[1] < 1.5 * per_byte[0], "{shape}: {per_byte:?}");
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The tests of this binary take turns: each counts the whole process.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_warm_batch_allocates_nothing_per_request() {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/maps");
    let level = Level::from_file(dir.join("den520d.map")).unwrap();
    let mesh = NavMesh::bake(&level, &BakeConfig::default()).unwrap();
    let scen = Scenario::load_file(dir.join("den520d.map.scen")).unwrap();
    let requests: Vec<_> = scen
        .iter()
        .map(|s| (s.start_point(), s.goal_point()))
        .collect();
    let filter = QueryFilter::default();
    let mut batch = BatchQuery::new();
    let mut count = |n: usize| {
        // warm: the first call grows the buffers for these requests
        batch.find_paths(&mesh, &requests[..n], &filter);
        // the fewest of three calls: the counter is the whole process's,
        // and the test harness's thread may be reporting the test before
        // this one meanwhile (a burst of 64 and more, now and then, in
        // full runs)
        (0..3)
            .map(|_| {
                let before = ALLOCATIONS.load(Ordering::Relaxed);
                batch.find_paths(&mesh, &requests[..n], &filter);
                ALLOCATIONS.load(Ordering::Relaxed) - before
            })
            .min()
            .expect("three calls")
    };
    let (small, large) = (count(80), count(800));
    // a thread pool may allocate a little per call (up to 9 seen on 800
    // requests and none on 80, in one run of twelve), never per request:
    // one per request would be 800 here
    assert!(
        small < 64 && large < 64,
        "80 requests: {small} allocations, 800: {large}"
    );
    assert!(batch.iter().all(|r| r.is_ok()));
}
