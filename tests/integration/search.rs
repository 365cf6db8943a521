//! Search over the real BGB: the German BM25 against the reference figures on the GerLayQA dev split.
//!
//! The reference (an independent Python implementation: lowercase, split on non-alphanumerics keeping `573b`,
//! German stopwords, Snowball German, k1 = 1.2, b = 0.75, over sections as `§ N Titel` + newline + text) gets
//! Recall@10 = 0.123 and MRR@10 = 0.085 on the dev split; the plain analyzer must land within ±0.015 of both.
//! The folding / decompounding variants are measured and printed for comparison. HNSW recall is checked on
//! text-like vectors of the real BGB sentences.

use crate::util::{shared, shared_dir};
use paragraf_core::analyzer::{Analyzer, AnalyzerConfig};
use paragraf_core::eval::metrics::{mean, recall_at, reciprocal_rank_at};
use paragraf_core::eval::Question;
use paragraf_core::rng::SplitMix64;
use paragraf_core::search::bm25::{Bm25Index, Bm25Params};
use paragraf_core::search::citation::cited_sections;
use paragraf_core::search::exact::{self, QueryPrecision};
use paragraf_core::search::hnsw;
use paragraf_core::vectors::Int8Vectors;
use paragraf_core::Law;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

fn bgb() -> &'static Law {
    static BGB: OnceLock<Law> = OnceLock::new();
    BGB.get_or_init(|| paragraf_corpus::parse_file(&shared("corpus/BGB.xml")).expect("parse BGB"))
}

const DEV: &str = "eval/gerlayqa/bgb_dev.json";

/// The dev questions, or `None` (with a message) when the dataset is not there.
fn dev_questions() -> Option<Vec<Question>> {
    let path = shared_dir().join(DEV);
    if !path.exists() {
        eprintln!(
            "skipping: {} is missing (set PARAGRAF_SHARED)",
            path.display()
        );
        return None;
    }
    let json = std::fs::read_to_string(&path).expect("read dev questions");
    Some(serde_json::from_str(&json).expect("parse dev questions"))
}

/// Recall@10 and MRR@10 of BM25 over the BGB's active sections, plus the number of gold ids missing.
fn evaluate(law: &Law, questions: &[Question], analyzer: AnalyzerConfig) -> (f64, f64, usize) {
    let sections: Vec<usize> = law.active_sections().map(|(i, _)| i).collect();
    let docs: Vec<String> = sections
        .iter()
        .map(|&i| {
            let s = &law.sections[i];
            format!("{} {}\n{}", s.designation, s.title, s.text)
        })
        .collect();
    let index = Bm25Index::build(&docs, analyzer, Bm25Params::default());
    let mut missing = 0;
    let mut recalls = Vec::new();
    let mut rrs = Vec::new();
    for q in questions {
        // Gold as positions in `sections`; a gold id not in the corpus gets an id no ranking holds.
        let gold: Vec<u32> = q
            .paragraphs
            .iter()
            .map(|p| {
                law.sections
                    .iter()
                    .position(|s| !s.repealed && s.designation == *p)
                    .and_then(|i| sections.iter().position(|&s| s == i))
                    .map_or_else(
                        || {
                            missing += 1;
                            u32::MAX - missing as u32
                        },
                        |i| i as u32,
                    )
            })
            .collect();
        let ranking: Vec<u32> = index
            .search(&q.text(), 10)
            .iter()
            .map(|h| h.index)
            .collect();
        recalls.push(recall_at(&ranking, &gold, 10));
        rrs.push(reciprocal_rank_at(&ranking, &gold, 10));
    }
    (mean(recalls).unwrap(), mean(rrs).unwrap(), missing)
}

#[test]
fn bm25_over_bgb_sections_matches_the_reference_on_dev() {
    let Some(questions) = dev_questions() else {
        return;
    };
    let law = bgb();
    let variants = [
        ("plain", AnalyzerConfig::PLAIN),
        (
            "fold",
            AnalyzerConfig {
                fold_umlauts: true,
                decompound: false,
            },
        ),
        (
            "decompound",
            AnalyzerConfig {
                fold_umlauts: false,
                decompound: true,
            },
        ),
        ("fold+decompound", AnalyzerConfig::default()),
    ];
    let mut plain = None;
    for (name, config) in variants {
        let (r10, mrr, missing) = evaluate(law, &questions, config);
        eprintln!(
            "BM25 sections {name:16} R@10 = {r10:.4}  MRR@10 = {mrr:.4}  ({} questions, {missing} gold ids missing)",
            questions.len()
        );
        if name == "plain" {
            plain = Some((r10, mrr));
        }
    }
    let (r10, mrr) = plain.unwrap();
    assert!(
        (r10 - 0.123).abs() <= 0.015,
        "plain BM25 R@10 {r10:.4} outside 0.123 ± 0.015"
    );
    assert!(
        (mrr - 0.085).abs() <= 0.015,
        "plain BM25 MRR@10 {mrr:.4} outside 0.085 ± 0.015"
    );
}

#[test]
fn citation_queries_resolve_to_bgb_sections() {
    let law = bgb();
    let designations = |query: &str| -> Vec<&str> {
        cited_sections(query, law)
            .into_iter()
            .map(|i| law.sections[i].designation.as_str())
            .collect()
    };
    assert_eq!(designations("§ 535"), ["§ 535"]);
    assert_eq!(designations("535 BGB"), ["§ 535"]);
    assert_eq!(designations("Was regelt § 573b BGB?"), ["§ 573b"]);
    assert_eq!(designations("§ 433 Abs. 1"), ["§ 433"]);
    assert_eq!(designations("§§ 535 ff."), ["§ 535", "§ 536", "§ 536a"]);
    assert_eq!(
        designations("§§ 437 bis 441"),
        ["§ 437", "§ 438", "§ 439", "§ 440", "§ 441"]
    );
    assert!(designations("§ 15a InsO").is_empty());
    assert!(designations("Art. 1 GG").is_empty());
}

