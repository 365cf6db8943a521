//! The wire format of `POST /v1/embed` and `GET /health`.
//!
//! Request: `{"text": "..."}` or `{"texts": ["...", ...]}`, optionally `"format": "f32" | "int8"`.
//! Answer (f32, the default): `{"model", "dim", "vector": [...]}` or, for a batch, `"vectors": [[...], ...]`.
//! Answer (int8): `{"model", "dim", "int8": [...], "scale": s}` or, for a batch, `"int8": [[...], ...],
//! "scales": [...]`, where each component is approximately `int8[i] * scale` (symmetric quantisation with
//! `scale = max|v| / 127`): a quarter of the bytes on the wire, and plenty for ranking (cosine error < 1e-3).
//!
//! The body is parsed by hand rather than with axum's `Json` extractor so that every refusal is a JSON error
//! with a precise message: non-UTF-8 bytes, malformed JSON (400) and well-formed but unacceptable input (422)
//! are told apart.

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// Vector encoding of the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Plain 32-bit floats.
    #[default]
    F32,
    /// 8-bit integers plus one scale per vector.
    Int8,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    text: Option<String>,
    texts: Option<Vec<String>>,
    #[serde(default)]
    format: Format,
}

/// A validated embedding request.
#[derive(Debug, PartialEq)]
pub struct EmbedRequest {
    /// The texts, in order (one for the single form).
    pub texts: Vec<String>,
    /// Whether the batch form (`texts`) was used, which decides the answer's shape.
    pub batch: bool,
    /// Requested vector encoding.
    pub format: Format,
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

impl EmbedRequest {
    /// Parses and validates a request body.
    pub fn parse(body: &[u8], limits: &TextLimits) -> Result<EmbedRequest, ApiError> {
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
        let raw: RawRequest = serde_json::from_str(body).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => {
                unprocessable("invalid_request", format!("invalid request: {e}"))
            }
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
        Ok(EmbedRequest {
            texts,
            batch,
            format: raw.format,
        })
    }
}

/// A vector quantised to 8 bits: `v[i] ≈ values[i] * scale`.
#[derive(Debug, PartialEq)]
pub struct Int8Vector {
    /// Components, each in -127..=127.
    pub values: Vec<i8>,
    /// Multiplier back to floats.
    pub scale: f32,
}

/// Symmetric per-vector quantisation with `scale = max|v| / 127` (an all-zero vector gets scale 0).
pub fn quantize(vector: &[f32]) -> Int8Vector {
    let max = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        return Int8Vector {
            values: vec![0; vector.len()],
            scale: 0.0,
        };
    }
    let scale = max / 127.0;
    let values = vector
        .iter()
        .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    Int8Vector { values, scale }
}

/// The body of a successful `POST /v1/embed`.
#[derive(Serialize)]
pub struct EmbedResponse<'a> {
    /// Model identifier (compare with the bundle's).
    pub model: &'a str,
    /// Vector dimension.
    pub dim: usize,
    /// The vectors in the requested shape and encoding.
    #[serde(flatten)]
    pub payload: Payload<'a>,
}

/// The four answer shapes (single or batch, f32 or int8).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Payload<'a> {
    /// `"vector": [...]`
    F32 {
        /// The vector.
        vector: &'a [f32],
    },
    /// `"vectors": [[...], ...]`
    F32Batch {
        /// The vectors, in request order.
        vectors: Vec<&'a [f32]>,
    },
    /// `"int8": [...], "scale": s`
    Int8 {
        /// Quantised components.
        int8: Vec<i8>,
        /// Multiplier back to floats.
        scale: f32,
    },
    /// `"int8": [[...], ...], "scales": [...]`
    Int8Batch {
        /// Quantised vectors, in request order.
        int8: Vec<Vec<i8>>,
        /// One multiplier per vector.
        scales: Vec<f32>,
    },
}

impl<'a> Payload<'a> {
    /// Builds the payload for `vectors` (one per requested text).
    pub fn new(vectors: &'a [std::sync::Arc<[f32]>], batch: bool, format: Format) -> Payload<'a> {
        match (format, batch) {
            (Format::F32, false) => Payload::F32 {
                vector: &vectors[0],
            },
            (Format::F32, true) => Payload::F32Batch {
                vectors: vectors.iter().map(|v| &v[..]).collect(),
            },
            (Format::Int8, false) => {
                let q = quantize(&vectors[0]);
                Payload::Int8 {
                    int8: q.values,
                    scale: q.scale,
                }
            }
            (Format::Int8, true) => {
                let (int8, scales) = vectors
                    .iter()
                    .map(|v| quantize(v))
                    .map(|q| (q.values, q.scale))
                    .unzip();
                Payload::Int8Batch { int8, scales }
            }
        }
    }
}

/// The body of `GET /health`.
#[derive(Serialize)]
pub struct Health<'a> {
    /// Always `"ok"` when the server answers.
    pub status: &'static str,
    /// Model identifier (compare with the bundle's).
    pub model: &'a str,
    /// Vector dimension.
    pub dim: usize,
    /// Paragraf version of this proxy.
    pub version: &'static str,
    /// Longest accepted text in characters.
    pub max_chars: usize,
    /// Most texts per batch request.
    pub max_batch: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: TextLimits = TextLimits {
        max_chars: 10,
        max_batch: 2,
    };

    fn err(body: &[u8]) -> (StatusCode, &'static str, String) {
        let e = EmbedRequest::parse(body, &LIMITS).unwrap_err();
        (e.status, e.code, e.message)
    }

    #[test]
    fn parses_both_forms() {
        let single = EmbedRequest::parse(br#"{"text": "Miete"}"#, &LIMITS).unwrap();
        assert_eq!(
            single,
            EmbedRequest {
                texts: vec!["Miete".into()],
                batch: false,
                format: Format::F32
            }
        );
        let batch = EmbedRequest::parse(
            r#"{"texts": ["Kündigung", "ä"], "format": "int8"}"#.as_bytes(),
            &LIMITS,
        );
        let batch = batch.unwrap();
        assert_eq!(
            (batch.texts.len(), batch.batch, batch.format),
            (2, true, Format::Int8)
        );
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
        EmbedRequest::parse("{\"text\": \"ääääääääää\"}".as_bytes(), &LIMITS).unwrap();
        let (_, code, message) = err("{\"texts\": [\"a\", \"äääääääääää\"]}".as_bytes());
        assert_eq!(code, "text_too_long");
        assert_eq!(message, "text 1 has 11 characters; at most 10 are allowed");
    }

    #[test]
    fn quantisation_round_trips_closely() {
        let v = [0.5f32, -0.25, 0.1, 0.0, -0.5];
        let q = quantize(&v);
        assert_eq!(q.values[0], 127);
        assert_eq!(q.values[4], -127);
        for (x, &i) in v.iter().zip(&q.values) {
            assert!((x - f32::from(i) * q.scale).abs() <= q.scale / 2.0 + f32::EPSILON);
        }
        assert_eq!(
            quantize(&[0.0, 0.0]),
            Int8Vector {
                values: vec![0, 0],
                scale: 0.0
            }
        );
    }
}
