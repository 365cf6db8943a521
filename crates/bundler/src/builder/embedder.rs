//! The one door to the encoder during a build.
//!
//! Embeddings are the expensive part of a build, so every text goes through one [`Embedder`] that deduplicates
//! within the run and asks the persistent embedding cache first: a sentence that is a unit of several strategies
//! (a one-sentence Absatz is also a sentence and a proposition) is embedded once, and a rebuild embeds only new
//! text. Misses are sorted by length and sent in batches of about 8k tokens, which wastes less padding.

use super::BuildError;
use paragraf_e5::tokenizer::Tokenizer;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::{EmbeddingBackend, TextKind};
use std::collections::HashMap;
use std::time::Instant;

/// Deduplicating, cached access to the embedding backend, with progress and token accounting.
pub struct Embedder<'a> {
    /// Computes (and the cache keeps) full-width vectors.
    backend: &'a dyn EmbeddingBackend,
    /// What the bundles record: the model id, and the width vectors are cut to.
    output: ModelChoice,
    pub(super) tokenizer: &'a Tokenizer,
    memo: HashMap<String, Vec<f32>>,
    cache: Option<EmbeddingCache>,
    /// Tokens sent to the encoder (cache misses only).
    pub tokens_embedded: usize,
    /// Seconds spent in the encoder.
    pub seconds_embedding: f64,
    progress: &'a indicatif::MultiProgress,
    /// No per-strategy lines or bars: a build of thousands of laws shows one bar of its own.
    quiet: bool,
}

impl<'a> Embedder<'a> {
    /// Wraps a backend computing full-width vectors of `output`'s model (see [`ModelChoice::load_full`]);
    /// `cache` (opened for the backend's `cache_id`) persists them across runs. `tokenizer` cuts fixed windows
    /// and counts tokens when the backend cannot.
    pub fn new(
        backend: &'a dyn EmbeddingBackend,
        output: ModelChoice,
        tokenizer: &'a Tokenizer,
        cache: Option<EmbeddingCache>,
        progress: &'a indicatif::MultiProgress,
    ) -> Self {
        Embedder {
            backend,
            output,
            tokenizer,
            memo: HashMap::new(),
            cache,
            tokens_embedded: 0,
            seconds_embedding: 0.0,
            progress,
            quiet: false,
        }
    }

    /// Leaves progress to the caller: no per-strategy lines or bars.
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    /// Forgets the vectors held for deduplication within the run (the cache keeps them): between laws of a
    /// federal build, so memory does not grow with the corpus.
    pub fn forget_texts(&mut self) {
        self.memo = HashMap::new();
    }

    /// A line for the user: above the progress bars on a terminal, on stderr when the bars are hidden (logs, CI),
    /// so a long build leaves a trace either way.
    pub(super) fn log(&self, line: String) {
        if self.quiet {
            return;
        }
        if self.progress.is_hidden() {
            eprintln!("{line}");
        } else {
            self.progress.println(line).ok();
        }
    }

    /// The model id bundles record.
    pub fn model_id(&self) -> String {
        self.output.model_id()
    }

    /// Token count of a text for the model (without prefix and specials).
    pub fn tokens(&self, text: &str) -> usize {
        self.backend
            .count_tokens(text)
            .unwrap_or_else(|| self.tokenizer.encode(text).len())
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
            let bar = if self.quiet {
                indicatif::ProgressBar::hidden()
            } else {
                self.progress.add(indicatif::ProgressBar::new(total as u64))
            };
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
        Ok(texts
            .iter()
            .map(|t| self.output.narrow(&self.memo[*t]))
            .collect())
    }
}
