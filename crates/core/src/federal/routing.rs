//! Which law? Law routing for the ranking across laws.
//!
//! A lay question searched over all federal law meets 100,000 sections, and special ordinances that happen to
//! share its words (the `WoVermRG` for a deposit, `Offshore-ArbZV` for working hours) outrank the code that
//! governs the case. A lawyer decides the law first. Routing does the same with signals that need no labelled
//! question, then re-ranks the first stage's sections with them:
//! - **the law's text**: the question searched over each law's abbreviation, title and headings
//!   ([`LawFinder`]) — `Urlaub` meets the BUrlG, `Miete` the BGB's `Mietverhältnisse über Wohnraum`;
//! - **agreement**: how much of the first stage's ranking falls into the law (a law with several strong
//!   sections is more likely the one than a law with one lucky hit);
//! - **referred**: how much of it falls into laws that cite or name the law: an ordinance that shares the
//!   question's words (`Offshore-ArbZV`) points to the statute it rests on (the ArbZG), a special act on land
//!   (`SachenRBerG`) to the BGB;
//! - **coverage**: how much of the question (its terms weighted by idf) occurs anywhere in the law: a law
//!   that shares one rare word with a shoplifting question covers little of it, the StGB much;
//! - **the law the question names**: `KSchG`, or `Kündigungsschutz` for the `Kündigungsschutzgesetz`
//!   ([`crate::finder::LawNames`]);
//! - **the archive's structure**: how many other laws cite or name the law (the StGB, ZPO and EStG are named
//!   by hundreds; an exemption ordinance by none: what the lay question needs is mostly law that other law
//!   relies on), its size, and its kind (a code, a statute, an ordinance, an announcement, an amending or
//!   transitional act, a treaty);
//! - **the section itself**: its first-stage score relative to the best candidate's and to its law's best
//!   (scores, not ranks: an exact match far ahead of the rest stays ahead).
//!
//! The score is linear in these features; its weights were chosen by coordinate ascent on the tuning half of
//! the project's own cross-law questions (`paragraf eval --among … --fit-routing`, docs/all-laws.md, "Which law?").

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::finder::{cited_law_index, LawFinder, LawNames};
use crate::routing_weights::RoutingWeights;
use paragraf_engine::SearchOptions;
use paragraf_index::bm25::Bm25Index;
use paragraf_index::Hit;
use paragraf_law::{Law, RefTarget};
use paragraf_stats::rng::SplitMix64;
use paragraf_stats::tune::{coordinate_ascent, Coordinate};

/// How deep the first stage's fused ranking goes before routing re-ranks it: deep enough that the right
/// law's best sections are in it when other laws crowd its top.
pub const ROUTING_DEPTH: usize = 1000;

/// `options` for the first stage that routing re-ranks: [`ROUTING_DEPTH`] sections, fused at least as deep.
pub fn first_stage_options(options: &SearchOptions) -> SearchOptions {
    SearchOptions {
        section_k: ROUTING_DEPTH,
        fusion_depth: options.fusion_depth.max(ROUTING_DEPTH),
        ..*options
    }
}

/// Laws of the law-text ranking that count (the rest score 0 on it).
pub const LAW_TEXT_DEPTH: usize = 100;

/// Reciprocal-rank constant of the law features (`(k + 1) / (k + 1 + rank)`: 1 for the first): sharp, since
/// which law is first matters, not whether it is 50th or 60th.
const LAW_K: f32 = 2.0;

/// First-stage ranks that count towards a law's agreement.
const AGREEMENT_DEPTH: usize = 100;

/// What kind of act a law is, from its title and abbreviation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum LawKind {
    /// A code: `Gesetzbuch`, the SGB books, an `…ordnung` statute (ZPO, AO, StVO).
    Code,
    /// A statute (`Gesetz`).
    Statute,
    /// An ordinance (`Verordnung`).
    Ordinance,
    /// An announcement (`Bekanntmachung`).
    Announcement,
    /// An amending, introducing or transitional act.
    Amending,
    /// A treaty or the act that approves one.
    Treaty,
    /// Anything else (agreements, rules, decrees).
    Other,
}

impl LawKind {
    /// Every kind, in the order of [`RoutingWeights::kind`](crate::routing_weights::RoutingWeights::kind).
    pub const ALL: [LawKind; 7] = [
        LawKind::Code,
        LawKind::Statute,
        LawKind::Ordinance,
        LawKind::Announcement,
        LawKind::Amending,
        LawKind::Treaty,
        LawKind::Other,
    ];

