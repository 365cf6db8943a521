//! `paragraf build`: one law bundle plus one strategy bundle per requested strategy, and the manifest.
//!
//! This module is the build loop and its settings; the work is split by concern:
//! - `embedder`: every text goes through one deduplicating, cached [`Embedder`];
//! - `units`: one strategy from chunks to an assembled bundle ([`build_strategy`]);
//! - `files`: content-hashed bundle files written atomically ([`write_hashed`]), superseded ones removed.
//!
//! Each file is saved before the manifest names it, and the manifest is merged, never truncated, so an
//! interrupted build resumes and other laws' entries survive ([`BundleFolder`]).

mod embedder;
pub(crate) mod files;
mod units;

pub use embedder::Embedder;
pub use files::write_hashed;
pub use units::{build_strategy, unit_text};

use crate::expansion;
use crate::generate::Generator;
use crate::manifest::{self, bundle_entry, law_entry, GENERATOR};
use files::remove_superseded;
use paragraf_engine::bundle::{LawBundle, LAW_BUNDLE, STRATEGY_BUNDLE};
use paragraf_engine::expansion::TableParams;
use paragraf_engine::LawIndex;
use paragraf_format::frame::{FileKind, HEADER_LEN};
use paragraf_format::strategy::Strategy;
use paragraf_law::Law;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    Manifest(#[from] manifest::FolderError),
}

impl paragraf_format::fault::Blame for BuildError {
    /// A folder whose manifest or bundles are unusable is the input's fault; the disk, the encoder and the
    /// generator are not.
    fn fault(&self) -> paragraf_format::fault::Fault {
        match self {
            BuildError::Manifest(e) => e.fault(),
            BuildError::Fs(_) | BuildError::Embed(_) | BuildError::Generate(_) => {
                paragraf_format::fault::Fault::Other
            }
        }
    }
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
    /// Encoder settings that shape every vector (EmbeddingGemma's document title), recorded in every strategy
    /// bundle's params (none by default).
    pub encoder_params: Vec<(String, String)>,
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
            thesaurus: PathBuf::from(expansion::DEFAULT_THESAURUS),
            encoder_params: Vec::new(),
        }
    }
}

/// What one build produced.
#[derive(Debug, Default)]
pub struct BuildReport {
    /// `(strategy, units, bytes, seconds)` per strategy bundle.
    pub strategies: Vec<(String, usize, u64, f64)>,
    /// Tokens this build sent to the encoder.
    pub tokens_embedded: usize,
    /// Seconds this build spent in the encoder.
    pub seconds_embedding: f64,
    /// Whole build.
    pub seconds: f64,
}

/// The bundle folder a build writes into: its manifest held in memory and saved at most every
/// [`BundleFolder::save_every`] (a federal build adds thousands of entries, and rewriting a manifest of megabytes
/// after each would cost more than the laws), the thesaurus read once, and the files rebuilt bundles superseded,
/// deleted only once the saved manifest no longer lists them. A build killed between saves leaves bundle files
/// the manifest does not list yet; the next run rebuilds those laws (from the embedding cache) and removes them.
pub struct BundleFolder {
    options: BuildOptions,
    manifest: manifest::Manifest,
    /// `(old file, its replacement)`, to delete after the next save.
    superseded: Vec<(String, String)>,
    saved: Instant,
    /// Save the manifest at most this often ([`Duration::ZERO`], the default: after every file).
    pub save_every: Duration,
}

impl BundleFolder {
    /// The folder.
    pub fn out(&self) -> &Path {
        &self.options.out
    }

    /// Opens `options.out` (created when missing) with its manifest, and writes the folder's thesaurus file
    /// (listed from the next save; a folder of the older layout has its per-law tables deleted then); the second
    /// value holds warnings about the thesaurus to show once.
    pub fn open(options: BuildOptions) -> Result<(BundleFolder, Vec<String>), BuildError> {
        std::fs::create_dir_all(&options.out).map_err(|source| paragraf_fs::FsError::Io {
            action: "create the output folder",
            path: options.out.display().to_string(),
            source,
        })?;
        let mut manifest = manifest::load_or_new(&options.out)?;
        let (outcome, warnings) = expansion::prepare(
            &options.thesaurus,
            LawIndex::analyzer(),
            GENERATOR,
            TableParams::default(),
        );
        let entry = outcome.write(|b| write_hashed(&options.out, "thesaurus", b))?;
        let mut superseded: Vec<(String, String)> = manifest
            .laws
            .iter_mut()
            .filter_map(|l| l.old_expansion_table.take()?.file)
            .map(|old| (old, String::new()))
            .collect();
        let current = entry.built().map(|t| t.file.clone()).unwrap_or_default();
        if let Some(old) = manifest.expansions.replace(entry) {
            superseded.extend(
                old.built()
                    .filter(|t| t.file != current)
                    .map(|t| (t.file.clone(), current)),
            );
        }
        Ok((
            BundleFolder {
                options,
                manifest,
                superseded,
                saved: Instant::now(),
                save_every: Duration::ZERO,
            },
            warnings,
        ))
    }

