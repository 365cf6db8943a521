//! The models one proxy serves: the first is the default (what `/health` names in `model`/`dim` and what a
//! request without `"model"` gets), a request may name any other by the id bundles record.
//!
//! Why several in one process: an operator who offers bundles of two models (e5 for small devices, an
//! EmbeddingGemma prefix for quality) runs one server with one set of limits. Each model has its own scheduler
//! (a pass holds texts of one model only), but all share one concurrency gate and one cache (keyed by model):
//! the CPU budget and the memory are the machine's, whichever model computes.

use std::sync::Arc;

use axum::http::StatusCode;
use paragraf_embed::EmbeddingBackend;
use paragraf_format::api::ModelInfo;

use crate::cache::VectorCache;
use crate::embedder::Embedder;
use crate::error::{ApiError, ConfigError};
use crate::limit::Gate;

/// Checks the model ids to serve (the CLI calls it before loading anything): at least one, and none twice (a
/// request could not say which of the two it means).
pub fn check_models<S: AsRef<str>>(ids: &[S]) -> Result<(), ConfigError> {
    if ids.is_empty() {
        return Err(ConfigError::Invalid(
            "no model to serve; name at least one".into(),
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        let id = id.as_ref();
        if ids[..i].iter().any(|other| other.as_ref() == id) {
            return Err(ConfigError::Invalid(format!(
                "model {id} is named twice; serve each model once"
            )));
        }
    }
    Ok(())
}

/// The served models, the default first (never empty: see [`check_models`]).
pub struct Served {
    models: Vec<Embedder>,
}

impl Served {
    /// A scheduler per backend, all behind `gate` and storing into `cache`.
    pub fn new(
        backends: Vec<Arc<dyn EmbeddingBackend>>,
        cache: &Arc<VectorCache>,
        gate: &Arc<Gate>,
        pass_texts: usize,
    ) -> Served {
        let models = backends
            .into_iter()
            .map(|backend| Embedder::new(backend, Arc::clone(cache), Arc::clone(gate), pass_texts))
            .collect();
        Served { models }
    }

    /// The default model's scheduler.
    pub fn default_model(&self) -> &Embedder {
        &self.models[0]
    }

    /// Every model with its dimension, the default first (for `/health`).
    pub fn infos(&self) -> Vec<ModelInfo> {
        self.models
            .iter()
            .map(|m| ModelInfo {
                model: m.model().to_string(),
                dim: m.dim(),
            })
            .collect()
    }

    /// The scheduler of the model a request names (`None`: the default), or a 400 naming the model asked for
    /// and the ones served.
    pub fn pick(&self, model: Option<&str>) -> Result<&Embedder, ApiError> {
        let Some(model) = model else {
            return Ok(self.default_model());
        };
        self.models
            .iter()
            .find(|m| &**m.model() == model)
            .ok_or_else(|| {
                let served: Vec<&str> = self.models.iter().map(|m| &**m.model()).collect();
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "unknown_model",
                    format!(
                        "the model asked for ({} bytes) is not served here; this proxy serves {}",
                        model.len(),
                        served.join(", ")
                    ),
                )
            })
    }
}
