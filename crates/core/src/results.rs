//! The result schema: what a search hit and a section look like outside the browser — `paragraf search --json`,
//! `paragraf show --json` and the MCP tools all print these types, so scripts and assistants see one shape.
//!
//! Everything here is derived from the loaded law and strategy bundle (no IO): an excerpt around the units that
//! hit, the breadcrumb, the citations in both directions and the official link. The JSON is versioned by
//! [`SCHEMA`]; fields are only ever added under the same version.
//!
//! ```json
//! {"schema":"paragraf.search/1","question":"…","mode":"hybrid","strategy":"section","model":"…","laws":["BGB"],
//!  "expansions":[{"law":"BGB","from":"kaution","to":["Sicherheitsleistung","Hinterlegung"]}],
//!  "hits":[{"rank":1,"law":"BGB","designation":"§ 535","title":"Inhalt und Hauptpflichten des Mietvertrags",
//!           "breadcrumb":"Buch 2 > Abschnitt 8 > Titel 5 > Untertitel 1","score":0.0328,"cited":false,
//!           "excerpt":{"text":"…","highlights":[[0,12]],"cut_start":false,"cut_end":true},
//!           "units":[{"unit":812,"score":0.91}],"cites":[{"kind":"section","designation":"§ 536", …}],
//!           "url":"https://www.gesetze-im-internet.de/bgb/__535.html"}]}
//! ```
//!
//! Excerpts highlight the strategy units that hit when they are narrower than the section (sentences,
//! Absätze, windows); when the unit is the whole section, or BM25 ran without units, the question's words
//! (stemmed as BM25 stems them) are highlighted instead, so a reader still sees why the section came up.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::{Mode, SectionHit};
use paragraf_index::Hit;
use paragraf_law::analyzer::{Analyzer, AnalyzerConfig};
use paragraf_law::{Law, RefTarget, Section};

/// Version tag of [`SearchResults`].
pub const SCHEMA: &str = "paragraf.search/1";

/// Version tag of [`SectionText`].
pub const SECTION_SCHEMA: &str = "paragraf.section/1";

/// Schema name of [`ResolvedCitation`].
pub const CITATION_SCHEMA: &str = "paragraf.citation/1";

/// Schema name of [`TableOfContents`].
pub const CONTENTS_SCHEMA: &str = "paragraf.contents/1";

/// Longest question accepted, in bytes. e5 reads 510 tokens (about 2 KB of German) and a citation query is a
/// few bytes: anything longer is a pasted document, not a question, and is refused rather than cut silently.
pub const MAX_QUESTION_BYTES: usize = 4096;

/// Length of an excerpt in characters (about three lines on a terminal).
pub const EXCERPT_CHARS: usize = 280;

/// Most citations listed per hit (a definitions section may cite dozens; [`SectionText`] lists all).
pub const MAX_HIT_CITATIONS: usize = 12;

/// Why a question is not searched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QuestionError {
    /// Nothing but whitespace.
    #[error("the question is empty: type a few words or a citation such as `§ 535 BGB`")]
    Empty,
    /// Longer than [`MAX_QUESTION_BYTES`].
    #[error("the question has {0} bytes, more than the {MAX_QUESTION_BYTES} accepted: shorten it to the question itself (the encoder reads only about 2,000 characters anyway)")]
    TooLong(usize),
}

/// The question as searched (trimmed), or why it is refused.
pub fn check_question(text: &str) -> Result<&str, QuestionError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(QuestionError::Empty);
    }
    if text.len() > MAX_QUESTION_BYTES {
        return Err(QuestionError::TooLong(text.len()));
    }
    Ok(text)
}

