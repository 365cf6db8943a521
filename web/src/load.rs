//! Everything the app fetches and computes: the manifest, law and strategy bundles, the index across laws and the
//! law finder's topics (each verified against the manifest before decoding), the proxy's health and query
//! vectors, the evaluation report, and a search over what is loaded. Plain async functions over plain values;
//! `context` wires them to signals.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use futures::future::FutureExt;
use leptos::prelude::*;
use paragraf_core::federal::files::{FederalHead, FederalVectors};
use paragraf_core::finder::TopicsFile;
use paragraf_core::manifest::{
    self, BundleEntry, FederalEntry, LawEntry, LearnedEntry, Listed, Manifest, MANIFEST,
};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::expansion::{ThesaurusEntry, ThesaurusFile};
use paragraf_engine::learning::{LearnedFile, Provenance};
use paragraf_engine::{
    self as engine, LawIndex, Mode, SearchOptions, SearchOutcome, StrategyIndex, UnitSearch,
};
use paragraf_eval::report::Report;
use paragraf_format::api::{EmbedRequest, EmbedResponse, Health, EMBED_PATH, HEALTH_PATH};
use paragraf_index::bm25::PostingShard;
use paragraf_law::definitions::LawDefinitions;
use paragraf_law::Law;

use crate::encoder::BrowserEncoder;
use crate::failure::{BundleKind, BundleProblem, Failure};
use crate::fetch;
use crate::shared::{shared, SharedAnswers};

/// A loaded law.
pub struct LoadedLaw {
    pub entry: LawEntry,
    /// The law's index, with its query-expansion table when the thesaurus file loaded.
    pub index: LawIndex,
    /// Time to check the bytes against the manifest (size and SHA-256), ms.
    pub verify_ms: f64,
    /// Query expansion: `None` when the manifest lists no thesaurus file, else the file's number of words or why
    /// it could not be used (then the law is searched without expansion).
    pub expansions: Option<Result<usize, Failure>>,
    /// What was learned from past questions: `None` when the manifest lists nothing learned for this law, else
    /// where it was learned from, or why it could not be used (then the law is ranked unlearned).
    pub learned: Option<Result<Provenance, Failure>>,
    /// The law's statutory definitions, for the terms marked in results.
    pub definitions: LawDefinitions,
}

/// A loaded strategy bundle.
pub struct LoadedStrategy {
    pub entry: BundleEntry,
    pub index: StrategyIndex,
    /// Time to check the bytes against the manifest (size and SHA-256), ms.
    pub verify_ms: f64,
}

/// A finished search.
pub struct Outcome {
    pub law: Rc<LoadedLaw>,
    /// `None`: the law has no strategy bundle (built with `--strategies none`) and BM25 ran over its sections.
    pub strategy: Option<Rc<LoadedStrategy>>,
    /// What the engine found, and how: the page shows the mode and unit search that ran, as the engine says.
    pub search: SearchOutcome,
    /// Expansion words the user removed for this search.
    pub without: Vec<String>,
    /// Running number of finished searches, on the page as `data-search` (the DOM may be patched in place, so
    /// this is how a reader tells one result list from the next).
    pub number: u32,
    /// Core search time in the browser (ms).
    pub retrieval_ms: f64,
    /// The query vector's model and the time it took (ms), when one was fetched.
    pub embedded: Option<Embedded>,
    /// The citation-graph weight applied (0: off).
    pub graph_weight: f32,
    /// The Absätze and Sätze the query cites (`§ 551 Abs. 2`): section and byte range, marked and scrolled to.
    pub cited_units: Vec<(usize, std::ops::Range<usize>)>,
}

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

/// Download progress of a bundle: (label, bytes so far, total).
pub type Progress = Option<(String, u64, u64)>;

/// The manifest of a bundle folder.
pub async fn manifest(data: String) -> Result<Rc<Manifest>, Failure> {
    let url = crate::join_url(&data, MANIFEST);
    let text = fetch::text(&url, &format!("Bündelliste {url}")).await?;
    let manifest = Manifest::parse(text.as_bytes()).map_err(|error| Failure::Manifest {
        url: url.clone(),
        error,
    })?;
    if manifest.laws.is_empty() {
        return Err(Failure::NoLaws { url });
    }
    Ok(Rc::new(manifest))
}

