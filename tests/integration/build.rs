//! Chunking strategies on the real BGB and a full 21-strategy build of a small real law with the real encoder.

use crate::util::{build_args, law_prefix, run, run_ok, shared, temp_dir};
use paragraf_bundler::chunk;
use paragraf_core::manifest::Listed;
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use paragraf_format::strategy::{BaseUnit, Strategy};
use paragraf_index::vectors::VectorStore;
use paragraf_law::Law;
use std::path::Path;
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

#[test]
fn builds_all_21_strategies_of_a_small_law() {
    let dir = temp_dir();
    let xml = law_prefix(dir.path(), "GG", 30);
    let out = dir.path().join("bundles");
    let mut args = build_args(&xml, "all", &out);
    args.extend(
        [
            "--clusters",
            "12",
            "--raptor-branching",
            "4",
            "--hnsw-min-units",
            "60",
        ]
        .map(String::from),
    );
    let stdout = run_ok(&args);
    assert!(stdout.contains("embedded "), "{stdout}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let law_file = manifest["laws"][0]["file"].as_str().unwrap();
    let law_bytes = std::fs::read(out.join(law_file)).unwrap();
    let law_bundle = LawBundle::from_bytes(&law_bytes).unwrap();
    let law = law_bundle.law.clone();
    assert_eq!(
        law,
        paragraf_corpus::parse_file(&xml).unwrap(),
        "law bundle round-trips losslessly"
    );
    let law_index = LawIndex::new(law.clone());
    // The bundle's prebuilt index is the one loading would build, and it is used.
    assert!(law_bundle.index.is_current());
    assert_eq!(LawIndex::from_bundle(law_bundle).bm25(), law_index.bm25());
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
            .unwrap()
            .hits;
            assert!(!hits.is_empty(), "{name}");
        }
    }
    let listing = run_ok(&["bundles", out.to_str().unwrap()]);
    assert!(listing.contains("21 strategy bundles"), "{listing}");
    assert!(listing.contains("raptor-proposition"), "{listing}");
    // a second build reuses everything and lists the same files
    run_ok(&build_args(&xml, "section", &out));
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
    let xml = law_prefix(dir.path(), "GG", 3);
    let out = run(&build_args(&xml, "section", dir.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("not a Paragraf manifest"), "{stderr}");
}

/// A minimal OpenAI-compatible chat endpoint on 127.0.0.1 that answers each prompt kind deterministically,
/// fails the first request with 503 (to exercise retries) and counts the requests it answered.
fn fake_llm() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answered = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = answered.clone();
    std::thread::spawn(move || {
        let mut seen = 0usize;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            seen += 1;
            if seen == 1 {
                let _ = stream.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            }
            let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let system = request["messages"][0]["content"].as_str().unwrap();
            let user = request["messages"][1]["content"].as_str().unwrap();
            let content = if system.starts_with("Zerlege") {
                let parts: Vec<String> =
                    user.split(" und ").map(|p| p.trim().to_string()).collect();
                serde_json::to_string(&parts).unwrap()
            } else if system.starts_with("Hier ist ein Paragraph") {
                "Kontext aus dem Modell:".to_string()
            } else if system.starts_with("Hier sind aufeinanderfolgende") {
                "0".to_string()
            } else {
                format!("Zusammenfassung von {} Zeichen", user.len())
            };
            let answer = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}", answer.len());
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    (url, answered)
}

#[test]
fn llm_generator_is_recorded_cached_and_resumable() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir();
    let xml = law_prefix(dir.path(), "GG", 8);
    let out = dir.path().join("bundles");
    let cache = dir.path().join("llm-cache");
    let (url, answered) = fake_llm();
    let mut args = build_args(
        &xml,
        "proposition,contextual-sentence,lumber-sentence,raptor-sentence",
        &out,
    );
    args.extend(
        [
            "--llm-url",
            &url,
            "--llm-model",
            "fake-model",
            "--llm-cache",
            cache.to_str().unwrap(),
            "--raptor-branching",
            "3",
        ]
        .map(String::from),
    );
    run_ok(&args);
    let first = answered.load(Ordering::SeqCst);
    assert!(first > 5, "the endpoint was asked {first} times");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    for entry in manifest["bundles"].as_array().unwrap() {
        assert_eq!(
            entry["producer"]["Llm"]["model"], "fake-model",
            "{}",
            entry["strategy"]
        );
    }
    let contextual = manifest["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["strategy"] == "contextual-sentence")
        .unwrap();
    let bundle = StrategyBundle::from_bytes(
        &std::fs::read(out.join(contextual["file"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        bundle.producer,
        paragraf_engine::bundle::Producer::Llm { .. }
    ));
    // a rebuild is served entirely from the response cache
    run_ok(&args);
    assert_eq!(
        answered.load(Ordering::SeqCst),
        first,
        "no new requests on a rebuild"
    );
    // a dead endpoint with an empty cache fails with a message naming it
    let mut args = build_args(&xml, "proposition", &out);
    args.extend(
        [
            "--llm-url",
            "http://127.0.0.1:9",
            "--llm-cache",
            dir.path().join("empty").to_str().unwrap(),
        ]
        .map(String::from),
    );
    let failed = run(&args);
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr)
        .contains("language model endpoint http://127.0.0.1:9/v1/chat/completions"));
}

