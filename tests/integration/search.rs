//! Search over the real BGB: the German BM25 against the reference figures on the GerLayQA dev split.
//!
//! The reference (an independent Python implementation: lowercase, split on non-alphanumerics keeping `573b`,
//! German stopwords, Snowball German, k1 = 1.2, b = 0.75, over sections as `§ N Titel` + newline + text) gets
//! Recall@10 = 0.123 and MRR@10 = 0.085 on the dev split; the plain analyzer must land within ±0.015 of both.
//! The folding / decompounding variants are measured and printed for comparison. HNSW recall is checked on
//! the real BGB `fixed-16-4` bundle with real question vectors.

use crate::util::{build_args, encoder, gg_bundles, run, run_ok, shared, temp_dir};
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_eval::Question;
use paragraf_index::bm25::{Bm25Index, Bm25Params};
use paragraf_index::citation::cited_sections;
use paragraf_index::exact::{self, QueryPrecision};
use paragraf_index::vectors::VectorStore;
use paragraf_law::analyzer::AnalyzerConfig;
use paragraf_law::Law;
use paragraf_stats::metrics::{mean, recall_at, reciprocal_rank_at};
use std::sync::OnceLock;

fn bgb() -> &'static Law {
    static BGB: OnceLock<Law> = OnceLock::new();
    BGB.get_or_init(|| paragraf_corpus::parse_file(&shared("corpus/BGB.xml")).expect("parse BGB"))
}

const DEV: &str = "eval/gerlayqa/bgb_dev.json";

/// The dev questions (research licence: read from the shared folder, never copied into the repository).
fn dev_questions() -> Vec<Question> {
    let path = shared(DEV);
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the GerLayQA dev questions {}: {e} (set PARAGRAF_SHARED to the shared data folder)",
            path.display()
        )
    });
    serde_json::from_str(&json).expect("parse dev questions")
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
    let questions = dev_questions();
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

/// HNSW against exact search on real vectors: the BGB's largest strategy, `fixed-16-4`, over its first 300 norms
/// (~2k windows; the whole BGB's ~27k take half an hour to embed in a test build, and the graph's recall at scale
/// is `paragraf-index`'s unit test, `crates/index/src/hnsw.rs`), built by the CLI with the real encoder and a graph from 1,000 units on, queried with
/// real e5 vectors of dev questions. Checks units (the graph itself) and the top-10 sections the user sees.
#[test]
fn hnsw_recall_on_the_bgb_fixed_16_4_bundle() {
    let dir = temp_dir();
    let out = dir.path().join("bundles");
    let bgb_xml = crate::util::law_prefix(dir.path(), "BGB", 300);
    let mut args = build_args(&bgb_xml, "fixed-16-4", &out);
    args.extend(["--hnsw-min-units", "1000"].map(String::from));
    run_ok(&args);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let file = |key: &str| out.join(manifest[key][0]["file"].as_str().unwrap());
    let law = LawBundle::from_bytes(&std::fs::read(file("laws")).unwrap())
        .unwrap()
        .law;
    let bundle = StrategyBundle::from_bytes(&std::fs::read(file("bundles")).unwrap()).unwrap();
    let graph = bundle
        .hnsw
        .clone()
        .expect("the BGB fixed-16-4 bundle carries an HNSW graph");
    let VectorStore::Int8(vectors) = &bundle.vectors else {
        panic!("int8 vectors by default")
    };
    let units = vectors.len();
    let law_index = LawIndex::new(law);
    let index = StrategyIndex::new(bundle.clone(), &law_index.law).unwrap();

    let texts: Vec<String> = dev_questions()
        .iter()
        .take(100)
        .map(Question::text)
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let queries = encoder().embed(&refs, TextKind::Query).unwrap();
    let (mut unit_hits, mut section_hits, mut section_total) = (0, 0, 0);
    let mut routed_differently = 0;
    for q in &queries {
        // The engine's HNSW route is the graph's answer, which is not always the exact one.
        let hnsw_options = SearchOptions {
            unit_search: UnitSearch::Hnsw,
            ..SearchOptions::default()
        };
        let engine_units = index.unit_hits(q, &hnsw_options).unwrap();
        assert_eq!(engine_units, graph.search(vectors, q, 100).unwrap());
        let exact_units = index.unit_hits(q, &SearchOptions::default()).unwrap();
        routed_differently += usize::from(engine_units != exact_units);
        let truth: Vec<u32> = exact::search(vectors, q, 10, QueryPrecision::Int8)
            .unwrap()
            .iter()
            .map(|h| h.index)
            .collect();
        let found = graph.search(vectors, q, 10).unwrap();
        unit_hits += found.iter().filter(|h| truth.contains(&h.index)).count();
        let sections = |unit_search| {
            let options = SearchOptions {
                mode: Mode::Dense,
                unit_search,
                ..SearchOptions::default()
            };
            search(&law_index, Some(&index), "", Some(q), &options)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.section)
                .collect::<Vec<u32>>()
        };
        let (exact_top, hnsw_top) = (sections(UnitSearch::Exact), sections(UnitSearch::Hnsw));
        section_total += exact_top.len();
        section_hits += hnsw_top.iter().filter(|s| exact_top.contains(s)).count();
    }
    let unit_recall = unit_hits as f64 / (10 * queries.len()) as f64;
    let section_recall = section_hits as f64 / section_total as f64;
    let settings = graph.settings();
    eprintln!(
        "HNSW on the BGB fixed-16-4 bundle of its first 300 norms ({units} units, {} dev questions, seed {:#x}, {settings:?}): \
         unit recall@10 {unit_recall:.4}, section recall@10 {section_recall:.4} vs exact",
        queries.len(),
        graph.seed()
    );
    assert!(units > 1_500, "{units} units");
    assert!(
        routed_differently > 0,
        "HNSW search gave exactly the exact result for every question: is the graph used?"
    );
    assert!(unit_recall >= 0.98, "unit recall@10 {unit_recall}");
    assert!(section_recall >= 0.98, "section recall@10 {section_recall}");
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

