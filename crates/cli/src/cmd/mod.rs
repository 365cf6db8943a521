//! One module per subcommand.
pub mod build;
pub mod corpus;
pub mod embed;
pub mod model;
pub mod proxy;