/// Bundles listed in a manifest are read through one checked path (`paragraf_bundler::manifest::read_listed`):
/// a file under another entry's name, changed bytes, a missing file or a name outside the folder are refused
/// with the file named, and hostile manifest numbers do not crash `paragraf bundles`. The hostile folders are
/// made here from the shared GG bundles.
#[test]
fn listed_bundles_are_verified_before_use() {
    let source = crate::util::gg_bundles();
    let dir = temp_dir();
    let questions = dir.path().join("questions.json");
    std::fs::write(
        &questions,
        serde_json::json!([
            {"Question_text": "Wer schützt die Würde des Menschen?", "Paragraphs": ["Art 1"]},
            {"Question_text": "Darf ich meine Meinung frei sagen?", "Paragraphs": ["Art 5"]}
        ])
        .to_string(),
    )
    .unwrap();
    // A copy of the bundle folder with its manifest changed by `edit`.
    let folder = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let out = dir.path().join(name);
        std::fs::create_dir(&out).unwrap();
        for entry in std::fs::read_dir(source).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), out.join(entry.file_name())).unwrap();
        }
        let path = out.join("manifest.json");
        let mut manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        edit(&mut manifest);
        std::fs::write(&path, manifest.to_string()).unwrap();
        out
    };
    let eval = |bundles: &Path| {
        let report = bundles.join("report");
        let args = [
            "eval",
            "--questions",
            questions.to_str().unwrap(),
            "--bundles",
            bundles.to_str().unwrap(),
            "--strategies",
            "section",
            "--modes",
            "bm25",
            "--runs",
            "1",
            "--rounds",
            "10",
            "--out",
            report.to_str().unwrap(),
        ];
        let out = run(&args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let bundle = |m: &serde_json::Value, strategy: &str| {
        m["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .position(|b| b["strategy"] == strategy)
            .unwrap()
    };
    let original: serde_json::Value =
        serde_json::from_slice(&std::fs::read(source.join("manifest.json")).unwrap()).unwrap();
    let section = original["bundles"][bundle(&original, "section")].clone();
    let subsection = original["bundles"][bundle(&original, "subsection")].clone();
    let model = section["model"].as_str().unwrap();
    let section_file = section["file"].as_str().unwrap();
    let mismatch =
        "Most likely the folder mixes files of two builds; rebuild with `paragraf build`";

    let (code, err) = eval(&folder("intact", &|_| {}));
    assert_eq!(code, Some(0), "{err}");

    // The subsection bundle saved under the section entry (with its own size and hash).
    let out = folder("mislabeled", &|m| {
        let i = bundle(m, "section");
        for key in ["file", "bytes", "sha256"] {
            m["bundles"][i][key] = subsection[key].clone();
        }
    });
    let (code, err) = eval(&out);
    assert_eq!(
        err,
        format!(
            "error: {} holds the subsection bundle of GG embedded with {model}, but the manifest lists it as the section bundle of GG embedded with {model}. Most likely a file was copied or renamed by hand; rebuild with `paragraf build`\n",
            out.join(subsection["file"].as_str().unwrap()).display()
        )
    );
    assert_eq!(code, Some(2));

    // Bytes that are not the listed ones: one byte more, then the same size with other contents.
    let out = folder("grown", &|_| {});
    let path = out.join(section_file);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.push(0);
    std::fs::write(&path, &bytes).unwrap();
    let size = section["bytes"].as_u64().unwrap();
    let (code, err) = eval(&out);
    assert_eq!(
        err,
        format!(
            "error: {} does not match the manifest: expected {size} bytes, found {} bytes. {mismatch}\n",
            path.display(),
            size + 1
        )
    );
    assert_eq!(code, Some(2));
    bytes.pop();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let (code, err) = eval(&out);
    let expected = format!(
        "error: {} does not match the manifest: expected SHA-256 {}, found SHA-256 ",
        path.display(),
        section["sha256"].as_str().unwrap()
    );
    assert!(err.starts_with(&expected), "{err}");
    assert_eq!(code, Some(2));

    // A listed file that is not there is named.
    std::fs::remove_file(&path).unwrap();
    let (code, err) = eval(&out);
    assert_eq!(
        err,
        format!(
            "error: {}: No such file or directory (os error 2)\n",
            path.display()
        )
    );
    assert_eq!(code, Some(2));

    // A name outside the folder is refused before anything is opened (a huge size too).
    let out = folder("outside", &|m| {
        let i = bundle(m, "section");
        m["bundles"][i]["file"] = "/dev/zero".into();
        m["bundles"][i]["bytes"] = u64::MAX.into();
    });
    let (code, err) = eval(&out);
    assert_eq!(
        err,
        format!(
            "error: {}: the manifest lists an unsafe file: \"/dev/zero\" is not a plain file name: allowed are 1 to 200 characters A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'. Most likely the manifest was edited by hand or comes from elsewhere. Move it away or pass another --out folder\n",
            out.join("manifest.json").display()
        )
    );
    assert_eq!(code, Some(2));

    // `paragraf bundles` adds manifest numbers without overflowing, then refuses the sizes (read, not trusted).
    let out = folder("huge", &|m| {
        for b in m["bundles"].as_array_mut().unwrap() {
            b["bytes"] = 9_223_372_036_854_775_808u64.into();
        }
    });
    let listed = run(&["bundles", out.to_str().unwrap()]);
    let listing = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listing.contains(&format!("3 strategy bundles, {} bytes", u64::MAX)),
        "{listing}"
    );
    assert_eq!(listed.status.code(), Some(2));
    let err = String::from_utf8_lossy(&listed.stderr);
    assert!(
        err.contains(&format!(
            "{} does not match the manifest: expected 9223372036854775808 bytes, found {} bytes",
            out.join(section_file).display(),
            section["bytes"]
        )),
        "{err}"
    );
}

#[test]
fn a_build_removes_what_a_killed_build_left() {
    let dir = temp_dir();
    let xml = law_prefix(dir.path(), "GG", 5);
    let out = dir.path().join("bundles");
    run_ok(&build_args(&xml, "section", &out));
    // What a build killed mid-write leaves: a temporary file of a dead writer (pid above any pid_max) and a
    // hashed bundle it wrote but never listed.
    let leftover = format!(".GG.subsection.pgb.tmp-{}", u32::MAX);
    let orphan = "GG.subsection.0123456789abcdef.pgb";
    std::fs::write(out.join(&leftover), b"half a bundle").unwrap();
    std::fs::write(out.join(orphan), b"a whole bundle nobody lists").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let run = crate::util::paragraf()
        .args(build_args(&xml, "section", &out))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "removed {leftover}: a temporary file of an earlier build that was killed"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("removed {orphan}: a bundle manifest.json does not list, left by an earlier build that was killed")),
        "{stderr}"
    );
    assert!(!out.join(&leftover).exists() && !out.join(orphan).exists());
    let manifest = paragraf_core::manifest::Manifest::parse(
        &std::fs::read(out.join("manifest.json")).unwrap(),
    )
    .unwrap();
    for file in manifest.files() {
        assert!(out.join(file).exists(), "{file} is listed and kept");
    }
}

