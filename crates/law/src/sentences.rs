//! A sentence splitter for German statute text.
//!
//! Lawyers cite sentences ("§ 433 Abs. 1 Satz 2"), and the sentence is a chunking unit, so splitting must agree
//! with how the law counts. A plain "period + space + capital" rule fails constantly on statute text: on
//! abbreviations (`Abs.`, `Nr.`, `i. V. m.`, `BGBl.`), on ordinals and dates (`des 18. Lebensjahres`,
//! `1. Januar 2002`) and on enumerations whose items end in a period. This splitter looks at the word before a
//! period and the word after it:
//!
//! * abbreviations and single letters never end a sentence;
//! * a number ends a sentence only when it closes a citation (`nach Absatz 1.`, `der §§ 1 und 2.`) or is a year;
//!   an ordinal before a noun (`des 18. Lebensjahres`) or a month (`1. Januar`) does not;
//! * a new line that starts an enumeration item (`\n2. `, `\nb) `) continues the sentence that opened the list,
//!   as the law counts it (the items are "Nummern" of that sentence, not sentences of their own).

use std::ops::Range;

/// Words that are abbreviations when followed by a period (compared case-sensitively, without the period).
const ABBREVIATIONS: &[&str] = &[
    "Abs", "Abschn", "Abl", "ABl", "Alt", "Anh", "Anl", "Anm", "Art", "Artt", "Aufl", "ausschl",
    "Bd", "Bek", "BGBl", "Buchst", "bzgl", "bzw", "ca", "Dr", "einschl", "etc", "evtl", "f", "ff",
    "gem", "Ges", "gez", "ggf", "Halbs", "Hs", "inkl", "Kap", "lfd", "lit", "max", "min", "mind",
    "Mio", "Mrd", "Nr", "Nrn", "Prof", "Rn", "RGBl", "sog", "St", "Str", "Tz", "Unterabs", "usw",
    "Var", "vgl", "Ziff", "zzgl", "abzgl",
];

/// Words that, standing before a number (chain), make that number a citation: a period after it ends a sentence.
const CITATION_WORDS: &[&str] = &[
    "§",
    "§§",
    "Abs.",
    "Absatz",
    "Absatzes",
    "Absätze",
    "Absätzen",
    "Satzes",
    "Artikels",
    "Satz",
    "Sätze",
    "Sätzen",
    "S.",
    "Nr.",
    "Nrn.",
    "Nummer",
    "Nummern",
    "Art.",
    "Artikel",
    "Buchstabe",
    "Buchstaben",
    "Buchst.",
    "Halbsatz",
    "Anlage",
    "Anlagen",
    "Anhang",
    "Kapitel",
    "Abschnitt",
    "Teil",
    "Titel",
    "Buch",
    "Unterabsatz",
    "Ziffer",
    "Doppelbuchstabe",
    "Spalte",
    "Zeile",
    "Tabelle",
    "Muster",
    "Stufe",
    "Klasse",
    "Gruppe",
    "Verordnung",
    "Richtlinie",
];

/// Words that continue a chain of cited numbers: `§§ 1, 2 und 3`, `Absatz 1 oder 2`.
const CHAIN_WORDS: &[&str] = &["und", "oder", "bis", "sowie", ","];

const MONTHS: &[&str] = &[
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

/// Splits `text` into sentences, returning trimmed byte ranges in order. Text without any boundary is one sentence;
/// blank text gives none.
pub fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let mut sentences = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') {
            continue;
        }
        let end = i + c.len_utf8();
        if is_boundary(text, i, end) {
            push_trimmed(text, start..end_with_closers(text, end), &mut sentences);
            start = end_with_closers(text, end);
        }
    }
    push_trimmed(text, start..text.len(), &mut sentences);
    sentences
}

/// Includes closing quotes and parentheses that directly follow a sentence end (`... „Miete“.` / `...?“`).
fn end_with_closers(text: &str, end: usize) -> usize {
    end + text[end..]
        .chars()
        .take_while(|c| matches!(c, '"' | '“' | '”' | '\'' | '»' | '«' | ')'))
        .map(char::len_utf8)
        .sum::<usize>()
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let slice = &text[range.clone()];
    let lead = slice.len() - slice.trim_start().len();
    let trail = slice.len() - slice.trim_end().len();
    if lead + trail < slice.len() {
        out.push(range.start + lead..range.end - trail);
    }
}

