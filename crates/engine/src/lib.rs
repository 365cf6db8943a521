//! The search engine over loaded bundles of one law: what the browser runs and what the evaluation harness
//! measures. With it live the files it loads ([`bundle`]), query expansion ([`expansion`]) and what is learned
//! from past questions ([`learning`]), because each of them is one stage of [`search`].
//!
//! A [`LawIndex`] holds the law and its section-level BM25 index (built with the law bundle,
//! [`PrebuiltIndex`]); a [`StrategyIndex`] holds one strategy bundle with its unit → section map. [`search`] runs the paper's
//! protocol — top-100 units (exact, HNSW or RAPTOR-routed), scores propagated to sections, top-10 distinct
//! sections — lexically, densely or as a reciprocal-rank-fused hybrid, with cited sections (`§ 535`) first.
//!
//! [`search`] is the one owner of that protocol, and it says what ran ([`SearchOutcome`]): the mode that ran
//! (BM25 when there is no query vector), the unit search that ran (a RAPTOR bundle is routed whatever was asked
//! for; HNSW needs a graph) and the model of the vectors. Front ends render that instead of re-deriving it, and
//! the names of modes and unit searches ([`Mode`], [`UnitSearch`], [`UnitRoute`]: `Display`/`FromStr`, serde
//! lowercase) are spelled only here.
//!
//! Why a crate of its own: the engine over one law needs no folder, manifest or other law; the layer above it
//! (`paragraf-core`: manifests, all federal law, the law finder, what front ends show) does.
#![warn(missing_docs)]

pub mod bundle;
pub mod expansion;
pub mod learning;

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(
    cause: &(dyn std::error::Error + 'static),
) -> Option<paragraf_format::fault::Fault> {
    paragraf_format::fault::blame::<learning::LearningError>(cause)
}

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::bundle::{LawBundle, StrategyBundle};
use crate::expansion::{
    expand, heading_terms, weighted_terms, Expansion, ExpansionError, ExpansionTable, ThesaurusFile,
};
use crate::learning::{FirstStage, Learning, Provenance};
use paragraf_index::aggregate::{aggregate, Aggregation, UnitSections};
use paragraf_index::bm25::{Bm25Index, Bm25Params};
use paragraf_index::citation::{cited_first, cited_sections};
use paragraf_index::exact::top_rows;
use paragraf_index::fusion::{reciprocal_rank_fusion, Ranked, DEFAULT_RRF_K};
use paragraf_index::graph::CitationGraph;
use paragraf_index::hnsw::Hnsw;
use paragraf_index::raptor;
use paragraf_index::raptor::RaptorTree;
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::vectors::VectorStore;
use paragraf_index::{Hit, DEFAULT_SECTION_K, DEFAULT_UNIT_K};
use paragraf_law::analyzer::AnalyzerConfig;
use paragraf_law::Law;

/// Why a bundle cannot be searched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The strategy bundle was built from another law or another build of it.
    #[error("strategy bundle {strategy} belongs to {bundle_law} built {bundle_date}, but the loaded law is {law} built {law_date}. Rebuild the bundles together (`paragraf build`)")]
    LawMismatch {
        /// Strategy name.
        strategy: String,
        /// Law of the strategy bundle.
        bundle_law: String,
        /// Its build date.
        bundle_date: String,
        /// Loaded law.
        law: String,
        /// Its build date.
        law_date: String,
    },
    /// A unit points past the law's sections, or the vectors do not match the units.
    #[error("strategy bundle {0} is inconsistent: {1}. Rebuild it with `paragraf build`")]
    Inconsistent(String, String),
    /// The query vector has the wrong dimension.
    #[error("the query vector has {found} dimensions but the bundle's model ({model}) has {expected}. Most likely the query-embedding proxy serves another model")]
    Dimension {
        /// Bundle's model.
        model: String,
        /// Bundle dimension.
        expected: usize,
        /// Query dimension.
        found: usize,
    },
}

/// A mode, unit search or route name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} `{name}`: expected {expected}")]
pub struct UnknownName {
    /// What was being named (`mode`, `unit search`, `unit route`).
    pub kind: &'static str,
    /// The name given.
    pub name: String,
    /// The names there are.
    pub expected: &'static str,
}

/// `Display`, `FromStr` (ASCII case-insensitive) and `name()` from one table of names.
macro_rules! names {
    ($type:ident, $kind:literal, $expected:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $type {
            /// Every value, in display order.
            pub const ALL: &'static [$type] = &[$($type::$variant),+];

            /// The lowercase name (URLs, JSON, the command line).
            pub fn name(self) -> &'static str {
                match self {
                    $($type::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $type {
            type Err = UnknownName;

            fn from_str(name: &str) -> Result<Self, UnknownName> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(name))
                    .ok_or_else(|| UnknownName {
                        kind: $kind,
                        name: name.to_string(),
                        expected: $expected,
                    })
            }
        }
    };
}

/// Which rankings a search uses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Vectors only.
    Dense,
    /// BM25 only (no query vector needed, no network).
    Bm25,
    /// Reciprocal-rank fusion of both (the default when a query vector is available).
    #[default]
    Hybrid,
}

names!(Mode, "mode", "dense, bm25 or hybrid", { Dense => "dense", Bm25 => "bm25", Hybrid => "hybrid" });

impl Mode {
    /// The citation-graph weight (`paragraf_index::graph`) a front end applies when the user switches the graph
    /// on: what 5-fold cross-validation on the dev questions chose for the small-unit strategies
    /// (docs/citations.md, "Graph-aware ranking"): 0.5 for dense search, 0.25 for hybrid; BM25 gained nothing,
    /// so it stays 0.
    pub fn graph_weight(self) -> f32 {
        match self {
            Mode::Dense => 0.5,
            Mode::Hybrid => 0.25,
            Mode::Bm25 => 0.0,
        }
    }