#[test]
fn the_build_ships_query_expansion_or_records_why_not() {
    let dir = temp_dir();
    let xml = law_prefix(dir.path(), "GG", 30);
    let manifest_of = |out: &Path| {
        paragraf_core::manifest::Manifest::parse(&std::fs::read(out.join("manifest.json")).unwrap())
            .unwrap()
    };
    // The whole GG: a law this small keeps no target (each would be in over 2 % of its sections).
    let out = dir.path().join("with");
    run_ok(&build_args(&shared("corpus/GG.xml"), "section", &out));
    let manifest = manifest_of(&out);
    let listed = manifest.expansions.as_ref().expect("an expansions entry");
    let listed = listed.built().expect("a built thesaurus file");
    let file = &listed.file;
    assert!(file.starts_with("thesaurus.") && manifest.files().any(|f| f == file));
    let bytes = std::fs::read(out.join(file)).unwrap();
    listed.verify(&bytes).unwrap();
    let read = paragraf_bundler::expansion::read_expansions(&out, &manifest)
        .unwrap()
        .unwrap();
    assert!(
        read.notice.contains("LGPL") || read.notice.contains("GNU"),
        "{}",
        read.notice
    );
    let law = paragraf_bundler::manifest::read_law(&out, &manifest.laws[0]).unwrap();
    let index = LawIndex::new(law);
    let table = index.expansion_table(&std::sync::Arc::new(read)).unwrap();
    let expanded = paragraf_engine::expansion::expand("Kirche", &table, index.bm25(), &[]);
    assert!(
        !expanded.is_empty(),
        "a lay word of the GG's questions is expanded"
    );
    // A folder of the older layout (a table per law): the next build deletes the law's table and lists the
    // folder's thesaurus file instead.
    let old_table = "GG.exp.0123456789abcdef.pgb";
    std::fs::write(out.join(old_table), b"PGRF-EXP").unwrap();
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("expansions");
    json["laws"][0]["expansions"] = serde_json::json!({"status": "built", "file": old_table, "bytes": 8, "sha256": "", "source": "s", "terms": 1});
    std::fs::write(out.join("manifest.json"), json.to_string()).unwrap();
    assert!(manifest_of(&out).files().any(|f| f == old_table));
    run_ok(&build_args(&shared("corpus/GG.xml"), "section", &out));
    let upgraded = manifest_of(&out);
    assert!(!out.join(old_table).exists(), "the old table is deleted");
    assert_eq!(upgraded.expansions, manifest.expansions);
    for file in upgraded.files() {
        assert!(out.join(file).exists(), "{file} is listed and kept");
    }

    // No thesaurus, or not a text file: the build says so, succeeds, and the manifest records why.
    let garbage = dir.path().join("garbage.txt");
    std::fs::write(&garbage, [0xff, 0xfe, 0x00, 0x01]).unwrap();
    for (thesaurus, why) in [
        ("/nonexistent/openthesaurus.txt", "thesaurus /nonexistent/openthesaurus.txt not found. Most likely the Debian package openthesaurus-de-text is not installed (scripts/setup.sh installs it); or pass --thesaurus PATH; building without query expansion".to_string()),
        (garbage.to_str().unwrap(), format!("thesaurus {} is not UTF-8 text. Most likely it is not OpenThesaurus's text export (openthesaurus.txt); building without query expansion", garbage.display())),
    ] {
        let out = dir.path().join("without");
        let mut args = build_args(&xml, "section", &out);
        args.extend(["--thesaurus".to_string(), thesaurus.to_string()]);
        let run = crate::util::paragraf().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        assert!(stderr.contains(&why), "{stderr}");
        let manifest = manifest_of(&out);
        assert_eq!(
            manifest.expansions,
            Some(paragraf_engine::expansion::ExpansionsEntry::Skipped {
                source: thesaurus.to_string(),
                reason: why,
            })
        );
        assert!(!manifest.files().any(|f| f.starts_with("thesaurus.")));
    }
}

