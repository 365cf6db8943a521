//! A bounded load test for the proxy: N keep-alive clients on loopback for a fixed time.
//!
//! Why it lives in the library: operators size their machine by it, so it ships in the binary
//! (`paragraf proxy bench`) instead of needing an external tool. It is deliberately fenced in: the target must
//! be a loopback address, and the run stops by itself after `duration` or `max_requests`, whichever comes first.
//! Each client draws, per request, either one of a small set of popular questions (served from the cache after
//! the first time) or a never-seen-before question (a real forward pass), so the figures show both paths.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{header, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Popular questions: after their first embedding every repeat is a cache hit.
const QUESTIONS: [&str; 16] = [
    "Wie lange habe ich Gewährleistung bei einem Gebrauchtwagen?",
    "Kann mein Vermieter die Miete einfach erhöhen?",
    "Welche Kündigungsfrist gilt für eine Mietwohnung?",
    "Darf ich im Internet gekaufte Ware zurückschicken?",
    "Wann verjährt eine Forderung?",
    "Wer haftet, wenn mein Hund jemanden beißt?",
    "Muss ich ein Erbe annehmen?",
    "Wie hoch ist der Pflichtteil der Kinder?",
    "Kann ein Kaufvertrag mündlich geschlossen werden?",
    "Was passiert, wenn der Mieter die Kaution nicht zahlt?",
    "Ab wann ist man geschäftsfähig?",
    "Welche Rechte habe ich bei einem Mangel der Mietsache?",
    "Darf der Arbeitgeber fristlos kündigen?",
    "Wie wird ein Testament wirksam errichtet?",
    "Wer trägt die Kosten einer Reparatur in der Mietwohnung?",
    "Was ist ein Werkvertrag?",
];

/// Settings of one load-test run.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// The proxy to load; must be a loopback address.
    pub addr: SocketAddr,
    /// Concurrent keep-alive clients.
    pub clients: usize,
    /// How long clients keep sending.
    pub duration: Duration,
    /// Share of requests with a never-seen question (0..=1); the rest repeat popular ones.
    pub new_ratio: f64,
    /// Hard cap on requests over the whole run.
    pub max_requests: u64,
    /// Process whose memory to sample (the server); `None` samples this process.
    pub server_pid: Option<u32>,
}

/// Why a load test could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// Load tests only target this machine.
    #[error(
        "refusing to load {0}: the load test only targets loopback addresses (127.0.0.0/8, ::1)"
    )]
    NotLoopback(SocketAddr),
    /// A setting is out of range.
    #[error("invalid load test setting: {0}")]
    Invalid(String),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The proxy could not be reached at all.
    #[error("cannot reach the proxy at {addr}: {source}")]
    Connect {
        /// Target.
        addr: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Memory of the server process in KiB, from `/proc/<pid>/status`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    /// Resident set size now (`VmRSS`).
    pub rss_kib: u64,
    /// Peak resident set size so far (`VmHWM`).
    pub peak_kib: u64,
}

/// Reads `VmRSS` and `VmHWM` of `pid` (or of this process); `None` where `/proc` is unavailable.
pub fn memory(pid: Option<u32>) -> Option<Memory> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = std::fs::read_to_string(path).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|line| {
            line.strip_prefix(name)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        peak_kib: field("VmHWM:")?,
    })
}

/// The results of a run.
#[derive(Debug)]
pub struct BenchReport {
    /// Clients used.
    pub clients: usize,
    /// Wall time from first request to last answer.
    pub elapsed: Duration,
    /// Answers by HTTP status.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests that got no HTTP answer (connection errors).
    pub transport_errors: u64,
    /// Answers with `x-cache: hit`.
    pub cache_hits: u64,
    /// Latency of all answered requests.
    pub latency: Latency,
    /// Latency of cache hits.
    pub latency_hits: Latency,
    /// Latency of the other answers (embedded, or refused).
    pub latency_misses: Latency,
    /// Server memory before the load.
    pub memory_before: Option<Memory>,
    /// Server memory after the first tenth of the run (warm).
    pub memory_warm: Option<Memory>,
    /// Server memory at the end (with its all-time peak, which includes start-up).
    pub memory_after: Option<Memory>,
    /// Largest resident size sampled (every 250 ms) while the clients ran, in KiB.
    pub rss_max_under_load_kib: Option<u64>,
}

impl BenchReport {
    /// All answered requests.
    pub fn answered(&self) -> u64 {
        self.statuses.values().sum()
    }

