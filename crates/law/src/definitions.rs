//! Statutory definitions (Legaldefinitionen): which sentence of a law defines which term.
//!
//! A lay question uses the word a statute defines elsewhere (`Verbraucher`, `Sache`, `unverzüglich`), and the
//! section that applies the word rarely repeats what it means. This finds the defining sentences with five
//! deterministic patterns, the forms German federal drafting uses for definitions, each checked on the BGB
//! and the StGB:
//!
//! 1. [`Form::Copula`]: `Verbraucher ist jede natürliche Person, die ...` (§ 13 BGB), `Zubehör sind bewegliche
//!    Sachen, die ...` (§ 97). The subject is a short noun phrase, bare or with an indefinite article (a
//!    definite article, preposition, pronoun, `kein`, or a lone adjective such as `Zuständig`/`Maßgeblich`
//!    means a rule about something already named), the predicate a noun phrase (a determiner such as `jede`,
//!    `eine`, `die`, then inflected adjectives, then a noun, not negated), the clause up to the first comma
//!    ends on a noun and is not followed by `, wenn`. So `Die Verjährung ist gehemmt, ...`, `Tiere sind keine
//!    Sachen`, `Der Anmeldung ist eine Abschrift ... beizufügen` and `Ein Unternehmer ist Vermittler ..., wenn`
//!    are not definitions.
//! 2. [`Form::InTheSense`]: `Sachen im Sinne des Gesetzes sind ...` (§ 90 BGB), `Trainer im Sinne dieser
//!    Vorschrift ist, wer ...` (§ 265c StGB), and the lead-in form `Im Sinne dieses Gesetzes sind
//!    Verfassungsgrundsätze` (§ 92 StGB). `im Sinne` after the subject is the drafters' explicit marker.
//! 3. [`Form::Who`]: `Fahrlässig handelt, wer ...` (§ 276 BGB), `Mörder ist, wer ...` (§ 211 StGB): a one- or
//!    two-word term, then `ist, wer` / `handelt, wer`. Terms naming a legal consequence (`Straffrei ist, wer`)
//!    are rules, not definitions, and are left out.
//! 4. [`Form::Parenthesis`]: `ohne schuldhaftes Zögern (unverzüglich)` (§ 121 BGB), `... zu verlangen
//!    (Anspruch)` (§ 194): a short parenthesised name after the words it names. Not: abbreviations (`(EU)`),
//!    citations and numbers (`(§ 11 Absatz 3)`, `(Absatz 6)`), `(weggefallen)`, explanations listing parts
//!    (`(Tag, Monat und Jahr)`), and the parenthesised headings of enumeration items in §§ 308, 309 BGB
//!    (`1. (Annahme- und Leistungsfrist) eine Bestimmung ...`), which name a clause, not a term.
//! 5. [`Form::ListEntry`]: `Im Sinne dieses Gesetzes ist 1. Angehöriger: wer ...` (§ 11 StGB): each item of an
//!    enumeration after an `Im Sinne ...` lead-in that reads `term: definition`.
//!
//! Known misses (deliberately not chased, each would cost more false positives than it finds): copulas whose
//! predicate starts with a preposition or a participle phrase (`Die Stiftung ist eine mit einem Vermögen ...
//! ausgestattete ... juristische Person`, § 80 BGB), fictions (`gilt als`, `stehen gleich`), definitions by
//! verb (`Im Sinne dieses Gesetzes beeinträchtigt den Bestand ..., wer`, § 92 StGB), and enumeration items whose
//! term and definition the source XML runs together without the colon (`sexuelle Handlungennur solche`,
//! § 184h StGB). Known false positives: a copula with a noun predicate that assigns rather than defines
//! (`Zuständige Stelle ist die Landesjustizverwaltung`, § 79 BGB) and a parenthesised synonym (`Wählerliste
//! (Wahlkartei)`, § 107b StGB). Precision and counts on the BGB and StGB are in docs/citations.md ("Definitions").
//!
//! [`Glossary`] answers the other half: which defined terms a text uses (stems of the term's words, in order, via
//! the BM25 analyzer without decompounding, so `Sachen` in § 90 meets `Sache` in § 433).

use std::collections::HashMap;
use std::ops::Range;

use crate::analyzer::{Analyzer, AnalyzerConfig};
use crate::{Law, Section, Span};

