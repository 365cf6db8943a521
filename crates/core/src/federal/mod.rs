//! One ranking across many laws: which section of which law answers a question when nobody knows the law.
//!
//! Per-law searches cannot simply be merged. BM25 scores depend on each law's own statistics (a word rare in the
//! BGB but everywhere in tax law weighs differently in each), and each law's reciprocal-rank list starts at
//! rank 1, so 6,877 laws would each put their best section first. [`FederalIndex`] therefore holds every active
//! section of every law in one BM25 index (one vocabulary, one IDF) and the laws' `section` vectors in one
//! matrix, and fuses the two lists as [`paragraf_engine::search`] does for one law (same defaults). Laws built
//! without a `section` bundle are searched lexically only. That first stage's ranking is then re-ranked by
//! law routing ([`routing`]: which law the question belongs to) unless [`SearchOptions::route_laws`] is off.
//! A law with questions learned from ([`paragraf_engine::learning`], the BGB with GerLayQA) adds its demand prior and the
//! votes of similar past questions to routing ([`FederalIndex::with_learning`]); their weights are fit across
//! laws, since the law's own ranker knows nothing of the others.
//! Query expansion and the citation graph stay per law (their tables are the law's own) and are not applied
//! here.

use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::learning::{self, Learning, Neighbours};
use paragraf_engine::{check_bundle, fuse, section_document, EngineError, Mode, SearchOptions};
use paragraf_index::bm25::{Bm25Index, Bm25Params};
use paragraf_index::exact::top_rows;
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::vectors::VectorStore;
use paragraf_index::Hit;
use paragraf_law::Law;

pub mod cited;
pub mod files;
pub mod learned;
pub mod routing;

use crate::routing_weights::RoutingWeights;
use routing::Router;

/// The strategy whose vectors the federal index uses: one unit, one vector per section.
pub const SECTION_STRATEGY: &str = "section";

/// One law going into a [`FederalIndex`].
pub struct FederalLaw<'a> {
    /// The law.
    pub law: &'a Law,
    /// Its `section` strategy bundle, if it has one (checked to be that law's).
    pub sections: Option<&'a StrategyBundle>,
}

/// A section found across laws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FederalHit {
    /// Index of the law in the list the index was built from.
    pub law: u32,
    /// Index into that law's [`Law::sections`].
    pub section: u32,
    /// Index of the section among all the index holds.
    pub doc: u32,
    /// BM25 score, cosine or fused reciprocal-rank score, as the mode gives.
    pub score: f32,
    /// How many of the most similar past questions had this section as gold (0 without learning).
    pub precedents: u32,
}

/// What was learned from past questions for one law of a [`FederalIndex`], with the routing weights fit with
/// it across laws (`paragraf learn` on a folder of many laws).
#[derive(Clone, Debug)]
pub struct LearnedLaw {
    /// The law (index in the list the index was built from).
    pub law: u32,
    /// What was learned for it.
    pub learning: Learning,
    /// Routing weights with the learned signals' weights.
    pub weights: RoutingWeights,
}

/// Every active section of many laws, searchable as one (see the module docs).
pub struct FederalIndex {
    /// Document -> (law, section).
    docs: Vec<(u32, u32)>,
    bm25: Bm25Index,
    /// Section vectors (laws with a `section` bundle), and the document each row belongs to.
    vectors: Option<(VectorStore, Vec<u32>, String)>,
    router: Router,
    /// Each law's mean section vector (laws with a `section` bundle), for the law-dense routing signal.
    law_vectors: Option<routing::LawVectors>,
    learned: Option<LearnedLaw>,
}

/// The first stage of a search across laws: the fused ranking [`routing::ROUTING_DEPTH`] deep, before routing.
#[derive(Clone, Debug)]
pub struct FirstStage {
    /// Documents with their first-stage scores, best first.
    pub hits: Vec<Hit>,
    /// The mode that ran.
    pub mode: Mode,
}

impl FederalIndex {
    /// Indexes `laws`. Refused: a `section` bundle of another law or build, one that is not the `section`
    /// strategy, or bundles of two models (their vectors are not comparable).
    pub fn new(laws: &[FederalLaw]) -> Result<FederalIndex, EngineError> {
        let mut docs = Vec::new();
        let mut texts = Vec::new();
        let mut rows: Option<(Int8Vectors, Vec<u32>, String)> = None;
        for (l, entry) in laws.iter().enumerate() {
            let law = entry.law;
            let first_doc = docs.len();
            for (s, section) in law.active_sections() {
                if !section.text.is_empty() {
                    docs.push((l as u32, s as u32));
                    texts.push(section_document(law, s, 1));
                }
            }
            let Some(bundle) = entry.sections else {
                continue;
            };
            check_bundle(bundle, law)?;
            let inconsistent =
                |what: String| EngineError::Inconsistent(bundle.strategy.clone(), what);
            if bundle.strategy != SECTION_STRATEGY {
                return Err(inconsistent(format!(
                    "the federal index takes the {SECTION_STRATEGY} strategy's vectors, not {}",
                    bundle.strategy
                )));
            }
            // This law's documents by section, to place each unit's vector.
            let doc_of: std::collections::HashMap<u32, usize> =
                (first_doc..docs.len()).map(|d| (docs[d].1, d)).collect();
            let (vectors, owners, model) = rows.get_or_insert_with(|| {
                (
                    Int8Vectors::new(store_dim(&bundle.vectors) as u32),
                    Vec::new(),
                    bundle.model.clone(),
                )
            });
            if *model != bundle.model {
                return Err(inconsistent(format!(
                    "{} is embedded with {} but {} with {model}: a federal index needs one model",
                    law.abbreviation, bundle.model, laws[0].law.abbreviation
                )));
            }
            for (unit, u) in bundle.units.iter().enumerate() {
                let [section] = u.sections[..] else {
                    return Err(inconsistent(format!(
                        "unit {unit} covers {} sections",
                        u.sections.len()
                    )));
                };
                let Some(&doc) = doc_of.get(&section) else {
                    // A section without text has no document (and its unit nothing to find).
                    continue;
                };
                let row = match &bundle.vectors {
                    VectorStore::Int8(v) => v.dequantize_row(unit),
                    VectorStore::F32 { dim, values } => {
                        let d = *dim as usize;
                        values[unit * d..(unit + 1) * d].to_vec()
                    }
                };
                vectors
                    .push(&row)
                    .map_err(|e| inconsistent(e.to_string()))?;
                owners.push(doc as u32);
            }
        }
        let bm25 = Bm25Index::build(&texts, Default::default(), Bm25Params::default());
        let all: Vec<&Law> = laws.iter().map(|l| l.law).collect();
        let law_vectors = rows.as_ref().map(|(vectors, owners, _)| {
            let dim = vectors.dim();
            let mut sums = vec![0.0f32; laws.len() * dim];
            for (row, &doc) in owners.iter().enumerate() {
                let at = docs[doc as usize].0 as usize * dim;
                for (sum, x) in sums[at..at + dim]
                    .iter_mut()
                    .zip(vectors.dequantize_row(row))
                {
                    *sum += x;
                }
            }
            routing::LawVectors::of_sums(dim, sums)
        });
        Ok(FederalIndex {
            docs,
            bm25,
            vectors: rows.map(|(v, owners, model)| (VectorStore::Int8(v), owners, model)),
            router: Router::new(&all, routing::law_signals(&all)),
            law_vectors,
            learned: None,
        })
    }

