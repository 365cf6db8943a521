//! Learning itself: a [`LearnedFile`] assembled from labelled questions, each run's ranker fit by coordinate
//! ascent, and the k-fold cross-validation that says what that is worth on questions it never saw.
//!
//! Fitting scores every training question against the *other* training questions (its own vote and its own
//! share of the prior are left out), so the weights learn how much a vote of strangers is worth, not how well a
//! question recognises itself. Cross-validation goes one level further out: per fold, everything — precedents,
//! prior and weights — is learned from the other folds only, and the fold is ranked with that.

use super::{
    question_hash, Familiarity, Features, FirstStage, LearnedFile, Learning, Precedent,
    PrecedentVectors, Provenance, Ranker, Weights, HEAD,
};
use crate::Mode;
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::Hit;
use paragraf_law::Law;
use paragraf_stats::cv::fold_assignment;
use paragraf_stats::metrics::tuning_objective;
use paragraf_stats::tune::{coordinate_ascent, Coordinate};

/// One labelled question as learning takes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// [`question_hash`] of its text.
    pub hash: u64,
    /// Its analysed BM25 terms, as the law's index analyses queries (repeats kept).
    pub terms: Vec<String>,
    /// Its gold sections (indices into the law's sections, active ones only, no repeats).
    pub gold: Vec<u32>,
}

impl Labelled {
    /// A question of `text` with gold `gold`, analysed by the law's index `terms_of`.
    pub fn new(text: &str, gold: Vec<u32>, terms_of: &dyn Fn(&str) -> Vec<String>) -> Self {
        Labelled {
            hash: question_hash(text),
            terms: terms_of(text),
            gold,
        }
    }
}

/// One run to learn a ranker for: the first stages of every question, computed once without learning.
#[derive(Clone, Debug)]
pub struct Run<'a> {
    /// The strategy (`None`: BM25 alone).
    pub strategy: Option<&'a str>,
    /// The mode that ran.
    pub mode: Mode,
    /// Per question: BM25 sections and dense sections (as [`FirstStage`]), [`super::CANDIDATE_DEPTH`] deep.
    pub first: Vec<(Vec<Hit>, Option<Vec<Hit>>)>,
}

/// The questions' vectors of one model, for the dense votes.
#[derive(Clone, Copy, Debug)]
pub struct ModelVectors<'a> {
    /// The model id.
    pub model: &'a str,
    /// One per question.
    pub vectors: &'a [Vec<f32>],
}

/// A file of the questions `members` (indices into `questions`), without rankers.
pub fn assemble(
    law: &Law,
    generator: &str,
    provenance: Provenance,
    questions: &[Labelled],
    members: &[usize],
    vectors: Option<ModelVectors>,
) -> LearnedFile {
    let mut sections: Vec<u32> = members
        .iter()
        .flat_map(|&q| questions[q].gold.iter().copied())
        .collect();
    sections.sort_unstable();
    sections.dedup();
    let mut terms: Vec<&str> = members
        .iter()
        .flat_map(|&q| questions[q].terms.iter().map(String::as_str))
        .collect();
    terms.sort_unstable();
    terms.dedup();
    let precedents = members
        .iter()
        .map(|&q| {
            let mut counts: Vec<(u32, u16)> = Vec::new();
            for t in &questions[q].terms {
                let id = terms.binary_search(&t.as_str()).expect("collected above") as u32;
                match counts.iter_mut().find(|(i, _)| *i == id) {
                    Some((_, n)) => *n = n.saturating_add(1),
                    None => counts.push((id, 1)),
                }
            }
            counts.sort_unstable();
            Precedent {
                hash: questions[q].hash,
                terms: counts,
                gold: questions[q]
                    .gold
                    .iter()
                    .map(|s| sections.binary_search(s).expect("collected above") as u32)
                    .collect(),
            }
        })
        .collect();
    let vectors = vectors
        .map(|v| {
            let rows: Vec<&Vec<f32>> = members.iter().map(|&q| &v.vectors[q]).collect();
            let dim = rows.first().map_or(0, |r| r.len()) as u32;
            let vectors = Int8Vectors::from_f32_rows(dim, &rows).expect("one width per model");
            // Each precedent's cosine to its nearest other one, as a query's is measured at search time.
            let nearest: Vec<f32> = rows
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    (0..vectors.len())
                        .filter(|&j| j != i)
                        .map(|j| vectors.dot_f32(row, j))
                        .fold(f32::NEG_INFINITY, f32::max)
                })
                .collect();
            PrecedentVectors {
                model: v.model.to_string(),
                familiarity: Familiarity::of(&nearest).unwrap_or(Familiarity::ANY),
                vectors,
            }
        })
        .into_iter()
        .collect();
    LearnedFile {
        generator: generator.to_string(),
        law: law.abbreviation.clone(),
        law_build_date: law.build_date.clone(),
        provenance,
        sections: sections
            .iter()
            .map(|&s| law.sections[s as usize].designation.clone())
            .collect(),
        terms: terms.into_iter().map(str::to_string).collect(),
        precedents,
        vectors,
        rankers: Vec::new(),
    }
}

