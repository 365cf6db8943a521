//! Learning from the questions people ask: a demand prior, votes of similar past questions and a small learned
//! ranker, from labelled lay questions (GerLayQA's dev split, or any file in its format).
//!
//! Lay questions are not spread evenly over a law: a few hundred sections (§ 1004, § 823, § 573c …) are asked
//! about again and again, and questions about the same situation point to the same sections. Nothing in the
//! statute text says so; a set of labelled questions does. This module holds what is learned from such a set
//! ([`LearnedFile`], one framed file per bundle folder, magic `PGRF-LRN`) and how search uses it
//! ([`Learning::rerank`], called by [`crate::search`] for every mode):
//!
//! - the **prior**: how often each section was gold, smoothed (`ln(1 + count / smoothing)`, scaled to 0..1);
//! - **precedents**: per training question its analysed BM25 terms (never its text), its vector per model of
//!   the folder (int8) and its gold sections. A query finds its [`PRECEDENTS`] most similar precedents (BM25
//!   between questions, and cosine where a vector is at hand), and each votes for its gold sections with its
//!   similarity;
//! - a **ranker** per (strategy, mode): a linear score over the candidates (the first stages' top 100, the
//!   sections voted for, the most asked-about sections) from five features — the BM25 and dense reciprocal
//!   ranks the plain hybrid fuses, the prior, and the two votes. Its weights are fit on the training questions
//!   ([`fit`]), with a weight vector of (1, 1, 0, 0, 0) being exactly the unlearned RRF hybrid;
//! - a **tail** per ranker: a second set of weights that orders ranks 11–100 once the first 10 stand, fit on
//!   Recall@100 alone, with five more features — sections asked about together with the first 10 (co-gold),
//!   next to them in the law, in the same title of the law, citing or cited by them, and how many similar
//!   precedents vote for a section. The
//!   first 10 are always the head's; the tail orders what a search asking for more gets (`paragraf search -k`,
//!   MCP's `k` up to 50, the app's "Weitere Treffer", the citation-graph spread, which re-ranks a deeper list).
//!
//! What is learned from GerLayQA inherits its licence (non-commercial research only): the file carries its
//! [`Provenance`] with the licence line, and every front end shows it.

pub mod fit;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::Mode;
use paragraf_format::frame::{BundleError, FileKind};
use paragraf_index::fusion::DEFAULT_RRF_K;
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::Hit;
use paragraf_law::Law;

/// The learned file.
pub const KIND: FileKind = FileKind::new(b"PGRF-LRN", "learned file", 6, 6)
    .remedy("Learn again with `paragraf learn` (search goes on without it)");

/// Precedents that vote for a query: the most similar, lexically and (with a vector) densely.
pub const PRECEDENTS: usize = 100;

/// Sections with the highest prior that join every query's candidates.
pub const PRIOR_CANDIDATES: usize = 100;

/// The ranks the head weights order; the tail ([`Ranker::tail`]) orders those below.
pub const HEAD: usize = 10;

/// How deep the first stages (BM25 sections, dense sections) go when learning reranks them. Deeper lists let the
/// votes lift sections the plain ranking puts far down: on the BGB dev questions (e5, `section`, 5-fold CV, held
/// out) 1,000 instead of 100 lifts R@100 by 0.011–0.025 with R@10 within ±0.01 — but on the project's own lay
/// questions dense R@10 falls 0.619 → 0.553 (docs/learning.md, "Candidate depth"), so it stays at 100.
pub const CANDIDATE_DEPTH: usize = 100;

/// Limits of a learned file (checked on decoding, so that a hostile file cannot make a reader allocate without
/// bound after the checksum matched).
pub const MAX_PRECEDENTS: usize = 100_000;
/// Distinct terms over all precedents.
pub const MAX_TERMS: usize = 2_000_000;
/// Sections named by precedents.
pub const MAX_SECTIONS: usize = 200_000;
/// Terms of one precedent, gold sections of one precedent.
pub const MAX_PER_PRECEDENT: usize = 20_000;

/// The licence line of GerLayQA-derived files (the dataset's terms).
pub const GERLAYQA_LICENCE: &str = "derived from GerLayQA (Büttner & Habernal, EACL 2024): non-commercial research use only; do not publish or use commercially";

/// Where the learned signals come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// A short name of the question set (`GerLayQA`), shown in the app.
    pub source: String,
    /// SHA-256 of the question file (lower-case hex).
    pub file_sha256: String,
    /// Questions learned from (after skipping those without a usable gold section).
    pub questions: u32,
    /// Questions skipped (no gold section in the law, or a duplicate).
    pub skipped: u32,
    /// When it was learned (`YYYY-MM-DD`).
    pub date: String,
    /// The licence of what was learned.
    pub licence: String,
}

