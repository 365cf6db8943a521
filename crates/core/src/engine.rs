//! The search engine over loaded bundles: what the browser runs and what the evaluation harness measures.
//!
//! A [`LawIndex`] holds the law and its section-level BM25 index (derived at load time, so it costs no bundle
//! bytes); a [`StrategyIndex`] holds one strategy bundle with its unit → section map. [`search`] runs the paper's
//! protocol — top-100 units (exact, HNSW or RAPTOR-routed), scores propagated to sections, top-10 distinct
//! sections — lexically, densely or as a reciprocal-rank-fused hybrid, with cited sections (`§ 535`) first.

use crate::bundle::{RaptorTree, StrategyBundle, VectorStore};
use crate::law::Law;
use crate::search::aggregate::{aggregate, Aggregation, UnitSections};
use crate::search::bm25::{Bm25Index, Bm25Params};
use crate::search::citation::cited_sections;
use crate::search::exact::{self, QueryPrecision};
use crate::search::fusion::{reciprocal_rank_fusion, Ranked, DEFAULT_RRF_K};
use crate::search::{Hit, TopK, DEFAULT_SECTION_K, DEFAULT_UNIT_K};

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

/// Which rankings a search uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// How unit candidates are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnitSearch {
    /// Scan every unit.
    #[default]
    Exact,
    /// The bundle's HNSW graph, when it has one (exact otherwise).
    Hnsw,
}

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
}

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

    /// [`LawIndex::new`] with the section heading repeated `title_weight` times in the BM25 document.
    pub fn with_title_weight(law: Law, title_weight: usize) -> Self {
        let bm25_sections: Vec<u32> = law
            .active_sections()
            .filter(|(_, s)| !s.text.is_empty())
            .map(|(i, _)| i as u32)
            .collect();
        let docs: Vec<String> = bm25_sections
            .iter()
            .map(|&i| section_document(&law, i as usize, title_weight))
            .collect();
        let bm25 = Bm25Index::build(&docs, Default::default(), Bm25Params::default());
        LawIndex {
            law,
            bm25,
            bm25_sections,
        }
    }

    /// BM25 over sections: the best `k` sections for `query`.
    pub fn lexical(&self, query: &str, k: usize) -> Vec<Hit> {
        self.bm25
            .search(query, k)
            .into_iter()
            .map(|h| Hit {
                index: self.bm25_sections[h.index as usize],
                score: h.score,
            })
            .collect()
    }
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
        if bundle.law != law.abbreviation || bundle.law_build_date != law.build_date {
            return Err(EngineError::LawMismatch {
                strategy: bundle.strategy.clone(),
                bundle_law: bundle.law.clone(),
                bundle_date: bundle.law_build_date.clone(),
                law: law.abbreviation.clone(),
                law_date: law.build_date.clone(),
            });
        }
        let inconsistent = |what: String| EngineError::Inconsistent(bundle.strategy.clone(), what);
        if bundle.vectors.len() != bundle.units.len() {
            return Err(inconsistent(format!(
                "{} vectors for {} units",
                bundle.vectors.len(),
                bundle.units.len()
            )));
        }
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
            check_tree(tree, bundle.units.len()).map_err(inconsistent)?;
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

    /// The top `options.unit_k` units for a query vector.
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
        if let Some(tree) = &self.bundle.raptor {
            return Ok(raptor_route(
                tree,
                &self.bundle.vectors,
                query,
                options.raptor_beam,
                options.unit_k,
            ));
        }
        if let (UnitSearch::Hnsw, Some(graph), VectorStore::Int8(vectors)) =
            (options.unit_search, &self.bundle.hnsw, &self.bundle.vectors)
        {
            return graph.search(vectors, query, options.unit_k).map_err(|e| {
                EngineError::Inconsistent(self.bundle.strategy.clone(), e.to_string())
            });
        }
        Ok(top_rows(&self.bundle.vectors, query, options.unit_k, None))
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

fn check_tree(tree: &RaptorTree, units: usize) -> Result<(), String> {
    if tree.vectors.len() != tree.nodes.len() {
        return Err(format!(
            "{} summary vectors for {} nodes",
            tree.vectors.len(),
            tree.nodes.len()
        ));
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        let bound = if node.level == 1 {
            units
        } else {
            tree.nodes.len()
        };
        if node.children.iter().any(|&c| c as usize >= bound) {
            return Err(format!("summary node {i} has a child out of range"));
        }
    }
    if tree.roots.iter().any(|&r| r as usize >= tree.nodes.len()) {
        return Err("a root is out of range".into());
    }
    Ok(())
}

