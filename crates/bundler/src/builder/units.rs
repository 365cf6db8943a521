//! One strategy from law to bundle: chunk the law into units, embed them, and assemble the [`StrategyBundle`]
//! (vectors stored at the chosen precision, an HNSW graph for large strategies, a RAPTOR tree when asked).
//!
//! Each strategy family differs only in how it turns the law into units and vectors; everything after that
//! (quantisation, the graph, the bundle's metadata) is shared, so adding a strategy means adding one match arm.

use super::{BuildError, BuildOptions, Embedder, Precision};
use crate::chunk::{self, Chunk};
use crate::generate::Generator;
use crate::kmeans::{cluster, KMeans};
use crate::lumber::{lumber, SimilarityDrop};
use crate::manifest::GENERATOR;
use crate::raptor::{self, RaptorSettings, Summarizer};
use paragraf_engine::bundle::{Piece, StrategyBundle, Unit};
use paragraf_format::strategy::{BaseUnit, Strategy};
use paragraf_index::hnsw::Builder;
use paragraf_index::raptor::RaptorTree;
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::vectors::VectorStore;
use paragraf_law::Law;

/// Chunks, embeds and assembles one strategy.
pub fn build_strategy(
    law: &Law,
    strategy: Strategy,
    embedder: &mut Embedder,
    generator: &mut Generator,
    options: &BuildOptions,
) -> Result<StrategyBundle, BuildError> {
    let name = strategy.name();
    let mut params: Vec<(String, String)> = options.encoder_params.clone();
    let mut raptor_tree = None;
    let (units, vectors): (Vec<Unit>, Vec<Vec<f32>>) = match strategy {
        Strategy::Section => embed_chunks(&name, chunk::sections(law), embedder)?,
        Strategy::Base(base) => embed_chunks(&name, base_units(law, base, generator)?, embedder)?,
        Strategy::Linked(link) => embed_chunks(&name, chunk::linked_sections(law, link), embedder)?,
        Strategy::Fixed { size, overlap } => {
            params.push(("window".into(), size.to_string()));
            params.push(("overlap".into(), overlap.to_string()));
            let chunks =
                chunk::fixed_windows(law, embedder.tokenizer, size as usize, overlap as usize);
            embed_chunks(&name, chunks, embedder)?
        }
        Strategy::Contextual(base) => {
            let units = base_units(law, base, generator)?;
            let chunks = generator.contextualize(law, units)?;
            embed_chunks(&name, chunks, embedder)?
        }
        Strategy::Cluster(base) => {
            let chunks = base_units(law, base, generator)?;
            let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
            let base_vectors = embedder.embed(base.name(), &texts)?;
            let settings = KMeans {
                k: options.clusters,
                seed: options.seed,
                ..KMeans::default()
            };
            params.push(("clusters".into(), settings.k.to_string()));
            params.push(("seed".into(), settings.seed.to_string()));
            let clustering = cluster(&base_vectors, settings);
            let units = clustering
                .members()
                .iter()
                .map(|members| {
                    let mut sections: Vec<u32> = members
                        .iter()
                        .flat_map(|&m| chunks[m as usize].sections.clone())
                        .collect();
                    sections.sort_unstable();
                    sections.dedup();
                    let pieces: Vec<Piece> = members
                        .iter()
                        .flat_map(|&m| chunks[m as usize].pieces.clone())
                        .collect();
                    Unit {
                        sections,
                        pieces,
                        text: None,
                    }
                })
                .collect();
            (units, clustering.centroids)
        }
        Strategy::Lumber(base) => {
            let chunks = base_units(law, base, generator)?;
            let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
            let base_vectors = embedder.embed(base.name(), &texts)?;
            let tokens: Vec<usize> = texts.iter().map(|t| embedder.tokens(t)).collect();
            params.push(("budget".into(), options.lumber_budget.to_string()));
            let lumber_chunks = match generator {
                Generator::Builtin => {
                    let mut predictor = SimilarityDrop::new(&base_vectors, options.lumber_quantile);
                    params.push(("quantile".into(), options.lumber_quantile.to_string()));
                    params.push(("threshold".into(), format!("{:.4}", predictor.threshold())));
                    lumber(&chunks, &tokens, options.lumber_budget, &mut predictor)
                }
                Generator::Llm(client) => {
                    let mut predictor = client.boundary_predictor(&chunks);
                    let result = lumber(&chunks, &tokens, options.lumber_budget, &mut predictor);
                    predictor.finish()?;
                    result
                }
            };
            embed_chunks(&name, lumber_chunks, embedder)?
        }
        Strategy::Raptor(base) => {
            let chunks = base_units(law, base, generator)?;
            let (units, leaf_vectors) = embed_chunks(&format!("{name} leaves"), chunks, embedder)?;
            let settings = RaptorSettings {
                branching: options.raptor_branching,
                seed: options.seed,
            };
            params.push(("branching".into(), settings.branching.to_string()));
            params.push(("seed".into(), settings.seed.to_string()));
            let tree = {
                let mut summarizer = TreeSummarizer {
                    law,
                    units: &units,
                    generator,
                    embedder,
                    error: None,
                };
                let tree = raptor::build(&leaf_vectors, settings, &mut summarizer);
                if let Some(e) = summarizer.error {
                    return Err(e);
                }
                tree
            };
            raptor_tree = Some(RaptorTree {
                nodes: tree.nodes,
                vectors: store(
                    &tree.vectors,
                    embedder_dim(&leaf_vectors),
                    options.precision,
                ),
                roots: tree.roots,
            });
            (units, leaf_vectors)
        }
    };
    let vectors = store(&vectors, embedder_dim(&vectors), options.precision);
    let hnsw = match &vectors {
        VectorStore::Int8(v) if raptor_tree.is_none() && v.len() >= options.hnsw_min_units => {
            let builder = Builder::default().seed(options.seed);
            params.push(("hnsw".into(), format!("{builder:?}")));
            Some(builder.build(v))
        }
        _ => None,
    };
    Ok(StrategyBundle {
        generator: GENERATOR.into(),
        strategy: name,
        producer: generator.producer(strategy),
        law: law.abbreviation.clone(),
        law_build_date: law.build_date.clone(),
        model: embedder.model_id().to_string(),
        params,
        vectors,
        units,
        raptor: raptor_tree,
        hnsw,
    })
}