    /// The kind of the law `abbreviation` titled `title`.
    pub fn of(abbreviation: &str, title: &str) -> LawKind {
        let t = title.to_lowercase();
        let a = abbreviation;
        let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
        if has(&[
            "zur änderung",
            "änderungsgesetz",
            "änderungsverordnung",
            "überleitung",
            "übergangs",
            "zur einführung",
            "einführungsgesetz",
        ]) || a.contains("ÄndG")
            || a.contains("ÄndV")
        {
            LawKind::Amending
        } else if t.starts_with("bekanntmachung") || a.contains("Bek") {
            LawKind::Announcement
        } else if has(&[
            "abkommen",
            "übereinkommen",
            "protokoll",
            "vertrag zwischen",
            "vertrag über",
        ]) {
            LawKind::Treaty
        } else if t.contains("gesetzbuch")
            || a.starts_with("SGB ")
            || (t.ends_with("ordnung") && !t.ends_with("verordnung"))
        {
            LawKind::Code
        } else if t.contains("verordnung") {
            LawKind::Ordinance
        } else if t.contains("gesetz") {
            LawKind::Statute
        } else {
            LawKind::Other
        }
    }

    /// Its index in [`LawKind::ALL`].
    pub fn index(self) -> usize {
        LawKind::ALL
            .iter()
            .position(|k| *k == self)
            .expect("listed")
    }

    /// A short German label for reports and the app.
    pub fn label(self) -> &'static str {
        match self {
            LawKind::Code => "Gesetzbuch",
            LawKind::Statute => "Gesetz",
            LawKind::Ordinance => "Verordnung",
            LawKind::Announcement => "Bekanntmachung",
            LawKind::Amending => "Änderungs-/Übergangsrecht",
            LawKind::Treaty => "Vertrag",
            LawKind::Other => "sonstiges",
        }
    }
}

/// What the archive says about one law, without any labelled question.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawSignals {
    /// Its kind.
    pub kind: LawKind,
    /// How many other laws cite it ([`cross_law_citations`]) or name it ([`naming_laws`]).
    pub cited_by: u32,
    /// Its active sections.
    pub sections: u32,
}

/// What the archive says about its laws without any labelled question: each law's signals, and the laws each
/// cites or names (indices, sorted, each once).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArchiveSignals {
    /// Per law.
    pub laws: Vec<LawSignals>,
    /// Per law, the other laws it cites or names.
    pub refers: Vec<Vec<u32>>,
}

/// The signals of every law in `laws`: the laws' citations of each other resolved by name, as
/// [`crate::finder::cited_law`] resolves them, and the laws they name ([`naming_laws`]).
pub fn law_signals(laws: &[&Law]) -> ArchiveSignals {
    let mut refers = vec![Vec::new(); laws.len()];
    for (to, from) in cross_law_citations(laws)
        .into_iter()
        .map(|c| (c.cited_law, c.law))
        .chain(naming_laws(laws))
    {
        refers[from].push(to as u32);
    }
    ArchiveSignals::of(
        laws.iter().map(|law| {
            (
                LawKind::of(&law.abbreviation, &law.title),
                law.active_sections().count() as u32,
            )
        }),
        refers,
    )
}

impl ArchiveSignals {
    /// The signals of laws of `kinds_and_sizes` that cite or name the laws `refers` says (in any order, repeats
    /// and a law's own index allowed, both dropped): `cited_by` is how many other laws refer to each.
    fn of(
        kinds_and_sizes: impl Iterator<Item = (LawKind, u32)>,
        mut refers: Vec<Vec<u32>>,
    ) -> Self {
        let mut cited_by = vec![0u32; refers.len()];
        for (law, r) in refers.iter_mut().enumerate() {
            r.retain(|&to| to as usize != law);
            r.sort_unstable();
            r.dedup();
            for &to in r.iter() {
                cited_by[to as usize] += 1;
            }
        }
        let laws = kinds_and_sizes
            .zip(cited_by)
            .map(|((kind, sections), cited_by)| LawSignals {
                kind,
                cited_by,
                sections,
            })
            .collect();
        ArchiveSignals { laws, refers }
    }
}

/// Words that end a law's name (`Arbeitszeitgesetz`, `Straßenverkehrs-Ordnung`, `Einigungsvertrag`).
const NAME_ENDINGS: [&str; 6] = [
    "gesetz",
    "gesetzbuch",
    "ordnung",
    "statut",
    "vertrag",
    "abkommen",
];

/// The words that name `law` in the text of another law: its abbreviation (`ArbZG`, and `StVO` for
/// `StVO 2013`), its short title (`Entgeltfortzahlungsgesetz`) and its title when either is one word or the
/// title ends in one in parentheses. Names with a space (`SGB 5`, `Bürgerliches Gesetzbuch`) are left out: text
/// is matched word by word.
fn naming_words(law: &Law) -> Vec<&str> {
    let abbreviation = law.abbreviation.trim();
    let undated = abbreviation
        .rsplit_once(' ')
        .filter(|(_, year)| year.len() == 4 && year.chars().all(|c| c.is_ascii_digit()))
        .map(|(name, _)| name.trim());
    let is_name = |w: &str| {
        let lower = w.to_lowercase();
        NAME_ENDINGS.iter().any(|e| lower.ends_with(e))
    };
    let parenthesised = law
        .title
        .split('(')
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(inner, _)| inner.trim()));
    [abbreviation]
        .into_iter()
        .chain(undated)
        .filter(|a| a.chars().count() >= 3 && a.chars().any(char::is_alphabetic))
        .chain(
            [law.title.trim(), law.short_title.trim()]
                .into_iter()
                .chain(parenthesised)
                .filter(|t| is_name(t)),
        )
        .filter(|w| !w.contains(char::is_whitespace))
        .collect()
}

