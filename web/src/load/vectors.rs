//! Where a search's query vector comes from: the proxy (asked for the bundle's model by name) or the in-browser
//! encoder, and why there is none.

use std::rc::Rc;

use futures::future::FutureExt;
use leptos::prelude::*;
use paragraf_engine::Mode;
use paragraf_format::api::{EmbedRequest, EmbedResponse, Health, EMBED_PATH, HEALTH_PATH};

use crate::encoder::BrowserEncoder;
use crate::failure::Failure;
use crate::fetch;
use crate::shared::{shared, SharedAnswers};

/// Where a search's query vector came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Embedded {
    /// The model that computed it (the bundle's, as the proxy's answer says).
    pub model: String,
    /// Time for the request, ms.
    pub ms: f64,
    /// Who computed it.
    pub source: VectorSource,
    /// Tokens the in-browser encoder read (after truncation); `None` from the proxy.
    pub tokens: Option<usize>,
}

/// Who computed a query vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorSource {
    /// The query-embedding proxy.
    Server,
    /// The in-browser encoder (Web Worker).
    Browser,
}

/// What may compute the query vector of one search.
pub struct VectorSources {
    /// The proxy's address.
    pub proxy_url: String,
    /// Its health, when it may be asked.
    pub proxy: Option<Result<Health, Failure>>,
    /// The in-browser encoder, when it may be used and finished loading (or failed to).
    pub browser: Option<Result<Rc<BrowserEncoder>, Failure>>,
    /// Whether the in-browser encoder is wanted (then its absence means it is still loading).
    pub browser_wanted: bool,
}

thread_local! {
    /// The last query vector asked of the proxy, arrived or arriving: a search run twice (or asked ahead, see
    /// [`super::run_federal_search`]) asks once.
    static LAST_VECTOR: SharedAnswers<VectorKey, (Vec<f32>, Embedded)> = const { SharedAnswers::new(1) };
}

/// Which query vector: proxy address, model, query.
type VectorKey = (String, String, String);

pub(super) fn parse_proxy_answer<'a, T: serde::Deserialize<'a>>(
    url: &str,
    text: &'a str,
) -> Result<T, Failure> {
    serde_json::from_str(text).map_err(|e| Failure::ProxyAnswer {
        url: url.to_string(),
        detail: e.to_string(),
    })
}

/// An endpoint of the proxy at `url` (the paths in `api` are absolute; the proxy may live in a subfolder).
pub(super) fn endpoint(url: &str, path: &str) -> String {
    crate::join_url(url, path.trim_start_matches('/'))
}

/// The models the proxy serves (`GET /health`).
pub async fn proxy(url: String) -> Result<Health, Failure> {
    let health = endpoint(&url, HEALTH_PATH);
    let text = fetch::text(&health, &format!("Einbettungsdienst {url}")).await?;
    parse_proxy_answer(&url, &text)
}

/// The query vector and the model that computed it (`POST /v1/embed`).
pub(super) async fn embed(
    url: &str,
    request: &EmbedRequest,
) -> Result<(String, Vec<f32>), Failure> {
    let body = serde_json::to_string(request).expect("a request serialises");
    let text = fetch::post_json(
        &endpoint(url, EMBED_PATH),
        &body,
        &format!("Einbettungsdienst {url}"),
    )
    .await?;
    let answer: EmbedResponse = parse_proxy_answer(url, &text)?;
    let mut vectors = answer.payload.into_f32();
    match vectors.len() {
        1 => Ok((answer.model, vectors.remove(0))),
        n => Err(Failure::ProxyAnswer {
            url: url.to_string(),
            detail: format!("{n} Vektoren für eine Anfrage"),
        }),
    }
}