/// One search, as printed by `paragraf search --json` and the MCP tool `search_law`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// [`SCHEMA`].
    pub schema: String,
    /// The question as searched.
    pub question: String,
    /// The ranking that actually ran.
    pub mode: Mode,
    /// Strategy bundle used for dense search.
    pub strategy: String,
    /// Embedding model of the query vector (`None` for BM25).
    pub model: Option<String>,
    /// Laws searched.
    pub laws: Vec<String>,
    /// What query expansion added to the BM25 query, per law (absent when nothing was added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expansions: Vec<LawExpansion>,
    /// What the ranking learned from past questions, when it did (absent: unlearned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned: Option<LearnedFrom>,
    /// Across laws: how many hits each law holds, most first ("BGB 6 · BetrKV 2"); absent for one law.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_law: Vec<LawCount>,
    /// Across laws: whether the ranking was routed by law ([`crate::federal::routing`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub routed: bool,
    /// Across laws: the law the question names ([`crate::finder::LawNames`]: `KSchG`, `Kündigungsschutz`), to
    /// offer searching it alone ("Meinten Sie das Gesetz …?").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named_law: Option<LawName>,
    /// Best sections first.
    pub hits: Vec<SectionResult>,
}

/// One law's share of a ranking across laws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawCount {
    /// Abbreviation.
    pub law: String,
    /// Full title.
    pub title: String,
    /// Hits from it.
    pub hits: u32,
}

/// A law by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawName {
    /// Abbreviation.
    pub law: String,
    /// Full title.
    pub title: String,
}

impl LawCount {
    /// The laws of `hits`, most hits first (ties: the law of the better hit first).
    pub fn of(hits: &[SectionResult]) -> Vec<LawCount> {
        LawCount::tally(hits.iter().map(|h| (h.law.as_str(), h.law_title.as_str())))
    }

    /// The laws of a ranking given as (abbreviation, title) per hit, best hit first: as [`LawCount::of`].
    pub fn tally<'a>(laws: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<LawCount> {
        let mut counts: Vec<LawCount> = Vec::new();
        for (law, title) in laws {
            match counts.iter_mut().find(|c| c.law == law) {
                Some(c) => c.hits += 1,
                None => counts.push(LawCount {
                    law: law.to_string(),
                    title: title.to_string(),
                    hits: 1,
                }),
            }
        }
        // Stable: equal counts keep the order of their first hits.
        counts.sort_by_key(|c| std::cmp::Reverse(c.hits));
        counts
    }
}

/// Where a learned ranking comes from ([`paragraf_engine::learning::Provenance`]): counts and names, never a question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedFrom {
    /// The question set (`GerLayQA`).
    pub source: String,
    /// Questions learned from.
    pub questions: u32,
    /// Its licence (GerLayQA: non-commercial research only).
    pub licence: String,
}

impl From<&paragraf_engine::learning::Provenance> for LearnedFrom {
    fn from(p: &paragraf_engine::learning::Provenance) -> Self {
        LearnedFrom {
            source: p.source.clone(),
            questions: p.questions,
            licence: p.licence.clone(),
        }
    }
}

/// Words query expansion added for one lay word of the question in one law.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawExpansion {
    /// Law abbreviation.
    pub law: String,
    /// The question's word (lowercased).
    pub from: String,
    /// The statute's words searched as well, best first.
    pub to: Vec<String>,
}

impl LawExpansion {
    /// The expansions one law's search added.
    pub fn of(
        law: &str,
        expansions: &[paragraf_engine::expansion::Expansion],
    ) -> Vec<LawExpansion> {
        expansions
            .iter()
            .map(|e| LawExpansion {
                law: law.to_string(),
                from: e.from.clone(),
                to: e.to.iter().map(|t| t.word.clone()).collect(),
            })
            .collect()
    }
}