    /// Answers with a 5xx status.
    pub fn server_errors(&self) -> u64 {
        self.statuses.range(500..600).map(|(_, n)| n).sum()
    }

    /// Answered requests per second.
    pub fn throughput(&self) -> f64 {
        self.answered() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Latency percentiles of a group of answers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    /// Answers in the group.
    pub count: usize,
    /// Median.
    pub p50: Duration,
    /// 90th percentile.
    pub p90: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest.
    pub max: Duration,
}

impl Latency {
    /// Nearest-rank percentiles of `micros`.
    fn of(mut micros: Vec<u64>) -> Latency {
        micros.sort_unstable();
        let pick = |q: f64| match micros.len() {
            0 => Duration::ZERO,
            n => Duration::from_micros(micros[((n - 1) as f64 * q).round() as usize]),
        };
        Latency {
            count: micros.len(),
            p50: pick(0.5),
            p90: pick(0.9),
            p99: pick(0.99),
            max: pick(1.0),
        }
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} answers)",
            ms(self.p50),
            ms(self.p90),
            ms(self.p99),
            ms(self.max),
            self.count
        )
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "requests:   {} answered in {:.1} s by {} clients = {:.1} req/s",
            self.answered(),
            self.elapsed.as_secs_f64(),
            self.clients,
            self.throughput()
        )?;
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(s, n)| format!("{s}: {n}"))
            .collect();
        writeln!(
            f,
            "statuses:   {}; 5xx: {}; transport errors: {}",
            statuses.join(", "),
            self.server_errors(),
            self.transport_errors
        )?;
        writeln!(
            f,
            "cache hits: {} ({:.1} %)",
            self.cache_hits,
            100.0 * self.cache_hits as f64 / self.answered().max(1) as f64
        )?;
        writeln!(f, "latency:    all    {}", self.latency)?;
        writeln!(f, "            hits   {}", self.latency_hits)?;
        writeln!(f, "            others {}", self.latency_misses)?;
        match (
            self.memory_before,
            self.memory_warm,
            self.memory_after,
            self.rss_max_under_load_kib,
        ) {
            (Some(before), Some(warm), Some(after), Some(max)) => write!(
                f,
                "memory:     RSS {:.1} MiB before, {:.1} MiB warm, {:.1} MiB at the end, {:.1} MiB max under load; \
                 peak {:.1} MiB (including start-up)",
                mib(before.rss_kib),
                mib(warm.rss_kib),
                mib(after.rss_kib),
                mib(max),
                mib(after.peak_kib)
            ),
            _ => write!(f, "memory:     not available (no /proc for the server process)"),
        }
    }
}

#[derive(Default)]
struct Tally {
    /// Microseconds and whether the answer was a cache hit.
    latencies: Vec<(u64, bool)>,
    statuses: BTreeMap<u16, u64>,
    transport_errors: u64,
    cache_hits: u64,
}

/// Runs the load test against `config.addr` and reports; it ends after `duration` (plus the answers still in
/// flight then) or `max_requests`, whichever comes first.
pub async fn run(config: BenchConfig) -> Result<BenchReport, BenchError> {
    if !config.addr.ip().is_loopback() {
        return Err(BenchError::NotLoopback(config.addr));
    }
    if config.clients == 0 || !(0.0..=1.0).contains(&config.new_ratio) || config.duration.is_zero()
    {
        return Err(BenchError::Invalid(
            "clients must be positive, duration positive, new ratio within 0..=1".into(),
        ));
    }
    // Fail early and clearly if nothing listens.
    TcpStream::connect(config.addr)
        .await
        .map_err(|source| BenchError::Connect {
            addr: config.addr,
            source,
        })?;

    let memory_before = memory(config.server_pid);
    let start = Instant::now();
    let deadline = start + config.duration;
    let sent = Arc::new(AtomicU64::new(0));
    let fresh = Arc::new(AtomicU64::new(0));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut clients = Vec::with_capacity(config.clients);
    for seed in 0..config.clients {
        let client = Client {
            addr: config.addr,
            deadline,
            max_requests: config.max_requests,
            new_ratio: config.new_ratio,
            rng: 0x9E37_79B9_7F4A_7C15 ^ (seed as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9),
            sent: Arc::clone(&sent),
            fresh: Arc::clone(&fresh),
            tally: Arc::clone(&tally),
        };
        clients.push(tokio::spawn(client.run()));
    }
    let rss_max = Arc::new(AtomicU64::new(0));
    let sampler = tokio::spawn({
        let (rss_max, pid) = (Arc::clone(&rss_max), config.server_pid);
        async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(250));
            loop {
                ticks.tick().await;
                if let Some(m) = memory(pid) {
                    rss_max.fetch_max(m.rss_kib, Ordering::Relaxed);
                }
            }
        }
    });
    tokio::time::sleep(config.duration / 10).await;
    let memory_warm = memory(config.server_pid);
    for client in clients {
        // A panicking client is a bug in this module; losing its tally is acceptable for a benchmark.
        let _ = client.await;
    }
    let elapsed = start.elapsed();
    sampler.abort();
    let memory_after = memory(config.server_pid);
    let rss_max_under_load_kib = memory_after.map(|_| rss_max.load(Ordering::Relaxed));

    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
    let group = |hits: Option<bool>| {
        let micros = tally
            .latencies
            .iter()
            .filter(|(_, hit)| hits.is_none_or(|h| h == *hit));
        Latency::of(micros.map(|(us, _)| *us).collect())
    };
    Ok(BenchReport {
        clients: config.clients,
        elapsed,
        latency: group(None),
        latency_hits: group(Some(true)),
        latency_misses: group(Some(false)),
        statuses: tally.statuses,
        transport_errors: tally.transport_errors,
        cache_hits: tally.cache_hits,
        memory_before,
        memory_warm,
        memory_after,
        rss_max_under_load_kib,
    })
}

