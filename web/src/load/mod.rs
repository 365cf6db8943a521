//! Everything the app fetches and computes: the manifest, law and strategy bundles, the index across laws, the
//! law finder's topics, the citations across laws (each verified against the manifest before decoding), the proxy's health and query
//! vectors, the evaluation report, and a search over what is loaded. Plain async functions over plain values;
//! `context` wires them to signals.
//!
//! One module per concern: [`files`] (verified fetching), [`law`] (one law and its strategies), [`vectors`]
//! (query vectors), [`search`] (a search over one law), [`federal`] (all laws).

mod federal;
mod files;
mod law;
mod search;
mod vectors;

pub use federal::{
    cited_by, federal, federal_vectors, law_text, run_federal_search, topics, FederalOutcome,
    FederalRequest, FederalResult, FederalVectorsNow, LoadedFederal,
};
pub use files::{manifest, report};
pub use law::{law, strategy, LoadedLaw, LoadedStrategy};
pub use search::{run_search, Outcome, SearchRequest, MORE_SECTIONS};
pub use vectors::{proxy, Embedded, VectorSource, VectorSources};
