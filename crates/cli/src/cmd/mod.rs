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
pub mod search;
pub mod serve;
pub mod show;
