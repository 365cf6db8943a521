//! `paragraf eval --among`: the laws of a bundle folder or the federal archive loaded, the questions' gold
//! placed among them and embedded as the modes need; what is measured is [`paragraf_eval::among`]'s.
//! `--fit-routing` fits the routing weights on the questions given (the tuning half).

use anyhow::{Context, Result};

use crate::cmd::refusal::refuse;
use paragraf_core::federal::{FederalIndex, LearnedLaw, SECTION_STRATEGY};
use paragraf_core::manifest::MANIFEST;
use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::learning::question_hash;
use paragraf_engine::Mode;
use paragraf_eval::among::{self, Across, AmongEvent, AmongLearning, Measured, Routing, Setup};
use paragraf_eval::gold::LawGold;
use paragraf_eval::Question;
use paragraf_law::Law;
use std::path::Path;
use std::time::Instant;

/// The laws of `source` with their `section` bundles: a bundle folder (with vectors where built), or the
/// federal archive or a folder of XML (lexical only).
pub fn load(source: &Path) -> Result<Vec<(Law, Option<StrategyBundle>)>> {
    let started = Instant::now();
    let laws = if source.join(MANIFEST).is_file() {
        let manifest = paragraf_bundler::manifest::load_or_new(source)?;
        manifest
            .laws
            .iter()
            .map(|entry| {
                let law = paragraf_bundler::manifest::read_law(source, entry)?;
                let bundle = manifest
                    .bundles_of(&entry.law)
                    .find(|b| b.strategy == SECTION_STRATEGY)
                    .map(|b| paragraf_bundler::manifest::read_strategy(source, b))
                    .transpose()?;
                Ok((law, bundle))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        let mut laws = Vec::new();
        let mut failed = Vec::new();
        paragraf_corpus::for_each_law(source, |entry| {
            match entry.result {
                Ok(law) => laws.push((law, None)),
                Err(e) => failed.push(e.to_string()),
            }
            std::ops::ControlFlow::Continue(())
        })?;
        for failure in failed {
            eprintln!("skipped: {failure}");
        }
        laws
    };
    eprintln!(
        "loaded {} laws from {} in {:.1} s",
        laws.len(),
        source.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(laws)
}

/// Embeds texts as questions for bundles of a model (`paragraf eval`'s encoder).
pub type Embed<'a> = dyn Fn(&[String], &str) -> Result<Vec<Vec<f32>>> + 'a;

/// What `paragraf eval --among` asked to learn from questions.
#[derive(Clone, Copy)]
pub enum LearningChoice {
    /// Nothing.
    Off,
    /// Per fold from the questions themselves (`--learn-per-fold`).
    PerFold {
        /// Folds.
        folds: usize,
        /// The learned signals' weights are scaled by this after fitting.
        shrink: f32,
    },
    /// The --among folder's learned file, when it has one.
    Folder,
}

/// Loads the laws of `source`, places the questions' gold among them (plain ids meaning `own`, the questions'
/// law when they have one), embeds what the modes need and measures ([`among::measure`]), with progress.
#[allow(clippy::too_many_arguments)]
pub fn run(
    source: &Path,
    own: Option<&str>,
    questions: &[Question],
    texts: &[String],
    modes: &[Mode],
    embed: &Embed,
    rounds: usize,
    seed: u64,
    routing: Routing,
    learning: LearningChoice,
    across: Option<&Path>,
) -> Result<Measured> {
    let laws = load(source)?;
    let own = match own {
        Some(law) => match laws.iter().position(|(l, _)| l.abbreviation == law) {
            Some(i) => Some(i),
            None => anyhow::bail!(
                "{} holds no law {law}: the questions' law must be among the laws searched",
                source.display()
            ),
        },
        None => None,
    };
    let all: Vec<&Law> = laws.iter().map(|(l, _)| l).collect();
    let gold = LawGold::map(&all, own, questions);
    for warning in &gold.warnings {
        eprintln!("warning: {warning}");
    }
    let among = index(&laws)?;
    let needs_vectors = modes.iter().any(|m| *m != Mode::Bm25);
    let vectors = match (needs_vectors, among.model()) {
        (true, Some(model)) => Some(embed(texts, model)?),
        (true, None) => anyhow::bail!(
            "{} has no {SECTION_STRATEGY} bundles: dense and hybrid need them (`paragraf build --laws all`); pass --modes bm25 to measure BM25 alone",
            source.display()
        ),
        (false, _) => None,
    };
    let folder_learned = match learning {
        LearningChoice::Folder => folder_learning(source, &laws, questions, texts)?,
        _ => None,
    };
    let across = match (learning, across) {
        (LearningChoice::PerFold { .. }, Some(path)) => {
            Some(read_across(path, &all, &among, needs_vectors, embed)?)
        }
        _ => None,
    };
    let learning = match (learning, own) {
        (LearningChoice::PerFold { .. }, None) => anyhow::bail!(
            "--learn-per-fold across laws learns from questions of one law: pass --bundles with that law (plain gold ids mean it)"
        ),
        (LearningChoice::PerFold { folds, shrink }, Some(law)) => AmongLearning::PerFold {
            law,
            folds,
            shrink,
            across: across.as_ref().map(|a| a.borrowed()),
        },
        (LearningChoice::Folder, _) => folder_learned.as_ref().map_or(AmongLearning::Off, AmongLearning::Folder),
        (LearningChoice::Off, _) => AmongLearning::Off,
    };
    let setup = Setup {
        laws: &laws,
        among: &among,
        own,
        questions,
        gold: &gold,
        texts,
        vectors: vectors.as_deref(),
        modes,
        rounds,
        seed,
        routing,
        learning,
    };
    let mut started = Instant::now();
    Ok(among::measure(setup, &mut |event| match event {
        AmongEvent::Searching(_) => started = Instant::now(),
        AmongEvent::Searched(mode) => {
            eprintln!(
                "{mode}: {} questions searched and routed in {:.1} s",
                texts.len(),
                started.elapsed().as_secs_f64()
            );
            started = Instant::now();
        }
        AmongEvent::FoldLearned { mode, fold, folds } => {
            eprintln!("{mode}: learned across laws, fold {fold} of {folds}")
        }
        AmongEvent::LearningDone(mode) => eprintln!(
            "{mode}: learning cross-validated in {:.1} s",
            started.elapsed().as_secs_f64()
        ),
    })?)
}

/// The laws as one index, timed.
pub fn index(laws: &[(Law, Option<StrategyBundle>)]) -> Result<FederalIndex> {
    let started = Instant::now();
    let among = FederalIndex::new(&among::parts(laws))?;
    eprintln!(
        "indexed {} sections of {} laws as one in {:.1} s",
        among.len(),
        laws.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(among)
}

/// Questions across laws read from a file, their gold placed among `laws` (what cannot be, warned about), and
/// embedded in the index's model when vectors are needed.
pub struct AcrossFile {
    source: String,
    gold: LawGold,
    texts: Vec<String>,
    vectors: Option<Vec<Vec<f32>>>,
}

impl AcrossFile {
    /// As [`among::measure`] takes them.
    pub fn borrowed(&self) -> Across<'_> {
        Across {
            source: self.source.clone(),
            gold: &self.gold,
            texts: &self.texts,
            vectors: self.vectors.as_deref(),
        }
    }
}

/// Reads questions across laws (see [`AcrossFile`]).
pub fn read_across(
    path: &Path,
    laws: &[&Law],
    among: &FederalIndex,
    needs_vectors: bool,
    embed: &Embed,
) -> Result<AcrossFile> {
    let (questions, _) = crate::cmd::questions::read_questions(path)?;
    let gold = LawGold::map(laws, None, &questions);
    for warning in &gold.warnings {
        eprintln!("warning: questions across laws: {warning}");
    }
    let texts: Vec<String> = questions.iter().map(|q| q.text()).collect();
    let vectors = match (needs_vectors, among.model()) {
        (true, Some(model)) => Some(embed(&texts, model)?),
        _ => None,
    };
    Ok(AcrossFile {
        source: path.display().to_string(),
        gold,
        texts,
        vectors,
    })
}

/// The learned file of the folder `source` (when it is a bundle folder that has one, with routing weights), for
/// its law among `laws`; refuses questions it learned from.
fn folder_learning(
    source: &Path,
    laws: &[(Law, Option<StrategyBundle>)],
    questions: &[Question],
    texts: &[String],
) -> Result<Option<LearnedLaw>> {
    if !source.join(MANIFEST).is_file() {
        return Ok(None);
    }
    let manifest = paragraf_bundler::manifest::load_or_new(source)?;
    let Some(entry) = &manifest.learned else {
        eprintln!(
            "{} has no learned file: ranked without learning",
            source.display()
        );
        return Ok(None);
    };
    let Some(routing) = entry.routing else {
        anyhow::bail!(
            "{} has a learned file for {} but no routing weights for its laws: learn again with `paragraf learn --bundles {}`",
            source.display(),
            entry.law,
            source.display()
        );
    };
    if !routing.weights.valid() {
        refuse!(
            "{}: the routing weights learned for {} are negative or not finite (edited by hand?): learn again with `paragraf learn --bundles {}`",
            source.display(),
            entry.law,
            source.display()
        );
    }
    let law = laws
        .iter()
        .position(|(l, _)| l.abbreviation == entry.law)
        .with_context(|| format!("{} lists no law {}", source.display(), entry.law))?;
    let learning = crate::cmd::library::read_learned(source, &manifest, &laws[law].0)?
        .with_context(|| {
            format!(
                "{}: the learned file is not for {}",
                source.display(),
                entry.law
            )
        })?;
    let known = texts
        .iter()
        .zip(questions)
        .filter(|(t, q)| {
            learning.knows(question_hash(t)) || learning.knows(question_hash(&q.text()))
        })
        .count();
    if known > 0 {
        refuse!(
            "{known} of the {} questions are among those {}'s learned file learned from: scoring them would flatter learning. Evaluate other questions, pass --no-learning, or --learn-per-fold",
            questions.len(),
            source.display()
        );
    }
    Ok(Some(LearnedLaw {
        law: law as u32,
        learning,
        weights: routing.weights,
    }))
}
