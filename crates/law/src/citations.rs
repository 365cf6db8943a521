//! Finding and resolving explicit citations in statute text (`§ 437`, `§§ 439, 440, 441`, `§§ 535 bis 548`,
//! `§ 433 Abs. 1 Satz 2`, `nach den §§ 1922 ff.`, `Absatz 2`, `§ 15a InsO`, `Artikel 229 § 5 des
//! Einführungsgesetzes ...`).
//!
//! Statutes are densely cross-referenced and the paper names reference-aware chunking as the obvious next step,
//! so citations are parsed once, here, into [`Citation`]s (pure text work, usable in the browser for queries such
//! as `535 BGB`), and [`resolve_references`] turns them into section indices of a [`Law`].

use crate::{Law, RefTarget, Reference, Span};
use std::collections::HashMap;
use std::ops::Range;

/// What introduced a citation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// `§` / `§§`.
    Paragraph,
    /// `Art.` / `Artikel`.
    Article,
    /// `Absatz 2` / `Abs. 2` without a section: an Absatz of the citing section.
    Subsection,
}

/// One cited provision within a citation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CitedItem {
    /// Section number as printed (`573b`); for [`Marker::Subsection`] the Absatz number.
    pub number: String,
    /// `bis 548`: the end of a range starting at `number`.
    pub range_to: Option<String>,
    /// `Abs. 1` as printed.
    pub subsection: Option<String>,
    /// `Satz 2`.
    pub sentence: Option<u16>,
}

/// Another law named after the citation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LawRef {
    /// An abbreviation: `InsO`, `BGB`, `SGB V`.
    Abbreviation(String),
    /// Words: `des Handelsgesetzbuchs`, `dieses Gesetzes`.
    Words(String),
}

/// A citation found in text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    /// Byte range of the whole citation in the text.
    pub span: Range<usize>,
    /// What introduced it.
    pub marker: Marker,
    /// The cited provisions in order.
    pub items: Vec<CitedItem>,
    /// `ff.` / `f.` followed the last item.
    pub following: bool,
    /// The law named after it, if any.
    pub law: Option<LawRef>,
}

/// Finds every citation in `text`, in order.
pub fn find_citations(text: &str) -> Vec<Citation> {
    let mut found = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some((start, marker, after)) = next_marker(text, pos) else {
            break;
        };
        match parse_citation(text, start, marker, after) {
            Some(citation) => {
                pos = citation.span.end;
                found.push(citation);
            }
            None => pos = after,
        }
    }
    found
}

/// Finds the next citation marker at or after `from`: `(start, marker, position after the marker)`.
fn next_marker(text: &str, from: usize) -> Option<(usize, Marker, usize)> {
    let mut best: Option<(usize, Marker, usize)> = None;
    for (needle, marker) in [
        ("§§", Marker::Paragraph),
        ("§", Marker::Paragraph),
        ("Artikel", Marker::Article),
        ("Art.", Marker::Article),
        ("Absatzes", Marker::Subsection),
        ("Absätze", Marker::Subsection),
        ("Absatz", Marker::Subsection),
        ("Abs.", Marker::Subsection),
    ] {
        let mut search = from;
        while let Some(i) = text[search..].find(needle).map(|i| i + search) {
            let at_word_start = text[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            let end = i + needle.len();
            if at_word_start && next_is_number(text, end) {
                if best.is_none_or(|(b, _, _)| i < b) {
                    best = Some((i, marker, end));
                }
                break;
            }
            search = end;
        }
    }
    best
}

fn next_is_number(text: &str, pos: usize) -> bool {
    text[pos..]
        .trim_start_matches([' ', '\u{a0}'])
        .starts_with(|c: char| c.is_ascii_digit())
}

/// A cursor over the text after a marker.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// The next whitespace-delimited word (a trailing comma is its own word), without consuming it.
    fn peek_word(&self) -> (&'a str, usize) {
        let rest = self.text[self.pos..].trim_start_matches([' ', '\u{a0}', '\n']);
        let offset = self.text.len() - self.pos - rest.len();
        if rest.starts_with(',') {
            return (",", offset + 1);
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | ')' | '('))
            .unwrap_or(rest.len());
        // a sentence-final period belongs to the sentence, unless the word is an abbreviation
        let word = &rest[..end];
        let word = match word.strip_suffix('.') {
            Some(stem)
                if !matches!(
                    stem,
                    "Abs"
                        | "Nr"
                        | "Nrn"
                        | "S"
                        | "Art"
                        | "ff"
                        | "f"
                        | "Buchst"
                        | "Alt"
                        | "Var"
                        | "Hs"
                ) =>
            {
                stem
            }
            _ => word,
        };
        (word, offset + word.len())
    }

    fn take_word(&mut self) -> &'a str {
        let (word, len) = self.peek_word();
        self.pos += len;
        word
    }

    /// Consumes a section number (`535`, `573b`) if one comes next.
    fn take_number(&mut self) -> Option<String> {
        let (word, len) = self.peek_word();
        if is_section_number(word) {
            self.pos += len;
            Some(word.to_string())
        } else {
            None
        }
    }
}

