//! Runs forward passes for cache misses: behind the concurrency gate, on the blocking pool, coalescing the misses
//! of concurrent requests into shared passes.
//!
//! Why coalesce: for a short query the encoder spends most of its time streaming its ~85 MB of weights through
//! the caches, and it streams them once per pass however many texts the pass holds. Under load, requests that
//! wait for a slot are therefore not run one by one: whoever gets a slot takes up to `pass_texts` waiting texts
//! (its own and other requests', oldest first) into one pass and hands every text's vector to its requester.
//! A lone request still runs alone, at once, so coalescing adds no latency when the server is idle.
//!
//! The pass runs to completion on the blocking pool even if the request that started it goes away (timeout,
//! client gone): the other requesters are still waiting for their vectors, and the results go into the cache.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use paragraf_embed::{EmbeddingBackend, TextKind};
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use crate::cache::VectorCache;
use crate::error::ApiError;
use crate::limit::{Busy, Gate};

/// What a text's requester gets back; errors are cloned to every text of a failed pass.
type Reply = Result<Arc<[f32]>, PassFailed>;

/// A forward pass failed (the details are logged once, not sent to clients).
#[derive(Clone, Copy, Debug)]
struct PassFailed;

struct Job {
    id: u64,
    text: String,
    reply: oneshot::Sender<Reply>,
}

/// The forward-pass scheduler of one model, shared by all requests for it; the schedulers of all models share
/// one gate (the cores are the machine's, whichever model computes).
pub struct Embedder {
    backend: Arc<dyn EmbeddingBackend>,
    /// The backend's model id, the cache's key space.
    model: Arc<str>,
    cache: Arc<VectorCache>,
    gate: Arc<Gate>,
    pending: Mutex<VecDeque<Job>>,
    pass_texts: usize,
    next_id: AtomicU64,
}

fn busy(reason: Busy) -> ApiError {
    let message = match reason {
        Busy::QueueFull => "the server is busy (too many requests waiting); retry shortly",
        Busy::Timeout => {
            "the server is busy (no embedding slot became free in time); retry shortly"
        }
    };
    ApiError::retry(StatusCode::SERVICE_UNAVAILABLE, "busy", message, 1)
}

fn failed() -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "embedding_failed",
        "embedding failed",
    )
}

impl Embedder {
    /// A scheduler running passes of at most `pass_texts` texts, each holding one of `gate`'s permits.
    pub fn new(
        backend: Arc<dyn EmbeddingBackend>,
        cache: Arc<VectorCache>,
        gate: Arc<Gate>,
        pass_texts: usize,
    ) -> Self {
        Embedder {
            model: Arc::from(backend.model_id()),
            backend,
            cache,
            gate,
            pending: Mutex::new(VecDeque::new()),
            pass_texts: pass_texts.max(1),
            next_id: AtomicU64::new(0),
        }
    }

    /// The model id this scheduler embeds with.
    pub fn model(&self) -> &Arc<str> {
        &self.model
    }

    /// The model's vector dimension.
    pub fn dim(&self) -> usize {
        self.backend.dim()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Job>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Query vectors for `texts` (cache misses), in order; stores them in the cache.
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Arc<[f32]>>, ApiError> {
        let mut ids = HashSet::with_capacity(texts.len());
        let mut receivers = Vec::with_capacity(texts.len());
        {
            let mut pending = self.lock();
            for text in texts {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                let (reply, receiver) = oneshot::channel();
                pending.push_back(Job { id, text, reply });
                ids.insert(id);
                receivers.push(receiver);
            }
        }
        let replies = async move {
            let mut vectors = Vec::with_capacity(receivers.len());
            for receiver in receivers {
                // A dropped sender means the pass panicked; treat it as a failed pass.
                vectors.push(receiver.await.unwrap_or(Err(PassFailed)));
            }
            vectors
        };
        tokio::pin!(replies);
        loop {
            if !self.lock().iter().any(|job| ids.contains(&job.id)) {
                // Every text of ours is in a pass already: wait for the vectors without taking a place in the
                // gate's queue (or a slot) that a request with work left could use.
                return collect((&mut replies).await);
            }
            tokio::select! {
                // Replies first: a request whose vectors are ready should not start another pass.
                biased;
                vectors = &mut replies => return collect(vectors),
                permit = self.gate.acquire() => match permit {
                    Ok(permit) => self.run_pass(permit).await,
                    Err(reason) => {
                        let withdrawn = {
                            let mut pending = self.lock();
                            let before = pending.len();
                            pending.retain(|job| !ids.contains(&job.id));
                            pending.len() < before
                        };
                        if withdrawn {
                            // Some of our texts were never started: give up on all of them.
                            return Err(busy(reason));
                        }
                        // All our texts are in passes already running: their vectors are on the way.
                        return collect((&mut replies).await);
                    }
                },
            }
        }
    }

    /// Takes up to `pass_texts` waiting texts and embeds them in one pass on the blocking pool, holding `permit`
    /// for exactly as long as the pass computes.
    async fn run_pass(&self, permit: OwnedSemaphorePermit) {
        let jobs: Vec<Job> = {
            let mut pending = self.lock();
            // Requesters that went away need no vector.
            pending.retain(|job| !job.reply.is_closed());
            let take = pending.len().min(self.pass_texts);
            pending.drain(..take).collect()
        };
        if jobs.is_empty() {
            return;
        }
        let backend = Arc::clone(&self.backend);
        let cache = Arc::clone(&self.cache);
        let model = Arc::clone(&self.model);
        let pass = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let texts: Vec<&str> = jobs.iter().map(|job| job.text.as_str()).collect();
            let result = backend.embed(&texts, TextKind::Query);
            let dim = backend.dim();
            let vectors = match result {
                Ok(vectors)
                    if vectors.len() == jobs.len() && vectors.iter().all(|v| v.len() == dim) =>
                {
                    vectors
                }
                Ok(vectors) => {
                    tracing::error!(
                        model = &*model,
                        expected = jobs.len(),
                        got = vectors.len(),
                        dim,
                        "embedding backend returned the wrong shape"
                    );
                    jobs.into_iter()
                        .for_each(|job| drop(job.reply.send(Err(PassFailed))));
                    return;
                }
                Err(e) => {
                    tracing::error!(model = &*model, error = %e, "embedding backend failed");
                    jobs.into_iter()
                        .for_each(|job| drop(job.reply.send(Err(PassFailed))));
                    return;
                }
            };
            for (job, vector) in jobs.into_iter().zip(vectors) {
                let vector: Arc<[f32]> = Arc::from(vector);
                cache.put(&model, &job.text, Arc::clone(&vector));
                // The requester may be gone; the vector is cached all the same.
                let _ = job.reply.send(Ok(vector));
            }
        });
        // Waiting here keeps this request from grabbing another slot before its pass is done; if the request is
        // dropped meanwhile, the pass still finishes and replies on its own.
        if let Err(e) = pass.await {
            tracing::error!(error = %e, "embedding pass panicked");
        }
    }
}

fn collect(replies: Vec<Reply>) -> Result<Vec<Arc<[f32]>>, ApiError> {
    replies
        .into_iter()
        .map(|v| v.map_err(|PassFailed| failed()))
        .collect()
}
