//! Fuzzing support, shared by the bounded fuzz run in every `cargo test` (`tests/integration/fuzz.rs`, stable
//! toolchain, fixed seed) and the cargo-fuzz targets for long runs (`crates/fuzz/fuzz`, `crates/embed/fuzz`).
//!
//! Why here: both runners feed the same decoders the same way, so what one input goes through (decode, index,
//! search) and how valid files are mutated so that they get past the checksum live in one place. The mutator is
//! a small deterministic one (no coverage feedback; cargo-fuzz brings that): it starts from valid files, so most
//! inputs pass the header and reach the payload decoder and the consistency checks behind it.
#![warn(missing_docs)]

use paragraf_core::federal::cited::{CitedByFile, CITED_BY};
use paragraf_core::federal::files::{
    FederalHead, FederalVectors, HEAD as FEDERAL_HEAD, VECTORS as FEDERAL_VECTORS,
};
use paragraf_core::federal::routing::{CatalogueLaw, Router};
use paragraf_core::finder::{LawFinder, TopicsFile, TOPICS};
use paragraf_core::manifest::LawEntry;
use paragraf_e5::file::{ModelFile, KIND as MODEL_FILE};
use paragraf_e5::TextKind;
use paragraf_engine::bundle::{LawBundle, StrategyBundle, STRATEGY_BUNDLE};
use paragraf_engine::expansion::{expand, weighted_terms, ThesaurusFile, KIND as THESAURUS};
use paragraf_engine::learning::{FirstStage, LearnedFile, KIND as LEARNED};
use paragraf_engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_format::frame::{FileKind, HEADER_LEN};
use paragraf_index::bm25::PostingShard;
use paragraf_stats::rng::SplitMix64;

/// Byte values that often sit on a decoder's edges (lengths, varint continuation, signs).
const INTERESTING: [u8; 8] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x20, 0x0a];

/// A seeded mutator of byte strings.
pub struct Mutator {
    rng: SplitMix64,
}

impl Mutator {
    /// A mutator with a fixed seed: the same seed gives the same inputs.
    pub fn new(seed: u64) -> Self {
        Mutator {
            rng: SplitMix64::new(seed),
        }
    }

    /// `input` changed by one to four of: bit flips, edge-case bytes, truncation, a range deleted or
    /// duplicated, a range spliced in from `donor` (another valid input).
    pub fn mutate(&mut self, input: &[u8], donor: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..=self.rng.below(4) {
            let len = out.len();
            match self.rng.below(6) {
                0 if len > 0 => {
                    let i = self.rng.below(len);
                    out[i] ^= 1 << self.rng.below(8);
                }
                1 if len > 0 => {
                    let i = self.rng.below(len);
                    out[i] = INTERESTING[self.rng.below(INTERESTING.len())];
                }
                2 => out.truncate(self.rng.below(len + 1)),
                3 if len > 0 => {
                    let start = self.rng.below(len);
                    let end = (start + 1 + self.rng.below(64)).min(len);
                    out.drain(start..end);
                }
                4 if len > 0 => {
                    let start = self.rng.below(len);
                    let end = (start + 1 + self.rng.below(64)).min(len);
                    let copy = out[start..end].to_vec();
                    let at = self.rng.below(len + 1);
                    out.splice(at..at, copy);
                }
                5 if !donor.is_empty() => {
                    let start = self.rng.below(donor.len());
                    let end = (start + 1 + self.rng.below(256)).min(donor.len());
                    let at = self.rng.below(len + 1);
                    let cut = (at + self.rng.below(end - start + 1)).min(len);
                    out.splice(at..cut, donor[start..end].iter().copied());
                }
                _ => {}
            }
        }
        out
    }

    /// A mutation of a framed file (bundle): mostly its payload (inflated, when the kind stores it compressed)
    /// mutated and framed again with a valid header and checksum, so that the decoder behind the checksum is
    /// reached; sometimes the stored bytes mutated behind a valid checksum (the inflater's input, for a
    /// compressed kind); sometimes the raw file, header included.
    pub fn mutate_framed(&mut self, file: &[u8], donor: &[u8], kind: FileKind) -> Vec<u8> {
        if file.len() < HEADER_LEN || self.rng.below(8) == 0 {
            return self.mutate(file, donor);
        }
        let payload = |bytes: &[u8]| {
            kind.payload(bytes).map_or_else(
                |_| bytes.get(HEADER_LEN..).unwrap_or(&[]).to_vec(),
                |p| p.into_owned(),
            )
        };
        if self.rng.below(4) == 0 {
            let stored = self.mutate(&file[HEADER_LEN..], donor.get(HEADER_LEN..).unwrap_or(&[]));
            return kind.frame_stored(&stored);
        }
        let mutated = self.mutate(&payload(file), &payload(donor));
        kind.frame_at(&mutated, 1)
    }
}

