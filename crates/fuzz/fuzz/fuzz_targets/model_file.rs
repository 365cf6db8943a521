//! Arbitrary bytes must give the browser's e5 model file or an error, never a panic; a decoded file must embed
//! questions (the body is shared with the stable fuzz test, `paragraf_fuzz`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    paragraf_fuzz::model_file_bytes(data);
});
