//! Learning from labelled questions, measured before anything is written: the questions mapped to a law
//! ([`prepare`]), each run's first stages computed once ([`runs`]), k-fold cross-validation of the learned
//! prior, precedents and ranker against the same runs without learning ([`cross_validated`]) and the result as
//! Markdown ([`cv_markdown`]). `paragraf learn` writes the file only after this; `paragraf eval
//! --learn-per-fold` reports it. Pure: the questions come embedded, progress goes to a callback.

use std::collections::HashMap;

use paragraf_core::federal::learned::{self as federal_learned, AmongQuestion};
use paragraf_core::federal::routing;
use paragraf_core::federal::FederalIndex;
use paragraf_core::manifest::LearnedRouting;
use paragraf_core::routing_weights::RoutingWeights;
use paragraf_engine::learning::fit::{
    cross_validate, ranking_of, HeldOut, Labelled, ModelVectors, Run,
};
use paragraf_engine::learning::{question_hash, CvFigures, Learning, Weights};
use paragraf_engine::{
    first_stages, fuse, EngineError, LawIndex, Mode, SearchOptions, StrategyIndex,
};
use paragraf_index::Hit;
use paragraf_law::Law;
use paragraf_stats::metrics::{recall_at, reciprocal_rank_at};
use paragraf_stats::stats::{bootstrap_ci, holm, paired_permutation_test};

use crate::mean;
use crate::Question;

/// The default of `--shrink`: chosen so that learning from GerLayQA does not lower Recall@10 on the project's
/// own lay questions in any mode (docs/learning.md, "The project's own lay questions").
pub const DEFAULT_SHRINK: f32 = 0.75;

/// Labelled questions ready to learn from, and what was left out of the file.
pub struct Prepared {
    /// Usable questions.
    pub labelled: Vec<Labelled>,
    /// Their texts (for embedding), in the same order.
    pub texts: Vec<String>,
    /// Questions skipped: no gold section in the law, or seen before.
    pub skipped: usize,
    /// Per usable question, the gold it is scored on: its sections plus a placeholder no ranking holds for
    /// each gold id not in the law (a miss, as `paragraf eval` counts it).
    pub scored_gold: Vec<Vec<u32>>,
    /// What was left out, and why.
    pub left_out: LeftOut,
}

/// The questions and gold ids [`prepare`] could not use.
#[derive(Default)]
pub struct LeftOut {
    /// The law's abbreviation.
    pub law: String,
    /// Gold ids not among the law's active sections, with how many questions name them, most frequent first.
    pub unknown: Vec<(String, usize)>,
    /// Questions without one gold section in the law.
    pub without_gold: usize,
    /// Questions seen before (learned once).
    pub repeated: usize,
}

impl LeftOut {
    /// One warning per kind of loss, the ten most frequent unknown ids by name.
    pub fn warnings(&self) -> Vec<String> {
        let law = &self.law;
        let mut lines: Vec<String> = self
            .unknown
            .iter()
            .take(10)
            .map(|(id, n)| {
                format!(
                    "{id} not in {law}: skipped ({n} question{})",
                    if *n == 1 { "" } else { "s" }
                )
            })
            .collect();
        if self.unknown.len() > 10 {
            lines.push(format!(
                "{} more gold ids not in {law}: skipped",
                self.unknown.len() - 10
            ));
        }
        if self.without_gold > 0 {
            lines.push(format!(
                "{} questions without a gold section in {law}: skipped",
                self.without_gold
            ));
        }
        if self.repeated > 0 {
            lines.push(format!(
                "{} repeated questions: learned once",
                self.repeated
            ));
        }
        lines
    }
}

