//! The structured law: the one model every later stage (chunking, bundles, search, the browser) reads.
//!
//! A law is a flat list of [`Section`]s (the retrieval targets, "§ 535" or "Art. 20a") plus the structural
//! hierarchy they hang in (Buch > Abschnitt > Titel ...). Every smaller unit (subsection, sentence, list item,
//! reference) is a [`Span`] of byte offsets into its section's display text, so units never duplicate text,
//! highlighting in the browser is a slice, and ids are stable positions: `(section, subsection, sentence)`.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Range;

/// Half-open byte range `[start, end)` into a section's [`Section::text`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from a byte range.
    pub fn new(range: Range<usize>) -> Self {
        Span {
            start: range.start as u32,
            end: range.end as u32,
        }
    }

    /// The span as a range usable for slicing.
    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Whether `other` lies inside this span.
    pub fn contains(self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

/// A whole law as published on gesetze-im-internet.de.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Law {
    /// Official abbreviation (`jurabk`), e.g. `BGB`.
    pub abbreviation: String,
    /// The path segment on gesetze-im-internet.de, e.g. `bgb` in `https://www.gesetze-im-internet.de/bgb/`.
    pub slug: String,
    /// Full title (`langue`), e.g. `Bürgerliches Gesetzbuch`.
    pub title: String,
    /// Short title (`kurzue`), the name other laws and people use, e.g. `Mindestlohngesetz` for the
    /// `Gesetz zur Regelung eines allgemeinen Mindestlohns`; empty when the archive gives none.
    pub short_title: String,
    /// Document number of the law (`doknr`), e.g. `BJNR001950896`.
    pub doknr: String,
    /// Build timestamp of the XML (`builddate`), e.g. `20260413220009`.
    pub build_date: String,
    /// Promulgation and amendment notes (`standangabe`).
    pub stand: Vec<Stand>,
    /// Where the XML came from (a path or URL).
    pub source: String,
    /// Structural units in document order; parents precede children.
    pub structure: Vec<StructureNode>,
    /// Sections in document order, repealed ones included.
    pub sections: Vec<Section>,
}

/// One `standangabe`: a kind (`Stand`, `Neuf`, `Hinweis` ...) and its text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stand {
    /// `standtyp`.
    pub kind: String,
    /// `standkommentar`.
    pub comment: String,
}

/// A unit of the structural hierarchy (`gliederungseinheit`): Buch, Abschnitt, Titel, Untertitel, Kapitel ...
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructureNode {
    /// `gliederungskennzahl`: three digits per level, so nesting is a prefix relation (`010` > `010010`).
    pub code: String,
    /// `gliederungsbez`, e.g. `Buch 2`.
    pub designation: String,
    /// `gliederungstitel`, e.g. `Recht der Schuldverhältnisse`.
    pub title: String,
    /// Index of the enclosing node in [`Law::structure`].
    pub parent: Option<u32>,
}

/// A section (Paragraph, Artikel, Anlage ...): the unit retrieval is evaluated on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Designation exactly as cited: `§ 573b`, `Art. 20a`, `§§ 3 bis 6`, `Präambel`.
    pub designation: String,
    /// Heading (`titel`), empty when the section has none.
    pub title: String,
    /// Innermost structural unit this section belongs to (index into [`Law::structure`]).
    pub structure: Option<u32>,
    /// `(weggefallen)` / `(aufgehoben)`: kept for the hierarchy and citations, never indexed.
    pub repealed: bool,
    /// Display text: subsections separated by `\n`, list items on lines of their own.
    pub text: String,
    /// Absätze; a section without numbered Absätze has exactly one (unlabelled) subsection.
    pub subsections: Vec<Subsection>,
    /// Sentences numbered continuously across the section (S1..Sn), in order.
    pub sentences: Vec<Sentence>,
    /// Enumeration items (`1.`, `a)`, nested) in order.
    pub list_items: Vec<ListItem>,
    /// Explicit citations found in the text.
    pub references: Vec<Reference>,
    /// Footnotes and editorial notes, as plain text (not part of [`Section::text`]).
    pub footnotes: Vec<String>,
}

