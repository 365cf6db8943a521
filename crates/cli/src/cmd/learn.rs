//! `paragraf learn`: learn from labelled lay questions what search should know of them — which sections people
//! need (a demand prior), which past questions resemble a new one (precedents that vote) and how to weigh all
//! signals (a small ranker per strategy and mode) — and write it into the bundle folder as one learned file
//! (`paragraf_engine::learning`).
//!
//! Before it writes anything it measures what learning is worth: k-fold cross-validation on the questions,
//! each fold learned from the others only, against the same runs without learning. The figures go into the
//! file (each ranker's `cv`) and are printed. `paragraf eval --learn-per-fold` runs the same cross-validation
//! on any question file, with confidence intervals and paired tests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_core::federal::learned::AmongQuestion;
use paragraf_core::federal::routing;
use paragraf_core::federal::weights::RoutingWeights;
use paragraf_core::federal::FederalIndex;
use paragraf_core::manifest::{FileEntry, LearnedEntry, LearnedRouting, Manifest};
use paragraf_engine::learning::fit::{cross_validate, learn, HeldOut, Labelled, ModelVectors, Run};
use paragraf_engine::learning::{
    question_hash, CvFigures, LearnedFile, Provenance, Weights, GERLAYQA_LICENCE,
};
use paragraf_engine::{first_stages, LawIndex, Mode, SearchOptions, StrategyIndex};
use paragraf_eval::Question;
use paragraf_format::strategy::parse_strategy_list;
use paragraf_index::fusion::{reciprocal_rank_fusion, Ranked, DEFAULT_RRF_K};
use paragraf_index::Hit;
use paragraf_law::Law;
use paragraf_stats::metrics::{recall_at, reciprocal_rank_at};
use paragraf_stats::stats::{bootstrap_ci, holm, paired_permutation_test};

use crate::cmd::eval::{embed_questions, read_questions, QuestionEncoder};
use crate::cmd::library::refuse;
use paragraf_embed::choice::ModelChoice;

#[derive(Args)]
pub struct LearnArgs {
    /// Labelled questions in GerLayQA's format: `[{"Question_text": ..., "Paragraphs": ["§ 573b", ...]}]`.
    #[arg(long)]
    questions: PathBuf,
    /// The bundle folder to learn for (manifest.json and the bundles of `paragraf build --out`).
    #[arg(long, default_value = "out/bundles")]
    bundles: PathBuf,
    /// The law to learn for (default: the folder's first law).
    #[arg(long)]
    law: Option<String>,
    /// `all` or a comma-separated list of the folder's strategies to fit rankers for (dense and hybrid each;
    /// BM25 always).
    #[arg(long, default_value = "all")]
    strategies: String,
    /// A short name of the question set, shown in the app ("gelernt aus … Laienfragen, GerLayQA").
    #[arg(long, default_value = "GerLayQA")]
    source: String,
    /// The licence of what is learned; GerLayQA's is non-commercial research only.
    #[arg(long, default_value = GERLAYQA_LICENCE)]
    licence: String,
    /// Folds of the cross-validation that measures learning before the file is written.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=20))]
    folds: u32,
    /// Seed of the folds.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Scale the learned signals' weights (prior and votes) by this factor after fitting, above 0 and at most 1:
    /// a cautious ranker for questions unlike the training set (the cross-validation measures the same factor).
    #[arg(long, default_value_t = DEFAULT_SHRINK)]
    shrink: f32,
    /// In a folder of many laws: questions across laws (gold naming their laws, e.g.
    /// `tests/data/lay-questions-federal-tune.json`) whose ranking the learned signals must not spoil. The
    /// routing weights of the learned signals are fit on them and on the learned questions, each half the
    /// objective; without them nothing learned is used across laws (questions of one law alone teach routing
    /// that every question is that law's).
    #[arg(long, value_name = "QUESTIONS")]
    across: Option<PathBuf>,
    #[command(flatten)]
    encoder: QuestionEncoder,
}

