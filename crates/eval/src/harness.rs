//! The paper's protocol over the engine the browser uses: rank every question, score the rankings, time the
//! searches, and test whether strategies differ.
//!
//! IO-free like the crates below it: questions arrive as text with their vectors already embedded, and the clock is
//! passed in (`std::time::Instant` does not exist in the browser), so the CLI and any other front end run the
//! same harness and get the same figures. Rankings are taken 100 sections deep (Recall@100) while the timed
//! passes use the options as given (10 sections), as a user's query would.

use super::report::{Latency, Row, RECALL_AT};
use paragraf_engine::{search, EngineError, LawIndex, Mode, SearchOptions, StrategyIndex};
use paragraf_stats::metrics::{ndcg_at, recall_at, reciprocal_rank_at};
use paragraf_stats::stats::{bootstrap_ci, friedman, holm, paired_permutation_test, StatsError};

/// A per-question metric: `(ranking, gold) -> score`, `None` when undefined (empty gold).
type Metric<'a> = dyn Fn(&[u32], &[u32]) -> Option<f64> + 'a;

/// The strategy every other is tested against.
pub const BASELINE: &str = "section";

/// Why an evaluation failed.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A search failed (a bundle of another law, a vector of another model).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A statistic could not be computed (too few questions or strategies).
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// A search in the browser's layout of many laws failed.
    #[error(transparent)]
    Federal(#[from] paragraf_core::federal::files::FederalFileError),
    /// A Markdown table could not be written.
    #[error(transparent)]
    Write(#[from] std::fmt::Error),
    /// The question texts, vectors and gold lists are not one per question.
    #[error("{texts} question texts but {other} {what}. Most likely, the questions changed between embedding and evaluation")]
    Unpaired {
        /// Question texts.
        texts: usize,
        /// Vectors or gold lists.
        other: usize,
        /// `vectors` or `gold lists`.
        what: &'static str,
    },
}

/// The questions as the engine takes them.
#[derive(Clone, Copy, Debug)]
pub struct Queries<'a> {
    /// The text searched (BM25), one per question.
    pub texts: &'a [String],
    /// Query vectors, one per question (needed for dense and hybrid; see [`paragraf_engine::search`]).
    pub vectors: Option<&'a [Vec<f32>]>,
    /// Gold section indices per question (see [`super::gold::Gold`]).
    pub gold: &'a [Vec<u32>],
}

/// How hard the harness measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Timed passes over all questions (at least one runs).
    pub runs: usize,
    /// Rounds of the permutation tests and the bootstrap.
    pub rounds: usize,
    /// Their seed.
    pub seed: u64,
}

impl Default for Settings {
    /// 5 timed passes, 10,000 rounds, seed 42 (`paragraf eval`'s defaults).
    fn default() -> Self {
        Settings {
            runs: 5,
            rounds: 10_000,
            seed: 42,
        }
    }
}

/// One (strategy, mode) evaluated: its report row and what the significance tests need.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The figures; bundle size, build time and units are left 0 for the caller, who knows the bundle's file.
    pub row: Row,
    /// Recall@10 per question, in question order.
    pub recall10_per_question: Vec<f64>,
}