/// Which drafting pattern a definition was found by (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// `X ist jede/eine/die ... Y, die ...`.
    Copula,
    /// `X im Sinne dieses Gesetzes ist/sind ...`.
    InTheSense,
    /// `X ist, wer ...` / `X handelt, wer ...`.
    Who,
    /// `... beschreibung (X) ...`.
    Parenthesis,
    /// `Im Sinne ... ist 1. X: ...`.
    ListEntry,
}

/// One statutory definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    /// The defined term as printed, without a leading article (`Verbraucher`, `unverzüglich`,
    /// `Vertretbare Sachen`).
    pub term: String,
    /// Index into [`Law::sections`] of the section that defines it.
    pub section: u32,
    /// The defining sentence, or the enumeration item for [`Form::ListEntry`], in that section's text.
    pub span: Span,
    /// How it was recognised.
    pub form: Form,
}

/// Every definition in the law's active sections, in section and text order; one per term and section.
pub fn find_definitions(law: &Law) -> Vec<Definition> {
    definitions_by_section(law).flatten().collect()
}

/// [`find_definitions`] one active section at a time, for a caller that must not hold the thread for a whole law.
pub fn definitions_by_section(law: &Law) -> impl Iterator<Item = Vec<Definition>> + '_ {
    law.active_sections()
        .map(|(i, section)| section_definitions(i as u32, section))
}

/// The definitions in one section (`index` is recorded in each).
pub fn section_definitions(index: u32, section: &Section) -> Vec<Definition> {
    let mut out: Vec<Definition> = Vec::new();
    let mut push = |term: &str, span: Span, form: Form| {
        let term = term.trim();
        let lower = term.to_lowercase();
        if !term.is_empty() && !out.iter().any(|d| d.term.to_lowercase() == lower) {
            out.push(Definition {
                term: term.to_string(),
                section: index,
                span,
                form,
            });
        }
    };
    for sentence in &section.sentences {
        let text = section.slice(sentence.span);
        if let Some((term, form)) = head_definition(text) {
            push(&term, sentence.span, form);
        }
        if let Some(lead) = in_the_sense_lead(text) {
            match lead {
                Lead::Term(term) => push(&term, sentence.span, Form::InTheSense),
                Lead::List => {
                    for item in section
                        .list_items
                        .iter()
                        .filter(|item| item.depth == 0 && sentence.span.contains(item.span))
                    {
                        if let Some(term) = list_entry_term(section.slice(item.span)) {
                            push(term, item.span, Form::ListEntry);
                        }
                    }
                }
            }
        }
        for term in parenthesised_terms(text) {
            push(term, sentence.span, Form::Parenthesis);
        }
    }
    out
}

/// Articles stripped from the front of a term.
const ARTICLES: [&str; 7] = ["der", "die", "das", "ein", "eine", "einer", "eines"];

/// Words that cannot start a defined term's noun phrase: prepositions, pronouns, adverbs and participles that
/// open rules (`Mit den Wertpapieren sind ...`, `Dabei sind ...`, `Ausgenommen sind ...`).
const NOT_A_SUBJECT: [&str; 46] = [
    "mit",
    "bei",
    "beim",
    "in",
    "im",
    "von",
    "vom",
    "zu",
    "zur",
    "zum",
    "auf",
    "für",
    "kraft",
    "nach",
    "aus",
    "über",
    "unter",
    "vor",
    "während",
    "durch",
    "gegen",
    "an",
    "am",
    "ohne",
    "seit",
    "wegen",
    "neben",
    "außer",
    "gemäß",
    "soweit",
    "sofern",
    "wenn",
    "dabei",
    "hierbei",
    "dies",
    "dieses",
    "diese",
    "dieser",
    "es",
    "er",
    "sie",
    "ausgenommen",
    "ferner",
    "jedoch",
    "absatz",
    "satz",
];

/// Determiners and quantifiers that may open a defining predicate (`jede natürliche Person`, `nur solche`).
const PREDICATE_DETERMINERS: [&str; 16] = [
    "jede",
    "jeder",
    "jedes",
    "ein",
    "eine",
    "einer",
    "alle",
    "nur",
    "solche",
    "die",
    "der",
    "das",
    "diejenige",
    "derjenige",
    "dasjenige",
    "diejenigen",
];

