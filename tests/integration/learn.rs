//! `paragraf learn` over real bundles: the BGB (BM25 only, learned from the project's own lay questions) and the
//! GG test folder (e5 vectors: dense and hybrid rankers, dense votes); then search, eval and bad input.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{copy_folder, gg_bundles, run, run_ok, shared, temp_dir};
use paragraf_core::manifest::Manifest;
use paragraf_engine::learning::LearnedFile;
use serde_json::Value;

/// The project's own lay questions about the BGB (`tests/data`, written for Paragraf).
pub fn lay_questions() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/lay-questions-bgb.json")
}

/// Situations people ask about again and again, each in several wordings (written for this test), with the
/// section a lawyer would cite: what learning can learn from.
const TAUGHT: &[(&str, &[&str])] = &[
    (
        "§ 551",
        &[
            "Der Vermieter zahlt meine Kaution nicht zurück",
            "Wann bekomme ich meine Mietkaution wieder?",
            "Meine Kaution ist nach dem Auszug immer noch nicht da",
            "Vermieter behält die Kaution einfach ein",
            "Darf der Vermieter die Kaution ein Jahr lang behalten?",
            "Kaution nicht erstattet, was tun?",
        ],
    ),
    (
        "§ 536",
        &[
            "Schimmel in der Wohnung, darf ich weniger zahlen?",
            "Heizung kaputt, kann ich die Miete kürzen?",
            "Baulärm vor dem Haus, Miete mindern?",
            "Wasserschaden im Bad, zahle ich die volle Miete?",
            "Die Wohnung ist feucht, wie viel darf ich einbehalten?",
            "Fenster undicht, Minderung möglich?",
        ],
    ),
    (
        "§ 833",
        &[
            "Der Hund des Nachbarn hat mich gebissen",
            "Ein Pferd hat mein Auto beschädigt, wer zahlt?",
            "Katze hat das Sofa des Besuchers zerkratzt",
            "Ich wurde von einem fremden Hund angefallen",
            "Wer haftet, wenn mein Hund jemanden verletzt?",
            "Die Kuh des Bauern stand auf der Straße und ich bin hineingefahren",
        ],
    ),
    (
        "§ 910",
        &[
            "Äste vom Nachbarbaum hängen in meinen Garten",
            "Darf ich die Zweige vom Nachbarn abschneiden?",
            "Wurzeln vom Baum nebenan heben meine Terrasse an",
            "Die Hecke des Nachbarn wächst über den Zaun",
            "Überhängende Äste nehmen mir das Licht",
            "Nachbar schneidet seinen Baum nicht zurück",
        ],
    ),
];

/// [`TAUGHT`] as a question file in `dir`.
pub fn taught_questions(dir: &Path) -> PathBuf {
    let json: Vec<Value> = TAUGHT
        .iter()
        .flat_map(|(gold, questions)| {
            questions
                .iter()
                .map(move |q| serde_json::json!({"Question_text": q, "Paragraphs": [gold]}))
        })
        .collect();
    let path = dir.join("taught.json");
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    path
}

/// `paragraf learn` of `questions` into the folder `dir`, with further options; its output, whatever the exit.
pub fn run_learn(questions: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "learn",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        dir.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args)
}

