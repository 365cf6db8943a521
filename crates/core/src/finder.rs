//! The law finder: which law someone means by `StVO`, `Mietrecht` or `Kündigungsschutz`.
//!
//! People do not know abbreviations exactly (`StVO` is `StVO 2013` in the federal archive) and often name a
//! field of law rather than a law (`Mietrecht` is in the BGB, whose title says nothing about rent). The
//! catalogue is `manifest.json`'s list of laws (abbreviation, title, sections) plus each law's [`topics`]: its
//! structure headings (the BGB's `Mietvertrag, Pachtvertrag`) and section headings. The topics of all laws are
//! a file of their own ([`TopicsFile`], written with the index across laws), not part of the manifest: over the
//! whole archive they are a 3.4 MB file (4.3 MB of the manifest's JSON) that nobody needs before the first search, so the app fetches them only when
//! someone uses the finder, which until then matches abbreviations and titles. The finder
//! puts an abbreviation typed exactly (ignoring case and spaces) first, then abbreviations that start with what was
//! typed (`StVO` → `StVO 2013`), shortest first, then titles with a word that starts with the one word typed
//! (`Kündigungsschutz` → `Kündigungsschutzgesetz`), then the best BM25 matches over abbreviation, title and topics
//! (German analyzer with decompounding, so `Mietrecht` meets `Mietvertrag`; no length normalisation, and the
//! score weighted by `sqrt(ln(e + sections))`: someone naming a field of law more likely means the code that
//! holds it, the BGB for `Mietrecht`, than a 5-section law that amends it).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::manifest::LawEntry;
use paragraf_format::frame::{BundleError, FileKind};
use paragraf_index::bm25::{Bm25Index, Bm25Params};
use paragraf_law::analyzer::AnalyzerConfig;
use paragraf_law::Law;

/// The law a citation names (`§ 15a InsO`, `§ 1 des Handelsgesetzbuchs`), among `laws`: an abbreviation as
/// printed (or the one law with it and a year: `StVO` is `StVO 2013`), else a title that the words name exactly once (articles and a genitive `s`/`es` left out). `None` when
/// no law, or more than one, fits: a link to the wrong law is worse than none.
pub fn cited_law<'a>(laws: &'a [LawEntry], named: &str) -> Option<&'a LawEntry> {
    cited_law_index(laws, |l| (&l.law, &l.title), named).map(|i| &laws[i])
}

/// [`cited_law`] over any list of laws, given each one's abbreviation and title: the index of the law named.
pub fn cited_law_index<T>(
    laws: &[T],
    name: impl Fn(&T) -> (&str, &str),
    named: &str,
) -> Option<usize> {
    let named = named.trim();
    if let Some(law) = laws.iter().position(|l| name(l).0 == named) {
        return Some(law);
    }
    // The archive tells versions apart by a year (`StVO 2013`, `PfandBarwertV 2005`); statutes cite without it.
    let mut dated = laws.iter().enumerate().filter(|(_, l)| {
        name(l)
            .0
            .strip_prefix(named)
            .and_then(|rest| rest.strip_prefix(' '))
            .is_some_and(|year| year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit()))
    });
    if let (Some((law, _)), None) = (dated.next(), dated.next()) {
        return Some(law);
    }
    let lower = named.to_lowercase();
    let words = [
        "des ",
        "der ",
        "dem ",
        "den ",
        "das ",
        "im ",
        "nach dem ",
        "nach ",
    ]
    .iter()
    .fold(lower.as_str(), |w, article| {
        w.strip_prefix(article).unwrap_or(w)
    });
    if words.is_empty() {
        return None;
    }
    let forms = [
        words,
        words.strip_suffix("es").unwrap_or(words),
        words.strip_suffix('s').unwrap_or(words),
    ];
    let mut found = laws
        .iter()
        .enumerate()
        // Same byte length first: lowercasing keeps it (for German titles), and most titles differ in it.
        .filter(|(_, l)| {
            let title = name(l).1;
            forms
                .iter()
                .any(|f| title.len() == f.len() && title.to_lowercase() == *f)
        });
    match (found.next(), found.next()) {
        (Some((law, _)), None) => return Some(law),
        (Some(_), Some(_)) => return None,
        _ => {}
    }
    // Declined: `des Bürgerlichen Gesetzbuchs` names the `Bürgerliches Gesetzbuch`. Word by word without
    // declension endings, among titles of as many words and about the same length.
    let stems = |s: &str| -> Vec<String> {
        s.split_whitespace()
            .map(|w| declension_stem(&w.to_lowercase()))
            .collect()
    };
    let wanted = stems(words);
    let n = wanted.len();
    let mut found = laws.iter().enumerate().filter(|(_, l)| {
        let title = name(l).1;
        title.len().abs_diff(words.len()) <= 2 * n
            && title.split_whitespace().count() == n
            && stems(title) == wanted
    });
    match (found.next(), found.next()) {
        (Some((law, _)), None) => Some(law),
        _ => None,
    }
}

