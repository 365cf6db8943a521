//! The framing of every Paragraf file: what the build tool writes and the browser reads.
//!
//! Every bundle (and every other file Paragraf writes: learned, topics, thesaurus, federal and model files) is
//! a postcard payload behind a fixed 24-byte header:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..8 | magic: `PGRF-LAW` (law bundle) or `PGRF-STR` (strategy bundle) |
//! | 8..12 | format version, u32 little-endian |
//! | 12..20 | payload length in bytes, u64 little-endian |
//! | 20..24 | CRC-32 (IEEE) of the payload, u32 little-endian |
//!
//! The header is checked before the payload is touched, so a truncated download, an HTML error page served in a
//! bundle's place, a file from a newer Paragraf or a flipped bit each get their own exact, actionable message
//! instead of a postcard decoding error. What the payloads hold is defined next to the code that reads them
//! (`paragraf_engine::bundle` for the law and strategy bundles).
//!
//! **Compressed payloads.** A kind whose payload is mostly text (law bundles, the head and posting shards of the
//! index across laws, topics, cited-by and thesaurus files) stores it DEFLATE-compressed from the version named by
//! [`FileKind::compressed_since`] on: the uncompressed length (u64 little-endian), then the raw DEFLATE stream. The
//! static hosts the app is made for (GitHub Pages) compress text files but send `.pgb` files as they are, so
//! without this a law's text travels at three times its compressed size (the BGB's 2.09 MB instead of 0.69 MB).
//! Vectors (strategy bundles, the vectors file across laws, model files) hardly compress and stay as they are.
//! The checksum covers the stored bytes, so a damaged download is refused before it is inflated, and the
//! announced length is capped ([`MAX_INFLATED`]) before any memory is taken for it.

use std::borrow::Cow;

use paragraf_law::LawError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The folder format `manifest.json` records (`format_version`): raised together with a bundle kind's
/// [`FileKind::version`], so that an incremental build rebuilds the laws an older format wrote (2: HNSW links
/// stored as sorted gaps; 3: law bundles carry their prebuilt BM25 index; 4: laws carry their short title; 5: law
/// bundles are compressed).
pub const FORMAT_VERSION: u32 = 5;
/// Header length in bytes.
pub const HEADER_LEN: usize = 24;
/// The largest payload a compressed file may inflate to: far above the largest Paragraf writes (the uncompressed
/// head of the index across all 6,877 federal laws is 4.2 MB), so a decompression bomb is refused before it takes
/// memory. Bytes after the end of the DEFLATE stream are not read (the checksum covers them all the same).
pub const MAX_INFLATED: u64 = 256 << 20;
/// DEFLATE level of compressed payloads (miniz's best: written once, read by every visitor).
const DEFLATE_LEVEL: u8 = 9;

/// One kind of framed file: its magic, its name in messages, and the versions of its payload this build writes
/// and reads. Each kind is declared next to the code that reads its payload (`LAW_BUNDLE` and `STRATEGY_BUNDLE` in
/// `paragraf_engine::bundle`, `KIND` in the learned, thesaurus, topics, federal and model-file modules), and each
/// raises its own version when its payload changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileKind {
    /// The 8 bytes at the start of the file (`PGRF-…`).
    pub magic: &'static [u8; 8],
    /// What messages call it ("law bundle").
    pub name: &'static str,
    /// The version this build writes, and the newest it reads.
    pub version: u32,
    /// The oldest version this build reads.
    pub oldest: u32,
    /// What to do with a file older than that, as a sentence ("Rebuild the bundles with `paragraf build`").
    pub remedy: &'static str,
    /// The first version whose payload is compressed (see the module docs); `u32::MAX` for a kind that never is.
    pub compressed_since: u32,
}

