//! `paragraf learn`: learn from labelled lay questions what search should know of them — which sections people
//! need (a demand prior), which past questions resemble a new one (precedents that vote) and how to weigh all
//! signals (a small ranker per strategy and mode) — and write it into the bundle folder as one learned file
//! (`paragraf_engine::learning`).
//!
//! Before it writes anything it measures what learning is worth: k-fold cross-validation on the questions,
//! each fold learned from the others only, against the same runs without learning. The figures go into the
//! file (each ranker's `cv`) and are printed. `paragraf eval --learn-per-fold` runs the same cross-validation
//! on any question file, with confidence intervals and paired tests.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_core::manifest::{FileEntry, LearnedEntry, LearnedGuard, LearnedRouting, Manifest};
use paragraf_core::routing_weights::RoutingWeights;
use paragraf_engine::learning::fit::{fit_tails, learn, ModelVectors, Run};
use paragraf_engine::learning::{LearnedFile, Provenance, GERLAYQA_LICENCE};
use paragraf_engine::{LawIndex, Mode, SearchOptions, StrategyIndex};
use paragraf_eval::learning::{self, cv_markdown, AcrossLaws, CvRow, Prepared, DEFAULT_SHRINK};
use paragraf_eval::Question;
use paragraf_format::strategy::parse_strategy_list;
use paragraf_law::Law;

use crate::cmd::questions::{embed_questions, read_questions, QuestionEncoder};
use crate::cmd::refusal::refuse;
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
    /// With --guard the largest factor tried.
    #[arg(long, default_value_t = DEFAULT_SHRINK)]
    shrink: f32,
    /// Questions learning must not hurt (e.g. tests/data/lay-questions-bgb.json; none of them learned from): per
    /// strategy and mode the learned signals are shrunk further, down to none, until the guard's Recall@10 is
    /// not below the same run without learning. The cross-validation measures the factors chosen.
    #[arg(long, value_name = "QUESTIONS")]
    guard: Option<PathBuf>,
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
    /// `across` for a folder of many laws and `guard` (`--guard`), the questions embedded with `model`; the rest
    /// as defaults.
    pub fn after_build(
        questions: PathBuf,
        bundles: PathBuf,
        law: String,
        across: Option<PathBuf>,
        guard: Option<PathBuf>,
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
            guard,
            across,
            encoder: QuestionEncoder::new(Some(model), embedding_cache),
        }
    }
}

/// [`learning::prepare`], what it left out printed as warnings.
pub fn prepare(questions: &[Question], index: &LawIndex) -> Prepared {
    let prepared = learning::prepare(questions, index);
    for warning in prepared.left_out.warnings() {
        eprintln!("warning: {warning}");
    }
    prepared
}

/// [`learning::runs`] with a progress bar.
pub fn runs<'a>(
    index: &LawIndex,
    strategies: &'a [(String, StrategyIndex)],
    texts: &[String],
    vectors: Option<&[Vec<f32>]>,
    modes: &[Mode],
) -> Result<Vec<Run<'a>>> {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("first stages {msg:24} {wide_bar} {pos}/{len} eta {eta}")
            .expect("template"),
    );
    let runs = learning::runs(
        index,
        strategies,
        texts,
        vectors,
        modes,
        &mut |name, done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(name.to_string());
        },
    );
    bar.finish_and_clear();
    Ok(runs?)
}

