//! The bundle builder: chunking strategies over a parsed law, embedding, and the bundle and manifest files.
//!
//! Native only (it owns files, the encoder and the network); what it writes is read in the browser by
//! `paragraf-engine` (bundles), `paragraf-core` (manifest, index across laws) and `paragraf-e5` (model file).
#![warn(missing_docs)]

pub mod browser_model;
pub mod builder;
pub mod chunk;
pub mod expansion;
pub mod federal;
pub mod generate;
pub mod kmeans;
pub mod lumber;
pub mod manifest;
pub mod pipeline;
pub mod propositions;
pub mod raptor;

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(
    cause: &(dyn std::error::Error + 'static),
) -> Option<paragraf_format::fault::Fault> {
    use paragraf_format::fault::{blame, first_fault};
    first_fault(
        cause,
        &[
            blame::<manifest::FolderError>,
            blame::<federal::FederalError>,
            blame::<builder::BuildError>,
            blame::<pipeline::PipelineError>,
        ],
    )
}
