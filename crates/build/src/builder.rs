//! `paragraf build`: one law bundle plus one strategy bundle per requested strategy, and the manifest.
//!
//! Embeddings are the expensive part, so every text goes through one [`Embedder`] that deduplicates within the
//! run and asks the persistent embedding cache first: a sentence that is a unit of several strategies (a
//! one-sentence Absatz is also a sentence and a proposition) is embedded once, and a rebuild embeds only new
//! text. Every file is written atomically under a content-hashed name, and the manifest is merged, never
//! truncated, so an interrupted build resumes and other laws' entries survive.

use crate::chunk::{self, Chunk};
use crate::generate::Generator;
use crate::kmeans::{cluster, KMeans};
use crate::lumber::{lumber, SimilarityDrop};
use crate::manifest::{BundleEntry, LawEntry, Manifest};
use crate::raptor::{self, RaptorSettings, Summarizer};
use paragraf_core::bundle::{LawBundle, Piece, RaptorTree, StrategyBundle, Unit, VectorStore};
use paragraf_core::search::hnsw::Builder;
use paragraf_core::strategy::{BaseUnit, Strategy};
use paragraf_core::vectors::Int8Vectors;
use paragraf_core::Law;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::tokenizer::Tokenizer;
use paragraf_embed::{EmbeddingBackend, TextKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The generator string written into every file.
pub const GENERATOR: &str = concat!("paragraf ", env!("CARGO_PKG_VERSION"));

/// Why a build failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Writing output failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
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
        }
    }
}

/// Deduplicating, cached access to the embedding backend, with progress and token accounting.
pub struct Embedder<'a> {
    backend: &'a dyn EmbeddingBackend,
    tokenizer: &'a Tokenizer,
    memo: HashMap<String, Vec<f32>>,
    cache: Option<EmbeddingCache>,
    /// Tokens sent to the encoder (cache misses only).
    pub tokens_embedded: usize,
    /// Seconds spent in the encoder.
    pub seconds_embedding: f64,
    progress: &'a indicatif::MultiProgress,
}

impl<'a> Embedder<'a> {
    /// Wraps a backend; `cache` (opened for the backend's `cache_id`) persists vectors across runs.
    pub fn new(
        backend: &'a dyn EmbeddingBackend,
        tokenizer: &'a Tokenizer,
        cache: Option<EmbeddingCache>,
        progress: &'a indicatif::MultiProgress,
    ) -> Self {
        Embedder {
            backend,
            tokenizer,
            memo: HashMap::new(),
            cache,
            tokens_embedded: 0,
            seconds_embedding: 0.0,
            progress,
        }
    }

    /// A line for the user: above the progress bars on a terminal, on stderr when the bars are hidden (logs, CI),
    /// so a long build leaves a trace either way.
    fn log(&self, line: String) {
        if self.progress.is_hidden() {
            eprintln!("{line}");
        } else {
            self.progress.println(line).ok();
        }
    }

    /// The model id.
    pub fn model_id(&self) -> &str {
        self.backend.model_id()
    }

    /// Token count of a text (without prefix and specials).
    pub fn tokens(&self, text: &str) -> usize {
        self.tokenizer.encode(text).len()
    }