fn is_section_number(word: &str) -> bool {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && digits <= 5
        && word.len() - digits <= 1
        && word[digits..].bytes().all(|b| b.is_ascii_lowercase())
}

const SUBSECTION_WORDS: &[&str] = &["Abs.", "Absatz", "Absatzes", "Absätze", "Absätzen"];
const SENTENCE_WORDS: &[&str] = &["Satz", "S.", "Sätze", "Sätzen"];
/// Finer qualifiers we skip over (with their numbers/letters): they narrow below the sentence.
const FINER_WORDS: &[&str] = &[
    "Nr.",
    "Nrn.",
    "Nummer",
    "Nummern",
    "Halbsatz",
    "Hs.",
    "Buchstabe",
    "Buchstaben",
    "Buchst.",
    "Alt.",
    "Alternative",
    "Var.",
    "Variante",
    "Unterabsatz",
    "Doppelbuchstabe",
];
const JOIN_WORDS: &[&str] = &[",", "und", "oder", "sowie", "bis"];

fn parse_citation(text: &str, start: usize, marker: Marker, after: usize) -> Option<Citation> {
    let mut cur = Cursor { text, pos: after };
    let plural = text[start..after].starts_with("§§") || text[start..after].starts_with("Absätze");
    let mut items = Vec::new();
    let mut end;
    'items: loop {
        let number = cur.take_number()?;
        let mut item = CitedItem {
            number,
            range_to: None,
            subsection: None,
            sentence: None,
        };
        end = cur.pos;
        if marker == Marker::Subsection {
            item_sentence(&mut cur, &mut item, &mut end);
        } else {
            // `Artikel 229 § 5`: the article's own section number belongs to the article.
            if marker == Marker::Article && cur.peek_word().0 == "§" {
                let save = cur.pos;
                cur.take_word();
                if cur.take_number().is_some() {
                    end = cur.pos;
                } else {
                    cur.pos = save;
                }
            }
            parse_qualifiers(&mut cur, &mut item, plural, &mut end);
        }
        items.push(item);
        // more items: `, 440`, `und 441`, `bis 548`
        loop {
            let save = cur.pos;
            let join = cur.take_word();
            let allowed = plural || marker == Marker::Subsection || join == "bis";
            let next_is_number = is_section_number(cur.peek_word().0);
            if !(JOIN_WORDS.contains(&join) && allowed && next_is_number) {
                cur.pos = save;
                break 'items;
            }
            if join != "bis" {
                continue 'items;
            }
            let to = cur.take_number().expect("checked above");
            items.last_mut().expect("pushed above").range_to = Some(to);
            end = cur.pos;
        }
    }
    cur.pos = end;
    let following = matches!(cur.peek_word().0, "ff." | "f.");
    if following {
        cur.take_word();
        end = cur.pos;
    }
    let law = if marker == Marker::Subsection {
        None
    } else {
        parse_law(&mut cur, &mut end)
    };
    Some(Citation {
        span: start..end,
        marker,
        items,
        following,
        law,
    })
}