/// Which laws name which in their text (headings, text and footnotes): `(named law, naming law)` pairs, each
/// once, a law naming itself left out. A law is named by a word that names it and no other law (`naming_words`),
/// as written or in the genitive (`des Arbeitszeitgesetzes`, `des BGBs`). Most of what one law owes another is
/// said this way, in words (`nach § 3 des Entgeltfortzahlungsgesetzes`), which citations resolved from
/// references miss.
pub fn naming_laws(laws: &[&Law]) -> Vec<(usize, usize)> {
    // A word → the one law it names (`None`: it names several).
    let mut owner: HashMap<&str, Option<usize>> = HashMap::new();
    for (i, law) in laws.iter().enumerate() {
        for word in naming_words(law) {
            owner
                .entry(word)
                .and_modify(|o| {
                    if *o != Some(i) {
                        *o = None
                    }
                })
                .or_insert(Some(i));
        }
    }
    let mut pairs = Vec::new();
    for (naming, law) in laws.iter().enumerate() {
        let mut named: HashSet<usize> = HashSet::new();
        let texts = law.sections.iter().flat_map(|s| {
            [s.title.as_str(), s.text.as_str()]
                .into_iter()
                .chain(s.footnotes.iter().map(String::as_str))
        });
        for text in texts {
            let words = text
                .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                .map(|w| w.trim_start_matches(['-', '_']))
                .filter(|w| !w.is_empty());
            for word in words {
                let genitive = [word.strip_suffix('s'), word.strip_suffix("es")];
                for form in std::iter::once(word).chain(genitive.into_iter().flatten()) {
                    if let Some(&Some(l)) = owner.get(form) {
                        named.insert(l);
                    }
                }
            }
        }
        named.remove(&naming);
        let mut named: Vec<usize> = named.into_iter().collect();
        named.sort_unstable();
        pairs.extend(named.into_iter().map(|l| (l, naming)));
    }
    pairs
}

/// One law's citation of another law's provision ([`cross_law_citations`]); laws and sections are indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrossCitation<'a> {
    /// The citing law.
    pub law: usize,
    /// Its citing section.
    pub section: usize,
    /// The cited law.
    pub cited_law: usize,
    /// The cited provision as printed (`§ 573`).
    pub designation: &'a str,
}

/// Every citation in `laws` of a provision of another law among them, in law and section order; the law a
/// citation names is resolved as [`crate::finder::cited_law`] resolves it (`SGB V` is `SGB 5`).
pub fn cross_law_citations<'a>(laws: &[&'a Law]) -> Vec<CrossCitation<'a>> {
    let mut resolved: HashMap<&str, Option<usize>> = HashMap::new();
    let mut out = Vec::new();
    for (from, law) in laws.iter().enumerate() {
        for (section, s) in law.sections.iter().enumerate() {
            for target in s.references.iter().flat_map(|r| &r.targets) {
                let RefTarget::External {
                    law: named,
                    designation,
                } = target
                else {
                    continue;
                };
                let to = *resolved.entry(named.as_str()).or_insert_with(|| {
                    cited_law_index(laws, |l| (&l.abbreviation, &l.title), &book_number(named))
                });
                if let Some(cited_law) = to.filter(|&to| to != from) {
                    out.push(CrossCitation {
                        law: from,
                        section,
                        cited_law,
                        designation,
                    });
                }
            }
        }
    }
    out
}

/// Which sections of other laws cite each section: `(cited law, cited section)` → the citing `(law, section)`s,
/// each once, in law and section order. A citation of a designation the cited law lacks is left out.
pub fn cited_by_other_laws(laws: &[&Law]) -> HashMap<(usize, usize), Vec<(usize, usize)>> {
    let mut lookups: HashMap<usize, paragraf_law::SectionLookup<'_>> = HashMap::new();
    let mut out: HashMap<(usize, usize), Vec<(usize, usize)>> = HashMap::new();
    for c in cross_law_citations(laws) {
        let lookup = lookups
            .entry(c.cited_law)
            .or_insert_with(|| laws[c.cited_law].section_lookup());
        let Some(cited) = lookup.find(c.designation) else {
            continue;
        };
        let citing = out.entry((c.cited_law, cited)).or_default();
        if citing.last() != Some(&(c.law, c.section)) {
            citing.push((c.law, c.section));
        }
    }
    out
}

/// `SGB V` as the archive names it (`SGB 5`): statutes cite the social code's books in Roman numerals.
fn book_number(named: &str) -> String {
    let Some(roman) = named.trim().strip_prefix("SGB ") else {
        return named.to_string();
    };
    let value = |c: char| match c {
        'I' => Some(1),
        'V' => Some(5),
        'X' => Some(10),
        _ => None,
    };
    let digits: Option<Vec<u32>> = roman.chars().map(value).collect();
    match digits {
        Some(d) if !d.is_empty() && d.len() <= 4 => {
            let n = d.iter().enumerate().fold(0i64, |n, (i, &v)| {
                if d.get(i + 1).is_some_and(|&next| next > v) {
                    n - v as i64
                } else {
                    n + v as i64
                }
            });
            format!("SGB {n}")
        }
        _ => named.to_string(),
    }
}