/// An Absatz.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subsection {
    /// The number as printed without parentheses (`1`, `1a`), `None` for an unnumbered section.
    pub label: Option<String>,
    /// The whole Absatz including its `(1) ` label.
    pub span: Span,
    /// Indices into [`Section::sentences`] of the sentences in this Absatz.
    pub sentences: Range<u32>,
}

/// A sentence (Satz).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sentence {
    /// The sentence text, without the Absatz label.
    pub span: Span,
    /// Index of the Absatz it belongs to.
    pub subsection: u32,
}

/// An item of an enumeration (`DL`/`DT`/`DD`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListItem {
    /// The label as printed, e.g. `1.` or `a)`.
    pub label: String,
    /// Nesting depth, 0 for a top-level enumeration.
    pub depth: u16,
    /// The item's text including its label.
    pub span: Span,
    /// Index of the Absatz it belongs to.
    pub subsection: u32,
}

/// An explicit citation in a section's text, e.g. `§§ 439, 440 und 441` or `§ 15a InsO`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// Where the citation stands in the citing section's text.
    pub span: Span,
    /// What it points to, one entry per cited section (a range `§§ 535 bis 548` lists each section).
    pub targets: Vec<RefTarget>,
}

/// The target of a citation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RefTarget {
    /// A section of the same law, optionally narrowed to an Absatz / Satz as printed.
    Section {
        /// Index into [`Law::sections`].
        section: u32,
        /// `Abs. 1` / `Absatz 1a` as printed.
        subsection: Option<String>,
        /// `Satz 2` (numbered within the Absatz, as lawyers cite).
        sentence: Option<u16>,
    },
    /// A provision of another law.
    External {
        /// The other law: its abbreviation when printed (`InsO`), else the words (`des Handelsgesetzbuchs`).
        law: String,
        /// The cited designation, e.g. `§ 15a`.
        designation: String,
    },
    /// A provision of this law that does not exist in it (a typo or a stale citation).
    Unresolved {
        /// The cited designation.
        designation: String,
    },
}

impl Section {
    /// A section of `designation` with `text` and nothing else (no title, structure, subsections, sentences or
    /// references): what tests and hand-made laws start from. Parsed sections come from `paragraf-corpus`.
    pub fn bare(designation: impl Into<String>, text: impl Into<String>) -> Self {
        Section {
            designation: designation.into(),
            title: String::new(),
            structure: None,
            repealed: false,
            text: text.into(),
            subsections: vec![],
            sentences: vec![],
            list_items: vec![],
            references: vec![],
            footnotes: vec![],
        }
    }

    /// The text of a span of this section.
    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.range()]
    }

    /// Text of Absatz `index` (including its label).
    pub fn subsection_text(&self, index: usize) -> &str {
        self.slice(self.subsections[index].span)
    }

    /// The span of Absatz `index` without its `(1)` label.
    pub fn subsection_body(&self, index: usize) -> Span {
        let sub = &self.subsections[index];
        let label = sub.label.as_ref().map_or(0, |l| l.len() + 2);
        let text = &self.text[sub.span.start as usize + label..sub.span.end as usize];
        let start = sub.span.end as usize - text.trim_start().len();
        Span {
            start: start as u32,
            end: sub.span.end,
        }
    }

    /// Text of sentence `index` (S1 is index 0).
    pub fn sentence_text(&self, index: usize) -> &str {
        self.slice(self.sentences[index].span)
    }

    /// The number part of the designation (`573b` for `§ 573b`, `20a` for `Art. 20a`), used to resolve citations.
    pub fn number(&self) -> Option<&str> {
        let rest = self
            .designation
            .strip_prefix("§ ")
            .or_else(|| self.designation.strip_prefix("Art. "))?;
        rest.chars()
            .next()
            .filter(char::is_ascii_digit)
            .map(|_| rest)
    }
}

/// Why a decoded law cannot be used: an index or span that would make a later lookup loop or panic.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LawError(pub String);

/// Checks that `span` lies inside `text` on character boundaries.
fn check_span(text: &str, span: Span, what: impl FnOnce() -> String) -> Result<(), LawError> {
    let ok = span.start <= span.end
        && text.is_char_boundary(span.start as usize)
        && text.is_char_boundary(span.end as usize);
    ok.then_some(()).ok_or_else(|| {
        LawError(format!(
            "{} spans bytes {}..{} of a {}-byte text",
            what(),
            span.start,
            span.end,
            text.len()
        ))
    })
}

