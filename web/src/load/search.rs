//! One search over one loaded law.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_engine::{self as engine, Mode, SearchOptions, SearchOutcome, UnitSearch};

use super::law::{LoadedLaw, LoadedStrategy};
use super::vectors::{search_vector, Embedded, VectorSources};
use crate::failure::Failure;
use crate::fetch;

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
    /// Asked for more than the first page ([`MORE_SECTIONS`]).
    pub more: bool,
    /// The Absätze and Sätze the query cites (`§ 551 Abs. 2`): section and byte range, marked and scrolled to.
    pub cited_units: Vec<(usize, std::ops::Range<usize>)>,
    /// The question searched (its words are marked in a section no narrower unit of which was hit).
    pub question: String,
}

/// Sections shown once the user asks for more than the engine's default: below the first 10, the learned ranking's tail orders them where
/// the folder has a learned file.
pub const MORE_SECTIONS: usize = 30;

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
    /// More than the first page ([`MORE_SECTIONS`] instead of the engine's default).
    pub more: bool,
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
        more,
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
        // The weight cross-validation chose for the mode that runs.
        graph_weight: if graph {
            mode.that_runs(strategy.is_some(), vector.is_some())
                .graph_weight()
        } else {
            0.0
        },
        expansion_weight: if expand {
            defaults.expansion_weight
        } else {
            0.0
        },
        learning,
        section_k: if more {
            MORE_SECTIONS
        } else {
            defaults.section_k
        },
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
        more,
        question: query,
    }))
}
