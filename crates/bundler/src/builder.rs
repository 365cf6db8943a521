//! `paragraf build`: one law bundle plus one strategy bundle per requested strategy, and the manifest.
//!
//! This module is the build loop and its settings; the work is split by concern:
//! - `embedder`: every text goes through one deduplicating, cached [`Embedder`];
//! - `units`: one strategy from chunks to an assembled bundle ([`build_strategy`]);
//! - `files`: content-hashed bundle files written atomically ([`write_hashed`]), superseded ones removed.
//!
//! Each file is saved before the manifest names it, and the manifest is merged, never truncated, so an
//! interrupted build resumes and other laws' entries survive.

mod embedder;
pub(crate) mod files;
mod units;

pub use embedder::Embedder;
pub use files::write_hashed;
pub use units::{build_strategy, unit_text};

use crate::expansion;
use crate::generate::Generator;
use crate::manifest::{self, bundle_entry, law_entry};
use files::remove_superseded;
use paragraf_core::bundle::LawBundle;
use paragraf_core::engine::LawIndex;
use paragraf_core::expansion::TableParams;
use paragraf_core::strategy::Strategy;
use paragraf_core::Law;
use std::path::PathBuf;
use std::time::Instant;

/// The generator string written into every file.
pub const GENERATOR: &str = concat!("paragraf ", env!("CARGO_PKG_VERSION"));

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Creating the output folder or writing a file into it failed.
    #[error(transparent)]
    Fs(#[from] paragraf_fs::FsError),
    /// The embedding backend failed.
    #[error("embedding failed: {0}")]
    Embed(#[from] paragraf_embed::EmbedError),
    /// The generator (language model) failed.
    #[error("generator failed: {0}")]
    Generate(#[from] crate::generate::GenerateError),
    /// The manifest could not be read or written.
    #[error("{0}")]
    Manifest(#[from] crate::manifest::ManifestError),
}

/// How vectors are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// int8 with a per-vector scale (default).
    Int8,
    /// f32, to measure quantisation loss.
    F32,
}

/// Build settings with documented defaults.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Output folder for bundles and `manifest.json`.
    pub out: PathBuf,
    /// Vector precision (int8).
    pub precision: Precision,
    /// Clusters for `cluster-*` (1000, as the paper ends with about one thousand).
    pub clusters: usize,
    /// Token budget of a Lumber chunk (256).
    pub lumber_budget: usize,
    /// Quantile of consecutive-unit similarities below which the built-in Lumber predictor cuts (0.25).
    pub lumber_quantile: f64,
    /// Children per RAPTOR summary node (10).
    pub raptor_branching: usize,
    /// Seed for k-means, RAPTOR and HNSW (42).
    pub seed: u64,
    /// Strategies with at least this many units get an HNSW graph (10,000: below that exact search is fast).
    pub hnsw_min_units: usize,
    /// The thesaurus for query expansion ([`crate::expansion::DEFAULT_THESAURUS`]); missing or malformed, the
    /// build goes on without expansion and the manifest says why.
    pub thesaurus: PathBuf,
}

impl BuildOptions {
    /// Defaults for writing into `out`.
    pub fn new(out: PathBuf) -> Self {
        BuildOptions {
            out,
            precision: Precision::Int8,
            clusters: 1000,
            lumber_budget: 256,
            lumber_quantile: 0.25,
            raptor_branching: 10,
            seed: 42,
            hnsw_min_units: 10_000,
            thesaurus: PathBuf::from(crate::expansion::DEFAULT_THESAURUS),
        }
    }
}

/// What one build produced.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// `(strategy, units, bytes, seconds)` per strategy bundle.
    pub strategies: Vec<(String, usize, u64, f64)>,
    /// Tokens sent to the encoder.
    pub tokens_embedded: usize,
    /// Seconds in the encoder.
    pub seconds_embedding: f64,
    /// Whole build.
    pub seconds: f64,
}

/// Builds the law bundle and the given strategies' bundles into `options.out`, updating its manifest.
pub fn build(
    law: &Law,
    strategies: &[Strategy],
    embedder: &mut Embedder,
    generator: &mut Generator,
    options: &BuildOptions,
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    std::fs::create_dir_all(&options.out).map_err(|source| paragraf_fs::FsError::Io {
        action: "create the output folder",
        path: options.out.display().to_string(),
        source,
    })?;
    let mut manifest = manifest::load_or_new(&options.out)?;
    let law_bytes = LawBundle {
        generator: GENERATOR.into(),
        law: law.clone(),
    }
    .to_bytes();
    let stem = paragraf_core::names::file_stem(&law.abbreviation);
    let law_file = write_hashed(&options.out, &format!("{stem}.law"), &law_bytes)?;
    let mut entry = law_entry(law, &law_file, &law_bytes);
    let (outcome, warnings) = expansion::expansions(
        &LawIndex::new(law.clone()),
        &options.thesaurus,
        GENERATOR,
        TableParams::default(),
    );
    for warning in warnings {
        embedder.log(format!("warning: {warning}"));
    }
    let expansions = outcome.write(|b| write_hashed(&options.out, &format!("{stem}.exp"), b))?;
    let exp_file = expansions.file().map(str::to_string);
    entry.expansions = Some(expansions);
    let old_exp = manifest
        .law(&law.abbreviation)
        .and_then(|l| l.expansions.as_ref()?.file().map(str::to_string));
    let replaced = manifest.upsert_law(entry);
    manifest::save(&mut manifest, &options.out)?;
    remove_superseded(&options.out, replaced, &law_file);
    remove_superseded(&options.out, old_exp, exp_file.as_deref().unwrap_or(""));
    let mut report = BuildReport::default();
    for &strategy in strategies {
        let t0 = Instant::now();
        let bundle = build_strategy(law, strategy, embedder, generator, options)?;
        let bytes = bundle.to_bytes();
        let seconds = t0.elapsed().as_secs_f64();
        let file = write_hashed(
            &options.out,
            &format!(
                "{}.{}",
                paragraf_core::names::file_stem(&law.abbreviation),
                strategy.name()
            ),
            &bytes,
        )?;
        let entry = bundle_entry(&bundle, strategy, &file, &bytes, seconds);
        let replaced = manifest.upsert_bundle(entry);
        manifest::save(&mut manifest, &options.out)?;
        remove_superseded(&options.out, replaced, &file);
        embedder.log(format!(
            "built {}: {} units, {} bytes in {seconds:.1} s",
            strategy.name(),
            bundle.units.len(),
            bytes.len()
        ));
        report.strategies.push((
            strategy.name(),
            bundle.units.len(),
            bytes.len() as u64,
            seconds,
        ));
    }
    report.tokens_embedded = embedder.tokens_embedded;
    report.seconds_embedding = embedder.seconds_embedding;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
