//! Building blocks of the search page.

pub mod controls;
pub mod errors;
pub mod federal_results;
pub mod law_picker;
pub mod notice;
pub mod results;
