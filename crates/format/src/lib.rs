//! Paragraf's contracts, the things two programs must agree on byte for byte: the framing of every file
//! ([`frame`]: magic, version, length, CRC; byte vectors in them, [`bytes`]), content hashes ([`digest`]), names from data and users
//! ([`names`]), the model ids bundles record ([`models`]), the strategy names ([`strategy`]) and the
//! query-embedding proxy's JSON ([`api`]), and whose fault a failure is ([`fault`]: the exit codes' rule).
//!
//! Why a crate of its own: the proxy, the embedder, the file-system rules and the browser all read these and
//! nothing else of the search engine; keeping them here lets each depend on the contract, not on the engine.
#![warn(missing_docs)]

pub mod api;
pub mod bytes;
pub mod digest;
pub mod fault;
pub mod frame;
pub mod models;
pub mod names;
pub mod strategy;