impl Provenance {
    /// The provenance of what one cross-validation fold learns from `questions` questions: nothing to show, it
    /// never leaves the run.
    pub fn of_fold(questions: usize) -> Provenance {
        Provenance {
            source: String::new(),
            file_sha256: String::new(),
            questions: questions as u32,
            skipped: 0,
            date: String::new(),
            licence: String::new(),
        }
    }
}

/// One past question: what search may know of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Precedent {
    /// First 8 bytes of the SHA-256 of its normalised text ([`question_hash`]): lets `paragraf eval` refuse to
    /// score the questions it learned from. Not the text.
    pub hash: u64,
    /// Its analysed BM25 terms (indices into [`LearnedFile::terms`]) with their counts.
    pub terms: Vec<(u32, u16)>,
    /// Its gold sections (indices into [`LearnedFile::sections`]).
    pub gold: Vec<u32>,
}

/// The precedents' vectors for one model, one row per precedent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrecedentVectors {
    /// The model id; only a query vector of this model is compared with them.
    pub model: String,
    /// One row per precedent, in precedent order.
    pub vectors: Int8Vectors,
    /// How close the precedents come to each other, which says how familiar a query is.
    pub familiarity: Familiarity,
}

/// How much of what was learned a query gets, from the cosine of its nearest precedent (the model's cosines, so
/// one per model): everything from `full` up, nothing at `none` or below, linear in between.
///
/// Learning helps questions like the ones it learned from and can pull a question unlike them off the answer
/// its words alone found (the project's short everyday questions against GerLayQA's long forum posts,
/// docs/learning.md). Both ends come from the training questions themselves: `full` is the 5th percentile of
/// each one's cosine to its nearest other precedent (a query at least as close to a precedent as 95 % of them
/// are to each other), and `none` lies as far below it as the median lies above it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Familiarity {
    /// From this cosine up, the learned signals count in full.
    pub full: f32,
    /// At this cosine or below, they do not count.
    pub none: f32,
}

impl Familiarity {
    /// Every query gets everything learned (too few precedents to say what is familiar).
    pub const ANY: Familiarity = Familiarity {
        full: -1.0,
        none: -1.0,
    };

    /// The familiarity of precedents whose nearest other precedent is at the cosines `nearest` (one per
    /// precedent); `None` for fewer than two.
    pub fn of(nearest: &[f32]) -> Option<Familiarity> {
        if nearest.len() < 2 || nearest.iter().any(|c| !c.is_finite()) {
            return None;
        }
        let mut sorted = nearest.to_vec();
        sorted.sort_by(f32::total_cmp);
        let at = |q: f32| sorted[(q * (sorted.len() - 1) as f32).round() as usize];
        let (full, median) = (at(0.05), at(0.5));
        Some(Familiarity {
            full,
            none: full - (median - full),
        })
    }

    /// The share of the learned signals a query gets whose nearest precedent is at cosine `nearest`.
    pub fn confidence(&self, nearest: f32) -> f32 {
        if nearest >= self.full {
            1.0
        } else if nearest <= self.none {
            0.0
        } else {
            (nearest - self.none) / (self.full - self.none)
        }
    }

    fn valid(&self) -> bool {
        self.full.is_finite() && self.none.is_finite() && self.none <= self.full
    }
}

/// The weights of the learned score (see [`Features`]); all 0 or more.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// The BM25 list's reciprocal rank.
    pub lexical: f32,
    /// The dense list's reciprocal rank.
    pub dense: f32,
    /// The demand prior.
    pub prior: f32,
    /// The vote of lexically similar precedents.
    pub vote_lexical: f32,
    /// The vote of densely similar precedents.
    pub vote_dense: f32,
    /// The prior's smoothing (`ln(1 + count / smoothing)`), > 0.
    pub smoothing: f32,
    /// Tail only: how often a section was gold together with the first [`HEAD`] ([`Features::cogold`]).
    #[serde(default)]
    pub cogold: f32,
    /// Tail only: next to one of the first [`HEAD`] in the law.
    #[serde(default)]
    pub adjacent: f32,
    /// Tail only: citing or cited by one of the first [`HEAD`].
    #[serde(default)]
    pub linked: f32,
    /// Tail only: in the same innermost structural unit as sections of the first [`HEAD`] ([`Features::unit`]).
    #[serde(default)]
    pub unit: f32,
    /// Tail only: how many similar precedents vote for a section ([`Features::voters`]).
    #[serde(default)]
    pub voters: f32,
}

impl Weights {
    /// The unlearned ranking: BM25 and dense reciprocal ranks at weight 1 (the plain hybrid).
    pub const UNLEARNED: Weights = Weights {
        lexical: 1.0,
        dense: 1.0,
        prior: 0.0,
        vote_lexical: 0.0,
        vote_dense: 0.0,
        smoothing: 1.0,
        cogold: 0.0,
        adjacent: 0.0,
        linked: 0.0,
        unit: 0.0,
        voters: 0.0,
    };

