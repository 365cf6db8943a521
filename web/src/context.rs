//! The state the components share: signals for what the user chose, resources for what is loaded from it
//! (manifest → law → strategy bundle, proxy health, search results). Built once by the app; components read it
//! with `expect_context::<Ctx>()`.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::finder::LawFinder;
use paragraf_core::manifest::{EncoderEntry, Manifest};
use paragraf_engine::{Mode, UnitSearch};
use paragraf_format::api::Health;

use crate::encoder::{self, BrowserEncoder};
use crate::failure::Failure;
use crate::load::{
    self, FederalOutcome, FederalVectorsNow, LoadedFederal, LoadedLaw, LoadedStrategy, Outcome,
    Progress,
};
use crate::state::{EncoderChoice, Page, UrlState};

const PROXY_SETTING: &str = "paragraf.proxy";

/// Everything the components share. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Ctx {
    /// Text in the search box.
    pub input: RwSignal<String>,
    /// The submitted query.
    pub query: RwSignal<String>,
    /// Expansion words the user removed from the submitted query (reset by a new query).
    pub without: RwSignal<Vec<String>>,
    pub law: RwSignal<String>,
    /// On the page over all laws: only these (empty: all).
    pub laws: RwSignal<Vec<String>>,
    pub strategy: RwSignal<String>,
    pub mode: RwSignal<Mode>,
    /// Query expansion on or off.
    pub expand: RwSignal<bool>,
    /// Citation-graph re-ranking on or off.
    pub graph: RwSignal<bool>,
    /// Ranking with what was learned from past questions on or off.
    pub learning: RwSignal<bool>,
    pub unit_search: RwSignal<UnitSearch>,
    /// "Erweitert" open: the researcher's controls and the scores ([`crate::state::UrlState::advanced`]).
    pub advanced: RwSignal<bool>,
    /// Where query vectors come from (automatic, only the proxy, only the browser).
    pub encoder: RwSignal<EncoderChoice>,
    pub page: RwSignal<Page>,
    /// The bundle folder from the page's address, fixed for the page's life: resources await the manifest
    /// untracked ([`untracked`]) and rely on that.
    pub data: RwSignal<Option<String>>,
    /// Proxy base URL in use.
    pub proxy_url: RwSignal<String>,
    /// Whether the URL named the proxy (then it is part of shared links).
    pub proxy_from_url: RwSignal<bool>,
    /// Why the proxy cannot be used right now (shown once, as a notice); `None` while it works.
    pub proxy_problem: RwSignal<Option<Failure>>,
    pub progress: RwSignal<Progress>,
    pub manifest: LocalResource<Result<Rc<Manifest>, Failure>>,
    /// The searched law; `None` while only the page over all laws has been open.
    pub law_data: LocalResource<Result<Option<Rc<LoadedLaw>>, Failure>>,
    pub strategy_data: LocalResource<Result<Option<Rc<LoadedStrategy>>, Failure>>,
    /// The proxy's health; `None` while BM25 is chosen or the bundles have no vectors (then nothing is sent).
    pub proxy: LocalResource<Option<Result<Health, Failure>>>,
    /// The in-browser query encoder: loaded after the bundles, when vectors are wanted and the proxy cannot (or
    /// may not) give them and the manifest lists a model file; `None` otherwise.
    pub browser_encoder: LocalResource<Option<Result<Rc<BrowserEncoder>, Failure>>>,
    /// The submitted query's results; `None` before anything was asked.
    pub results: LocalResource<Option<Result<Rc<Outcome>, Failure>>>,
    /// The index across all laws: loaded once the page over all laws was opened; `None` when the folder has none.
    pub federal: LocalResource<Result<Option<Rc<LoadedFederal>>, Failure>>,
    /// The submitted query's results across laws (on that page); `None` before anything was asked.
    pub federal_results: LocalResource<Option<Result<Rc<FederalOutcome>, Failure>>>,
    /// Set by the first use of the law finder: every law's topics are fetched then, once per page life.
    pub topics_wanted: RwSignal<bool>,
    /// The law finder with every law's topics; `None` until wanted, or when the folder has no topics file.
    pub law_finder: LocalResource<Result<Option<Rc<LawFinder>>, Failure>>,
}

