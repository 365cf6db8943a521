//! Query expansion: lay words meet statute words.
//!
//! Laypeople write `Kaution`, `Handy`, `Chef`; the BGB says `Sicherheit`, `Mobiltelefon` (nowhere), `Arbeitgeber`.
//! BM25 cannot bridge that. The build reads a thesaurus ([`thesaurus`], OpenThesaurus) and keeps, per lay word,
//! only the synonyms that can help *this* law ([`ExpansionTable::build`]):
//!
//! - **Lay words** (keys) are thesaurus words that occur in at most [`TableParams::max_source_df`] sections of
//!   the law (by default none): a word the law already uses is matched by BM25 as it is, and expanding it mostly
//!   adds other senses (`alt` → `Vorgesetzter` via `(der) Alte (ugs.)`).
//! - **Targets** are synonyms whose analysed form (the BM25 analyzer, so inflections, umlaut folding and compound
//!   parts count: `Sicherheit` matches `Mietsicherheit`) occurs in the law, in at most
//!   [`TableParams::max_df_fraction`] of its sections (and always when in one section, however small the law):
//!   a very common word (`Recht`) carries no meaning to add.
//!   Their weight is their specificity, the law's BM25 idf scaled to (0, 1] (a word in one section weighs 1),
//!   divided by the number of synonym sets (senses) the lay word occurs in: `Kaution` has one sense, `kaputt`
//!   five, so each of `kaputt`'s readings is trusted a fifth.
//!   Targets the law names in a section heading come first when the list is cut to [`TableParams::max_targets`]:
//!   a heading that names the concept is the best bridge the law itself offers.
//! - **Labels**: terms marked figurative, vulgar, ironic or as sayings ([`DROP_TAGS`]) are dropped on both
//!   sides, since their literal sense is not what is meant. Colloquial and regional words stay as lay words
//!   (that is how people write: `Handy`, `Chef`) but never become targets ([`TARGET_TAGS`] lists the labels a
//!   target may have): the law does not speak colloquially, so a colloquial word that occurs in the law occurs
//!   there in another sense (`Alte (ugs.)` for the boss, `alt` in the law).
//!
//! At query time [`expand`] looks each query word up by its stem, or, for a compound the table does not know,
//! by its longest known head (`Mietkaution` → `Kaution`), and returns what it added so the app can show it and
//! let the user remove an expansion. [`weighted_terms`] turns the query and its expansions into weighted BM25
//! terms, the expansions scaled by a weight below 1.
//!
//! The table ships as its own small file ([`ExpansionFile`], magic `PGRF-EXP`, the bundles' framing) so law
//! bundles keep their format; it carries the thesaurus's LGPL notice.

pub mod thesaurus;

use crate::analyzer::{Analyzer, AnalyzerConfig, MIN_PART_CHARS};
use crate::bundle::{decode_framed, encode_framed, BundleError};
use crate::manifest::{verify_bytes, ManifestError};
use crate::search::bm25::Bm25Index;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use thesaurus::{Term, Thesaurus};

/// Labels that drop a term everywhere: its literal sense is not the one meant.
pub const DROP_TAGS: &[&str] = &[
    "fig.",
    "auch fig.",
    "derb",
    "vulg.",
    "ironisch",
    "scherzhaft",
    "scherzhaft-ironisch",
    "abwertend",
    "verhüllend",
    "Spruch",
    "Sprichwort",
    "sprichwörtlich",
    "redensartlich",
    "floskelhaft",
    "Symbol",
    "Einheitenzeichen",
    "Markenname",
    "Eigenname",
    "poetisch",
    "literarisch",
];

/// The only labels a target may carry: the registers statutes are written in.
pub const TARGET_TAGS: &[&str] = &[
    "Hauptform",
    "fachspr.",
    "jur.",
    "juristisch",
    "Amtsdeutsch",
    "geh.",
    "bildungssprachlich",
    "lat.",
    "Plural",
    "Kurzform",
    "Abkürzung",
    "variabel",
];

