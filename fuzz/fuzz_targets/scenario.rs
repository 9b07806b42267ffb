//! Moving AI `.scen` files: parsing never panics, and what parses is finite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portalnav::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(scenarios) = Scenario::parse(text, "fuzz.scen") {
        for s in scenarios {
            assert!(s.start_point().is_finite() && s.goal_point().is_finite());
            assert!(s.optimal.is_finite());
        }
    }
});
