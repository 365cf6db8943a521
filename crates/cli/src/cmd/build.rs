//! `paragraf build`: law XML -> law bundle + strategy bundles + manifest; one law (`--law`) or many from the
//! federal archive or a folder (`--laws`), incrementally. The arguments and the rendering; the build itself is
//! `paragraf_bundler::pipeline`'s.

use crate::cmd::corpus::CorpusDir;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use paragraf_bundler::builder::{BuildOptions, BuildReport, BundleFolder, Embedder, Precision};
use paragraf_bundler::generate::{Generator, LlmClient, LlmConfig};
use paragraf_bundler::pipeline::{self, Event, Finished, LawList, Laws, Plan, Tally};
use paragraf_corpus::load_law;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::choice::resolve_model_path;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::container::Container;
use paragraf_embed::e5::{self, LongTextPolicy};
use paragraf_embed::farm::FarmBackend;
use paragraf_embed::gemma::DocumentTitle;
use paragraf_embed::http::HttpConfig;
use paragraf_embed::EmbeddingBackend;
use paragraf_format::strategy::parse_strategy_list;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct BuildArgs {
    /// The law: an XML file or an abbreviation looked up in --corpus-dir.
    #[arg(long, default_value = "BGB", conflicts_with = "laws")]
    law: String,
    /// Build many laws into one folder and one manifest: `all` (every law of --from), a comma-separated list of
    /// abbreviations (`StVO,KSchG,EStG`) or `@FILE` (one abbreviation per line, `#` comments). Incremental: a law
    /// whose XML is unchanged and that has every requested bundle is not rebuilt, so a killed build resumes. A law
    /// that fails to parse is reported and skipped; the others build.
    #[arg(long)]
    laws: Option<String>,
    /// Where --laws come from: the federal archive (`gii-federal-*.tar.xz`) or a folder of law XML files.
    #[arg(
        long,
        env = "PARAGRAF_ARCHIVE",
        default_value = "../shared/corpus/gii-federal-2026-04.tar.xz"
    )]
    from: PathBuf,
    /// With --laws: rebuild every law, also unchanged ones.
    #[arg(long, requires = "laws")]
    rebuild: bool,
    /// `all`, a comma-separated list of strategies (`section,subsection,fixed-64-16`) or `none`: law bundles only,
    /// searched with BM25 (nothing is embedded; the quick way to all federal law).
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
    /// EmbeddingGemma's document prompt title: `none` (the default), or `first-line`: a unit's first line, which
    /// for `section` units is the section's heading (an experiment; other strategies are refused with it).
    #[arg(long, value_enum, default_value_t = TitleArg::None)]
    document_title: TitleArg,
    /// Embed through these OpenAI-compatible endpoints (`POST <URL>/v1/embeddings`; repeat the option or give a
    /// comma-separated list), e.g. Text Embeddings Inference instances serving multilingual-e5-small. Each is first
    /// checked against the local encoder on probe passages and refused when its vectors differ; batches go to
    /// whichever endpoint is free, and a failing endpoint's batches to the others. e5 only.
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    embed_endpoint: Vec<String>,
    /// The model name sent to --embed-endpoint servers.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "intfloat/multilingual-e5-small"
    )]
    embed_endpoint_model: String,
    /// Vector precision of the bundles.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Int8)]
    precision: PrecisionArg,
    /// After the build, learn from these labelled questions (GerLayQA's format) as `paragraf learn` does, for
    /// --learn-law. What is learned inherits the questions' licence (GerLayQA: non-commercial research only).
    #[arg(long, value_name = "QUESTIONS")]
    learn_from: Option<PathBuf>,
    /// The law the --learn-from questions are about (default: the law of --law; with --laws the BGB, GerLayQA's).
    #[arg(long, requires = "learn_from")]
    learn_law: Option<String>,
    /// With --laws and --learn-from: questions across laws for the learned signals' routing weights (`paragraf
    /// learn --across`, e.g. tests/data/lay-questions-federal-tune.json).
    #[arg(long, requires = "learn_from", value_name = "QUESTIONS")]
    learn_across: Option<PathBuf>,
    /// With --learn-from: questions learning must not hurt (`paragraf learn --guard`, e.g.
    /// tests/data/lay-questions-bgb.json).
    #[arg(long, requires = "learn_from", value_name = "QUESTIONS")]
    learn_guard: Option<PathBuf>,
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TitleArg {
    None,
    FirstLine,
}