/// Terms of `X ist, wer` that name a legal consequence, so the sentence is a rule (`Straffrei ist, wer ...`).
const CONSEQUENCES: [&str; 6] = [
    "straffrei",
    "strafbar",
    "verpflichtet",
    "berechtigt",
    "haftbar",
    "ersatzpflichtig",
];

/// Whether a term names a legal consequence (`Straffrei`, `Antragsberechtigt`).
fn names_consequence(term: &str) -> bool {
    let term = term.to_lowercase();
    CONSEQUENCES.iter().any(|c| term.ends_with(c))
}

fn is_capitalised(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
}

/// An adjective-shaped single word (`Zuständig`, `Maßgeblich`, `Unwirksam`): not a noun subject.
fn looks_adjectival(word: &str) -> bool {
    let w = word.to_lowercase();
    ["ig", "lich", "bar", "sam", "los", "isch", "end"]
        .iter()
        .any(|end| w.ends_with(end))
}

/// An inflected attributive adjective (`natürliche`, `beweglichen`, `dauerhafter`), or `und`/`oder` between two.
fn is_attributive(word: &str) -> bool {
    !is_capitalised(word)
        && (matches!(word, "und" | "oder")
            || ["e", "en", "er", "es", "em"]
                .iter()
                .any(|end| word.ends_with(end) && word.len() > end.len() + 2))
}

/// Strips a leading article from a term.
fn strip_article(term: &str) -> &str {
    match term.split_once(' ') {
        Some((first, rest)) if ARTICLES.contains(&first.to_lowercase().as_str()) => rest,
        _ => term,
    }
}

/// Whether `subject` (the words before `ist`/`sind`) is a noun phrase that can name a defined term.
fn is_noun_subject(subject: &[&str]) -> bool {
    // Definitions name their term bare or with an indefinite article; `Die Anfrage ist ...`, `Dem Patienten
    // sind ...` and `Keine ... sind` state rules about a thing already named.
    if subject.first().is_some_and(|w| {
        let w = w.to_lowercase();
        matches!(w.as_str(), "der" | "die" | "das" | "dem" | "den" | "des") || w.starts_with("kein")
    }) {
        return false;
    }
    let words: Vec<&str> = match subject.first() {
        Some(first) if ARTICLES.contains(&first.to_lowercase().as_str()) => subject[1..].to_vec(),
        _ => subject.to_vec(),
    };
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        return false;
    };
    words.len() <= 4
        && !NOT_A_SUBJECT.contains(&first.to_lowercase().as_str())
        && is_capitalised(last)
        && !(words.len() == 1 && (looks_adjectival(first) || names_consequence(first)))
        && words
            .iter()
            .all(|w| w.chars().all(|c| c.is_alphabetic() || c == '-'))
}

/// A definition in the sentence's main clause: [`Form::Copula`], [`Form::InTheSense`] or [`Form::Who`].
fn head_definition(sentence: &str) -> Option<(String, Form)> {
    let line = sentence.lines().next()?;
    let clause_end = line
        .bytes()
        .position(|b| matches!(b, b',' | b';' | b':'))
        .unwrap_or(line.len());
    // Most sentences have none of the verbs: skipped without splitting them into words.
    if !may_have_word(&line[..clause_end], &["ist", "sind", "handelt"]) {
        return None;
    }
    let words: Vec<&str> = line[..clause_end].split_whitespace().collect();
    let verb = words
        .iter()
        .position(|w| matches!(*w, "ist" | "sind" | "handelt"))?;
    let subject = &words[..verb];
    let after_verb = line[..].split_whitespace().nth(verb + 1);
    let who = verb + 1 == words.len()
        && line[clause_end..]
            .strip_prefix(", wer")
            .is_some_and(|rest| !rest.starts_with(char::is_alphabetic));
    if let Some(at) = subject.iter().position(|w| *w == "im") {
        // `X im Sinne des Gesetzes sind ...`
        let named = &subject[..at];
        let sense = subject.get(at + 1) == Some(&"Sinne") && subject.len() - at <= 8;
        let negated = after_verb.is_some_and(|w| w.starts_with("kein") || w == "nicht");
        return (sense && !named.is_empty() && is_noun_or_adjective(named) && !negated).then(
            || {
                (
                    strip_article(&named.join(" ")).to_string(),
                    Form::InTheSense,
                )
            },
        );
    }
    if who {
        let term = subject.join(" ");
        return (!subject.is_empty()
            && subject.len() <= 2
            && !NOT_A_SUBJECT.contains(&subject[0].to_lowercase().as_str())
            && !names_consequence(&term))
        .then_some((term, Form::Who));
    }
    if words[verb] == "handelt" || !is_noun_subject(subject) {
        return None;
    }
    // The predicate: determiners, inflected adjectives, then a noun; the clause ends on a noun.
    let predicate = &words[verb + 1..];
    if predicate
        .first()
        .is_some_and(|w| w.starts_with("kein") || *w == "nicht")
    {
        return None;
    }
    let mut rest = predicate
        .iter()
        .skip_while(|w| PREDICATE_DETERMINERS.contains(w))
        .skip_while(|w| is_attributive(w));
    let noun = rest.next().is_some_and(|w| is_capitalised(w));
    let ends_on_noun = predicate
        .last()
        .is_some_and(|w| is_capitalised(w.trim_end_matches('.')));
    // `Ein Unternehmer ist Vermittler ..., wenn er ...`: a condition makes it a rule about the subject.
    let conditional = line[clause_end..].starts_with(", wenn ");
    (noun && ends_on_noun && !conditional)
        .then(|| (strip_article(&subject.join(" ")).to_string(), Form::Copula))
}

