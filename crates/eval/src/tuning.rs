//! Choosing a search weight by k-fold cross-validation (`paragraf eval` with several `--expansion-weight`,
//! `--graph-weight` or `--dense-weight` values): the choice never sees the fold it is scored on, and the
//! held-out result is tested against the baseline weight.

use std::fmt::Write;

use paragraf_engine::expansion::{expand, mix_vectors};
use paragraf_engine::{LawIndex, Mode, SearchOptions, StrategyIndex};
use paragraf_stats::cv::cross_validate;
use paragraf_stats::stats::{bootstrap_ci, holm, paired_permutation_test};

use crate::harness::{evaluate, EvalError, Queries, Settings};
use crate::mean;

/// The weights to choose from and what the choice is tested against.
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    /// What is tuned.
    pub tuned: Tuned,
    /// The candidate weights.
    pub weights: &'a [f32],
    /// The weight the choice is tested against: off, or for fusion equal weights.
    pub baseline: f32,
    /// Folds.
    pub folds: usize,
    /// Their seed.
    pub seed: u64,
}

/// What a cross-validation tunes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tuned {
    /// `--expansion-weight`.
    Expansion,
    /// `--graph-weight`.
    Graph,
    /// `--dense-weight`: the dense list's weight in hybrid fusion (BM25's is --bm25-weight).
    Fusion,
}

impl Tuned {
    /// Every parameter that can be tuned.
    pub const ALL: [Tuned; 3] = [Tuned::Expansion, Tuned::Graph, Tuned::Fusion];

    /// `options` with weight `w` of this parameter (expansion: its BM25 side; dense runs mix vectors instead).
    pub fn apply(self, w: f32, options: SearchOptions) -> SearchOptions {
        match self {
            Tuned::Expansion => SearchOptions {
                expansion_weight: w,
                ..options
            },
            Tuned::Graph => SearchOptions {
                graph_weight: w,
                ..options
            },
            Tuned::Fusion => SearchOptions {
                dense_weight: w,
                ..options
            },
        }
    }

    /// The command-line flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            Tuned::Expansion => "--expansion-weight",
            Tuned::Graph => "--graph-weight",
            Tuned::Fusion => "--dense-weight",
        }
    }

    /// The report's title.
    pub fn title(self) -> &'static str {
        match self {
            Tuned::Expansion => "Query expansion",
            Tuned::Graph => "Graph-aware ranking",
            Tuned::Fusion => "Hybrid fusion, dense weight",
        }
    }

    /// The report's file name.
    pub fn file(self) -> &'static str {
        match self {
            Tuned::Expansion => "expansion-cv.md",
            Tuned::Graph => "graph-cv.md",
            Tuned::Fusion => "fusion-cv.md",
        }
    }
}

