//! Helpers shared by the integration tests: paths to shared data, a temp dir, running the CLI.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The shared data folder (`../shared` beside the repository unless `PARAGRAF_SHARED` says otherwise).
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PARAGRAF_SHARED") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// A file under the shared data folder; panics with a clear message when it is missing.
pub fn shared(rel: &str) -> PathBuf {
    let path = shared_dir().join(rel);
    assert!(
        path.exists(),
        "missing shared data {} (set PARAGRAF_SHARED)",
        path.display()
    );
    path
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("create temp dir")
}

/// The `paragraf` binary built for this test run. Its embedding cache lives under the target folder, so tests
/// neither read nor fill the user's cache.
pub fn paragraf() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_paragraf"));
    command.env(
        "PARAGRAF_EMBEDDING_CACHE",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embedding-cache"),
    );
    command
}

/// Runs the CLI with `args`, returning its output (whatever the exit code).
pub fn run(args: &[&str]) -> Output {
    paragraf().args(args).output().expect("run paragraf")
}

/// Runs the CLI and asserts success, returning stdout as a string.
pub fn run_ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "paragraf {:?} failed ({}):\n{}",
        args,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// The e5 model file: `PARAGRAF_MODEL`, else `paragraf model fetch` (which returns at once when it is cached).
pub fn model_path() -> PathBuf {
    static MODEL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    MODEL
        .get_or_init(|| match std::env::var_os("PARAGRAF_MODEL") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(run_ok(&["model", "fetch"]).trim()),
        })
        .clone()
}

/// The real encoder, loaded once per test run.
pub fn encoder() -> &'static paragraf_embed::e5::E5Encoder {
    static ENCODER: std::sync::OnceLock<paragraf_embed::e5::E5Encoder> = std::sync::OnceLock::new();
    ENCODER.get_or_init(|| {
        paragraf_embed::e5::E5Encoder::load(&model_path()).expect("load the e5 model")
    })
}
