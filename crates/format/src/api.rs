//! The wire format of the query-embedding proxy (`paragraf proxy`): `POST /v1/embed` and `GET /health`.
//!
//! Request: `{"text": "..."}` or `{"texts": ["...", ...]}`, optionally `"format": "f32" | "int8"` and
//! `"model": "..."` (one of the models `/health` lists; absent: the proxy's default model).
//! Answer (f32, the default): `{"model", "dim", "vector": [...]}` or, for a batch, `"vectors": [[...], ...]`.
//! Answer (int8): `{"model", "dim", "int8": [...], "scale": s}` or, for a batch, `"int8": [[...], ...],
//! "scales": [...]`, where each component is approximately `int8[i] * scale` (symmetric quantisation with
//! `scale = max|v| / 127`): a quarter of the bytes on the wire, and plenty for ranking (cosine error < 1e-3).
//!
//! Refusal: `{"error": "...", "code": "..."}` ([`ErrorBody`]) with an HTTP error status.
//!
//! The shapes live here, in the contracts crate, because both ends read them: the proxy writes answers and the
//! browser (and the command line) reads them; every type is `Serialize` and `Deserialize`. What the proxy accepts
//! (limits) and when it refuses is the proxy's business and stays there.

use serde::{Deserialize, Serialize};

/// Path of the embedding endpoint.
pub const EMBED_PATH: &str = "/v1/embed";

/// Path of the health endpoint.
pub const HEALTH_PATH: &str = "/health";

/// The `<meta name=… content=…>` through which a server tells the app where its proxy is: `paragraf serve`
/// writes it into the `index.html` it serves, `./` when it embeds queries itself (same origin), empty when it
/// does not (the app then asks no proxy unless the user names one).
pub const PROXY_META_NAME: &str = "paragraf-proxy";

/// Vector encoding of the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Plain 32-bit floats.
    #[default]
    F32,
    /// 8-bit integers plus one scale per vector.
    Int8,
}

/// The body of `POST /v1/embed` as sent: exactly one of `text` and `texts` (the proxy checks that), and the
/// model to embed with (absent: the proxy's default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedRequest {
    /// One text (the single form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Several texts (the batch form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub texts: Option<Vec<String>>,
    /// Requested vector encoding.
    #[serde(default)]
    pub format: Format,
    /// Model id to embed with, one of [`Health::models`]; `None`: the proxy's default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl EmbedRequest {
    /// The single form for one query, answered in f32 by the default model.
    pub fn single(text: impl Into<String>) -> Self {
        EmbedRequest {
            text: Some(text.into()),
            ..EmbedRequest::default()
        }
    }
}

/// The body of a successful `POST /v1/embed`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EmbedResponse {
    /// Model identifier (compare with the bundle's).
    pub model: String,
    /// Vector dimension.
    pub dim: usize,
    /// The vectors in the requested shape and encoding.
    #[serde(flatten)]
    pub payload: Payload,
}