/// `Abs. 1 Satz 2 Nr. 3`: fills subsection and sentence, skips finer qualifiers.
fn parse_qualifiers(cur: &mut Cursor, item: &mut CitedItem, plural: bool, end: &mut usize) {
    loop {
        let save = cur.pos;
        let word = cur.take_word();
        if SUBSECTION_WORDS.contains(&word) {
            if let Some(number) = cur.take_number() {
                item.subsection.get_or_insert(number);
                *end = cur.pos;
                if !plural {
                    parse_qualifier_chain(cur, end);
                }
                continue;
            }
        } else if SENTENCE_WORDS.contains(&word) {
            if let Some(number) = cur.take_number() {
                item.sentence = item.sentence.or(number.parse().ok());
                *end = cur.pos;
                if !plural {
                    parse_qualifier_chain(cur, end);
                }
                continue;
            }
        } else if FINER_WORDS.contains(&word) {
            let (next, _) = cur.peek_word();
            if is_section_number(next)
                || next.len() == 1
                || next.len() == 2 && next.bytes().all(|b| b.is_ascii_lowercase())
            {
                cur.take_word();
                *end = cur.pos;
                parse_qualifier_chain(cur, end);
                continue;
            }
        }
        cur.pos = save;
        return;
    }
}

fn item_sentence(cur: &mut Cursor, item: &mut CitedItem, end: &mut usize) {
    let save = cur.pos;
    if SENTENCE_WORDS.contains(&cur.take_word()) {
        if let Some(number) = cur.take_number() {
            item.sentence = number.parse().ok();
            *end = cur.pos;
            return;
        }
    }
    cur.pos = save;
}

/// `1 und 3`, `1, 2 oder 4`, `1 bis 3` after a qualifier word: consumed as part of that qualifier.
fn parse_qualifier_chain(cur: &mut Cursor, end: &mut usize) {
    loop {
        let save = cur.pos;
        let join = cur.take_word();
        if JOIN_WORDS.contains(&join) {
            let (next, _) = cur.peek_word();
            if is_section_number(next)
                || next.len() == 1 && next.chars().all(|c| c.is_ascii_lowercase())
            {
                cur.take_word();
                *end = cur.pos;
                continue;
            }
        }
        cur.pos = save;
        return;
    }
}

/// The law named after a citation: `InsO`, `SGB V`, `des Handelsgesetzbuchs`, `dieses Gesetzes`.
fn parse_law(cur: &mut Cursor, end: &mut usize) -> Option<LawRef> {
    let save = cur.pos;
    let word = cur.take_word();
    if looks_like_abbreviation(word) {
        let mut law = word.to_string();
        *end = cur.pos;
        let (next, len) = cur.peek_word();
        if is_roman(next) {
            law = format!("{law} {next}");
            cur.pos += len;
            *end = cur.pos;
        }
        return Some(LawRef::Abbreviation(law));
    }
    if matches!(word, "des" | "der" | "dieses" | "dieser") {
        let phrase_start = save + (cur.text[save..].len() - cur.text[save..].trim_start().len());
        for _ in 0..4 {
            let next = cur.take_word();
            if !next.starts_with(char::is_uppercase) && next != "zum" && next != "über" {
                break;
            }
            if is_law_noun(next) {
                *end = cur.pos;
                return Some(LawRef::Words(cur.text[phrase_start..cur.pos].to_string()));
            }
        }
    }
    cur.pos = save;
    None
}

fn is_law_noun(word: &str) -> bool {
    let lower = word.to_lowercase();
    [
        "gesetz",
        "gesetzes",
        "gesetzbuch",
        "gesetzbuchs",
        "gesetzbuches",
        "gesetzbuche",
        "ordnung",
        "verordnung",
        "buches",
        "buchs",
        "abkommens",
        "übereinkommens",
        "vertrags",
        "vertrages",
        "richtlinie",
        "verfassung",
        "grundgesetzes",
    ]
    .iter()
    .any(|suffix| lower.ends_with(suffix))
}

/// `InsO`, `BGB`, `GG`, `EGBGB`, `SGB`: short, capitalised, with a capital after the first letter.
fn looks_like_abbreviation(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    (2..=12).contains(&chars.len())
        && chars[0].is_uppercase()
        && chars[1..].iter().any(|c| c.is_uppercase())
        && chars.iter().all(|c| c.is_alphanumeric() || *c == '-')
}

fn is_roman(word: &str) -> bool {
    !word.is_empty() && word.len() <= 4 && word.chars().all(|c| matches!(c, 'I' | 'V' | 'X'))
}

