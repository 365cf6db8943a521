//! The `paragraf` command line: raw arguments are parsed by clap here and handed to one module per subcommand.
// A command line's output is its interface: printing is what this binary is for.
#![allow(clippy::print_stdout)]
use clap::{Parser, Subcommand};
use paragraf_format::fault::{first_fault, Fault, FaultOf};

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
paragraf serve dist --bundles out/bundles    serve the app, the bundles and query embeddings\n  \
paragraf proxy --allow-origin https://…      serve query embeddings to a static site elsewhere\n\n\
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
    /// Write the index across all laws of a bundle folder, for the browser's search over all of them.
    Federal(cmd::federal::FederalArgs),
    /// Evaluate strategies on GerLayQA questions: recall, MRR, nDCG, latency, significance; report + charts.
    Eval(Box<cmd::eval::EvalArgs>),
    /// Learn from labelled lay questions (a demand prior, similar past questions, ranking weights) for a bundle
    /// folder; cross-validated before it is written.
    Learn(Box<cmd::learn::LearnArgs>),
    /// Get or inspect the local embedding models (e5, EmbeddingGemma).
    Model(cmd::model::ModelArgs),
    /// Embed text with a local encoder, e5 or EmbeddingGemma (vector summary, or JSON lines with --batch).
    Embed(cmd::embed::EmbedArgs),
    /// Serve query embeddings over HTTP for the browser app (`paragraf proxy bench`: load-test it).
    Proxy(Box<cmd::proxy::ProxyArgs>),
    /// Serve the built app, a bundle folder and query embeddings on one origin (`paragraf serve dist --bundles
    /// out/bundles`).
    Serve(Box<cmd::serve::ServeArgs>),
    /// Search the bundles from the terminal: the app's engine and defaults (`--json` for scripts).
    Search(Box<cmd::search::SearchArgs>),
    /// Show one section from the law bundle: Absätze, sentences, citations both ways, definitions, official link.
    Show(Box<cmd::show::ShowArgs>),
    /// The text a citation names, down to the Absatz and Satz (`paragraf cite "§ 433 Abs. 1 S. 2 BGB"`).
    Cite(Box<cmd::show::CiteArgs>),
    /// A law's table of contents: its structure with the sections under each unit.
    Contents(Box<cmd::show::ContentsArgs>),
    /// Serve search_law, get_section and list_laws to AI assistants (Model Context Protocol over stdio).
    Mcp(Box<cmd::mcp::McpArgs>),
}

fn main() {
    let cli = Cli::parse();
    if !cli.command.serves_http() {
        restore_default_sigpipe();
    }
    if let Err(error) = run(cli) {
        eprintln!("error: {}", describe(&error));
        std::process::exit(exit_code(&error));
    }
}

/// The error and its causes on one line, `outer: inner: root` (as `{:#}` prints them, without Debug noise), leaving
/// out a cause whose text the message before it already quotes: many library errors say `path: <os error>` and
/// also carry that OS error as their source.
fn describe(error: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The exit status of a failed command, for scripts that tell "fix your input" from "try again".
///
/// * 2: a usage or data error — the invocation or the files it names are at fault, and rerunning unchanged
///   fails again. Clap's usage errors exit 2 by themselves; after parsing, an error counts as one when any
///   error in its chain says so ([`paragraf_format::fault::Blame`], asked through [`FAULTS`]): a
///   [`cmd::refusal::Refusal`] (which commands raise for unusable arguments and inputs, such as a folder without
///   bundles) or one of the typed errors of bad input data: a law XML that does not parse (alone, or as one of
///   many in `corpus scan` and `build --laws`, which report it and go on with the others), a bundle, manifest or
///   report that is not ours or is damaged, a name or strategy that does not exist, JSON that does not have the
///   expected shape.
/// * 1: everything else: disk, network, the encoder, a bug.
fn exit_code(error: &anyhow::Error) -> i32 {
    let input = error
        .chain()
        .any(|cause| first_fault(cause, &FAULTS) == Some(Fault::Input));
    if input {
        2
    } else {
        1
    }
}

/// Every library's answer to "is this cause one of your errors, and whose fault is it?"
/// ([`paragraf_format::fault`]), and the binary's own ([`cmd::fault_of`]).
const FAULTS: [FaultOf; 8] = [
    paragraf_format::fault::fault_of,
    paragraf_corpus::fault_of,
    paragraf_engine::fault_of,
    paragraf_core::fault_of,
    paragraf_eval::fault_of,
    paragraf_bundler::fault_of,
    paragraf_proxy::fault_of,
    cmd::fault_of,
];

impl Command {
    /// The HTTP servers: a client that hangs up mid-answer makes a write to its socket fail with EPIPE, which ends
    /// that one connection; with SIGPIPE's default disposition it would end the whole server. (`paragraf mcp`
    /// writes to stdout only, and ends with its client like any other tool in a pipe.)
    fn serves_http(&self) -> bool {
        matches!(self, Command::Proxy(_) | Command::Serve(_))
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Corpus { command, dir } => cmd::corpus::run(command, &dir),
        Command::Build(args) => cmd::build::run(*args),
        Command::Eval(args) => cmd::eval::run(*args),
        Command::Learn(args) => cmd::learn::run(*args),
        Command::Bundles(args) => cmd::bundles::run(args),
        Command::Federal(args) => cmd::federal::run(args),
        Command::Model(args) => cmd::model::run(args),
        Command::Embed(args) => cmd::embed::run(args),
        Command::Proxy(args) => cmd::proxy::run(*args),
        Command::Serve(args) => cmd::serve::run(*args),
        Command::Search(args) => cmd::search::run(*args),
        Command::Show(args) => cmd::show::run(*args),
        Command::Cite(args) => cmd::show::cite(*args),
        Command::Contents(args) => cmd::show::contents(*args),
        Command::Mcp(args) => cmd::mcp::run(*args),
    }
}

/// Rust ignores SIGPIPE, so `paragraf corpus show BGB "§ 1" | head` would panic on a closed pipe; behave like
/// every other Unix tool and end quietly instead. Not for the servers ([`Command::serves_http`]).
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up (after parsing the arguments, which starts no thread) before any threads
    // exist; SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