/// The features of question `q` of `questions` against `learning`; `precedent` is its index among the
/// learning's precedents when it is one of them (then it votes not for itself and leaves the prior).
fn features_of(
    learning: &Learning,
    run: &Run,
    questions: &[Labelled],
    vectors: Option<ModelVectors>,
    q: usize,
    precedent: Option<usize>,
) -> Vec<Features> {
    let (lexical, dense) = &run.first[q];
    let vector = vectors
        .filter(|_| run.mode != Mode::Bm25)
        .map(|v| (v.model, v.vectors[q].as_slice()));
    let skip = |p: usize| Some(p) == precedent;
    let neighbours = learning.neighbours(&learning.term_ids(&questions[q].terms), vector, &skip);
    let own: &[u32] = if precedent.is_some() {
        &questions[q].gold
    } else {
        &[]
    };
    learning.features(
        FirstStage {
            lexical,
            dense: dense.as_deref(),
        },
        &neighbours,
        own,
    )
}

/// The best `k` sections under `weights`, best first (what [`Learning::rerank`] ranks the head by).
pub fn ranked(features: &[Features], weights: &Weights, max_count: u32, k: usize) -> Vec<Hit> {
    ranked_except(features, weights, max_count, &[], k)
}

/// The best `k` sections under `weights` but those in `except`, best first.
pub fn ranked_except(
    features: &[Features],
    weights: &Weights,
    max_count: u32,
    except: &[u32],
    k: usize,
) -> Vec<Hit> {
    super::top_hits(
        features
            .iter()
            .filter(|f| !except.contains(&f.section))
            .map(|f| (f.section as usize, f.score(weights, max_count)))
            .filter(|&(_, s)| s > 0.0),
        k,
    )
}

/// What coordinate ascent maximises: mean [`tuning_objective`] over the examples.
fn objective(examples: &[(Vec<Features>, &[u32])], weights: &Weights, max_count: u32) -> f64 {
    let total: f64 = examples
        .iter()
        .filter(|(_, gold)| !gold.is_empty())
        .map(|(features, gold)| {
            let top: Vec<u32> = ranked(features, weights, max_count, 10)
                .iter()
                .map(|h| h.index)
                .collect();
            tuning_objective(&top, gold)
        })
        .sum();
    total / examples.len().max(1) as f64
}

const GRID: [f32; 18] = [
    0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 32.0, 50.0, 80.0,
    128.0,
];
const SMOOTHING: [f32; 5] = [0.05, 0.25, 1.0, 4.0, 16.0];

/// Coordinate ascent from the unlearned ranking over the weights `mode` may change (BM25 has no dense list,
/// dense no BM25 list).
fn ascend(examples: &[(Vec<Features>, &[u32])], mode: Mode, max_count: u32) -> Weights {
    let mut start = Weights::UNLEARNED;
    let lexical: Coordinate<Weights> = (|w| &mut w.lexical, &GRID);
    let dense: Coordinate<Weights> = (|w| &mut w.dense, &GRID);
    let mut coordinates = match mode {
        Mode::Bm25 => {
            start.dense = 0.0;
            vec![lexical]
        }
        Mode::Dense => {
            start.lexical = 0.0;
            vec![dense]
        }
        Mode::Hybrid => vec![lexical, dense],
    };
    coordinates.push((|w| &mut w.prior, &GRID));
    coordinates.push((|w| &mut w.vote_lexical, &GRID));
    if mode != Mode::Bm25 {
        coordinates.push((|w| &mut w.vote_dense, &GRID));
    }
    coordinates.push((|w| &mut w.smoothing, &SMOOTHING));
    coordinate_ascent(start, &coordinates, |w| objective(examples, w, max_count))
}

