//! Cutting a law into indexable chunks: structural units, propositions and fixed token windows.
//!
//! A [`Chunk`] is what gets embedded (`embed_text`) plus where it lies in the law (`pieces`) and which sections a hit
//! on it counts for (`sections`). Structural chunks are exact slices of the section text, so bundles store spans
//! instead of text; generated chunks (propositions, context prefixes) keep their own text.

use paragraf_engine::bundle::{Piece, Unit};
use paragraf_format::strategy::{BaseUnit, Link};
use paragraf_law::definitions::{find_definitions, Glossary};
use paragraf_law::{Law, RefTarget, Section, Span};

/// One unit to index.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    /// Parent sections, ascending and distinct.
    pub sections: Vec<u32>,
    /// The law text it covers.
    pub pieces: Vec<Piece>,
    /// Text that is not a slice of the law (a proposition), stored in the bundle.
    pub own_text: Option<String>,
    /// What the encoder sees (without the `passage: ` prefix, which the backend adds).
    pub embed_text: String,
}

impl Chunk {
    fn slice(law: &Law, section: usize, span: Span) -> Chunk {
        Chunk {
            sections: vec![section as u32],
            pieces: vec![Piece {
                section: section as u32,
                span,
            }],
            own_text: None,
            embed_text: law.sections[section].slice(span).to_string(),
        }
    }

    /// The bundle unit for this chunk.
    pub fn to_unit(&self) -> Unit {
        Unit {
            sections: self.sections.clone(),
            pieces: self.pieces.clone(),
            text: self.own_text.clone(),
        }
    }

