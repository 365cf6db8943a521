//! Arbitrary bytes must give an expansion table or an error, never a panic; a decoded table must survive query
//! expansion (the body is shared with the stable fuzz test, `paragraf_core::fuzz`, which also searches a law).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_core::fuzz::expansion_file_bytes(data);
});
