//! Paragraf's core: everything that must run identically in the native tools and in the browser.
//!
//! This crate does no IO and compiles to `wasm32-unknown-unknown`: bytes and text in, results out. It holds the
//! law data model, the German legal sentence splitter and the citation parser, the bundle codec, search and what
//! is learned from past questions ([`learning`]).

pub mod analyzer;
pub mod api;
pub mod bundle;
pub mod citations;
pub mod cite;
pub mod definitions;
pub mod encoder;
pub mod engine;
pub mod eval;
pub mod expansion;
pub mod federal;
pub mod finder;
pub mod fuzz;
pub mod law;
pub mod learning;
pub mod manifest;
pub mod models;
pub mod names;
pub mod question;
pub mod results;
pub mod rng;
pub mod search;
pub mod sentences;
pub mod strategy;
pub mod vectors;

pub use law::{
    Law, ListItem, RefTarget, Reference, Section, Sentence, Span, Stand, StructureNode, Subsection,
};
