//! Arbitrary bytes must give a learned file or an error, never a panic (the body is shared with the stable fuzz
//! test, `paragraf_fuzz`, which also matches it against the GG and searches with it).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::learned_file_bytes(data);
});
