//! Order statistics of timings, for the benches and the examples that
//! print them.
//!
//! Include it with `#[path = "common/stats.rs"] mod stats;` (from an
//! example, `#[path = "../benches/common/stats.rs"]`).

#![allow(dead_code)] // Each user takes only some of these.

/// The median of `v` (the upper one of an even count); NaN when empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The 99th percentile of `v` (nearest rank, rounded down); NaN when empty.
pub fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get((v.len() * 99 / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN)
}