/// The four answer shapes (single or batch, f32 or int8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Payload {
    /// `"vector": [...]`
    F32 {
        /// The vector.
        vector: Vec<f32>,
    },
    /// `"vectors": [[...], ...]`
    F32Batch {
        /// The vectors, in request order.
        vectors: Vec<Vec<f32>>,
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

impl Payload {
    /// The payload for `vectors` (one per requested text) in the shape `batch` and `format` ask for.
    pub fn new<V: AsRef<[f32]>>(vectors: &[V], batch: bool, format: Format) -> Payload {
        match (format, batch) {
            (Format::F32, false) => Payload::F32 {
                vector: vectors[0].as_ref().to_vec(),
            },
            (Format::F32, true) => Payload::F32Batch {
                vectors: vectors.iter().map(|v| v.as_ref().to_vec()).collect(),
            },
            (Format::Int8, false) => {
                let q = quantize(vectors[0].as_ref());
                Payload::Int8 {
                    int8: q.values,
                    scale: q.scale,
                }
            }
            (Format::Int8, true) => {
                let (int8, scales) = vectors
                    .iter()
                    .map(|v| quantize(v.as_ref()))
                    .map(|q| (q.values, q.scale))
                    .unzip();
                Payload::Int8Batch { int8, scales }
            }
        }
    }

    /// The vectors as floats, in request order (int8 answers scaled back).
    pub fn into_f32(self) -> Vec<Vec<f32>> {
        let scaled = |values: Vec<i8>, scale: f32| -> Vec<f32> {
            values.into_iter().map(|v| f32::from(v) * scale).collect()
        };
        match self {
            Payload::F32 { vector } => vec![vector],
            Payload::F32Batch { vectors } => vectors,
            Payload::Int8 { int8, scale } => vec![scaled(int8, scale)],
            Payload::Int8Batch { int8, scales } => int8
                .into_iter()
                .zip(scales)
                .map(|(v, s)| scaled(v, s))
                .collect(),
        }
    }
}

/// A vector quantised to 8 bits: `v[i] ≈ values[i] * scale`.
#[derive(Clone, Debug, PartialEq)]
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

/// A model the proxy serves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Model identifier, as bundles record it.
    pub model: String,
    /// Vector dimension.
    pub dim: usize,
}

/// The body of `GET /health`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// Always `"ok"` when the server answers.
    pub status: String,
    /// The default model's identifier (the one a request without `"model"` gets; clients that predate
    /// `models` read only this).
    pub model: String,
    /// The default model's vector dimension.
    pub dim: usize,
    /// Every model served, the default first. A proxy from before several models lists none here: it serves
    /// `model` only (see [`Health::served`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelInfo>,
    /// Paragraf version of the proxy.
    pub version: String,
    /// Longest accepted text in characters.
    pub max_chars: usize,
    /// Most texts per batch request.
    pub max_batch: usize,
}

impl Health {
    /// Every model served, the default first.
    pub fn served(&self) -> Vec<ModelInfo> {
        if self.models.is_empty() {
            vec![ModelInfo {
                model: self.model.clone(),
                dim: self.dim,
            }]
        } else {
            self.models.clone()
        }
    }

    /// The served model ids, for messages: `a, b`.
    pub fn served_ids(&self) -> Vec<String> {
        self.served().into_iter().map(|m| m.model).collect()
    }

    /// Whether this proxy serves `model`.
    pub fn serves(&self, model: &str) -> bool {
        self.served().iter().any(|m| m.model == model)
    }

    /// The request embedding `text` with `model`, or `None` when this proxy does not serve `model`. A proxy that
    /// lists no `models` (from before several models) would refuse the field; it is asked without it.
    pub fn request(&self, text: impl Into<String>, model: &str) -> Option<EmbedRequest> {
        if !self.serves(model) {
            return None;
        }
        Some(EmbedRequest {
            model: (!self.models.is_empty()).then(|| model.to_string()),
            ..EmbedRequest::single(text)
        })
    }
}

