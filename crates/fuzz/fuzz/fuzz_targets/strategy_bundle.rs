//! Arbitrary bytes must give a strategy bundle or an error, never a panic or an unbounded allocation, as a file
//! and as a payload behind a valid header (the body is shared with the stable fuzz test: `paragraf_fuzz`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::strategy_bundle_bytes(data);
});
