//! The HTTP server: routes, the embedding handler and graceful shutdown.
//!
//! A request for `POST /v1/embed` goes through, in order: the CORS check (cheap, refuses foreign pages), reading
//! the body under the byte limit, parsing and validating (the model asked for included), the per-client rate
//! limit, the cache, and only then the chosen model's scheduler, the concurrency gate (one for all models) and
//! the CPU-bound forward pass on tokio's blocking pool (see [`crate::embedder`]), so the async workers keep
//! accepting and refusing requests while both cores compute. The whole request runs under a timeout.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use paragraf_embed::EmbeddingBackend;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::api::{TextLimits, ValidRequest};
use crate::cache::VectorCache;
use crate::config::Config;
use crate::cors::{cors, CorsPolicy};
use crate::error::{ApiError, ServeError};
use crate::limit::{client_key, Gate, LogThrottle, RateLimiter, REFUSAL_LOG_INTERVAL};
use crate::models::{check_models, Served};
use crate::site::Site;
use paragraf_format::api::{EmbedResponse, Health, Payload, EMBED_PATH, HEALTH_PATH};

/// Version reported by `/health`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

struct AppState {
    config: Config,
    limits: TextLimits,
    limiter: Option<RateLimiter>,
    refusal_log: LogThrottle,
    cache: Arc<VectorCache>,
    models: Served,
    client_ip_header: Option<HeaderName>,
}

/// Builds the router for `backends` (checked, the default first; none: no endpoints) and `site` under
/// `config` (already validated).
fn router(config: Config, backends: Vec<Arc<dyn EmbeddingBackend>>, site: Option<Site>) -> Router {
    let policy = Arc::new(CorsPolicy::new(
        &config.allow_origins,
        config.dev,
        site.is_some(),
    ));
    let mut router = if backends.is_empty() {
        Router::new()
    } else {
        endpoints(config, backends)
    };
    router = match site {
        Some(site) => {
            let site = Arc::new(site);
            router.fallback(move |request: Request<Body>| Arc::clone(&site).serve(request))
        }
        None => router.fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
        }),
    };
    router.layer(axum::middleware::from_fn_with_state(policy, cors))
}

/// `/v1/embed` and `/health` for `backends` (at least one).
fn endpoints(config: Config, backends: Vec<Arc<dyn EmbeddingBackend>>) -> Router {
    let cache = Arc::new(VectorCache::new(config.cache_size));
    let gate = Arc::new(Gate::new(
        config.max_concurrency,
        config.max_queue,
        config.queue_timeout,
    ));
    let state = Arc::new(AppState {
        limits: TextLimits {
            max_chars: config.max_chars,
            max_batch: config.max_batch,
        },
        limiter: (config.rate_per_minute > 0)
            .then(|| RateLimiter::new(config.rate_per_minute, config.burst)),
        refusal_log: LogThrottle::new(REFUSAL_LOG_INTERVAL),
        models: Served::new(backends, &cache, &gate, config.pass_texts),
        cache,
        client_ip_header: config
            .client_ip_header
            .as_deref()
            .and_then(|h| HeaderName::try_from(h).ok()),
        config,
    });
    Router::new()
        .route(EMBED_PATH, post(embed))
        .route(HEALTH_PATH, get(health))
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed here",
            )
        })
        .with_state(state)
}

async fn health(State(state): State<Arc<AppState>>) -> Response {
    let default = state.models.default_model();
    Json(Health {
        status: "ok".to_owned(),
        model: default.model().to_string(),
        dim: default.dim(),
        models: state.models.infos(),
        version: VERSION.to_owned(),
        max_chars: state.config.max_chars,
        max_batch: state.config.max_batch,
    })
    .into_response()
}

/// What the handler learned, for the log line.
#[derive(Default)]
struct Outcome {
    texts: Vec<String>,
    /// The model that embedded them (empty until the request named a served one).
    model: Option<Arc<str>>,
    cache: &'static str,
    /// The client's rate-limit key when it was refused for going over its limit.
    rate_limited: Option<IpAddr>,
}

