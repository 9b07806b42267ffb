//! The repository's bundled data, for unit tests.

use std::path::PathBuf;

/// A file under the repository's `data/` folder (`maps/Aurora.map`).
pub(crate) fn bundled(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(path)
}

/// A bundled level or map (`maps/Aurora.map`, `levels/rts_base.json`).
pub(crate) fn bundled_level(path: &str) -> crate::Level {
    crate::Level::from_file(bundled(path)).expect("bundled level")
}
