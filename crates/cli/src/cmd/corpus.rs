//! `paragraf corpus`: parse official law XML and look inside it (statistics, one section, the whole federal archive).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use paragraf_corpus::load_law;
use paragraf_law::{Law, RefTarget};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where laws given by abbreviation are looked up.
#[derive(Args, Clone, Debug)]
pub struct CorpusDir {
    /// Folder holding law XML files named `<ABBREVIATION>.xml` (used when LAW is not a file path).
    #[arg(
        long,
        env = "PARAGRAF_CORPUS",
        default_value = "../shared/corpus",
        global = true
    )]
    pub corpus_dir: PathBuf,
}

#[derive(Subcommand)]
pub enum CorpusCommand {
    /// Counts of a law: sections (active/repealed), subsections, sentences, list items, references, depth, parse time.
    Stats {
        /// A law XML file, or an abbreviation (`BGB`) looked up in --corpus-dir.
        law: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// One section: path, title, subsections and sentences (S1..Sn), outgoing and incoming references.
    Show {
        /// A law XML file, or an abbreviation (`BGB`) looked up in --corpus-dir.
        law: String,
        /// The section as cited: `§ 535`, `535`, `Art. 1`.
        section: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Download a law from gesetze-im-internet.de (`<slug>/xml.zip`), check it parses, and store it as
    /// `<ABBREVIATION>.xml` in --corpus-dir.
    Fetch {
        /// The law's slug on gesetze-im-internet.de, e.g. `bgb`, `stgb`, `gg`, `inso`.
        slug: String,
        /// Where the site lives (for mirrors and tests).
        #[arg(long, default_value = paragraf_corpus::DEFAULT_BASE_URL)]
        base_url: String,
        /// Replace a stored file of another law with the same abbreviation (a newer version of the same law
        /// replaces it anyway).
        #[arg(long)]
        force: bool,
    },
    /// Benchmark: parse time and peak memory for one law (several runs) and, optionally, the whole federal archive.
    Bench {
        /// A law XML file or abbreviation.
        #[arg(default_value = "BGB")]
        law: String,
        /// Also parse this federal archive (`gii-federal-*.tar.xz`).
        #[arg(long)]
        archive: Option<PathBuf>,
        /// How many times to parse the law (each in a fresh process, so peak memory is per run).
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// Parses every law of a federal corpus archive (`gii-federal-*.tar.xz`) and reports failures and totals.
    Scan {
        /// The `.tar.xz` archive with `laws/<BJNR>/source.xml` entries.
        archive: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: CorpusCommand, dir: &CorpusDir) -> Result<()> {
    match command {
        CorpusCommand::Stats { law, json } => {
            let started = Instant::now();
            let law = load_law(&law, &dir.corpus_dir)?;
            let stats = LawStats::of(&law, started.elapsed().as_secs_f64() * 1e3);
            if json {
                println!("{}", serde_json::to_string_pretty(&stats)?);
            } else {
                stats.print();
            }
        }
        CorpusCommand::Show { law, section, json } => {
            let law = load_law(&law, &dir.corpus_dir)?;
            let Some(index) = law.find_section(&section) else {
                bail!(
                    "{} has no section {section:?}. Sections are cited like `§ 535` or `Art. 1`; `paragraf corpus stats {}` lists the counts",
                    law.abbreviation,
                    law.abbreviation
                );
            };
            let view = SectionView::of(&law, index);
            if json {
                println!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                view.print();
            }
        }
        CorpusCommand::Fetch {
            slug,
            base_url,
            force,
        } => {
            let slug = slug.trim().trim_matches('/').to_lowercase();
            let (xml, law) = paragraf_corpus::fetch_law(&base_url, &slug)?;
            // The file is named after the XML's own `jurabk`: data, so checked and made a plain file name.
            paragraf_format::names::check_law_abbreviation(&law.abbreviation).with_context(|| {
                format!("{base_url}/{slug}/xml.zip holds a law whose abbreviation (jurabk) cannot name a file; nothing was stored")
            })?;
            std::fs::create_dir_all(&dir.corpus_dir)
                .with_context(|| format!("cannot create {}", dir.corpus_dir.display()))?;
            let name = format!(
                "{}.xml",
                paragraf_format::names::file_stem(&law.abbreviation)
            );
            let path = paragraf_fs::join_name(&dir.corpus_dir, &name)?;
            // Two laws can share an abbreviation (and so a file name): never replace one with the other unasked.
            if !force && path.exists() {
                let stored = paragraf_corpus::parse_file(&path);
                let same = stored.as_ref().is_ok_and(|s| s.doknr == law.doknr);
                if !same {
                    let held = match &stored {
                        Ok(s) => format!("{} (document {})", s.abbreviation, s.doknr),
                        Err(e) => format!("a file that does not parse ({e})"),
                    };
                    crate::cmd::library::refuse!(
                        "{} already holds {held}; {slug} is {} (document {}), another law with the same file name. Nothing was stored: pass --force to replace it, or fetch into another --corpus-dir",
                        path.display(),
                        law.abbreviation,
                        law.doknr
                    );
                }
            }
            paragraf_fs::write_atomic(&path, &xml)?;
            println!(
                "{} ({}): {} active sections, stand {} -> {}",
                law.abbreviation,
                law.title,
                law.active_sections().count(),
                law.stand.last().map_or("unknown", |s| s.comment.as_str()),
                path.display()
            );
        }
        CorpusCommand::Bench { law, archive, runs } => bench(&law, archive.as_deref(), runs, dir)?,
        CorpusCommand::Scan { archive, json } => {
            let report = scan(&archive)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                report.print();
            }
            if !report.failures.is_empty() {
                // Bad data, as one law that does not parse is: exit 2.
                crate::cmd::library::refuse!(
                    "{} of {} laws failed to parse",
                    report.failures.len(),
                    report.laws
                );
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct LawStats {
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
    fn of(law: &Law, parse_ms: f64) -> Self {
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

    fn print(&self) {
        println!("{} — {}", self.abbreviation, self.title);
        for stand in &self.stand {
            println!("  {stand}");
        }
        println!("  build date            {}", self.build_date);
        println!(
            "  sections              {} active, {} repealed",
            self.sections_active, self.sections_repealed
        );
        println!("  subsections           {}", self.subsections);
        println!("  sentences             {}", self.sentences);
        println!("  list items            {}", self.list_items);
        println!(
            "  references            {} citations -> {} resolved, {} external, {} unresolved targets",
            self.references, self.references_resolved, self.references_external, self.references_unresolved
        );
        println!(
            "  structure             {} units, depth {}",
            self.structure_units, self.hierarchy_depth
        );
        println!("  parse time            {:.1} ms", self.parse_ms);
        if let Some(mib) = self.peak_memory_mib {
            println!("  peak memory           {mib:.1} MiB");
        }
    }
}

#[derive(Serialize)]
struct SectionView {
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

#[derive(Serialize)]
struct SubsectionView {
    label: Option<String>,
    /// `(sentence number S1.., text)`.
    sentences: Vec<(usize, String)>,
}

#[derive(Serialize)]
struct ReferenceView {
    /// The citation as printed (outgoing) or the citing section (incoming).
    cited: String,
    targets: Vec<String>,
}

impl SectionView {
    fn of(law: &Law, index: usize) -> Self {
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

    fn print(&self) {
        println!("{} {} — {}", self.designation, self.law, self.title);
        println!("  {}", self.path.join(" > "));
        println!("  {}", self.url);
        if self.repealed {
            println!("  (weggefallen)");
        }
        for sub in &self.subsections {
            if let Some(label) = &sub.label {
                println!("({label})");
            }
            for (n, text) in &sub.sentences {
                println!("  S{n} {}", text.replace('\n', "\n     "));
            }
        }
        if !self.outgoing.is_empty() {
            println!("outgoing references:");
            for r in &self.outgoing {
                println!("  {} -> {}", r.cited, r.targets.join(", "));
            }
        }
        if !self.incoming.is_empty() {
            println!("incoming references ({}):", self.incoming.len());
            for r in &self.incoming {
                println!("  {} ({})", r.cited, r.targets.join(", "));
            }
        }
        for note in &self.footnotes {
            println!("note: {note}");
        }
    }
}

#[derive(Serialize)]
pub struct ScanReport {
    pub laws: usize,
    pub parsed: usize,
    pub failures: Vec<String>,
    /// Laws without `enbez` sections, searched through their head-norm text (`Text`).
    pub laws_without_sections: usize,
    /// Laws with nothing to search at all (no sections, no head-norm text, no title).
    pub laws_empty: usize,
    pub sections_active: usize,
    pub sections_repealed: usize,
    pub sentences: usize,
    pub seconds: f64,
    pub peak_memory_mib: Option<f64>,
}

impl ScanReport {
    fn print(&self) {
        println!("laws                  {}", self.laws);
        println!("parsed                {}", self.parsed);
        println!("failed                {}", self.failures.len());
        for failure in &self.failures {
            println!("  {failure}");
        }
        println!(
            "without sections      {} (searched as head-norm text), {} with nothing to search",
            self.laws_without_sections, self.laws_empty
        );
        println!(
            "sections              {} active, {} repealed",
            self.sections_active, self.sections_repealed
        );
        println!("sentences             {}", self.sentences);
        println!("time                  {:.1} s", self.seconds);
        if let Some(mib) = self.peak_memory_mib {
            println!("peak memory           {mib:.1} MiB");
        }
    }
}

/// Parses every law of the archive, with a progress bar.
pub fn scan(archive: &Path) -> Result<ScanReport> {
    let started = Instant::now();
    let bar = indicatif::ProgressBar::new_spinner().with_message("parsing laws");
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
    paragraf_corpus::for_each_law(archive, |entry| {
        report.laws += 1;
        bar.inc(1);
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
                if law.sections.iter().all(paragraf_corpus::gii::is_head_text) {
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
    bar.finish_and_clear();
    report.seconds = started.elapsed().as_secs_f64();
    report.peak_memory_mib = peak_memory_mib();
    Ok(report)
}

/// The process's peak resident memory (VmHWM) in MiB, where the OS reports it.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Runs `paragraf corpus ... --json` in a child process and returns its JSON report.
fn child_report(args: &[&str], dir: &CorpusDir) -> Result<serde_json::Value> {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .args(args)
        .arg("--corpus-dir")
        .arg(&dir.corpus_dir)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        bail!("benchmark run `paragraf {}` failed", args.join(" "));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

fn bench(law: &str, archive: Option<&Path>, runs: usize, dir: &CorpusDir) -> Result<()> {
    let mut times = Vec::new();
    let mut peak: f64 = 0.0;
    for _ in 0..runs.max(1) {
        let report = child_report(&["corpus", "stats", law, "--json"], dir)?;
        times.push(report["parse_ms"].as_f64().unwrap_or(f64::NAN));
        peak = peak.max(report["peak_memory_mib"].as_f64().unwrap_or(0.0));
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{law}: parse {:.1} ms median, {:.1} ms min over {} runs; peak memory {:.1} MiB",
        times[times.len() / 2],
        times[0],
        times.len(),
        peak
    );
    if let Some(archive) = archive {
        let path = archive.to_string_lossy();
        let report = child_report(&["corpus", "scan", &path, "--json"], dir)?;
        let seconds = report["seconds"].as_f64().unwrap_or(f64::NAN);
        let laws = report["laws"].as_f64().unwrap_or(f64::NAN);
        println!(
            "{}: {laws} laws in {seconds:.1} s ({:.0} laws/s, decompression included); peak memory {:.1} MiB",
            archive.display(),
            laws / seconds,
            report["peak_memory_mib"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}