/// Most targets per lay word a file may hold.
pub const MAX_TARGETS_LIMIT: usize = 64;
/// Most lay words a file may hold.
pub const MAX_KEYS: usize = 1 << 20;
/// Longest key or target (bytes).
pub const MAX_TERM_BYTES: usize = 256;

/// What the build keeps; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableParams {
    /// A lay word is expanded only if it occurs in at most this many sections (0: only words the law lacks).
    pub max_source_df: u32,
    /// Targets in more than this fraction of sections are dropped.
    pub max_df_fraction: f32,
    /// Targets kept per lay word.
    pub max_targets: usize,
}

impl Default for TableParams {
    fn default() -> Self {
        Self {
            max_source_df: 0,
            max_df_fraction: 0.02,
            max_targets: 6,
        }
    }
}

/// One word an expansion adds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// The index term (stem) BM25 searches for.
    pub term: String,
    /// The word as the thesaurus writes it, to show (`Sicherheitsleistung`).
    pub word: String,
    /// Specificity in (0, 1].
    pub weight: f32,
}

/// A lay word and what it expands to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The lay word's stem.
    pub key: String,
    /// Best first.
    pub targets: Vec<Target>,
}

/// Lay word -> statute words for one law; see the module docs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpansionTable {
    /// The analyzer the stems were made with (the law's BM25 analyzer).
    pub analyzer: AnalyzerConfig,
    /// Sorted by key, keys unique.
    entries: Vec<Entry>,
}

/// The expansion file: the table plus where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExpansionFile {
    /// The tool that wrote it.
    pub generator: String,
    /// Law abbreviation.
    pub law: String,
    /// The thesaurus used (file name and first notice line).
    pub source: String,
    /// The thesaurus's copyright and licence notice (LGPL: it travels with what is derived from it).
    pub notice: String,
    /// The build parameters.
    pub params: TableParams,
    /// The table.
    pub table: ExpansionTable,
}

/// Magic of an expansion file.
pub const MAGIC: &[u8; 8] = b"PGRF-EXP";
const NAME: &str = "expansion file";

/// Why bytes are not a usable expansion file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpansionError {
    /// Framing or decoding failed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Decoded, but the table breaks its invariants.
    #[error("corrupt expansion file: {0}. Rebuild with `paragraf build`")]
    Invalid(&'static str),
}

impl ExpansionFile {
    /// Encodes with magic, version and checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode_framed(MAGIC, self)
    }

    /// Decodes and validates.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ExpansionError> {
        let file: Self = decode_framed(MAGIC, NAME, bytes)?;
        file.table.validate()?;
        Ok(file)
    }
}

/// What `manifest.json` records about a law's query expansion (`LawEntry::expansions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ExpansionsEntry {
    /// A table was built.
    Built {
        /// File name (content-hashed).
        file: String,
        /// File size.
        bytes: u64,
        /// SHA-256 of the file (lower-case hex).
        sha256: String,
        /// The thesaurus it was built from.
        source: String,
        /// Lay words in the table.
        terms: usize,
    },
    /// None was: the thesaurus was missing or malformed.
    Skipped {
        /// The thesaurus path tried.
        source: String,
        /// Why it was not used.
        reason: String,
    },
}

impl ExpansionsEntry {
    /// The file, if a table was built.
    pub fn file(&self) -> Option<&str> {
        match self {
            ExpansionsEntry::Built { file, .. } => Some(file),
            ExpansionsEntry::Skipped { .. } => None,
        }
    }

    /// Checks `bytes` against a built entry (see [`verify_bytes`]).
    pub fn verify(&self, bytes: &[u8]) -> Result<(), ManifestError> {
        match self {
            ExpansionsEntry::Built {
                file,
                bytes: size,
                sha256,
                ..
            } => verify_bytes(file, bytes, *size, sha256),
            ExpansionsEntry::Skipped { source, .. } => Err(ManifestError::Mismatch {
                file: source.clone(),
                expected: "no expansion file".into(),
                found: format!("{} bytes", bytes.len()),
            }),
        }
    }
}

