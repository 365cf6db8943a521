//! The gesetze-im-internet.de XML format (gii-norm) -> [`Law`].
//!
//! A law is one `<dokumente>` holding a flat list of `<norm>`s in document order: the first carries the law's
//! metadata, `gliederungseinheit` norms open structural units (nesting is encoded in `gliederungskennzahl`, three
//! digits per level), and norms with an `enbez` (`§ 535`, `Art 1`, `Anlage 2`) are the sections. Section text is
//! a small presentational markup (`P`, `DL/DT/DD` enumerations, `table`, `BR`, footnote references ...) that we
//! flatten into display text with offsets for every unit, so nothing downstream ever looks at XML again.

use crate::limits::{self, MAX_XML_BYTES, MAX_XML_DEPTH, MAX_XML_NODES};
use paragraf_law::citations::resolve_references;
use paragraf_law::sentences::split_sentences;
use paragraf_law::{Law, ListItem, Section, Sentence, Span, Stand, StructureNode, Subsection};
use roxmltree::{Document, Node};
use std::path::Path;

/// Why a file could not be read as a law. Every message names the file and, where it has one, the position.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The file could not be read at all.
    #[error("{file}: cannot read the file: {source}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Zero bytes.
    #[error("{file}: the file is empty. Most likely a download was interrupted: fetch the law's xml.zip again")]
    Empty {
        /// The file.
        file: String,
    },
    /// Not UTF-8.
    #[error("{file}:{line}:{column}: invalid UTF-8 (byte offset {offset}). gesetze-im-internet.de XML is UTF-8; most likely the file was re-encoded (e.g. to Latin-1): download it again or convert it with `iconv -t UTF-8`")]
    Encoding {
        /// The file.
        file: String,
        /// 1-based line of the first invalid byte.
        line: usize,
        /// 1-based column (in bytes) of the first invalid byte.
        column: usize,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// Not well-formed XML.
    #[error("{file}:{line}:{column}: malformed XML: {message}. Most likely the file is truncated or not XML")]
    Xml {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The XML parser's message.
        message: String,
    },
    /// Larger than [`MAX_XML_BYTES`].
    #[error("{file}: {bytes} bytes, more than the {} a law XML may have (the largest federal law has 3.3 MB). Most likely this is not one law's XML", limits::size(MAX_XML_BYTES))]
    TooLarge {
        /// The file.
        file: String,
        /// Its size (or the bytes read before the limit was passed).
        bytes: u64,
    },
    /// More than [`MAX_XML_NODES`] nodes.
    #[error("{file}: more than {MAX_XML_NODES} XML nodes (the largest federal law has about 100,000). Most likely this is not one law's XML")]
    TooManyNodes {
        /// The file.
        file: String,
    },
    /// Elements nested deeper than [`MAX_XML_DEPTH`].
    #[error("{file}:{line}:{column}: elements nested more than {MAX_XML_DEPTH} deep (federal laws nest at most 34 deep). Most likely the file is not a law but made to break parsers")]
    TooDeep {
        /// The file.
        file: String,
        /// Position of the first element too deep.
        line: u32,
        /// Position of the first element too deep.
        column: u32,
    },
    /// The file declares a document type (`<!DOCTYPE`): the only place entities can be declared.
    #[error("{file}: declares a document type (<!DOCTYPE …>), which no gesetze-im-internet.de law does: refused, since its entities could expand without bound. Most likely the file is not a law from the archive, or an entity bomb")]
    DocumentType {
        /// The file.
        file: String,
    },
    /// Well-formed XML of another kind.
    /// The parsed law breaks an invariant of the law model (a bug in this parser, found before a bundle is written).
    #[error("{file}: the parsed law is inconsistent ({source}); please report this law")]
    Invalid {
        /// The file.
        file: String,
        /// The broken invariant.
        source: paragraf_law::LawError,
    },
    /// The document is XML, but not a law of the archive.
    #[error("{file}:{line}:{column}: not a gesetze-im-internet.de law: the root element is <{root}>, expected <dokumente> holding <norm> elements (gii-norm format)")]
    NotGii {
        /// The file.
        file: String,
        /// Position of the root element.
        line: u32,
        /// Position of the root element.
        column: u32,
        /// The root element's name.
        root: String,
    },
}

