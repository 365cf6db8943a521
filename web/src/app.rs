//! The app shell: state from the URL, the shared context (signals and resources), the two pages.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::bundle::{LawBundle, StrategyBundle};
use paragraf_core::engine::{
    self, LawIndex, Mode, SearchOptions, SectionHit, StrategyIndex, UnitSearch,
};

use crate::fetch::{self, Failure};
use crate::manifest::{BundleEntry, LawEntry, Manifest};
use crate::pages::{search::SearchPage, strategies::StrategiesPage};
use crate::state::{Page, UrlState};

/// A loaded law.
pub struct LoadedLaw {
    pub entry: LawEntry,
    pub index: LawIndex,
}

/// A loaded strategy bundle.
pub struct LoadedStrategy {
    pub entry: BundleEntry,
    pub index: StrategyIndex,
}

/// The query-embedding proxy's `/health`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProxyInfo {
    pub model: String,
    pub dim: usize,
}

/// A finished search.
pub struct Outcome {
    pub law: Rc<LoadedLaw>,
    pub strategy: Rc<LoadedStrategy>,
    pub hits: Vec<SectionHit>,
    /// The mode that actually ran.
    pub mode: Mode,
    /// How units were found: HNSW only when asked for and the bundle has a graph (small bundles have none).
    pub unit_search: UnitSearch,
    /// HNSW was asked for, but the bundle has no graph.
    pub hnsw_unavailable: bool,
    /// Running number of finished searches, on the page as `data-search` (the DOM may be patched in place, so
    /// this is how a reader tells one result list from the next).
    pub number: u32,
    /// Core search time in the browser (ms).
    pub retrieval_ms: f64,
    /// Time for the query vector (ms), when one was fetched.
    pub embed_ms: Option<f64>,
}

/// Download progress of a bundle: (label, bytes so far, total).
pub type Progress = Option<(String, u64, u64)>;

/// Everything the components share. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Ctx {
    /// Text in the search box.
    pub input: RwSignal<String>,
    /// The submitted query.
    pub query: RwSignal<String>,
    pub law: RwSignal<String>,
    pub strategy: RwSignal<String>,
    pub mode: RwSignal<Mode>,
    pub unit_search: RwSignal<UnitSearch>,
    pub page: RwSignal<Page>,
    pub data: RwSignal<Option<String>>,
    /// Proxy base URL in use.
    pub proxy_url: RwSignal<String>,
    /// Whether the URL named the proxy (then it is part of shared links).
    pub proxy_from_url: RwSignal<bool>,
    /// Why the proxy cannot be used right now (shown once, as a notice); `None` while it works.
    pub proxy_problem: RwSignal<Option<String>>,
    pub progress: RwSignal<Progress>,
    pub manifest: LocalResource<Result<Rc<Manifest>, Failure>>,
    pub law_data: LocalResource<Result<Rc<LoadedLaw>, Failure>>,
    pub strategy_data: LocalResource<Result<Rc<LoadedStrategy>, Failure>>,
    pub proxy: LocalResource<Result<ProxyInfo, Failure>>,
    pub results: LocalResource<Option<Result<Rc<Outcome>, Failure>>>,
}

impl Ctx {
    /// The bundle folder.
    pub fn data_url(&self) -> String {
        self.data
            .get()
            .unwrap_or_else(|| crate::DEFAULT_DATA_URL.to_string())
    }

    /// The URL state now.
    pub fn url_state(&self) -> UrlState {
        UrlState {
            q: self.query.get(),
            law: {
                // An empty law means the manifest's first: name it, so a shared link stays the same search.
                let law = self.law.get();
                if law.is_empty() {
                    self.manifest
                        .get()
                        .and_then(|m| m.ok())
                        .and_then(|m| m.laws.first().map(|l| l.law.clone()))
                        .unwrap_or_default()
                } else {
                    law
                }
            },
            strategy: self.strategy.get(),
            mode: self.mode.get(),
            unit_search: self.unit_search.get(),
            data: self.data.get(),
            proxy: self.proxy_from_url.get().then(|| self.proxy_url.get()),
            page: self.page.get(),
        }
    }