fn embedder_dim(vectors: &[Vec<f32>]) -> usize {
    vectors.first().map_or(0, Vec::len)
}

fn base_units(
    law: &Law,
    base: BaseUnit,
    generator: &mut Generator,
) -> Result<Vec<Chunk>, BuildError> {
    Ok(match base {
        BaseUnit::Proposition => generator.propositions(law)?,
        other => chunk::base_units(law, other),
    })
}

fn embed_chunks(
    label: &str,
    chunks: Vec<Chunk>,
    embedder: &mut Embedder,
) -> Result<(Vec<Unit>, Vec<Vec<f32>>), BuildError> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.embed_text.as_str()).collect();
    let vectors = embedder.embed(label, &texts)?;
    Ok((chunks.iter().map(Chunk::to_unit).collect(), vectors))
}

fn store(vectors: &[Vec<f32>], dim: usize, precision: Precision) -> VectorStore {
    match precision {
        Precision::Int8 => VectorStore::Int8(
            Int8Vectors::from_f32_rows(dim as u32, vectors)
                .expect("the encoder returns finite vectors of its dimension"),
        ),
        Precision::F32 => VectorStore::F32 {
            dim: dim as u32,
            values: vectors.concat(),
        },
    }
}

/// RAPTOR summaries: extractive labels over centroid vectors (built-in), or generated summaries embedded.
struct TreeSummarizer<'a, 'e> {
    law: &'a Law,
    units: &'a [Unit],
    generator: &'a mut Generator,
    embedder: &'a mut Embedder<'e>,
    error: Option<BuildError>,
}

impl Summarizer for TreeSummarizer<'_, '_> {
    fn summarize(&mut self, leaves: &[u32], mean: Vec<f32>) -> (String, Vec<f32>) {
        let mut sections: Vec<u32> = leaves
            .iter()
            .flat_map(|&l| self.units[l as usize].sections.clone())
            .collect();
        sections.sort_unstable();
        sections.dedup();
        match self.generator {
            Generator::Builtin => (extractive_label(self.law, &sections), mean),
            Generator::Llm(client) => {
                let texts: Vec<String> = leaves
                    .iter()
                    .take(40)
                    .map(|&l| unit_text(self.law, &self.units[l as usize]))
                    .collect();
                let summary = client
                    .summary(&texts)
                    .map_err(BuildError::from)
                    .and_then(|s| {
                        let v = self.embedder.embed("raptor summaries", &[s.as_str()])?;
                        Ok((s, v.into_iter().next().expect("one vector")))
                    });
                match summary {
                    Ok(done) => done,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        (String::new(), mean)
                    }
                }
            }
        }
    }
}

/// The text a unit shows: its own text, or the law slices it covers.
pub fn unit_text(law: &Law, unit: &Unit) -> String {
    unit.text.clone().unwrap_or_else(|| {
        unit.pieces
            .iter()
            .map(|p| law.sections[p.section as usize].slice(p.span))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// `§§ 339, 340, 341: Verwirkung der Vertragsstrafe; Vertragsstrafe für Nichterfüllung; ...` (at most 5 titles).
fn extractive_label(law: &Law, sections: &[u32]) -> String {
    let designations: Vec<&str> = sections
        .iter()
        .map(|&s| law.sections[s as usize].designation.as_str())
        .collect();
    let titles: Vec<&str> = sections
        .iter()
        .map(|&s| law.sections[s as usize].title.as_str())
        .filter(|t| !t.is_empty())
        .take(5)
        .collect();
    format!("{}: {}", designations.join(", "), titles.join("; "))
}