/// What a law bundle goes through in the browser: decode (with [`paragraf_law::Law::validate`]), then every
/// accessor that follows indices (breadcrumbs, URLs, citations), the prebuilt BM25 index and a lexical search.
/// `None` when it does not decode; any panic or endless loop is a bug.
pub fn law_bundle(bytes: &[u8]) -> Option<LawIndex> {
    let bundle = LawBundle::from_bytes(bytes).ok()?;
    let law = &bundle.law;
    for index in 0..law.sections.len() {
        let _ = law.path_label(index);
        let _ = law.official_url(index);
        let _ = law.incoming_references(index);
        let section = &law.sections[index];
        for sub in 0..section.subsections.len() {
            let _ = section.subsection_text(sub);
            let _ = section.subsection_body(sub);
        }
        for sentence in 0..section.sentences.len() {
            let _ = section.sentence_text(sentence);
        }
    }
    let _ = law.hierarchy_depth();
    let index = LawIndex::from_bundle(bundle);
    let _ = search(&index, None, "Miete § 1", None, &SearchOptions::default());
    Some(index)
}

/// What a strategy bundle goes through: decode, the consistency check against `law`, then dense (exact and
/// HNSW) and hybrid search with a query vector of the bundle's dimension. Errors are fine; panics are bugs.
pub fn strategy_bundle(law: &LawIndex, bytes: &[u8]) {
    let Ok(bundle) = StrategyBundle::from_bytes(bytes) else {
        return;
    };
    let Ok(strategy) = StrategyIndex::new(bundle, &law.law) else {
        return;
    };
    let query: Vec<f32> = (0..strategy.dim())
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 6.0)
        .collect();
    for (mode, unit_search) in [
        (Mode::Dense, UnitSearch::Exact),
        (Mode::Dense, UnitSearch::Hnsw),
        (Mode::Hybrid, UnitSearch::Hnsw),
    ] {
        let options = SearchOptions {
            mode,
            unit_search,
            ..SearchOptions::default()
        };
        let _ = search(law, Some(&strategy), "Kündigung", Some(&query), &options);
    }
}

/// What a thesaurus file goes through in the browser: decode (with its invariants), then, given a `law`, that
/// law's expansion table built from it, expansion of a few lay queries with a word removed, and the weighted BM25
/// search behind it. Returns whether it decoded; errors are fine, panics are bugs.
pub fn thesaurus_file(bytes: &[u8], law: Option<&LawIndex>) -> bool {
    let Ok(file) = ThesaurusFile::from_bytes(bytes) else {
        return false;
    };
    let Some(law) = law else {
        return true;
    };
    let Ok(table) = law.expansion_table(&std::sync::Arc::new(file)) else {
        return true;
    };
    let removed = ["Sicherheit".to_string()];
    for query in [
        "Kaution zurück",
        "Mietkaution Handy Chef",
        "Kirche",
        "§ 1 ä ß",
    ] {
        let expansions = expand(query, &table, law.bm25(), &removed);
        let terms = weighted_terms(law.bm25(), query, &expansions, 0.35);
        let _ = law.lexical_weighted(&terms, 10);
    }
    true
}

/// Raw bytes as a thesaurus file, and as the payload behind a valid header: the cargo-fuzz target's body.
pub fn thesaurus_file_bytes(bytes: &[u8]) {
    let _ = thesaurus_file(bytes, None);
    let _ = thesaurus_file(&THESAURUS.frame(bytes), None);
}

/// Raw bytes as a strategy bundle, and the same bytes as the payload behind a valid header (so that arbitrary
/// input reaches the payload decoder): the cargo-fuzz target's body, without a law to search.
pub fn strategy_bundle_bytes(bytes: &[u8]) {
    let _ = StrategyBundle::from_bytes(bytes);
    let _ = StrategyBundle::from_bytes(&STRATEGY_BUNDLE.frame(bytes));
}

