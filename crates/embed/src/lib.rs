//! Embedding backends for Paragraf.
//!
//! Dense retrieval needs the same model at build time (every chunk) and at query time (the proxy), so every
//! producer of vectors goes through one trait, [`EmbeddingBackend`]. The local multilingual-e5-small encoder is
//! the default; an OpenAI-compatible HTTP endpoint lets users plug in any other model.

/// What a text is, which decides the e5 prefix (`query: ` or `passage: `).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextKind {
    /// A user's question (`query: `).
    Query,
    /// Statute text being indexed (`passage: `).
    Passage,
}

/// Anything that turns texts into L2-normalised vectors of one fixed dimension.
pub trait EmbeddingBackend: Send + Sync {
    /// Stable model identifier recorded in bundles and checked by the app and proxy
    /// (e.g. `intfloat/multilingual-e5-small@q4`).
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// Embeds `texts` (without prefix: the backend adds what the model needs), one vector per text, in order.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Errors of every embedding backend.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// Placeholder variant; the embeddings issue defines the real ones.
    #[error("{0}")]
    Other(String),
}
