//! Arbitrary bytes must give a law bundle or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paragraf_core::bundle::LawBundle;

fuzz_target!(|data: &[u8]| {
    let _ = LawBundle::from_bytes(data);
});
