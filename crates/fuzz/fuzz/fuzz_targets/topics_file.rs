//! Arbitrary bytes must give the law finder's topics or an error, never a panic (the body is shared with the
//! stable fuzz test, `paragraf_fuzz`, which also builds the finder over the sample's catalogue).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::topics_file_bytes(data);
});