/// One result section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectionResult {
    /// 1-based rank.
    pub rank: u32,
    /// Law abbreviation.
    pub law: String,
    /// The law's full title (`Bürgerliches Gesetzbuch`).
    #[serde(default)]
    pub law_title: String,
    /// `§ 535`, `Art. 1`.
    pub designation: String,
    /// Heading, empty when the section has none.
    pub title: String,
    /// Structural units above the section, `Buch 2 > Abschnitt 8 > …` (empty for a flat law).
    pub breadcrumb: String,
    /// Ranking score: cosine (dense), BM25 (bm25) or reciprocal-rank fusion (hybrid); 0 for a cited section not
    /// otherwise found. With a learned file, the learned score for the first 10; below them the learned tail's
    /// ranks, scaled under the 10th's score, so that there it only orders. Comparable within one law only.
    pub score: f32,
    /// The question cites this section (`§ 535`); cited sections come first.
    pub cited: bool,
    /// How many of the most similar past questions had this section as gold (learned ranking only; absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub precedents: u32,
    /// A short passage with what made it a hit.
    pub excerpt: Excerpt,
    /// Strategy units that hit and count for this section, best first.
    pub units: Vec<UnitHit>,
    /// What the section cites (at most [`MAX_HIT_CITATIONS`]).
    pub cites: Vec<Citation>,
    /// The section on gesetze-im-internet.de.
    pub url: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A passage of a section's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excerpt {
    /// The passage, line breaks as spaces.
    pub text: String,
    /// Byte ranges of `text` to emphasise, ascending and disjoint.
    pub highlights: Vec<(u32, u32)>,
    /// Text was left out before the passage.
    pub cut_start: bool,
    /// Text was left out after it.
    pub cut_end: bool,
}

/// A unit of the strategy bundle that hit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitHit {
    /// Index into the bundle's units.
    pub unit: u32,
    /// Its cosine score.
    pub score: f32,
}

/// A citation in a section's text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Citation {
    /// A section of the same law.
    Section {
        /// Its designation.
        designation: String,
        /// Its heading.
        title: String,
        /// `Abs. 1` as printed.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        subsection: Option<String>,
        /// `Satz 2` as printed.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        sentence: Option<u16>,
    },
    /// A provision of another law, as printed.
    External {
        /// The other law (`InsO`, or words such as `des Handelsgesetzbuchs`).
        law: String,
        /// The cited designation.
        designation: String,
    },
    /// A provision of this law that does not exist in it.
    Unresolved {
        /// The designation as printed.
        designation: String,
    },
}

/// A section in full, as printed by `paragraf show --json` and the MCP tool `get_section`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SectionText {
    /// [`SECTION_SCHEMA`].
    pub schema: String,
    /// Law abbreviation.
    pub law: String,
    /// Full title of the law.
    pub law_title: String,
    /// `§ 535`.
    pub designation: String,
    /// Heading.
    pub title: String,
    /// Structural units above it.
    pub breadcrumb: String,
    /// Repealed (`(weggefallen)`).
    pub repealed: bool,
    /// The Absätze with their sentences.
    pub subsections: Vec<Absatz>,
    /// Footnotes and editorial notes.
    pub footnotes: Vec<String>,
    /// Everything the section cites, in text order without duplicates.
    pub cites: Vec<Citation>,
    /// Sections of the same law that cite it.
    pub cited_by: Vec<SectionRef>,
    /// Sections of the folder's other laws that cite it (filled by front ends that hold every law of a folder
    /// of many: [`crate::federal::routing::cited_by_other_laws`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cited_by_other_laws: Vec<LawSectionRef>,
    /// The statutory definitions of other sections whose terms it uses, each once, in text order (filled by
    /// front ends that hold the law's definitions: [`definitions_used`]).
    #[serde(default)]
    pub definitions: Vec<DefinedTerm>,
    /// The section on gesetze-im-internet.de.
    pub url: String,
}

/// A term a section uses that another section of the law defines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinedTerm {
    /// The term as defined (`Verbraucher`).
    pub term: String,
    /// The defining section.
    pub defined_in: SectionRef,
    /// The defining sentence (or enumeration item).
    pub definition: String,
}

/// The terms section `index` uses that other sections of `law` define ([`paragraf_law::definitions::LawDefinitions`]).
pub fn definitions_used(
    law: &Law,
    definitions: &paragraf_law::definitions::LawDefinitions,
    index: usize,
) -> Vec<DefinedTerm> {
    definitions
        .explained_in(law, index)
        .into_iter()
        .map(|used| {
            let d = &definitions.definitions[used.definition];
            let section = &law.sections[d.section as usize];
            DefinedTerm {
                term: d.term.clone(),
                defined_in: SectionRef {
                    designation: section.designation.clone(),
                    title: section.title.clone(),
                },
                definition: section.slice(d.span).to_string(),
            }
        })
        .collect()
}

