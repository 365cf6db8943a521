//! `paragraf bundles`: what an output folder holds, next to the paper's storage and build-time figures.

use anyhow::{bail, Result};
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
            paragraf_core::bundle::Producer::None => "none".to_string(),
            paragraf_core::bundle::Producer::Builtin { version } => format!("builtin v{version}"),
            paragraf_core::bundle::Producer::Llm { model, .. } => format!("llm {model}"),
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
    let seconds: f64 = manifest.bundles.iter().map(|b| b.build_seconds).sum();
    println!(
        "\n{} strategy bundles, {total} bytes, {seconds:.0} s of build time",
        manifest.bundles.len()
    );
    Ok(())
}