    /// Passage vectors for `texts`, in order.
    pub fn embed(&mut self, label: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, BuildError> {
        let mut missing: Vec<&str> = Vec::new();
        for &t in texts {
            if self.memo.contains_key(t) || missing.contains(&t) {
                continue;
            }
            if let Some(v) = self
                .cache
                .as_ref()
                .and_then(|c| c.get(TextKind::Passage, t))
            {
                self.memo.insert(t.to_string(), v.to_vec());
            } else {
                missing.push(t);
            }
        }
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let tokens: Vec<usize> = missing.iter().map(|t| self.tokens(t)).collect();
            let total: usize = tokens.iter().sum();
            let bar = self.progress.add(indicatif::ProgressBar::new(total as u64));
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:24} {wide_bar} {pos}/{len} tokens {per_sec} eta {eta}",
                )
                .expect("valid template"),
            );
            bar.set_message(format!("embedding {label}"));
            self.log(format!(
                "embedding {label}: {} new texts, {total} tokens",
                missing.len()
            ));
            let started = Instant::now();
            // Batches of similar length waste less padding; sort by length, embed in chunks of ~8k tokens.
            let mut order: Vec<usize> = (0..missing.len()).collect();
            order.sort_by_key(|&i| tokens[i]);
            let mut batch: Vec<usize> = Vec::new();
            let mut batch_tokens = 0;
            let flush = |batch: &mut Vec<usize>, this: &mut Self| -> Result<(), BuildError> {
                if batch.is_empty() {
                    return Ok(());
                }
                let texts: Vec<&str> = batch.iter().map(|&i| missing[i]).collect();
                let vectors = this.backend.embed(&texts, TextKind::Passage)?;
                if let Some(cache) = this.cache.as_mut() {
                    cache.insert(TextKind::Passage, &texts, &vectors)?;
                }
                for (text, vector) in texts.iter().zip(vectors) {
                    this.memo.insert(text.to_string(), vector);
                }
                bar.inc(batch.iter().map(|&i| tokens[i] as u64).sum());
                batch.clear();
                Ok(())
            };
            for i in order {
                batch.push(i);
                batch_tokens += tokens[i];
                if batch_tokens >= 8192 {
                    flush(&mut batch, self)?;
                    batch_tokens = 0;
                }
            }
            flush(&mut batch, self)?;
            self.tokens_embedded += total;
            self.seconds_embedding += started.elapsed().as_secs_f64();
            bar.finish_and_clear();
        }
        Ok(texts.iter().map(|t| self.memo[*t].clone()).collect())
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
    std::fs::create_dir_all(&options.out).map_err(|source| BuildError::Write {
        path: options.out.display().to_string(),
        source,
    })?;
    let mut manifest = Manifest::load_or_new(&options.out)?;
    let law_bytes = LawBundle {
        generator: GENERATOR.into(),
        law: law.clone(),
    }
    .to_bytes();
    let law_file = write_hashed(
        &options.out,
        &format!("{}.law", law.abbreviation),
        &law_bytes,
    )?;
    let replaced = manifest.upsert_law(LawEntry::new(law, &law_file, &law_bytes));
    manifest.save(&options.out)?;
    remove_superseded(&options.out, replaced, &law_file);
    let mut report = BuildReport::default();
    for &strategy in strategies {
        let t0 = Instant::now();
        let bundle = build_strategy(law, strategy, embedder, generator, options)?;
        let bytes = bundle.to_bytes();
        let seconds = t0.elapsed().as_secs_f64();
        let file = write_hashed(
            &options.out,
            &format!("{}.{}", law.abbreviation, strategy.name()),
            &bytes,
        )?;
        let entry = BundleEntry::new(&bundle, strategy, &file, &bytes, seconds);
        let replaced = manifest.upsert_bundle(entry);
        manifest.save(&options.out)?;
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

/// Chunks, embeds and assembles one strategy.
pub fn build_strategy(
    law: &Law,
    strategy: Strategy,
    embedder: &mut Embedder,
    generator: &mut Generator,
    options: &BuildOptions,
) -> Result<StrategyBundle, BuildError> {
    let name = strategy.name();
    let mut params: Vec<(String, String)> = Vec::new();
    let mut raptor_tree = None;
    let (units, vectors): (Vec<Unit>, Vec<Vec<f32>>) = match strategy {
        Strategy::Section => embed_chunks(&name, chunk::sections(law), embedder)?,
        Strategy::Base(base) => embed_chunks(&name, base_units(law, base, generator)?, embedder)?,
        Strategy::Fixed { size, overlap } => {
            params.push(("window".into(), size.to_string()));
            params.push(("overlap".into(), overlap.to_string()));
            let chunks =
                chunk::fixed_windows(law, embedder.tokenizer, size as usize, overlap as usize);
            embed_chunks(&name, chunks, embedder)?
        }
        Strategy::Contextual(base) => {
            let units = base_units(law, base, generator)?;
            let chunks = generator.contextualize(law, units)?;
            embed_chunks(&name, chunks, embedder)?
        }
        Strategy::Cluster(base) => {
            let chunks = base_units(law, base, generator)?;
            let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
            let base_vectors = embedder.embed(base.name(), &texts)?;
            let settings = KMeans {
                k: options.clusters,
                seed: options.seed,
                ..KMeans::default()
            };
            params.push(("clusters".into(), settings.k.to_string()));
            params.push(("seed".into(), settings.seed.to_string()));
            let clustering = cluster(&base_vectors, settings);
            let units = clustering
                .members()
                .iter()
                .map(|members| {
                    let mut sections: Vec<u32> = members
                        .iter()
                        .flat_map(|&m| chunks[m as usize].sections.clone())
                        .collect();
                    sections.sort_unstable();
                    sections.dedup();
                    let pieces: Vec<Piece> = members
                        .iter()
                        .flat_map(|&m| chunks[m as usize].pieces.clone())
                        .collect();
                    Unit {
                        sections,
                        pieces,
                        text: None,
                    }
                })
                .collect();
            (units, clustering.centroids)
        }
        Strategy::Lumber(base) => {
            let chunks = base_units(law, base, generator)?;
            let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
            let base_vectors = embedder.embed(base.name(), &texts)?;
            let tokens: Vec<usize> = texts.iter().map(|t| embedder.tokens(t)).collect();
            params.push(("budget".into(), options.lumber_budget.to_string()));
            let lumber_chunks = match generator {
                Generator::Builtin => {
                    let mut predictor = SimilarityDrop::new(&base_vectors, options.lumber_quantile);
                    params.push(("quantile".into(), options.lumber_quantile.to_string()));
                    params.push(("threshold".into(), format!("{:.4}", predictor.threshold())));
                    lumber(&chunks, &tokens, options.lumber_budget, &mut predictor)
                }
                Generator::Llm(client) => {
                    let mut predictor = client.boundary_predictor(&chunks);
                    let result = lumber(&chunks, &tokens, options.lumber_budget, &mut predictor);
                    predictor.finish()?;
                    result
                }
            };
            embed_chunks(&name, lumber_chunks, embedder)?
        }
        Strategy::Raptor(base) => {
            let chunks = base_units(law, base, generator)?;
            let (units, leaf_vectors) = embed_chunks(&format!("{name} leaves"), chunks, embedder)?;
            let settings = RaptorSettings {
                branching: options.raptor_branching,
                seed: options.seed,
            };
            params.push(("branching".into(), settings.branching.to_string()));
            params.push(("seed".into(), settings.seed.to_string()));
            let tree = {
                let mut summarizer = TreeSummarizer {
                    law,
                    units: &units,
                    generator,
                    embedder,
                    error: None,
                };
                let tree = raptor::build(&leaf_vectors, settings, &mut summarizer);
                if let Some(e) = summarizer.error {
                    return Err(e);
                }
                tree
            };
            raptor_tree = Some(RaptorTree {
                nodes: tree.nodes,
                vectors: store(
                    &tree.vectors,
                    embedder_dim(&leaf_vectors),
                    options.precision,
                ),
                roots: tree.roots,
            });
            (units, leaf_vectors)
        }
    };
    let vectors = store(&vectors, embedder_dim(&vectors), options.precision);
    let hnsw = match &vectors {
        VectorStore::Int8(v) if raptor_tree.is_none() && v.len() >= options.hnsw_min_units => {
            let builder = Builder::default().seed(options.seed);
            params.push(("hnsw".into(), format!("{builder:?}")));
            Some(builder.build(v))
        }
        _ => None,
    };
    Ok(StrategyBundle {
        generator: GENERATOR.into(),
        strategy: name,
        producer: generator.producer(strategy),
        law: law.abbreviation.clone(),
        law_build_date: law.build_date.clone(),
        model: embedder.model_id().to_string(),
        params,
        vectors,
        units,
        raptor: raptor_tree,
        hnsw,
    })
}

fn embedder_dim(vectors: &[Vec<f32>]) -> usize {
    vectors.first().map_or(0, Vec::len)
}

fn base_units(
    law: &Law,
    base: BaseUnit,
    generator: &mut Generator,
) -> Result<Vec<Chunk>, BuildError> {
    Ok(match base {
        BaseUnit::Proposition => generator.propositions(law)?,
        other => chunk::base_units(law, other),
    })
}

fn embed_chunks(
    label: &str,
    chunks: Vec<Chunk>,
    embedder: &mut Embedder,
) -> Result<(Vec<Unit>, Vec<Vec<f32>>), BuildError> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
    let vectors = embedder.embed(label, &texts)?;
    Ok((chunks.iter().map(Chunk::to_unit).collect(), vectors))
}