async fn embed(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let start = Instant::now();
    let mut outcome = Outcome::default();
    let timeout = state.config.request_timeout;
    let result = tokio::time::timeout(
        timeout,
        handle_embed(&state, peer, &headers, body, &mut outcome),
    )
    .await
    .unwrap_or_else(|_| {
        let message = format!("the request took longer than {} s", timeout.as_secs_f32());
        Err(ApiError::retry(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            message,
            1,
        ))
    });
    let response = result.unwrap_or_else(IntoResponse::into_response);
    let status = response.status().as_u16();
    let ms = (start.elapsed().as_secs_f64() * 1e4).round() / 10.0;
    let texts = outcome.texts.len();
    let model = outcome.model.as_deref().unwrap_or("-");
    if outcome.rate_limited.is_some() || response.status().is_client_error() {
        // Every refusal (rate limit, size, type, malformed body): one line per client per interval, however fast
        // it keeps coming (see `LogThrottle`).
        let client = outcome
            .rate_limited
            .unwrap_or_else(|| client_key(client_ip(&state, peer, &headers)));
        if let Some(refusals) = state.refusal_log.note(client) {
            tracing::info!(status, %client, refusals, "embed: refused");
        }
    } else if state.config.log_queries {
        tracing::info!(status, model, texts, cache = outcome.cache, ms, queries = ?outcome.texts, "embed");
    } else {
        tracing::info!(status, model, texts, cache = outcome.cache, ms, "embed");
    }
    response
}

async fn handle_embed(
    state: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
    body: Body,
    outcome: &mut Outcome,
) -> Result<Response, ApiError> {
    check_content_type(headers)?;
    let bytes = read_body(headers, body, state.config.max_body_bytes).await?;
    let request = ValidRequest::parse(&bytes, &state.limits)?;
    let embedder = state.models.pick(request.model.as_deref())?;
    let model = embedder.model();
    outcome.model = Some(Arc::clone(model));
    outcome.texts = request.texts;
    let texts = &outcome.texts;
    if let Some(limiter) = &state.limiter {
        let client = client_key(client_ip(state, peer, headers));
        let cost = u32::try_from(texts.len()).unwrap_or(u32::MAX);
        limiter.check(client, cost).map_err(|secs| {
            outcome.rate_limited = Some(client);
            ApiError::retry(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "too many requests from this client",
                secs,
            )
        })?;
    }

    let mut vectors: Vec<Option<Arc<[f32]>>> =
        texts.iter().map(|t| state.cache.get(model, t)).collect();
    let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
    outcome.cache = match missing.len() {
        0 => "hit",
        n if n == texts.len() => "miss",
        _ => "partial",
    };
    if !missing.is_empty() {
        let fresh = embedder
            .embed(missing.iter().map(|&i| texts[i].clone()).collect())
            .await?;
        for (i, vector) in missing.into_iter().zip(fresh) {
            vectors[i] = Some(vector);
        }
    }
    let vectors: Vec<Arc<[f32]>> = vectors
        .into_iter()
        .map(|v| v.expect("every text has a vector"))
        .collect();

    let body = EmbedResponse {
        model: model.to_string(),
        dim: embedder.dim(),
        payload: Payload::new(&vectors, request.batch, request.format),
    };
    let mut response = Json(body).into_response();
    let headers = response.headers_mut();
    headers.insert("x-cache", HeaderValue::from_static(outcome.cache));
    // Vectors reveal the query: no shared cache on the way may keep them.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Requiring JSON also forces browsers to send a CORS preflight before any cross-origin request.
fn check_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the request with Content-Type: application/json",
        ))
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("request body is larger than {limit} bytes"),
    )
}

/// Reads at most `limit` bytes; a declared or actual larger body is refused without reading it all.
async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<axum::body::Bytes, ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(too_large(limit));
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let over_limit = std::error::Error::source(&e).is_some_and(|source| {
            source
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
        });
        if over_limit {
            too_large(limit)
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "body_unreadable",
                "could not read the request body",
            )
        }
    })
}

