//! The `paragraf` command line: raw arguments are parsed by clap here and handed to one module per subcommand.
use clap::{Parser, Subcommand};

mod cmd;

/// Private, offline search over German statutory law.
#[derive(Parser)]
#[command(
    name = "paragraf",
    version,
    about = "Private, offline search over German statutory law",
    long_about = "Private, offline search over German statutory law.\n\n\
Typical workflow:\n  \
paragraf model fetch                         get the multilingual-e5-small model (once)\n  \
paragraf corpus stats BGB                    parse the official XML and check what was read\n  \
paragraf build --law BGB --out out/bundles   chunk, embed and write the bundles the app loads\n  \
paragraf eval --bundles out/bundles          compare strategies on GerLayQA questions\n  \
paragraf proxy --allow-origin https://…      serve query embeddings to the browser app\n\n\
Laws given by abbreviation are read from --corpus-dir (PARAGRAF_CORPUS)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse official law XML: statistics, one section, or a whole federal archive.
    Corpus {
        #[command(subcommand)]
        command: cmd::corpus::CorpusCommand,
        #[command(flatten)]
        dir: cmd::corpus::CorpusDir,
    },
    /// Build the law bundle and strategy bundles (chunk, embed, quantise) plus manifest.json.
    Build(Box<cmd::build::BuildArgs>),
    /// List the bundles of an output folder: units, bytes, build time, next to the paper's figures.
    Bundles(cmd::bundles::BundlesArgs),
    /// Evaluate strategies on GerLayQA questions: recall, MRR, nDCG, latency, significance; report + charts.
    Eval(Box<cmd::eval::EvalArgs>),
    /// Get or inspect the local e5 embedding model.
    Model(cmd::model::ModelArgs),
    /// Embed text with the local e5 encoder (vector summary, or JSON lines with --batch).
    Embed(cmd::embed::EmbedArgs),
    /// Serve query embeddings over HTTP for the browser app (`paragraf proxy bench`: load-test it).
    Proxy(Box<cmd::proxy::ProxyArgs>),
}

fn main() -> anyhow::Result<()> {
    restore_default_sigpipe();
    let cli = Cli::parse();
    match cli.command {
        Command::Corpus { command, dir } => cmd::corpus::run(command, &dir),
        Command::Build(args) => cmd::build::run(*args),
        Command::Eval(args) => cmd::eval::run(*args),
        Command::Bundles(args) => cmd::bundles::run(args),
        Command::Model(args) => cmd::model::run(args),
        Command::Embed(args) => cmd::embed::run(args),
        Command::Proxy(args) => cmd::proxy::run(*args),
    }
}

/// Rust ignores SIGPIPE, so `paragraf corpus show BGB "§ 1" | head` would panic on a closed pipe; behave like
/// every other Unix tool and end quietly instead.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up before any threads exist; SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
