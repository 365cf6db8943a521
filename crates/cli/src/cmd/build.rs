//! `paragraf build`: law XML -> law bundle + strategy bundles + manifest.

use crate::cmd::corpus::{load_law, CorpusDir};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use paragraf_bundler::builder::{build, BuildOptions, Embedder, Precision};
use paragraf_bundler::generate::{Generator, LlmClient, LlmConfig};
use paragraf_core::strategy::parse_strategy_list;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::container::Container;
use paragraf_embed::e5::{self, LongTextPolicy};
use paragraf_embed::model::resolve_model_path;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct BuildArgs {
    /// The law: an XML file or an abbreviation looked up in --corpus-dir.
    #[arg(long, default_value = "BGB")]
    law: String,
    /// `all` or a comma-separated list of strategies (`section,subsection,fixed-64-16`).
    #[arg(long, default_value = "all")]
    strategies: String,
    /// Output folder for bundles and manifest.json.
    #[arg(long, default_value = "out/bundles")]
    out: PathBuf,
    #[command(flatten)]
    corpus: CorpusDir,
    /// The embedding model: `e5` (multilingual-e5-small, the default), `embeddinggemma` (768 dims) or
    /// `embeddinggemma@256` (also @512, @128; `paragraf model fetch embeddinggemma` gets it), or the path of an
    /// e5 model file or an EmbeddingGemma folder. Fixed-size windows are counted in e5 tokens for every model.
    #[arg(long, env = "PARAGRAF_MODEL", value_parser = ModelChoice::parse, default_value = "e5")]
    model: ModelChoice,
    /// Vector precision of the bundles.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Int8)]
    precision: PrecisionArg,
    /// Clusters for cluster-* strategies.
    #[arg(long, default_value_t = 1000)]
    clusters: usize,
    /// Token budget of a Lumber chunk.
    #[arg(long, default_value_t = 256)]
    lumber_budget: usize,
    /// Children per RAPTOR summary node.
    #[arg(long, default_value_t = 10)]
    raptor_branching: usize,
    /// Seed for k-means, RAPTOR and HNSW.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Strategies with at least this many units also get an HNSW graph for approximate search.
    #[arg(long, default_value_t = 10_000)]
    hnsw_min_units: usize,
    /// Generate propositions, contexts, Lumber boundaries and RAPTOR summaries with this OpenAI-compatible chat
    /// endpoint (base URL) instead of the built-in rules.
    #[arg(long, env = "PARAGRAF_LLM_URL")]
    llm_url: Option<String>,
    /// Model name for --llm-url.
    #[arg(long, env = "PARAGRAF_LLM_MODEL", default_value = "gpt-4o-mini")]
    llm_model: String,
    /// Environment variable that holds the endpoint's API key (none is sent when unset).
    #[arg(long)]
    llm_key_env: Option<String>,
    /// Folder of the embedding cache (default: $PARAGRAF_CACHE_DIR/embeddings, else ~/.cache/paragraf/embeddings); a rebuild embeds only new texts.
    #[arg(long, env = "PARAGRAF_EMBEDDING_CACHE")]
    embedding_cache: Option<PathBuf>,
    /// Do not read or write the embedding cache.
    #[arg(long)]
    no_cache: bool,
    /// Folder of the language-model response cache (default: $PARAGRAF_CACHE_DIR/llm, else ~/.cache/paragraf/llm).
    #[arg(long)]
    llm_cache: Option<PathBuf>,
    /// OpenThesaurus text file for query expansion (missing or malformed: the build goes on without expansion,
    /// and the manifest says why).
    #[arg(long, default_value = paragraf_bundler::expansion::DEFAULT_THESAURUS)]
    thesaurus: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum PrecisionArg {
    Int8,
    F32,
}

pub fn run(args: BuildArgs) -> Result<()> {
    let strategies = parse_strategy_list(&args.strategies)?;
    let started = std::time::SystemTime::now();
    for name in paragraf_fs::remove_leftovers(&args.out)? {
        eprintln!("removed {name}: a temporary file of an earlier build that was killed");
    }
    let law = load_law(&args.law, &args.corpus.corpus_dir)?;
    let encoder = args.model.load_full(LongTextPolicy::default())?;
    // The e5 tokenizer cuts fixed windows for every model, so a strategy's units do not depend on the model.
    let e5_path = match &args.model {
        ModelChoice::E5 { file } => resolve_model_path(file.as_deref())?,
        ModelChoice::Gemma { .. } => resolve_model_path(None)?,
    };
    let e5 = e5::load(&e5_path)?;
    eprintln!("embedding with {}", args.model);
    let mut generator = match &args.llm_url {
        None => Generator::Builtin,
        Some(url) => Generator::Llm(Box::new(LlmClient::new(LlmConfig {
            base_url: url.clone(),
            model: args.llm_model.clone(),
            api_key_env: args.llm_key_env.clone(),
            cache_dir: args
                .llm_cache
                .clone()
                .unwrap_or_else(|| paragraf_embed::model::cache_root().join("llm")),
            retries: 4,
        })?)),
    };
    let options = BuildOptions {
        precision: match args.precision {
            PrecisionArg::Int8 => Precision::Int8,
            PrecisionArg::F32 => Precision::F32,
        },
        clusters: args.clusters,
        lumber_budget: args.lumber_budget,
        raptor_branching: args.raptor_branching,
        seed: args.seed,
        hnsw_min_units: args.hnsw_min_units,
        thesaurus: args.thesaurus.clone(),
        ..BuildOptions::new(args.out.clone())
    };
    let progress = indicatif::MultiProgress::new();
    let cache = if args.no_cache {
        None
    } else {
        let root = args
            .embedding_cache
            .clone()
            .unwrap_or_else(|| paragraf_embed::model::cache_root().join("embeddings"));
        Some(EmbeddingCache::open(
            &root,
            &encoder.cache_id(),
            encoder.dim(),
        )?)
    };
    let mut embedder = Embedder::new(
        encoder.as_ref(),
        args.model.clone(),
        e5.tokenizer(),
        cache,
        &progress,
    );
    let report = build(&law, &strategies, &mut embedder, &mut generator, &options)
        .with_context(|| format!("building {} into {}", law.abbreviation, args.out.display()))?;
    // The browser's query encoder (e5 bundles only; a Gemma build removes a listed one).
    let thesaurus = paragraf_bundler::expansion::read_thesaurus(&args.thesaurus).ok();
    let written = paragraf_bundler::browser_model::write(
        &args.out,
        || e5::weights(&Container::open(&e5_path)?),
        thesaurus.as_ref(),
    )
    .with_context(|| {
        format!(
            "writing the browser's query encoder into {}",
            args.out.display()
        )
    })?;
    if let Some(entry) = written {
        eprintln!(
            "browser query encoder {}: {} bytes, {} of {} word rows kept",
            entry.file, entry.bytes, entry.rows, entry.pieces
        );
    }
    for name in remove_orphans(&args.out, started)? {
        eprintln!("removed {name}: a bundle manifest.json does not list, left by an earlier build that was killed");
    }
    println!(
        "{:<24} {:>8} {:>12} {:>10}",
        "strategy", "units", "bytes", "seconds"
    );
    for (name, units, bytes, seconds) in &report.strategies {
        println!("{name:<24} {units:>8} {bytes:>12} {seconds:>10.1}");
    }
    println!(
        "embedded {} tokens in {:.1} s ({:.0} tokens/s); total {:.1} s; manifest: {}",
        report.tokens_embedded,
        report.seconds_embedding,
        report.tokens_embedded as f64 / report.seconds_embedding.max(1e-9),
        report.seconds,
        args.out.join("manifest.json").display()
    );
    Ok(())
}

/// Deletes the bundles (`*.pgb`) in `out` that its manifest does not list and that are older than `started`:
/// a build killed between writing a bundle and listing it leaves such a file, and nothing else would ever
/// remove it. Newer files may belong to a build running alongside and are kept. Returns the names removed.
fn remove_orphans(out: &Path, started: std::time::SystemTime) -> Result<Vec<String>> {
    let manifest_path = out.join(paragraf_core::manifest::MANIFEST);
    let bytes = std::fs::read(&manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let manifest = paragraf_core::manifest::Manifest::parse(&bytes)
        .with_context(|| format!("{}", manifest_path.display()))?;
    let listed: std::collections::HashSet<&str> = manifest.files().collect();
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(out).with_context(|| format!("cannot list {}", out.display()))? {
        let entry = entry.with_context(|| format!("cannot list {}", out.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let older = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified < started);
        if name.ends_with(".pgb")
            && !name.starts_with('.')
            && !listed.contains(name.as_str())
            && older
        {
            std::fs::remove_file(entry.path()).with_context(|| {
                format!("cannot remove the orphan bundle {}", entry.path().display())
            })?;
            removed.push(name);
        }
    }
    removed.sort();
    Ok(removed)
}