    /// The mode a search asked for in this mode runs: BM25 without a strategy bundle or a query vector (as
    /// [`search`] decides, for front ends that choose settings by the mode that will run).
    pub fn that_runs(self, strategy: bool, vector: bool) -> Mode {
        if strategy && vector {
            self
        } else {
            Mode::Bm25
        }
    }
}

/// How unit candidates are to be found (what a user or the harness asks for).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum UnitSearch {
    /// Scan every unit.
    #[default]
    Exact,
    /// The bundle's HNSW graph, when it has one (exact otherwise).
    Hnsw,
}

names!(UnitSearch, "unit search", "exact or hnsw", { Exact => "exact", Hnsw => "hnsw" });

/// How unit candidates were found (what ran, see [`StrategyIndex::unit_route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitRoute {
    /// Every unit scanned.
    Exact,
    /// The bundle's HNSW graph.
    Hnsw,
    /// Down the bundle's RAPTOR tree of summaries (whatever was asked for).
    Raptor,
}

names!(UnitRoute, "unit route", "exact, hnsw or raptor", { Exact => "exact", Hnsw => "hnsw", Raptor => "raptor" });

/// Search settings with the paper's defaults.
#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    /// Unit candidates (100).
    pub unit_k: usize,
    /// Sections returned (10).
    pub section_k: usize,
    /// How unit scores combine per section (max).
    pub aggregation: Aggregation,
    /// Exact or HNSW.
    pub unit_search: UnitSearch,
    /// Dense, BM25 or hybrid.
    pub mode: Mode,
    /// RRF constant (60).
    pub rrf_k: f32,
    /// RRF weight of the lexical list (1.0).
    pub bm25_weight: f32,
    /// RRF weight of the dense list (1.0).
    pub dense_weight: f32,
    /// Length of each list fed into fusion (100 sections).
    pub fusion_depth: usize,
    /// RAPTOR: summary nodes kept per level while descending (20).
    pub raptor_beam: usize,
    /// Put sections cited in the query (`§ 535`) first (true).
    pub citations_first: bool,
    /// BM25 weight of the words query expansion adds, relative to the user's own words (0: no expansion); used
    /// when the law has an expansion table ([`LawIndex::with_expansions`]). See [`DEFAULT_EXPANSION_WEIGHT`].
    pub expansion_weight: f32,
    /// Weight of the citation-graph spread over the section ranking ([`paragraf_index::graph`]; 0: off).
    pub graph_weight: f32,
    /// Rank with what was learned from past questions when the law has it ([`LawIndex::with_learning`],
    /// [`crate::learning`]; true). Off: the unlearned ranking, to compare.
    pub learning: bool,
    /// Across laws: decide the law first (`paragraf_core::federal::routing`, `paragraf_core::routing_weights::RoutingWeights::shipped`;
    /// true). Off: the first stage's ranking across laws as it is, to compare.
    pub route_laws: bool,
}

/// Default [`SearchOptions::expansion_weight`] (the app, `paragraf search`, MCP): the weight that 5-fold
/// cross-validation of hybrid search (the app's default mode) over BGB sections chose in four of five folds on
/// the dev questions (docs/query-expansion.md, "Measured on dev only"). There it is neutral (long questions already
/// use the statute's words); it exists for short lay queries, where it bridges, and the app shows every added word
/// so it can be removed. `paragraf eval` measures without expansion unless asked (`--expansion-weight`).
pub const DEFAULT_EXPANSION_WEIGHT: f32 = 0.35;

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            unit_k: DEFAULT_UNIT_K,
            section_k: DEFAULT_SECTION_K,
            aggregation: Aggregation::Max,
            unit_search: UnitSearch::Exact,
            mode: Mode::Hybrid,
            rrf_k: DEFAULT_RRF_K,
            bm25_weight: 1.0,
            dense_weight: 1.0,
            fusion_depth: 100,
            raptor_beam: 20,
            citations_first: true,
            expansion_weight: DEFAULT_EXPANSION_WEIGHT,
            graph_weight: 0.0,
            learning: true,
            route_laws: true,
        }
    }
}

/// The law plus its section-level BM25 index.
pub struct LawIndex {
    /// The law.
    pub law: Law,
    bm25: Bm25Index,
    /// `bm25` document index -> section index (active, non-empty sections only).
    bm25_sections: Vec<u32>,
    /// Lay word -> statute words, when the build made a table for this law.
    expansions: Option<ExpansionTable>,
    /// The law's in-law citations, for graph-aware ranking.
    graph: CitationGraph,
    /// What was learned from past questions about this law, when the folder has it.
    learning: Option<Learning>,
    /// The index terms of the section headings, when the law bundle brought them (else worked out when an
    /// expansion table is made).
    heading_terms: Option<Vec<String>>,
}

/// What a section is searched by lexically: its heading line (`title_weight` times: BM25 has no fields, so a
/// repeated heading is how its words count more) and its text.
pub fn section_document(law: &Law, index: usize, title_weight: usize) -> String {
    let s = &law.sections[index];
    let heading = format!("{} {}\n", s.designation, s.title);
    heading.repeat(title_weight.max(1)) + &s.text
}

impl LawIndex {
    /// Indexes the law's active sections for BM25 with the default analyzer, heading counted once.
    pub fn new(law: Law) -> Self {
        Self::with_title_weight(law, 1)
    }

    /// The analyzer of every law's BM25 index, and so of the thesaurus file their expansion tables are built
    /// from ([`LawIndex::expansion_table`]).
    pub fn analyzer() -> AnalyzerConfig {
        AnalyzerConfig::default()
    }