    /// Joins consecutive chunks into one (Lumber), keeping every section and piece.
    pub fn concat(chunks: &[Chunk]) -> Chunk {
        let mut sections: Vec<u32> = chunks
            .iter()
            .flat_map(|c| c.sections.iter().copied())
            .collect();
        sections.sort_unstable();
        sections.dedup();
        Chunk {
            sections,
            pieces: chunks
                .iter()
                .flat_map(|c| c.pieces.iter().copied())
                .collect(),
            own_text: chunks.iter().any(|c| c.own_text.is_some()).then(|| {
                chunks
                    .iter()
                    .map(|c| c.own_text.clone().unwrap_or_else(|| c.embed_text.clone()))
                    .collect::<Vec<_>>()
                    .join(" ")
            }),
            embed_text: chunks
                .iter()
                .map(|c| c.embed_text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// `§ 535 Inhalt und Hauptpflichten des Mietvertrags`: how a section introduces itself.
pub fn heading(section: &Section) -> String {
    if section.title.is_empty() {
        section.designation.clone()
    } else {
        format!("{} {}", section.designation, section.title)
    }
}

/// Whole sections: heading line plus text.
pub fn sections(law: &Law) -> Vec<Chunk> {
    law.active_sections()
        .filter(|(_, s)| !s.text.is_empty())
        .map(|(i, s)| {
            let span = Span::new(0..s.text.len());
            let mut chunk = Chunk::slice(law, i, span);
            chunk.embed_text = format!("{}\n{}", heading(s), s.text);
            chunk
        })
        .collect()
}

/// Reference-aware sections (issue 15): each whole section (heading line and text, as [`sections`]) followed by
/// one more line of what the law links it to:
///
/// - [`Link::Cited`]: `Verweist auf: § 555b Modernisierungsmaßnahmen` (§ 536 BGB), the sections of the same
///   law it cites, in the order of their first citation;
/// - [`Link::Citing`]: `Zitiert in: § 536a Schadens- und Aufwendungsersatzanspruch des Mieters wegen eines
///   Mangels; § 536b ...` (§ 536 BGB), the sections that cite it, in law order;
/// - [`Link::Defined`]: `Begriffe: Verbraucher (§ 13): Verbraucher ist jede natürliche Person, ...`, the
///   statutory definitions ([`paragraf_law::definitions`]) of terms the section uses that other sections
///   define, in law order (a sentence defining two terms appears once).
///
/// Repealed and empty sections are neither targets nor sources, as in the citation graph. The line goes
/// *after* the text: the encoder reads 510 tokens, so the section's own words always keep the window and the
/// addition fills whatever room is left (a short section, the kind that lacks a question's words, gets all of
/// it; one longer than the window embeds as in `section`). No cap or weight to choose.
pub fn linked_sections(law: &Law, link: Link) -> Vec<Chunk> {
    let live = |i: usize| {
        law.sections
            .get(i)
            .is_some_and(|s| !s.repealed && !s.text.is_empty())
    };
    let cited = |i: usize| -> Vec<usize> {
        law.sections[i]
            .references
            .iter()
            .flat_map(|r| &r.targets)
            .filter_map(|t| match t {
                RefTarget::Section { section, .. } => Some(*section as usize),
                _ => None,
            })
            .filter(|&t| t != i && live(t))
            .collect()
    };
    let mut citing: Vec<Vec<usize>> = vec![Vec::new(); law.sections.len()];
    if link == Link::Citing {
        for i in (0..law.sections.len()).filter(|&i| live(i)) {
            for target in cited(i) {
                citing[target].push(i);
            }
        }
    }
    let definitions = match link {
        Link::Defined => find_definitions(law),
        _ => Vec::new(),
    };
    let glossary = Glossary::new(&definitions);
    let headings = |label: &str, sections: Vec<usize>| {
        let mut seen = Vec::new();
        let listed: Vec<String> = sections
            .into_iter()
            .filter(|s| {
                let new = !seen.contains(s);
                seen.push(*s);
                new
            })
            .map(|s| heading(&law.sections[s]))
            .collect();
        (!listed.is_empty()).then(|| format!("{label}: {}", listed.join("; ")))
    };
    sections(law)
        .into_iter()
        .map(|mut chunk| {
            let i = chunk.sections[0] as usize;
            let addition = match link {
                Link::Cited => headings("Verweist auf", cited(i)),
                Link::Citing => headings("Zitiert in", std::mem::take(&mut citing[i])),
                Link::Defined => {
                    let section = &law.sections[i];
                    let mut spans: Vec<(u32, Span)> = Vec::new();
                    let entries: Vec<String> = glossary
                        .used_in(&section.text)
                        .into_iter()
                        .map(|d| &definitions[d])
                        .filter(|d| d.section as usize != i)
                        .filter(|d| {
                            let new = !spans.contains(&(d.section, d.span));
                            spans.push((d.section, d.span));
                            new
                        })
                        .map(|d| {
                            let source = &law.sections[d.section as usize];
                            format!(
                                "{} ({}): {}",
                                d.term,
                                source.designation,
                                source.slice(d.span)
                            )
                        })
                        .collect();
                    (!entries.is_empty()).then(|| format!("Begriffe: {}", entries.join(" ")))
                }
            };
            if let Some(addition) = addition {
                chunk.embed_text = format!("{}\n{addition}", chunk.embed_text);
            }
            chunk
        })
        .collect()
}

/// One chunk per Absatz (without its `(1)` label); repealed Absätze (no sentences) are skipped.
pub fn subsections(law: &Law) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, s) in law.active_sections() {
        for (j, sub) in s.subsections.iter().enumerate() {
            if !sub.sentences.is_empty() {
                out.push(Chunk::slice(law, i, s.subsection_body(j)));
            }
        }
    }
    out
}

/// One chunk per sentence.
pub fn sentences(law: &Law) -> Vec<Chunk> {
    law.active_sections()
        .flat_map(|(i, s)| s.sentences.iter().map(move |sentence| (i, sentence.span)))
        .map(|(i, span)| Chunk::slice(law, i, span))
        .collect()
}

/// The base units of a derived strategy.
pub fn base_units(law: &Law, base: BaseUnit) -> Vec<Chunk> {
    match base {
        BaseUnit::Subsection => subsections(law),
        BaseUnit::Sentence => sentences(law),
        BaseUnit::Proposition => propositions(law, crate::propositions::split_builtin),
    }
}

/// Propositions: each sentence split by `split` (built-in rules or a language model); a sentence that cannot
/// be split stays whole and remains a slice.
pub fn propositions(law: &Law, mut split: impl FnMut(&str) -> Vec<String>) -> Vec<Chunk> {
    let mut out = Vec::new();
    for chunk in sentences(law) {
        let parts = split(&chunk.embed_text);
        if parts.len() <= 1 {
            out.push(chunk);
            continue;
        }
        for part in parts {
            out.push(Chunk {
                own_text: Some(part.clone()),
                embed_text: part,
                ..chunk.clone()
            });
        }
    }
    out
}

/// The contextual variant of base units: a prefix (built-in: structural path and section heading) before each.
pub fn contextual(
    law: &Law,
    units: Vec<Chunk>,
    mut prefix: impl FnMut(&Law, &Chunk) -> String,
) -> Vec<Chunk> {
    units
        .into_iter()
        .map(|mut chunk| {
            let context = prefix(law, &chunk);
            chunk.embed_text = format!("{context}\n{}", chunk.embed_text);
            chunk
        })
        .collect()
}

/// The built-in context: the titles of the structural units above the section, the section's heading, and
/// which Absatz the unit is in. `Mietvertrag, Pachtvertrag > Allgemeine Vorschriften für Mietverhältnisse >
/// § 535 Inhalt und Hauptpflichten des Mietvertrags, Absatz 2:`
pub fn builtin_context(law: &Law, chunk: &Chunk) -> String {
    let piece = chunk.pieces[0];
    let section_index = piece.section as usize;
    let section = &law.sections[section_index];
    let mut parts: Vec<String> = law
        .path(section_index)
        .iter()
        .map(|n| {
            if n.title.is_empty() {
                n.designation.clone()
            } else {
                n.title.clone()
            }
        })
        .collect();
    let mut head = heading(section);
    if let Some(label) = section
        .subsections
        .iter()
        .find(|sub| sub.span.contains(piece.span))
        .and_then(|sub| sub.label.as_ref())
    {
        head += &format!(", Absatz {label}");
    }
    parts.push(head);
    format!("{} {}:", law.abbreviation, parts.join(" > "))
}

/// A token of the law's continuous token stream: its piece text and the word it came from.
struct StreamToken {
    text: String,
    section: u32,
    word: Span,
}

/// Number of windows of `size` tokens with `overlap` over `tokens` tokens: windows start every
/// `size - overlap` tokens, the last may be shorter, and a stream shorter than a window is one window.
pub fn window_count(tokens: usize, size: usize, overlap: usize) -> usize {
    let stride = size - overlap;
    if tokens == 0 {
        0
    } else if tokens <= size {
        1
    } else {
        (tokens - size).div_ceil(stride) + 1
    }
}

/// Fixed windows over the continuous token stream of all active sections (tokens of the embedding tokenizer),
/// crossing section boundaries as in the paper; each window maps to every section it touches.
pub fn fixed_windows(
    law: &Law,
    tokenizer: &paragraf_e5::tokenizer::Tokenizer,
    size: usize,
    overlap: usize,
) -> Vec<Chunk> {
    assert!(overlap < size, "overlap must be smaller than the window");
    let mut stream: Vec<StreamToken> = Vec::new();
    for (i, s) in law.active_sections() {
        let mut pos = 0;
        for word in s.text.split(|c: char| c.is_whitespace()) {
            let start = pos;
            pos += word.len() + 1;
            if word.is_empty() {
                continue;
            }
            let span = Span::new(start..start + word.len());
            for id in tokenizer.encode(word) {
                let piece = String::from_utf8_lossy(tokenizer.piece(id)).replace('\u{2581}', " ");
                stream.push(StreamToken {
                    text: piece,
                    section: i as u32,
                    word: span,
                });
            }
        }
    }
    let stride = size - overlap;
    let count = window_count(stream.len(), size, overlap);
    (0..count)
        .map(|w| {
            let tokens = &stream[w * stride..(w * stride + size).min(stream.len())];
            let mut pieces: Vec<Piece> = Vec::new();
            for t in tokens {
                match pieces.last_mut() {
                    Some(p) if p.section == t.section => p.span.end = p.span.end.max(t.word.end),
                    _ => pieces.push(Piece {
                        section: t.section,
                        span: t.word,
                    }),
                }
            }
            let mut sections: Vec<u32> = pieces.iter().map(|p| p.section).collect();
            sections.dedup();
            Chunk {
                sections,
                pieces,
                own_text: None,
                embed_text: tokens
                    .iter()
                    .map(|t| t.text.as_str())
                    .collect::<String>()
                    .trim()
                    .to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_count_formula() {
        assert_eq!(window_count(0, 16, 4), 0);
        assert_eq!(window_count(10, 16, 4), 1);
        assert_eq!(window_count(16, 16, 4), 1);
        assert_eq!(window_count(17, 16, 4), 2);
        assert_eq!(window_count(28, 16, 4), 2);
        assert_eq!(window_count(29, 16, 4), 3);
        assert_eq!(window_count(1000, 256, 64), 5);
    }
}
