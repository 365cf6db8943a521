//! `paragraf build`: law XML -> law bundle + strategy bundles + manifest.

use crate::cmd::corpus::{load_law, CorpusDir};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use paragraf_build::builder::{build, BuildOptions, Embedder, Precision};
use paragraf_build::generate::{Generator, LlmClient, LlmConfig};
use paragraf_core::strategy::parse_strategy_list;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::e5::E5Encoder;
use paragraf_embed::model::resolve_model_path;
use paragraf_embed::EmbeddingBackend;
use std::path::PathBuf;

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
    /// The e5 model file (default: PARAGRAF_MODEL or the cache; `paragraf model fetch` gets it).
    #[arg(long)]
    model: Option<PathBuf>,
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
    /// Folder of the embedding cache (default: <cache>/embeddings); a rebuild embeds only new texts.
    #[arg(long, env = "PARAGRAF_EMBEDDING_CACHE")]
    embedding_cache: Option<PathBuf>,
    /// Do not read or write the embedding cache.
    #[arg(long)]
    no_cache: bool,
    /// Folder of the language-model response cache (default: <cache>/llm).
    #[arg(long)]
    llm_cache: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum PrecisionArg {
    Int8,
    F32,
}

pub fn run(args: BuildArgs) -> Result<()> {
    let strategies = parse_strategy_list(&args.strategies)?;
    let law = load_law(&args.law, &args.corpus.corpus_dir)?;
    let model_path = resolve_model_path(args.model.as_deref())?;
    let encoder = E5Encoder::load(&model_path)?;
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
    let mut embedder = Embedder::new(&encoder, encoder.tokenizer(), cache, &progress);
    let report = build(&law, &strategies, &mut embedder, &mut generator, &options)
        .with_context(|| format!("building {} into {}", law.abbreviation, args.out.display()))?;
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
