//! `manifest.json`: the list of bundles in a bundle folder — written by `paragraf build`, read by the browser, the
//! CLI and the evaluation harness. This is the one definition of that contract.
//!
//! Files are named by content hash, so browsers may cache them forever; the manifest is the one small file that
//! says which names are current. Every reader goes through [`Manifest::parse`] (which checks the file names) and
//! verifies a bundle's bytes with [`verify_bytes`] before decoding them; unknown fields are ignored, so newer
//! tools may add to it.

use serde::{Deserialize, Serialize};

use paragraf_engine::bundle::{Producer, StrategyBundle};
use paragraf_engine::expansion::ExpansionsEntry;
use paragraf_format::digest::sha256_hex;
use paragraf_format::names::{self, NameError};
use paragraf_format::strategy::Strategy;
use paragraf_law::Law;

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// Largest manifest read (a federal build lists tens of thousands of bundles in well under this).
pub const MAX_MANIFEST_BYTES: usize = 64 << 20;

/// Why a manifest or a bundle it lists cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// Not manifest JSON.
    #[error("not a Paragraf manifest ({0})")]
    Invalid(String),
    /// Larger than [`MAX_MANIFEST_BYTES`].
    #[error("the manifest has {0} bytes, more than the {MAX_MANIFEST_BYTES} a Paragraf manifest may have")]
    TooLarge(usize),
    /// A listed file name could point outside the bundle folder.
    #[error("the manifest lists an unsafe file: {0}")]
    UnsafeName(#[from] NameError),
    /// The bytes of a file are not the ones the manifest lists.
    #[error("{file} does not match the manifest: expected {expected}, found {found}. Most likely the folder mixes files of two builds; rebuild with `paragraf build`")]
    Mismatch {
        /// File name.
        file: String,
        /// What the manifest says (size or SHA-256).
        expected: String,
        /// What the bytes are.
        found: String,
    },
    /// A file decodes to another law, strategy or model than its entry lists.
    #[error("{file} holds {found}, but the manifest lists it as {expected}. Most likely a file was copied or renamed by hand; rebuild with `paragraf build`")]
    Mislabeled {
        /// File name.
        file: String,
        /// What the file holds.
        found: String,
        /// What the manifest says it holds.
        expected: String,
    },
}

impl paragraf_format::fault::Blame for ManifestError {
    fn fault(&self) -> paragraf_format::fault::Fault {
        paragraf_format::fault::Fault::Input
    }
}

/// The whole manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The tool that last wrote it.
    #[serde(default)]
    pub generator: String,
    /// Bundle format version of the files it lists.
    #[serde(default)]
    pub format_version: u32,
    /// One entry per law.
    pub laws: Vec<LawEntry>,
    /// One entry per (law, strategy).
    pub bundles: Vec<BundleEntry>,
    /// Query expansion: the thesaurus file every law's table is built from, or why there is none (absent: built
    /// before expansion existed, or by a version that wrote a table per law).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expansions: Option<ExpansionsEntry>,
    /// The in-browser query encoder for the bundles' model, when the build made one (e5 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoder: Option<EncoderEntry>,
    /// The index across all its laws ([`crate::federal::files`]), when `paragraf federal` wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub federal: Option<FederalEntry>,
    /// What `paragraf learn` learned from labelled questions ([`paragraf_engine::learning`]), when it ran on this folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned: Option<LearnedEntry>,
}

/// The learned file of a folder ([`paragraf_engine::learning::LearnedFile`]) and what a front end says about it before
/// loading it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedEntry {
    /// The law it was learned for.
    pub law: String,
    /// The question set's short name (`GerLayQA`).
    pub source: String,
    /// Questions learned from.
    pub questions: usize,
    /// The licence of what was learned (GerLayQA: non-commercial research only).
    pub licence: String,
    /// The learned file.
    pub file: FileEntry,
    /// In a folder of many laws: the law-routing weights fit with these questions among all its laws
    /// ([`crate::federal::learned`]). Learned from the same questions, under the same licence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<LearnedRouting>,
    /// The questions learning was guarded with (`paragraf learn --guard`), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<LearnedGuard>,
}