/// Options for [`parse_str`].
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// The gesetze-im-internet.de path segment; derived from the abbreviation when absent.
    pub slug: Option<String>,
}

/// Reads and parses a law XML file.
pub fn parse_file(path: &Path) -> Result<Law, ParseError> {
    let file = path.display().to_string();
    let io = |source| ParseError::Io {
        file: file.clone(),
        source,
    };
    let too_large = |bytes| ParseError::TooLarge {
        file: file.clone(),
        bytes,
    };
    let reader = paragraf_fs::open_regular(path).map_err(io)?;
    let declared = reader.metadata().map_err(io)?.len();
    if declared > MAX_XML_BYTES {
        return Err(too_large(declared));
    }
    // The file may grow between the check and the read: read at most the limit all the same.
    let bytes = limits::read_at_most(reader, MAX_XML_BYTES).map_err(|e| match e {
        Some(source) => io(source),
        None => too_large(MAX_XML_BYTES + 1),
    })?;
    parse_bytes(&bytes, &file, &ParseOptions::default())
}

/// Parses law XML from bytes; `file` names the source in errors and in [`Law::source`].
pub fn parse_bytes(bytes: &[u8], file: &str, options: &ParseOptions) -> Result<Law, ParseError> {
    if bytes.len() as u64 > MAX_XML_BYTES {
        return Err(ParseError::TooLarge {
            file: file.to_string(),
            bytes: bytes.len() as u64,
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ParseError::Empty {
            file: file.to_string(),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let before = &bytes[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        ParseError::Encoding {
            file: file.to_string(),
            line,
            column,
            offset,
        }
    })?;
    parse_str(text, file, options)
}

/// Parses law XML text (at most [`MAX_XML_BYTES`], checked by the callers that read it).
pub fn parse_str(xml: &str, file: &str, options: &ParseOptions) -> Result<Law, ParseError> {
    // No law of the archive declares a DTD, so none is read: no entity can be declared, whatever a comment or a
    // processing instruction before it pretends (a textual pre-scan could be fooled by them).
    let parse_options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_XML_NODES,
        ..Default::default()
    };
    let doc = Document::parse_with_options(xml, parse_options).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => ParseError::TooManyNodes {
            file: file.to_string(),
        },
        roxmltree::Error::DtdDetected => ParseError::DocumentType {
            file: file.to_string(),
        },
        e => {
            let pos = e.pos();
            ParseError::Xml {
                file: file.to_string(),
                line: pos.row,
                column: pos.col,
                message: e.to_string(),
            }
        }
    })?;
    check_depth(&doc, file)?;
    let root = doc.root_element();
    if root.tag_name().name() != "dokumente" {
        let pos = doc.text_pos_at(root.range().start);
        return Err(ParseError::NotGii {
            file: file.to_string(),
            line: pos.row,
            column: pos.col,
            root: root.tag_name().name().to_string(),
        });
    }
    let mut law = Law {
        abbreviation: String::new(),
        slug: String::new(),
        title: String::new(),
        short_title: String::new(),
        doknr: root.attribute("doknr").unwrap_or_default().to_string(),
        build_date: root.attribute("builddate").unwrap_or_default().to_string(),
        stand: Vec::new(),
        source: file.to_string(),
        structure: Vec::new(),
        sections: Vec::new(),
    };
    let mut open_units: Vec<usize> = Vec::new();
    let mut head_norms = Vec::new();
    for norm in root.children().filter(|n| n.has_tag_name("norm")) {
        let Some(meta) = child(norm, "metadaten") else {
            continue;
        };
        if law.abbreviation.is_empty() {
            if let Some(abbreviation) = child(meta, "jurabk") {
                law.abbreviation = plain_text(abbreviation);
            }
        }
        if let Some(short) = child(meta, "kurzue").filter(|_| law.short_title.is_empty()) {
            law.short_title = plain_text(short);
        }
        if let Some(title) = child(meta, "langue").filter(|_| law.title.is_empty()) {
            law.title = plain_text(title);
            law.stand = meta
                .children()
                .filter(|n| n.has_tag_name("standangabe"))
                .map(|s| Stand {
                    kind: child(s, "standtyp").map(plain_text).unwrap_or_default(),
                    comment: child(s, "standkommentar")
                        .map(plain_text)
                        .unwrap_or_default(),
                })
                .collect();
        }
        if let Some(unit) = child(meta, "gliederungseinheit") {
            add_structure_node(&mut law.structure, &mut open_units, unit);
            continue;
        }
        let Some(enbez) = child(meta, "enbez") else {
            head_norms.push(norm);
            continue;
        };
        let designation = normalize_designation(&plain_text(enbez));
        if matches!(
            designation.as_str(),
            "Inhaltsübersicht" | "Inhaltsverzeichnis" | "Inhalt"
        ) {
            continue;
        }
        let title = child(meta, "titel").map(plain_text).unwrap_or_default();
        let mut section = read_section(norm, designation, title);
        section.structure = open_units.last().map(|&i| i as u32);
        law.sections.push(section);
    }
    if law.sections.is_empty() {
        law.sections = head_sections(&head_norms, &law.title);
    }
    law.slug = options
        .slug
        .clone()
        .unwrap_or_else(|| default_slug(&law.abbreviation));
    resolve_references(&mut law);
    // What the parser made must be a law the bundle reader accepts: a bundle that cannot be loaded is worse than a
    // law reported as unparsable.
    law.validate().map_err(|source| ParseError::Invalid {
        file: file.to_string(),
        source,
    })?;
    Ok(law)
}

