//! One citation string to the text it names: `§ 433 Abs. 1 S. 2 BGB` to that sentence, `Art. 20a GG` to the
//! article, `§§ 535 bis 548 BGB` to each section of the range — or a precise refusal saying what the law has
//! instead. Lawyers cite down to the Satz; a tool that answers with the whole section makes them look again.
//!
//! Parsing reuses the statute citation parser ([`find_citations`]); a citation query in a search
//! ([`paragraf_index::citation`]) finds whole sections, this narrows to the Absatz and Satz asked for.

use crate::results::{section_text, Provision, SectionText};
use paragraf_format::names::echo;
use paragraf_index::citation::MAX_RANGE_SECTIONS;
use paragraf_law::citations::{find_citations, Citation, LawRef, Marker};
use paragraf_law::Law;

/// Why a citation names no text.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CiteError {
    /// Nothing in the text reads as a citation.
    #[error("no citation in {0}: write it as cited, e.g. `§ 433 Abs. 1 S. 2 BGB`, `Art. 20a GG` or `§§ 535 bis 548 BGB`")]
    NotACitation(String),
    /// The law is named in words (`des Handelsgesetzbuchs`).
    #[error("{citation} names its law in words ({words}): name it by its abbreviation, e.g. `§ 433 BGB`")]
    LawInWords {
        /// The citation as given.
        citation: String,
        /// The words that name the law.
        words: String,
    },
    /// The section does not exist in the law.
    #[error("{law} has no {designation}; its provisions run from {first} to {last}")]
    NoSection {
        /// The law's abbreviation.
        law: String,
        /// The designation asked for.
        designation: String,
        /// The law's first provision.
        first: String,
        /// The law's last provision.
        last: String,
    },
    /// The section has no such Absatz.
    #[error("{designation} {law} has no Abs. {subsection} ({available})")]
    NoSubsection {
        /// The law's abbreviation.
        law: String,
        /// The section's designation.
        designation: String,
        /// The Absatz asked for.
        subsection: String,
        /// The Absätze the section has.
        available: String,
    },
    /// The Absatz (or section) has no such Satz.
    #[error("{unit} {law} has no Satz {sentence} (it has {count})")]
    NoSentence {
        /// The law's abbreviation.
        law: String,
        /// The section or Absatz, as cited.
        unit: String,
        /// The Satz asked for.
        sentence: u16,
        /// How many Sätze it has.
        count: String,
    },
    /// A Satz of a section with several Absätze, without the Absatz.
    #[error("{designation} {law} has {count} Absätze: name the Absatz, e.g. `{designation} Abs. 1 S. {sentence} {law}`")]
    AbsatzNeeded {
        /// The law's abbreviation.
        law: String,
        /// The section's designation.
        designation: String,
        /// How many Absätze it has.
        count: usize,
        /// The Satz asked for.
        sentence: u16,
    },
}

/// A parsed citation: the law it names (`None`: none named) and what it cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The abbreviation after the provision (`BGB`), if any.
    pub law: Option<String>,
    citation: Citation,
}

/// The first citation in `text`.
pub fn parse(text: &str) -> Result<Request, CiteError> {
    let citation = find_citations(text)
        .into_iter()
        .find(|c| c.marker != Marker::Subsection)
        .ok_or_else(|| CiteError::NotACitation(echo(text)))?;
    let law = match &citation.law {
        None => None,
        Some(LawRef::Abbreviation(a)) => Some(a.clone()),
        Some(LawRef::Words(words)) => {
            return Err(CiteError::LawInWords {
                citation: echo(&text[citation.span.clone()]),
                words: echo(words),
            })
        }
    };
    Ok(Request { law, citation })
}

/// The provisions `request` names in `law`, in citation order: one per cited unit (a section, an Absatz or a
/// Satz), each section of a range (at most [`MAX_RANGE_SECTIONS`] after its first).
pub fn resolve(law: &Law, request: &Request) -> Result<Vec<Provision>, CiteError> {
    let prefix = match request.citation.marker {
        Marker::Article => "Art.",
        _ => "§",
    };
    let find = |number: &str| {
        let designation = format!("{prefix} {number}");
        law.find_section(&designation).ok_or_else(|| {
            let mut active = law.active_sections();
            let first = active.next().map(|(_, s)| s.designation.clone());
            let last = law
                .active_sections()
                .last()
                .map(|(_, s)| s.designation.clone());
            CiteError::NoSection {
                law: law.abbreviation.clone(),
                designation: designation.clone(),
                first: first.clone().unwrap_or_default(),
                last: last.or(first).unwrap_or_default(),
            }
        })
    };
    let mut provisions = Vec::new();
    for item in &request.citation.items {
        let start = find(&item.number)?;
        let Some(to) = &item.range_to else {
            let text = section_text(law, start);
            provisions.push(narrow(
                law,
                text,
                item.subsection.as_deref(),
                item.sentence,
            )?);
            continue;
        };
        let end = find(to)?.max(start);
        for index in (start..=end).take(MAX_RANGE_SECTIONS + 1) {
            if index == start || !law.sections[index].repealed {
                provisions.push(narrow(law, section_text(law, index), None, None)?);
            }
        }
    }
    Ok(provisions)
}

