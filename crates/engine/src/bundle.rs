//! The bundle files: what the build tool writes and the browser reads, framed by [`paragraf_format::frame`].
//!
//! One **law bundle** per law holds the structured law (shared by all strategies) and its prebuilt BM25 index;
//! one **strategy bundle** per strategy holds the indexed units, their vectors and any routing structure. Units
//! are spans of the law's text wherever possible, so the text is shipped once.

use crate::PrebuiltIndex;
use paragraf_format::frame::{BundleError, FileKind};
use paragraf_index::raptor::RaptorTree;
use paragraf_index::vectors::VectorStore;
use paragraf_law::{Law, Span};
use serde::{Deserialize, Serialize};

/// The law bundle file: read from version 4 on (before, laws lacked their short title; before 3, law bundles
/// lacked their index); compressed from version 5 on.
pub const LAW_BUNDLE: FileKind = FileKind::new(b"PGRF-LAW", "law bundle", 5, 4).compressed_since(5);
/// The strategy bundle file: read from version 2 on (HNSW links stored as sorted gaps).
pub const STRATEGY_BUNDLE: FileKind = FileKind::new(b"PGRF-STR", "strategy bundle", 3, 2);

/// The law bundle: the structured law, shared by every strategy bundle of that law, and its section-level BM25
/// index, built with the bundle so that loading a law analyses no text (in the browser that analysis was most
/// of a second of frozen page).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawBundle {
    /// The tool that wrote it, e.g. `paragraf 0.1.0`.
    pub generator: String,
    /// The law.
    pub law: Law,
    /// BM25 over the law's sections ([`LawIndex`](crate::LawIndex)).
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
        LAW_BUNDLE.encode(self)
    }

    /// Decodes and validates a law bundle file: header, checksum, payload and then [`Law::validate`], so that
    /// a law that decodes can be used without further checks.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        let bundle: Self = LAW_BUNDLE.decode(bytes)?;
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
    pub hnsw: Option<paragraf_index::hnsw::Hnsw>,
}

impl StrategyBundle {
    /// Encodes as a strategy bundle file.
    pub fn to_bytes(&self) -> Vec<u8> {
        STRATEGY_BUNDLE.encode(self)
    }

    /// Decodes and validates a strategy bundle file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BundleError> {
        STRATEGY_BUNDLE.decode(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A small valid law: one structure unit, one section `(1) Eins. Zwei.` citing itself.
    fn small_law() -> Law {
        use paragraf_law::*;
        let text = "(1) Eins. Zwei.".to_string();
        Law {
            abbreviation: "TG".into(),
            slug: "tg".into(),
            title: "Testgesetz".into(),
            short_title: String::new(),
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
    fn a_law_bundle_from_before_short_titles_is_refused_with_what_to_do() {
        let mut bytes = LawBundle::new("test", small_law()).to_bytes();
        bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            LawBundle::from_bytes(&bytes).unwrap_err().to_string(),
            "law bundle format version 3 is older than this Paragraf reads (4 to 5). Rebuild the bundles with `paragraf build`"
        );
        // Version 4 stored the payload uncompressed: still read; version 5 compresses it.
        let plain = postcard::to_allocvec(&LawBundle::new("test", small_law())).unwrap();
        let mut v4 = LAW_BUNDLE.frame_stored(&plain);
        v4[8..12].copy_from_slice(&4u32.to_le_bytes());
        let current = LawBundle::new("test", small_law()).to_bytes();
        assert_eq!(
            LawBundle::from_bytes(&v4).unwrap().law,
            LawBundle::from_bytes(&current).unwrap().law
        );
        assert_ne!(current[paragraf_format::frame::HEADER_LEN..], plain[..]);
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
            LawBundle::from_bytes(&LAW_BUNDLE.frame(&bytes))
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
            law.sections[0].references[0].targets[0] = paragraf_law::RefTarget::Section {
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
