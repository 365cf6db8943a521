//! Chunking strategies on the real BGB and a full 21-strategy build of a small real law with the real encoder.

use crate::util::{run, run_ok, shared, temp_dir};
use paragraf_build::chunk;
use paragraf_core::bundle::{LawBundle, StrategyBundle, VectorStore};
use paragraf_core::engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_core::strategy::{BaseUnit, Strategy};
use paragraf_core::Law;
use paragraf_embed::{EmbeddingBackend, TextKind};
use std::sync::OnceLock;

fn bgb() -> &'static Law {
    static BGB: OnceLock<Law> = OnceLock::new();
    BGB.get_or_init(|| paragraf_corpus::parse_file(&shared("corpus/BGB.xml")).expect("parse BGB"))
}

fn units_of(chunks: &[chunk::Chunk], law: &Law, designation: &str) -> Vec<String> {
    let index = law.find_section(designation).unwrap() as u32;
    chunks
        .iter()
        .filter(|c| c.sections == [index])
        .map(|c| c.embed_text.clone())
        .collect()
}

#[test]
fn bgb_535_gives_two_subsections_and_four_sentences() {
    let law = bgb();
    let subsections = units_of(&chunk::subsections(law), law, "§ 535");
    assert_eq!(subsections.len(), 2);
    assert!(
        subsections[1].starts_with("Der Mieter ist verpflichtet"),
        "{subsections:?}"
    );
    assert_eq!(units_of(&chunk::sentences(law), law, "§ 535").len(), 4);
    let sections = units_of(&chunk::sections(law), law, "§ 535");
    assert!(sections[0].starts_with(
        "§ 535 Inhalt und Hauptpflichten des Mietvertrags\n(1) Durch den Mietvertrag"
    ));
    // § 433 (1) S1 is the paper's proposition example: two propositions
    let propositions = units_of(&chunk::base_units(law, BaseUnit::Proposition), law, "§ 433");
    assert_eq!(propositions.len(), 5, "{propositions:#?}");
}

#[test]
fn every_unit_maps_to_an_active_section() {
    let law = bgb();
    for base in BaseUnit::ALL {
        let chunks = chunk::base_units(law, base);
        assert!(chunks.len() > 4000, "{base:?}: {}", chunks.len());
        for c in &chunks {
            assert!(!c.sections.is_empty() && !c.embed_text.trim().is_empty());
            for &s in &c.sections {
                assert!(!law.sections[s as usize].repealed);
            }
            for p in &c.pieces {
                assert!(law.sections[p.section as usize]
                    .text
                    .get(p.span.range())
                    .is_some());
            }
        }
    }
    let contextual = chunk::contextual(law, chunk::sentences(law), chunk::builtin_context);
    let s535 = law.find_section("§ 535").unwrap() as u32;
    let first = contextual.iter().find(|c| c.sections == [s535]).unwrap();
    assert!(
        first.embed_text.starts_with("BGB Recht der Schuldverhältnisse > Einzelne Schuldverhältnisse > Mietvertrag, Pachtvertrag > Allgemeine Vorschriften für Mietverhältnisse > § 535 Inhalt und Hauptpflichten des Mietvertrags, Absatz 1:\nDurch den Mietvertrag"),
        "{}",
        first.embed_text
    );
}

#[test]
fn fixed_windows_follow_the_formula_and_cross_sections() {
    let law = bgb();
    let encoder = crate::util::encoder();
    let tokenizer = encoder.tokenizer();
    let total: usize = law
        .active_sections()
        .map(|(_, s)| {
            s.text
                .split_whitespace()
                .map(|w| tokenizer.encode(w).len())
                .sum::<usize>()
        })
        .sum();
    eprintln!("BGB token stream: {total} tokens");
    for (size, overlap) in [(256, 64), (64, 16)] {
        let windows = chunk::fixed_windows(law, tokenizer, size, overlap);
        assert_eq!(
            windows.len(),
            chunk::window_count(total, size, overlap),
            "fixed-{size}-{overlap}"
        );
        assert!(
            windows.iter().any(|w| w.sections.len() > 1),
            "windows cross section boundaries"
        );
        let first_tokens = tokenizer.encode(&windows[0].embed_text).len();
        assert!(
            (size - 8..=size + 8).contains(&first_tokens),
            "window 0 has {first_tokens} tokens"
        );
    }
}

/// The first `norms` norms of the GG as a small, real law.
fn small_law(dir: &std::path::Path, norms: usize) -> std::path::PathBuf {
    let xml = std::fs::read_to_string(shared("corpus/GG.xml")).unwrap();
    let parts: Vec<&str> = xml.split("<norm ").collect();
    let kept = parts[..=norms].join("<norm ");
    let path = dir.join("GG.xml");
    std::fs::write(&path, format!("{kept}</dokumente>")).unwrap();
    path
}

