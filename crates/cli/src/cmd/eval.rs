//! `paragraf eval`: the GerLayQA harness that tells users which strategy to pick.
//!
//! Per strategy and mode it runs the paper's protocol with the same engine the browser uses, scores the
//! rankings (Recall@1/5/10/25/100, MRR@10, nDCG@10), times retrieval alone (query embedding excluded, 5 runs),
//! and tests the differences: Friedman over all strategies, paired permutation tests against `section` with
//! Holm's correction, bootstrap confidence intervals. Output: `report.md`, `report.json` and SVG charts.

use crate::cmd::chart::{bar_chart, Bar};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_core::bundle::{LawBundle, StrategyBundle};
use paragraf_core::engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_core::eval::metrics::{ndcg_at, recall_at, reciprocal_rank_at};
use paragraf_core::eval::stats::{bootstrap_ci, friedman, holm, paired_permutation_test};
use paragraf_core::eval::Question;
use paragraf_core::question::clean_question;
use paragraf_core::search::aggregate::Aggregation;
use paragraf_core::strategy::parse_strategy_list;
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::e5::{E5Encoder, LongTextPolicy};
use paragraf_embed::{EmbeddingBackend, TextKind};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct EvalArgs {
    /// GerLayQA questions: `[{"Question_text": ..., "Paragraphs": ["§ 573b", ...]}]`.
    #[arg(
        long,
        env = "PARAGRAF_QUESTIONS",
        default_value = "../shared/eval/gerlayqa/bgb_dev.json"
    )]
    questions: PathBuf,
    /// Folder with manifest.json and the bundles (`paragraf build --out`).
    #[arg(long, default_value = "out/bundles")]
    bundles: PathBuf,
    /// `all` or a comma-separated list of strategies (those present in the manifest).
    #[arg(long, default_value = "all")]
    strategies: String,
    /// Modes to evaluate.
    #[arg(long, value_delimiter = ',', default_value = "dense,bm25,hybrid")]
    modes: Vec<ModeArg>,
    /// Use each bundle's HNSW graph instead of exact search.
    #[arg(long, conflicts_with = "exact")]
    hnsw: bool,
    /// Exact search (the default).
    #[arg(long)]
    exact: bool,
    /// How unit scores combine per section.
    #[arg(long, value_enum, default_value_t = AggregationArg::Max)]
    aggregation: AggregationArg,
    /// Reciprocal-rank-fusion constant for hybrid.
    #[arg(long, default_value_t = 60.0)]
    rrf_k: f32,
    /// RRF weight of the BM25 list.
    #[arg(long, default_value_t = 1.0)]
    bm25_weight: f32,
    /// RRF weight of the dense list.
    #[arg(long, default_value_t = 1.0)]
    dense_weight: f32,
    /// Remove greetings, closings/signatures and links from the questions first (see `paragraf_core::question`).
    #[arg(long)]
    clean_questions: bool,
    /// Questions over 510 tokens: keep the first 510 tokens, or average the vectors of 510-token windows.
    #[arg(long, value_enum, default_value_t = LongQuestions::Truncate)]
    long_questions: LongQuestions,
    /// How many times a section's heading counts in its BM25 document (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    title_weight: u32,
    /// Put sections cited in the question first (off: questions are judged on retrieval alone).
    #[arg(long)]
    citations: bool,
    /// Only the first N questions (for quick runs).
    #[arg(long)]
    limit: Option<usize>,
    /// Timed passes over all questions for the latency figures.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Seed of the permutation tests and the bootstrap.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Rounds of the permutation tests and the bootstrap.
    #[arg(long, default_value_t = 10_000)]
    rounds: usize,
    /// Where report.md, report.json and the charts go (default: <bundles>/report).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The e5 model for the questions (default: PARAGRAF_MODEL or the cache).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Embedding cache folder for question vectors (default: <cache>/embeddings).
    #[arg(long, env = "PARAGRAF_EMBEDDING_CACHE")]
    embedding_cache: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum ModeArg {
    Dense,
    Bm25,
    Hybrid,
}