impl LearnArgs {
    /// `paragraf learn` as `paragraf build --learn-from` runs it: `questions` for `law` into `bundles`, with
    /// `across` for a folder of many laws, the questions embedded with `model`; the rest as defaults.
    pub fn after_build(
        questions: PathBuf,
        bundles: PathBuf,
        law: String,
        across: Option<PathBuf>,
        model: ModelChoice,
        embedding_cache: Option<PathBuf>,
    ) -> LearnArgs {
        LearnArgs {
            questions,
            bundles,
            law: Some(law),
            strategies: "all".into(),
            source: "GerLayQA".into(),
            licence: GERLAYQA_LICENCE.into(),
            folds: 5,
            seed: 42,
            shrink: DEFAULT_SHRINK,
            across,
            encoder: QuestionEncoder::new(Some(model), embedding_cache),
        }
    }
}

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
    let mut unknown: Vec<(&str, usize)> = unknown.into_iter().collect();
    unknown.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (id, n) in unknown.iter().take(10) {
        eprintln!(
            "warning: {id} not in {}: skipped ({n} question{})",
            law.abbreviation,
            if *n == 1 { "" } else { "s" }
        );
    }
    if unknown.len() > 10 {
        eprintln!(
            "warning: {} more gold ids not in {}: skipped",
            unknown.len() - 10,
            law.abbreviation
        );
    }
    if empty > 0 {
        eprintln!(
            "warning: {empty} questions without a gold section in {}: skipped",
            law.abbreviation
        );
    }
    if repeated > 0 {
        eprintln!("warning: {repeated} repeated questions: learned once");
    }
    out.skipped = empty + repeated;
    out
}