/// A federal index head (then a search through whichever of `shards` decode as its shards, with `vectors` when
/// they decode as its vectors file): what the browser does with the files of the page over all laws. Returns
/// whether the head decoded.
pub fn federal_files(head: &[u8], shards: &[&[u8]], vectors: &[u8]) -> bool {
    let Ok(head) = FederalHead::from_bytes(head) else {
        return false;
    };
    let loaded: Vec<Option<PostingShard>> = shards
        .iter()
        .enumerate()
        .map(|(n, bytes)| head.shard_from_bytes(n as u32, bytes).ok())
        .collect();
    let vectors = head.vectors_from_bytes(vectors).ok();
    // A question of the vectors' width, so that any accepted file is searched.
    let dim = vectors.as_ref().map_or(384, |v| v.dim());
    let vector: Vec<f32> = (0..dim).map(|i| (i as f32 * 0.37).sin()).collect();
    // Routed as the browser routes: a router over the head's laws, their abbreviations for titles, with the
    // head's index of the laws' text.
    let router = Router::of_catalogue(
        head.laws().iter().map(|l| CatalogueLaw {
            law: l,
            title: l,
            short_title: "",
            sections: 1,
            refers: Vec::new(),
        }),
        Some(head.law_text_index()),
    );
    for mode in [Mode::Bm25, Mode::Hybrid, Mode::Dense] {
        let options = SearchOptions {
            mode,
            ..SearchOptions::default()
        };
        for query in ["Kaution zurück", "Art. 1 Würde", "§ 1 ä ß"] {
            let terms = head.query_terms(query);
            let asked = router.ask(query);
            let _ = head.search(
                &terms,
                vectors.as_ref().map(|v| (v, &vector[..])),
                &options,
                |n| loaded.get(n as usize).and_then(Option::as_ref),
                |law| law % 2 == 0,
                Some((&router, &asked)),
            );
        }
    }
    true
}

/// Raw bytes as a federal head, as a posting shard and as a vectors file, each also behind a valid header: the
/// cargo-fuzz target's body.
pub fn federal_file_bytes(bytes: &[u8]) {
    let _ = federal_files(bytes, &[], &[]);
    let _ = federal_files(&FEDERAL_HEAD.frame(bytes), &[], &[]);
    let _ = postcard::from_bytes::<PostingShard>(bytes).map(|s| s.terms());
    let _ = FEDERAL_VECTORS.decode::<FederalVectors>(&FEDERAL_VECTORS.frame(bytes));
}

/// A topics file (then the law finder over `laws` with it, as the app builds it): returns whether it decoded.
pub fn topics_file(bytes: &[u8], laws: &[LawEntry]) -> bool {
    let Ok(file) = TopicsFile::from_bytes(bytes) else {
        return false;
    };
    let finder = LawFinder::new(laws, Some(&file));
    for query in ["Mietrecht", "StVO", "Kündigungsschutz ä ß", "§"] {
        let _ = finder.find(query, 8);
    }
    true
}

/// A learned file: decoded, matched against `law` and, when it fits, searched in every mode it has a ranker
/// for (with a question vector of the width of its first model's vectors). Returns whether it decoded.
pub fn learned_file(bytes: &[u8], law: Option<&LawIndex>) -> bool {
    let Ok(file) = LearnedFile::from_bytes(bytes) else {
        return false;
    };
    let Some(law) = law else {
        return true;
    };
    let Ok((learning, _)) = file.clone().resolve(&law.law) else {
        return true;
    };
    let vector: Option<Vec<f32>> = file.vectors.first().map(|v| {
        (0..v.vectors.dim())
            .map(|i| (i as f32 * 0.37).sin())
            .collect()
    });
    let lexical = law.lexical("Kaution zurück Miete", 100);
    let dense: Vec<paragraf_index::Hit> = lexical.iter().rev().copied().collect();
    for ranker in &file.rankers {
        let model = file.vectors.first().map(|v| v.model.as_str());
        let query = model.zip(vector.as_deref());
        let _ = learning.rerank(
            ranker.strategy.as_deref(),
            ranker.mode,
            &law.bm25().query_terms("Kaution zurück Miete ä ß"),
            query,
            FirstStage {
                lexical: &lexical,
                dense: Some(&dense),
            },
            10,
        );
    }
    true
}

/// Raw bytes as a learned file, and as the payload behind a valid header: the cargo-fuzz target's body.
pub fn learned_file_bytes(bytes: &[u8]) {
    let _ = learned_file(bytes, None);
    let _ = learned_file(&LEARNED.frame(bytes), None);
}

/// Raw bytes as a topics file, and as the payload behind a valid header: the cargo-fuzz target's body.
pub fn topics_file_bytes(bytes: &[u8]) {
    let _ = topics_file(bytes, &[]);
    let _ = topics_file(&TOPICS.frame(bytes), &[]);
}

/// A cited-by shard listed under first law `from`, then its sections looked up as the app and `paragraf show` look
/// them up (every section it names, and names it does not hold): returns whether it decoded.
pub fn cited_by_file(bytes: &[u8], from: &str) -> bool {
    let Ok(file) = CitedByFile::from_bytes(bytes, from) else {
        return false;
    };
    for s in &file.sections {
        let _ = file.citing(&file.laws[s.law as usize], &s.designation);
    }
    let _ = file.citing("BGB", "§ 1");
    let _ = file.citing("", "");
    true
}

