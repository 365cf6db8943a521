//! Learning across laws: what was learned for one law (the BGB, from GerLayQA) joins law routing as its
//! demand prior and the votes of similar past questions ([`FederalIndex::add_learned`]). The law's own ranker
//! cannot be reused: it weighs the law's sections against each other, not against 6,876 other laws. So the
//! learned signals get routing weights of their own, fit on the law's questions searched among all laws —
//! each training question against the *other* questions' precedents — and measured by k-fold
//! cross-validation, everything learned from the other folds only.
//!
//! Questions of one law alone would teach routing that every question is that law's: learned from GerLayQA's
//! BGB questions, the votes put the BGB first for a question about holiday entitlement too. So the weights are
//! fit on two groups that count alike ([`routing::fit_learned`]): the learned law's questions, and questions
//! across laws (the project's own tuning half) that say what the votes cost the other laws. Only the learned
//! signals' weights are fit; the others stay as they were chosen across laws.

use super::routing::{self, Example, Features, LawQuery};
use super::FederalIndex;
use crate::routing_weights::RoutingWeights;
use paragraf_engine::learning::fit::{assemble, Labelled, ModelVectors};
use paragraf_engine::learning::{Learning, Provenance};
use paragraf_index::Hit;
use paragraf_law::Law;
use paragraf_stats::cv::fold_assignment;

/// One labelled question of the learned law, searched among all laws.
#[derive(Clone, Debug)]
pub struct AmongQuestion<'a> {
    /// Its text.
    pub text: &'a str,
    /// Its vector (the index's model), for the dense votes.
    pub vector: Option<&'a [f32]>,
    /// [`FederalIndex::routing_features`] of its first stage (before learning).
    pub features: Vec<Features>,
    /// What routing asked of the laws for it ([`FederalIndex::law_query`]).
    pub query: LawQuery,
    /// Its gold documents (ids the index does not hold are left out: misses).
    pub gold: Vec<u32>,
    /// The laws of its gold sections.
    pub gold_laws: Vec<u32>,
}

/// The features of question `q` with what `learning` says (its precedent `own` left out when it is one).
fn learned_features(
    index: &FederalIndex,
    law: u32,
    learning: &Learning,
    question: &AmongQuestion,
    own: Option<(usize, &[u32])>,
) -> Vec<Features> {
    let mut features = question.features.clone();
    let (skip, gold) = match own {
        Some((p, gold)) => (Some(p), gold),
        None => (None, &[][..]),
    };
    index.add_learned(
        &mut features,
        question.text,
        &question.query,
        question.vector,
        law,
        learning,
        &|i| Some(i) == skip,
        gold,
    );
    features
}

/// The learned signals' weights (the others as in `start`) fit on `members` of `questions`, each scored against
/// `learning` — learned from exactly `members`, in that order — with its own precedent left out, and on
/// `across` (questions across laws, none of them a precedent) as a group of equal weight; then scaled by
/// `shrink` ([`RoutingWeights::shrunk`]).
#[allow(clippy::too_many_arguments)]
pub fn fit(
    index: &FederalIndex,
    law: u32,
    learning: &Learning,
    questions: &[AmongQuestion],
    labelled: &[Labelled],
    members: &[usize],
    across: &[AmongQuestion],
    start: RoutingWeights,
    shrink: f32,
) -> RoutingWeights {
    let examples: Vec<Example> = members
        .iter()
        .enumerate()
        .map(|(p, &q)| Example {
            features: learned_features(
                index,
                law,
                learning,
                &questions[q],
                Some((p, &labelled[q].gold)),
            ),
            gold: questions[q].gold.clone(),
            gold_laws: questions[q].gold_laws.clone(),
        })
        .collect();
    let across: Vec<Example> = across
        .iter()
        .map(|q| Example {
            features: learned_features(index, law, learning, q, None),
            gold: q.gold.clone(),
            gold_laws: q.gold_laws.clone(),
        })
        .collect();
    let groups: Vec<&[Example]> = [&examples[..], &across[..]]
        .into_iter()
        .filter(|g| !g.is_empty())
        .collect();
    routing::fit_learned(&groups, start).shrunk(shrink)
}

/// Held-out rankings of a cross-validation.
#[derive(Clone, Debug)]
pub struct HeldOut {
    /// Per question, its routed ranking with what the other folds taught (documents, best first).
    pub rankings: Vec<Vec<Hit>>,
    /// Per fold, the weights fit on the other folds.
    pub weights: Vec<RoutingWeights>,
}

/// k-fold cross-validation of learning across laws: per fold ([`fold_assignment`], seeded), precedents and
/// prior are learned from the other folds, the learned signals' weights fit on them ([`fit`]), and the fold is
/// routed with both, `k` deep. `labelled` are the questions as learning takes them (terms analysed by
/// `index`, gold in `law`), aligned with `questions`; `across` as in [`fit`].
#[allow(clippy::too_many_arguments)]
pub fn cross_validate(
    index: &FederalIndex,
    law_index: u32,
    law: &Law,
    questions: &[AmongQuestion],
    labelled: &[Labelled],
    across: &[AmongQuestion],
    vectors: Option<ModelVectors>,
    folds: usize,
    seed: u64,
    start: RoutingWeights,
    shrink: f32,
    k: usize,
    progress: &mut dyn FnMut(usize),
) -> HeldOut {
    let fold_of = fold_assignment(questions.len(), folds, seed);
    let mut out = HeldOut {
        rankings: vec![Vec::new(); questions.len()],
        weights: Vec::new(),
    };
    for f in 0..folds {
        let members: Vec<usize> = (0..questions.len())
            .filter(|&q| fold_of[q] != f && !labelled[q].gold.is_empty())
            .collect();
        let provenance = Provenance::of_fold(members.len());
        let file = assemble(law, "", provenance, labelled, &members, vectors);
        let (learning, _) = file.resolve(law).expect("assembled for this law");
        let weights = fit(
            index, law_index, &learning, questions, labelled, &members, across, start, shrink,
        );
        for q in (0..questions.len()).filter(|&q| fold_of[q] == f) {
            let features = learned_features(index, law_index, &learning, &questions[q], None);
            out.rankings[q] = routing::routed(&features, &weights, k);
        }
        out.weights.push(weights);
        progress(f + 1);
    }
    out
}