/// The tail's coordinates: every weight the head has for `mode`, and the tail features.
fn tail_coordinates(mode: Mode) -> Vec<Coordinate<'static, Weights>> {
    let mut coordinates: Vec<Coordinate<Weights>> = Vec::new();
    if mode != Mode::Dense {
        coordinates.push((|w| &mut w.lexical, &GRID));
    }
    if mode != Mode::Bm25 {
        coordinates.push((|w| &mut w.dense, &GRID));
    }
    coordinates.push((|w| &mut w.prior, &GRID));
    coordinates.push((|w| &mut w.vote_lexical, &GRID));
    if mode != Mode::Bm25 {
        coordinates.push((|w| &mut w.vote_dense, &GRID));
    }
    coordinates.push((|w| &mut w.cogold, &GRID));
    coordinates.push((|w| &mut w.voters, &GRID));
    coordinates.push((|w| &mut w.adjacent, &GRID));
    coordinates.push((|w| &mut w.linked, &GRID));
    coordinates.push((|w| &mut w.unit, &GRID));
    coordinates.push((|w| &mut w.smoothing, &SMOOTHING));
    coordinates
}

/// Fits the tail of `run`'s ranker whose head is `head` on the learning's own precedents (`members` as in
/// [`fit_run`]): with the first [`HEAD`] fixed, coordinate ascent from the head's weights on Recall@100.
pub fn fit_tail(
    learning: &Learning,
    run: &Run,
    questions: &[Labelled],
    vectors: Option<ModelVectors>,
    members: &[usize],
    head: &Weights,
) -> Weights {
    let max_count = learning.max_count();
    // Per question: its first HEAD, the other candidates with their tail features, its gold.
    let examples: Vec<(Vec<u32>, Vec<Features>, &[u32])> = members
        .iter()
        .enumerate()
        .filter(|(_, &q)| !questions[q].gold.is_empty())
        .map(|(p, &q)| {
            let mut features = features_of(learning, run, questions, vectors, q, Some(p));
            let first: Vec<u32> = ranked(&features, head, max_count, HEAD)
                .iter()
                .map(|h| h.index)
                .collect();
            let own = &questions[q].gold;
            learning.add_tail_features(&mut features, &first, &|i| i == p, own);
            features.retain(|f| !first.contains(&f.section));
            (first, features, own.as_slice())
        })
        .collect();
    let recall100 = |w: &Weights| -> f64 {
        let total: f64 = examples
            .iter()
            .map(|(first, rest, gold)| {
                let found = gold.iter().filter(|g| first.contains(g)).count()
                    + ranked(rest, w, max_count, 100 - first.len())
                        .iter()
                        .filter(|h| gold.contains(&h.index))
                        .count();
                found as f64 / gold.len() as f64
            })
            .sum();
        total / examples.len().max(1) as f64
    };
    coordinate_ascent(*head, &tail_coordinates(run.mode), recall100)
}

/// Fits the ranker of `run` on the learning's own precedents: `members[i]` is the question that is precedent
/// `i` (each scored leaving itself out).
pub fn fit_run(
    learning: &Learning,
    run: &Run,
    questions: &[Labelled],
    vectors: Option<ModelVectors>,
    members: &[usize],
) -> Weights {
    let examples: Vec<(Vec<Features>, &[u32])> = members
        .iter()
        .enumerate()
        .map(|(p, &q)| {
            (
                features_of(learning, run, questions, vectors, q, Some(p)),
                questions[q].gold.as_slice(),
            )
        })
        .collect();
    ascend(&examples, run.mode, learning.max_count())
}

/// Fits the tail of each of `file`'s rankers (one per run of `runs`, learned from `members`) below its head as
/// it stands: after any shrinking, since the head decides which sections the tail orders.
pub fn fit_tails(
    file: &mut LearnedFile,
    law: &Law,
    questions: &[Labelled],
    members: &[usize],
    vectors: Option<ModelVectors>,
    runs: &[Run],
) {
    let (learning, _) = file.clone().resolve(law).expect("assembled for this law");
    for (ranker, run) in file.rankers.iter_mut().zip(runs) {
        ranker.tail = Some(fit_tail(
            &learning,
            run,
            questions,
            vectors,
            members,
            &ranker.weights,
        ));
    }
}