    /// Runs a search for the text in the box.
    pub fn submit(&self) {
        let text = self.input.get_untracked().trim().to_string();
        self.page.set(Page::Search);
        if text == self.query.get_untracked() {
            self.results.refetch();
        } else {
            self.query.set(text);
        }
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// Saves the proxy URL chosen in the settings.
pub fn save_proxy_url(url: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item("paragraf.proxy", url);
    }
}

fn set_progress(progress: RwSignal<Progress>, label: &str, done: u64, total: u64) {
    progress.set(Some((label.to_string(), done, total)));
}

async fn load_manifest(data: String) -> Result<Rc<Manifest>, Failure> {
    let url = crate::join_url(&data, "manifest.json");
    let text = fetch::text(&url, &format!("Bündelliste {url}")).await?;
    let manifest = Manifest::parse(&text).map_err(Failure)?;
    if manifest.laws.is_empty() {
        return Err(Failure(format!(
            "{url} nennt kein Gesetz. Bündel mit `paragraf build` erzeugen"
        )));
    }
    Ok(Rc::new(manifest))
}

async fn load_law(
    ctx_data: String,
    manifest: Rc<Manifest>,
    law: String,
    progress: RwSignal<Progress>,
) -> Result<Rc<LoadedLaw>, Failure> {
    let entry = manifest
        .law(&law)
        .cloned()
        .ok_or_else(|| Failure("kein Gesetz in der Bündelliste".into()))?;
    let label = format!("Gesetz {}", entry.law);
    let url = crate::join_url(&ctx_data, &entry.file);
    let bytes = fetch::bytes(
        &url,
        &format!("Gesetzesbündel {}", entry.file),
        entry.bytes,
        |d, t| set_progress(progress, &label, d, t),
    )
    .await;
    progress.set(None);
    let bytes = bytes?;
    let bundle = LawBundle::from_bytes(&bytes)
        .map_err(|e| Failure(format!("Gesetzesbündel {}: {e}", entry.file)))?;
    drop(bytes);
    Ok(Rc::new(LoadedLaw {
        entry,
        index: LawIndex::new(bundle.law),
    }))
}

async fn load_strategy(
    data: String,
    manifest: Rc<Manifest>,
    law: Rc<LoadedLaw>,
    strategy: String,
    progress: RwSignal<Progress>,
) -> Result<Rc<LoadedStrategy>, Failure> {
    let entry = manifest
        .bundle(&law.entry.law, &strategy)
        .cloned()
        .ok_or_else(|| {
            Failure(format!(
                "Für {} gibt es kein Strategie-Bündel",
                law.entry.law
            ))
        })?;
    let label = format!("Strategie {}", entry.strategy);
    let url = crate::join_url(&data, &entry.file);
    let bytes = fetch::bytes(
        &url,
        &format!("Strategie-Bündel {}", entry.file),
        entry.bytes,
        |d, t| set_progress(progress, &label, d, t),
    )
    .await;
    progress.set(None);
    let bytes = bytes?;
    let bundle = StrategyBundle::from_bytes(&bytes)
        .map_err(|e| Failure(format!("Strategie-Bündel {}: {e}", entry.file)))?;
    drop(bytes);
    let index = StrategyIndex::new(bundle, &law.index.law)
        .map_err(|e| Failure(format!("Strategie-Bündel {}: {e}", entry.file)))?;
    Ok(Rc::new(LoadedStrategy { entry, index }))
}

async fn load_proxy(url: String) -> Result<ProxyInfo, Failure> {
    let health = crate::join_url(&url, "health");
    let text = fetch::text(&health, &format!("Einbettungsdienst {url}")).await?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure(format!(
            "Einbettungsdienst {url}: unerwartete Antwort ({e})"
        ))
    })?;
    Ok(ProxyInfo {
        model: value["model"].as_str().unwrap_or_default().to_string(),
        dim: value["dim"].as_u64().unwrap_or_default() as usize,
    })
}

async fn embed(url: &str, query: &str) -> Result<(String, Vec<f32>), Failure> {
    let body = serde_json::json!({ "text": query }).to_string();
    let text = fetch::post_json(
        &crate::join_url(url, "v1/embed"),
        &body,
        &format!("Einbettungsdienst {url}"),
    )
    .await?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure(format!(
            "Einbettungsdienst {url}: unerwartete Antwort ({e})"
        ))
    })?;
    let vector = value["vector"]
        .as_array()
        .ok_or_else(|| Failure(format!("Einbettungsdienst {url}: Antwort ohne Vektor")))?
        .iter()
        .map(|v| v.as_f64().unwrap_or(0.0) as f32)
        .collect();
    Ok((
        value["model"].as_str().unwrap_or_default().to_string(),
        vector,
    ))
}

