//! Query expansion: lay words meet statute words.
//!
//! Laypeople write `Kaution`, `Handy`, `Chef`; the BGB says `Sicherheit`, `Mobiltelefon` (nowhere), `Arbeitgeber`.
//! BM25 cannot bridge that. A thesaurus ([`thesaurus`], OpenThesaurus) gives, per lay word, only the synonyms
//! that can help *this* law ([`ExpansionTable::get`]):
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
//! **What ships.** Not tables: one [`ThesaurusFile`] per bundle folder (magic `PGRF-THS`, the bundles' framing),
//! the thesaurus stemmed once ([`PreparedThesaurus`], words ordered by stem) with the build's [`TableParams`] and
//! the thesaurus's LGPL notice. A law's [`ExpansionTable`] is that file plus the law's own index
//! ([`crate::LawIndex::expansion_table`]), and works a lay word out when a query has it: the word's
//! synonym sets against the law's document frequencies, a few microseconds. So it is the same wherever it is
//! loaded, and opening a law costs only its headings' terms. A table per law was shipped before: small laws lack
//! most thesaurus words, so each got tens of KB of lay words, and 6,877 laws carried 450 MB of tables where one
//! file of 0.74 MB (compressed) now serves them all (the BGB's 13,395 lay words give the same targets and weights as its
//! shipped table did).

pub mod thesaurus;

#[cfg(test)]
use paragraf_format::frame::HEADER_LEN;
use paragraf_format::frame::{BundleError, FileKind};
use paragraf_index::bm25::{Bm25Index, Terms};
use paragraf_law::analyzer::{Analyzer, AnalyzerConfig, MIN_PART_CHARS};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
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

/// Lay word -> statute words for one law (see the module docs), worked out per word when a query asks: the
/// thesaurus's synonym sets of that word against the law's index. Nothing is computed for a law until it is
/// searched, so opening a law costs only its headings' terms.
#[derive(Clone, Debug)]
pub struct ExpansionTable {
    /// The analyzer the stems were made with (the law's BM25 analyzer).
    pub analyzer: AnalyzerConfig,
    file: Arc<ThesaurusFile>,
    /// Index terms of the law's section headings: a target a heading names comes first.
    heading_terms: HashSet<String>,
}

/// The expansion file of a bundle folder: the prepared thesaurus every law's table is built from, plus where it
/// came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ThesaurusFile {
    /// The tool that wrote it.
    pub generator: String,
    /// The thesaurus used (file name and first notice line).
    pub source: String,
    /// The thesaurus's copyright and licence notice (LGPL: it travels with what is derived from it).
    pub notice: String,
    /// The build parameters every law's table is built with.
    pub params: TableParams,
    /// The thesaurus, stemmed.
    pub thesaurus: PreparedThesaurus,
}

/// A thesaurus file (compressed from version 4 on).
pub const KIND: FileKind = FileKind::new(b"PGRF-THS", "thesaurus file", 4, 2).compressed_since(4);

/// Most distinct words a thesaurus file may hold (OpenThesaurus has about 100,000).
pub const MAX_WORDS: usize = 1 << 21;
/// Most synonym sets a thesaurus file may hold (OpenThesaurus has about 35,000).
pub const MAX_SETS: usize = 1 << 20;
/// Most words one synonym set may hold.
pub const MAX_SET_WORDS: usize = 4096;

/// Why bytes are not a usable thesaurus file, or why it cannot serve a law.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpansionError {
    /// Framing or decoding failed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Decoded, but breaks its invariants.
    #[error("corrupt thesaurus file: {0}. Rebuild with `paragraf build`")]
    Invalid(&'static str),
    /// Stemmed by another analyzer than the law's index uses.
    #[error("the thesaurus file was stemmed with another analyzer ({file:?}) than the law's index ({index:?}). Most likely it was written by another version of Paragraf; rebuild with `paragraf build`")]
    Analyzer {
        /// The file's analyzer.
        file: AnalyzerConfig,
        /// The index's.
        index: AnalyzerConfig,
    },
}