/// `--embed-endpoint`: a farm of three loopback servers, one of which dies after its probe, builds the first 60
/// norms of the GG as a `sentence` bundle (short texts, several batches of 64 for each server) with the vectors
/// the local encoder gives; a server of another model is refused by its probe.
#[test]
fn a_build_through_several_embedding_endpoints_equals_the_local_one() {
    use crate::util::{embedding_endpoint, Endpoint};
    use std::sync::atomic::Ordering;
    let dir = temp_dir();
    let gg = law_prefix(dir.path(), "GG", 60);
    let (local, farm) = (dir.path().join("local"), dir.path().join("farm"));
    run_ok(
        &[
            build_args(&gg, "sentence", &local),
            vec!["--no-cache".into()],
        ]
        .concat(),
    );
    let endpoints = [
        embedding_endpoint(Endpoint::E5),
        embedding_endpoint(Endpoint::E5),
        embedding_endpoint(Endpoint::DiesAfter(1)),
    ];
    let urls: Vec<&str> = endpoints.iter().map(|(u, _)| u.as_str()).collect();
    let output = run(&[
        build_args(&gg, "sentence", &farm),
        vec![
            "--no-cache".into(),
            "--embed-endpoint".into(),
            urls.join(","),
        ],
    ]
    .concat());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("embedding through 3 endpoints"), "{stderr}");
    // Both healthy servers took batches after their probe; the dead one answered only its probe.
    let answered: Vec<usize> = endpoints
        .iter()
        .map(|(_, n)| n.load(Ordering::SeqCst))
        .collect();
    assert!(
        answered[0] > 1 && answered[1] > 1 && answered[2] == 1,
        "{answered:?}"
    );
    // Same model id, same units, vectors within int8 rounding of the local build's.
    let read = |dir: &Path| {
        let manifest = paragraf_bundler::manifest::load_or_new(dir).unwrap();
        let entry = manifest.bundle("GG", "sentence").unwrap().clone();
        paragraf_bundler::manifest::read_strategy(dir, &entry).unwrap()
    };
    let (a, b) = (read(&local), read(&farm));
    assert_eq!(
        (a.model.as_str(), a.units.len()),
        (b.model.as_str(), b.units.len())
    );
    let (VectorStore::Int8(va), VectorStore::Int8(vb)) = (&a.vectors, &b.vectors) else {
        panic!("int8 bundles")
    };
    let lowest = (0..va.len())
        .map(|row| {
            let (x, y) = (va.dequantize_row(row), vb.dequantize_row(row));
            let dot = |p: &[f32], q: &[f32]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f32>();
            dot(&x, &y) / (dot(&x, &x) * dot(&y, &y)).sqrt()
        })
        .fold(f32::INFINITY, f32::min);
    eprintln!(
        "lowest cosine farm vs local over {} units: {lowest}",
        va.len()
    );
    assert!(lowest > 0.9999, "{lowest}");

    // A server of another model is refused before anything is built, with its address and the cosine.
    let (other, _) = embedding_endpoint(Endpoint::OtherModel);
    let refused = run(&[
        build_args(&gg, "sentence", &dir.path().join("other")),
        vec![
            "--no-cache".into(),
            "--embed-endpoint".into(),
            other.clone(),
        ],
    ]
    .concat());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains(&format!("the embedding endpoint {other} cannot build intfloat/multilingual-e5-small@q4 bundles: its vectors of the probe passages agree with the local encoder's only to cosine")),
        "{stderr}"
    );
}

