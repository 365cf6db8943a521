//! Native search latency (not a test): `cargo bench -p paragraf-engine`.
//!
//! 1. Exact int8 top-100 + aggregation to the top-10 sections on a matrix the size of the BGB `subsection`
//!    strategy (5,000 × 384; goal ≤ 0.15 ms per query).
//! 2. Exact vs HNSW top-100 on a matrix the size of `fixed-16-4` (60,000 × 384; goal HNSW ≥ 3× faster at
//!    recall ≥ 0.98), with HNSW build time and recall against exact.
//! 3. BM25 query time over the real BGB sections with the dev questions (skipped when `../shared` lacks them).
//! 4. Opening the BGB: its BM25 index built from the text (what loading did before law bundles carried it) next to
//!    decoding a law bundle with the prebuilt index, and designations looked up one by one next to one table.
//!
//! The vectors are synthetic but structured like text embeddings (clusters in a low-dimensional latent space,
//! projected and noised), since the bundles' real vectors are not an input of this crate. The paper reports
//! 2.0–16.1 ms per query for its (Python, FAISS) pipeline.
#![allow(clippy::print_stdout)] // a benchmark prints its figures

use paragraf_engine::bundle::LawBundle;
use paragraf_engine::LawIndex;
use paragraf_eval::Question;
use paragraf_index::aggregate::{aggregate, Aggregation, UnitSections};
use paragraf_index::bm25::{Bm25Index, Bm25Params};
use paragraf_index::exact::{self, QueryPrecision};
use paragraf_index::hnsw::{Builder, DEFAULT_SEED};
use paragraf_index::vectors::Int8Vectors;
use paragraf_index::{DEFAULT_SECTION_K, DEFAULT_UNIT_K};
use paragraf_law::analyzer::AnalyzerConfig;
use paragraf_stats::rng::SplitMix64;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

const DIM: usize = 384;

/// Clustered vectors in a 64-d latent space projected to `DIM`, plus noise, normalised.
fn structured(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = SplitMix64::new(seed);
    let (latent, clusters) = (64, 100);
    let projection: Vec<f32> = (0..latent * DIM).map(|_| rng.normal() as f32).collect();
    let centres: Vec<Vec<f32>> = (0..clusters)
        .map(|_| (0..latent).map(|_| 2.0 * rng.normal() as f32).collect())
        .collect();
    (0..n)
        .map(|_| {
            let c = &centres[rng.below(clusters)];
            let z: Vec<f32> = c.iter().map(|x| x + rng.normal() as f32).collect();
            let mut v: Vec<f32> = (0..DIM)
                .map(|j| {
                    (0..latent)
                        .map(|i| z[i] * projection[i * DIM + j])
                        .sum::<f32>()
                        + 25.0 * rng.normal() as f32
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            v
        })
        .collect()
}

/// This thread's CPU time in seconds (Linux `schedstat`), for figures that do not count time spent waiting
/// for a core on a shared machine; `None` elsewhere.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Per-query cost of `f` over `queries` in milliseconds: wall clock and, where available, this thread's CPU
/// time, each the best of five passes' means after a warm-up pass.
struct Timing {
    wall: f64,
    cpu: Option<f64>,
}

impl std::fmt::Display for Timing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.4} ms/query", self.wall)?;
        if let Some(cpu) = self.cpu {
            write!(f, " (CPU {cpu:.4})")?;
        }
        Ok(())
    }
}

