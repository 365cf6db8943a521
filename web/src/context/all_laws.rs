//! The page over all laws: the index across laws, its section vectors, the law finder and the results of a
//! search across laws.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::finder::LawFinder;
use paragraf_core::results::check_question;
use paragraf_engine::Mode;

use super::{Choices, Folder, Vectors};
use crate::failure::Failure;
use crate::load::{self, FederalOutcome, FederalVectorsNow, LoadedFederal};
use crate::state::Page;

/// The index across laws and its results. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct AllLaws {
    /// The index across all laws: loaded once the page over all laws was opened; `None` when the folder has none.
    pub federal: LocalResource<Result<Option<Rc<LoadedFederal>>, Failure>>,
    /// The submitted query's results across laws (on that page); `None` before anything was asked.
    pub federal_results: LocalResource<Option<Result<Rc<FederalOutcome>, Failure>>>,
    /// Set by the first use of the law finder: every law's topics are fetched then, once per page life.
    pub topics_wanted: RwSignal<bool>,
    /// The law finder with every law's topics; `None` until wanted, or when the folder has no topics file.
    pub law_finder: LocalResource<Result<Option<Rc<LawFinder>>, Failure>>,
}

/// The index across laws, before the search over it (which needs the vector sources, which wait for the index).
#[derive(Clone, Copy)]
pub struct Index {
    federal: LocalResource<Result<Option<Rc<LoadedFederal>>, Failure>>,
    federal_vectors:
        LocalResource<Result<Option<Rc<paragraf_core::federal::files::FederalVectors>>, Failure>>,
    topics_wanted: RwSignal<bool>,
    law_finder: LocalResource<Result<Option<Rc<LawFinder>>, Failure>>,
}

impl Index {
    /// The index, loaded the first time the page over all laws opens and kept; its vectors the first time a
    /// search across laws wants them; the law finder's topics the first time the finder is used.
    pub fn new(choices: Choices, folder: Folder) -> Self {
        let (page, mode, progress) = (choices.page, choices.mode, folder.progress);
        let wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false) || page.get() == Page::AllLaws
        });
        let federal = LocalResource::new(move || {
            let (d, wanted) = (folder.data_url(), wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                load::federal(d, folder.manifest_untracked().await?, progress).await
            }
        });
        let vectors_wanted = Memo::new(move |before: Option<&bool>| {
            before.copied().unwrap_or(false)
                || (page.get() == Page::AllLaws && mode.get() != Mode::Bm25)
        });
        // The section vectors across laws: fetched once the head is in, the first time a search across laws
        // wants them (dense or hybrid), never for BM25.
        let federal_vectors = LocalResource::new(move || {
            let (d, wanted) = (folder.data_url(), vectors_wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                // The head tracked: it may still hold its value from before it was wanted. A second run once
                // it arrives gets the vectors already decoded.
                let head = std::future::IntoFuture::into_future(federal);
                load::federal_vectors(d, folder.manifest_untracked().await?, head).await
            }
        });
        let topics_wanted = RwSignal::new(false);
        let law_finder = LocalResource::new(move || {
            let (d, wanted) = (folder.data_url(), topics_wanted.get());
            async move {
                if !wanted {
                    return Ok(None);
                }
                let listed = folder.manifest_untracked().await?;
                let topics = load::topics(d, listed.clone(), progress).await?;
                Ok(topics.map(|t| Rc::new(LawFinder::new(&listed.laws, Some(&t)))))
            }
        });
        Index {
            federal,
            federal_vectors,
            topics_wanted,
            law_finder,
        }
    }

    /// Whether the index is in (the in-browser encoder waits for it).
    pub fn ready(&self) -> bool {
        matches!(self.federal.get(), Some(Ok(Some(_))))
    }

    /// The index with the search over it: the question's posting shards are fetched, BM25 runs while the
    /// vectors arrive, and the search runs again once they are in.
    pub fn with_results(self, choices: Choices, folder: Folder, vectors: Vectors) -> AllLaws {
        let Index {
            federal,
            federal_vectors,
            topics_wanted,
            law_finder,
        } = self;
        let federal_results = LocalResource::new(move || {
            let (q, m, only, more, d) = (
                choices.query.get(),
                choices.mode.get(),
                choices.laws.get(),
                choices.more.get(),
                folder.data_url(),
            );
            let on_page = choices.page.get() == Page::AllLaws;
            let sources = vectors.sources(choices);
            // Tracked, not awaited: a search runs with BM25 while the vectors arrive, and again once they are in.
            let section_vectors = federal_vectors.get();
            async move {
                if q.is_empty() || !on_page {
                    return None;
                }
                let run = async {
                    check_question(&q).map_err(Failure::Question)?;
                    let listed = folder.manifest_untracked().await?;
                    let Some(index) = federal.await? else {
                        return Err(Failure::NoFederal {
                            url: crate::join_url(&d, paragraf_core::manifest::MANIFEST),
                        });
                    };
                    let listed_vectors = listed.federal.as_ref().and_then(|f| f.vectors.as_ref());
                    let now = match (m, listed_vectors, section_vectors) {
                        (Mode::Bm25, _, _) | (_, None, _) => FederalVectorsNow::Ready(None),
                        (_, _, Some(Ok(Some(v)))) => FederalVectorsNow::Ready(Some(v)),
                        (_, _, Some(Err(failure))) => FederalVectorsNow::Failed(failure),
                        // Not asked for yet, or still arriving.
                        (_, Some(entry), _) => FederalVectorsNow::Loading {
                            bytes: entry.file.bytes,
                            model: entry.model.clone(),
                        },
                    };
                    let sources = sources.resolve(m).await;
                    let request = load::FederalRequest {
                        query: q,
                        mode: m,
                        only,
                        more,
                    };
                    load::run_federal_search(
                        d,
                        request,
                        listed,
                        index,
                        now,
                        sources,
                        vectors.proxy_problem,
                    )
                    .await
                };
                Some(run.await)
            }
        });
        AllLaws {
            federal,
            federal_results,
            topics_wanted,
            law_finder,
        }
    }
}
