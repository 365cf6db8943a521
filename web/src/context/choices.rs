//! What the user chose: the question, the law, the strategy, the mode and the switches, all from and back into
//! the page's address ([`UrlState`]).

use leptos::prelude::*;
use paragraf_engine::{Mode, UnitSearch};

use crate::state::{EncoderChoice, Page, UrlState};

/// The user's choices. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Choices {
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
    /// More results than the first page, for the question submitted (reset by a new query).
    pub more: RwSignal<bool>,
    pub unit_search: RwSignal<UnitSearch>,
    /// "Erweitert" open: the researcher's controls and the scores ([`UrlState::advanced`]).
    pub advanced: RwSignal<bool>,
    /// Where query vectors come from (automatic, only the proxy, only the browser).
    pub encoder: RwSignal<EncoderChoice>,
    pub page: RwSignal<Page>,
}

impl Choices {
    /// The choices the address names.
    pub fn new(start: &UrlState) -> Self {
        Choices {
            input: RwSignal::new(start.q.clone()),
            query: RwSignal::new(start.q.clone()),
            without: RwSignal::new(start.without.clone()),
            law: RwSignal::new(start.law.clone()),
            laws: RwSignal::new(start.laws.clone()),
            strategy: RwSignal::new(start.strategy.clone()),
            mode: RwSignal::new(start.mode),
            expand: RwSignal::new(start.expand),
            graph: RwSignal::new(start.graph),
            learning: RwSignal::new(start.learning),
            more: RwSignal::new(start.more),
            unit_search: RwSignal::new(start.unit_search),
            advanced: RwSignal::new(start.advanced),
            encoder: RwSignal::new(start.encoder),
            page: RwSignal::new(start.page),
        }
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
}