/// One cited provision in full ([`crate::cite`]): `paragraf cite --json` and the MCP tool `resolve_citation`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provision {
    /// The provision as it is cited: `§ 433 Abs. 1 S. 2 BGB`.
    pub citation: String,
    /// Law abbreviation.
    pub law: String,
    /// Full title of the law.
    pub law_title: String,
    /// The law's version notes (`Stand: …`, `Neuf: …`) as the official XML states them.
    pub stand: Vec<String>,
    /// The section: `§ 433`.
    pub designation: String,
    /// Its heading.
    pub title: String,
    /// Structural units above it.
    pub breadcrumb: String,
    /// The Absatz cited (`1`), if one was.
    pub subsection: Option<String>,
    /// The Satz cited, if one was.
    pub sentence: Option<u16>,
    /// Repealed (`(weggefallen)`).
    pub repealed: bool,
    /// The text of exactly the unit cited.
    pub text: String,
    /// The section on gesetze-im-internet.de.
    pub url: String,
}

/// What a citation string names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedCitation {
    /// [`CITATION_SCHEMA`].
    pub schema: String,
    /// The citation as asked.
    pub query: String,
    /// Each unit it names, in citation order (a range: each section of it).
    pub provisions: Vec<Provision>,
}

/// A law's structure with its sections: `paragraf contents --json` and the MCP tool `table_of_contents`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableOfContents {
    /// [`CONTENTS_SCHEMA`].
    pub schema: String,
    /// Law abbreviation.
    pub law: String,
    /// Full title of the law.
    pub law_title: String,
    /// Structural units in document order, each with the sections directly under it; sections before the first
    /// unit come first, under an entry without designation.
    pub units: Vec<ContentsUnit>,
}

/// A structural unit of [`TableOfContents`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentsUnit {
    /// Nesting depth, 0 for the top level.
    pub depth: usize,
    /// `Buch 2`, `Abschnitt 3`.
    pub designation: String,
    /// `Recht der Schuldverhältnisse`.
    pub title: String,
    /// The active sections directly under it.
    pub sections: Vec<SectionRef>,
}

/// The table of contents of `law`.
pub fn table_of_contents(law: &Law) -> TableOfContents {
    let depth = |mut node: Option<u32>| {
        let mut depth = 0;
        while let Some(parent) = node.and_then(|n| law.structure[n as usize].parent) {
            depth += 1;
            node = Some(parent);
        }
        depth
    };
    let mut units: Vec<ContentsUnit> = law
        .structure
        .iter()
        .enumerate()
        .map(|(i, node)| ContentsUnit {
            depth: depth(Some(i as u32)),
            designation: node.designation.clone(),
            title: node.title.clone(),
            sections: Vec::new(),
        })
        .collect();
    let mut before = Vec::new();
    for (_, section) in law.active_sections() {
        let entry = SectionRef {
            designation: section.designation.clone(),
            title: section.title.clone(),
        };
        match section.structure {
            Some(node) => units[node as usize].sections.push(entry),
            None => before.push(entry),
        }
    }
    if !before.is_empty() {
        units.insert(
            0,
            ContentsUnit {
                depth: 0,
                designation: String::new(),
                title: String::new(),
                sections: before,
            },
        );
    }
    TableOfContents {
        schema: CONTENTS_SCHEMA.to_string(),
        law: law.abbreviation.clone(),
        law_title: law.title.clone(),
        units,
    }
}

/// An Absatz of [`SectionText`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Absatz {
    /// `1`, `1a`; `None` for a section without numbered Absätze.
    pub label: Option<String>,
    /// The whole Absatz, label included.
    pub text: String,
    /// Its sentences (Satz 1, 2, …).
    pub sentences: Vec<String>,
}

/// A section named by designation and heading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionRef {
    /// `§ 536`.
    pub designation: String,
    /// Heading.
    pub title: String,
}

