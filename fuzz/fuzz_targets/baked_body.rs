//! Baked file bodies with a valid header and checksum wrapped round them,
//! so mutations reach the decoder and the checks instead of stopping at the
//! checksum: loading never panics, and a mesh that loads validates and
//! answers queries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::NavMesh;

#[path = "common.rs"]
mod common;

fuzz_target!(|body: &[u8]| {
    let mut file = Vec::with_capacity(28 + body.len());
    file.extend_from_slice(b"PNAVMESH");
    file.extend_from_slice(&portalnav::FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(&portalnav::fuzzing::checksum(body).to_le_bytes());
    file.extend_from_slice(body);
    if let Ok(mesh) = NavMesh::from_bytes(&file) {
        if let Err(e) = mesh.validate() {
            panic!("a loaded mesh fails validate: {e}");
        }
        common::poke(&mesh, body);
    }
});
