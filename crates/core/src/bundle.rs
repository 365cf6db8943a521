//! The bundle file format: what the build tool writes and the browser reads.
//!
//! Every bundle is a postcard payload behind a fixed 24-byte header:
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
//! instead of a postcard decoding error. One **law bundle** per law holds the structured law (shared by all
//! strategies); one **strategy bundle** per strategy holds the indexed units, their vectors and any routing
//! structure. Units are spans of the law's text wherever possible, so the text is shipped once.

use crate::engine::PrebuiltIndex;
use crate::law::{Law, LawError, Span};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

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
    /// The payload decoded, but the law in it is inconsistent ([`Law::validate`]).
    #[error("law bundle is inconsistent: {0}. Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`")]
    InvalidLaw(LawError),
    /// The law is sound, but its prebuilt index does not fit it ([`PrebuiltIndex::check`]).
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

/// The law bundle: the structured law, shared by every strategy bundle of that law, and its section-level BM25
/// index, built with the bundle so that loading a law analyses no text (in the browser that analysis was most
/// of a second of frozen page).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawBundle {
    /// The tool that wrote it, e.g. `paragraf 0.1.0`.
    pub generator: String,
    /// The law.
    pub law: Law,
    /// BM25 over the law's sections ([`LawIndex`](crate::engine::LawIndex)).
    pub index: PrebuiltIndex,
}

impl LawBundle {
    /// The bundle of `law`, its index built now.
    pub fn new(generator: impl Into<String>, law: Law) -> Self {
        LawBundle {
            generator: generator.into(),
            index: PrebuiltIndex::build(&law),
            law,
        }
    }

    /// Encodes as a law bundle file.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(BundleKind::Law, self)
    }

    /// Decodes and validates a law bundle file: header, checksum, payload and then [`Law::validate`], so that
    /// a law that decodes can be used without further checks.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        let bundle: Self = decode(BundleKind::Law, bytes)?;
        bundle.law.validate().map_err(BundleError::InvalidLaw)?;
        bundle
            .index
            .check(&bundle.law)
            .map_err(BundleError::InvalidIndex)?;
        Ok(bundle)
    }
}

/// A piece of law text that (part of) a unit covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Piece {
    /// Index into [`Law::sections`].
    pub section: u32,
    /// Range of that section's text.
    pub span: Span,
}

/// One indexed unit: where it lies in the law and which sections a hit on it counts for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RawUnit", from = "RawUnit")]
pub struct Unit {
    /// Parent sections, ascending: one for structural units, several for windows, clusters and Lumber chunks.
    pub sections: Vec<u32>,
    /// The law text it covers, in order (empty for cluster centroids).
    pub pieces: Vec<Piece>,
    /// Text that is not a slice of the law (a generated proposition, a cluster label), else `None`.
    pub text: Option<String>,
}

/// A unit as stored: `sections` is left empty when it is just the sections of the pieces (true for every unit
/// that slices the law), which saves ~3 bytes per unit.
#[derive(Clone, Serialize, Deserialize)]
struct RawUnit {
    sections: Vec<u32>,
    pieces: Vec<Piece>,
    text: Option<String>,
}

impl Unit {
    /// The sections the pieces lie in, ascending.
    fn sections_of_pieces(pieces: &[Piece]) -> Vec<u32> {
        let mut sections: Vec<u32> = pieces.iter().map(|p| p.section).collect();
        sections.sort_unstable();
        sections.dedup();
        sections
    }
}

impl From<Unit> for RawUnit {
    fn from(unit: Unit) -> Self {
        let implied =
            !unit.pieces.is_empty() && unit.sections == Unit::sections_of_pieces(&unit.pieces);
        RawUnit {
            sections: if implied { Vec::new() } else { unit.sections },
            pieces: unit.pieces,
            text: unit.text,
        }
    }
}

impl From<RawUnit> for Unit {
    fn from(raw: RawUnit) -> Self {
        let sections = if raw.sections.is_empty() {
            Unit::sections_of_pieces(&raw.pieces)
        } else {
            raw.sections
        };
        Unit {
            sections,
            pieces: raw.pieces,
            text: raw.text,
        }
    }
}

/// Who produced the generated parts of a strategy (propositions, context prefixes, Lumber boundaries, RAPTOR
/// summaries). Strategy names stay the same across producers; this tells the variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Producer {
    /// Nothing generated: the strategy only slices the law.
    None,
    /// Paragraf's deterministic built-in rules, with their version.
    Builtin {
        /// Version of the rules.
        version: u32,
    },
    /// An OpenAI-compatible chat model.
    Llm {
        /// Model name as sent to the endpoint.
        model: String,
        /// Hash of the prompt templates, so changed prompts are visible.
        prompt_hash: String,
    },
}

