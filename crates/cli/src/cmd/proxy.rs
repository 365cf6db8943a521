//! `paragraf proxy`: serve query embeddings over HTTP with the local encoders (e5 by default, EmbeddingGemma on
//! request, several at once); `paragraf proxy bench`: load it.
//!
//! Every setting is a flag with an environment twin (`PARAGRAF_PROXY_*`), so the same binary is configured on a
//! command line, in a systemd unit or in a container alike. The defaults are the safe ones: loopback only, no
//! cross-origin browser access, queries never logged.
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::EmbeddingBackend;
use paragraf_proxy::bench::{self, BenchConfig};
use paragraf_proxy::Config;

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ProxyArgs {
    #[command(subcommand)]
    command: Option<ProxyCommand>,
    /// Address to listen on. The default is loopback only: put a TLS-terminating reverse proxy in front for
    /// public use.
    #[arg(long, env = "PARAGRAF_PROXY_BIND", default_value = paragraf_proxy::DEFAULT_BIND)]
    bind: SocketAddr,
    #[command(flatten)]
    endpoints: EndpointArgs,
}

#[derive(Subcommand)]
enum ProxyCommand {
    /// Bounded load test on loopback: N keep-alive clients for a fixed time, a mix of repeated (cached) and new
    /// questions; reports throughput, latency percentiles, status counts and the server's memory.
    Bench(BenchArgs),
}

/// Seconds as a positive decimal number.
fn seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s} must be a positive number of seconds"))
}

/// The endpoints' models and limits, shared by `paragraf proxy` and `paragraf serve`.
#[derive(Args)]
pub(super) struct EndpointArgs {
    /// A model to serve: `e5` (multilingual-e5-small; its file is $PARAGRAF_MODEL, else the cache filled by
    /// `paragraf model fetch`), `embeddinggemma` (768 dims) or `embeddinggemma@256` (also @512, @128), or the
    /// path of an e5 model file or an EmbeddingGemma folder. Repeat the flag (or separate with commas in the env
    /// var) to serve several; the first is the default for requests that name none. Default: e5.
    #[arg(
        long,
        env = "PARAGRAF_PROXY_MODEL",
        value_delimiter = ',',
        value_parser = ModelChoice::parse
    )]
    model: Vec<ModelChoice>,
    /// Browser origin allowed to call the proxy, exactly as sent in the Origin header
    /// (`https://paragraf.example`); repeat the flag or separate with commas in the env var; `*` allows any.
    /// Requests from other origins are refused with 403. Default: none.
    #[arg(
        long = "allow-origin",
        env = "PARAGRAF_PROXY_ALLOW_ORIGINS",
        value_delimiter = ','
    )]
    allow_origins: Vec<String>,
    /// Development mode: also allow http://localhost, http://127.0.0.1 and the IPv6 loopback on any port as origins.
    #[arg(long, env = "PARAGRAF_PROXY_DEV")]
    dev: bool,
    /// Largest request body in bytes; larger bodies get 413.
    #[arg(long, env = "PARAGRAF_PROXY_MAX_BODY_BYTES", default_value_t = 16 * 1024)]
    max_body_bytes: usize,
    /// Longest text in characters (Unicode scalar values); longer texts get 422.
    #[arg(long, env = "PARAGRAF_PROXY_MAX_CHARS", default_value_t = 2000)]
    max_chars: usize,
    /// Most texts in one batch request ({"texts": [...]}); more get 422.
    #[arg(long, env = "PARAGRAF_PROXY_MAX_BATCH", default_value_t = 16)]
    max_batch: usize,
    /// Sustained per-client rate in texts per minute (a batch of n costs n); 0 turns rate limiting off.
    /// Over the limit: 429 with Retry-After.
    #[arg(long, env = "PARAGRAF_PROXY_RATE_PER_MINUTE", default_value_t = 120)]
    rate_per_minute: u32,
    /// Per-client burst: texts a client may send at once before the sustained rate applies (>= --max-batch).
    #[arg(long, env = "PARAGRAF_PROXY_BURST", default_value_t = 30)]
    burst: u32,
    /// Take the client address for rate limiting from this header, set by a trusted reverse proxy
    /// (e.g. X-Forwarded-For: its last entry is used, X-Real-IP). Only set it behind such a proxy: clients can
    /// forge it otherwise. Default: the TCP peer address (IPv6 clients are grouped by /64).
    #[arg(long, env = "PARAGRAF_PROXY_CLIENT_IP_HEADER", value_name = "HEADER")]
    client_ip_header: Option<String>,
    /// Embedding jobs computing at once (default: the number of CPU cores).
    #[arg(long, env = "PARAGRAF_PROXY_MAX_CONCURRENCY", default_value_t = paragraf_proxy::default_concurrency())]
    max_concurrency: usize,
    /// Most texts in one forward pass: under load, the cache misses of requests waiting for a slot are
    /// embedded together (the weights are read once per pass), up to this many; 1 turns coalescing off.
    #[arg(long, env = "PARAGRAF_PROXY_PASS_TEXTS", default_value_t = 16)]
    pass_texts: usize,
    /// Requests that may wait for a free embedding slot; beyond that 503 with Retry-After at once.
    #[arg(long, env = "PARAGRAF_PROXY_MAX_QUEUE", default_value_t = 128)]
    max_queue: usize,
    /// Longest wait in seconds for a free embedding slot before 503 with Retry-After.
    #[arg(long, env = "PARAGRAF_PROXY_QUEUE_TIMEOUT", default_value = "10", value_parser = seconds, value_name = "SECS")]
    queue_timeout: Duration,
    /// Longest time in seconds for a whole request (body, queue, embedding) before 503 with Retry-After.
    #[arg(long, env = "PARAGRAF_PROXY_REQUEST_TIMEOUT", default_value = "30", value_parser = seconds, value_name = "SECS")]
    request_timeout: Duration,
    /// Seconds a client may take to send a request head, and may stay idle between keep-alive requests,
    /// before its connection is closed (protects against slow or silent clients holding connections).
    #[arg(long, env = "PARAGRAF_PROXY_HEADER_TIMEOUT", default_value = "10", value_parser = seconds, value_name = "SECS")]
    header_timeout: Duration,
    /// Most open connections; further ones wait in the kernel's backlog until one closes.
    #[arg(long, env = "PARAGRAF_PROXY_MAX_CONNECTIONS", default_value_t = 1024)]
    max_connections: usize,
    /// Query vectors kept in the in-memory LRU cache (about 1.6 KiB each); 0 disables it.
    #[arg(long, env = "PARAGRAF_PROXY_CACHE_SIZE", default_value_t = 4096)]
    cache_size: usize,
    /// Write query texts into the log. Off by default: queries are private.
    #[arg(long, env = "PARAGRAF_PROXY_LOG_QUERIES")]
    log_queries: bool,
    /// Log level on stderr: error, warn, info (one line per request, without the text), debug or trace.
    #[arg(long, env = "PARAGRAF_PROXY_LOG", default_value = "info")]
    log_level: String,
    /// After SIGINT/SIGTERM, seconds to let requests in flight finish before exiting anyway.
    #[arg(long, env = "PARAGRAF_PROXY_SHUTDOWN_GRACE", default_value = "10", value_parser = seconds, value_name = "SECS")]
    shutdown_grace: Duration,
}

