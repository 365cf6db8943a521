//! Reads the official gesetze-im-internet.de XML into Paragraf's law model ([`paragraf_law::Law`]).
//!
//! Native only: XML parsing, archives and downloads stay out of the IO-free crates; this one fills `paragraf-law`'s model.
#![warn(missing_docs)]

pub mod archive;
pub mod fetch;
pub mod gii;
pub mod inspect;
pub mod limits;
pub mod source;

pub use archive::ArchiveError;
pub use fetch::{fetch_law, FetchError, DEFAULT_BASE_URL};
pub use gii::{default_slug, parse_bytes, parse_file, parse_str, ParseError, ParseOptions};
pub use source::{for_each_law, load_law, LoadError, SourceError};

/// One law of a source of many (the archive or a folder, [`source`]).
pub struct SourceLaw {
    /// Where it is: the path inside the archive (`laws/BJNR001950896/source.xml`) or the file in the folder.
    pub path: String,
    /// SHA-256 of the XML bytes (lower-case hex).
    pub sha256: String,
    /// The parsed law or why it failed.
    pub result: Result<paragraf_law::Law, ParseError>,
}

use paragraf_format::fault::{blame, first_fault, Blame, Fault};

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(cause: &(dyn std::error::Error + 'static)) -> Option<Fault> {
    first_fault(
        cause,
        &[
            blame::<ParseError>,
            blame::<FetchError>,
            blame::<ArchiveError>,
            blame::<LoadError>,
        ],
    )
}

impl Blame for ParseError {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

impl Blame for FetchError {
    /// A bomb, a broken archive or a bad slug is the input's fault; the network is not.
    fn fault(&self) -> Fault {
        match self {
            FetchError::Bomb { .. } | FetchError::Archive { .. } | FetchError::Slug(_) => {
                Fault::Input
            }
            // A downloaded law that does not parse: the server sent it, so not the user's input (and `Parse` is
            // transparent, so its ParseError is not a cause of its own in the chain).
            FetchError::Http { .. } | FetchError::NotFound { .. } | FetchError::Parse(_) => {
                Fault::Other
            }
        }
    }
}

impl Blame for LoadError {
    /// A law that does not parse is the input's fault (as when it is read alone); a missing one is not (exit 1,
    /// as before it had a type).
    fn fault(&self) -> Fault {
        match self {
            LoadError::Parse(_) => Fault::Input,
            LoadError::NoLaw { .. } => Fault::Other,
        }
    }
}

impl Blame for ArchiveError {
    /// An entry too large or a bomb is the archive's fault; reading it is not.
    fn fault(&self) -> Fault {
        match self {
            ArchiveError::EntryTooLarge { .. } | ArchiveError::Bomb { .. } => Fault::Input,
            ArchiveError::Read { .. } => Fault::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_law_that_does_not_parse_is_the_inputs_fault_however_it_was_read() {
        let parse = parse_str("<x/>", "x.xml", &ParseOptions::default()).unwrap_err();
        assert_eq!(fault_of(&parse), Some(Fault::Input));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.xml"), "<x/>").unwrap();
        let loaded = load_law("X", dir.path()).unwrap_err();
        assert_eq!(fault_of(&loaded), Some(Fault::Input));
        let missing = load_law("NOPE", dir.path()).unwrap_err();
        assert_eq!(fault_of(&missing), Some(Fault::Other));
        assert!(missing
            .to_string()
            .starts_with("no law \"NOPE\": it is not a file"));
    }
}
