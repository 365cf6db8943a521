//! The law and what can be read from its text alone: the model every later stage reads ([`model`], re-exported
//! at the root), the German legal sentence splitter ([`sentences`]), citations ([`citations`]), statutory
//! definitions ([`definitions`]) and the analyzer behind BM25 ([`analyzer`]).
//!
//! Why a crate of its own: it is the bottom of the tree. The parser (`paragraf-corpus`) fills the model, file
//! formats frame it, search indexes it; none of that reaches back down here, and all of it is IO-free, so the
//! browser runs exactly this code on the laws it downloads.
#![warn(missing_docs)]

pub mod analyzer;
pub mod citations;
pub mod definitions;
pub mod model;
pub mod sentences;

pub use model::*;