fn manifest(dir: &Path) -> Manifest {
    Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A BGB folder without vectors (BM25 only: builds in a second).
pub fn bgb_lexical(dir: &Path) -> PathBuf {
    let out = dir.join("bgb");
    run_ok(&[
        "build",
        "--law",
        "BGB",
        "--corpus-dir",
        shared("corpus").to_str().unwrap(),
        "--strategies",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    out
}

/// `paragraf eval` of `questions` over the folder `dir`, BM25 alone, quick (one run, 200 bootstrap rounds), the
/// report into `out`; its output, whatever the exit.
fn eval_bm25(questions: &Path, dir: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        "--questions",
        questions.to_str().unwrap(),
        "--bundles",
        dir.to_str().unwrap(),
        "--modes",
        "bm25",
        "--runs",
        "1",
        "--rounds",
        "200",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args)
}

fn search_json(dir: &Path, question: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "search",
        "--bundles",
        dir.to_str().unwrap(),
        "--law",
        "BGB",
        "--json",
    ];
    args.extend(extra);
    args.push(question);
    serde_json::from_str(&run_ok(&args)).unwrap()
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
fn learned_bm25_ranks_what_lay_people_need_and_eval_refuses_to_flatter_it() {
    let tmp = temp_dir();
    let dir = bgb_lexical(tmp.path());
    let question = "Der Vermieter rückt meine Mietkaution nicht raus";
    let before = search_json(&dir, question, &[]);
    assert!(before.get("learned").is_none());

    let taught = taught_questions(tmp.path());
    let out = run_learn(
        &taught,
        &dir,
        &[
            "--folds",
            "3",
            "--source",
            "Paragraf-Testfragen",
            "--licence",
            "MIT OR Apache-2.0",
        ],
    );
    let (stdout, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{err}");
    assert!(stdout.contains("3-fold cross-validation"), "{stdout}");
    assert!(stdout.contains("| sections bm25 |"), "{stdout}");
    assert!(
        stdout.contains("learned from 24 questions (Paragraf-Testfragen; 0 skipped) for BGB"),
        "{stdout}"
    );
    assert!(!err.contains("not in BGB"), "{err}");
    // Learning found something to learn: a vote or the prior carries weight.
    let learned_weights = stdout
        .lines()
        .find(|l| l.starts_with("- sections bm25 (× 0.75): "))
        .unwrap();
    assert_ne!(
        learned_weights,
        "- sections bm25 (× 0.75): (1, 0, 0, 0, 0; 1) (1, 0, 0, 0, 0; 1) (1, 0, 0, 0, 0; 1)"
    );

    let listed = manifest(&dir)
        .learned
        .expect("the manifest lists the learned file");
    assert_eq!((listed.law.as_str(), listed.questions), ("BGB", 24));
    let bytes = std::fs::read(dir.join(&listed.file.file)).unwrap();
    let file = LearnedFile::from_bytes(&bytes).unwrap();
    assert_eq!(file.rankers.len(), 1, "BM25 only: one ranker");
    assert_eq!(file.rankers[0].cv.folds, 3);
    assert!(
        file.rankers[0].tail.is_some_and(|t| t.valid()),
        "the ranker orders ranks 11–100 with a tail of its own"
    );
    assert!(
        stdout.contains("Tail weights per fold") && stdout.contains("- sections bm25: ("),
        "{stdout}"
    );
    // The file holds no question text, only hashes, terms and sections.
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        !text.contains("Kaution nicht erstattet"),
        "no question text"
    );

    let after = search_json(&dir, question, &[]);
    assert_eq!(after["learned"]["questions"], 24);
    assert_eq!(after["learned"]["source"], "Paragraf-Testfragen");
    let hits = designations(&after);
    assert_eq!(hits[0], "§ 551", "{hits:?}");
    let lifted = after["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["designation"] == "§ 551")
        .unwrap();
    assert!(lifted["precedents"].as_u64().unwrap() >= 1, "{lifted}");
    // Asked for more, the first 10 stay; the tail orders 20 more below them, its scores under the 10th's.
    let deeper = search_json(&dir, question, &["-k", "30"]);
    let deeper_hits = designations(&deeper);
    assert_eq!(deeper_hits.len(), 30, "{deeper_hits:?}");
    assert_eq!(deeper_hits[..10], hits[..], "{deeper_hits:?}");
    let scores: Vec<f64> = deeper["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(scores[10..].iter().all(|&s| s < scores[9]), "{scores:?}");
    // What only the tail does: its ranks, not its scores, set them, evenly spaced below the 10th.
    let steps: Vec<f64> = scores[10..].windows(2).map(|w| w[0] - w[1]).collect();
    assert!(
        steps
            .iter()
            .all(|d| (d - steps[0]).abs() < 1e-6 * scores[9]),
        "{scores:?}"
    );

    // The questions learned from are not scored with what they taught.
    let eval = |questions: &Path, extra: &[&str]| eval_bm25(questions, &dir, tmp.path(), extra);
    let refused = eval(&taught, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        stderr(&refused).lines().last().unwrap(),
        "error: 24 of the 24 questions are among the 24 the folder's learned file learned from (Paragraf-Testfragen): scoring them would flatter learning. Evaluate other questions, pass --no-learning, or --learn-per-fold to learn from these questions fold by fold"
    );
    let unlearned = eval(&taught, &["--no-learning"]);
    assert!(unlearned.status.success(), "{}", stderr(&unlearned));
    let per_fold = eval(&taught, &["--learn-per-fold", "--folds", "3"]);
    assert!(per_fold.status.success(), "{}", stderr(&per_fold));
    let md = std::fs::read_to_string(tmp.path().join("learning-cv.md")).unwrap();
    assert!(md.contains("| sections bm25 | "), "{md}");

    // Other questions are scored with learning, and the report says so.
    let other = tmp.path().join("other.json");
    std::fs::write(
        &other,
        r#"[{"Question_text": "Mein Vermieter zahlt die Mietsicherheit nicht aus", "Paragraphs": ["§ 551"]},
            {"Question_text": "Wann verjähren Ansprüche auf Schadensersatz?", "Paragraphs": ["§ 195", "§ 199"]}]"#,
    )
    .unwrap();
    let scored = eval(&other, &[]);
    assert!(scored.status.success(), "{}", stderr(&scored));
    let report = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
    assert!(
        report.contains("Ranked with what was learned from 24 questions (Paragraf-Testfragen, "),
        "{report}"
    );

    // A damaged learned file costs the learning, not the search.
    std::fs::write(dir.join(&listed.file.file), &bytes[..bytes.len() / 2]).unwrap();
    let out = run(&[
        "search",
        "--bundles",
        dir.to_str().unwrap(),
        "--law",
        "BGB",
        "--json",
        question,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("searching BGB without learning"),
        "{}",
        stderr(&out)
    );
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(results.get("learned").is_none());
}

#[test]
fn bad_question_files_are_named_and_nothing_is_half_written() {
    let tmp = temp_dir();
    let dir = bgb_lexical(tmp.path());
    let learn = |file: &Path| run_learn(file, &dir, &["--folds", "2"]);
    // Unknown sections, another law's sections, repeated ids, empty gold and repeated questions: named, skipped.
    let mut entries = vec![
        r#"{"Question_text": "Frage ohne Gold", "Paragraphs": []}"#.to_string(),
        r#"{"Question_text": "Frage mit unbekanntem Paragrafen", "Paragraphs": ["§ 9999"]}"#
            .to_string(),
        r#"{"Question_text": "Frage mit fremdem Gesetz", "Paragraphs": ["§ 3 BUrlG", "§ 1"]}"#
            .to_string(),
    ];
    for i in 0..6 {
        entries.push(format!(
            r#"{{"Question_text": "Meine Miete ist zu hoch, Frage {i}", "Paragraphs": ["§ 535", "§ 535"]}}"#
        ));
    }
    entries.push(
        r#"{"Question_text": "meine  MIETE ist zu hoch, Frage 0", "Paragraphs": ["§ 535"]}"#.into(),
    );
    let file = tmp.path().join("mixed.json");
    std::fs::write(&file, format!("[{}]", entries.join(","))).unwrap();
    let out = learn(&file);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for said in [
        "warning: § 9999 not in BGB: skipped (1 question)",
        "warning: § 3 BUrlG not in BGB: skipped (1 question)",
        "warning: 2 questions without a gold section in BGB: skipped",
        "warning: 1 repeated questions: learned once",
    ] {
        assert!(err.contains(said), "{said} missing in:\n{err}");
    }
    let listed = manifest(&dir).learned.unwrap();
    assert_eq!(listed.questions, 7);

    // Not a question file, too large, too few questions: refused, the learned file left as it was.
    let before = std::fs::read(dir.join("manifest.json")).unwrap();
    let not_json = tmp.path().join("report.json");
    std::fs::write(&not_json, r#"{"rows": []}"#).unwrap();
    let huge = tmp.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(100 << 20)
        .unwrap();
    let few = tmp.path().join("few.json");
    std::fs::write(
        &few,
        r#"[{"Question_text": "Miete", "Paragraphs": ["§ 535"]}]"#,
    )
    .unwrap();
    for (file, said) in [
        (&not_json, format!("error: {}: not GerLayQA JSON (expected [{{\"Question_text\": ..., \"Paragraphs\": [...]}}]): invalid type: map, expected a sequence at line 1 column 0", not_json.display())),
        (&huge, format!("error: {} has 104857600 bytes, more than the 67108864 a question file may have. Most likely it is not a question file; split it", huge.display())),
        (&few, format!("error: {} has 1 usable questions for BGB: too few to learn from and cross-validate in 2 folds", few.display())),
        (&tmp.path().to_path_buf(), format!("error: cannot read the questions {} (set --questions or PARAGRAF_QUESTIONS): not a regular file", tmp.path().display())),
    ] {
        let out = learn(file);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(stderr(&out).lines().last().unwrap(), said);
    }
    assert_eq!(std::fs::read(dir.join("manifest.json")).unwrap(), before);
}

/// Questions about the GG test folder's articles (Präambel, Art. 1 to 31), written for this test.
const GG_QUESTIONS: &[(&str, &str)] = &[
    ("Darf der Staat meine Briefe lesen?", "Art 10"),
    ("Darf die Post meine Pakete öffnen?", "Art 10"),
    (
        "Dürfen Männer und Frauen unterschiedlich behandelt werden?",
        "Art 3",
    ),
    (
        "Darf mein Arbeitgeber mich wegen meiner Herkunft benachteiligen?",
        "Art 3",
    ),
    (
        "Kann ich den Kriegsdienst mit der Waffe verweigern?",
        "Art 4",
    ),
    ("Darf ich meinen Glauben frei ausüben?", "Art 4"),
    ("Darf ich ohne Anmeldung demonstrieren?", "Art 8"),
    ("Dürfen wir uns friedlich versammeln?", "Art 8"),
    (
        "Darf die Polizei meine Wohnung ohne richterliche Anordnung durchsuchen?",
        "Art 13",
    ),
    ("Ist meine Wohnung vor dem Staat geschützt?", "Art 13"),
    ("Darf ich meinen Beruf frei wählen?", "Art 12"),
    ("Kann mir der Staat verbieten, Bäcker zu werden?", "Art 12"),
    ("Darf die Zeitung ohne Zensur berichten?", "Art 5"),
    ("Darf ich meine Meinung öffentlich sagen?", "Art 5"),
    ("Haben politisch Verfolgte ein Recht auf Asyl?", "Art 16a"),
    ("Bekommen Flüchtlinge in Deutschland Schutz?", "Art 16a"),
];

/// [`GG_QUESTIONS`] as a question file in `dir`.
pub fn gg_questions(dir: &Path) -> PathBuf {
    let json: Vec<Value> = GG_QUESTIONS
        .iter()
        .map(|(q, art)| serde_json::json!({"Question_text": q, "Paragraphs": [art]}))
        .collect();
    let path = dir.join("gg.json");
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    path
}

#[test]
fn learned_dense_and_hybrid_rankers_vote_with_question_vectors() {
    let tmp = temp_dir();
    let dir = tmp.path().join("gg");
    copy_folder(gg_bundles(), &dir);
    let questions = gg_questions(tmp.path());
    let out = run_learn(
        &questions,
        &dir,
        &["--strategies", "section", "--folds", "2"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for run in [
        "| sections bm25 |",
        "| section dense |",
        "| section hybrid |",
    ] {
        assert!(stdout.contains(run), "{run} missing:\n{stdout}");
    }
    // `eval --learn-per-fold --guard` over a folder with vectors guards the runs of the modes asked for.
    let guard = tmp.path().join("guard.json");
    std::fs::write(
        &guard,
        serde_json::json!([
            {"Question_text": "Darf die Polizei ohne Richter meine Wohnung durchsuchen?", "Paragraphs": ["Art 13"]},
            {"Question_text": "Muss ich eine Demonstration vorher anmelden?", "Paragraphs": ["Art 8"]},
        ])
        .to_string(),
    )
    .unwrap();
    for modes in ["bm25", "hybrid"] {
        let out = run(&[
            "eval",
            "--questions",
            questions.to_str().unwrap(),
            "--bundles",
            dir.to_str().unwrap(),
            "--strategies",
            "section",
            "--modes",
            modes,
            "--learn-per-fold",
            "--folds",
            "2",
            "--guard",
            guard.to_str().unwrap(),
            "--out",
            tmp.path()
                .join(format!("per-fold-{modes}"))
                .to_str()
                .unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{modes}: {}", stderr(&out));
        assert!(stdout.contains("# Guard: 2 questions"), "{stdout}");
    }
    let listed = manifest(&dir).learned.unwrap();
    let file =
        LearnedFile::from_bytes(&std::fs::read(dir.join(&listed.file.file)).unwrap()).unwrap();
    assert_eq!(file.rankers.len(), 3);
    assert!(
        file.rankers.iter().all(|r| r.tail.is_some()),
        "a tail per ranker"
    );
    assert_eq!(file.vectors.len(), 1, "one model's question vectors");
    assert_eq!(file.vectors[0].vectors.len(), GG_QUESTIONS.len());
    assert_eq!(
        file.provenance.licence,
        paragraf_engine::learning::GERLAYQA_LICENCE
    );
    for mode in ["dense", "hybrid"] {
        let results: Value = serde_json::from_str(&run_ok(&[
            "search",
            "--bundles",
            dir.to_str().unwrap(),
            "--law",
            "GG",
            "--mode",
            mode,
            "--json",
            "Darf der Briefträger meine Post lesen?",
        ]))
        .unwrap();
        assert_eq!(results["mode"], mode);
        assert_eq!(results["learned"]["questions"], GG_QUESTIONS.len());
        // Two of the questions learned from are about letters: they vote for Art. 10, and the hit says so.
        let art10 = results["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["designation"] == "Art. 10")
            .unwrap_or_else(|| panic!("Art. 10 among the hits: {results}"));
        assert!(art10["precedents"].as_u64().unwrap() >= 1, "{art10}");
    }
}

/// `--guard`: questions labelled carelessly (every one with §§ 1–8) teach learning to put those sections first
/// in every ranking; the guard (the project's own lay questions, none learned from) gets the learned signals
/// shrunk until its Recall@10 is not lower than without learning, and `paragraf eval` on it then agrees.
#[test]
fn a_guard_shrinks_learning_until_questions_it_did_not_see_lose_nothing() {
    let tmp = temp_dir();
    let dir = bgb_lexical(tmp.path());
    let careless: Vec<Value> = TAUGHT
        .iter()
        .flat_map(|(_, questions)| questions.iter())
        .map(|q| {
            let gold: Vec<String> = (1..=8).map(|s| format!("§ {s}")).collect();
            serde_json::json!({"Question_text": q, "Paragraphs": gold})
        })
        .collect();
    let taught = tmp.path().join("careless.json");
    std::fs::write(&taught, serde_json::to_string(&careless).unwrap()).unwrap();
    let lay = lay_questions();
    let guard = [
        "--folds",
        "2",
        "--shrink",
        "1",
        "--guard",
        lay.to_str().unwrap(),
    ];
    let out = run_learn(&taught, &dir, &guard);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout.contains("# Guard: 66 questions learning must not hurt"),
        "{stdout}"
    );
    let row: Vec<f64> = stdout
        .lines()
        .find(|l| l.starts_with("| sections bm25 | "))
        .expect("the BM25 run's guard row")
        .split('|')
        .skip(2)
        .take(4)
        .map(|c| c.trim().parse().unwrap())
        .collect();
    let [without, at_one, factor, with] = row[..] else {
        panic!("{row:?}")
    };
    assert!(with >= without, "{stdout}");
    assert!(
        at_one < without,
        "taught alone, learning hurts the guard: {stdout}"
    );
    assert!(factor < 1.0, "{stdout}");
    // The cross-validation measured the factor chosen.
    assert!(
        stdout.contains(&format!("- sections bm25 (× {factor}): ")),
        "{stdout}"
    );

    let eval = |extra: &[&str]| {
        let out_dir = tmp.path().join(format!("eval{}", extra.len()));
        let out = eval_bm25(&lay, &dir, &out_dir, extra);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: Value =
            serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
        report["rows"][0]["recall"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0] == 10)
            .unwrap()[1]
            .as_f64()
            .unwrap()
    };
    let (learned, unlearned) = (eval(&[]), eval(&["--no-learning"]));
    assert!(
        (unlearned - without).abs() < 1e-3,
        "{unlearned} vs {stdout}"
    );
    assert!((learned - with).abs() < 1e-3, "{learned} vs {stdout}");
    // `paragraf eval --learn-per-fold --guard` chooses the same factor and its folds measure it, as learn's do.
    let per_fold = eval_bm25(
        &taught,
        &dir,
        &tmp.path().join("per-fold"),
        &[
            "--learn-per-fold",
            "--folds",
            "2",
            "--guard",
            lay.to_str().unwrap(),
        ],
    );
    assert!(per_fold.status.success(), "{}", stderr(&per_fold));
    let cv = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("- sections bm25 (× "))
            .map(str::to_string)
    };
    assert_eq!(
        cv(&String::from_utf8_lossy(&per_fold.stdout)),
        cv(&stdout),
        "{}",
        String::from_utf8_lossy(&per_fold.stdout)
    );

    // The manifest records the guard, and figures with learning on the guard say they are not held out.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let guard = &manifest["learned"]["guard"];
    assert_eq!(guard["questions"], serde_json::json!(66), "{guard}");
    assert!(
        guard["factors"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(["sections bm25", factor])),
        "{guard}"
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("eval0/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["learning"]["guarded_here"], true, "{report}");
    assert_eq!(
        report["learning"]["provenance"]["questions"], manifest["learned"]["questions"],
        "{report}"
    );

    // A guard without one question about the law is refused, and says what it skipped.
    let foreign = tmp.path().join("foreign.json");
    std::fs::write(
        &foreign,
        r#"[{"Question_text": "Gibt es diesen Paragraphen?", "Paragraphs": ["§ 9999"]}]"#,
    )
    .unwrap();
    let out = run_learn(
        &taught,
        &dir,
        &["--folds", "2", "--guard", foreign.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("warning: § 9999 not in BGB: skipped (1 question)"),
        "{err}"
    );
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "error: --guard {}: no question with a gold section in BGB",
            foreign.display()
        )
    );

    // A guard must be questions learning did not see.
    let out = run_learn(
        &taught,
        &dir,
        &["--folds", "2", "--guard", taught.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).lines().last().unwrap(),
        format!(
            "error: --guard {}: 24 of its 24 usable questions are among the questions learned from ({}); a guard must be questions learning did not see",
            taught.display(),
            taught.display()
        )
    );
}

/// The project's own lay set names only sections the BGB has (its gold was checked against the text).
#[test]
fn the_projects_lay_questions_name_only_sections_of_the_bgb() {
    let tmp = temp_dir();
    let dir = bgb_lexical(tmp.path());
    let out = run_learn(&lay_questions(), &dir, &["--folds", "2"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("learned from 66 questions (GerLayQA; 0 skipped) for BGB"));
}

/// Questions across the laws of [`learned_questions_join_law_routing_only_with_questions_across_laws`] (gold
/// naming their law; written for this test).
const ACROSS: &str = r#"[
  {"Question_text": "Darf der Staat mir verbieten, meine Meinung zu sagen?", "Paragraphs": ["Art 5 GG"]},
  {"Question_text": "Jemand hat mir im Laden heimlich etwas weggenommen", "Paragraphs": ["§ 242 StGB"]},
  {"Question_text": "Ist es strafbar, jemanden öffentlich zu beleidigen?", "Paragraphs": ["§ 185 StGB"]},
  {"Question_text": "Dürfen wir uns zu einer Demonstration versammeln?", "Paragraphs": ["Art 8 GG"]},
  {"Question_text": "Mein Vermieter will wegen Eigenbedarf kündigen", "Paragraphs": ["§ 573 BGB"]}
]"#;

#[test]
fn learned_questions_join_law_routing_only_with_questions_across_laws() {
    let tmp = temp_dir();
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for law in ["BGB", "GG", "StGB"] {
        std::fs::copy(
            shared(&format!("corpus/{law}.xml")),
            corpus.join(format!("{law}.xml")),
        )
        .unwrap();
    }
    let dir = tmp.path().join("laws");
    let taught = taught_questions(tmp.path());
    let across = tmp.path().join("across.json");
    std::fs::write(&across, ACROSS).unwrap();
    let question = "Der Vermieter rückt meine Mietkaution nicht raus";
    let search = |extra: &[&str]| -> (Value, String) {
        let mut args = vec!["search", "--bundles", dir.to_str().unwrap(), "--json"];
        args.extend(extra);
        args.push(question);
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        (serde_json::from_slice(&out.stdout).unwrap(), stderr(&out))
    };

    // The build learns when asked (`paragraf learn` after it); without questions across laws, what was learned
    // serves the BGB alone, and both say so.
    let built = run_ok(&[
        "build",
        "--laws",
        "BGB,GG,StGB",
        "--from",
        corpus.to_str().unwrap(),
        "--strategies",
        "none",
        "--out",
        dir.to_str().unwrap(),
        "--learn-from",
        taught.to_str().unwrap(),
    ]);
    assert!(
        built.contains("learned from 24 questions (GerLayQA; 0 skipped) for BGB")
            && built.contains(
                "Not learned across the folder's 3 laws: that needs --across <questions across laws>"
            ),
        "{built}"
    );
    let listed = manifest(&dir).learned.unwrap();
    assert_eq!((listed.questions, listed.routing), (24, None));
    let (results, err) = search(&[]);
    assert!(results.get("learned").is_none(), "{results}");
    assert!(
        err.contains("warning: the learned file of BGB has no routing weights across laws: searching across laws without it"),
        "{err}"
    );

    // With them, the learned signals' routing weights are fit on both, cross-validated, and listed.
    let learned = run_learn(
        &taught,
        &dir,
        &[
            "--law",
            "BGB",
            "--folds",
            "3",
            "--across",
            across.to_str().unwrap(),
            "--source",
            "Paragraf-Testfragen",
        ],
    );
    let stdout = String::from_utf8_lossy(&learned.stdout);
    assert!(learned.status.success(), "{}", stderr(&learned));
    assert!(
        stdout.contains(
            "Across the folder's 3 laws (bm25, 3-fold cross-validation, held out): Recall@10 routed "
        ),
        "{stdout}"
    );
    let routing = manifest(&dir)
        .learned
        .unwrap()
        .routing
        .expect("routing weights");
    assert!(routing.weights.valid());
    assert_eq!((routing.cv.folds, routing.cv.questions), (3, 24));
    assert!(
        routing.cv.recall10_with > routing.cv.recall10_without,
        "{routing:?}"
    );
    assert!(routing.weights.prior + routing.weights.vote_lexical > 0.0);

    // A search across the laws ranks with it and says which sections similar questions led to.
    let (results, _) = search(&[]);
    assert_eq!(results["learned"]["source"], "Paragraf-Testfragen");
    assert_eq!(results["routed"], true);
    let first = &results["hits"][0];
    assert_eq!(
        (first["law"].as_str(), first["designation"].as_str()),
        (Some("BGB"), Some("§ 551")),
        "{results}"
    );
    assert!(first["precedents"].as_u64().unwrap() >= 1, "{first}");
    let text = run_ok(&["search", "--bundles", dir.to_str().unwrap(), question]);
    assert!(
        text.contains("ranked with what was learned from 24 questions (Paragraf-Testfragen; ")
            && text.contains(" of the most similar past questions led here"),
        "{text}"
    );
    let (unlearned, _) = search(&["--no-learning"]);
    assert!(unlearned.get("learned").is_none());
    assert!(unlearned["hits"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h.get("precedents").is_none()));

    // Hand-edited weights that are not weights: the search goes on without what was learned, and says why.
    let manifest_path = dir.join("manifest.json");
    let original = std::fs::read(&manifest_path).unwrap();
    let mut edited: Value = serde_json::from_slice(&original).unwrap();
    edited["learned"]["routing"]["weights"]["prior"] = (-1.0).into();
    std::fs::write(&manifest_path, edited.to_string()).unwrap();
    let (results, err) = search(&[]);
    assert!(results.get("learned").is_none(), "{results}");
    assert!(
        err.contains("routing weights for BGB are negative or not finite"),
        "{err}"
    );
    std::fs::write(&manifest_path, original).unwrap();

    // Questions it learned from are not scored with it across laws either.
    let refused = run(&[
        "eval",
        "--questions",
        taught.to_str().unwrap(),
        "--bundles",
        tmp.path().to_str().unwrap(),
        "--among",
        dir.to_str().unwrap(),
        "--modes",
        "bm25",
        "--out",
        tmp.path().join("report").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("error: 24 of the 24 questions are among those"),
        "{}",
        stderr(&refused)
    );
}