/// A section of a named law.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawSectionRef {
    /// The law's abbreviation.
    pub law: String,
    /// `§ 536`.
    pub designation: String,
    /// Heading.
    pub title: String,
}

/// A law with its bundles, as listed by the MCP tool `list_laws`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawSummary {
    /// Abbreviation.
    pub law: String,
    /// Full title.
    pub title: String,
    /// Build date of the official XML.
    pub build_date: String,
    /// Active sections.
    pub sections: usize,
    /// Strategy bundles present (search with any of them).
    pub strategies: Vec<String>,
    /// The law on gesetze-im-internet.de.
    pub url: String,
}

/// Byte ranges of `section` covered by each hit unit, as (rank among the hits, range). Units that cover the
/// whole section text (the `section` strategy) mark nothing: highlighting everything tells the reader nothing.
pub fn hit_spans(
    bundle: &StrategyBundle,
    section_index: u32,
    section: &Section,
    units: &[Hit],
) -> Vec<(usize, Range<usize>)> {
    let mut spans = Vec::new();
    for (rank, hit) in units.iter().enumerate() {
        let Some(unit) = bundle.units.get(hit.index as usize) else {
            continue;
        };
        for piece in unit.pieces.iter().filter(|p| p.section == section_index) {
            let range = piece.span.range();
            if range.start == 0 && range.end >= section.text.len() {
                continue;
            }
            spans.push((rank, range));
        }
    }
    spans
}

/// Byte ranges of the words of `text` whose BM25 term (lowercased, stopwords dropped, Snowball-stemmed, as
/// [`Analyzer::words`] splits them) is a term of `question`.
pub fn term_spans(text: &str, question: &str) -> Vec<Range<usize>> {
    let analyzer = Analyzer::new(AnalyzerConfig::default());
    let wanted: std::collections::HashSet<String> =
        analyzer.terms(question, None).into_iter().collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    Analyzer::word_ranges(text)
        .filter(|r| {
            analyzer
                .stem_word(&text[r.clone()].to_lowercase())
                .is_some_and(|stem| wanted.contains(&stem))
        })
        .collect()
}

/// About [`EXCERPT_CHARS`] characters of `section` around the first of `marks` (byte ranges, any order), from
/// the start of its sentence when that is near; the marks inside become the highlights.
pub fn excerpt(section: &Section, marks: &[Range<usize>]) -> Excerpt {
    let text = &section.text;
    let anchor = marks
        .iter()
        .map(|r| r.start)
        .min()
        .unwrap_or(0)
        .min(text.len());
    let sentence_start = section
        .sentences
        .iter()
        .map(|s| s.span.range())
        .find(|r| r.start <= anchor && anchor < r.end.max(r.start + 1))
        .map(|r| r.start);
    let start = match sentence_start {
        Some(s) if anchor - s <= EXCERPT_CHARS / 3 => s,
        _ => {
            // Some context before the mark, beginning at a word.
            let start = back_chars(text, anchor, 40);
            text[start..]
                .find(char::is_whitespace)
                .filter(|&n| start > 0 && start + n < anchor)
                .map_or(start, |n| start + n + 1)
        }
    };
    let mut end = text[start..]
        .char_indices()
        .nth(EXCERPT_CHARS)
        .map_or(text.len(), |(i, _)| start + i);
    if end < text.len() {
        // End after a word.
        end = text[start..end]
            .rfind(char::is_whitespace)
            .map_or(end, |n| start + n);
    }
    let mut highlights: Vec<(u32, u32)> = marks
        .iter()
        .map(|r| (r.start.max(start), r.end.min(end)))
        .filter(|(a, b)| a < b && text.is_char_boundary(*a) && text.is_char_boundary(*b))
        .map(|(a, b)| ((a - start) as u32, (b - start) as u32))
        .collect();
    highlights.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(highlights.len());
    for (a, b) in highlights {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Excerpt {
        text: text[start..end].replace('\n', " "),
        highlights: merged,
        cut_start: start > 0,
        cut_end: end < text.len(),
    }
}

/// The byte offset `n` characters before `at` (0 at the latest).
fn back_chars(text: &str, at: usize, n: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i)
}

