//! Where query vectors come from: the query-embedding proxy (its address, health and last problem) and the
//! in-browser encoder.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::manifest::{EncoderEntry, Manifest};
use paragraf_engine::Mode;
use paragraf_format::api::Health;

use super::{Choices, Folder};
use crate::encoder::{self, BrowserEncoder};
use crate::failure::Failure;
use crate::load::{self, VectorSources};
use crate::state::{EncoderChoice, UrlState};

const PROXY_SETTING: &str = "paragraf.proxy";

/// The sources of query vectors. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Vectors {
    /// Proxy base URL in use.
    pub proxy_url: RwSignal<String>,
    /// Whether the URL named the proxy (then it is part of shared links).
    pub proxy_from_url: RwSignal<bool>,
    /// Why the proxy cannot be used right now (shown once, as a notice); `None` while it works.
    pub proxy_problem: RwSignal<Option<Failure>>,
    /// The proxy's health; `None` while BM25 is chosen or the bundles have no vectors (then nothing is sent).
    pub proxy: LocalResource<Option<Result<Health, Failure>>>,
    /// Whether the in-browser encoder is wanted (then its absence means it is still loading).
    pub wants_browser: Memo<bool>,
    /// The in-browser query encoder: loaded after the bundles, when vectors are wanted and the proxy cannot (or
    /// may not) give them and the manifest lists a model file; `None` otherwise.
    pub browser_encoder: LocalResource<Option<Result<Rc<BrowserEncoder>, Failure>>>,
}

impl Vectors {
    /// The proxy the address, the settings or the serving page name, and the in-browser encoder, which starts
    /// once `bundles_ready` (the searched bundles are in).
    pub fn new(
        start: &UrlState,
        choices: Choices,
        folder: Folder,
        bundles_ready: Memo<bool>,
    ) -> Self {
        let saved_proxy = storage().and_then(|s| s.get_item(PROXY_SETTING).ok().flatten());
        let proxy_url = RwSignal::new(
            start
                .proxy
                .clone()
                .or(saved_proxy)
                .or_else(page_proxy)
                .unwrap_or_else(|| crate::DEFAULT_PROXY_URL.to_string()),
        );
        let (mode, encoder_choice, manifest) = (choices.mode, choices.encoder, folder.manifest);
        let proxy = LocalResource::new(move || {
            let url = proxy_url.get();
            // An empty address: the site has no proxy (`paragraf serve --no-proxy`), so none is asked.
            let needed =
                mode.get() != Mode::Bm25 && encoder_choice.get().uses_server() && !url.is_empty();
            async move {
                if needed
                    && folder
                        .manifest_untracked()
                        .await
                        .is_ok_and(|m| m.has_vectors())
                {
                    Some(load::proxy(url).await)
                } else {
                    None
                }
            }
        });
        // Memos, so that switching strategy or between dense and hybrid does not restart the encoder.
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
            let (d, ready, wanted) = (folder.data_url(), bundles_ready.get(), wants_browser.get());
            async move {
                if !(ready && wanted) {
                    return None;
                }
                let listed = folder.manifest_untracked().await.ok()?;
                let entry = usable_encoder(&listed)?.clone();
                Some(encoder::load(d, entry, folder.progress).await)
            }
        });
        Vectors {
            proxy_url,
            proxy_from_url: RwSignal::new(start.proxy.is_some()),
            proxy_problem: RwSignal::new(None),
            proxy,
            wants_browser,
            browser_encoder,
        }
    }

    /// What may compute the query vector of a search in `mode`, tracking the proxy's address, the encoder
    /// choice and the in-browser encoder (once it is ready or fails, the search runs again with it); the proxy's
    /// health is awaited by [`Sources::resolve`].
    pub fn sources(&self, choices: Choices) -> Sources {
        Sources {
            proxy_url: self.proxy_url.get(),
            choice: choices.encoder.get(),
            browser: self.browser_encoder.get().flatten(),
            vectors: *self,
        }
    }
}

/// The sources of one search, read when it started.
pub struct Sources {
    proxy_url: String,
    choice: EncoderChoice,
    browser: Option<Result<Rc<BrowserEncoder>, Failure>>,
    vectors: Vectors,
}

impl Sources {
    /// The sources for a search in `mode`: the proxy's health is awaited when the proxy may be asked.
    pub async fn resolve(self, mode: Mode) -> VectorSources {
        let proxy = match mode {
            Mode::Bm25 => None,
            _ if self.choice.uses_server() => self.vectors.proxy.await,
            _ => None,
        };
        VectorSources {
            proxy_url: self.proxy_url,
            proxy,
            browser: self.browser.filter(|_| self.choice.uses_browser()),
            browser_wanted: self.vectors.wants_browser.get_untracked(),
        }
    }
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