/// Questions learning did not see that chose how far the learned signals were shrunk, run by run, so that they
/// rank no worse with learning than without. Figures with learning on these questions are therefore not held out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedGuard {
    /// SHA-256 of the guard's question file (`paragraf eval` on that file says so).
    pub sha256: String,
    /// Its questions with a gold section in the law.
    pub questions: usize,
    /// Per run (`section hybrid`, `sections bm25`, …) the factor its prior and votes were shrunk to.
    pub factors: Vec<(String, f32)>,
}

/// Law-routing weights with the learned law's signals, and what they did held out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnedRouting {
    /// The weights a search across the folder's laws routes with.
    pub weights: crate::routing_weights::RoutingWeights,
    /// The cross-validation on the learned questions among all laws (Recall@10 routed without → with learning).
    pub cv: paragraf_engine::learning::CvFigures,
}

/// A file the manifest lists by name, size and hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// File name (content-hashed).
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: String,
}

/// The index across laws: its head file, its posting shards, its section vectors, the law finder's topics, the
/// citations across laws, and what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FederalEntry {
    /// The head file (laws, sections, dictionary).
    pub head: FileEntry,
    /// Posting shards, in order: shard `n` is `shards[n]`.
    pub shards: Vec<FileEntry>,
    /// Laws indexed.
    pub laws: usize,
    /// Sections indexed.
    pub sections: usize,
    /// The quantized section vectors (`None`: lexical only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorsEntry>,
    /// Every law's topics for the law finder ([`crate::finder::TopicsFile`]); absent in folders indexed before
    /// it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topics: Option<FileEntry>,
    /// Which sections of other laws cite each section ([`crate::federal::cited`]), in shards of contiguous
    /// ranges of cited laws; empty in folders indexed before they existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cited_by: Vec<CitedByEntry>,
}

/// A shard of the citations across laws ([`crate::federal::cited::CitedByFile`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CitedByEntry {
    /// The first cited law it holds (the first shard: empty); it holds the laws up to the next shard's first.
    pub from: String,
    /// The shard.
    pub file: FileEntry,
}

impl FederalEntry {
    /// Every file of the index.
    pub fn files(&self) -> impl Iterator<Item = &FileEntry> {
        std::iter::once(&self.head)
            .chain(&self.shards)
            .chain(self.vectors.iter().map(|v| &v.file))
            .chain(&self.topics)
            .chain(self.cited_by.iter().map(|c| &c.file))
    }

    /// The cited-by shard that holds the sections of `law` ([`crate::federal::cited::shard_for`]).
    pub fn cited_by_shard(&self, law: &str) -> Option<&CitedByEntry> {
        crate::federal::cited::shard_for(&self.cited_by, |c| &c.from, law)
    }
}

/// The section vectors across laws ([`crate::federal::files::FederalVectors`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VectorsEntry {
    /// The model that embedded them: questions must be embedded with it.
    pub model: String,
    /// The vectors file.
    pub file: FileEntry,
}

/// The browser's model file ([`paragraf_e5::file`]): what lets the app embed questions with no server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EncoderEntry {
    /// The model id its vectors belong to; must equal the bundles' model.
    pub model: String,
    /// File name (content-hashed).
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: String,
    /// Pieces of the tokenizer (all kept, so token ids equal the native encoder's).
    pub pieces: usize,
    /// Pieces with their own embedding row; the others embed as `<unk>`.
    pub rows: usize,
}

impl EncoderEntry {
    /// Checks that a decoded model file is for this entry's model.
    pub fn check_model(&self, file: &str, model: &str) -> Result<(), ManifestError> {
        if model != self.model {
            return Err(ManifestError::Mislabeled {
                file: file.to_string(),
                found: format!("the query encoder of {model}"),
                expected: format!("the query encoder of {}", self.model),
            });
        }
        Ok(())
    }
}