/// Learns from `members`: the file with one fit ranker per run (its CV figures left empty, no tail yet: see
/// [`fit_tails`]), the learned signals' weights of run `r` scaled by `shrinks[r]` ([`Weights::shrunk`]; 1: as
/// fit).
#[allow(clippy::too_many_arguments)]
pub fn learn(
    law: &Law,
    generator: &str,
    provenance: Provenance,
    questions: &[Labelled],
    members: &[usize],
    vectors: Option<ModelVectors>,
    runs: &[Run],
    shrinks: &[f32],
) -> LearnedFile {
    assert_eq!(runs.len(), shrinks.len(), "one shrink per run");
    let mut file = assemble(law, generator, provenance, questions, members, vectors);
    let (learning, _) = file.clone().resolve(law).expect("assembled for this law");
    file.rankers = runs
        .iter()
        .zip(shrinks)
        .map(|(run, &shrink)| Ranker {
            strategy: run.strategy.map(str::to_string),
            mode: run.mode,
            weights: fit_run(&learning, run, questions, vectors, members).shrunk(shrink),
            tail: None,
            cv: Default::default(),
        })
        .collect();
    file
}

/// The learned ranking (`k` deep) of question `q` of `questions`, which `learning` did not learn from, under
/// `weights` and below the head `tail`: what search ranks it by.
#[allow(clippy::too_many_arguments)]
pub fn ranking_of(
    learning: &Learning,
    run: &Run,
    questions: &[Labelled],
    vectors: Option<ModelVectors>,
    q: usize,
    weights: &Weights,
    tail: Option<&Weights>,
    k: usize,
) -> Vec<u32> {
    let features = features_of(learning, run, questions, vectors, q, None);
    learning
        .ranked(features, weights, tail, &|_| false, &[], k)
        .iter()
        .map(|h| h.index)
        .collect()
}

/// One run cross-validated: per question the held-out learned ranking (100 deep), per fold the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldOut {
    /// Per question, best first.
    pub rankings: Vec<Vec<u32>>,
    /// Per fold: the head's weights.
    pub weights: Vec<Weights>,
    /// Per fold: the tail's.
    pub tails: Vec<Option<Weights>>,
}

/// k-fold cross-validation of learning: per fold, precedents, prior and every run's weights (head and tail) are
/// learned from the other folds and the fold is ranked with them (run `r`'s head shrunk by `shrinks[r]`, as
/// [`learn`] does, its tail fit below it). Folds as [`fold_assignment`] (seeded).
#[allow(clippy::too_many_arguments)]
pub fn cross_validate(
    law: &Law,
    questions: &[Labelled],
    vectors: Option<ModelVectors>,
    runs: &[Run],
    folds: usize,
    seed: u64,
    shrinks: &[f32],
    progress: &mut dyn FnMut(usize),
) -> Vec<HeldOut> {
    let fold_of = fold_assignment(questions.len(), folds, seed);
    let mut out: Vec<HeldOut> = runs
        .iter()
        .map(|_| HeldOut {
            rankings: vec![Vec::new(); questions.len()],
            weights: Vec::new(),
            tails: Vec::new(),
        })
        .collect();
    for f in 0..folds {
        let members: Vec<usize> = (0..questions.len()).filter(|&q| fold_of[q] != f).collect();
        let provenance = Provenance::of_fold(members.len());
        let mut file = learn(
            law, "", provenance, questions, &members, vectors, runs, shrinks,
        );
        fit_tails(&mut file, law, questions, &members, vectors, runs);
        let (learning, _) = file.clone().resolve(law).expect("assembled for this law");
        for (r, run) in runs.iter().enumerate() {
            let (weights, tail) = (file.rankers[r].weights, file.rankers[r].tail);
            for q in (0..questions.len()).filter(|&q| fold_of[q] == f) {
                out[r].rankings[q] = ranking_of(
                    &learning,
                    run,
                    questions,
                    vectors,
                    q,
                    &weights,
                    tail.as_ref(),
                    100,
                );
            }
            out[r].weights.push(weights);
            out[r].tails.push(tail);
        }
        progress(f + 1);
    }
    out
}