impl FileKind {
    /// A kind written at `version` and read from `oldest` on.
    pub const fn new(
        magic: &'static [u8; 8],
        name: &'static str,
        version: u32,
        oldest: u32,
    ) -> Self {
        FileKind {
            magic,
            name,
            version,
            oldest,
            remedy: "Rebuild the bundles with `paragraf build`",
            compressed_since: u32::MAX,
        }
    }

    /// This kind with its payload compressed from `version` on (older versions are read as they were written).
    pub const fn compressed_since(self, version: u32) -> Self {
        FileKind {
            compressed_since: version,
            ..self
        }
    }

    fn compresses(&self, version: u32) -> bool {
        version >= self.compressed_since
    }

    /// This kind with another [`FileKind::remedy`] for files too old to read (a file that another command
    /// writes).
    pub const fn remedy(self, remedy: &'static str) -> Self {
        FileKind { remedy, ..self }
    }

    /// Serialises `value` as a file of this kind.
    pub fn encode<T: Serialize>(&self, value: &T) -> Vec<u8> {
        self.frame(&postcard::to_allocvec(value).expect("file payloads always serialise"))
    }

    /// Puts the header (magic, this kind's version, length, checksum) before an already serialised payload,
    /// compressed first when this kind's version compresses.
    pub fn frame(&self, payload: &[u8]) -> Vec<u8> {
        self.frame_at(payload, DEFLATE_LEVEL)
    }

    /// As [`FileKind::frame`], compressed at DEFLATE `level` (0–10): fuzzing frames many inputs fast.
    pub fn frame_at(&self, payload: &[u8], level: u8) -> Vec<u8> {
        if !self.compresses(self.version) {
            return self.frame_stored(payload);
        }
        let mut stored = Vec::with_capacity(8 + payload.len() / 3);
        stored.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        stored.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(payload, level));
        self.frame_stored(&stored)
    }

    /// Puts the header before `stored`, the payload as the file holds it (compressed or not): for tests and
    /// fuzzing, which need files whose stored bytes they chose.
    pub fn frame_stored(&self, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// Checks magic and version and returns the header, without looking at the payload.
    pub fn read_header(&self, bytes: &[u8]) -> Result<Header, BundleError> {
        let magic_len = bytes.len().min(8);
        if bytes[..magic_len] != self.magic[..magic_len] {
            return Err(BundleError::BadMagic {
                expected: self.name,
                found: String::from_utf8_lossy(&bytes[..magic_len]).into_owned(),
            });
        }
        if bytes.len() < HEADER_LEN {
            return Err(BundleError::TooShort { len: bytes.len() });
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let version = u32_at(8);
        if version > self.version {
            return Err(BundleError::TooNew {
                kind: self.name,
                found: version,
                oldest: self.oldest,
                newest: self.version,
            });
        }
        if version < self.oldest {
            return Err(BundleError::TooOld {
                kind: self.name,
                found: version,
                oldest: self.oldest,
                newest: self.version,
                remedy: self.remedy,
            });
        }
        let payload_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        Ok(Header {
            version,
            payload_len,
            checksum: u32_at(20),
        })
    }

    /// Checks header, length and checksum, then decodes the payload.
    pub fn decode<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, BundleError> {
        decode_payload(&self.payload(bytes)?)
    }

    /// Checks header, length and checksum and returns the payload as it was serialised (inflated when this
    /// version of the kind stores it compressed).
    pub fn payload<'a>(&self, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>, BundleError> {
        let header = self.read_header(bytes)?;
        let present = (bytes.len() - HEADER_LEN) as u64;
        if present < header.payload_len {
            return Err(BundleError::Truncated {
                expected: header.payload_len,
                found: present,
            });
        }
        if present > header.payload_len {
            return Err(BundleError::TrailingBytes {
                extra: present - header.payload_len,
            });
        }
        let payload = &bytes[HEADER_LEN..];
        let computed = crc32fast::hash(payload);
        if computed != header.checksum {
            return Err(BundleError::Checksum {
                stored: header.checksum,
                computed,
            });
        }
        if !self.compresses(header.version) {
            return Ok(Cow::Borrowed(payload));
        }
        let Some((length, stream)) = payload.split_first_chunk::<8>() else {
            return Err(BundleError::Inflate("shorter than its length field".into()));
        };
        let announced = u64::from_le_bytes(*length);
        if announced > MAX_INFLATED {
            return Err(BundleError::TooLarge {
                announced,
                limit: MAX_INFLATED,
            });
        }
        let inflated =
            miniz_oxide::inflate::decompress_to_vec_with_limit(stream, announced as usize)
                .map_err(|e| BundleError::Inflate(e.to_string()))?;
        if inflated.len() as u64 != announced {
            return Err(BundleError::Inflate(format!(
                "{} bytes where {announced} were announced",
                inflated.len()
            )));
        }
        Ok(Cow::Owned(inflated))
    }
}

