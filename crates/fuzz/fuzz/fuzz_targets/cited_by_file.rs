//! Arbitrary bytes must give the citations across laws or an error, never a panic (the body is shared with the
//! stable fuzz test, `paragraf_fuzz`, which seeds it with the sample's real file).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::cited_by_file_bytes(data);
});
