//! A look inside parsed law: a law's counts, one section with its citations both ways, and a scan of a whole
//! archive (`paragraf corpus stats`, `show`, `scan`), as data (JSON) and text ([`fmt::Display`]).

use std::fmt;
use std::path::Path;
use std::time::Instant;

use paragraf_law::{Law, RefTarget};
use serde::Serialize;

use crate::SourceError;

/// A law's counts (`paragraf corpus stats`).
#[derive(Serialize)]
pub struct LawStats {
    abbreviation: String,
    title: String,
    stand: Vec<String>,
    build_date: String,
    sections_active: usize,
    sections_repealed: usize,
    subsections: usize,
    sentences: usize,
    list_items: usize,
    references: usize,
    references_resolved: usize,
    references_external: usize,
    references_unresolved: usize,
    structure_units: usize,
    hierarchy_depth: usize,
    parse_ms: f64,
    peak_memory_mib: Option<f64>,
}

impl LawStats {
    /// The counts of `law`, parsed in `parse_ms`, with the process's peak memory so far.
    pub fn of(law: &Law, parse_ms: f64) -> Self {
        let active: Vec<_> = law.active_sections().map(|(_, s)| s).collect();
        let targets = || {
            active
                .iter()
                .flat_map(|s| &s.references)
                .flat_map(|r| &r.targets)
        };
        LawStats {
            abbreviation: law.abbreviation.clone(),
            title: law.title.clone(),
            stand: law
                .stand
                .iter()
                .map(|s| format!("{}: {}", s.kind, s.comment))
                .collect(),
            build_date: law.build_date.clone(),
            sections_active: active.len(),
            sections_repealed: law.sections.len() - active.len(),
            subsections: active.iter().map(|s| s.subsections.len()).sum(),
            sentences: active.iter().map(|s| s.sentences.len()).sum(),
            list_items: active.iter().map(|s| s.list_items.len()).sum(),
            references: active.iter().map(|s| s.references.len()).sum(),
            references_resolved: targets()
                .filter(|t| matches!(t, RefTarget::Section { .. }))
                .count(),
            references_external: targets()
                .filter(|t| matches!(t, RefTarget::External { .. }))
                .count(),
            references_unresolved: targets()
                .filter(|t| matches!(t, RefTarget::Unresolved { .. }))
                .count(),
            structure_units: law.structure.len(),
            hierarchy_depth: law.hierarchy_depth(),
            parse_ms,
            peak_memory_mib: peak_memory_mib(),
        }
    }
}

/// One section as `paragraf corpus show` prints it.
#[derive(Serialize)]
pub struct SectionView {
    law: String,
    designation: String,
    title: String,
    path: Vec<String>,
    repealed: bool,
    url: String,
    subsections: Vec<SubsectionView>,
    outgoing: Vec<ReferenceView>,
    incoming: Vec<ReferenceView>,
    footnotes: Vec<String>,
}

/// An Absatz of a [`SectionView`].
#[derive(Serialize)]
pub struct SubsectionView {
    label: Option<String>,
    /// `(sentence number S1.., text)`.
    sentences: Vec<(usize, String)>,
}

/// A citation of a [`SectionView`], either way.
#[derive(Serialize)]
pub struct ReferenceView {
    /// The citation as printed (outgoing) or the citing section (incoming).
    cited: String,
    targets: Vec<String>,
}

impl SectionView {
    /// Section `index` of `law`.
    pub fn of(law: &Law, index: usize) -> Self {
        let section = &law.sections[index];
        let describe = |t: &RefTarget| match t {
            RefTarget::Section {
                section,
                subsection,
                sentence,
            } => {
                let mut s = law.sections[*section as usize].designation.clone();
                if let Some(a) = subsection {
                    s += &format!(" Abs. {a}");
                }
                if let Some(n) = sentence {
                    s += &format!(" Satz {n}");
                }
                s
            }
            RefTarget::External { law, designation } => format!("{designation} {law} (external)"),
            RefTarget::Unresolved { designation } => format!("{designation} (unresolved)"),
        };
        SectionView {
            law: law.abbreviation.clone(),
            designation: section.designation.clone(),
            title: section.title.clone(),
            path: law
                .path(index)
                .iter()
                .map(|n| format!("{} {}", n.designation, n.title).trim().to_string())
                .collect(),
            repealed: section.repealed,
            url: law.official_url(index),
            subsections: section
                .subsections
                .iter()
                .map(|sub| SubsectionView {
                    label: sub.label.clone(),
                    sentences: (sub.sentences.start as usize..sub.sentences.end as usize)
                        .map(|i| (i + 1, section.sentence_text(i).to_string()))
                        .collect(),
                })
                .collect(),
            outgoing: section
                .references
                .iter()
                .map(|r| ReferenceView {
                    cited: section.slice(r.span).to_string(),
                    targets: r.targets.iter().map(describe).collect(),
                })
                .collect(),
            incoming: law
                .incoming_references(index)
                .into_iter()
                .map(|(from, r)| ReferenceView {
                    cited: law.sections[from].designation.clone(),
                    targets: vec![law.sections[from].slice(r.span).to_string()],
                })
                .collect(),
            footnotes: section.footnotes.clone(),
        }
    }
}

