//! The app's pages.

pub mod all_laws;
pub mod search;
pub mod strategies;