/// A lowercase word without one declension ending (`bürgerlichen`, `bürgerliches` → `bürgerlich`), keeping at
/// least four bytes.
fn declension_stem(word: &str) -> String {
    ["es", "en", "er", "em", "e", "s", "n"]
        .iter()
        .find_map(|ending| word.strip_suffix(ending).filter(|stem| stem.len() >= 4))
        .unwrap_or(word)
        .to_string()
}

/// Shortest question word that names a law by its title (`Waffen` → `Waffengesetz`).
const MIN_NAMING_WORD: usize = 5;

/// How the title word of a law named after its subject ends (`Kündigungsschutzgesetz`, `Zivilprozessordnung`).
const LAW_WORDS: [&str; 3] = ["gesetz", "gesetzbuch", "ordnung"];

/// The keys under which title word `title_word` (lowercase) names its law: the word itself, and its subjects
/// (`kündigungsschutzgesetz`: `kündigungsschutz`; a linking `s` also dropped: `bundesurlaubs` → `bundesurlaub`),
/// when it is a law's name with at least four letters before the law word, so `gesetz` or `verordnung` alone
/// name nothing.
fn naming_keys(title_word: &str) -> Option<(String, Vec<String>)> {
    let word = title_word
        .strip_suffix("es")
        .filter(|w| LAW_WORDS.iter().any(|l| w.ends_with(l)))
        .unwrap_or(title_word);
    let mut subjects = Vec::new();
    for law_word in LAW_WORDS {
        if let Some(subject) = word
            .strip_suffix(law_word)
            .filter(|s| s.chars().count() >= 4)
        {
            subjects.push(subject.to_string());
            // A linking `s` (`bundesurlaubs`), not the end of a stem (`zivilprozess`).
            if let Some(unlinked) = subject.strip_suffix('s').filter(|u| !u.ends_with('s')) {
                subjects.push(unlinked.to_string());
            }
        }
    }
    (!subjects.is_empty()).then(|| (word.to_string(), subjects))
}

/// The words of a title (lowercase) as [`LawNames`] splits them.
fn title_words(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
}

/// The name a title (lowercase) opens with ([`naming_keys`]): its first word (`arbeitszeitgesetz`, `grundgesetz
/// für die …`), or the first after elided ones (`bundeselterngeld- und elternzeitgesetz`). A law word later in a
/// title names another law (`Verordnung zur Durchführung des Arbeitszeitgesetzes`, `Gesetz zu Artikel 45b des
/// Grundgesetzes`).
fn leading_name(lower: &str) -> Option<(String, Vec<String>)> {
    for word in title_words(lower) {
        if let Some(keys) = naming_keys(word) {
            return Some(keys);
        }
        if !(word.ends_with('-') || word == "und" || word == "oder") {
            return None;
        }
    }
    None
}

/// Most laws a subject may open title words of and still name one (`Mindestlohn` opens 12, `Arbeit` 184 and
/// `Vertrag` 244 of the 6,877 federal laws' titles: a common word, not a name, as in `Arbeitsgesetzbuch der DDR`
/// or `Vertragsgesetz Europa-Mittelmeer-Luftverkehrsabkommen`).
const MAX_SUBJECT_LAWS: usize = 50;

/// The laws' names as questions name them, prepared once: "Meinten Sie das Gesetz …?" and law routing.
pub struct LawNames {
    /// Abbreviation and title per law.
    names: Vec<(String, String)>,
    /// A question word (lowercase) → the law with the shortest title it names, and whether another title of
    /// that length is named too.
    by_word: HashMap<String, (usize, usize, bool)>,
}

