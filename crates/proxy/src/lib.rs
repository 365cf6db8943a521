//! The query-embedding proxy: a small, safe HTTP server that turns query text into a vector.
//!
//! The browser app holds the whole corpus; only the query text leaves it, to this server, which embeds it with
//! exactly the model the bundles were built with: a proxy serves one or more models (the first is the default),
//! `/health` lists their [`paragraf_embed::EmbeddingBackend::model_id`]s, and the app asks for the bundle's by
//! that id (and refuses a proxy that does not serve it). Users self-host it next to the static site, often on a small machine, so
//! the server is built around admission control: CORS allowlist, body and text limits, a per-client rate limit,
//! a global concurrency gate sized to the cores, timeouts and an LRU cache of recent query vectors. Query text
//! never reaches the logs unless the operator opts in.
//!
//! `paragraf serve` runs the same server with a [`site::SiteConfig`]: the built app and a bundle folder on the
//! same origin as the endpoints (or without models: the site alone).
//!
//! The server is generic over [`paragraf_embed::EmbeddingBackend`], so the same code serves the local e5 and
//! EmbeddingGemma encoders or any other backend (and tests use small deterministic ones).
#![warn(missing_docs)]

pub mod api;
pub mod bench;
mod cache;
mod config;
mod cors;
mod embedder;
mod error;
mod limit;
mod models;
mod server;
pub mod site;

pub use config::{default_concurrency, Config, DEFAULT_BIND};
pub use error::{ApiError, ConfigError, ServeError};
pub use models::check_models;

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(
    cause: &(dyn std::error::Error + 'static),
) -> Option<paragraf_format::fault::Fault> {
    use paragraf_format::fault::{blame, first_fault};
    first_fault(cause, &[blame::<ConfigError>, blame::<ServeError>])
}
pub use server::{run_blocking, shutdown_signal, Server, VERSION};

/// Sends the proxy's log lines (and the libraries') to stderr at `level` (`error`, `warn`, `info`, `debug`,
/// `trace`). Does nothing if a logger is already installed.
pub fn init_logging(level: &str) -> Result<(), ConfigError> {
    let level: tracing::Level = level
        .parse()
        .map_err(|_| ConfigError::Invalid(format!("unknown log level {level:?}")))?;
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
    Ok(())
}
