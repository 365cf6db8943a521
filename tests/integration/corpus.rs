//! The corpus parser over the real official XML: fidelity on the BGB, every shared law, the whole federal
//! archive, the dev questions' gold sections, and clear errors for bad files.

use crate::util::{run, run_measured, run_ok, shared, temp_dir};
use paragraf_law::{Law, RefTarget};
use std::path::Path;
use std::sync::OnceLock;

fn bgb() -> &'static Law {
    static BGB: OnceLock<Law> = OnceLock::new();
    BGB.get_or_init(|| paragraf_corpus::parse_file(&shared("corpus/BGB.xml")).expect("parse BGB"))
}

fn section(law: &Law, designation: &str) -> usize {
    law.find_section(designation)
        .unwrap_or_else(|| panic!("{designation} missing"))
}

#[test]
fn bgb_section_counts_are_pinned() {
    let law = bgb();
    let active = law.active_sections().count();
    let repealed = law.sections.len() - active;
    // Counted by hand from the 2026-04-13 build: 2,518 `§` norms plus the `Anlage` norms, of which the
    // `(weggefallen)` ones (single sections and ranges like `§§ 3 bis 6`) are repealed.
    assert_eq!((active, repealed), (2479, 63));
    assert_eq!(law.abbreviation, "BGB");
    assert_eq!(law.title, "Bürgerliches Gesetzbuch");
    assert_eq!(law.slug, "bgb");
    let ranged = &law.sections[section(law, "§§ 3 bis 6")];
    assert!(ranged.repealed && ranged.subsections.is_empty());
}

#[test]
fn bgb_structure_and_units_match_the_paper() {
    let law = bgb();
    let s535 = section(law, "§ 535");
    assert_eq!(
        law.path_label(s535),
        "Buch 2 > Abschnitt 8 > Titel 5 > Untertitel 1"
    );
    let s = &law.sections[s535];
    assert_eq!(s.title, "Inhalt und Hauptpflichten des Mietvertrags");
    assert_eq!((s.subsections.len(), s.sentences.len()), (2, 4));
    assert_eq!(
        s.sentence_text(3),
        "Der Mieter ist verpflichtet, dem Vermieter die vereinbarte Miete zu entrichten."
    );
    assert_eq!(s.subsections[1].sentences, 3..4);
    assert_eq!(law.sections[section(law, "§ 433")].subsections.len(), 2);
    assert_eq!(law.sections[section(law, "§ 1")].sentences.len(), 1);
    assert_eq!(law.hierarchy_depth(), 6);
}

#[test]
fn every_unit_is_a_valid_slice_of_its_section() {
    let law = bgb();
    for (_, s) in law.active_sections() {
        for sub in &s.subsections {
            assert!(
                s.text.is_char_boundary(sub.span.start as usize)
                    && s.text.is_char_boundary(sub.span.end as usize)
            );
            for i in sub.sentences.clone() {
                let sentence = s.sentences[i as usize];
                assert!(
                    sub.span.contains(sentence.span),
                    "{}: sentence {i} outside its Absatz",
                    s.designation
                );
                assert!(!s.slice(sentence.span).trim().is_empty());
            }
        }
        let counted: u32 = s
            .subsections
            .iter()
            .map(|sub| sub.sentences.end - sub.sentences.start)
            .sum();
        assert_eq!(counted as usize, s.sentences.len(), "{}", s.designation);
        for item in &s.list_items {
            assert!(
                s.slice(item.span).starts_with(&item.label),
                "{}: {:?}",
                s.designation,
                item
            );
        }
        for reference in &s.references {
            for target in &reference.targets {
                if let RefTarget::Section { section, .. } = target {
                    assert!((*section as usize) < law.sections.len());
                }
            }
        }
        assert!(
            !s.text.contains('<') || s.text.contains("< "),
            "{}: markup leaked: {}",
            s.designation,
            s.text
        );
    }
}

