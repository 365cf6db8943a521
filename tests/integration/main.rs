//! Integration tests: the real `paragraf` binary over real law XML, real models and real servers on loopback.
//!
//! Data comes from `../shared` by default; set `PARAGRAF_SHARED` to point elsewhere.
#![allow(clippy::print_stdout)] // tests and benchmarks report their figures

mod build;
mod corpus;
mod embed;
mod federal;
mod fuzz;
mod gemma;
mod learn;
mod mcp;
mod proxy;
mod search;
mod search_cli;
mod serve;
mod util;
mod web;
