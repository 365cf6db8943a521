//! The state the components share, one struct per feature, each in its own module: what the user chose
//! ([`Choices`], from and back into the address), the bundle folder and its manifest ([`Folder`]), where query
//! vectors come from ([`Vectors`]), the search page's law ([`OneLaw`]) and the page over all laws
//! ([`AllLaws`]). [`Ctx`] holds them; built once by the app, read with `expect_context::<Ctx>()`.
//!
//! What loads what: the manifest from the folder; one law's bundles once the search page opens, the index across
//! laws once its page opens; the in-browser encoder once either is in and vectors are wanted but the proxy cannot
//! give them; results from the choices, the bundles and the vector sources.

mod all_laws;
mod choices;
mod folder;
mod one_law;
mod vectors;

use leptos::prelude::*;

pub use all_laws::AllLaws;
pub use choices::Choices;
pub use folder::Folder;
pub use one_law::OneLaw;
pub use vectors::{save_proxy_url, Vectors};

use crate::state::{Page, UrlState};

/// Everything the components share. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub choices: Choices,
    pub folder: Folder,
    pub vectors: Vectors,
    pub one_law: OneLaw,
    pub all_laws: AllLaws,
}

impl Ctx {
    /// Signals from the URL's state, and the resources that load from them.
    pub fn new(start: &UrlState) -> Ctx {
        let choices = Choices::new(start);
        let folder = Folder::new(start.data.clone());
        let bundles = one_law::Bundles::new(choices, folder);
        let index = all_laws::Index::new(choices, folder);
        // The in-browser encoder starts once the searched bundles are in: one law's, or the index across laws.
        let bundles_ready = Memo::new(move |_| bundles.ready() || index.ready());
        let vectors = Vectors::new(start, choices, folder, bundles_ready);
        Ctx {
            choices,
            folder,
            vectors,
            one_law: bundles.with_results(choices, folder, vectors),
            all_laws: index.with_results(choices, folder, vectors),
        }
    }

    /// The URL state now.
    pub fn url_state(&self) -> UrlState {
        let c = &self.choices;
        UrlState {
            q: c.query.get(),
            without: c.without.get(),
            law: {
                // An empty law means the manifest's first: name it, so a shared link stays the same search.
                let law = c.law.get();
                if law.is_empty() {
                    self.folder
                        .manifest
                        .get()
                        .and_then(|m| m.ok())
                        .and_then(|m| m.laws.first().map(|l| l.law.clone()))
                        .unwrap_or_default()
                } else {
                    law
                }
            },
            laws: c.laws.get(),
            strategy: c.strategy.get(),
            mode: c.mode.get(),
            expand: c.expand.get(),
            graph: c.graph.get(),
            learning: c.learning.get(),
            more: c.more.get(),
            unit_search: c.unit_search.get(),
            data: self.folder.data.get(),
            proxy: self
                .vectors
                .proxy_from_url
                .get()
                .then(|| self.vectors.proxy_url.get()),
            page: c.page.get(),
            encoder: c.encoder.get(),
            advanced: c.advanced.get(),
        }
    }

    /// The URL state without subscribing.
    pub fn url_state_untracked(&self) -> UrlState {
        untrack(|| self.url_state())
    }

    /// Runs a search for the text in the box.
    pub fn submit(&self) {
        let c = &self.choices;
        let text = c.input.get_untracked().trim().to_string();
        if c.page.get_untracked() == Page::Strategies {
            c.page.set(Page::Search);
        }
        if text == c.query.get_untracked() {
            self.one_law.results.refetch();
        } else {
            // Removed expansions and more results belong to the question they were asked for.
            c.without.set(Vec::new());
            c.more.set(false);
            c.query.set(text);
        }
    }
}
