//! `paragraf corpus`: parse official law XML and look inside it (statistics, one section, the whole federal archive).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use paragraf_corpus::inspect::{scan, LawStats, SectionView};
use paragraf_corpus::load_law;
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
                print!("{stats}");
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
                print!("{view}");
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
                    crate::cmd::refusal::refuse!(
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
            let bar = indicatif::ProgressBar::new_spinner().with_message("parsing laws");
            let report = scan(&archive, &mut || bar.inc(1))?;
            bar.finish_and_clear();
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{report}");
            }
            if !report.failures.is_empty() {
                // Bad data, as one law that does not parse is: exit 2.
                crate::cmd::refusal::refuse!(
                    "{} of {} laws failed to parse",
                    report.failures.len(),
                    report.laws
                );
            }
        }
    }
    Ok(())
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