/// How a word of a synonym set may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Labelled with a [`DROP_TAGS`] label: it only counts as a sense of its stem.
    Dropped = 0,
    /// A lay word, never a target.
    Lay = 1,
    /// Only [`TARGET_TAGS`] labels: a lay word that may also be a target.
    Target = 2,
}

/// One word of a synonym set: an index into [`PreparedThesaurus`]'s words, and its role there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SetWord {
    word: u32,
    role: Role,
}

/// The file's payload: each distinct word once, ordered by stem, its stem written as the bytes it shares with the
/// lowercased word plus the rest (most stems are a prefix), synonym sets as `word index * 4 + role`.
/// Words and stems are borrowed from the inflated payload as they decode (no allocation per word).
#[derive(Serialize, Deserialize)]
struct Wire<'a> {
    generator: String,
    source: String,
    notice: String,
    params: TableParams,
    analyzer: AnalyzerConfig,
    #[serde(borrow)]
    words: Vec<&'a str>,
    #[serde(borrow)]
    stems: Vec<(u32, &'a str)>,
    sets: Vec<Vec<u32>>,
}

impl ThesaurusFile {
    /// Encodes with magic, version and checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        let t = &self.thesaurus;
        let stems = t
            .words
            .iter()
            .zip(t.stems.iter())
            .map(|(word, stem)| {
                let lower = word.to_lowercase();
                let shared = lower
                    .char_indices()
                    .map(|(i, c)| i + c.len_utf8())
                    .take_while(|&end| stem.as_bytes().get(..end) == Some(&lower.as_bytes()[..end]))
                    .last()
                    .unwrap_or(0);
                (shared as u32, &stem[shared..])
            })
            .collect();
        let sets = t
            .sets
            .iter()
            .map(|set| set.iter().map(|w| w.word * 4 + w.role as u32).collect())
            .collect();
        KIND.encode(&Wire {
            generator: self.generator.clone(),
            source: self.source.clone(),
            notice: self.notice.clone(),
            params: self.params,
            analyzer: t.analyzer,
            words: t.words.iter().collect(),
            stems,
            sets,
        })
    }

    /// Decodes and validates.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, ExpansionError> {
        ThesaurusDecoder::new(&ThesaurusFile::payload(bytes)?)?.finish()
    }

    /// Checks the frame of a thesaurus file and returns its payload (inflated), which a [`ThesaurusDecoder`]
    /// decodes.
    pub fn payload(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, ExpansionError> {
        Ok(KIND.payload(bytes)?)
    }
}

/// Decodes a thesaurus file a part at a time, for a page that must not hold its thread for the whole file (the
/// BGB folder's 74,483 words were one task of about 50 ms in the browser): [`ThesaurusDecoder::step`] between other
/// work, then [`ThesaurusDecoder::finish`]. [`ThesaurusFile::from_bytes`] does it in one go. It decodes the
/// file's payload ([`ThesaurusFile::payload`]) and borrows its words from it.
pub struct ThesaurusDecoder<'a> {
    wire: Wire<'a>,
    words: Terms,
    stems: Terms,
    /// One buffer for every stem: the first `shared` bytes of the lowercased word, then the rest.
    stem: String,
    sets: Vec<Vec<SetWord>>,
}

impl<'a> ThesaurusDecoder<'a> {
    /// Decodes a thesaurus file's `payload` ([`ThesaurusFile::payload`]; its words borrowed from it) and checks
    /// its counts.
    pub fn new(payload: &'a [u8]) -> Result<Self, ExpansionError> {
        let wire: Wire = paragraf_format::frame::decode_payload(payload)?;
        let fail = |what| Err(ExpansionError::Invalid(what));
        if wire.words.len() > MAX_WORDS || wire.sets.len() > MAX_SETS {
            return fail("too many words or synonym sets");
        }
        if wire.stems.len() != wire.words.len() {
            return fail("not one stem per word");
        }
        if !(wire.params.max_targets <= MAX_TARGETS_LIMIT
            && wire.params.max_df_fraction.is_finite()
            && wire.params.max_df_fraction >= 0.0)
        {
            return fail("table parameters out of range");
        }
        // Room from the bytes present (a stem is about as long as its word): a corrupt `shared` cannot reserve.
        let word_bytes = wire.words.iter().map(|w| w.len()).sum();
        Ok(ThesaurusDecoder {
            words: Terms::with_capacity(wire.words.len(), word_bytes),
            stems: Terms::with_capacity(wire.stems.len(), word_bytes),
            stem: String::new(),
            sets: Vec::with_capacity(wire.sets.len()),
            wire,
        })
    }

