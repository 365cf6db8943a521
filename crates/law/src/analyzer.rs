//! The German analyzer behind BM25: text in, index terms out.
//!
//! Lay questions and statutes use different surface forms for the same idea (`Mängel` / `Maengel` / `Mangel`,
//! `Mietminderung` / `Minderung der Miete`), so matching needs more than lowercasing. The pipeline per word:
//!
//! 1. **Tokenise**: split on every non-alphanumeric character, so `§ 573b` yields `573b` (section numbers stay
//!    single tokens and can match statute headings) and `Kauf-vertrag` yields two words.
//! 2. **Lowercase**.
//! 3. **Fold** (optional, [`AnalyzerConfig::fold_umlauts`]): the transliterations `ae`/`oe`/`ue` become
//!    `ä`/`ö`/`ü` (not after `q`, as in Snowball's `german2` variant), so a question typed without umlauts meets
//!    the statute's spelling. `ß` needs no folding: the stemmer itself maps `ß` to `ss` and drops umlauts.
//! 4. **Stopwords** (NLTK's German list, 224 distinct words) are dropped.
//! 5. **Stem** with Snowball German (`rust-stemmers`, pure Rust). Tokens that contain a digit are kept as they are.
//! 6. **Decompound** (optional, [`AnalyzerConfig::decompound`]): a compound is split against a [`Lexicon`] of
//!    stems from the indexed corpus and its parts are emitted as extra terms after the whole word. The split is
//!    the one of Koehn & Knight (2003): among all segmentations into known parts of at least
//!    [`MIN_PART_CHARS`] characters (optionally joined by a linking element `s`/`es`/`n`/`en`/`e`/`er`), take
//!    the one with the highest geometric mean of part frequencies, and keep the word whole when its own corpus
//!    frequency is higher. Using the corpus itself as the dictionary means no word list ships with a bundle and
//!    the split adapts to legal vocabulary (`Mietminderung` → `miet` + `minder`). Both documents and queries are
//!    decompounded the same way, so `Mietvertrag` in a statute also matches `Miete` in a question.
//!
//! With folding and decompounding off the analyzer is the reference configuration the evaluation compares
//! against (lowercase, split on non-alphanumerics, German stopwords, Snowball German).

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Range;

/// Shortest compound part (in characters) that decompounding accepts: shorter ones split words at random.
pub const MIN_PART_CHARS: usize = 4;

/// Shortest word (in characters) that decompounding tries to split.
pub const MIN_COMPOUND_CHARS: usize = 2 * MIN_PART_CHARS;

/// Most parts a compound is split into.
const MAX_PARTS: usize = 3;

/// Linking elements (Fugenelemente) allowed between compound parts, longest first.
const LINKS: [&str; 6] = ["es", "en", "er", "s", "n", "e"];

/// Which optional steps the analyzer runs. The default is everything on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyzerConfig {
    /// Fold `ae`/`oe`/`ue` to umlauts before stemming.
    pub fold_umlauts: bool,
    /// Split compounds against the corpus lexicon and emit their parts too.
    pub decompound: bool,
}

impl Default for AnalyzerConfig {
    fn default() -> Self {
        Self {
            fold_umlauts: true,
            decompound: true,
        }
    }
}

impl AnalyzerConfig {
    /// The reference configuration: no folding, no decompounding.
    pub const PLAIN: Self = Self {
        fold_umlauts: false,
        decompound: false,
    };
}

/// Corpus frequencies of stems, the dictionary decompounding splits against.
pub trait Lexicon {
    /// How often `stem` occurs in the corpus (0: unknown).
    fn frequency(&self, stem: &str) -> u32;
}

impl Lexicon for HashMap<String, u32> {
    fn frequency(&self, stem: &str) -> u32 {
        self.get(stem).copied().unwrap_or(0)
    }
}

/// The German analyzer; cheap to create.
pub struct Analyzer {
    config: AnalyzerConfig,
    stemmer: Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("config", &self.config)
            .finish()
    }
}

