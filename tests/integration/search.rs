//! Search over the real BGB: the German BM25 against the reference figures on the GerLayQA dev split.
//!
//! The reference (an independent Python implementation: lowercase, split on non-alphanumerics keeping `573b`,
//! German stopwords, Snowball German, k1 = 1.2, b = 0.75, over sections as `§ N Titel` + newline + text) gets
//! Recall@10 = 0.123 and MRR@10 = 0.085 on the dev split; the plain analyzer must land within ±0.015 of both.
//! The folding / decompounding variants are measured and printed for comparison.

use crate::util::{shared, shared_dir};
use paragraf_core::analyzer::AnalyzerConfig;
use paragraf_core::eval::metrics::{mean, recall_at, reciprocal_rank_at};
use paragraf_core::eval::Question;
use paragraf_core::search::bm25::{Bm25Index, Bm25Params};
use paragraf_core::search::citation::cited_sections;
use paragraf_core::Law;
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