/// The socket's address, or the one a trusted reverse proxy put in the configured header (for
/// `X-Forwarded-For`, the last entry: the address that proxy itself saw).
fn client_ip(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
    state
        .client_ip_header
        .as_ref()
        .and_then(|name| headers.get(name))
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.rsplit(',').next())
        .and_then(|last| last.trim().parse().ok())
        .unwrap_or(peer.ip())
}

/// The header timeout of connections accepted while fewer than a quarter of the connection slots are free.
pub const PRESSED_HEADER_TIMEOUT: Duration = Duration::from_millis(300);

/// A bound, not yet running proxy.
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    grace: Duration,
    header_timeout: Duration,
    max_connections: usize,
}

impl Server {
    /// Validates `config`, the models to serve (`backends`, the default first; each model id once; none only
    /// with a site) and the site's folders, binds the address and prepares the routes (call [`Server::run`] to
    /// serve).
    pub async fn bind(
        config: Config,
        backends: Vec<Arc<dyn EmbeddingBackend>>,
    ) -> Result<Server, ServeError> {
        config.validate()?;
        let ids: Vec<&str> = backends.iter().map(|b| b.model_id()).collect();
        if !(ids.is_empty() && config.site.is_some()) {
            check_models(&ids)?;
        }
        let site = config
            .site
            .as_ref()
            .map(|site| Site::open(site, !ids.is_empty(), config.max_concurrency))
            .transpose()?;
        let addr = config.bind;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local_addr = listener.local_addr()?;
        Ok(Server {
            listener,
            local_addr,
            grace: config.shutdown_grace,
            header_timeout: config.header_timeout,
            max_connections: config.max_connections,
            router: router(config, backends, site),
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then stops listening, lets requests in flight finish for at most the
    /// grace period, and returns.
    ///
    /// The accept loop is our own (not `axum::serve`) for two protections a public server needs: at most
    /// `max_connections` open connections (beyond that, new ones wait in the kernel's backlog), and a header
    /// timeout that closes connections which send their request head too slowly or sit idle between
    /// keep-alive requests, so slow or silent clients cannot pile up connections.
    ///
    /// Idle connections that reopen as they close could still hold every slot for a header timeout each and
    /// make `/health` wait that long in the backlog. So once fewer than a quarter of the slots are free, a new
    /// connection gets a short header timeout (`PRESSED_HEADER_TIMEOUT`, 300 ms, at most): the slots of silent
    /// clients turn over quickly, and a real request, which sends its head at once, is answered.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<(), ServeError> {
        let graceful = GracefulShutdown::new();
        let slots = Arc::new(Semaphore::new(self.max_connections));
        let builder = |timeout: Duration| {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(timeout)
                .keep_alive(true);
            http
        };
        let relaxed = builder(self.header_timeout);
        let pressed = builder(self.header_timeout.min(PRESSED_HEADER_TIMEOUT));
        tokio::pin!(shutdown);
        loop {
            let slot = tokio::select! {
                slot = Arc::clone(&slots).acquire_owned() => slot.expect("the slot semaphore is never closed"),
                () = &mut shutdown => break,
            };
            let http = if slots.available_permits() * 4 < self.max_connections {
                &pressed
            } else {
                &relaxed
            };
            let (stream, peer) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Typically out of file descriptors: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let router = self.router.clone();
            let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(request.map(Body::new))
            });
            let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
            tokio::spawn(async move {
                let _slot = slot;
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "connection closed with an error");
                }
            });
        }
        drop(self.listener);
        tracing::info!("shutting down: no new connections, finishing requests in flight");
        if tokio::time::timeout(self.grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                grace_s = self.grace.as_secs_f32(),
                "grace period over; dropping open requests"
            );
        }
        Ok(())
    }
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM (systemd, docker stop).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// Runs the proxy for `backends` (the default first) on its own runtime until SIGINT/SIGTERM; `on_ready` gets
/// the bound address once listening.
pub fn run_blocking(
    config: Config,
    backends: Vec<Arc<dyn EmbeddingBackend>>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = Server::bind(config, backends).await?;
        on_ready(server.local_addr());
        server.run(shutdown_signal()).await
    })
}