    /// Decodes up to `limit` (at least one) more words and synonym sets (words first); `true` once all are.
    pub fn step(&mut self, limit: usize) -> Result<bool, ExpansionError> {
        let limit = limit.max(1);
        let fail = |what| Err(ExpansionError::Invalid(what));
        let ThesaurusDecoder {
            wire,
            words,
            stems,
            stem,
            sets,
        } = self;
        let from = words.len();
        let to = from.saturating_add(limit).min(wire.words.len());
        for (&word, &(shared, rest)) in wire.words[from..to].iter().zip(&wire.stems[from..to]) {
            let shared = shared as usize;
            if word.is_empty() || word.len() > MAX_TERM_BYTES {
                return fail("a word empty, too long or with a stem that does not fit it");
            }
            stem.clear();
            match word.as_bytes().get(..shared) {
                // Mostly: an ASCII prefix (a capitalised noun), lowercased byte by byte.
                Some(prefix) if prefix.is_ascii() => {
                    stem.push_str(&word[..shared]);
                    stem.make_ascii_lowercase();
                }
                _ => {
                    let lower = if word.chars().any(char::is_uppercase) {
                        std::borrow::Cow::Owned(word.to_lowercase())
                    } else {
                        std::borrow::Cow::Borrowed(word)
                    };
                    if !lower.is_char_boundary(shared) {
                        return fail("a word empty, too long or with a stem that does not fit it");
                    }
                    stem.push_str(&lower[..shared]);
                }
            }
            stem.push_str(rest);
            if stem.is_empty() || stem.len() > MAX_TERM_BYTES {
                return fail("a stem empty or too long");
            }
            if stems.last().is_some_and(|last| last > stem.as_str()) {
                return fail("words not ordered by stem");
            }
            words.push(word);
            stems.push(stem);
        }
        let limit = limit - (to - from);
        let from = sets.len();
        let to = from.saturating_add(limit).min(wire.sets.len());
        for set in &wire.sets[from..to] {
            if set.len() > MAX_SET_WORDS {
                return fail("a synonym set too large");
            }
            let mut set_words = Vec::with_capacity(set.len());
            for &code in set {
                let role = match code % 4 {
                    0 => Role::Dropped,
                    1 => Role::Lay,
                    2 => Role::Target,
                    _ => return fail("a word with an unknown role"),
                };
                if code / 4 >= wire.words.len() as u32 {
                    return fail("a synonym set names a word the file lacks");
                }
                set_words.push(SetWord {
                    word: code / 4,
                    role,
                });
            }
            sets.push(set_words);
        }
        Ok(words.len() == wire.words.len() && sets.len() == wire.sets.len())
    }

    /// Decodes what is left and prepares the thesaurus.
    pub fn finish(mut self) -> Result<ThesaurusFile, ExpansionError> {
        self.step(usize::MAX)?;
        let ThesaurusDecoder {
            wire,
            words,
            stems,
            sets,
            ..
        } = self;
        Ok(ThesaurusFile {
            generator: wire.generator,
            source: wire.source,
            notice: wire.notice,
            params: wire.params,
            thesaurus: PreparedThesaurus::from_parts(wire.analyzer, words, stems, sets),
        })
    }
}

/// What `manifest.json` records about a folder's query expansion (`paragraf_core::manifest::Manifest::expansions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ExpansionsEntry {
    /// A thesaurus file was written.
    Built(ThesaurusEntry),
    /// None was: the thesaurus was missing or malformed.
    Skipped {
        /// The thesaurus path tried.
        source: String,
        /// Why it was not used.
        reason: String,
    },
}

/// The thesaurus file a build wrote ([`ExpansionsEntry::Built`]); checked with `paragraf_core::manifest::Listed`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThesaurusEntry {
    /// File name (content-hashed).
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: String,
    /// The thesaurus it was made from.
    pub source: String,
    /// Distinct words in the file.
    pub terms: usize,
}

