//! Citation queries: a user who types `§ 535`, `535 BGB`, `§§ 535 ff.`, `Art. 1 GG` or `§ 433 Abs. 1` wants
//! that provision, not whatever is semantically near the digits. The cited sections are found here and placed
//! ahead of every other result by [`cited_first`].
//!
//! Parsing reuses the statute citation parser ([`find_citations`]); two query forms statutes never use are
//! recognised here: a bare number followed by the law's abbreviation (`535 BGB`), and a designation without `§`
//! or `Art.` typed as the whole query (`Anlage 2`, `Eingangsformel BGBEG`: what links to such sections ask). Citations naming another law
//! (`§ 15a InsO` in a BGB search) are ignored; `Abs.`/`Satz` narrow nothing, as results are whole sections.

use super::Hit;
use paragraf_law::citations::{find_citations, LawRef, Marker};
use paragraf_law::Law;

/// Sections after the cited one that `ff.` brings in (`§§ 535 ff.` → 535, 536, 537).
pub const FOLLOWING_SECTIONS: usize = 2;

/// Most sections a range (`§§ 535 bis 548`) contributes.
pub const MAX_RANGE_SECTIONS: usize = 30;

/// Indices into `law.sections` of the sections `query` cites, in citation order, without duplicates; repealed
/// sections are skipped.
pub fn cited_sections(query: &str, law: &Law) -> Vec<usize> {
    let mut out = Vec::new();
    let add = |i: usize, out: &mut Vec<usize>| {
        if !law.sections[i].repealed && !out.contains(&i) {
            out.push(i);
        }
    };
    for citation in find_citations(query) {
        let prefix = match citation.marker {
            Marker::Paragraph => "§",
            Marker::Article => "Art.",
            Marker::Subsection => continue,
        };
        match &citation.law {
            None => {}
            Some(LawRef::Abbreviation(a)) if a.eq_ignore_ascii_case(&law.abbreviation) => {}
            Some(_) => continue,
        }
        let find = |number: &str| law.find_section(&format!("{prefix} {number}"));
        let last = citation.items.len().saturating_sub(1);
        for (n, item) in citation.items.iter().enumerate() {
            let Some(start) = find(&item.number) else {
                continue;
            };
            add(start, &mut out);
            let end = match &item.range_to {
                Some(to) => find(to).filter(|&e| e > start),
                None if n == last && citation.following => Some(start + FOLLOWING_SECTIONS),
                None => None,
            };
            if let Some(end) = end {
                law.sections
                    .iter()
                    .enumerate()
                    .skip(start + 1)
                    .take_while(|(i, _)| *i <= end)
                    .filter(|(_, s)| !s.repealed)
                    .take(MAX_RANGE_SECTIONS)
                    .for_each(|(i, _)| add(i, &mut out));
            }
        }
    }
    for number in bare_numbers_before(query, &law.abbreviation) {
        if let Some(i) = law.find_section(&format!("§ {number}")) {
            add(i, &mut out);
        }
    }
    if let Some(i) = whole_designation(query, law) {
        add(i, &mut out);
    }
    out
}

/// A designation without `§` or `Art.` (`Anlage 2`, `Eingangsformel`), typed as the whole query, alone or before
/// the law's abbreviation (`Anlage AufbhV`): what a link to such a section asks, which the citation parser does
/// not know. Words only (a bare number is no designation here), short queries only (a question is not one); a
/// current section before a repealed one of the same designation.
fn whole_designation(query: &str, law: &Law) -> Option<usize> {
    const LONGEST: usize = 64;
    let query = query.trim();
    if query.len() > LONGEST || !query.chars().next()?.is_alphabetic() {
        return None;
    }
    let find = |designation: &str| {
        law.designations(designation)
            .find(|&i| !law.sections[i].repealed)
    };
    let before_abbreviation = || {
        let cut = query.len().checked_sub(law.abbreviation.len())?;
        let (designation, named) = (query.get(..cut)?, query.get(cut..)?);
        (!law.abbreviation.is_empty()
            && named.eq_ignore_ascii_case(&law.abbreviation)
            && designation.ends_with(char::is_whitespace))
        .then(|| find(designation.trim_end()))?
    };
    find(query).or_else(before_abbreviation)
}

/// Numbers written directly before the law's abbreviation: `535 BGB`, `573b bgb`.
fn bare_numbers_before<'a>(query: &'a str, abbreviation: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    if abbreviation.is_empty() {
        return found;
    }
    let bytes = query.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // A digit is ASCII, so `i` is a char boundary whenever the first test passes.
        if !bytes[i].is_ascii_digit()
            || query[..i]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
        {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end < bytes.len() && bytes[end].is_ascii_lowercase() {
            end += 1;
        }
        let number = &query[i..end];
        let rest = &query[end..];
        let after_space = rest.trim_start_matches([' ', '\u{a0}']);
        let law_follows = after_space.len() < rest.len()
            && after_space
                .get(..abbreviation.len())
                .is_some_and(|a| a.eq_ignore_ascii_case(abbreviation))
            && !after_space[abbreviation.len()..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
        if law_follows {
            found.push(number);
        }
        i = end.max(i + 1);
    }
    found
}

