//! `paragraf eval`: the GerLayQA harness that tells users which strategy to pick.
//!
//! Per strategy and mode it runs the paper's protocol with the same engine the browser uses, scores the
//! rankings (Recall@1/5/10/25/100, MRR@10, nDCG@10), times retrieval alone (query embedding excluded, 5 runs),
//! and tests the differences: Friedman over all strategies, paired permutation tests against `section` with
//! Holm's correction, bootstrap confidence intervals. Output: `report.md`, `report.json`, SVG charts and
//! `recall10.tsv` (Recall@10 per question and run, to compare runs of other bundle folders question by question).
//!
//! The harness itself (gold mapping, evaluation, significance, the report's format) is pure and lives in
//! [`paragraf_eval`]; this module reads the files, embeds the questions, shows progress and renders.

use crate::cmd::chart::{bar_chart, Bar};
use crate::cmd::distractors::LearningChoice;
use crate::cmd::questions::{embed_questions, read_questions, LongQuestions, QuestionEncoder};
use crate::cmd::refusal::refuse;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_core::routing_weights::RoutingWeights;
use paragraf_embed::TextKind;
use paragraf_engine::expansion::{expand, expanded_text};
use paragraf_engine::{LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_eval::among::Routing;
use paragraf_eval::baseline::{against_baseline, recall10_tsv};
use paragraf_eval::gold::Gold;
use paragraf_eval::harness::{evaluate, significance, Evaluation, Queries, Settings};
use paragraf_eval::question::clean_question;
use paragraf_eval::report::{Report, ReportLearning, Row};
use paragraf_eval::tuning::{weight_cv, Grid, Tuned};
use paragraf_eval::Question;
use paragraf_format::strategy::parse_strategy_list;
use paragraf_index::aggregate::Aggregation;
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
    /// Modes to evaluate: dense, bm25, hybrid.
    #[arg(long, value_delimiter = ',', default_value = "dense,bm25,hybrid")]
    modes: Vec<Mode>,
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
    /// RRF weight of the dense list. Several comma-separated weights (hybrid runs only, `--modes hybrid`): chosen
    /// by k-fold cross-validation like --expansion-weight and reported held out against equal weights (the dense
    /// weight equal to --bm25-weight) in `fusion-cv.md`.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    dense_weight: Vec<f32>,
    /// Remove greetings, closings/signatures and links from the questions first (see `paragraf_eval::question`).
    #[arg(long)]
    clean_questions: bool,
    #[command(flatten)]
    encoder: QuestionEncoder,
    /// Embed questions as the browser does with no server: with the bundle folder's model file, whose word table
    /// is pruned (`paragraf build` writes it for e5 bundles). Prints how many questions read a pruned piece.
    #[arg(long)]
    browser_encoder: bool,
    /// How many times a section's heading counts in its BM25 document (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    title_weight: u32,
    /// BM25 weight of the words query expansion adds (the folder's thesaurus file, listed in the manifest; 0: off,
    /// the strategies as the paper measures them; the app searches with `engine::DEFAULT_EXPANSION_WEIGHT`).
    /// Several comma-separated weights: each BM25, dense and hybrid run chooses one by k-fold cross-validation on
    /// the questions (--folds) and is reported held out against no expansion (`expansion-cv.md`); in dense runs
    /// the weight mixes in the vector of the question with its added words.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    expansion_weight: Vec<f32>,
    /// Weight of the citation-graph spread over each section ranking (0: off; `paragraf_index::graph`). Several
    /// comma-separated weights: chosen by k-fold cross-validation like --expansion-weight (`graph-cv.md`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    graph_weight: Vec<f32>,
    /// Folds of the --expansion-weight / --graph-weight / --dense-weight cross-validation.
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Rank without the folder's learned file (`paragraf learn`), to compare. Without this flag a learned file
    /// of the law is used, and the report says so; questions it learned from are refused.
    #[arg(long, conflicts_with = "learn_per_fold")]
    no_learning: bool,
    /// Learn from these questions per fold (k = --folds: precedents, prior and weights from the other folds)
    /// and report every run held out against the same run without learning (`learning-cv.md`). Ignores the
    /// folder's learned file.
    #[arg(long)]
    learn_per_fold: bool,
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
    /// Where report.md, report.json and the charts go (default: the report folder inside --bundles).
    #[arg(long)]
    out: Option<PathBuf>,
    /// `recall10.tsv` of an earlier eval on the same questions (another bundle folder, e.g. another model, or
    /// the same folder with --no-learning): every run here is compared with the baseline's run of the same name,
    /// else its `section` run of the same mode, question by question (paired
    /// permutation test, Holm over the runs), in `baseline.md`.
    #[arg(long, value_name = "TSV")]
    baseline: Option<PathBuf>,
    /// Search the questions among every law of this source as one ranking, unrouted and routed by law (a
    /// bundle folder from `paragraf build --laws`, whose `section` bundles give dense and hybrid; or the federal
    /// archive or a folder of XML, BM25 only), and in the --bundles folder's law alone when it has one. Gold
    /// ids may name their law (`§ 3 BUrlG`); plain ones mean the --bundles law. Prints Recall@10, how often
    /// the right law comes first and where the top hits come from (`distractors.md` and `among.tsv` in --out,
    /// default `report` under --bundles); nothing else is evaluated.
    #[arg(long, value_name = "SOURCE")]
    among: Option<PathBuf>,
    /// With --among: fit the law-routing weights on these questions (the tuning half) and report with them
    /// (in-sample); the weights are printed per mode, for `RoutingWeights::shipped`.
    #[arg(long, requires = "among")]
    fit_routing: bool,
    /// With --among: route with these weights (JSON, as --fit-routing prints them) instead of the shipped ones.
    #[arg(long, requires = "among", conflicts_with = "fit_routing", value_parser = parse_routing_weights)]
    routing_weights: Option<RoutingWeights>,
    /// With --among --learn-per-fold: questions across laws (gold naming their laws, e.g.
    /// `tests/data/lay-questions-federal-tune.json`) that the learned signals' routing weights are also fit on,
    /// as `paragraf learn --across` does.
    #[arg(long, requires = "learn_per_fold", value_name = "QUESTIONS")]
    across: Option<PathBuf>,
    /// With --learn-per-fold: questions learning must not hurt, as `paragraf learn --guard` takes them (none of
    /// them among --questions): per run the learned signals are shrunk, fit on all --questions, until the guard
    /// ranks no worse than without learning (from 0.75 down, learn's default --shrink), and the folds measure
    /// those factors — what `paragraf learn --guard` writes and cross-validates.
    #[arg(
        long,
        requires = "learn_per_fold",
        conflicts_with = "among",
        value_name = "QUESTIONS"
    )]
    guard: Option<PathBuf>,
}