/// Maps the questions' gold to `law`'s active sections, says what it leaves out ("§ 9999 not in BGB: skipped",
/// counted), drops repeated gold ids, questions without a usable gold section and repeated questions.
pub fn prepare(questions: &[Question], index: &LawIndex) -> Prepared {
    let law = &index.law;
    let mut unknown: HashMap<&str, usize> = HashMap::new();
    let (mut empty, mut repeated) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    let mut out = Prepared {
        labelled: Vec::new(),
        texts: Vec::new(),
        skipped: 0,
        scored_gold: Vec::new(),
        left_out: LeftOut::default(),
    };
    let mut placeholder = u32::MAX;
    let terms = |text: &str| index.bm25().query_terms(text);
    for q in questions {
        let text = q.text();
        let mut gold: Vec<u32> = Vec::new();
        let mut scored: Vec<u32> = Vec::new();
        for p in &q.paragraphs {
            match law.find_section(p).filter(|&i| !law.sections[i].repealed) {
                Some(i) if !gold.contains(&(i as u32)) => gold.push(i as u32),
                Some(_) => {}
                None => {
                    *unknown.entry(p.as_str()).or_insert(0) += 1;
                    placeholder -= 1;
                    scored.push(placeholder);
                }
            }
        }
        if gold.is_empty() {
            empty += 1;
            continue;
        }
        if !seen.insert(question_hash(&text)) {
            repeated += 1;
            continue;
        }
        scored.extend(&gold);
        out.scored_gold.push(scored);
        out.labelled.push(Labelled::new(&text, gold, &terms));
        out.texts.push(text);
    }
    let mut unknown: Vec<(String, usize)> = unknown
        .into_iter()
        .map(|(id, n)| (id.to_string(), n))
        .collect();
    unknown.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out.left_out = LeftOut {
        law: law.abbreviation.clone(),
        unknown,
        without_gold: empty,
        repeated,
    };
    out.skipped = empty + repeated;
    out
}