/// Vector storage of a strategy bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VectorStore {
    /// int8 with one scale per vector (the default).
    Int8(crate::vectors::Int8Vectors),
    /// Full precision, to measure what quantisation costs.
    F32 {
        /// Dimension.
        dim: u32,
        /// Row-major values.
        values: Vec<f32>,
    },
}

impl VectorStore {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        match self {
            VectorStore::Int8(v) => v.len(),
            VectorStore::F32 { dim, values } => values.len() / (*dim as usize).max(1),
        }
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// RAPTOR's tree of summary nodes above the leaf units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaptorTree {
    /// Summary nodes; a node's children are units (level 1) or summary nodes of the level below.
    pub nodes: Vec<SummaryNode>,
    /// One vector per summary node, in order.
    pub vectors: VectorStore,
    /// Top-level nodes where routing starts.
    pub roots: Vec<u32>,
}

/// A RAPTOR summary node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryNode {
    /// 1 for nodes above leaves, 2 above those, ...
    pub level: u8,
    /// Unit indices (level 1) or summary node indices (level > 1).
    pub children: Vec<u32>,
    /// The summary: extractive (member section titles) or generated.
    pub label: String,
}

/// A strategy bundle: the index of one chunking strategy over one law.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrategyBundle {
    /// The tool that wrote it, e.g. `paragraf 0.1.0`.
    pub generator: String,
    /// Strategy name as in the CLI and reports (`subsection`, `fixed-64-16`, `raptor-sentence`).
    pub strategy: String,
    /// Who generated the strategy's derived text.
    pub producer: Producer,
    /// Abbreviation of the law.
    pub law: String,
    /// Build date of the law's XML, to detect a strategy bundle that does not belong to the law bundle.
    pub law_build_date: String,
    /// Embedding model id (checked against the query-embedding proxy).
    pub model: String,
    /// Build parameters and seeds, `(name, value)`, for reproducibility.
    pub params: Vec<(String, String)>,
    /// The indexed units.
    pub units: Vec<Unit>,
    /// One vector per unit.
    pub vectors: VectorStore,
    /// RAPTOR routing tree, for `raptor-*` strategies.
    pub raptor: Option<RaptorTree>,
    /// Approximate-search graph over the int8 vectors, for strategies with many units.
    pub hnsw: Option<crate::search::hnsw::Hnsw>,
}