    /// [`LawIndex::new`] with the section heading repeated `title_weight` times in the BM25 document.
    pub fn with_title_weight(law: Law, title_weight: usize) -> Self {
        let bm25_sections = searchable_sections(&law);
        let bm25 = build_section_bm25(&law, &bm25_sections, title_weight);
        Self::with_bm25(law, bm25_sections, bm25)
    }

    /// The index of a law bundle: its prebuilt BM25 index (checked against the law when the bundle was decoded)
    /// when this build would have built the same, else built now ([`PrebuiltIndex::is_current`]).
    pub fn from_bundle(bundle: LawBundle) -> Self {
        if !bundle.index.is_current() {
            return Self::new(bundle.law);
        }
        let bm25_sections = searchable_sections(&bundle.law);
        let mut index = Self::with_bm25(bundle.law, bm25_sections, bundle.index.bm25);
        index.heading_terms = Some(bundle.index.heading_terms);
        index
    }

    fn with_bm25(law: Law, bm25_sections: Vec<u32>, bm25: Bm25Index) -> Self {
        LawIndex {
            graph: CitationGraph::new(&law),
            law,
            bm25,
            bm25_sections,
            expansions: None,
            learning: None,
            heading_terms: None,
        }
    }

    /// The index with what was learned from past questions ([`crate::learning`]): every search ranks with it
    /// unless [`SearchOptions::learning`] is off.
    pub fn with_learning(mut self, learning: Learning) -> Self {
        self.learning = Some(learning);
        self
    }

    /// Replaces (or with `None` removes) what was learned, e.g. per fold of a cross-validation.
    pub fn set_learning(&mut self, learning: Option<Learning>) {
        self.learning = learning;
    }

    /// What was learned, if the index has it.
    pub fn learning(&self) -> Option<&Learning> {
        self.learning.as_ref()
    }

    /// The index with a query-expansion table.
    pub fn with_expansions(mut self, table: ExpansionTable) -> Self {
        self.expansions = Some(table);
        self
    }

    /// The law's query-expansion table over the folder's thesaurus file (its parameters are the build's; the
    /// law's section headings name the targets that come first, see [`crate::expansion`]); give it to
    /// [`LawIndex::with_expansions`].
    pub fn expansion_table(
        &self,
        file: &Arc<ThesaurusFile>,
    ) -> Result<ExpansionTable, ExpansionError> {
        let terms = match &self.heading_terms {
            Some(terms) => terms.clone(),
            None => section_heading_terms(&self.law, &self.bm25),
        };
        ExpansionTable::new(file.clone(), &self.bm25, terms)
    }

    /// The query-expansion table, if one was given.
    pub fn expansions(&self) -> Option<&ExpansionTable> {
        self.expansions.as_ref()
    }

    /// The section-level BM25 index (its documents are the active, non-empty sections).
    pub fn bm25(&self) -> &Bm25Index {
        &self.bm25
    }

    /// BM25 over sections: the best `k` sections for `query`.
    pub fn lexical(&self, query: &str, k: usize) -> Vec<Hit> {
        self.to_sections(self.bm25.search(query, k))
    }

    /// BM25 over sections for weighted, analysed terms (a query plus its expansions, [`crate::expansion`]).
    pub fn lexical_weighted(&self, terms: &[(String, f32)], k: usize) -> Vec<Hit> {
        self.to_sections(self.bm25.search_weighted(terms, k))
    }

    fn to_sections(&self, hits: Vec<Hit>) -> Vec<Hit> {
        hits.into_iter()
            .map(|h| Hit {
                index: self.bm25_sections[h.index as usize],
                score: h.score,
            })
            .collect()
    }
}

/// The sections BM25 indexes, in document order: the active ones with text.
fn searchable_sections(law: &Law) -> Vec<u32> {
    law.active_sections()
        .filter(|(_, s)| !s.text.is_empty())
        .map(|(i, _)| i as u32)
        .collect()
}

/// [`heading_terms`] of the law's active sections.
fn section_heading_terms(law: &Law, bm25: &Bm25Index) -> Vec<String> {
    let headings: Vec<&str> = law
        .active_sections()
        .map(|(_, s)| s.title.as_str())
        .collect();
    heading_terms(bm25, &headings)
}

fn build_section_bm25(law: &Law, sections: &[u32], title_weight: usize) -> Bm25Index {
    let docs: Vec<String> = sections
        .iter()
        .map(|&i| section_document(law, i as usize, title_weight))
        .collect();
    Bm25Index::build(&docs, LawIndex::analyzer(), Bm25Params::default())
}

/// A law's section-level BM25 index as its law bundle carries it ([`LawBundle::index`]), built at build time so
/// that loading a law analyses no text (for the BGB 185 ms natively and most of a second of frozen page in the
/// browser, against 6–7.5 ms from the bundle: `cargo bench -p paragraf-engine -- load`).
///
/// The index must be the one this build's analyzer would make, or a search would see other terms than the
/// query's. Instead of a version number someone must remember to raise, the bundle stores a fingerprint of the
/// analysis code itself ([`PrebuiltIndex::is_current`]): an index from other analysis code is rebuilt when loaded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrebuiltIndex {
    /// [`analysis_fingerprint`] of the build that wrote it.
    pub fingerprint: u32,
    /// The index terms of the active sections' headings (query expansion prefers what a heading names).
    pub heading_terms: Vec<String>,
    /// BM25 over [`LawIndex::new`]'s documents.
    pub bm25: Bm25Index,
}