/// The mismatch message when the proxy's model is not the bundle's.
pub fn model_mismatch(proxy: &str, bundle: &str) -> String {
    format!(
        "Der Einbettungsdienst rechnet mit dem Modell „{proxy}“, die Bündel wurden aber mit „{bundle}“ gebaut. \
         Vektoren verschiedener Modelle sind nicht vergleichbar: die dichte Suche ist aus, gesucht wird lexikalisch (BM25)."
    )
}

#[allow(clippy::too_many_arguments)]
async fn run_search(
    query: String,
    mode: Mode,
    unit_search: UnitSearch,
    law: Rc<LoadedLaw>,
    strategy: Rc<LoadedStrategy>,
    proxy_url: String,
    proxy: Result<ProxyInfo, Failure>,
    proxy_problem: RwSignal<Option<String>>,
) -> Result<Rc<Outcome>, Failure> {
    let mut vector = None;
    let mut embed_ms = None;
    if mode != Mode::Bm25 {
        let attempt: Result<Vec<f32>, String> = match proxy {
            Err(e) => Err(e.0),
            Ok(info) if info.model != strategy.entry.model => {
                Err(model_mismatch(&info.model, &strategy.entry.model))
            }
            Ok(_) => {
                let t0 = fetch::now_ms();
                match embed(&proxy_url, &query).await {
                    Ok((model, _)) if model != strategy.entry.model => {
                        Err(model_mismatch(&model, &strategy.entry.model))
                    }
                    Ok((_, v)) => {
                        embed_ms = Some(fetch::now_ms() - t0);
                        Ok(v)
                    }
                    Err(e) => Err(e.0),
                }
            }
        };
        match attempt {
            Ok(v) => {
                if proxy_problem.get_untracked().is_some() {
                    proxy_problem.set(None);
                }
                vector = Some(v);
            }
            Err(message) => {
                if proxy_problem.get_untracked().as_deref() != Some(message.as_str()) {
                    proxy_problem.set(Some(message.clone()));
                }
                if mode == Mode::Dense && message.contains("nicht vergleichbar") {
                    return Err(Failure(message));
                }
            }
        }
    }
    let options = SearchOptions {
        mode,
        unit_search,
        ..SearchOptions::default()
    };
    let ran = if vector.is_some() { mode } else { Mode::Bm25 };
    let t0 = fetch::now_ms();
    let hits = engine::search(
        &law.index,
        Some(&strategy.index),
        &query,
        vector.as_deref(),
        &options,
    )
    .map_err(|e| Failure(e.to_string()))?;
    let retrieval_ms = fetch::now_ms() - t0;
    let has_graph = strategy.index.bundle.hnsw.is_some();
    static SEARCHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    Ok(Rc::new(Outcome {
        number: SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        law,
        strategy,
        hits,
        mode: ran,
        unit_search: match (unit_search, has_graph) {
            (UnitSearch::Hnsw, true) => UnitSearch::Hnsw,
            _ => UnitSearch::Exact,
        },
        hnsw_unavailable: unit_search == UnitSearch::Hnsw && !has_graph,
        retrieval_ms,
        embed_ms,
    }))
}

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let location = web_sys::window().map(|w| w.location());
    let search = location
        .as_ref()
        .and_then(|l| l.search().ok())
        .unwrap_or_default();
    let start = UrlState::parse(&search);
    let saved_proxy = storage().and_then(|s| s.get_item("paragraf.proxy").ok().flatten());
    let proxy_from_url = RwSignal::new(start.proxy.is_some());
    let proxy_url = RwSignal::new(
        start
            .proxy
            .clone()
            .or(saved_proxy)
            .unwrap_or_else(|| crate::DEFAULT_PROXY_URL.to_string()),
    );
    let data = RwSignal::new(start.data.clone());
    let law = RwSignal::new(start.law.clone());
    let strategy = RwSignal::new(start.strategy.clone());
    let progress = RwSignal::new(None);
    let proxy_problem = RwSignal::new(None);

    let data_url = move || {
        data.get()
            .unwrap_or_else(|| crate::DEFAULT_DATA_URL.to_string())
    };
    let manifest = LocalResource::new(move || load_manifest(data_url()));
    let law_data = LocalResource::new(move || {
        let (d, l) = (data_url(), law.get());
        async move {
            let m = manifest.await?;
            load_law(d, m, l, progress).await
        }
    });
    let strategy_data = LocalResource::new(move || {
        let (d, s) = (data_url(), strategy.get());
        async move {
            let m = manifest.await?;
            let l = law_data.await?;
            load_strategy(d, m, l, s, progress).await
        }
    });
    let query = RwSignal::new(start.q.clone());
    let mode = RwSignal::new(start.mode);
    // BM25 needs no network at all: the proxy is only asked when dense or hybrid search is chosen.
    let proxy = LocalResource::new(move || {
        let (url, needed) = (proxy_url.get(), mode.get() != Mode::Bm25);
        async move {
            if needed {
                load_proxy(url).await
            } else {
                Err(Failure("BM25 braucht keinen Einbettungsdienst".into()))
            }
        }
    });
    let unit_search = RwSignal::new(start.unit_search);
    let results = LocalResource::new(move || {
        let (q, m, u, p) = (query.get(), mode.get(), unit_search.get(), proxy_url.get());
        async move {
            if q.is_empty() {
                return None;
            }
            let run = async {
                let l = law_data.await?;
                let s = strategy_data.await?;
                let info = if m == Mode::Bm25 {
                    Err(Failure(String::new()))
                } else {
                    proxy.await
                };
                run_search(q, m, u, l, s, p, info, proxy_problem).await
            };
            Some(run.await)
        }
    });

    let ctx = Ctx {
        input: RwSignal::new(start.q.clone()),
        query,
        law,
        strategy,
        mode,
        unit_search,
        page: RwSignal::new(start.page),
        data,
        proxy_url,
        proxy_from_url,
        proxy_problem,
        progress,
        manifest,
        law_data,
        strategy_data,
        proxy,
        results,
    };
    provide_context(ctx);

    // The URL follows the state, so the address can be shared and reloaded.
    Effect::new(move |_| {
        let query = ctx.url_state().to_query();
        if let Some(window) = web_sys::window() {
            let path = window.location().pathname().unwrap_or_default();
            if let Ok(history) = window.history() {
                let _ = history.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("{path}{query}")),
                );
            }
        }
    });

    // The proxy's answer to /health decides whether dense search is possible at all.
    Effect::new(move |_| {
        if let Some(Err(e)) = proxy.get() {
            if ctx.mode.get_untracked() != Mode::Bm25 {
                proxy_problem.set(Some(e.0));
            }
        }
    });

    // `/` focuses the search box (unless one is typing somewhere already).
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "/" {
            let typing = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
            if !typing {
                if let Some(input) = web_sys::window()
                    .and_then(|w| w.document())
                    .and_then(|d| d.get_element_by_id("q"))
                {
                    use wasm_bindgen::JsCast;
                    ev.prevent_default();
                    if let Ok(input) = input.dyn_into::<web_sys::HtmlElement>() {
                        let _ = input.focus();
                    }
                }
            }
        }
    });
    // The app lives as long as the page: the listener is never removed.
    std::mem::forget(handle);

    let page = ctx.page;
    view! {
        <header class="top">
            <a class="brand" href="?" on:click=move |ev| { ev.prevent_default(); page.set(Page::Search); }>"Paragraf"</a>
            <span class="tagline">"Private Suche im Bundesrecht – alles läuft in Ihrem Browser"</span>
            <nav aria-label="Seiten">
                <a href="?" class:active=move || page.get() == Page::Search
                    on:click=move |ev| { ev.prevent_default(); page.set(Page::Search); }>"Suche"</a>
                <a href="?page=strategies" class:active=move || page.get() == Page::Strategies
                    on:click=move |ev| { ev.prevent_default(); page.set(Page::Strategies); }>"Strategien"</a>
            </nav>
        </header>
        <main>
            {move || match page.get() {
                Page::Search => view! { <SearchPage/> }.into_any(),
                Page::Strategies => view! { <StrategiesPage/> }.into_any(),
            }}
        </main>
    }
}