/// `paragraf eval` end to end on a small real law: hand-written questions about the first 40 GG norms (one with an
/// HTML entity, one whose gold article does not exist), the bundles the browser tests use, the real encoder.
#[test]
fn eval_cli_reports_metrics_charts_and_missing_gold() {
    let bundles = gg_bundles();
    let dir = temp_dir();
    let questions = dir.path().join("questions.json");
    std::fs::write(
        &questions,
        serde_json::json!([
            {"Question_text": "Darf der Staat die W&uuml;rde des Menschen antasten?", "Paragraphs": ["Art 1"]},
            {"Question_text": "Darf die Zeitung frei berichten, gibt es Zensur?", "Paragraphs": ["Art 5"]},
            {"Question_text": "Darf ich mich mit anderen friedlich und ohne Waffen versammeln?", "Paragraphs": ["Art 8"]},
            {"Question_text": "Wer schützt Ehe und Familie?", "Paragraphs": ["Art 6", "Art 999"]}
        ])
        .to_string(),
    )
    .unwrap();
    let out = dir.path().join("report");
    let model = crate::util::model_path();
    let stdout = run_ok(&[
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        bundles.to_str().unwrap(),
        "--strategies",
        "section,sentence",
        "--runs",
        "1",
        "--rounds",
        "200",
        "--out",
        out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    assert!(stdout.contains("4 questions"), "{stdout}");
    assert!(stdout.contains("1 gold ids not in the corpus"), "{stdout}");
    assert!(
        stdout.contains("The paper reports 2.0–16.1 ms per query"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["gold_missing"], serde_json::json!(["Art 999"]));
    let rows = report["rows"].as_array().unwrap();
    let modes: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["strategy"].as_str().unwrap(),
                r["mode"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            "sections bm25",
            "section dense",
            "section hybrid",
            "sentence dense",
            "sentence hybrid"
        ]
    );
    let recall10 = |row: &serde_json::Value| {
        row["recall"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0] == 10)
            .unwrap()[1]
            .as_f64()
            .unwrap()
    };
    for row in rows {
        assert!((0.0..=1.0).contains(&recall10(row)), "{row}");
    }
    // Easy questions about a 40-norm law; the best possible mean Recall@10 is 0.875 (Art 999 does not exist).
    assert!(recall10(&rows[2]) >= 0.5, "{}", rows[2]);
    // Per-question Recall@10, one column per run, for comparisons across bundle folders.
    let tsv = std::fs::read_to_string(out.join("recall10.tsv")).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines.len(), 5, "header + 4 questions: {tsv}");
    assert_eq!(lines[0].split('\t').collect::<Vec<_>>(), modes, "{tsv}");
    assert_eq!(lines[1].split('\t').count(), 5, "{tsv}");
    for chart in ["recall10.svg", "latency.svg", "size.svg", "build_time.svg"] {
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("section"),
            "{chart}"
        );
    }

    // The same run against itself as the baseline: every run paired with `section` of its mode.
    let again = dir.path().join("again");
    run_ok(&[
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        bundles.to_str().unwrap(),
        "--strategies",
        "section",
        "--modes",
        "dense",
        "--runs",
        "1",
        "--rounds",
        "200",
        "--out",
        again.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--baseline",
        out.join("recall10.tsv").to_str().unwrap(),
    ]);
    let baseline = std::fs::read_to_string(again.join("baseline.md")).unwrap();
    let row = baseline
        .lines()
        .find(|l| l.starts_with("| section dense |"))
        .unwrap_or_else(|| panic!("{baseline}"));
    assert!(
        row.contains("| section dense | ") && row.contains("| +0.0000 | 0 / 0 | 1.0000 |"),
        "{baseline}"
    );

    // Query expansion by cross-validation: every mode, the weight chosen per fold, the changed questions listed.
    let lay = dir.path().join("lay.json");
    std::fs::write(
        &lay,
        serde_json::json!([
            {"Question_text": "Was darf die Kirche?", "Paragraphs": ["Art 4"]},
            {"Question_text": "Ist meine Heirat geschützt?", "Paragraphs": ["Art 6"]},
            {"Question_text": "Darf die Zeitung frei berichten?", "Paragraphs": ["Art 5"]},
            {"Question_text": "Darf ich mich friedlich versammeln?", "Paragraphs": ["Art 8"]}
        ])
        .to_string(),
    )
    .unwrap();
    let cv_out = dir.path().join("cv");
    let stdout = run_ok(&[
        "eval",
        "--questions",
        lay.to_str().unwrap(),
        "--bundles",
        bundles.to_str().unwrap(),
        "--strategies",
        "section",
        "--expansion-weight",
        "0,0.5,1",
        "--folds",
        "2",
        "--rounds",
        "200",
        "--out",
        cv_out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    let cv = std::fs::read_to_string(cv_out.join("expansion-cv.md")).unwrap();
    assert!(stdout.contains(&cv), "the report is printed too");
    assert!(
        cv.starts_with("# Query expansion, 2-fold cross-validation (seed 42), 4 questions"),
        "{cv}"
    );
    assert!(cv.contains("| run | mode | W=0 | W=0.5 | W=1 |"), "{cv}");
    for run in [
        "| sections | bm25 |",
        "| section | dense |",
        "| section | hybrid |",
    ] {
        assert_eq!(cv.matches(run).count(), 2, "{run} in both tables: {cv}");
    }
    // `Kirche` is not in these articles, its synonyms are: BM25 finds Art. 4 only with expansion.
    let bm25_row: Vec<f64> = cv
        .lines()
        .find(|l| l.starts_with("| sections | bm25 |"))
        .unwrap()
        .split('|')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    assert_eq!(bm25_row.len(), 3, "{cv}");
    assert!(bm25_row[1] > bm25_row[0], "expansion helps BM25 here: {cv}");
    // The dense weight of hybrid fusion, the same way: baseline equal weights (W=1, the --bm25-weight).
    let fusion_out = dir.path().join("fusion");
    run_ok(&[
        "eval",
        "--questions",
        lay.to_str().unwrap(),
        "--bundles",
        bundles.to_str().unwrap(),
        "--strategies",
        "section",
        "--modes",
        "hybrid",
        "--dense-weight",
        "0,1,4",
        "--folds",
        "2",
        "--rounds",
        "200",
        "--out",
        fusion_out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    let cv = std::fs::read_to_string(fusion_out.join("fusion-cv.md")).unwrap();
    assert!(
        cv.starts_with(
            "# Hybrid fusion, dense weight, 2-fold cross-validation (seed 42), 4 questions"
        ),
        "{cv}"
    );
    assert!(cv.contains("| run | mode | W=0 | W=1 | W=4 |"), "{cv}");
    assert!(cv.contains("| R@10 at W=1 [95% CI] |"), "{cv}");
    // Only hybrid runs, in both tables.
    assert_eq!(cv.matches("| section | hybrid |").count(), 2, "{cv}");
    assert_eq!(cv.matches("| sections | bm25 |").count(), 0, "{cv}");

    // Bad input is explained on one line with its causes, and exits 2 (fix the input or the invocation).
    let failure = |extra: &[&str]| {
        let mut args = vec!["eval"];
        args.extend_from_slice(extra);
        let failed = run(&args);
        let err = String::from_utf8_lossy(&failed.stderr).into_owned();
        assert!(
            err.starts_with("error: ") && !err.contains("Caused by"),
            "{err}"
        );
        (failed.status.code(), err)
    };
    // Refused with exit 2 and `expected` in the message, on the fixture's questions and bundles plus `extra`.
    let refused = |extra: &[&str], expected: &str| {
        let mut all = vec![
            "--questions",
            questions.to_str().unwrap(),
            "--bundles",
            bundles.to_str().unwrap(),
        ];
        all.extend_from_slice(extra);
        let (code, err) = failure(&all);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(expected), "{err}");
    };
    let with = |questions: &std::path::Path, bundles: &std::path::Path| {
        failure(&[
            "--questions",
            questions.to_str().unwrap(),
            "--bundles",
            bundles.to_str().unwrap(),
        ])
    };
    let none = dir.path().join("none.json");
    let (code, err) = with(&none, bundles);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("error: cannot read the questions {} (set --questions or PARAGRAF_QUESTIONS): No such file", none.display())),
        "{err}"
    );
    std::fs::write(dir.path().join("bad.json"), "{\"Question_text\": 1}").unwrap();
    let (code, err) = with(&dir.path().join("bad.json"), bundles);
    assert_eq!(code, Some(2), "{err}");
    // The context, then serde's cause after a colon (`{:#}`).
    assert!(
        err.contains("not GerLayQA JSON (expected [{\"Question_text\": ..., \"Paragraphs\": [...]}]): invalid type"),
        "{err}"
    );
    let (code, err) = with(&questions, &dir.path().join("no-such-folder"));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no-such-folder has no manifest.json with a law. Build bundles first"),
        "{err}"
    );
    let model = dir.path().join("no-model.e5");
    refused(
        &["--model", model.to_str().unwrap()],
        "neither a model name (e5, embeddinggemma",
    );
    refused(&["--model", model.to_str().unwrap()], "no-model.e5");
    // Another model than the bundles': refused, naming both.
    refused(&["--model", "embeddinggemma@256"], "the bundles were built with intfloat/multilingual-e5-small@q4 but --model names google/embeddinggemma-300m@256");
    refused(
        &["--expansion-weight", "0,-1"],
        "--expansion-weight -1: weights must be 0 or more",
    );
    refused(&["--dense-weight", "1,2"], "several --dense-weight values cross-validate hybrid fusion, which dense and BM25 runs do not use: pass --modes hybrid");
    refused(&["--dense-weight", "1,2", "--graph-weight", "0,1"], "cross-validate one thing at a time: several values for only one of --expansion-weight, --graph-weight, --dense-weight");
    refused(
        &["--browser-encoder", "--long-questions", "window-average"],
        "--browser-encoder cannot be combined with --long-questions window-average",
    );
    let failed = run(&["eval", "--title-weight", "0"]);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(2), "{err}");
    assert!(err.contains("--title-weight"), "{err}");
}

