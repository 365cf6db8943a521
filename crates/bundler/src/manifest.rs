//! `manifest.json` and the bundles it lists, on disk: the native side of [`paragraf_core::manifest`].
//!
//! The contract (types, parsing with file-name checks) is `paragraf_core::manifest`'s (hashing `paragraf_format::digest`'s), shared with the browser; this module
//! adds what needs files: loading with a size limit, saving atomically (merged on every build, so entries of
//! other laws and strategies survive), the entries of freshly written bundles, and [`read_listed`], the one way
//! native tools read a bundle the manifest lists. It joins the name safely, reads at most the listed size (a
//! hostile entry cannot make it read a device until memory runs out), checks size and SHA-256 before anything
//! is decoded, and names the file in every error; [`read_law`] and [`read_strategy`] then check that what was
//! decoded is what the entry says it is.

use std::io::Read;
use std::path::Path;

use paragraf_core::manifest::{self as contract, verify_bytes, MAX_MANIFEST_BYTES};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_format::digest::sha256_hex;
use paragraf_format::fault::{Blame, Fault};
use paragraf_format::frame::{BundleError, FORMAT_VERSION};
use paragraf_format::strategy::Strategy;
use paragraf_fs::FsError;
use paragraf_index::vectors::VectorStore;
use paragraf_law::Law;

pub use paragraf_core::manifest::{BundleEntry, LawEntry, Manifest, MANIFEST};

/// The generator string written into the manifest and every file the build writes.
pub const GENERATOR: &str = concat!("paragraf ", env!("CARGO_PKG_VERSION"));

/// Why a bundle folder (its manifest, or a bundle the manifest lists) could not be read or written. Every message
/// names the file.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// Reading failed (a missing file included).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The manifest is not one (not JSON, too large, an unsafe file name).
    #[error("{path}: {source}. Move it away or pass another --out folder")]
    Invalid {
        /// The manifest path.
        path: String,
        /// What is wrong with it.
        source: contract::ManifestError,
    },
    /// A listed file is not what the manifest lists: other bytes, or another law, strategy or model inside
    /// (the message names the file).
    #[error(transparent)]
    Listed(contract::ManifestError),
    /// A listed file passed its checks but cannot be decoded.
    #[error("{path}: {source}")]
    Bundle {
        /// The file.
        path: String,
        /// The codec's error.
        source: BundleError,
    },
    /// Writing the manifest, or a file name from the manifest that must not become a path.
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// Reads `dir/manifest.json` (at most [`MAX_MANIFEST_BYTES`]), or starts an empty one when there is none.
pub fn load_or_new(dir: &Path) -> Result<Manifest, FolderError> {
    let path = dir.join(MANIFEST);
    let shown = path.display().to_string();
    let bytes = match paragraf_fs::open_regular(&path) {
        Ok(file) => read_at_most(file, MAX_MANIFEST_BYTES as u64 + 1, &shown)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
        Err(source) => {
            return Err(FolderError::Io {
                path: shown,
                source,
            })
        }
    };
    Manifest::parse(&bytes).map_err(|source| FolderError::Invalid {
        path: shown,
        source,
    })
}

/// Writes `dir/manifest.json` atomically and durably, stamped with this generator and format version.
pub fn save(manifest: &mut Manifest, dir: &Path) -> Result<(), FolderError> {
    manifest.generator = GENERATOR.to_string();
    manifest.format_version = FORMAT_VERSION;
    paragraf_fs::write_atomic(&dir.join(MANIFEST), manifest.to_json().as_bytes())?;
    Ok(())
}

/// The entry for a law bundle file.
pub fn law_entry(law: &Law, file: &str, bytes: &[u8]) -> LawEntry {
    LawEntry {
        law: law.abbreviation.clone(),
        title: law.title.clone(),
        short_title: law.short_title.clone(),
        slug: law.slug.clone(),
        build_date: law.build_date.clone(),
        sections: law.active_sections().count(),
        refers: Vec::new(),
        source_sha256: None,
        file: file.to_string(),
        bytes: bytes.len() as u64,
        sha256: sha256_hex(bytes),
        old_expansion_table: None,
    }
}

