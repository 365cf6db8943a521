//! Many laws in one folder: `paragraf build --laws` over the real federal archive (a sample of 32 laws, not all
//! 6,877) and over a corpus folder with a broken law; incremental rebuilds, a build killed and resumed, and
//! search across the laws built.

use crate::util::{
    archive, federal_sample as sample, model_path, paragraf, run, run_ok, shared, temp_dir,
};
use paragraf_core::manifest::{Listed, Manifest, MANIFEST};
use std::path::Path;
use std::time::{Duration, Instant};

pub fn list_file(dir: &Path, names: &[&str]) -> String {
    let path = dir.join("laws.txt");
    std::fs::write(&path, format!("# test sample\n{}\n", names.join("\n"))).unwrap();
    format!("@{}", path.display())
}

/// `paragraf build --laws` with the test model and `strategies` (`section`, or `none` for law bundles only).
pub fn build_laws(laws: &str, from: &Path, out: &Path, strategies: &str) -> Vec<String> {
    [
        "build",
        "--laws",
        laws,
        "--from",
        from.to_str().unwrap(),
        "--strategies",
        strategies,
        "--out",
        out.to_str().unwrap(),
        "--model",
        model_path().to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// `paragraf search --json` over every law of `out`.
fn search(out: &Path, mode: &str, question: &str) -> serde_json::Value {
    serde_json::from_str(&run_ok(&[
        "search",
        "--bundles",
        out.to_str().unwrap(),
        "--model",
        model_path().to_str().unwrap(),
        "--mode",
        mode,
        "--json",
        question,
    ]))
    .unwrap()
}

fn manifest(out: &Path) -> Manifest {
    Manifest::parse(&std::fs::read(out.join(MANIFEST)).unwrap()).unwrap()
}

/// The first law of `built` with more than one section, and its second section: a question made of that
/// section's opening words should find it.
fn second_section_of_a_law(out: &Path, built: &Manifest) -> (String, paragraf_law::Section) {
    let entry = built
        .laws
        .iter()
        .find(|l| l.sections > 1)
        .expect("a law with more than one section");
    let law = paragraf_bundler::manifest::read_law(out, entry).unwrap();
    let (_, section) = law.active_sections().nth(1).unwrap();
    (law.abbreviation.clone(), section.clone())
}

/// Every file the manifest lists, with its bytes checked against the entry.
fn assert_listed_files_verify(out: &Path) {
    let manifest = manifest(out);
    for law in &manifest.laws {
        let bytes = std::fs::read(out.join(&law.file)).unwrap();
        law.verify(&bytes).unwrap();
    }
    // One thesaurus file for every law's query expansion.
    let thesaurus = manifest.expansions.as_ref().and_then(|e| e.built());
    let thesaurus = thesaurus.expect("a thesaurus file listed");
    thesaurus
        .verify(&std::fs::read(out.join(&thesaurus.file)).unwrap())
        .unwrap();
    for bundle in &manifest.bundles {
        let bytes = std::fs::read(out.join(&bundle.file)).unwrap();
        bundle.verify(&bytes).unwrap();
    }
    if let Some(federal) = &manifest.federal {
        for file in std::iter::once(&federal.head)
            .chain(&federal.shards)
            .chain(&federal.topics)
        {
            file.verify(&std::fs::read(out.join(&file.file)).unwrap())
                .unwrap();
        }
        // The law finder's topics: one entry per law, in the manifest's order.
        let topics = federal.topics.as_ref().expect("a topics file");
        let topics = paragraf_core::finder::TopicsFile::from_bytes(
            &std::fs::read(out.join(&topics.file)).unwrap(),
        )
        .unwrap();
        let names = |laws: Vec<&String>| laws.into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(
            names(topics.laws.iter().map(|l| &l.law).collect()),
            names(manifest.laws.iter().map(|l| &l.law).collect())
        );
        assert!(topics.laws.iter().any(|l| !l.topics.is_empty()));
    }
    let listed: Vec<&str> = manifest.files().collect();
    for entry in std::fs::read_dir(out).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == MANIFEST || listed.contains(&name.as_str()),
            "{name} is in the folder but not in the manifest"
        );
    }
}

