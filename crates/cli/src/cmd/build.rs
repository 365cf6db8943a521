//! `paragraf build`: law XML -> law bundle + strategy bundles + manifest; one law (`--law`) or many from the
//! federal archive or a folder (`--laws`), incrementally.

use crate::cmd::corpus::{load_law, CorpusDir};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use paragraf_bundler::builder::{
    build, BuildOptions, BuildReport, BundleFolder, Embedder, Precision,
};
use paragraf_bundler::generate::{Generator, LlmClient, LlmConfig};
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::container::Container;
use paragraf_embed::e5::{self, LongTextPolicy};
use paragraf_embed::farm::FarmBackend;
use paragraf_embed::gemma::DocumentTitle;
use paragraf_embed::http::HttpConfig;
use paragraf_embed::model::resolve_model_path;
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
    let strategies = parse_strategy_list(&args.strategies)?;
    let wanted = args.laws.as_deref().map(LawList::parse).transpose()?;
    if wanted.is_some() {
        paragraf_corpus::source::check(&args.from)?;
    }
    let started = std::time::SystemTime::now();
    for name in paragraf_fs::remove_leftovers(&args.out)? {
        eprintln!("removed {name}: a temporary file of an earlier build that was killed");
    }
    let single = match wanted {
        None => Some(load_law(&args.law, &args.corpus.corpus_dir)?),
        Some(_) => None,
    };
    let built_law = single.as_ref().map(|law| law.abbreviation.clone());
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
    let mut embedder = Embedder::new(
        encoder.as_ref(),
        args.model.clone(),
        e5.tokenizer(),
        cache,
        &progress,
    );
    let outcome = match (single, wanted) {
        (Some(law), _) => {
            let report = build(
                &law,
                None,
                &strategies,
                &mut embedder,
                &mut generator,
                &mut folder,
            )
            .with_context(|| {
                format!("building {} into {}", law.abbreviation, args.out.display())
            })?;
            print_strategies(&report);
            Ok((report, None))
        }
        (None, Some(wanted)) => {
            let mut embedder = embedder.quiet();
            let many = Many {
                source: &args.from,
                wanted: &wanted,
                rebuild: args.rebuild,
                strategies: &strategies,
                model: args.model.model_id(),
            };
            many.build(&mut embedder, &mut generator, &mut folder, &progress)
        }
        (None, None) => unreachable!("either --law or --laws"),
    };
    // What was built stays listed, also when the build stopped; skipped laws are reported at the end.
    folder.save()?;
    let (report, problem) = outcome?;
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
    // The index across laws: written again when a law changed (a change drops the old one from the manifest).
    if args.laws.is_some()
        && paragraf_bundler::manifest::load_or_new(&args.out)?
            .federal
            .is_none()
    {
        super::federal::write(&args.out, paragraf_core::federal::files::SHARD_BYTES)?;
    }
    for name in remove_orphans(&args.out, started)? {
        eprintln!("removed {name}: a bundle manifest.json does not list, left by an earlier build that was killed");
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
                args.model.clone(),
                args.embedding_cache.clone(),
            ))
            .context("learning after the build (--learn-from)")?;
        }
    }
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

/// Which laws `--laws` names.
enum LawList {
    /// Every law of the source.
    All,
    /// These abbreviations, in the order given.
    Named(Vec<String>),
}

/// Longest `--laws @FILE` read (6,877 abbreviations take about 70 KB).
const MAX_LAW_LIST_BYTES: u64 = 1 << 20;

impl LawList {
    fn parse(spec: &str) -> Result<LawList> {
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

    fn wants(&self, law: &str) -> bool {
        match self {
            LawList::All => true,
            LawList::Named(names) => names.iter().any(|n| n == law),
        }
    }
}

/// A build of many laws from one source.
struct Many<'a> {
    source: &'a Path,
    wanted: &'a LawList,
    rebuild: bool,
    strategies: &'a [paragraf_format::strategy::Strategy],
    model: String,
}