/// The entry for a strategy bundle file.
pub fn bundle_entry(
    bundle: &StrategyBundle,
    strategy: Strategy,
    file: &str,
    bytes: &[u8],
    build_seconds: f64,
) -> BundleEntry {
    let (dim, precision) = match &bundle.vectors {
        VectorStore::Int8(v) => (v.dim(), "int8"),
        VectorStore::F32 { dim, .. } => (*dim as usize, "f32"),
    };
    BundleEntry {
        law: bundle.law.clone(),
        strategy: bundle.strategy.clone(),
        description: strategy.description().to_string(),
        producer: bundle.producer.clone(),
        model: bundle.model.clone(),
        dim,
        precision: precision.to_string(),
        units: bundle.units.len(),
        summary_nodes: bundle.raptor.as_ref().map_or(0, |t| t.nodes.len()),
        hnsw: bundle.hnsw.is_some(),
        params: bundle.params.clone(),
        build_seconds,
        file: file.to_string(),
        bytes: bytes.len() as u64,
        sha256: sha256_hex(bytes),
    }
}

/// Reads at most `limit` bytes of `file`.
fn read_at_most(file: std::fs::File, limit: u64, shown: &str) -> Result<Vec<u8>, FolderError> {
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|source| FolderError::Io {
            path: shown.to_string(),
            source,
        })?;
    Ok(bytes)
}

/// The bytes of `file` in `dir` as the manifest lists it: the name must be a plain file name, at most
/// `size + 1` bytes are read, and size and SHA-256 must match before the caller decodes anything.
pub fn read_listed(
    dir: &Path,
    file: &str,
    size: u64,
    sha256: &str,
) -> Result<Vec<u8>, FolderError> {
    let path = paragraf_fs::join_name(dir, file)?;
    let shown = path.display().to_string();
    let opened = paragraf_fs::open_regular(&path).map_err(|source| FolderError::Io {
        path: shown.clone(),
        source,
    })?;
    let bytes = read_at_most(opened, size.saturating_add(1), &shown)?;
    verify_bytes(&shown, &bytes, size, sha256).map_err(FolderError::Listed)?;
    Ok(bytes)
}

/// The law an entry lists ([`read_law_bundle`] without its index).
pub fn read_law(dir: &Path, entry: &LawEntry) -> Result<Law, FolderError> {
    read_law_bundle(dir, entry).map(|bundle| bundle.law)
}

/// The law bundle an entry lists, verified ([`read_listed`]) and checked to hold that law.
pub fn read_law_bundle(dir: &Path, entry: &LawEntry) -> Result<LawBundle, FolderError> {
    let bytes = read_listed(dir, &entry.file, entry.bytes, &entry.sha256)?;
    let path = dir.join(&entry.file).display().to_string();
    let bundle = match LawBundle::from_bytes(&bytes) {
        Ok(bundle) => bundle,
        Err(source) => return Err(FolderError::Bundle { path, source }),
    };
    entry
        .check_law(&path, &bundle.law)
        .map_err(FolderError::Listed)?;
    Ok(bundle)
}

/// The strategy bundle an entry lists, verified ([`read_listed`]) and checked to hold that law, strategy and
/// model.
pub fn read_strategy(dir: &Path, entry: &BundleEntry) -> Result<StrategyBundle, FolderError> {
    let bytes = read_listed(dir, &entry.file, entry.bytes, &entry.sha256)?;
    let path = dir.join(&entry.file).display().to_string();
    let bundle = match StrategyBundle::from_bytes(&bytes) {
        Ok(bundle) => bundle,
        Err(source) => return Err(FolderError::Bundle { path, source }),
    };
    entry
        .check_bundle(&path, &bundle)
        .map_err(FolderError::Listed)?;
    Ok(bundle)
}