/// A law bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LawEntry {
    /// Abbreviation, e.g. `BGB`.
    pub law: String,
    /// Full title.
    pub title: String,
    /// Short title ([`Law::short_title`](paragraf_law::Law::short_title)); absent when the archive gives none
    /// or the folder was built before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub short_title: String,
    /// gesetze-im-internet.de slug.
    pub slug: String,
    /// Build date of the source XML.
    #[serde(default)]
    pub build_date: String,
    /// Active sections.
    #[serde(default)]
    pub sections: usize,
    /// The other laws of the folder it cites or names, by abbreviation (law routing's
    /// [`ArchiveSignals::refers`](crate::federal::routing::ArchiveSignals::refers)): written by `paragraf
    /// federal`, absent in a folder of one law or indexed before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refers: Vec<String>,
    /// SHA-256 of the law XML the bundles were built from (lower-case hex): an incremental build
    /// (`paragraf build --laws`) skips a law whose XML is unchanged. Absent when built with `--law`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha256: Option<String>,
    /// File name (content-hashed).
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: String,
    /// The law's own expansion table of the older layout (`<LAW>.exp.<hash>.pgb`, before the folder's
    /// [`Manifest::expansions`]): read, never written, so that the next build deletes the file.
    #[serde(default, rename = "expansions", skip_serializing)]
    pub old_expansion_table: Option<OldExpansionTable>,
}

/// What a law entry of the older layout says about its expansion table.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct OldExpansionTable {
    /// The table's file, if one was built.
    #[serde(default)]
    pub file: Option<String>,
}

/// A strategy bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BundleEntry {
    /// Law abbreviation.
    pub law: String,
    /// Strategy name.
    pub strategy: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Who generated derived text.
    #[serde(default = "no_producer")]
    pub producer: Producer,
    /// Embedding model id.
    pub model: String,
    /// Vector dimension.
    #[serde(default)]
    pub dim: usize,
    /// `int8` or `f32`.
    #[serde(default)]
    pub precision: String,
    /// Indexed units.
    #[serde(default)]
    pub units: usize,
    /// RAPTOR summary nodes (0 otherwise).
    #[serde(default)]
    pub summary_nodes: usize,
    /// Whether the bundle carries an HNSW graph.
    #[serde(default)]
    pub hnsw: bool,
    /// Build parameters and seeds.
    #[serde(default)]
    pub params: Vec<(String, String)>,
    /// Build time of this strategy in seconds (chunking, embedding misses, clustering, writing).
    #[serde(default)]
    pub build_seconds: f64,
    /// File name (content-hashed).
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// SHA-256 of the file (lower-case hex).
    pub sha256: String,
}

fn no_producer() -> Producer {
    Producer::None
}

/// A file the manifest lists by name, size and SHA-256: what a reader needs to fetch it and to check it before
/// decoding anything.
pub trait Listed {
    /// File name (content-hashed).
    fn file(&self) -> &str;
    /// Size in bytes.
    fn size(&self) -> u64;
    /// SHA-256 (lower-case hex).
    fn sha256(&self) -> &str;

    /// Checks `bytes` against this entry (see [`verify_bytes`]).
    fn verify(&self, bytes: &[u8]) -> Result<(), ManifestError> {
        verify_bytes(self.file(), bytes, self.size(), self.sha256())
    }
}

macro_rules! listed_by_fields {
    ($($entry:ty),*) => {$(
        impl Listed for $entry {
            fn file(&self) -> &str {
                &self.file
            }
            fn size(&self) -> u64 {
                self.bytes
            }
            fn sha256(&self) -> &str {
                &self.sha256
            }
        }
    )*};
}

listed_by_fields!(
    FileEntry,
    EncoderEntry,
    LawEntry,
    BundleEntry,
    paragraf_engine::expansion::ThesaurusEntry
);

/// Checks that `bytes` are the file the manifest lists (size, then SHA-256): call before decoding a bundle.
pub fn verify_bytes(
    file: &str,
    bytes: &[u8],
    size: u64,
    sha256: &str,
) -> Result<(), ManifestError> {
    verify_size(file, bytes.len(), size)?;
    verify_sha256(file, &sha256_hex(bytes), sha256)
}

/// The size half of [`verify_bytes`]: `len` bytes arrived, `size` are listed.
pub fn verify_size(file: &str, len: usize, size: u64) -> Result<(), ManifestError> {
    if len as u64 != size {
        return Err(ManifestError::Mismatch {
            file: file.to_string(),
            expected: format!("{size} bytes"),
            found: format!("{len} bytes"),
        });
    }
    Ok(())
}

