//! Steady state of a batch: once its buffers have grown, answering a batch
//! allocates no memory per request. Its own test binary, because it counts
//! every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use portalnav::{BakeConfig, BatchQuery, Level, NavMesh, QueryFilter, Scenario};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warm_batch_allocates_nothing_per_request() {
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
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        batch.find_paths(&mesh, &requests[..n], &filter);
        ALLOCATIONS.load(Ordering::Relaxed) - before
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
