//! The bundle builder: chunking strategies over a parsed law, embedding, and the bundle and manifest files.
//!
//! Native only (it owns files, the encoder and the network); what it writes is read by `paragraf-core` in the
//! browser.

pub mod browser_model;
pub mod builder;
pub mod chunk;
pub mod expansion;
pub mod federal;
pub mod generate;
pub mod kmeans;
pub mod lumber;
pub mod manifest;
pub mod propositions;
pub mod raptor;
