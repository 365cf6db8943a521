//! One module per subcommand.
pub mod corpus;
pub mod embed;
pub mod model;
pub mod proxy;
