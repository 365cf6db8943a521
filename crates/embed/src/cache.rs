//! On-disk embedding cache, content-addressed by (model id, text kind, text).
//!
//! Embedding every chunk of the corpus is by far the slowest build step, and most rebuilds change few texts, so
//! vectors are kept on disk keyed by `SHA-256(model id ‖ 0 ‖ kind ‖ 0 ‖ text)`: an edited text or another model
//! simply misses, and a rebuild embeds only what is new.
//!
//! **Layout.** One folder per model (`<root>/<model slug>/`) holding *shard* files, one per batch written. Shards are
//! immutable and named after the SHA-256 of their content, so they are written once: to a temporary file in the
//! same folder, fsynced, then renamed into place ([`paragraf_fs::write_atomic`]). A process killed at any moment
//! (SIGKILL included) leaves either a complete shard or a stray temporary file, which the next
//! [`EmbeddingCache::open`] deletes ([`paragraf_fs::remove_leftovers`]); it never leaves a half-written shard under
//! a real name. Fewer, larger files than one file per vector keep a corpus of 10⁵–10⁶
//! chunks cheap to open.
//!
//! **Shard format, version 1** (little-endian):
//! `magic "PGEC"`, `version: u32 = 1`, `dim: u32`, `count: u32`, `model_len: u16`, model id bytes,
//! `count × (key [32 bytes], dim × f32)`, then the SHA-256 of everything before it (32 bytes).
//! Decoding checks magic, version, model, length and checksum, each failure with its own message
//! ([`CacheError`]) naming the file and what to do.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::{EmbedError, EmbeddingBackend, TextKind};

/// Magic bytes of a shard.
pub const MAGIC: &[u8; 4] = b"PGEC";
/// The shard format this build writes and reads.
pub const VERSION: u32 = 1;
/// File extension of shards.
pub const EXTENSION: &str = "pgec";

/// A cache key: SHA-256 of (model id, kind, text).
pub type Key = [u8; 32];

/// Why a shard could not be decoded. The messages are part of the interface (tests pin them).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CacheError {
    /// Not a shard (wrong magic).
    #[error("embedding cache file {path} is not a cache shard (bad magic); remove it from the cache folder")]
    Foreign {
        /// The file.
        path: String,
    },
    /// A shard of another format version.
    #[error("embedding cache file {path} has format version {found}, this build reads version {VERSION}; delete the cache folder to rebuild it")]
    Version {
        /// The file.
        path: String,
        /// Its version.
        found: u32,
    },
    /// Shorter than its header announces.
    #[error("embedding cache file {path} is truncated ({actual} bytes, expected {expected}); delete it and it will be rebuilt")]
    Truncated {
        /// The file.
        path: String,
        /// Its size.
        actual: usize,
        /// The size its header announces.
        expected: usize,
    },
    /// The checksum does not match.
    #[error("embedding cache file {path} is corrupt (checksum mismatch); delete it and it will be rebuilt")]
    Checksum {
        /// The file.
        path: String,
    },
    /// Vectors of another model or width.
    #[error("embedding cache file {path} holds vectors of model {found:?} ({found_dim} dims), expected {expected:?} ({expected_dim} dims); it is in the wrong folder, delete it")]
    Model {
        /// The file.
        path: String,
        /// The model in the file.
        found: String,
        /// Its width.
        found_dim: usize,
        /// The model expected.
        expected: String,
        /// Its width.
        expected_dim: usize,
    },
}

/// A decoded shard.
#[derive(Debug, PartialEq)]
pub struct Shard {
    /// The model (and settings) the vectors are of.
    pub model_id: String,
    /// Their width.
    pub dim: usize,
    /// Each text's key and vector.
    pub entries: Vec<(Key, Vec<f32>)>,
}

const HEADER: usize = 4 + 4 + 4 + 4 + 2;

