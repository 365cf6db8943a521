//! The weights of law routing ([`crate::federal::routing`]): plain data, also recorded in `manifest.json` (`learned.routing`),
//! so the manifest reads them without the routing that uses them.

use paragraf_engine::Mode;
use serde::{Deserialize, Serialize};

/// The weights of the routed score (see [`Features`](crate::federal::routing::Features)); all 0 or more.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoutingWeights {
    /// The section's rank in the first stage's ranking across laws.
    pub global: f32,
    /// Its rank among its own law's sections in that ranking.
    pub within_law: f32,
    /// The law's rank in the law-text ranking.
    pub law_text: f32,
    /// The law's rank by how close its sections' mean vector is to the question's.
    #[serde(default)]
    pub law_dense: f32,
    /// The law's share of the first stage's ranking.
    pub agreement: f32,
    /// The share of the first stage's ranking that falls into laws citing or naming the law.
    #[serde(default)]
    pub referred: f32,
    /// The law the question names.
    #[serde(default)]
    pub named: f32,
    /// The share of the question's terms that occur in the law.
    #[serde(default)]
    pub coverage: f32,
    /// How many laws cite the law (log-scaled to 0..1 over the laws searched).
    pub cited_by: f32,
    /// The law's size (log-scaled to 0..1).
    pub size: f32,
    /// A bonus per [`LawKind`](crate::federal::routing::LawKind), in the order of
    /// [`LawKind::ALL`](crate::federal::routing::LawKind::ALL).
    pub kind: [f32; 7],
    /// The demand prior of a law with learned questions ([`paragraf_engine::learning`]): 0 without one.
    #[serde(default)]
    pub prior: f32,
    /// The vote of lexically similar past questions.
    #[serde(default)]
    pub vote_lexical: f32,
    /// The vote of densely similar past questions.
    #[serde(default)]
    pub vote_dense: f32,
}

impl RoutingWeights {
    /// No routing: the first stage's ranking as it is.
    pub const UNROUTED: RoutingWeights = RoutingWeights {
        global: 1.0,
        within_law: 0.0,
        law_text: 0.0,
        law_dense: 0.0,
        agreement: 0.0,
        referred: 0.0,
        named: 0.0,
        coverage: 0.0,
        cited_by: 0.0,
        size: 0.0,
        kind: [0.0; 7],
        prior: 0.0,
        vote_lexical: 0.0,
        vote_dense: 0.0,
    };

    /// The weights the app, `paragraf search` and MCP route a BM25 search with: fit on the tuning half of
    /// `tests/data/lay-questions-federal-tune.json` over all 6,877 laws, BM25
    /// (`paragraf eval --among <all laws> --questions … --fit-routing`, docs/all-laws.md, "Which law?").
    pub const BM25: RoutingWeights = RoutingWeights {
        global: 1.0,
        within_law: 0.5,
        law_text: 0.2,
        law_dense: 0.0,
        agreement: 0.2,
        referred: 0.5,
        named: 0.5,
        coverage: 0.1,
        cited_by: 0.0,
        size: 0.0,
        kind: [0.05, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0],
        prior: 0.0,
        vote_lexical: 0.0,
        vote_dense: 0.0,
    };

    /// The weights a hybrid search is routed with: fit as [`RoutingWeights::BM25`], with the e5 vectors of all
    /// laws, in hybrid mode (docs/all-laws.md, "Routing with the laws' vectors").
    pub const HYBRID: RoutingWeights = RoutingWeights {
        within_law: 0.1,
        law_text: 0.1,
        law_dense: 0.5,
        agreement: 0.3,
        referred: 0.1,
        named: 0.75,
        coverage: 0.2,
        size: 0.05,
        kind: [0.2, 0.3, 0.05, 0.0, 0.0, 0.0, 0.0],
        ..RoutingWeights::UNROUTED
    };

    /// The weights a dense search is routed with: fit as [`RoutingWeights::HYBRID`], in dense mode.
    pub const DENSE: RoutingWeights = RoutingWeights {
        within_law: 0.75,
        law_dense: 0.05,
        agreement: 0.05,
        named: 0.1,
        ..RoutingWeights::UNROUTED
    };

    /// The weights a search that ran in `mode` is routed with.
    pub fn shipped(mode: Mode) -> RoutingWeights {
        match mode {
            Mode::Bm25 => RoutingWeights::BM25,
            Mode::Hybrid => RoutingWeights::HYBRID,
            Mode::Dense => RoutingWeights::DENSE,
        }
    }

    /// These weights with the learned signals' weights (prior and votes) scaled by `factor` (0..1), as
    /// [`paragraf_engine::learning::Weights::shrunk`] does for one law.
    pub fn shrunk(self, factor: f32) -> RoutingWeights {
        RoutingWeights {
            prior: self.prior * factor,
            vote_lexical: self.vote_lexical * factor,
            vote_dense: self.vote_dense * factor,
            ..self
        }
    }

    /// Whether every weight is finite and 0 or more.
    pub fn valid(&self) -> bool {
        [
            self.global,
            self.within_law,
            self.law_text,
            self.law_dense,
            self.agreement,
            self.referred,
            self.named,
            self.coverage,
            self.cited_by,
            self.size,
            self.prior,
            self.vote_lexical,
            self.vote_dense,
        ]
        .iter()
        .chain(&self.kind)
        .all(|w| w.is_finite() && *w >= 0.0)
    }
}