/// [`run`] on a runtime of its own, for callers without one (the CLI).
pub fn run_blocking(config: BenchConfig) -> Result<BenchReport, BenchError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(BenchError::Runtime)?;
    runtime.block_on(run(config))
}

struct Client {
    addr: SocketAddr,
    deadline: Instant,
    max_requests: u64,
    new_ratio: f64,
    rng: u64,
    sent: Arc<AtomicU64>,
    fresh: Arc<AtomicU64>,
    tally: Arc<Mutex<Tally>>,
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

impl Client {
    /// xorshift64*: a tiny deterministic generator, enough to mix question kinds.
    fn next_f64(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn question(&mut self) -> String {
        let which = (self.next_f64() * QUESTIONS.len() as f64) as usize % QUESTIONS.len();
        if self.next_f64() < self.new_ratio {
            let n = self.fresh.fetch_add(1, Ordering::Relaxed);
            format!("{} (Fall {n})", QUESTIONS[which])
        } else {
            QUESTIONS[which].to_owned()
        }
    }

    async fn connect(&self) -> Option<Sender> {
        let stream = TcpStream::connect(self.addr).await.ok()?;
        stream.set_nodelay(true).ok()?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(connection);
        Some(sender)
    }

    async fn run(mut self) {
        let mut sender: Option<Sender> = None;
        let mut local = Tally::default();
        while Instant::now() < self.deadline
            && self.sent.fetch_add(1, Ordering::Relaxed) < self.max_requests
        {
            if sender.is_none() {
                sender = self.connect().await;
            }
            let Some(conn) = sender.as_mut() else {
                local.transport_errors += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let body = serde_json::json!({ "text": self.question() }).to_string();
            let request = Request::post("/v1/embed")
                .header(header::HOST, self.addr.to_string())
                .header(header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(body)))
                .expect("valid request");
            let start = Instant::now();
            let answered = match conn.ready().await {
                Ok(()) => match conn.send_request(request).await {
                    Ok(response) => {
                        let status = response.status().as_u16();
                        let hit = response
                            .headers()
                            .get("x-cache")
                            .is_some_and(|v| v == "hit");
                        response
                            .into_body()
                            .collect()
                            .await
                            .ok()
                            .map(|_| (status, hit))
                    }
                    Err(_) => None,
                },
                Err(_) => None,
            };
            match answered {
                Some((status, hit)) => {
                    local
                        .latencies
                        .push((start.elapsed().as_micros() as u64, hit));
                    *local.statuses.entry(status).or_default() += 1;
                    local.cache_hits += u64::from(hit);
                }
                None => {
                    local.transport_errors += 1;
                    sender = None;
                }
            }
        }
        let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        tally.latencies.append(&mut local.latencies);
        for (status, n) in local.statuses {
            *tally.statuses.entry(status).or_default() += n;
        }
        tally.transport_errors += local.transport_errors;
        tally.cache_hits += local.cache_hits;
    }
}