/// The runs to learn rankers for: BM25 alone, then dense and hybrid per strategy, each question's first stages
/// computed once (with progress).
pub fn runs<'a>(
    index: &LawIndex,
    strategies: &'a [(String, StrategyIndex)],
    texts: &[String],
    vectors: Option<&[Vec<f32>]>,
    modes: &[Mode],
) -> Result<Vec<Run<'a>>> {
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
    let bar = ProgressBar::new((plan.len() * texts.len()) as u64).with_style(
        ProgressStyle::with_template("first stages {msg:24} {wide_bar} {pos}/{len} eta {eta}")
            .expect("template"),
    );
    let runs = plan
        .into_iter()
        .map(|(strategy, mode)| {
            bar.set_message(format!(
                "{} {mode}",
                strategy.map_or("sections", |s| s.0.as_str())
            ));
            let first = texts
                .iter()
                .enumerate()
                .map(|(q, text)| {
                    bar.inc(1);
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
        .collect::<Result<Vec<_>>>();
    bar.finish_and_clear();
    runs
}

/// The ranking a run gives without learning (the plain BM25, dense or equal-weight hybrid list), from the first
/// stages cut to the depth search fuses without learning.
pub fn unlearned(run: &Run, q: usize) -> Vec<u32> {
    let (lexical, dense) = &run.first[q];
    let depth = SearchOptions::default().fusion_depth;
    let ids = |h: &[Hit]| h.iter().take(depth).map(|h| h.index).collect::<Vec<u32>>();
    match (run.mode, dense) {
        (Mode::Hybrid, Some(dense)) => {
            let (l, d) = (ids(lexical), ids(dense));
            let lists = [
                Ranked {
                    ids: &l,
                    weight: 1.0,
                },
                Ranked {
                    ids: &d,
                    weight: 1.0,
                },
            ];
            ids(&reciprocal_rank_fusion(&lists, DEFAULT_RRF_K, 100))
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
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Cross-validates learning for every run and scores it against the runs without learning.
pub fn cross_validated(
    law: &Law,
    prepared: &Prepared,
    vectors: Option<ModelVectors>,
    runs: &[Run],
    folds: usize,
    seed: u64,
    shrink: f32,
) -> Vec<CvRow> {
    let bar = ProgressBar::new(folds as u64).with_style(
        ProgressStyle::with_template("learning per fold {wide_bar} {pos}/{len} folds eta {eta}")
            .expect("template"),
    );
    let held: Vec<HeldOut> = cross_validate(
        law,
        &prepared.labelled,
        vectors,
        runs,
        folds,
        seed,
        shrink,
        &mut |f| bar.set_position(f as u64),
    );
    bar.finish_and_clear();
    runs.iter()
        .zip(held)
        .map(|(run, held)| {
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
            }
        })
        .collect()
}

/// The cross-validation as Markdown: per run Recall@10 without and held out with learning (95 % bootstrap CI),
/// Recall@100, MRR@10, questions helped and hurt, a paired permutation test (Holm over the runs) and the
/// weights per fold.
pub fn cv_markdown(rows: &[CvRow], folds: usize, seed: u64, rounds: usize) -> Result<String> {
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
    writeln!(md, "\nWeights chosen per fold (BM25 rank, dense rank, prior, lexical vote, dense vote; prior smoothing):\n")?;
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
        writeln!(md, "- {}: {}", row.name, folds.join(" "))?;
    }
    Ok(md)
}

/// The folder's strategies named by `wanted` (all: `all`), loaded and checked against the law.
pub fn load_strategies(
    dir: &Path,
    manifest: &Manifest,
    law: &Law,
    wanted: &str,
) -> Result<Vec<(String, StrategyIndex)>> {
    let wanted = parse_strategy_list(wanted)?;
    manifest
        .bundles_of(&law.abbreviation)
        .filter(|b| wanted.iter().any(|w| w.name() == b.strategy))
        .map(|entry| {
            let bundle = paragraf_bundler::manifest::read_strategy(dir, entry)?;
            Ok((entry.strategy.clone(), StrategyIndex::new(bundle, law)?))
        })
        .collect()
}

pub fn run(args: LearnArgs) -> Result<()> {
    let (questions, file_sha256) = read_questions(&args.questions)?;
    let manifest = paragraf_bundler::manifest::load_or_new(&args.bundles)?;
    let entry = match &args.law {
        Some(name) => manifest.law(name),
        None => manifest.laws.first(),
    };
    let Some(entry) = entry else {
        refuse!(
            "{} has no law{}. Build bundles first: `paragraf build --out {}`",
            args.bundles.display(),
            args.law
                .as_deref()
                .map(|l| format!(" {l}"))
                .unwrap_or_default(),
            args.bundles.display()
        );
    };
    let law = paragraf_bundler::manifest::read_law(&args.bundles, entry)?;
    let index = LawIndex::new(law);
    if !(args.shrink > 0.0 && args.shrink <= 1.0) {
        refuse!(
            "--shrink {}: the factor must be above 0 and at most 1",
            args.shrink
        );
    }
    let prepared = prepare(&questions, &index);
    if prepared.labelled.len() < 2 * args.folds as usize {
        refuse!(
            "{} has {} usable questions for {}: too few to learn from and cross-validate in {} folds",
            args.questions.display(),
            prepared.labelled.len(),
            index.law.abbreviation,
            args.folds
        );
    }
    let strategies = load_strategies(&args.bundles, &manifest, &index.law, &args.strategies)?;
    let model = strategies.first().map(|(_, s)| s.bundle.model.clone());
    if let Some((name, s)) = strategies
        .iter()
        .find(|(_, s)| Some(&s.bundle.model) != model.as_ref())
    {
        refuse!(
            "the strategies were embedded with different models ({}, {name}: {}); learn for one model at a time (--strategies)",
            model.unwrap_or_default(),
            s.bundle.model
        );
    }
    let vectors = match &model {
        Some(model) => Some(embed_questions(&prepared.texts, &args.encoder, Some(model))?.0),
        None => None,
    };
    let model_vectors = model
        .as_deref()
        .zip(vectors.as_deref())
        .map(|(model, vectors)| ModelVectors { model, vectors });
    let runs = runs(
        &index,
        &strategies,
        &prepared.texts,
        vectors.as_deref(),
        Mode::ALL,
    )?;
    let folds = args.folds as usize;
    let rows = cross_validated(
        &index.law,
        &prepared,
        model_vectors,
        &runs,
        folds,
        args.seed,
        args.shrink,
    );
    let provenance = Provenance {
        source: args.source.clone(),
        file_sha256,
        questions: prepared.labelled.len() as u32,
        skipped: prepared.skipped as u32,
        date: today(),
        licence: args.licence.clone(),
    };
    let members: Vec<usize> = (0..prepared.labelled.len()).collect();
    let mut file: LearnedFile = learn(
        &index.law,
        paragraf_bundler::builder::GENERATOR,
        provenance,
        &prepared.labelled,
        &members,
        model_vectors,
        &runs,
        args.shrink,
    );
    for (ranker, row) in file.rankers.iter_mut().zip(&rows) {
        ranker.cv = row.figures;
    }
    let routing = match (manifest.laws.len() > 1, &args.across) {
        (true, Some(across)) => Some(learn_routing(
            &args,
            across,
            &file,
            &index.law,
            &prepared,
            model_vectors,
        )?),
        (true, None) => {
            println!("Not learned across the folder's {} laws: that needs --across <questions across laws> (e.g. tests/data/lay-questions-federal-tune.json), since questions of one law alone teach routing that every question is that law's. {} alone ranks with what was learned.", manifest.laws.len(), index.law.abbreviation);
            None
        }
        (false, _) => None,
    };
    let bytes = file.to_bytes();
    let written = write_learned(
        &args.bundles,
        &index.law.abbreviation,
        &file,
        &bytes,
        routing,
    )?;
    let md = cv_markdown(&rows, folds, args.seed, 2_000)?;
    print!("{md}");
    println!(
        "\nlearned from {} questions ({}; {} skipped) for {}: {} ({:.0} KB). {}",
        file.provenance.questions,
        file.provenance.source,
        file.provenance.skipped,
        index.law.abbreviation,
        args.bundles.join(&written).display(),
        bytes.len() as f64 / 1024.0,
        file.provenance.licence
    );
    Ok(())
}

/// In a folder of many laws: the routing weights of `file`'s signals when all its laws are searched as one
/// ([`paragraf_core::federal::learned`]), cross-validated (printed, and kept as the figures), then fit on every
/// question. Ranks hybrid when the laws have `section` vectors, else BM25.
fn learn_routing(
    args: &LearnArgs,
    across: &Path,
    file: &LearnedFile,
    law: &Law,
    prepared: &Prepared,
    vectors: Option<ModelVectors>,
) -> Result<LearnedRouting> {
    let laws = crate::cmd::distractors::load(&args.bundles)?;
    let own = laws
        .iter()
        .position(|(l, _)| l.abbreviation == law.abbreviation)
        .context("the learned law is among the folder's laws")? as u32;
    let started = std::time::Instant::now();
    let among = FederalIndex::new(&crate::cmd::distractors::parts(&laws))?;
    eprintln!(
        "indexed {} sections of {} laws as one in {:.1} s",
        among.len(),
        laws.len(),
        started.elapsed().as_secs_f64()
    );
    // The index's model may differ from the strategies learned for (or there are none): embed for it.
    let embedded;
    let vectors = match (among.model(), vectors) {
        (None, _) => None,
        (Some(model), Some(v)) if v.model == model => Some(v),
        (Some(model), _) => {
            embedded = embed_questions(&prepared.texts, &args.encoder, Some(model))?.0;
            Some(ModelVectors {
                model,
                vectors: &embedded,
            })
        }
    };
    let options = SearchOptions {
        mode: if vectors.is_some() {
            Mode::Hybrid
        } else {
            Mode::Bm25
        },
        citations_first: false,
        route_laws: false,
        ..SearchOptions::default()
    };
    let vector = |q: usize| vectors.map(|v| v.vectors[q].as_slice());
    let questions: Vec<AmongQuestion> = prepared
        .texts
        .iter()
        .enumerate()
        .map(|(q, text)| {
            let first = among.first_stage(text, vector(q), &options)?;
            Ok(AmongQuestion {
                text,
                vector: vector(q),
                features: among.routing_features(&first, text),
                gold: prepared.labelled[q]
                    .gold
                    .iter()
                    .filter_map(|&s| among.doc_of(own, s))
                    .collect(),
            })
        })
        .collect::<Result<_>>()?;
    eprintln!(
        "searched {} questions among {} laws ({}) in {:.1} s",
        questions.len(),
        laws.len(),
        options.mode,
        started.elapsed().as_secs_f64()
    );
    let (across_questions, _) = read_questions(across)?;
    let across_texts: Vec<String> = across_questions.iter().map(|q| q.text()).collect();
    let across_vectors = match vectors {
        Some(v) => Some(embed_questions(&across_texts, &args.encoder, Some(v.model))?.0),
        None => None,
    };
    let all: Vec<&Law> = laws.iter().map(|(l, _)| l).collect();
    let across = crate::cmd::distractors::across_questions(
        &among,
        &all,
        &across_questions,
        &across_texts,
        across_vectors.as_deref(),
        &options,
    )?;
    // Scored as `paragraf eval` scores: gold ids not in the law (or without text) are misses.
    let scored = |q: usize, ranking: &[Hit], k: usize| -> f64 {
        let docs: Vec<u32> = ranking.iter().map(|h| h.index).collect();
        let misses = prepared.scored_gold[q].len() - questions[q].gold.len();
        let mut gold = questions[q].gold.clone();
        gold.extend((0..misses as u32).map(|i| u32::MAX - i));
        recall_at(&docs, &gold, k).unwrap_or(0.0)
    };
    let folds = args.folds as usize;
    let held = paragraf_core::federal::learned::cross_validate(
        &among,
        own,
        law,
        &questions,
        &prepared.labelled,
        &across,
        vectors,
        folds,
        args.seed,
        RoutingWeights::DEFAULT,
        args.shrink,
        100,
        &mut |f| eprintln!("routing across laws: fold {f} of {folds} learned"),
    );
    let without: Vec<Vec<Hit>> = questions
        .iter()
        .map(|q| routing::routed(&q.features, &RoutingWeights::DEFAULT, 100))
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
    let (learning, _) = file.clone().resolve(law)?;
    let members: Vec<usize> = (0..questions.len()).collect();
    let weights = paragraf_core::federal::learned::fit(
        &among,
        own,
        &learning,
        &questions,
        &prepared.labelled,
        &members,
        &across,
        RoutingWeights::DEFAULT,
        args.shrink,
    );
    println!(
        "Across the folder's {} laws ({}, {folds}-fold cross-validation, held out): Recall@10 routed {:.4} → with learning {:.4}, R@100 {:.4} → {:.4}. Routing weights of the prior and the votes (lexical, dense): {}, {}, {}",
        laws.len(),
        options.mode,
        cv.recall10_without,
        cv.recall10_with,
        cv.recall100_without,
        cv.recall100_with,
        weights.prior,
        weights.vote_lexical,
        weights.vote_dense
    );
    Ok(LearnedRouting { weights, cv })
}

/// Writes the learned file content-hashed, lists it in the manifest and removes the file it replaced.
fn write_learned(
    dir: &Path,
    law: &str,
    file: &LearnedFile,
    bytes: &[u8],
    routing: Option<LearnedRouting>,
) -> Result<String> {
    let sha256 = paragraf_format::digest::sha256_hex(bytes);
    let name = format!("learned.{}.pgb", &sha256[..16]);
    let path = paragraf_fs::join_name(dir, &name)?;
    paragraf_fs::write_atomic(&path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let mut manifest = paragraf_bundler::manifest::load_or_new(dir)?;
    let replaced = manifest.learned.replace(LearnedEntry {
        law: law.to_string(),
        source: file.provenance.source.clone(),
        questions: file.provenance.questions as usize,
        licence: file.provenance.licence.clone(),
        file: FileEntry {
            file: name.clone(),
            bytes: bytes.len() as u64,
            sha256,
        },
        routing,
    });
    paragraf_bundler::manifest::save(&mut manifest, dir)?;
    if let Some(old) = replaced.filter(|old| old.file.file != name) {
        let old = paragraf_fs::join_name(dir, &old.file.file)?;
        if let Err(e) = std::fs::remove_file(&old) {
            eprintln!("warning: cannot remove the replaced {}: {e}", old.display());
        }
    }
    Ok(name)
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The folder's learned file for `law`, verified against the manifest and matched against the law; `None` when
/// the folder has none for it. Names what could not be matched on stderr.
pub fn read_learned(
    dir: &Path,
    manifest: &Manifest,
    law: &Law,
) -> Result<Option<paragraf_engine::learning::Learning>> {
    let Some(entry) = manifest
        .learned
        .as_ref()
        .filter(|l| l.law == law.abbreviation)
    else {
        return Ok(None);
    };
    let bytes = paragraf_bundler::manifest::read_listed(
        dir,
        &entry.file.file,
        entry.file.bytes,
        &entry.file.sha256,
    )?;
    let file = LearnedFile::from_bytes(&bytes)
        .with_context(|| dir.join(&entry.file.file).display().to_string())?;
    let (learning, warnings) = file.resolve(law)?;
    if let Some(build) = warnings.other_build {
        eprintln!("warning: {build}");
    }
    if !warnings.missing_sections.is_empty() {
        eprintln!(
            "warning: {} sections the learned file names are not in {}: their votes are dropped ({})",
            warnings.missing_sections.len(),
            law.abbreviation,
            warnings.missing_sections.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(Some(learning))
}
