//! The embedding-cache shard decoder must reject any damaged file with an error, never panic, and whatever it
//! accepts must re-encode to the same shard.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paragraf_embed::cache::{decode_shard, encode_shard};

fuzz_target!(|data: &[u8]| {
    if let Ok(shard) = decode_shard("fuzz.pgec", data) {
        let again = encode_shard(&shard.model_id, shard.dim, &shard.entries);
        assert_eq!(decode_shard("again.pgec", &again).as_ref(), Ok(&shard));
    }
});
