//! Helpers shared by the integration tests: paths to shared data, a temp dir, running the CLI.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The shared data folder (`../shared` beside the repository unless `PARAGRAF_SHARED` says otherwise).
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PARAGRAF_SHARED") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// A file under the shared data folder; panics with a clear message when it is missing.
pub fn shared(rel: &str) -> PathBuf {
    let path = shared_dir().join(rel);
    assert!(
        path.exists(),
        "missing shared data {} (set PARAGRAF_SHARED)",
        path.display()
    );
    path
}

/// A fresh temporary directory, removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("create temp dir")
}

/// The `paragraf` binary built for this test run. Its embedding cache lives under the target folder, so tests
/// neither read nor fill the user's cache.
pub fn paragraf() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_paragraf"));
    command.env(
        "PARAGRAF_EMBEDDING_CACHE",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embedding-cache"),
    );
    command
}

/// Runs the CLI with `args`, returning its output (whatever the exit code).
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    paragraf().args(args).output().expect("run paragraf")
}

/// Runs the CLI and asserts success, returning stdout as a string.
pub fn run_ok<S: AsRef<OsStr>>(args: &[S]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "paragraf {:?} failed ({}):\n{}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// The e5 model file: `PARAGRAF_MODEL`, else `paragraf model fetch` (which returns at once when it is cached).
pub fn model_path() -> PathBuf {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    MODEL
        .get_or_init(|| match std::env::var_os("PARAGRAF_MODEL") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(run_ok(&["model", "fetch"]).trim()),
        })
        .clone()
}

