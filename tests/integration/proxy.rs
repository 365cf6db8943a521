//! `paragraf proxy` as a real process with the real encoder, over HTTP on 127.0.0.1.
//!
//! The HTTP layer's refusals (limits, CORS, rate limit, concurrency) are tested in `crates/proxy/tests` with a
//! small deterministic backend; here the point is that the shipped binary serves exactly the vectors the CLI and
//! the library compute, serves several models side by side (e5 and EmbeddingGemma@256), starts and stops
//! cleanly, and refuses to start on bad settings or a missing model.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

use paragraf_embed::e5;
use paragraf_embed::{EmbeddingBackend, TextKind};
use serde_json::Value;

use crate::util::{model_path, paragraf, run, run_ok, Proxy};

impl Proxy {
    /// Sends SIGTERM and returns the exit status and stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        terminate(&self.child);
        let status = wait_with_timeout(&mut self.child, Duration::from_secs(15));
        (status, self.stderr())
    }
}

fn terminate(child: &Child) {
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

fn wait_with_timeout(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "proxy did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends one request (`head` without the final blank line) and returns status, head and body.
fn exchange(addr: SocketAddr, head: &str, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "{head}\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("HTTP answer");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        })
        .map(|(_, v)| v.trim().to_owned())
}

/// POSTs `body` to `/v1/embed`; returns status, x-cache header and the JSON body.
fn post(addr: SocketAddr, body: &str) -> (u16, Option<String>, Value) {
    let head = "POST /v1/embed HTTP/1.1\r\nContent-Type: application/json";
    let (status, head, body) = exchange(addr, head, body);
    let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    (status, header(&head, "x-cache"), json)
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

const QUESTION: &str = "Wann verjährt ein Anspruch auf Schadensersatz?";

#[test]
fn proxy_serves_the_same_vectors_as_the_cli_and_the_library() {
    let proxy = Proxy::start(&[]);
    let (status, cache, json) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION }).to_string(),
    );
    assert_eq!((status, cache.as_deref()), (200, Some("miss")), "{json}");
    assert_eq!(json["model"], e5::MODEL_ID);
    assert_eq!(json["dim"], 384);
    let served = floats(&json["vector"]);

    // The library's query embedding, bit for bit (f32 survives JSON exactly).
    let encoder = e5::load(&model_path()).expect("load model");
    let library = encoder
        .embed(&[QUESTION], TextKind::Query)
        .unwrap()
        .remove(0);
    assert_eq!(served, library);
    // The CLI's `paragraf embed --query` of the same text.
    let model = model_path();
    let cli: Value = serde_json::from_str(&run_ok(&[
        "embed",
        "--json",
        "--query",
        "--model",
        model.to_str().unwrap(),
        QUESTION,
    ]))
    .unwrap();
    assert_eq!(floats(&cli["vector"]), served);

    // Repeated: from the cache, identical.
    let (_, cache, again) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION }).to_string(),
    );
    assert_eq!(cache.as_deref(), Some("hit"));
    assert_eq!(floats(&again["vector"]), served);

    // Batch: same vectors as one by one; int8 close to f32.
    let other = "Darf mein Vermieter die Kaution behalten?";
    let (status, _, batch) = post(
        proxy.addr,
        &serde_json::json!({ "texts": [other, QUESTION] }).to_string(),
    );
    assert_eq!(status, 200);
    let vectors = batch["vectors"].as_array().unwrap();
    assert_eq!(floats(&vectors[1]), served);
    let single_other = encoder.embed(&[other], TextKind::Query).unwrap().remove(0);
    let diff = floats(&vectors[0])
        .iter()
        .zip(&single_other)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(
        diff < 1e-5,
        "batched and single embeddings differ by {diff}"
    );
    let (_, _, int8) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION, "format": "int8" }).to_string(),
    );
    let scale = int8["scale"].as_f64().unwrap() as f32;
    let restored: Vec<f32> = int8["int8"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q.as_i64().unwrap() as f32 * scale)
        .collect();
    let norm = restored.iter().map(|x| x * x).sum::<f32>().sqrt();
    let cosine = restored
        .iter()
        .zip(&served)
        .map(|(a, b)| a * b)
        .sum::<f32>()
        / norm;
    assert!(cosine > 0.999, "int8 cosine {cosine}");

    let (status, err) = proxy.stop();
    assert!(status.success(), "SIGTERM is a clean exit: {status}\n{err}");
    assert!(err.contains("shutting down"), "{err}");
    assert!(
        !err.contains(QUESTION) && !err.contains("Kaution"),
        "query text leaked into the log:\n{err}"
    );
}