impl ExpansionsEntry {
    /// The file, if one was written.
    pub fn built(&self) -> Option<&ThesaurusEntry> {
        match self {
            ExpansionsEntry::Built(entry) => Some(entry),
            ExpansionsEntry::Skipped { .. } => None,
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

/// A thesaurus made ready for [`ExpansionTable`]: its single words stemmed once, and the senses (synonym
/// sets) per stem counted. Stems depend on the analyzer only, not on the law, so a build prepares once and ships
/// the result ([`ThesaurusFile`]): stemming the whole thesaurus again for every law was most of a lexical build's
/// time.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedThesaurus {
    analyzer: AnalyzerConfig,
    /// Distinct single words ordered by stem (then word), and each one's stem: a stem's words are one run.
    words: Terms,
    stems: Terms,
    /// Per synonym set, its stemmable single words in thesaurus order.
    sets: Vec<Vec<SetWord>>,
    /// Per word, the synonym sets its stem occurs in (derived from `sets`).
    senses: Vec<u32>,
    /// Per word, the sets it is usable in, ascending: `usable_in[starts[w]..starts[w + 1]]` (derived).
    starts: Vec<u32>,
    usable_in: Vec<u32>,
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
        let mut stemmed: HashMap<&str, String> = HashMap::new();
        let mut roles: Vec<Vec<(&str, Role)>> = Vec::with_capacity(thesaurus.sets.len());
        for set in &thesaurus.sets {
            let mut words = Vec::new();
            for term in set.iter().filter(|t| t.is_single_word()) {
                if term.text.len() > MAX_TERM_BYTES {
                    continue;
                }
                if !stemmed.contains_key(term.text.as_str()) {
                    let Some(s) = stem(term) else { continue };
                    stemmed.insert(&term.text, s);
                }
                let role = if term.tags.iter().any(|g| DROP_TAGS.contains(&g.as_str())) {
                    Role::Dropped
                } else if term.tags.iter().all(|g| TARGET_TAGS.contains(&g.as_str())) {
                    Role::Target
                } else {
                    Role::Lay
                };
                words.push((term.text.as_str(), role));
            }
            roles.push(words);
        }
        let mut order: Vec<(String, &str)> = stemmed.into_iter().map(|(w, s)| (s, w)).collect();
        order.sort_unstable();
        let index: HashMap<&str, u32> = order
            .iter()
            .enumerate()
            .map(|(i, (_, w))| (*w, i as u32))
            .collect();
        let sets = roles
            .into_iter()
            .map(|set| {
                set.into_iter()
                    .map(|(w, role)| SetWord {
                        word: index[w],
                        role,
                    })
                    .collect()
            })
            .collect();
        let words: Vec<&str> = order.iter().map(|(_, w)| *w).collect();
        let stems: Vec<&str> = order.iter().map(|(s, _)| s.as_str()).collect();
        Self::from_parts(analyzer, Terms::new(&words), Terms::new(&stems), sets)
    }

    /// The thesaurus from its words (ordered by stem) and sets; derives the rest with integer work only, since
    /// the browser does this on every cold start.
    fn from_parts(
        analyzer: AnalyzerConfig,
        words: Terms,
        stems: Terms,
        sets: Vec<Vec<SetWord>>,
    ) -> Self {
        // Stems are runs: number them, then count each stem once per set it occurs in (any role).
        let mut stem_of = Vec::with_capacity(stems.len());
        for (i, s) in stems.iter().enumerate() {
            let next = match stem_of.last() {
                Some(&last) if stems.get(i - 1) == s => last,
                Some(&last) => last + 1,
                None => 0,
            };
            stem_of.push(next);
        }
        let distinct = stem_of.last().map_or(0, |&l| l as usize + 1);
        let (mut stem_senses, mut stem_seen) = (vec![0u32; distinct], vec![u32::MAX; distinct]);
        let (mut counts, mut word_seen) =
            (vec![0u32; words.len() + 1], vec![u32::MAX; words.len()]);
        for (i, set) in sets.iter().enumerate() {
            let i = i as u32;
            for w in set {
                let sid = stem_of[w.word as usize] as usize;
                if stem_seen[sid] != i {
                    stem_seen[sid] = i;
                    stem_senses[sid] += 1;
                }
                if w.role != Role::Dropped && word_seen[w.word as usize] != i {
                    word_seen[w.word as usize] = i;
                    counts[w.word as usize + 1] += 1;
                }
            }
        }
        let senses = stem_of
            .iter()
            .map(|&sid| stem_senses[sid as usize])
            .collect();
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let starts = counts.clone();
        let mut usable_in = vec![0u32; counts.last().copied().unwrap_or(0) as usize];
        word_seen.fill(u32::MAX);
        for (i, set) in sets.iter().enumerate() {
            let i = i as u32;
            for w in set.iter().filter(|w| w.role != Role::Dropped) {
                let word = w.word as usize;
                if word_seen[word] != i {
                    word_seen[word] = i;
                    usable_in[counts[word] as usize] = i;
                    counts[word] += 1;
                }
            }
        }
        PreparedThesaurus {
            analyzer,
            words,
            stems,
            sets,
            senses,
            starts,
            usable_in,
        }
    }

    /// The words whose stem is `stem` (one run, as words are ordered by stem).
    fn words_of(&self, stem: &str) -> std::ops::Range<usize> {
        self.stems.partition_point(|s| s < stem)..self.stems.partition_point(|s| s <= stem)
    }

    /// The analyzer it was stemmed with.
    pub fn analyzer(&self) -> AnalyzerConfig {
        self.analyzer
    }

    /// Distinct single words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether it has no words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// A set's usable words (not [`Role::Dropped`]) as (stem, word, may be a target, senses of the stem).
    fn usable<'a>(
        &'a self,
        set: &'a [SetWord],
    ) -> impl Iterator<Item = (&'a str, &'a str, bool, u32)> + 'a {
        set.iter().filter(|w| w.role != Role::Dropped).map(|w| {
            let i = w.word as usize;
            let (stem, word) = (self.stems.get(i), self.words.get(i));
            (stem, word, w.role == Role::Target, self.senses[i])
        })
    }
}

