//! Errors: the library's own (configuration, serving, load test) and the HTTP error answers.
//!
//! Every refusal the proxy sends is JSON (`{"error": "...", "code": "..."}`) with a stable machine-readable code,
//! so the browser app can tell the user *why* (too long, rate-limited, busy) instead of showing a bare status.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// A configuration that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A setting is out of range or malformed; the message names it.
    #[error("invalid proxy configuration: {0}")]
    Invalid(String),
}

/// Failure to start or run the server.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration was rejected.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
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
        let body = serde_json::json!({ "error": self.message, "code": self.code });
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// A JSON decoder's message without the input it quotes: serde names a wrong value by quoting it
/// (`invalid type: string "…", expected a sequence`, ``unknown variant `…` ``), and the value may be the query
/// text, which refusals never repeat. Quoted strings and the quoted names after `unknown variant`/`unknown field`
/// are dropped; the rest (what was expected, line and column) stays.
pub fn without_input(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(quote) = rest.find(['"', '`']) {
        let (before, after) = rest.split_at(quote);
        let unknown = before.ends_with("unknown variant ") || before.ends_with("unknown field ");
        if after.starts_with('`') && !unknown {
            // A name from the expected list, e.g. `f32`: not input.
            let end = after[1..].find('`').map_or(after.len(), |i| i + 2);
            out.push_str(before);
            out.push_str(&after[..end]);
            rest = &after[end..];
            continue;
        }
        out.push_str(before.trim_end());
        // Skip to the closing quote; `\"` inside a Debug-quoted string is escaped.
        let close = after.chars().next().unwrap_or('"');
        let mut escaped = false;
        let mut end = after.len();
        for (i, c) in after.char_indices().skip(1) {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == close {
                end = i + 1;
                break;
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::without_input;

    #[test]
    fn decoder_messages_lose_the_quoted_input() {
        for (message, expected) in [
            (
                r#"invalid type: string "Kündigung \"fristlos\" Miete", expected a sequence at line 1 column 40"#,
                "invalid type: string, expected a sequence at line 1 column 40",
            ),
            (
                "unknown variant `meine Frage`, expected `f32` or `int8` at line 1 column 20",
                "unknown variant, expected `f32` or `int8` at line 1 column 20",
            ),
            (
                "unknown field `query`, expected one of `text`, `texts`, `format`, `model` at line 1 column 8",
                "unknown field, expected one of `text`, `texts`, `format`, `model` at line 1 column 8",
            ),
            (
                "invalid type: integer `42`, expected a string at line 1 column 11",
                "invalid type: integer `42`, expected a string at line 1 column 11",
            ),
        ] {
            assert_eq!(without_input(message), expected);
        }
    }
}