impl Analyzer {
    /// An analyzer with the given steps.
    pub fn new(config: AnalyzerConfig) -> Self {
        Self {
            config,
            stemmer: Stemmer::create(Algorithm::German),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> AnalyzerConfig {
        self.config
    }

    /// The lowercased words of `text` (step 1 and 2).
    pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
        Self::word_ranges(text).map(|r| text[r].to_lowercase())
    }

    /// Where the words of [`Analyzer::words`] sit in `text` (byte ranges, as printed).
    pub fn word_ranges(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(move |w| {
                let start = w.as_ptr() as usize - text.as_ptr() as usize;
                start..start + w.len()
            })
    }

    /// The stem of one lowercased word, or `None` for a stopword (steps 3 to 5).
    pub fn stem_word(&self, word: &str) -> Option<String> {
        if is_stopword(word) {
            return None;
        }
        let folded;
        let word = if self.config.fold_umlauts {
            folded = fold_transliterations(word);
            if is_stopword(&folded) {
                return None;
            }
            &folded
        } else {
            word
        };
        Some(self.stem(word))
    }

    fn stem(&self, word: &str) -> String {
        if word.chars().any(|c| c.is_ascii_digit()) {
            word.to_string()
        } else {
            self.stemmer.stem(word).into_owned()
        }
    }

    /// All terms of one lowercased word: nothing for a stopword, else its stem followed by the stems of its
    /// compound parts when decompounding is on and `lexicon` is given.
    pub fn word_terms(&self, word: &str, lexicon: Option<&dyn Lexicon>, out: &mut Vec<String>) {
        let Some(stem) = self.stem_word(word) else {
            return;
        };
        let parts = match lexicon {
            Some(lexicon) if self.config.decompound => {
                let word = if self.config.fold_umlauts {
                    fold_transliterations(word)
                } else {
                    word.to_string()
                };
                self.split_compound(&word, &stem, lexicon)
            }
            _ => Vec::new(),
        };
        out.push(stem);
        out.extend(parts);
    }

    /// All terms of `text` in order (see the module docs).
    pub fn terms(&self, text: &str, lexicon: Option<&dyn Lexicon>) -> Vec<String> {
        let mut out = Vec::new();
        for word in Self::words(text) {
            self.word_terms(&word, lexicon, &mut out);
        }
        out
    }

    /// The stems of the parts of compound `word` (whose own stem is `stem`), or nothing if it is best kept whole.
    pub fn split_compound(&self, word: &str, stem: &str, lexicon: &dyn Lexicon) -> Vec<String> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() < MIN_COMPOUND_CHARS || chars.iter().any(|(_, c)| c.is_ascii_digit()) {
            return Vec::new();
        }
        let whole = f64::from(lexicon.frequency(stem));
        let mut best: Option<(f64, Vec<String>)> = None;
        let mut parts = Vec::new();
        self.segment(word, &chars, 0, lexicon, &mut parts, &mut best);
        match best {
            Some((score, parts)) if score > whole => parts,
            _ => Vec::new(),
        }
    }

