//! The `paragraf` command line.
use clap::{Parser, Subcommand};

/// Private, offline search over German statutory law.
#[derive(Parser)]
#[command(name = "paragraf", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {}
}