    /// These weights with the learned signals (prior, votes, co-gold, voters) scaled by `factor` (0..1): a cautious
    /// ranker that leans less on what was learned (`paragraf learn --shrink`).
    pub fn shrunk(self, factor: f32) -> Weights {
        Weights {
            prior: self.prior * factor,
            vote_lexical: self.vote_lexical * factor,
            vote_dense: self.vote_dense * factor,
            cogold: self.cogold * factor,
            voters: self.voters * factor,
            ..self
        }
    }

    /// Whether every weight is finite and 0 or more, and the smoothing above 0.
    pub fn valid(&self) -> bool {
        let all = [
            self.lexical,
            self.dense,
            self.prior,
            self.vote_lexical,
            self.vote_dense,
            self.cogold,
            self.adjacent,
            self.linked,
            self.unit,
            self.voters,
        ];
        all.iter().all(|w| w.is_finite() && *w >= 0.0)
            && self.smoothing.is_finite()
            && self.smoothing > 0.0
    }
}

/// How the ranker of one run was judged: by k-fold cross-validation on the training questions (each fold
/// learned from the others), against the same run without learning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CvFigures {
    /// Folds (0: not cross-validated).
    pub folds: u32,
    /// Questions scored.
    pub questions: u32,
    /// Recall@10 without learning.
    pub recall10_without: f64,
    /// Recall@10 held out, with learning.
    pub recall10_with: f64,
    /// Recall@100 without learning.
    pub recall100_without: f64,
    /// Recall@100 held out, with learning.
    pub recall100_with: f64,
}

/// The learned ranker of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranker {
    /// The strategy whose first stage it was fit on (`None`: BM25 alone, no strategy).
    pub strategy: Option<String>,
    /// The mode.
    pub mode: Mode,
    /// Its weights: the order of the first [`HEAD`] ranks.
    pub weights: Weights,
    /// The order of the ranks below [`HEAD`], fit on Recall@100 with the first ones fixed (`None`: the head
    /// weights order them too).
    pub tail: Option<Weights>,
    /// How it did held out.
    pub cv: CvFigures,
}

/// What was learned from a question set for one law: the file `learned.<hash>.pgb`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedFile {
    /// The tool that wrote it.
    pub generator: String,
    /// The law's abbreviation.
    pub law: String,
    /// The law's build date the sections were matched against.
    pub law_build_date: String,
    /// Where it was learned from, and its licence.
    pub provenance: Provenance,
    /// Section designations (`§ 573c`) that precedents name.
    pub sections: Vec<String>,
    /// The precedents' term vocabulary.
    pub terms: Vec<String>,
    /// One per training question.
    pub precedents: Vec<Precedent>,
    /// The precedents' vectors, per model.
    pub vectors: Vec<PrecedentVectors>,
    /// One per (strategy, mode) fit.
    pub rankers: Vec<Ranker>,
}

/// Why a learned file cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LearningError {
    /// The framing or the payload is broken.
    #[error("learned file: {0}")]
    Format(#[from] BundleError),
    /// The payload decoded, but its parts disagree or exceed a limit.
    #[error("learned file is inconsistent: {0}. Most likely it was made by another program or damaged before its checksum was written: learn again with `paragraf learn`")]
    Inconsistent(String),
    /// Learned for another law than the one searched.
    #[error("the learned file was learned for {found}, but the law searched is {expected}. Learn again with `paragraf learn --bundles` on this folder")]
    OtherLaw {
        /// The file's law.
        found: String,
        /// The law searched.
        expected: String,
    },
}

impl paragraf_format::fault::Blame for LearningError {
    fn fault(&self) -> paragraf_format::fault::Fault {
        paragraf_format::fault::Fault::Input
    }
}

/// What [`LearnedFile::resolve`] could not match, to be named as warnings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolveWarnings {
    /// Designations no longer among the law's active sections (votes for them are dropped).
    pub missing_sections: Vec<String>,
    /// The file was learned against another build of the law.
    pub other_build: Option<String>,
}

/// First 8 bytes of the SHA-256 of a question's normalised text (whitespace collapsed, lowercase).
pub fn question_hash(text: &str) -> u64 {
    use sha2::Digest;
    let normal: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    let digest = sha2::Sha256::digest(normal.join(" ").as_bytes());
    u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
}