/// Whether the terminal character at `dot..end` ends a sentence.
fn is_boundary(text: &str, dot: usize, end: usize) -> bool {
    let after_closers = end_with_closers(text, end);
    let rest = &text[after_closers..];
    let Some(first) = rest.chars().next() else {
        return true;
    };
    if !first.is_whitespace() {
        return false; // `29.3.2026`, `z.B.`, `5.000`
    }
    let gap = rest.len() - rest.trim_start().len();
    let next = &rest[gap..];
    let Some(next_char) = next.chars().next() else {
        return true;
    };
    if rest[..gap].contains('\n') && starts_list_item(next) {
        return false;
    }
    if !(next_char.is_uppercase() || matches!(next_char, '§' | '(' | '"' | '„' | '»')) {
        return false;
    }
    if text[dot..end] != *"." {
        return true; // `?` and `!` always end a sentence before a capital.
    }
    let before = &text[..dot];
    let word = last_word(before);
    let next_word = first_word(next);
    if word.is_empty() {
        return true;
    }
    if is_abbreviation(word) {
        // `§§ 987 ff.` may end a sentence; before a law's abbreviation (`ff. BGB`) it does not.
        return matches!(word, "f" | "ff") && !looks_like_law_abbreviation(next_word);
    }
    if is_number(word) {
        if MONTHS.contains(&next_word) {
            return false;
        }
        if word.chars().take_while(char::is_ascii_digit).count() >= 4 {
            return true; // a year closes a date: `1. Januar 2002.`
        }
        return number_closes_citation(&before[..before.len() - word.len()]);
    }
    true
}

/// Whether `s` starts with an enumeration label followed by a space: `1. `, `12a. `, `a) `, `aa) `, `- `.
pub fn starts_list_item(s: &str) -> bool {
    let label_len = list_label_len(s);
    label_len > 0 && s[label_len..].starts_with([' ', '\u{a0}'])
}

/// Length in bytes of an enumeration label at the start of `s`, 0 if there is none.
fn list_label_len(s: &str) -> usize {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let letters = s[digits..]
            .bytes()
            .take_while(u8::is_ascii_lowercase)
            .count()
            .min(1);
        let after = digits + letters;
        return if s[after..].starts_with(['.', ')']) {
            after + 1
        } else {
            0
        };
    }
    let letters = s.bytes().take_while(u8::is_ascii_lowercase).count();
    if (1..=3).contains(&letters) && s[letters..].starts_with(')') {
        return letters + 1;
    }
    if s.starts_with(['-', '•']) || s.starts_with('–') {
        return s.chars().next().map_or(0, char::len_utf8);
    }
    0
}

fn last_word(before: &str) -> &str {
    let start = before
        .rfind(char::is_whitespace)
        .map_or(0, |i| i + before[i..].chars().next().unwrap().len_utf8());
    before[start..].trim_start_matches(['(', '"', '„', '»', '['])
}

fn first_word(after: &str) -> &str {
    let end = after
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | ')'))
        .unwrap_or(after.len());
    &after[..end]
}

fn is_abbreviation(word: &str) -> bool {
    // single letters (`S.`, `v.`, `i. V. m.`) and dotted forms (`z.B.`, `i.V.m.`) are abbreviations too
    ABBREVIATIONS.contains(&word)
        || word.chars().count() == 1 && word.chars().all(char::is_alphabetic)
        || word.contains('.')
}

fn is_number(word: &str) -> bool {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && word[digits..].bytes().all(|b| b.is_ascii_lowercase()) && word.len() - digits <= 1
}

/// `InsO`, `BGB`, `SGB`: an upper-case letter after the first character.
fn looks_like_law_abbreviation(word: &str) -> bool {
    word.chars().skip(1).any(char::is_uppercase)
}

