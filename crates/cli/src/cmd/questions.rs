//! The questions `paragraf eval` and `paragraf learn` read and embed: GerLayQA's file format, size-checked, and
//! their vectors from the embedding cache or the local encoder.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::e5::LongTextPolicy;
use paragraf_embed::gemma::DocumentTitle;
use paragraf_embed::TextKind;
use paragraf_eval::Question;

use crate::cmd::refusal::{refuse, Refusal};

/// How questions are embedded: `paragraf eval` and `paragraf learn` alike.
#[derive(Args, Clone)]
pub struct QuestionEncoder {
    /// Questions over 510 tokens: keep the first 510 tokens, or average the vectors of 510-token windows.
    #[arg(long, value_enum, default_value_t = LongQuestions::Truncate)]
    pub long_questions: LongQuestions,
    /// The model for the questions: a name (`e5`, `embeddinggemma@256`, …), an e5 model file or an
    /// EmbeddingGemma folder (default: the model the bundles were built with, from the fetch cache). Must be the
    /// bundles' model.
    #[arg(long, value_parser = ModelChoice::parse)]
    model: Option<ModelChoice>,
    /// Embedding cache folder for question vectors (default: $PARAGRAF_CACHE_DIR/embeddings, else ~/.cache/paragraf/embeddings).
    #[arg(long, env = "PARAGRAF_EMBEDDING_CACHE")]
    embedding_cache: Option<PathBuf>,
}

impl QuestionEncoder {
    /// Questions embedded with `model` (truncated to 510 tokens), vectors cached in `embedding_cache`.
    pub fn new(model: Option<ModelChoice>, embedding_cache: Option<PathBuf>) -> QuestionEncoder {
        QuestionEncoder {
            long_questions: LongQuestions::Truncate,
            model,
            embedding_cache,
        }
    }
}

/// What happens to questions over the model's window.
#[derive(Clone, Copy, ValueEnum)]
pub enum LongQuestions {
    /// Keep the first 510 tokens (as the browser does).
    Truncate,
    /// Average the vectors of 510-token windows.
    WindowAverage,
}

/// Most bytes of a question file (GerLayQA's dev split has 3 MB).
pub const MAX_QUESTION_FILE_BYTES: u64 = 64 << 20;

/// Reads a question file in GerLayQA's format, at most [`MAX_QUESTION_FILE_BYTES`], and its SHA-256.
pub fn read_questions(path: &Path) -> Result<(Vec<Question>, String)> {
    let refused = |e: &dyn std::fmt::Display| {
        Refusal(format!(
            "cannot read the questions {} (set --questions or PARAGRAF_QUESTIONS): {e}",
            path.display()
        ))
    };
    let meta = std::fs::metadata(path).map_err(|e| refused(&e))?;
    if !meta.is_file() {
        return Err(refused(&"not a regular file").into());
    }
    if meta.len() > MAX_QUESTION_FILE_BYTES {
        refuse!(
            "{} has {} bytes, more than the {MAX_QUESTION_FILE_BYTES} a question file may have. Most likely it is not a question file; split it",
            path.display(),
            meta.len()
        );
    }
    let bytes = paragraf_fs::read_regular(path).map_err(|e| refused(&e))?;
    let questions: Vec<Question> = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not GerLayQA JSON (expected [{{\"Question_text\": ..., \"Paragraphs\": [...]}}])",
            path.display()
        )
    })?;
    Ok((questions, paragraf_format::digest::sha256_hex(&bytes)))
}

/// Question vectors from the cache or the local encoder, at the bundles' width; checks the model matches the
/// bundles'. Returns them with the mean embedding time per question (NaN when all were cached).
pub fn embed_questions(
    texts: &[String],
    args: &QuestionEncoder,
    bundle_model: Option<&str>,
) -> Result<(Vec<Vec<f32>>, f64)> {
    let from_bundles = bundle_model.map(|id| {
        ModelChoice::from_model_id(id).ok_or_else(|| {
            Refusal(format!(
                "the bundles were built with {id}, a model Paragraf cannot embed questions with (it runs {})",
                paragraf_embed::choice::NAMES
            ))
        })
    });
    let choice = match (from_bundles.transpose()?, &args.model) {
        (Some(bundles), Some(asked)) if bundles.model_id() != asked.model_id() => refuse!(
            "the bundles were built with {bundles} but --model names {asked}; vectors of different models are not comparable. Rebuild the bundles with --model {asked}, or leave --model out"
        ),
        (Some(bundles), Some(asked)) => bundles.located(asked),
        (Some(bundles), None) => bundles,
        (None, asked) => asked.clone().unwrap_or_default(),
    };
    // Questions are embedded and cached at the model's full width and cut to the bundles' width.
    let encoder = choice.load_full(
        match args.long_questions {
            LongQuestions::Truncate => LongTextPolicy::Truncate,
            LongQuestions::WindowAverage => LongTextPolicy::WindowAverage,
        },
        DocumentTitle::None,
    )?;
    let root = args
        .embedding_cache
        .clone()
        .unwrap_or_else(|| paragraf_embed::model::cache_root().join("embeddings"));
    let mut cache = EmbeddingCache::open(&root, &encoder.cache_id(), encoder.dim())?;
    let missing: Vec<&str> = texts
        .iter()
        .map(String::as_str)
        .filter(|t| cache.get(TextKind::Query, t).is_none())
        .collect();
    let mut ms = Vec::new();
    if !missing.is_empty() {
        let bar = ProgressBar::new(missing.len() as u64).with_style(
            ProgressStyle::with_template(
                "embedding questions {wide_bar} {pos}/{len} {per_sec} eta {eta}",
            )
            .expect("template"),
        );
        for chunk in missing.chunks(16) {
            let started = Instant::now();
            let vectors = encoder.embed(chunk, TextKind::Query)?;
            ms.push(started.elapsed().as_secs_f64() * 1e3 / chunk.len() as f64);
            cache.insert(TextKind::Query, chunk, &vectors)?;
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
    }
    let vectors: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| choice.narrow(cache.get(TextKind::Query, t).expect("cached above")))
        .collect();
    let mean = if ms.is_empty() {
        f64::NAN
    } else {
        ms.iter().sum::<f64>() / ms.len() as f64
    };
    Ok((vectors, mean))
}