impl LearnedFile {
    /// The framed bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        KIND.encode(self)
    }

    /// Checks framing, checksum, limits and every index.
    pub fn from_bytes(bytes: &[u8]) -> Result<LearnedFile, LearningError> {
        let file: LearnedFile = KIND.decode(bytes)?;
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<(), LearningError> {
        let bad = |what: String| Err(LearningError::Inconsistent(what));
        for (what, n, max) in [
            ("precedents", self.precedents.len(), MAX_PRECEDENTS),
            ("terms", self.terms.len(), MAX_TERMS),
            ("sections", self.sections.len(), MAX_SECTIONS),
        ] {
            if n > max {
                return bad(format!("{n} {what}, more than the {max} allowed"));
            }
        }
        for (i, p) in self.precedents.iter().enumerate() {
            if p.terms.len() > MAX_PER_PRECEDENT || p.gold.len() > MAX_PER_PRECEDENT {
                return bad(format!("precedent {i} is larger than allowed"));
            }
            if p.terms.iter().any(|&(t, _)| t as usize >= self.terms.len()) {
                return bad(format!("precedent {i} names a term past the vocabulary"));
            }
            if p.gold.is_empty() || p.gold.iter().any(|&s| s as usize >= self.sections.len()) {
                return bad(format!(
                    "precedent {i} has no gold section or one past the list"
                ));
            }
        }
        for v in &self.vectors {
            if v.vectors.len() != self.precedents.len() {
                return bad(format!(
                    "{} vectors of {} for {} precedents",
                    v.vectors.len(),
                    v.model,
                    self.precedents.len()
                ));
            }
            if !v.familiarity.valid() {
                return bad(format!(
                    "the familiarity of the {} vectors is not finite or upside down",
                    v.model
                ));
            }
        }
        if let Some(r) = self
            .rankers
            .iter()
            .find(|r| !r.weights.valid() || r.tail.is_some_and(|t| !t.valid()))
        {
            return bad(format!(
                "the {} ranker has a negative or non-finite weight",
                r.mode
            ));
        }
        Ok(())
    }

    /// Matches the file against the law searched: sections by designation, the vocabulary for lookups.
    pub fn resolve(self, law: &Law) -> Result<(Learning, ResolveWarnings), LearningError> {
        if self.law != law.abbreviation {
            return Err(LearningError::OtherLaw {
                found: self.law,
                expected: law.abbreviation.clone(),
            });
        }
        let mut warnings = ResolveWarnings {
            other_build: (self.law_build_date != law.build_date).then(|| {
                format!(
                    "learned against {} built {}, searching the build of {}: sections matched by designation",
                    self.law, self.law_build_date, law.build_date
                )
            }),
            ..ResolveWarnings::default()
        };
        let lookup = law.section_lookup();
        let section_of: Vec<Option<u32>> = self
            .sections
            .iter()
            .map(|d| {
                let found = lookup
                    .find(d)
                    .filter(|&i| !law.sections[i].repealed)
                    .map(|i| i as u32);
                if found.is_none() {
                    warnings.missing_sections.push(d.clone());
                }
                found
            })
            .collect();
        let gold: Vec<Vec<u32>> = self
            .precedents
            .iter()
            .map(|p| {
                p.gold
                    .iter()
                    .filter_map(|&s| section_of[s as usize])
                    .collect()
            })
            .collect();
        let mut prior = vec![0u32; law.sections.len()];
        let mut gold_of: Vec<Vec<u32>> = vec![Vec::new(); law.sections.len()];
        for (p, g) in gold.iter().enumerate() {
            for &s in g {
                prior[s as usize] += 1;
                gold_of[s as usize].push(p as u32);
            }
        }
        let active: Vec<bool> = law.sections.iter().map(|s| !s.repealed).collect();
        let mut links: Vec<Vec<u32>> = vec![Vec::new(); law.sections.len()];
        for (from, section) in law.sections.iter().enumerate() {
            for target in section.references.iter().flat_map(|r| &r.targets) {
                if let paragraf_law::RefTarget::Section { section: to, .. } = *target {
                    let to = to as usize;
                    if to != from && to < links.len() && active[to] && active[from] {
                        links[from].push(to as u32);
                        links[to].push(from as u32);
                    }
                }
            }
        }
        for l in &mut links {
            l.sort_unstable();
            l.dedup();
        }
        let unit_of: Vec<Option<u32>> = law.sections.iter().map(|s| s.structure).collect();
        let mut unit_members: Vec<Vec<u32>> = vec![Vec::new(); law.structure.len()];
        for (s, unit) in unit_of.iter().enumerate() {
            if let Some(members) = unit.and_then(|u| unit_members.get_mut(u as usize)) {
                if active[s] {
                    members.push(s as u32);
                }
            }
        }
        let lexical = QuestionIndex::new(self.terms.len(), &self.precedents);
        let term_ids = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Ok((
            Learning {
                provenance: self.provenance,
                prior,
                gold,
                gold_of,
                active,
                links,
                unit_of,
                unit_members,
                term_ids,
                lexical,
                vectors: self.vectors,
                rankers: self.rankers,
                hashes: self.precedents.iter().map(|p| p.hash).collect(),
            },
            warnings,
        ))
    }
}