/// What one query word was expanded to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expansion {
    /// The query word (lowercased) that matched.
    pub from: String,
    /// What it adds, best first (removed ones left out).
    pub to: Vec<Target>,
}

/// The idf BM25 uses (Lucene's), so weights and scoring agree on what "specific" means.
fn idf(df: u32, n: usize) -> f32 {
    let (df, n) = (df as f32, n as f32);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// A thesaurus made ready for [`ExpansionTable::build`]: its usable single words stemmed once, and the senses
/// (synonym sets) per stem counted. Stems depend on the analyzer only, not on the law, so a build of thousands of
/// laws prepares once: stemming the whole thesaurus again for every law was most of a lexical build's time.
#[derive(Clone, Debug)]
pub struct PreparedThesaurus {
    analyzer: AnalyzerConfig,
    /// Per synonym set, its terms that may be lay words (single words without a [`DROP_TAGS`] label).
    sets: Vec<Vec<PreparedTerm>>,
    /// Synonym sets each stem occurs in.
    senses: HashMap<String, u32>,
}

#[derive(Clone, Debug)]
struct PreparedTerm {
    stem: String,
    word: String,
    /// Only [`TARGET_TAGS`] labels: it may also be a target.
    target: bool,
}

impl PreparedThesaurus {
    /// Stems `thesaurus` with the analyzer `analyzer` (that of the BM25 indexes it will meet).
    pub fn new(thesaurus: &Thesaurus, analyzer: AnalyzerConfig) -> Self {
        let stemmer = Analyzer::new(analyzer);
        let stem = |t: &Term| -> Option<String> {
            stemmer
                .stem_word(&t.text.to_lowercase())
                .filter(|s| s.len() <= MAX_TERM_BYTES)
        };
        let mut senses: HashMap<String, u32> = HashMap::new();
        let mut sets = Vec::with_capacity(thesaurus.sets.len());
        for set in &thesaurus.sets {
            let mut stems = HashSet::new();
            let mut usable = Vec::new();
            for term in set.iter().filter(|t| t.is_single_word()) {
                let Some(s) = stem(term) else { continue };
                stems.insert(s.clone());
                if !term.tags.iter().any(|g| DROP_TAGS.contains(&g.as_str())) {
                    usable.push(PreparedTerm {
                        stem: s,
                        word: term.text.clone(),
                        target: term.tags.iter().all(|g| TARGET_TAGS.contains(&g.as_str())),
                    });
                }
            }
            for s in stems {
                *senses.entry(s).or_insert(0) += 1;
            }
            sets.push(usable);
        }
        PreparedThesaurus {
            analyzer,
            sets,
            senses,
        }
    }

    /// The analyzer it was stemmed with.
    pub fn analyzer(&self) -> AnalyzerConfig {
        self.analyzer
    }
}

impl ExpansionTable {
    /// Keeps what of `thesaurus` can help the law indexed by `index` (see the module docs); `headings` are its
    /// section headings.
    ///
    /// # Panics
    /// When `thesaurus` was prepared for another analyzer than `index`'s ([`PreparedThesaurus::analyzer`]).
    pub fn build(
        thesaurus: &PreparedThesaurus,
        index: &Bm25Index,
        headings: &[&str],
        params: TableParams,
    ) -> Self {
        assert_eq!(
            thesaurus.analyzer,
            index.analyzer(),
            "the thesaurus was stemmed by another analyzer than the index's"
        );
        let n = index.len();
        // A word in one section is as specific as a word can be, however small the law.
        let max_df = ((params.max_df_fraction * n as f32).floor() as u32).max(1);
        let heading_terms: HashSet<String> =
            headings.iter().flat_map(|h| index.query_terms(h)).collect();
        // key -> target term -> (word, weight, in a heading)
        let mut table: BTreeMap<String, HashMap<String, (String, f32, bool)>> = BTreeMap::new();
        for set in &thesaurus.sets {
            let targets: Vec<(&str, &str, f32)> = set
                .iter()
                .filter(|t| t.target)
                .filter_map(|t| {
                    let df = index.doc_freq(&t.stem);
                    (df > 0 && df <= max_df)
                        .then(|| (t.stem.as_str(), t.word.as_str(), idf(df, n) / idf(1, n)))
                })
                .collect();
            if targets.is_empty() {
                continue;
            }
            for source in set {
                let key = &source.stem;
                if index.doc_freq(key) > params.max_source_df {
                    continue;
                }
                // Senses per lay word: the sets it occurs in. Each sense's targets get 1/senses of the trust, so
                // a polysemous word (`kaputt`: broken, exhausted, ruined) adds little of each.
                let trust = 1.0 / thesaurus.senses.get(key).copied().unwrap_or(1).max(1) as f32;
                for &(term, word, specificity) in &targets {
                    if term == key {
                        continue;
                    }
                    let weight = specificity * trust;
                    let slot = table.entry(key.clone()).or_default();
                    let heading = heading_terms.contains(term);
                    slot.entry(term.to_string())
                        .and_modify(|e| e.1 = e.1.max(weight))
                        .or_insert_with(|| (word.to_string(), weight, heading));
                }
            }
        }
        let entries = table
            .into_iter()
            .map(|(key, targets)| {
                let mut targets: Vec<(String, (String, f32, bool))> = targets.into_iter().collect();
                targets.sort_by(|a, b| {
                    (b.1 .2, b.1 .1)
                        .partial_cmp(&(a.1 .2, a.1 .1))
                        .expect("finite weights")
                        .then_with(|| a.0.cmp(&b.0))
                });
                targets.truncate(params.max_targets.min(MAX_TARGETS_LIMIT));
                let targets = targets
                    .into_iter()
                    .map(|(term, (word, weight, _))| Target { term, word, weight })
                    .collect();
                Entry { key, targets }
            })
            .collect();
        Self {
            analyzer: index.analyzer(),
            entries,
        }
    }

    /// Lay words in the table.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All entries, sorted by key.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The targets of a lay word's stem.
    pub fn get(&self, key: &str) -> Option<&[Target]> {
        self.entries
            .binary_search_by(|e| e.key.as_str().cmp(key))
            .ok()
            .map(|i| self.entries[i].targets.as_slice())
    }

    fn validate(&self) -> Result<(), ExpansionError> {
        let fail = |what| Err(ExpansionError::Invalid(what));
        if self.entries.len() > MAX_KEYS {
            return fail("too many lay words");
        }
        if !self.entries.windows(2).all(|w| w[0].key < w[1].key) {
            return fail("lay words not sorted");
        }
        for e in &self.entries {
            if e.targets.is_empty() || e.targets.len() > MAX_TARGETS_LIMIT {
                return fail("a lay word with no or too many targets");
            }
            if e.key.is_empty() || e.key.len() > MAX_TERM_BYTES {
                return fail("a lay word empty or too long");
            }
            for t in &e.targets {
                if !(t.weight > 0.0 && t.weight <= 1.0) {
                    return fail("a weight outside (0, 1]");
                }
                if t.term.is_empty()
                    || t.term.len() > MAX_TERM_BYTES
                    || t.word.len() > MAX_TERM_BYTES
                {
                    return fail("a target empty or too long");
                }
            }
        }
        Ok(())
    }

    /// The targets for one lowercased query word: by its stem, else by the longest known head of a compound.
    fn lookup(&self, analyzer: &Analyzer, word: &str) -> Option<&[Target]> {
        let stem = analyzer.stem_word(word)?;
        if let Some(t) = self.get(&stem) {
            return Some(t);
        }
        let chars: Vec<usize> = stem.char_indices().map(|(i, _)| i).collect();
        (MIN_PART_CHARS..chars.len().saturating_sub(MIN_PART_CHARS - 1))
            .find_map(|start| self.get(&stem[chars[start]..]))
    }
}

/// The expansions of `query`: per query word the table knows, its targets except those in `removed` (words or
/// stems the user took away, compared by stem) and except words the query already has. A target added by two
/// words is listed once, under the first.
pub fn expand(query: &str, table: &ExpansionTable, removed: &[String]) -> Vec<Expansion> {
    let analyzer = Analyzer::new(table.analyzer);
    let words: Vec<String> = Analyzer::words(query).collect();
    let mut seen: HashSet<String> = words.iter().filter_map(|w| analyzer.stem_word(w)).collect();
    seen.extend(
        removed
            .iter()
            .filter_map(|r| analyzer.stem_word(&r.to_lowercase())),
    );
    let mut out = Vec::new();
    for word in &words {
        let Some(targets) = table.lookup(&analyzer, word) else {
            continue;
        };
        let to: Vec<Target> = targets
            .iter()
            .filter(|t| seen.insert(t.term.clone()))
            .cloned()
            .collect();
        if !to.is_empty() {
            out.push(Expansion {
                from: word.clone(),
                to,
            });
        }
    }
    out
}

/// BM25 query terms: the query's own terms at weight 1, each expansion target at `weight` times its own weight.
pub fn weighted_terms(
    index: &Bm25Index,
    query: &str,
    expansions: &[Expansion],
    weight: f32,
) -> Vec<(String, f32)> {
    let mut terms: Vec<(String, f32)> = index
        .query_terms(query)
        .into_iter()
        .map(|t| (t, 1.0))
        .collect();
    terms.extend(
        expansions
            .iter()
            .flat_map(|e| &e.to)
            .map(|t| (t.term.clone(), weight * t.weight)),
    );
    terms
}

/// The text embedded for the second query vector of dense expansion (`paragraf eval`, measured in the README):
/// the added words first, so a question cut at the encoder's length limit keeps them; the query alone when
/// nothing was added.
pub fn expanded_text(query: &str, expansions: &[Expansion]) -> String {
    let words: Vec<&str> = expansions
        .iter()
        .flat_map(|e| e.to.iter().map(|t| t.word.as_str()))
        .collect();
    if words.is_empty() {
        query.to_string()
    } else {
        format!("{}. {query}", words.join(" "))
    }
}

/// Fuses the query's vector with the expanded text's: `own + weight · expanded`, unit length (0: `own`).
pub fn mix_vectors(own: &[f32], expanded: &[f32], weight: f32) -> Vec<f32> {
    let mut mixed: Vec<f32> = own
        .iter()
        .zip(expanded)
        .map(|(a, b)| a + weight * b)
        .collect();
    let norm = mixed.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        mixed.iter_mut().for_each(|x| *x /= norm);
    }
    mixed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::bm25::Bm25Params;

    #[test]
    fn expanded_text_puts_the_added_words_first_and_mixing_keeps_unit_length() {
        let expansions = vec![Expansion {
            from: "kaution".into(),
            to: vec![Target {
                term: "sicherheitsleist".into(),
                word: "Sicherheitsleistung".into(),
                weight: 0.5,
            }],
        }];
        assert_eq!(
            expanded_text("Kaution zurück?", &expansions),
            "Sicherheitsleistung. Kaution zurück?"
        );
        assert_eq!(expanded_text("Miete", &[]), "Miete");
        assert_eq!(mix_vectors(&[0.6, 0.8], &[1.0, 0.0], 0.0), vec![0.6, 0.8]);
        let mixed = mix_vectors(&[1.0, 0.0], &[0.0, 1.0], 1.0);
        assert!((mixed[0] - mixed[1]).abs() < 1e-6 && (mixed[0] - 0.70710677).abs() < 1e-6);
    }

    const DOCS: [&str; 5] = [
        "§ 551 Begrenzung und Anlage von Mietsicherheiten. Hat der Mieter dem Vermieter für die Erfüllung seiner Pflichten Sicherheit zu leisten, so darf diese höchstens das Dreifache der Miete betragen.",
        "§ 535 Inhalt und Hauptpflichten des Mietvertrags. Der Vermieter überlässt die Mietsache. Der Mieter zahlt die Miete.",
        "§ 833 Haftung des Tierhalters. Wird durch ein Tier ein Mensch getötet, so ist der Halter verpflichtet.",
        "§ 232 Arten der Sicherheitsleistung. Wer Sicherheit zu leisten hat, kann dies durch Hinterlegung bewirken.",
        "§ 611a Arbeitsvertrag. Der Arbeitnehmer ist im Dienste eines anderen verpflichtet. Der Arbeitgeber zahlt.",
    ];

    fn index() -> Bm25Index {
        Bm25Index::build(&DOCS, AnalyzerConfig::default(), Bm25Params::default())
    }

    fn thesaurus() -> Thesaurus {
        Thesaurus::parse(
            "# OpenThesaurus, LGPL\n\
             Einsatz;Kaution;Pfand;Sicherheitsleistung;Hinterlegung;Sicherheit\n\
             Boss (ugs.);Chef;Arbeitgeber;Vorgesetzter\n\
             Köter (ugs.);Hund;Wauwau (Kindersprache)\n\
             Miete (fig.);Pacht;Kohle (ugs.)\n\
             Mieter (ugs.);Knast (ugs.)\n",
        )
        .unwrap()
    }

    fn table() -> ExpansionTable {
        let index = index();
        let headings = ["Arten der Sicherheitsleistung"];
        // 5 documents: a df cap of 1 section.
        let params = TableParams {
            max_df_fraction: 0.2,
            ..TableParams::default()
        };
        ExpansionTable::build(
            &PreparedThesaurus::new(&thesaurus(), index.analyzer()),
            &index,
            &headings,
            params,
        )
    }

    fn words(e: &Expansion) -> Vec<&str> {
        e.to.iter().map(|t| t.word.as_str()).collect()
    }

    #[test]
    fn keeps_only_targets_the_law_has_and_lay_words_it_lacks() {
        let table = table();
        let keys: Vec<&str> = table.entries().iter().map(|e| e.key.as_str()).collect();
        // Hund: no synonym in the law. Miete/Mieter: in the law already. Knast: only a colloquial target.
        assert_eq!(
            keys,
            ["boss", "chef", "einsatz", "kaution", "pfand", "vorgesetzt"]
        );
        let kaution = table.get("kaution").unwrap();
        let words: Vec<&str> = kaution.iter().map(|t| t.word.as_str()).collect();
        // The heading's word first, then by specificity; Sicherheit (2 of 5 sections) is too common.
        assert_eq!(words, ["Sicherheitsleistung", "Hinterlegung"]);
        assert!(kaution.iter().all(|t| t.weight > 0.0 && t.weight <= 1.0));
        assert_eq!(table.get("chef").unwrap()[0].word, "Arbeitgeber");
    }

    #[test]
    fn expands_inflections_and_compound_heads_and_honours_removals() {
        let table = table();
        let e = expand("Mein Chef behält die Kautionen", &table, &[]);
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].from.as_str(), words(&e[0])),
            ("chef", vec!["Arbeitgeber"])
        );
        assert_eq!(e[1].from, "kautionen");
        let e = expand("Mietkaution", &table, &[]);
        assert_eq!(words(&e[0]), ["Sicherheitsleistung", "Hinterlegung"]);
        let e = expand("Mietkaution", &table, &["sicherheitsleistung".into()]);
        assert_eq!(words(&e[0]), ["Hinterlegung"]);
        assert!(expand(
            "Mietkaution",
            &table,
            &["Sicherheitsleistung".into(), "Hinterlegung".into()]
        )
        .is_empty());
        // A word the query already has is not added again; nothing for words the table lacks.
        let e = expand("Kaution Hinterlegung", &table, &[]);
        assert_eq!(words(&e[0]), ["Sicherheitsleistung"]);
        assert!(expand("Hund Mieter", &table, &[]).is_empty());
    }

    #[test]
    fn expanded_terms_rank_the_statute_word_lower_than_own_words() {
        let index = index();
        let table = table();
        let query = "Kaution";
        assert!(index.search(query, 5).is_empty());
        let terms = weighted_terms(&index, query, &expand(query, &table, &[]), 0.3);
        let hits = index.search_weighted(&terms, 5);
        assert_eq!(hits[0].index, 3);
        // Expanded terms count less than the same word typed.
        let own = index.search("Hinterlegung", 1)[0].score;
        let expanded = index.search_weighted(&[("hinterleg".into(), 0.3)], 1)[0].score;
        assert!((expanded - 0.3 * own).abs() < 1e-5, "{expanded} vs {own}");
    }

    #[test]
    fn the_manifest_records_the_table_or_why_there_is_none() {
        let skipped = ExpansionsEntry::Skipped {
            source: "/nope/openthesaurus.txt".into(),
            reason: "not found".into(),
        };
        assert_eq!(
            serde_json::to_string(&skipped).unwrap(),
            r#"{"status":"skipped","source":"/nope/openthesaurus.txt","reason":"not found"}"#
        );
        let law = |expansions: &str| {
            format!(
                r#"{{"laws":[{{"law":"BGB","title":"t","slug":"bgb","file":"BGB.law.a.pgb","bytes":1,"sha256":"","expansions":{expansions}}}],"bundles":[]}}"#
            )
        };
        let built = law(
            r#"{"status":"built","file":"BGB.exp.b.pgb","bytes":3,"sha256":"","source":"s","terms":2}"#,
        );
        let manifest = crate::manifest::Manifest::parse(built.as_bytes()).unwrap();
        assert_eq!(
            manifest.files().collect::<Vec<_>>(),
            ["BGB.law.a.pgb", "BGB.exp.b.pgb"]
        );
        let unsafe_name =
            law(r#"{"status":"built","file":"../x","bytes":3,"sha256":"","source":"s","terms":2}"#);
        assert!(crate::manifest::Manifest::parse(unsafe_name.as_bytes()).is_err());
    }

    #[test]
    fn file_round_trip_and_bad_input() {
        let file = ExpansionFile {
            generator: "test".into(),
            law: "BGB".into(),
            source: "openthesaurus.txt".into(),
            notice: thesaurus().notice,
            params: TableParams::default(),
            table: table(),
        };
        let bytes = file.to_bytes();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(ExpansionFile::from_bytes(&bytes).unwrap(), file);
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            ExpansionFile::from_bytes(&flipped),
            Err(ExpansionError::Bundle(BundleError::Checksum { .. }))
        ));
        assert_eq!(
            ExpansionFile::from_bytes(b"<html>not found</html>....").unwrap_err().to_string(),
            "not a Paragraf expansion file: the file starts with \"<html>no\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut unsorted = file.clone();
        unsorted.table.entries.reverse();
        assert_eq!(
            ExpansionFile::from_bytes(&unsorted.to_bytes())
                .unwrap_err()
                .to_string(),
            "corrupt expansion file: lay words not sorted. Rebuild with `paragraf build`"
        );
        let mut heavy = file;
        heavy.table.entries[0].targets[0].weight = 2.0;
        assert_eq!(
            ExpansionFile::from_bytes(&heavy.to_bytes()).unwrap_err(),
            ExpansionError::Invalid("a weight outside (0, 1]")
        );
    }
}