/// Each law's mean section vector, unit length (a law without vectors has none): the law as one point in the
/// model's space, so a question near its topic finds it though it shares no word with it (`Koks` and the
/// BtMG). Made from the section vectors the index already holds, natively and in the browser alike.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LawVectors {
    dim: usize,
    /// Laws × `dim`, row-major; all zero for a law without vectors.
    means: Vec<f32>,
}

impl LawVectors {
    /// The laws' means from `sums` (laws × `dim`, row-major: each law's section vectors added up), made unit
    /// length.
    pub fn of_sums(dim: usize, mut sums: Vec<f32>) -> LawVectors {
        for mean in sums.chunks_mut(dim.max(1)) {
            let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                mean.iter_mut().for_each(|x| *x /= norm);
            }
        }
        LawVectors { dim, means: sums }
    }

    /// The laws closest to `vector` (the question in the rows' model and space), best first, [`LAW_TEXT_DEPTH`]
    /// deep; none when the dimensions differ.
    pub fn ranking(&self, vector: &[f32]) -> Vec<usize> {
        if vector.len() != self.dim || self.dim == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(usize, f32)> = self
            .means
            .chunks(self.dim)
            .enumerate()
            .filter(|(_, m)| m.iter().any(|&x| x != 0.0))
            .map(|(l, m)| (l, m.iter().zip(vector).map(|(a, b)| a * b).sum()))
            .collect();
        let depth = LAW_TEXT_DEPTH.min(scored.len());
        if depth == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(depth - 1, |a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(depth);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().map(|(l, _)| l).collect()
    }
}

/// One candidate section's routing features (before weighting), each 0..1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Features {
    /// The candidate (a document of the index across laws).
    pub doc: u32,
    /// Its law.
    pub law: u32,
    /// Its first-stage score relative to the best candidate's (BM25, cosine or fused score: how much better
    /// the first is matters, which ranks alone would hide).
    pub global: f32,
    /// Its first-stage score relative to its law's best candidate.
    pub within_law: f32,
    /// `(k + 1) / (k + 1 + rank)` of its law in the law-text ranking, k = 2 (0 beyond [`LAW_TEXT_DEPTH`]).
    pub law_text: f32,
    /// `(k + 1) / (k + 1 + rank)` of its law among the laws by the cosine of the question's vector with the law's
    /// mean section vector ([`LawVectors`]), k = 2 (0 beyond [`LAW_TEXT_DEPTH`], and without a vector).
    pub law_dense: f32,
    /// Its law's reciprocal-rank mass (k = 2) in the first stage's first 100, relative to the law with most.
    pub agreement: f32,
    /// The mass of the laws citing or naming its law, relative to the law with most.
    pub referred: f32,
    /// 1 when its law is the one the question names, else 0.
    pub named: f32,
    /// The share of the question's terms (weighted by idf) that occur in its law.
    pub coverage: f32,
    /// `ln(1 + cited_by)`, relative to the most cited law.
    pub cited_by: f32,
    /// `ln(1 + sections)`, relative to the largest law.
    pub size: f32,
    /// Its law's kind.
    pub kind: LawKind,
    /// The learned demand prior of the section (0..1; 0 when its law has nothing learned).
    pub prior: f32,
    /// Share of the lexically similar past questions' weight that votes for it.
    pub vote_lexical: f32,
    /// Share of the densely similar past questions' weight that votes for it.
    pub vote_dense: f32,
}

impl Features {
    /// The routed score.
    pub fn score(&self, w: &RoutingWeights) -> f32 {
        w.global * self.global
            + w.within_law * self.within_law
            + w.law_text * self.law_text
            + w.law_dense * self.law_dense
            + w.agreement * self.agreement
            + w.referred * self.referred
            + w.named * self.named
            + w.coverage * self.coverage
            + w.cited_by * self.cited_by
            + w.size * self.size
            + w.kind[self.kind.index()]
            + w.prior * self.prior
            + w.vote_lexical * self.vote_lexical
            + w.vote_dense * self.vote_dense
    }
}

fn reciprocal(k: f32, rank: usize) -> f32 {
    (k + 1.0) / (k + 1.0 + rank as f32)
}

/// One law of a catalogue ([`Router::of_catalogue`]).
#[derive(Clone, Debug, Default)]
pub struct CatalogueLaw<'a> {
    /// Its abbreviation.
    pub law: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its short title (empty: none).
    pub short_title: &'a str,
    /// Its active sections.
    pub sections: u32,
    /// The laws it cites or names ([`ArchiveSignals::refers`]), by abbreviation; one the catalogue lacks is left
    /// out.
    pub refers: Vec<&'a str>,
}

