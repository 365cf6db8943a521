//! Reads the official gesetze-im-internet.de XML into Paragraf's law model ([`paragraf_law::Law`]).
//!
//! Native only: XML parsing, archives and downloads stay out of the wasm core, whose data types this crate fills.

pub mod archive;
pub mod fetch;
pub mod gii;
pub mod limits;
pub mod source;

pub use archive::ArchiveError;
pub use fetch::{fetch_law, FetchError, DEFAULT_BASE_URL};
pub use gii::{default_slug, parse_bytes, parse_file, parse_str, ParseError, ParseOptions};
pub use source::{for_each_law, SourceError, SourceLaw};