/// Resolves the citations of every section of `law` into [`Reference`]s, replacing what was there.
///
/// Citations of the law's own abbreviation or of `dieses Gesetzes` are internal; any other named law is
/// external; `Absatz 2` without a section points into the citing section.
pub fn resolve_references(law: &mut Law) {
    let index = NumberIndex::new(law);
    let own_stem: String = law
        .title
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take(6)
        .collect();
    let resolved: Vec<Vec<Reference>> = law
        .sections
        .iter()
        .enumerate()
        .map(|(self_index, section)| {
            find_citations(&section.text)
                .into_iter()
                .map(|citation| Reference {
                    span: Span::new(citation.span.clone()),
                    targets: resolve(&citation, self_index, &law.abbreviation, &own_stem, &index),
                })
                .collect()
        })
        .collect();
    for (section, references) in law.sections.iter_mut().zip(resolved) {
        section.references = references;
    }
}

fn resolve(
    citation: &Citation,
    self_index: usize,
    own: &str,
    own_stem: &str,
    index: &NumberIndex,
) -> Vec<RefTarget> {
    let prefix = match citation.marker {
        Marker::Paragraph => "§ ",
        Marker::Article => "Art. ",
        Marker::Subsection => {
            return citation
                .items
                .iter()
                .map(|item| RefTarget::Section {
                    section: self_index as u32,
                    subsection: Some(item.number.clone()),
                    sentence: item.sentence,
                })
                .collect();
        }
    };
    let external = match &citation.law {
        Some(LawRef::Abbreviation(a)) if a != own => Some(a.clone()),
        Some(LawRef::Words(w))
            if !w.starts_with("dies") && (own_stem.is_empty() || !w.contains(own_stem)) =>
        {
            Some(w.clone())
        }
        _ => None,
    };
    let mut targets = Vec::new();
    for item in &citation.items {
        let designation = format!("{prefix}{}", item.number);
        if let Some(law) = &external {
            targets.push(RefTarget::External {
                law: law.clone(),
                designation,
            });
            if let Some(to) = &item.range_to {
                targets.push(RefTarget::External {
                    law: law.clone(),
                    designation: format!("{prefix}{to}"),
                });
            }
            continue;
        }
        let from = index.get(prefix, &item.number);
        match (from, &item.range_to) {
            (Some(from), Some(to)) => match index.get(prefix, to) {
                Some(to) if to >= from => {
                    targets.extend((from..=to).map(|section| RefTarget::Section {
                        section: section as u32,
                        subsection: None,
                        sentence: None,
                    }))
                }
                _ => {
                    targets.push(section_target(from, item));
                    targets.push(RefTarget::Unresolved {
                        designation: format!("{prefix}{to}"),
                    });
                }
            },
            (Some(from), None) => targets.push(section_target(from, item)),
            (None, _) => targets.push(RefTarget::Unresolved { designation }),
        }
    }
    targets
}

fn section_target(section: usize, item: &CitedItem) -> RefTarget {
    RefTarget::Section {
        section: section as u32,
        subsection: item.subsection.clone(),
        sentence: item.sentence,
    }
}

/// Section number -> index, for `§` and `Art.` designations; repealed ranges (`§§ 3 bis 6`) cover each number.
struct NumberIndex(HashMap<String, usize>);

impl NumberIndex {
    fn new(law: &Law) -> Self {
        let mut map = HashMap::new();
        for (i, section) in law.sections.iter().enumerate() {
            let d = section.designation.as_str();
            if let Some(number) = section.number() {
                let prefix = if d.starts_with('§') { "§ " } else { "Art. " };
                map.entry(format!("{prefix}{number}")).or_insert(i);
            } else if let Some((prefix, rest)) = d
                .strip_prefix("§§ ")
                .map(|r| ("§ ", r))
                .or_else(|| d.strip_prefix("Art. ").map(|r| ("Art. ", r)))
            {
                // `§§ 3 bis 6` or `§§ 3, 4`
                let numbers: Vec<&str> = rest
                    .split([' ', ','])
                    .filter(|w| is_section_number(w))
                    .collect();
                let bounds: Option<(u32, u32)> = match numbers.as_slice() {
                    [a, b] if rest.contains("bis") => a.parse().ok().zip(b.parse().ok()),
                    _ => None,
                };
                match bounds {
                    Some((a, b)) if b >= a && b - a < 1000 => {
                        for n in a..=b {
                            map.entry(format!("{prefix}{n}")).or_insert(i);
                        }
                    }
                    _ => {
                        for n in numbers {
                            map.entry(format!("{prefix}{n}")).or_insert(i);
                        }
                    }
                }
            }
        }
        NumberIndex(map)
    }