/// e5 (the default) and EmbeddingGemma@256 from one process: `/health` lists both, a request naming a model
/// gets that model's vectors, one naming another is refused with the models served. The one test that loads
/// Gemma into a proxy (a few seconds, about 1.5 GB).
#[test]
fn proxy_serves_e5_and_embeddinggemma_side_by_side() {
    let gemma_dir = paragraf_embed::gemma::default_dir();
    assert!(
        gemma_dir.join("model.safetensors").is_file(),
        "EmbeddingGemma-300m is not in {}; fetch it once with `paragraf model fetch embeddinggemma`",
        gemma_dir.display()
    );
    let e5 = e5::MODEL_ID;
    let gemma = "google/embeddinggemma-300m@256";
    let proxy = Proxy::start(&["--model", "embeddinggemma@256"]);
    let (status, _, health) = exchange(proxy.addr, "GET /health HTTP/1.1", "");
    assert_eq!(status, 200);
    let health: Value = serde_json::from_str(&health).unwrap();
    assert_eq!(
        (&health["model"], &health["dim"]),
        (&e5.into(), &384.into()),
        "the first --model is the default: {health}"
    );
    assert_eq!(
        health["models"],
        serde_json::json!([{"model": e5, "dim": 384}, {"model": gemma, "dim": 256}])
    );

    let library = crate::util::encoder()
        .embed(&[QUESTION], TextKind::Query)
        .unwrap()
        .remove(0);
    let mut vectors = Vec::new();
    for (model, dim) in [(e5, 384), (gemma, 256)] {
        let (status, cache, json) = post(
            proxy.addr,
            &serde_json::json!({ "text": QUESTION, "model": model }).to_string(),
        );
        assert_eq!((status, cache.as_deref()), (200, Some("miss")), "{json}");
        assert_eq!((&json["model"], &json["dim"]), (&model.into(), &dim.into()));
        let vector = floats(&json["vector"]);
        assert_eq!(vector.len(), dim);
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{model}: norm {norm}");
        vectors.push(vector);
    }
    assert_eq!(vectors[0], library, "e5 by name is the library's e5");
    // Same question, other model: its own vector, not the cached e5 one.
    let (_, cache, json) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION, "model": gemma }).to_string(),
    );
    assert_eq!(cache.as_deref(), Some("hit"));
    assert_eq!(floats(&json["vector"]), vectors[1]);

    let (status, _, json) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION, "model": "google/embeddinggemma-300m@128" })
            .to_string(),
    );
    assert_eq!(
        (status, &json["code"]),
        (400, &"unknown_model".into()),
        "{json}"
    );
    assert_eq!(
        json["error"],
        format!(
            "the model asked for (30 bytes) is not served here; this proxy serves {e5}, {gemma}"
        )
    );

    let (status, err) = proxy.stop();
    assert!(status.success(), "{status}\n{err}");
    assert!(
        err.contains(&format!(
            "paragraf proxy: models {e5} (dim 384, default), {gemma} (dim 256); allowed origins: none"
        )),
        "the start-up line names every model:\n{err}"
    );
}