impl PrebuiltIndex {
    /// The index of `law`, as [`LawIndex::new`] builds it.
    pub fn build(law: &Law) -> Self {
        let bm25 = build_section_bm25(law, &searchable_sections(law), 1);
        PrebuiltIndex {
            fingerprint: analysis_fingerprint(),
            heading_terms: section_heading_terms(law, &bm25),
            bm25,
        }
    }

    /// Checks a decoded index against its law: well-formed, one document per searchable section.
    pub fn check(&self, law: &Law) -> Result<(), String> {
        self.bm25.check().map_err(|e| e.to_string())?;
        let sections = searchable_sections(law).len();
        if self.bm25.len() != sections {
            return Err(format!(
                "{} documents for {sections} searchable sections",
                self.bm25.len()
            ));
        }
        if self.bm25.analyzer() != LawIndex::analyzer()
            || self.bm25.params() != Bm25Params::default()
        {
            return Err("built with other analyzer settings or BM25 parameters".into());
        }
        if !self.heading_terms.windows(2).all(|w| w[0] < w[1]) {
            return Err("heading terms not sorted".into());
        }
        Ok(())
    }

    /// Whether this build's analysis would make the same index (same [`analysis_fingerprint`]).
    pub fn is_current(&self) -> bool {
        self.fingerprint == analysis_fingerprint()
    }
}

/// A checksum of what this build's BM25 analysis makes of a probe text (tokens, stopwords, umlaut folding,
/// stemming, decompounding against a lexicon, counts): two builds with the same fingerprint index law text alike.
pub fn analysis_fingerprint() -> u32 {
    static FINGERPRINT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        const PROBE: [&str; 3] = [
            "§ 535 Inhalt und Hauptpflichten des Mietvertrags. (1) Durch den Mietvertrag wird der Vermieter \
             verpflichtet, dem Mieter den Gebrauch der Mietsache während der Mietzeit zu gewähren.",
            "Die Kündigungsfrist für Wohnraummietverhältnisse beträgt drei Monate; Schoenheitsreparaturen, \
             Mietminderung und Nebenkostenabrechnung 2024 nach Art. 20a GG.",
            "Der Vermieter haftet für Mängel der Mietsache, die Miete mindert sich kraft Gesetzes.",
        ];
        let index = Bm25Index::build(&PROBE, LawIndex::analyzer(), Bm25Params::default());
        crc32fast::hash(&postcard::to_allocvec(&index).expect("an index serialises"))
    })
}

/// Checks that `bundle` was built from `law` (same abbreviation and build) and has one vector per unit.
pub fn check_bundle(bundle: &StrategyBundle, law: &Law) -> Result<(), EngineError> {
    if bundle.law != law.abbreviation || bundle.law_build_date != law.build_date {
        return Err(EngineError::LawMismatch {
            strategy: bundle.strategy.clone(),
            bundle_law: bundle.law.clone(),
            bundle_date: bundle.law_build_date.clone(),
            law: law.abbreviation.clone(),
            law_date: law.build_date.clone(),
        });
    }
    if bundle.vectors.len() != bundle.units.len() {
        return Err(EngineError::Inconsistent(
            bundle.strategy.clone(),
            format!(
                "{} vectors for {} units",
                bundle.vectors.len(),
                bundle.units.len()
            ),
        ));
    }
    Ok(())
}

/// A strategy bundle ready to search.
pub struct StrategyIndex {
    /// The bundle.
    pub bundle: StrategyBundle,
    sections: UnitSections,
}

impl StrategyIndex {
    /// Checks the bundle against the law and builds the unit → section map.
    pub fn new(bundle: StrategyBundle, law: &Law) -> Result<Self, EngineError> {
        check_bundle(&bundle, law)?;
        let inconsistent = |what: String| EngineError::Inconsistent(bundle.strategy.clone(), what);
        if let Some(unit) = bundle
            .units
            .iter()
            .position(|u| u.sections.iter().any(|&s| s as usize >= law.sections.len()))
        {
            return Err(inconsistent(format!(
                "unit {unit} points past the law's {} sections",
                law.sections.len()
            )));
        }
        if let Some(tree) = &bundle.raptor {
            raptor::check_tree(tree, bundle.units.len()).map_err(inconsistent)?;
        }
        if let Some(graph) = &bundle.hnsw {
            if graph.len() != bundle.units.len() {
                return Err(inconsistent(format!(
                    "HNSW graph over {} nodes for {} units",
                    graph.len(),
                    bundle.units.len()
                )));
            }
        }
        let sections =
            UnitSections::from_lists(bundle.units.iter().map(|u| u.sections.iter().copied()));
        Ok(StrategyIndex { bundle, sections })
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        match &self.bundle.vectors {
            VectorStore::Int8(v) => v.dim(),
            VectorStore::F32 { dim, .. } => *dim as usize,
        }
    }

    /// The unit search `wanted` gets on this bundle: RAPTOR routing when the bundle has a tree (whatever was
    /// asked for), HNSW when asked for and the bundle has a graph over int8 vectors, the exact scan otherwise.
    pub fn unit_route(&self, wanted: UnitSearch) -> UnitRoute {
        match self.plan(wanted) {
            Plan::Raptor(_) => UnitRoute::Raptor,
            Plan::Hnsw(..) => UnitRoute::Hnsw,
            Plan::Exact => UnitRoute::Exact,
        }
    }

