//! The search page: one law's bundles and the results of a search over them.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::federal::cited::CitedByFile;
use paragraf_core::results::check_question;

use super::{Choices, Folder, Vectors};
use crate::failure::Failure;
use crate::load::{self, LoadedLaw, LoadedStrategy, Outcome};
use crate::state::Page;

/// One law's bundles and results. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct OneLaw {
    /// The searched law; `None` while only the page over all laws has been open.
    pub law_data: LocalResource<Result<Option<Rc<LoadedLaw>>, Failure>>,
    pub strategy_data: LocalResource<Result<Option<Rc<LoadedStrategy>>, Failure>>,
    /// The submitted query's results; `None` before anything was asked.
    pub results: LocalResource<Option<Result<Rc<Outcome>, Failure>>>,
    /// Which sections of other laws cite the law's sections (its cited-by shard), fetched once results are
    /// shown, so it never delays them; `None` while there are none, or when the folder has no such files.
    pub cited_by: LocalResource<Result<Option<Rc<CitedByFile>>, Failure>>,
}

/// One law's bundles, before the search over them (which needs the vector sources, which wait for the bundles).
#[derive(Clone, Copy)]
pub struct Bundles {
    /// Set once the search page opened.
    wanted: Memo<bool>,
    law_data: LocalResource<Result<Option<Rc<LoadedLaw>>, Failure>>,
    strategy_data: LocalResource<Result<Option<Rc<LoadedStrategy>>, Failure>>,
}

impl Bundles {
    /// The chosen law's bundles, loading once the search page opens (the strategies page shows the report
    /// alone, the page over all laws fetches law texts itself, for its results only).
    pub fn new(choices: Choices, folder: Folder) -> Self {
        let (page, law, strategy, progress) =
            (choices.page, choices.law, choices.strategy, folder.progress);
        let wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false) || page.get() == Page::Search
        });
        let law_data = LocalResource::new(move || {
            let (d, l, wanted) = (folder.data_url(), law.get(), wanted.get());
            async move {
                match wanted {
                    true => Ok(Some(
                        load::law(d, folder.manifest_untracked().await?, l, progress).await?,
                    )),
                    false => Ok(None),
                }
            }
        });
        let strategy_data = LocalResource::new(move || {
            let (d, s) = (folder.data_url(), strategy.get());
            async move {
                let (m, l) = (folder.manifest_untracked().await?, law_data.await?);
                match l {
                    Some(l) => load::strategy(d, m, l, s, progress).await,
                    None => Ok(None),
                }
            }
        });
        Bundles {
            wanted,
            law_data,
            strategy_data,
        }
    }

    /// Whether the bundles are in (the in-browser encoder waits for them).
    pub fn ready(&self) -> bool {
        self.wanted.get() && matches!(self.strategy_data.get(), Some(Ok(_)))
    }

    /// The bundles with the search over them.
    pub fn with_results(self, choices: Choices, folder: Folder, vectors: Vectors) -> OneLaw {
        let Bundles {
            law_data,
            strategy_data,
            ..
        } = self;
        let results = LocalResource::new(move || {
            let elsewhere = choices.page.get() == Page::AllLaws;
            let request = load::SearchRequest {
                query: choices.query.get(),
                without: choices.without.get(),
                expand: choices.expand.get(),
                graph: choices.graph.get(),
                learning: choices.learning.get(),
                more: choices.more.get(),
                mode: choices.mode.get(),
                unit_search: choices.unit_search.get(),
            };
            let sources = vectors.sources(choices);
            async move {
                if request.query.is_empty() || elsewhere {
                    return None;
                }
                let run = async {
                    check_question(&request.query).map_err(Failure::Question)?;
                    // `None`: the page over all laws was open until now; the law follows.
                    let (Some(l), s) = (law_data.await?, strategy_data.await?) else {
                        return Ok(None);
                    };
                    let sources = sources.resolve(request.mode).await;
                    load::run_search(request, l, s, sources, vectors.proxy_problem)
                        .await
                        .map(Some)
                };
                run.await.transpose()
            }
        });
        // The law whose results are on screen: the shard follows it, never before its results are in, and a
        // new search of the same law changes nothing.
        let shown_law = Memo::new(move |_| match results.get() {
            Some(Some(Ok(outcome))) => Some(outcome.law.entry.law.clone()),
            _ => None,
        });
        let cited_by = LocalResource::new(move || {
            let (law, d) = (shown_law.get(), folder.data_url());
            async move {
                match law {
                    Some(law) => load::cited_by(d, folder.manifest_untracked().await?, law).await,
                    None => Ok(None),
                }
            }
        });
        OneLaw {
            law_data,
            strategy_data,
            results,
            cited_by,
        }
    }
}