/// BM25 between a query and the precedents (k1 1.2, b 0.75), over their stored terms.
#[derive(Clone, Debug)]
pub(crate) struct QuestionIndex {
    /// Per term: (precedent, count).
    postings: Vec<Vec<(u32, u16)>>,
    lengths: Vec<f32>,
    average: f32,
}

impl QuestionIndex {
    pub(crate) fn new(terms: usize, precedents: &[Precedent]) -> Self {
        let mut postings = vec![Vec::new(); terms];
        let mut lengths = Vec::with_capacity(precedents.len());
        for (i, p) in precedents.iter().enumerate() {
            for &(t, n) in &p.terms {
                postings[t as usize].push((i as u32, n));
            }
            lengths.push(p.terms.iter().map(|&(_, n)| f32::from(n)).sum::<f32>());
        }
        let average = lengths.iter().sum::<f32>() / lengths.len().max(1) as f32;
        QuestionIndex {
            postings,
            lengths,
            average: average.max(1.0),
        }
    }

    /// The `k` most similar precedents (score > 0), best first; `skip` leaves precedents out (a question
    /// scored against the others).
    pub(crate) fn similar(
        &self,
        query: &[u32],
        k: usize,
        skip: &dyn Fn(usize) -> bool,
    ) -> Vec<Hit> {
        let n = self.lengths.len() as f32;
        let mut scores = vec![0f32; self.lengths.len()];
        for &t in query {
            let list = &self.postings[t as usize];
            let df = list.iter().filter(|(p, _)| !skip(*p as usize)).count() as f32;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(p, tf) in list {
                let tf = f32::from(tf);
                let norm = 1.2 * (0.25 + 0.75 * self.lengths[p as usize] / self.average);
                scores[p as usize] += idf * tf * 2.2 / (tf + norm);
            }
        }
        top_hits(
            scores
                .into_iter()
                .enumerate()
                .filter(|&(i, s)| s > 0.0 && !skip(i)),
            k,
        )
    }
}

/// The best `k` of `(index, score)`, best first (ties: lower index).
fn top_hits(items: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<Hit> {
    let mut top = paragraf_index::TopK::new(k);
    for (i, score) in items {
        if score >= top.threshold() {
            top.push(Hit {
                index: i as u32,
                score,
            });
        }
    }
    top.into_sorted()
}

/// A learned file matched against the law searched: what [`crate::LawIndex::with_learning`] holds.
#[derive(Clone, Debug)]
pub struct Learning {
    /// Where it was learned from.
    pub provenance: Provenance,
    /// Per section of the law: how often it was gold.
    prior: Vec<u32>,
    /// Per precedent: its gold sections in the law (unknown ones dropped).
    gold: Vec<Vec<u32>>,
    /// Per section of the law: the precedents it is gold of.
    gold_of: Vec<Vec<u32>>,
    /// Per section of the law: whether it is in force.
    active: Vec<bool>,
    /// Per section of the law: the sections it cites or is cited by (in force, each once).
    links: Vec<Vec<u32>>,
    /// Per section of the law: its innermost structural unit (index into [`Law::structure`]).
    unit_of: Vec<Option<u32>>,
    /// Per structural unit: its sections in force.
    unit_members: Vec<Vec<u32>>,
    term_ids: HashMap<String, u32>,
    lexical: QuestionIndex,
    vectors: Vec<PrecedentVectors>,
    rankers: Vec<Ranker>,
    hashes: Vec<u64>,
}

/// What the first stages of a search found, the input of [`Learning::rerank`].
#[derive(Clone, Copy, Debug)]
pub struct FirstStage<'a> {
    /// BM25 sections, best first (empty in dense mode).
    pub lexical: &'a [Hit],
    /// Dense sections, best first (`None` without a query vector).
    pub dense: Option<&'a [Hit]>,
}

/// A reranked list and why its sections rose.
#[derive(Clone, Debug, PartialEq)]
pub struct Reranked {
    /// Sections with their learned scores, best first.
    pub ranking: Vec<Hit>,
    /// Per section in `ranking`: how many of the most similar past questions had it as gold.
    pub precedents: HashMap<u32, u32>,
}

/// The similar precedents of one query: what the votes are made of.
#[derive(Clone, Debug)]
pub struct Neighbours {
    /// Lexically similar precedents with weights in 0..1 (the best 1).
    pub lexical: Vec<(u32, f32)>,
    /// Densely similar precedents with weights in 0..1.
    pub dense: Vec<(u32, f32)>,
    /// The share of the learned signals the query gets ([`Familiarity::confidence`]; 1 without a vector).
    pub confidence: f32,
}