/// Downloads a file the manifest lists and checks it against its entry (size, then SHA-256: the browser's digest,
/// which runs off the page's main thread) before anyone decodes it, then yields, so that the decoding is a task of
/// its own. Returns the bytes and the time the check took (ms).
async fn verified_listed(
    data: &str,
    kind: BundleKind,
    listed: &impl Listed,
    label: &str,
    progress: RwSignal<Progress>,
) -> Result<(Vec<u8>, f64), Failure> {
    let file = listed.file();
    let url = crate::join_url(data, file);
    let bytes = fetch::bytes(
        &url,
        &format!("{} {file}", kind.label()),
        listed.size(),
        |done, total| progress.set(Some((label.to_string(), done, total))),
    )
    .await;
    progress.set(None);
    let bytes = bytes?;
    let t0 = fetch::now_ms();
    let mismatch = |e| bundle_failure(kind, file, BundleProblem::Mismatch(e));
    manifest::verify_size(file, bytes.len(), listed.size()).map_err(mismatch)?;
    let found = fetch::sha256_hex(&bytes).await;
    manifest::verify_sha256(file, &found, listed.sha256()).map_err(mismatch)?;
    let verify_ms = fetch::now_ms() - t0;
    fetch::yield_to_browser().await;
    Ok((bytes, verify_ms))
}

/// Decodes verified bytes (freeing them before anything else is built) and checks that the bundle records what
/// its manifest entry lists (law, strategy, model).
fn decode_checked<B>(
    kind: BundleKind,
    file: &str,
    bytes: Vec<u8>,
    decode: impl FnOnce(&[u8]) -> Result<B, BundleProblem>,
    check: impl FnOnce(&B) -> Result<(), manifest::ManifestError>,
) -> Result<B, Failure> {
    let bundle = decode(&bytes).map_err(|problem| bundle_failure(kind, file, problem))?;
    drop(bytes);
    check(&bundle).map_err(|e| bundle_failure(kind, file, BundleProblem::Mismatch(e)))?;
    Ok(bundle)
}

fn bundle_failure(kind: BundleKind, file: &str, problem: BundleProblem) -> Failure {
    Failure::Bundle {
        kind,
        file: file.to_string(),
        problem,
    }
}

thread_local! {
    /// Decoded files by name while anyone holds them. Names are content hashes, so a name is one content. A
    /// resource runs a second time when a resource it awaited arrived during its run (the reactive graph's rule):
    /// it then gets the value of the first run instead of fetching, verifying and decoding the file again.
    static DECODED: RefCell<HashMap<String, Weak<dyn Any>>> = RefCell::new(HashMap::new());
    /// The last query vector asked of the proxy, arrived or arriving: a search run twice (or asked ahead, see
    /// [`run_federal_search`]) asks once.
    static LAST_VECTOR: SharedAnswers<VectorKey, (Vec<f32>, Embedded)> = const { SharedAnswers::new(1) };
    /// The folder's thesaurus file, which every law's expansion table is built from: fetched once for all laws.
    static THESAURUS: SharedAnswers<String, Arc<ThesaurusFile>> = const { SharedAnswers::new(1) };
}

/// Which query vector: proxy address, model, query.
type VectorKey = (String, String, String);

/// The value decoded from `file` earlier, if anyone still holds it.
fn decoded<T: 'static>(file: &str) -> Option<Rc<T>> {
    let held = DECODED.with(|d| d.borrow().get(file).and_then(Weak::upgrade))?;
    held.downcast::<T>().ok()
}

/// Records the value decoded from `file` for [`decoded`] (forgetting values nobody holds any more).
fn remember<T: 'static>(file: &str, value: &Rc<T>) {
    let weak: Weak<dyn Any> = Rc::downgrade(value) as Weak<dyn Any>;
    DECODED.with(|d| {
        let mut d = d.borrow_mut();
        d.retain(|_, w| w.strong_count() > 0);
        d.insert(file.to_string(), weak);
    });
}