impl StrategyBundle {
    /// Encodes as a strategy bundle file.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(BundleKind::Strategy, self)
    }

    /// Decodes and validates a strategy bundle file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        decode(BundleKind::Strategy, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn units_round_trip_with_and_without_implied_sections() {
        let piece = |section, start, end| Piece {
            section,
            span: Span { start, end },
        };
        let units = vec![
            // a window over two sections: sections implied by the pieces, not stored
            Unit {
                sections: vec![3, 4],
                pieces: vec![piece(3, 10, 50), piece(4, 0, 12)],
                text: None,
            },
            // a cluster centroid: no pieces, sections stored
            Unit {
                sections: vec![1, 7, 9],
                pieces: vec![],
                text: Some("§§ 1, 7, 9".into()),
            },
            // sections that differ from the pieces' are kept as they are
            Unit {
                sections: vec![2],
                pieces: vec![piece(5, 0, 3)],
                text: None,
            },
        ];
        let bytes = postcard::to_allocvec(&units).unwrap();
        assert_eq!(postcard::from_bytes::<Vec<Unit>>(&bytes).unwrap(), units);
        let implied = postcard::to_allocvec(&units[..1]).unwrap();
        let mut stored = units[0].clone();
        stored.sections = vec![4, 3];
        assert!(postcard::to_allocvec(&[stored]).unwrap().len() > implied.len());
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

    /// A small valid law: one structure unit, one section `(1) Eins. Zwei.` citing itself.
    fn small_law() -> Law {
        use crate::law::*;
        let text = "(1) Eins. Zwei.".to_string();
        Law {
            abbreviation: "TG".into(),
            slug: "tg".into(),
            title: "Testgesetz".into(),
            doknr: String::new(),
            build_date: "1".into(),
            stand: vec![],
            source: "t.xml".into(),
            structure: vec![StructureNode {
                code: "010".into(),
                designation: "Buch 1".into(),
                title: String::new(),
                parent: None,
            }],
            sections: vec![Section {
                designation: "§ 1".into(),
                title: String::new(),
                structure: Some(0),
                repealed: false,
                subsections: vec![Subsection {
                    label: Some("1".into()),
                    span: Span::new(0..text.len()),
                    sentences: 0..2,
                }],
                sentences: vec![
                    Sentence {
                        span: Span::new(4..9),
                        subsection: 0,
                    },
                    Sentence {
                        span: Span::new(10..15),
                        subsection: 0,
                    },
                ],
                list_items: vec![],
                references: vec![Reference {
                    span: Span::new(4..9),
                    targets: vec![RefTarget::Section {
                        section: 0,
                        subsection: None,
                        sentence: None,
                    }],
                }],
                footnotes: vec![],
                text,
            }],
        }
    }

    fn law_error(change: impl FnOnce(&mut Law)) -> String {
        let mut law = small_law();
        change(&mut law);
        // Encoded with a valid header and checksum: only the law check can refuse it.
        let bytes = LawBundle::new("test", law).to_bytes();
        LawBundle::from_bytes(&bytes).unwrap_err().to_string()
    }

    #[test]
    fn the_index_is_checked_against_its_law() {
        let mut longer = small_law();
        longer.sections.push(longer.sections[0].clone());
        longer.sections[1].designation = "§ 2".into();
        let mut bundle = LawBundle::new("test", small_law());
        bundle.index = PrebuiltIndex::build(&longer);
        assert_eq!(
            LawBundle::from_bytes(&bundle.to_bytes()).unwrap_err().to_string(),
            "law bundle's search index is inconsistent: 2 documents for 1 searchable sections. Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`"
        );
        // Postings of a term pointing past the documents.
        let mut bytes = postcard::to_allocvec(&LawBundle::new("test", small_law())).unwrap();
        // The last posting is (doc delta, tf) = (0, 1): send it to document 5.
        let delta = bytes.len() - 2;
        assert_eq!(bytes[delta..], [0, 1]);
        bytes[delta] = 5;
        assert_eq!(
            LawBundle::from_bytes(&frame_payload(BundleKind::Law.magic(), &bytes))
                .unwrap_err()
                .to_string(),
            "law bundle's search index is inconsistent: corrupt BM25 index: posting for a document that does not exist. Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`"
        );
    }

    #[test]
    fn decoded_laws_are_validated() {
        let bytes = LawBundle::new("test", small_law()).to_bytes();
        assert_eq!(
            LawBundle::from_bytes(&bytes).unwrap().law.path_label(0),
            "Buch 1"
        );
        let tail = ". Most likely it was damaged before its checksum was written or made by another program: rebuild with `paragraf build`";
        let cycle = law_error(|law| {
            law.structure.push(law.structure[0].clone());
            law.structure[0].parent = Some(1);
            law.structure[1].parent = Some(0);
        });
        assert_eq!(cycle, format!("law bundle is inconsistent: structure unit 0 has parent 1, which does not precede it{tail}"));
        let out_of_range = law_error(|law| law.sections[0].structure = Some(7));
        assert_eq!(out_of_range, format!("law bundle is inconsistent: section 0 (§ 1) lies in structure unit 7, but the law has 1{tail}"));
        let span = law_error(|law| law.sections[0].sentences[1].span.end = 99);
        assert_eq!(span, format!("law bundle is inconsistent: section 0 (§ 1): sentence 1 spans bytes 10..99 of a 15-byte text{tail}"));
        let order = law_error(|law| law.sections[0].sentences.swap(0, 1));
        assert_eq!(order, format!("law bundle is inconsistent: section 0 (§ 1): sentence 1 starts before the sentence ahead of it{tail}"));
        let citation = law_error(|law| {
            law.sections[0].references[0].targets[0] = crate::law::RefTarget::Section {
                section: 3,
                subsection: None,
                sentence: None,
            }
        });
        assert_eq!(citation, format!("law bundle is inconsistent: section 0 (§ 1): reference 0 cites section 3, but the law has 1{tail}"));
        let char_boundary = law_error(|law| {
            law.sections[0].text = "(1) Übel. Zwei.".into();
            law.sections[0].sentences[0].span = Span::new(4..5);
        });
        assert!(
            char_boundary.contains("sentence 0 spans bytes 4..5"),
            "{char_boundary}"
        );
    }
}