/// Encodes a shard (see the module docs for the format).
pub fn encode_shard(model_id: &str, dim: usize, entries: &[(Key, Vec<f32>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + model_id.len() + entries.len() * (32 + 4 * dim) + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(dim as u32).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    out.extend_from_slice(&(model_id.len() as u16).to_le_bytes());
    out.extend_from_slice(model_id.as_bytes());
    for (key, v) in entries {
        assert_eq!(v.len(), dim, "vector of the wrong dimension");
        out.extend_from_slice(key);
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// Decodes and verifies a shard; `path` is only used in messages. Never panics, whatever the bytes.
pub fn decode_shard(path: &str, data: &[u8]) -> Result<Shard, CacheError> {
    let truncated = |expected: usize| CacheError::Truncated {
        path: path.to_string(),
        actual: data.len(),
        expected,
    };
    if data.len() < 4 || &data[..4] != MAGIC {
        if data.len() < 4 && MAGIC.starts_with(data) {
            return Err(truncated(HEADER + 32));
        }
        return Err(CacheError::Foreign {
            path: path.to_string(),
        });
    }
    if data.len() < 8 {
        return Err(truncated(HEADER + 32));
    }
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    let version = u32_at(4);
    if version != VERSION {
        return Err(CacheError::Version {
            path: path.to_string(),
            found: version,
        });
    }
    if data.len() < HEADER {
        return Err(truncated(HEADER + 32));
    }
    let dim = u32_at(8) as usize;
    let count = u32_at(12) as usize;
    let model_len = u16::from_le_bytes([data[16], data[17]]) as usize;
    let expected = (32 + 4 * dim as u128) * count as u128 + (HEADER + model_len + 32) as u128;
    if (data.len() as u128) != expected {
        // Longer than announced is corruption, not truncation.
        if (data.len() as u128) > expected {
            return Err(CacheError::Checksum {
                path: path.to_string(),
            });
        }
        return Err(truncated(usize::try_from(expected).unwrap_or(usize::MAX)));
    }
    let body = data.len() - 32;
    if Sha256::digest(&data[..body]).as_slice() != &data[body..] {
        return Err(CacheError::Checksum {
            path: path.to_string(),
        });
    }
    let model_id = String::from_utf8_lossy(&data[HEADER..HEADER + model_len]).into_owned();
    let mut entries = Vec::with_capacity(count);
    let mut at = HEADER + model_len;
    for _ in 0..count {
        let key: Key = data[at..at + 32].try_into().unwrap();
        at += 32;
        let v = data[at..at + 4 * dim]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        at += 4 * dim;
        entries.push((key, v));
    }
    Ok(Shard {
        model_id,
        dim,
        entries,
    })
}

/// The cache key of a text.
pub fn key(model_id: &str, kind: TextKind, text: &str) -> Key {
    let mut h = Sha256::new();
    h.update(model_id.as_bytes());
    h.update([0]);
    h.update(kind.prefix().as_bytes());
    h.update([0]);
    h.update(text.as_bytes());
    h.finalize().into()
}

/// A folder name for a model id: readable part plus a short hash, so distinct ids never share a folder.
fn model_slug(model_id: &str) -> String {
    let readable: String = model_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let h = Sha256::digest(model_id.as_bytes());
    format!("{readable}-{}", crate::model::hex(&h[..4]))
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> EmbedError {
    let path = path.to_path_buf();
    move |source| EmbedError::Io { what, path, source }
}

/// The vectors of one model, loaded from and appended to its cache folder.
pub struct EmbeddingCache {
    dir: PathBuf,
    model_id: String,
    dim: usize,
    vectors: HashMap<Key, Vec<f32>>,
}

impl EmbeddingCache {
    /// Opens (creating it if needed) the cache of `model_id` under `root`, loading every shard and deleting stray
    /// temporary files of killed writers. A damaged shard is an error that names the file.
    pub fn open(root: &Path, model_id: &str, dim: usize) -> Result<EmbeddingCache, EmbedError> {
        let dir = root.join(model_slug(model_id));
        std::fs::create_dir_all(&dir).map_err(io("cannot create cache folder", &dir))?;
        paragraf_fs::remove_leftovers(&dir)?;
        let mut vectors = HashMap::new();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(io("cannot list cache folder", &dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        for path in paths {
            // Temporary files of writers still running end in `.tmp-<pid>`: not shards yet.
            if path.extension().is_none_or(|e| e != EXTENSION) {
                continue;
            }
            let data = std::fs::read(&path).map_err(io("cannot read cache file", &path))?;
            let shard = decode_shard(&path.display().to_string(), &data)?;
            if shard.model_id != model_id || shard.dim != dim {
                return Err(CacheError::Model {
                    path: path.display().to_string(),
                    found: shard.model_id,
                    found_dim: shard.dim,
                    expected: model_id.to_string(),
                    expected_dim: dim,
                }
                .into());
            }
            vectors.extend(shard.entries);
        }
        Ok(EmbeddingCache {
            dir,
            model_id: model_id.to_string(),
            dim,
            vectors,
        })
    }

    /// The folder holding this model's shards.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of cached vectors.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether nothing is cached yet.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// The cached vector of `text`, if any.
    pub fn get(&self, kind: TextKind, text: &str) -> Option<&[f32]> {
        self.vectors
            .get(&key(&self.model_id, kind, text))
            .map(Vec::as_slice)
    }

    /// Stores vectors for `texts` as one new shard, written with [`paragraf_fs::write_atomic`].
    pub fn insert(
        &mut self,
        kind: TextKind,
        texts: &[&str],
        vectors: &[Vec<f32>],
    ) -> Result<(), EmbedError> {
        let entries: Vec<(Key, Vec<f32>)> = texts
            .iter()
            .zip(vectors)
            .map(|(t, v)| (key(&self.model_id, kind, t), v.clone()))
            .collect();
        if entries.is_empty() {
            return Ok(());
        }
        let bytes = encode_shard(&self.model_id, self.dim, &entries);
        let name = format!(
            "{}.{EXTENSION}",
            crate::model::hex(&Sha256::digest(&bytes)[..16])
        );
        paragraf_fs::write_atomic(&self.dir.join(name), &bytes)?;
        self.vectors.extend(entries);
        Ok(())
    }
}

/// A backend wrapped with a cache: hits come from disk, misses are embedded in one call and stored as a shard.
pub struct CachedBackend<B> {
    inner: B,
    cache: Mutex<EmbeddingCache>,
}

impl<B: EmbeddingBackend> CachedBackend<B> {
    /// Opens the cache for `inner`'s model and settings ([`EmbeddingBackend::cache_id`]) under `root`.
    pub fn open(inner: B, root: &Path) -> Result<CachedBackend<B>, EmbedError> {
        let cache = EmbeddingCache::open(root, &inner.cache_id(), inner.dim())?;
        Ok(CachedBackend {
            inner,
            cache: Mutex::new(cache),
        })
    }

    /// Number of vectors in the cache.
    pub fn cached(&self) -> usize {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// How many of `texts` are already cached.
    pub fn hits(&self, texts: &[&str], kind: TextKind) -> usize {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        texts
            .iter()
            .filter(|t| cache.get(kind, t).is_some())
            .count()
    }
}

impl<B: EmbeddingBackend> EmbeddingBackend for CachedBackend<B> {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn cache_id(&self) -> String {
        self.inner.cache_id()
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            texts
                .iter()
                .map(|t| cache.get(kind, t).map(<[f32]>::to_vec))
                .collect()
        };
        let mut missing: Vec<&str> = Vec::new();
        for (t, v) in texts.iter().zip(&out) {
            if v.is_none() && !missing.contains(t) {
                missing.push(t);
            }
        }
        if !missing.is_empty() {
            let fresh = self.inner.embed(&missing, kind)?;
            self.cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(kind, &missing, &fresh)?;
            let by_text: HashMap<&str, &Vec<f32>> = missing.iter().copied().zip(&fresh).collect();
            for (t, v) in texts.iter().zip(out.iter_mut()) {
                if v.is_none() {
                    *v = Some(by_text[t].clone());
                }
            }
        }
        Ok(out
            .into_iter()
            .map(|v| v.expect("every text resolved"))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const MODEL: &str = "test/model@1";

    fn sample() -> Vec<u8> {
        encode_shard(
            MODEL,
            3,
            &[
                ([7; 32], vec![1.0, -2.0, 0.5]),
                ([9; 32], vec![0.0, 0.25, 3.0]),
            ],
        )
    }

    #[test]
    fn shard_round_trip() {
        let shard = decode_shard("s", &sample()).unwrap();
        assert_eq!(shard.model_id, MODEL);
        assert_eq!(shard.entries[1], ([9; 32], vec![0.0, 0.25, 3.0]));
    }

    #[test]
    fn truncated_shard() {
        let data = sample();
        let err = decode_shard("/c/a.pgec", &data[..data.len() - 5]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "embedding cache file /c/a.pgec is truncated ({} bytes, expected {}); delete it and it will be rebuilt",
                data.len() - 5,
                data.len()
            )
        );
        assert!(matches!(
            decode_shard("x", &data[..2]),
            Err(CacheError::Truncated { .. })
        ));
        assert!(matches!(
            decode_shard("x", &data[..10]),
            Err(CacheError::Truncated { .. })
        ));
    }

    #[test]
    fn corrupt_shard() {
        let mut data = sample();
        let at = data.len() - 40;
        data[at] ^= 0x01;
        assert_eq!(
            decode_shard("/c/a.pgec", &data).unwrap_err().to_string(),
            "embedding cache file /c/a.pgec is corrupt (checksum mismatch); delete it and it will be rebuilt"
        );
    }

    #[test]
    fn old_version_and_foreign_files() {
        let mut data = sample();
        data[4..8].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(
            decode_shard("/c/a.pgec", &data).unwrap_err().to_string(),
            "embedding cache file /c/a.pgec has format version 0, this build reads version 1; delete the cache folder to rebuild it"
        );
        assert_eq!(
            decode_shard("/c/b.pgec", b"{\"json\": true}").unwrap_err().to_string(),
            "embedding cache file /c/b.pgec is not a cache shard (bad magic); remove it from the cache folder"
        );
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error() {
        let data = sample();
        for len in 0..data.len() {
            assert!(
                decode_shard("x", &data[..len]).is_err(),
                "truncated to {len}"
            );
        }
        for at in 0..data.len() {
            for bit in 0..8 {
                let mut d = data.clone();
                d[at] ^= 1 << bit;
                assert!(decode_shard("x", &d).is_err(), "bit {bit} of byte {at}");
            }
        }
    }

    #[test]
    fn keys_separate_model_kind_and_text() {
        let k = key(MODEL, TextKind::Query, "a");
        assert_ne!(k, key(MODEL, TextKind::Passage, "a"));
        assert_ne!(k, key("other", TextKind::Query, "a"));
        assert_ne!(k, key(MODEL, TextKind::Query, "a "));
    }

    /// A backend that counts how many texts it embedded.
    struct Counting(AtomicUsize);

    impl EmbeddingBackend for Counting {
        fn model_id(&self) -> &str {
            MODEL
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str], _: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    #[test]
    fn rebuild_embeds_only_new_texts() {
        let root = tempfile::tempdir().unwrap();
        let b = CachedBackend::open(Counting(AtomicUsize::new(0)), root.path()).unwrap();
        let v = b.embed(&["a", "bb", "a"], TextKind::Passage).unwrap();
        assert_eq!(v, vec![vec![1.0, 1.0], vec![2.0, 1.0], vec![1.0, 1.0]]);
        assert_eq!(b.inner.0.load(Ordering::SeqCst), 2);
        drop(b);

        let b = CachedBackend::open(Counting(AtomicUsize::new(0)), root.path()).unwrap();
        assert_eq!(b.cached(), 2);
        let v = b.embed(&["bb", "ccc", "a"], TextKind::Passage).unwrap();
        assert_eq!(v[1], vec![3.0, 1.0]);
        assert_eq!(
            b.inner.0.load(Ordering::SeqCst),
            1,
            "only the new text is embedded"
        );
        b.embed(&["a"], TextKind::Query).unwrap();
        assert_eq!(
            b.inner.0.load(Ordering::SeqCst),
            2,
            "another kind is another key"
        );
    }

    #[test]
    fn open_reports_damaged_shards_and_removes_stale_temp_files() {
        let root = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(root.path(), MODEL, 3).unwrap();
        cache
            .insert(TextKind::Passage, &["x"], &[vec![1.0, 2.0, 3.0]])
            .unwrap();
        let dir = cache.dir().to_path_buf();
        // A killed writer's temporary file (u32::MAX is above any pid).
        let leftover = dir.join(format!(".0123.pgec.tmp-{}", u32::MAX));
        std::fs::write(&leftover, b"half a shard").unwrap();
        let cache = EmbeddingCache::open(root.path(), MODEL, 3).unwrap();
        assert_eq!(
            cache.get(TextKind::Passage, "x"),
            Some(&[1.0, 2.0, 3.0][..])
        );
        assert!(!leftover.exists());

        let shard = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let data = std::fs::read(&shard).unwrap();
        std::fs::write(&shard, &data[..data.len() - 1]).unwrap();
        let err = EmbeddingCache::open(root.path(), MODEL, 3)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("is truncated"), "{err}");
        assert!(err.contains(&shard.display().to_string()), "{err}");
    }
}