    /// Depth-first search over segmentations of `word[chars[start]..]` into known parts.
    fn segment(
        &self,
        word: &str,
        chars: &[(usize, char)],
        start: usize,
        lexicon: &dyn Lexicon,
        parts: &mut Vec<(String, u32)>,
        best: &mut Option<(f64, Vec<String>)>,
    ) {
        let byte = |i: usize| chars.get(i).map_or(word.len(), |&(b, _)| b);
        let rest = chars.len() - start;
        // The last part: the rest of the word.
        if !parts.is_empty() && rest >= MIN_PART_CHARS {
            let stem = self.stem(&word[byte(start)..]);
            let freq = lexicon.frequency(&stem);
            if freq > 0 {
                parts.push((stem, freq));
                let n = parts.len() as f64;
                let score = parts.iter().map(|(_, f)| f64::from(*f).ln()).sum::<f64>() / n;
                let score = score.exp();
                if best.as_ref().is_none_or(|(b, _)| score > *b) {
                    *best = Some((score, parts.iter().map(|(s, _)| s.clone()).collect()));
                }
                parts.pop();
            }
        }
        if parts.len() + 1 >= MAX_PARTS {
            return;
        }
        // A non-final part of at least MIN_PART_CHARS, leaving room for a final one.
        for end in start + MIN_PART_CHARS..=chars.len().saturating_sub(MIN_PART_CHARS) {
            let head = &word[byte(start)..byte(end)];
            let stem = self.stem(head);
            let freq = lexicon.frequency(&stem);
            if freq == 0 {
                continue;
            }
            parts.push((stem, freq));
            self.segment(word, chars, end, lexicon, parts, best);
            // The same head followed by a linking element.
            let tail = &word[byte(end)..];
            for link in LINKS {
                if tail.starts_with(link) {
                    let after = end + link.chars().count();
                    if chars.len() - after >= MIN_PART_CHARS {
                        self.segment(word, chars, after, lexicon, parts, best);
                    }
                }
            }
            parts.pop();
        }
    }
}