/// The law named `law` (or the manifest's first).
pub async fn law(
    data: String,
    manifest: Rc<Manifest>,
    law: String,
    progress: RwSignal<Progress>,
) -> Result<Rc<LoadedLaw>, Failure> {
    let entry = manifest
        .law_or_first(&law)
        .cloned()
        .ok_or_else(|| Failure::NoLaws {
            url: crate::join_url(&data, MANIFEST),
        })?;
    if let Some(loaded) = decoded::<LoadedLaw>(&entry.file) {
        return Ok(loaded);
    }
    let kind = BundleKind::Law;
    let label = format!("Gesetz {}", entry.law);
    // The thesaurus file (the same for every law of the folder) comes alongside the law, its progress unshown.
    let listed = manifest
        .expansions
        .as_ref()
        .and_then(|e| e.built())
        .cloned();
    let thesaurus_file = async {
        match listed {
            Some(listed) => Some(thesaurus(data.clone(), listed, RwSignal::new(None)).await),
            None => None,
        }
    };
    // So does the learned file of this law, if the folder has one.
    let learned_entry = manifest
        .learned
        .as_ref()
        .filter(|l| l.law == entry.law)
        .cloned();
    let learned_file = async {
        match learned_entry {
            Some(listed) => Some(learned(&data, listed).await),
            None => None,
        }
    };
    let (law_bytes, thesaurus_file, learned_file) = futures::join!(
        verified_listed(&data, kind, &entry, &label, progress),
        thesaurus_file,
        learned_file
    );
    let (bytes, verify_ms) = law_bytes?;
    // The thesaurus and learned files may have been decoded in this task: the law gets one of its own.
    fetch::yield_to_browser().await;
    let bundle = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| LawBundle::from_bytes(b).map_err(BundleProblem::Decode),
        |b| entry.check_law(&entry.file, &b.law),
    )?;
    let index = LawIndex::from_bundle(bundle);
    fetch::yield_to_browser().await;
    // A broken thesaurus file costs the expansion, not the law: the failure is shown and BM25 runs unexpanded.
    let table = thesaurus_file.map(|file| {
        let (file, name) = file?;
        index.expansion_table(&file).map_err(|e| {
            bundle_failure(BundleKind::Expansions, &name, BundleProblem::Expansions(e))
        })
    });
    let (index, expansions) = match table {
        Some(Ok(table)) => {
            let terms = table.file().thesaurus.len();
            (index.with_expansions(table), Some(Ok(terms)))
        }
        Some(Err(failure)) => (index, Some(Err(failure))),
        None => (index, None),
    };
    fetch::yield_to_browser().await;
    // A broken or foreign learned file costs the learning, not the law.
    let (index, learned) = match learned_file {
        Some(Ok((file, name))) => match file.resolve(&index.law) {
            Ok((learning, _)) => {
                let provenance = learning.provenance.clone();
                (index.with_learning(learning), Some(Ok(provenance)))
            }
            Err(e) => {
                let failure = bundle_failure(BundleKind::Learned, &name, BundleProblem::Learned(e));
                (index, Some(Err(failure)))
            }
        },
        Some(Err(failure)) => (index, Some(Err(failure))),
        None => (index, None),
    };
    fetch::yield_to_browser().await;
    let loaded = Rc::new(LoadedLaw {
        definitions: LawDefinitions::new(&index.law),
        index,
        entry,
        verify_ms,
        expansions,
        learned,
    });
    remember(&loaded.entry.file, &loaded);
    Ok(loaded)
}

/// A law's learned file (`learned.<hash>.pgb`), verified and decoded, with its name.
async fn learned(data: &str, listed: LearnedEntry) -> Result<(LearnedFile, String), Failure> {
    let kind = BundleKind::Learned;
    let name = listed.file.file.clone();
    let (bytes, _) =
        verified_listed(data, kind, &listed.file, "Gelerntes", RwSignal::new(None)).await?;
    let file = decode_checked(
        kind,
        &name,
        bytes,
        |b| LearnedFile::from_bytes(b).map_err(BundleProblem::Learned),
        |_| Ok(()),
    )?;
    Ok((file, name))
}