#[test]
fn many_laws_build_incrementally_and_search_together() {
    let dir = temp_dir();
    let out = dir.path().join("bundles");
    let names: Vec<&str> = sample().keys().map(String::as_str).collect();
    assert_eq!(names.len(), 32);
    let list = list_file(dir.path(), &names);
    let started = Instant::now();
    let first = run_ok(&build_laws(&list, &archive(), &out, "section"));
    eprintln!(
        "built {} laws in {:.1} s: {first}",
        names.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        first.contains("laws: 32 built, 0 unchanged, 0 skipped"),
        "{first}"
    );
    let built = manifest(&out);
    assert_eq!(built.laws.len(), 32);
    for law in &built.laws {
        assert_eq!(law.sections, sample()[&law.law], "{}", law.law);
        assert_eq!(law.source_sha256.as_ref().map(String::len), Some(64));
        assert!(
            built
                .bundles
                .iter()
                .any(|b| b.law == law.law && b.strategy == "section"),
            "{}",
            law.law
        );
    }
    assert_listed_files_verify(&out);
    // The index across the laws, for the browser: every law, every section, one model.
    let federal = built
        .federal
        .clone()
        .expect("build --laws writes the index across laws");
    let with_text: usize = built
        .laws
        .iter()
        .map(|l| {
            let law = paragraf_bundler::manifest::read_law(&out, l).unwrap();
            law.active_sections()
                .filter(|(_, s)| !s.text.is_empty())
                .count()
        })
        .sum();
    assert_eq!(
        (
            federal.laws,
            federal.sections,
            federal.vectors.as_ref().map(|v| v.model.as_str())
        ),
        (32, with_text, Some(built.bundles[0].model.as_str())),
    );
    assert!(first.contains("federal index: 32 laws"), "{first}");

    // Nothing changed: nothing is rebuilt, the folder stays byte for byte the same.
    let before = std::fs::read(out.join(MANIFEST)).unwrap();
    let again = run_ok(&build_laws(&list, &archive(), &out, "section"));
    assert!(
        again.contains("laws: 0 built, 32 unchanged, 0 skipped"),
        "{again}"
    );
    assert_eq!(std::fs::read(out.join(MANIFEST)).unwrap(), before);
    // Writing the index again writes the same files.
    let rewritten = run_ok(&["federal", "--bundles", out.to_str().unwrap()]);
    assert!(rewritten.contains(&federal.head.file), "{rewritten}");
    assert_eq!(manifest(&out).federal.as_ref(), Some(&federal));
    assert_listed_files_verify(&out);

    // One search over every law of the folder; the law without sections is found by its head-norm text.
    let head = paragraf_bundler::manifest::read_law(
        &out,
        built
            .laws
            .iter()
            .find(|l| {
                let law = paragraf_bundler::manifest::read_law(&out, l).unwrap();
                law.sections.iter().all(paragraf_corpus::gii::is_head_text)
            })
            .expect("the head-text law is in the folder"),
    )
    .unwrap();
    let hits = search(&out, "bm25", &head.title);
    let laws: Vec<&str> = hits["laws"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(laws.len(), 32, "every law is searched: {laws:?}");
    assert_eq!(
        hits["hits"][0]["law"].as_str(),
        Some(head.abbreviation.as_str()),
        "the title of {} finds it: {hits:#}",
        head.abbreviation
    );
    assert!(hits["hits"][0]["designation"]
        .as_str()
        .unwrap()
        .starts_with("Text"));

    // Dense and hybrid rank all laws as one: a section's own opening words find that section of that law.
    let (law, section) = second_section_of_a_law(&out, &built);
    let question: String = section.text.chars().take(200).collect();
    for mode in ["dense", "hybrid"] {
        let hits = search(&out, mode, &question);
        let top = &hits["hits"][0];
        assert_eq!(
            (top["law"].as_str(), top["designation"].as_str()),
            (Some(law.as_str()), Some(section.designation.as_str())),
            "{mode}: {hits:#}"
        );
        let laws: std::collections::BTreeSet<&str> = hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["law"].as_str().unwrap())
            .collect();
        assert!(
            laws.len() > 1,
            "{mode}: one ranking over several laws: {laws:?}"
        );
    }

    // A law whose bundle an older format wrote (a build stopped after a format change leaves such laws in a
    // folder whose manifest already names the new format) is built again, the others are not.
    let older = out.join(&built.laws[3].file);
    let mut bytes = std::fs::read(&older).unwrap();
    let oldest = paragraf_engine::bundle::LAW_BUNDLE.oldest;
    assert!(oldest < paragraf_engine::bundle::LAW_BUNDLE.version);
    bytes[8..12].copy_from_slice(&oldest.to_le_bytes());
    std::fs::write(&older, bytes).unwrap();
    let again = run_ok(&build_laws(&list, &archive(), &out, "section"));
    assert!(
        again.contains("laws: 1 built, 31 unchanged, 0 skipped"),
        "{again}"
    );
    assert_listed_files_verify(&out);
}