/// The runs to learn rankers for: BM25 alone, then dense and hybrid per strategy, each question's first stages
/// computed once. `progress` hears the run's name (`section hybrid`), the questions done over all runs and
/// their total.
pub fn runs<'a>(
    index: &LawIndex,
    strategies: &'a [(String, StrategyIndex)],
    texts: &[String],
    vectors: Option<&[Vec<f32>]>,
    modes: &[Mode],
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Vec<Run<'a>>, EngineError> {
    let mut plan: Vec<(Option<&'a (String, StrategyIndex)>, Mode)> = Vec::new();
    if modes.contains(&Mode::Bm25) {
        plan.push((None, Mode::Bm25));
    }
    for s in strategies {
        for mode in [Mode::Dense, Mode::Hybrid] {
            if modes.contains(&mode) && vectors.is_some() {
                plan.push((Some(s), mode));
            }
        }
    }
    let total = plan.len() * texts.len();
    let mut done = 0;
    plan.into_iter()
        .map(|(strategy, mode)| {
            let name = format!("{} {mode}", strategy.map_or("sections", |s| s.0.as_str()));
            let first = texts
                .iter()
                .enumerate()
                .map(|(q, text)| {
                    progress(&name, done, total);
                    done += 1;
                    first_stages(
                        index,
                        strategy.map(|s| &s.1),
                        text,
                        vectors.map(|v| v[q].as_slice()),
                        mode,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Run {
                strategy: strategy.map(|s| s.0.as_str()),
                mode,
                first,
            })
        })
        .collect()
}

/// The ranking a run gives without learning (the plain BM25, dense or equal-weight hybrid list), from the first
/// stages cut to the depth search fuses without learning.
pub fn unlearned(run: &Run, q: usize) -> Vec<u32> {
    let (lexical, dense) = &run.first[q];
    let depth = SearchOptions::default().fusion_depth;
    let ids = |h: &[Hit]| h.iter().take(depth).map(|h| h.index).collect::<Vec<u32>>();
    match (run.mode, dense) {
        (Mode::Hybrid, Some(dense)) => {
            let cut = |h: &[Hit]| h[..h.len().min(depth)].to_vec();
            ids(&fuse(
                &SearchOptions::default(),
                &cut(lexical),
                &cut(dense),
                100,
            ))
        }
        (Mode::Dense, Some(dense)) => ids(dense),
        _ => ids(lexical),
    }
}

/// One run's cross-validated figures against the same run without learning.
pub struct CvRow {
    /// `sections bm25`, `section hybrid`, …
    pub name: String,
    /// Figures for the file.
    pub figures: CvFigures,
    /// Recall@10 per question: without, held out with learning.
    pub recall10: (Vec<f64>, Vec<f64>),
    /// Mean MRR@10: without, with.
    pub mrr10: (f64, f64),
    /// Weights chosen per fold.
    pub weights: Vec<Weights>,
    /// Per fold: the tail's weights (ranks 11–100), if fit.
    pub tails: Vec<Option<Weights>>,
    /// The factor the learned signals' weights were shrunk by after fitting.
    pub shrink: f32,
}

/// Cross-validates learning for every run (run `r` shrunk by `shrinks[r]`) and scores it against the runs
/// without learning. `progress` hears each fold learned.
#[allow(clippy::too_many_arguments)]
pub fn cross_validated(
    law: &Law,
    prepared: &Prepared,
    vectors: Option<ModelVectors>,
    runs: &[Run],
    folds: usize,
    seed: u64,
    shrinks: &[f32],
    progress: &mut dyn FnMut(usize),
) -> Vec<CvRow> {
    let held: Vec<HeldOut> = cross_validate(
        law,
        &prepared.labelled,
        vectors,
        runs,
        folds,
        seed,
        shrinks,
        progress,
    );
    runs.iter()
        .zip(held)
        .zip(shrinks)
        .map(|((run, held), &shrink)| {
            let gold = |q: usize| prepared.scored_gold[q].as_slice();
            let score = |ranking: &dyn Fn(usize) -> Vec<u32>, k: usize| -> Vec<f64> {
                (0..prepared.labelled.len())
                    .map(|q| recall_at(&ranking(q), gold(q), k).unwrap_or(0.0))
                    .collect()
            };
            let without = |q: usize| unlearned(run, q);
            let with = |q: usize| held.rankings[q].clone();
            let mrr = |ranking: &dyn Fn(usize) -> Vec<u32>| {
                mean(
                    &(0..prepared.labelled.len())
                        .map(|q| reciprocal_rank_at(&ranking(q), gold(q), 10).unwrap_or(0.0))
                        .collect::<Vec<_>>(),
                )
            };
            let (r10_without, r10_with) = (score(&without, 10), score(&with, 10));
            CvRow {
                name: format!("{} {}", run.strategy.unwrap_or("sections"), run.mode),
                figures: CvFigures {
                    folds: folds as u32,
                    questions: prepared.labelled.len() as u32,
                    recall10_without: mean(&r10_without),
                    recall10_with: mean(&r10_with),
                    recall100_without: mean(&score(&without, 100)),
                    recall100_with: mean(&score(&with, 100)),
                },
                recall10: (r10_without, r10_with),
                mrr10: (mrr(&without), mrr(&with)),
                weights: held.weights,
                tails: held.tails,
                shrink,
            }
        })
        .collect()
}

/// The cross-validation as Markdown: per run Recall@10 without and held out with learning (95 % bootstrap CI),
/// Recall@100, MRR@10, questions helped and hurt, a paired permutation test (Holm over the runs) and the
/// weights per fold.
pub fn cv_markdown(
    rows: &[CvRow],
    folds: usize,
    seed: u64,
    rounds: usize,
) -> Result<String, std::fmt::Error> {
    use std::fmt::Write;
    let mut md = String::new();
    let n = rows.first().map_or(0, |r| r.figures.questions);
    writeln!(
        md,
        "# Learning from questions, {folds}-fold cross-validation (seed {seed}), {n} questions\n"
    )?;
    writeln!(md, "Each fold is ranked with the prior, precedents and weights learned from the other folds only. Gold ids not in the law count as misses; questions with none in it, or repeated, are left out (see the warnings).\n")?;
    writeln!(md, "| run | R@10 without [95% CI] | R@10 learned, held out [95% CI] | R@100 without → learned | MRR@10 without → learned | helped / hurt | p (Holm) |")?;
    writeln!(md, "|---|---|---|---|---|---|---|")?;
    let p: Vec<f64> = rows
        .iter()
        .map(|r| {
            paired_permutation_test(&r.recall10.1, &r.recall10.0, rounds, seed)
                .map(|t| t.p_value)
                .unwrap_or(f64::NAN)
        })
        .collect();
    let ci = |v: &[f64]| -> String {
        match bootstrap_ci(v, 0.95, rounds, seed) {
            Ok((lo, hi)) => format!("{:.4} [{lo:.4}, {hi:.4}]", mean(v)),
            Err(_) => format!("{:.4}", mean(v)),
        }
    };
    for (row, p) in rows.iter().zip(holm(&p)) {
        let (without, with) = &row.recall10;
        let helped = with.iter().zip(without).filter(|(a, b)| a > b).count();
        let hurt = with.iter().zip(without).filter(|(a, b)| a < b).count();
        writeln!(
            md,
            "| {} | {} | {} | {:.4} → {:.4} | {:.4} → {:.4} | {helped} / {hurt} | {p:.4} |",
            row.name,
            ci(without),
            ci(with),
            row.figures.recall100_without,
            row.figures.recall100_with,
            row.mrr10.0,
            row.mrr10.1
        )?;
    }
    writeln!(md, "\nWeights chosen per fold (BM25 rank, dense rank, prior, lexical vote, dense vote; prior smoothing); the learned signals' weights (prior, votes) are already × the factor in brackets:\n")?;
    for row in rows {
        let folds: Vec<String> = row
            .weights
            .iter()
            .map(|w| {
                format!(
                    "({}, {}, {}, {}, {}; {})",
                    w.lexical, w.dense, w.prior, w.vote_lexical, w.vote_dense, w.smoothing
                )
            })
            .collect();
        writeln!(md, "- {} (× {}): {}", row.name, row.shrink, folds.join(" "))?;
    }
    if rows.iter().any(|r| r.tails.iter().any(Option::is_some)) {
        writeln!(md, "\nTail weights per fold, ordering ranks 11–100 on Recall@100 (BM25 rank, dense rank, prior, lexical vote, dense vote, co-gold, voters, adjacent, linked, same title; smoothing):\n")?;
        for row in rows {
            let folds: Vec<String> = row
                .tails
                .iter()
                .flatten()
                .map(|w| {
                    format!(
                        "({}, {}, {}, {}, {}, {}, {}, {}, {}, {}; {})",
                        w.lexical,
                        w.dense,
                        w.prior,
                        w.vote_lexical,
                        w.vote_dense,
                        w.cogold,
                        w.voters,
                        w.adjacent,
                        w.linked,
                        w.unit,
                        w.smoothing
                    )
                })
                .collect();
            writeln!(md, "- {}: {}", row.name, folds.join(" "))?;
        }
    }
    Ok(md)
}

/// The factors `paragraf learn --guard` tries, largest first: the learned signals' weights × factor.
pub const GUARD_FACTORS: [f32; 7] = [1.0, 0.75, 0.5, 0.375, 0.25, 0.125, 0.0];

/// One run's ranker checked on guard questions: questions learning did not see and must not hurt.
#[derive(Clone, Debug, PartialEq)]
pub struct Guarded {
    /// `sections bm25`, `section hybrid`, …
    pub name: String,
    /// Mean Recall@10 of the guard questions without learning.
    pub recall_without: f64,
    /// Mean Recall@10 with learning at the largest factor allowed (`--shrink`).
    pub recall_at_most: f64,
    /// The factor chosen: the largest allowed whose Recall@10 is not below `recall_without`; 0 (the fit fusion
    /// weights alone, without prior and votes) when none is.
    pub factor: f32,
    /// Mean Recall@10 with the fit weights × `factor`.
    pub recall_chosen: f64,
}

impl Guarded {
    /// Whether even factor 0 ranks the guard lower than without learning (the fit fusion weights lose).
    pub fn still_hurts(&self) -> bool {
        self.recall_chosen < self.recall_without - TIE
    }
}

/// Mean recalls closer than this count as equal.
const TIE: f64 = 1e-9;

/// For every run (its fit, unshrunk `fitted` weights, its first stages for the guard questions in `runs`):
/// the largest of [`GUARD_FACTORS`] up to `most` at which learning does not lower the guard questions' mean
/// Recall@10. That is how far the learned signals must be shrunk for questions unlike the training set.
pub fn guard(
    learning: &Learning,
    fitted: &[Weights],
    runs: &[Run],
    questions: &Prepared,
    vectors: Option<ModelVectors>,
    most: f32,
) -> Vec<Guarded> {
    assert_eq!(runs.len(), fitted.len(), "one fit per run");
    let n = questions.labelled.len();
    runs.iter()
        .zip(fitted)
        .map(|(run, fit)| {
            let recall = |ranking: &dyn Fn(usize) -> Vec<u32>| {
                mean(
                    &(0..n)
                        .map(|q| {
                            recall_at(&ranking(q), &questions.scored_gold[q], 10).unwrap_or(0.0)
                        })
                        .collect::<Vec<_>>(),
                )
            };
            let learned = |factor: f32| {
                let weights = fit.shrunk(factor);
                recall(&|q| {
                    ranking_of(
                        learning,
                        run,
                        &questions.labelled,
                        vectors,
                        q,
                        &weights,
                        None,
                        10,
                    )
                })
            };
            let recall_without = recall(&|q| unlearned(run, q));
            let recall_at_most = learned(most);
            let (mut factor, mut recall_chosen) = (most, recall_at_most);
            for f in GUARD_FACTORS.into_iter().filter(|&f| f < most) {
                if recall_chosen >= recall_without - TIE {
                    break;
                }
                (factor, recall_chosen) = (f, learned(f));
            }
            Guarded {
                name: format!("{} {}", run.strategy.unwrap_or("sections"), run.mode),
                recall_without,
                recall_at_most,
                factor,
                recall_chosen,
            }
        })
        .collect()
}

/// The guard's choices as Markdown.
pub fn guard_markdown(
    rows: &[Guarded],
    questions: usize,
    most: f32,
) -> Result<String, std::fmt::Error> {
    use std::fmt::Write;
    let mut md = String::new();
    writeln!(
        md,
        "# Guard: {questions} questions learning must not hurt\n"
    )?;
    writeln!(md, "Per run the largest factor up to {most} (of {GUARD_FACTORS:?}) for the learned signals' weights at which the guard's Recall@10 is not below the run without learning.\n")?;
    writeln!(
        md,
        "| run | R@10 without | learned × {most} | factor chosen | learned × factor |"
    )?;
    writeln!(md, "|---|---|---|---|---|")?;
    for g in rows {
        writeln!(
            md,
            "| {} | {:.4} | {:.4} | {} | {:.4} |",
            g.name, g.recall_without, g.recall_at_most, g.factor, g.recall_chosen
        )?;
    }
    Ok(md)
}

/// The questions of `own` as learning across laws takes them: searched among `among` in `options.mode` (first
/// stage and routing features) with their gold sections as documents.
pub fn among_questions<'a>(
    among: &FederalIndex,
    own: u32,
    prepared: &'a Prepared,
    vectors: Option<ModelVectors<'a>>,
    options: &SearchOptions,
) -> Result<Vec<AmongQuestion<'a>>, EngineError> {
    let vector = |q: usize| vectors.map(|v| v.vectors[q].as_slice());
    prepared
        .texts
        .iter()
        .enumerate()
        .map(|(q, text)| {
            let first = among.first_stage(text, vector(q), options)?;
            let query = among.law_query(text, vector(q).filter(|_| first.mode != Mode::Bm25));
            Ok(AmongQuestion {
                text,
                vector: vector(q),
                features: among.routing_features(&first, &query),
                query,
                gold: prepared.labelled[q]
                    .gold
                    .iter()
                    .filter_map(|&s| among.doc_of(own, s))
                    .collect(),
                gold_laws: vec![own],
            })
        })
        .collect()
}