/// How the laws of a many-law build went.
#[derive(Default)]
struct Tally {
    built: usize,
    unchanged: usize,
    /// `path: why`, for laws reported and skipped.
    skipped: Vec<String>,
    report: BuildReport,
}

impl Many<'_> {
    fn build(
        &self,
        embedder: &mut Embedder,
        generator: &mut Generator,
        folder: &mut BundleFolder,
        progress: &indicatif::MultiProgress,
    ) -> Result<(BuildReport, Option<anyhow::Error>)> {
        let started = std::time::Instant::now();
        let total = match self.wanted {
            LawList::Named(names) => names.len() as u64,
            // A first pass counts them (about 10 s for the whole archive), for the ETA.
            LawList::All => {
                paragraf_corpus::for_each_law(self.source, |_| std::ops::ControlFlow::Continue(()))?
                    as u64
            }
        };
        let bar = progress.add(indicatif::ProgressBar::new(total));
        bar.set_style(
            indicatif::ProgressStyle::with_template("laws {wide_bar} {pos}/{len} {msg} eta {eta}")
                .expect("valid template"),
        );
        // A save every 30 s at most: a kill loses at most that much work (the embedding cache keeps the rest).
        folder.save_every = std::time::Duration::from_secs(30);
        let mut tally = Tally::default();
        let mut stems: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        let mut found: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut seen: Vec<String> = Vec::new();
        let mut failure = None;
        let mut last_line = std::time::Instant::now();
        paragraf_corpus::for_each_law(self.source, |entry| {
            if let Ok(law) = &entry.result {
                seen.push(law.abbreviation.clone());
            }
            let law = match entry.result {
                Ok(law) if !self.wanted.wants(&law.abbreviation) => {
                    return std::ops::ControlFlow::Continue(())
                }
                Ok(law) => law,
                Err(e) => {
                    tally.skipped.push(format!("{e}"));
                    bar.inc(1);
                    return std::ops::ControlFlow::Continue(());
                }
            };
            bar.inc(1);
            match self.one(
                &law,
                &entry.path,
                &entry.sha256,
                &mut stems,
                &mut found,
                embedder,
                generator,
                folder,
            ) {
                Ok(Some(report)) => {
                    tally.built += 1;
                    tally.report.tokens_embedded += report.tokens_embedded;
                    tally.report.seconds_embedding += report.seconds_embedding;
                }
                Ok(None) => tally.unchanged += 1,
                Err(Skip::Law(why)) => tally.skipped.push(why),
                Err(Skip::Fatal(e)) => {
                    failure =
                        Some(e.context(format!("building {} ({})", law.abbreviation, entry.path)));
                    return std::ops::ControlFlow::Break(());
                }
            }
            let msg = format!(
                "· built {}, unchanged {}, skipped {} · {} tokens embedded",
                tally.built,
                tally.unchanged,
                tally.skipped.len(),
                tally.report.tokens_embedded
            );
            // Without a terminal (logs, CI) the bar is hidden: a line every 30 s instead.
            if bar.is_hidden() && last_line.elapsed().as_secs() >= 30 {
                eprintln!("laws {}/{total} {msg}", bar.position());
                last_line = std::time::Instant::now();
            }
            bar.set_message(msg);
            // Every named law is in: the rest of the archive is not read (a few laws build in seconds, not
            // after a pass over all 6,877).
            match self.wanted {
                LawList::Named(names) if found.len() == names.len() => {
                    std::ops::ControlFlow::Break(())
                }
                _ => std::ops::ControlFlow::Continue(()),
            }
        })?;
        bar.finish_and_clear();
        if let Some(e) = failure {
            return Err(e);
        }
        tally.report.seconds = started.elapsed().as_secs_f64();
        println!(
            "laws: {} built, {} unchanged, {} skipped in {:.1} s from {}",
            tally.built,
            tally.unchanged,
            tally.skipped.len(),
            tally.report.seconds,
            self.source.display()
        );
        let missing: Vec<String> = match self.wanted {
            LawList::All => Vec::new(),
            LawList::Named(names) => names
                .iter()
                .filter(|n| !found.contains(*n))
                .map(|n| match similar(n, &seen) {
                    Some(like) => format!("{n} (did you mean {like}?)"),
                    None => n.clone(),
                })
                .collect(),
        };
        for why in &tally.skipped {
            eprintln!("skipped: {why}");
        }
        // Bad data, like a bad law alone: exit 2 (see `exit_code` in main.rs), though the others were built.
        let refusal = |message: String| Some(anyhow::Error::new(super::library::Refusal(message)));
        let problem = if !missing.is_empty() {
            refusal(format!(
                "not in {}: {}; the other laws were built",
                self.source.display(),
                missing.join(", ")
            ))
        } else if !tally.skipped.is_empty() {
            refusal(format!(
                "{} laws were skipped (listed above); the other {} are in the manifest",
                tally.skipped.len(),
                tally.built + tally.unchanged
            ))
        } else {
            None
        };
        Ok((tally.report, problem))
    }

    /// Builds one law; `Ok(None)` when it is unchanged.
    #[allow(clippy::too_many_arguments)]
    fn one(
        &self,
        law: &paragraf_law::Law,
        path: &str,
        sha256: &str,
        stems: &mut std::collections::HashMap<String, String>,
        found: &mut std::collections::HashSet<String>,
        embedder: &mut Embedder,
        generator: &mut Generator,
        folder: &mut BundleFolder,
    ) -> std::result::Result<Option<BuildReport>, Skip> {
        let name = &law.abbreviation;
        paragraf_format::names::check_law_abbreviation(name)
            .map_err(|e| Skip::Law(format!("{path}: {e}")))?;
        // Two laws whose abbreviations map to one file name would overwrite each other's bundles.
        let stem = paragraf_format::names::file_stem(name);
        if let Some(first) = stems.get(&stem) {
            return Err(Skip::Law(format!(
                "{path}: {name} has the file name {stem} of {first}, built before it"
            )));
        }
        stems.insert(stem, format!("{name} ({path})"));
        found.insert(name.clone());
        if law.active_sections().next().is_none() {
            return Err(Skip::Law(format!("{path}: {name} has no text to search")));
        }
        if !self.rebuild && folder.is_current(name, sha256, self.strategies, &self.model) {
            return Ok(None);
        }
        let report = build(
            law,
            Some(sha256),
            self.strategies,
            embedder,
            generator,
            folder,
        )
        .map_err(|e| Skip::Fatal(e.into()))?;
        embedder.forget_texts();
        Ok(Some(report))
    }
}