/// The citations of section `index`, in text order without duplicates.
pub fn citations(law: &Law, index: usize) -> Vec<Citation> {
    let mut out: Vec<Citation> = Vec::new();
    for target in law.sections[index]
        .references
        .iter()
        .flat_map(|r| &r.targets)
    {
        let citation = match target {
            RefTarget::Section {
                section,
                subsection,
                sentence,
            } => {
                let Some(s) = law.sections.get(*section as usize) else {
                    continue;
                };
                Citation::Section {
                    designation: s.designation.clone(),
                    title: s.title.clone(),
                    subsection: subsection.clone(),
                    sentence: *sentence,
                }
            }
            RefTarget::External { law, designation } => Citation::External {
                law: law.clone(),
                designation: designation.clone(),
            },
            RefTarget::Unresolved { designation } => Citation::Unresolved {
                designation: designation.clone(),
            },
        };
        if !out.contains(&citation) {
            out.push(citation);
        }
    }
    out
}

/// The sections of the same law that cite section `index`, in law order without duplicates.
pub fn cited_by(law: &Law, index: usize) -> Vec<SectionRef> {
    let mut out: Vec<SectionRef> = Vec::new();
    for (i, _) in law.incoming_references(index) {
        let s = &law.sections[i];
        if !out.iter().any(|c| c.designation == s.designation) {
            out.push(SectionRef {
                designation: s.designation.clone(),
                title: s.title.clone(),
            });
        }
    }
    out
}

/// One engine hit in the schema. `strategy` is the bundle the hit's units index into; `question` decides the
/// highlighted words when no unit narrower than the section hit.
pub fn section_result(
    law: &Law,
    strategy: Option<&StrategyBundle>,
    hit: &SectionHit,
    rank: usize,
    question: &str,
) -> SectionResult {
    let i = hit.section as usize;
    let section = &law.sections[i];
    let mut marks: Vec<Range<usize>> = strategy
        .map(|b| hit_spans(b, hit.section, section, &hit.units))
        .unwrap_or_default()
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    if marks.is_empty() {
        marks = term_spans(&section.text, question);
    }
    let mut cites = citations(law, i);
    cites.truncate(MAX_HIT_CITATIONS);
    SectionResult {
        rank: rank as u32 + 1,
        law: law.abbreviation.clone(),
        law_title: law.title.clone(),
        designation: section.designation.clone(),
        title: section.title.clone(),
        breadcrumb: law.path_label(i),
        score: hit.score,
        cited: hit.cited,
        precedents: hit.precedents,
        excerpt: excerpt(section, &marks),
        units: hit
            .units
            .iter()
            .map(|u| UnitHit {
                unit: u.index,
                score: u.score,
            })
            .collect(),
        cites,
        url: law.official_url(i),
    }
}

/// Section `index` of `law` in full.
pub fn section_text(law: &Law, index: usize) -> SectionText {
    let section = &law.sections[index];
    let subsections = section
        .subsections
        .iter()
        .enumerate()
        .map(|(a, sub)| Absatz {
            label: sub.label.clone(),
            text: section.subsection_text(a).to_string(),
            sentences: sub
                .sentences
                .clone()
                .map(|s| section.sentence_text(s as usize).to_string())
                .collect(),
        })
        .collect();
    SectionText {
        schema: SECTION_SCHEMA.to_string(),
        law: law.abbreviation.clone(),
        law_title: law.title.clone(),
        designation: section.designation.clone(),
        title: section.title.clone(),
        breadcrumb: law.path_label(index),
        repealed: section.repealed,
        subsections,
        footnotes: section.footnotes.clone(),
        cites: citations(law, index),
        cited_by: cited_by(law, index),
        cited_by_other_laws: Vec::new(),
        definitions: Vec::new(),
        url: law.official_url(index),
    }
}