#[derive(Clone, Copy, ValueEnum)]
enum PrecisionArg {
    Int8,
    F32,
}

pub fn run(args: BuildArgs) -> Result<()> {
    let started = std::time::SystemTime::now();
    let strategies = parse_strategy_list(&args.strategies)?;
    let laws = match args.laws.as_deref() {
        None => Laws::One(load_law(&args.law, &args.corpus.corpus_dir)?),
        Some(spec) => {
            paragraf_corpus::source::check(&args.from)?;
            Laws::Many {
                source: &args.from,
                wanted: law_list(spec)?,
                rebuild: args.rebuild,
            }
        }
    };
    let built_law = match &laws {
        Laws::One(law) => Some(law.abbreviation.clone()),
        Laws::Many { .. } => None,
    };
    let title = match args.document_title {
        TitleArg::None => DocumentTitle::None,
        TitleArg::FirstLine => {
            if let Some(other) = strategies.iter().find(|s| s.name() != "section") {
                bail!(
                    "--document-title first-line takes a unit's first line as its title, which only section units begin with (their heading); {} units do not: build it separately without the option",
                    other.name()
                );
            }
            DocumentTitle::FirstLine
        }
    };
    let encoder = args.model.load_full(LongTextPolicy::default(), title)?;
    let encoder = farm(&args, encoder)?;
    // The e5 tokenizer cuts fixed windows for every model, so a strategy's units do not depend on the model.
    let e5_path = match &args.model {
        ModelChoice::E5 { file } => resolve_model_path(file.as_deref())?,
        ModelChoice::Gemma { .. } => resolve_model_path(None)?,
    };
    let e5 = e5::load(&e5_path)?;
    if strategies.is_empty() {
        eprintln!("law bundles only (--strategies none): searched with BM25, nothing embedded");
    } else {
        eprintln!("embedding with {}", args.model);
    }
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
        encoder_params: match title {
            DocumentTitle::None => Vec::new(),
            DocumentTitle::FirstLine => vec![("document_title".into(), "first-line".into())],
        },
        ..BuildOptions::new(args.out.clone())
    };
    let (mut folder, warnings) =
        BundleFolder::open(options).with_context(|| format!("opening {}", args.out.display()))?;
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
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
    let embedder = Embedder::new(
        encoder.as_ref(),
        args.model.clone(),
        e5.tokenizer(),
        cache,
        &progress,
    );
    let thesaurus = paragraf_bundler::expansion::read_thesaurus(&args.thesaurus).ok();
    let plan = Plan {
        laws,
        strategies: &strategies,
        model: args.model.model_id(),
        thesaurus: thesaurus.as_ref(),
        e5_weights: Box::new(|| e5::weights(&Container::open(&e5_path)?)),
        shard_bytes: paragraf_core::federal::files::SHARD_BYTES,
        started,
    };
    let mut shown = Shown::new(&progress, &args.from);
    let finished = pipeline::run(plan, embedder, &mut generator, &mut folder, |event| {
        shown.event(event)
    })?;
    drop(shown);
    let problem = problem(&finished, &args.from);
    if let Some(entry) = &finished.encoder {
        eprintln!(
            "browser query encoder {}: {} bytes, {} of {} word rows kept",
            entry.file, entry.bytes, entry.rows, entry.pieces
        );
    }
    if let Some(summary) = &finished.federal {
        super::federal::print_summary(summary);
    }
    if problem.is_none() {
        if let Some(questions) = &args.learn_from {
            let law = match (&args.learn_law, built_law) {
                (Some(law), _) => law.clone(),
                (None, Some(law)) => law,
                (None, None) => "BGB".to_string(),
            };
            eprintln!("learning from {} for {law}", questions.display());
            super::learn::run(super::learn::LearnArgs::after_build(
                questions.clone(),
                args.out.clone(),
                law,
                args.learn_across.clone(),
                args.learn_guard.clone(),
                args.model.clone(),
                args.embedding_cache.clone(),
            ))
            .context("learning after the build (--learn-from)")?;
        }
    }
    let report = &finished.tally.report;
    println!(
        "embedded {} tokens in {:.1} s ({:.0} tokens/s); total {:.1} s; manifest: {}",
        report.tokens_embedded,
        report.seconds_embedding,
        report.tokens_embedded as f64 / report.seconds_embedding.max(1e-9),
        report.seconds,
        args.out.join("manifest.json").display()
    );
    problem.map_or(Ok(()), Err)
}

