//! The app's pages.

pub mod search;
pub mod strategies;