/// The digest half of [`verify_bytes`], for a SHA-256 (hex) computed elsewhere: the browser's own, off the page's
/// main thread.
pub fn verify_sha256(file: &str, found: &str, sha256: &str) -> Result<(), ManifestError> {
    if !found.eq_ignore_ascii_case(sha256) {
        return Err(ManifestError::Mismatch {
            file: file.to_string(),
            expected: format!("SHA-256 {sha256}"),
            found: format!("SHA-256 {found}"),
        });
    }
    Ok(())
}

impl LawEntry {
    /// Its abbreviation, title and short title, as [`LawNames`](crate::finder::LawNames) takes them.
    pub fn names(&self) -> (&str, &str, &str) {
        (&self.law, &self.title, &self.short_title)
    }

    /// Checks that the decoded law is the one this entry lists (abbreviation, and build date when listed); `file`
    /// names the file in the error. Call after decoding, before use.
    pub fn check_law(&self, file: &str, law: &Law) -> Result<(), ManifestError> {
        let date_differs = !self.build_date.is_empty() && self.build_date != law.build_date;
        if law.abbreviation != self.law || date_differs {
            return Err(ManifestError::Mislabeled {
                file: file.to_string(),
                found: format!("{} built {}", law.abbreviation, law.build_date),
                expected: format!("{} built {}", self.law, self.build_date),
            });
        }
        Ok(())
    }
}

impl BundleEntry {
    /// Checks that the decoded bundle is the one this entry lists (law, strategy and model), so that a bundle
    /// saved under another entry is never searched or reported under that entry's name; `file` names the file
    /// in the error. Call after decoding, before use.
    pub fn check_bundle(&self, file: &str, bundle: &StrategyBundle) -> Result<(), ManifestError> {
        let label = |law: &str, strategy: &str, model: &str| {
            format!("the {strategy} bundle of {law} embedded with {model}")
        };
        if (&bundle.law, &bundle.strategy, &bundle.model)
            != (&self.law, &self.strategy, &self.model)
        {
            return Err(ManifestError::Mislabeled {
                file: file.to_string(),
                found: label(&bundle.law, &bundle.strategy, &bundle.model),
                expected: label(&self.law, &self.strategy, &self.model),
            });
        }
        Ok(())
    }
}