fn store(vectors: &[Vec<f32>], dim: usize, precision: Precision) -> VectorStore {
    match precision {
        Precision::Int8 => VectorStore::Int8(
            Int8Vectors::from_f32_rows(dim as u32, vectors)
                .expect("the encoder returns finite vectors of its dimension"),
        ),
        Precision::F32 => VectorStore::F32 {
            dim: dim as u32,
            values: vectors.concat(),
        },
    }
}

/// RAPTOR summaries: extractive labels over centroid vectors (built-in), or generated summaries embedded.
struct TreeSummarizer<'a, 'e> {
    law: &'a Law,
    units: &'a [Unit],
    generator: &'a mut Generator,
    embedder: &'a mut Embedder<'e>,
    error: Option<BuildError>,
}

impl Summarizer for TreeSummarizer<'_, '_> {
    fn summarize(&mut self, leaves: &[u32], mean: Vec<f32>) -> (String, Vec<f32>) {
        let mut sections: Vec<u32> = leaves
            .iter()
            .flat_map(|&l| self.units[l as usize].sections.clone())
            .collect();
        sections.sort_unstable();
        sections.dedup();
        match self.generator {
            Generator::Builtin => (extractive_label(self.law, &sections), mean),
            Generator::Llm(client) => {
                let texts: Vec<String> = leaves
                    .iter()
                    .take(40)
                    .map(|&l| unit_text(self.law, &self.units[l as usize]))
                    .collect();
                let summary = client
                    .summary(&texts)
                    .map_err(BuildError::from)
                    .and_then(|s| {
                        let v = self.embedder.embed("raptor summaries", &[s.as_str()])?;
                        Ok((s, v.into_iter().next().expect("one vector")))
                    });
                match summary {
                    Ok(done) => done,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        (String::new(), mean)
                    }
                }
            }
        }
    }
}