/// The whole section, one Absatz, or one Satz of it.
fn narrow(
    law: &Law,
    section: SectionText,
    subsection: Option<&str>,
    sentence: Option<u16>,
) -> Result<Provision, CiteError> {
    let designation = section.designation.clone();
    let absatz = match subsection {
        None => None,
        Some(label) => {
            let labels: Vec<&str> = section
                .subsections
                .iter()
                .filter_map(|a| a.label.as_deref())
                .collect();
            let found = section
                .subsections
                .iter()
                .position(|a| a.label.as_deref() == Some(label));
            let available = match labels.as_slice() {
                [] => "it has no numbered Absätze".to_owned(),
                [only] => format!("it has Abs. {only}"),
                _ => format!("it has Abs. {}", labels.join(", ")),
            };
            Some(found.ok_or_else(|| CiteError::NoSubsection {
                law: law.abbreviation.clone(),
                designation: designation.clone(),
                subsection: label.to_owned(),
                available,
            })?)
        }
    };
    let absatz = match (absatz, sentence) {
        (Some(a), _) => Some(a),
        (None, Some(n)) if section.subsections.len() > 1 => {
            return Err(CiteError::AbsatzNeeded {
                law: law.abbreviation.clone(),
                designation,
                count: section.subsections.len(),
                sentence: n,
            })
        }
        (None, Some(_)) => Some(0).filter(|_| !section.subsections.is_empty()),
        (None, None) => None,
    };
    let unit = match absatz.and_then(|a| section.subsections[a].label.as_deref()) {
        Some(label) => format!("{designation} Abs. {label}"),
        None => designation.clone(),
    };
    let text = match (absatz, sentence) {
        (None, _) => section
            .subsections
            .iter()
            .map(|a| a.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        (Some(a), None) => section.subsections[a].text.clone(),
        (Some(a), Some(n)) => {
            let sentences = &section.subsections[a].sentences;
            let count = match sentences.len() {
                1 => "1 Satz".to_owned(),
                c => format!("{c} Sätze"),
            };
            sentences
                .get(usize::from(n).wrapping_sub(1))
                .cloned()
                .ok_or_else(|| CiteError::NoSentence {
                    law: law.abbreviation.clone(),
                    unit: unit.clone(),
                    sentence: n,
                    count,
                })?
        }
    };
    let citation = match sentence {
        Some(n) => format!("{unit} S. {n} {}", law.abbreviation),
        None => format!("{unit} {}", law.abbreviation),
    };
    Ok(Provision {
        citation,
        law: section.law,
        law_title: section.law_title,
        stand: law
            .stand
            .iter()
            .map(|s| format!("{}: {}", s.kind, s.comment))
            .collect(),
        designation: section.designation,
        title: section.title,
        breadcrumb: section.breadcrumb,
        subsection: absatz.and_then(|a| section.subsections[a].label.clone()),
        sentence,
        repealed: section.repealed,
        text,
        url: section.url,
    })
}

/// Where the Absätze and Sätze that `text` cites lie in `law`: per cited unit its section (index into
/// [`Law::sections`]) and byte range in that section's text — what the app marks and scrolls to when a link or
/// a query names `§ 551 Abs. 2 BGB`. Whole sections, ranges, other laws and citations that name nothing give
/// nothing (a search shows the section itself; [`resolve`] says what is wrong).
pub fn cited_units(law: &Law, text: &str) -> Vec<(usize, std::ops::Range<usize>)> {
    let Ok(request) = parse(text) else {
        return Vec::new();
    };
    if request
        .law
        .as_deref()
        .is_some_and(|named| !named.eq_ignore_ascii_case(&law.abbreviation))
    {
        return Vec::new();
    }
    let Ok(provisions) = resolve(law, &request) else {
        return Vec::new();
    };
    provisions
        .iter()
        .filter(|p| p.subsection.is_some() || p.sentence.is_some())
        .filter_map(|p| {
            let index = law.find_section(&p.designation)?;
            let section = &law.sections[index];
            // `resolve` took a Satz without an Absatz only from a section with one Absatz.
            let absatz = match &p.subsection {
                Some(label) => section
                    .subsections
                    .iter()
                    .find(|a| a.label.as_deref() == Some(label))?,
                None => section.subsections.first()?,
            };
            let range = match p.sentence {
                None => absatz.span.range(),
                Some(n) => {
                    let at = absatz.sentences.start as usize + usize::from(n).checked_sub(1)?;
                    (at < absatz.sentences.end as usize)
                        .then(|| section.sentences.get(at).map(|s| s.span.range()))??
                }
            };
            Some((index, range))
        })
        .collect()
}