/// Refuses documents nested deeper than [`MAX_XML_DEPTH`], so that the recursive text walk is bounded.
fn check_depth(doc: &Document, file: &str) -> Result<(), ParseError> {
    // Nodes come in document order, so a parent's depth is known before its children's: one pass, no recursion.
    let mut depths = vec![0u32; doc.descendants().count() + 1];
    for node in doc.descendants().filter(|n| n.is_element()) {
        let depth = node.parent().map_or(0, |p| depths[p.id().get_usize()]) + 1;
        depths[node.id().get_usize()] = depth;
        if depth as usize > MAX_XML_DEPTH {
            let pos = doc.text_pos_at(node.range().start);
            return Err(ParseError::TooDeep {
                file: file.to_string(),
                line: pos.row,
                column: pos.col,
            });
        }
    }
    Ok(())
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.has_tag_name(name))
}

/// The slug gesetze-im-internet.de uses for most laws: the abbreviation in lower case, other characters as `_`.
pub fn default_slug(abbreviation: &str) -> String {
    abbreviation
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `(XXXX) §§ 3 bis 6` -> `§§ 3 bis 6`, `Art 20a` -> `Art. 20a`, non-breaking spaces -> spaces.
fn normalize_designation(raw: &str) -> String {
    let cleaned = raw.replace("(XXXX)", " ");
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let mut text = words.join(" ");
    if let Some(rest) = text.strip_prefix("Art ") {
        text = format!("Art. {rest}");
    }
    text
}

fn add_structure_node(structure: &mut Vec<StructureNode>, open: &mut Vec<usize>, unit: Node) {
    let code = child(unit, "gliederungskennzahl")
        .map(plain_text)
        .unwrap_or_default();
    while let Some(&top) = open.last() {
        let top_code = &structure[top].code;
        if code.len() > top_code.len() && code.starts_with(top_code.as_str()) {
            break;
        }
        open.pop();
    }
    structure.push(StructureNode {
        code,
        designation: child(unit, "gliederungsbez")
            .map(plain_text)
            .unwrap_or_default(),
        title: child(unit, "gliederungstitel")
            .map(plain_text)
            .unwrap_or_default(),
        parent: open.last().map(|&i| i as u32),
    });
    open.push(structure.len() - 1);
}

/// All text below `node`, whitespace collapsed.
fn plain_text(node: Node) -> String {
    let mut out = String::new();
    for text in node.descendants().filter(|n| n.is_text()) {
        out.push_str(text.text().unwrap_or_default());
        out.push(' ');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_repealed_marker(text: &str) -> bool {
    let t = text.trim().trim_end_matches('.');
    matches!(
        t,
        "(weggefallen)" | "(aufgehoben)" | "weggefallen" | "aufgehoben" | "-" | "(gegenstandslos)"
    )
}

fn read_section(norm: Node, designation: String, title: String) -> Section {
    let mut paragraphs: Vec<Flat> = Vec::new();
    let mut footnotes = Vec::new();
    if let Some(text) = child(norm, "textdaten") {
        for part in text.children() {
            match part.tag_name().name() {
                "text" => {
                    for content in part.children() {
                        match content.tag_name().name() {
                            "Content" => {
                                for block in content.children().filter(|n| n.is_element()) {
                                    let mut flat = Flat::default();
                                    flat.walk(block, 0);
                                    flat.finish();
                                    if !flat.text.is_empty() {
                                        paragraphs.push(flat);
                                    }
                                }
                            }
                            "Footnotes" => footnotes.extend(
                                content
                                    .children()
                                    .filter(|n| n.has_tag_name("Footnote"))
                                    .map(plain_text),
                            ),
                            _ => {}
                        }
                    }
                }
                "fussnoten" => footnotes.extend(
                    part.descendants()
                        .filter(|n| n.has_tag_name("P"))
                        .map(plain_text)
                        .filter(|t| !t.is_empty()),
                ),
                _ => {}
            }
        }
    }
    let repealed = designation.contains("§§") && paragraphs.is_empty()
        || is_repealed_marker(&title)
        || paragraphs.len() == 1 && is_repealed_marker(&paragraphs[0].text);
    let mut section = Section {
        designation,
        title,
        structure: None,
        repealed,
        text: String::new(),
        subsections: Vec::new(),
        sentences: Vec::new(),
        list_items: Vec::new(),
        references: Vec::new(),
        footnotes,
    };
    if !repealed {
        assemble(&mut section, paragraphs);
    }
    section
}

/// Designation of the sections made from a law's head norms (see `head_sections`), numbered when there are several.
pub const HEAD_TEXT: &str = "Text";

/// Whether a section was made from a law's head norms (the law has no `enbez` sections).
pub fn is_head_text(section: &Section) -> bool {
    section.designation == HEAD_TEXT
        || section
            .designation
            .strip_prefix(HEAD_TEXT)
            .and_then(|n| n.strip_prefix(' '))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The sections of a law without `enbez` sections (1,038 short ordinances, announcements and treaties in the
/// federal archive keep their text in head norms): one per head norm with text, [`HEAD_TEXT`] (`Text 1`,
/// `Text 2`, ... when there are several), headed by the norm's title or the law's. A law whose head norms hold
/// no text at all (a treaty listed with its title and where it was published) gets one section of its title and
/// editorial notes, so every law has something to find.
fn head_sections(norms: &[Node], law_title: &str) -> Vec<Section> {
    let heading = |norm: &Node| {
        child(*norm, "metadaten")
            .and_then(|m| child(m, "titel"))
            .map(plain_text)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| law_title.to_string())
    };
    let read: Vec<Section> = norms
        .iter()
        .map(|norm| read_section(*norm, HEAD_TEXT.to_string(), heading(norm)))
        .collect();
    let mut sections: Vec<Section> = read
        .iter()
        .filter(|s| !s.text.is_empty())
        .cloned()
        .collect();
    if sections.is_empty() {
        let lines = std::iter::once(law_title.to_string())
            .chain(read.into_iter().flat_map(|s| s.footnotes))
            .filter(|line| !line.is_empty());
        let mut section = Section {
            designation: HEAD_TEXT.to_string(),
            title: law_title.to_string(),
            structure: None,
            repealed: false,
            text: String::new(),
            subsections: Vec::new(),
            sentences: Vec::new(),
            list_items: Vec::new(),
            references: Vec::new(),
            footnotes: Vec::new(),
        };
        assemble(
            &mut section,
            lines
                .map(|text| Flat {
                    text,
                    items: Vec::new(),
                })
                .collect(),
        );
        if !section.text.is_empty() {
            sections.push(section);
        }
    }
    if sections.len() > 1 {
        for (i, section) in sections.iter_mut().enumerate() {
            section.designation = format!("{HEAD_TEXT} {}", i + 1);
        }
    }
    sections
}

/// Lays the flattened paragraphs out as the section text and records subsections, sentences and list items.
fn assemble(section: &mut Section, paragraphs: Vec<Flat>) {
    // Unlabelled paragraphs after a labelled one continue that Absatz.
    let mut groups: Vec<(Option<String>, Vec<Flat>)> = Vec::new();
    for flat in paragraphs {
        let label = subsection_label(&flat.text);
        match (label, groups.last_mut()) {
            (None, Some((Some(_), parts))) => parts.push(flat),
            (label, _) => groups.push((label, vec![flat])),
        }
    }
    for (label, parts) in groups {
        if !section.text.is_empty() {
            section.text.push('\n');
        }
        let start = section.text.len();
        let subsection = section.subsections.len() as u32;
        for (i, flat) in parts.into_iter().enumerate() {
            if i > 0 {
                section.text.push('\n');
            }
            let offset = section.text.len();
            section.text.push_str(&flat.text);
            section
                .list_items
                .extend(
                    flat.items
                        .into_iter()
                        .map(|(label, depth, range)| ListItem {
                            label,
                            depth,
                            span: Span::new(range.start + offset..range.end + offset),
                            subsection,
                        }),
                );
        }
        let end = section.text.len();
        let body_start = start + label.as_ref().map_or(0, |l| l.len() + 2);
        let first_sentence = section.sentences.len() as u32;
        // A repealed Absatz (`(3) (weggefallen)`) keeps its place and text but has no sentences.
        let body = if is_repealed_marker(&section.text[body_start..end]) {
            ""
        } else {
            &section.text[body_start..end]
        };
        for range in split_sentences(body) {
            section.sentences.push(Sentence {
                span: Span::new(range.start + body_start..range.end + body_start),
                subsection,
            });
        }
        section.subsections.push(Subsection {
            label,
            span: Span::new(start..end),
            sentences: first_sentence..section.sentences.len() as u32,
        });
    }
}

/// `(1) Text` -> `1`; `(1a) Text` -> `1a`.
fn subsection_label(text: &str) -> Option<String> {
    let rest = text.strip_prefix('(')?;
    let close = rest.find(')')?;
    let label = &rest[..close];
    let digits = label.bytes().take_while(u8::is_ascii_digit).count();
    let valid = digits > 0
        && label.len() - digits <= 1
        && label[digits..].bytes().all(|b| b.is_ascii_lowercase());
    (valid && rest[close + 1..].starts_with([' ', '('])).then(|| label.to_string())
}

/// One block of section markup flattened to text, with its enumeration items.
#[derive(Default)]
struct Flat {
    text: String,
    /// `(label, depth, byte range)` of each list item.
    items: Vec<(String, u16, std::ops::Range<usize>)>,
}

impl Flat {
    fn walk(&mut self, node: Node, depth: u16) {
        if node.is_text() {
            self.push_text(node.text().unwrap_or_default());
            return;
        }
        match node.tag_name().name() {
            "BR" => self.newline(),
            "FnR" | "IMG" | "Footnotes" | "FnArea" | "colspec" | "FILE" => {}
            "DL" => {
                self.newline();
                let mut label = String::new();
                for item in node.children().filter(|n| n.is_element()) {
                    match item.tag_name().name() {
                        "DT" => label = plain_text(item),
                        "DD" => {
                            self.newline();
                            let start = self.text.len();
                            if !label.is_empty() {
                                self.text.push_str(&label);
                                self.text.push(' ');
                            }
                            for c in item.children() {
                                self.walk(c, depth + 1);
                            }
                            self.trim_end();
                            // An item with nothing in it (no label, blank content) leaves no text: trimming may
                            // even have taken the line break before it. It is no item then.
                            let label = std::mem::take(&mut label);
                            if self.text.len() > start {
                                self.items.push((label, depth, start..self.text.len()));
                            }
                        }
                        _ => self.walk(item, depth),
                    }
                }
                self.newline();
            }
            "row" => {
                self.newline();
                let cells: Vec<String> = node
                    .children()
                    .filter(|n| n.is_element())
                    .map(plain_text)
                    .collect();
                self.push_text(&cells.join(" | "));
                self.newline();
            }
            "Title" | "Subtitle" | "pre" | "table" | "tgroup" | "tbody" | "thead" => {
                self.newline();
                for c in node.children() {
                    self.walk(c, depth);
                }
                self.newline();
            }
            _ => {
                for c in node.children() {
                    self.walk(c, depth);
                }
            }
        }
    }

    fn push_text(&mut self, raw: &str) {
        for (i, word) in raw.split(|c: char| c.is_whitespace()).enumerate() {
            if i > 0 && !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
                self.text.push(' ');
            }
            self.text.push_str(word);
        }
    }

    fn trim_end(&mut self) {
        let len = self.text.trim_end().len();
        self.text.truncate(len);
    }

    fn newline(&mut self) {
        self.trim_end();
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    fn finish(&mut self) {
        self.trim_end();
        let lead = self.text.len() - self.text.trim_start().len();
        if lead > 0 {
            self.text.drain(..lead);
            for (_, _, range) in &mut self.items {
                *range = range.start - lead..range.end - lead;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(xml: &str) -> Law {
        parse_str(xml, "test.xml", &ParseOptions::default()).unwrap()
    }

    const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?><dokumente builddate="20260413220009" doknr="BJNR1"><norm><metadaten><jurabk>TG</jurabk><langue>Testgesetz</langue></metadaten></norm>"#;

    #[test]
    fn the_short_title_is_kept_beside_the_title() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?><dokumente builddate="1" doknr="BJNR2"><norm><metadaten><jurabk>MiLoG</jurabk><kurzue>Mindestlohngesetz</kurzue><langue>Gesetz zur Regelung eines allgemeinen Mindestlohns</langue></metadaten></norm><norm><metadaten><jurabk>MiLoG</jurabk><enbez>§ 1</enbez></metadaten><textdaten><text><Content><P>Text.</P></Content></text></textdaten></norm></dokumente>"#;
        let milog = law(xml);
        assert_eq!(
            (milog.title.as_str(), milog.short_title.as_str()),
            (
                "Gesetz zur Regelung eines allgemeinen Mindestlohns",
                "Mindestlohngesetz"
            )
        );
        let without = law(&format!("{HEAD}</dokumente>"));
        assert_eq!(
            (without.title.as_str(), without.short_title.as_str()),
            ("Testgesetz", "")
        );
    }

    #[test]
    fn an_empty_list_item_is_no_item_and_the_law_stays_valid() {
        // As in Anlage 1 of the SVFAngAusbV 1997: an enumeration entry without label or text (the bundle of that
        // law once failed to load: the item's span ran backwards).
        let xml = format!(
            "{HEAD}<norm><metadaten><jurabk>TG</jurabk><enbez>Anlage 1</enbez></metadaten><textdaten><text><Content><P>Liste <DL><DT>1.</DT><DD><LA>eins</LA></DD><DT></DT><DD><LA> </LA></DD><DT>2.</DT><DD><LA>zwei</LA></DD></DL></P></Content></text></textdaten></norm></dokumente>"
        );
        let law = law(&xml);
        let s = &law.sections[0];
        let items: Vec<&str> = s.list_items.iter().map(|i| s.slice(i.span)).collect();
        assert_eq!(items, ["1. eins", "2. zwei"]);
        law.validate().unwrap();
    }

    #[test]
    fn lists_and_continuation_text() {
        let xml = format!(
            "{HEAD}<norm><metadaten><jurabk>TG</jurabk><enbez>§ 1</enbez><titel>Liste</titel></metadaten><textdaten><text><Content><P>(1) Berechtigt sind: <DL><DT>1.</DT><DD><LA>der Mann,</LA></DD><DT>2.</DT><DD><LA>das Kind.</LA></DD></DL>Die Anfechtung nach Satz 1 ist möglich.</P><P>(2) Zweiter Absatz.<FnR ID=\"x\"/></P><P>(3)(weggefallen)</P></Content></text></textdaten></norm></dokumente>"
        );
        let law = law(&xml);
        let s = &law.sections[0];
        assert_eq!(s.text, "(1) Berechtigt sind:\n1. der Mann,\n2. das Kind.\nDie Anfechtung nach Satz 1 ist möglich.\n(2) Zweiter Absatz.\n(3)(weggefallen)");
        assert_eq!(s.subsections.len(), 3);
        assert_eq!(s.sentences.len(), 3);
        assert_eq!(s.subsections[2].label.as_deref(), Some("3"));
        assert!(
            s.subsections[2].sentences.is_empty(),
            "a repealed Absatz has no sentences"
        );
        assert_eq!(
            s.sentence_text(0),
            "Berechtigt sind:\n1. der Mann,\n2. das Kind."
        );
        assert_eq!(s.list_items.len(), 2);
        assert_eq!(s.slice(s.list_items[1].span), "2. das Kind.");
        assert_eq!(s.subsections[1].sentences, 2..3);
    }

    #[test]
    fn repealed_ranges_and_structure() {
        let xml = format!(
            "{HEAD}<norm><metadaten><gliederungseinheit><gliederungskennzahl>010</gliederungskennzahl><gliederungsbez>Buch 1</gliederungsbez><gliederungstitel>Eins</gliederungstitel></gliederungseinheit></metadaten></norm><norm><metadaten><gliederungseinheit><gliederungskennzahl>010010</gliederungskennzahl><gliederungsbez>Abschnitt 1</gliederungsbez></gliederungseinheit></metadaten></norm><norm><metadaten><enbez>(XXXX) §§ 3 bis 6</enbez><titel>(weggefallen)</titel></metadaten><textdaten><text><Content><P/></Content></text></textdaten></norm><norm><metadaten><gliederungseinheit><gliederungskennzahl>020</gliederungskennzahl><gliederungsbez>Buch 2</gliederungsbez></gliederungseinheit></metadaten></norm><norm><metadaten><enbez>Art 7</enbez></metadaten><textdaten><text><Content><P>Siehe § 4.</P></Content></text></textdaten></norm></dokumente>"
        );
        let law = law(&xml);
        assert_eq!(law.sections[0].designation, "§§ 3 bis 6");
        assert!(law.sections[0].repealed);
        assert_eq!(law.path_label(0), "Buch 1 > Abschnitt 1");
        assert_eq!(law.path_label(1), "Buch 2");
        assert_eq!(law.sections[1].designation, "Art. 7");
        assert_eq!(law.sections[1].subsections.len(), 1);
        assert_eq!(law.sections[1].subsections[0].label, None);
        // `§ 4` falls into the repealed range `§§ 3 bis 6`
        assert_eq!(
            law.sections[1].references[0].targets,
            vec![paragraf_law::RefTarget::Section {
                section: 0,
                subsection: None,
                sentence: None
            }]
        );
    }

    #[test]
    fn bad_input_errors_name_file_and_position() {
        let opts = ParseOptions::default();
        let err = parse_bytes(b"", "a.xml", &opts).unwrap_err().to_string();
        assert_eq!(err, "a.xml: the file is empty. Most likely a download was interrupted: fetch the law's xml.zip again");
        let err = parse_bytes(b"<dokumente><norm>", "b.xml", &opts)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "b.xml:1:1: malformed XML: the root node was opened but never closed. Most likely the file is truncated or not XML");
        let err = parse_bytes(b"<dokumente><norm></dokumente>", "t.xml", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.xml:1:18: malformed XML: expected 'norm' tag, not 'dokumente'"),
            "{err}"
        );
        let err = parse_bytes(b"<html><body/></html>", "c.xml", &opts)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "c.xml:1:1: not a gesetze-im-internet.de law: the root element is <html>, expected <dokumente> holding <norm> elements (gii-norm format)");
        let err = parse_bytes(
            b"<dokumente>\n<norm>Gr\xfc\xdfe</norm></dokumente>",
            "d.xml",
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("d.xml:2:9: invalid UTF-8 (byte offset 20)"),
            "{err}"
        );
    }

    /// A law whose one section holds `body` inside its `<P>`.
    fn with_body(prolog: &str, body: &str) -> String {
        format!("<?xml version=\"1.0\"?>{prolog}<dokumente><norm><metadaten><jurabk>TG</jurabk><enbez>§ 1</enbez></metadaten><textdaten><text><Content><P>{body}</P></Content></text></textdaten></norm></dokumente>")
    }

    #[test]
    fn document_types_are_refused_however_they_are_disguised() {
        // One 100 kB entity referenced 20,000 times: 2 GB once expanded (the first round's 3.8 GiB, 27 s).
        let big = format!("<!ENTITY big \"{}\">", "x".repeat(100_000));
        let refs = "&big;".repeat(20_000);
        let expected = |file: &str| {
            format!("{file}: declares a document type (<!DOCTYPE …>), which no gesetze-im-internet.de law does: refused, since its entities could expand without bound. Most likely the file is not a law from the archive, or an entity bomb")
        };
        for (file, prolog) in [
            ("bomb.xml", format!("<!DOCTYPE dokumente [{big}]>")),
            // A fake declaration in a comment or a processing instruction first fooled the textual pre-scan.
            ("comment.xml", format!("<!DOCTYPE dokumente [<!-- <!ENTITY big \"x\"> -->{big}]>")),
            ("pi.xml", format!("<!DOCTYPE dokumente [<?x <!ENTITY big \"x\">?>{big}]>")),
            ("parameter.xml", format!("<!DOCTYPE dokumente [<!ENTITY % p \"{}\"> %p; {big}]>", "y".repeat(10))),
            ("small.xml", "<!DOCTYPE d [<!ENTITY sp 'Absatz'>]>".to_string()),
            ("external.xml", "<!DOCTYPE dokumente SYSTEM \"http://www.gesetze-im-internet.de/dtd/1.01/gii-norm.dtd\">".to_string()),
        ] {
            let xml = with_body(&prolog, &refs);
            let err = parse_str(&xml, file, &ParseOptions::default()).unwrap_err();
            assert_eq!(err.to_string(), expected(file));
        }
        // Without a DTD an entity reference names nothing: an XML error, not an expansion.
        let xml = with_body("<!-- <!ENTITY big \"x\"> -->", &refs);
        let err = parse_str(&xml, "undeclared.xml", &ParseOptions::default()).unwrap_err();
        assert!(matches!(err, ParseError::Xml { .. }), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let xml = with_body(
            "",
            &format!("{}x{}", "<B>".repeat(50_000), "</B>".repeat(50_000)),
        );
        let err = parse_str(&xml, "deep.xml", &ParseOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "deep.xml:1:878: elements nested more than 256 deep (federal laws nest at most 34 deep). Most likely the file is not a law but made to break parsers");
        // Just inside the limit parses.
        let depth = MAX_XML_DEPTH - 8;
        let xml = with_body(
            "",
            &format!("{}x{}", "<B>".repeat(depth), "</B>".repeat(depth)),
        );
        assert_eq!(law(&xml).sections[0].text, "x");
    }

    #[test]
    fn oversized_inputs_are_refused_with_their_size() {
        let big = vec![b' '; MAX_XML_BYTES as usize + 1];
        let err = parse_bytes(&big, "big.xml", &ParseOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "big.xml: 33554433 bytes, more than the 32 MiB a law XML may have (the largest federal law has 3.3 MB). Most likely this is not one law's XML");
        let xml = with_body("", &"<BR/>".repeat(MAX_XML_NODES as usize));
        let err = parse_str(&xml, "nodes.xml", &ParseOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "nodes.xml: more than 1048576 XML nodes (the largest federal law has about 100,000). Most likely this is not one law's XML");
    }
}