/// The body of every refusal the proxy sends, with an HTTP error status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
    /// A stable machine-readable code (`text_too_long` …); absent (or null) in other servers' errors.
    #[serde(default)]
    pub code: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_serialise_as_the_proxy_reads_them() {
        let json = serde_json::to_string(&EmbedRequest::single("Miete")).unwrap();
        assert_eq!(json, r#"{"text":"Miete","format":"f32"}"#);
        let batch: EmbedRequest =
            serde_json::from_str(r#"{"texts": ["a", "b"], "format": "int8"}"#).unwrap();
        assert_eq!(
            (batch.text, batch.texts.unwrap().len(), batch.format),
            (None, 2, Format::Int8)
        );
        let unknown = serde_json::from_str::<EmbedRequest>(r#"{"txt": "a"}"#).unwrap_err();
        assert!(
            unknown.to_string().starts_with("unknown field `txt`"),
            "{unknown}"
        );
    }

    #[test]
    fn every_answer_shape_round_trips() {
        let vectors = [vec![0.5f32, -0.25, 0.125], vec![0.0, 1.0, -1.0]];
        for (batch, format, keys) in [
            (false, Format::F32, r#""vector":[0.5,-0.25,0.125]"#),
            (
                true,
                Format::F32,
                r#""vectors":[[0.5,-0.25,0.125],[0.0,1.0,-1.0]]"#,
            ),
            (false, Format::Int8, r#""int8":[127,-64,32],"scale":"#),
            (
                true,
                Format::Int8,
                r#""int8":[[127,-64,32],[0,127,-127]],"scales":["#,
            ),
        ] {
            let response = EmbedResponse {
                model: "m".into(),
                dim: 3,
                payload: Payload::new(&vectors, batch, format),
            };
            let json = serde_json::to_string(&response).unwrap();
            assert!(json.starts_with(r#"{"model":"m","dim":3,"#), "{json}");
            assert!(json.contains(keys), "{json}");
            let back: EmbedResponse = serde_json::from_str(&json).unwrap();
            assert_eq!(back, response);
            let floats = back.payload.into_f32();
            assert_eq!(floats.len(), if batch { 2 } else { 1 });
            for (got, want) in floats.iter().zip(&vectors) {
                for (g, w) in got.iter().zip(want) {
                    assert!((g - w).abs() <= 0.5 / 127.0, "{g} vs {w}");
                }
            }
        }
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

    #[test]
    fn health_reads_back() {
        let json = r#"{"status":"ok","model":"intfloat/multilingual-e5-small","dim":384,"version":"0.1.0","max_chars":2000,"max_batch":64}"#;
        let health: Health = serde_json::from_str(json).unwrap();
        assert_eq!(
            (health.dim, health.model.as_str()),
            (384, "intfloat/multilingual-e5-small")
        );
        assert_eq!(serde_json::to_string(&health).unwrap(), json);
        // A proxy from before several models: its one model is all it serves, and it is asked without naming it.
        assert_eq!(health.served_ids(), ["intfloat/multilingual-e5-small"]);
        let request = health
            .request("Miete", "intfloat/multilingual-e5-small")
            .unwrap();
        assert_eq!(request, EmbedRequest::single("Miete"));
        assert_eq!(health.request("Miete", "google/embeddinggemma-300m"), None);
    }

    #[test]
    fn health_lists_every_model_and_requests_name_theirs() {
        let health = Health {
            status: "ok".into(),
            model: "a/e5".into(),
            dim: 384,
            models: vec![
                ModelInfo {
                    model: "a/e5".into(),
                    dim: 384,
                },
                ModelInfo {
                    model: "g/gemma@256".into(),
                    dim: 256,
                },
            ],
            version: "0.1.0".into(),
            max_chars: 2000,
            max_batch: 16,
        };
        let json = serde_json::to_string(&health).unwrap();
        assert_eq!(
            json,
            r#"{"status":"ok","model":"a/e5","dim":384,"models":[{"model":"a/e5","dim":384},{"model":"g/gemma@256","dim":256}],"version":"0.1.0","max_chars":2000,"max_batch":16}"#
        );
        let back: Health = serde_json::from_str(&json).unwrap();
        assert_eq!(back, health);
        assert_eq!(back.served_ids(), ["a/e5", "g/gemma@256"]);

        let request = health.request("Miete", "g/gemma@256").unwrap();
        let json = serde_json::to_string(&request).unwrap();
        assert_eq!(
            json,
            r#"{"text":"Miete","format":"f32","model":"g/gemma@256"}"#
        );
        assert_eq!(
            serde_json::from_str::<EmbedRequest>(&json).unwrap(),
            request
        );
        assert_eq!(
            health.request("Miete", "a/e5").unwrap().model.as_deref(),
            Some("a/e5")
        );
        assert_eq!(health.request("Miete", "other/model"), None);
    }
}