/// Best `k` rows of `store` for `query`, optionally only among `candidates`.
fn top_rows(store: &VectorStore, query: &[f32], k: usize, candidates: Option<&[u32]>) -> Vec<Hit> {
    match (store, candidates) {
        (VectorStore::Int8(v), None) => {
            exact::search(v, query, k, QueryPrecision::Int8).expect("dimension checked")
        }
        (store, candidates) => {
            let mut top = TopK::new(k);
            let mut push = |i: u32| {
                top.push(Hit {
                    index: i,
                    score: row_score(store, query, i as usize),
                })
            };
            match candidates {
                Some(c) => c.iter().for_each(|&i| push(i)),
                None => (0..store.len() as u32).for_each(push),
            }
            top.into_sorted()
        }
    }
}

fn row_score(store: &VectorStore, query: &[f32], i: usize) -> f32 {
    match store {
        VectorStore::Int8(v) => v.dot_f32(query, i),
        VectorStore::F32 { dim, values } => {
            let d = *dim as usize;
            values[i * d..(i + 1) * d]
                .iter()
                .zip(query)
                .map(|(a, b)| a * b)
                .sum()
        }
    }
}

/// RAPTOR tree traversal: score the roots, keep the best `beam` nodes per level while descending, then score
/// the leaf units under the kept level-1 nodes and return the best `k`.
pub fn raptor_route(
    tree: &RaptorTree,
    leaves: &VectorStore,
    query: &[f32],
    beam: usize,
    k: usize,
) -> Vec<Hit> {
    let mut frontier: Vec<u32> = tree.roots.clone();
    loop {
        let kept = top_rows(&tree.vectors, query, beam.max(1), Some(&frontier));
        let level = kept
            .first()
            .map_or(1, |h| tree.nodes[h.index as usize].level);
        let children: Vec<u32> = kept
            .iter()
            .flat_map(|h| tree.nodes[h.index as usize].children.iter().copied())
            .collect();
        if level <= 1 || children.is_empty() {
            return top_rows(leaves, query, k, Some(&children));
        }
        frontier = children;
    }
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
}

/// Runs a search. `vector` is the query embedding (absent without the proxy: then only BM25 runs, whatever
/// `options.mode` says); `strategy` is needed for dense and hybrid search.
pub fn search(
    law: &LawIndex,
    strategy: Option<&StrategyIndex>,
    text: &str,
    vector: Option<&[f32]>,
    options: &SearchOptions,
) -> Result<Vec<SectionHit>, EngineError> {
    let dense_input = match (options.mode, strategy, vector) {
        (Mode::Bm25, _, _) | (_, None, _) | (_, _, None) => None,
        (_, Some(s), Some(v)) => Some((s, v)),
    };
    let depth = options.fusion_depth.max(options.section_k);
    let (ranking, units) = match (options.mode, dense_input) {
        (Mode::Dense, Some((s, v))) => s.dense(v, options, options.section_k)?,
        (Mode::Hybrid, Some((s, v))) => {
            let (dense, units) = s.dense(v, options, depth)?;
            let lexical = law.lexical(text, depth);
            let ids = |hits: &[Hit]| hits.iter().map(|h| h.index).collect::<Vec<_>>();
            let (dense_ids, lexical_ids) = (ids(&dense), ids(&lexical));
            let fused = reciprocal_rank_fusion(
                &[
                    Ranked {
                        ids: &lexical_ids,
                        weight: options.bm25_weight,
                    },
                    Ranked {
                        ids: &dense_ids,
                        weight: options.dense_weight,
                    },
                ],
                options.rrf_k,
                options.section_k,
            );
            (fused, units)
        }
        _ => (law.lexical(text, options.section_k), Vec::new()),
    };
    let cited: Vec<u32> = if options.citations_first {
        cited_sections(text, &law.law)
            .into_iter()
            .map(|i| i as u32)
            .collect()
    } else {
        Vec::new()
    };
    let mut results: Vec<SectionHit> = cited
        .iter()
        .take(options.section_k)
        .map(|&section| SectionHit {
            section,
            score: ranking
                .iter()
                .find(|h| h.index == section)
                .map_or(0.0, |h| h.score),
            cited: true,
            units: Vec::new(),
        })
        .collect();
    for hit in ranking {
        if results.len() == options.section_k {
            break;
        }
        if !cited.contains(&hit.index) {
            results.push(SectionHit {
                section: hit.index,
                score: hit.score,
                cited: false,
                units: Vec::new(),
            });
        }
    }
    if let Some(strategy) = strategy {
        for result in &mut results {
            result.units = units
                .iter()
                .filter(|u| {
                    strategy
                        .sections_of(u.index as usize)
                        .contains(&result.section)
                })
                .copied()
                .collect();
        }
    }
    Ok(results)
}
