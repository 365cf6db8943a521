//! Build side of query expansion: read the thesaurus, stem it once into the folder's thesaurus file
//! ([`paragraf_engine::expansion::ThesaurusFile`], from which every law's table is built where it is loaded), and
//! say plainly when there is none.
//!
//! Expansion is an aid, not a requirement: a missing or malformed thesaurus must not stop a build. It is reported
//! ([`Outcome::Skipped`], logged by the caller) and recorded in the manifest, so the app knows it runs without
//! expansion and why.

use paragraf_core::manifest::Manifest;
use paragraf_engine::expansion::thesaurus::{Thesaurus, ThesaurusError, MAX_THESAURUS_BYTES};
use paragraf_engine::expansion::{
    ExpansionsEntry, PreparedThesaurus, TableParams, ThesaurusEntry, ThesaurusFile,
};
use paragraf_format::digest::sha256_hex;
use paragraf_law::analyzer::AnalyzerConfig;
use std::io::Read;
use std::path::Path;

/// Where Debian's `openthesaurus-de-text` puts the thesaurus (scripts/setup.sh installs it).
pub const DEFAULT_THESAURUS: &str = "/usr/share/openthesaurus-de/openthesaurus.txt";

/// At most this many malformed lines are named in the warning.
const WARN_LINES: usize = 5;

/// Why the thesaurus could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ThesaurusReadError {
    /// No file at the path.
    #[error("thesaurus {path} not found. Most likely the Debian package openthesaurus-de-text is not installed (scripts/setup.sh installs it); or pass --thesaurus PATH")]
    Missing {
        /// The path.
        path: String,
    },
    /// Reading failed.
    #[error("cannot read thesaurus {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Not UTF-8.
    #[error("thesaurus {path} is not UTF-8 text. Most likely it is not OpenThesaurus's text export (openthesaurus.txt)")]
    NotUtf8 {
        /// The path.
        path: String,
    },
    /// Not the format.
    #[error("thesaurus {path}: {source}")]
    Format {
        /// The path.
        path: String,
        /// What is wrong.
        source: ThesaurusError,
    },
}

/// Reads and parses a thesaurus file, reading at most one byte more than [`MAX_THESAURUS_BYTES`].
pub fn read_thesaurus(path: &Path) -> Result<Thesaurus, ThesaurusReadError> {
    let shown = path.display().to_string();
    let file = paragraf_fs::open_regular(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => ThesaurusReadError::Missing {
            path: shown.clone(),
        },
        _ => ThesaurusReadError::Io {
            path: shown.clone(),
            source,
        },
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_THESAURUS_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ThesaurusReadError::Io {
            path: shown.clone(),
            source,
        })?;
    if bytes.len() > MAX_THESAURUS_BYTES {
        return Err(ThesaurusReadError::Format {
            path: shown,
            source: ThesaurusError::TooLarge(bytes.len()),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| ThesaurusReadError::NotUtf8 {
        path: shown.clone(),
    })?;
    Thesaurus::parse(&text).map_err(|source| ThesaurusReadError::Format {
        path: shown,
        source,
    })
}

/// What the build does about expansion.
#[derive(Debug)]
pub enum Outcome {
    /// A thesaurus file to write.
    Built(Box<ThesaurusFile>),
    /// None, and why.
    Skipped {
        /// The thesaurus path that was tried.
        source: String,
        /// Why it was not used.
        reason: String,
    },
}

/// Reads the thesaurus at `path` and stems it for `analyzer` (that of the laws' indexes); the second value holds
/// warnings to show once (a missing file, malformed lines).
pub fn prepare(
    path: &Path,
    analyzer: AnalyzerConfig,
    generator: &str,
    params: TableParams,
) -> (Outcome, Vec<String>) {
    let mut warnings = Vec::new();
    let thesaurus = match read_thesaurus(path) {
        Ok(t) => t,
        Err(e) => {
            let reason = format!("{e}; building without query expansion");
            warnings.push(reason.clone());
            let source = path.display().to_string();
            return (Outcome::Skipped { source, reason }, warnings);
        }
    };
    if !thesaurus.malformed.is_empty() {
        let named: Vec<String> = thesaurus
            .malformed
            .iter()
            .take(WARN_LINES)
            .map(|m| format!("line {}: {}", m.line, m.problem))
            .collect();
        let more = if thesaurus.malformed.len() > WARN_LINES {
            "; ..."
        } else {
            ""
        };
        warnings.push(format!(
            "thesaurus {}: skipped {} malformed lines ({}{more})",
            path.display(),
            thesaurus.malformed.len(),
            named.join("; "),
        ));
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let heading: Vec<&str> = thesaurus.notice.lines().take(2).collect();
    let file = ThesaurusFile {
        generator: generator.into(),
        source: format!("{name}: {}", heading.join(", ")),
        notice: thesaurus.notice.clone(),
        params,
        thesaurus: PreparedThesaurus::new(&thesaurus, analyzer),
    };
    (Outcome::Built(Box::new(file)), warnings)
}

impl Outcome {
    /// The manifest entry: for a table, after `write` stored its bytes and returned the file name.
    pub fn write<E>(
        &self,
        write: impl FnOnce(&[u8]) -> Result<String, E>,
    ) -> Result<ExpansionsEntry, E> {
        Ok(match self {
            Outcome::Built(file) => {
                let bytes = file.to_bytes();
                let name = write(&bytes)?;
                ExpansionsEntry::Built(ThesaurusEntry {
                    file: name,
                    bytes: bytes.len() as u64,
                    sha256: sha256_hex(&bytes),
                    source: file.source.clone(),
                    terms: file.thesaurus.len(),
                })
            }
            Outcome::Skipped { source, reason } => ExpansionsEntry::Skipped {
                source: source.clone(),
                reason: reason.clone(),
            },
        })
    }
}

/// Why the thesaurus file a manifest lists could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadExpansionsError {
    /// Missing, or not the bytes the manifest lists.
    #[error(transparent)]
    Listed(#[from] crate::manifest::FolderError),
    /// The listed bytes do not decode.
    #[error("{path}: {source}")]
    Decode {
        /// The file.
        path: String,
        /// What is wrong.
        source: paragraf_engine::expansion::ExpansionError,
    },
}

/// The thesaurus file `manifest` lists in `dir`, verified ([`crate::manifest::read_listed`]) and decoded; `None`
/// when the build wrote none (the manifest says why, or predates expansion).
pub fn read_expansions(
    dir: &Path,
    manifest: &Manifest,
) -> Result<Option<ThesaurusFile>, ReadExpansionsError> {
    let Some(ThesaurusEntry {
        file,
        bytes,
        sha256,
        ..
    }) = manifest
        .expansions
        .as_ref()
        .and_then(ExpansionsEntry::built)
    else {
        return Ok(None);
    };
    let data = crate::manifest::read_listed(dir, file, *bytes, sha256)?;
    let decoded =
        ThesaurusFile::from_bytes(&data).map_err(|source| ReadExpansionsError::Decode {
            path: dir.join(file).display().to_string(),
            source,
        })?;
    Ok(Some(decoded))
}
