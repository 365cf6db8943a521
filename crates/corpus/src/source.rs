//! Where many laws come from at once (`paragraf build --laws`, `paragraf corpus scan`): the federal archive
//! (`.tar.xz`, streamed, see [`crate::archive`]) or a folder of law XML files (`corpus fetch` writes one).
//!
//! Both yield the same [`SourceLaw`] per law, with the SHA-256 of its XML so an incremental build can tell an
//! unchanged law without parsing it again, and a parse failure per law instead of a failure of the whole source:
//! one broken law must not stop 6,876 others.

use crate::archive::{self, ArchiveError};
use crate::gii::{parse_bytes, ParseError, ParseOptions};
use crate::limits::{self, MAX_XML_BYTES};
use crate::SourceLaw;
use paragraf_law::Law;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// Why a source could not be read at all (one bad law is reported in its [`SourceLaw`] instead).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The archive.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The folder could not be listed.
    #[error("{folder}: cannot list the folder: {source}")]
    Folder {
        /// The folder.
        folder: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Neither an archive nor a folder.
    #[error("{0}: not a folder of law XML files and not a .tar.xz archive. Most likely the path is mistyped; the federal archive is `gii-federal-<date>.tar.xz`")]
    Unknown(String),
}

/// Visits every law of `source` (a `.tar.xz` archive or a folder of `*.xml` files, in name order) until `visit`
/// breaks; returns how many it visited.
pub fn for_each_law(
    source: &Path,
    mut visit: impl FnMut(SourceLaw) -> ControlFlow<()>,
) -> Result<usize, SourceError> {
    match kind(source)? {
        Kind::Folder => for_each_file(source, visit),
        Kind::Archive => Ok(archive::for_each_law(source, &mut visit)?),
    }
}

/// What a source is.
enum Kind {
    Folder,
    Archive,
}

fn kind(source: &Path) -> Result<Kind, SourceError> {
    if source.is_dir() {
        Ok(Kind::Folder)
    } else if source.is_file() && source.to_string_lossy().ends_with(".tar.xz") {
        Ok(Kind::Archive)
    } else {
        Err(SourceError::Unknown(source.display().to_string()))
    }
}

/// Checks that `source` is a folder or a `.tar.xz` archive, before work that needs it starts.
pub fn check(source: &Path) -> Result<(), SourceError> {
    kind(source).map(|_| ())
}

fn for_each_file(
    folder: &Path,
    mut visit: impl FnMut(SourceLaw) -> ControlFlow<()>,
) -> Result<usize, SourceError> {
    let listing = |source| SourceError::Folder {
        folder: folder.display().to_string(),
        source,
    };
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .map_err(listing)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(listing)?
        .into_iter()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml") && p.is_file())
        .collect();
    files.sort();
    let mut count = 0;
    for path in files {
        let file = path.display().to_string();
        let read = paragraf_fs::open_regular(&path)
            .map_err(Some)
            .and_then(|f| limits::read_at_most(f, MAX_XML_BYTES));
        let (sha256, result) = match read {
            Ok(bytes) => (
                paragraf_format::digest::sha256_hex(&bytes),
                parse_bytes(&bytes, &file, &ParseOptions::default()),
            ),
            Err(Some(source)) => (
                String::new(),
                Err(ParseError::Io {
                    file: file.clone(),
                    source,
                }),
            ),
            Err(None) => (
                String::new(),
                Err(ParseError::TooLarge {
                    file: file.clone(),
                    bytes: MAX_XML_BYTES + 1,
                }),
            ),
        };
        count += 1;
        if visit(SourceLaw {
            path: file,
            sha256,
            result,
        })
        .is_break()
        {
            break;
        }
    }
    Ok(count)
}
/// Why a law asked for by name or path could not be loaded ([`load_law`]).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Neither a file nor a law of the folder.
    #[error("no law {law:?}: it is not a file, and {} holds no {law}.xml. Pass the path of the law's XML, or point --corpus-dir (PARAGRAF_CORPUS) at the folder that holds it", dir.display())]
    NoLaw {
        /// The name or path asked for.
        law: String,
        /// The folder searched.
        dir: PathBuf,
    },
    /// The file is not a law that parses.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// The law `law` names: an existing file, else `<dir>/<file_stem(law)>.xml` (case-insensitive, as `corpus fetch`
/// stores a law; plain abbreviations such as `BGB` are their own stem), parsed.
pub fn load_law(law: &str, dir: &Path) -> Result<Law, LoadError> {
    let as_path = PathBuf::from(law);
    let path = if as_path.is_file() {
        as_path
    } else {
        let wanted = format!(
            "{}.xml",
            paragraf_format::names::file_stem(law).to_lowercase()
        );
        let found = std::fs::read_dir(dir).ok().and_then(|entries| {
            entries.filter_map(|e| e.ok()).map(|e| e.path()).find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().to_lowercase() == wanted)
            })
        });
        found.ok_or_else(|| LoadError::NoLaw {
            law: law.to_string(),
            dir: dir.to_path_buf(),
        })?
    };
    Ok(crate::parse_file(&path)?)
}
