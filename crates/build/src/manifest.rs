//! `manifest.json`: the list of bundles in an output folder, for people and for the web app.
//!
//! Files are named by content hash, so browsers may cache them forever; the manifest is the one small file that
//! says which names are current. It is merged on every build (entries of other laws and strategies survive) and
//! written atomically.

use paragraf_core::bundle::{Producer, StrategyBundle, VectorStore, FORMAT_VERSION};
use paragraf_core::strategy::Strategy;
use paragraf_core::Law;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::path::Path;

/// The manifest file name.
pub const MANIFEST: &str = "manifest.json";

/// Why the manifest could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// IO.
    #[error("{path}: {source}")]
    Io {
        /// The manifest path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not valid manifest JSON.
    #[error(
        "{path}: not a Paragraf manifest ({message}). Move it away or pass another --out folder"
    )]
    Invalid {
        /// The manifest path.
        path: String,
        /// The JSON error.
        message: String,
    },
}

/// The whole manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The tool that last wrote it.
    pub generator: String,
    /// Bundle format version of the files it lists.
    pub format_version: u32,
    /// One entry per law.
    pub laws: Vec<LawEntry>,
    /// One entry per (law, strategy).
    pub bundles: Vec<BundleEntry>,
}

/// A law bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawEntry {
    /// Abbreviation, e.g. `BGB`.
    pub law: String,
    /// Full title.
    pub title: String,
    /// gesetze-im-internet.de slug.
    pub slug: String,
    /// Build date of the source XML.
    pub build_date: String,
    /// Active sections.
    pub sections: usize,
    /// File name.
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file.
    pub sha256: String,
}

/// A strategy bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BundleEntry {
    /// Law abbreviation.
    pub law: String,
    /// Strategy name.
    pub strategy: String,
    /// One-line description.
    pub description: String,
    /// Who generated derived text.
    pub producer: Producer,
    /// Embedding model id.
    pub model: String,
    /// Vector dimension.
    pub dim: usize,
    /// `int8` or `f32`.
    pub precision: String,
    /// Indexed units.
    pub units: usize,
    /// RAPTOR summary nodes (0 otherwise).
    pub summary_nodes: usize,
    /// Whether the bundle carries an HNSW graph.
    #[serde(default)]
    pub hnsw: bool,
    /// Build parameters and seeds.
    pub params: Vec<(String, String)>,
    /// Build time of this strategy in seconds (chunking, embedding misses, clustering, writing).
    pub build_seconds: f64,
    /// File name.
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file.
    pub sha256: String,
}

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl LawEntry {
    /// The entry for a law bundle file.
    pub fn new(law: &Law, file: &str, bytes: &[u8]) -> Self {
        LawEntry {
            law: law.abbreviation.clone(),
            title: law.title.clone(),
            slug: law.slug.clone(),
            build_date: law.build_date.clone(),
            sections: law.active_sections().count(),
            file: file.to_string(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        }
    }
}

impl BundleEntry {
    /// The entry for a strategy bundle file.
    pub fn new(
        bundle: &StrategyBundle,
        strategy: Strategy,
        file: &str,
        bytes: &[u8],
        build_seconds: f64,
    ) -> Self {
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
}

impl Manifest {
    /// Reads `dir/manifest.json`, or starts an empty one when there is none.
    pub fn load_or_new(dir: &Path) -> Result<Self, ManifestError> {
        let path = dir.join(MANIFEST);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ManifestError::Invalid {
                path: path.display().to_string(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(source) => Err(ManifestError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn save(&mut self, dir: &Path) -> Result<(), ManifestError> {
        self.generator = crate::builder::GENERATOR.to_string();
        self.format_version = FORMAT_VERSION;
        let path = dir.join(MANIFEST);
        let io = |source| ManifestError::Io {
            path: path.display().to_string(),
            source,
        };
        let json = serde_json::to_string_pretty(self).expect("manifest serialises");
        let tmp = dir.join(format!("{MANIFEST}.tmp{}", std::process::id()));
        std::fs::write(&tmp, json).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    /// Adds or replaces the law's entry, returning the file name it replaced.
    pub fn upsert_law(&mut self, entry: LawEntry) -> Option<String> {
        let old = self
            .laws
            .iter()
            .position(|l| l.law == entry.law)
            .map(|i| self.laws.remove(i).file);
        self.laws.push(entry);
        self.laws.sort_by(|a, b| a.law.cmp(&b.law));
        old
    }

    /// Adds or replaces the (law, strategy) entry, returning the file name it replaced.
    pub fn upsert_bundle(&mut self, entry: BundleEntry) -> Option<String> {
        let old = self
            .bundles
            .iter()
            .position(|b| b.law == entry.law && b.strategy == entry.strategy)
            .map(|i| self.bundles.remove(i).file);
        self.bundles.push(entry);
        let order = |name: &str| {
            Strategy::all()
                .iter()
                .position(|s| s.name() == name)
                .unwrap_or(usize::MAX)
        };
        self.bundles.sort_by(|a, b| {
            a.law
                .cmp(&b.law)
                .then(order(&a.strategy).cmp(&order(&b.strategy)))
        });
        old
    }
}