/// The index terms of section headings, sorted: each distinct heading word analysed once, as a query is
/// (headings repeat their words). A law bundle stores them with its index ([`crate::PrebuiltIndex`]).
pub fn heading_terms(index: &Bm25Index, headings: &[&str]) -> Vec<String> {
    let words: HashSet<String> = headings.iter().flat_map(|h| Analyzer::words(h)).collect();
    let analyzer = Analyzer::new(index.analyzer());
    let terms: HashSet<String> = words
        .iter()
        .flat_map(|w| analyzer.terms(w, Some(index)))
        .collect();
    let mut terms: Vec<String> = terms.into_iter().collect();
    terms.sort_unstable();
    terms
}

impl ExpansionTable {
    /// The table of the law indexed by `index` whose section headings have the index terms `heading_terms`
    /// ([`heading_terms`]), from the folder's thesaurus file (its parameters are the build's).
    pub fn new(
        file: Arc<ThesaurusFile>,
        index: &Bm25Index,
        heading_terms: impl IntoIterator<Item = String>,
    ) -> Result<Self, ExpansionError> {
        let (theirs, ours) = (file.thesaurus.analyzer, index.analyzer());
        if theirs != ours {
            return Err(ExpansionError::Analyzer {
                file: theirs,
                index: ours,
            });
        }
        Ok(Self {
            analyzer: ours,
            file,
            heading_terms: heading_terms.into_iter().collect(),
        })
    }

    /// The thesaurus file it reads.
    pub fn file(&self) -> &ThesaurusFile {
        &self.file
    }