/// [`learning::cross_validated`] with a progress bar.
pub fn cross_validated(
    law: &Law,
    prepared: &Prepared,
    vectors: Option<ModelVectors>,
    runs: &[Run],
    folds: usize,
    seed: u64,
    shrinks: &[f32],
) -> Vec<CvRow> {
    let bar = ProgressBar::new(folds as u64).with_style(
        ProgressStyle::with_template("learning per fold {wide_bar} {pos}/{len} folds eta {eta}")
            .expect("template"),
    );
    let rows = learning::cross_validated(
        law,
        prepared,
        vectors,
        runs,
        folds,
        seed,
        shrinks,
        &mut |f| bar.set_position(f as u64),
    );
    bar.finish_and_clear();
    rows
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
    let guard_questions = match &args.guard {
        Some(path) => Some(read_guard(path, &args.questions, &index, &prepared)?),
        None => None,
    };
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
    let provenance = provenance(&prepared, &args.source, file_sha256, &args.licence);
    let mut file = fit_all(&index, &prepared, provenance, model_vectors, &runs);
    let guarded = match &guard_questions {
        Some((questions, sha256)) => {
            let guarded = guard(
                &args.encoder,
                args.shrink,
                Mode::ALL,
                questions,
                &file,
                &index,
                &strategies,
                model.as_deref(),
            )?;
            Some(LearnedGuard {
                sha256: sha256.clone(),
                questions: questions.labelled.len(),
                factors: guarded.iter().map(|g| (g.name.clone(), g.factor)).collect(),
            })
        }
        None => None,
    };
    let shrinks: Vec<f32> = match &guarded {
        Some(guard) => guard.factors.iter().map(|(_, f)| *f).collect(),
        None => vec![args.shrink; runs.len()],
    };
    for (ranker, &shrink) in file.rankers.iter_mut().zip(&shrinks) {
        ranker.weights = ranker.weights.shrunk(shrink);
    }
    let members: Vec<usize> = (0..prepared.labelled.len()).collect();
    fit_tails(
        &mut file,
        &index.law,
        &prepared.labelled,
        &members,
        model_vectors,
        &runs,
    );
    let folds = args.folds as usize;
    let rows = cross_validated(
        &index.law,
        &prepared,
        model_vectors,
        &runs,
        folds,
        args.seed,
        &shrinks,
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
        guarded,
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

/// `--guard`: its questions prepared for the law, checked before anything is learned: some must have gold in
/// the law and none may be among the questions `learned` from.
pub fn read_guard(
    path: &Path,
    learned_from: &Path,
    index: &LawIndex,
    learned: &Prepared,
) -> Result<(Prepared, String)> {
    let (questions, sha256) = read_questions(path)?;
    let guard = prepare(&questions, index);
    if guard.labelled.is_empty() {
        refuse!(
            "--guard {}: no question with a gold section in {}",
            path.display(),
            index.law.abbreviation
        );
    }
    let seen = guard
        .labelled
        .iter()
        .filter(|g| learned.labelled.iter().any(|l| l.hash == g.hash))
        .count();
    if seen > 0 {
        refuse!(
            "--guard {}: {seen} of its {} usable questions are among the questions learned from ({}); a guard must be questions learning did not see",
            path.display(),
            guard.labelled.len(),
            learned_from.display()
        );
    }
    Ok((guard, sha256))
}

/// The `--guard` questions ranked with `file`'s fit (unshrunk) rankers; per run the factor chosen
/// ([`learning::guard`]), printed.
#[allow(clippy::too_many_arguments)]
pub fn guard(
    encoder: &QuestionEncoder,
    shrink: f32,
    modes: &[Mode],
    questions: &Prepared,
    file: &LearnedFile,
    index: &LawIndex,
    strategies: &[(String, StrategyIndex)],
    model: Option<&str>,
) -> Result<Vec<learning::Guarded>> {
    // The questions' vectors only when a run wants them (the runs are the modes asked for, as learn's).
    let vectors = match model.filter(|_| modes.iter().any(|m| *m != Mode::Bm25)) {
        Some(model) => Some(embed_questions(&questions.texts, encoder, Some(model))?.0),
        None => None,
    };
    let model_vectors = model
        .zip(vectors.as_deref())
        .map(|(model, vectors)| ModelVectors { model, vectors });
    let runs = runs(
        index,
        strategies,
        &questions.texts,
        vectors.as_deref(),
        modes,
    )?;
    let (learning, _) = file.clone().resolve(&index.law)?;
    let fitted: Vec<_> = file.rankers.iter().map(|r| r.weights).collect();
    let guarded = learning::guard(&learning, &fitted, &runs, questions, model_vectors, shrink);
    print!(
        "{}",
        learning::guard_markdown(&guarded, questions.labelled.len(), shrink)?
    );
    println!();
    for g in guarded.iter().filter(|g| g.still_hurts()) {
        eprintln!(
            "warning: {}: even without prior and votes its fit fusion weights lower the guard's Recall@10 ({:.4} → {:.4})",
            g.name, g.recall_without, g.recall_chosen
        );
    }
    Ok(guarded)
}

/// Where what is learned from `prepared` comes from, as of today.
fn provenance(prepared: &Prepared, source: &str, file_sha256: String, licence: &str) -> Provenance {
    Provenance {
        source: source.to_string(),
        file_sha256,
        questions: prepared.labelled.len() as u32,
        skipped: prepared.skipped as u32,
        date: today(),
        licence: licence.to_string(),
    }
}

/// Every run fit on all `prepared` questions, unshrunk: what the guard ranks, and what is written once shrunk.
fn fit_all(
    index: &LawIndex,
    prepared: &Prepared,
    provenance: Provenance,
    model_vectors: Option<ModelVectors>,
    runs: &[Run],
) -> LearnedFile {
    let members: Vec<usize> = (0..prepared.labelled.len()).collect();
    learn(
        &index.law,
        paragraf_bundler::manifest::GENERATOR,
        provenance,
        &prepared.labelled,
        &members,
        model_vectors,
        runs,
        &vec![1.0; runs.len()],
    )
}

/// Per run (`runs`, of `modes`) the factor `--guard` chooses for `prepared`, as `paragraf learn --guard` chooses
/// it with its default `--shrink`: every run fit on all of them unshrunk, the guard ranked with it ([`guard`],
/// from [`DEFAULT_SHRINK`] down) — for `paragraf eval --learn-per-fold --guard`, whose folds then measure them.
#[allow(clippy::too_many_arguments)]
pub fn guard_factors(
    encoder: &QuestionEncoder,
    guard_questions: &Prepared,
    index: &LawIndex,
    strategies: &[(String, StrategyIndex)],
    model: Option<&str>,
    prepared: &Prepared,
    model_vectors: Option<ModelVectors>,
    runs: &[Run],
    modes: &[Mode],
    file_sha256: String,
) -> Result<Vec<f32>> {
    let provenance = provenance(prepared, "eval --learn-per-fold", file_sha256, "");
    let file = fit_all(index, prepared, provenance, model_vectors, runs);
    Ok(guard(
        encoder,
        DEFAULT_SHRINK,
        modes,
        guard_questions,
        &file,
        index,
        strategies,
        model,
    )?
    .iter()
    .map(|g| g.factor)
    .collect())
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
    let among = crate::cmd::distractors::index(&laws)?;
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
    let questions = learning::among_questions(&among, own, prepared, vectors, &options)?;
    eprintln!(
        "searched {} questions among {} laws ({}) in {:.1} s",
        questions.len(),
        laws.len(),
        options.mode,
        started.elapsed().as_secs_f64()
    );
    let all: Vec<&Law> = laws.iter().map(|(l, _)| l).collect();
    let embed =
        |texts: &[String], model: &str| Ok(embed_questions(texts, &args.encoder, Some(model))?.0);
    let across =
        crate::cmd::distractors::read_across(across, &all, &among, vectors.is_some(), &embed)?;
    let across = across.borrowed();
    let across = paragraf_eval::among::across_questions(
        &among,
        across.gold,
        across.texts,
        across.vectors,
        &options,
    )?;
    let folds = args.folds as usize;
    let (learning, _) = file.clone().resolve(law)?;
    let across_laws = AcrossLaws {
        among: &among,
        own,
        law,
        learning: &learning,
        prepared,
        questions: &questions,
        across: &across,
        vectors,
        base: RoutingWeights::shipped(options.mode),
    };
    let LearnedRouting { weights, cv } =
        across_laws.learn(folds, args.seed, args.shrink, &mut |f| {
            eprintln!("routing across laws: fold {f} of {folds} learned")
        });
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
    guard: Option<LearnedGuard>,
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
        guard,
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