impl Manifest {
    /// Parses a manifest and checks that every listed file name is a plain name inside the bundle folder.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLarge(bytes.len()));
        }
        let manifest: Manifest =
            serde_json::from_slice(bytes).map_err(|e| ManifestError::Invalid(e.to_string()))?;
        for file in manifest.files() {
            names::check_file_name(file)?;
        }
        Ok(manifest)
    }

    /// The manifest as pretty JSON (what `paragraf build` writes).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest serialises")
    }

    /// The law entry for an abbreviation.
    pub fn law(&self, abbreviation: &str) -> Option<&LawEntry> {
        self.laws.iter().find(|l| l.law == abbreviation)
    }

    /// The law to show for an abbreviation a user chose (a URL, a setting): that law, or the first when the
    /// abbreviation is empty or unknown.
    pub fn law_or_first(&self, abbreviation: &str) -> Option<&LawEntry> {
        self.law(abbreviation).or_else(|| self.laws.first())
    }

    /// Whether any law has vectors to search (a strategy bundle); a folder built with `--strategies none` has
    /// none and is searched with BM25 alone, so no query vector is ever wanted.
    pub fn has_vectors(&self) -> bool {
        !self.bundles.is_empty()
    }

    /// The embedding models of its bundles, each once, in the order they first appear.
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for bundle in &self.bundles {
            if !models.contains(&bundle.model) {
                models.push(bundle.model.clone());
            }
        }
        models
    }

    /// The strategy bundles of a law.
    pub fn bundles_of<'a>(&'a self, law: &'a str) -> impl Iterator<Item = &'a BundleEntry> + 'a {
        self.bundles.iter().filter(move |b| b.law == law)
    }

    /// The bundle to use: the named strategy, else `section`, else the law's first bundle.
    pub fn bundle<'a>(&'a self, law: &'a str, strategy: &str) -> Option<&'a BundleEntry> {
        self.bundles_of(law)
            .find(|b| b.strategy == strategy)
            .or_else(|| self.bundles_of(law).find(|b| b.strategy == "section"))
            .or_else(|| self.bundles_of(law).next())
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
            Strategy::known()
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

    /// Every file the manifest lists with its size and SHA-256, and the names of an older layout's expansion tables
    /// (listed by name only: the next build deletes them).
    pub fn listed(&self) -> (Vec<&dyn Listed>, Vec<&str>) {
        let mut listed: Vec<&dyn Listed> = Vec::new();
        listed.extend(self.laws.iter().map(|l| l as &dyn Listed));
        listed.extend(self.bundles.iter().map(|b| b as &dyn Listed));
        listed.extend(
            self.expansions
                .iter()
                .filter_map(|e| e.built())
                .map(|t| t as &dyn Listed),
        );
        listed.extend(self.encoder.iter().map(|e| e as &dyn Listed));
        listed.extend(self.learned.iter().map(|l| &l.file as &dyn Listed));
        listed.extend(
            self.federal
                .iter()
                .flat_map(|f| f.files().map(|e| e as &dyn Listed)),
        );
        let old = self
            .laws
            .iter()
            .filter_map(|l| l.old_expansion_table.as_ref()?.file.as_deref())
            .collect();
        (listed, old)
    }

    /// Every file name the manifest lists.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        let (listed, old) = self.listed();
        listed
            .into_iter()
            .map(|l| l.file())
            .chain(old)
            .collect::<Vec<_>>()
            .into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use paragraf_engine::expansion::ExpansionsEntry;

    #[test]
    fn the_manifest_records_the_file_or_why_there_is_none() {
        let skipped = ExpansionsEntry::Skipped {
            source: "/nope/openthesaurus.txt".into(),
            reason: "not found".into(),
        };
        assert_eq!(
            serde_json::to_string(&skipped).unwrap(),
            r#"{"status":"skipped","source":"/nope/openthesaurus.txt","reason":"not found"}"#
        );
        let folder = |expansions: &str| {
            format!(
                r#"{{"laws":[{{"law":"BGB","title":"t","slug":"bgb","file":"BGB.law.a.pgb","bytes":1,"sha256":""}}],"bundles":[],"expansions":{expansions}}}"#
            )
        };
        let built = folder(
            r#"{"status":"built","file":"thesaurus.b.pgb","bytes":3,"sha256":"","source":"s","terms":2}"#,
        );
        let manifest = Manifest::parse(built.as_bytes()).unwrap();
        assert_eq!(
            manifest.files().collect::<Vec<_>>(),
            ["BGB.law.a.pgb", "thesaurus.b.pgb"]
        );
        let unsafe_name = folder(
            r#"{"status":"built","file":"../x","bytes":3,"sha256":"","source":"s","terms":2}"#,
        );
        assert!(Manifest::parse(unsafe_name.as_bytes()).is_err());
        // A law's own table of the older layout is listed (so that a build deletes it), checked, never written.
        let old = r#"{"laws":[{"law":"BGB","title":"t","slug":"bgb","file":"BGB.law.a.pgb","bytes":1,"sha256":"","expansions":{"status":"built","file":"BGB.exp.c.pgb","bytes":3,"sha256":"","source":"s","terms":2}}],"bundles":[]}"#;
        let manifest = Manifest::parse(old.as_bytes()).unwrap();
        assert_eq!(
            manifest.files().collect::<Vec<_>>(),
            ["BGB.law.a.pgb", "BGB.exp.c.pgb"]
        );
        assert!(!manifest.to_json().contains("BGB.exp"));
        let unsafe_old = old.replace("BGB.exp.c.pgb", "../y");
        assert!(Manifest::parse(unsafe_old.as_bytes()).is_err());
    }

    // The law entry still has the `topics` older builds wrote there: unknown fields are ignored.
    const SAMPLE: &str = r#"{"generator":"x","format_version":2,"laws":[{"law":"GG","title":"Grundgesetz","slug":"gg","build_date":"d","sections":1,"topics":["Grundrechte"],"file":"GG.law.abc.pgb","bytes":5,"sha256":""}],
        "bundles":[{"law":"GG","strategy":"sentence","model":"m","file":"a.pgb","bytes":1,"sha256":""},{"law":"GG","strategy":"section","model":"m","file":"b.pgb","bytes":1,"sha256":""}]}"#;

    #[test]
    fn picks_named_then_section_then_first() {
        let m = Manifest::parse(SAMPLE.as_bytes()).unwrap();
        // A user's choice falls back to the first law; a lookup by name does not (a build of a second law once
        // replaced the first law's files through that fallback).
        assert_eq!(m.law_or_first("").unwrap().law, "GG");
        assert_eq!(m.law_or_first("BGB").unwrap().law, "GG");
        assert!(m.law("BGB").is_none());
        assert_eq!(m.law("GG").unwrap().law, "GG");
        assert_eq!(m.bundle("GG", "sentence").unwrap().file, "a.pgb");
        assert_eq!(m.bundle("GG", "raptor").unwrap().file, "b.pgb");
        assert!(m.bundle("BGB", "section").is_none());
        assert_eq!(
            Manifest::parse(b"<html>").unwrap_err().to_string(),
            "not a Paragraf manifest (expected value at line 1 column 1)"
        );
    }

    #[test]
    fn file_names_outside_the_folder_are_refused() {
        for bad in ["/dev/zero", "../x.pgb", "sub/x.pgb"] {
            let text = SAMPLE.replace("a.pgb", bad);
            let err = Manifest::parse(text.as_bytes()).unwrap_err().to_string();
            assert!(
                err.starts_with("the manifest lists an unsafe file: "),
                "{err}"
            );
        }
    }

    #[test]
    fn bytes_are_checked_by_size_and_hash() {
        let bytes = b"hello";
        let hash = sha256_hex(bytes);
        verify_bytes("f", bytes, 5, &hash).unwrap();
        assert_eq!(
            verify_bytes("f", bytes, 6, &hash).unwrap_err().to_string(),
            "f does not match the manifest: expected 6 bytes, found 5 bytes. Most likely the folder mixes files of two builds; rebuild with `paragraf build`"
        );
        let err = verify_bytes("f", bytes, 5, &"0".repeat(64))
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected SHA-256 0000"), "{err}");
        assert!(err.contains(&format!("found SHA-256 {hash}")), "{err}");
    }

    #[test]
    fn decoded_bundles_must_be_what_their_entry_lists() {
        let m = Manifest::parse(SAMPLE.as_bytes()).unwrap();
        let bundle = StrategyBundle {
            generator: String::new(),
            strategy: "sentence".into(),
            producer: Producer::None,
            law: "GG".into(),
            law_build_date: "d".into(),
            model: "m".into(),
            params: vec![],
            units: vec![],
            vectors: paragraf_index::vectors::VectorStore::F32 {
                dim: 1,
                values: vec![],
            },
            raptor: None,
            hnsw: None,
        };
        let (sentence, section) = (&m.bundles[0], &m.bundles[1]);
        sentence.check_bundle("a.pgb", &bundle).unwrap();
        assert_eq!(
            section.check_bundle("b.pgb", &bundle).unwrap_err().to_string(),
            "b.pgb holds the sentence bundle of GG embedded with m, but the manifest lists it as the section bundle of GG embedded with m. Most likely a file was copied or renamed by hand; rebuild with `paragraf build`"
        );
        let law = Law {
            build_date: "d".into(),
            ..Law::bare("GG", vec![])
        };
        m.laws[0].check_law("GG.law.abc.pgb", &law).unwrap();
        let other = Law {
            abbreviation: "BGB".into(),
            ..law
        };
        assert_eq!(
            m.laws[0].check_law("GG.law.abc.pgb", &other).unwrap_err().to_string(),
            "GG.law.abc.pgb holds BGB built d, but the manifest lists it as GG built d. Most likely a file was copied or renamed by hand; rebuild with `paragraf build`"
        );
    }
}
