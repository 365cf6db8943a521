//! `paragraf bundles`: what an output folder holds, next to the paper's storage and build-time figures, and
//! whether every file is the one its manifest lists (size and SHA-256, as `paragraf search` and the app check
//! before they use a file).

use anyhow::{bail, Result};

use super::refusal::Refusal;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct BundlesArgs {
    /// Folder with manifest.json (`paragraf build --out`).
    #[arg(default_value = "out/bundles")]
    dir: PathBuf,
}

/// The paper's figures for the BGB (section 4): index size in MB and build time. Ranges are given for a family
/// where the paper reports only its span (the ratio is taken against its low end). RAPTOR's span runs from
/// subsection (68.5 MB) to proposition (144.1 MB), "because it stores both leaf and summary routing nodes"; its
/// sentence index is not stated, but holds every sentence leaf, so it is at least the flat sentence index (95.7).
fn paper(strategy: &str) -> (&'static str, &'static str) {
    match strategy {
        "section" => ("33.2", "51 s"),
        "subsection" => ("62.1", "2 m 57 s"),
        "sentence" => ("95.7", "4 m 57 s"),
        "proposition" => ("131.9", "6 m 30 s"),
        "fixed-16-4" => ("230.9", "10 m 25 s"),
        "fixed-256-64" => ("14.7", "44 s"),
        "contextual-subsection" => ("62.1", "38 m 8 s"),
        "contextual-sentence" => ("95.7", "42 m 20 s"),
        "contextual-proposition" => ("131.9", "51 m 34 s"),
        s if s.starts_with("fixed-") => ("–", "–"),
        s if s.starts_with("cluster-") => ("15.4–16.4", "5 m 39 s–11 m 6 s"),
        s if s.starts_with("lumber-") => ("37.7–52.4", "9 h 2 m–11 h 41 m"),
        "raptor-subsection" => ("68.5", "3 h 4 m–5 h 51 m"),
        "raptor-sentence" => ("≥95.7", "3 h 4 m–5 h 51 m"),
        "raptor-proposition" => ("144.1", "3 h 4 m–5 h 51 m"),
        _ => ("–", "–"),
    }
}

pub fn run(args: BundlesArgs) -> Result<()> {
    let manifest = paragraf_bundler::manifest::load_or_new(&args.dir)?;
    if manifest.laws.is_empty() {
        bail!(
            "{} holds no manifest.json; build bundles with `paragraf build --out {}`",
            args.dir.display(),
            args.dir.display()
        );
    }
    for law in &manifest.laws {
        println!(
            "{} — {} ({} active sections): law bundle {} bytes, {}",
            law.law, law.title, law.sections, law.bytes, law.file
        );
    }
    println!(
        "\n{:<24} {:>8} {:>11} {:>11} {:>8} {:>9} {:>19}  {:<10} file",
        "strategy", "units", "bytes", "paper MB", "x smaller", "build s", "paper build", "producer"
    );
    for b in &manifest.bundles {
        // the paper measured the BGB only
        let (paper_mb, paper_time) = if b.law == "BGB" {
            paper(&b.strategy)
        } else {
            ("–", "–")
        };
        let at_least = paper_mb.starts_with('≥');
        let smaller = paper_mb
            .trim_start_matches('≥')
            .split('–')
            .next()
            .and_then(|mb| mb.parse::<f64>().ok())
            .map_or("–".to_string(), |mb| {
                let ratio = mb * 1e6 / b.bytes as f64;
                format!("{}{ratio:.0}x", if at_least { "≥" } else { "" })
            });
        let producer = match &b.producer {
            paragraf_engine::bundle::Producer::None => "none".to_string(),
            paragraf_engine::bundle::Producer::Builtin { version } => format!("builtin v{version}"),
            paragraf_engine::bundle::Producer::Llm { model, .. } => format!("llm {model}"),
        };
        println!(
            "{:<24} {:>8} {:>11} {:>11} {:>8} {:>9.0} {:>19}  {:<10} {}",
            b.strategy,
            b.units,
            b.bytes,
            paper_mb,
            smaller,
            b.build_seconds,
            paper_time,
            producer,
            b.file
        );
    }
    // Manifest numbers are data: a hostile `bytes` must not overflow.
    let total = manifest
        .bundles
        .iter()
        .fold(0u64, |sum, b| sum.saturating_add(b.bytes));
    if manifest.bundles.is_empty() {
        println!("\nno strategy bundles: the laws are searched with BM25 only");
    } else {
        let seconds: f64 = manifest.bundles.iter().map(|b| b.build_seconds).sum();
        let count = match manifest.bundles.len() {
            1 => "1 strategy bundle".to_owned(),
            n => format!("{n} strategy bundles"),
        };
        println!("\n{count}, {total} bytes, {seconds:.0} s of build time");
    }
    verify(&args.dir, &manifest)
}

/// Reads every listed file and checks its size and SHA-256; a folder with a missing or changed file is refused
/// (exit 2) after all are checked, each problem named.
fn verify(dir: &std::path::Path, manifest: &paragraf_core::manifest::Manifest) -> Result<()> {
    let (listed, _) = manifest.listed();
    let bar = indicatif::ProgressBar::new(listed.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("checking {bar:40} {pos}/{len} files  ETA {eta}")
            .expect("valid template"),
    );
    if listed.len() < 100 {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut problems = Vec::new();
    let mut bytes = 0u64;
    for entry in &listed {
        match paragraf_bundler::manifest::read_listed(
            dir,
            entry.file(),
            entry.size(),
            entry.sha256(),
        ) {
            Ok(read) => bytes += read.len() as u64,
            Err(e) => problems.push(e.to_string()),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if problems.is_empty() {
        let files = match listed.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        println!(
            "checked {files}, {bytes} bytes: each as manifest.json lists it (size and SHA-256)"
        );
        return Ok(());
    }
    let shown = problems.len().min(20);
    let first = if shown < problems.len() {
        format!(" (the first {shown})")
    } else {
        String::new()
    };
    Err(Refusal(format!(
        "{} of {} files in {} are not as manifest.json lists them{first}:\n  {}\nMost likely the folder was copied in part or edited; rebuild it with `paragraf build`",
        problems.len(),
        listed.len(),
        dir.display(),
        problems[..shown].join("\n  "),
    ))
    .into())
}