/// The folder's thesaurus file (`thesaurus.<hash>.pgb`), verified and decoded once for all laws, with its name.
async fn thesaurus(
    data: String,
    listed: ThesaurusEntry,
    progress: RwSignal<Progress>,
) -> Result<(Arc<ThesaurusFile>, String), Failure> {
    let file = listed.file.clone();
    let name = file.clone();
    let decoded = shared(&THESAURUS, file.clone(), move || {
        async move {
            let kind = BundleKind::Expansions;
            let (bytes, _) =
                verified_listed(&data, kind, &listed, "Synonymtabelle", progress).await?;
            let decoded = decode_checked(
                kind,
                &file,
                bytes,
                |b| ThesaurusFile::from_bytes(b).map_err(BundleProblem::Expansions),
                |_| Ok(()),
            )?;
            Ok(Arc::new(decoded))
        }
        .boxed_local()
    })
    .await?;
    Ok((decoded, name))
}

/// The strategy bundle named `strategy` of the loaded law (or its `section` or first bundle); `None` when the
/// law has none (a folder built with `--strategies none`: its sections are searched with BM25 alone).
pub async fn strategy(
    data: String,
    manifest: Rc<Manifest>,
    law: Rc<LoadedLaw>,
    strategy: String,
    progress: RwSignal<Progress>,
) -> Result<Option<Rc<LoadedStrategy>>, Failure> {
    let Some(entry) = manifest.bundle(&law.entry.law, &strategy).cloned() else {
        return Ok(None);
    };
    if let Some(loaded) = decoded::<LoadedStrategy>(&entry.file) {
        return Ok(Some(loaded));
    }
    let kind = BundleKind::Strategy;
    let label = format!("Strategie {}", entry.strategy);
    let (bytes, verify_ms) = verified_listed(&data, kind, &entry, &label, progress).await?;
    let bundle = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| StrategyBundle::from_bytes(b).map_err(BundleProblem::Decode),
        |b| entry.check_bundle(&entry.file, b),
    )?;
    let index = StrategyIndex::new(bundle, &law.index.law)
        .map_err(|e| bundle_failure(kind, &entry.file, BundleProblem::Engine(e)))?;
    let loaded = Rc::new(LoadedStrategy {
        entry,
        index,
        verify_ms,
    });
    remember(&loaded.entry.file, &loaded);
    Ok(Some(loaded))
}

fn parse_proxy_answer<'a, T: serde::Deserialize<'a>>(
    url: &str,
    text: &'a str,
) -> Result<T, Failure> {
    serde_json::from_str(text).map_err(|e| Failure::ProxyAnswer {
        url: url.to_string(),
        detail: e.to_string(),
    })
}

/// An endpoint of the proxy at `url` (the paths in `api` are absolute; the proxy may live in a subfolder).
fn endpoint(url: &str, path: &str) -> String {
    crate::join_url(url, path.trim_start_matches('/'))
}

/// The models the proxy serves (`GET /health`).
pub async fn proxy(url: String) -> Result<Health, Failure> {
    let health = endpoint(&url, HEALTH_PATH);
    let text = fetch::text(&health, &format!("Einbettungsdienst {url}")).await?;
    parse_proxy_answer(&url, &text)
}

