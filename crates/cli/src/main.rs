//! The `paragraf` command line: raw arguments are parsed by clap here and handed to one module per subcommand.
use clap::{Parser, Subcommand};

mod cmd;

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
