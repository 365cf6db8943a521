//! Splits a section's text into runs for display: which bytes belong to a unit that scored, which to the Absatz
//! or Satz the query cites, which are a citation of another section of the same law (an in-app link), and which
//! are a term defined elsewhere.

use paragraf_law::definitions::TermUse;
use paragraf_law::{RefTarget, Section};

/// A run of text with one look.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The text.
    pub text: String,
    /// Inside a unit that scored (rank of the best such unit among the section's hits, 0 = best).
    pub hit: Option<usize>,
    /// Inside the Absatz or Satz the query cites.
    pub cited: bool,
    /// Cites this section of the same law.
    pub link: Option<u32>,
    /// A defined term (index of its definition); never part of a link.
    pub term: Option<usize>,
}

/// The runs of `text`: `hits` as (rank, byte range), `cited` the byte ranges the query cites, links from the
/// section's references, `terms` as the glossary found them.
pub fn runs(
    section: &Section,
    hits: &[(usize, std::ops::Range<usize>)],
    cited: &[std::ops::Range<usize>],
    terms: &[TermUse],
) -> Vec<Run> {
    let text = &section.text;
    let len = text.len();
    let links: Vec<(std::ops::Range<usize>, u32)> = section
        .references
        .iter()
        .filter_map(|r| {
            r.targets.iter().find_map(|t| match t {
                RefTarget::Section { section, .. } => Some((r.span.range(), *section)),
                _ => None,
            })
        })
        .collect();
    // A term inside a citation stays part of the link.
    let terms: Vec<&TermUse> = terms
        .iter()
        .filter(|t| {
            !links
                .iter()
                .any(|(r, _)| r.start < t.range.end && t.range.start < r.end)
        })
        .collect();
    let mut cuts: Vec<usize> = vec![0, len];
    for r in hits.iter().map(|(_, r)| r).chain(cited) {
        cuts.extend([r.start.min(len), r.end.min(len)]);
    }
    for r in links
        .iter()
        .map(|(r, _)| r)
        .chain(terms.iter().map(|t| &t.range))
    {
        cuts.extend([r.start.min(len), r.end.min(len)]);
    }
    cuts.retain(|&c| text.is_char_boundary(c));
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Run> = Vec::new();
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a == b {
            continue;
        }
        let hit = hits
            .iter()
            .filter(|(_, r)| r.start <= a && b <= r.end)
            .map(|(rank, _)| *rank)
            .min();
        let in_cited = cited.iter().any(|r| r.start <= a && b <= r.end);
        let link = links
            .iter()
            .find(|(r, _)| r.start <= a && b <= r.end)
            .map(|(_, s)| *s);
        let term = terms
            .iter()
            .find(|t| t.range.start <= a && b <= t.range.end)
            .map(|t| t.definition);
        match out.last_mut() {
            // A link or term split by a hit's edge stays split: each piece is its own element.
            Some(last)
                if last.hit == hit
                    && last.cited == in_cited
                    && (last.link, last.term, link, term) == (None, None, None, None) =>
            {
                last.text.push_str(&text[a..b])
            }
            _ => out.push(Run {
                text: text[a..b].to_string(),
                hit,
                cited: in_cited,
                link,
                term,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use paragraf_law::{Reference, Span};

    fn section(text: &str) -> Section {
        Section {
            designation: "Art. 1".into(),
            title: "Menschenwürde".into(),
            structure: None,
            repealed: false,
            text: text.into(),
            subsections: Vec::new(),
            sentences: Vec::new(),
            list_items: Vec::new(),
            references: Vec::new(),
            footnotes: Vec::new(),
        }
    }

    #[test]
    fn hits_and_links_split_the_text() {
        let mut s = section("Die Würde des Menschen ist unantastbar. Siehe Artikel 2.");
        let at = s.text.find("Artikel 2").unwrap();
        s.references.push(Reference {
            span: Span::new(at..at + "Artikel 2".len()),
            targets: vec![RefTarget::Section {
                section: 1,
                subsection: None,
                sentence: None,
            }],
        });
        let end = s.text.find(" Siehe").unwrap();
        let at_würde = s.text.find("Würde").unwrap();
        let terms = [
            TermUse {
                range: at_würde..at_würde + "Würde".len(),
                definition: 7,
            },
            // Inside the link: the link wins.
            TermUse {
                range: at..at + "Artikel".len(),
                definition: 8,
            },
        ];
        let runs = runs(&s, &[(0, 0..end)], &[], &terms);
        let texts: Vec<&str> = runs.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Die ",
                "Würde",
                " des Menschen ist unantastbar.",
                " Siehe ",
                "Artikel 2",
                "."
            ]
        );
        assert_eq!(runs[0].hit, Some(0));
        assert_eq!((runs[1].hit, runs[1].term), (Some(0), Some(7)));
        assert_eq!(runs[3].hit, None);
        assert_eq!((runs[4].link, runs[4].term), (Some(1), None));
        assert_eq!(
            runs.iter().map(|r| r.text.as_str()).collect::<String>(),
            s.text
        );
    }

    #[test]
    fn the_cited_satz_is_marked_across_hits() {
        let s = section("Satz eins. Satz zwei. Satz drei.");
        let zwei = s.text.find("Satz zwei.").unwrap();
        let cited = zwei..zwei + "Satz zwei.".len();
        let runs = runs(&s, &[(0, 0..zwei + 4)], &[cited], &[]);
        let marked: Vec<(&str, Option<usize>, bool)> = runs
            .iter()
            .map(|r| (r.text.as_str(), r.hit, r.cited))
            .collect();
        assert_eq!(
            marked,
            [
                ("Satz eins. ", Some(0), false),
                ("Satz", Some(0), true),
                (" zwei.", None, true),
                (" Satz drei.", None, false)
            ]
        );
    }

    #[test]
    fn spans_off_char_boundaries_or_past_the_end_do_not_panic() {
        let s = section("Würde");
        let cited = 3..99;
        let runs = runs(&s, &[(0, 2..99)], std::slice::from_ref(&cited), &[]);
        assert_eq!(
            runs.iter().map(|r| r.text.as_str()).collect::<String>(),
            "Würde"
        );
    }
}
