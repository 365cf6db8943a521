//! Byte vectors in files, decoded as one block instead of byte by byte.
//!
//! Serde's `Vec<u8>` is a sequence: every byte passes through a visitor call. For the index across laws' 10 MB of
//! vector codes that cost more than fetching them (about half a second in the browser's wasm). Postcard writes a
//! byte string exactly as a sequence of bytes (a varint length, then the bytes; `u8` and `i8` are one raw byte
//! each), so fields marked `#[serde(with = "paragraf_format::bytes")]` (or [`signed`] for `Vec<i8>`) keep the
//! file format: old files read, new files read in old readers.

use std::fmt;

use serde::de::{Error, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

/// Writes `bytes` as one byte string.
pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_bytes(bytes)
}

/// Reads a byte string (or, from a format that writes bytes as a sequence, that sequence).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_byte_buf(ByteBuf)
}

struct ByteBuf;

impl<'de> Visitor<'de> for ByteBuf {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("bytes")
    }

    fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Vec<u8>, E> {
        Ok(bytes.to_vec())
    }

    fn visit_byte_buf<E: Error>(self, bytes: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(bytes)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        // Capped like serde's own: a hostile length must not allocate before the bytes are there.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element()? {
            out.push(b);
        }
        Ok(out)
    }
}

/// The same for `Vec<i8>` (int8 vectors): one byte string of the values' two's-complement bytes.
pub mod signed {
    use serde::{Deserializer, Serializer};

    /// Writes `values` as one byte string.
    pub fn serialize<S: Serializer>(values: &[i8], serializer: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
        serializer.serialize_bytes(&bytes)
    }

    /// Reads a byte string as `i8` values.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<i8>, D::Error> {
        let bytes = super::deserialize(deserializer)?;
        Ok(bytes.into_iter().map(|b| b as i8).collect())
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Plain {
        tag: u32,
        bytes: Vec<u8>,
        values: Vec<i8>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Blocks {
        tag: u32,
        #[serde(with = "crate::bytes")]
        bytes: Vec<u8>,
        #[serde(with = "crate::bytes::signed")]
        values: Vec<i8>,
    }

    #[test]
    fn the_bytes_are_the_same_as_a_sequences_in_postcard_both_ways() {
        let plain = Plain {
            tag: 300,
            bytes: (0..=255).collect(),
            values: vec![-128, -1, 0, 1, 127],
        };
        let blocks = Blocks {
            tag: 300,
            bytes: plain.bytes.clone(),
            values: plain.values.clone(),
        };
        let old = postcard::to_allocvec(&plain).unwrap();
        assert_eq!(postcard::to_allocvec(&blocks).unwrap(), old);
        assert_eq!(postcard::from_bytes::<Blocks>(&old).unwrap(), blocks);
        // A length beyond the input is an error, not an allocation.
        let mut short = old.clone();
        short.truncate(old.len() - 10);
        assert!(postcard::from_bytes::<Blocks>(&short).is_err());
        // A format that writes bytes as a sequence (JSON) reads them too.
        let json = serde_json::to_string(&blocks).unwrap();
        assert_eq!(serde_json::from_str::<Blocks>(&json).unwrap(), blocks);
    }
}