/// Several `--expansion-weight`, `--graph-weight` or `--dense-weight` values: per run, Recall@10 under each
/// weight, the weight chosen by k-fold cross-validation, and the held-out result against the baseline weight
/// (`grid.baseline`; bootstrap CI, paired permutation test, Holm-corrected over the runs), as Markdown.
/// Expansion: BM25 and hybrid weigh the added words in BM25, dense mixes in the expanded question's vector
/// (`expanded`) with the weight. Graph: the citation walk re-ranks every run's sections. Fusion: the dense
/// list's RRF weight in hybrid runs.
#[allow(clippy::too_many_arguments)]
pub fn weight_cv(
    grid: Grid,
    law: &LawIndex,
    runs: &[(Option<&StrategyIndex>, &str, Mode)],
    queries: Queries,
    expanded: Option<&[Vec<f32>]>,
    base: &SearchOptions,
    settings: &Settings,
    now_ms: &dyn Fn() -> f64,
) -> Result<String, EvalError> {
    let Grid {
        tuned,
        weights,
        baseline: baseline_weight,
        folds,
        seed,
    } = grid;
    let mut rows = Vec::new();
    for &(strategy, name, mode) in runs {
        let recall = |w: f32| -> Result<Vec<f64>, EvalError> {
            let options = SearchOptions { mode, ..*base };
            let (options, mixed) = match (tuned, mode, queries.vectors, expanded) {
                (Tuned::Expansion, Mode::Dense, Some(own), Some(expanded)) => {
                    let mixed: Vec<Vec<f32>> = own
                        .iter()
                        .zip(expanded)
                        .map(|(a, b)| mix_vectors(a, b, w))
                        .collect();
                    (tuned.apply(0.0, options), Some(mixed))
                }
                _ => (tuned.apply(w, options), None),
            };
            let queries = Queries {
                vectors: mixed.as_deref().or(queries.vectors),
                ..queries
            };
            Ok(
                evaluate(law, strategy, name, queries, &options, settings, now_ms)?
                    .recall10_per_question,
            )
        };
        let scores = weights
            .iter()
            .map(|&w| recall(w))
            .collect::<Result<Vec<_>, _>>()?;
        let baseline = match weights.iter().position(|&w| w == baseline_weight) {
            Some(i) => scores[i].clone(),
            None => recall(baseline_weight)?,
        };
        let cv = cross_validate(&scores, folds, seed)?;
        let p =
            paired_permutation_test(&cv.per_question, &baseline, settings.rounds, settings.seed)?
                .p_value;
        rows.push((name, mode, scores, baseline, cv, p));
    }
    let adjusted = holm(&rows.iter().map(|r| r.5).collect::<Vec<_>>());
    let ci = |v: &[f64]| -> Result<String, EvalError> {
        let (lo, hi) = bootstrap_ci(v, 0.95, settings.rounds, settings.seed)?;
        Ok(format!("{:.4} [{lo:.4}, {hi:.4}]", mean(v)))
    };
    let mut md = format!(
        "# {}, {}-fold cross-validation (seed {}), {} questions\n\n",
        tuned.title(),
        folds,
        seed,
        queries.texts.len()
    );
    let header: Vec<String> = weights.iter().map(|w| format!("W={w}")).collect();
    writeln!(md, "Recall@10 on all questions per weight (for reference; the choice below never sees its fold):\n")?;
    writeln!(md, "| run | mode | {} |", header.join(" | "))?;
    writeln!(md, "|---|---|{}", "---|".repeat(weights.len()))?;
    for (name, mode, scores, ..) in &rows {
        let cells: Vec<String> = scores.iter().map(|s| format!("{:.4}", mean(s))).collect();
        writeln!(md, "| {name} | {mode} | {} |", cells.join(" | "))?;
    }
    writeln!(md, "\n| run | mode | R@10 at W={baseline_weight} [95% CI] | R@10 held out with CV-chosen W [95% CI] | W per fold | held-out R@10 per fold | helped / hurt questions | p (Holm) |")?;
    writeln!(md, "|---|---|---|---|---|---|---|---|")?;
    for ((name, mode, _, baseline, cv, _), p) in rows.iter().zip(adjusted) {
        let chosen: Vec<String> = cv
            .folds
            .iter()
            .map(|f| weights[f.chosen].to_string())
            .collect();
        let held: Vec<String> = cv
            .folds
            .iter()
            .map(|f| format!("{:.3}", f.held_out))
            .collect();
        let helped = cv
            .per_question
            .iter()
            .zip(baseline)
            .filter(|(a, b)| a > b)
            .count();
        let hurt = cv
            .per_question
            .iter()
            .zip(baseline)
            .filter(|(a, b)| a < b)
            .count();
        writeln!(
            md,
            "| {name} | {mode} | {} | {} | {} | {} | {helped} / {hurt} | {p:.4} |",
            ci(baseline)?,
            ci(&cv.per_question)?,
            chosen.join(", "),
            held.join(", ")
        )?;
    }
    // Which questions changed (and, for expansion, what was added to them): to read them, not to tune on them.
    let expanding = tuned == Tuned::Expansion;
    writeln!(
        md,
        "\nQuestions whose held-out Recall@10 changed (question number in the file, {}gold sections):\n",
        if expanding { "words added by expansion, " } else { "" }
    )?;
    for (name, mode, _, baseline, cv, _) in &rows {
        for (i, (with, without)) in cv.per_question.iter().zip(baseline).enumerate() {
            if with == without {
                continue;
            }
            let added = law
                .expansions()
                .filter(|_| expanding)
                .map(|table| {
                    let words: Vec<String> = expand(&queries.texts[i], table, law.bm25(), &[])
                        .iter()
                        .map(|e| {
                            let to: Vec<&str> = e.to.iter().map(|t| t.word.as_str()).collect();
                            format!("{} → {}", e.from, to.join(", "))
                        })
                        .collect();
                    format!("added: {}; ", words.join("; "))
                })
                .unwrap_or_default();
            // Gold ids not in the corpus are placeholders past the sections (`Gold::map`): shown as such.
            let gold: Vec<&str> = queries.gold[i]
                .iter()
                .map(|&s| {
                    law.law
                        .sections
                        .get(s as usize)
                        .map_or("(not in the corpus)", |s| s.designation.as_str())
                })
                .collect();
            writeln!(
                md,
                "- {name} {mode}, question {}: {} (R@10 {with:.2} vs {without:.2} at W={baseline_weight}); {added}gold: {}",
                i + 1,
                if with > without { "helped" } else { "hurt" },
                gold.join(", ")
            )?;
        }
    }
    Ok(md)
}
