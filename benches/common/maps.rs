//! The bundled Moving AI maps the benches run on, and which of them the
//! command line names.
//!
//! Include it from a bench with `#[path = "common/maps.rs"] mod maps;`.

#![allow(dead_code)] // Each bench uses only some of these.

use std::path::PathBuf;

/// `data/maps` of this checkout.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/maps")
}

/// The maps named on the command line (the arguments that are not
/// options), as a filter: true for `name` when it is named or none is.
pub fn named() -> impl Fn(&str) -> bool {
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    move |name| only.is_empty() || only.iter().any(|o| o == name)
}