/// Walks back over a chain of numbers (`1, 2 und 3`) and reports whether a citation word precedes it.
fn number_closes_citation(before: &str) -> bool {
    let mut words = before
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .flat_map(|w| {
            // split a trailing comma off (`1,` -> `1`, `,`)
            match w.strip_suffix(',') {
                Some(stem) if !stem.is_empty() => vec![stem, ","],
                _ => vec![w],
            }
        })
        .rev();
    for word in words.by_ref() {
        if CITATION_WORDS.contains(&word) {
            return true;
        }
        if !(is_number(word) || CHAIN_WORDS.contains(&word)) {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        split_sentences(text)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn bgb_535_subsection_1_has_three_sentences() {
        let text = "Durch den Mietvertrag wird der Vermieter verpflichtet, dem Mieter den Gebrauch der Mietsache während der Mietzeit zu gewähren. Der Vermieter hat die Mietsache dem Mieter in einem zum vertragsgemäßen Gebrauch geeigneten Zustand zu überlassen und sie während der Mietzeit in diesem Zustand zu erhalten. Er hat die auf der Mietsache ruhenden Lasten zu tragen.";
        let sentences = split(text);
        assert_eq!(sentences.len(), 3);
        assert!(sentences[2].starts_with("Er hat"));
    }

    #[test]
    fn abbreviations_do_not_end_sentences() {
        // § 40 BGB
        let text = "Die Vorschriften des § 26 Absatz 2 Satz 1, des § 27 Absatz 1 und 3, der §§ 28, 31a Abs. 1 Satz 2 sowie der §§ 32, 33 und 38 finden insoweit keine Anwendung als die Satzung ein anderes bestimmt. Von § 34 kann auch für die Beschlussfassung des Vorstands durch die Satzung nicht abgewichen werden.";
        assert_eq!(split(text).len(), 2);
        for abbreviation in [
            "Abs.", "Nr.", "S.", "i. V. m.", "z. B.", "u. a.", "bzw.", "ggf.", "vgl.", "Buchst.",
            "lit.", "Art.", "Nrn.", "Var.", "Alt.", "gem.", "v.", "usw.",
        ] {
            let text = format!("Dies gilt nach {abbreviation} Der Rest folgt. Zweiter Satz.");
            assert_eq!(split(&text).len(), 2, "{text}");
        }
    }

    #[test]
    fn ordinals_and_dates_do_not_end_sentences() {
        // § 2 BGB, Art. 229 § 5 EGBGB style dates
        assert_eq!(
            split("Die Volljährigkeit tritt mit der Vollendung des 18. Lebensjahres ein.").len(),
            1
        );
        assert_eq!(split("Auf Schuldverhältnisse, die vor dem 1. Januar 2002 entstanden sind, ist das Gesetz anzuwenden. Satz 1 gilt entsprechend.").len(), 2);
        assert_eq!(
            split("Das gilt bis zum 31. Dezember 2002. Danach nicht.").len(),
            2
        );
        assert_eq!(
            split("geändert durch Art. 1 G v. 29.3.2026 I Nr. 83").len(),
            1
        );
    }

    #[test]
    fn citations_closing_a_sentence_end_it() {
        let text = "Die Anfechtung ist ausgeschlossen im Fall des Absatzes 1. Dies gilt nicht, wenn die Frist nach Satz 1 und 2. Abgelaufen ist sie nie.";
        assert_eq!(split(text).len(), 3);
        assert_eq!(
            split("Es gelten die §§ 987 ff. Der Besitzer haftet.").len(),
            2
        );
        assert_eq!(
            split("Es gelten die §§ 1922 ff. BGB entsprechend.").len(),
            1
        );
        assert_eq!(
            split("Er schuldet Ersatz nach § 280. Das gilt auch hier.").len(),
            2
        );
    }

    #[test]
    fn enumerations_belong_to_the_sentence_that_opens_them() {
        // § 1600 Abs. 1 BGB as the parser lays it out
        let text = "Berechtigt, die Vaterschaft anzufechten, sind:\n1. der Mann, dessen Vaterschaft nach § 1592 Nummer 1 oder 2 oder § 1593 besteht,\n2. der Mann, der an Eides statt versichert, der Mutter des Kindes während der Empfängniszeit beigewohnt zu haben,\n3. die Mutter und\n4. das Kind.\nDie Anfechtung nach Satz 1 Nummer 2 setzt voraus, dass der Anfechtende der leibliche Vater des Kindes ist.";
        let sentences = split(text);
        assert_eq!(sentences.len(), 2, "{sentences:#?}");
        assert!(sentences[1].starts_with("Die Anfechtung nach Satz 1 Nummer 2"));
        let items_with_periods =
            "Im Sinne dieses Gesetzes sind:\n1. Waren alle Sachen.\n2. Dienste alle Leistungen.";
        assert_eq!(split(items_with_periods).len(), 1);
    }

    #[test]
    fn questions_quotes_and_blank_text() {
        assert_eq!(
            split("Wer haftet? Der Schuldner."),
            vec!["Wer haftet?", "Der Schuldner."]
        );
        assert_eq!(
            split("Er heißt „Mieter“. Sie heißt „Vermieterin“."),
            vec!["Er heißt „Mieter“.", "Sie heißt „Vermieterin“."]
        );
        assert!(split("  \n ").is_empty());
        assert_eq!(split("(weggefallen)"), vec!["(weggefallen)"]);
        assert_eq!(split("ohne Punkt am Ende"), vec!["ohne Punkt am Ende"]);
    }

    #[test]
    fn lower_case_continuations_are_not_boundaries() {
        assert_eq!(split("Der Betrag von 5. bis 10. ist zu zahlen.").len(), 1);
        assert_eq!(
            split("die in § 312 Abs. 2 Nr. 1 bis 3 und 5. genannten Verträge sind erfasst.").len(),
            1
        );
    }

    #[test]
    fn list_labels() {
        assert!(starts_list_item("1. der Mann"));
        assert!(starts_list_item("12a. Text"));
        assert!(starts_list_item("a) Text"));
        assert!(starts_list_item("aa) Text"));
        assert!(!starts_list_item("Die Anfechtung"));
        assert!(!starts_list_item("1.000 Euro"));
    }
}