/// The build's progress on the terminal: the strategies of one law, a bar over many (a line every 30 s without
/// a terminal), the index across laws by tenths, what was cleaned up.
struct Shown<'a> {
    progress: &'a indicatif::MultiProgress,
    source: &'a Path,
    bar: Option<indicatif::ProgressBar>,
    last_line: std::time::Instant,
    reading: super::federal::Reading,
}

impl<'a> Shown<'a> {
    fn new(progress: &'a indicatif::MultiProgress, source: &'a Path) -> Self {
        Shown {
            progress,
            source,
            bar: None,
            last_line: std::time::Instant::now(),
            reading: super::federal::Reading::default(),
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::LeftoverRemoved(name) => {
                eprintln!("removed {name}: a temporary file of an earlier build that was killed")
            }
            Event::LawBuilt(report) => print_strategies(report),
            Event::LawsCounted(total) => {
                let bar = self.progress.add(indicatif::ProgressBar::new(total));
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "laws {wide_bar} {pos}/{len} {msg} eta {eta}",
                    )
                    .expect("valid template"),
                );
                self.bar = Some(bar);
            }
            Event::LawsProgress(tally) => {
                let Some(bar) = &self.bar else { return };
                bar.set_position(tally.looked_at);
                let msg = format!(
                    "· built {}, unchanged {}, skipped {} · {} tokens embedded",
                    tally.built,
                    tally.unchanged,
                    tally.skipped.len(),
                    tally.report.tokens_embedded
                );
                // Without a terminal (logs, CI) the bar is hidden: a line every 30 s instead.
                if bar.is_hidden() && self.last_line.elapsed().as_secs() >= 30 {
                    eprintln!("laws {}/{} {msg}", tally.looked_at, bar.length().unwrap_or(0));
                    self.last_line = std::time::Instant::now();
                }
                bar.set_message(msg);
            }
            Event::LawsDone { tally, missing: _ } => {
                self.done();
                print_laws(tally, self.source);
            }
            Event::FederalReading { done, total } => {
                self.done();
                self.reading.show(done, total);
            }
            Event::OrphanRemoved(name) => eprintln!(
                "removed {name}: a bundle manifest.json does not list, left by an earlier build that was killed"
            ),
        }
    }

    fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Shown<'_> {
    /// The bar is cleared also when the build stops with an error (which is printed after it).
    fn drop(&mut self) {
        self.done();
    }
}

/// How the laws of a many-law build went (also when a step after them fails).
fn print_laws(tally: &Tally, source: &Path) {
    println!(
        "laws: {} built, {} unchanged, {} skipped in {:.1} s from {}",
        tally.built,
        tally.unchanged,
        tally.skipped.len(),
        tally.report.seconds,
        source.display()
    );
    for why in &tally.skipped {
        eprintln!("skipped: {why}");
    }
}