fn parse_routing_weights(text: &str) -> Result<RoutingWeights, String> {
    let weights: RoutingWeights = serde_json::from_str(text)
        .map_err(|e| format!("not routing weights as --fit-routing prints them: {e}"))?;
    if weights.valid() {
        Ok(weights)
    } else {
        Err("routing weights must be finite and 0 or more".into())
    }
}

/// The questions as searched: their text, cleaned when `--clean-questions` says so.
fn question_texts(args: &EvalArgs, questions: &[Question]) -> Vec<String> {
    questions
        .iter()
        .map(|q| match args.clean_questions {
            true => clean_question(&q.text()),
            false => q.text(),
        })
        .collect()
}

/// `--among`: the questions among every law of `among` (see [`paragraf_eval::among`]); plain gold ids mean
/// the law of `--bundles` when that folder has one.
fn eval_among(args: &EvalArgs, among: &Path, questions: &[Question]) -> Result<()> {
    let own = paragraf_bundler::manifest::load_or_new(&args.bundles)?
        .laws
        .first()
        .map(|l| l.law.clone());
    let texts = question_texts(args, questions);
    let embed =
        |texts: &[String], model: &str| Ok(embed_questions(texts, &args.encoder, Some(model))?.0);
    let measured = crate::cmd::distractors::run(
        among,
        own.as_deref(),
        questions,
        &texts,
        &args.modes,
        &embed,
        args.rounds,
        args.seed,
        match (args.fit_routing, args.routing_weights) {
            (true, _) => Routing::Fit,
            (false, Some(weights)) => Routing::Given(weights),
            (false, None) => Routing::Shipped,
        },
        match (args.learn_per_fold, args.no_learning) {
            (true, _) => LearningChoice::PerFold {
                folds: args.folds,
                shrink: paragraf_eval::learning::DEFAULT_SHRINK,
            },
            (false, true) => LearningChoice::Off,
            (false, false) => LearningChoice::Folder,
        },
        args.across.as_deref(),
    )?;
    let out = report_dir(args)?;
    paragraf_fs::write_atomic(&out.join("distractors.md"), measured.markdown.as_bytes())?;
    paragraf_fs::write_atomic(&out.join("among.tsv"), measured.per_question.as_bytes())?;
    println!("{}", measured.markdown);
    Ok(())
}