/// The text a unit shows: its own text, or the law slices it covers.
pub fn unit_text(law: &Law, unit: &Unit) -> String {
    unit.text.clone().unwrap_or_else(|| {
        unit.pieces
            .iter()
            .map(|p| law.sections[p.section as usize].slice(p.span))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// `§§ 339, 340, 341: Verwirkung der Vertragsstrafe; Vertragsstrafe für Nichterfüllung; ...` (at most 5 titles).
fn extractive_label(law: &Law, sections: &[u32]) -> String {
    let designations: Vec<&str> = sections
        .iter()
        .map(|&s| law.sections[s as usize].designation.as_str())
        .collect();
    let titles: Vec<&str> = sections
        .iter()
        .map(|&s| law.sections[s as usize].title.as_str())
        .filter(|t| !t.is_empty())
        .take(5)
        .collect();
    format!("{}: {}", designations.join(", "), titles.join("; "))
}

/// Deletes the file a rebuilt bundle replaced, once the saved manifest no longer lists it.
fn remove_superseded(dir: &Path, replaced: Option<String>, current: &str) {
    if let Some(old) = replaced.filter(|old| old != current) {
        match std::fs::remove_file(dir.join(&old)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!("warning: could not remove the superseded bundle {old}: {e}"),
        }
    }
}

/// Writes `bytes` atomically as `<stem>.<hash16>.pgb` and returns the file name.
pub fn write_hashed(dir: &Path, stem: &str, bytes: &[u8]) -> Result<String, BuildError> {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name = format!("{stem}.{hex}.pgb");
    write_atomic(&dir.join(&name), bytes)?;
    Ok(name)
}

/// Writes a file via a temporary sibling and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), BuildError> {
    let err = |source| BuildError::Write {
        path: path.display().to_string(),
        source,
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}