#[test]
fn bgb_references_resolve() {
    let law = bgb();
    let s437 = &law.sections[section(law, "§ 437")];
    let cited: Vec<&str> = s437
        .references
        .iter()
        .flat_map(|r| &r.targets)
        .filter_map(|t| match t {
            RefTarget::Section { section, .. } => {
                Some(law.sections[*section as usize].designation.as_str())
            }
            _ => None,
        })
        .collect();
    for expected in [
        "§ 439", "§ 440", "§ 323", "§ 326", "§ 441", "§ 280", "§ 281", "§ 283", "§ 311a", "§ 284",
    ] {
        assert!(
            cited.contains(&expected),
            "§ 437 should cite {expected}: {cited:?}"
        );
    }
    // § 549 Abs. 1 cites the range §§ 535 bis 548: every section in it, in order
    let s549 = &law.sections[section(law, "§ 549")];
    let range = s549
        .references
        .iter()
        .find(|r| s549.slice(r.span) == "§§ 535 bis 548")
        .expect("range citation");
    assert_eq!(
        range.targets.len(),
        section(law, "§ 548") - section(law, "§ 535") + 1
    );
    // external citations keep the other law (§ 1984: `§§ 81 und 82 der Insolvenzordnung`)
    let s1984 = &law.sections[section(law, "§ 1984")];
    let external: Vec<&RefTarget> = s1984.references.iter().flat_map(|r| &r.targets).collect();
    assert!(
        external.contains(&&RefTarget::External {
            law: "der Insolvenzordnung".into(),
            designation: "§ 82".into()
        }),
        "{external:?}"
    );
}

#[test]
fn dev_gold_sections_are_covered() {
    let path = shared("eval/gerlayqa/bgb_dev.json");
    let questions: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let law = bgb();
    let (mut found, mut total, mut missing) = (0, 0, Vec::new());
    for q in &questions {
        for gold in q["Paragraphs"].as_array().unwrap() {
            let gold = gold.as_str().unwrap();
            total += 1;
            match law.find_section(gold) {
                Some(i) if !law.sections[i].repealed => found += 1,
                _ => missing.push(gold.to_string()),
            }
        }
    }
    let coverage = found as f64 / total as f64;
    missing.sort();
    missing.dedup();
    eprintln!(
        "dev gold coverage: {found}/{total} = {:.2} %; missing: {missing:?}",
        coverage * 100.0
    );
    assert!(coverage > 0.995, "coverage {coverage}");
}

