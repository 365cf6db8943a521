//! Arbitrary bytes must give a federal index head, posting shard or vectors file, or an error, never a panic; a
//! decoded head must survive searches in every mode (the body is shared with the stable fuzz test,
//! `paragraf_fuzz`, which also pairs mutated files with the real others).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::federal_file_bytes(data);
});
