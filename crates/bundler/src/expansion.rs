//! Build side of query expansion: read the thesaurus, keep what helps this law
//! ([`paragraf_core::expansion::ExpansionTable::build`]), and say plainly when there is none.
//!
//! Expansion is an aid, not a requirement: a missing or malformed thesaurus must not stop a build. It is reported
//! ([`Outcome::Skipped`], logged by the caller) and recorded in the manifest, so the app knows it runs without
//! expansion and why.

use paragraf_core::engine::LawIndex;
use paragraf_core::expansion::thesaurus::{Thesaurus, ThesaurusError, MAX_THESAURUS_BYTES};
use paragraf_core::expansion::{
    ExpansionFile, ExpansionTable, ExpansionsEntry, PreparedThesaurus, TableParams,
};
use paragraf_core::manifest::{sha256_hex, LawEntry};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    let file = std::fs::File::open(path).map_err(|source| match source.kind() {
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

/// What the build does about expansion for one law.
#[derive(Debug)]
pub enum Outcome {
    /// A table to write.
    Built(Box<ExpansionFile>),
    /// No table, and why.
    Skipped {
        /// The thesaurus path that was tried.
        source: String,
        /// Why it was not used.
        reason: String,
    },
}

/// The thesaurus of a build, read once for all its laws: the parsed file, or why there is none (then every law
/// is built without query expansion, and its manifest entry says why).
pub struct ThesaurusSource {
    /// The file tried.
    path: PathBuf,
    thesaurus: Result<Thesaurus, String>,
    /// Stemmed on first use, for the analyzer of the laws' indexes, and kept for every later law.
    prepared: Mutex<Option<Arc<PreparedThesaurus>>>,
}

impl ThesaurusSource {
    /// Reads the thesaurus at `path`; the second value holds warnings to show once (a missing file, malformed
    /// lines).
    pub fn read(path: &Path) -> (ThesaurusSource, Vec<String>) {
        let mut warnings = Vec::new();
        let thesaurus = match read_thesaurus(path) {
            Ok(t) => {
                if !t.malformed.is_empty() {
                    let named: Vec<String> = t
                        .malformed
                        .iter()
                        .take(WARN_LINES)
                        .map(|m| format!("line {}: {}", m.line, m.problem))
                        .collect();
                    warnings.push(format!(
                        "thesaurus {}: skipped {} malformed lines ({}{})",
                        path.display(),
                        t.malformed.len(),
                        named.join("; "),
                        if t.malformed.len() > WARN_LINES {
                            "; ..."
                        } else {
                            ""
                        }
                    ));
                }
                Ok(t)
            }
            Err(e) => {
                let reason = format!("{e}; building without query expansion");
                warnings.push(reason.clone());
                Err(reason)
            }
        };
        (
            ThesaurusSource {
                path: path.to_path_buf(),
                thesaurus,
                prepared: Mutex::new(None),
            },
            warnings,
        )
    }

    /// The parsed thesaurus, if it could be read.
    pub fn thesaurus(&self) -> Option<&Thesaurus> {
        self.thesaurus.as_ref().ok()
    }

    /// The expansion table for `index`'s law.
    pub fn expansions(&self, index: &LawIndex, generator: &str, params: TableParams) -> Outcome {
        let thesaurus = match &self.thesaurus {
            Ok(t) => t,
            Err(reason) => {
                return Outcome::Skipped {
                    source: self.path.display().to_string(),
                    reason: reason.clone(),
                }
            }
        };
        let law = &index.law;
        let headings: Vec<&str> = law
            .active_sections()
            .map(|(_, s)| s.title.as_str())
            .collect();
        let analyzer = index.bm25().analyzer();
        let prepared = {
            let mut kept = self.prepared.lock().expect("prepared thesaurus");
            match kept.as_ref().filter(|p| p.analyzer() == analyzer) {
                Some(p) => p.clone(),
                None => kept
                    .insert(Arc::new(PreparedThesaurus::new(thesaurus, analyzer)))
                    .clone(),
            }
        };
        let table = ExpansionTable::build(&prepared, index.bm25(), &headings, params);
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let heading: Vec<&str> = thesaurus.notice.lines().take(2).collect();
        Outcome::Built(Box::new(ExpansionFile {
            generator: generator.into(),
            law: law.abbreviation.clone(),
            source: format!("{name}: {}", heading.join(", ")),
            notice: thesaurus.notice.clone(),
            params,
            table,
        }))
    }
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
                ExpansionsEntry::Built {
                    file: name,
                    bytes: bytes.len() as u64,
                    sha256: sha256_hex(&bytes),
                    source: file.source.clone(),
                    terms: file.table.len(),
                }
            }
            Outcome::Skipped { source, reason } => ExpansionsEntry::Skipped {
                source: source.clone(),
                reason: reason.clone(),
            },
        })
    }
}

/// Why the expansion file a manifest lists could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ReadExpansionsError {
    /// Missing, or not the bytes the manifest lists.
    #[error(transparent)]
    Listed(#[from] crate::manifest::ManifestError),
    /// The listed bytes do not decode.
    #[error("{path}: {source}")]
    Decode {
        /// The file.
        path: String,
        /// What is wrong.
        source: paragraf_core::expansion::ExpansionError,
    },
}

/// The expansion file `entry` lists in `dir`, verified ([`crate::manifest::read_listed`]), decoded and checked
/// to be the law's; `None`
/// when the build made none (the manifest says why).
pub fn read_expansions(
    dir: &Path,
    entry: &LawEntry,
) -> Result<Option<ExpansionFile>, ReadExpansionsError> {
    let Some(ExpansionsEntry::Built {
        file,
        bytes,
        sha256,
        ..
    }) = &entry.expansions
    else {
        return Ok(None);
    };
    let data = crate::manifest::read_listed(dir, file, *bytes, sha256)?;
    let decoded =
        ExpansionFile::from_bytes(&data).map_err(|source| ReadExpansionsError::Decode {
            path: dir.join(file).display().to_string(),
            source,
        })?;
    entry
        .check_expansions(file, &decoded.law)
        .map_err(crate::manifest::ManifestError::Listed)?;
    Ok(Some(decoded))
}