#[test]
fn all_shared_laws_parse_via_the_cli() {
    for (law, designation) in [
        ("BGB", "§ 535"),
        ("StGB", "§ 242"),
        ("ZPO", "§ 253"),
        ("HGB", "§ 1"),
        ("GG", "Art. 1"),
    ] {
        let stats: serde_json::Value = serde_json::from_str(&run_ok(&[
            "corpus",
            "stats",
            law,
            "--json",
            "--corpus-dir",
            shared("corpus").to_str().unwrap(),
        ]))
        .unwrap();
        assert_eq!(stats["abbreviation"], law);
        assert!(
            stats["sections_active"].as_u64().unwrap() > 100,
            "{law}: {stats}"
        );
        assert!(stats["sentences"].as_u64().unwrap() > stats["sections_active"].as_u64().unwrap());
        let shown: serde_json::Value = serde_json::from_str(&run_ok(&[
            "corpus",
            "show",
            law,
            designation,
            "--json",
            "--corpus-dir",
            shared("corpus").to_str().unwrap(),
        ]))
        .unwrap();
        assert_eq!(shown["designation"], designation);
    }
    let gg: serde_json::Value = serde_json::from_str(&run_ok(&[
        "corpus",
        "show",
        shared("corpus/GG.xml").to_str().unwrap(),
        "Art. 20a",
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        gg["url"],
        "https://www.gesetze-im-internet.de/gg/art_20a.html"
    );
    // GG articles carry no headings in the official XML; the text is there
    assert!(
        gg["subsections"][0]["sentences"][0][1]
            .as_str()
            .unwrap()
            .contains("Lebensgrundlagen"),
        "{gg}"
    );
}

#[test]
fn show_prints_sentences_and_references() {
    let out = run_ok(&[
        "corpus",
        "show",
        shared("corpus/BGB.xml").to_str().unwrap(),
        "§ 535",
    ]);
    assert!(out.contains("S4 Der Mieter ist verpflichtet"), "{out}");
    assert!(out.contains("incoming references"), "{out}");
    assert!(out.contains("§ 549 (§§ 535 bis 548)"), "{out}");
    let missing = run(&[
        "corpus",
        "show",
        shared("corpus/BGB.xml").to_str().unwrap(),
        "§ 99999",
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("BGB has no section \"§ 99999\""));
}

#[test]
fn federal_archive_parses_without_failures() {
    let mut laws = 0;
    let (mut head_text, mut empty) = (0, Vec::new());
    let mut failures = Vec::new();
    let mut catalogue = Vec::new();
    let mut topics = paragraf_core::finder::TopicsFile::default();
    let count =
        paragraf_corpus::for_each_law(&shared("corpus/gii-federal-2026-04.tar.xz"), |entry| {
            laws += 1;
            match entry.result {
                Ok(law) => {
                    head_text +=
                        usize::from(law.sections.iter().all(paragraf_corpus::gii::is_head_text));
                    if law.active_sections().next().is_none() {
                        empty.push(entry.path);
                    }
                    catalogue.push(paragraf_bundler::manifest::law_entry(&law, "x", &[]));
                    topics
                        .laws
                        .extend(paragraf_core::finder::TopicsFile::of("", [&law]).laws);
                }
                Err(e) => failures.push(e.to_string()),
            }
            std::ops::ControlFlow::Continue(())
        })
        .expect("read archive");
    eprintln!(
        "federal corpus: {laws} laws, {} failed, {head_text} without sections (searched as head-norm text), {} with nothing to search",
        failures.len(),
        empty.len()
    );
    assert_eq!(count, 6877);
    assert!(failures.is_empty(), "{failures:#?}");
    // Every law has something to search: sections, or its head norms' text, or at least its title.
    assert!(empty.is_empty(), "{empty:#?}");
    assert_eq!(head_text, 1038);

    // The law finder over the whole catalogue: what people type, the law they mean.
    let finder = paragraf_core::finder::LawFinder::new(&catalogue, Some(&topics));
    let found = |query: &str| -> Vec<&str> {
        finder
            .find(query, 5)
            .into_iter()
            .map(|i| catalogue[i].law.as_str())
            .collect()
    };
    assert_eq!(found("StVO")[0], "StVO 2013");
    assert_eq!(found("bgb")[0], "BGB");
    assert_eq!(found("Kündigungsschutz")[0], "KSchG");
    assert!(
        found("Mietrecht").contains(&"BGB"),
        "{:?}",
        found("Mietrecht")
    );
    eprintln!(
        "law finder: the topics file of {} laws has {} bytes",
        catalogue.len(),
        topics.to_bytes().len()
    );
}

#[test]
fn bad_files_give_clear_errors_and_no_panic() {
    let dir = temp_dir();
    let bgb = std::fs::read(shared("corpus/BGB.xml")).unwrap();
    let mut latin1 =
        b"<?xml version=\"1.0\"?>\n<dokumente><norm><metadaten><jurabk>X</jurabk><langue>".to_vec();
    latin1.extend_from_slice(b"Gr\xf6\xdfe</langue></metadaten></norm></dokumente>");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.xml", vec![], "empty.xml: the file is empty."),
        ("truncated.xml", bgb[..100_000].to_vec(), "truncated.xml:1:"),
        (
            "other.xml",
            b"<?xml version=\"1.0\"?>\n<rss><channel/></rss>".to_vec(),
            "other.xml:2:1: not a gesetze-im-internet.de law: the root element is <rss>",
        ),
        (
            "latin1.xml",
            latin1,
            "latin1.xml:2:57: invalid UTF-8 (byte offset 78)",
        ),
        (
            "garbage.xml",
            b"\x00\x01PK\x03\x04 not xml".to_vec(),
            "garbage.xml:",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(&["corpus", "stats", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} should fail");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    let missing = run(&[
        "corpus",
        "stats",
        "NOPE",
        "--corpus-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no law \"NOPE\": it is not a file"));
}

/// Serves `body` for `/gg/xml.zip` and 404 for everything else, on 127.0.0.1, for `requests` requests.
fn serve_zip(body: Vec<u8>, requests: usize) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut request_line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            reader.read_line(&mut request_line).unwrap();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            if request_line.starts_with("GET /gg/xml.zip ") {
                let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                stream.write_all(head.as_bytes()).unwrap();
                stream.write_all(&body).unwrap();
            } else {
                stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .unwrap();
            }
        }
    });
    url
}