/// `paragraf build` of the law XML `law` into `out` with the real model; append further options.
pub fn build_args(law: &Path, strategies: &str, out: &Path) -> Vec<String> {
    let model = model_path();
    [
        "build",
        "--law",
        law.to_str().unwrap(),
        "--strategies",
        strategies,
        "--out",
        out.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// A running `paragraf proxy` (or `paragraf serve`: [`Server`]) on a free loopback port; dropping it kills the
/// process. Its stderr is collected in the background (a full pipe would stall the server).
pub struct Proxy {
    pub child: Child,
    pub addr: SocketAddr,
    /// The first line on stderr: the start-up line.
    pub started: String,
    stderr: Option<JoinHandle<String>>,
}

/// `paragraf serve` runs as the proxy does.
pub type Server = Proxy;

impl Proxy {
    /// `paragraf proxy` with the real e5 model and `args`.
    pub fn start(args: &[&str]) -> Proxy {
        Proxy::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Proxy {
        let mut all: Vec<String> = vec!["proxy".into(), "--bind".into(), "127.0.0.1:0".into()];
        all.push("--model".into());
        all.push(model_path().display().to_string());
        all.extend(args.iter().map(|a| a.to_string()));
        Proxy::spawn(&all, env)
    }

    /// `paragraf` with exactly `args` (a server that binds a free port and says so on stdout).
    pub fn spawn(args: &[String], env: &[(&str, &str)]) -> Proxy {
        let mut child = paragraf()
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start paragraf");
        let (first, first_line) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let mut reader = BufReader::new(pipe);
            let mut line = String::new();
            if reader.read_line(&mut line).is_ok() {
                let _ = first.send(line.trim_end().to_owned());
                text.push_str(&line);
            }
            let _ = reader.read_to_string(&mut text);
            text
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut proxy = Proxy {
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            started: String::new(),
            stderr: Some(stderr),
        };
        match line.trim().strip_prefix("listening on http://") {
            Some(addr) => proxy.addr = addr.parse().unwrap(),
            None => {
                let _ = proxy.child.wait();
                panic!(
                    "paragraf {args:?} did not start: {line:?}\n{}",
                    proxy.stderr()
                );
            }
        }
        proxy.started = first_line
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_default();
        proxy
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything the process wrote to stderr; waits for it to exit, so stop or kill it first.
    pub fn stderr(&mut self) -> String {
        self.stderr
            .take()
            .map(|reader| reader.join().expect("stderr reader"))
            .unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stand-in proxy on 127.0.0.1 that answers every request (preflights included, any browser origin allowed)
/// with this `/health` body: a proxy that serves other models than the bundles', or one whose embedding answer
/// is no vector. Runs until the test process ends; returns its URL.
pub fn fake_proxy(health: serde_json::Value) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fake proxy");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = health.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            read_request(&mut stream);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nAccess-Control-Allow-Origin: *\r\n\
                 Access-Control-Allow-Headers: content-type\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// The whole request (head and body), read before answering: closing with unread bytes resets the connection.
fn read_request(stream: &mut std::net::TcpStream) -> Vec<u8> {
    use std::io::Read;
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    request
}

/// How a stand-in embedding server behaves.
#[derive(Clone, Copy)]
pub enum Endpoint {
    /// Serves e5 vectors (the real encoder) for inputs that carry the e5 prefixes, as an inference server does.
    E5,
    /// Serves its first `n` requests, then closes every connection unanswered.
    DiesAfter(usize),
    /// Serves vectors of another model (the e5 vector reversed).
    OtherModel,
}

/// A stand-in OpenAI-compatible embedding server (`POST /v1/embeddings`) on 127.0.0.1; returns its URL and the
/// number of requests it answered. Runs until the test process ends.
pub fn embedding_endpoint(
    kind: Endpoint,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use paragraf_embed::{EmbeddingBackend, TextKind};
    use std::io::Write;
    use std::sync::atomic::Ordering;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the embedding endpoint");
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let request = read_request(&mut stream);
            if let Endpoint::DiesAfter(n) = kind {
                if count.load(Ordering::SeqCst) >= n {
                    continue;
                }
            }
            let text = String::from_utf8_lossy(&request);
            let body: serde_json::Value =
                serde_json::from_str(&text[text.find("\r\n\r\n").unwrap() + 4..]).unwrap();
            let data: Vec<serde_json::Value> = body["input"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(index, input)| {
                    let input = input.as_str().unwrap();
                    let (kind_of, raw) = match input.strip_prefix("passage: ") {
                        Some(raw) => (TextKind::Passage, raw),
                        None => (TextKind::Query, input.strip_prefix("query: ").unwrap_or(input)),
                    };
                    let mut vector = encoder().embed(&[raw], kind_of).unwrap().remove(0);
                    if let Endpoint::OtherModel = kind {
                        vector.reverse();
                    }
                    serde_json::json!({ "object": "embedding", "index": index, "embedding": vector })
                })
                .collect();
            let answer =
                serde_json::json!({ "object": "list", "data": data, "model": body["model"] })
                    .to_string();
            count.fetch_add(1, Ordering::SeqCst);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, answered)
}

/// The real encoder, loaded once per test run.
pub fn encoder() -> &'static paragraf_embed::e5::E5Encoder {
    static ENCODER: OnceLock<paragraf_embed::e5::E5Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| paragraf_embed::e5::load(&model_path()).expect("load the e5 model"))
}

/// A tiny static HTTP server on 127.0.0.1 for browser tests: URL path prefixes map to folders (longest first),
/// with the content types browsers insist on (`application/wasm` for streaming compilation). Runs until the
/// test process ends.
pub fn serve_static(roots: Vec<(String, PathBuf)>) -> SocketAddr {
    serve_static_switchable(roots).0
}

/// [`serve_static`] with a switch: while it is on, every connection is closed unanswered (the site is "down").
pub fn serve_static_switchable(
    roots: Vec<(String, PathBuf)>,
) -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let site = serve_static_site(roots);
    (site.addr, site.down)
}

/// A running [`serve_static_site`].
pub struct StaticSite {
    pub addr: SocketAddr,
    /// Set: the server drops every connection (the network is gone).
    pub down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Every answered request: path and body bytes sent (a service worker's fetches included).
    pub served: std::sync::Arc<std::sync::Mutex<Vec<(String, usize)>>>,
}

/// A link of limited speed: every answer waits `latency`, and all answers share `bytes_per_second`.
#[derive(Clone, Copy)]
pub struct Link {
    pub bytes_per_second: f64,
    pub latency: Duration,
}

/// The static server of [`serve_static`], with a switch and a log of what it sent.
pub fn serve_static_site(roots: Vec<(String, PathBuf)>) -> StaticSite {
    serve_static_over(roots, None)
}

/// [`serve_static_site`] over a [`Link`] (`None`: loopback speed), compressing text files (HTML, JS, CSS, JSON)
/// with gzip for clients that accept it, as static hosts such as GitHub Pages do; the log records the bytes sent.
pub fn serve_static_over(roots: Vec<(String, PathBuf)>, link: Option<Link>) -> StaticSite {
    let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let served = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (switch, log) = (down.clone(), served.clone());
    // When the shared link is free again.
    let free_at = std::sync::Arc::new(std::sync::Mutex::new(Instant::now()));
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind static server");
    let addr = listener.local_addr().unwrap();
    let mut roots = roots;
    roots.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
    let roots = std::sync::Arc::new(roots);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            if down.load(std::sync::atomic::Ordering::SeqCst) {
                drop(stream);
                continue;
            }
            let (roots, log, free_at) = (roots.clone(), log.clone(), free_at.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let mut gzip_ok = false;
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(n) if n > 2 => {
                            let lower = header.to_ascii_lowercase();
                            gzip_ok |=
                                lower.starts_with("accept-encoding:") && lower.contains("gzip");
                        }
                        _ => break,
                    }
                }
                let target = line.split_whitespace().nth(1).unwrap_or("/");
                let path = target.split(['?', '#']).next().unwrap_or("/");
                let file = roots.iter().find_map(|(prefix, dir)| {
                    let rest = path.strip_prefix(prefix.as_str())?;
                    let rest = if rest.is_empty() || rest.ends_with('/') {
                        format!("{rest}index.html")
                    } else {
                        rest.to_string()
                    };
                    (!rest.split('/').any(|p| p == "..")).then(|| dir.join(rest))
                });
                let (status, body, kind) =
                    match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
                        Some((f, body)) => {
                            let kind = match f.extension().and_then(|e| e.to_str()).unwrap_or("") {
                                "html" => "text/html; charset=utf-8",
                                "js" => "text/javascript",
                                "wasm" => "application/wasm",
                                "css" => "text/css",
                                "json" => "application/json",
                                "txt" => "text/plain",
                                "svg" => "image/svg+xml",
                                "png" => "image/png",
                                "webmanifest" => "application/manifest+json",
                                _ => "application/octet-stream",
                            };
                            ("200 OK", body, kind)
                        }
                        None => ("404 Not Found", b"not found".to_vec(), "text/plain"),
                    };
                let text = kind.starts_with("text/") || kind == "application/json";
                let (body, encoding) =
                    if link.is_some() && gzip_ok && text && status.starts_with("200") {
                        use std::io::Write as _;
                        let mut gz = flate2::write::GzEncoder::new(
                            Vec::new(),
                            flate2::Compression::default(),
                        );
                        gz.write_all(&body).unwrap();
                        (gz.finish().unwrap(), "Content-Encoding: gzip\r\n")
                    } else {
                        (body, "")
                    };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n{encoding}Content-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let sent = match link {
                    None => stream
                        .write_all(head.as_bytes())
                        .and_then(|_| stream.write_all(&body)),
                    Some(link) => {
                        std::thread::sleep(link.latency);
                        let mut result = stream.write_all(head.as_bytes());
                        // Chunks take turns on the shared link.
                        for chunk in body.chunks(16 << 10) {
                            let due = {
                                let mut free = free_at.lock().unwrap();
                                let start = (*free).max(Instant::now());
                                *free = start
                                    + Duration::from_secs_f64(
                                        chunk.len() as f64 / link.bytes_per_second,
                                    );
                                *free
                            };
                            std::thread::sleep(due.saturating_duration_since(Instant::now()));
                            result = result.and_then(|_| stream.write_all(chunk));
                        }
                        result
                    }
                };
                if sent.is_ok() {
                    log.lock().unwrap().push((path.to_string(), body.len()));
                }
            });
        }
    });
    StaticSite {
        addr,
        down: switch,
        served,
    }
}

