//! Questions among many laws (`paragraf eval --among`): what the other laws cost, and what law routing and
//! learning win back. The questions are searched among every law as one ranking ([`FederalIndex`]), unrouted
//! and routed by law ([`routing`]), as the browser lays the index out, and — when they have a law of their own
//! (the BGB for GerLayQA) — in that law alone with the same index and protocol, so the difference is the
//! distractors alone. Gold ids may name their law (`§ 3 BUrlG`). Per mode: Recall@10 with its bootstrap
//! interval, a paired permutation test routed vs unrouted, how often the top hit's law is right, which laws the
//! other top hits come from; per question as TSV. Pure: laws, index and vectors come built, progress goes to a
//! callback.

use paragraf_core::federal::files::{FederalHead, SHARD_BYTES};
use paragraf_core::federal::learned::{self, AmongQuestion};
use paragraf_core::federal::routing::{
    self, law_signals, CatalogueLaw, Example, Features, LawQuery, Router,
};
use paragraf_core::federal::{FederalHit, FederalIndex, FederalLaw, FirstStage, LearnedLaw};
use paragraf_core::routing_weights::RoutingWeights;
use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::learning::fit::{Labelled, ModelVectors};
use paragraf_engine::{EngineError, LawIndex, Mode, SearchOptions};
use paragraf_law::Law;
use paragraf_stats::metrics::recall_at;
use paragraf_stats::stats::{bootstrap_ci, paired_permutation_test};
use std::collections::HashMap;

use crate::gold::{GoldWarning, LawGold};
use crate::harness::EvalError;
use crate::Question;

/// The laws as a [`FederalIndex`] takes them: each with its `section` bundle where it has one.
pub fn parts(laws: &[(Law, Option<StrategyBundle>)]) -> Vec<FederalLaw<'_>> {
    laws.iter()
        .map(|(law, bundle)| FederalLaw {
            law,
            sections: bundle.as_ref(),
        })
        .collect()
}

/// What `eval --among` measured: the Markdown table (with the routing weights fit, under `--fit-routing`) and
/// the per-question TSV.
pub struct Measured {
    /// The table per mode, with the learned section and the weights fit.
    pub markdown: String,
    /// One row per question and mode.
    pub per_question: String,
}

/// Which routing weights `eval --among` ranks with.
#[derive(Clone, Copy)]
pub enum Routing {
    /// Fit on the questions evaluated (the tuning half; in-sample).
    Fit,
    /// The shipped ones of each mode ([`RoutingWeights::shipped`]).
    Shipped,
    /// These, in every mode (`--routing-weights`).
    Given(RoutingWeights),
}

/// What is learned from questions that [`measure`] also ranks with ([`paragraf_core::federal::learned`]).
pub enum AmongLearning<'a> {
    /// Nothing.
    Off,
    /// Learned per fold from the questions themselves (for their own law, `law`; `--learn-per-fold`), scored
    /// held out.
    PerFold {
        /// The law the questions were asked about (index into the laws).
        law: usize,
        /// Folds.
        folds: usize,
        /// The learned signals' weights are scaled by this after fitting (`paragraf learn --shrink`).
        shrink: f32,
        /// Questions across laws the routing weights are also fit on (a group of equal weight).
        across: Option<Across<'a>>,
    },
    /// A folder's learned file and the routing weights `paragraf learn` fit with it.
    Folder(&'a LearnedLaw),
}

/// Questions across laws (gold naming their laws), embedded when the modes need vectors.
pub struct Across<'a> {
    /// Where they came from, for the report.
    pub source: String,
    /// Their gold, placed among the laws.
    pub gold: &'a LawGold,
    /// Their texts.
    pub texts: &'a [String],
    /// Their vectors, in the index's model.
    pub vectors: Option<&'a [Vec<f32>]>,
}

/// What [`measure`] is doing, for a front end's progress.
#[derive(Clone, Copy, Debug)]
pub enum AmongEvent {
    /// A mode's questions are searched.
    Searching(Mode),
    /// They were searched and routed.
    Searched(Mode),
    /// A fold of learning across laws was learned.
    FoldLearned {
        /// The mode.
        mode: Mode,
        /// Folds done.
        fold: usize,
        /// Folds.
        folds: usize,
    },
    /// Learning was cross-validated for the mode.
    LearningDone(Mode),
}