    fn plan(&self, wanted: UnitSearch) -> Plan<'_> {
        match (
            &self.bundle.raptor,
            wanted,
            &self.bundle.hnsw,
            &self.bundle.vectors,
        ) {
            (Some(tree), ..) => Plan::Raptor(tree),
            (None, UnitSearch::Hnsw, Some(graph), VectorStore::Int8(vectors)) => {
                Plan::Hnsw(graph, vectors)
            }
            _ => Plan::Exact,
        }
    }

    /// The top `options.unit_k` units for a query vector, found as [`StrategyIndex::unit_route`] says.
    pub fn unit_hits(
        &self,
        query: &[f32],
        options: &SearchOptions,
    ) -> Result<Vec<Hit>, EngineError> {
        if query.len() != self.dim() {
            return Err(EngineError::Dimension {
                model: self.bundle.model.clone(),
                expected: self.dim(),
                found: query.len(),
            });
        }
        Ok(match self.plan(options.unit_search) {
            Plan::Raptor(tree) => raptor::route(
                tree,
                &self.bundle.vectors,
                query,
                options.raptor_beam,
                options.unit_k,
            ),
            Plan::Hnsw(graph, vectors) => {
                graph.search(vectors, query, options.unit_k).map_err(|e| {
                    EngineError::Inconsistent(self.bundle.strategy.clone(), e.to_string())
                })?
            }
            Plan::Exact => top_rows(&self.bundle.vectors, query, options.unit_k, None),
        })
    }

    /// Dense section ranking: unit hits aggregated to sections.
    pub fn dense(
        &self,
        query: &[f32],
        options: &SearchOptions,
        k: usize,
    ) -> Result<(Vec<Hit>, Vec<Hit>), EngineError> {
        let units = self.unit_hits(query, options)?;
        let sections = aggregate(&units, &self.sections, options.aggregation, k);
        Ok((sections, units))
    }

    /// Sections a unit counts for.
    pub fn sections_of(&self, unit: usize) -> &[u32] {
        self.sections.sections_of(unit)
    }
}

/// The unit search a bundle runs, with what it needs.
enum Plan<'a> {
    Raptor(&'a RaptorTree),
    Hnsw(&'a Hnsw, &'a Int8Vectors),
    Exact,
}

/// One result section.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionHit {
    /// Index into the law's sections.
    pub section: u32,
    /// The ranking score (cosine for dense, BM25 for lexical, RRF for hybrid; 0 for a cited section not
    /// otherwise found).
    pub score: f32,
    /// The query cited this section.
    pub cited: bool,
    /// Units of the strategy that hit and count for this section, best first (for highlighting).
    pub units: Vec<Hit>,
    /// How many of the most similar past questions had this section as gold (0 without learning): "12 ähnliche
    /// Fragen führten zu § 573c".
    pub precedents: u32,
}

/// What a search found and what ran to find it.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// The result sections, best first (cited sections first).
    pub hits: Vec<SectionHit>,
    /// The mode that ran: [`Mode::Bm25`] whenever there was no query vector or no strategy, whatever was asked.
    pub mode: Mode,
    /// How unit candidates were found; `None` when only BM25 ran.
    pub unit_search: Option<UnitRoute>,
    /// HNSW was asked for but did not run: the bundle has no HNSW graph over int8 vectors, or routes through its
    /// RAPTOR tree. `unit_search` says what ran instead. Always false when only BM25 ran.
    pub hnsw_unavailable: bool,
    /// The embedding model of the vectors searched; `None` when only BM25 ran.
    pub model: Option<String>,
    /// What query expansion added to the BM25 query (to show, and to let the user remove); empty when no
    /// expansion ran (no table, weight 0, dense mode or nothing to expand).
    pub expansions: Vec<Expansion>,
    /// Where the learned ranking came from, when it ranked ([`crate::learning`]); `None`: unlearned.
    pub learned: Option<Provenance>,
}

/// A BM25 and a dense ranking of sections fused as every hybrid search fuses them (one law, or many: the index
/// across laws): reciprocal-rank fusion with `options`' weights and constant, the best `k`.
pub fn fuse(options: &SearchOptions, lexical: &[Hit], dense: &[Hit], k: usize) -> Vec<Hit> {
    let ids = |hits: &[Hit]| hits.iter().map(|h| h.index).collect::<Vec<_>>();
    let (lexical, dense) = (ids(lexical), ids(dense));
    reciprocal_rank_fusion(
        &[
            Ranked {
                ids: &lexical,
                weight: options.bm25_weight,
            },
            Ranked {
                ids: &dense,
                weight: options.dense_weight,
            },
        ],
        options.rrf_k,
        k,
    )
}

/// Runs a search. `vector` is the query embedding (absent without the proxy: then only BM25 runs, whatever
/// `options.mode` says); `strategy` is needed for dense and hybrid search. The outcome says what ran.
pub fn search(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    text: &str,
    vector: Option<&[f32]>,
    options: &SearchOptions,
) -> Result<SearchOutcome, EngineError> {
    search_expanded(law, strategy, text, vector, &[], options)
}