#[derive(Args)]
struct BenchArgs {
    /// Load this already running proxy (a loopback address) instead of starting one. Without it, the bench
    /// starts `paragraf proxy` as a child process on a free loopback port, with rate limiting off (all clients
    /// share one address) and the default concurrency and cache, and stops it at the end.
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// Process id of the proxy given with --addr, to report its memory (default: not reported).
    #[arg(long, requires = "addr")]
    server_pid: Option<u32>,
    /// Concurrent keep-alive clients.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Seconds of load.
    #[arg(long, default_value = "30", value_parser = seconds, value_name = "SECS")]
    duration: Duration,
    /// Share of requests with a never-seen question (a real forward pass); the rest repeat 16 popular ones.
    #[arg(long, default_value_t = 0.5)]
    new_ratio: f64,
    /// Hard cap on requests over the whole run.
    #[arg(long, default_value_t = 1_000_000)]
    max_requests: u64,
    /// Model file for the started proxy (default: $PARAGRAF_MODEL, else the cache).
    #[arg(long, conflicts_with = "addr")]
    model: Option<PathBuf>,
}

pub fn run(args: ProxyArgs) -> anyhow::Result<()> {
    match args.command {
        Some(ProxyCommand::Bench(bench)) => run_bench(bench),
        None => serve(args.endpoints, args.bind),
    }
}

impl EndpointArgs {
    /// The models named with --model (none: the command's default).
    pub(super) fn models(&self) -> &[ModelChoice] {
        &self.model
    }

    /// The server's configuration (validated; no site) and the models to load.
    pub(super) fn config(self, bind: SocketAddr) -> anyhow::Result<(Config, Vec<ModelChoice>)> {
        paragraf_proxy::init_logging(&self.log_level)?;
        let config = Config {
            bind,
            allow_origins: self.allow_origins,
            dev: self.dev,
            max_body_bytes: self.max_body_bytes,
            max_chars: self.max_chars,
            max_batch: self.max_batch,
            rate_per_minute: self.rate_per_minute,
            burst: self.burst,
            client_ip_header: self.client_ip_header,
            max_concurrency: self.max_concurrency,
            pass_texts: self.pass_texts,
            max_queue: self.max_queue,
            queue_timeout: self.queue_timeout,
            request_timeout: self.request_timeout,
            header_timeout: self.header_timeout,
            max_connections: self.max_connections,
            cache_size: self.cache_size,
            log_queries: self.log_queries,
            shutdown_grace: self.shutdown_grace,
            site: None,
        };
        config.validate()?;
        let choices = if self.model.is_empty() {
            vec![ModelChoice::default()]
        } else {
            self.model
        };
        Ok((config, choices))
    }
}