/// `cited` followed by the ids of `ranking` not already cited, at most `k` in all.
pub fn cited_first(cited: &[u32], ranking: &[Hit], k: usize) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(k);
    for &id in cited.iter().chain(ranking.iter().map(|h| &h.index)) {
        if out.len() == k {
            break;
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use paragraf_law::Section;

    fn law(abbreviation: &str, designations: &[(&str, bool)]) -> Law {
        let section = |(designation, repealed): &(&str, bool)| Section {
            repealed: *repealed,
            ..Section::bare(*designation, "")
        };
        Law::bare(abbreviation, designations.iter().map(section).collect())
    }

    fn bgb() -> Law {
        law(
            "BGB",
            &[
                ("§ 433", false),
                ("§ 534", true),
                ("§ 535", false),
                ("§ 536", false),
                ("§ 536a", false),
                ("§ 537", false),
                ("§ 573", false),
                ("§ 573b", false),
            ],
        )
    }

    #[test]
    fn query_forms_find_their_sections() {
        let bgb = bgb();
        assert_eq!(cited_sections("§ 535", &bgb), [2]);
        assert_eq!(cited_sections("§535 BGB", &bgb), [2]);
        assert_eq!(cited_sections("535 BGB", &bgb), [2]);
        assert_eq!(cited_sections("was sagt 573b bgb dazu?", &bgb), [7]);
        assert_eq!(cited_sections("§ 433 Abs. 1", &bgb), [0]);
        assert_eq!(cited_sections("§§ 535 ff.", &bgb), [2, 3, 4]);
        assert_eq!(cited_sections("§§ 534 bis 536a", &bgb), [2, 3, 4]);
        assert_eq!(cited_sections("§§ 573, 433", &bgb), [6, 0]);
    }

    #[test]
    fn other_laws_plain_numbers_and_unknown_sections_are_ignored() {
        let bgb = bgb();
        assert!(cited_sections("§ 535 InsO", &bgb).is_empty());
        assert!(cited_sections("535 Euro Miete", &bgb).is_empty());
        assert!(cited_sections("535BGB", &bgb).is_empty());
        assert!(cited_sections("§ 999", &bgb).is_empty());
        assert!(cited_sections("§ 534", &bgb).is_empty(), "repealed");
        assert!(cited_sections("Mietminderung wegen Schimmel", &bgb).is_empty());
    }

    #[test]
    fn designations_without_a_sign_are_found_when_typed_whole() {
        let aufbhv = law(
            "AufbhV",
            &[
                ("Eingangsformel", false),
                ("§ 1", false),
                ("Anlage", false),
                ("Anlage 2", false),
            ],
        );
        assert_eq!(cited_sections("Anlage", &aufbhv), [2]);
        assert_eq!(cited_sections(" anlage  2 ", &aufbhv), [3]);
        assert_eq!(cited_sections("Anlage AufbhV", &aufbhv), [2]);
        assert_eq!(cited_sections("Eingangsformel aufbhv", &aufbhv), [0]);
        // Within a question, or a bare number: no designation.
        assert!(cited_sections("Was steht in der Anlage?", &aufbhv).is_empty());
        assert!(cited_sections("1", &aufbhv).is_empty());
        assert!(cited_sections("Anlage 3", &aufbhv).is_empty());
        assert!(cited_sections("AnlageAufbhV", &aufbhv).is_empty());
        // A repealed section and a current one under one designation: the current one.
        let renewed = law("X", &[("Anlage", true), ("Anlage", false)]);
        assert_eq!(cited_sections("Anlage X", &renewed), [1]);
    }

    #[test]
    fn articles_of_the_basic_law() {
        let gg = law(
            "GG",
            &[("Art. 1", false), ("Art. 2", false), ("Art. 20a", false)],
        );
        assert_eq!(cited_sections("Art. 1 GG", &gg), [0]);
        assert_eq!(cited_sections("Artikel 20a", &gg), [2]);
        assert_eq!(cited_sections("20a GG", &gg), [2]);
        assert!(cited_sections("Art. 1 GG", &bgb()).is_empty());
    }

    #[test]
    fn cited_sections_rank_first() {
        let ranking = [
            Hit {
                index: 4,
                score: 0.9,
            },
            Hit {
                index: 7,
                score: 0.8,
            },
            Hit {
                index: 9,
                score: 0.7,
            },
        ];
        assert_eq!(cited_first(&[7, 1], &ranking, 10), [7, 1, 4, 9]);
        assert_eq!(cited_first(&[7, 1], &ranking, 3), [7, 1, 4]);
        assert_eq!(cited_first(&[], &ranking, 2), [4, 7]);
    }
}