/// The query vector for a dense or hybrid search, computed by the bundle's model (the proxy is asked for it by
/// name), or why there is none.
pub(super) async fn query_vector(
    query: &str,
    bundle_model: &str,
    proxy_url: &str,
    proxy: Result<Health, Failure>,
) -> Result<(Vec<f32>, Embedded), Failure> {
    let info = proxy?;
    let mismatch = |served: Vec<String>| Failure::ModelMismatch {
        served,
        bundle: bundle_model.to_string(),
    };
    let request = info
        .request(query, bundle_model)
        .ok_or_else(|| mismatch(info.served_ids()))?;
    let key = (
        proxy_url.to_string(),
        bundle_model.to_string(),
        query.to_string(),
    );
    let (url, bundle_model) = (proxy_url.to_string(), bundle_model.to_string());
    // The time is the request's, also for a search that found it asked (ahead, or by its first run).
    shared(&LAST_VECTOR, key, move || {
        async move {
            let t0 = fetch::now_ms();
            let (model, vector) = embed(&url, &request).await?;
            if model != bundle_model {
                return Err(Failure::ModelMismatch {
                    served: vec![model],
                    bundle: bundle_model,
                });
            }
            let embedded = Embedded {
                model,
                ms: fetch::now_ms() - t0,
                source: VectorSource::Server,
                tokens: None,
            };
            Ok((vector, embedded))
        }
        .boxed_local()
    })
    .await
}

/// The query vector from the in-browser encoder, when its model is the bundle's.
pub(super) async fn browser_vector(
    query: &str,
    bundle_model: &str,
    encoder: &BrowserEncoder,
) -> Result<(Vec<f32>, Embedded), Failure> {
    let model = encoder.entry.model.clone();
    if model != bundle_model {
        return Err(Failure::ModelMismatch {
            served: vec![model],
            bundle: bundle_model.to_string(),
        });
    }
    let t0 = fetch::now_ms();
    let embedding = encoder.embed(query).await?;
    let (source, tokens) = (VectorSource::Browser, Some(embedding.tokens));
    let ms = fetch::now_ms() - t0;
    Ok((
        embedding.vector,
        Embedded {
            model,
            ms,
            source,
            tokens,
        },
    ))
}

/// The query vector: the proxy's when it works, else the in-browser encoder's; or the last reason there is
/// none (`None` as reason: the in-browser encoder is still loading, and the search runs again once it is ready).
pub(super) async fn any_vector(
    query: &str,
    bundle_model: &str,
    sources: VectorSources,
) -> Result<(Vec<f32>, Embedded), Option<Failure>> {
    let mut problem = None;
    if let Some(proxy) = sources.proxy {
        match query_vector(query, bundle_model, &sources.proxy_url, proxy).await {
            Ok(found) => return Ok(found),
            Err(failure) => problem = Some(failure),
        }
    }
    // A worker of another model (e5 next to EmbeddingGemma bundles) says so only when nothing else failed.
    let other_model = |e: &BrowserEncoder| e.entry.model != bundle_model && problem.is_some();
    match sources.browser {
        Some(Ok(encoder)) if other_model(&encoder) => Err(problem),
        Some(Ok(encoder)) => browser_vector(query, bundle_model, &encoder)
            .await
            .map_err(Some),
        Some(Err(failure)) => Err(Some(failure)),
        None if sources.browser_wanted => Err(None),
        None => Err(problem),
    }
}

/// The query vector of a dense or hybrid search over vectors of `model` (`None`: nothing to embed for), and who
/// computed it. Without one the search falls back to BM25 and `proxy_problem` says why; only a dense search
/// against a model mismatch is refused (BM25 results would pretend to be dense).
pub(super) async fn search_vector(
    query: &str,
    mode: Mode,
    model: Option<&str>,
    sources: VectorSources,
    proxy_problem: RwSignal<Option<Failure>>,
) -> Result<(Option<Vec<f32>>, Option<Embedded>), Failure> {
    let Some(model) = model.filter(|_| mode != Mode::Bm25) else {
        return Ok((None, None));
    };
    let found = any_vector(query, model, sources).await;
    let problem = found.as_ref().err().cloned().flatten();
    if proxy_problem.get_untracked() != problem {
        proxy_problem.set(problem.clone());
    }
    if let Some(failure @ Failure::ModelMismatch { .. }) = problem.filter(|_| mode == Mode::Dense) {
        return Err(failure);
    }
    Ok(found.map_or((None, None), |(v, source)| (Some(v), Some(source))))
}
