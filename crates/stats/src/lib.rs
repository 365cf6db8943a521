//! The numbers behind every figure Paragraf reports and every weight it learns: ranking metrics ([`metrics`]),
//! the paper's significance tests ([`stats`]), k-fold cross-validation ([`cv`]), coordinate ascent ([`tune`])
//! and the seeded PRNG everything random uses ([`rng`]).
//!
//! Why a crate of its own: evaluation (native) and learning (fit natively, applied in the browser) both need
//! them, and none of them needs to know what a law or a bundle is.
#![warn(missing_docs)]

pub mod cv;
pub mod metrics;
pub mod rng;
pub mod stats;
pub mod tune;