/// What one law learned, to be weighed when all laws of a folder are searched as one.
pub struct AcrossLaws<'a> {
    /// The laws as one index.
    pub among: &'a FederalIndex,
    /// The learned law's place in it.
    pub own: u32,
    /// The learned law.
    pub law: &'a Law,
    /// What was learned from all its questions.
    pub learning: &'a Learning,
    /// Its questions ([`prepare`]).
    pub prepared: &'a Prepared,
    /// The same, searched among all laws ([`among_questions`]).
    pub questions: &'a [AmongQuestion<'a>],
    /// Questions across laws whose ranking the learned signals must not spoil.
    pub across: &'a [AmongQuestion<'a>],
    /// The questions' vectors in the index's model.
    pub vectors: Option<ModelVectors<'a>>,
    /// The routing weights without learning: the shipped ones of the mode the questions were searched in
    /// ([`RoutingWeights::shipped`]).
    pub base: RoutingWeights,
}

impl AcrossLaws<'_> {
    /// The routing weights of the learned signals, cross-validated in `folds` folds (held out, against routing
    /// without learning; scored as `paragraf eval` scores: gold ids not in the law are misses), then fit on every
    /// question. `progress` hears each fold learned.
    pub fn learn(
        &self,
        folds: usize,
        seed: u64,
        shrink: f32,
        progress: &mut dyn FnMut(usize),
    ) -> LearnedRouting {
        let AcrossLaws {
            among,
            own,
            law,
            learning,
            prepared,
            questions,
            across,
            vectors,
            base,
        } = *self;
        let scored = |q: usize, ranking: &[Hit], k: usize| -> f64 {
            let docs: Vec<u32> = ranking.iter().map(|h| h.index).collect();
            let misses = prepared.scored_gold[q].len() - questions[q].gold.len();
            let mut gold = questions[q].gold.clone();
            gold.extend((0..misses as u32).map(|i| u32::MAX - i));
            recall_at(&docs, &gold, k).unwrap_or(0.0)
        };
        let held = federal_learned::cross_validate(
            among,
            own,
            law,
            questions,
            &prepared.labelled,
            across,
            vectors,
            folds,
            seed,
            base,
            shrink,
            100,
            progress,
        );
        let without: Vec<Vec<Hit>> = questions
            .iter()
            .map(|q| routing::routed(&q.features, &base, 100))
            .collect();
        let mean_at = |rankings: &[Vec<Hit>], k: usize| {
            (0..questions.len())
                .map(|q| scored(q, &rankings[q], k))
                .sum::<f64>()
                / questions.len().max(1) as f64
        };
        let cv = CvFigures {
            folds: folds as u32,
            questions: questions.len() as u32,
            recall10_without: mean_at(&without, 10),
            recall10_with: mean_at(&held.rankings, 10),
            recall100_without: mean_at(&without, 100),
            recall100_with: mean_at(&held.rankings, 100),
        };
        let members: Vec<usize> = (0..questions.len()).collect();
        let weights = federal_learned::fit(
            among,
            own,
            learning,
            questions,
            &prepared.labelled,
            &members,
            across,
            base,
            shrink,
        );
        LearnedRouting { weights, cv }
    }
}