/// What routing asks of the laws for one question ([`Router::ask`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LawQuery {
    /// Laws by their text's match, best first.
    pub text_ranking: Vec<usize>,
    /// Laws by their mean vector's closeness to the question's, best first (empty without a vector); filled by
    /// the index that searches ([`LawVectors::ranking`]).
    pub dense_ranking: Vec<usize>,
    /// The law the question names.
    pub named: Option<usize>,
    /// Per law, the share of the question's terms (weighted by idf) that occur in it
    /// ([`paragraf_index::bm25::Bm25Index::coverage`]); filled by the index that searches (laws missing: 0).
    pub coverage: HashMap<u32, f32>,
}

/// The laws' signals and the law-text ranking: what routing needs besides the first stage.
pub struct Router {
    signals: Vec<LawSignals>,
    /// The law-text ranking (none in a router over a catalogue without the laws' text index).
    finder: Option<LawFinder>,
    /// The laws' names, for the law a question names.
    names: LawNames,
    /// Per law, the laws it cites or names.
    refers: Vec<Vec<u32>>,
    max_cited: f32,
    max_size: f32,
}

impl Router {
    /// A router over `laws` (indices as in the index across laws) with their `signals` ([`law_signals`]).
    pub fn new(laws: &[&Law], signals: ArchiveSignals) -> Router {
        assert_eq!(laws.len(), signals.laws.len(), "one signal per law");
        Router::with(
            signals,
            Some(LawFinder::of_laws(laws)),
            LawNames::new(laws.iter().map(|l| {
                (
                    l.abbreviation.as_str(),
                    l.title.as_str(),
                    l.short_title.as_str(),
                )
            })),
        )
    }

