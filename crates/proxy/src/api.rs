//! Parsing and validating `POST /v1/embed` bodies.
//!
//! The wire format itself (request, the four answer shapes, `/health`, int8 quantisation) is
//! [`paragraf_format::api`], shared with the browser; what this proxy accepts (limits, precise refusals) is here.
//!
//! The body is parsed by hand rather than with axum's `Json` extractor so that every refusal is a JSON error
//! with a precise message: non-UTF-8 bytes, malformed JSON (400) and well-formed but unacceptable input (422)
//! are told apart.

use axum::http::StatusCode;
use paragraf_format::api::{self, Format};

use crate::error::ApiError;

/// A validated embedding request.
#[derive(Debug, PartialEq)]
pub struct ValidRequest {
    /// The texts, in order (one for the single form).
    pub texts: Vec<String>,
    /// Whether the batch form (`texts`) was used, which decides the answer's shape.
    pub batch: bool,
    /// Requested vector encoding.
    pub format: Format,
    /// The model asked for (`None`: the default); whether it is served is checked against the served models.
    pub model: Option<String>,
}

/// Limits applied while parsing.
pub struct TextLimits {
    /// Longest text in Unicode scalar values.
    pub max_chars: usize,
    /// Most texts per batch.
    pub max_batch: usize,
}

fn unprocessable(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
}

impl ValidRequest {
    /// Parses and validates a request body.
    pub fn parse(body: &[u8], limits: &TextLimits) -> Result<ValidRequest, ApiError> {
        let body = std::str::from_utf8(body).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_utf8",
                format!(
                    "request body is not valid UTF-8 (first bad byte at offset {})",
                    e.valid_up_to()
                ),
            )
        })?;
        let raw: api::EmbedRequest =
            serde_json::from_str(body).map_err(|e| match e.classify() {
                // serde's own message quotes what it refuses (a field name, a value: maybe the query), which
                // refusals never repeat: say where and what is expected instead.
                serde_json::error::Category::Data => unprocessable(
                    "invalid_request",
                    format!(
                        "invalid request at line {} column {}: expected {{\"text\": \"…\"}} or {{\"texts\": [\"…\"]}}, optionally \"format\" (\"f32\" or \"int8\") and \"model\", and no other fields",
                        e.line(),
                        e.column()
                    ),
                ),
                _ => ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_json",
                    format!("request body is not valid JSON: {e}"),
                ),
            })?;
        let (texts, batch) =
            match (raw.text, raw.texts) {
                (Some(text), None) => (vec![text], false),
                (None, Some(texts)) => (texts, true),
                _ => return Err(unprocessable(
                    "invalid_request",
                    "send exactly one of \"text\" (a string) or \"texts\" (an array of strings)",
                )),
            };
        if texts.is_empty() {
            return Err(unprocessable("empty_batch", "\"texts\" is empty"));
        }
        if texts.len() > limits.max_batch {
            return Err(unprocessable(
                "batch_too_large",
                format!(
                    "{} texts in one request; at most {} are allowed",
                    texts.len(),
                    limits.max_batch
                ),
            ));
        }
        for (i, text) in texts.iter().enumerate() {
            let which = if batch {
                format!("text {i}")
            } else {
                "text".to_owned()
            };
            if text.trim().is_empty() {
                return Err(unprocessable("empty_text", format!("{which} is empty")));
            }
            let chars = text.chars().count();
            if chars > limits.max_chars {
                return Err(unprocessable(
                    "text_too_long",
                    format!(
                        "{which} has {chars} characters; at most {} are allowed",
                        limits.max_chars
                    ),
                ));
            }
        }
        Ok(ValidRequest {
            texts,
            batch,
            format: raw.format,
            model: raw.model,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: TextLimits = TextLimits {
        max_chars: 10,
        max_batch: 2,
    };

    fn err(body: &[u8]) -> (StatusCode, &'static str, String) {
        let e = ValidRequest::parse(body, &LIMITS).unwrap_err();
        (e.status, e.code, e.message)
    }

    #[test]
    fn parses_both_forms() {
        let single = ValidRequest::parse(br#"{"text": "Miete"}"#, &LIMITS).unwrap();
        assert_eq!(
            single,
            ValidRequest {
                texts: vec!["Miete".into()],
                batch: false,
                format: Format::F32,
                model: None,
            }
        );
        let batch = ValidRequest::parse(
            r#"{"texts": ["Kündigung", "ä"], "format": "int8", "model": "g/gemma@256"}"#.as_bytes(),
            &LIMITS,
        );
        let batch = batch.unwrap();
        assert_eq!(
            (batch.texts.len(), batch.batch, batch.format),
            (2, true, Format::Int8)
        );
        assert_eq!(batch.model.as_deref(), Some("g/gemma@256"));
    }

    #[test]
    fn refusals_are_precise() {
        assert_eq!(err(b"\xff\xfe").1, "invalid_utf8");
        assert_eq!(err(b"{\"text\": ").0, StatusCode::BAD_REQUEST);
        assert_eq!(err(b"{\"text\": 5}").0, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(err(b"{\"txt\": \"a\"}").1, "invalid_request");
        assert_eq!(
            err(b"{\"text\": \"a\", \"texts\": [\"b\"]}").1,
            "invalid_request"
        );
        assert_eq!(
            err(b"{\"text\": \"a\", \"format\": \"f16\"}").1,
            "invalid_request"
        );
        assert_eq!(err(b"{\"text\": \" \\n\"}").1, "empty_text");
        assert_eq!(err(b"{\"texts\": []}").1, "empty_batch");
        assert_eq!(
            err(b"{\"texts\": [\"a\", \"b\", \"c\"]}").1,
            "batch_too_large"
        );
        // Characters, not bytes: ten umlauts are 20 bytes but allowed.
        ValidRequest::parse("{\"text\": \"ääääääääää\"}".as_bytes(), &LIMITS).unwrap();
        let (_, code, message) = err("{\"texts\": [\"a\", \"äääääääääää\"]}".as_bytes());
        assert_eq!(code, "text_too_long");
        assert_eq!(message, "text 1 has 11 characters; at most 10 are allowed");
    }
}
