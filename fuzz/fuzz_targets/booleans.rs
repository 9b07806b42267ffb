//! Walkable polygons less obstacles, resolved by the crate's sweeps (edges
//! cut where they cross, rounded to the grid) and by the boolean crate:
//! where the sweeps answer, they leave the same area and no two of their
//! edges cross.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(both) = portalnav::fuzzing::booleans_both_ways(data) else {
        return;
    };
    let Some(sweeps) = both.sweeps_area else {
        return;
    };
    // corners on a grid of quarter units within 64: each rounded crossing
    // moves an edge by under 2^-16 units
    assert!(
        (sweeps - both.booleans_area).abs() < 1e-2,
        "sweeps {sweeps} against the booleans {}",
        both.booleans_area
    );
    assert!(!both.sweeps_edges_cross, "the sweeps' edges cross");
});