/// What a citation in a question marks in the app: exactly the Absatz or Satz cited, in its section's text; a whole
/// section, another law's citation or a unit that does not exist marks nothing.
#[test]
fn a_cited_absatz_or_satz_is_found_in_its_sections_text() {
    let law = bgb();
    let marked = |query: &str| -> Vec<(String, String)> {
        paragraf_core::cite::cited_units(law, query)
            .into_iter()
            .map(|(s, range)| {
                let section = &law.sections[s];
                (section.designation.clone(), section.text[range].to_string())
            })
            .collect()
    };
    assert_eq!(
        marked("§ 433 Abs. 1 S. 2 BGB"),
        [(
            "§ 433".to_string(),
            "Der Verkäufer hat dem Käufer die Sache frei von Sach- und Rechtsmängeln zu verschaffen.".to_string()
        )]
    );
    let absatz = marked("Was sagt § 551 Abs. 2 BGB zur Kaution?");
    assert_eq!(absatz.len(), 1, "{absatz:?}");
    assert!(
        absatz[0]
            .1
            .starts_with("(2) Ist als Sicherheit eine Geldsumme")
            && absatz[0].1.ends_with("Mietzahlungen fällig."),
        "{absatz:?}"
    );
    for nothing in [
        "§ 433 BGB",
        "§ 433 Abs. 9 BGB",
        "§ 433 Abs. 1 StGB",
        "Kaution zurück",
    ] {
        assert_eq!(marked(nothing), [], "{nothing}");
    }
}