/// What parsing every law of an archive found (`paragraf corpus scan`).
#[derive(Serialize)]
pub struct ScanReport {
    /// Laws in the archive.
    pub laws: usize,
    /// Laws that parsed.
    pub parsed: usize,
    /// Why the others did not, one line each.
    pub failures: Vec<String>,
    /// Laws without `enbez` sections, searched through their head-norm text (`Text`).
    pub laws_without_sections: usize,
    /// Laws with nothing to search at all (no sections, no head-norm text, no title).
    pub laws_empty: usize,
    /// Active sections of all parsed laws.
    pub sections_active: usize,
    /// Repealed sections.
    pub sections_repealed: usize,
    /// Sentences of all sections.
    pub sentences: usize,
    /// Wall time of the scan.
    pub seconds: f64,
    /// The process's peak memory, where the OS reports it.
    pub peak_memory_mib: Option<f64>,
}

/// Parses every law of `archive`; `progress` hears each law visited.
pub fn scan(archive: &Path, progress: &mut dyn FnMut()) -> Result<ScanReport, SourceError> {
    let started = Instant::now();
    let mut report = ScanReport {
        laws: 0,
        parsed: 0,
        failures: Vec::new(),
        laws_without_sections: 0,
        laws_empty: 0,
        sections_active: 0,
        sections_repealed: 0,
        sentences: 0,
        seconds: 0.0,
        peak_memory_mib: None,
    };
    crate::for_each_law(archive, |entry| {
        report.laws += 1;
        progress();
        match entry.result {
            Ok(law) => {
                report.parsed += 1;
                let active = law.active_sections().count();
                report.sections_active += active;
                report.sections_repealed += law.sections.len() - active;
                report.sentences += law
                    .sections
                    .iter()
                    .map(|s| s.sentences.len())
                    .sum::<usize>();
                if law.sections.iter().all(crate::gii::is_head_text) {
                    report.laws_without_sections += 1;
                }
                if law.active_sections().next().is_none() {
                    report.laws_empty += 1;
                }
            }
            Err(e) => report.failures.push(e.to_string()),
        }
        std::ops::ControlFlow::Continue(())
    })?;
    report.seconds = started.elapsed().as_secs_f64();
    report.peak_memory_mib = peak_memory_mib();
    Ok(report)
}

/// The process's peak resident memory (VmHWM) in MiB, where the OS reports it.
pub fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

impl fmt::Display for LawStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} — {}", self.abbreviation, self.title)?;
        for stand in &self.stand {
            writeln!(f, "  {stand}")?;
        }
        writeln!(f, "  build date            {}", self.build_date)?;
        writeln!(
            f,
            "  sections              {} active, {} repealed",
            self.sections_active, self.sections_repealed
        )?;
        writeln!(f, "  subsections           {}", self.subsections)?;
        writeln!(f, "  sentences             {}", self.sentences)?;
        writeln!(f, "  list items            {}", self.list_items)?;
        writeln!(f,
            "  references            {} citations -> {} resolved, {} external, {} unresolved targets",
            self.references, self.references_resolved, self.references_external, self.references_unresolved
        )?;
        writeln!(
            f,
            "  structure             {} units, depth {}",
            self.structure_units, self.hierarchy_depth
        )?;
        writeln!(f, "  parse time            {:.1} ms", self.parse_ms)?;
        if let Some(mib) = self.peak_memory_mib {
            writeln!(f, "  peak memory           {mib:.1} MiB")?;
        }
        Ok(())
    }
}

impl fmt::Display for SectionView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} {} — {}", self.designation, self.law, self.title)?;
        writeln!(f, "  {}", self.path.join(" > "))?;
        writeln!(f, "  {}", self.url)?;
        if self.repealed {
            writeln!(f, "  (weggefallen)")?;
        }
        for sub in &self.subsections {
            if let Some(label) = &sub.label {
                writeln!(f, "({label})")?;
            }
            for (n, text) in &sub.sentences {
                writeln!(f, "  S{n} {}", text.replace('\n', "\n     "))?;
            }
        }
        if !self.outgoing.is_empty() {
            writeln!(f, "outgoing references:")?;
            for r in &self.outgoing {
                writeln!(f, "  {} -> {}", r.cited, r.targets.join(", "))?;
            }
        }
        if !self.incoming.is_empty() {
            writeln!(f, "incoming references ({}):", self.incoming.len())?;
            for r in &self.incoming {
                writeln!(f, "  {} ({})", r.cited, r.targets.join(", "))?;
            }
        }
        for note in &self.footnotes {
            writeln!(f, "note: {note}")?;
        }
        Ok(())
    }
}

impl fmt::Display for ScanReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "laws                  {}", self.laws)?;
        writeln!(f, "parsed                {}", self.parsed)?;
        writeln!(f, "failed                {}", self.failures.len())?;
        for failure in &self.failures {
            writeln!(f, "  {failure}")?;
        }
        writeln!(
            f,
            "without sections      {} (searched as head-norm text), {} with nothing to search",
            self.laws_without_sections, self.laws_empty
        )?;
        writeln!(
            f,
            "sections              {} active, {} repealed",
            self.sections_active, self.sections_repealed
        )?;
        writeln!(f, "sentences             {}", self.sentences)?;
        writeln!(f, "time                  {:.1} s", self.seconds)?;
        if let Some(mib) = self.peak_memory_mib {
            writeln!(f, "peak memory           {mib:.1} MiB")?;
        }
        Ok(())
    }
}