#[test]
fn fetch_downloads_checks_and_stores_a_law() {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file(
        "BJNR000010949.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(&std::fs::read(shared("corpus/GG.xml")).unwrap())
        .unwrap();
    let body = zip.finish().unwrap().into_inner();
    let url = serve_zip(body, 4);
    let dir = temp_dir();
    let out = run_ok(&[
        "corpus",
        "fetch",
        "GG",
        "--base-url",
        &url,
        "--corpus-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        out.starts_with("GG (Grundgesetz für die Bundesrepublik Deutschland): 201 active sections"),
        "{out}"
    );
    let stored = dir.path().join("GG.xml");
    assert_eq!(
        std::fs::read(&stored).unwrap(),
        std::fs::read(shared("corpus/GG.xml")).unwrap()
    );
    // Another law with the same abbreviation is not replaced unasked; a newer version of the same law is.
    let other = "<?xml version=\"1.0\"?><dokumente builddate=\"1\" doknr=\"BJNROTHER\"><norm><metadaten><jurabk>GG</jurabk><enbez>§ 1</enbez></metadaten><textdaten><text><Content><P>Anderes Gesetz.</P></Content></text></textdaten></norm></dokumente>";
    std::fs::write(&stored, other).unwrap();
    let fetch = |extra: &[&str]| {
        let mut args = vec![
            "corpus",
            "fetch",
            "gg",
            "--base-url",
            &url,
            "--corpus-dir",
            dir.path().to_str().unwrap(),
        ];
        args.extend(extra);
        run(&args)
    };
    let refused = fetch(&[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        format!("error: {} already holds GG (document BJNROTHER); gg is GG (document BJNR000010949), another law with the same file name. Nothing was stored: pass --force to replace it, or fetch into another --corpus-dir", stored.display())
    );
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), other);
    assert!(fetch(&["--force"]).status.success());
    assert_eq!(
        std::fs::read(&stored).unwrap(),
        std::fs::read(shared("corpus/GG.xml")).unwrap()
    );
    let missing = run(&[
        "corpus",
        "fetch",
        "nosuchlaw",
        "--base-url",
        &url,
        "--corpus-dir",
        dir.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        stderr.contains("/nosuchlaw/xml.zip: no law with the slug \"nosuchlaw\" (HTTP 404)"),
        "{stderr}"
    );
}

/// A law XML whose one section holds `body` after `prolog`.
fn hostile_law(prolog: &str, body: &str) -> String {
    format!("<?xml version=\"1.0\"?>{prolog}<dokumente><norm><metadaten><jurabk>TG</jurabk><enbez>§ 1</enbez></metadaten><textdaten><text><Content><P>{body}</P></Content></text></textdaten></norm></dokumente>")
}

#[test]
fn parser_bombs_fail_fast_with_bounded_memory() {
    let dir = temp_dir();
    // (file, contents, expected error, peak MiB allowed). Before the limits: the entity bomb took 3.8 GiB and
    // 27 s, the nesting overflowed the stack (SIGABRT), and a 200 MB file took 2-3.6 GiB.
    let entity = hostile_law(
        &format!(
            // A fake declaration in a comment first fooled the textual pre-scan (the second round's 3.9 GiB).
            "<!DOCTYPE dokumente [<!-- <!ENTITY a \"x\"> --><!ENTITY big \"{}\">]>",
            "x".repeat(100_000)
        ),
        &"&big;".repeat(20_000),
    );
    let deep = hostile_law(
        "",
        &format!("{}x{}", "<B>".repeat(50_000), "</B>".repeat(50_000)),
    );
    let big = hostile_law("", &"Text. ".repeat(6 << 20));
    let cases = [
        ("entity.xml", entity, "entity.xml: declares a document type (<!DOCTYPE …>), which no gesetze-im-internet.de law does: refused, since its entities could expand without bound. Most likely the file is not a law from the archive, or an entity bomb".to_string(), 64.0),
        ("deep.xml", deep, "deep.xml:1:878: elements nested more than 256 deep (federal laws nest at most 34 deep). Most likely the file is not a law but made to break parsers".to_string(), 64.0),
        ("big.xml", big.clone(), format!("big.xml: {} bytes, more than the 32 MiB a law XML may have (the largest federal law has 3.3 MB). Most likely this is not one law's XML", big.len()), 64.0),
    ];
    for (name, contents, expected, max_mib) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        let started = std::time::Instant::now();
        let (out, peak) = run_measured(&["corpus", "stats", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "{name}: peak {peak:.1} MiB, {:.2} s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let expected = expected.replacen(name, path.to_str().unwrap(), 1);
        assert_eq!(stderr.trim(), format!("error: {expected}"), "{name}");
        assert!(peak < max_mib, "{name}: peak {peak:.1} MiB");
    }
}

#[test]
fn every_shared_law_passes_the_decoded_law_checks() {
    for name in ["BGB", "StGB", "ZPO", "HGB", "GG"] {
        let law = paragraf_corpus::parse_file(&shared(&format!("corpus/{name}.xml"))).unwrap();
        law.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// A zip holding one `name` entry with `bytes`.
fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file(name, zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(bytes).unwrap();
    zip.finish().unwrap().into_inner()
}

#[test]
fn fetch_refuses_bad_slugs_zip_bombs_and_writes_only_inside_the_corpus_folder() {
    let dir = temp_dir();
    let corpus = dir.path().join("corpus");
    let corpus_arg = corpus.to_str().unwrap();
    // No request is made for a slug outside the alphabet: the server here would answer it with a law.
    let url = serve_zip(zip_of("x.xml", hostile_law("", "x").as_bytes()), 1);
    let out = run(&[
        "corpus",
        "fetch",
        "../../etc",
        "--base-url",
        &url,
        "--corpus-dir",
        corpus_arg,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: \"../../etc\" is not a gesetze-im-internet.de slug: allowed are 1 to 100 characters a-z, 0-9, _ and -"
    );

    // Abbreviations that are paths become plain names inside the folder; an empty one stores nothing.
    for (jurabk, stored) in [
        ("/tmp/x/PWNED", "_tmp_x_PWNED.xml"),
        ("../elsewhere/PWNED", "___elsewhere_PWNED.xml"),
    ] {
        let xml = hostile_law("", "x")
            .replace("<jurabk>TG</jurabk>", &format!("<jurabk>{jurabk}</jurabk>"));
        let url = serve_zip(zip_of("x.xml", xml.as_bytes()), 1);
        let out = run_ok(&[
            "corpus",
            "fetch",
            "gg",
            "--base-url",
            &url,
            "--corpus-dir",
            corpus_arg,
        ]);
        assert!(
            out.trim_end()
                .ends_with(&format!("-> {}", corpus.join(stored).display())),
            "{out}"
        );
        assert!(corpus.join(stored).is_file());
    }
    assert!(!Path::new("/tmp/x/PWNED.xml").exists() && !dir.path().join("elsewhere").exists());
    let xml = hostile_law("", "x").replace("<jurabk>TG</jurabk>", "<jurabk></jurabk>");
    let url = serve_zip(zip_of("x.xml", xml.as_bytes()), 1);
    let out = run(&[
        "corpus",
        "fetch",
        "gg",
        "--base-url",
        &url,
        "--corpus-dir",
        corpus_arg,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        format!("error: {url}/gg/xml.zip holds a law whose abbreviation (jurabk) cannot name a file; nothing was stored: \"\" is not a law abbreviation: allowed are 1 to 64 letters, digits, spaces and - / § . , ( ) & ' (no space at either end)")
    );
    assert!(!corpus.join(".xml").exists());

    // A zip bomb: 200 MB of spaces pack to ~200 KB. Before: 1.5 GiB resident and a 1.5 GB file written.
    let bomb = zip_of("BJNR1.xml", &vec![b' '; 200 << 20]);
    let url = serve_zip(bomb, 1);
    let (out, peak) = run_measured(&[
        "corpus",
        "fetch",
        "gg",
        "--base-url",
        &url,
        "--corpus-dir",
        corpus_arg,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("zip bomb: peak {peak:.1} MiB");
    assert!(
        stderr.starts_with(&format!(
            "error: {url}/gg/xml.zip: BJNR1.xml unpacks to more than "
        )),
        "{stderr}"
    );
    assert!(stderr.trim_end().ends_with(" packed, at most 100x and 32 MiB allowed). Most likely the download is a zip bomb, not a law"), "{stderr}");
    assert!(peak < 64.0, "peak {peak:.1} MiB");
    assert_eq!(
        out.status.code(),
        Some(2),
        "a zip bomb is a data error: {stderr}"
    );
    assert!(!corpus.join("BJNR1.xml").exists());
}
