//! One module per subcommand.
pub mod build;
pub mod bundles;
pub mod chart;
pub mod corpus;
pub mod distractors;
pub mod embed;
pub mod eval;
pub mod federal;
pub mod learn;
pub mod library;
pub mod mcp;
pub mod model;
pub mod proxy;
pub mod questions;
pub mod refusal;
pub mod search;
pub mod serve;
pub mod show;

use paragraf_format::fault::{blame, first_fault, Fault};

/// The fault of `cause` if it is one of this binary's errors ([`paragraf_format::fault`]): a refusal, or JSON
/// that does not have the expected shape (a file or message the user gave).
pub fn fault_of(cause: &(dyn std::error::Error + 'static)) -> Option<Fault> {
    first_fault(
        cause,
        &[blame::<refusal::Refusal>, |cause| {
            cause.is::<serde_json::Error>().then_some(Fault::Input)
        }],
    )
}