/// `--strategies none`: law bundles and the index across laws, nothing embedded (the quick way to all federal
/// law). Every mode asked for runs BM25 and says so; a rebuild skips the unchanged laws.
#[test]
fn laws_built_without_vectors_are_searched_with_bm25() {
    let dir = temp_dir();
    let out = dir.path().join("bundles");
    let names: Vec<&str> = sample().keys().map(String::as_str).collect();
    let list = list_file(dir.path(), &names);
    let args = build_laws(&list, &archive(), &out, "none");
    let first = run(&args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr),
    );
    assert!(first.status.success(), "{stderr}");
    assert!(
        stderr.contains("law bundles only (--strategies none)")
            && stdout.contains("laws: 32 built, 0 unchanged, 0 skipped")
            && stdout.contains("embedded 0 tokens"),
        "{stdout}\n{stderr}"
    );
    let built = manifest(&out);
    assert_eq!(
        (
            built.laws.len(),
            built.bundles.len(),
            built.encoder.is_none(),
            built.has_vectors()
        ),
        (32, 0, true, false)
    );
    let federal = built.federal.clone().expect("an index across laws");
    assert_eq!((federal.laws, federal.vectors), (32, None));
    assert_listed_files_verify(&out);
    let again = run_ok(&args);
    assert!(
        again.contains("laws: 0 built, 32 unchanged, 0 skipped"),
        "{again}"
    );
    // A law added to a folder: the index across laws and the topics file are rewritten, and the files they
    // replace are gone.
    let grown = dir.path().join("grown");
    std::fs::create_dir_all(dir.path().join("fewer")).unwrap();
    let fewer = list_file(&dir.path().join("fewer"), &names[..31]);
    run_ok(&build_laws(&fewer, &archive(), &grown, "none"));
    let topics_before = manifest(&grown).federal.unwrap().topics.unwrap().file;
    run_ok(&build_laws(&list, &archive(), &grown, "none"));
    assert_ne!(
        manifest(&grown).federal.unwrap().topics.unwrap().file,
        topics_before
    );
    assert_listed_files_verify(&grown);

    // A section's opening words find it across the laws and in its own law, whatever mode was asked for.
    let (law, section) = second_section_of_a_law(&out, &built);
    let question: String = section.text.chars().take(200).collect();
    for mode in ["hybrid", "dense", "bm25"] {
        for one_law in [false, true] {
            let mut args = vec![
                "search",
                "--bundles",
                out.to_str().unwrap(),
                "--mode",
                mode,
                "--json",
                &question,
            ];
            if one_law {
                args.extend(["--law", &law]);
            }
            let hits: serde_json::Value = serde_json::from_str(&run_ok(&args)).unwrap();
            let top = &hits["hits"][0];
            assert_eq!(
                (top["law"].as_str(), top["designation"].as_str()),
                (Some(law.as_str()), Some(section.designation.as_str())),
                "{mode}, one law {one_law}: {hits:#}"
            );
            assert_eq!(
                (hits["mode"].as_str(), &hits["model"]),
                (Some("bm25"), &serde_json::Value::Null),
                "{mode}: {hits:#}"
            );
            // Across laws: routed, each law's share of the hits (adding up), every hit with its law's title.
            let by_law = hits["by_law"].as_array().cloned().unwrap_or_default();
            assert_eq!(
                (hits["routed"].as_bool(), by_law.is_empty()),
                (if one_law { None } else { Some(true) }, one_law),
                "{hits:#}"
            );
            let counted: u64 = by_law.iter().map(|c| c["hits"].as_u64().unwrap()).sum();
            assert!(one_law || counted == hits["hits"].as_array().unwrap().len() as u64);
            let entry = built.laws.iter().find(|l| l.law == law).unwrap();
            assert_eq!(top["law_title"].as_str(), Some(entry.title.as_str()));
        }
    }
    // Without routing the ranking says so; the text output names each law's share and title.
    let text = run_ok(&[
        "search",
        "--bundles",
        out.to_str().unwrap(),
        "--mode",
        "bm25",
        &question,
    ]);
    let laws_line = text
        .lines()
        .find(|l| l.starts_with("laws: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        laws_line.ends_with("(routed by law)") && laws_line.contains(&format!("{law} ")),
        "{text}"
    );
    let unrouted = run_ok(&[
        "search",
        "--bundles",
        out.to_str().unwrap(),
        "--no-routing",
        "--mode",
        "bm25",
        "--json",
        &question,
    ]);
    let unrouted: serde_json::Value = serde_json::from_str(&unrouted).unwrap();
    assert_eq!(unrouted["routed"], serde_json::Value::Null, "{unrouted:#}");
    // A question that names a law is offered that law alone.
    let named = built
        .laws
        .iter()
        .find(|l| !l.law.contains(' ') && l.law.chars().filter(|c| c.is_uppercase()).count() >= 2)
        .expect("a sample law with an abbreviation of capitals");
    let asked = format!("Was gilt nach dem {}?", named.law);
    let text = run_ok(&[
        "search",
        "--bundles",
        out.to_str().unwrap(),
        "--mode",
        "bm25",
        &asked,
    ]);
    assert!(
        text.contains(&format!(
            "The question names {} ({}): --law \"{}\" searches it alone.",
            named.law, named.title, named.law
        )),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&run_ok(&[
        "search",
        "--bundles",
        out.to_str().unwrap(),
        "--mode",
        "bm25",
        "--json",
        &asked,
    ]))
    .unwrap();
    assert_eq!(json["named_law"]["law"].as_str(), Some(named.law.as_str()));

    // Evaluating vectors of a folder without any is refused, with what to do instead.
    let questions = dir.path().join("questions.json");
    std::fs::write(&questions, GG_QUESTIONS).unwrap();
    let refused = run(&[
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        out.to_str().unwrap(),
        "--strategies",
        "none",
        "--modes",
        "dense",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(
            "--strategies none evaluates no vectors: pass --modes bm25, or name the strategies whose vectors to evaluate"
        ),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

#[test]
fn a_killed_build_resumes_and_leaves_nothing_behind() {
    let dir = temp_dir();
    let out = dir.path().join("bundles");
    let names: Vec<&str> = sample().keys().map(String::as_str).take(12).collect();
    let list = list_file(dir.path(), &names);
    // A fresh embedding cache, so the build has real work when it is killed.
    let cache = dir.path().join("cache");
    let mut child = paragraf()
        .args(build_laws(&list, &archive(), &out, "section"))
        .env("PARAGRAF_EMBEDDING_CACHE", &cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as the first law is in the folder (its files written, the manifest perhaps not yet).
    let started = Instant::now();
    while !std::fs::read_dir(&out)
        .map(|d| d.count() > 2)
        .unwrap_or(false)
    {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "nothing written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let resumed = paragraf()
        .args(build_laws(&list, &archive(), &out, "section"))
        .env("PARAGRAF_EMBEDDING_CACHE", &cache)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(manifest(&out).laws.len(), 12, "{stdout}");
    assert_listed_files_verify(&out);
}

#[test]
fn a_broken_law_is_skipped_by_name_and_a_missing_one_is_named() {
    let dir = temp_dir();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    crate::util::law_prefix(&corpus, "GG", 30);
    let stgb = std::fs::read(shared("corpus/StGB.xml")).unwrap();
    std::fs::write(corpus.join("StGB.xml"), &stgb[..stgb.len() / 2]).unwrap();
    let out = dir.path().join("bundles");
    let failed = run(&build_laws("all", &corpus, &out, "section"));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    // Bad data, as one law alone that does not parse: exit 2 (the others are built).
    assert_eq!(failed.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("skipped: {}:", corpus.join("StGB.xml").display())),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("error: 1 laws were skipped (listed above); the other 1 are in the manifest"),
        "{stderr}"
    );
    // The good law is built and listed.
    assert_eq!(
        manifest(&out)
            .laws
            .iter()
            .map(|l| l.law.as_str())
            .collect::<Vec<_>>(),
        ["GG"]
    );
    assert_listed_files_verify(&out);

    // Named laws: the source is read only until every one is in (GG.xml comes before the broken StGB.xml), and
    // a law named twice is built once.
    let named = run(&build_laws(
        "GG,GG",
        &corpus,
        &dir.path().join("named"),
        "none",
    ));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&named.stdout),
        String::from_utf8_lossy(&named.stderr),
    );
    assert!(named.status.success(), "{stderr}");
    assert!(
        stdout.contains("laws: 1 built, 0 unchanged, 0 skipped") && !stderr.contains("StGB"),
        "{stdout}\n{stderr}"
    );

    // Names and sources that cannot be: refused before anything is built.
    let refusals = [
        (
            build_laws("GG,<script>", &archive(), &dir.path().join("x"), "section"),
            "error: --laws GG,<script>: \"<script>\" is not a law abbreviation".to_string(),
        ),
        (
            build_laws("@/nonexistent/laws.txt", &archive(), &dir.path().join("x"), "section"),
            "error: cannot read the law list /nonexistent/laws.txt".to_string(),
        ),
        (
            build_laws("GG", Path::new("/nonexistent.zip"), &dir.path().join("x"), "section"),
            "/nonexistent.zip: not a folder of law XML files and not a .tar.xz archive. Most likely the path is mistyped".to_string(),
        ),
    ];
    for (args, expected) in refusals {
        let refused = run(&args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            !refused.status.success() && stderr.contains(&expected),
            "{stderr}"
        );
    }
    assert!(!dir.path().join("x").join(MANIFEST).exists());

    let missing = run(&build_laws(
        "GG,StVO",
        &archive(),
        &dir.path().join("other"),
        "none",
    ));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success());
    assert!(
        stderr.contains("not in ")
            && stderr.contains(": StVO (did you mean StVO 2013")
            && stderr.contains("; the other laws were built"),
        "{stderr}"
    );
}

/// Questions about the first articles of the GG (written for this test).
const GG_QUESTIONS: &str = r#"[
    {"Question_text": "Darf der Staat die Würde des Menschen antasten?", "Paragraphs": ["Art 1"]},
    {"Question_text": "Darf die Zeitung frei berichten, gibt es Zensur?", "Paragraphs": ["Art 5"]},
    {"Question_text": "Darf ich mich mit anderen friedlich und ohne Waffen versammeln?", "Paragraphs": ["Art 8"]},
    {"Question_text": "Wer schützt Ehe und Familie?", "Paragraphs": ["Art 6"]}
]"#;

