//! `paragraf show BGB "§ 535"`: one section from the law bundle (what the app has, not the XML) — its Absätze
//! and sentences, what it cites, what cites it, the official link. `--json` prints the schema of
//! [`paragraf_core::results::SectionText`].

use anyhow::Result;
use clap::Args;
use paragraf_core::results::{Citation, SectionText};

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
    let list = |items: Vec<String>| items.join("; ");
    if !s.cites.is_empty() {
        let _ = writeln!(
            out,
            "\nCites: {}",
            list(s.cites.iter().map(citation_label).collect())
        );
    }
    if !s.cited_by.is_empty() {
        let _ = writeln!(
            out,
            "Cited by: {}",
            list(
                s.cited_by
                    .iter()
                    .map(|c| named(&c.designation, &c.title))
                    .collect()
            )
        );
    }
    let _ = writeln!(out, "\n{}", s.url);
    out
}
