//! Arbitrary bytes must give a law bundle or an error, never a panic; a decoded law must survive everything the
//! browser does with it (the body is shared with the stable fuzz test: `paragraf_fuzz`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = paragraf_fuzz::law_bundle(data);
});