impl LawNames {
    /// The names of `laws` (abbreviation, title, short title), in order.
    pub fn new<'a>(laws: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> LawNames {
        let mut names: Vec<(String, String)> = Vec::new();
        let mut titles: Vec<(usize, &str)> = Vec::new();
        for (i, (law, title, short)) in laws.into_iter().enumerate() {
            names.push((law.to_string(), title.to_string()));
            titles.extend([(i, title), (i, short)]);
        }
        let lowered: Vec<(usize, String)> = titles
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, t)| (i, t.to_lowercase()))
            .collect();
        // Every title word with its law, sorted: how many laws' titles a subject opens words of.
        let mut words: Vec<(&str, usize)> = lowered
            .iter()
            .flat_map(|(i, t)| title_words(t).map(move |w| (w, *i)))
            .collect();
        words.sort_unstable();
        words.dedup();
        let common = |subject: &str| {
            let from = words.partition_point(|(w, _)| *w < subject);
            let mut laws: Vec<usize> = words[from..]
                .iter()
                .take_while(|(w, _)| w.starts_with(subject))
                .map(|&(_, l)| l)
                .collect();
            laws.sort_unstable();
            laws.dedup();
            laws.len() > MAX_SUBJECT_LAWS
        };
        let mut by_word: HashMap<String, (usize, usize, bool)> = HashMap::new();
        for (i, lower) in &lowered {
            let Some((name, subjects)) = leading_name(lower) else {
                continue;
            };
            let len = lower.len();
            for key in std::iter::once(name).chain(subjects.into_iter().filter(|s| !common(s))) {
                let entry = by_word.entry(key).or_insert((*i, len, false));
                match entry.1.cmp(&len) {
                    std::cmp::Ordering::Greater => *entry = (*i, len, false),
                    std::cmp::Ordering::Equal if entry.0 != *i => entry.2 = true,
                    _ => {}
                }
            }
        }
        LawNames { names, by_word }
    }

    /// The law `question` names, if it names one: an abbreviation written as in the archive (`KSchG`, `BGB`, or
    /// `StVO` for the one `StVO 2013`; a word with at least two capitals, so that ordinary nouns never count),
    /// else a word that is a law's name in its title or short title or that name's subject (`Kündigungsschutz`
    /// for the `Kündigungsschutzgesetz`, `Mindestlohn` for the `Mindestlohngesetz`), the shortest such title. The first naming word wins; `None` when no word
    /// names exactly one law.
    pub fn named(&self, question: &str) -> Option<usize> {
        let words: Vec<&str> = question
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .filter(|w| !w.is_empty())
            .collect();
        for word in &words {
            if word.chars().filter(|c| c.is_uppercase()).count() >= 2 {
                let exact = self.names.iter().position(|l| l.0 == *word);
                let dated = || {
                    cited_law_index(&self.names, |l| (&l.0, &l.1), word)
                        .filter(|&l| self.names[l].0.starts_with(word))
                };
                if let Some(law) = exact.or_else(dated) {
                    return Some(law);
                }
            }
        }
        words
            .iter()
            .filter(|w| w.chars().count() >= MIN_NAMING_WORD)
            .find_map(|w| match self.by_word.get(&w.to_lowercase()) {
                Some(&(law, _, false)) => Some(law),
                _ => None,
            })
    }
}

/// Most characters of topics kept per law: the BGB's headings three levels deep fit; the average law has far
/// fewer, so the catalogue of all 6,877 federal laws stays a few megabytes.
pub const MAX_TOPIC_CHARS: usize = 4000;

/// BM25 over catalogue entries without length normalisation: a law with many headings on a subject (the BGB on
/// rent) is more likely the one meant than a short law that names it once, which normalisation would favour.
const FINDER_BM25: Bm25Params = Bm25Params { k1: 1.2, b: 0.0 };

/// BM25 matches re-weighted by the size prior before the cut.
const PRIOR_DEPTH: usize = 50;

/// Shortest word matched as the start of a title word (shorter ones start too many).
const MIN_TITLE_PREFIX: usize = 4;

/// Structure levels whose headings are topics (Buch > Abschnitt > Titel in the BGB).
pub const TOPIC_LEVELS: usize = 3;

/// What a law is about, for the finder: structure headings up to [`TOPIC_LEVELS`] deep, then section headings,
/// each once, in that order, until [`MAX_TOPIC_CHARS`].
pub fn topics(law: &Law) -> Vec<String> {
    let structure = law
        .structure
        .iter()
        .filter(|n| n.code.len() <= 3 * TOPIC_LEVELS)
        .map(|n| n.title.as_str());
    let sections = law.active_sections().map(|(_, s)| s.title.as_str());
    let mut topics: Vec<String> = Vec::new();
    let mut chars = 0;
    for title in structure.chain(sections) {
        let title = title.trim();
        if title.is_empty() || topics.iter().any(|t| t == title) {
            continue;
        }
        chars += title.chars().count();
        if chars > MAX_TOPIC_CHARS {
            break;
        }
        topics.push(title.to_string());
    }
    topics
}