    /// The index routing with what was learned for one of its laws (unless [`SearchOptions::learning`] is
    /// off): its prior and votes join the routing features, ranked with `learned.weights`.
    pub fn with_learning(mut self, learned: LearnedLaw) -> Self {
        self.learned = Some(learned);
        self
    }

    /// What was learned for one of the laws, if anything.
    pub fn learned(&self) -> Option<&LearnedLaw> {
        self.learned.as_ref()
    }

    /// The law routing over the indexed laws.
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The law (index in the list the index was built from) of document `doc`.
    pub fn law_of(&self, doc: u32) -> u32 {
        self.docs[doc as usize].0
    }

    /// Sections indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// `text` analysed as the index analyses queries (what precedents' terms are made of for a learned law).
    pub fn query_terms(&self, text: &str) -> Vec<String> {
        self.bm25.query_terms(text)
    }

    /// The model of the section vectors, when any law brought some.
    pub fn model(&self) -> Option<&str> {
        self.vectors.as_ref().map(|(_, _, m)| m.as_str())
    }

    /// The best `options.section_k` sections for `text` (and `vector`, the question embedded with
    /// [`FederalIndex::model`]) in `options.mode`, routed by law with the mode's [`RoutingWeights::shipped`] unless
    /// `options.route_laws` is off — or, with a learned law ([`FederalIndex::with_learning`]) and
    /// `options.learning` on, with its signals and weights; BM25 when there is no vector. The mode that ran
    /// comes back.
    pub fn search(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<(Vec<FederalHit>, Mode), EngineError> {
        if !options.route_laws {
            let (ranking, mode) = self.ranked(text, vector, options)?;
            return Ok((self.hits(ranking), mode));
        }
        let first = self.first_stage(text, vector, options)?;
        let query = self.law_query(text, vector.filter(|_| first.mode != Mode::Bm25));
        let mut features = self.routing_features(&first, &query);
        let Some(learned) = self.learned.as_ref().filter(|_| options.learning) else {
            let routed = routing::routed(
                &features,
                &RoutingWeights::shipped(first.mode),
                options.section_k,
            );
            return Ok((self.hits(routed), first.mode));
        };
        let neighbours = self.add_learned(
            &mut features,
            text,
            &query,
            vector,
            learned.law,
            &learned.learning,
            &|_| false,
            &[],
        );
        let mut hits = self.hits(routing::routed(
            &features,
            &learned.weights,
            options.section_k,
        ));
        let counts = learned.learning.precedent_counts(&neighbours, &|s| {
            hits.iter().any(|h| h.law == learned.law && h.section == s)
        });
        for h in hits.iter_mut().filter(|h| h.law == learned.law) {
            h.precedents = counts.get(&h.section).copied().unwrap_or(0);
        }
        Ok((hits, first.mode))
    }

    /// Adds what `learning` (learned for law `law`) says about `text` to routing `features`: each of the law's
    /// candidates gets its demand prior (`ln(1 + count)` scaled to 0..1) and the votes of the most similar
    /// past questions; sections voted for or most asked about that the first stage missed join as candidates.
    /// `skip` leaves precedents out and `own` is taken out of the prior (a training question scored against the
    /// others). The query's terms are analysed by the index across laws (the same stems as the law's own);
    /// `query` is what routing asked of the laws for it ([`FederalIndex::law_query`]).
    /// Returns the neighbours that voted.
    #[allow(clippy::too_many_arguments)]
    pub fn add_learned(
        &self,
        features: &mut Vec<routing::Features>,
        text: &str,
        query: &routing::LawQuery,
        vector: Option<&[f32]>,
        law: u32,
        learning: &Learning,
        skip: &dyn Fn(usize) -> bool,
        own: &[u32],
    ) -> Neighbours {
        let terms = learning.term_ids(&self.query_terms(text));
        let neighbours = learning.neighbours(&terms, self.model().zip(vector), skip);
        let first = learning::FirstStage {
            lexical: &[],
            dense: None,
        };
        let max = (learning.max_count() as f32).ln_1p();
        let mut at: std::collections::HashMap<u32, usize> = features
            .iter()
            .enumerate()
            .map(|(i, f)| (f.doc, i))
            .collect();
        for signal in learning.features(first, &neighbours, own) {
            let Some(doc) = self.doc_of(law, signal.section) else {
                continue;
            };
            let i = *at.entry(doc).or_insert_with(|| {
                features.push(self.router.law_features(doc, law, query));
                features.len() - 1
            });
            let f = &mut features[i];
            // As familiar as the query is with the precedents ([`learning::Familiarity`]).
            let share = signal.confidence;
            f.prior = if max > 0.0 {
                share * (signal.count as f32).ln_1p() / max
            } else {
                0.0
            };
            f.vote_lexical = share * signal.vote_lexical;
            f.vote_dense = share * signal.vote_dense;
        }
        neighbours
    }

    /// What routing asks of the laws for `text` ([`Router::ask`]), with each law's coverage of its terms (a pass
    /// over the terms' posting lists: asked once per question) and, given the question's `vector` (a dense or
    /// hybrid search), the laws closest to it ([`routing::LawVectors`]).
    pub fn law_query(&self, text: &str, vector: Option<&[f32]>) -> routing::LawQuery {
        let terms: Vec<(String, f32)> = self
            .query_terms(text)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        routing::LawQuery {
            coverage: self.bm25.coverage(&terms, |doc| self.law_of(doc)),
            dense_ranking: match (&self.law_vectors, vector) {
                (Some(means), Some(v)) => means.ranking(v),
                _ => Vec::new(),
            },
            ..self.router.ask(text)
        }
    }

    /// The first stage's fused ranking, [`routing::ROUTING_DEPTH`] deep (what [`FederalIndex::route`] re-ranks).
    pub fn first_stage(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<FirstStage, EngineError> {
        let (ranking, mode) = self.ranked(text, vector, &routing::first_stage_options(options))?;
        Ok(FirstStage {
            hits: ranking,
            mode,
        })
    }

    /// The routing features of a first stage for a question asked of the laws as `query`
    /// ([`FederalIndex::law_query`]).
    pub fn routing_features(
        &self,
        first: &FirstStage,
        query: &routing::LawQuery,
    ) -> Vec<routing::Features> {
        self.router
            .features(&first.hits, &|doc| self.law_of(doc), query)
    }

    /// The best `k` sections of `first` routed by law with `weights`.
    pub fn route(
        &self,
        first: &FirstStage,
        text: &str,
        weights: &RoutingWeights,
        k: usize,
    ) -> Vec<FederalHit> {
        self.hits(self.router.route(
            &first.hits,
            &|doc| self.law_of(doc),
            &self.law_query(text, None),
            weights,
            k,
        ))
    }

    /// The document of section `section` of law `law`, if indexed (an active section with text).
    pub fn doc_of(&self, law: u32, section: u32) -> Option<u32> {
        self.docs
            .binary_search(&(law, section))
            .ok()
            .map(|d| d as u32)
    }

    /// Documents as hits: their laws and sections.
    pub fn hits(&self, ranking: Vec<Hit>) -> Vec<FederalHit> {
        ranking
            .into_iter()
            .map(|h| {
                let (law, section) = self.docs[h.index as usize];
                FederalHit {
                    law,
                    section,
                    doc: h.index,
                    score: h.score,
                    precedents: 0,
                }
            })
            .collect()
    }

    /// The plain fused ranking, `options.section_k` deep.
    fn ranked(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<(Vec<Hit>, Mode), EngineError> {
        let dense = match (options.mode, &self.vectors, vector) {
            (Mode::Bm25, _, _) | (_, None, _) | (_, _, None) => None,
            (_, Some((store, owners, model)), Some(v)) => {
                if v.len() != store_dim(store) {
                    return Err(EngineError::Dimension {
                        model: model.clone(),
                        expected: store_dim(store),
                        found: v.len(),
                    });
                }
                Some((store, owners, v))
            }
        };
        let dense_hits = dense.map(|(store, owners, v)| {
            move |k: usize| -> Vec<Hit> {
                top_rows(store, v, k, None)
                    .into_iter()
                    .map(|h| Hit {
                        index: owners[h.index as usize],
                        score: h.score,
                    })
                    .collect()
            }
        });
        Ok(rank(
            options,
            |k| self.bm25.search(text, k),
            dense_hits.as_ref().map(|f| f as &dyn Fn(usize) -> Vec<Hit>),
        ))
    }
}

/// The section ranking of `options.mode` from a lexical list and, when there is a query vector, a dense one
/// (each asked for the depth it must reach), fused as [`paragraf_engine::search`] fuses them for one law: what
/// [`FederalIndex`] and [`files::FederalHead`] share.
fn rank(
    options: &SearchOptions,
    lexical: impl Fn(usize) -> Vec<Hit>,
    dense: Option<&dyn Fn(usize) -> Vec<Hit>>,
) -> (Vec<Hit>, Mode) {
    let k = options.section_k;
    let depth = options.fusion_depth.max(k);
    match (options.mode, dense) {
        (Mode::Dense, Some(dense)) => (dense(k), Mode::Dense),
        (Mode::Hybrid, Some(dense)) => (
            fuse(options, &lexical(depth), &dense(depth), k),
            Mode::Hybrid,
        ),
        _ => (lexical(k), Mode::Bm25),
    }
}

fn store_dim(store: &VectorStore) -> usize {
    match store {
        VectorStore::Int8(v) => v.dim(),
        VectorStore::F32 { dim, .. } => *dim as usize,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use paragraf_engine::bundle::{Piece, Producer, Unit};
    use paragraf_law::{Section, Span, Subsection};
    use routing::CatalogueLaw;

    /// A law whose sections are `texts` (`§ 1`, `§ 2`, ...), one Absatz each, without headings.
    pub(crate) fn law(abbreviation: &str, texts: &[&str]) -> Law {
        Law {
            abbreviation: abbreviation.into(),
            slug: abbreviation.to_lowercase(),
            title: abbreviation.into(),
            short_title: String::new(),
            doknr: String::new(),
            build_date: "1".into(),
            stand: vec![],
            source: String::new(),
            structure: vec![],
            sections: texts
                .iter()
                .enumerate()
                .map(|(i, text)| Section {
                    designation: format!("§ {}", i + 1),
                    title: String::new(),
                    structure: None,
                    repealed: false,
                    subsections: vec![Subsection {
                        label: None,
                        span: Span::new(0..text.len()),
                        sentences: 0..0,
                    }],
                    sentences: vec![],
                    list_items: vec![],
                    references: vec![],
                    footnotes: vec![],
                    text: text.to_string(),
                })
                .collect(),
        }
    }

    /// A `section` bundle of `law` with these vectors, one per section.
    fn sections(law: &Law, model: &str, rows: &[[f32; 3]]) -> StrategyBundle {
        StrategyBundle {
            generator: "test".into(),
            strategy: SECTION_STRATEGY.into(),
            producer: Producer::None,
            law: law.abbreviation.clone(),
            law_build_date: law.build_date.clone(),
            model: model.into(),
            params: vec![],
            units: (0..rows.len() as u32)
                .map(|s| Unit {
                    sections: vec![s],
                    pieces: vec![Piece {
                        section: s,
                        span: Span::new(0..law.sections[s as usize].text.len()),
                    }],
                    text: None,
                })
                .collect(),
            vectors: VectorStore::Int8(Int8Vectors::from_f32_rows(3, rows).unwrap()),
            raptor: None,
            hnsw: None,
        }
    }

    fn found(
        index: &FederalIndex,
        text: &str,
        vector: Option<&[f32]>,
        mode: Mode,
    ) -> Vec<(u32, u32)> {
        let options = SearchOptions {
            mode,
            ..SearchOptions::default()
        };
        let (hits, ran) = index.search(text, vector, &options).unwrap();
        assert_eq!(ran, if vector.is_some() { mode } else { Mode::Bm25 });
        hits.iter().map(|h| (h.law, h.section)).collect()
    }

    #[test]
    fn one_ranking_across_laws_lexical_dense_and_fused() {
        let miete = law(
            "MietG",
            &[
                "Der Mieter zahlt die Miete.",
                "Die Kaution ist zurückzuzahlen.",
            ],
        );
        let steuer = law(
            "StG",
            &[
                "Die Steuer ist jährlich zu erklären.",
                "Der Mieter einer Wohnung zahlt keine Steuer.",
            ],
        );
        let m = sections(&miete, "m", &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let s = sections(&steuer, "m", &[[0.0, 0.0, 1.0], [0.7, 0.0, 0.7]]);
        let index = FederalIndex::new(&[
            FederalLaw {
                law: &miete,
                sections: Some(&m),
            },
            FederalLaw {
                law: &steuer,
                sections: Some(&s),
            },
        ])
        .unwrap();
        assert_eq!((index.len(), index.model()), (4, Some("m")));
        // `Kaution` is in one section of the four: it comes first, from its law.
        assert_eq!(found(&index, "Kaution", None, Mode::Hybrid)[0], (0, 1));
        // `Steuer` is in both tax sections, `jährlich` only in the first.
        assert_eq!(
            found(&index, "Steuer jährlich", None, Mode::Bm25)[..2],
            [(1, 0), (1, 1)]
        );
        // Dense: nearest vectors across both laws, in order.
        let v = [0.6, 0.0, 0.8];
        assert_eq!(
            found(&index, "x", Some(&v), Mode::Dense),
            [(1, 1), (1, 0), (0, 0), (0, 1)]
        );
        // Hybrid: the section both lists rank high wins.
        assert_eq!(
            found(&index, "Mieter Steuer", Some(&v), Mode::Hybrid)[0],
            (1, 1)
        );
    }

    #[test]
    fn mixed_models_wrong_strategies_and_dimensions_are_refused() {
        let a = law("A", &["eins"]);
        let b = law("B", &["zwei"]);
        let (va, vb) = (
            sections(&a, "e5", &[[1.0, 0.0, 0.0]]),
            sections(&b, "gemma", &[[1.0, 0.0, 0.0]]),
        );
        let error = |parts: &[FederalLaw]| FederalIndex::new(parts).err().unwrap().to_string();
        let both = [
            FederalLaw {
                law: &a,
                sections: Some(&va),
            },
            FederalLaw {
                law: &b,
                sections: Some(&vb),
            },
        ];
        assert_eq!(
            error(&both),
            "strategy bundle section is inconsistent: B is embedded with gemma but A with e5: a federal index needs one model. Rebuild it with `paragraf build`"
        );
        let mut sentences = va.clone();
        sentences.strategy = "sentence".into();
        assert_eq!(
            error(&[FederalLaw {
                law: &a,
                sections: Some(&sentences),
            }]),
            "strategy bundle sentence is inconsistent: the federal index takes the section strategy's vectors, not sentence. Rebuild it with `paragraf build`"
        );
        assert!(error(&[FederalLaw {
            law: &b,
            sections: Some(&va),
        }])
        .starts_with("strategy bundle section belongs to A built 1, but the loaded law is B"));
        let index = FederalIndex::new(&both[..1]).unwrap();
        let options = SearchOptions::default();
        assert_eq!(
            index.search("eins", Some(&[1.0, 0.0]), &options).err().unwrap().to_string(),
            "the query vector has 2 dimensions but the bundle's model (e5) has 3. Most likely the query-embedding proxy serves another model"
        );
        // A law without vectors is still searched lexically.
        let lexical = FederalIndex::new(&[FederalLaw {
            law: &b,
            sections: None,
        }])
        .unwrap();
        assert_eq!(found(&lexical, "zwei", None, Mode::Hybrid), [(0, 0)]);
    }

    #[test]
    fn sections_of_other_laws_that_cite_a_section_are_found_by_name() {
        let cite = |law: &str, designation: &str| paragraf_law::Reference {
            span: Span::new(0..3),
            targets: vec![paragraf_law::RefTarget::External {
                law: law.into(),
                designation: designation.into(),
            }],
        };
        let mut bgb = law("BGB", &["Miete.", "Kündigung.", "Frist."]);
        bgb.title = "Gesetzbuch".into();
        bgb.sections[2].references = vec![cite("BGB", "§ 2")];
        let mut sgb = law("SGB 5", &["Kasse."]);
        sgb.title = "Sozialgesetzbuch (SGB) Fünftes Buch (V)".into();
        let mut other = law("X", &["Eins.", "Zwei."]);
        other.sections[0].references = vec![
            cite("BGB", "§ 2"),
            cite("BGB", "§ 2"),
            cite("des Gesetzbuchs", "§ 3"),
            cite("BGB", "§ 99"),
            cite("SGB V", "§ 1"),
        ];
        other.sections[1].references = vec![cite("BGB", "§ 2"), cite("Unbekannt", "§ 1")];
        let laws = [&bgb, &sgb, &other];
        let by = routing::cited_by_other_laws(&laws);
        // Once per citing section; a law citing itself, an unknown law or a missing designation: nothing.
        assert_eq!(by[&(0, 1)], [(2, 0), (2, 1)]);
        assert_eq!(by[&(0, 2)], [(2, 0)]);
        assert_eq!(by[&(1, 0)], [(2, 0)]);
        assert_eq!(by.len(), 3);
        // The same, as the cited-by file names it, looked up by law and designation.
        let one = cited::cited_by_shards("test", &laws, usize::MAX);
        assert_eq!(one.len(), 1);
        let back = cited::CitedByFile::from_bytes(&one[0].to_bytes(), "").unwrap();
        assert_eq!(back, one[0]);
        // In shards of one cited law each (the smallest size): BGB, then SGB 5; each law found in its own.
        let shards = cited::cited_by_shards("test", &laws, 1);
        let firsts: Vec<&str> = shards.iter().map(|s| s.from.as_str()).collect();
        assert_eq!(firsts, ["", "SGB 5"]);
        assert_eq!(shards[0].until.as_deref(), Some("SGB 5"));
        for shard in &shards {
            assert_eq!(
                &cited::CitedByFile::from_bytes(&shard.to_bytes(), &shard.from).unwrap(),
                shard
            );
        }
        let named = |law: &str, designation: &str| -> Vec<String> {
            let listed = |s: &cited::CitedByFile| {
                s.citing(law, designation)
                    .into_iter()
                    .map(|s| format!("{} {}", s.designation, s.law))
                    .collect::<Vec<_>>()
            };
            let whole = listed(&back);
            let shard = cited::shard_for(&shards, |s| &s.from, law).unwrap();
            assert_eq!(listed(shard), whole, "{designation} {law} in its shard");
            whole
        };
        assert_eq!(named("BGB", "§ 2"), ["§ 1 X", "§ 2 X"]);
        assert_eq!(named("BGB", "§ 3"), ["§ 1 X"]);
        assert_eq!(named("SGB 5", "§ 1"), ["§ 1 X"]);
        assert!(named("BGB", "§ 1").is_empty());
        assert!(named("X", "§ 1").is_empty());
        assert!(named("Unbekannt", "§ 1").is_empty());
        assert_eq!(back.len(), 3);
        // Two citing sections under one designation (`Anlage` twice): one link.
        let mut annexes = law("Y", &["Eins.", "Zwei."]);
        for s in &mut annexes.sections {
            s.designation = "Anlage".into();
            s.references = vec![cite("BGB", "§ 3")];
        }
        let shards = cited::cited_by_shards("test", &[&bgb, &annexes], usize::MAX);
        assert_eq!(shards[0].citing("BGB", "§ 3").len(), 1);
    }

    #[test]
    fn routing_puts_the_law_the_question_belongs_to_first() {
        use paragraf_law::{RefTarget, Reference, Span};
        use routing::{law_signals, LawKind};
        // The holiday law's words are the question's, but an ordinance on ships repeats them more often.
        let mut urlaub = law(
            "BUrlG",
            &[
                "Der Urlaub beträgt jährlich mindestens 24 Werktage.",
                "Der Anspruch auf Urlaub entsteht nach sechs Monaten.",
            ],
        );
        urlaub.title = "Mindesturlaubsgesetz für Arbeitnehmer".into();
        urlaub.sections[0].title = "Dauer des Urlaubs".into();
        let mut schiff = law(
            "SeeUrlV",
            &["Urlaub Urlaub Werktage an Bord: Urlaub wird auf See nicht gewährt."],
        );
        schiff.title = "Verordnung über den Urlaub an Bord".into();
        let mut arbeit = law("ArbG", &["Für den Urlaub gilt das Bundesurlaubsgesetz."]);
        arbeit.sections[0].references = vec![Reference {
            span: Span::new(0..5),
            targets: vec![RefTarget::External {
                law: "BUrlG".into(),
                designation: "§ 3".into(),
            }],
        }];
        let laws = [&urlaub, &schiff, &arbeit];
        let signals = law_signals(&laws);
        assert_eq!(
            signals
                .laws
                .iter()
                .map(|s| (s.kind, s.cited_by, s.sections))
                .collect::<Vec<_>>(),
            [
                (LawKind::Statute, 1, 2),
                (LawKind::Ordinance, 0, 1),
                (LawKind::Other, 0, 1)
            ]
        );
        let index = FederalIndex::new(&laws.map(|law| FederalLaw {
            law,
            sections: None,
        }))
        .unwrap();
        let options = SearchOptions {
            mode: Mode::Bm25,
            route_laws: false,
            ..SearchOptions::default()
        };
        let question = "Wie viele Werktage Urlaub bekomme ich?";
        let first = index.first_stage(question, None, &options).unwrap();
        assert_eq!(
            index.law_of(first.hits[0].index),
            1,
            "unrouted, the ordinance comes first"
        );
        // The holiday law's title and its citation by another law outweigh the ordinance's repetitions.
        let weights = RoutingWeights {
            law_text: 1.0,
            cited_by: 1.0,
            ..RoutingWeights::UNROUTED
        };
        let routed = index.route(&first, question, &weights, 10);
        assert_eq!((routed[0].law, routed[0].section), (0, 0));
        assert_eq!(
            routed.iter().map(|h| h.law).collect::<Vec<_>>(),
            [0, 0, 1, 2]
        );
        // So does the law that a law in the ranking cites: the ArbG points to the BUrlG.
        let referred = RoutingWeights {
            referred: 1.0,
            ..RoutingWeights::UNROUTED
        };
        assert_eq!(index.route(&first, question, &referred, 1)[0].law, 0);
        // And the law that holds more of the question: the ordinance's section matches its rare word twice, the
        // holiday law's sections hold all its other words between them.
        let covering = "An Bord, an Bord: Urlaub, Werktage, Anspruch, Monaten, jährlich";
        let first_covering = index.first_stage(covering, None, &options).unwrap();
        assert_eq!(index.law_of(first_covering.hits[0].index), 1);
        let coverage = RoutingWeights {
            coverage: 2.0,
            ..RoutingWeights::UNROUTED
        };
        assert_eq!(
            index.route(&first_covering, covering, &coverage, 1)[0].law,
            0
        );
        // Unrouted weights give the first stage back; fitting on the question learns to route.
        let unrouted: Vec<u32> = index
            .route(&first, question, &RoutingWeights::UNROUTED, 10)
            .iter()
            .map(|h| h.doc)
            .collect();
        let first_docs: Vec<u32> = first.hits.iter().map(|h| h.index).collect();
        assert_eq!(unrouted, first_docs[..unrouted.len()]);
        let example = routing::Example {
            features: index.routing_features(&first, &index.law_query(question, None)),
            gold: vec![index.doc_of(0, 0).unwrap()],
            gold_laws: vec![0],
        };
        let fitted = routing::fit(&[example], RoutingWeights::BM25);
        assert_ne!(fitted, RoutingWeights::UNROUTED);
        assert_eq!(
            index.route(&first, question, &fitted, 1)[0].doc,
            index.doc_of(0, 0).unwrap()
        );
    }

    #[test]
    fn learned_questions_of_one_law_route_across_laws_and_are_cross_validated() {
        use paragraf_engine::learning::fit::{assemble, Labelled};
        use paragraf_engine::learning::Provenance;
        // The question's word is an ordinance's; the code's section says it in other words.
        let bgb = law(
            "BGB",
            &[
                "Der Vermieter hat die Mietsicherheit nach dem Ende des Mietverhältnisses zurückzugewähren.",
                "Der Mieter zahlt die Miete monatlich.",
            ],
        );
        let vermittler = law(
            "WoVermRG",
            &["Eine Kaution darf der Wohnungsvermittler nicht verlangen, keine Kaution."],
        );
        let laws = [&bgb, &vermittler];
        let index = FederalIndex::new(&laws.map(|law| FederalLaw {
            law,
            sections: None,
        }))
        .unwrap();
        let options = SearchOptions {
            mode: Mode::Bm25,
            ..SearchOptions::default()
        };
        let question = "Bekomme ich meine Kaution zurück?";
        let (routed, _) = index.search(question, None, &options).unwrap();
        assert_eq!(
            routed[0].law, 1,
            "without learning the ordinance comes first"
        );
        assert!(routed.iter().all(|h| h.precedents == 0));

        // Past questions about the deposit, all answered by § 1 BGB.
        let texts = [
            "Vermieter zahlt Kaution nicht zurück",
            "Wann bekomme ich die Kaution nach dem Auszug?",
            "Kaution einbehalten wegen Schäden?",
            "Kaution Zinsen zurück",
        ];
        let labelled: Vec<Labelled> = texts
            .iter()
            .map(|t| Labelled::new(t, vec![0], &|t| index.query_terms(t)))
            .collect();
        let members: Vec<usize> = (0..texts.len()).collect();
        let file = assemble(&bgb, "", Provenance::of_fold(4), &labelled, &members, None);
        let (learning, _) = file.resolve(&bgb).unwrap();
        let among: Vec<learned::AmongQuestion> = texts
            .iter()
            .map(|t| {
                let first = index.first_stage(t, None, &options).unwrap();
                let query = index.law_query(t, None);
                learned::AmongQuestion {
                    text: t,
                    vector: None,
                    features: index.routing_features(&first, &query),
                    query,
                    gold: vec![index.doc_of(0, 0).unwrap()],
                    gold_laws: vec![0],
                }
            })
            .collect();
        // Fit with each question left out of its own vote and prior: the votes of the others carry weight.
        let weights = learned::fit(
            &index,
            0,
            &learning,
            &among,
            &labelled,
            &members,
            &[],
            RoutingWeights::BM25,
            1.0,
        );
        assert!(weights.prior + weights.vote_lexical > 0.0, "{weights:?}");
        assert_eq!(weights.shrunk(0.5).vote_lexical, weights.vote_lexical * 0.5);
        let learned = index.with_learning(LearnedLaw {
            law: 0,
            learning,
            weights,
        });
        let (hits, _) = learned.search(question, None, &options).unwrap();
        assert_eq!((hits[0].law, hits[0].section), (0, 0));
        assert_eq!(hits[0].precedents, 4, "every past question had § 1 as gold");
        // Off: the routed ranking without learning.
        let off = SearchOptions {
            learning: false,
            ..options
        };
        assert_eq!(learned.search(question, None, &off).unwrap().0, routed);
        // Held out, each fold learns from the other: § 1 first for every question.
        let held = learned::cross_validate(
            &learned,
            0,
            &bgb,
            &among,
            &labelled,
            &[],
            None,
            2,
            7,
            RoutingWeights::BM25,
            1.0,
            10,
            &mut |_| {},
        );
        assert_eq!(held.weights.len(), 2);
        for ranking in &held.rankings {
            assert_eq!(ranking[0].index, learned.doc_of(0, 0).unwrap());
        }
    }

    /// Laws as federal index files: the head decoded again, its shards' files, its vectors' file.
    fn files(
        laws: &[FederalLaw],
        shard_bytes: usize,
    ) -> (files::FederalHead, Vec<Vec<u8>>, Vec<u8>) {
        let built = files::FederalHead::build(laws, shard_bytes).unwrap();
        let shard_files = built
            .shards
            .iter()
            .enumerate()
            .map(|(i, s)| files::FederalHead::shard_to_bytes(i as u32, s))
            .collect();
        (
            files::FederalHead::from_bytes(&built.head.to_bytes()).unwrap(),
            shard_files,
            built.vectors.expect("laws with vectors").to_bytes(),
        )
    }

    #[test]
    fn files_rank_like_the_index_fetch_only_the_questions_shards_and_filter_laws() {
        let miete = law(
            "MietG",
            &[
                "Der Mieter zahlt die Miete.",
                "Die Kaution ist zurückzuzahlen.",
            ],
        );
        let steuer = law(
            "StG",
            &[
                "Die Steuer ist jährlich zu erklären.",
                "Der Mieter einer Wohnung zahlt keine Steuer.",
            ],
        );
        let m = sections(&miete, "m", &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let s = sections(&steuer, "m", &[[0.0, 0.0, 1.0], [0.7, 0.0, 0.7]]);
        let parts = [
            FederalLaw {
                law: &miete,
                sections: Some(&m),
            },
            FederalLaw {
                law: &steuer,
                sections: Some(&s),
            },
        ];
        let index = FederalIndex::new(&parts).unwrap();
        let (head, shard_files, vector_file) = files(&parts, 4);
        let vectors = head.vectors_from_bytes(&vector_file).unwrap();
        assert_eq!(
            (head.len(), head.laws(), vectors.model(), vectors.len()),
            (4, &["MietG".to_string(), "StG".to_string()][..], "m", 4)
        );
        assert!(head.shards() > 3, "{} shards", head.shards());
        let loaded: Vec<_> = shard_files
            .iter()
            .enumerate()
            .map(|(i, b)| head.shard_from_bytes(i as u32, b).unwrap())
            .collect();
        let all = |n: u32| loaded.get(n as usize);
        // The laws by their mean vectors, from the coded vectors as from the index's: the StG's sections lean
        // to the question, the MietG's away.
        let v = [0.6, 0.0, 0.8];
        assert_eq!(vectors.law_ranking(&v), [1, 0]);
        assert_eq!(index.law_query("x", Some(&v)).dense_ranking, [1, 0]);
        assert!(index.law_query("x", None).dense_ranking.is_empty());
        // Its place in that ranking is a feature each of the law's candidates carries, weighed by `law_dense`.
        let dense = SearchOptions {
            mode: Mode::Dense,
            ..SearchOptions::default()
        };
        let first = index.first_stage("x", Some(&v), &dense).unwrap();
        let features = index.routing_features(&first, &index.law_query("x", Some(&v)));
        let law_vectors_only = RoutingWeights {
            global: 0.0,
            law_dense: 1.0,
            ..RoutingWeights::UNROUTED
        };
        for f in &features {
            assert_eq!(f.law_dense, if f.law == 1 { 1.0 } else { 0.75 }, "{f:?}");
            assert_eq!(f.score(&law_vectors_only), f.law_dense);
        }
        // The browser routes with a router over the catalogue and the head's index of the laws' text: as the
        // index routes, every feature included.
        let listed = |law| CatalogueLaw {
            law,
            title: law,
            short_title: "",
            sections: 2,
            refers: Vec::new(),
        };
        let router = Router::of_catalogue(
            [listed("MietG"), listed("StG")],
            Some(head.law_text_index()),
        );
        let in_the_browser = |text: &str, v: Option<&[f32]>, options: &SearchOptions| {
            index.search(text, v, options).unwrap().0
        };
        for ((text, vector, mode), route_laws) in [
            ("Steuer jährlich", None, Mode::Bm25),
            ("Kaution Mieter", None, Mode::Hybrid),
            ("x", Some([0.6, 0.0, 0.8]), Mode::Dense),
            ("Mieter Steuer", Some([0.6, 0.0, 0.8]), Mode::Hybrid),
        ]
        .into_iter()
        .flat_map(|case| [(case, false), (case, true)])
        {
            let options = SearchOptions {
                mode,
                route_laws,
                ..SearchOptions::default()
            };
            let v = vector.as_ref().map(|v| &v[..]);
            let expected = in_the_browser(text, v, &options);
            let terms = head.query_terms(text);
            let coded = v.map(|v| (&vectors, v));
            let query = router.ask(text);
            let routing = Some((&router, &query));
            let (hits, ran) = head
                .search(&terms, coded, &options, all, |_| true, routing)
                .unwrap();
            let pairs = |h: &[FederalHit]| {
                h.iter()
                    .map(|h| (h.law, h.section, h.doc))
                    .collect::<Vec<_>>()
            };
            // Signs of these vectors order the sections as the vectors do.
            assert_eq!(
                (pairs(&hits), ran),
                (
                    pairs(&expected),
                    if v.is_some() { mode } else { Mode::Bm25 }
                ),
                "{text}"
            );
            if mode == Mode::Bm25 {
                let scores = |h: &[FederalHit]| h.iter().map(|h| h.score).collect::<Vec<_>>();
                assert_eq!(
                    scores(&hits),
                    scores(&expected),
                    "BM25 scores are the index's"
                );
            }
            // Only the question's shards are needed: with just those the ranking is the same.
            let needed = head.shards_for(&terms);
            assert!(needed.len() < head.shards());
            let only = |n: u32| all(n).filter(|_| needed.contains(&n));
            assert_eq!(
                head.search(&terms, coded, &options, only, |_| true, routing)
                    .unwrap()
                    .0,
                hits
            );
        }
        // Routing changes the order: a question that names a law gets that law's sections first, in the
        // browser's files as in the index.
        let text = "Der Mieter zahlt die Miete nach dem StG";
        let terms = head.query_terms(text);
        let query = router.ask(text);
        assert_eq!(query.text_ranking, [1], "the StG by its text");
        let top_law = |route_laws: bool| {
            let options = SearchOptions {
                mode: Mode::Bm25,
                route_laws,
                ..SearchOptions::default()
            };
            let (hits, _) = head
                .search(
                    &terms,
                    None,
                    &options,
                    all,
                    |_| true,
                    Some((&router, &query)),
                )
                .unwrap();
            assert_eq!(hits, in_the_browser(text, None, &options));
            hits[0].law
        };
        assert_eq!((top_law(false), top_law(true)), (0, 1));
        let doc = head.doc(
            &head
                .search(
                    &head.query_terms("Kaution"),
                    None,
                    &SearchOptions::default(),
                    all,
                    |_| true,
                    None,
                )
                .unwrap()
                .0[0],
        );
        assert_eq!((doc.section, doc.designation.as_str()), (1, "§ 2"));
        // A law left out of the search does not appear, in any mode.
        let options = SearchOptions::default();
        let (hits, _) = head
            .search(
                &head.query_terms("Mieter Steuer"),
                Some((&vectors, &[0.6, 0.0, 0.8])),
                &options,
                all,
                |l| l == 0,
                None,
            )
            .unwrap();
        assert!(
            !hits.is_empty() && hits.iter().all(|h| h.law == 0),
            "{hits:?}"
        );
        // A router made for other laws is refused.
        let other_router = Router::of_catalogue([listed("MietG")], None);
        assert_eq!(
            head.search(
                &terms,
                None,
                &options,
                all,
                |_| true,
                Some((&other_router, &other_router.ask("Kaution"))),
            )
            .unwrap_err()
            .to_string(),
            "the law router knows 1 laws but the index across laws has 2. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`"
        );
        // A needed shard that is missing is named; a shard file under another number is refused.
        let terms = head.query_terms("Kaution");
        let needed = head.shards_for(&terms)[0];
        assert_eq!(
            head.search(
                &terms,
                None,
                &options,
                |n| all(n).filter(|_| n != needed),
                |_| true,
                None,
            )
            .unwrap_err()
            .to_string(),
            format!("the search needs posting shard {needed}, which is not loaded")
        );
        assert_eq!(
            head.shard_from_bytes(1, &shard_files[0]).unwrap_err().to_string(),
            "posting shard 0 arrived where shard 1 was expected. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`"
        );
        // A shard of another head is refused by its terms, its vectors by the head's checksum.
        let (other, other_shards, other_vectors) = files(&parts[..1], 4);
        assert!(
            other.shard_from_bytes(0, &shard_files[0]).is_err()
                || other_shards.len() != shard_files.len()
        );
        let wrong_head = "the section vectors belong to another index head than this one. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`";
        assert_eq!(
            head.vectors_from_bytes(&other_vectors)
                .unwrap_err()
                .to_string(),
            wrong_head
        );
        let theirs = other.vectors_from_bytes(&other_vectors).unwrap();
        assert_eq!(
            head.search(
                &terms,
                Some((&theirs, &[0.6, 0.0, 0.8])),
                &options,
                all,
                |_| true,
                None,
            )
            .unwrap_err()
            .to_string(),
            wrong_head
        );
        // Truncated, foreign and wrong-magic files.
        let bytes = head.to_bytes();
        assert_eq!(
            files::FederalHead::from_bytes(&bytes[..bytes.len() - 3]).unwrap_err().to_string(),
            format!("bundle is truncated: the header announces {} payload bytes but {} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`", bytes.len() - 24, bytes.len() - 27)
        );
        assert!(files::FederalHead::from_bytes(&shard_files[0])
            .unwrap_err()
            .to_string()
            .starts_with("not a Paragraf federal index: the file starts with \"PGRF-FPS\""));
        assert!(head
            .vectors_from_bytes(&shard_files[0])
            .unwrap_err()
            .to_string()
            .starts_with("not a Paragraf federal vectors: the file starts with \"PGRF-FPS\""));
        assert_eq!(
            head.vectors_from_bytes(&vector_file[..30]).unwrap_err().to_string(),
            format!("bundle is truncated: the header announces {} payload bytes but 6 are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`", vector_file.len() - 24)
        );
        // A head of the layout that kept the vectors inside it says how to rebuild.
        let mut old = bytes.clone();
        old[..8].copy_from_slice(b"PGRF-FED");
        assert_eq!(
            files::FederalHead::from_bytes(&old).unwrap_err().to_string(),
            "the index across laws was written by an older Paragraf (section vectors inside the head file). Rebuild it with `paragraf federal --bundles <folder>`"
        );
        // A wrong query dimension is refused with the model's name.
        assert_eq!(
            head.search(&terms, Some((&vectors, &[1.0, 0.0])), &options, all, |_| true, None).unwrap_err().to_string(),
            "the query vector has 2 dimensions but the bundle's model (m) has 3. Most likely the query-embedding proxy serves another model"
        );
    }
}