#[test]
fn proxy_takes_its_settings_from_the_environment() {
    let proxy = Proxy::start_with_env(
        &[],
        &[
            ("PARAGRAF_PROXY_MAX_CHARS", "12"),
            ("PARAGRAF_PROXY_MAX_BATCH", "3"),
            ("PARAGRAF_PROXY_BURST", "3"),
            (
                "PARAGRAF_PROXY_ALLOW_ORIGINS",
                "https://a.example,https://b.example",
            ),
        ],
    );
    let (status, _, health) = exchange(proxy.addr, "GET /health HTTP/1.1", "");
    let health: Value = serde_json::from_str(&health).unwrap();
    assert_eq!(
        (status, &health["max_chars"], &health["max_batch"]),
        (200, &12.into(), &3.into())
    );
    let (status, _, json) = post(proxy.addr, r#"{"text": "dreizehn Zeichen"}"#);
    assert_eq!(
        (status, json["code"].as_str()),
        (422, Some("text_too_long")),
        "{json}"
    );
    for (origin, allowed) in [
        ("https://a.example", true),
        ("https://b.example", true),
        ("https://c.example", false),
    ] {
        let preflight = format!(
            "OPTIONS /v1/embed HTTP/1.1\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST"
        );
        let (status, head, _) = exchange(proxy.addr, &preflight, "");
        assert_eq!(status, if allowed { 204 } else { 403 }, "{origin}");
        let expected = allowed.then(|| origin.to_owned());
        assert_eq!(header(&head, "access-control-allow-origin"), expected);
    }
}

#[test]
fn proxy_logs_queries_only_when_asked() {
    let proxy = Proxy::start(&["--log-queries"]);
    let (status, _, _) = post(
        proxy.addr,
        &serde_json::json!({ "text": QUESTION }).to_string(),
    );
    assert_eq!(status, 200);
    let (_, err) = proxy.stop();
    assert!(err.contains(QUESTION), "{err}");
}

#[test]
fn proxy_refuses_to_start_without_model_or_with_bad_settings() {
    let out = run(&[
        "proxy",
        "--bind",
        "127.0.0.1:0",
        "--model",
        "/nonexistent/e5-small-q4.bin",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "--model /nonexistent/e5-small-q4.bin: neither a model name (e5, embeddinggemma,"
        ),
        "{err}"
    );
    // The default model, but its file is not where $PARAGRAF_MODEL says.
    let out = paragraf()
        .args(["proxy", "--bind", "127.0.0.1:0"])
        .env("PARAGRAF_MODEL", "/nonexistent/e5-small-q4.bin")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot load intfloat/multilingual-e5-small@q4 to serve it")
            && err.contains("paragraf model fetch"),
        "{err}"
    );
    // One model twice (by name and by file): refused before loading anything.
    let model = model_path();
    let out = run(&[
        "proxy",
        "--bind",
        "127.0.0.1:0",
        "--model",
        "e5",
        "--model",
        model.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "model intfloat/multilingual-e5-small@q4 is named twice; serve each model once"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = run(&[
        "proxy",
        "--bind",
        "127.0.0.1:0",
        "--burst",
        "4",
        "--max-batch",
        "8",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("burst (4) must be at least max batch (8)")
    );

    let out = run(&["proxy", "--request-timeout", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("positive number of seconds"));
}

#[test]
fn proxy_help_documents_every_setting_with_env_and_default() {
    let help = run_ok(&["proxy", "--help"]);
    for flag in [
        "--bind",
        "--model",
        "--allow-origin",
        "--dev",
        "--max-body-bytes",
        "--max-chars",
        "--max-batch",
        "--rate-per-minute",
        "--burst",
        "--client-ip-header",
        "--max-concurrency",
        "--pass-texts",
        "--max-queue",
        "--queue-timeout",
        "--request-timeout",
        "--header-timeout",
        "--max-connections",
        "--cache-size",
        "--log-queries",
        "--log-level",
        "--shutdown-grace",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help");
    }
    assert!(
        help.contains("[default: 127.0.0.1:8787]") && help.contains("[default: 16384]"),
        "{help}"
    );
    assert_eq!(help.matches("PARAGRAF_PROXY_").count(), 21, "{help}");
}

#[test]
fn proxy_bench_is_bounded_and_reports() {
    let out = paragraf()
        .args([
            "proxy",
            "bench",
            "--clients",
            "4",
            "--duration",
            "300",
            "--max-requests",
            "40",
            "--model",
        ])
        .arg(model_path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("statuses:   200: 40; 5xx: 0; transport errors: 0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("p99") && stdout.contains("peak"),
        "{stdout}"
    );

    let refused = run(&[
        "proxy",
        "bench",
        "--addr",
        "192.0.2.1:8787",
        "--duration",
        "1",
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("only targets loopback"));
}
