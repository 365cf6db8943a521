//! Arbitrary bytes must give a thesaurus file or an error, never a panic (the body is shared with the stable fuzz
//! test, `paragraf_fuzz`, which also builds a real law's expansion table from each decoded file and searches).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::thesaurus_file_bytes(data);
});