/// `Vertretbare Sachen`, `Vorsätzlich`, `Ein Wettbewerb des organisierten Sports`: the words before `im Sinne`.
fn is_noun_or_adjective(words: &[&str]) -> bool {
    words.len() <= 6
        && !NOT_A_SUBJECT.contains(&words[0].to_lowercase().as_str())
        && words
            .iter()
            .all(|w| w.chars().all(|c| c.is_alphabetic() || c == '-'))
}

/// What an `Im Sinne dieses Gesetzes ist|sind ...` lead-in introduces.
enum Lead {
    /// `Im Sinne dieses Gesetzes sind Verfassungsgrundsätze` + enumeration: one term.
    Term(String),
    /// `Im Sinne dieses Gesetzes ist` + enumeration of `term: definition` items.
    List,
}

/// Whether one of `words` may be a whole word of `text`: it starts there after a byte that is not an ASCII letter
/// or digit (every whitespace character ends in such a byte). Cheaper than splitting `text` into words, and never
/// false where [`str::split_whitespace`] would yield one of them.
fn may_have_word(text: &str, words: &[&str]) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|at| {
        (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
            && words.iter().any(|w| bytes[at..].starts_with(w.as_bytes()))
    })
}

fn in_the_sense_lead(sentence: &str) -> Option<Lead> {
    let line = sentence.lines().next()?.trim_end();
    if !line.starts_with("Im Sinne ") || sentence.lines().nth(1).is_none() {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let verb = words.iter().position(|w| matches!(*w, "ist" | "sind"))?;
    match &words[verb + 1..] {
        [] => Some(Lead::List),
        term if term.len() <= 3 && term.last().is_some_and(|w| is_capitalised(w)) => {
            Some(Lead::Term(term.join(" ")))
        }
        _ => None,
    }
}

/// `1. Angehöriger:wer zu den folgenden Personen gehört:` → `Angehöriger`.
fn list_entry_term(item: &str) -> Option<&str> {
    let (_, body) = item.split_once([' ', '\u{a0}'])?;
    let (term, _) = body.split_once(':')?;
    let words: Vec<&str> = term.split_whitespace().collect();
    (!words.is_empty()
        && words.len() <= 6
        && words.last().is_some_and(|w| is_capitalised(w))
        && !words.iter().any(|w| matches!(*w, "ist" | "sind" | "wer")))
    .then(|| strip_article(term.trim()))
}

/// The parenthesised names in a sentence (`(unverzüglich)`; `(Testament, letztwillige Verfügung)` gives two).
fn parenthesised_terms(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = sentence[from..].find('(').map(|i| i + from) {
        let Some(close) = sentence[open + 1..].find([')', '(']).map(|i| i + open + 1) else {
            break;
        };
        if sentence.as_bytes()[close] == b'(' {
            from = close; // nested or unclosed: restart at the inner parenthesis
            continue;
        }
        from = close + 1;
        let inner = &sentence[open + 1..close];
        let before = &sentence[..open];
        let line_before = before.rsplit('\n').next().unwrap_or(before).trim();
        let words_before = line_before.split_whitespace().count();
        let heading = line_before.len() <= 4 && line_before.ends_with(['.', ')']);
        // `Verbrechen nach § 211 (Mord)`: the name of a cited provision, not a definition.
        let after_citation = line_before
            .split_whitespace()
            .last()
            .is_some_and(|w| w.chars().any(|c| c.is_ascii_digit()));
        if words_before >= 2 && !heading && !after_citation && is_name(inner) {
            out.extend(inner.split(", ").map(str::trim));
        }
    }
    out
}

/// Whether parenthesised text is a short name: words of letters, not an abbreviation, reference or note.
fn is_name(inner: &str) -> bool {
    let words: Vec<&str> = inner.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let letters_only = inner
        .chars()
        .all(|c| c.is_alphabetic() || matches!(c, ' ' | '-' | ','));
    let abbreviation = words.iter().any(|w| {
        w.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && w.chars()
                .filter(|c| c.is_alphabetic())
                .all(char::is_uppercase)
    });
    let note = matches!(
        first.to_lowercase().as_str(),
        "absatz"
            | "absätze"
            | "satz"
            | "nummer"
            | "buchstabe"
            | "artikel"
            | "weggefallen"
            | "keine"
    );
    // `(Tag, Monat und Jahr)`, `(Anstifter oder Gehilfe)`: the parts of what the words before mean.
    let explanation = (inner.contains(',') && inner.contains(" und ")) || inner.contains(" oder ");
    words.len() <= 5 && letters_only && !abbreviation && !note && !explanation
}

/// A law's definitions with a glossary over them: what a reader of one section needs to look its terms up.
#[derive(Debug)]
pub struct LawDefinitions {
    /// [`find_definitions`] of the law.
    pub definitions: Vec<Definition>,
    glossary: Glossary,
}

impl LawDefinitions {
    /// Finds the law's definitions.
    pub fn new(law: &Law) -> Self {
        Self::of(find_definitions(law))
    }

    /// Over the law's definitions as [`find_definitions`] returns them (or [`definitions_by_section`], joined).
    pub fn of(definitions: Vec<Definition>) -> Self {
        let glossary = Glossary::new(&definitions);
        LawDefinitions {
            definitions,
            glossary,
        }
    }

    /// The first use of each term section `index` uses and another section defines, in text order (a term
    /// explained once per section is enough; its own definitions it states itself).
    pub fn explained_in(&self, law: &Law, index: usize) -> Vec<TermUse> {
        let mut seen = Vec::new();
        self.glossary
            .uses(&law.sections[index].text)
            .into_iter()
            .filter(|u| {
                let d = &self.definitions[u.definition];
                let first = !seen.contains(&d.term);
                seen.push(d.term.clone());
                first && d.section as usize != index
            })
            .collect()
    }
}

/// Finds which defined terms a text uses.
#[derive(Debug)]
pub struct Glossary {
    analyzer: Analyzer,
    /// The stems of each definition's term, in order (stopwords dropped).
    terms: Vec<Vec<String>>,
    /// The definitions whose term starts with a stem, ascending.
    by_first_stem: HashMap<String, Vec<usize>>,
}

/// A defined term where a text uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermUse {
    /// Bytes of the text from the term's first word to its last, as printed (`Deutschen` for `Deutscher`).
    pub range: Range<usize>,
    /// Index of the definition.
    pub definition: usize,
}

