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
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Current format version written by this build (2: HNSW links stored as sorted gaps; 3: law bundles carry
/// their prebuilt BM25 index).
pub const FORMAT_VERSION: u32 = 3;
/// Oldest format version this build still reads (law bundles: [`BundleKind::oldest_version`]).
pub const MIN_FORMAT_VERSION: u32 = 2;
/// Header length in bytes.
pub const HEADER_LEN: usize = 24;

/// The two kinds of bundle, told apart by their magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleKind {
    /// The structured law (`PGRF-LAW`).
    Law,
    /// One chunking strategy's index (`PGRF-STR`).
    Strategy,
}

impl BundleKind {
    /// The 8-byte magic at the start of the file.
    pub fn magic(self) -> &'static [u8; 8] {
        match self {
            BundleKind::Law => b"PGRF-LAW",
            BundleKind::Strategy => b"PGRF-STR",
        }
    }

    fn name(self) -> &'static str {
        match self {
            BundleKind::Law => "law bundle",
            BundleKind::Strategy => "strategy bundle",
        }
    }

    /// The oldest format version of this kind that this build reads: law bundles before 3 lack their index.
    pub fn oldest_version(self) -> u32 {
        match self {
            BundleKind::Law => 3,
            BundleKind::Strategy => MIN_FORMAT_VERSION,
        }
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
    #[error("bundle format version {found} is newer than this Paragraf reads ({FORMAT_VERSION}). Update Paragraf (reload the app), or rebuild the bundles with this version")]
    TooNew {
        /// Version in the file.
        found: u32,
    },
    /// Written by a Paragraf too old to read.
    #[error("bundle format version {found} is older than this Paragraf reads (at least {oldest}). Rebuild the bundles with `paragraf build`")]
    TooOld {
        /// Version in the file.
        found: u32,
        /// The oldest version read.
        oldest: u32,
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

/// Serialises `value` as a bundle of `kind`.
pub fn encode<T: Serialize>(kind: BundleKind, value: &T) -> Vec<u8> {
    encode_framed(kind.magic(), value)
}

/// Checks header, length and checksum, then decodes the payload of a bundle of `kind`.
pub fn decode<T: DeserializeOwned>(kind: BundleKind, bytes: &[u8]) -> Result<T, BundleError> {
    decode_versioned(kind.magic(), kind.name(), kind.oldest_version(), bytes)
}

/// Checks magic and version of a bundle of `kind` and returns the header, without looking at the payload.
pub fn read_header(kind: BundleKind, bytes: &[u8]) -> Result<Header, BundleError> {
    read_versioned_header(kind.magic(), kind.name(), kind.oldest_version(), bytes)
}

/// The same framing (magic, version, length, checksum) for Paragraf's other files, e.g. cache entries.
pub fn encode_framed<T: Serialize>(magic: &[u8; 8], value: &T) -> Vec<u8> {
    frame_payload(
        magic,
        &postcard::to_allocvec(value).expect("bundle types always serialise"),
    )
}

/// Puts the header (magic, current version, length, checksum) before an already serialised payload.
pub fn frame_payload(magic: &[u8; 8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Validates a framed file's header: `name` says what was expected in errors.
pub fn read_framed_header(
    magic: &[u8; 8],
    name: &'static str,
    bytes: &[u8],
) -> Result<Header, BundleError> {
    read_versioned_header(magic, name, MIN_FORMAT_VERSION, bytes)
}

/// [`read_framed_header`] for a file read from version `oldest` on.
fn read_versioned_header(
    magic: &[u8; 8],
    name: &'static str,
    oldest: u32,
    bytes: &[u8],
) -> Result<Header, BundleError> {
    let magic_len = bytes.len().min(8);
    if bytes[..magic_len] != magic[..magic_len] {
        return Err(BundleError::BadMagic {
            expected: name,
            found: String::from_utf8_lossy(&bytes[..magic_len]).into_owned(),
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(BundleError::TooShort { len: bytes.len() });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version > FORMAT_VERSION {
        return Err(BundleError::TooNew { found: version });
    }
    if version < oldest {
        return Err(BundleError::TooOld {
            found: version,
            oldest,
        });
    }
    let payload_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    Ok(Header {
        version,
        payload_len,
        checksum: u32_at(20),
    })
}

/// Validates a framed file completely and decodes its payload.
pub fn decode_framed<T: DeserializeOwned>(
    magic: &[u8; 8],
    name: &'static str,
    bytes: &[u8],
) -> Result<T, BundleError> {
    decode_versioned(magic, name, MIN_FORMAT_VERSION, bytes)
}

/// [`decode_framed`] for a file read from version `oldest` on.
fn decode_versioned<T: DeserializeOwned>(
    magic: &[u8; 8],
    name: &'static str,
    oldest: u32,
    bytes: &[u8],
) -> Result<T, BundleError> {
    let header = read_versioned_header(magic, name, oldest, bytes)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
        values: Vec<u32>,
    }

    fn sample() -> Vec<u8> {
        encode(
            BundleKind::Law,
            &Sample {
                name: "BGB".into(),
                values: vec![1, 2, 3],
            },
        )
    }

    fn error(bytes: &[u8]) -> String {
        decode::<Sample>(BundleKind::Law, bytes)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn round_trip() {
        let decoded: Sample = decode(BundleKind::Law, &sample()).unwrap();
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
            decode::<Sample>(BundleKind::Strategy, &good).unwrap_err().to_string(),
            "not a Paragraf strategy bundle: the file starts with \"PGRF-LAW\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut future = good.clone();
        future[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(
            error(&future),
            "bundle format version 4 is newer than this Paragraf reads (3). Update Paragraf (reload the app), or rebuild the bundles with this version"
        );
        let mut old = good.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(error(&old), "bundle format version 1 is older than this Paragraf reads (at least 3). Rebuild the bundles with `paragraf build`");
        // A law bundle of version 2 has no index: older than law bundles may be; other files of 2 are read.
        let mut before_index = good.clone();
        before_index[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(error(&before_index), "bundle format version 2 is older than this Paragraf reads (at least 3). Rebuild the bundles with `paragraf build`");
        assert!(decode::<Sample>(BundleKind::Strategy, &{
            let mut strategy = encode(
                BundleKind::Strategy,
                &Sample {
                    name: "s".into(),
                    values: vec![],
                },
            );
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
        bytes.extend_from_slice(BundleKind::Law.magic());
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
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