/// The proxy the serving page names ([`paragraf_format::api::PROXY_META_NAME`]; `paragraf serve` writes it): `./`
/// for its own origin, empty for none.
fn page_proxy() -> Option<String> {
    let selector = format!(r#"meta[name="{}"]"#, paragraf_format::api::PROXY_META_NAME);
    web_sys::window()?
        .document()?
        .query_selector(&selector)
        .ok()??
        .get_attribute("content")
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// The in-browser encoder the manifest lists, if its model is every bundle's (vectors of different models are
/// never compared).
fn usable_encoder(manifest: &Manifest) -> Option<&EncoderEntry> {
    let entry = manifest.encoder.as_ref()?;
    manifest
        .bundles
        .iter()
        .all(|b| b.model == entry.model)
        .then_some(entry)
}

/// Saves the proxy URL chosen in the settings.
pub fn save_proxy_url(url: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(PROXY_SETTING, url);
    }
}

/// The manifest, awaited without subscribing to it. A resource that awaits another one while that one is still
/// loading runs a second time once it arrives (the reactive graph re-runs a resource whose source changed during
/// its run): every resource here would fetch, verify and decode its files twice. The manifest changes only with
/// the data URL, which is fixed from the page's address for the page's life.
async fn untracked(
    manifest: LocalResource<Result<Rc<Manifest>, Failure>>,
) -> Result<Rc<Manifest>, Failure> {
    ScopedFuture::new_untracked(std::future::IntoFuture::into_future(manifest)).await
}

impl Ctx {
    /// Signals from the URL's state, and the resources that load from them.
    pub fn new(start: &UrlState) -> Ctx {
        let saved_proxy = storage().and_then(|s| s.get_item(PROXY_SETTING).ok().flatten());
        let proxy_url = RwSignal::new(
            start
                .proxy
                .clone()
                .or(saved_proxy)
                .or_else(page_proxy)
                .unwrap_or_else(|| crate::DEFAULT_PROXY_URL.to_string()),
        );
        let data = RwSignal::new(start.data.clone());
        let law = RwSignal::new(start.law.clone());
        let laws = RwSignal::new(start.laws.clone());
        let page = RwSignal::new(start.page);
        let strategy = RwSignal::new(start.strategy.clone());
        let query = RwSignal::new(start.q.clone());
        let without = RwSignal::new(start.without.clone());
        let mode = RwSignal::new(start.mode);
        let expand = RwSignal::new(start.expand);
        let graph = RwSignal::new(start.graph);
        let learning = RwSignal::new(start.learning);
        let unit_search = RwSignal::new(start.unit_search);
        let advanced = RwSignal::new(start.advanced);
        let encoder_choice = RwSignal::new(start.encoder);
        let progress = RwSignal::new(None);
        let proxy_problem = RwSignal::new(None);

        let data_url = move || {
            data.get()
                .unwrap_or_else(|| crate::DEFAULT_DATA_URL.to_string())
        };
        let manifest = LocalResource::new(move || load::manifest(data_url()));
        // One law's bundles load once the search page opens (the strategies page shows the report alone, the
        // page over all laws fetches law texts itself, for its results only): `None` until then.
        let law_wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false) || page.get() == Page::Search
        });
        let law_data = LocalResource::new(move || {
            let (d, l, wanted) = (data_url(), law.get(), law_wanted.get());
            async move {
                match wanted {
                    true => Ok(Some(
                        load::law(d, untracked(manifest).await?, l, progress).await?,
                    )),
                    false => Ok(None),
                }
            }
        });
        let strategy_data = LocalResource::new(move || {
            let (d, s) = (data_url(), strategy.get());
            async move {
                let (m, l) = (untracked(manifest).await?, law_data.await?);
                match l {
                    Some(l) => load::strategy(d, m, l, s, progress).await,
                    None => Ok(None),
                }
            }
        });
        let proxy = LocalResource::new(move || {
            let url = proxy_url.get();
            // An empty address: the site has no proxy (`paragraf serve --no-proxy`), so none is asked.
            let needed =
                mode.get() != Mode::Bm25 && encoder_choice.get().uses_server() && !url.is_empty();
            async move {
                if needed && untracked(manifest).await.is_ok_and(|m| m.has_vectors()) {
                    Some(load::proxy(url).await)
                } else {
                    None
                }
            }
        });
        // Memos, so that switching strategy or between dense and hybrid does not restart the encoder.
        // Loaded the first time the page over all laws opens, and kept.
        let federal_wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false) || page.get() == Page::AllLaws
        });
        let federal = LocalResource::new(move || {
            let (d, wanted) = (data_url(), federal_wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                load::federal(d, untracked(manifest).await?, progress).await
            }
        });
        let federal_vectors_wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false)
                || (page.get() == Page::AllLaws && mode.get() != Mode::Bm25)
        });
        // The section vectors across laws: fetched once the head is in, the first time a search across laws
        // wants them (dense or hybrid), never for BM25.
        let federal_vectors = LocalResource::new(move || {
            let (d, wanted) = (data_url(), federal_vectors_wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                // The head tracked: it may still hold its value from before it was wanted. A second run once
                // it arrives gets the vectors already decoded.
                let head = std::future::IntoFuture::into_future(federal);
                load::federal_vectors(d, untracked(manifest).await?, head).await
            }
        });
        let topics_wanted = RwSignal::new(false);
        let law_finder = LocalResource::new(move || {
            let (d, wanted) = (data_url(), topics_wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                let listed = untracked(manifest).await?;
                let topics = load::topics(d, listed.clone(), progress).await?;
                Ok(topics.map(|t| Rc::new(LawFinder::new(&listed.laws, Some(&t)))))
            }
        });
        // The in-browser encoder starts once the searched bundles are in: one law's, or the index across laws.
        let bundles_ready = Memo::new(move |_| {
            (law_wanted.get() && matches!(strategy_data.get(), Some(Ok(_))))
                || matches!(federal.get(), Some(Ok(Some(_))))
        });
        let wants_browser = Memo::new(move |_| {
            let listed = manifest.get().and_then(|m| m.ok());
            listed.is_some_and(|m| usable_encoder(&m).is_some())
                && mode.get() != Mode::Bm25
                && match encoder_choice.get() {
                    EncoderChoice::Server => false,
                    EncoderChoice::Browser => true,
                    // The proxy first; the worker when it is unreachable or lacks the model the browser can run.
                    EncoderChoice::Auto => match proxy.get() {
                        Some(Some(Err(_))) => true,
                        Some(Some(Ok(health))) => {
                            manifest.get().and_then(|m| m.ok()).is_some_and(|m| {
                                usable_encoder(&m).is_some_and(|e| !health.serves(&e.model))
                            })
                        }
                        _ => false,
                    },
                }
        });
        let browser_encoder = LocalResource::new(move || {
            let (d, ready, wanted) = (data_url(), bundles_ready.get(), wants_browser.get());
            async move {
                if !(ready && wanted) {
                    return None;
                }
                let listed = untracked(manifest).await.ok()?;
                let entry = usable_encoder(&listed)?.clone();
                Some(encoder::load(d, entry, progress).await)
            }
        });
        let results = LocalResource::new(move || {
            let elsewhere = page.get() == Page::AllLaws;
            let request = load::SearchRequest {
                query: query.get(),
                without: without.get(),
                expand: expand.get(),
                graph: graph.get(),
                learning: learning.get(),
                mode: mode.get(),
                unit_search: unit_search.get(),
            };
            let p = proxy_url.get();
            let choice = encoder_choice.get();
            // Tracked: once the encoder is ready (or fails), the results are computed again with it.
            let browser = browser_encoder.get().flatten();
            async move {
                if request.query.is_empty() || elsewhere {
                    return None;
                }
                let run = async {
                    // `None`: the page over all laws was open until now; the law follows.
                    let (Some(l), s) = (law_data.await?, strategy_data.await?) else {
                        return Ok(None);
                    };
                    let info = match request.mode {
                        Mode::Bm25 => None,
                        _ if choice.uses_server() => proxy.await,
                        _ => None,
                    };
                    let sources = load::VectorSources {
                        proxy_url: p,
                        proxy: info,
                        browser: browser.filter(|_| choice.uses_browser()),
                        browser_wanted: wants_browser.get_untracked(),
                    };
                    load::run_search(request, l, s, sources, proxy_problem)
                        .await
                        .map(Some)
                };
                run.await.transpose()
            }
        });
        let federal_results = LocalResource::new(move || {
            let (q, m, only, d) = (query.get(), mode.get(), laws.get(), data_url());
            let on_page = page.get() == Page::AllLaws;
            let p = proxy_url.get();
            let choice = encoder_choice.get();
            let browser = browser_encoder.get().flatten();
            // Tracked, not awaited: a search runs with BM25 while the vectors arrive, and again once they are in.
            let vectors = federal_vectors.get();
            async move {
                if q.is_empty() || !on_page {
                    return None;
                }
                let run = async {
                    let listed = untracked(manifest).await?;
                    let Some(index) = federal.await? else {
                        return Err(Failure::NoFederal {
                            url: crate::join_url(&d, paragraf_core::manifest::MANIFEST),
                        });
                    };
                    let listed_vectors = listed.federal.as_ref().and_then(|f| f.vectors.as_ref());
                    let vectors = match (m, listed_vectors, vectors) {
                        (Mode::Bm25, _, _) | (_, None, _) => FederalVectorsNow::Ready(None),
                        (_, _, Some(Ok(Some(v)))) => FederalVectorsNow::Ready(Some(v)),
                        (_, _, Some(Err(failure))) => FederalVectorsNow::Failed(failure),
                        // Not asked for yet, or still arriving.
                        (_, Some(entry), _) => FederalVectorsNow::Loading {
                            bytes: entry.file.bytes,
                            model: entry.model.clone(),
                        },
                    };
                    let info = match m {
                        Mode::Bm25 => None,
                        _ if choice.uses_server() => proxy.await,
                        _ => None,
                    };
                    let sources = load::VectorSources {
                        proxy_url: p,
                        proxy: info,
                        browser: browser.filter(|_| choice.uses_browser()),
                        browser_wanted: wants_browser.get_untracked(),
                    };
                    let request = load::FederalRequest {
                        query: q,
                        mode: m,
                        only,
                    };
                    load::run_federal_search(
                        d,
                        request,
                        listed,
                        index,
                        vectors,
                        sources,
                        proxy_problem,
                    )
                    .await
                };
                Some(run.await)
            }
        });
        Ctx {
            input: RwSignal::new(start.q.clone()),
            query,
            without,
            law,
            laws,
            strategy,
            mode,
            expand,
            graph,
            learning,
            unit_search,
            advanced,
            encoder: encoder_choice,
            page,
            data,
            proxy_url,
            proxy_from_url: RwSignal::new(start.proxy.is_some()),
            proxy_problem,
            progress,
            manifest,
            law_data,
            strategy_data,
            proxy,
            browser_encoder,
            results,
            federal,
            federal_results,
            topics_wanted,
            law_finder,
        }
    }

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
            without: self.without.get(),
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
            laws: self.laws.get(),
            strategy: self.strategy.get(),
            mode: self.mode.get(),
            expand: self.expand.get(),
            graph: self.graph.get(),
            learning: self.learning.get(),
            unit_search: self.unit_search.get(),
            data: self.data.get(),
            proxy: self.proxy_from_url.get().then(|| self.proxy_url.get()),
            page: self.page.get(),
            encoder: self.encoder.get(),
            advanced: self.advanced.get(),
        }
    }

    /// The URL state without subscribing.
    pub fn url_state_untracked(&self) -> UrlState {
        untrack(|| self.url_state())
    }

    /// Leaves an expansion word out of the current search (`removed`), or takes it back (`!removed`).
    pub fn set_removed(&self, word: &str, removed: bool) {
        self.without.update(|w| {
            w.retain(|x| x != word);
            if removed {
                w.push(word.to_string());
            }
        });
    }

    /// Runs a search for the text in the box.
    pub fn submit(&self) {
        let text = self.input.get_untracked().trim().to_string();
        if self.page.get_untracked() == Page::Strategies {
            self.page.set(Page::Search);
        }
        if text == self.query.get_untracked() {
            self.results.refetch();
        } else {
            // Removed expansions belong to the question they were removed from.
            self.without.set(Vec::new());
            self.query.set(text);
        }
    }
}