impl ModeArg {
    fn mode(self) -> Mode {
        match self {
            ModeArg::Dense => Mode::Dense,
            ModeArg::Bm25 => Mode::Bm25,
            ModeArg::Hybrid => Mode::Hybrid,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ModeArg::Dense => "dense",
            ModeArg::Bm25 => "bm25",
            ModeArg::Hybrid => "hybrid",
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LongQuestions {
    Truncate,
    WindowAverage,
}

#[derive(Clone, Copy, ValueEnum)]
enum AggregationArg {
    Max,
    Sum,
    Mean,
}

/// A per-question metric: `(ranking, gold) -> score`, `None` when undefined (empty gold).
type Metric<'a> = dyn Fn(&[u32], &[u32]) -> Option<f64> + 'a;

/// Picks a chart bar from a report row (or skips the row).
type BarOf<'a> = Box<dyn Fn(&Row) -> Option<Bar> + 'a>;

/// Cut-offs reported.
const RECALL_AT: [usize; 5] = [1, 5, 10, 25, 100];

/// One evaluated (strategy, mode).
#[derive(Serialize)]
struct Row {
    strategy: String,
    mode: &'static str,
    recall: Vec<(usize, f64)>,
    recall10_ci: (f64, f64),
    mrr10: f64,
    ndcg10: f64,
    latency_ms: Latency,
    bundle_bytes: u64,
    build_seconds: f64,
    units: usize,
    /// Paired permutation test against `section` (same mode), Holm-adjusted.
    p_vs_section: Option<f64>,
    #[serde(skip)]
    per_question_recall10: Vec<f64>,
}

#[derive(Serialize, Clone, Copy)]
struct Latency {
    mean: f64,
    p50: f64,
    p95: f64,
}

#[derive(Serialize)]
struct Report {
    generator: &'static str,
    questions: usize,
    questions_file: String,
    gold_sections: usize,
    gold_missing: Vec<String>,
    gold_missing_count: usize,
    unit_search: &'static str,
    aggregation: String,
    rrf_k: f32,
    weights: (f32, f32),
    questions_cleaned: bool,
    long_questions: &'static str,
    title_weight: u32,
    query_embedding_ms_mean: Option<f64>,
    friedman: Vec<(String, f64, f64)>,
    rows: Vec<Row>,
}

pub fn run(args: EvalArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.questions).with_context(|| {
        format!(
            "cannot read the questions {} (set --questions or PARAGRAF_QUESTIONS)",
            args.questions.display()
        )
    })?;
    let mut questions: Vec<Question> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not GerLayQA JSON (expected [{{\"Question_text\": ..., \"Paragraphs\": [...]}}])",
            args.questions.display()
        )
    })?;
    if let Some(limit) = args.limit {
        questions.truncate(limit);
    }
    if questions.is_empty() {
        bail!("{} holds no questions", args.questions.display());
    }
    let manifest: paragraf_build::manifest::Manifest =
        paragraf_build::manifest::Manifest::load_or_new(&args.bundles)?;
    let Some(law_entry) = manifest.laws.first() else {
        bail!(
            "{} has no manifest.json with a law. Build bundles first: `paragraf build --out {}`",
            args.bundles.display(),
            args.bundles.display()
        );
    };
    let law = LawBundle::from_bytes(&std::fs::read(args.bundles.join(&law_entry.file))?)
        .with_context(|| format!("law bundle {}", law_entry.file))?
        .law;
    let wanted = parse_strategy_list(&args.strategies)?;
    let entries: Vec<_> = manifest
        .bundles
        .iter()
        .filter(|b| b.law == law.abbreviation && wanted.iter().any(|w| w.name() == b.strategy))
        .collect();
    let modes: Vec<ModeArg> = args.modes.clone();
    let needs_vectors = modes.iter().any(|m| *m != ModeArg::Bm25);
    if needs_vectors && entries.is_empty() {
        bail!("no bundles of the requested strategies in {}; build them with `paragraf build --strategies {}`", args.bundles.display(), args.strategies);
    }

    // Gold sections, with ids missing from the corpus counted as misses.
    let mut gold_missing = Vec::new();
    let gold: Vec<Vec<u32>> = questions
        .iter()
        .map(|q| {
            q.paragraphs
                .iter()
                .map(
                    |p| match law.find_section(p).filter(|&i| !law.sections[i].repealed) {
                        Some(i) => i as u32,
                        None => {
                            gold_missing.push(p.clone());
                            u32::MAX - gold_missing.len() as u32
                        }
                    },
                )
                .collect()
        })
        .collect();
    let gold_sections: usize = gold.iter().map(Vec::len).sum();
    let texts: Vec<String> = questions
        .iter()
        .map(|q| match args.clean_questions {
            true => clean_question(&q.text()),
            false => q.text(),
        })
        .collect();

    let (vectors, embed_ms) = if needs_vectors {
        let (v, ms) = embed_questions(&texts, &args, entries.first().map(|e| e.model.as_str()))?;
        (Some(v), Some(ms))
    } else {
        (None, None)
    };

    let law_index = LawIndex::with_title_weight(law, args.title_weight as usize);
    let base = SearchOptions {
        aggregation: match args.aggregation {
            AggregationArg::Max => Aggregation::Max,
            AggregationArg::Sum => Aggregation::Sum,
            AggregationArg::Mean => Aggregation::Mean,
        },
        unit_search: if args.hnsw {
            UnitSearch::Hnsw
        } else {
            UnitSearch::Exact
        },
        rrf_k: args.rrf_k,
        bm25_weight: args.bm25_weight,
        dense_weight: args.dense_weight,
        citations_first: args.citations,
        ..SearchOptions::default()
    };
    let mut rows = Vec::new();
    let bar = ProgressBar::new((entries.len().max(1) * modes.len()) as u64).with_style(
        ProgressStyle::with_template("{msg:32} {wide_bar} {pos}/{len} evaluations eta {eta}")
            .expect("template"),
    );
    if modes.contains(&ModeArg::Bm25) {
        bar.set_message("bm25 over sections");
        rows.push(evaluate(
            &law_index,
            None,
            "sections",
            ModeArg::Bm25,
            &texts,
            None,
            &gold,
            &base,
            &args,
        )?);
        bar.inc(1);
    }
    for entry in &entries {
        let bytes = std::fs::read(args.bundles.join(&entry.file))
            .with_context(|| format!("bundle {}", entry.file))?;
        let bundle =
            StrategyBundle::from_bytes(&bytes).with_context(|| format!("bundle {}", entry.file))?;
        let index = StrategyIndex::new(bundle, &law_index.law)?;
        for &mode in modes.iter().filter(|m| **m != ModeArg::Bm25) {
            bar.set_message(format!("{} {}", entry.strategy, mode.name()));
            let mut row = evaluate(
                &law_index,
                Some(&index),
                &entry.strategy,
                mode,
                &texts,
                vectors.as_deref(),
                &gold,
                &base,
                &args,
            )?;
            row.bundle_bytes = entry.bytes;
            row.build_seconds = entry.build_seconds;
            row.units = entry.units;
            rows.push(row);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let friedman_results = significance(&mut rows, &args)?;
    let report = Report {
        generator: paragraf_build::builder::GENERATOR,
        questions: questions.len(),
        questions_file: args.questions.display().to_string(),
        gold_sections,
        gold_missing_count: gold_missing.len(),
        gold_missing: {
            gold_missing.sort();
            gold_missing.dedup();
            gold_missing
        },
        unit_search: if args.hnsw { "hnsw" } else { "exact" },
        aggregation: format!("{:?}", base.aggregation).to_lowercase(),
        rrf_k: args.rrf_k,
        weights: (args.bm25_weight, args.dense_weight),
        questions_cleaned: args.clean_questions,
        long_questions: match args.long_questions {
            LongQuestions::Truncate => "truncate",
            LongQuestions::WindowAverage => "window-average",
        },
        title_weight: args.title_weight,
        query_embedding_ms_mean: embed_ms,
        friedman: friedman_results,
        rows,
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.bundles.join("report"));
    write_report(&report, &out)?;
    print!("{}", markdown(&report));
    println!("\nreport: {}", out.join("report.md").display());
    Ok(())
}

/// Question vectors from the cache or the local encoder; checks the model matches the bundles'.
fn embed_questions(
    texts: &[String],
    args: &EvalArgs,
    bundle_model: Option<&str>,
) -> Result<(Vec<Vec<f32>>, f64)> {
    let encoder = E5Encoder::load(&paragraf_embed::model::resolve_model_path(
        args.model.as_deref(),
    )?)?
    .with_policy(match args.long_questions {
        LongQuestions::Truncate => LongTextPolicy::Truncate,
        LongQuestions::WindowAverage => LongTextPolicy::WindowAverage,
    });
    if let Some(model) = bundle_model {
        if model != encoder.model_id() {
            bail!("the bundles were built with {model} but the local encoder is {}; rebuild the bundles or pass --model", encoder.model_id());
        }
    }
    let root = args
        .embedding_cache
        .clone()
        .unwrap_or_else(|| paragraf_embed::model::cache_root().join("embeddings"));
    let mut cache = EmbeddingCache::open(&root, &encoder.cache_id(), encoder.dim())?;
    let missing: Vec<&str> = texts
        .iter()
        .map(String::as_str)
        .filter(|t| cache.get(TextKind::Query, t).is_none())
        .collect();
    let mut ms = Vec::new();
    if !missing.is_empty() {
        let bar = ProgressBar::new(missing.len() as u64).with_style(
            ProgressStyle::with_template(
                "embedding questions {wide_bar} {pos}/{len} {per_sec} eta {eta}",
            )
            .expect("template"),
        );
        for chunk in missing.chunks(16) {
            let started = Instant::now();
            let vectors = encoder.embed(chunk, TextKind::Query)?;
            ms.push(started.elapsed().as_secs_f64() * 1e3 / chunk.len() as f64);
            cache.insert(TextKind::Query, chunk, &vectors)?;
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
    }
    let vectors = texts
        .iter()
        .map(|t| {
            cache
                .get(TextKind::Query, t)
                .expect("cached above")
                .to_vec()
        })
        .collect();
    let mean = if ms.is_empty() {
        f64::NAN
    } else {
        ms.iter().sum::<f64>() / ms.len() as f64
    };
    Ok((vectors, mean))
}

#[allow(clippy::too_many_arguments)]
fn evaluate(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    name: &str,
    mode: ModeArg,
    texts: &[String],
    vectors: Option<&[Vec<f32>]>,
    gold: &[Vec<u32>],
    base: &SearchOptions,
    args: &EvalArgs,
) -> Result<Row> {
    let options = SearchOptions {
        mode: mode.mode(),
        ..*base
    };
    let deep = SearchOptions {
        section_k: 100,
        fusion_depth: 100,
        ..options
    };
    let vector = |i: usize| vectors.map(|v| v[i].as_slice());
    let rankings: Vec<Vec<u32>> = (0..texts.len())
        .map(|i| {
            Ok(search(law, strategy, &texts[i], vector(i), &deep)?
                .into_iter()
                .map(|h| h.section)
                .collect())
        })
        .collect::<Result<_>>()?;
    let mut latencies = Vec::with_capacity(texts.len() * args.runs);
    for _ in 0..args.runs.max(1) {
        for (i, text) in texts.iter().enumerate() {
            let started = Instant::now();
            let hits = search(law, strategy, text, vector(i), &options)?;
            latencies.push(started.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(hits);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    let mean_of = |f: &Metric| {
        let scores: Vec<f64> = rankings
            .iter()
            .zip(gold)
            .filter_map(|(r, g)| f(r, g))
            .collect();
        scores.iter().sum::<f64>() / scores.len().max(1) as f64
    };
    let per_question_recall10: Vec<f64> = rankings
        .iter()
        .zip(gold)
        .map(|(r, g)| recall_at(r, g, 10).unwrap_or(0.0))
        .collect();
    Ok(Row {
        strategy: name.to_string(),
        mode: mode.name(),
        recall: RECALL_AT
            .iter()
            .map(|&k| (k, mean_of(&|r, g| recall_at(r, g, k))))
            .collect(),
        recall10_ci: bootstrap_ci(&per_question_recall10, 0.95, args.rounds, args.seed)?,
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
        per_question_recall10,
    })
}

/// Friedman per mode over the strategies, and Holm-corrected permutation tests of each strategy vs `section`.
fn significance(rows: &mut [Row], args: &EvalArgs) -> Result<Vec<(String, f64, f64)>> {
    let mut friedman_results = Vec::new();
    for mode in ["dense", "hybrid"] {
        let in_mode: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].mode == mode).collect();
        if in_mode.len() >= 3 {
            let groups: Vec<Vec<f64>> = in_mode
                .iter()
                .map(|&i| rows[i].per_question_recall10.clone())
                .collect();
            let result = friedman(&groups)?;
            friedman_results.push((mode.to_string(), result.statistic, result.p_value));
        }
        let Some(&baseline) = in_mode.iter().find(|&&i| rows[i].strategy == "section") else {
            continue;
        };
        let others: Vec<usize> = in_mode.iter().copied().filter(|&i| i != baseline).collect();
        let p: Vec<f64> = others
            .iter()
            .map(|&i| {
                paired_permutation_test(
                    &rows[i].per_question_recall10,
                    &rows[baseline].per_question_recall10,
                    args.rounds,
                    args.seed,
                )
                .map(|r| r.p_value)
            })
            .collect::<Result<_, _>>()?;
        for (&i, adjusted) in others.iter().zip(holm(&p)) {
            rows[i].p_vs_section = Some(adjusted);
        }
    }
    Ok(friedman_results)
}

fn recall(row: &Row, k: usize) -> f64 {
    row.recall
        .iter()
        .find(|(at, _)| *at == k)
        .map_or(f64::NAN, |(_, r)| *r)
}

fn markdown(report: &Report) -> String {
    let mut md = String::new();
    md += &format!(
        "{} questions ({}{}), {} gold sections, {} gold ids not in the corpus (counted as misses); long questions: {}; unit search {}, aggregation {}, RRF k={} (weights bm25 {}, dense {}); BM25 heading weight {}\n\n",
        report.questions, report.questions_file, if report.questions_cleaned { ", cleaned" } else { "" }, report.gold_sections, report.gold_missing_count, report.long_questions, report.unit_search, report.aggregation, report.rrf_k, report.weights.0, report.weights.1, report.title_weight
    );
    md += "| strategy | mode | R@10 [95% CI] | R@1 | R@5 | R@25 | R@100 | MRR@10 | nDCG@10 | p vs section (Holm) | latency ms mean / p50 / p95 | units | bundle KB | build s |\n";
    md += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for row in &report.rows {
        md += &format!(
            "| {} | {} | {:.3} [{:.3}, {:.3}] | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.3} / {:.3} / {:.3} | {} | {} | {} |\n",
            row.strategy,
            row.mode,
            recall(row, 10),
            row.recall10_ci.0,
            row.recall10_ci.1,
            recall(row, 1),
            recall(row, 5),
            recall(row, 25),
            recall(row, 100),
            row.mrr10,
            row.ndcg10,
            row.p_vs_section.map_or("–".into(), |p| format!("{p:.4}")),
            row.latency_ms.mean,
            row.latency_ms.p50,
            row.latency_ms.p95,
            if row.units > 0 { row.units.to_string() } else { "–".into() },
            if row.bundle_bytes > 0 { format!("{:.0}", row.bundle_bytes as f64 / 1024.0) } else { "–".into() },
            if row.build_seconds > 0.0 { format!("{:.0}", row.build_seconds) } else { "–".into() },
        );
    }
    for (mode, statistic, p) in &report.friedman {
        md += &format!("\nFriedman test over strategies ({mode}, Recall@10): χ² = {statistic:.1}, p = {p:.3e}\n");
    }
    if let Some(ms) = report.query_embedding_ms_mean.filter(|ms| ms.is_finite()) {
        md += &format!("\nQuery embedding (not in the latencies above): {ms:.0} ms per question on this machine.\n");
    }
    let slowest = report
        .rows
        .iter()
        .map(|r| r.latency_ms.mean)
        .fold(0.0, f64::max);
    md += &format!(
        "\nThe paper reports {PAPER_LATENCY_MS} ms per query for the same protocol (100 units, aggregation to sections); the slowest row here takes {slowest:.2} ms.\n"
    );
    md
}

/// Query latency range of the paper's strategies on the BGB (section 4), for comparison in the report.
const PAPER_LATENCY_MS: &str = "2.0–16.1";

fn write_report(report: &Report, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(
        out.join("report.json"),
        serde_json::to_string_pretty(report)?,
    )?;
    std::fs::write(out.join("report.md"), markdown(report))?;
    let label = |r: &Row| format!("{} ({})", r.strategy, r.mode);
    let charts: [(&str, &str, BarOf); 4] = [
        (
            "recall10.svg",
            "Recall@10 (95 % bootstrap CI)",
            Box::new(|r: &Row| {
                Some(Bar {
                    label: label(r),
                    value: recall(r, 10),
                    interval: Some(r.recall10_ci),
                })
            }),
        ),
        (
            "latency.svg",
            "Retrieval latency, mean ms per query",
            Box::new(|r: &Row| {
                Some(Bar {
                    label: label(r),
                    value: r.latency_ms.mean,
                    interval: Some((r.latency_ms.p50, r.latency_ms.p95)),
                })
            }),
        ),
        (
            "build_time.svg",
            "Build time per strategy, s",
            Box::new(|r: &Row| {
                (r.mode == "dense").then(|| Bar {
                    label: r.strategy.clone(),
                    value: r.build_seconds,
                    interval: None,
                })
            }),
        ),
        (
            "size.svg",
            "Bundle size, KB",
            Box::new(|r: &Row| {
                (r.mode == "dense").then(|| Bar {
                    label: r.strategy.clone(),
                    value: r.bundle_bytes as f64 / 1024.0,
                    interval: None,
                })
            }),
        ),
    ];
    for (file, title, bar) in charts {
        let bars: Vec<Bar> = report.rows.iter().filter_map(&bar).collect();
        std::fs::write(out.join(file), bar_chart(title, &bars))?;
    }
    Ok(())
}