/// [`search`] with the expansions the user removed (`removed`: words as shown, see [`expand`]) left out of
/// the BM25 query. Expansion runs when the law has a table and `options.expansion_weight` > 0.
pub fn search_expanded(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    text: &str,
    vector: Option<&[f32]>,
    removed: &[String],
    options: &SearchOptions,
) -> Result<SearchOutcome, EngineError> {
    let dense_input = match options.mode.that_runs(strategy.is_some(), vector.is_some()) {
        Mode::Bm25 => None,
        _ => strategy.zip(vector),
    };
    let depth = options.fusion_depth.max(options.section_k);
    let expansions = match (&law.expansions, options.mode, dense_input) {
        (Some(table), mode, input)
            if options.expansion_weight > 0.0 && !(mode == Mode::Dense && input.is_some()) =>
        {
            expand(text, table, &law.bm25, removed)
        }
        _ => Vec::new(),
    };
    let lexical = |k: usize| {
        if expansions.is_empty() {
            law.lexical(text, k)
        } else {
            let terms = weighted_terms(&law.bm25, text, &expansions, options.expansion_weight);
            law.lexical_weighted(&terms, k)
        }
    };
    // The graph walk re-ranks a deeper list, so that sections just below the cut can rise.
    let first_k = if options.graph_weight > 0.0 {
        depth
    } else {
        options.section_k
    };
    let mode_ran = match dense_input {
        Some(_) => options.mode,
        None => Mode::Bm25,
    };
    let strategy_name = strategy.map(|s| s.bundle.strategy.as_str());
    let learning = law
        .learning
        .as_ref()
        .filter(|l| options.learning && l.ranker(strategy_name, mode_ran).is_some());
    let (ranking, units, precedents) = match learning {
        Some(learning) => {
            let (lexical, dense, units) = first_stage(
                dense_input,
                mode_ran,
                options,
                depth.max(learning::CANDIDATE_DEPTH),
                &lexical,
            )?;
            let reranked = learning
                .rerank(
                    strategy_name,
                    mode_ran,
                    &law.bm25.query_terms(text),
                    dense_input.map(|(s, v)| (s.bundle.model.as_str(), v)),
                    FirstStage {
                        lexical: &lexical,
                        dense: dense.as_deref(),
                    },
                    first_k,
                )
                .expect("a ranker for this run was found above");
            (reranked.ranking, units, reranked.precedents)
        }
        None => {
            let (ranking, units) = match (options.mode, dense_input) {
                (Mode::Dense, Some((s, v))) => s.dense(v, options, first_k)?,
                (Mode::Hybrid, Some((s, v))) => {
                    let (dense, units) = s.dense(v, options, depth)?;
                    (fuse(options, &lexical(depth), &dense, first_k), units)
                }
                _ => (lexical(first_k), Vec::new()),
            };
            (ranking, units, std::collections::HashMap::new())
        }
    };
    let ranking = law
        .graph
        .rerank(&ranking, options.graph_weight, options.section_k);
    let cited: Vec<u32> = if options.citations_first {
        cited_sections(text, &law.law)
            .into_iter()
            .map(|i| i as u32)
            .collect()
    } else {
        Vec::new()
    };
    let hits = cited_first(&cited, &ranking, options.section_k)
        .into_iter()
        .map(|section| SectionHit {
            section,
            score: ranking
                .iter()
                .find(|h| h.index == section)
                .map_or(0.0, |h| h.score),
            cited: cited.contains(&section),
            precedents: precedents.get(&section).copied().unwrap_or(0),
            units: strategy.map_or_else(Vec::new, |strategy| {
                units
                    .iter()
                    .filter(|u| strategy.sections_of(u.index as usize).contains(&section))
                    .copied()
                    .collect()
            }),
        })
        .collect();
    Ok(match dense_input {
        None => SearchOutcome {
            hits,
            mode: Mode::Bm25,
            unit_search: None,
            hnsw_unavailable: false,
            model: None,
            expansions,
            learned: learning.map(|l| l.provenance.clone()),
        },
        Some((strategy, _)) => {
            let route = strategy.unit_route(options.unit_search);
            SearchOutcome {
                hits,
                mode: options.mode,
                unit_search: Some(route),
                hnsw_unavailable: options.unit_search == UnitSearch::Hnsw
                    && route != UnitRoute::Hnsw,
                model: Some(strategy.bundle.model.clone()),
                expansions,
                learned: learning.map(|l| l.provenance.clone()),
            }
        }
    })
}

/// BM25 and dense section lists `depth` deep as the mode that runs uses them (dense mode: no BM25 list; BM25
/// mode: no dense list), with the dense list's unit hits: what learning reranks
/// ([`crate::learning::FirstStage`]). `lexical` runs the (expanded) BM25 query.
#[allow(clippy::type_complexity)]
fn first_stage(
    dense_input: Option<(&StrategyIndex, &[f32])>,
    mode: Mode,
    options: &SearchOptions,
    depth: usize,
    lexical: &dyn Fn(usize) -> Vec<Hit>,
) -> Result<(Vec<Hit>, Option<Vec<Hit>>, Vec<Hit>), EngineError> {
    // As many units as sections wanted (a unit counts for at least one section).
    let deep = SearchOptions {
        unit_k: options.unit_k.max(depth),
        ..*options
    };
    let (dense, units) = match dense_input {
        Some((s, v)) => {
            let (dense, units) = s.dense(v, &deep, depth)?;
            (Some(dense), units)
        }
        None => (None, Vec::new()),
    };
    let lexical = match mode {
        Mode::Dense => Vec::new(),
        _ => lexical(depth),
    };
    Ok((lexical, dense, units))
}