fn among(questions: &Path, among: &Path, modes: &str, out: &Path) -> std::process::Output {
    run(&[
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        crate::util::gg_bundles().to_str().unwrap(),
        "--among",
        among.to_str().unwrap(),
        "--modes",
        modes,
        "--rounds",
        "200",
        "--out",
        out.to_str().unwrap(),
        "--model",
        model_path().to_str().unwrap(),
    ])
}

#[test]
fn distractors_are_measured_with_one_protocol_alone_and_among() {
    let dir = temp_dir();
    let questions = dir.path().join("questions.json");
    std::fs::write(&questions, GG_QUESTIONS).unwrap();
    // Among itself only: the same index both ways, so every figure is equal (dense and hybrid included).
    let gg = crate::util::gg_bundles();
    let same = among(
        &questions,
        gg,
        "bm25,dense,hybrid",
        &dir.path().join("same"),
    );
    let table = String::from_utf8_lossy(&same.stdout);
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    for mode in ["bm25", "dense", "hybrid"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {mode} |")))
            .unwrap_or_else(|| panic!("{table}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        // Alone, among (itself) and routed (one law: nothing to route) rank alike.
        assert!(cells[2].starts_with(&format!("{} [", cells[1])), "{row}");
        assert_eq!(cells[2], cells[3], "{row}");
        assert!(
            row.contains("| +0.0000, 1.0000 | 100.0 % → 100.0 % | 100.0 % | "),
            "{row}"
        );
        // The browser's layout ranks BM25 exactly as the index does, its one law first.
        if mode == "bm25" {
            assert_eq!(
                cells[8],
                format!("{}, law first 100.0 %", cells[1]),
                "{row}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("same/distractors.md")).unwrap(),
        table.trim_end_matches('\n').to_string() + "\n"
    );

    // Among two large laws as XML (BM25 only): the GG's share of top hits can only fall.
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::copy(gg.parent().unwrap().join("GG.xml"), corpus.join("GG.xml")).unwrap();
    for law in ["HGB", "StGB"] {
        std::fs::copy(
            shared(&format!("corpus/{law}.xml")),
            corpus.join(format!("{law}.xml")),
        )
        .unwrap();
    }
    let lexical = among(&questions, &corpus, "bm25", &dir.path().join("lexical"));
    let table = String::from_utf8_lossy(&lexical.stdout);
    assert!(
        lexical.status.success(),
        "{}",
        String::from_utf8_lossy(&lexical.stderr)
    );
    assert!(
        table.starts_with("# GG questions among 3 laws ("),
        "{table}"
    );
    assert!(table.contains("| bm25 | "), "{table}");
    // Dense needs section bundles, which XML does not have.
    let refused = among(&questions, &corpus, "dense", &dir.path().join("dense"));
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains(
            "has no section bundles: dense and hybrid need them (`paragraf build --laws all`); pass --modes bm25 to measure BM25 alone"
        ),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// Questions whose gold names its law, across the GG, HGB and StGB (written for this test), and ids that cannot
/// be placed.
const CROSS_LAW_QUESTIONS: &str = r#"[
    {"Question_text": "Ich habe im Supermarkt etwas eingesteckt, ohne zu bezahlen. Ist das Diebstahl?", "Paragraphs": ["§ 242 StGB"]},
    {"Question_text": "Darf die Zeitung frei berichten, gibt es Zensur?", "Paragraphs": ["Art 5 GG"]},
    {"Question_text": "Wer ist Kaufmann und betreibt ein Handelsgewerbe?", "Paragraphs": ["§ 1 HGB"]},
    {"Question_text": "Wer mich schlägt und verletzt, macht sich der strafbar?", "Paragraphs": ["§ 223 StGB", "§ 1 KSchG"]},
    {"Question_text": "Was gilt für die Firma eines Kaufmanns?", "Paragraphs": ["§ 17 HGB", "§ 9999 HGB", "§ 1"]}
]"#;

#[test]
fn questions_across_laws_are_judged_by_law_routed_and_fit() {
    let dir = temp_dir();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for law in ["GG", "HGB", "StGB"] {
        std::fs::copy(
            shared(&format!("corpus/{law}.xml")),
            corpus.join(format!("{law}.xml")),
        )
        .unwrap();
    }
    let questions = dir.path().join("questions.json");
    std::fs::write(&questions, CROSS_LAW_QUESTIONS).unwrap();
    let out = dir.path().join("report");
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--questions",
            questions.to_str().unwrap(),
            // A folder without a law: the questions have none of their own.
            "--bundles",
            dir.path().to_str().unwrap(),
            "--among",
            corpus.to_str().unwrap(),
            "--modes",
            "bm25",
            "--rounds",
            "200",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        run(&args)
    };
    let fitted = eval(&["--fit-routing"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&fitted.stdout),
        String::from_utf8_lossy(&fitted.stderr),
    );
    assert!(fitted.status.success(), "{stderr}");
    // Every id that cannot be placed is named and counted as a miss.
    for warning in [
        "warning: question 3: \"§ 1 KSchG\" names a law that is not among the laws searched (a miss)",
        "warning: question 4: HGB has no active section \"§ 9999\" (a miss)",
        "warning: question 4: \"§ 1\" names no law, and the questions have no law of their own (a miss); write it as `§ 3 BUrlG`",
    ] {
        assert!(stderr.contains(warning), "{warning}: {stderr}");
    }
    assert!(
        stdout.starts_with("# cross-law questions among 3 laws ("),
        "{stdout}"
    );
    assert!(
        stdout.contains("5 questions (3 gold ids could not be placed: misses)"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| bm25 | – | "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let cells: Vec<&str> = row.split(" | ").collect();
    let recall = |cell: &str| cell.split(' ').next().unwrap().parse::<f64>().unwrap();
    // Weights fit on these questions cannot do worse on them than no routing (ties keep the unrouted ranking).
    assert!(recall(cells[3]) >= recall(cells[2]), "{row}");
    let weights = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("Routing weights fit for bm25 (in-sample on these questions): `")
        })
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        weights.starts_with("{\"global\":1.0,\"within_law\":"),
        "{weights}"
    );
    // Per question: recall unrouted and routed, the top hit's law, whether the law is right, the law it names.
    let tsv = std::fs::read_to_string(out.join("among.tsv")).unwrap();
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "question\tmode\trecall10_unrouted\trecall10_routed\ttop_law_unrouted\ttop_law_routed\tlaw_first_routed\tlaw_top3_routed\trecall10_learned\ttop_law_learned\tnamed_law");
    assert_eq!(lines.len(), 6, "{tsv}");
    let first: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!((first[0], first[1]), ("0", "bm25"));
    assert!(["StGB", "GG", "HGB"].contains(&first[5]), "{tsv}");
    // The shoplifting question names no law.
    assert_eq!(first.len(), 11, "{tsv}");
    assert_eq!(first[10], "", "{tsv}");
    // With the shipped weights the report says so.
    let shipped = eval(&[]);
    assert!(shipped.status.success());
    assert!(String::from_utf8_lossy(&shipped.stdout)
        .contains("\"routed\": law routing with the shipped weights"));
}

#[test]
fn a_manifest_listing_a_law_without_its_files_is_refused_with_the_laws_name() {
    let dir = temp_dir();
    let out = dir.path().join("bundles");
    crate::util::copy_folder(crate::util::federal_sample_bundles(), &out);
    let listed = manifest(&out);
    let gone = &listed.laws[3];
    std::fs::remove_file(out.join(&gone.file)).unwrap();
    let output = run(&["federal", "--bundles", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    // Every law is read first (progress lines), then every unreadable one is named.
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        error.starts_with(&format!(
            "error: writing the index across the laws of {}: {}: ",
            out.display(),
            gone.law
        )) && error.contains(&gone.file),
        "{stderr}"
    );
    // The index the folder had is still listed and intact.
    assert_eq!(manifest(&out).federal, listed.federal);
}