impl Blame for FolderError {
    /// The folder's contents are at fault (a damaged, foreign or mislabeled file, an unusable manifest) rather
    /// than the disk when rerunning unchanged fails again.
    fn fault(&self) -> Fault {
        match self {
            FolderError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Fault::Input
            }
            FolderError::Invalid { .. }
            | FolderError::Listed(_)
            | FolderError::Bundle { .. }
            | FolderError::Fs(FsError::Name(_)) => Fault::Input,
            FolderError::Io { .. } | FolderError::Fs(_) => Fault::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_manifest_is_empty_and_a_saved_one_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = load_or_new(dir.path()).unwrap();
        assert_eq!(manifest, Manifest::default());
        manifest.laws.push(LawEntry {
            law: "GG".into(),
            title: "Grundgesetz".into(),
            short_title: String::new(),
            slug: "gg".into(),
            build_date: "d".into(),
            sections: 1,
            refers: Vec::new(),
            source_sha256: Some("ab".repeat(32)),
            file: "GG.law.x.pgb".into(),
            bytes: 1,
            sha256: String::new(),
            old_expansion_table: None,
        });
        save(&mut manifest, dir.path()).unwrap();
        let back = load_or_new(dir.path()).unwrap();
        assert_eq!(back, manifest);
        assert_eq!(back.format_version, FORMAT_VERSION);
    }

    #[test]
    fn bad_manifests_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST);
        std::fs::write(&path, "<html>").unwrap();
        assert_eq!(
            load_or_new(dir.path()).unwrap_err().to_string(),
            format!("{}: not a Paragraf manifest (expected value at line 1 column 1). Move it away or pass another --out folder", path.display())
        );
        // Larger than the limit: refused after reading one byte more than it, whatever the file's size.
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_MANIFEST_BYTES as u64 + 1000).unwrap();
        assert_eq!(
            load_or_new(dir.path()).unwrap_err().to_string(),
            format!("{}: the manifest has {} bytes, more than the {MAX_MANIFEST_BYTES} a Paragraf manifest may have. Move it away or pass another --out folder", path.display(), MAX_MANIFEST_BYTES + 1)
        );
    }

    #[test]
    fn listed_files_are_read_within_their_size_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.pgb");
        std::fs::write(&path, b"hello").unwrap();
        let hash = sha256_hex(b"hello");
        assert_eq!(
            read_listed(dir.path(), "a.pgb", 5, &hash).unwrap(),
            b"hello"
        );
        let shown = path.display();
        assert_eq!(
            read_listed(dir.path(), "a.pgb", 4, &hash).unwrap_err().to_string(),
            format!("{shown} does not match the manifest: expected 4 bytes, found 5 bytes. Most likely the folder mixes files of two builds; rebuild with `paragraf build`")
        );
        // A hostile size does not overflow, and only the file's own bytes are read.
        assert_eq!(
            read_listed(dir.path(), "a.pgb", u64::MAX, &hash).unwrap_err().to_string(),
            format!("{shown} does not match the manifest: expected {} bytes, found 5 bytes. Most likely the folder mixes files of two builds; rebuild with `paragraf build`", u64::MAX)
        );
        let other = sha256_hex(b"other");
        assert_eq!(
            read_listed(dir.path(), "a.pgb", 5, &other).unwrap_err().to_string(),
            format!("{shown} does not match the manifest: expected SHA-256 {other}, found SHA-256 {hash}. Most likely the folder mixes files of two builds; rebuild with `paragraf build`")
        );
        assert_eq!(
            read_listed(dir.path(), "b.pgb", 5, &hash)
                .unwrap_err()
                .to_string(),
            format!(
                "{}: No such file or directory (os error 2)",
                dir.path().join("b.pgb").display()
            )
        );
        for outside in ["/dev/zero", "../a.pgb"] {
            assert_eq!(
                read_listed(dir.path(), outside, 5, &hash).unwrap_err().to_string(),
                format!("{outside:?} is not a plain file name: allowed are 1 to 200 characters A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'. Most likely the manifest was edited by hand or comes from elsewhere")
            );
        }
    }
}