/// `ae`/`oe`/`ue` → `ä`/`ö`/`ü` except in `que`-like spellings after `q`.
pub fn fold_transliterations(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut prev: Option<char> = None;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        let umlaut = match c {
            'a' => Some('ä'),
            'o' => Some('ö'),
            'u' if prev != Some('q') => Some('ü'),
            _ => None,
        };
        if let (Some(u), Some('e')) = (umlaut, chars.peek()) {
            chars.next();
            out.push(u);
            prev = Some(u);
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// Whether a lowercased word is a German stopword.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// The German stopword list (NLTK's), sorted for binary search.
const STOPWORDS: &[&str] = &[
    "aber", "alle", "allem", "allen", "aller", "alles", "als", "also", "am", "an", "ander",
    "andere", "anderem", "anderen", "anderer", "anderes", "anderm", "andern", "anderr", "anders",
    "auch", "auf", "aus", "bei", "bin", "bis", "bist", "da", "damit", "dann", "das", "dass", "daß",
    "dein", "deine", "deinem", "deinen", "deiner", "deines", "dem", "den", "denn", "der", "derer",
    "des", "dessen", "dich", "die", "dies", "diese", "diesem", "diesen", "dieser", "dieses", "dir",
    "doch", "dort", "du", "durch", "ein", "eine", "einem", "einen", "einer", "eines", "einig",
    "einige", "einigem", "einigen", "einiger", "einiges", "einmal", "er", "es", "etwas", "euch",
    "euer", "eure", "eurem", "euren", "eurer", "eures", "für", "gegen", "gewesen", "hab", "habe",
    "haben", "hat", "hatte", "hatten", "hier", "hin", "hinter", "ich", "ihm", "ihn", "ihnen",
    "ihr", "ihre", "ihrem", "ihren", "ihrer", "ihres", "im", "in", "indem", "ins", "ist", "jede",
    "jedem", "jeden", "jeder", "jedes", "jene", "jenem", "jenen", "jener", "jenes", "jetzt",
    "kann", "kein", "keine", "keinem", "keinen", "keiner", "keines", "können", "könnte", "machen",
    "man", "manche", "manchem", "manchen", "mancher", "manches", "mein", "meine", "meinem",
    "meinen", "meiner", "meines", "mich", "mir", "mit", "muss", "musste", "nach", "nicht",
    "nichts", "noch", "nun", "nur", "ob", "oder", "ohne", "sehr", "sein", "seine", "seinem",
    "seinen", "seiner", "seines", "selbst", "sich", "sie", "sind", "so", "solche", "solchem",
    "solchen", "solcher", "solches", "soll", "sollte", "sondern", "sonst", "um", "und", "uns",
    "unser", "unsere", "unserem", "unseren", "unserer", "unseres", "unter", "viel", "vom", "von",
    "vor", "war", "waren", "warst", "was", "weg", "weil", "weiter", "welche", "welchem", "welchen",
    "welcher", "welches", "wenn", "werde", "werden", "wie", "wieder", "will", "wir", "wird",
    "wirst", "wo", "wollen", "wollte", "während", "würde", "würden", "zu", "zum", "zur", "zwar",
    "zwischen", "über",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Analyzer {
        Analyzer::new(AnalyzerConfig::PLAIN)
    }

    #[test]
    fn stopword_list_is_sorted_and_unique() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "{STOPWORDS:?}");
    }

    #[test]
    fn tokenises_lowercases_drops_stopwords_keeps_section_numbers() {
        let terms = plain().terms("Der Vermieter kann nach § 573b kündigen.", None);
        assert_eq!(terms, ["vermiet", "573b", "kundig"]);
    }

    #[test]
    fn stems_statute_words_together() {
        let a = plain();
        let stem = |w: &str| a.stem_word(&w.to_lowercase()).unwrap();
        assert_eq!(stem("Mängel"), stem("Mangel"));
        assert_eq!(stem("Kündigung"), stem("Kündigungen"));
        assert_eq!(stem("Vermieter"), stem("Vermieters"));
        assert_eq!(stem("Schadensersatz"), stem("Schadensersatzes"));
        assert_eq!(stem("Mietsache"), stem("Mietsachen"));
        assert_eq!(stem("Miete"), stem("Mieter"));
        // ß is folded by the stemmer itself.
        assert_eq!(stem("Gemäß"), stem("gemass"));
    }

    #[test]
    fn folding_makes_transliterations_meet_umlauts() {
        let folded = Analyzer::new(AnalyzerConfig {
            fold_umlauts: true,
            decompound: false,
        });
        let stem = |a: &Analyzer, w: &str| a.stem_word(w).unwrap();
        assert_eq!(stem(&folded, "maengel"), stem(&folded, "mängel"));
        assert_eq!(stem(&folded, "kuendigung"), stem(&folded, "kündigung"));
        assert_eq!(stem(&folded, "buergschaft"), stem(&folded, "bürgschaft"));
        assert_ne!(stem(&plain(), "maengel"), stem(&plain(), "mängel"));
        assert_eq!(fold_transliterations("quelle"), "quelle");
        assert_eq!(fold_transliterations("fuer"), "für");
        // A folded stopword is still a stopword.
        assert_eq!(folded.stem_word("fuer"), None);
    }

    fn lexicon(text: &str) -> HashMap<String, u32> {
        let mut lexicon = HashMap::new();
        for term in plain().terms(text, None) {
            *lexicon.entry(term).or_insert(0) += 1;
        }
        lexicon
    }

    #[test]
    fn decompounding_splits_against_the_corpus() {
        let lexicon = lexicon(
            "Die Miete ist gemindert. Minderung der Miete. Der Mieter zahlt die Miete. \
             Der Vertrag über die Mietsache. Vertrag und Verträge. Der Kauf ist ein Vertrag.",
        );
        let a = Analyzer::new(AnalyzerConfig::default());
        let terms = a.terms("Mietminderung", Some(&lexicon));
        assert_eq!(terms, ["mietminder", "miet", "minder"]);
        // With a linking element.
        let terms = a.terms("Kaufsvertrag", Some(&lexicon));
        assert_eq!(terms, ["kaufsvertrag", "kauf", "vertrag"]);
        // The statute phrase and the compound now share terms.
        let phrase = a.terms("Minderung der Miete", Some(&lexicon));
        assert!(phrase.contains(&"miet".to_string()) && phrase.contains(&"minder".to_string()));
        // Unknown parts: kept whole.
        assert_eq!(
            a.terms("Donaudampfschiff", Some(&lexicon)),
            ["donaudampfschiff"]
        );
        // A word more frequent whole than split stays whole.
        assert_eq!(a.terms("Mietsache", Some(&lexicon)), ["mietsach"]);
        // Decompounding off: no parts.
        assert_eq!(
            plain().terms("Mietminderung", Some(&lexicon)),
            ["mietminder"]
        );
    }
}
