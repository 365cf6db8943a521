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

use paragraf_law::LawError;
use serde::{Deserialize, Serialize};

/// The folder format `manifest.json` records (`format_version`): raised together with a bundle kind's
/// [`FileKind::version`], so that an incremental build rebuilds the laws an older format wrote (2: HNSW links
/// stored as sorted gaps; 3: law bundles carry their prebuilt BM25 index; 4: laws carry their short title).
pub const FORMAT_VERSION: u32 = 4;
/// Header length in bytes.
pub const HEADER_LEN: usize = 24;

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
        }
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

    /// Puts the header (magic, this kind's version, length, checksum) before an already serialised payload.
    pub fn frame(&self, payload: &[u8]) -> Vec<u8> {
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

    /// Checks header, length and checksum, then decodes the payload (which may borrow strings from `bytes`).
    pub fn decode<'a, T: Deserialize<'a>>(&self, bytes: &'a [u8]) -> Result<T, BundleError> {
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
        postcard::from_bytes(payload).map_err(|e| BundleError::Decode(e.to_string()))
    }
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
    use serde::Deserialize;

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
