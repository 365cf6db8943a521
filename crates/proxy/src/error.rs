//! Errors: the library's own (configuration, serving, load test) and the HTTP error answers.
//!
//! Every refusal the proxy sends is JSON (`{"error": "...", "code": "..."}`) with a stable machine-readable code,
//! so the browser app can tell the user *why* (too long, rate-limited, busy) instead of showing a bare status.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use paragraf_format::api::ErrorBody;
use paragraf_format::fault::{Blame, Fault};

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A setting is out of range or malformed; the message names it.
    #[error("invalid proxy configuration: {0}")]
    Invalid(String),
}

impl Blame for ConfigError {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

/// Failure to start or run the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration was rejected.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}{}", bind_hint(.source))]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Other I/O failure while serving (runtime start, accept loop).
    #[error("proxy I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl Blame for ServeError {
    fn fault(&self) -> Fault {
        match self {
            ServeError::Config(_) => Fault::Input,
            ServeError::Bind { .. } | ServeError::Io(_) => Fault::Other,
        }
    }
}

/// What to do about the usual reasons a port cannot be bound.
fn bind_hint(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::AddrInUse => {
            ". Most likely another server (an earlier `paragraf serve` or `paragraf proxy`?) runs there: stop it, \
             or choose another port with --bind"
        }
        std::io::ErrorKind::PermissionDenied => {
            ". Ports below 1024 need privileges: choose a port above 1024 with --bind"
        }
        _ => "",
    }
}

/// An HTTP error answer: status, stable code, human message and optionally `Retry-After` seconds.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code, e.g. `text_too_long`.
    pub code: &'static str,
    /// Human-readable explanation (never contains the query text).
    pub message: String,
    /// Seconds after which a retry may succeed (429 and 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error without `Retry-After`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// An error that tells the client when to retry.
    pub fn retry(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
        secs: u64,
    ) -> Self {
        ApiError {
            retry_after: Some(secs.max(1)),
            ..ApiError::new(status, code, message)
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.message,
            code: Some(self.code.to_string()),
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}
