//! `paragraf federal`: writes the index across all laws of a bundle folder for the browser (see
//! `paragraf_bundler::federal`); `paragraf build --laws` runs it after its laws.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use paragraf_core::federal::files::SHARD_BYTES;

#[derive(Args)]
pub struct FederalArgs {
    /// Folder with manifest.json (`paragraf build --laws ... --out`).
    #[arg(long, default_value = super::library::DEFAULT_BUNDLES)]
    bundles: PathBuf,
    /// Postings per shard, in bytes: a question fetches the shards of its terms (smaller: less per question,
    /// more files).
    #[arg(long, default_value_t = SHARD_BYTES as u32, value_parser = clap::value_parser!(u32).range(1024..=(64 << 20)))]
    shard_bytes: u32,
}

pub fn run(args: FederalArgs) -> Result<()> {
    write(&args.bundles, args.shard_bytes as usize)
}

/// Writes the index of `dir` and prints what it holds.
pub fn write(dir: &Path, shard_bytes: usize) -> Result<()> {
    let mut reading = Reading::default();
    let summary =
        paragraf_bundler::federal::write(dir, shard_bytes, |done, total| reading.show(done, total))
            .with_context(|| format!("writing the index across the laws of {}", dir.display()))?;
    print_summary(&summary);
    Ok(())
}

/// Progress while the index reads the folder's laws: a line per tenth (reading 6,877 laws takes minutes).
#[derive(Default)]
pub struct Reading {
    shown: usize,
}

impl Reading {
    /// `done` of `total` laws read.
    pub fn show(&mut self, done: usize, total: usize) {
        if done * 10 / total > self.shown || done == total {
            self.shown = done * 10 / total;
            eprintln!("federal index: read {done}/{total} laws");
        }
    }
}

/// What a written index holds, on one line.
pub fn print_summary(summary: &paragraf_bundler::federal::FederalSummary) {
    let entry = &summary.entry;
    let parts: Vec<String> = summary
        .parts
        .iter()
        .map(|(name, bytes)| format!("{name} {bytes}"))
        .collect();
    let postings: u64 = entry.shards.iter().map(|s| s.bytes).sum();
    let topics = entry.topics.as_ref().map_or(0, |t| t.bytes);
    let cited_by: u64 = entry.cited_by.iter().map(|c| c.file.bytes).sum();
    let vectors = entry.vectors.as_ref().map_or_else(
        || "none (lexical only)".to_string(),
        |v| format!("{} ({} bytes)", v.model, v.file.bytes),
    );
    println!(
        "federal index: {} laws, {} sections, {} terms, vectors {vectors}; head {} ({} bytes: {}), {} posting shards ({} bytes), law finder topics {} bytes, {} sections cited by other laws ({} shards, {} bytes); read {:.1} s, indexed and written {:.1} s",
        entry.laws,
        entry.sections,
        summary.terms,
        entry.head.file,
        entry.head.bytes,
        parts.join(", "),
        entry.shards.len(),
        postings,
        topics,
        summary.cited_sections,
        entry.cited_by.len(),
        cited_by,
        summary.seconds_reading,
        summary.seconds_indexing
    );
}