/// Loads the models to serve (the default first), after checking that none is named twice (it would load twice
/// only to be refused); with their ids and dimensions for the start-up line.
pub(super) fn load_models(
    choices: &[ModelChoice],
) -> anyhow::Result<(Vec<Arc<dyn EmbeddingBackend>>, String)> {
    paragraf_proxy::check_models(
        &choices
            .iter()
            .map(ModelChoice::model_id)
            .collect::<Vec<_>>(),
    )?;
    let mut backends: Vec<Arc<dyn EmbeddingBackend>> = Vec::with_capacity(choices.len());
    for choice in choices {
        let backend = choice
            .load()
            .with_context(|| format!("cannot load {choice} to serve it"))?;
        backends.push(Arc::from(backend));
    }
    let models = backends
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let default = if i == 0 { ", default" } else { "" };
            format!("{} (dim {}{default})", b.model_id(), b.dim())
        })
        .collect::<Vec<_>>()
        .join(", ");
    Ok((backends, models))
}

/// Runs the server until SIGINT/SIGTERM; `started` is the start-up line on stderr, followed by the one line on
/// stdout that scripts and tests read the bound address from (useful with port 0).
pub(super) fn run_server(
    config: Config,
    backends: Vec<Arc<dyn EmbeddingBackend>>,
    started: impl FnOnce(SocketAddr) -> String,
) -> anyhow::Result<()> {
    paragraf_proxy::run_blocking(config, backends, |addr| {
        eprintln!("{}", started(addr));
        println!("listening on http://{addr}");
        let _ = std::io::stdout().flush();
    })?;
    Ok(())
}

fn serve(args: EndpointArgs, bind: SocketAddr) -> anyhow::Result<()> {
    let (config, choices) = args.config(bind)?;
    let (backends, models) = load_models(&choices)?;
    let origins = if config.allow_origins.is_empty() {
        "none".to_owned()
    } else {
        config.allow_origins.join(", ")
    };
    run_server(config, backends, |_| {
        format!("paragraf proxy: models {models}; allowed origins: {origins}")
    })
}

/// A `paragraf proxy` child process, stopped with SIGTERM (a graceful shutdown) when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: kill(2) on the pid of a child we spawned and have not yet reaped.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        #[cfg(not(unix))]
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_child(model: Option<&PathBuf>) -> anyhow::Result<(Child, SocketAddr)> {
    let exe = std::env::current_exe().context("cannot find the paragraf executable")?;
    let mut command = Command::new(exe);
    command.args([
        "proxy",
        "--bind",
        "127.0.0.1:0",
        "--rate-per-minute",
        "0",
        "--log-level",
        "warn",
    ]);
    if let Some(model) = model {
        command.arg("--model").arg(model);
    }
    // Only the settings above are meant to apply: keep the operator's PARAGRAF_PROXY_* out of the measurement.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("PARAGRAF_PROXY_") {
            command.env_remove(key);
        }
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot start the proxy")?;
    let stdout = child.stdout.take().expect("piped stdout");
    let child = Child(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("cannot read the proxy's address")?;
    let Some(addr) = line.trim().strip_prefix("listening on http://") else {
        bail!("the proxy did not start (see its error above)");
    };
    let addr = addr
        .parse()
        .with_context(|| format!("unexpected proxy address {addr:?}"))?;
    Ok((child, addr))
}

fn run_bench(args: BenchArgs) -> anyhow::Result<()> {
    let (child, addr) = match args.addr {
        Some(addr) => (None, addr),
        None => {
            let (child, addr) = start_child(args.model.as_ref())?;
            (Some(child), addr)
        }
    };
    let server_pid = args.server_pid.or_else(|| child.as_ref().map(|c| c.0.id()));
    eprintln!(
        "loading http://{addr} with {} clients for {:.0} s ({:.0} % new questions)…",
        args.clients,
        args.duration.as_secs_f64(),
        args.new_ratio * 100.0
    );
    let report = bench::run_blocking(BenchConfig {
        addr,
        clients: args.clients,
        duration: args.duration,
        new_ratio: args.new_ratio,
        max_requests: args.max_requests,
        server_pid,
    })?;
    drop(child);
    println!("{report}");
    if report.server_errors() > 0 {
        bail!(
            "{} answers were server errors (5xx)",
            report.server_errors()
        );
    }
    Ok(())
}