impl Default for Neighbours {
    fn default() -> Self {
        Neighbours {
            lexical: Vec::new(),
            dense: Vec::new(),
            confidence: 1.0,
        }
    }
}

/// One candidate section's features (before weighting).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Features {
    /// The section.
    pub section: u32,
    /// `(k + 1) / (k + rank)` in the BM25 list (0 when absent), k = 60: 1 for the first.
    pub lexical: f32,
    /// The same for the dense list.
    pub dense: f32,
    /// How often it was gold (the prior's raw count).
    pub count: u32,
    /// Share of the lexical neighbours' weight that votes for it.
    pub vote_lexical: f32,
    /// Share of the dense neighbours' weight that votes for it.
    pub vote_dense: f32,
    /// The share of the learned signals (prior and votes) the query gets ([`Neighbours::confidence`]).
    pub confidence: f32,
    /// Tail only ([`Learning::add_tail_features`]): per section of the first [`HEAD`], the share of its
    /// precedents that also have this one as gold, weighted by `1 / (1 + rank)` of that section, summed and
    /// scaled to 0..1.
    pub cogold: f32,
    /// Tail only: 1 next to a section of the first [`HEAD`] in the law, else 0.
    pub adjacent: f32,
    /// Tail only: 1 when it cites or is cited by one of the first [`HEAD`], else 0.
    pub linked: f32,
    /// Tail only: the share of the first [`HEAD`] in its innermost structural unit (a title of the law, such as
    /// the BGB's "Mietverhältnisse über Wohnraum").
    pub unit: f32,
    /// How many of the similar precedents (lexical and dense, each list counted) vote for it, relative to the
    /// section most voted for: breadth, where the votes weigh by similarity.
    pub voters: f32,
}

impl Features {
    /// A candidate with no signal yet, whose query gets `confidence` of the learned signals.
    fn blank(section: u32, confidence: f32) -> Features {
        Features {
            section,
            lexical: 0.0,
            dense: 0.0,
            count: 0,
            vote_lexical: 0.0,
            vote_dense: 0.0,
            confidence,
            cogold: 0.0,
            adjacent: 0.0,
            linked: 0.0,
            voters: 0.0,
            unit: 0.0,
        }
    }

    /// The learned score; `max_count` is the largest prior count (the prior is scaled to 0..1 by it).
    pub fn score(&self, w: &Weights, max_count: u32) -> f32 {
        let prior = if max_count == 0 {
            0.0
        } else {
            (self.count as f32 / w.smoothing).ln_1p() / (max_count as f32 / w.smoothing).ln_1p()
        };
        let learned = w.prior * prior
            + w.vote_lexical * self.vote_lexical
            + w.vote_dense * self.vote_dense
            + w.cogold * self.cogold
            + w.voters * self.voters;
        w.lexical * self.lexical
            + w.dense * self.dense
            + w.adjacent * self.adjacent
            + w.linked * self.linked
            + w.unit * self.unit
            + self.confidence * learned
    }
}

impl Learning {
    /// Questions learned from.
    pub fn questions(&self) -> usize {
        self.gold.len()
    }

    /// Whether a question (by [`question_hash`]) is among the precedents.
    pub fn knows(&self, hash: u64) -> bool {
        self.hashes.contains(&hash)
    }

    /// The ranker for a run: the one fit on this strategy and mode, else one of the same mode (a strategy the
    /// file has no ranker for), else none.
    pub fn ranker(&self, strategy: Option<&str>, mode: Mode) -> Option<&Ranker> {
        let strategy = strategy.filter(|_| mode != Mode::Bm25);
        self.rankers
            .iter()
            .find(|r| r.mode == mode && r.strategy.as_deref() == strategy)
            .or_else(|| self.rankers.iter().find(|r| r.mode == mode))
    }