    /// The manifest as built so far (saved or not).
    pub fn manifest(&self) -> &manifest::Manifest {
        &self.manifest
    }

    /// Whether the folder already holds `law` built from the XML with `source_sha256`, with a bundle of every
    /// strategy in `strategies` embedded by `model`, all files present and written in this build's format
    /// (each file's header, not the folder's: a build that was stopped after a format change has stamped the
    /// manifest with the new format while later laws still have files of the old): then an incremental
    /// build skips it.
    pub fn is_current(
        &self,
        law: &str,
        source_sha256: &str,
        strategies: &[Strategy],
        model: &str,
    ) -> bool {
        let current = |file: &str, kind: FileKind| {
            let mut header = [0u8; HEADER_LEN];
            std::fs::File::open(self.options.out.join(file))
                .and_then(|mut f| f.read_exact(&mut header))
                .is_ok()
                && kind
                    .read_header(&header)
                    .is_ok_and(|h| h.version == kind.version)
        };
        let Some(entry) = self.manifest.law(law) else {
            return false;
        };
        entry.source_sha256.as_deref() == Some(source_sha256)
            && current(&entry.file, LAW_BUNDLE)
            && strategies.iter().all(|s| {
                self.manifest.bundles.iter().any(|b| {
                    b.law == law
                        && b.strategy == s.name()
                        && b.model == model
                        && current(&b.file, STRATEGY_BUNDLE)
                })
            })
    }

    /// Saves the manifest now and deletes what it no longer lists.
    pub fn save(&mut self) -> Result<(), BuildError> {
        manifest::save(&mut self.manifest, &self.options.out)?;
        for (old, current) in self.superseded.drain(..) {
            remove_superseded(&self.options.out, Some(old), &current);
        }
        self.saved = Instant::now();
        Ok(())
    }

    /// Records that `replaced` (if any) gave way to `current`, and saves when it is time.
    fn changed(&mut self, replaced: Option<String>, current: &str) -> Result<(), BuildError> {
        if let Some(old) = replaced.filter(|old| old != current) {
            self.superseded.push((old, current.to_string()));
        }
        // The index across laws describes the laws as they were: it goes with the first change (and
        // `paragraf federal`, which `build --laws` runs at its end, writes a new one).
        if let Some(federal) = self.manifest.federal.take() {
            for file in federal.files() {
                self.superseded.push((file.file.clone(), String::new()));
            }
        }
        if self.saved.elapsed() >= self.save_every {
            self.save()?;
        }
        Ok(())
    }
}

/// Builds the law bundle and the given strategies' bundles of `law` into `folder`, updating its manifest;
/// `source_sha256` is the SHA-256 of the law's XML, recorded for incremental builds.
pub fn build(
    law: &Law,
    source_sha256: Option<&str>,
    strategies: &[Strategy],
    embedder: &mut Embedder,
    generator: &mut Generator,
    folder: &mut BundleFolder,
) -> Result<BuildReport, BuildError> {
    let started = Instant::now();
    let out = folder.options.out.clone();
    let law_bytes = LawBundle::new(GENERATOR, law.clone()).to_bytes();
    let stem = paragraf_format::names::file_stem(&law.abbreviation);
    let law_file = write_hashed(&out, &format!("{stem}.law"), &law_bytes)?;
    let mut entry = law_entry(law, &law_file, &law_bytes);
    entry.source_sha256 = source_sha256.map(str::to_string);
    let replaced = folder.manifest.upsert_law(entry);
    folder.changed(replaced, &law_file)?;
    let mut report = BuildReport::default();
    let (tokens_before, seconds_before) = (embedder.tokens_embedded, embedder.seconds_embedding);
    for &strategy in strategies {
        let t0 = Instant::now();
        let bundle = build_strategy(law, strategy, embedder, generator, &folder.options)?;
        let bytes = bundle.to_bytes();
        let seconds = t0.elapsed().as_secs_f64();
        let file = write_hashed(&out, &format!("{stem}.{}", strategy.name()), &bytes)?;
        let entry = bundle_entry(&bundle, strategy, &file, &bytes, seconds);
        let replaced = folder.manifest.upsert_bundle(entry);
        folder.changed(replaced, &file)?;
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
    report.tokens_embedded = embedder.tokens_embedded - tokens_before;
    report.seconds_embedding = embedder.seconds_embedding - seconds_before;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