/// The first `norms` norms of the real law `law` (`corpus/<law>.xml`, its head norm included) as `<dir>/<law>.xml`:
/// real markup at a size whose embedding takes seconds, not minutes.
pub fn law_prefix(dir: &Path, law: &str, norms: usize) -> PathBuf {
    let xml = std::fs::read_to_string(shared(&format!("corpus/{law}.xml"))).unwrap();
    let parts: Vec<&str> = xml.split("<norm ").collect();
    assert!(parts.len() > norms, "{law} has fewer than {norms} norms");
    let path = dir.join(format!("{law}.xml"));
    std::fs::write(
        &path,
        format!("{}</dokumente>", parts[..=norms].join("<norm ")),
    )
    .unwrap();
    path
}

/// A free loopback port (bound and released; fine for the child processes the tests start).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Bundles (`section`, `subsection`, `sentence`) of the first 40 norms of the real GG (Präambel, Art. 1 ff.) and
/// Art. 116 (which defines `Deutscher`, a term the basic rights use), built once per test run under the target
/// folder and shared by the browser tests.
pub fn gg_bundles() -> &'static Path {
    static BUNDLES: OnceLock<PathBuf> = OnceLock::new();
    BUNDLES.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e-gg");
        if let Some(built) = built_by_the_parent(&dir) {
            return built;
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let xml = std::fs::read_to_string(shared("corpus/GG.xml")).unwrap();
        let mut parts: Vec<&str> = xml.split("<norm ").collect();
        let art_116 = parts
            .iter()
            .position(|p| p.contains("<enbez>Art 116</enbez>"))
            .expect("Art. 116 GG");
        let (head, definition) = (&parts[..=40], parts[art_116]);
        parts = [head, &[definition]].concat();
        let law = dir.join("GG.xml");
        std::fs::write(&law, format!("{}</dokumente>", parts.join("<norm "))).unwrap();
        let bundles = dir.join("bundles");
        run_ok(&build_args(&law, "section,subsection,sentence", &bundles));
        bundles
    })
}