    /// The query's analysed terms as precedent term ids (unknown terms dropped, repeats kept once).
    pub fn term_ids(&self, terms: &[String]) -> Vec<u32> {
        let mut ids: Vec<u32> = terms
            .iter()
            .filter_map(|t| self.term_ids.get(t).copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The query's most similar precedents; `skip` leaves some out (training: the question itself, or a fold).
    pub fn neighbours(
        &self,
        terms: &[u32],
        vector: Option<(&str, &[f32])>,
        skip: &dyn Fn(usize) -> bool,
    ) -> Neighbours {
        let lexical = self.lexical.similar(terms, PRECEDENTS, skip);
        let best = lexical.first().map_or(1.0, |h| h.score);
        let lexical = lexical.iter().map(|h| (h.index, h.score / best)).collect();
        let mut confidence = 1.0;
        let dense = vector
            .and_then(|(model, query)| {
                let v = self.vectors.iter().find(|v| v.model == model)?;
                (v.vectors.dim() == query.len()).then_some((v, query))
            })
            .map(|(v, query)| {
                let hits = top_hits(
                    (0..v.vectors.len())
                        .filter(|&i| !skip(i))
                        .map(|i| (i, v.vectors.dot_f32(query, i))),
                    PRECEDENTS,
                );
                // Cosines of one model crowd together: weights from 1 (the best) to 0 (the last kept).
                let (top, last) = (
                    hits.first().map_or(0.0, |h| h.score),
                    hits.last().map_or(0.0, |h| h.score),
                );
                confidence = v.familiarity.confidence(top);
                let span = (top - last).max(1e-6);
                hits.iter()
                    .map(|h| (h.index, (h.score - last) / span))
                    .collect()
            })
            .unwrap_or_default();
        Neighbours {
            lexical,
            dense,
            confidence,
        }
    }

    /// The largest prior count.
    pub fn max_count(&self) -> u32 {
        self.prior.iter().copied().max().unwrap_or(0)
    }

    /// Every candidate's features: the first stages' sections, those the neighbours vote for, and the
    /// [`PRIOR_CANDIDATES`] most asked-about sections. `own` is a training question's own gold, taken out of the
    /// prior (leave one out); empty at search time.
    pub fn features(
        &self,
        first: FirstStage,
        neighbours: &Neighbours,
        own: &[u32],
    ) -> Vec<Features> {
        let mut at: HashMap<u32, usize> = HashMap::new();
        let mut out: Vec<Features> = Vec::new();
        let mut slot = |section: u32, out: &mut Vec<Features>| -> usize {
            *at.entry(section).or_insert_with(|| {
                out.push(Features::blank(section, neighbours.confidence));
                out.len() - 1
            })
        };
        let reciprocal = |rank: usize| (DEFAULT_RRF_K + 1.0) / (DEFAULT_RRF_K + 1.0 + rank as f32);
        for (rank, h) in first.lexical.iter().enumerate() {
            let i = slot(h.index, &mut out);
            out[i].lexical = reciprocal(rank);
        }
        for (rank, h) in first.dense.unwrap_or_default().iter().enumerate() {
            let i = slot(h.index, &mut out);
            out[i].dense = reciprocal(rank);
        }
        for (list, dense) in [(&neighbours.lexical, false), (&neighbours.dense, true)] {
            let total: f32 = list.iter().map(|(_, w)| w).sum();
            if total <= 0.0 {
                continue;
            }
            for &(p, w) in list {
                for &s in &self.gold[p as usize] {
                    let i = slot(s, &mut out);
                    let share = w / total;
                    out[i].voters += 1.0;
                    if dense {
                        out[i].vote_dense += share;
                    } else {
                        out[i].vote_lexical += share;
                    }
                }
            }
        }
        for s in self.most_asked() {
            slot(s, &mut out);
        }
        let most_voters = out.iter().map(|f| f.voters).fold(0.0f32, f32::max);
        if most_voters > 0.0 {
            for f in &mut out {
                f.voters /= most_voters;
            }
        }
        for f in &mut out {
            let own = own.iter().filter(|&&s| s == f.section).count() as u32;
            f.count = self.prior[f.section as usize].saturating_sub(own);
        }
        out
    }

    /// Adds the tail features about the first sections `head` to `features`: sections asked about together with
    /// them, next to them and linked to them by citation join as candidates. `skip` leaves precedents out of
    /// the co-gold counts and `own` out of the prior, as in [`Learning::features`].
    pub fn add_tail_features(
        &self,
        features: &mut Vec<Features>,
        head: &[u32],
        skip: &dyn Fn(usize) -> bool,
        own: &[u32],
    ) {
        let confidence = features.first().map_or(1.0, |f| f.confidence);
        let mut cogold: HashMap<u32, f32> = HashMap::new();
        let mut adjacent: Vec<u32> = Vec::new();
        let mut linked: Vec<u32> = Vec::new();
        let mut unit: HashMap<u32, f32> = HashMap::new();
        for (rank, &t) in head.iter().enumerate() {
            let t = t as usize;
            // The first of the head speaks for the question more surely than the tenth.
            let by_rank = 1.0 / (1.0 + rank as f32);
            for &s in self
                .unit_of
                .get(t)
                .copied()
                .flatten()
                .and_then(|u| self.unit_members.get(u as usize))
                .into_iter()
                .flatten()
                .filter(|&&s| s as usize != t)
            {
                *unit.entry(s).or_default() += 1.0 / head.len() as f32;
            }
            let asked: Vec<u32> = self
                .gold_of
                .get(t)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&p| !skip(p as usize))
                .collect();
            for &p in &asked {
                for &s in self.gold[p as usize].iter().filter(|&&s| s as usize != t) {
                    *cogold.entry(s).or_default() += by_rank / asked.len() as f32;
                }
            }
            adjacent.extend(
                [t.checked_sub(1), Some(t + 1)]
                    .into_iter()
                    .flatten()
                    .filter(|&s| self.active.get(s) == Some(&true))
                    .map(|s| s as u32),
            );
            linked.extend(self.links.get(t).into_iter().flatten().copied());
        }
        let mut at: HashMap<u32, usize> = features
            .iter()
            .enumerate()
            .map(|(i, f)| (f.section, i))
            .collect();
        let mut slot = |section: u32, features: &mut Vec<Features>| -> usize {
            *at.entry(section).or_insert_with(|| {
                let mut f = Features::blank(section, confidence);
                let own = own.iter().filter(|&&s| s == section).count() as u32;
                f.count = self.prior[section as usize].saturating_sub(own);
                features.push(f);
                features.len() - 1
            })
        };
        let most = cogold.values().copied().fold(0.0f32, f32::max);
        for (&s, &c) in &cogold {
            let i = slot(s, features);
            features[i].cogold = c / most;
        }
        for s in adjacent {
            let i = slot(s, features);
            features[i].adjacent = 1.0;
        }
        for s in linked {
            let i = slot(s, features);
            features[i].linked = 1.0;
        }
        for (&s, &share) in &unit {
            let i = slot(s, features);
            features[i].unit = share;
        }
    }

    /// The learned ranking of `features`, `k` deep: the first [`HEAD`] by `weights`, the rest by `tail` with the
    /// tail features about those first ones ([`Learning::add_tail_features`]; `skip` and `own` as there). Below
    /// the head, scores only order: they are scaled under the head's last.
    pub fn ranked(
        &self,
        mut features: Vec<Features>,
        weights: &Weights,
        tail: Option<&Weights>,
        skip: &dyn Fn(usize) -> bool,
        own: &[u32],
        k: usize,
    ) -> Vec<Hit> {
        let max_count = self.max_count();
        let Some(tail) = tail.filter(|_| k > HEAD) else {
            return fit::ranked(&features, weights, max_count, k);
        };
        let head = fit::ranked(&features, weights, max_count, HEAD);
        let sections: Vec<u32> = head.iter().map(|h| h.index).collect();
        self.add_tail_features(&mut features, &sections, skip, own);
        let rest = fit::ranked_except(&features, tail, max_count, &sections, k - head.len());
        let floor = head.last().map_or(1.0, |h| h.score);
        let n = rest.len() as f32;
        head.into_iter()
            .chain(rest.into_iter().enumerate().map(|(i, h)| Hit {
                index: h.index,
                score: floor * (n - i as f32) / (n + 1.0),
            }))
            .collect()
    }

    /// The [`PRIOR_CANDIDATES`] sections most often gold.
    fn most_asked(&self) -> Vec<u32> {
        top_hits(
            self.prior
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| (i, c as f32)),
            PRIOR_CANDIDATES,
        )
        .into_iter()
        .map(|h| h.index)
        .collect()
    }