/// The law's start page on gesetze-im-internet.de.
pub fn law_url(slug: &str) -> String {
    format!("https://www.gesetze-im-internet.de/{slug}/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use paragraf_law::{Reference, Sentence, Span, Subsection};

    fn section(text: &str) -> Section {
        Section {
            designation: "§ 1".into(),
            title: "Titel".into(),
            structure: None,
            repealed: false,
            text: text.into(),
            subsections: vec![Subsection {
                label: None,
                span: Span::new(0..text.len()),
                sentences: 0..1,
            }],
            sentences: vec![Sentence {
                span: Span::new(0..text.len()),
                subsection: 0,
            }],
            list_items: vec![],
            references: vec![],
            footnotes: vec![],
        }
    }

    #[test]
    fn questions_are_trimmed_and_bounded() {
        assert_eq!(check_question("  § 535 BGB \n"), Ok("§ 535 BGB"));
        assert_eq!(check_question(" \t\n"), Err(QuestionError::Empty));
        let long = "Miete ".repeat(20_000);
        assert_eq!(
            check_question(&long).unwrap_err().to_string(),
            "the question has 119999 bytes, more than the 4096 accepted: shorten it to the question itself (the encoder reads only about 2,000 characters anyway)"
        );
        assert!(check_question(&"ä".repeat(MAX_QUESTION_BYTES / 2)).is_ok());
    }

    #[test]
    fn question_words_are_found_by_stem() {
        let text = "Der Vermieter darf die Miete erhöhen, wenn die Mieten steigen.";
        let spans = term_spans(text, "Wann steigen die Mieten?");
        let words: Vec<&str> = spans.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(words, ["Miete", "Mieten", "steigen"]);
        assert!(term_spans(text, "die der").is_empty());
    }

    #[test]
    fn excerpts_start_at_the_sentence_and_mark_the_hit() {
        let long = format!(
            "{} Treffer hier. {}",
            "Vorlauf ".repeat(100),
            "Nachlauf ".repeat(100)
        );
        let s = section(&long);
        let at = long.find("Treffer").unwrap();
        let e = excerpt(&s, std::slice::from_ref(&(at..at + "Treffer".len())));
        assert!(e.cut_start && e.cut_end, "{e:?}");
        let (a, b) = e.highlights[0];
        assert_eq!(&e.text[a as usize..b as usize], "Treffer");
        assert!(e.text.starts_with("Vorlauf"), "{}", e.text);
        assert!(e.text.chars().count() <= EXCERPT_CHARS);
        // Short text: whole, nothing cut, umlauts at the edges are fine.
        let s = section("Über die Würde\nist zu wachen.");
        let e = excerpt(&s, &[]);
        assert_eq!(e.text, "Über die Würde ist zu wachen.");
        assert!(!e.cut_start && !e.cut_end && e.highlights.is_empty());
    }

    #[test]
    fn citations_are_listed_once_each() {
        let mut a = section("Siehe § 2 und § 2 sowie § 15a InsO.");
        let target = Reference {
            span: Span::new(6..9),
            targets: vec![RefTarget::Section {
                section: 1,
                subsection: None,
                sentence: None,
            }],
        };
        a.references = vec![
            target.clone(),
            target,
            Reference {
                span: Span::new(24..34),
                targets: vec![RefTarget::External {
                    law: "InsO".into(),
                    designation: "§ 15a".into(),
                }],
            },
        ];
        let mut b = section("Zweiter.");
        b.designation = "§ 2".into();
        let law = Law {
            title: "X-Gesetz".into(),
            ..Law::bare("X", vec![a, b])
        };
        let text = section_text(&law, 0);
        assert_eq!(text.cites.len(), 2);
        assert_eq!(
            serde_json::to_value(&text.cites).unwrap(),
            serde_json::json!([
                {"kind": "section", "designation": "§ 2", "title": "Titel"},
                {"kind": "external", "law": "InsO", "designation": "§ 15a"}
            ])
        );
        let back = section_text(&law, 1);
        assert_eq!(back.cited_by.len(), 1);
        assert_eq!(back.cited_by[0].designation, "§ 1");
        assert_eq!(back.url, "https://www.gesetze-im-internet.de/x/__2.html");
    }
}