    /// The targets of a lay word's stem in the law indexed by `index`, best first; `None` when the law uses the
    /// word itself or has none of its synonyms (see the module docs).
    pub fn get(&self, index: &Bm25Index, key: &str) -> Option<Vec<Target>> {
        let thesaurus = &self.file.thesaurus;
        let params = self.file.params;
        let words = thesaurus.words_of(key);
        if words.is_empty() || index.doc_freq(key) > params.max_source_df {
            return None;
        }
        let n = index.len();
        // A word in one section is as specific as a word can be, however small the law.
        let max_df = ((params.max_df_fraction * n as f32).floor() as u32).max(1);
        // Senses per lay word: the sets it occurs in. Each sense's targets get 1/senses of the trust, so a
        // polysemous word (`kaputt`: broken, exhausted, ruined) adds little of each.
        let trust = 1.0 / thesaurus.senses[words.start].max(1) as f32;
        let mut sets: Vec<u32> = words
            .flat_map(|w| {
                &thesaurus.usable_in[thesaurus.starts[w] as usize..thesaurus.starts[w + 1] as usize]
            })
            .copied()
            .collect();
        sets.sort_unstable();
        sets.dedup();
        // target term -> (word, weight, in a heading), in the order the sets name them.
        let mut found: Vec<(&str, &str, f32, bool)> = Vec::new();
        for set in sets {
            for (term, word, target, _) in thesaurus.usable(&thesaurus.sets[set as usize]) {
                if !target || term == key {
                    continue;
                }
                let df = index.doc_freq(term);
                if df == 0 || df > max_df {
                    continue;
                }
                let weight = idf(df, n) / idf(1, n) * trust;
                match found.iter_mut().find(|f| f.0 == term) {
                    Some(f) => f.2 = f.2.max(weight),
                    None => found.push((term, word, weight, self.heading_terms.contains(term))),
                }
            }
        }
        if found.is_empty() {
            return None;
        }
        found.sort_by(|a, b| {
            (b.3, b.2)
                .partial_cmp(&(a.3, a.2))
                .expect("finite weights")
                .then_with(|| a.0.cmp(b.0))
        });
        found.truncate(params.max_targets.min(MAX_TARGETS_LIMIT));
        Some(
            found
                .into_iter()
                .map(|(term, word, weight, _)| Target {
                    term: term.to_string(),
                    word: word.to_string(),
                    weight,
                })
                .collect(),
        )
    }

    /// The targets for one lowercased query word: by its stem, else by the longest known head of a compound.
    fn lookup(&self, index: &Bm25Index, analyzer: &Analyzer, word: &str) -> Option<Vec<Target>> {
        let stem = analyzer.stem_word(word)?;
        if let Some(t) = self.get(index, &stem) {
            return Some(t);
        }
        let chars: Vec<usize> = stem.char_indices().map(|(i, _)| i).collect();
        (MIN_PART_CHARS..chars.len().saturating_sub(MIN_PART_CHARS - 1))
            .find_map(|start| self.get(index, &stem[chars[start]..]))
    }
}