/// Decodes a payload that [`FileKind::payload`] returned (for a reader that needs the payload itself too, or
/// borrows from it).
pub fn decode_payload<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> Result<T, BundleError> {
    postcard::from_bytes(payload).map_err(|e| BundleError::Decode(e.to_string()))
}

/// Why bytes are not a usable bundle. The messages are shown to users as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// Shorter than the header.
    #[error("bundle is truncated: {len} bytes, but the header alone has {HEADER_LEN}. Most likely the download was interrupted: reload, or rebuild with `paragraf build`")]
    TooShort {
        /// Bytes present.
        len: usize,
    },
    /// Wrong magic.
    #[error("not a Paragraf {expected}: the file starts with {found:?}. Most likely another file (an HTML error page?) was served in its place")]
    BadMagic {
        /// The kind that was expected.
        expected: &'static str,
        /// The first bytes, lossily decoded.
        found: String,
    },
    /// Written by a newer Paragraf.
    #[error("{kind} format version {found} is newer than this Paragraf reads ({oldest} to {newest}). Update Paragraf (reload the app), or rebuild the bundles with this version")]
    TooNew {
        /// The kind's name.
        kind: &'static str,
        /// Version in the file.
        found: u32,
        /// The oldest version read.
        oldest: u32,
        /// The newest version read (the one written).
        newest: u32,
    },
    /// Written by a Paragraf too old to read.
    #[error("{kind} format version {found} is older than this Paragraf reads ({oldest} to {newest}). {remedy}")]
    TooOld {
        /// The kind's name.
        kind: &'static str,
        /// Version in the file.
        found: u32,
        /// The oldest version read.
        oldest: u32,
        /// The newest version read (the one written).
        newest: u32,
        /// What to do ([`FileKind::remedy`]).
        remedy: &'static str,
    },
    /// Payload shorter than announced.
    #[error("bundle is truncated: the header announces {expected} payload bytes but {found} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`")]
    Truncated {
        /// Announced payload length.
        expected: u64,
        /// Present payload length.
        found: u64,
    },
    /// Bytes after the payload.
    #[error("bundle has {extra} unexpected bytes after its payload. Most likely two files were concatenated: rebuild with `paragraf build`")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
    /// Checksum mismatch.
    #[error("bundle is corrupt: checksum {computed:08x} does not match the stored {stored:08x}. Download it again, or rebuild with `paragraf build`")]
    Checksum {
        /// Stored in the header.
        stored: u32,
        /// Computed over the payload.
        computed: u32,
    },
    /// The checksum matched but the payload does not decode.
    #[error("bundle payload cannot be decoded ({0}). Most likely it was written by an incompatible development build: rebuild with `paragraf build`")]
    Decode(String),
    /// The checksum matched but the compressed payload does not inflate to its announced length.
    #[error("bundle payload cannot be decompressed ({0}). Most likely it was written by an incompatible development build: rebuild with `paragraf build`")]
    Inflate(String),
    /// A compressed payload announces more than [`MAX_INFLATED`] bytes.
    #[error("bundle payload would inflate to {announced} bytes, more than the {limit} Paragraf accepts. Most likely the file was made by another program: rebuild with `paragraf build`")]
    TooLarge {
        /// The announced uncompressed length.
        announced: u64,
        /// [`MAX_INFLATED`].
        limit: u64,
    },
    /// The payload decoded, but the law in it is inconsistent ([`paragraf_law::Law::validate`]).
    #[error("law bundle is inconsistent: {0}. Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`")]
    InvalidLaw(LawError),
    /// The law is sound, but its prebuilt index does not fit it (`paragraf_engine::PrebuiltIndex::check`).
    #[error("law bundle's search index is inconsistent: {0}. Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`")]
    InvalidIndex(String),
}