/// A topics file (compressed from version 4 on).
pub const TOPICS: FileKind = FileKind::new(b"PGRF-TOP", "topics file", 4, 2).compressed_since(4);

/// Most laws a topics file may list (the federal archive has 6,877).
pub const MAX_TOPIC_LAWS: usize = 1 << 17;

/// Longest law abbreviation, and longest generator name, a topics file may hold (bytes).
const MAX_NAME_BYTES: usize = 256;

/// Every law's [`topics`] for the finder, in one file (`topics.<hash>.pgb`, the bundles' framing).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicsFile {
    /// The tool that wrote it.
    pub generator: String,
    /// One entry per law, in the manifest's order.
    pub laws: Vec<LawTopics>,
}

/// One law's topics.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawTopics {
    /// Abbreviation, as in the manifest.
    pub law: String,
    /// See [`topics`].
    pub topics: Vec<String>,
}

/// Why bytes are not a usable topics file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopicsError {
    /// Framing or decoding failed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Decoded, but beyond the limits a topics file keeps.
    #[error("corrupt topics file: {0}. Rebuild it with `paragraf federal`")]
    Invalid(String),
}

impl TopicsFile {
    /// The topics of `laws`.
    pub fn of<'a>(generator: &str, laws: impl IntoIterator<Item = &'a Law>) -> TopicsFile {
        TopicsFile {
            generator: generator.to_string(),
            laws: laws
                .into_iter()
                .map(|law| LawTopics {
                    law: law.abbreviation.clone(),
                    topics: topics(law),
                })
                .collect(),
        }
    }

    /// Encodes with magic, version and checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        TOPICS.encode(self)
    }

    /// Decodes and checks the limits: at most [`MAX_TOPIC_LAWS`] laws, each named in at most 256 bytes, with
    /// non-empty topics of at most [`MAX_TOPIC_CHARS`] characters in all (so a law holds at most that many).
    pub fn from_bytes(bytes: &[u8]) -> Result<TopicsFile, TopicsError> {
        let file: TopicsFile = TOPICS.decode(bytes)?;
        if file.generator.len() > MAX_NAME_BYTES {
            return Err(TopicsError::Invalid(format!(
                "a generator name of {} bytes",
                file.generator.len()
            )));
        }
        if file.laws.len() > MAX_TOPIC_LAWS {
            return Err(TopicsError::Invalid(format!(
                "{} laws, more than {MAX_TOPIC_LAWS}",
                file.laws.len()
            )));
        }
        for entry in &file.laws {
            if entry.law.is_empty() || entry.law.len() > MAX_NAME_BYTES {
                return Err(TopicsError::Invalid(format!(
                    "an abbreviation of {} bytes",
                    entry.law.len()
                )));
            }
            if entry.topics.iter().any(String::is_empty) {
                return Err(TopicsError::Invalid(format!(
                    "{} has an empty topic",
                    entry.law
                )));
            }
            let chars: usize = entry.topics.iter().map(|t| t.chars().count()).sum();
            if chars > MAX_TOPIC_CHARS {
                return Err(TopicsError::Invalid(format!(
                    "{} has {chars} characters of topics, more than {MAX_TOPIC_CHARS}",
                    entry.law
                )));
            }
        }
        Ok(file)
    }
}

/// Finds laws in a catalogue (see the module docs).
pub struct LawFinder {
    /// Each law's abbreviation, lowercased without spaces.
    keys: Vec<String>,
    /// Each law's abbreviation, lowercased.
    lower: Vec<String>,
    /// Each law's title, lowercased.
    titles: Vec<String>,
    /// Each law's weight for its BM25 score: `sqrt(ln(e + sections))`.
    prior: Vec<f32>,
    bm25: Bm25Index,
}

/// One law as the finder catalogues it.
struct CatalogueEntry<'a> {
    law: &'a str,
    title: &'a str,
    sections: usize,
    topics: Vec<String>,
}

fn key(text: &str) -> String {
    text.to_lowercase().replace(' ', "")
}