impl Law {
    /// A law of `abbreviation` (its slug the lowercase abbreviation) holding `sections` and nothing else: what
    /// tests and hand-made laws start from.
    pub fn bare(abbreviation: &str, sections: Vec<Section>) -> Self {
        Law {
            abbreviation: abbreviation.into(),
            slug: abbreviation.to_lowercase(),
            title: String::new(),
            short_title: String::new(),
            doknr: String::new(),
            build_date: String::new(),
            stand: vec![],
            source: String::new(),
            structure: vec![],
            sections,
        }
    }

    /// Checks every index and span the accessors rely on, so that nothing after decoding can loop or panic:
    /// structure parents precede their children (in range, no cycles), sections point at existing units,
    /// subsection, sentence, list-item and reference spans lie inside the text on character boundaries,
    /// sentences run in order through the subsections that own them, and citations point at existing sections.
    /// Every law the parser produces passes; a law bundle is checked when it is decoded.
    pub fn validate(&self) -> Result<(), LawError> {
        let fail = |message: String| Err(LawError(message));
        for (i, node) in self.structure.iter().enumerate() {
            if node.parent.is_some_and(|p| p as usize >= i) {
                return fail(format!(
                    "structure unit {i} has parent {}, which does not precede it",
                    node.parent.unwrap_or_default()
                ));
            }
        }
        let sections = self.sections.len();
        for (i, section) in self.sections.iter().enumerate() {
            let name = || format!("section {i} ({})", section.designation);
            if section
                .structure
                .is_some_and(|s| s as usize >= self.structure.len())
            {
                return fail(format!(
                    "{} lies in structure unit {}, but the law has {}",
                    name(),
                    section.structure.unwrap_or_default(),
                    self.structure.len()
                ));
            }
            let text = section.text.as_str();
            let mut next_sentence = 0u32;
            for (j, sub) in section.subsections.iter().enumerate() {
                check_span(text, sub.span, || format!("{}: subsection {j}", name()))?;
                let label = sub.label.as_ref().map_or(0, |l| l.len() + 2);
                if !text.is_char_boundary(sub.span.start as usize + label)
                    || sub.span.start as usize + label > sub.span.end as usize
                {
                    return fail(format!(
                        "{}: subsection {j} is shorter than its label",
                        name()
                    ));
                }
                let owned = &sub.sentences;
                if owned.start != next_sentence
                    || owned.end < owned.start
                    || owned.end as usize > section.sentences.len()
                {
                    return fail(format!(
                        "{}: subsection {j} owns sentences {}..{}, expected them to start at {next_sentence} and end by {}",
                        name(),
                        owned.start,
                        owned.end,
                        section.sentences.len()
                    ));
                }
                next_sentence = owned.end;
            }
            if next_sentence as usize != section.sentences.len() {
                return fail(format!(
                    "{}: {} sentences, but its subsections own {next_sentence}",
                    name(),
                    section.sentences.len()
                ));
            }
            let mut previous_start = 0;
            for (j, sentence) in section.sentences.iter().enumerate() {
                check_span(text, sentence.span, || format!("{}: sentence {j}", name()))?;
                let owner = section.subsections.get(sentence.subsection as usize);
                if !owner.is_some_and(|sub| sub.sentences.contains(&(j as u32))) {
                    return fail(format!(
                        "{}: sentence {j} names subsection {}, which does not own it",
                        name(),
                        sentence.subsection
                    ));
                }
                if sentence.span.start < previous_start {
                    return fail(format!(
                        "{}: sentence {j} starts before the sentence ahead of it",
                        name()
                    ));
                }
                previous_start = sentence.span.start;
            }
            for (j, item) in section.list_items.iter().enumerate() {
                check_span(text, item.span, || format!("{}: list item {j}", name()))?;
                if item.subsection as usize >= section.subsections.len() {
                    return fail(format!(
                        "{}: list item {j} names subsection {}, but there are {}",
                        name(),
                        item.subsection,
                        section.subsections.len()
                    ));
                }
            }
            for (j, reference) in section.references.iter().enumerate() {
                check_span(text, reference.span, || {
                    format!("{}: reference {j}", name())
                })?;
                for target in &reference.targets {
                    if let RefTarget::Section { section: s, .. } = target {
                        if *s as usize >= sections {
                            return fail(format!(
                                "{}: reference {j} cites section {s}, but the law has {sections}",
                                name()
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The section's page on gesetze-im-internet.de (`/bgb/__535.html`, `/gg/art_1.html`).
    pub fn official_url(&self, index: usize) -> String {
        let section = &self.sections[index];
        let page = match (section.designation.starts_with("Art."), section.number()) {
            (true, Some(n)) => format!("art_{n}.html"),
            (false, Some(n)) => format!("__{n}.html"),
            _ => "index.html".to_string(),
        };
        format!("https://www.gesetze-im-internet.de/{}/{page}", self.slug)
    }

    /// The breadcrumb of structural units above section `index`, outermost first.
    pub fn path(&self, index: usize) -> Vec<&StructureNode> {
        let mut path = Vec::new();
        let mut node = self.sections[index].structure;
        while let Some(i) = node {
            let n = &self.structure[i as usize];
            path.push(n);
            node = n.parent;
        }
        path.reverse();
        path
    }

    /// The breadcrumb as text: `Buch 2 > Abschnitt 8 > Titel 5 > Untertitel 1`.
    pub fn path_label(&self, index: usize) -> String {
        self.path(index)
            .iter()
            .map(|n| n.designation.as_str())
            .collect::<Vec<_>>()
            .join(" > ")
    }

    /// Finds a section by its designation as a user types it: `§ 535`, `§535`, `535`, `Art. 1`, `Art 1`, `Präambel`.
    /// For many lookups, [`Law::section_lookup`] indexes the designations once.
    pub fn find_section(&self, designation: &str) -> Option<usize> {
        self.find_designation(designation).or_else(|| {
            let wanted = normalize_designation(designation);
            let bare = bare_number(&wanted);
            self.sections.iter().position(|s| s.number() == Some(bare))
        })
    }

    /// The first section designated `designation` as printed, up to spacing and case (`anlage 2` is `Anlage 2`,
    /// `Art 1` is `Art. 1`), without [`Law::find_section`]'s bare numbers (`5` is not `§ 5`).
    pub fn find_designation(&self, designation: &str) -> Option<usize> {
        self.designations(designation).next()
    }

    /// Every section designated `designation` ([`Law::find_designation`]), in order: a law may repeal a section
    /// and have another under the same designation.
    pub fn designations<'a>(&'a self, designation: &str) -> impl Iterator<Item = usize> + 'a {
        let wanted = normalize_designation(designation);
        let first = wanted.chars().next();
        // The normalised form starts with the designation's first visible character, lower-cased: checking
        // that first spares a normalised copy of every section's designation (a search asks this per query).
        let leads = move |d: &str| {
            let lead = d.chars().find(|c| !c.is_whitespace());
            lead.and_then(|c| c.to_lowercase().next()) == first
        };
        self.sections
            .iter()
            .enumerate()
            .filter(move |(_, s)| {
                leads(&s.designation) && normalize_designation(&s.designation) == wanted
            })
            .map(|(i, _)| i)
    }

    /// [`Law::find_section`] for many designations (a learned file's thousands): the law's designations
    /// normalised and indexed once instead of once per lookup.
    pub fn section_lookup(&self) -> SectionLookup<'_> {
        let mut by_designation = HashMap::with_capacity(self.sections.len());
        let mut by_number = HashMap::with_capacity(self.sections.len());
        for (i, s) in self.sections.iter().enumerate() {
            by_designation
                .entry(normalize_designation(&s.designation))
                .or_insert(i);
            if let Some(number) = s.number() {
                by_number.entry(number).or_insert(i);
            }
        }
        SectionLookup {
            by_designation,
            by_number,
        }
    }

    /// Sections that are not repealed, with their indices.
    pub fn active_sections(&self) -> impl Iterator<Item = (usize, &Section)> {
        self.sections
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.repealed)
    }

    /// Depth of the structural hierarchy (0 for a law without one).
    pub fn hierarchy_depth(&self) -> usize {
        (0..self.structure.len())
            .map(|i| {
                let mut depth = 1;
                let mut node = self.structure[i].parent;
                while let Some(p) = node {
                    depth += 1;
                    node = self.structure[p as usize].parent;
                }
                depth
            })
            .max()
            .unwrap_or(0)
    }

    /// Every citation of section `target` from elsewhere in the law: `(citing section, reference)`.
    pub fn incoming_references(&self, target: usize) -> Vec<(usize, &Reference)> {
        let mut hits = Vec::new();
        for (i, section) in self.sections.iter().enumerate() {
            if i == target {
                continue;
            }
            for reference in &section.references {
                let cites = reference.targets.iter().any(
                    |t| matches!(t, RefTarget::Section { section, .. } if *section as usize == target),
                );
                if cites {
                    hits.push((i, reference));
                }
            }
        }
        hits
    }
}

/// Lowercase, no whitespace, `art.` for `Art`/`Artikel`: the comparison key for designations.
/// The number a normalised designation names (`573b` for `§573b`, `1` for `art.1`).
fn bare_number(normalized: &str) -> &str {
    normalized
        .trim_start_matches(['§', '.'])
        .trim_start_matches("art")
}

/// A law's sections by designation ([`Law::section_lookup`]); finds what [`Law::find_section`] finds.
pub struct SectionLookup<'a> {
    /// Normalised designation -> first section with it.
    by_designation: HashMap<String, usize>,
    /// Number part -> first section with it.
    by_number: HashMap<&'a str, usize>,
}

impl SectionLookup<'_> {
    /// The section a designation names, as [`Law::find_section`] resolves it.
    pub fn find(&self, designation: &str) -> Option<usize> {
        let wanted = normalize_designation(designation);
        self.by_designation
            .get(&wanted)
            .or_else(|| self.by_number.get(bare_number(&wanted)))
            .copied()
    }
}

fn normalize_designation(s: &str) -> String {
    let compact: String = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    if let Some(rest) = compact.strip_prefix("artikel") {
        return format!("art.{rest}");
    }
    match compact.strip_prefix("art") {
        Some(rest) if !rest.starts_with('.') => format!("art.{rest}"),
        _ => compact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(designations: &[&str]) -> Law {
        Law::bare(
            "X",
            designations.iter().map(|d| Section::bare(*d, "")).collect(),
        )
    }

    #[test]
    fn finds_sections_as_users_type_them() {
        let law = law(&["Präambel", "§ 1", "§ 573b", "Art. 20a"]);
        assert_eq!(law.find_section("§ 573b"), Some(2));
        assert_eq!(law.find_section("§573b"), Some(2));
        assert_eq!(law.find_section("573b"), Some(2));
        assert_eq!(law.find_section("Art 20a"), Some(3));
        assert_eq!(law.find_section("Artikel 20a"), Some(3));
        assert_eq!(law.find_section("präambel"), Some(0));
        assert_eq!(law.find_section("§ 2"), None);
    }

    #[test]
    fn the_lookup_finds_what_find_section_finds() {
        // A designation twice (a repealed and a current § 1) and a number only a later one spells alike.
        let law = law(&["Präambel", "§ 1", "§ 573b", "Art. 20a", "§ 1", "Art. 573b"]);
        let lookup = law.section_lookup();
        for asked in [
            "§ 573b",
            "§573b",
            "573b",
            "Art 20a",
            "Artikel 20a",
            "art. 573b",
            "präambel",
            "§ 1",
            "1",
            "§ 2",
            "",
            "§",
        ] {
            assert_eq!(lookup.find(asked), law.find_section(asked), "{asked:?}");
        }
    }

    #[test]
    fn number_strips_the_designation_prefix() {
        assert_eq!(Section::bare("§ 573b", "").number(), Some("573b"));
        assert_eq!(Section::bare("Art. 1", "").number(), Some("1"));
        assert_eq!(Section::bare("Präambel", "").number(), None);
        assert_eq!(Section::bare("§§ 3 bis 6", "").number(), None);
    }
}
