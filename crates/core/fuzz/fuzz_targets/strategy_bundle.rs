//! Arbitrary bytes must give a strategy bundle or an error, never a panic or an unbounded allocation; a decoded
//! bundle must be accepted or rejected by the engine's consistency check, again without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paragraf_core::bundle::{frame_payload, BundleKind, StrategyBundle};

fuzz_target!(|data: &[u8]| {
    // raw bytes as a file, and the same bytes as a payload behind a valid header (reaching the postcard decoder)
    let _ = StrategyBundle::from_bytes(data);
    let _ = StrategyBundle::from_bytes(&frame_payload(BundleKind::Strategy.magic(), data));
});
