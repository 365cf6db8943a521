//! Building through an embedding server farm: several OpenAI-compatible endpoints (for example Hugging Face
//! Text Embeddings Inference instances, or one load balancer) that serve the model the bundles are built with.
//!
//! The bundles record the model of the local encoder (`--model`), because that is what embeds the questions later
//! (the proxy, the browser's worker): vectors of different models are never compared. So an endpoint is only
//! used after it proved to serve that model: [`FarmBackend::connect`] embeds [`PROBES`] with every endpoint and
//! with the local encoder and refuses an endpoint whose vectors differ (cosine below [`MIN_AGREEMENT`]: another
//! model, missing e5 prefixes, another Matryoshka size), naming it and the cosine it reached.
//!
//! Batches are handed out to the endpoints from one queue, one worker thread per endpoint, so a fast server takes
//! more of them. An endpoint that fails a batch after its own retries ([`crate::http`]) is dropped for the rest of
//! the call and its batch goes to the others; the call fails only when every endpoint has failed, with each
//! endpoint's reason.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::http::{HttpBackend, HttpConfig};
use crate::{EmbedError, EmbeddingBackend, TextKind};

/// Passages every endpoint embeds before it is used, next to the local encoder.
pub const PROBES: [&str; 3] = [
    "Der Mieter ist verpflichtet, dem Vermieter die vereinbarte Miete zu entrichten.",
    "Die Würde des Menschen ist unantastbar.",
    "Wer eine fremde bewegliche Sache einem anderen in der Absicht wegnimmt, sich diese rechtswidrig zuzueignen, wird bestraft.",
];

/// Lowest cosine between an endpoint's probe vector and the local encoder's that counts as the same model. The
/// same weights in another precision (the local e5 is 4-bit, a server's f32) agree above 0.98; another model, or
/// the same model without its `passage: ` prefix, falls below.
pub const MIN_AGREEMENT: f32 = 0.97;

/// Several endpoints serving the local encoder's model; see the module docs.
pub struct FarmBackend {
    endpoints: Vec<HttpBackend>,
    model_id: String,
    cache_id: String,
    dim: usize,
    batch: usize,
}

impl FarmBackend {
    /// Connects to every endpoint (`configs`, one per base URL) and checks it against `local`: the bundles'
    /// model id and width stay `local`'s.
    pub fn connect(
        configs: Vec<HttpConfig>,
        local: &dyn EmbeddingBackend,
    ) -> Result<FarmBackend, EmbedError> {
        let reference = local.embed(&PROBES, TextKind::Passage)?;
        let mut endpoints = Vec::with_capacity(configs.len());
        let batch = configs.first().map_or(64, |c| c.batch_size.max(1));
        for cfg in configs {
            let url = cfg.base_url.clone();
            let endpoint = HttpBackend::with_dim(cfg, local.dim());
            let refused = |detail: String| EmbedError::FarmRefused {
                url: url.clone(),
                model: local.model_id().to_string(),
                detail,
            };
            let probed = endpoint.embed(&PROBES, TextKind::Passage).map_err(|e| {
                refused(match e {
                    EmbedError::HttpResponse { detail, .. } => detail,
                    other => other.to_string(),
                })
            })?;
            let agreement = probed
                .iter()
                .zip(&reference)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
                .fold(f32::INFINITY, f32::min);
            if agreement < MIN_AGREEMENT {
                return Err(refused(format!(
                    "its vectors of the probe passages agree with the local encoder's only to cosine {agreement:.3} (at least {MIN_AGREEMENT} needed). Most likely it serves another model, or it needs the e5 prefixes (--embed-prefixes)"
                )));
            }
            endpoints.push(endpoint);
        }
        if endpoints.is_empty() {
            return Err(EmbedError::Fetch("no embedding endpoint given".into()));
        }
        Ok(FarmBackend {
            endpoints,
            model_id: local.model_id().to_string(),
            // Vectors computed elsewhere are cached apart from the local encoder's: they are the same model
            // within MIN_AGREEMENT, not bit for bit.
            cache_id: format!("{}+farm", local.cache_id()),
            dim: local.dim(),
            batch,
        })
    }

    /// Endpoints in use.
    pub fn endpoints(&self) -> usize {
        self.endpoints.len()
    }
}

impl EmbeddingBackend for FarmBackend {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn cache_id(&self) -> String {
        self.cache_id.clone()
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let batches: Vec<&[&str]> = texts.chunks(self.batch).collect();
        let queue = Mutex::new((0..batches.len()).collect::<VecDeque<usize>>());
        let done: Mutex<Vec<Option<Vec<Vec<f32>>>>> = Mutex::new(vec![None; batches.len()]);
        let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let alive = Mutex::new(vec![true; self.endpoints.len()]);
        // Rounds: a batch an endpoint failed goes back to the queue, and the endpoints still alive take it up
        // (in this round, or the next when they had already found the queue empty).
        while !queue.lock().expect("queue").is_empty() {
            let serving: Vec<usize> = (0..self.endpoints.len())
                .filter(|&e| alive.lock().expect("alive")[e])
                .collect();
            if serving.is_empty() {
                break;
            }
            std::thread::scope(|scope| {
                for e in serving {
                    let (queue, done, failures, alive) = (&queue, &done, &failures, &alive);
                    let (endpoint, batches) = (&self.endpoints[e], &batches);
                    scope.spawn(move || loop {
                        let Some(b) = queue.lock().expect("queue").pop_front() else {
                            return;
                        };
                        match endpoint.embed(batches[b], kind) {
                            Ok(vectors) => done.lock().expect("results")[b] = Some(vectors),
                            Err(error) => {
                                alive.lock().expect("alive")[e] = false;
                                queue.lock().expect("queue").push_back(b);
                                failures.lock().expect("failures").push(error.to_string());
                                return;
                            }
                        }
                    });
                }
            });
        }
        let done = done.into_inner().expect("results");
        if done.iter().any(Option::is_none) {
            return Err(EmbedError::FarmFailed {
                endpoints: self.endpoints.len(),
                reasons: failures.into_inner().expect("failures").join("; "),
            });
        }
        Ok(done.into_iter().flatten().flatten().collect())
    }
}