    /// A router over a catalogue of laws ([`CatalogueLaw`]s, as the manifest lists them) without their text:
    /// what the browser has before any law is loaded. Its law-text ranking searches `law_text`, the index of the
    /// laws' abbreviations, titles and topics that the index across laws carries ([`Router::law_text_index`]
    /// of a router over the laws themselves; indexing it takes 0.6 s natively and seconds in the page); without
    /// it, that feature is 0.
    pub fn of_catalogue<'a>(
        laws: impl IntoIterator<Item = CatalogueLaw<'a>>,
        law_text: Option<&Bm25Index>,
    ) -> Router {
        let laws: Vec<CatalogueLaw> = laws.into_iter().collect();
        let index: HashMap<&str, u32> = laws
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.law.is_empty())
            .map(|(i, l)| (l.law, i as u32))
            .collect();
        let refers = laws
            .iter()
            .map(|l| {
                l.refers
                    .iter()
                    .filter_map(|r| index.get(r).copied())
                    .collect()
            })
            .collect();
        Router::with(
            ArchiveSignals::of(
                laws.iter()
                    .map(|l| (LawKind::of(l.law, l.title), l.sections)),
                refers,
            ),
            law_text.map(|index| {
                LawFinder::with_index(
                    laws.iter().map(|l| (l.law, l.title, l.sections as usize)),
                    index.clone(),
                )
            }),
            LawNames::new(laws.iter().map(|l| (l.law, l.title, l.short_title))),
        )
    }

    /// The index its law-text ranking searches (one document per law: abbreviation, title, topics); a router
    /// over a catalogue without one has none.
    pub fn law_text_index(&self) -> Option<&Bm25Index> {
        self.finder.as_ref().map(LawFinder::index)
    }

    /// How many laws it routes among (indices as in the index across laws it was made for).
    pub fn laws(&self) -> usize {
        self.signals.len()
    }

    fn with(signals: ArchiveSignals, finder: Option<LawFinder>, names: LawNames) -> Router {
        let ArchiveSignals {
            laws: signals,
            refers,
        } = signals;
        let max_cited = signals.iter().map(|s| s.cited_by).max().unwrap_or(0) as f32;
        let max_size = signals.iter().map(|s| s.sections).max().unwrap_or(0) as f32;
        Router {
            signals,
            finder,
            names,
            refers,
            max_cited: max_cited.ln_1p(),
            max_size: max_size.ln_1p(),
        }
    }

    /// The best `k` of the first stage's candidates `first` (best first, [`ROUTING_DEPTH`] deep) for the question
    /// asked as `query`, routed by law with `weights`.
    pub fn route(
        &self,
        first: &[Hit],
        law_of: &dyn Fn(u32) -> u32,
        query: &LawQuery,
        weights: &RoutingWeights,
        k: usize,
    ) -> Vec<Hit> {
        routed(&self.features(first, law_of, query), weights, k)
    }

    /// What routing asks of the laws for `question`: the laws whose text best matches it, best first
    /// ([`LAW_TEXT_DEPTH`] deep), and the law it names.
    pub fn ask(&self, question: &str) -> LawQuery {
        LawQuery {
            text_ranking: self
                .finder
                .as_ref()
                .map_or_else(Vec::new, |f| f.find(question, LAW_TEXT_DEPTH)),
            named: self.names.named(question),
            dense_ranking: Vec::new(),
            coverage: HashMap::new(),
        }
    }

    /// The features of every candidate in `first` (documents with their scores, best first) whose laws
    /// `law_of` gives.
    pub fn features(
        &self,
        first: &[Hit],
        law_of: &dyn Fn(u32) -> u32,
        query: &LawQuery,
    ) -> Vec<Features> {
        let mut mass: HashMap<u32, f32> = HashMap::new();
        // Each law's best first-stage score: the first of its candidates.
        let mut best: HashMap<u32, f32> = HashMap::new();
        let top = first.first().map_or(0.0, |h| h.score);
        let ratio = |score: f32, of: f32| {
            if of > 0.0 {
                (score / of).clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        let mut features: Vec<Features> = first
            .iter()
            .enumerate()
            .map(|(rank, hit)| {
                let law = law_of(hit.index);
                if rank < AGREEMENT_DEPTH {
                    *mass.entry(law).or_default() += reciprocal(LAW_K, rank);
                }
                Features {
                    global: ratio(hit.score, top),
                    within_law: ratio(hit.score, *best.entry(law).or_insert(hit.score)),
                    ..self.law_features(hit.index, law, query)
                }
            })
            .collect();
        let most = mass.values().copied().fold(0.0f32, f32::max);
        if most > 0.0 {
            for f in &mut features {
                f.agreement = mass.get(&f.law).map_or(0.0, |m| m / most);
            }
        }
        let mut referred: HashMap<u32, f32> = HashMap::new();
        for (&law, &m) in &mass {
            for &to in self.refers.get(law as usize).into_iter().flatten() {
                *referred.entry(to).or_default() += m;
            }
        }
        let most_referred = referred.values().copied().fold(0.0f32, f32::max);
        if most_referred > 0.0 {
            for f in &mut features {
                f.referred = referred.get(&f.law).map_or(0.0, |m| m / most_referred);
            }
        }
        features
    }

    /// The features of document `doc` of `law` that come from its law alone (the first-stage, agreement and
    /// learned ones 0): what a candidate that joins without a first-stage score has.
    pub fn law_features(&self, doc: u32, law: u32, query: &LawQuery) -> Features {
        let signals = &self.signals[law as usize];
        let scaled = |v: u32, max: f32| {
            if max > 0.0 {
                (v as f32).ln_1p() / max
            } else {
                0.0
            }
        };
        Features {
            doc,
            law,
            global: 0.0,
            within_law: 0.0,
            law_text: query
                .text_ranking
                .iter()
                .position(|&l| l == law as usize)
                .map_or(0.0, |r| reciprocal(LAW_K, r)),
            law_dense: query
                .dense_ranking
                .iter()
                .position(|&l| l == law as usize)
                .map_or(0.0, |r| reciprocal(LAW_K, r)),
            agreement: 0.0,
            referred: 0.0,
            named: if query.named == Some(law as usize) {
                1.0
            } else {
                0.0
            },
            coverage: query.coverage.get(&law).copied().unwrap_or(0.0),
            cited_by: scaled(signals.cited_by, self.max_cited),
            size: scaled(signals.sections, self.max_size),
            kind: signals.kind,
            prior: 0.0,
            vote_lexical: 0.0,
            vote_dense: 0.0,
        }
    }
}

/// The best `k` candidates under `weights`, best first (ties: the first stage's order).
pub fn routed(features: &[Features], weights: &RoutingWeights, k: usize) -> Vec<Hit> {
    let mut scored: Vec<(usize, f32)> = features
        .iter()
        .enumerate()
        .map(|(i, f)| (i, f.score(weights)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
        .into_iter()
        .take(k)
        .map(|(i, score)| Hit {
            index: features[i].doc,
            score,
        })
        .collect()
}

/// One labelled question for fitting: its candidates' features and its gold documents.
pub struct Example {
    /// [`Router::features`] of its first stage.
    pub features: Vec<Features>,
    /// Its gold documents (none found: the question still counts, as a miss).
    pub gold: Vec<u32>,
    /// The laws of its gold sections (also those the index lacks a document for).
    pub gold_laws: Vec<u32>,
}

/// How much the right law first counts in what fitting maximises, beside Recall@10 and a tenth of MRR@10 (a
/// question's score is at most 1.6): which law comes first is the first thing a reader judges. Half of what a
/// gold section in the top 10 counts, set rather than fit (69 tuning questions could not tell it from others).
pub const LAW_FIRST_WEIGHT: f64 = 0.5;

/// What fitting maximises for one question routed to `top` (documents, best first).
fn objective(example: &Example, top: &[Hit]) -> f64 {
    let docs: Vec<u32> = top.iter().map(|h| h.index).collect();
    let law_first = top
        .first()
        .and_then(|h| example.features.iter().find(|f| f.doc == h.index))
        .is_some_and(|f| example.gold_laws.contains(&f.law));
    paragraf_stats::metrics::tuning_objective(&docs, &example.gold)
        + if law_first { LAW_FIRST_WEIGHT } else { 0.0 }
}

/// Weights chosen by coordinate ascent over a grid, maximising the mean of Recall@10, a tenth of MRR@10 and
/// [`LAW_FIRST_WEIGHT`] for the right law first over `examples`: the signals that need no labelled question
/// (the learned ones stay 0). Coordinate ascent stops at the first weights no single step improves, so it
/// climbs from the unrouted ranking, from `shipped` (what ships now for the mode fit, [`RoutingWeights::shipped`]) and from
/// [`RESTARTS`] seeded random points of the grid, and keeps the best: a refit never does worse on its
/// questions than what ships.
pub fn fit(examples: &[Example], shipped: RoutingWeights) -> RoutingWeights {
    let grid = &ROUTING_GRID[..];
    let coordinates: [Coordinate<RoutingWeights>; 16] = [
        (|w| &mut w.within_law, grid),
        (|w| &mut w.law_text, grid),
        (|w| &mut w.law_dense, grid),
        (|w| &mut w.agreement, grid),
        (|w| &mut w.referred, grid),
        (|w| &mut w.named, grid),
        (|w| &mut w.coverage, grid),
        (|w| &mut w.cited_by, grid),
        (|w| &mut w.size, grid),
        (|w| &mut w.kind[0], grid),
        (|w| &mut w.kind[1], grid),
        (|w| &mut w.kind[2], grid),
        (|w| &mut w.kind[3], grid),
        (|w| &mut w.kind[4], grid),
        (|w| &mut w.kind[5], grid),
        (|w| &mut w.kind[6], grid),
    ];
    let mut rng = SplitMix64::new(RESTART_SEED);
    let mut starts = vec![RoutingWeights::UNROUTED, shipped];
    for _ in 0..RESTARTS {
        let mut start = RoutingWeights::UNROUTED;
        for (coordinate, grid) in &coordinates {
            *coordinate(&mut start) = grid[rng.below(grid.len())];
        }
        starts.push(start);
    }
    starts
        .into_iter()
        .map(|start| {
            let fitted = ascend(&[examples], start, &coordinates);
            (mean_objective(&[examples], &fitted), fitted)
        })
        // The first of equals: the unrouted start, then the shipped weights.
        .fold(
            None,
            |best: Option<(f64, RoutingWeights)>, (score, w)| match best {
                Some((s, _)) if s >= score - 1e-9 => best,
                _ => Some((score, w)),
            },
        )
        .expect("starts")
        .1
}

/// Random starts of [`fit`]'s coordinate ascent besides the unrouted and the shipped weights.
pub const RESTARTS: usize = 16;
/// Their seed.
const RESTART_SEED: u64 = 42;

/// The learned signals' weights (prior and votes) fit as [`fit`] does, the others kept at `start`'s, on
/// several groups of examples, each group's mean objective counting alike: the learned law's
/// questions teach what their votes are worth, questions across laws what they may cost the other laws.
pub fn fit_learned(groups: &[&[Example]], start: RoutingWeights) -> RoutingWeights {
    let grid = &ROUTING_GRID[..];
    let coordinates: [Coordinate<RoutingWeights>; 3] = [
        (|w| &mut w.prior, grid),
        (|w| &mut w.vote_lexical, grid),
        (|w| &mut w.vote_dense, grid),
    ];
    ascend(groups, start, &coordinates)
}

/// The sum over `groups` of each group's mean [`objective`] under `w`.
fn mean_objective(groups: &[&[Example]], w: &RoutingWeights) -> f64 {
    groups
        .iter()
        .map(|examples| {
            let total: f64 = examples
                .iter()
                .filter(|e| !e.gold.is_empty() || !e.gold_laws.is_empty())
                .map(|e| objective(e, &routed(&e.features, w, 10)))
                .sum();
            total / examples.len().max(1) as f64
        })
        .sum()
}

fn ascend(
    groups: &[&[Example]],
    start: RoutingWeights,
    coordinates: &[Coordinate<RoutingWeights>],
) -> RoutingWeights {
    let fitted = coordinate_ascent(start, coordinates, |w| mean_objective(groups, w));
    debug_assert!(fitted.valid());
    fitted
}

/// The values each routing weight may take (the first stage's own weight stays 1).
const ROUTING_GRID: [f32; 14] = [
    0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_titles_and_abbreviations() {
        let cases = [
            ("BGB", "Bürgerliches Gesetzbuch", LawKind::Code),
            ("SGB 5", "Sozialgesetzbuch (SGB) Fünftes Buch (V) - Gesetzliche Krankenversicherung - (Artikel 1 des Gesetzes v. 20. Dezember 1988, BGBl. I S. 2477)", LawKind::Code),
            ("ZPO", "Zivilprozessordnung", LawKind::Code),
            ("BUrlG", "Mindesturlaubsgesetz für Arbeitnehmer", LawKind::Statute),
            ("Offshore-ArbZV", "Verordnung über die Arbeitszeit bei Offshore-Tätigkeiten", LawKind::Ordinance),
            ("SGB2§20Abs2Bek 2010", "Bekanntmachung über die Höhe der Regelleistung", LawKind::Announcement),
            ("SGB11ÄndG 1", "Erstes Gesetz zur Änderung des Elften Buches Sozialgesetzbuch", LawKind::Amending),
            ("EGBGB", "Einführungsgesetz zum Bürgerlichen Gesetzbuche", LawKind::Amending),
            ("BaktWaffVernÜbk", "Übereinkommen über das Verbot bakteriologischer Waffen", LawKind::Treaty),
            ("GG", "Grundgesetz für die Bundesrepublik Deutschland", LawKind::Statute),
            ("GO-BT", "Geschäftsordnung des Deutschen Bundestages", LawKind::Other),
            ("X", "Richtlinien für den Dienst", LawKind::Other),
        ];
        for (abbreviation, title, kind) in cases {
            assert_eq!(LawKind::of(abbreviation, title), kind, "{abbreviation}");
        }
    }

    #[test]
    fn laws_are_named_by_abbreviation_short_title_or_title_in_the_genitive_too() {
        use paragraf_law::Section;
        let law = |abbreviation: &str, title: &str, short_title: &str, text: &str| Law {
            title: title.into(),
            short_title: short_title.into(),
            ..Law::bare(abbreviation, vec![Section::bare("§ 1", text)])
        };
        let laws = [
            law(
                "EntgFG",
                "Gesetz über die Zahlung des Arbeitsentgelts an Feiertagen und im Krankheitsfall",
                "Entgeltfortzahlungsgesetz",
                "Dieses Entgeltfortzahlungsgesetz gilt für alle.",
            ),
            law("StVO 2013", "Straßenverkehrs-Ordnung", "", "Text."),
            law(
                "SGB 5",
                "Sozialgesetzbuch (SGB) Fünftes Buch (V) - Gesetzliche Krankenversicherung",
                "",
                "Nach § 3 des Entgeltfortzahlungsgesetzes und der StVO gilt.",
            ),
            law(
                "ErsteV",
                "Erste Verordnung zum Arbeitszeitgesetz (Arbeitszeitverordnung)",
                "",
                "EntgFG, SGB 5, Straßenverkehrs-Ordnung, Ausführungsgesetzes",
            ),
            // One name of two laws names neither.
            law("AG", "Ausführungsgesetz", "", "Text."),
            law(
                "AGB",
                "Ausführungsgesetz",
                "",
                "Nach der Arbeitszeitverordnung.",
            ),
        ];
        let refs: Vec<&Law> = laws.iter().collect();
        // (named, naming): the SGB 5 names the EntgFG in the genitive and the StVO 2013 without its year; the
        // ErsteV names the EntgFG by abbreviation and the StVO by title (`SGB 5` has a space: no name); the AGB
        // names the ErsteV by its title's name in parentheses; no law counts naming itself.
        assert_eq!(naming_laws(&refs), [(0, 2), (1, 2), (0, 3), (1, 3), (3, 5)]);
        assert_eq!(
            law_signals(&refs)
                .laws
                .iter()
                .map(|s| s.cited_by)
                .collect::<Vec<_>>(),
            [2, 2, 0, 1, 0, 0]
        );
    }

    #[test]
    fn a_catalogue_says_which_laws_refer_to_which_by_abbreviation() {
        let law = |law, refers: Vec<&'static str>| CatalogueLaw {
            law,
            title: "",
            short_title: "",
            sections: 1,
            refers,
        };
        // Repeats count once; a law the catalogue lacks, or the law itself, not at all.
        let router = Router::of_catalogue(
            [
                law("A", vec!["B", "X", "B"]),
                law("B", vec!["B"]),
                law("C", vec!["B", "A"]),
            ],
            None,
        );
        assert_eq!(router.refers, [vec![1], vec![], vec![0, 1]]);
        assert_eq!(
            router
                .signals
                .iter()
                .map(|s| s.cited_by)
                .collect::<Vec<_>>(),
            [1, 2, 0]
        );
    }

    #[test]
    fn social_code_books_are_cited_in_roman_numerals() {
        assert_eq!(book_number("SGB V"), "SGB 5");
        assert_eq!(book_number("SGB IX"), "SGB 9");
        assert_eq!(book_number("SGB XII"), "SGB 12");
        assert_eq!(book_number("SGB II"), "SGB 2");
        assert_eq!(book_number("InsO"), "InsO");
        assert_eq!(book_number("SGB Vorschrift"), "SGB Vorschrift");
    }

    #[test]
    fn laws_are_ranked_by_their_mean_section_vector() {
        // Law 0: two sections, mean (1, 1, 0) / √2; law 1: one, (0, 0, 1); law 2: no vectors.
        let mut sums = vec![0.0f32; 9];
        sums[..3].copy_from_slice(&[1.0, 1.0, 0.0]);
        sums[3..6].copy_from_slice(&[0.0, 0.0, 2.0]);
        let means = LawVectors::of_sums(3, sums);
        assert_eq!(means.ranking(&[0.6, 0.6, 0.1]), [0, 1]);
        assert_eq!(means.ranking(&[0.1, 0.0, 0.9]), [1, 0]);
        // A question of another model's dimension finds no law.
        assert!(means.ranking(&[1.0, 0.0]).is_empty());
        assert!(LawVectors::default().ranking(&[]).is_empty());
    }
}