/// Runs `paragraf` with `args` and returns its output and how far its peak resident memory (MiB) rose above this
/// test process's own peak: `wait4`'s `ru_maxrss` of that one child (other tests' children do not count). Linux
/// starts a spawned child's `ru_maxrss` at the spawner's peak (`VmHWM`), so that is subtracted: a child that
/// stays below it reads 0, one that balloons (a bomb: gigabytes) reads its excess.
// The child is reaped by `wait4` (which also gives its peak memory), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
pub fn run_measured<S: AsRef<OsStr>>(args: &[S]) -> (Output, f64) {
    let dir = temp_dir();
    let own_kib: f64 = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0.0);
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let child = paragraf()
        .args(args)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: plain libc call on our own child's pid with valid out-pointers; the child is reaped here and
    // `Child` is never waited on again.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    use std::os::unix::process::ExitStatusExt;
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    };
    (output, (usage.ru_maxrss as f64 - own_kib).max(0.0) / 1024.0)
}

/// Runs a parity script of `tests/parity` with the test's `paragraf` binary and `PARAGRAF_SHARED` plus `env`,
/// asserts it succeeded, and returns its stdout (printed too, for the figures).
pub fn run_parity_script(script: &str, env: &[(&str, &Path)]) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/parity")
        .join(script);
    let out = Command::new("bash")
        .arg(path)
        .arg(env!("CARGO_BIN_EXE_paragraf"))
        .env("PARAGRAF_SHARED", shared_dir())
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// In a fuzz test's capped child process (the test run again, `fuzz::in_capped_child`), the bundles its parent
/// built in `dir` before it started the child: a child that built them again would delete them under the
/// parent's other tests (which is what happened: the topics fuzz test read a half-rebuilt sample).
fn built_by_the_parent(dir: &Path) -> Option<PathBuf> {
    let bundles = dir.join("bundles");
    (std::env::var_os(crate::fuzz::CHILD).is_some() && bundles.join("manifest.json").is_file())
        .then_some(bundles)
}

/// The federal archive of the shared data.
pub fn archive() -> PathBuf {
    shared("corpus/gii-federal-2026-04.tar.xz")
}

/// 31 short laws of the archive (at most 6 active sections each, in archive order) and the first law without
/// `enbez` sections (searched through its head-norm text): abbreviation -> number of sections.
pub fn federal_sample() -> &'static std::collections::BTreeMap<String, usize> {
    static SAMPLE: OnceLock<std::collections::BTreeMap<String, usize>> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let (mut short, mut head_text) = (std::collections::BTreeMap::new(), None);
        paragraf_corpus::for_each_law(&archive(), |entry| {
            let law = entry.result.expect("the archive parses");
            let sections = law.active_sections().count();
            let head = law.sections.iter().all(paragraf_corpus::gii::is_head_text);
            if head && head_text.is_none() {
                head_text = Some((law.abbreviation, sections));
            } else if !head && (1..=6).contains(&sections) && short.len() < 31 {
                short.entry(law.abbreviation).or_insert(sections);
            }
            if short.len() == 31 && head_text.is_some() {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        })
        .unwrap();
        let (name, sections) = head_text.expect("a law without sections");
        short.insert(name, sections);
        short
    })
}

/// The [`federal_sample`] laws built (`section`) into one folder, once per test run under the target folder.
pub fn federal_sample_bundles() -> &'static Path {
    static BUNDLES: OnceLock<PathBuf> = OnceLock::new();
    BUNDLES.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("federal-sample");
        if let Some(built) = built_by_the_parent(&dir) {
            return built;
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let names: Vec<&str> = federal_sample().keys().map(String::as_str).collect();
        let out = dir.join("bundles");
        run_ok(&crate::federal::build_laws(
            &crate::federal::list_file(&dir, &names),
            &archive(),
            &out,
            "section",
        ));
        out
    })
}

/// A value encoded for a query string as the app encodes it (`application/x-www-form-urlencoded`, UTF-8).
pub fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A copy of the files of folder `from` in `to` (created), for tests that change or break some of them.
pub fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