/// Everything [`measure`] needs, built.
pub struct Setup<'a> {
    /// The laws searched, with their `section` bundles.
    pub laws: &'a [(Law, Option<StrategyBundle>)],
    /// The same laws as one index ([`parts`]).
    pub among: &'a FederalIndex,
    /// The questions' own law when they have one (plain gold ids mean it).
    pub own: Option<usize>,
    /// The questions.
    pub questions: &'a [Question],
    /// Their gold, placed among the laws.
    pub gold: &'a LawGold,
    /// Their texts as searched.
    pub texts: &'a [String],
    /// Their vectors in the index's model (needed by every mode but BM25).
    pub vectors: Option<&'a [Vec<f32>]>,
    /// The modes to measure.
    pub modes: &'a [Mode],
    /// Rounds of the bootstrap and the permutation test.
    pub rounds: usize,
    /// Their seed, and the folds'.
    pub seed: u64,
    /// Which routing weights to rank with.
    pub routing: Routing,
    /// What learned from questions to rank with.
    pub learning: AmongLearning<'a>,
}

/// Per question of one run: Recall@10 (`None`: no gold), the law of the top hit, whether a gold law is first and
/// among the laws of the first three hits.
struct Judged {
    recall: Vec<Option<f64>>,
    top_law: Vec<u32>,
    law_first: Vec<bool>,
    law_top3: Vec<bool>,
}

fn judge(rankings: &[Vec<FederalHit>], gold: &LawGold) -> Judged {
    let mut judged = Judged {
        recall: Vec::new(),
        top_law: Vec::new(),
        law_first: Vec::new(),
        law_top3: Vec::new(),
    };
    for (q, hits) in rankings.iter().enumerate() {
        let ranking: Vec<(u32, u32)> = hits.iter().map(|h| (h.law, h.section)).collect();
        let laws = gold.laws(q);
        judged
            .recall
            .push(recall_at(&ranking, &gold.sections[q], 10));
        judged
            .top_law
            .push(hits.first().map_or(u32::MAX, |h| h.law));
        judged
            .law_first
            .push(hits.first().is_some_and(|h| laws.contains(&h.law)));
        judged
            .law_top3
            .push(hits.iter().take(3).any(|h| laws.contains(&h.law)));
    }
    judged
}

