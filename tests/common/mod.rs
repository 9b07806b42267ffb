//! Shared helpers: data paths found through CARGO_MANIFEST_DIR.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/data/movingai` beside the checkout.
pub fn movingai_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai")
}

/// The bundled data folder.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// Names (without extension) of every shared Moving AI map.
pub fn shared_maps() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(movingai_dir())
        .expect("../shared/data/movingai exists beside the checkout")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? == "map" {
                Some(p.file_stem()?.to_string_lossy().into_owned())
            } else {
                None
            }
        })
        .collect();
    names.sort();
    names
}