impl LawFinder {
    /// A finder over `laws` (indices into it are what [`LawFinder::find`] returns), with their topics when
    /// loaded (a law the file does not list is found by abbreviation and title).
    pub fn new(laws: &[LawEntry], topics: Option<&TopicsFile>) -> LawFinder {
        let by_law: HashMap<&str, &[String]> = topics
            .iter()
            .flat_map(|t| &t.laws)
            .map(|l| (l.law.as_str(), l.topics.as_slice()))
            .collect();
        LawFinder::catalogue(laws.iter().map(|l| {
            CatalogueEntry {
                law: &l.law,
                title: &l.title,
                sections: l.sections,
                topics: by_law
                    .get(l.law.as_str())
                    .copied()
                    .unwrap_or_default()
                    .to_vec(),
            }
        }))
    }

    /// A finder over loaded laws, each with its [`topics`] (the index across laws routes questions with it).
    pub fn of_laws(laws: &[&Law]) -> LawFinder {
        LawFinder::catalogue(laws.iter().map(|l| CatalogueEntry {
            law: &l.abbreviation,
            title: &l.title,
            sections: l.active_sections().count(),
            topics: topics(l),
        }))
    }

    fn catalogue<'a>(laws: impl Iterator<Item = CatalogueEntry<'a>>) -> LawFinder {
        let (mut names, mut docs) = (Vec::new(), Vec::new());
        for l in laws {
            docs.push(format!("{}\n{}\n{}", l.law, l.title, l.topics.join("\n")));
            names.push((l.law, l.title, l.sections));
        }
        let bm25 = Bm25Index::build(&docs, AnalyzerConfig::default(), FINDER_BM25);
        LawFinder::with_index(names, bm25)
    }

    /// A finder over laws given by abbreviation, title and active sections, with the BM25 index of their
    /// abbreviations, titles and topics that another finder over the same laws made ([`LawFinder::index`]; the
    /// index across laws carries it, so that the browser routes by the laws' text without indexing it).
    pub(crate) fn with_index<'a>(
        laws: impl IntoIterator<Item = (&'a str, &'a str, usize)>,
        bm25: Bm25Index,
    ) -> LawFinder {
        let (mut keys, mut lower, mut titles, mut prior) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (law, title, sections) in laws {
            keys.push(key(law));
            lower.push(law.to_lowercase());
            titles.push(title.to_lowercase());
            prior.push((std::f32::consts::E + sections as f32).ln().sqrt());
        }
        LawFinder {
            keys,
            lower,
            titles,
            prior,
            bm25,
        }
    }

    /// Its BM25 index of the laws' abbreviations, titles and topics, one document per law.
    pub(crate) fn index(&self) -> &Bm25Index {
        &self.bm25
    }

    /// Checks an index for [`LawFinder::with_index`] over `laws` laws: well-formed, one document per law, made
    /// with the finder's analyzer and BM25 parameters.
    pub(crate) fn check_index(bm25: &Bm25Index, laws: usize) -> Result<(), String> {
        bm25.check().map_err(|e| e.to_string())?;
        if bm25.len() != laws {
            return Err(format!(
                "the law-text index has {} documents for {laws} laws",
                bm25.len()
            ));
        }
        if bm25.analyzer() != AnalyzerConfig::default() || bm25.params() != FINDER_BM25 {
            return Err(
                "the law-text index has other analyzer settings or BM25 parameters than the finder's".into(),
            );
        }
        Ok(())
    }

    /// The best `k` laws for `query`, best first.
    pub fn find(&self, query: &str, k: usize) -> Vec<usize> {
        let wanted = key(query.trim());
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut found: Vec<usize> = self
            .keys
            .iter()
            .position(|key| *key == wanted)
            .into_iter()
            .collect();
        let mut prefixed: Vec<usize> = (0..self.keys.len())
            .filter(|&i| self.keys[i] != wanted && self.keys[i].starts_with(&wanted))
            .collect();
        // The name plus a version (`StVO 2013`) before a longer word (`StVollzG`), then the shorter.
        let version = format!("{} ", query.trim().to_lowercase());
        prefixed.sort_by_key(|&i| (!self.lower[i].starts_with(&version), self.keys[i].len(), i));
        found.extend(prefixed);
        // One word that begins a word of a title (`Kündigungsschutz` → `Kündigungsschutzgesetz`): shorter
        // titles (the law named after it) first.
        let word = query.trim().to_lowercase();
        if word.chars().count() >= MIN_TITLE_PREFIX && !word.contains(' ') {
            let mut titled: Vec<usize> = (0..self.titles.len())
                .filter(|&i| {
                    !found.contains(&i)
                        && self.titles[i]
                            .split(|c: char| !c.is_alphanumeric())
                            .any(|w| w.starts_with(&word))
                })
                .collect();
            titled.sort_by_key(|&i| (self.titles[i].len(), i));
            found.extend(titled);
        }
        let mut scored: Vec<(usize, f32)> = self
            .bm25
            .search(query, k.max(PRIOR_DEPTH))
            .into_iter()
            .map(|h| (h.index as usize, h.score * self.prior[h.index as usize]))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (law, _) in scored {
            if !found.contains(&law) {
                found.push(law);
            }
        }
        found.truncate(k);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(law: &str, title: &str) -> LawEntry {
        LawEntry {
            law: law.into(),
            title: title.into(),
            short_title: String::new(),
            slug: String::new(),
            build_date: String::new(),
            sections: 1,
            refers: Vec::new(),
            source_sha256: None,
            file: String::new(),
            bytes: 0,
            sha256: String::new(),
            old_expansion_table: None,
        }
    }

    #[test]
    fn a_citation_names_one_law_or_none() {
        let laws = [
            entry("InsO", "Insolvenzordnung"),
            entry("HGB", "Handelsgesetzbuch"),
            entry("BGB", "Bürgerliches Gesetzbuch"),
            entry("SGB I", "Sozialgesetzbuch Erstes Buch"),
            entry("SGB V", "Sozialgesetzbuch Fünftes Buch"),
            entry("StVO 2013", "Straßenverkehrs-Ordnung"),
            entry("FooV 1990", "Foo-Verordnung"),
            entry("FooV 2001", "Foo-Verordnung 2001"),
        ];
        let named = |words: &str| cited_law(&laws, words).map(|l| l.law.as_str());
        assert_eq!(named("InsO"), Some("InsO"));
        assert_eq!(named("SGB V"), Some("SGB V"));
        assert_eq!(named("des Handelsgesetzbuchs"), Some("HGB"));
        assert_eq!(named("des Bürgerlichen Gesetzbuchs"), Some("BGB"));
        assert_eq!(named("dem Bürgerlichen Gesetzbuch"), Some("BGB"));
        assert_eq!(named("der Insolvenzordnung"), Some("InsO"));
        assert_eq!(named("StVO"), Some("StVO 2013"));
        assert_eq!(
            named("FooV"),
            None,
            "two versions: which one is cited is unknown"
        );
        // Unknown, ambiguous or empty: no link.
        assert_eq!(named("ZPO"), None);
        assert_eq!(named("dieses Gesetzes"), None);
        assert_eq!(named("des "), None);
        assert_eq!(named("insO"), None);
    }

    #[test]
    fn abbreviations_then_prefixes_then_words() {
        let catalogue = [
            (
                "BGB",
                "Bürgerliches Gesetzbuch",
                &[
                    "Recht der Schuldverhältnisse",
                    "Mietvertrag, Pachtvertrag",
                    "Miete",
                ][..],
            ),
            (
                "StVO 2013",
                "Straßenverkehrs-Ordnung",
                &["Allgemeine Verkehrsregeln"],
            ),
            (
                "StVollzG",
                "Strafvollzugsgesetz",
                &["Vollzug der Freiheitsstrafe"],
            ),
            (
                "KSchG",
                "Kündigungsschutzgesetz",
                &["Sozial ungerechtfertigte Kündigungen"],
            ),
            ("StVO", "Eine andere Verordnung", &[]),
        ];
        let laws: Vec<LawEntry> = catalogue.iter().map(|(l, t, _)| entry(l, t)).collect();
        let topics = TopicsFile {
            generator: "test".into(),
            laws: catalogue
                .iter()
                .map(|(law, _, topics)| LawTopics {
                    law: law.to_string(),
                    topics: topics.iter().map(|t| t.to_string()).collect(),
                })
                .collect(),
        };
        let finder = LawFinder::new(&laws, Some(&topics));
        let names = |finder: &LawFinder, q: &str| -> Vec<String> {
            finder
                .find(q, 3)
                .into_iter()
                .map(|i| laws[i].law.clone())
                .collect()
        };
        assert_eq!(names(&finder, "stvo"), ["StVO", "StVO 2013", "StVollzG"]);
        assert_eq!(names(&finder, "StVO 2013")[0], "StVO 2013");
        assert_eq!(names(&finder, "Mietrecht"), ["BGB"]);
        assert_eq!(names(&finder, "Kündigungsschutz")[0], "KSchG");
        assert!(names(&finder, "   ").is_empty());
        // Before the topics are loaded: abbreviations and titles only.
        let bare = LawFinder::new(&laws, None);
        assert_eq!(names(&bare, "stvo"), ["StVO", "StVO 2013", "StVollzG"]);
        assert_eq!(names(&bare, "Kündigungsschutz")[0], "KSchG");
        assert!(names(&bare, "Mietrecht").is_empty());
    }

    #[test]
    fn topics_file_round_trip_and_bad_input() {
        let file = TopicsFile {
            generator: "test".into(),
            laws: vec![LawTopics {
                law: "BGB".into(),
                topics: vec!["Mietvertrag".into(), "Kaution".into()],
            }],
        };
        let bytes = file.to_bytes();
        assert_eq!(&bytes[..8], TOPICS.magic);
        assert_eq!(TopicsFile::from_bytes(&bytes).unwrap(), file);
        let message = |bytes: &[u8]| TopicsFile::from_bytes(bytes).unwrap_err().to_string();
        let payload = bytes.len() - 24;
        assert_eq!(
            message(&bytes[..bytes.len() - 3]),
            format!("bundle is truncated: the header announces {payload} payload bytes but {} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`", payload - 3)
        );
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(
            message(&flipped).starts_with("bundle is corrupt: checksum"),
            "{}",
            message(&flipped)
        );
        assert_eq!(
            message(b"<html>not found</html>...................."),
            "not a Paragraf topics file: the file starts with \"<html>no\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut old = bytes.clone();
        old[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert!(
            message(&old).starts_with(
                "topics file format version 0 is older than this Paragraf reads (2 to 4)"
            ),
            "{}",
            message(&old)
        );
        let mut long = file.clone();
        long.laws[0].topics = vec!["x".repeat(MAX_TOPIC_CHARS + 1)];
        assert_eq!(
            message(&long.to_bytes()),
            "corrupt topics file: BGB has 4001 characters of topics, more than 4000. Rebuild it with `paragraf federal`"
        );
        let mut empty = file.clone();
        empty.laws[0].topics.push(String::new());
        assert_eq!(
            message(&empty.to_bytes()),
            "corrupt topics file: BGB has an empty topic. Rebuild it with `paragraf federal`"
        );
        let mut nameless = file;
        nameless.laws[0].law.clear();
        assert_eq!(
            message(&nameless.to_bytes()),
            "corrupt topics file: an abbreviation of 0 bytes. Rebuild it with `paragraf federal`"
        );
    }

    #[test]
    fn topics_are_headings_once_and_bounded() {
        use paragraf_law::{Section, StructureNode};
        let node = |code: &str, title: &str| StructureNode {
            code: code.into(),
            designation: String::new(),
            title: title.into(),
            parent: None,
        };
        let section = |title: &str| Section {
            title: title.into(),
            ..Section::bare("§ 1", "x")
        };
        let mut law = Law {
            abbreviation: "T".into(),
            slug: "t".into(),
            title: "T".into(),
            short_title: String::new(),
            doknr: String::new(),
            build_date: String::new(),
            stand: vec![],
            source: String::new(),
            structure: vec![
                node("010", "Allgemeiner Teil"),
                node("010010010", "Mietvertrag"),
                node("010010010010", "Zu tief"),
            ],
            sections: vec![section("Mietvertrag"), section("Kaution"), section("")],
        };
        assert_eq!(topics(&law), ["Allgemeiner Teil", "Mietvertrag", "Kaution"]);
        law.sections = (0..2000)
            .map(|i| section(&format!("Überschrift {i}")))
            .collect();
        let bounded = topics(&law);
        assert!(bounded.iter().map(|t| t.chars().count()).sum::<usize>() <= MAX_TOPIC_CHARS);
        assert!(bounded.len() > 100);
    }

    #[test]
    fn a_question_names_its_law_by_abbreviation_or_title_word() {
        let laws = [
            entry("KSchG", "Kündigungsschutzgesetz"),
            entry("StVO 2013", "Straßenverkehrs-Ordnung"),
            entry("AÜG", "Gesetz zur Regelung der Arbeitnehmerüberlassung"),
            entry("ArbZG", "Arbeitszeitgesetz"),
            entry(
                "Offshore-ArbZV",
                "Verordnung über die Arbeitszeit bei Offshore-Tätigkeiten",
            ),
            entry("WaffG 2002", "Waffengesetz"),
            entry("BGB", "Bürgerliches Gesetzbuch"),
        ];
        let names = LawNames::new(laws.iter().map(LawEntry::names));
        let named = |q: &str| names.named(q).map(|i| laws[i].law.as_str());
        // The name people use is often the short title alone.
        let milog = LawEntry {
            short_title: "Mindestlohngesetz".into(),
            ..entry(
                "MiLoG",
                "Gesetz zur Regelung eines allgemeinen Mindestlohns",
            )
        };
        let with_short = LawNames::new([milog.names(), laws[0].names()]);
        assert_eq!(
            with_short.named("Wie hoch ist der gesetzliche Mindestlohn?"),
            Some(0)
        );
        assert_eq!(
            LawNames::new([entry("MiLoG", &milog.title).names()])
                .named("Wie hoch ist der gesetzliche Mindestlohn?"),
            None
        );
        assert_eq!(
            named("Gilt das KSchG in meinem Kleinbetrieb?"),
            Some("KSchG")
        );
        assert_eq!(named("Was sagt die StVO zum Überholen?"), Some("StVO 2013"));
        assert_eq!(
            named("Habe ich Kündigungsschutz nach sechs Monaten?"),
            Some("KSchG")
        );
        // The shortest title with the word: the law named after it, not the ordinance that mentions it.
        assert_eq!(named("Wie lang ist die Arbeitszeit am Tag?"), Some("ArbZG"));
        assert_eq!(
            named("Brauche ich für ein Messer einen Waffenschein nach dem Waffengesetz?"),
            Some("WaffG 2002")
        );
        // Ordinary words, a capitalised noun and words that only begin a title word name nothing.
        assert_eq!(named("Mein Chef ruft mich im Urlaub an"), None);
        assert_eq!(named("Ich bin Arbeitnehmer"), None);
        assert_eq!(
            named("Welches Gesetz oder welche Verordnung gilt bei der Arbeit?"),
            None
        );
        let keys =
            |word: &str| naming_keys(word).map(|(name, subjects)| (name, subjects.join(" ")));
        assert_eq!(
            keys("arbeitsschutzgesetzes"),
            Some(("arbeitsschutzgesetz".into(), "arbeitsschutz".into()))
        );
        assert_eq!(
            keys("bundesurlaubsgesetz"),
            Some((
                "bundesurlaubsgesetz".into(),
                "bundesurlaubs bundesurlaub".into()
            ))
        );
        assert_eq!(
            keys("zivilprozessordnung"),
            Some(("zivilprozessordnung".into(), "zivilprozess".into()))
        );
        assert_eq!((keys("verordnung"), keys("gesetz")), (None, None));
        assert_eq!(named(""), None);
        // A title names its law with the word it opens with (after elided ones); a law word later in a title
        // names another law, and a subject that opens many titles' words is a common word.
        assert_eq!(
            leading_name("bundeselterngeld- und elternzeitgesetz").map(|k| k.0),
            Some("elternzeitgesetz".into())
        );
        assert_eq!(
            leading_name("gesetz zu artikel 45b des grundgesetzes"),
            None
        );
        let wehrb = LawEntry {
            short_title: "Gesetz zu Artikel 45b des Grundgesetzes".into(),
            ..entry("WehrbBTG", "Gesetz über den Wehrbeauftragten")
        };
        let gg = entry("GG", "Grundgesetz für die Bundesrepublik Deutschland");
        assert_eq!(
            LawNames::new([wehrb.names(), gg.names()]).named("Was sagt das Grundgesetz?"),
            Some(1)
        );
        let many: Vec<LawEntry> = (0..=MAX_SUBJECT_LAWS)
            .map(|i| entry(&format!("V{i}"), &format!("Vertragsverordnung Nr. {i}")))
            .chain([entry("VG", "Vertragsgesetz Europa")])
            .collect();
        let named_in_many = LawNames::new(many.iter().map(LawEntry::names));
        assert_eq!(named_in_many.named("Ist mein Vertrag gültig?"), None);
        assert_eq!(
            named_in_many.named("Was regelt das Vertragsgesetz?"),
            Some(MAX_SUBJECT_LAWS + 1)
        );
    }
}