/// Searches the questions among every law: unrouted and routed, as the browser lays the index out, with what
/// was learned when asked, and in their own law alone when they have one.
pub fn measure(setup: Setup, progress: &mut dyn FnMut(AmongEvent)) -> Result<Measured, EvalError> {
    let Setup {
        laws,
        among,
        own,
        questions,
        gold,
        texts,
        vectors,
        modes,
        rounds,
        seed,
        routing,
        learning,
    } = setup;
    let alone = own
        .map(|o| FederalIndex::new(&parts(&laws[o..=o])))
        .transpose()?;
    // Precedents' terms as the learned law's own index analyses them (as `paragraf learn` does).
    let learned_index = match &learning {
        AmongLearning::PerFold { law, .. } => Some(LawIndex::new(laws[*law].0.clone())),
        _ => None,
    };
    // What the browser searches: the same sections, product-quantized vectors, postings in shards, routed by a
    // router over the catalogue (abbreviations, titles, sizes, the laws each cites or names) with the head's
    // index of the laws' text.
    let browser_files = FederalHead::build(&parts(laws), SHARD_BYTES)?;
    let law_refs: Vec<&Law> = laws.iter().map(|(law, _)| law).collect();
    let signals = law_signals(&law_refs);
    let browser_router = Router::of_catalogue(
        law_refs
            .iter()
            .zip(&signals.laws)
            .zip(&signals.refers)
            .map(|((law, s), refers)| CatalogueLaw {
                law: &law.abbreviation,
                title: &law.title,
                short_title: &law.short_title,
                sections: s.sections,
                refers: refers
                    .iter()
                    .map(|&l| law_refs[l as usize].abbreviation.as_str())
                    .collect(),
            }),
        Some(browser_files.head.law_text_index()),
    );
    let own_name = own.map(|o| laws[o].0.abbreviation.as_str());
    let mut markdown = format!(
        "# {} questions among {} laws ({} sections)\n\n{} questions ({} gold ids could not be placed: misses); Recall@10 [95 % bootstrap CI]; \"routed\": law routing with {}; p: paired permutation test ({rounds} rounds, seed {seed}). \"law first\": the top hit's law is a gold law; \"law in top 3\": a gold law among the laws of the first three hits. \"Browser layout\": as the app searches (product-quantized vectors, sharded postings, routed with the shipped weights by a router over the catalogue: the laws' names, kinds, sizes and the laws each cites or names, and the head's index of the laws' text).\n\n| mode | {} | among all, unrouted | routed | Δ routed, p | law first (unrouted → routed) | law in top 3 (routed) | law first by its text / by agreement alone | browser layout (the app's routing) | laws of the other top hits (routed) |\n|---|---|---|---|---|---|---|---|---|---|\n",
        own_name.unwrap_or("cross-law"),
        laws.len(),
        among.len(),
        questions.len(),
        gold.warnings.iter().filter(|w| !matches!(w, GoldWarning::Resolved { .. })).count(),
        match routing {
            Routing::Fit => "weights fit on these questions (in-sample)".to_string(),
            Routing::Shipped => "the shipped weights of each mode".to_string(),
            Routing::Given(w) => format!("the weights `{}`", weights_json(&w)),
        },
        own_name.map_or("alone".to_string(), |o| format!("{o} alone")),
    );
    let mut per_question = String::from(
        "question\tmode\trecall10_unrouted\trecall10_routed\ttop_law_unrouted\ttop_law_routed\tlaw_first_routed\tlaw_top3_routed\trecall10_learned\ttop_law_learned\tnamed_law\n",
    );
    let mut learned_md = String::new();
    let mut fitted = Vec::new();
    for &mode in modes {
        let options = SearchOptions {
            mode,
            citations_first: false,
            route_laws: false,
            ..SearchOptions::default()
        };
        let vector = |i: usize| vectors.map(|v| v[i].as_slice());
        progress(AmongEvent::Searching(mode));
        let first: Vec<FirstStage> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| among.first_stage(text, vector(i), &options))
            .collect::<Result<_, _>>()?;
        let queries: Vec<LawQuery> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| among.law_query(t, vector(i).filter(|_| first[i].mode != Mode::Bm25)))
            .collect();
        let features: Vec<Vec<Features>> = first
            .iter()
            .zip(&queries)
            .map(|(f, query)| among.routing_features(f, query))
            .collect();
        let weights = match routing {
            Routing::Fit => {
                let examples: Vec<Example> = features
                    .iter()
                    .enumerate()
                    .map(|(q, f)| Example {
                        features: f.clone(),
                        gold: gold.sections[q]
                            .iter()
                            .filter_map(|&(l, s)| among.doc_of(l, s))
                            .collect(),
                        gold_laws: gold.laws(q),
                    })
                    .collect();
                let w = routing::fit(&examples, RoutingWeights::shipped(mode));
                fitted.push((mode, w));
                w
            }
            Routing::Shipped => RoutingWeights::shipped(mode),
            Routing::Given(w) => w,
        };
        // Which law each signal alone would put first: the law-text ranking's, the agreement's.
        let signal_first = |q: usize, signal: fn(&Features) -> f32| {
            let laws = gold.laws(q);
            features[q]
                .iter()
                .max_by(|a, b| signal(a).total_cmp(&signal(b)))
                .is_some_and(|f| signal(f) > 0.0 && laws.contains(&f.law))
        };
        let text_first: Vec<bool> = (0..texts.len())
            .map(|q| signal_first(q, |f| f.law_text))
            .collect();
        let agreement_first: Vec<bool> = (0..texts.len())
            .map(|q| signal_first(q, |f| f.agreement))
            .collect();
        let top = |docs: Vec<paragraf_index::Hit>| among.hits(docs);
        let unrouted: Vec<Vec<FederalHit>> = features
            .iter()
            .map(|f| top(routing::routed(f, &RoutingWeights::UNROUTED, 10)))
            .collect();
        let routed: Vec<Vec<FederalHit>> = features
            .iter()
            .map(|f| top(routing::routed(f, &weights, 10)))
            .collect();
        progress(AmongEvent::Searched(mode));
        let learned: Option<(Vec<Vec<FederalHit>>, Vec<RoutingWeights>)> =
            match (&learning, &learned_index) {
                (
                    &AmongLearning::PerFold {
                        law,
                        folds,
                        shrink,
                        ref across,
                    },
                    Some(law_index),
                ) => {
                    let among_questions =
                        among_questions(among, &features, &queries, texts, gold, vector);
                    let labelled: Vec<Labelled> = (0..texts.len())
                        .map(|q| {
                            let sections = gold.sections[q]
                                .iter()
                                .filter(|&&(l, _)| l == law as u32)
                                .map(|&(_, s)| s)
                                .collect();
                            Labelled::new(&texts[q], sections, &|t| law_index.bm25().query_terms(t))
                        })
                        .collect();
                    let model_vectors = among
                        .model()
                        .zip(vectors)
                        .filter(|_| mode != Mode::Bm25)
                        .map(|(model, vectors)| ModelVectors { model, vectors });
                    let across = match across {
                        Some(across) => across_questions(
                            among,
                            across.gold,
                            across.texts,
                            across.vectors.filter(|_| model_vectors.is_some()),
                            &options,
                        )?,
                        None => Vec::new(),
                    };
                    let held = learned::cross_validate(
                        among,
                        law as u32,
                        &laws[law].0,
                        &among_questions,
                        &labelled,
                        &across,
                        model_vectors,
                        folds,
                        seed,
                        weights,
                        shrink,
                        100,
                        &mut |fold| progress(AmongEvent::FoldLearned { mode, fold, folds }),
                    );
                    progress(AmongEvent::LearningDone(mode));
                    Some((held.rankings.into_iter().map(top).collect(), held.weights))
                }
                (AmongLearning::Folder(l), _) => Some({
                    let rankings = texts
                        .iter()
                        .enumerate()
                        .map(|(q, text)| {
                            let mut f = features[q].clone();
                            among.add_learned(
                                &mut f,
                                text,
                                &queries[q],
                                vector(q),
                                l.law,
                                &l.learning,
                                &|_| false,
                                &[],
                            );
                            top(routing::routed(&f, &l.weights, 100))
                        })
                        .collect();
                    (rankings, vec![l.weights])
                }),
                _ => None,
            };
        let alone_cell = match &alone {
            Some(alone) => {
                let own = own.expect("alone has a law") as u32;
                let rankings: Vec<Vec<FederalHit>> = texts
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        Ok(alone
                            .search(text, vector(i), &options)?
                            .0
                            .into_iter()
                            .map(|h| FederalHit { law: own, ..h })
                            .collect())
                    })
                    .collect::<Result<_, EngineError>>()?;
                let judged = judge(&rankings, gold);
                format!("{:.4}", mean(&judged.recall))
            }
            None => "–".to_string(),
        };
        let browser: Vec<Vec<FederalHit>> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let head = &browser_files.head;
                let coded = browser_files.vectors.as_ref().zip(vector(i));
                let app = SearchOptions {
                    route_laws: true,
                    ..options
                };
                Ok(head
                    .search(
                        &head.query_terms(text),
                        coded,
                        &app,
                        |n| browser_files.shards.get(n as usize),
                        |_| true,
                        Some((&browser_router, &browser_router.ask(text))),
                    )?
                    .0)
            })
            .collect::<Result<_, EvalError>>()?;
        let (u, r, b) = (
            judge(&unrouted, gold),
            judge(&routed, gold),
            judge(&browser, gold),
        );
        let defined = |v: &[Option<f64>]| v.iter().flatten().copied().collect::<Vec<_>>();
        let ci = |v: &[Option<f64>]| bootstrap_ci(&defined(v), 0.95, rounds, seed);
        let ((u_lo, u_hi), (r_lo, r_hi)) = (ci(&u.recall)?, ci(&r.recall)?);
        let p = paired_permutation_test(&defined(&u.recall), &defined(&r.recall), rounds, seed)?
            .p_value;
        let share =
            |v: &[bool]| 100.0 * v.iter().filter(|&&b| b).count() as f64 / v.len().max(1) as f64;
        let mut others: HashMap<u32, usize> = HashMap::new();
        for (q, &l) in r.top_law.iter().enumerate() {
            if l != u32::MAX && !gold.laws(q).contains(&l) {
                *others.entry(l).or_default() += 1;
            }
        }
        let mut others: Vec<(u32, usize)> = others.into_iter().collect();
        others.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = others
            .iter()
            .take(5)
            .map(|(l, n)| format!("{} {n}", laws[*l as usize].0.abbreviation))
            .collect();
        markdown.push_str(&format!(
            "| {mode} | {alone_cell} | {:.4} [{u_lo:.4}, {u_hi:.4}] | {:.4} [{r_lo:.4}, {r_hi:.4}] | {:+.4}, {p:.4} | {:.1} % → {:.1} % | {:.1} % | {:.1} % / {:.1} % | {:.4}, law first {:.1} % | {} |\n",
            mean(&u.recall),
            mean(&r.recall),
            mean(&r.recall) - mean(&u.recall),
            share(&u.law_first),
            share(&r.law_first),
            share(&r.law_top3),
            share(&text_first),
            share(&agreement_first),
            mean(&b.recall),
            share(&b.law_first),
            named.join(", ")
        ));
        let name = |l: u32| {
            laws.get(l as usize)
                .map_or("-", |(law, _)| law.abbreviation.as_str())
        };
        let learned_judged = match &learned {
            Some((rankings, fold_weights)) => {
                let top10: Vec<Vec<FederalHit>> = rankings
                    .iter()
                    .map(|r| r[..r.len().min(10)].to_vec())
                    .collect();
                let l = judge(&top10, gold);
                let (l_lo, l_hi) = ci(&l.recall)?;
                let p = paired_permutation_test(
                    &defined(&r.recall),
                    &defined(&l.recall),
                    rounds,
                    seed,
                )?
                .p_value;
                let at100 = |rankings: &[Vec<FederalHit>]| {
                    let recalls: Vec<Option<f64>> = rankings
                        .iter()
                        .enumerate()
                        .map(|(q, hits)| {
                            let ranking: Vec<(u32, u32)> =
                                hits.iter().map(|h| (h.law, h.section)).collect();
                            recall_at(&ranking, &gold.sections[q], 100)
                        })
                        .collect();
                    mean(&recalls)
                };
                let routed100: Vec<Vec<FederalHit>> = features
                    .iter()
                    .map(|f| top(routing::routed(f, &weights, 100)))
                    .collect();
                let helped = l
                    .recall
                    .iter()
                    .zip(&r.recall)
                    .filter(|(a, b)| a > b)
                    .count();
                let hurt = l
                    .recall
                    .iter()
                    .zip(&r.recall)
                    .filter(|(a, b)| a < b)
                    .count();
                learned_md.push_str(&format!(
                    "| {mode} | {:.4} | {:.4} [{l_lo:.4}, {l_hi:.4}] | {:+.4}, {p:.4} | {helped} / {hurt} | {:.1} % → {:.1} % | {:.4} → {:.4} | {} |\n",
                    mean(&r.recall),
                    mean(&l.recall),
                    mean(&l.recall) - mean(&r.recall),
                    share(&r.law_first),
                    share(&l.law_first),
                    at100(&routed100),
                    at100(rankings),
                    fold_weights
                        .iter()
                        .map(|w| format!("({}, {}, {})", w.prior, w.vote_lexical, w.vote_dense))
                        .collect::<Vec<_>>()
                        .join(" ")
                ));
                Some(l)
            }
            None => None,
        };
        for (q, text) in texts.iter().enumerate() {
            let cell = |v: Option<f64>| v.map_or("".to_string(), |v| format!("{v:.4}"));
            per_question.push_str(&format!(
                "{q}\t{mode}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
                cell(u.recall[q]),
                cell(r.recall[q]),
                name(u.top_law[q]),
                name(r.top_law[q]),
                r.law_first[q],
                r.law_top3[q],
                learned_judged
                    .as_ref()
                    .map_or(String::new(), |l| cell(l.recall[q])),
                learned_judged.as_ref().map_or("", |l| name(l.top_law[q])),
                browser_router
                    .ask(text)
                    .named
                    .map_or("", |l| name(l as u32)),
            ));
        }
    }
    if !learned_md.is_empty() {
        markdown.push_str(&format!(
            "\n## Routed with what was learned from questions\n\n{}\n\n| mode | routed | routed + learned [95 % CI] | Δ, p | helped / hurt | law first (routed → learned) | R@100 routed → learned | learned weights (prior, lexical vote, dense vote) |\n|---|---|---|---|---|---|---|---|\n{learned_md}",
            match learning {
                AmongLearning::PerFold { folds, shrink, across, .. } => format!(
                    "{folds}-fold cross-validation (seed {seed}): per fold the precedents, the prior and the learned signals' routing weights come from the other folds only (weights × {shrink} after fitting{}), and the fold is ranked with them; the other routing weights as above.",
                    across.map_or(String::new(), |a| format!(
                        "; fit with {} as a group of equal weight",
                        a.source
                    ))
                ),
                _ => "The folder's learned file and the routing weights `paragraf learn` fit with it; these questions are not among those it learned from.".to_string(),
            }
        ));
    }
    for (mode, w) in &fitted {
        markdown.push_str(&format!(
            "\nRouting weights fit for {mode} (in-sample on these questions): `{}`\n",
            weights_json(w)
        ));
    }
    Ok(Measured {
        markdown,
        per_question,
    })
}

