//! The model container reader must turn any foreign, truncated or malformed file into an error, never a panic
//! or an unbounded allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paragraf_embed::container::Container;

fuzz_target!(|data: &[u8]| {
    let _ = Container::parse(std::path::Path::new("fuzz.bin"), data.to_vec());
});