/// Raw bytes as a cited-by file, and as the payload behind a valid header: the cargo-fuzz target's body.
pub fn cited_by_file_bytes(bytes: &[u8]) {
    let _ = cited_by_file(bytes, "");
    let _ = cited_by_file(&CITED_BY.frame(bytes), "");
}

/// What the browser's model file goes through in the worker: decode (framing and every shape), prepare the encoder
/// and embed questions that stress the tokenizer. Returns whether it decoded; errors are fine, panics are bugs.
pub fn model_file(bytes: &[u8]) -> bool {
    let Ok(file) = ModelFile::from_bytes(bytes) else {
        return false;
    };
    let encoder = file.into_encoder();
    for question in ["Kündigung", "", "ab c ab", "🏠 שלום <b>§</b>"] {
        let _ = encoder.embed_texts(&[question], TextKind::Query);
    }
    true
}

/// Raw bytes as a model file, and as the payload behind a valid header: the cargo-fuzz target's body.
pub fn model_file_bytes(bytes: &[u8]) {
    let _ = model_file(bytes);
    let _ = model_file(&MODEL_FILE.frame(bytes));
}

#[cfg(test)]
mod tests {
    use super::*;
    use paragraf_engine::bundle::LAW_BUNDLE;

    #[test]
    fn mutations_are_deterministic_and_keep_frames_valid() {
        let file = LAW_BUNDLE.frame(b"0123456789abcdef");
        let (mut a, mut b) = (Mutator::new(7), Mutator::new(7));
        let mut changed = 0;
        for _ in 0..200 {
            let x = a.mutate_framed(&file, b"donor bytes", LAW_BUNDLE);
            assert_eq!(x, b.mutate_framed(&file, b"donor bytes", LAW_BUNDLE));
            changed += usize::from(x != file);
        }
        assert!(
            changed > 150,
            "{changed} of 200 inputs differ from the seed"
        );
        // Most inputs carry a valid header and checksum: the decoder behind them is reached.
        let mut m = Mutator::new(1);
        let framed = (0..50)
            .map(|_| m.mutate_framed(&file, b"", LAW_BUNDLE))
            .filter(|x| {
                x.len() >= HEADER_LEN
                    && x[20..24] == crc32fast::hash(&x[HEADER_LEN..]).to_le_bytes()
                    && LAW_BUNDLE.read_header(x).is_ok()
            })
            .count();
        assert!(framed > 30, "{framed}");
        // Law bundles are stored compressed: most mutations still inflate and reach the payload decoder, some
        // feed the inflater a mutated stream.
        let mut m = Mutator::new(2);
        let inputs: Vec<Vec<u8>> = (0..200)
            .map(|_| m.mutate_framed(&file, &file, LAW_BUNDLE))
            .collect();
        let inflated = inputs
            .iter()
            .filter(|x| LAW_BUNDLE.payload(x).is_ok())
            .count();
        let refused_by_the_inflater = inputs
            .iter()
            .filter(|x| {
                matches!(
                    LAW_BUNDLE.payload(x),
                    Err(paragraf_format::frame::BundleError::Inflate(_))
                )
            })
            .count();
        assert!((100..190).contains(&inflated), "{inflated} of 200");
        assert!(
            refused_by_the_inflater >= 5,
            "{refused_by_the_inflater} of 200"
        );
    }

    #[test]
    fn text_heavy_kinds_are_stored_compressed_and_read_their_previous_version() {
        use paragraf_core::federal::files::SHARD;
        let compressed = [LAW_BUNDLE, FEDERAL_HEAD, SHARD, TOPICS, THESAURUS, CITED_BY];
        let text =
            "Der Vermieter kann die Zustimmung zu einer Erhöhung der Miete verlangen. ".repeat(50);
        for kind in compressed {
            assert_eq!(kind.compressed_since, kind.version, "{}", kind.name);
            assert!(kind.oldest < kind.version, "{}", kind.name);
            assert!(
                kind.frame(text.as_bytes()).len() * 4 < text.len(),
                "{}",
                kind.name
            );
            // The previous version, stored as serialised, is still read.
            let mut previous = kind.frame_stored(text.as_bytes());
            previous[8..12].copy_from_slice(&(kind.version - 1).to_le_bytes());
            assert_eq!(
                &*kind.payload(&previous).unwrap(),
                text.as_bytes(),
                "{}",
                kind.name
            );
        }
        for kind in [STRATEGY_BUNDLE, FEDERAL_VECTORS, MODEL_FILE, LEARNED] {
            assert_eq!(kind.compressed_since, u32::MAX, "{}", kind.name);
        }
    }
}