/// The query vector and the model that computed it (`POST /v1/embed`).
async fn embed(url: &str, request: &EmbedRequest) -> Result<(String, Vec<f32>), Failure> {
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

/// `report.json` of `paragraf eval` in the bundle folder, if there is one.
pub async fn report(data: String) -> Result<Option<Rc<Report>>, Failure> {
    // `paragraf eval` writes <bundles>/report/report.json (asked first: a folder evaluated as `scripts/main.sh`
    // does costs no 404); a deployment may also put it next to the manifest.
    for file in ["report/report.json", "report.json"] {
        let url = crate::join_url(&data, file);
        match fetch::text(&url, &format!("Evaluationsbericht {url}")).await {
            Ok(text) => {
                return Report::parse(text.as_bytes())
                    .map(|r| Some(Rc::new(r)))
                    .map_err(|e| Failure::Report {
                        url,
                        detail: e.to_string(),
                    })
            }
            Err(Failure::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// The query vector for a dense or hybrid search, computed by the bundle's model (the proxy is asked for it by
/// name), or why there is none.
async fn query_vector(
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
async fn browser_vector(
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
async fn any_vector(
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
async fn search_vector(
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

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    /// The submitted query.
    pub query: String,
    /// Expansion words removed for this query.
    pub without: Vec<String>,
    /// Query expansion on.
    pub expand: bool,
    /// Citation-graph re-ranking on.
    pub graph: bool,
    /// Ranking with what was learned (when the law has it).
    pub learning: bool,
    pub mode: Mode,
    pub unit_search: UnitSearch,
}

/// Runs one search, with query expansion (unless switched off) minus the words the user removed. The query vector
/// comes from the proxy or the in-browser encoder ([`VectorSources`]); without one the search falls back to BM25
/// and says why in `proxy_problem`; only a dense search against a model mismatch is refused (BM25 results would
/// pretend to be dense).
pub async fn run_search(
    request: SearchRequest,
    law: Rc<LoadedLaw>,
    strategy: Option<Rc<LoadedStrategy>>,
    sources: VectorSources,
    proxy_problem: RwSignal<Option<Failure>>,
) -> Result<Rc<Outcome>, Failure> {
    let SearchRequest {
        query,
        without,
        expand,
        graph,
        learning,
        mode,
        unit_search,
    } = request;
    let (vector, embedded) = search_vector(
        &query,
        mode,
        strategy.as_ref().map(|s| s.entry.model.as_str()),
        sources,
        proxy_problem,
    )
    .await?;
    let defaults = SearchOptions::default();
    let options = SearchOptions {
        mode,
        unit_search,
        // The weight cross-validation chose for the mode that runs (BM25 when there is no vector).
        graph_weight: match (graph, &vector) {
            (false, _) => 0.0,
            (true, Some(_)) => mode.graph_weight(),
            (true, None) => Mode::Bm25.graph_weight(),
        },
        expansion_weight: if expand {
            defaults.expansion_weight
        } else {
            0.0
        },
        learning,
        ..defaults
    };
    let t0 = fetch::now_ms();
    let search = engine::search_expanded(
        &law.index,
        strategy.as_ref().map(|s| &s.index),
        &query,
        vector.as_deref(),
        &without,
        &options,
    )
    .map_err(Failure::Search)?;
    let retrieval_ms = fetch::now_ms() - t0;
    let cited_units = paragraf_core::cite::cited_units(&law.index.law, &query);
    static SEARCHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    Ok(Rc::new(Outcome {
        cited_units,
        number: SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        law,
        strategy,
        search,
        without,
        retrieval_ms,
        embedded,
        graph_weight: options.graph_weight,
    }))
}

/// The index across all laws, with the posting shards fetched so far (kept for later questions).
pub struct LoadedFederal {
    pub entry: FederalEntry,
    pub head: FederalHead,
    shards: RefCell<HashMap<u32, Rc<PostingShard>>>,
    /// Time to check the head against the manifest, ms.
    pub verify_ms: f64,
    /// The names of every law searched when no set is chosen ("Meinten Sie das Gesetz …?").
    all_names: std::cell::OnceCell<paragraf_core::finder::LawNames>,
}

/// The head of the manifest's index across laws, verified and checked; `None` when the folder has none.
pub async fn federal(
    data: String,
    manifest: Rc<Manifest>,
    progress: RwSignal<Progress>,
) -> Result<Option<Rc<LoadedFederal>>, Failure> {
    let Some(entry) = manifest.federal.clone() else {
        return Ok(None);
    };
    if let Some(loaded) = decoded::<LoadedFederal>(&entry.head.file) {
        return Ok(Some(loaded));
    }
    let kind = BundleKind::Federal;
    let file = &entry.head.file;
    let (bytes, verify_ms) =
        verified_listed(&data, kind, &entry.head, "Gesamtindex", progress).await?;
    let head = FederalHead::from_bytes(&bytes)
        .map_err(|e| bundle_failure(kind, file, BundleProblem::Federal(e)))?;
    if head.shards() != entry.shards.len() {
        return Err(bundle_failure(
            kind,
            file,
            BundleProblem::Mismatch(manifest::ManifestError::Mislabeled {
                file: file.clone(),
                found: format!("{} posting shards", head.shards()),
                expected: format!("{} posting shards", entry.shards.len()),
            }),
        ));
    }
    let loaded = Rc::new(LoadedFederal {
        entry,
        head,
        shards: RefCell::new(HashMap::new()),
        verify_ms,
        all_names: std::cell::OnceCell::new(),
    });
    remember(&loaded.entry.head.file, &loaded);
    Ok(Some(loaded))
}

/// The section vectors across laws, verified and checked against their head; `None` when the folder has none
/// (lexical only). The file is fetched once the head is in: it is three times the head's size, and sharing the
/// link with the head would delay the first (BM25) result, which never waits for it.
pub async fn federal_vectors(
    data: String,
    manifest: Rc<Manifest>,
    head: impl std::future::Future<Output = Result<Option<Rc<LoadedFederal>>, Failure>>,
) -> Result<Option<Rc<FederalVectors>>, Failure> {
    let Some(entry) = manifest.federal.as_ref().and_then(|f| f.vectors.clone()) else {
        return Ok(None);
    };
    let file = &entry.file.file;
    if let Some(loaded) = decoded::<FederalVectors>(file) {
        return Ok(Some(loaded));
    }
    let Some(head) = head.await? else {
        return Ok(None);
    };
    let kind = BundleKind::Federal;
    let label = "Vektoren aller Gesetze";
    let (bytes, _) = verified_listed(&data, kind, &entry.file, label, RwSignal::new(None)).await?;
    let vectors = decode_checked(
        kind,
        file,
        bytes,
        |b| {
            head.head
                .vectors_from_bytes(b)
                .map_err(BundleProblem::Federal)
        },
        |v| {
            (v.model() == entry.model).then_some(()).ok_or_else(|| {
                manifest::ManifestError::Mislabeled {
                    file: file.clone(),
                    found: format!("model {}", v.model()),
                    expected: format!("model {}", entry.model),
                }
            })
        },
    )?;
    let vectors = Rc::new(vectors);
    remember(file, &vectors);
    Ok(Some(vectors))
}

impl LoadedFederal {
    /// Fetches the posting shards among `needed` not loaded yet (in parallel), returning their bytes.
    async fn fetch_shards(&self, data: &str, needed: &[u32]) -> Result<u64, Failure> {
        let missing: Vec<u32> = needed
            .iter()
            .copied()
            .filter(|n| !self.shards.borrow().contains_key(n))
            .collect();
        let kind = BundleKind::Federal;
        let fetches = missing.iter().map(|&n| async move {
            let listed = &self.entry.shards[n as usize];
            let (bytes, _) =
                verified_listed(data, kind, listed, "Gesamtindex", RwSignal::new(None)).await?;
            let shard = self
                .head
                .shard_from_bytes(n, &bytes)
                .map_err(|e| bundle_failure(kind, &listed.file, BundleProblem::Federal(e)))?;
            Ok::<_, Failure>((n, shard, listed.bytes))
        });
        let mut fetched = 0;
        for result in futures::future::join_all(fetches).await {
            let (n, shard, bytes) = result?;
            self.shards.borrow_mut().insert(n, Rc::new(shard));
            fetched += bytes;
        }
        Ok(fetched)
    }
}

/// One section found across laws.
pub struct FederalResult {
    /// The law's catalogue entry.
    pub law: LawEntry,
    /// Index into the law's sections.
    pub section: u32,
    pub designation: String,
    pub score: f32,
}

/// Where the section vectors across laws stood when a search ran.
#[derive(Clone)]
pub enum FederalVectorsNow {
    /// In use, or not needed (BM25 was asked for, or the folder has none).
    Ready(Option<Rc<FederalVectors>>),
    /// Still arriving: BM25 until then; the search runs again once they are in.
    Loading {
        bytes: u64,
        /// Their model: the proxy is asked for the question's vector meanwhile.
        model: String,
    },
    /// They cannot be loaded: BM25, and why.
    Failed(Failure),
}

/// A finished search across laws.
pub struct FederalOutcome {
    pub results: Vec<FederalResult>,
    /// The mode that ran.
    pub mode: Mode,
    /// Whether the vectors were there (when the mode wanted them).
    pub vectors: FederalVectorsNow,
    /// Laws searched (the catalogue, or the chosen set).
    pub laws_searched: usize,
    /// Posting shards the question needed, and the bytes of those that had to be fetched for it.
    pub shards_needed: usize,
    pub shard_bytes: u64,
    /// Core search time in the browser (ms), without fetching.
    pub retrieval_ms: f64,
    pub embedded: Option<Embedded>,
    /// Running number of finished searches (`data-search`).
    pub number: u32,
    /// The law the question names, when it is searched among others ("Meinten Sie das Gesetz …?").
    pub named: Option<LawEntry>,
}

/// What the user asked of all laws.
pub struct FederalRequest {
    /// The submitted query.
    pub query: String,
    pub mode: Mode,
    /// Only these laws (empty: all of the catalogue).
    pub only: Vec<String>,
}

/// Searches all laws of the catalogue (or the set `only` names): the question's posting shards are fetched,
/// the query vector comes as for one law ([`VectorSources`]) once the section `vectors` are there, and only laws
/// the manifest lists are shown.
pub async fn run_federal_search(
    data: String,
    request: FederalRequest,
    manifest: Rc<Manifest>,
    federal: Rc<LoadedFederal>,
    vectors: FederalVectorsNow,
    sources: VectorSources,
    proxy_problem: RwSignal<Option<Failure>>,
) -> Result<Rc<FederalOutcome>, Failure> {
    let FederalRequest { query, mode, only } = request;
    let head = &federal.head;
    let terms = head.query_terms(&query);
    let needed = head.shards_for(&terms);
    let shard_bytes = federal.fetch_shards(&data, &needed).await?;
    let coded = match &vectors {
        FederalVectorsNow::Ready(v) => v.clone(),
        FederalVectorsNow::Loading { model, .. } => {
            // The proxy embeds the question while the vectors arrive; the run once they are in finds it.
            if let (true, Some(Ok(health))) = (mode != Mode::Bm25, &sources.proxy) {
                let (q, m, url, health) = (
                    query.clone(),
                    model.clone(),
                    sources.proxy_url.clone(),
                    health.clone(),
                );
                leptos::task::spawn_local(async move {
                    // A failure is met again, and reported, by that run.
                    let _ = query_vector(&q, &m, &url, Ok(health)).await;
                });
            }
            None
        }
        FederalVectorsNow::Failed(_) => None,
    };
    let model = coded.as_deref().map(FederalVectors::model);
    let (vector, embedded) = search_vector(&query, mode, model, sources, proxy_problem).await?;
    // Laws of the catalogue (a law the manifest no longer lists is not shown), narrowed to the chosen set; one
    // table, not a scan of the catalogue per law (6,877² comparisons were most of a search across all laws).
    let catalogue: HashMap<&str, &LawEntry> =
        manifest.laws.iter().map(|l| (l.law.as_str(), l)).collect();
    let entries: Vec<Option<&LawEntry>> = head
        .laws()
        .iter()
        .map(|l| {
            catalogue
                .get(l.as_str())
                .copied()
                .filter(|_| only.is_empty() || only.iter().any(|o| o == l))
        })
        .collect();
    let options = SearchOptions {
        mode,
        ..SearchOptions::default()
    };
    let t0 = fetch::now_ms();
    let shards = federal.shards.borrow();
    let (hits, ran) = head
        .search(
            &terms,
            coded.as_deref().zip(vector.as_deref()),
            &options,
            |n| shards.get(&n).map(|s| s.as_ref()),
            |l| entries[l as usize].is_some(),
        )
        .map_err(|e| {
            bundle_failure(
                BundleKind::Federal,
                &federal.entry.head.file,
                BundleProblem::Federal(e),
            )
        })?;
    let retrieval_ms = fetch::now_ms() - t0;
    let results = hits
        .iter()
        .map(|hit| {
            let doc = head.doc(hit);
            FederalResult {
                law: entries[hit.law as usize].cloned().expect("kept laws only"),
                section: hit.section,
                designation: doc.designation.clone(),
                score: hit.score,
            }
        })
        .collect();
    let searched: Vec<&LawEntry> = entries.iter().flatten().copied().collect();
    let names_of = |laws: &[&LawEntry]| {
        paragraf_core::finder::LawNames::new(
            laws.iter().map(|l| (l.law.as_str(), l.title.as_str())),
        )
    };
    // The names of the whole catalogue are worked out once; a narrowed set's for each search.
    let named = match (searched.len() > 1, only.is_empty()) {
        (false, _) => None,
        (true, true) => federal
            .all_names
            .get_or_init(|| names_of(&searched))
            .named(&query),
        (true, false) => names_of(&searched).named(&query),
    }
    .map(|i| searched[i].clone());
    static SEARCHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    Ok(Rc::new(FederalOutcome {
        results,
        mode: ran,
        vectors,
        laws_searched: entries.iter().filter(|e| e.is_some()).count(),
        shards_needed: needed.len(),
        shard_bytes,
        retrieval_ms,
        embedded,
        number: SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        named,
    }))
}

/// The law finder's topics of every law, verified and decoded; `None` when the folder has none (an index across
/// laws built before topics had a file of their own, or none at all): the finder then matches abbreviations and
/// titles only.
pub async fn topics(
    data: String,
    manifest: Rc<Manifest>,
    progress: RwSignal<Progress>,
) -> Result<Option<TopicsFile>, Failure> {
    let Some(entry) = manifest.federal.as_ref().and_then(|f| f.topics.clone()) else {
        return Ok(None);
    };
    let kind = BundleKind::Topics;
    let (bytes, _) = verified_listed(&data, kind, &entry, "Themen der Gesetze", progress).await?;
    let file = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| TopicsFile::from_bytes(b).map_err(BundleProblem::Topics),
        |_| Ok(()),
    )?;
    Ok(Some(file))
}

/// Law texts kept for results across laws (the newest last).
const KEPT_LAW_TEXTS: usize = 32;

thread_local! {
    /// Law texts for results across laws, arrived or arriving: a result list replaced by the next (BM25 while
    /// the vectors arrive, then hybrid; the next question) finds the laws it shares with the last ones instead
    /// of fetching and decoding them again.
    static LAW_TEXTS: SharedAnswers<String, Rc<Law>> = const { SharedAnswers::new(KEPT_LAW_TEXTS) };
}

/// A law's text for results across laws: its law bundle, verified and decoded, without building its search
/// index (that happens when the law is opened); fetched once while it is among the last [`KEPT_LAW_TEXTS`]
/// laws shown. A law that failed is tried again by the next list.
pub async fn law_text(data: String, entry: LawEntry) -> Result<Rc<Law>, Failure> {
    let file = entry.file.clone();
    shared(&LAW_TEXTS, file, move || {
        fetch_law_text(data, entry).boxed_local()
    })
    .await
}

async fn fetch_law_text(data: String, entry: LawEntry) -> Result<Rc<Law>, Failure> {
    let kind = BundleKind::Law;
    let label = format!("Gesetz {}", entry.law);
    let (bytes, _) = verified_listed(&data, kind, &entry, &label, RwSignal::new(None)).await?;
    let bundle = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| LawBundle::from_bytes(b).map_err(BundleProblem::Decode),
        |b| entry.check_law(&entry.file, &b.law),
    )?;
    Ok(Rc::new(bundle.law))
}