/// The questions as learning across laws takes them: their routing features before learning, vectors and gold
/// documents.
fn among_questions<'a>(
    among: &FederalIndex,
    features: &[Vec<Features>],
    queries: &[LawQuery],
    texts: &'a [String],
    gold: &LawGold,
    vector: impl Fn(usize) -> Option<&'a [f32]>,
) -> Vec<AmongQuestion<'a>> {
    texts
        .iter()
        .enumerate()
        .map(|(q, text)| AmongQuestion {
            text,
            vector: vector(q),
            features: features[q].clone(),
            query: queries[q].clone(),
            gold: gold.sections[q]
                .iter()
                .filter_map(|&(l, s)| among.doc_of(l, s))
                .collect(),
            gold_laws: gold.laws(q),
        })
        .collect()
}

/// Questions across laws (gold naming their laws, placed in `gold`) as learning across laws takes them:
/// searched among `among` (first stage in `options.mode`, routing features) with their gold documents; gold
/// that could not be placed counts as a miss.
pub fn across_questions<'a>(
    among: &FederalIndex,
    gold: &LawGold,
    texts: &'a [String],
    vectors: Option<&'a [Vec<f32>]>,
    options: &SearchOptions,
) -> Result<Vec<AmongQuestion<'a>>, EngineError> {
    let mut queries: Vec<LawQuery> = Vec::with_capacity(texts.len());
    let features: Vec<Vec<Features>> = texts
        .iter()
        .enumerate()
        .map(|(q, text)| {
            let vector = vectors.map(|v| v[q].as_slice());
            let first = among.first_stage(text, vector, options)?;
            queries.push(among.law_query(text, vector.filter(|_| first.mode != Mode::Bm25)));
            Ok(among.routing_features(&first, &queries[q]))
        })
        .collect::<Result<_, EngineError>>()?;
    Ok(among_questions(
        among,
        &features,
        &queries,
        texts,
        gold,
        |q| vectors.map(|v| v[q].as_slice()),
    ))
}

/// Routing weights as JSON, as `--routing-weights` takes them.
fn weights_json(weights: &RoutingWeights) -> String {
    serde_json::to_string(weights).expect("plain numbers serialize")
}

/// Mean over the questions with gold (0 when none has).
fn mean(recalls: &[Option<f64>]) -> f64 {
    paragraf_stats::metrics::mean(recalls.iter().copied()).unwrap_or(0.0)
}
