//! Benchmark (not a test): HNSW settings on a real strategy bundle, side by side with exact search.
//!
//! For each `M` the graph is rebuilt over the bundle's int8 vectors (seed recorded in the output), and for each
//! `ef_search` the dev questions (vectors from the embedding cache `paragraf eval` filled) are searched with the
//! paper's protocol (top-100 units -> top-10 sections, dense). Prints graph bytes on disk, unit recall@100 and
//! section recall@10 against exact search, and the mean retrieval time of both.
//!
//! cargo run --release -p paragraf --example hnsw_sweep -- <bundle folder> [strategy] [questions]
#![allow(clippy::print_stdout)] // a benchmark prints its figures
use paragraf_bundler::manifest::{load_or_new, read_law, read_strategy};
use paragraf_embed::cache::EmbeddingCache;
use paragraf_embed::e5;
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_eval::Question;
use paragraf_index::exact::{self, QueryPrecision};
use paragraf_index::hnsw::Builder;
use paragraf_index::vectors::VectorStore;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: hnsw_sweep <bundle folder> [strategy] [questions]"),
    );
    let strategy = args.next().unwrap_or_else(|| "fixed-16-4".into());
    let questions = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "../shared/eval/gerlayqa/bgb_dev.json".into()),
    );
    let manifest = load_or_new(&dir)?;
    let law = read_law(&dir, manifest.laws.first().expect("a law in the manifest"))?;
    let entry = manifest
        .bundles
        .iter()
        .find(|b| b.strategy == strategy)
        .expect("strategy in the manifest");
    let bundle = read_strategy(&dir, entry)?;
    let VectorStore::Int8(vectors) = &bundle.vectors else {
        anyhow::bail!("int8 bundle expected")
    };

    let encoder = e5::load(&paragraf_embed::choice::resolve_model_path(None)?)?;
    let cache = EmbeddingCache::open(
        &paragraf_embed::model::cache_root().join("embeddings"),
        &encoder.cache_id(),
        encoder.dim(),
    )?;
    let qs: Vec<Question> = serde_json::from_str(&std::fs::read_to_string(&questions)?)?;
    let queries: Vec<Vec<f32>> = qs
        .iter()
        .filter_map(|q| cache.get(TextKind::Query, &q.text()).map(<[f32]>::to_vec))
        .collect();
    anyhow::ensure!(
        !queries.is_empty(),
        "no cached question vectors: run `paragraf eval` once"
    );
    let law_index = LawIndex::new(law);
    let options = |unit_search| SearchOptions {
        mode: Mode::Dense,
        unit_search,
        ..SearchOptions::default()
    };
    let exact_index = StrategyIndex::new(bundle.clone(), &law_index.law)?;
    let exact_sections: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| {
            search(
                &law_index,
                Some(&exact_index),
                "",
                Some(q),
                &options(UnitSearch::Exact),
            )
        })
        .map(|r| r.map(|outcome| outcome.hits.into_iter().map(|h| h.section).collect()))
        .collect::<Result<_, _>>()?;
    let exact_units: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| {
            exact::search(vectors, q, 100, QueryPrecision::Int8)
                .map(|h| h.iter().map(|h| h.index).collect())
        })
        .collect::<Result<_, _>>()?;
    let timed = |index: &StrategyIndex, unit_search| -> anyhow::Result<f64> {
        let t0 = Instant::now();
        for _ in 0..3 {
            for q in &queries {
                std::hint::black_box(search(
                    &law_index,
                    Some(index),
                    "",
                    Some(q),
                    &options(unit_search),
                )?);
            }
        }
        Ok(t0.elapsed().as_secs_f64() * 1e3 / (3 * queries.len()) as f64)
    };
    let exact_ms = timed(&exact_index, UnitSearch::Exact)?;
    let flat = StrategyBundle {
        hnsw: None,
        ..bundle.clone()
    };
    let flat_bytes = flat.to_bytes().len();
    println!(
        "{strategy}: {} units, bundle without a graph {flat_bytes} bytes; {} questions; exact search + aggregation {exact_ms:.3} ms",
        vectors.len(),
        queries.len(),
    );
    println!(
        "{:>3} {:>6} {:>10} {:>8} {:>11} {:>11} {:>11} {:>9} {:>8}",
        "M", "ef", "graph B", "build s", "unit R@10", "unit R@100", "sect. R@10", "ms", "speed-up"
    );
    for m in [8, 12, 16] {
        let t0 = Instant::now();
        let graph = Builder::default().m(m).build(vectors);
        let build_s = t0.elapsed().as_secs_f64();
        if m == 8 {
            println!("(graphs built with seed {:#x})", graph.seed());
        }
        let bytes = StrategyBundle {
            hnsw: Some(graph.clone()),
            ..flat.clone()
        }
        .to_bytes()
        .len()
            - flat_bytes;
        for ef in [100, 160, 256, 320] {
            let mut graph = graph.clone();
            graph.set_ef_search(ef);
            let index = StrategyIndex::new(
                StrategyBundle {
                    hnsw: Some(graph.clone()),
                    ..bundle.clone()
                },
                &law_index.law,
            )?;
            let (mut unit_hits, mut top10_hits, mut section_hits, mut section_total) = (0, 0, 0, 0);
            for ((q, units), sections) in queries.iter().zip(&exact_units).zip(&exact_sections) {
                let found = graph.search(vectors, q, 100)?;
                unit_hits += found.iter().filter(|h| units.contains(&h.index)).count();
                top10_hits += found
                    .iter()
                    .take(10)
                    .filter(|h| units[..10].contains(&h.index))
                    .count();
                let got = search(
                    &law_index,
                    Some(&index),
                    "",
                    Some(q),
                    &options(UnitSearch::Hnsw),
                )?;
                section_total += sections.len();
                section_hits += got
                    .hits
                    .iter()
                    .filter(|h| sections.contains(&h.section))
                    .count();
            }
            let ms = timed(&index, UnitSearch::Hnsw)?;
            println!(
                "{m:>3} {ef:>6} {bytes:>10} {build_s:>8.1} {:>11.4} {:>11.4} {:>11.4} {ms:>9.3} {:>7.1}x",
                top10_hits as f64 / (10 * queries.len()) as f64,
                unit_hits as f64 / (100 * queries.len()) as f64,
                section_hits as f64 / section_total as f64,
                exact_ms / ms
            );
        }
    }
    Ok(())
}
