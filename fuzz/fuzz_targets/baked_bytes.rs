//! Baked files as raw bytes: loading never panics, and a mesh that loads
//! answers queries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::NavMesh;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    if let Ok(mesh) = NavMesh::from_bytes(data) {
        common::poke(&mesh, data);
    }
});