/// Missing or skipped laws of a many-law build are the input's fault (exit 2, like a bad law alone), though the
/// others were built.
fn problem(finished: &Finished, source: &Path) -> Option<anyhow::Error> {
    let tally = &finished.tally;
    let refusal = |message: String| Some(anyhow::Error::new(super::refusal::Refusal(message)));
    if !finished.missing.is_empty() {
        refusal(format!(
            "not in {}: {}; the other laws were built",
            source.display(),
            finished.missing.join(", ")
        ))
    } else if !tally.skipped.is_empty() {
        refusal(format!(
            "{} laws were skipped (listed above); the other {} are in the manifest",
            tally.skipped.len(),
            tally.built + tally.unchanged
        ))
    } else {
        None
    }
}

/// The local encoder, or the endpoints of `--embed-endpoint` checked against it.
fn farm(args: &BuildArgs, local: Box<dyn EmbeddingBackend>) -> Result<Box<dyn EmbeddingBackend>> {
    if args.embed_endpoint.is_empty() {
        return Ok(local);
    }
    if !matches!(args.model, ModelChoice::E5 { .. }) {
        bail!(
            "--embed-endpoint builds e5 bundles only (EmbeddingGemma's document prompt is not sent to servers); drop --embed-endpoint to build {} locally",
            args.model
        );
    }
    let configs = args
        .embed_endpoint
        .iter()
        .map(|url| {
            let mut config = HttpConfig::new(url, &args.embed_endpoint_model);
            config.e5_prefixes = true;
            config
        })
        .collect();
    let farm = FarmBackend::connect(configs, local.as_ref())?;
    eprintln!(
        "embedding through {} endpoints ({}), each checked against the local encoder on {} probe passages",
        farm.endpoints(),
        args.embed_endpoint.join(", "),
        paragraf_embed::farm::PROBES.len()
    );
    Ok(Box::new(farm))
}

fn print_strategies(report: &BuildReport) {
    if report.strategies.is_empty() {
        return;
    }
    println!(
        "{:<24} {:>8} {:>12} {:>10}",
        "strategy", "units", "bytes", "seconds"
    );
    for (name, units, bytes, seconds) in &report.strategies {
        println!("{name:<24} {units:>8} {bytes:>12} {seconds:>10.1}");
    }
}

/// Longest `--laws @FILE` read (6,877 abbreviations take about 70 KB).
const MAX_LAW_LIST_BYTES: u64 = 1 << 20;

/// The laws `--laws` names: `all`, a comma-separated list or `@FILE` (one abbreviation per line, `#` comments).
fn law_list(spec: &str) -> Result<LawList> {
    let mut names: Vec<String> = if spec == "all" {
        return Ok(LawList::All);
    } else if let Some(file) = spec.strip_prefix('@') {
        use std::io::Read;
        let mut text = String::new();
        paragraf_fs::open_regular(Path::new(file))
            .and_then(|f| f.take(MAX_LAW_LIST_BYTES + 1).read_to_string(&mut text))
            .with_context(|| format!("cannot read the law list {file}"))?;
        if text.len() as u64 > MAX_LAW_LIST_BYTES {
            bail!("the law list {file} has more than {MAX_LAW_LIST_BYTES} bytes: one abbreviation per line is far less");
        }
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    } else {
        spec.split(',').map(|n| n.trim().to_string()).collect()
    };
    for name in &names {
        paragraf_format::names::check_law_abbreviation(name)
            .with_context(|| format!("--laws {spec}"))?;
    }
    if names.is_empty() {
        bail!("--laws {spec} names no law: give `all`, a list such as `StVO,KSchG` or @FILE");
    }
    // A law named twice is built once (and the build knows when every named law is in).
    let mut unique = std::collections::HashSet::new();
    names.retain(|name| unique.insert(name.clone()));
    Ok(LawList::Named(names))
}