#[test]
fn builds_all_21_strategies_of_a_small_law() {
    let dir = temp_dir();
    let xml = small_law(dir.path(), 30);
    let out = dir.path().join("bundles");
    let model = crate::util::model_path();
    let stdout = run_ok(&[
        "build",
        "--law",
        xml.to_str().unwrap(),
        "--strategies",
        "all",
        "--out",
        out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--clusters",
        "12",
        "--raptor-branching",
        "4",
        "--hnsw-min-units",
        "60",
    ]);
    assert!(stdout.contains("embedded "), "{stdout}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let law_file = manifest["laws"][0]["file"].as_str().unwrap();
    let law_bytes = std::fs::read(out.join(law_file)).unwrap();
    let law = LawBundle::from_bytes(&law_bytes).unwrap().law;
    assert_eq!(
        law,
        paragraf_corpus::parse_file(&xml).unwrap(),
        "law bundle round-trips losslessly"
    );
    let law_index = LawIndex::new(law.clone());
    let bundles = manifest["bundles"].as_array().unwrap();
    assert_eq!(bundles.len(), 21);
    for entry in bundles {
        let name = entry["strategy"].as_str().unwrap();
        let strategy: Strategy = name.parse().unwrap();
        let bytes = std::fs::read(out.join(entry["file"].as_str().unwrap())).unwrap();
        assert_eq!(bytes.len() as u64, entry["bytes"].as_u64().unwrap());
        let bundle = StrategyBundle::from_bytes(&bytes).unwrap();
        assert_eq!(bundle.units.len(), bundle.vectors.len(), "{name}");
        assert!(matches!(bundle.vectors, VectorStore::Int8(_)));
        for unit in &bundle.units {
            assert!(!unit.sections.is_empty(), "{name}");
            assert!(
                unit.sections
                    .iter()
                    .all(|&s| !law.sections[s as usize].repealed),
                "{name}"
            );
        }
        match strategy {
            Strategy::Cluster(_) => assert!(
                bundle.units.len() <= 12,
                "{name}: {} clusters",
                bundle.units.len()
            ),
            Strategy::Raptor(_) => {
                let tree = bundle.raptor.as_ref().expect("raptor tree");
                assert!(!tree.roots.is_empty() && tree.roots.len() <= 4);
                assert_eq!(tree.nodes.len(), tree.vectors.len());
            }
            _ => assert!(bundle.raptor.is_none()),
        }
        let expect_graph = bundle.raptor.is_none() && bundle.units.len() >= 60;
        assert_eq!(
            bundle.hnsw.is_some(),
            expect_graph,
            "{name}: {} units",
            bundle.units.len()
        );
        assert_eq!(entry["hnsw"].as_bool(), Some(expect_graph));
        // every bundle answers a query through the same engine the browser uses
        let index = StrategyIndex::new(bundle, &law).unwrap();
        let query = crate::util::encoder()
            .embed(&["Menschenwürde"], TextKind::Query)
            .unwrap()
            .remove(0);
        for unit_search in [UnitSearch::Exact, UnitSearch::Hnsw] {
            let options = SearchOptions {
                mode: Mode::Dense,
                unit_search,
                ..SearchOptions::default()
            };
            let hits = search(
                &law_index,
                Some(&index),
                "Menschenwürde",
                Some(&query),
                &options,
            )
            .unwrap();
            assert!(!hits.is_empty(), "{name}");
        }
    }
    // a second build reuses everything and lists the same files
    run_ok(&[
        "build",
        "--law",
        xml.to_str().unwrap(),
        "--strategies",
        "section",
        "--out",
        out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    let again: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        again["bundles"].as_array().unwrap().len(),
        21,
        "other strategies survive a partial rebuild"
    );
    assert_eq!(again["bundles"][0]["file"], manifest["bundles"][0]["file"]);
}

#[test]
fn unknown_strategies_and_corrupt_manifests_are_explained() {
    let dir = temp_dir();
    let out = run(&[
        "build",
        "--strategies",
        "section,paragraphs",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("unknown strategy \"paragraphs\"; the strategies are: section, subsection"));
    std::fs::write(dir.path().join("manifest.json"), "{ not json").unwrap();
    let xml = small_law(dir.path(), 3);
    let model = crate::util::model_path();
    let out = run(&[
        "build",
        "--law",
        xml.to_str().unwrap(),
        "--strategies",
        "section",
        "--out",
        dir.path().to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("not a Paragraf manifest"), "{stderr}");
}
