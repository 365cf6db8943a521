//! `paragraf search` and `paragraf show` over real GG bundles: the same top 10 as the engine call the browser
//! makes, the schema, and every kind of bad input with its exit code and message.

use std::path::Path;

use crate::util::{
    encoder, free_port, gg_bundles, model_path, paragraf, run, run_ok, shared, temp_dir, Proxy,
};
use paragraf_core::manifest::Manifest;
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::expansion::ThesaurusFile;
use paragraf_engine::{search, LawIndex, SearchOptions, StrategyIndex};
use serde_json::Value;

/// Questions written for this test (the GG bundles hold the Präambel and Art. 1 to 31).
pub const QUESTIONS: &[&str] = &[
    "Darf der Staat meine Briefe lesen?",
    "Ist die Todesstrafe in Deutschland erlaubt?",
    "Dürfen Männer und Frauen unterschiedlich behandelt werden?",
    "Kann ich den Kriegsdienst mit der Waffe verweigern?",
    "Wer bestimmt über die religiöse Erziehung meines Kindes?",
    "Darf ich ohne Anmeldung demonstrieren?",
    "Darf die Polizei meine Wohnung ohne richterliche Anordnung durchsuchen?",
    "Dürfen Deutsche an das Ausland ausgeliefert werden?",
    "Wann kann das Eigentum enteignet werden und gibt es eine Entschädigung?",
    "Darf ich meinen Beruf frei wählen?",
    "Wer schützt die natürlichen Lebensgrundlagen für künftige Generationen?",
    "Unter welchen Voraussetzungen kann eine Partei verboten werden?",
    "Welche Farben hat die Bundesflagge?",
    "Haben politisch Verfolgte ein Recht auf Asyl?",
    "Darf ich eine Privatschule gründen?",
    "Kann man die deutsche Staatsangehörigkeit entzogen bekommen?",
    "Darf die Zeitung ohne Zensur berichten?",
    "Gilt Völkerrecht in Deutschland unmittelbar?",
    "Können Grundrechte verwirkt werden?",
    "Dürfen Soldaten sich bei der Volksvertretung beschweren?",
    "Ist ein Angriffskrieg verboten?",
    "Wo ist die Hauptstadt der Bundesrepublik?",
    "Recht auf Widerstand gegen die Beseitigung der Ordnung",
    "Art. 5 GG",
    "§ 551 BGB Mietkaution",
];

/// The `section` bundles of the GG test folder as the browser loads them.
fn engine_indexes(dir: &Path) -> (LawIndex, StrategyIndex) {
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let law_entry = manifest.law("GG").unwrap();
    let law = LawBundle::from_bytes(&std::fs::read(dir.join(&law_entry.file)).unwrap())
        .unwrap()
        .law;
    let entry = manifest.bundle("GG", "section").unwrap();
    assert_eq!(entry.strategy, "section");
    let bundle =
        StrategyBundle::from_bytes(&std::fs::read(dir.join(&entry.file)).unwrap()).unwrap();
    let strategy = StrategyIndex::new(bundle, &law).unwrap();
    let file = manifest
        .expansions
        .as_ref()
        .and_then(|e| e.built())
        .map(|t| &t.file)
        .expect("a thesaurus file");
    let thesaurus = ThesaurusFile::from_bytes(&std::fs::read(dir.join(file)).unwrap()).unwrap();
    let table = LawIndex::new(law.clone())
        .expansion_table(&std::sync::Arc::new(thesaurus))
        .unwrap();
    (LawIndex::new(law).with_expansions(table), strategy)
}

/// `paragraf search --json` with the test model.
pub fn search_json(dir: &Path, question: &str, extra: &[&str]) -> Value {
    let out = paragraf()
        .args(["search", "--json", "--bundles"])
        .arg(dir)
        .arg("--model")
        .arg(model_path())
        .args(extra)
        .arg("--")
        .arg(question)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "search {question:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("search --json prints JSON")
}