fn time_per_query<T>(queries: &[Vec<f32>], mut f: impl FnMut(&[f32]) -> T) -> Timing {
    for q in queries.iter().take(20) {
        black_box(f(q));
    }
    let per_query = 1e3 / queries.len() as f64;
    let mut best = Timing {
        wall: f64::INFINITY,
        cpu: None,
    };
    for _ in 0..5 {
        let (start, cpu_start) = (Instant::now(), thread_cpu_seconds());
        for q in queries {
            black_box(f(q));
        }
        let wall = start.elapsed().as_secs_f64() * per_query;
        let cpu = cpu_start
            .zip(thread_cpu_seconds())
            .map(|(a, b)| (b - a) * per_query);
        best.wall = best.wall.min(wall);
        best.cpu = match (best.cpu, cpu) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    best
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn subsection_sized() {
    let (n, sections) = (5_000, 2_455);
    let data = structured(n + 500, 1);
    let vectors = Int8Vectors::from_f32_rows(DIM as u32, &data[..n]).unwrap();
    let map = UnitSections::one_each(
        &(0..n as u32)
            .map(|u| u * sections / n as u32)
            .collect::<Vec<_>>(),
    );
    let queries = &data[n..];
    println!(
        "== exact int8, {n} x {DIM} (BGB subsection size), {} queries",
        queries.len()
    );
    for precision in [QueryPrecision::Int8, QueryPrecision::F32] {
        let search_only = time_per_query(queries, |q| {
            exact::search(&vectors, q, DEFAULT_UNIT_K, precision).unwrap()
        });
        let with_aggregation = time_per_query(queries, |q| {
            let hits = exact::search(&vectors, q, DEFAULT_UNIT_K, precision).unwrap();
            aggregate(&hits, &map, Aggregation::Max, DEFAULT_SECTION_K)
        });
        println!(
            "  query {precision:?}: top-100 {search_only}; + aggregation to top-10 sections {with_aggregation} (goal <= 0.15)"
        );
    }
}

fn fixed_16_4_sized() {
    let n = 60_000;
    let data = structured(n + 200, 2);
    let vectors = Int8Vectors::from_f32_rows(DIM as u32, &data[..n]).unwrap();
    let queries = &data[n..];
    println!(
        "== exact vs HNSW, {n} x {DIM} (fixed-16-4 size), {} queries",
        queries.len()
    );
    let exact_ms = time_per_query(queries, |q| {
        exact::search(&vectors, q, DEFAULT_UNIT_K, QueryPrecision::Int8).unwrap()
    });
    println!("  exact top-100: {exact_ms}");
    let truth: Vec<Vec<u32>> = queries
        .iter()
        .map(|q| {
            let hits = exact::search(&vectors, q, DEFAULT_UNIT_K, QueryPrecision::Int8).unwrap();
            hits.iter().map(|h| h.index).collect()
        })
        .collect();
    let start = Instant::now();
    let mut graph = Builder::default().seed(DEFAULT_SEED).build(&vectors);
    println!(
        "  HNSW build (M 16, ef_construction 200, seed {:#x}): {:.1} s",
        graph.seed(),
        start.elapsed().as_secs_f64()
    );
    for ef in [128, 256, 384, 512] {
        graph.set_ef_search(ef);
        let hnsw_ms = time_per_query(queries, |q| {
            graph.search(&vectors, q, DEFAULT_UNIT_K).unwrap()
        });
        let (mut hit10, mut hit100) = (0usize, 0usize);
        for (q, t) in queries.iter().zip(&truth) {
            let found = graph.search(&vectors, q, DEFAULT_UNIT_K).unwrap();
            hit10 += found[..10]
                .iter()
                .filter(|h| t[..10].contains(&h.index))
                .count();
            hit100 += found.iter().filter(|h| t.contains(&h.index)).count();
        }
        let nq = queries.len() as f64;
        println!(
            "  HNSW ef_search {ef:3}: {hnsw_ms} ({:.1}x exact by wall clock), recall@10 {:.4}, recall@100 {:.4}",
            exact_ms.wall / hnsw_ms.wall,
            hit10 as f64 / (10.0 * nq),
            hit100 as f64 / (100.0 * nq)
        );
    }
}

fn shared_dir() -> PathBuf {
    std::env::var_os("PARAGRAF_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    )
}

/// Median milliseconds of `runs` calls of `f`.
fn median_ms<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    percentile(&times, 0.5)
}

fn load_bgb() {
    let xml = shared_dir().join("corpus/BGB.xml");
    if !xml.exists() {
        println!("== loading: skipped ({} missing)", xml.display());
        return;
    }
    let law = paragraf_corpus::parse_file(&xml).unwrap();
    let bytes = LawBundle::new("bench", law.clone()).to_bytes();
    let without_index = postcard::to_allocvec(&(String::from("bench"), &law))
        .unwrap()
        .len();
    let payload = paragraf_engine::bundle::LAW_BUNDLE
        .payload(&bytes)
        .unwrap()
        .len();
    println!(
        "== Opening the BGB ({} sections): law bundle {} bytes ({payload} inflated), of which the prebuilt index {} (median of 5)",
        law.sections.len(),
        bytes.len(),
        payload - without_index
    );
    let built = median_ms(5, || LawIndex::new(law.clone()));
    let prebuilt = median_ms(5, || {
        LawIndex::from_bundle(LawBundle::from_bytes(&bytes).unwrap())
    });
    let decoded = median_ms(5, || LawBundle::from_bytes(&bytes).unwrap());
    println!(
        "  LawIndex with its index built from the text {built:.1} ms; from the bundle {prebuilt:.1} ms (decoding and checking the bundle alone: {decoded:.1} ms)"
    );
    let designations: Vec<&str> = law
        .sections
        .iter()
        .map(|s| s.designation.as_str())
        .collect();
    let one_by_one = median_ms(5, || {
        designations
            .iter()
            .filter_map(|d| law.find_section(d))
            .count()
    });
    let table = median_ms(5, || {
        let lookup = law.section_lookup();
        designations.iter().filter_map(|d| lookup.find(d)).count()
    });
    println!(
        "  {} designations found one by one {one_by_one:.1} ms, through one table {table:.1} ms",
        designations.len()
    );
}

fn bm25_bgb() {
    let (xml, dev) = (
        shared_dir().join("corpus/BGB.xml"),
        shared_dir().join("eval/gerlayqa/bgb_dev.json"),
    );
    if !xml.exists() || !dev.exists() {
        println!(
            "== BM25: skipped ({} or {} missing)",
            xml.display(),
            dev.display()
        );
        return;
    }
    let law = paragraf_corpus::parse_file(&xml).unwrap();
    let docs: Vec<String> = law
        .active_sections()
        .map(|(_, s)| format!("{} {}\n{}", s.designation, s.title, s.text))
        .collect();
    let questions: Vec<Question> =
        serde_json::from_str(&std::fs::read_to_string(dev).unwrap()).unwrap();
    let texts: Vec<String> = questions.iter().map(Question::text).collect();
    println!(
        "== BM25 over {} BGB sections, {} dev questions",
        docs.len(),
        texts.len()
    );
    for (name, config) in [
        ("plain", AnalyzerConfig::PLAIN),
        ("fold+decompound", AnalyzerConfig::default()),
    ] {
        let start = Instant::now();
        let index = Bm25Index::build(&docs, config, Bm25Params::default());
        let build = start.elapsed().as_secs_f64();
        let mut times: Vec<f64> = texts
            .iter()
            .map(|t| {
                let start = Instant::now();
                black_box(index.search(t, DEFAULT_SECTION_K));
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "  {name:16} build {build:.2} s, {} terms, {} KiB postings; query mean {mean:.3} ms, p50 {:.3}, p95 {:.3}",
            index.num_terms(),
            index.postings_bytes() / 1024,
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, so keep it to one quick pass then.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--bench") {
        // `cargo bench -p paragraf-engine -- hnsw` runs only the parts whose name contains `hnsw`.
        let filter = args.iter().find(|a| !a.starts_with('-'));
        let parts: [(&str, fn()); 4] = [
            ("exact", subsection_sized),
            ("hnsw", fixed_16_4_sized),
            ("bm25", bm25_bgb),
            ("load", load_bgb),
        ];
        for (name, part) in parts {
            if filter.is_none_or(|f| name.contains(f.as_str())) {
                part();
            }
        }
    } else {
        println!("search benchmark: run with `cargo bench -p paragraf-engine`");
    }
}