/// The parsed header of a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// Payload length.
    pub payload_len: u64,
    /// CRC-32 of the payload.
    pub checksum: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
        values: Vec<u32>,
    }

    /// Two kinds as the bundles declare them: one read from version 3 on, one from 2 on.
    const LAW: FileKind = FileKind::new(b"PGRF-LAW", "law bundle", 3, 3);
    const STRATEGY: FileKind = FileKind::new(b"PGRF-STR", "strategy bundle", 3, 2);

    fn sample() -> Vec<u8> {
        LAW.encode(&Sample {
            name: "BGB".into(),
            values: vec![1, 2, 3],
        })
    }

    fn error(bytes: &[u8]) -> String {
        LAW.decode::<Sample>(bytes).unwrap_err().to_string()
    }

    #[test]
    fn round_trip() {
        let decoded: Sample = LAW.decode(&sample()).unwrap();
        assert_eq!(
            decoded,
            Sample {
                name: "BGB".into(),
                values: vec![1, 2, 3]
            }
        );
    }

    #[test]
    fn exact_errors() {
        let good = sample();
        assert_eq!(
            error(&good[..10]),
            "bundle is truncated: 10 bytes, but the header alone has 24. Most likely the download was interrupted: reload, or rebuild with `paragraf build`"
        );
        assert_eq!(
            error(&good[..good.len() - 2]),
            "bundle is truncated: the header announces 8 payload bytes but 6 are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`"
        );
        assert_eq!(
            error(b"<!DOCTYPE html><html>"),
            "not a Paragraf law bundle: the file starts with \"<!DOCTYP\". Most likely another file (an HTML error page?) was served in its place"
        );
        assert_eq!(
            STRATEGY.decode::<Sample>(&good).unwrap_err().to_string(),
            "not a Paragraf strategy bundle: the file starts with \"PGRF-LAW\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut future = good.clone();
        future[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(
            error(&future),
            "law bundle format version 4 is newer than this Paragraf reads (3 to 3). Update Paragraf (reload the app), or rebuild the bundles with this version"
        );
        let mut old = good.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(error(&old), "law bundle format version 1 is older than this Paragraf reads (3 to 3). Rebuild the bundles with `paragraf build`");
        // Each kind has its range: a law bundle of version 2 (no index) is too old, a strategy bundle of 2 is read.
        let mut before_index = good.clone();
        before_index[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(error(&before_index), "law bundle format version 2 is older than this Paragraf reads (3 to 3). Rebuild the bundles with `paragraf build`");
        assert!(STRATEGY
            .decode::<Sample>(&{
                let mut strategy = STRATEGY.encode(&Sample {
                    name: "s".into(),
                    values: vec![],
                });
                strategy[8..12].copy_from_slice(&2u32.to_le_bytes());
                strategy
            })
            .is_ok());
        let mut corrupt = good.clone();
        *corrupt.last_mut().unwrap() ^= 0x40;
        assert!(
            error(&corrupt).starts_with("bundle is corrupt: checksum "),
            "{}",
            error(&corrupt)
        );
        let mut long = good.clone();
        long.push(0);
        assert_eq!(
            error(&long),
            "bundle has 1 unexpected bytes after its payload. Most likely two files were concatenated: rebuild with `paragraf build`"
        );
    }

    /// A text-heavy kind as the law bundles declare it: version 3 stored as written, 4 compressed.
    const TEXT: FileKind = FileKind::new(b"PGRF-LAW", "law bundle", 4, 3).compressed_since(4);

    #[test]
    fn compressed_payloads_round_trip_and_older_versions_are_read_as_they_were_written() {
        let text = Sample {
            name: "Der Vermieter kann die Miete erhöhen. ".repeat(200),
            values: (0..500).collect(),
        };
        let file = TEXT.encode(&text);
        let plain = postcard::to_allocvec(&text).unwrap();
        assert!(
            file.len() * 5 < plain.len(),
            "{} of {}",
            file.len(),
            plain.len()
        );
        assert_eq!(TEXT.decode::<Sample>(&file).unwrap(), text);
        assert_eq!(&*TEXT.payload(&file).unwrap(), &plain[..]);
        // Version 3 of the same kind: the payload as it was serialised.
        let mut old = LAW.encode(&text);
        assert_eq!(TEXT.decode::<Sample>(&old).unwrap(), text);
        old[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert!(TEXT.decode::<Sample>(&old).is_err(), "read as compressed");
    }

    #[test]
    fn a_compressed_payload_that_does_not_inflate_to_its_length_is_refused_before_memory_is_taken()
    {
        let error = |stored: &[u8]| {
            TEXT.decode::<Sample>(&TEXT.frame_stored(stored))
                .unwrap_err()
                .to_string()
        };
        let plain = postcard::to_allocvec(&sample_value()).unwrap();
        let stream = miniz_oxide::deflate::compress_to_vec(&plain, 9);
        let with_length = |announced: u64, stream: &[u8]| {
            let mut stored = announced.to_le_bytes().to_vec();
            stored.extend_from_slice(stream);
            stored
        };
        assert_eq!(
            error(&[1, 2, 3]),
            "bundle payload cannot be decompressed (shorter than its length field). Most likely it was written by an incompatible development build: rebuild with `paragraf build`"
        );
        assert_eq!(
            error(&with_length(1 << 40, &stream)),
            "bundle payload would inflate to 1099511627776 bytes, more than the 268435456 Paragraf accepts. Most likely the file was made by another program: rebuild with `paragraf build`"
        );
        assert_eq!(
            error(&with_length(plain.len() as u64 + 5, &stream)),
            format!("bundle payload cannot be decompressed ({} bytes where {} were announced). Most likely it was written by an incompatible development build: rebuild with `paragraf build`", plain.len(), plain.len() + 5)
        );
        // Announcing less than the stream holds: inflating stops at the announced length.
        assert!(error(&with_length(plain.len() as u64 - 1, &stream))
            .starts_with("bundle payload cannot be decompressed ("));
        assert!(error(&with_length(64, &[0xff; 16]))
            .starts_with("bundle payload cannot be decompressed ("));
        // Cut short after the checksum was computed over the cut bytes (a truncated stream).
        assert!(error(&with_length(
            plain.len() as u64,
            &stream[..stream.len() / 2]
        ))
        .starts_with("bundle payload cannot be decompressed ("));
    }

    fn sample_value() -> Sample {
        Sample {
            name: "BGB".into(),
            values: vec![1, 2, 3],
        }
    }

    #[test]
    fn valid_checksum_over_garbage_payload_is_a_decode_error() {
        let payload = [0xff_u8; 3];
        let mut bytes = Vec::new();
        bytes.extend_from_slice(LAW.magic);
        bytes.extend_from_slice(&LAW.version.to_le_bytes());
        bytes.extend_from_slice(&3u64.to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        assert!(
            error(&bytes).starts_with("bundle payload cannot be decoded ("),
            "{}",
            error(&bytes)
        );
    }
}