    /// Per section that `shown` accepts: how many of `neighbours` (each counted once) had it as gold — "12
    /// ähnliche Fragen führten zu § 573c".
    pub fn precedent_counts(
        &self,
        neighbours: &Neighbours,
        shown: &dyn Fn(u32) -> bool,
    ) -> HashMap<u32, u32> {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for &(p, _) in neighbours.lexical.iter().chain(&neighbours.dense) {
            if seen.insert(p) {
                for &s in self.gold[p as usize].iter().filter(|&&s| shown(s)) {
                    *counts.entry(s).or_insert(0) += 1;
                }
            }
        }
        counts
    }

    /// The learned ranking of one search: `None` when the file has no ranker for the mode.
    pub fn rerank(
        &self,
        strategy: Option<&str>,
        mode: Mode,
        query_terms: &[String],
        vector: Option<(&str, &[f32])>,
        first: FirstStage,
        k: usize,
    ) -> Option<Reranked> {
        let ranker = self.ranker(strategy, mode)?;
        let neighbours = self.neighbours(&self.term_ids(query_terms), vector, &|_| false);
        let features = self.features(first, &neighbours, &[]);
        let ranking = self.ranked(
            features,
            &ranker.weights,
            ranker.tail.as_ref(),
            &|_| false,
            &[],
            k,
        );
        let precedents =
            self.precedent_counts(&neighbours, &|s| ranking.iter().any(|h| h.index == s));
        Some(Reranked {
            ranking,
            precedents,
        })
    }
}

#[cfg(test)]
mod tests;