#[test]
fn bundles_lists_and_verifies_every_file_like_search_does() {
    let dir = temp_dir();
    let folder = dir.path().join("bundles");
    crate::util::copy_folder(crate::util::gg_bundles(), &folder);
    let listing = run_ok(&["bundles", folder.to_str().unwrap()]);
    assert!(listing.contains("3 strategy bundles"), "{listing}");
    assert!(
        listing.contains("checked 6 files") && listing.contains("each as manifest.json lists it"),
        "{listing}"
    );
    // One bundle a byte longer, the thesaurus gone: both named, exit 2 (search refuses the same folder).
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).unwrap()).unwrap();
    let section = manifest["bundles"][0]["file"].as_str().unwrap().to_owned();
    let thesaurus = manifest["expansions"]["file"].as_str().unwrap().to_owned();
    let mut bytes = std::fs::read(folder.join(&section)).unwrap();
    bytes.push(0);
    std::fs::write(folder.join(&section), &bytes).unwrap();
    std::fs::remove_file(folder.join(&thesaurus)).unwrap();
    let out = run(&["bundles", folder.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: 2 of 6 files in {} are not as manifest.json lists them:",
            folder.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{section} does not match the manifest: expected {} bytes, found {} bytes",
            bytes.len() - 1,
            bytes.len()
        )),
        "{err}"
    );
    assert!(err.contains(&format!("{thesaurus}: No such file")), "{err}");

    // Without vectors: said so, not "-0 s of build time".
    let xml = law_prefix(dir.path(), "GG", 5);
    let lexical = dir.path().join("lexical");
    run_ok(&build_args(&xml, "none", &lexical));
    let listing = run_ok(&["bundles", lexical.to_str().unwrap()]);
    assert!(
        listing.contains("no strategy bundles: the laws are searched with BM25 only")
            && !listing.contains("-0 s"),
        "{listing}"
    );
}