/// The first stages of a search without learning, [`crate::learning::CANDIDATE_DEPTH`] sections deep, as
/// [`search`] hands them to learning:
/// what [`crate::learning::fit`] trains on. `vector` and `strategy` as for [`search`]; no query expansion.
pub fn first_stages(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    text: &str,
    vector: Option<&[f32]>,
    mode: Mode,
) -> Result<(Vec<Hit>, Option<Vec<Hit>>), EngineError> {
    let options = SearchOptions {
        mode,
        ..SearchOptions::default()
    };
    let dense_input = match (mode, strategy, vector) {
        (Mode::Bm25, _, _) | (_, None, _) | (_, _, None) => None,
        (_, Some(s), Some(v)) => Some((s, v)),
    };
    let mode_ran = dense_input.map_or(Mode::Bm25, |_| mode);
    let lexical = |k: usize| law.lexical(text, k);
    let (lexical, dense, _) = first_stage(
        dense_input,
        mode_ran,
        &options,
        learning::CANDIDATE_DEPTH,
        &lexical,
    )?;
    Ok((lexical, dense))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Producer, Unit};
    use paragraf_index::hnsw;
    use paragraf_law::Section;

    /// Ten sections; units 0..4 on the unit circle, units 0 and 1 in section 7, unit 2 in 8, unit 3 in 9.
    fn fixture(graph: bool) -> (LawIndex, StrategyIndex) {
        let topics = [
            "Anfang",
            "Bürgschaft",
            "Darlehen",
            "Eigentum",
            "Frist",
            "Garantie",
            "Hypothek",
            "Kauf",
            "Leihe",
            "Miete",
        ];
        let sections = topics
            .iter()
            .enumerate()
            .map(|(i, topic)| {
                Section::bare(format!("§ {}", i + 1), format!("Vorschrift über {topic}"))
            })
            .collect();
        let law = Law {
            build_date: "d".into(),
            ..Law::bare("TG", sections)
        };
        let rows: Vec<[f32; 2]> = vec![[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0]];
        let vectors = Int8Vectors::from_f32_rows(2, &rows).unwrap();
        let bundle = StrategyBundle {
            generator: String::new(),
            strategy: "section".into(),
            producer: Producer::None,
            law: "TG".into(),
            law_build_date: "d".into(),
            model: "m".into(),
            params: vec![],
            units: [7, 7, 8, 9]
                .iter()
                .map(|&s| Unit {
                    sections: vec![s],
                    pieces: vec![],
                    text: None,
                })
                .collect(),
            hnsw: graph.then(|| hnsw::Builder::default().build(&vectors)),
            vectors: VectorStore::Int8(vectors),
            raptor: None,
        };
        let strategy = StrategyIndex::new(bundle, &law).unwrap();
        (LawIndex::new(law), strategy)
    }

    fn dense(unit_search: UnitSearch) -> SearchOptions {
        SearchOptions {
            mode: Mode::Dense,
            unit_search,
            section_k: 2,
            ..SearchOptions::default()
        }
    }

    #[test]
    fn dense_protocol_ranks_sections_exactly_and_through_hnsw() {
        for (graph, unit_search, ran) in [
            (false, UnitSearch::Exact, UnitRoute::Exact),
            (true, UnitSearch::Exact, UnitRoute::Exact),
            (true, UnitSearch::Hnsw, UnitRoute::Hnsw),
        ] {
            let (law, strategy) = fixture(graph);
            let outcome = search(
                &law,
                Some(&strategy),
                "x",
                Some(&[0.6, 0.8]),
                &dense(unit_search),
            )
            .unwrap();
            let ids: Vec<u32> = outcome.hits.iter().map(|h| h.section).collect();
            assert_eq!(ids, [7, 8]);
            assert!((outcome.hits[0].score - 0.96).abs() < 0.02);
            let units: Vec<u32> = outcome.hits[0].units.iter().map(|u| u.index).collect();
            assert_eq!(units, [1, 0]);
            assert_eq!(
                (outcome.mode, outcome.unit_search, outcome.hnsw_unavailable),
                (Mode::Dense, Some(ran), false)
            );
            assert_eq!(outcome.model.as_deref(), Some("m"));
        }
        let (law, strategy) = fixture(false);
        assert_eq!(
            search(&law, Some(&strategy), "x", Some(&[1.0]), &dense(UnitSearch::Exact))
                .unwrap_err()
                .to_string(),
            "the query vector has 1 dimensions but the bundle's model (m) has 2. Most likely the query-embedding proxy serves another model"
        );
    }

    #[test]
    fn the_outcome_says_what_ran() {
        let (law, strategy) = fixture(false);
        let hnsw = dense(UnitSearch::Hnsw);
        let outcome = search(&law, Some(&strategy), "x", Some(&[0.6, 0.8]), &hnsw).unwrap();
        assert_eq!(outcome.unit_search, Some(UnitRoute::Exact));
        assert!(outcome.hnsw_unavailable, "no graph: exact ran instead");
        for (strategy, vector) in [(Some(&strategy), None), (None, Some(&[0.6, 0.8][..]))] {
            let outcome = search(&law, strategy, "Hypothek", vector, &hnsw).unwrap();
            assert_eq!(outcome.mode, Mode::Bm25);
            assert_eq!((outcome.unit_search, outcome.model), (None, None));
            assert!(!outcome.hnsw_unavailable);
            assert_eq!(outcome.hits[0].section, 6);
            assert!(outcome.hits.iter().all(|h| h.units.is_empty()));
        }
    }

    #[test]
    fn expansion_adds_statute_words_to_bm25_and_says_so() {
        let (law, strategy) = fixture(false);
        let thesaurus =
            expansion::thesaurus::Thesaurus::parse("Pfandrecht;Hypothek\nHund;Köter\n").unwrap();
        let params = expansion::TableParams {
            max_df_fraction: 0.2,
            ..Default::default()
        };
        let mut file = ThesaurusFile {
            generator: String::new(),
            source: String::new(),
            notice: String::new(),
            params,
            thesaurus: expansion::PreparedThesaurus::new(&thesaurus, LawIndex::analyzer()),
        };
        let table = law.expansion_table(&Arc::new(file.clone())).unwrap();
        // Another analyzer than the law's index: said, not a panic.
        file.thesaurus = expansion::PreparedThesaurus::new(
            &thesaurus,
            AnalyzerConfig {
                decompound: false,
                ..LawIndex::analyzer()
            },
        );
        assert_eq!(
            law.expansion_table(&Arc::new(file)).unwrap_err().to_string(),
            "the thesaurus file was stemmed with another analyzer (AnalyzerConfig { fold_umlauts: true, decompound: false }) than the law's index (AnalyzerConfig { fold_umlauts: true, decompound: true }). Most likely it was written by another version of Paragraf; rebuild with `paragraf build`"
        );
        let law = law.with_expansions(table);
        let bm25 = |weight| SearchOptions {
            mode: Mode::Bm25,
            expansion_weight: weight,
            ..SearchOptions::default()
        };
        let ids = |o: &SearchOutcome| o.hits.iter().map(|h| h.section).collect::<Vec<_>>();
        // Off (weight 0): the lay word finds nothing and nothing is added.
        let off = search(&law, None, "Pfandrecht", None, &bm25(0.0)).unwrap();
        assert!(off.hits.is_empty() && off.expansions.is_empty());
        let on = search(&law, None, "Pfandrecht Hund", None, &bm25(0.5)).unwrap();
        assert_eq!(ids(&on), [6]);
        assert_eq!(on.expansions.len(), 1);
        assert_eq!(
            (
                on.expansions[0].from.as_str(),
                on.expansions[0].to[0].word.as_str()
            ),
            ("pfandrecht", "Hypothek")
        );
        // An expanded word scores below the same word typed.
        let typed = search(&law, None, "Hypothek", None, &bm25(0.5)).unwrap();
        assert!(on.hits[0].score < typed.hits[0].score);
        // Removed by the user: gone from the query and from the outcome.
        let removed = search_expanded(
            &law,
            None,
            "Pfandrecht",
            None,
            &["Hypothek".into()],
            &bm25(0.5),
        )
        .unwrap();
        assert!(removed.hits.is_empty() && removed.expansions.is_empty());
        // Hybrid expands its BM25 half; dense alone does not expand.
        let hybrid = SearchOptions {
            mode: Mode::Hybrid,
            ..bm25(0.5)
        };
        let fused = search(
            &law,
            Some(&strategy),
            "Pfandrecht",
            Some(&[0.6, 0.8]),
            &hybrid,
        )
        .unwrap();
        assert!(ids(&fused).contains(&6) && fused.expansions.len() == 1);
        let dense = SearchOptions {
            mode: Mode::Dense,
            ..bm25(0.5)
        };
        let dense = search(
            &law,
            Some(&strategy),
            "Pfandrecht",
            Some(&[0.6, 0.8]),
            &dense,
        )
        .unwrap();
        assert!(dense.expansions.is_empty() && !ids(&dense).contains(&6));
    }

    #[test]
    fn cited_sections_come_first_and_once() {
        let (law, strategy) = fixture(false);
        let options = SearchOptions {
            section_k: 3,
            ..dense(UnitSearch::Exact)
        };
        let outcome = search(
            &law,
            Some(&strategy),
            "§ 9 und § 6",
            Some(&[0.6, 0.8]),
            &options,
        )
        .unwrap();
        let ids: Vec<(u32, bool)> = outcome.hits.iter().map(|h| (h.section, h.cited)).collect();
        // § 9 is section 8, a dense hit (with its unit); § 6 is section 5, found by nothing else (score 0).
        assert_eq!(ids, [(8, true), (5, true), (7, false)]);
        assert_eq!(outcome.hits[0].units[0].index, 2);
        assert!(outcome.hits[0].score > 0.0);
        assert_eq!(outcome.hits[1].score, 0.0);
        assert_eq!(outcome.mode, Mode::Dense);
    }

    #[test]
    fn a_law_bundle_brings_its_index_unless_other_analysis_code_built_it() {
        let (fresh, _) = fixture(false);
        let law = fresh.law.clone();
        let bundle = LawBundle::new("test", law.clone());
        assert!(bundle.index.is_current());
        assert_eq!(bundle.index.bm25, fresh.bm25);
        assert_eq!(
            LawIndex::from_bundle(bundle.clone()).lexical("Miete", 3),
            fresh.lexical("Miete", 3)
        );
        // The index of other text under another fingerprint: not used, the law is indexed again.
        let mut renamed = law.clone();
        for s in &mut renamed.sections {
            s.text = s.text.replace("Miete", "Pacht");
        }
        let mut stale = bundle.clone();
        stale.index = PrebuiltIndex::build(&renamed);
        stale.index.fingerprint ^= 1;
        assert!(!stale.index.is_current());
        assert_eq!(LawIndex::from_bundle(stale).bm25, fresh.bm25);
        // Under the current fingerprint the stored index is what searches (so it must be checked on decode).
        let mut trusted = bundle;
        trusted.index = PrebuiltIndex::build(&renamed);
        assert!(LawIndex::from_bundle(trusted)
            .lexical("Miete", 3)
            .is_empty());
    }

    #[test]
    fn names_round_trip_and_unknown_ones_are_explained() {
        for &mode in Mode::ALL {
            assert_eq!(mode.to_string().parse::<Mode>(), Ok(mode));
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
        }
        for &unit_search in UnitSearch::ALL {
            assert_eq!(unit_search.to_string().parse(), Ok(unit_search));
        }
        for &route in UnitRoute::ALL {
            assert_eq!(route.to_string().parse(), Ok(route));
            assert_eq!(
                serde_json::to_string(&route).unwrap(),
                format!("\"{route}\"")
            );
        }
        assert_eq!("BM25".parse(), Ok(Mode::Bm25));
        assert_eq!(
            "sparse".parse::<Mode>().unwrap_err().to_string(),
            "unknown mode `sparse`: expected dense, bm25 or hybrid"
        );
        assert_eq!(
            "raptor".parse::<UnitSearch>().unwrap_err().to_string(),
            "unknown unit search `raptor`: expected exact or hnsw"
        );
        assert_eq!(
            serde_json::from_str::<UnitSearch>("\"hnsw\"").unwrap(),
            UnitSearch::Hnsw
        );
    }
}