    fn get(&self, prefix: &str, number: &str) -> Option<usize> {
        self.0.get(&format!("{prefix}{number}")).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cite(text: &str) -> Vec<(String, Vec<String>, Option<LawRef>)> {
        find_citations(text)
            .into_iter()
            .map(|c| {
                let items = c
                    .items
                    .iter()
                    .map(|i| {
                        let mut s = i.number.clone();
                        if let Some(to) = &i.range_to {
                            s += &format!("-{to}");
                        }
                        if let Some(a) = &i.subsection {
                            s += &format!(" Abs{a}");
                        }
                        if let Some(n) = i.sentence {
                            s += &format!(" S{n}");
                        }
                        s
                    })
                    .collect();
                (text[c.span].to_string(), items, c.law)
            })
            .collect()
    }

    #[test]
    fn single_list_and_range() {
        assert_eq!(cite("nach § 437 kann")[0].1, vec!["437"]);
        assert_eq!(
            cite("die §§ 439, 440, 441 und 323 gelten")[0].1,
            vec!["439", "440", "441", "323"]
        );
        assert_eq!(cite("die §§ 535 bis 548 gelten")[0].1, vec!["535-548"]);
        let c = cite("gilt § 433 Abs. 1 Satz 2 entsprechend");
        assert_eq!(c[0].0, "§ 433 Abs. 1 Satz 2");
        assert_eq!(c[0].1, vec!["433 Abs1 S2"]);
    }

    #[test]
    fn following_and_qualifier_chains() {
        let c = find_citations("nach den §§ 1922 ff. zu beurteilen");
        assert!(c[0].following);
        assert_eq!(
            &"nach den §§ 1922 ff. zu beurteilen"[c[0].span.clone()],
            "§§ 1922 ff."
        );
        // § 40 BGB
        let text = "Die Vorschriften des § 26 Absatz 2 Satz 1, des § 27 Absatz 1 und 3, der §§ 28, 31a Abs. 1 Satz 2 sowie der §§ 32, 33 und 38 finden";
        let items: Vec<Vec<String>> = cite(text).into_iter().map(|c| c.1).collect();
        assert_eq!(
            items,
            vec![
                vec!["26 Abs2 S1"],
                vec!["27 Abs1"],
                vec!["28", "31a Abs1 S2"],
                vec!["32", "33", "38"]
            ]
        );
        let c = cite("nach § 1592 Nummer 1 oder 2 oder § 1593 besteht");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].0, "§ 1592 Nummer 1 oder 2");
    }

    #[test]
    fn external_laws() {
        assert_eq!(
            cite("nach § 15a InsO")[0].2,
            Some(LawRef::Abbreviation("InsO".into()))
        );
        assert_eq!(
            cite("nach § 5 SGB V ist")[0].2,
            Some(LawRef::Abbreviation("SGB V".into()))
        );
        assert_eq!(
            cite("§ 1 des Handelsgesetzbuchs gilt")[0].2,
            Some(LawRef::Words("des Handelsgesetzbuchs".into()))
        );
        assert_eq!(
            cite("§ 3 dieses Gesetzes gilt")[0].2,
            Some(LawRef::Words("dieses Gesetzes".into()))
        );
        let c = cite("Artikel 229 § 5 des Einführungsgesetzes zum Bürgerlichen Gesetzbuche");
        assert_eq!(c[0].0, "Artikel 229 § 5 des Einführungsgesetzes");
        assert_eq!(cite("nach § 280 Der")[0].2, None);
    }

    #[test]
    fn intra_section_subsections() {
        let c = find_citations("Die Frist nach Absatz 2 beginnt; die Absätze 1 und 3 gelten.");
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].marker, Marker::Subsection);
        assert_eq!(c[1].items.len(), 2);
        assert!(find_citations("ohne Zahl: Absatzes und §").is_empty());
    }
}