/// Up to three abbreviations of `seen` that start with `name` or match it ignoring case and spaces (`StVO` ->
/// `StVO 2013`), for the message about a law that is not there.
fn similar(name: &str, seen: &[String]) -> Option<String> {
    let key = |s: &str| s.to_lowercase().replace(' ', "");
    let wanted = key(name);
    let mut like: Vec<&str> = seen
        .iter()
        .filter(|s| key(s).starts_with(&wanted))
        .map(String::as_str)
        .collect();
    // `StVO 2013` (the name plus a version) before `StVorV` (a longer word).
    like.sort_by_key(|s| (!s.starts_with(&format!("{name} ")), s.len()));
    like.dedup();
    like.truncate(3);
    (!like.is_empty()).then(|| like.join(", "))
}

/// Why a law of a many-law build was not built.
enum Skip {
    /// This law only (reported, the others build).
    Law(String),
    /// The build cannot go on (disk full, the encoder failed).
    Fatal(anyhow::Error),
}

/// Deletes the bundles (`*.pgb`) in `out` that its manifest does not list and that are older than `started`:
/// a build killed between writing a bundle and listing it leaves such a file, and nothing else would ever
/// remove it. Newer files may belong to a build running alongside and are kept. Returns the names removed.
fn remove_orphans(out: &Path, started: std::time::SystemTime) -> Result<Vec<String>> {
    let manifest_path = out.join(paragraf_core::manifest::MANIFEST);
    let bytes = paragraf_fs::read_regular(&manifest_path)
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