/// Text-like vectors from the real BGB without the encoder: TF-IDF over the analyzer's terms, projected to
/// 384 dimensions with a seeded Gaussian matrix (Johnson–Lindenstrauss keeps the cosine structure), normalised.
struct Projector {
    vocabulary: HashMap<String, (usize, f32)>,
    seed: u64,
}

impl Projector {
    const DIM: usize = 384;

    fn new(units: &[String], seed: u64) -> Self {
        let analyzer = Analyzer::new(AnalyzerConfig::PLAIN);
        let mut df: HashMap<String, u32> = HashMap::new();
        for unit in units {
            let terms: HashSet<String> = analyzer.terms(unit, None).into_iter().collect();
            for t in terms {
                *df.entry(t).or_insert(0) += 1;
            }
        }
        let mut terms: Vec<(String, u32)> = df.into_iter().collect();
        terms.sort();
        let n = units.len() as f32;
        let vocabulary = terms
            .into_iter()
            .enumerate()
            .map(|(i, (t, df))| (t, (i, (n / df as f32).ln())))
            .collect();
        Self { vocabulary, seed }
    }

    fn project(&self, text: &str) -> Vec<f32> {
        let mut tf: HashMap<usize, (u32, f32)> = HashMap::new();
        for term in Analyzer::new(AnalyzerConfig::PLAIN).terms(text, None) {
            if let Some(&(id, idf)) = self.vocabulary.get(&term) {
                tf.entry(id).or_insert((0, idf)).0 += 1;
            }
        }
        let mut v = vec![0f32; Self::DIM];
        let mut ids: Vec<_> = tf.into_iter().collect();
        ids.sort_by_key(|&(id, _)| id);
        for (id, (count, idf)) in ids {
            let mut rng =
                SplitMix64::new(self.seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let weight = (1.0 + (count as f32).ln()) * idf;
            for x in v.iter_mut() {
                *x += weight * rng.normal() as f32;
            }
        }
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

#[test]
fn hnsw_recall_on_bgb_sentence_vectors() {
    let Some(questions) = dev_questions() else {
        return;
    };
    let law = bgb();
    let units: Vec<String> = law
        .active_sections()
        .flat_map(|(_, s)| (0..s.sentences.len()).map(move |i| s.sentence_text(i).to_string()))
        .collect();
    let projector = Projector::new(&units, 7);
    let rows: Vec<Vec<f32>> = units.iter().map(|u| projector.project(u)).collect();
    let vectors = Int8Vectors::from_f32_rows(Projector::DIM as u32, &rows).unwrap();
    let seed = hnsw::DEFAULT_SEED;
    let graph = hnsw::Builder::default().seed(seed).build(&vectors);
    let queries: Vec<Vec<f32>> = questions
        .iter()
        .take(300)
        .map(|q| projector.project(&q.text()))
        .collect();
    let (mut hits10, mut hits100) = (0, 0);
    for q in &queries {
        let truth = exact::search(&vectors, q, 100, QueryPrecision::Int8).unwrap();
        let found = graph.search(&vectors, q, 100).unwrap();
        let truth10: Vec<u32> = truth[..10].iter().map(|h| h.index).collect();
        let truth100: Vec<u32> = truth.iter().map(|h| h.index).collect();
        hits10 += found[..10]
            .iter()
            .filter(|h| truth10.contains(&h.index))
            .count();
        hits100 += found.iter().filter(|h| truth100.contains(&h.index)).count();
    }
    let recall10 = hits10 as f64 / (10 * queries.len()) as f64;
    let recall100 = hits100 as f64 / (100 * queries.len()) as f64;
    eprintln!(
        "HNSW over {} BGB sentence vectors (TF-IDF projected to {}): recall@10 {recall10:.4}, recall@100 {recall100:.4} vs exact, {} dev questions, seed {seed:#x}",
        units.len(),
        Projector::DIM,
        queries.len()
    );
    assert!(recall10 >= 0.98, "recall@10 {recall10}");
}

#[test]
fn decompounding_against_the_bgb_lexicon() {
    let law = bgb();
    let docs: Vec<String> = law
        .active_sections()
        .map(|(_, s)| format!("{} {}\n{}", s.designation, s.title, s.text))
        .collect();
    let index = Bm25Index::build(&docs, AnalyzerConfig::default(), Bm25Params::default());
    for (word, parts) in [
        ("Mietminderung", &["miet", "minder"][..]),
        ("Nachbesserungsfrist", &["nachbesser", "frist"][..]),
        ("Maengelanzeige", &["mangel", "anzeig"][..]),
        ("Mieterhöhung", &["miet", "erhoh"][..]),
        ("Wohnungseigentümer", &["wohnung", "eigentum"][..]),
        ("Kündigungsfrist", &["kundig", "frist"][..]),
    ] {
        let terms = index.query_terms(word);
        for part in parts {
            assert!(
                terms.iter().any(|t| t == part),
                "{word}: {terms:?} lacks {part}"
            );
        }
    }
    // The compound and the phrase now find the same section first.
    let compound = index.search("Mietminderung wegen Mängeln", 1)[0].index as usize;
    let phrase = index.search("Minderung der Miete wegen Mängeln", 1)[0].index as usize;
    let designation = |i: usize| &law.sections[law.active_sections().nth(i).unwrap().0].designation;
    assert_eq!(designation(compound), designation(phrase));
}
