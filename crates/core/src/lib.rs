//! Paragraf over a folder of laws: everything front ends need beyond the engine over one law, identical in the
//! native tools and in the browser.
//!
//! This crate does no IO and compiles to `wasm32-unknown-unknown`: bytes and text in, results out. It holds the
//! folder's `manifest.json` ([`manifest`]), finding laws by name and topic ([`finder`]), the ranking across all
//! federal law and its files ([`federal`]), and what a front end shows of a section ([`results`], [`cite`]).
//! Below it: the engine over one law with its bundles, expansion and learning (`paragraf-engine`), the search
//! kernels (`paragraf-index`), the law model and its text work (`paragraf-law`), the file framing and contracts
//! (`paragraf-format`), statistics (`paragraf-stats`) and the e5 network (`paragraf-e5`).
#![warn(missing_docs)]

pub mod cite;
pub mod federal;
pub mod finder;
pub mod manifest;
pub mod results;
pub mod routing_weights;

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(
    cause: &(dyn std::error::Error + 'static),
) -> Option<paragraf_format::fault::Fault> {
    paragraf_format::fault::blame::<manifest::ManifestError>(cause)
}