/// Runs `queries` through [`search`] with `options` (its mode included) and scores them. `name` labels the row;
/// `now_ms` is a monotonic clock in milliseconds.
pub fn evaluate(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    name: &str,
    queries: Queries,
    options: &SearchOptions,
    settings: &Settings,
    now_ms: &dyn Fn() -> f64,
) -> Result<Evaluation, EvalError> {
    let Queries {
        texts,
        vectors,
        gold,
    } = queries;
    let pairs = [
        (vectors.map_or(texts.len(), <[_]>::len), "vectors"),
        (gold.len(), "gold lists"),
    ];
    if let Some(&(other, what)) = pairs.iter().find(|(n, _)| *n != texts.len()) {
        return Err(EvalError::Unpaired {
            texts: texts.len(),
            other,
            what,
        });
    }
    let deep = SearchOptions {
        section_k: 100,
        fusion_depth: 100,
        ..*options
    };
    let vector = |i: usize| vectors.map(|v| v[i].as_slice());
    let rankings: Vec<Vec<u32>> = (0..texts.len())
        .map(|i| {
            Ok(search(law, strategy, &texts[i], vector(i), &deep)?
                .hits
                .into_iter()
                .map(|h| h.section)
                .collect())
        })
        .collect::<Result<_, EngineError>>()?;
    let mut latencies = Vec::with_capacity(texts.len() * settings.runs.max(1));
    for _ in 0..settings.runs.max(1) {
        for (i, text) in texts.iter().enumerate() {
            let started = now_ms();
            let hits = search(law, strategy, text, vector(i), options)?;
            latencies.push(now_ms() - started);
            std::hint::black_box(hits);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    // The mean over questions with a defined score; 0 when none has one.
    let mean_of = |metric: &Metric| {
        let scores: Vec<f64> = rankings
            .iter()
            .zip(gold)
            .filter_map(|(r, g)| metric(r, g))
            .collect();
        scores.iter().sum::<f64>() / scores.len().max(1) as f64
    };
    let recall10_per_question: Vec<f64> = rankings
        .iter()
        .zip(gold)
        .map(|(r, g)| recall_at(r, g, 10).unwrap_or(0.0))
        .collect();
    let row = Row {
        strategy: name.to_string(),
        mode: options.mode,
        recall: RECALL_AT
            .iter()
            .map(|&k| (k, mean_of(&|r, g| recall_at(r, g, k))))
            .collect(),
        recall10_ci: bootstrap_ci(&recall10_per_question, 0.95, settings.rounds, settings.seed)?,
        mrr10: mean_of(&|r, g| reciprocal_rank_at(r, g, 10)),
        ndcg10: mean_of(&|r, g| ndcg_at(r, g, 10)),
        latency_ms: Latency {
            mean: latencies.iter().sum::<f64>() / latencies.len() as f64,
            p50: pct(0.5),
            p95: pct(0.95),
        },
        bundle_bytes: 0,
        build_seconds: 0.0,
        units: 0,
        p_vs_section: None,
    };
    Ok(Evaluation {
        row,
        recall10_per_question,
    })
}

/// Per mode with vectors (dense, hybrid): Friedman over the strategies (with at least three of them), and
/// paired permutation tests of each strategy against [`BASELINE`], Holm-corrected within the mode and stored
/// in [`Row::p_vs_section`]. Returns `(mode, χ², p)` of each Friedman test.
pub fn significance(
    evaluations: &mut [Evaluation],
    settings: &Settings,
) -> Result<Vec<(Mode, f64, f64)>, StatsError> {
    let mut friedman_results = Vec::new();
    for mode in [Mode::Dense, Mode::Hybrid] {
        let in_mode: Vec<usize> = (0..evaluations.len())
            .filter(|&i| evaluations[i].row.mode == mode)
            .collect();
        if in_mode.len() >= 3 {
            let groups: Vec<Vec<f64>> = in_mode
                .iter()
                .map(|&i| evaluations[i].recall10_per_question.clone())
                .collect();
            let result = friedman(&groups)?;
            friedman_results.push((mode, result.statistic, result.p_value));
        }
        let Some(&baseline) = in_mode
            .iter()
            .find(|&&i| evaluations[i].row.strategy == BASELINE)
        else {
            continue;
        };
        let others: Vec<usize> = in_mode.iter().copied().filter(|&i| i != baseline).collect();
        let p: Vec<f64> = others
            .iter()
            .map(|&i| {
                paired_permutation_test(
                    &evaluations[i].recall10_per_question,
                    &evaluations[baseline].recall10_per_question,
                    settings.rounds,
                    settings.seed,
                )
                .map(|r| r.p_value)
            })
            .collect::<Result<_, _>>()?;
        for (&i, adjusted) in others.iter().zip(holm(&p)) {
            evaluations[i].row.p_vs_section = Some(adjusted);
        }
    }
    Ok(friedman_results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gold::tests::{law, question, section};
    use crate::gold::Gold;
    use std::cell::Cell;

    fn index() -> LawIndex {
        LawIndex::new(law(vec![
            section("§ 1", false, "Der Mieter zahlt die Miete monatlich."),
            section("§ 2", false, "Der Käufer zahlt den Kaufpreis bei Übergabe."),
            section("§ 3", false, "Der Schenker haftet nur für Vorsatz."),
        ]))
    }

    /// A clock that advances 1 ms per reading: every search then takes exactly 1 ms.
    fn ticking() -> impl Fn() -> f64 {
        let t = Cell::new(0.0);
        move || {
            t.set(t.get() + 1.0);
            t.get()
        }
    }

    fn bm25(texts: &[String], gold: &[Vec<u32>], settings: &Settings) -> Evaluation {
        let options = SearchOptions {
            mode: Mode::Bm25,
            ..SearchOptions::default()
        };
        let queries = Queries {
            texts,
            vectors: None,
            gold,
        };
        evaluate(
            &index(),
            None,
            "sections",
            queries,
            &options,
            settings,
            &ticking(),
        )
        .unwrap()
    }

    #[test]
    fn scores_rankings_and_times_each_pass() {
        let law = index();
        let questions = [question(&["§ 2"]), question(&["§ 3", "§ 99"])];
        let gold = Gold::map(&law.law, &questions);
        let texts = ["Kaufpreis Übergabe".to_string(), "Mieter Miete".to_string()];
        let settings = Settings {
            runs: 3,
            rounds: 100,
            seed: 1,
        };
        let done = bm25(&texts, &gold.sections, &settings);
        // Question 1 finds § 2 first; question 2 finds § 1, never its gold (§ 3 shares no word, § 99 is absent).
        assert_eq!(done.recall10_per_question, [1.0, 0.0]);
        let row = &done.row;
        assert_eq!((row.strategy.as_str(), row.mode), ("sections", Mode::Bm25));
        assert_eq!(
            row.recall.iter().map(|r| r.0).collect::<Vec<_>>(),
            RECALL_AT
        );
        assert_eq!(row.recall10(), 0.5);
        assert_eq!(row.mrr10, 0.5);
        assert_eq!(row.ndcg10, 0.5);
        assert_eq!(
            row.latency_ms,
            Latency {
                mean: 1.0,
                p50: 1.0,
                p95: 1.0
            }
        );
        assert!(row.recall10_ci.0 <= 0.5 && 0.5 <= row.recall10_ci.1);
    }

    #[test]
    fn questions_texts_vectors_and_gold_must_pair_up() {
        let options = SearchOptions::default();
        let texts = ["a".to_string()];
        let queries = Queries {
            texts: &texts,
            vectors: None,
            gold: &[],
        };
        let err = evaluate(
            &index(),
            None,
            "x",
            queries,
            &options,
            &Settings::default(),
            &|| 0.0,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 question texts but 0 gold lists. Most likely, the questions changed between embedding and evaluation"
        );
    }

    #[test]
    fn strategies_are_tested_against_the_section_baseline_per_mode() {
        let settings = Settings {
            runs: 1,
            rounds: 2000,
            seed: 7,
        };
        let evaluation = |strategy: &str, mode: Mode, recall: &[f64]| Evaluation {
            row: Row {
                strategy: strategy.into(),
                mode,
                ..bm25(&["Miete".to_string()], &[vec![0]], &settings).row
            },
            recall10_per_question: recall.to_vec(),
        };
        let good = [1.0; 12];
        let bad = [0.0; 12];
        let mut evaluations = vec![
            evaluation("sections", Mode::Bm25, &good),
            evaluation("section", Mode::Dense, &bad),
            evaluation("sentence", Mode::Dense, &good),
            evaluation("passage", Mode::Dense, &bad),
            evaluation("sentence", Mode::Hybrid, &good),
        ];
        let friedman = significance(&mut evaluations, &settings).unwrap();
        // Friedman needs three strategies: only dense has them.
        assert_eq!(friedman.len(), 1);
        assert_eq!(friedman[0].0, Mode::Dense);
        assert!(friedman[0].2 < 0.01, "{friedman:?}");
        let p: Vec<Option<f64>> = evaluations.iter().map(|e| e.row.p_vs_section).collect();
        // No baseline test for BM25, the baseline itself, or hybrid without a `section` row.
        assert_eq!((p[0], p[1], p[4]), (None, None, None));
        // Always better on 12 questions: two-sided p near 2/2^12, Holm doubles the smaller of two; identical: 1.
        assert!(p[2].unwrap() < 0.02, "{p:?}");
        assert_eq!(p[3], Some(1.0));
    }
}