fn designations(results: &Value) -> Vec<String> {
    results["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["designation"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_json_matches_the_engine_call_of_the_app() {
    let dir = gg_bundles();
    let (law, strategy) = engine_indexes(dir);
    let options = SearchOptions::default();
    assert!(QUESTIONS.len() >= 20);
    for question in QUESTIONS {
        let vector = encoder()
            .embed(&[question], TextKind::Query)
            .unwrap()
            .remove(0);
        let expected: Vec<String> =
            search(&law, Some(&strategy), question, Some(&vector), &options)
                .unwrap()
                .hits
                .iter()
                .map(|h| law.law.sections[h.section as usize].designation.clone())
                .collect();
        assert_eq!(expected.len(), 10, "{question}");
        let results = search_json(dir, question, &[]);
        assert_eq!(designations(&results), expected, "{question}");
        assert_eq!(results["schema"], "paragraf.search/1");
        assert_eq!(results["mode"], "hybrid");
        assert_eq!(results["model"], encoder().model_id());
    }
    // A citation query puts the cited article first, as in the app.
    let cited = search_json(dir, "Art. 5 GG", &[]);
    assert_eq!(cited["hits"][0]["designation"], "Art. 5");
    assert_eq!(cited["hits"][0]["cited"], true);
    assert_eq!(
        cited["hits"][0]["url"],
        "https://www.gesetze-im-internet.de/gg/art_5.html"
    );
}

#[test]
fn search_json_carries_excerpt_citations_and_links() {
    let dir = gg_bundles();
    let results = search_json(
        dir,
        "Darf der Staat meine Briefe lesen?",
        &["--strategy", "sentence", "-k", "3"],
    );
    let hits = results["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(results["strategy"], "sentence");
    let top = &hits[0];
    assert_eq!(top["rank"], 1);
    // The GG's structure: every article here hangs under "I." (Die Grundrechte) or "II.".
    assert!(!top["breadcrumb"].as_str().unwrap().is_empty(), "{top}");
    let number = top["designation"]
        .as_str()
        .unwrap()
        .strip_prefix("Art. ")
        .unwrap();
    assert_eq!(
        top["url"],
        format!("https://www.gesetze-im-internet.de/gg/art_{number}.html")
    );
    // A sentence unit hit: its sentence is highlighted inside the excerpt.
    let excerpt = &top["excerpt"];
    let text = excerpt["text"].as_str().unwrap();
    let marks = excerpt["highlights"].as_array().unwrap();
    assert!(!marks.is_empty(), "{excerpt}");
    let (a, b) = (
        marks[0][0].as_u64().unwrap() as usize,
        marks[0][1].as_u64().unwrap() as usize,
    );
    assert!(
        text.get(a..b).is_some_and(|m| !m.trim().is_empty()),
        "{excerpt}"
    );
    assert!(!top["units"].as_array().unwrap().is_empty());
    // BM25 runs without a model and names no model.
    let bm25 = search_json(dir, "Briefgeheimnis", &["--mode", "bm25"]);
    assert_eq!(bm25["mode"], "bm25");
    assert_eq!(bm25["model"], Value::Null);
    assert_eq!(bm25["hits"][0]["designation"], "Art. 10");
}

#[test]
fn search_expands_lay_words_and_leaves_out_removed_ones() {
    let dir = gg_bundles();
    let bm25 = ["--mode", "bm25"];
    // `Kirche` is not in the GG's first articles; its synonyms are.
    let results = search_json(dir, "Kirche", &bm25);
    assert_eq!(results["expansions"][0]["law"], "GG", "{results}");
    assert_eq!(results["expansions"][0]["from"], "kirche", "{results}");
    let added = results["expansions"][0]["to"].to_string();
    assert!(
        added.contains("Religionsgemeinschaft") && added.contains("Weltanschauung"),
        "{added}"
    );
    assert!(
        designations(&results).contains(&"Art. 4".to_string()),
        "{results}"
    );
    let without = search_json(
        dir,
        "Kirche",
        &[
            "--mode",
            "bm25",
            "--without",
            "Religionsgemeinschaft,Weltanschauung",
        ],
    );
    assert!(without.get("expansions").is_none(), "{without}");
    assert!(designations(&without).is_empty(), "{without}");
    let off = search_json(
        dir,
        "Kirche",
        &["--mode", "bm25", "--expansion-weight", "0"],
    );
    assert!(
        off.get("expansions").is_none() && designations(&off).is_empty(),
        "{off}"
    );
    // For a person: what was added, and how to remove it.
    let out = run(&[
        "search",
        "--bundles",
        dir.to_str().unwrap(),
        "--mode",
        "bm25",
        "Kirche",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("also searched (GG for \"kirche\"): Religionsgemeinschaft"),
        "{text}"
    );
}

#[test]
fn search_for_a_person_is_plain_when_piped() {
    let out = run(&[
        "search",
        "--bundles",
        gg_bundles().to_str().unwrap(),
        "--mode",
        "bm25",
        "-k",
        "2",
        "Versammlungsfreiheit",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // BM25 is deterministic: Art. 18 names the Versammlungsfreiheit (Artikel 8), Art. 17a restricts it.
    assert!(text.starts_with(" 1. GG Art. 18  ("), "{text}");
    assert!(text.contains("\n    I.\n    …"), "{text}");
    assert!(
        text.contains("https://www.gesetze-im-internet.de/gg/art_18.html"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no ANSI codes into a pipe: {text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("loaded GG"), "{stderr}");
}

#[test]
fn search_through_the_proxy_gives_the_local_results() {
    let dir = gg_bundles();
    let proxy = Proxy::start(&[]);
    let question = "Wann darf der Staat Eigentum enteignen?";
    let local = search_json(dir, question, &[]);
    let out = paragraf()
        .args(["search", "--json", "--bundles"])
        .arg(dir)
        .args(["--proxy", &proxy.url(), question])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let remote: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(designations(&remote), designations(&local));

    // A proxy that does not serve the bundles' model: refused, naming both sides.
    let other = crate::util::fake_proxy(
        serde_json::json!({"status": "ok", "model": "some/other-model",
        "dim": 384, "models": [{"model": "some/other-model", "dim": 384},
        {"model": "google/embeddinggemma-300m@256", "dim": 256}],
        "version": "0.1.0", "max_chars": 2000, "max_batch": 16}),
    );
    let err = refused(&[
        "search",
        "--bundles",
        dir.to_str().unwrap(),
        "--proxy",
        &other,
        question,
    ]);
    assert!(
        err.contains(&format!(
            "the query-embedding proxy at {other} serves some/other-model, google/embeddinggemma-300m@256 but the bundles were built with intfloat/multilingual-e5-small@q4"
        )),
        "{err}"
    );
    // The local encoder is the bundles' model; --model only says where it is, and may not name another.
    let folder = temp_dir();
    let err = refused(&[
        "search",
        "--bundles",
        dir.to_str().unwrap(),
        "--model",
        folder.path().to_str().unwrap(),
        question,
    ]);
    assert!(
        err.contains("--model names google/embeddinggemma-300m but the bundles were built with intfloat/multilingual-e5-small@q4"),
        "{err}"
    );
}

#[test]
fn show_prints_the_section_from_the_bundle() {
    let dir = gg_bundles();
    let out = run(&[
        "show",
        "GG",
        "Art. 5",
        "--json",
        "--bundles",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["schema"], "paragraf.section/1");
    assert_eq!(s["designation"], "Art. 5");
    assert_eq!(s["subsections"].as_array().unwrap().len(), 3);
    assert_eq!(s["subsections"][0]["label"], "1");
    assert!(s["subsections"][0]["sentences"].as_array().unwrap().len() >= 3);
    // Art. 18 names the freedom of the press (Art. 5 Abs. 1) among the rights one can forfeit.
    assert!(
        s["cited_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["designation"] == "Art. 18"),
        "{s}"
    );
    assert_eq!(s["url"], "https://www.gesetze-im-internet.de/gg/art_5.html");
    let text = run(&["show", "gg", "art 18", "--bundles", dir.to_str().unwrap()]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with("GG Art. 18\n"), "{text}");
    assert!(text.contains("\n  S2 Die Verwirkung"), "{text}");
    assert!(
        text.contains("Cites: Art. 5 Abs. 1; Art. 5 Abs. 3; Art. 8"),
        "{text}"
    );
    let text = run(&["show", "GG", "5", "--bundles", dir.to_str().unwrap()]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("\n(1)\n  S1 Jeder hat das Recht"), "{text}");
    let cited_by = text
        .lines()
        .find(|l| l.starts_with("Cited by: "))
        .unwrap_or_default();
    assert!(
        cited_by.split("; ").any(|c| c.ends_with("Art. 18")),
        "{text}"
    );
}

#[test]
fn show_names_the_sections_of_other_laws_that_cite_a_section() {
    let tmp = temp_dir();
    let out = tmp.path().join("bundles");
    run_ok(&[
        "build",
        "--laws",
        "BGB,ZPO",
        "--from",
        shared("corpus").to_str().unwrap(),
        "--strategies",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The sections of other laws citing BGB § 574, and what `show` said on stderr while finding them.
    let citing = || -> (Vec<String>, String) {
        let shown = run(&[
            "show",
            "BGB",
            "§ 574",
            "--json",
            "--bundles",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&shown.stderr).to_string();
        assert!(shown.status.success(), "{stderr}");
        let s: Value = serde_json::from_slice(&shown.stdout).unwrap();
        let citing = s["cited_by_other_laws"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{} {}",
                    c["law"].as_str().unwrap(),
                    c["designation"].as_str().unwrap()
                )
            })
            .collect();
        (citing, stderr)
    };
    // From the folder's cited-by shard, which `paragraf federal` (run by `build --laws`) wrote.
    let (from_shard, stderr) = citing();
    assert!(
        stderr.contains("loaded 1 cited-by shard (") && !stderr.contains("reading the folder's"),
        "{stderr}"
    );
    // ZPO § 93b: "… nach den §§ 574 bis 574b des Bürgerlichen Gesetzbuchs …" (the law named in words).
    assert!(
        from_shard.contains(&"ZPO § 93b".to_string()),
        "{from_shard:?}"
    );
    assert!(
        from_shard.iter().all(|c| c.starts_with("ZPO ")),
        "{from_shard:?}"
    );
    // A damaged shard is named, and the laws are read instead: the same sections.
    let manifest_path = out.join("manifest.json");
    let manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let shard = out.join(
        manifest["federal"]["cited_by"][0]["file"]["file"]
            .as_str()
            .unwrap(),
    );
    let good = std::fs::read(&shard).unwrap();
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 1;
    std::fs::write(&shard, bad).unwrap();
    let (from_laws, stderr) = citing();
    assert!(
        stderr.contains("does not match the manifest")
            && stderr.contains("reading the folder's laws instead")
            && stderr.contains("reading the folder's 2 laws for their citations of each other"),
        "{stderr}"
    );
    assert_eq!(from_laws, from_shard);
    // A folder indexed before the shards existed: said, and the laws are read.
    std::fs::write(&shard, good).unwrap();
    let mut older = manifest.clone();
    older["federal"].as_object_mut().unwrap().remove("cited_by");
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&older).unwrap()).unwrap();
    let (from_laws, stderr) = citing();
    assert!(stderr.contains("has no cited-by files"), "{stderr}");
    assert_eq!(from_laws, from_shard);
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let text = run_ok(&["show", "BGB", "574", "--bundles", out.to_str().unwrap()]);
    let line = text
        .lines()
        .find(|l| l.starts_with("Cited by other laws: "))
        .unwrap_or_default();
    assert!(line.contains("§ 93b ZPO"), "{text}");
    // A section no other law cites has no such field; a folder of one law reads no other.
    let alone = run(&[
        "show",
        "GG",
        "Art. 5",
        "--json",
        "--bundles",
        gg_bundles().to_str().unwrap(),
    ]);
    assert!(!String::from_utf8_lossy(&alone.stderr).contains("reading the folder's"));
    let alone: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert!(alone.get("cited_by_other_laws").is_none(), "{alone}");
}

/// Runs the CLI, expects exit code 2, returns stderr.
fn refused(args: &[&str]) -> String {
    let out = paragraf().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "paragraf {args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout when refused");
    stderr
}

#[test]
fn bad_input_is_refused_with_exit_code_2() {
    let dir = gg_bundles();
    let d = dir.to_str().unwrap();
    let err = refused(&["search", "--bundles", d, "--law", "BGB", "Miete"]);
    assert!(
        err.contains("no law \"BGB\"") && err.contains("there are: GG"),
        "{err}"
    );
    let err = refused(&["search", "--bundles", d, "--strategy", "raptor", "Miete"]);
    assert!(
        err.contains("there are: section, subsection, sentence"),
        "{err}"
    );
    let err = refused(&["search", "--bundles", d, "   "]);
    assert!(err.contains("the question is empty"), "{err}");
    let long = "Meinungsfreiheit ".repeat(6_000);
    let err = refused(&["search", "--bundles", d, &long]);
    assert!(
        err.contains("the question has 101999 bytes, more than the 4096 accepted"),
        "{err}"
    );
    let err = refused(&["search", "--bundles", d, "-k", "0", "Miete"]);
    assert!(err.contains("-k must be between 1 and 50"), "{err}");
    let err = refused(&["search", "--bundles", d, "--expansion-weight=-1", "Miete"]);
    assert!(
        err.contains("the expansion weight must be 0 (off) or more, not -1"),
        "{err}"
    );
    let err = refused(&["show", "GG", "Art. 999", "--bundles", d]);
    assert!(err.contains("GG has no section \"Art. 999\""), "{err}");

    let tmp = temp_dir();
    let missing = tmp.path().join("nothing");
    let err = refused(&["search", "--bundles", missing.to_str().unwrap(), "Miete"]);
    assert!(
        err.contains("manifest.json is missing") && err.contains("paragraf build"),
        "{err}"
    );

    // A bundle whose bytes changed after the build.
    let copy = tmp.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, copy.join(f.file_name().unwrap())).unwrap();
    }
    let manifest = Manifest::parse(&std::fs::read(copy.join("manifest.json")).unwrap()).unwrap();
    let law_file = copy.join(&manifest.law("GG").unwrap().file);
    let mut bytes = std::fs::read(&law_file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&law_file, bytes).unwrap();
    let err = refused(&[
        "search",
        "--bundles",
        copy.to_str().unwrap(),
        "--mode",
        "bm25",
        "Miete",
    ]);
    assert!(
        err.contains("does not match the manifest: expected SHA-256"),
        "{err}"
    );

    // A proxy that is not there.
    let url = format!("http://127.0.0.1:{}", free_port());
    let err = refused(&["search", "--bundles", d, "--proxy", &url, "Miete"]);
    assert!(
        err.contains(&format!(
            "the query-embedding proxy at {url} cannot be reached"
        )),
        "{err}"
    );
}

/// Runs the CLI with `args`, failing the test (and killing the process) if it has not ended within `secs`.
fn run_bounded(args: &[&str], secs: u64) -> std::process::Output {
    let mut child = paragraf()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("paragraf {args:?} still ran after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_fifo_where_a_file_should_be_is_refused_not_waited_on() {
    let tmp = temp_dir();
    let dir = crate::learn::bgb_lexical(tmp.path());
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mkfifo = |path: &Path| {
        std::fs::remove_file(path).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    };
    let bundle = dir.join(&manifest.laws[0].file);
    mkfifo(&bundle);
    let questions = tmp.path().join("q.json");
    std::fs::write(
        &questions,
        r#"[{"Question_text": "Kaution", "Paragraphs": ["§ 551"]}]"#,
    )
    .unwrap();
    let dir_arg = dir.to_str().unwrap();
    let eval = [
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        dir_arg,
        "--modes",
        "bm25",
        "--out",
        tmp.path().to_str().unwrap(),
    ];
    for args in [
        vec!["search", "--bundles", dir_arg, "--law", "BGB", "Kaution"],
        vec!["show", "--bundles", dir_arg, "BGB", "§ 551"],
        eval.to_vec(),
    ] {
        let out = run_bounded(&args, 30);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.contains(&format!(
                "{}: a FIFO, not a regular file (refused unopened)",
                bundle.display()
            )),
            "{args:?}: {stderr}"
        );
    }
    // The question file and the manifest likewise.
    mkfifo(&questions);
    let out = run_bounded(&eval, 30);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "cannot read the questions {} (set --questions or PARAGRAF_QUESTIONS): not a regular file",
            questions.display()
        )),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    mkfifo(&dir.join("manifest.json"));
    let out = run_bounded(&["search", "--bundles", dir_arg, "Kaution"], 30);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("a FIFO, not a regular file (refused unopened)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `show` reads the law bundle only: it takes no proxy and no model (options it could not use).
#[test]
fn show_takes_only_what_it_uses() {
    let bundles = gg_bundles().to_str().unwrap();
    let shown = run_ok(&["show", "GG", "Art. 5", "--bundles", bundles]);
    assert!(shown.contains("Art. 5"), "{shown}");
    for option in ["--proxy", "--model"] {
        let out = run(&["show", "GG", "Art. 5", "--bundles", bundles, option, "x"]);
        assert_eq!(out.status.code(), Some(2), "{option}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("unexpected argument '{option}'")),
            "{err}"
        );
    }
}

/// `paragraf cite` names exactly the unit cited, a range as its sections, and refuses what does not exist by
/// saying what does; `paragraf contents` lists the structure.
#[test]
fn cite_names_exactly_the_unit_or_says_what_exists() {
    let bundles = gg_bundles().to_str().unwrap();
    let cite = |citation: &str| run(&["cite", citation, "--bundles", bundles, "--json"]);
    let ok = |citation: &str| -> Value {
        let out = cite(citation);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let sentence = ok("Art. 1 Abs. 1 S. 2 GG");
    assert_eq!(sentence["schema"], "paragraf.citation/1");
    let provision = &sentence["provisions"][0];
    assert_eq!(provision["citation"], "Art. 1 Abs. 1 S. 2 GG");
    assert_eq!(
        provision["text"],
        "Sie zu achten und zu schützen ist Verpflichtung aller staatlichen Gewalt."
    );
    assert!(
        provision["stand"][0].as_str().unwrap().contains("geändert"),
        "{provision}"
    );
    // The folder holds one law: it may be left out.
    assert_eq!(
        ok("Art. 1 Abs. 1 S. 2")["provisions"],
        sentence["provisions"]
    );
    let range = ok("Art. 2 bis 4 GG");
    let cited: Vec<&str> = range["provisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["citation"].as_str().unwrap())
        .collect();
    assert_eq!(cited, ["Art. 2 GG", "Art. 3 GG", "Art. 4 GG"]);
    for (citation, message) in [
        ("Art. 1 Abs. 4 GG", "error: Art. 1 GG has no Abs. 4 (it has Abs. 1, 2, 3)"),
        ("Art. 1 Abs. 1 S. 3 GG", "error: Art. 1 Abs. 1 GG has no Satz 3 (it has 2 Sätze)"),
        ("Art. 1 S. 2 GG", "error: Art. 1 GG has 3 Absätze: name the Absatz, e.g. `Art. 1 Abs. 1 S. 2 GG`"),
        ("Art. 999 GG", "error: GG has no Art. 999; its provisions run from Eingangsformel to Art. 116"),
        ("Freiheit", "error: no citation in \"Freiheit\": write it as cited, e.g. `§ 433 Abs. 1 S. 2 BGB`, `Art. 20a GG` or `§§ 535 bis 548 BGB`"),
    ] {
        let out = cite(citation);
        assert_eq!(out.status.code(), Some(2), "{citation}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().last(), Some(message), "{citation}: {err}");
    }
    let contents = run_ok(&["contents", "GG", "--bundles", bundles]);
    assert!(
        contents.contains("I. Die Grundrechte\n  Art. 1\n"),
        "{contents}"
    );
}
