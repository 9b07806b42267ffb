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

/// Xorshift64: a reproducible stream of numbers for tests that draw at
/// random (the state must not start at 0).
pub(crate) struct Xorshift(pub(crate) u64);

impl Xorshift {
    /// The next number below `n` (above 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}
