//! Reading the law from the law bundle (what the app has, not the XML): `paragraf show BGB "§ 535"` — one
//! section's Absätze and sentences, what it cites, what cites it, the definitions it uses, the official link;
//! `paragraf cite "§ 433 Abs. 1 S. 2 BGB"` — exactly the unit a citation names; `paragraf contents BGB` — the
//! law's structure with its sections. `--json` prints [`paragraf_core::results`]' schemas, which the MCP tools
//! answer with too.

use anyhow::Result;
use clap::Args;
use paragraf_core::results::{Citation, ResolvedCitation, SectionText, TableOfContents};

use super::search::BundlesDir;

#[derive(Args)]
pub struct ShowArgs {
    /// Law abbreviation, e.g. `BGB`.
    law: String,
    /// The section as cited: `§ 535`, `535`, `Art. 1`.
    section: String,
    #[command(flatten)]
    dir: BundlesDir,
    /// Print JSON (schema `paragraf.section/1`).
    #[arg(long)]
    json: bool,
}

pub fn run(args: ShowArgs) -> Result<()> {
    let lib = args.dir.open()?;
    let section = lib.section(&args.law, &args.section)?;
    super::search::print(&section, args.json, render)
}

#[derive(Args)]
pub struct CiteArgs {
    /// The citation: `§ 433 Abs. 1 S. 2 BGB`, `Art. 20a GG`, `§§ 535 bis 548 BGB` (the law may be left out when
    /// the folder holds one).
    citation: String,
    #[command(flatten)]
    dir: BundlesDir,
    /// Print JSON (schema `paragraf.citation/1`).
    #[arg(long)]
    json: bool,
}

pub fn cite(args: CiteArgs) -> Result<()> {
    let resolved = args.dir.open()?.resolve(&args.citation)?;
    super::search::print(&resolved, args.json, render_citation)
}

#[derive(Args)]
pub struct ContentsArgs {
    /// Law abbreviation, e.g. `BGB`.
    law: String,
    #[command(flatten)]
    dir: BundlesDir,
    /// Print JSON (schema `paragraf.contents/1`).
    #[arg(long)]
    json: bool,
}

pub fn contents(args: ContentsArgs) -> Result<()> {
    let contents = args.dir.open()?.contents(&args.law)?;
    super::search::print(&contents, args.json, render_contents)
}

/// Each cited unit: the citation, heading, breadcrumb, exactly its text, the link and the law's Stand.
fn render_citation(r: &ResolvedCitation, terminal: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (n, p) in r.provisions.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let heading = super::search::heading(&named(&p.citation, &p.title), terminal);
        let _ = writeln!(out, "{heading}");
        if !p.breadcrumb.is_empty() {
            let _ = writeln!(out, "{} > {}", p.law_title, p.breadcrumb);
        }
        if p.repealed {
            let _ = writeln!(out, "(repealed)");
        }
        let _ = writeln!(out, "\n  {}\n\n{}", p.text.replace('\n', "\n  "), p.url);
    }
    if let Some(p) = r.provisions.first() {
        for stand in &p.stand {
            let _ = writeln!(out, "{stand}");
        }
    }
    out
}

/// The structure, indented by depth, each unit with its sections.
fn render_contents(c: &TableOfContents, terminal: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let heading = super::search::heading(&format!("{} {}", c.law, c.law_title), terminal);
    let _ = writeln!(out, "{heading}");
    for unit in &c.units {
        let indent = "  ".repeat(unit.depth);
        if !unit.designation.is_empty() || !unit.title.is_empty() {
            let _ = writeln!(out, "{indent}{} {}", unit.designation, unit.title);
        }
        for s in &unit.sections {
            let _ = writeln!(out, "{indent}  {}", named(&s.designation, &s.title));
        }
    }
    out
}

/// How a citation reads in a list.
pub fn citation_label(c: &Citation) -> String {
    match c {
        Citation::Section {
            designation,
            title,
            subsection,
            sentence,
        } => {
            let mut label = designation.clone();
            if let Some(s) = subsection {
                label.push_str(&format!(" Abs. {s}"));
            }
            if let Some(s) = sentence {
                label.push_str(&format!(" Satz {s}"));
            }
            named(&label, title)
        }
        Citation::External { law, designation } => format!("{designation} {law}"),
        Citation::Unresolved { designation } => format!("{designation} (not in this law)"),
    }
}

/// `§ 536 (Mietminderung …)`, or the bare designation when the section has no heading (the GG's articles).
fn named(designation: &str, title: &str) -> String {
    if title.is_empty() {
        designation.to_string()
    } else {
        format!("{designation} ({title})")
    }
}

/// The section for a person: heading, breadcrumb, each Absatz with numbered sentences, citations both ways.
pub fn render(s: &SectionText, terminal: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let heading = super::search::heading(
        &format!("{} {} {}", s.law, s.designation, s.title),
        terminal,
    );
    let _ = writeln!(out, "{heading}");
    if !s.breadcrumb.is_empty() {
        let _ = writeln!(out, "{} > {}", s.law_title, s.breadcrumb);
    }
    if s.repealed {
        let _ = writeln!(out, "(repealed)");
    }
    out.push('\n');
    for a in &s.subsections {
        if let Some(label) = &a.label {
            let _ = writeln!(out, "({label})");
        }
        if a.sentences.is_empty() {
            let _ = writeln!(out, "  {}", a.text.replace('\n', "\n  "));
        }
        for (n, sentence) in a.sentences.iter().enumerate() {
            let _ = writeln!(out, "  S{} {}", n + 1, sentence.replace('\n', "\n     "));
        }
    }
    for note in &s.footnotes {
        let _ = writeln!(out, "\nFootnote: {note}");
    }
    let mut listed = |label: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(out, "{label}: {}", items.join("; "));
        }
    };
    listed("\nCites", s.cites.iter().map(citation_label).collect());
    listed(
        "Defined terms",
        s.definitions
            .iter()
            .map(|d| format!("{} ({})", d.term, d.defined_in.designation))
            .collect(),
    );
    listed(
        "Cited by",
        s.cited_by
            .iter()
            .map(|c| named(&c.designation, &c.title))
            .collect(),
    );
    listed(
        "Cited by other laws",
        s.cited_by_other_laws
            .iter()
            .map(|c| named(&format!("{} {}", c.designation, c.law), &c.title))
            .collect(),
    );
    let _ = writeln!(out, "\n{}", s.url);
    out
}