impl Glossary {
    /// A glossary over `definitions` (indices into it are what [`Glossary::used_in`] returns).
    pub fn new(definitions: &[Definition]) -> Self {
        let analyzer = Analyzer::new(AnalyzerConfig::PLAIN);
        let terms: Vec<Vec<String>> = definitions
            .iter()
            .map(|d| {
                Analyzer::words(&d.term)
                    .filter_map(|w| analyzer.stem_word(&w))
                    .collect()
            })
            .collect();
        let mut by_first_stem: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, term) in terms.iter().enumerate() {
            if let Some(first) = term.first() {
                by_first_stem.entry(first.clone()).or_default().push(i);
            }
        }
        Glossary {
            analyzer,
            terms,
            by_first_stem,
        }
    }

    /// Indices of the definitions whose term occurs in `text` (its word stems in a row), ascending.
    pub fn used_in(&self, text: &str) -> Vec<usize> {
        let words = self.stems(text);
        let mut used: Vec<usize> = (0..words.len())
            .flat_map(|at| self.terms_at(&words, at))
            .collect();
        used.sort_unstable();
        used.dedup();
        used
    }

    /// Every place `text` uses a defined term, in text order and without overlaps: where terms overlap the
    /// longest wins (`Vertretbare Sachen` over `Sachen`), and of one term defined twice the first definition.
    pub fn uses(&self, text: &str) -> Vec<TermUse> {
        let words = self.stems(text);
        let mut uses = Vec::new();
        let mut at = 0;
        while at < words.len() {
            let longest =
                self.terms_at(&words, at)
                    .fold(None, |best: Option<usize>, t| match best {
                        Some(b) if self.terms[b].len() >= self.terms[t].len() => Some(b),
                        _ => Some(t),
                    });
            match longest {
                Some(t) => {
                    let last = at + self.terms[t].len() - 1;
                    uses.push(TermUse {
                        range: words[at].1.start..words[last].1.end,
                        definition: t,
                    });
                    at = last + 1;
                }
                None => at += 1,
            }
        }
        uses
    }

    /// The definitions whose term's stems start at word `at`, ascending.
    fn terms_at<'a>(
        &'a self,
        words: &'a [(String, Range<usize>)],
        at: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        self.by_first_stem
            .get(&words[at].0)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |&t| {
                let term = &self.terms[t];
                words.len() - at >= term.len()
                    && term.iter().zip(&words[at..]).all(|(a, (b, _))| a == b)
            })
    }

    /// The stems of `text`'s words with where each word is (stopwords dropped).
    fn stems(&self, text: &str) -> Vec<(String, Range<usize>)> {
        Analyzer::word_ranges(text)
            .filter_map(|r| {
                self.analyzer
                    .stem_word(&text[r.clone()].to_lowercase())
                    .map(|stem| (stem, r))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verb_precheck_never_misses_a_word_split_whitespace_finds() {
        let verbs = ["ist", "sind", "handelt"];
        for text in [
            "Verbraucher ist jede",
            "ist",
            "Zubehör\u{a0}sind bewegliche",
            "Fahrlässig\thandelt",
            "X\u{2009}ist\u{3000}Y",
        ] {
            assert!(
                text.split_whitespace().any(|w| verbs.contains(&w)),
                "{text}"
            );
            assert!(may_have_word(text, &verbs), "{text}");
        }
        for text in [
            "Die Frist beginnt",
            "Listen und Abstände",
            "Behandelte Sachen",
            "",
        ] {
            assert!(!may_have_word(text, &verbs), "{text}");
        }
    }

    #[test]
    fn unclosed_and_nested_parentheses_end_and_keep_the_inner_name() {
        assert!(parenthesised_terms("Der Schuldner (unklar").is_empty());
        assert!(parenthesised_terms("((((").is_empty());
        assert_eq!(
            parenthesised_terms("Der Schuldner leistet (nach Wahl (Wahlschuld) sofort"),
            ["Wahlschuld"]
        );
    }

    #[test]
    fn sentence_patterns_and_their_look_alikes() {
        let head = head_definition;
        assert_eq!(
            head("Ein Mietspiegel ist eine Übersicht über die ortsübliche Vergleichsmiete."),
            Some(("Mietspiegel".to_string(), Form::Copula))
        );
        assert_eq!(head("Der Mietspiegel ist eine Übersicht."), None);
        assert_eq!(
            head("Die Frist ist gewahrt, wenn die Erklärung zugeht."),
            None
        );
        assert_eq!(head("Maßgebend ist der Zinssatz."), None);
        assert_eq!(head("Strafbar ist, wer stiehlt."), None);
        assert_eq!(
            head("Sachen im Sinne des Gesetzes sind nur körperliche Gegenstände."),
            Some(("Sachen".to_string(), Form::InTheSense))
        );
        assert_eq!(head("Sachen im Sinne des Gesetzes sind keine Tiere."), None);
    }
}