/// The expansions of `query`: per query word the table knows, its targets except those in `removed` (words or
/// stems the user took away, compared by stem) and except words the query already has. A target added by two
/// words is listed once, under the first.
pub fn expand(
    query: &str,
    table: &ExpansionTable,
    index: &Bm25Index,
    removed: &[String],
) -> Vec<Expansion> {
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
        let Some(targets) = table.lookup(index, &analyzer, word) else {
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

/// The text embedded for the second query vector of dense expansion (`paragraf eval`, measured in
/// docs/query-expansion.md): the added words first, so a question cut at the encoder's length limit keeps them; the
/// query alone when nothing was added.
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
    use paragraf_index::bm25::Bm25Params;

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
        let headings = heading_terms(&index, &["Arten der Sicherheitsleistung"]);
        ExpansionTable::new(Arc::new(file()), &index, headings).unwrap()
    }

    fn words(e: &Expansion) -> Vec<&str> {
        e.to.iter().map(|t| t.word.as_str()).collect()
    }

    #[test]
    fn keeps_only_targets_the_law_has_and_lay_words_it_lacks() {
        let (table, index) = (table(), index());
        let known = |key: &str| table.get(&index, key).is_some();
        for key in ["boss", "chef", "einsatz", "kaution", "pfand", "vorgesetzt"] {
            assert!(known(key), "{key}");
        }
        // Hund: no synonym in the law. Miete/Mieter: in the law already. Knast: only a colloquial target. Zzz:
        // not in the thesaurus.
        for key in ["hund", "miet", "knast", "wauwau", "zzz"] {
            assert!(!known(key), "{key}");
        }
        let kaution = table.get(&index, "kaution").unwrap();
        let words: Vec<&str> = kaution.iter().map(|t| t.word.as_str()).collect();
        // The heading's word first, then by specificity; Sicherheit (2 of 5 sections) is too common.
        assert_eq!(words, ["Sicherheitsleistung", "Hinterlegung"]);
        assert!(kaution.iter().all(|t| t.weight > 0.0 && t.weight <= 1.0));
        assert_eq!(table.get(&index, "chef").unwrap()[0].word, "Arbeitgeber");
    }

    #[test]
    fn expands_inflections_and_compound_heads_and_honours_removals() {
        let (table, index) = (table(), index());
        let e = expand("Mein Chef behält die Kautionen", &table, &index, &[]);
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].from.as_str(), words(&e[0])),
            ("chef", vec!["Arbeitgeber"])
        );
        assert_eq!(e[1].from, "kautionen");
        let e = expand("Mietkaution", &table, &index, &[]);
        assert_eq!(words(&e[0]), ["Sicherheitsleistung", "Hinterlegung"]);
        let e = expand(
            "Mietkaution",
            &table,
            &index,
            &["sicherheitsleistung".into()],
        );
        assert_eq!(words(&e[0]), ["Hinterlegung"]);
        assert!(expand(
            "Mietkaution",
            &table,
            &index,
            &["Sicherheitsleistung".into(), "Hinterlegung".into()]
        )
        .is_empty());
        // A word the query already has is not added again; nothing for words the table lacks.
        let e = expand("Kaution Hinterlegung", &table, &index, &[]);
        assert_eq!(words(&e[0]), ["Sicherheitsleistung"]);
        assert!(expand("Hund Mieter", &table, &index, &[]).is_empty());
    }

    #[test]
    fn expanded_terms_rank_the_statute_word_lower_than_own_words() {
        let (table, index) = (table(), index());
        let query = "Kaution";
        assert!(index.search(query, 5).is_empty());
        let terms = weighted_terms(&index, query, &expand(query, &table, &index, &[]), 0.3);
        let hits = index.search_weighted(&terms, 5);
        assert_eq!(hits[0].index, 3);
        // Expanded terms count less than the same word typed.
        let own = index.search("Hinterlegung", 1)[0].score;
        let expanded = index.search_weighted(&[("hinterleg".into(), 0.3)], 1)[0].score;
        assert!((expanded - 0.3 * own).abs() < 1e-5, "{expanded} vs {own}");
    }

    fn file() -> ThesaurusFile {
        ThesaurusFile {
            generator: "test".into(),
            source: "openthesaurus.txt".into(),
            notice: thesaurus().notice,
            params: TableParams {
                max_df_fraction: 0.2,
                ..TableParams::default()
            },
            thesaurus: PreparedThesaurus::new(&thesaurus(), AnalyzerConfig::default()),
        }
    }

    #[test]
    fn the_file_round_trips_to_the_same_tables() {
        let file = file();
        let bytes = file.to_bytes();
        assert_eq!(&bytes[..8], KIND.magic);
        let back = ThesaurusFile::from_bytes(&bytes).unwrap();
        assert_eq!(back, file);
        // Every stemmable single word once, labelled ones too (they count as senses).
        assert_eq!(back.thesaurus.len(), 18);
        // Stems that are not a prefix of their word survive the prefix coding.
        let odd = PreparedThesaurus::from_parts(
            AnalyzerConfig::default(),
            Terms::new(&["Ärzte", "Bäume"]),
            Terms::new(&["arzt", "bäum"]),
            vec![vec![
                SetWord {
                    word: 0,
                    role: Role::Target,
                },
                SetWord {
                    word: 1,
                    role: Role::Dropped,
                },
            ]],
        );
        let odd = ThesaurusFile {
            thesaurus: odd,
            ..file
        };
        assert_eq!(ThesaurusFile::from_bytes(&odd.to_bytes()).unwrap(), odd);
    }

    #[test]
    fn decoding_step_by_step_gives_the_same_file_and_the_same_errors() {
        let file = file();
        let bytes = file.to_bytes();
        // A limit of 0 still makes progress: a caller looping on `step` always ends.
        for limit in [0, 1, 3, 17] {
            let payload = ThesaurusFile::payload(&bytes).unwrap();
            let mut decoder = ThesaurusDecoder::new(&payload).unwrap();
            let mut steps = 1;
            while !decoder.step(limit).unwrap() {
                steps += 1;
            }
            let wire: Wire = postcard::from_bytes(&payload).unwrap();
            assert_eq!(
                steps,
                (wire.words.len() + wire.sets.len()).div_ceil(limit.max(1))
            );
            assert_eq!(decoder.finish().unwrap(), file);
        }
        // A bad synonym set is found by the step that reaches it.
        let payload = ThesaurusFile::payload(&bytes).unwrap();
        let mut wire: Wire = postcard::from_bytes(&payload).unwrap();
        let last = wire.sets.len() - 1;
        wire.sets[last][0] |= 3;
        let bad = KIND.encode(&wire);
        let bad = ThesaurusFile::payload(&bad).unwrap();
        let mut decoder = ThesaurusDecoder::new(&bad).unwrap();
        assert!(!decoder.step(wire.words.len() + last).unwrap());
        assert_eq!(
            decoder.step(1).unwrap_err().to_string(),
            "corrupt thesaurus file: a word with an unknown role. Rebuild with `paragraf build`"
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let file = file();
        let bytes = file.to_bytes();
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            ThesaurusFile::from_bytes(&flipped),
            Err(ExpansionError::Bundle(BundleError::Checksum { .. }))
        ));
        assert_eq!(
            ThesaurusFile::from_bytes(&bytes[..bytes.len() - 5]).unwrap_err().to_string(),
            format!(
                "bundle is truncated: the header announces {} payload bytes but {} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`",
                bytes.len() - HEADER_LEN,
                bytes.len() - HEADER_LEN - 5
            )
        );
        assert_eq!(
            ThesaurusFile::from_bytes(b"<html>not found</html>....").unwrap_err().to_string(),
            "not a Paragraf thesaurus file: the file starts with \"<html>no\". Most likely another file (an HTML error page?) was served in its place"
        );
        // A per-law table of the older layout is another kind of file.
        let old = FileKind::new(b"PGRF-EXP", "expansion table", 3, 2).frame(&[0; 4]);
        assert!(ThesaurusFile::from_bytes(&old)
            .unwrap_err()
            .to_string()
            .starts_with("not a Paragraf thesaurus file"));
        // Payloads that decode but break the invariants, framed as a build would frame them.
        let wire = |edit: &dyn Fn(&mut Wire)| {
            let bytes = file.to_bytes();
            let payload = ThesaurusFile::payload(&bytes).unwrap();
            let mut w: Wire = postcard::from_bytes(&payload).unwrap();
            edit(&mut w);
            ThesaurusFile::from_bytes(&KIND.encode(&w))
                .unwrap_err()
                .to_string()
        };
        let corrupt =
            |what: &str| format!("corrupt thesaurus file: {what}. Rebuild with `paragraf build`");
        assert_eq!(
            wire(&|w| w.sets[0].push(w.words.len() as u32 * 4)),
            corrupt("a synonym set names a word the file lacks")
        );
        assert_eq!(
            wire(&|w| w.sets[0][0] |= 3),
            corrupt("a word with an unknown role")
        );
        assert_eq!(
            wire(&|w| {
                w.stems.pop();
            }),
            corrupt("not one stem per word")
        );
        assert_eq!(
            wire(&|w| {
                w.words.swap(0, 1);
                w.stems.swap(0, 1);
            }),
            corrupt("words not ordered by stem")
        );
        assert_eq!(
            wire(&|w| w.stems[0].0 = 200),
            corrupt("a word empty, too long or with a stem that does not fit it")
        );
        assert_eq!(
            wire(&|w| w.params.max_targets = MAX_TARGETS_LIMIT + 1),
            corrupt("table parameters out of range")
        );
        assert_eq!(
            wire(&|w| w.sets[0] = vec![1; MAX_SET_WORDS + 1]),
            corrupt("a synonym set too large")
        );
    }
}