#[derive(Clone, Copy, ValueEnum)]
enum AggregationArg {
    Max,
    Sum,
    Mean,
}

/// Picks a chart bar from a report row (or skips the row).
type BarOf<'a> = Box<dyn Fn(&Row) -> Option<Bar> + 'a>;

pub fn run(args: EvalArgs) -> Result<()> {
    let (mut questions, questions_sha256) = read_questions(&args.questions)?;
    if let Some(limit) = args.limit {
        questions.truncate(limit);
    }
    if questions.is_empty() {
        refuse!("{} holds no questions", args.questions.display());
    }
    if let Some(among) = &args.among {
        return eval_among(&args, among, &questions);
    }
    let manifest = paragraf_bundler::manifest::load_or_new(&args.bundles)?;
    let Some(law_entry) = manifest.laws.first() else {
        refuse!(
            "{} has no manifest.json with a law. Build bundles first: `paragraf build --out {}`",
            args.bundles.display(),
            args.bundles.display()
        );
    };
    let law = paragraf_bundler::manifest::read_law(&args.bundles, law_entry)?;
    let wanted = parse_strategy_list(&args.strategies)?;
    let entries: Vec<_> = manifest
        .bundles
        .iter()
        .filter(|b| b.law == law.abbreviation && wanted.iter().any(|w| w.name() == b.strategy))
        .collect();
    let modes: Vec<Mode> = args.modes.clone();
    let needs_vectors = modes.iter().any(|m| *m != Mode::Bm25);
    if needs_vectors && wanted.is_empty() {
        refuse!("--strategies none evaluates no vectors: pass --modes bm25, or name the strategies whose vectors to evaluate");
    }
    if needs_vectors && entries.is_empty() {
        refuse!("no bundles of the requested strategies in {}; build them with `paragraf build --strategies {}`", args.bundles.display(), args.strategies);
    }

    // Weights are checked before the questions are embedded (which loads the model).
    for tuned in Tuned::ALL {
        if let Some(w) = candidates(tuned, &args)
            .iter()
            .find(|w| !(w.is_finite() && **w >= 0.0))
        {
            refuse!("{} {w}: weights must be 0 or more", tuned.flag());
        }
    }
    let tuned = match Tuned::ALL.map(|t| (t, candidates(t, &args).len() > 1)) {
        several if several.iter().filter(|(_, s)| *s).count() > 1 => refuse!(
            "cross-validate one thing at a time: several values for only one of {}",
            Tuned::ALL.map(Tuned::flag).join(", ")
        ),
        several => several.iter().find(|(_, s)| *s).map(|(t, _)| *t),
    };
    if tuned == Some(Tuned::Fusion) && modes != [Mode::Hybrid] {
        refuse!("several --dense-weight values cross-validate hybrid fusion, which dense and BM25 runs do not use: pass --modes hybrid");
    }

    // Gold sections, with ids missing from the corpus counted as misses.
    let gold = Gold::map(&law, &questions);
    let texts = question_texts(&args, &questions);

    let (vectors, embed_ms) = if needs_vectors {
        let model = entries.first().map(|e| e.model.as_str());
        let (mut v, ms) = embed_questions(&texts, &args.encoder, model)?;
        if args.browser_encoder {
            let model = model.expect("vectors need a strategy bundle");
            browser_vectors(&args, model, &texts, &mut v)?;
        }
        (Some(v), Some(ms))
    } else {
        (None, None)
    };

    let mut law_index = LawIndex::with_title_weight(law, args.title_weight as usize);
    if args.learn_per_fold {
        if tuned.is_some() {
            refuse!("--learn-per-fold cross-validates learning; cross-validate weights (several values) in another run");
        }
        let strategies = crate::cmd::learn::load_strategies(
            &args.bundles,
            &manifest,
            &law_index.law,
            &args.strategies,
        )?;
        let prepared = crate::cmd::learn::prepare(&questions, &law_index);
        let guard = match &args.guard {
            Some(path) => {
                Some(crate::cmd::learn::read_guard(path, &args.questions, &law_index, &prepared)?.0)
            }
            None => None,
        };
        let model = strategies.first().map(|(_, s)| s.bundle.model.clone());
        let vectors = match (&model, needs_vectors) {
            (Some(model), true) => {
                Some(embed_questions(&prepared.texts, &args.encoder, Some(model))?.0)
            }
            _ => None,
        };
        let model_vectors = model
            .as_deref()
            .zip(vectors.as_deref())
            .map(
                |(model, vectors)| paragraf_engine::learning::fit::ModelVectors { model, vectors },
            );
        let runs = crate::cmd::learn::runs(
            &law_index,
            &strategies,
            &prepared.texts,
            vectors.as_deref(),
            &modes,
        )?;
        let shrinks = match &guard {
            Some(guard) => crate::cmd::learn::guard_factors(
                &args.encoder,
                guard,
                &law_index,
                &strategies,
                model.as_deref(),
                &prepared,
                model_vectors,
                &runs,
                &modes,
                questions_sha256.clone(),
            )?,
            None => vec![paragraf_eval::learning::DEFAULT_SHRINK; runs.len()],
        };
        let rows = crate::cmd::learn::cross_validated(
            &law_index.law,
            &prepared,
            model_vectors,
            &runs,
            args.folds,
            args.seed,
            &shrinks,
        );
        let md = paragraf_eval::learning::cv_markdown(&rows, args.folds, args.seed, args.rounds)?;
        let out = report_dir(&args)?;
        paragraf_fs::write_atomic(&out.join("learning-cv.md"), md.as_bytes())?;
        print!("{md}");
        println!("\nreport: {}", out.join("learning-cv.md").display());
        return Ok(());
    }
    let mut learned = None;
    if !args.no_learning {
        if let Some(learning) =
            crate::cmd::library::read_learned(&args.bundles, &manifest, &law_index.law)?
        {
            let known = texts
                .iter()
                .zip(&questions)
                .filter(|(t, q)| {
                    learning.knows(paragraf_engine::learning::question_hash(t))
                        || learning.knows(paragraf_engine::learning::question_hash(&q.text()))
                })
                .count();
            if known > 0 {
                refuse!(
                    "{known} of the {} questions are among the {} the folder's learned file learned from ({}): scoring them would flatter learning. Evaluate other questions, pass --no-learning, or --learn-per-fold to learn from these questions fold by fold",
                    questions.len(),
                    learning.questions(),
                    learning.provenance.source
                );
            }
            let report_learning = ReportLearning {
                provenance: learning.provenance.clone(),
                guarded_here: manifest
                    .learned
                    .as_ref()
                    .and_then(|l| l.guard.as_ref())
                    .is_some_and(|g| g.sha256 == questions_sha256),
            };
            eprintln!("ranking with what was {}", report_learning.line());
            if report_learning.guarded_here {
                eprintln!("warning: the figures with learning are not held out: these questions guarded it");
            }
            learned = Some(report_learning);
            law_index.set_learning(Some(learning));
        }
    }
    let law_index = if args.expansion_weight.iter().any(|&w| w > 0.0) {
        match paragraf_bundler::expansion::read_expansions(&args.bundles, &manifest)? {
            Some(file) => {
                let table = law_index.expansion_table(&std::sync::Arc::new(file))?;
                law_index.with_expansions(table)
            }
            None => refuse!(
                "--expansion-weight needs the folder's thesaurus file, but {} lists none ({:?}). Rebuild with `paragraf build` and a thesaurus (--thesaurus)",
                args.bundles.join("manifest.json").display(),
                manifest.expansions
            ),
        }
    } else {
        law_index
    };
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
        dense_weight: args.dense_weight[0],
        citations_first: args.citations,
        expansion_weight: args.expansion_weight[0],
        graph_weight: args.graph_weight[0],
        ..SearchOptions::default()
    };
    let settings = Settings {
        runs: args.runs,
        rounds: args.rounds,
        seed: args.seed,
    };
    let queries = Queries {
        texts: &texts,
        vectors: vectors.as_deref(),
        gold: &gold.sections,
    };
    let clock = Instant::now();
    let now_ms = || clock.elapsed().as_secs_f64() * 1e3;
    if let Some(tuned) = tuned {
        let strategies = entries
            .iter()
            .map(|e| {
                let bundle = paragraf_bundler::manifest::read_strategy(&args.bundles, e)?;
                Ok((
                    e.strategy.clone(),
                    StrategyIndex::new(bundle, &law_index.law)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut runs: Vec<(Option<&StrategyIndex>, &str, Mode)> = Vec::new();
        if modes.contains(&Mode::Bm25) {
            runs.push((None, "sections", Mode::Bm25));
        }
        for mode in [Mode::Dense, Mode::Hybrid] {
            if modes.contains(&mode) {
                runs.extend(
                    strategies
                        .iter()
                        .map(|(name, index)| (Some(index), name.as_str(), mode)),
                );
            }
        }
        // Dense expansion embeds the expanded question as a second vector (`expansion::expanded_text`) and
        // mixes it in with the weight (`expansion::mix_vectors`).
        let expanded_vectors = match (tuned, modes.contains(&Mode::Dense), law_index.expansions()) {
            (Tuned::Expansion, true, Some(table)) => {
                let expanded: Vec<String> = texts
                    .iter()
                    .map(|t| expanded_text(t, &expand(t, table, law_index.bm25(), &[])))
                    .collect();
                let model = entries.first().map(|e| e.model.as_str());
                Some(embed_questions(&expanded, &args.encoder, model)?.0)
            }
            _ => None,
        };
        let settings = Settings {
            runs: 1,
            ..settings
        };
        let grid = Grid {
            tuned,
            weights: candidates(tuned, &args),
            baseline: match tuned {
                Tuned::Expansion | Tuned::Graph => 0.0,
                Tuned::Fusion => args.bm25_weight,
            },
            folds: args.folds,
            seed: args.seed,
        };
        let text = weight_cv(
            grid,
            &law_index,
            &runs,
            queries,
            expanded_vectors.as_deref(),
            &base,
            &settings,
            &now_ms,
        )?;
        let out = report_dir(&args)?;
        let path = out.join(tuned.file());
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        print!("{text}");
        println!("\nreport: {}", path.display());
        return Ok(());
    }
    let in_mode = |mode: Mode| SearchOptions { mode, ..base };
    let mut evaluations: Vec<Evaluation> = Vec::new();
    let bar = ProgressBar::new((entries.len().max(1) * modes.len()) as u64).with_style(
        ProgressStyle::with_template("{msg:32} {wide_bar} {pos}/{len} evaluations eta {eta}")
            .expect("template"),
    );
    if modes.contains(&Mode::Bm25) {
        bar.set_message("bm25 over sections");
        evaluations.push(evaluate(
            &law_index,
            None,
            "sections",
            queries,
            &in_mode(Mode::Bm25),
            &settings,
            &now_ms,
        )?);
        bar.inc(1);
    }
    for entry in &entries {
        let bundle = paragraf_bundler::manifest::read_strategy(&args.bundles, entry)?;
        let index = StrategyIndex::new(bundle, &law_index.law)?;
        for &mode in modes.iter().filter(|m| **m != Mode::Bm25) {
            bar.set_message(format!("{} {mode}", entry.strategy));
            let mut evaluation = evaluate(
                &law_index,
                Some(&index),
                &entry.strategy,
                queries,
                &in_mode(mode),
                &settings,
                &now_ms,
            )?;
            evaluation.row.bundle_bytes = entry.bytes;
            evaluation.row.build_seconds = entry.build_seconds;
            evaluation.row.units = entry.units;
            evaluations.push(evaluation);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();

    let friedman = significance(&mut evaluations, &settings)?;
    // Recall@10 per question and run, so runs of other bundle folders (another model) can be compared
    // question by question.
    let per_question = recall10_tsv(&evaluations, questions.len());
    let report = Report {
        generator: paragraf_bundler::manifest::GENERATOR.to_string(),
        questions: questions.len(),
        questions_file: args.questions.display().to_string(),
        gold_sections: gold.count(),
        gold_missing: gold.missing_distinct(),
        gold_missing_count: gold.missing.len(),
        unit_search: base.unit_search,
        aggregation: format!("{:?}", base.aggregation).to_lowercase(),
        rrf_k: args.rrf_k,
        weights: (args.bm25_weight, args.dense_weight[0]),
        questions_cleaned: args.clean_questions,
        long_questions: match args.encoder.long_questions {
            LongQuestions::Truncate => "truncate",
            LongQuestions::WindowAverage => "window-average",
        }
        .to_string(),
        title_weight: args.title_weight,
        learning: learned,
        query_embedding_ms_mean: embed_ms,
        friedman,
        rows: evaluations.into_iter().map(|e| e.row).collect(),
    };
    let out = report_dir(&args)?;
    write_report(&report, &out)?;
    paragraf_fs::write_atomic(&out.join("recall10.tsv"), per_question.as_bytes())?;
    print!("{}", report.markdown());
    if let Some(path) = &args.baseline {
        let text = paragraf_fs::read_regular(path)
            .and_then(|b| String::from_utf8(b).map_err(std::io::Error::other))
            .with_context(|| format!("cannot read the baseline {}", path.display()))?;
        let text = against_baseline(
            &per_question,
            &text,
            &path.display().to_string(),
            report.questions,
            &settings,
        )?;
        paragraf_fs::write_atomic(&out.join("baseline.md"), text.as_bytes())?;
        print!("\n{text}");
    }
    println!("\nreport: {}", out.join("report.md").display());
    Ok(())
}

/// The weights given for `tuned`.
fn candidates(tuned: Tuned, args: &EvalArgs) -> &[f32] {
    match tuned {
        Tuned::Expansion => &args.expansion_weight,
        Tuned::Graph => &args.graph_weight,
        Tuned::Fusion => &args.dense_weight,
    }
}

/// Where the reports go (`--out`, else `report/` inside the bundle folder), created.
fn report_dir(args: &EvalArgs) -> Result<PathBuf> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.bundles.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    Ok(out)
}

fn write_report(report: &Report, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    paragraf_fs::write_atomic(&out.join("report.json"), report.to_json().as_bytes())?;
    paragraf_fs::write_atomic(&out.join("report.md"), report.markdown().as_bytes())?;
    let label = |r: &Row| format!("{} ({})", r.strategy, r.mode);
    let charts: [(&str, &str, BarOf); 4] = [
        (
            "recall10.svg",
            "Recall@10 (95 % bootstrap CI)",
            Box::new(|r: &Row| {
                Some(Bar {
                    label: label(r),
                    value: r.recall10(),
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
                (r.mode == Mode::Dense).then(|| Bar {
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
                (r.mode == Mode::Dense).then(|| Bar {
                    label: r.strategy.clone(),
                    value: r.bundle_bytes as f64 / 1024.0,
                    interval: None,
                })
            }),
        ),
    ];
    for (file, title, bar) in charts {
        let bars: Vec<Bar> = report.rows.iter().filter_map(&bar).collect();
        paragraf_fs::write_atomic(&out.join(file), bar_chart(title, &bars).as_bytes())?;
    }
    Ok(())
}

/// Replaces the vectors of questions that read a piece the browser's model file has no row for with that model
/// file's vectors (the others are identical by construction: same weights, same code) and says how many.
fn browser_vectors(
    args: &EvalArgs,
    model: &str,
    texts: &[String],
    vectors: &mut [Vec<f32>],
) -> Result<()> {
    let bundles = &args.bundles;
    let manifest = paragraf_bundler::manifest::load_or_new(bundles)?;
    let Some(entry) = manifest.encoder else {
        refuse!("{} lists no browser model file: build e5 bundles with this version of `paragraf build`", bundles.display())
    };
    if entry.model != model {
        refuse!("the browser model file is {} but the questions are embedded with {model}; vectors of different models are not comparable", entry.model)
    }
    if !matches!(args.encoder.long_questions, LongQuestions::Truncate) {
        refuse!("the browser truncates long questions to 510 tokens: --browser-encoder cannot be combined with --long-questions window-average")
    }
    let bytes =
        paragraf_bundler::manifest::read_listed(bundles, &entry.file, entry.bytes, &entry.sha256)?;
    let encoder = paragraf_e5::file::ModelFile::from_bytes(&bytes)
        .with_context(|| entry.file.clone())?
        .into_encoder();
    let affected: Vec<usize> = texts
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            let mut ids = encoder.content_ids(t, TextKind::Query);
            ids.truncate(encoder.window_tokens());
            ids.iter().any(|&id| !encoder.has_row(id))
        })
        .map(|(i, _)| i)
        .collect();
    let chosen: Vec<&str> = affected.iter().map(|&i| texts[i].as_str()).collect();
    for (&i, v) in affected
        .iter()
        .zip(encoder.embed_texts(&chosen, TextKind::Query))
    {
        vectors[i] = v;
    }
    eprintln!(
        "browser model file {} ({} bytes, {} of {} word rows): {} of {} questions ({:.1} %) read a piece without its own row",
        entry.file,
        entry.bytes,
        entry.rows,
        entry.pieces,
        affected.len(),
        texts.len(),
        100.0 * affected.len() as f64 / texts.len().max(1) as f64
    );
    Ok(())
}
