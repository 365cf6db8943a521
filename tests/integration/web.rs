//! The browser app end to end in real headless Chromium (Debian `chromium` + `chromium-driver`, WebDriver over
//! loopback): the built app (`dist/`, from `trunk build`; `PARAGRAF_WEB_DIST` points elsewhere) and bundles of
//! the first norms of the real GG are served on 127.0.0.1, `paragraf proxy` embeds the queries. Missing dist or
//! browser fails the test with the command to run; screenshots land in `target/e2e-screenshots/`.

use crate::util::{fake_proxy, free_port, gg_bundles, serve_static_switchable, temp_dir, Proxy};
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::expansion::ThesaurusFile;
use paragraf_engine::{search, LawIndex, Mode, SearchOptions, StrategyIndex, UnitSearch};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dist() -> PathBuf {
    let dist = std::env::var_os("PARAGRAF_WEB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("dist"));
    assert!(
        dist.join("index.html").exists(),
        "no built web app at {}: run `trunk build --release` first (scripts/test.sh does), or set PARAGRAF_WEB_DIST",
        dist.display()
    );
    dist
}

fn tool(env: &str, default: &str, hint: &str) -> PathBuf {
    let path = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    assert!(
        path.exists(),
        "{} not found: {hint} (or set {env})",
        path.display()
    );
    path
}

/// Kills the child when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A minimal W3C WebDriver client over chromedriver.
struct Browser {
    agent: ureq::Agent,
    base: String,
    _driver: Guard,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start() -> Browser {
        let chromium = tool(
            "CHROMIUM",
            "/usr/bin/chromium",
            "install Debian's chromium (scripts/setup.sh)",
        );
        let driver = tool(
            "CHROMEDRIVER",
            "/usr/bin/chromedriver",
            "install Debian's chromium-driver (scripts/setup.sh)",
        );
        let port = free_port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let driver = Guard(child);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let base = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while agent.get(&format!("{base}/status")).call().is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = temp_dir();
        let mut browser = Browser {
            agent,
            base,
            _driver: driver,
            _profile: profile,
        };
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,1000",
            &format!("--user-data-dir={}", browser._profile.path().display()),
        ];
        let session = browser.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": chromium, "args": args},
                "goog:loggingPrefs": {"browser": "ALL"},
            }}}),
        );
        let id = session["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        browser.base = format!("{}/session/{id}", browser.base);
        browser
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let response = match method {
            "GET" => self.agent.get(&url).call(),
            "DELETE" => self.agent.delete(&url).call(),
            _ => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(body.to_string()),
        };
        let mut response = response.unwrap_or_else(|e| panic!("webdriver {method} {path}: {e}"));
        let status = response.status();
        let text = response.body_mut().read_to_string().unwrap();
        let value: Value =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("webdriver answer {text}"));
        assert!(
            status.is_success(),
            "webdriver {method} {path} failed ({status}): {text}"
        );
        value["value"].clone()
    }

    fn goto(&self, url: &str) {
        self.call("POST", "/url", json!({ "url": url }));
    }

    fn script(&self, source: &str, args: Value) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            json!({ "script": source, "args": args }),
        )
    }

    /// Text of the first element matching `css`, if any.
    fn text(&self, css: &str) -> Option<String> {
        self.script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;",
            json!([css]),
        )
        .as_str()
        .map(str::to_string)
    }

    /// The loaded law's status line with its details opened (how it is searched: strategy, model, synonyms,
    /// learning), as a reader sees it after one click.
    fn loaded_details(&self) -> String {
        if self.script("return document.getElementById('loaded').open", json!([])) != json!(true) {
            self.click("#loaded summary");
        }
        self.wait_text("#loaded", "the law's details to open", |t| t.contains('\n'))
    }

    /// The running number of the last finished search (`data-search` of the result line; 0 before any).
    fn search_number(&self) -> u64 {
        self.script(
            "const m = document.getElementById('result-meta'); return m ? m.dataset.search : '0'",
            json!([]),
        )
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
    }

    fn count(&self, css: &str) -> usize {
        self.script(
            "return document.querySelectorAll(arguments[0]).length;",
            json!([css]),
        )
        .as_u64()
        .unwrap() as usize
    }

    /// axe-core's serious and critical violations on the page as it is now, one line each (rule, impact, the first
    /// elements); axe-core comes from `tests/tools` (scripts/setup.sh installs it, pinned).
    fn accessibility_violations(&self) -> Vec<String> {
        let axe = repo_root().join("tests/tools/node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(&axe).unwrap_or_else(|e| {
            panic!(
                "axe-core not installed at {} ({e}): scripts/setup.sh installs it",
                axe.display()
            )
        });
        self.script(&format!("{source}\nreturn typeof axe;"), json!([]));
        let found = self.call(
            "POST",
            "/execute/async",
            json!({"script": "const done = arguments[arguments.length - 1];\
                axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations\
                .filter(v => v.impact === 'serious' || v.impact === 'critical')\
                .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '))),\
                e => done(['axe-core failed: ' + e]));", "args": []}),
        );
        serde_json::from_value(found).unwrap()
    }

    /// Waits until `css` exists and its text satisfies `ok`; panics with the page's text otherwise.
    fn wait_text(&self, css: &str, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            if let Some(text) = self.text(css) {
                if ok(&text) {
                    return text;
                }
            }
            if start.elapsed() > Duration::from_secs(60) {
                panic!(
                    "timed out waiting for {what} ({css}); page says:\n{}",
                    self.text("body").unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Each file the page fetched so far (Resource Timing): name, request and arrival in ms after navigation.
    fn resource_timeline(&self) -> Vec<(String, f64, f64)> {
        serde_json::from_value(self.script(
            "return performance.getEntriesByType('resource').map(e => [e.name.split('/').pop(), e.startTime, e.responseEnd]);",
            json!([]),
        ))
        .unwrap()
    }

    /// No file fetched twice: a resource that awaited the manifest while it loaded once ran a second time,
    /// fetching and decoding its files again. (The favicon is the browser's own business: Chromium asks for it
    /// again when the address changes.)
    fn assert_each_file_once(&self, timeline: &[(String, f64, f64)]) {
        let mut twice: Vec<&str> = timeline
            .iter()
            .map(|(name, _, _)| name.as_str())
            .filter(|name| !name.ends_with("icon.svg"))
            .filter(|name| timeline.iter().filter(|(n, _, _)| n == name).count() > 1)
            .collect();
        twice.sort_unstable();
        twice.dedup();
        assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    }

    fn element(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            json!({"using": "css selector", "value": css}),
        );
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(|v| v.as_str())
            .expect("element id")
            .to_string()
    }

    /// Clicks `css` as a user would: a control inside the closed "Erweitert" is reached by opening it first.
    fn click(&self, css: &str) {
        self.script(
            "const e = document.querySelector(arguments[0]); const d = e?.closest('details#advanced');\
             if (d && !d.open && !e.closest('summary')) d.querySelector('summary').click(); return true;",
            json!([css]),
        );
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/click"), json!({}));
    }

    fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.call("POST", &format!("/element/{id}/clear"), json!({}));
        self.call(
            "POST",
            &format!("/element/{id}/value"),
            json!({ "text": text }),
        );
    }

    fn select(&self, css: &str, value: &str) {
        self.click(&format!("{css} option[value=\"{value}\"]"));
    }

    fn current_url(&self) -> String {
        self.call("GET", "/url", Value::Null)
            .as_str()
            .unwrap()
            .to_string()
    }

    fn resize(&self, width: u32, height: u32) {
        self.call(
            "POST",
            "/window/rect",
            json!({"width": width, "height": height}),
        );
    }

    fn screenshot(&self, name: &str) {
        let data = self.call("GET", "/screenshot", Value::Null);
        let png = base64_decode(data.as_str().unwrap());
        let dir = repo_root().join("target/e2e-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Console entries at level SEVERE since the last call, minus those matching `expected`.
    fn console_errors(&self, expected: &[&str]) -> Vec<String> {
        let logs = self.call("POST", "/se/log", json!({"type": "browser"}));
        logs.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .filter(|m| !expected.iter().any(|x| m.contains(x)))
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.agent.delete(&self.base).call();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= (value(c) as u32) << (18 - 6 * i);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn browser_app_searches_switches_shares_degrades_and_reports_errors() {
    let dist = dist();
    let dir = temp_dir();
    let bundles = gg_bundles().to_path_buf();
    // Bundle folders that must be refused, each with the original bundles except:
    // - bad/: the law bundle has one flipped payload byte, and the manifest lists the bytes as they are (so only
    //   the bundle's own checksum can tell);
    // - tampered/: the same flipped byte, under the original manifest (its SHA-256 no longer matches);
    // - swapped/: the subsection bundle saved under the section bundle's name, the manifest listing those bytes
    //   (size and hash match; what the bundle records inside does not).
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(bundles.join("manifest.json")).unwrap())
            .unwrap();
    let bundle_folder = |name: &str, edit: &dyn Fn(&mut Value, &mut Vec<u8>) -> bool| {
        let folder = dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let mut listed = manifest.clone();
        for list in ["laws", "bundles"] {
            for entry in listed[list].as_array_mut().unwrap() {
                let file = entry["file"].as_str().unwrap().to_string();
                let mut bytes = std::fs::read(bundles.join(&file)).unwrap();
                if edit(entry, &mut bytes) {
                    entry["bytes"] = json!(bytes.len());
                    entry["sha256"] = json!(paragraf_format::digest::sha256_hex(&bytes));
                }
                std::fs::write(folder.join(&file), bytes).unwrap();
            }
        }
        let expansions = &mut listed["expansions"];
        let file = expansions["file"]
            .as_str()
            .expect("a thesaurus file")
            .to_string();
        let mut bytes = std::fs::read(bundles.join(&file)).unwrap();
        if edit(expansions, &mut bytes) {
            expansions["bytes"] = json!(bytes.len());
            expansions["sha256"] = json!(paragraf_format::digest::sha256_hex(&bytes));
        }
        std::fs::write(folder.join(&file), bytes).unwrap();
        std::fs::write(folder.join("manifest.json"), listed.to_string()).unwrap();
        folder
    };
    let flip_law_byte = |entry: &Value, bytes: &mut Vec<u8>| {
        if entry.get("law").is_some() && entry.get("strategy").is_none() {
            let last = bytes.len() - 10;
            bytes[last] ^= 0x55;
        }
    };
    let bad = bundle_folder("bad", &|entry, bytes| {
        flip_law_byte(entry, bytes);
        true
    });
    let tampered = bundle_folder("tampered", &|entry, bytes| {
        flip_law_byte(entry, bytes);
        false
    });
    // - badexp/: the thesaurus file cut in half, the manifest listing those bytes.
    let badexp = bundle_folder("badexp", &|entry, bytes| {
        if entry["status"] == "built" {
            bytes.truncate(bytes.len() / 2);
        }
        true
    });
    let subsection_file = manifest["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["strategy"] == "subsection")
        .unwrap()["file"]
        .as_str()
        .unwrap()
        .to_string();
    let swapped = bundle_folder("swapped", &|entry, bytes| {
        if entry["strategy"] == "section" {
            *bytes = std::fs::read(bundles.join(&subsection_file)).unwrap();
        }
        true
    });

    // - gemma/: the section bundle relabelled as built with EmbeddingGemma@256 (for the model's terms and the
    //   proxy's model list in step 5c; the vectors stay e5's, only the label matters there).
    let gemma = bundle_folder("gemma", &|entry, bytes| {
        if entry["strategy"] != "section" {
            return false;
        }
        let mut bundle = StrategyBundle::from_bytes(bytes).unwrap();
        bundle.model = "google/embeddinggemma-300m@256".into();
        *bytes = bundle.to_bytes();
        entry["model"] = json!(bundle.model);
        true
    });

    // A folder with an evaluation report as `paragraf eval` writes it, for the Strategies page.
    let rep = dir.path().join("rep");
    std::fs::create_dir_all(rep.join("report")).unwrap();
    for entry in std::fs::read_dir(&bundles).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, rep.join(path.file_name().unwrap())).unwrap();
        }
    }
    let row = |strategy: &str, r10: f64, ms: f64| {
        json!({"strategy": strategy, "mode": "hybrid", "recall": [[1, r10 / 2.0], [10, r10], [100, 0.9]],
               "recall10_ci": [r10 - 0.05, r10 + 0.05], "mrr10": 0.2, "ndcg10": 0.25,
               "latency_ms": {"mean": ms, "p50": ms, "p95": ms * 2.0}, "bundle_bytes": 1_000_000,
               "build_seconds": 42.0, "units": 100, "p_vs_section": null})
    };
    let report = json!({"generator": "paragraf test", "questions": 50, "unit_search": "exact",
        "query_embedding_ms_mean": 55.0,
        "learning": {"provenance": {"source": "GerLayQA", "file_sha256": "00", "questions": 2153, "skipped": 1,
            "date": "2026-12-04", "licence": paragraf_engine::learning::GERLAYQA_LICENCE}, "guarded_here": true},
        "rows": [row("section", 0.412, 3.5), row("sentence", 0.377, 9.25)]});
    std::fs::write(rep.join("report/report.json"), report.to_string()).unwrap();

    let (site, site_down) = serve_static_switchable(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/bad/".into(), bad.clone()),
        ("/tampered/".into(), tampered.clone()),
        ("/swapped/".into(), swapped.clone()),
        ("/gemma/".into(), gemma.clone()),
        ("/badexp/".into(), badexp.clone()),
        ("/rep/".into(), rep.clone()),
        ("/".into(), dist.clone()),
    ]);
    let origin = format!("http://{site}");
    let proxy = Proxy::start(&["--allow-origin", &origin]);
    let proxy_url = proxy.url();
    let browser = Browser::start();

    // 1. Hybrid search with the proxy; Enter submits.
    let cold = Instant::now();
    browser.goto(&format!("{origin}/?proxy={proxy_url}"));
    browser.wait_text("#loaded", "the bundles to load", |t| {
        t.contains("Bereit: GG")
    });
    let first_ready = cold.elapsed();
    assert_eq!(
        browser.count("#boot"),
        0,
        "the start screen stays after the app mounted"
    );
    let (verify_ms, verify_bytes) = verify_cost(&browser);
    browser.type_into("#q", "Freiheit der Meinungsäußerung und der Presse\u{E007}");
    let meta = browser.wait_text("#result-meta", "hybrid results", |t| {
        t.contains("Strategie section")
    });
    let first_result = cold.elapsed();
    let retrieval_ms = |b: &Browser| {
        b.script(
            "return document.getElementById('result-meta').dataset.retrievalMs",
            json!([]),
        )
        .as_str()
        .and_then(|v| v.parse::<f64>().ok())
        .expect("retrieval time on the page")
    };
    let hybrid_ms = retrieval_ms(&browser);
    assert!(meta.contains("hybrid"), "{meta}");
    assert!(
        meta.contains("Anfragevektor"),
        "the query vector came from the proxy: {meta}"
    );
    let headings = browser.text(".results").unwrap();
    assert!(
        headings.contains("Art 5") || headings.contains("Art. 5"),
        "Art. 5 GG is a hit:\n{headings}"
    );
    assert!(browser.count(".result") >= 5 && browser.count(".result") <= 10);
    assert!(
        browser.count("a[href^=\"https://www.gesetze-im-internet.de/\"]") >= 5,
        "official links"
    );
    browser.screenshot("1-hybrid-section");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 1b. HNSW asked for on a bundle without a graph (40 norms): exact search, and the page says so.
    assert!(meta.contains(" · exakt ·"), "{meta}");
    browser.select("#unit-search", "hnsw");
    browser.wait_text("#result-meta", "the HNSW fallback note", |t| {
        t.contains("exakt (dieses Bündel hat keinen HNSW-Graphen)")
    });
    browser.select("#unit-search", "exact");
    browser.wait_text("#result-meta", "exact search again", |t| {
        t.contains(" · exakt ·")
    });

    // 2. Another strategy highlights the sentence that scored; then BM25 only.
    browser.select("#strategy", "sentence");
    browser.wait_text("#result-meta", "sentence results", |t| {
        t.contains("Strategie sentence")
    });
    assert!(
        browser.count("mark.hit0") >= 1,
        "the best sentence is highlighted"
    );
    browser.click("input[name=mode][value=bm25]");
    let meta = browser.wait_text("#result-meta", "BM25 results", |t| t.contains("BM25"));
    assert!(
        !meta.contains("Anfragevektor"),
        "BM25 needs no query vector: {meta}"
    );
    let bm25_top = browser.text("#r0 h2").unwrap();
    let bm25_ms = retrieval_ms(&browser);
    browser.screenshot("2-sentence-bm25");

    // 3. The URL carries the state: reloading it in a fresh page gives the same search.
    let shared_url = browser.current_url();
    for part in ["q=Freiheit", "s=sentence", "mode=bm25", "law="] {
        assert!(shared_url.contains(part), "{part} missing in {shared_url}");
    }
    browser.goto("about:blank");
    browser.goto(&shared_url);
    browser.wait_text("#result-meta", "results after reload", |t| {
        t.contains("Strategie sentence") && t.contains("BM25")
    });
    assert_eq!(browser.text("#r0 h2").unwrap(), bm25_top);
    assert_eq!(
        browser.script("return document.getElementById('q').value", json!([])),
        json!("Freiheit der Meinungsäußerung und der Presse")
    );

    // 3b. Query expansion: a lay word the law lacks (`Kirche`) is also searched as the statute's words, which the
    //     page shows; one click removes a word (the URL keeps that, a reload too), another takes it back.
    browser.type_into("#q", "Kirche\u{E007}");
    let added = browser.wait_text("#expansions", "the added words", |t| {
        t.contains("auch gesucht")
    });
    for word in ["Religionsgemeinschaft", "Weltanschauung"] {
        assert!(added.contains(word), "{word} missing in {added:?}");
    }
    assert!(
        browser.count(".result") >= 1,
        "the statute's words find articles"
    );
    let chip = |word: &str| format!("#expansions [data-word=\"{word}\"] button");
    browser.click(&chip("Religionsgemeinschaft"));
    browser.wait_text("#expansions", "one word removed", |t| {
        t.contains("entfernt") && !t.contains("auch gesucht: „kirche“ → Religionsgemeinschaft")
    });
    browser.click(&chip("Weltanschauung"));
    browser.wait_text(".empty", "no hits without the added words", |t| {
        t.contains("Keine Treffer")
    });
    let removed_url = browser.current_url();
    assert!(
        removed_url.contains("q=Kirche")
            && removed_url.contains("ohne=Religionsgemeinschaft,Weltanschauung"),
        "{removed_url}"
    );
    browser.screenshot("3b-expansions-removed");
    browser.goto("about:blank");
    browser.goto(&removed_url);
    let after_reload = browser.wait_text("#expansions", "the removed words after a reload", |t| {
        t.contains("entfernt")
    });
    assert!(!after_reload.contains("auch gesucht"), "{after_reload:?}");
    assert_eq!(browser.count(".result"), 0, "still searched without them");
    browser.click(&chip("Weltanschauung"));
    let restored = browser.wait_text("#expansions", "a word taken back", |t| {
        t.contains("auch gesucht")
    });
    assert!(restored.contains("Weltanschauung"), "{restored:?}");
    browser.wait_text(".results", "hits again", |t| !t.is_empty());
    let url = browser.current_url();
    assert!(
        url.contains("ohne=Religionsgemeinschaft") && !url.contains("Weltanschauung"),
        "{url}"
    );
    // A new question starts with every expansion again.
    browser.type_into("#q", "Heirat\u{E007}");
    browser.wait_text("#expansions", "the new question's expansions", |t| {
        t.contains("heirat") && !t.contains("entfernt")
    });
    assert!(!browser.current_url().contains("ohne="));

    // 4. A citation jumps to the section; `/` focuses the search box.
    browser.script("document.activeElement.blur()", json!([]));
    browser.call(
        "POST",
        "/actions",
        json!({"actions": [{"type": "key", "id": "kb", "actions": [
        {"type": "keyDown", "value": "/"}, {"type": "keyUp", "value": "/"}]}]}),
    );
    assert_eq!(
        browser.script("return document.activeElement.id", json!([])),
        json!("q")
    );
    browser.type_into("#q", "Art. 1 GG\u{E007}");
    browser.wait_text("#r0", "the cited article first", |t| t.contains("zitiert"));
    // 3a'. What a result cites and what cites it: Art. 17a restricts Art. 5, 8, 11, 13 and 17; Art. 8 is cited by
    // Art. 17a and 18. A listed section is a link that searches it.
    browser.type_into("#q", "Art. 17a\u{E007}");
    let cites = browser.wait_text("#r0 .cites", "the citation list", |t| t.contains("Art. 13"));
    assert!(
        cites.starts_with("Verweist auf: Art. 5 ")
            && cites.contains("Art. 8 ")
            && cites.contains("Art. 17 "),
        "{cites}"
    );
    browser.click("#r0 .cites a:nth-of-type(2)");
    let cited_by = browser.wait_text("#r0 .cited-by", "the cited-by list of Art. 8", |t| {
        t.contains("Art. 17a")
    });
    assert!(
        cited_by.starts_with("Zitiert in: ") && cited_by.contains("Art. 18"),
        "{cited_by}"
    );
    let opened = browser.text("#r0 h2").unwrap();
    assert!(
        opened == "Art. 8" || opened.starts_with("Art. 8 "),
        "{opened}"
    );
    // 3a''. A term another section defines: Art. 8 grants its right to `Deutschen`, Art. 116 defines `Deutscher`.
    // Hovering shows the definition (title); a click opens it as a popover whose link searches Art. 116.
    let term = browser.script(
        "const t = document.querySelector('#r0 button.term[data-term=\"Deutscher\"]'); \
         return t && [t.textContent, t.title]",
        json!([]),
    );
    assert_eq!(term[0], json!("Deutschen"), "{term}");
    let hover = term[1].as_str().unwrap();
    assert!(
        hover.starts_with("Deutscher (Art. 116): Deutscher im Sinne dieses Grundgesetzes ist"),
        "{hover}"
    );
    browser.click("#r0 button.term[data-term=\"Deutscher\"]");
    let popover = browser.wait_text(
        "#r0 .definition:popover-open",
        "the definition popover",
        |t| !t.is_empty(),
    );
    assert!(
        popover.starts_with("Deutscher – Legaldefinition in Art. 116")
            && popover.contains("Deutscher im Sinne dieses Grundgesetzes ist"),
        "{popover}"
    );
    browser.screenshot("definition-popover");
    browser.click("#r0 .definition:popover-open a");
    browser.wait_text("#r0 h2", "the defining article", |t| {
        t.starts_with("Art. 116")
    });
    // Art. 9 Abs. 3 cites its own Absätze 2 and 3: not listed as citations of another section.
    browser.type_into("#q", "Art. 9\u{E007}");
    let own = browser.wait_text("#r0 .cites", "the citations of Art. 9", |t| {
        t.contains("Art. 91")
    });
    assert!(
        !own.contains("Art. 9 ·") && !own.ends_with("Art. 9"),
        "{own}"
    );
    browser.type_into("#q", "Art. 1 GG\u{E007}");
    browser.wait_text("#r0", "the cited article first", |t| t.contains("zitiert"));
    // 3a''. The citation graph: switched on, hybrid re-ranks with the cross-validated weight, the result line names
    // it and the URL keeps it; the in-browser retrieval time is printed next to the run without it.
    let retrieval = |b: &Browser| -> f64 {
        b.script(
            "return document.getElementById('result-meta').dataset.retrievalMs",
            json!([]),
        )
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
    };
    browser.click("input[name=mode][value=hybrid]");
    browser.wait_text("#result-meta", "hybrid results", |t| t.contains("hybrid"));
    let without_graph = retrieval(&browser);
    browser.click("#graph");
    let meta = browser.wait_text("#result-meta", "the graph re-ranking", |t| {
        t.contains("Verweisgraph")
    });
    assert!(
        meta.contains("hybrid") && meta.contains("Verweisgraph (Gewicht 0,25)"),
        "{meta}"
    );
    assert!(
        browser.current_url().contains("graph=an"),
        "{}",
        browser.current_url()
    );
    println!(
        "in-browser retrieval, hybrid (GG test bundles, sentence): {without_graph:.2} ms, with the citation graph {:.2} ms",
        retrieval(&browser)
    );
    browser.click("#graph");
    browser.wait_text("#result-meta", "the graph off again", |t| {
        !t.contains("Verweisgraph")
    });
    browser.click("input[name=mode][value=bm25]");
    browser.wait_text("#result-meta", "BM25 again", |t| t.contains("BM25"));
    let cited = browser.text("#r0 h2").unwrap();
    assert!(cited == "Art. 1" || cited.starts_with("Art. 1 "), "{cited}");
    browser.screenshot("3-citation");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 5. Proxy gone (and the in-browser encoder switched off): hybrid falls back to BM25 with one notice.
    drop(proxy);
    browser.goto(&format!(
        "{origin}/?proxy={proxy_url}&vektor=server&q=Asylrecht+politisch+Verfolgter"
    ));
    let meta = browser.wait_text("#result-meta", "results without the proxy", |t| {
        t.contains("Treffer")
    });
    assert!(meta.contains("BM25"), "{meta}");
    browser.wait_text("#proxy-notice", "the proxy notice", |t| {
        t.contains("Nur lexikalische Suche")
    });
    browser.type_into("#q", "Männer und Frauen sind gleichberechtigt\u{E007}");
    browser.wait_text("#result-meta", "a second search without the proxy", |t| {
        t.contains("Treffer") && t.contains("BM25")
    });
    browser.wait_text(".results", "new results", |t| {
        t.contains("Art 3") || t.contains("Art. 3")
    });
    assert_eq!(
        browser.count("#proxy-notice"),
        1,
        "the notice is shown once"
    );
    browser.screenshot("4-proxy-off");
    let errors = browser.console_errors(&["ERR_CONNECTION_REFUSED"]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 5b. Offline: the service worker serves the app and the bundles from its cache.
    site_down.store(true, std::sync::atomic::Ordering::SeqCst);
    browser.goto(&format!(
        "{origin}/?q=Versammlungsfreiheit+friedlich&mode=bm25"
    ));
    browser.wait_text(".results", "results offline", |t| t.contains("Art. 8"));
    // The network really is gone: a file that is not in the cache cannot be fetched.
    let uncached = browser.call(
        "POST",
        "/execute/async",
        json!({"script": "const done = arguments[arguments.length - 1];\
            fetch('uncached-' + Date.now()).then(() => done('fetched'), () => done('offline'));", "args": []}),
    );
    assert_eq!(uncached, json!("offline"), "the site was still up");
    browser.screenshot("4b-offline");
    site_down.store(false, std::sync::atomic::Ordering::SeqCst);
    let _ = browser.console_errors(&[]);

    // 5b'. Back online, a fresh manifest prunes bundles of an older build from the cache (and keeps the current ones).
    let cached_bundles = |b: &Browser| -> Vec<String> {
        let names = b.call(
            "POST",
            "/execute/async",
            json!({"script": "const done = arguments[arguments.length - 1];\
                caches.open('paragraf-v1').then(c => c.keys()).then(keys => done(keys.map(k => k.url)\
                .filter(u => u.endsWith('.pgb')).map(u => u.slice(u.lastIndexOf('/') + 1))));", "args": []}),
        );
        serde_json::from_value(names).unwrap()
    };
    browser.call(
        "POST",
        "/execute/async",
        json!({"script": "const done = arguments[arguments.length - 1];\
            caches.open('paragraf-v1').then(c => c.put('bundles/GG.section.0123456789abcdef.pgb', new Response('old')))\
            .then(() => done(null));", "args": []}),
    );
    assert!(cached_bundles(&browser).contains(&"GG.section.0123456789abcdef.pgb".to_string()));
    browser.goto(&format!("{origin}/?q=Versammlungsfreiheit&mode=bm25"));
    browser.wait_text(".results", "results online again", |t| t.contains("Art. 8"));
    // Whole sections hit (`section`, BM25): the question's words are marked, as `paragraf search` marks them.
    let marked: Vec<String> = serde_json::from_value(browser.script(
        "return [...document.querySelectorAll('.results mark.hit2')].map(e => e.textContent);",
        json!([]),
    ))
    .unwrap();
    assert!(
        marked.iter().any(|m| m == "Versammlungsfreiheit"),
        "{marked:?}"
    );
    let started = Instant::now();
    while cached_bundles(&browser).contains(&"GG.section.0123456789abcdef.pgb".to_string()) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the stale bundle was not pruned: {:?}",
            cached_bundles(&browser)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let kept = cached_bundles(&browser);
    assert!(
        kept.iter().any(|n| n.starts_with("GG.law."))
            && kept.iter().any(|n| n.starts_with("GG.section.")),
        "current bundles stay cached: {kept:?}"
    );

    // 5c. A proxy that serves other models (and the in-browser encoder off): refused, naming them and the bundle's;
    // dense search shows the error. (Automatic, the worker would step in: `browser_encoder_searches_without_a_server`.)
    let other_url = fake_proxy(
        json!({"status": "ok", "model": "some/other-model", "dim": 384,
        "models": [{"model": "some/other-model", "dim": 384}, {"model": "google/embeddinggemma-300m@256", "dim": 256}],
        "version": "0.1.0", "max_chars": 2000, "max_batch": 64}),
    );
    browser.goto(&format!(
        "{origin}/?proxy={other_url}&vektor=server&q=Versammlungsfreiheit"
    ));
    let notice = browser.wait_text("#proxy-notice", "the model-mismatch notice", |t| {
        t.contains("nicht vergleichbar")
    });
    assert!(
        notice.contains("„some/other-model“, „google/embeddinggemma-300m@256“")
            && notice.contains("„intfloat/multilingual-e5-small@q4“"),
        "{notice}"
    );
    browser.wait_text("#result-meta", "BM25 results despite the mismatch", |t| {
        t.contains("BM25")
    });
    browser.click("input[name=mode][value=dense]");
    let error = browser.wait_text("#error", "the dense-mode refusal", |t| {
        t.contains("nicht vergleichbar")
    });
    assert!(
        error.contains("intfloat/multilingual-e5-small@q4"),
        "{error}"
    );
    browser.screenshot("4c-model-mismatch");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 5c'. A bundle of EmbeddingGemma@256, which that proxy lists: no mismatch (the app asks for the bundle's
    // model, not the proxy's default; the fake's answer is no vector, so BM25 runs), and the page links the
    // Gemma Terms of Use next to the model.
    browser.goto(&format!(
        "{origin}/?data=gemma/&proxy={other_url}&q=Versammlungsfreiheit"
    ));
    browser.wait_text("#loaded", "the Gemma bundle to load", |t| {
        t.contains("Bereit: GG")
    });
    let loaded = browser.loaded_details();
    assert!(
        loaded.contains("Modell google/embeddinggemma-300m@256 (Gemma Terms of Use)"),
        "{loaded}"
    );
    assert_eq!(
        browser.script(
            "return document.getElementById('model-terms').href",
            json!([])
        ),
        json!("https://ai.google.dev/gemma/terms")
    );
    let notice = browser.wait_text("#proxy-notice", "the proxy-answer notice", |t| {
        t.contains("unerwartete Antwort")
    });
    assert!(!notice.contains("nicht vergleichbar"), "{notice}");
    browser.wait_text("#result-meta", "BM25 results", |t| t.contains("BM25"));
    browser.screenshot("4d-gemma-terms");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 5d. A question longer than the engine accepts (here from the URL) is refused with its reason, not cut.
    browser.goto(&format!("{origin}/?mode=bm25&q={}", "Kaution+".repeat(600)));
    let error = browser.wait_text("#error", "the refusal of a long question", |t| {
        t.contains("zu lang")
    });
    assert!(error.contains("4799 Bytes"), "{error}");

    // 6. A corrupt law bundle: the reason is on the page.
    browser.goto(&format!("{origin}/?data=bad/&mode=bm25"));
    let error = browser.wait_text("#error", "the corrupt-bundle error", |t| {
        t.contains("bundle is corrupt")
    });
    assert!(error.contains("Gesetzesbündel GG.law."), "{error}");
    browser.screenshot("5-corrupt-bundle");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 6b. Bytes that are not the ones the manifest lists are refused before decoding, with both hashes.
    browser.goto(&format!("{origin}/?data=tampered/&mode=bm25"));
    let error = browser.wait_text("#error", "the hash-mismatch error", |t| {
        t.contains("does not match the manifest")
    });
    assert!(error.contains("Gesetzesbündel GG.law."), "{error}");
    assert!(error.contains("expected SHA-256 "), "{error}");
    assert_eq!(browser.count("#loaded"), 0, "nothing was loaded: {error}");
    browser.screenshot("5b-hash-mismatch");

    // 6c. A bundle saved under another strategy's name is refused, not searched as that strategy.
    browser.goto(&format!("{origin}/?data=swapped/&mode=bm25&s=section"));
    let error = browser.wait_text("#error", "the swapped-bundle error", |t| {
        t.contains("holds the subsection bundle of GG embedded with")
            && t.contains("but the manifest lists it as the section bundle of GG")
    });
    assert!(error.contains("Strategie-Bündel GG.section."), "{error}");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 6d. A broken thesaurus file costs the expansion, not the search: the page says so and BM25 still runs.
    browser.goto(&format!(
        "{origin}/?data=badexp/&mode=bm25&q=Kirche+und+Staat"
    ));
    let problem = browser.wait_text("#expansion-problem", "the expansion-table notice", |t| {
        t.contains("Gesucht wird ohne Synonyme")
    });
    assert!(problem.contains("Synonymtabelle thesaurus."), "{problem}");
    assert!(problem.contains("truncated"), "{problem}");
    browser.wait_text("#result-meta", "results without expansion", |t| {
        t.contains("BM25")
    });
    assert_eq!(browser.count("#expansions"), 0, "nothing was expanded");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 7. The Strategies page draws the report's figures (`paragraf eval`'s report/report.json is asked for first,
    // so an evaluated folder costs no failed request).
    browser.goto(&format!("{origin}/?page=strategies&data=rep/&mode=bm25"));
    let page = browser.wait_text("main", "the report's charts", |t| t.contains("Recall@10"));
    assert!(page.contains("0.412 [0.362–0.462]"), "{page}");
    assert!(page.contains("9.25 ms"), "{page}");
    assert_eq!(
        browser.text("#report-learning").as_deref(),
        Some("Rangfolge gelernt aus 2.153 Laienfragen (GerLayQA, nur Forschung). Diese Fragen haben das Gelernte gedämpft (bis sie ohne es nicht besser abschnitten): die Werte mit Gelerntem sind nicht unabhängig gemessen.")
    );
    assert_eq!(browser.count("figure.chart"), 4);
    assert_eq!(browser.count(".strategy-list li"), 21);
    browser.screenshot("6-strategies");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // 8. Phone width: results stay readable.
    browser.resize(390, 844);
    browser.goto(&format!(
        "{origin}/?q=W%C3%BCrde+des+Menschen&mode=bm25&s=subsection"
    ));
    browser.wait_text("#result-meta", "results on a phone", |t| {
        t.contains("Strategie subsection")
    });
    assert!(browser.count(".result") >= 1, "results on a phone");
    let overflow = browser.script(
        "return document.documentElement.scrollWidth > window.innerWidth + 1",
        json!([]),
    );
    let wide = browser.script(
        "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)\
         .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')",
        json!([]),
    );
    assert_eq!(
        overflow,
        json!(false),
        "no horizontal scrolling on a phone; too wide: {wide}"
    );
    browser.screenshot("7-phone");
    eprintln!(
        "in-browser retrieval: hybrid section {hybrid_ms:.2} ms, BM25 sentence {bm25_ms:.2} ms"
    );
    eprintln!(
        "in-browser manifest check (size + SHA-256) of law + section bundle: {verify_ms:.1} ms for {verify_bytes} bytes"
    );
    eprintln!(
        "cold start: bundles ready after {:.2} s, first hybrid result after {:.2} s (typing included)",
        first_ready.as_secs_f64(),
        first_result.as_secs_f64()
    );
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// Questions for the latency run: everyday wording, no citations (those skip retrieval).
const LATENCY_QUERIES: [&str; 5] = [
    "Kann mir der Vermieter wegen Eigenbedarf kündigen?",
    "Wer haftet, wenn mein Hund ein fremdes Auto beschädigt?",
    "Darf ich die gekaufte Ware zurückgeben, wenn sie mangelhaft ist?",
    "Freiheit der Meinungsäußerung und der Presse",
    "Wie lange habe ich Zeit, um einen Vertrag zu widerrufen?",
];

/// The README's budget figures: the first hybrid result after a cold start (fresh browser profile: nothing
/// cached, no service worker), then retrieval-only time per strategy in the browser next to the same search run
/// natively here. Bundles: PARAGRAF_E2E_BUNDLES (any law, e.g. the BGB bundles of the main job:
/// `scripts/bench_web.sh`), else the GG test bundles. Asserts behaviour (results for every strategy, no console
/// errors); prints the figures.
#[test]
fn browser_cold_start_and_retrieval_per_strategy() {
    let dist = dist();
    let bundles = std::env::var_os("PARAGRAF_E2E_BUNDLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| gg_bundles().to_path_buf());
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(bundles.join("manifest.json")).unwrap())
            .unwrap();
    let law_file = manifest["laws"][0]["file"].as_str().unwrap();
    let strategies: Vec<(String, String)> = manifest["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let name = b["strategy"].as_str().unwrap().to_string();
            (name, b["file"].as_str().unwrap().to_string())
        })
        .collect();
    let first = if strategies.iter().any(|(s, _)| s == "section") {
        "section"
    } else {
        strategies[0].0.as_str()
    };

    let (site, _) = serve_static_switchable(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/".into(), dist),
    ]);
    let origin = format!("http://{site}");
    // Over a hundred questions in a few minutes: the proxy's per-client rate limit would (rightly) step in.
    let proxy = Proxy::start(&["--allow-origin", &origin, "--rate-per-minute", "0"]);
    let proxy_url = proxy.url();
    let browser = Browser::start();
    let encode = |q: &str| q.replace(' ', "+").replace('?', "%3F").replace(',', "%2C");
    let cold = Instant::now();
    browser.goto(&format!(
        "{origin}/?proxy={proxy_url}&s={first}&mode=hybrid&q={}",
        encode(LATENCY_QUERIES[0])
    ));
    browser.wait_text("#result-meta", "the first hybrid result", |t| {
        t.contains(&format!("Strategie {first} ")) && t.contains("hybrid")
    });
    let cold_start = cold.elapsed();
    browser.assert_each_file_once(&browser.resource_timeline());
    let (verify_ms, verify_bytes) = verify_cost(&browser);

    // Each finished search carries a running number (`data-search`): the next one is recognisable even when
    // the DOM is patched in place and the text is equal.
    let last_search = std::cell::Cell::new(0u64);
    let mark_stale = || last_search.set(browser.search_number());
    let fresh_ms_of = |what: &str, mode: &str| -> f64 {
        let started = Instant::now();
        loop {
            let v = browser.script(
                "const m = document.getElementById('result-meta'); \
                 return m ? [m.dataset.search, m.dataset.retrievalMs, m.textContent] : null",
                json!([]),
            );
            let fresh = v
                .as_array()
                .filter(|v| v[0].as_str().unwrap().parse::<u64>().unwrap() > last_search.get());
            if let Some(v) = fresh {
                let meta = v[2].as_str().unwrap_or_default();
                assert!(meta.contains(mode), "{what}: {meta}");
                return v[1].as_str().unwrap().parse().unwrap();
            }
            if let Some(error) = browser.text("#error") {
                panic!("{what}: {error}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{what}: no new results; the page shows: {}\nconsole: {:?}",
                browser.text("main").unwrap_or_default(),
                browser.console_errors(&[])
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let fresh_retrieval_ms = |what: &str| fresh_ms_of(what, "hybrid");

    // The law as the app loads it: with its query-expansion table.
    let mut law = LawIndex::new(
        LawBundle::from_bytes(&std::fs::read(bundles.join(law_file)).unwrap())
            .unwrap()
            .law,
    );
    if let Some(file) = manifest["expansions"]["file"].as_str() {
        let thesaurus = ThesaurusFile::from_bytes(&std::fs::read(bundles.join(file)).unwrap());
        let table = law
            .expansion_table(&std::sync::Arc::new(thesaurus.unwrap()))
            .unwrap();
        law = law.with_expansions(table);
    }
    let vectors = crate::util::encoder()
        .embed(&LATENCY_QUERIES[..], TextKind::Query)
        .unwrap();
    let options = SearchOptions {
        mode: Mode::Hybrid,
        ..SearchOptions::default()
    };
    let mut table = Vec::new();
    for (strategy, file) in &strategies {
        let bundle =
            StrategyBundle::from_bytes(&std::fs::read(bundles.join(file)).unwrap()).unwrap();
        let unit_searches: &[(UnitSearch, &str)] = match bundle.hnsw {
            Some(_) => &[(UnitSearch::Exact, "exact"), (UnitSearch::Hnsw, "hnsw")],
            None => &[(UnitSearch::Exact, "exact")],
        };
        let index = StrategyIndex::new(bundle, &law.law).unwrap();
        if strategy != first {
            mark_stale();
            browser.select("#strategy", strategy);
            fresh_retrieval_ms(&format!("{strategy}: first search"));
        }
        for &(unit_search, name) in unit_searches {
            if unit_search == UnitSearch::Hnsw {
                mark_stale();
                browser.select("#unit-search", name);
                let what = format!("{strategy}: HNSW");
                fresh_retrieval_ms(&what);
                let meta = browser.text("#result-meta").unwrap();
                assert!(meta.contains(" · HNSW ·"), "{what}: {meta}");
            }
            // Three rounds of the four questions: the browser compiles wasm in tiers (a quick baseline first, the
            // optimised code later), so the median reflects the warm app a user searches with.
            let mut browser_ms = Vec::new();
            for q in LATENCY_QUERIES[1..].iter().cycle().take(12) {
                mark_stale();
                browser.type_into("#q", &format!("{q}\u{E007}"));
                browser_ms.push(fresh_retrieval_ms(&format!("{strategy} {name}: {q}")));
            }
            assert!(browser.count(".result") >= 1, "{strategy}: results");
            let options = SearchOptions {
                unit_search,
                ..options
            };
            let mut native_ms = Vec::new();
            for _ in 0..5 {
                for (q, v) in LATENCY_QUERIES[1..].iter().zip(&vectors[1..]) {
                    let t0 = Instant::now();
                    std::hint::black_box(search(&law, Some(&index), q, Some(v), &options).unwrap());
                    native_ms.push(t0.elapsed().as_secs_f64() * 1e3);
                }
            }
            table.push((
                format!("{strategy} ({name})"),
                median(browser_ms),
                median(native_ms),
            ));
            if unit_search == UnitSearch::Hnsw {
                mark_stale();
                browser.select("#unit-search", "exact");
                fresh_retrieval_ms(&format!("{strategy}: back to exact"));
            }
        }
    }
    // What the citation graph costs: hybrid on the first strategy with the graph switched on (the weight the app
    // uses for hybrid), in the browser and natively.
    if strategies.last().map(|(s, _)| s.as_str()) != Some(first) {
        mark_stale();
        browser.select("#strategy", first);
        fresh_retrieval_ms(&format!("{first}: back for the graph"));
    }
    mark_stale();
    browser.click("#graph");
    fresh_retrieval_ms("graph switched on");
    let mut browser_ms = Vec::new();
    for q in LATENCY_QUERIES[1..].iter().cycle().take(12) {
        mark_stale();
        browser.type_into("#q", &format!("{q}\u{E007}"));
        browser_ms.push(fresh_retrieval_ms(&format!("graph: {q}")));
        let meta = browser.text("#result-meta").unwrap();
        assert!(meta.contains("Verweisgraph (Gewicht"), "graph: {meta}");
    }
    let index = StrategyIndex::new(
        StrategyBundle::from_bytes(
            &std::fs::read(bundles.join(&strategies.iter().find(|(s, _)| s == first).unwrap().1))
                .unwrap(),
        )
        .unwrap(),
        &law.law,
    )
    .unwrap();
    let graph_options = SearchOptions {
        graph_weight: Mode::Hybrid.graph_weight(),
        ..options
    };
    let mut native_ms = Vec::new();
    for _ in 0..5 {
        for (q, v) in LATENCY_QUERIES[1..].iter().zip(&vectors[1..]) {
            let t0 = Instant::now();
            std::hint::black_box(search(&law, Some(&index), q, Some(v), &graph_options).unwrap());
            native_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    table.push((
        format!("{first} + citation graph"),
        median(browser_ms),
        median(native_ms),
    ));
    mark_stale();
    browser.click("#graph");
    fresh_retrieval_ms("graph switched off");
    // What query expansion costs: BM25 (no vectors, so the expansion is most of the difference) with it on and
    // switched off, in the browser and natively.
    mark_stale();
    browser.click("input[name=mode][value=bm25]");
    fresh_ms_of("BM25 mode", "BM25");
    let mut expansion_rows = Vec::new();
    for expand in [true, false] {
        let on = browser
            .script(
                "return document.getElementById('expand').checked",
                json!([]),
            )
            .as_bool()
            .unwrap();
        if on != expand {
            mark_stale();
            browser.click("#expand");
            fresh_ms_of("expansion switched", "BM25");
        }
        let mut browser_ms = Vec::new();
        for q in LATENCY_QUERIES[1..].iter().cycle().take(12) {
            mark_stale();
            browser.type_into("#q", &format!("{q}\u{E007}"));
            browser_ms.push(fresh_ms_of(&format!("BM25 expand={expand}: {q}"), "BM25"));
        }
        let options = SearchOptions {
            mode: Mode::Bm25,
            expansion_weight: if expand {
                options.expansion_weight
            } else {
                0.0
            },
            ..options
        };
        let mut native_ms = Vec::new();
        for _ in 0..5 {
            for q in &LATENCY_QUERIES[1..] {
                let t0 = Instant::now();
                std::hint::black_box(search(&law, None, q, None, &options).unwrap());
                native_ms.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        let label = if expand {
            "BM25, expansion on"
        } else {
            "BM25, expansion off"
        };
        expansion_rows.push((label.to_string(), median(browser_ms), median(native_ms)));
    }
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    eprintln!(
        "cold start ({}, fresh profile): first hybrid result for `{first}` after {:.2} s (query embedding included)",
        law.law.abbreviation,
        cold_start.as_secs_f64()
    );
    eprintln!(
        "manifest check (size + SHA-256, in wasm) of the law and `{first}` bundles: {verify_ms:.1} ms for {verify_bytes} bytes ({:.0} MB/s)",
        verify_bytes as f64 / 1e3 / verify_ms.max(0.1)
    );
    eprintln!(
        "retrieval (hybrid unless named), median of 3 x 4 questions (browser) / 5 x 4 (native):"
    );
    eprintln!(
        "{:<32} {:>12} {:>12} {:>8}",
        "strategy (unit search)", "browser ms", "native ms", "ratio"
    );
    for (strategy, browser_ms, native_ms) in table.iter().chain(&expansion_rows) {
        eprintln!(
            "{strategy:<32} {browser_ms:>12.2} {native_ms:>12.3} {:>8.1}",
            browser_ms / native_ms
        );
    }
}

/// What checking the loaded law and strategy bundles against the manifest cost in the browser: (ms, bytes).
fn verify_cost(browser: &Browser) -> (f64, u64) {
    let v = browser.script(
        "const e = document.getElementById('loaded'); return [e.dataset.verifyMs, e.dataset.verifyBytes]",
        json!([]),
    );
    let field = |i: usize| v[i].as_str().expect("verification figures on the page");
    (field(0).parse().unwrap(), field(1).parse().unwrap())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Questions a citizen might ask about the first articles of the GG (written for this test).
const CITIZEN_QUESTIONS: [&str; 20] = [
    "Darf der Staat mich foltern, um ein Geständnis zu bekommen?",
    "Ist meine Würde als Mensch geschützt?",
    "Darf ich meine Meinung im Internet frei sagen?",
    "Dürfen Zeitungen zensiert werden?",
    "Darf ich ohne Anmeldung eine Demonstration unter freiem Himmel machen?",
    "Muss ich in die Kirche gehen oder darf ich ungläubig sein?",
    "Darf ich den Kriegsdienst mit der Waffe verweigern?",
    "Haben Männer und Frauen die gleichen Rechte?",
    "Darf mich jemand wegen meiner Herkunft benachteiligen?",
    "Darf die Polizei ohne Richter meine Wohnung durchsuchen?",
    "Darf der Staat meine Briefe lesen oder mein Telefon abhören?",
    "Kann ich meinen Beruf frei wählen?",
    "Darf ich überall in Deutschland wohnen?",
    "Darf man mir die deutsche Staatsangehörigkeit wegnehmen?",
    "Bekomme ich Asyl, wenn ich politisch verfolgt werde?",
    "Darf ich einen Verein gründen?",
    "Wer bestimmt über die Erziehung meiner Kinder?",
    "Darf der Staat mein Grundstück enteignen?",
    "Darf ich mich beschweren, wenn eine Behörde meine Rechte verletzt?",
    "Gibt es private Schulen und wer darf sie gründen?",
];

/// Top-10 headings and how the query vector was made, once the search after `previous` has finished.
fn next_results(browser: &Browser, previous: u64, what: &str) -> (u64, Vec<String>, String) {
    let started = Instant::now();
    loop {
        let v = browser.script(
            "const m = document.getElementById('result-meta'); if (!m) return null; \
             return [m.dataset.search, m.dataset.vector, \
                     Array.from(document.querySelectorAll('.results > li h2')).map(h => h.innerText)]",
            json!([]),
        );
        if let Some(v) = v.as_array() {
            let number: u64 = v[0].as_str().unwrap().parse().unwrap();
            if number > previous {
                let headings = serde_json::from_value(v[2].clone()).unwrap();
                return (number, headings, v[1].as_str().unwrap().to_string());
            }
        }
        if let Some(error) = browser.text("#error") {
            panic!("{what}: {error}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{what}: no new results; encoder status {:?}, notice {:?}, meta {:?}, console {:?}",
            browser.script(
                "const e = document.getElementById('encoder-status'); return e && e.textContent",
                json!([])
            ),
            browser.text("#proxy-notice"),
            browser.text("#result-meta"),
            browser.console_errors(&[])
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Dense and hybrid search with no server: the query encoder runs in a Web Worker from the model file the build
/// lists, gives the proxy's top 10 for 20 questions, keeps working offline, never blocks typing, and a broken model
/// file shows its error while BM25 goes on.
#[test]
fn browser_encoder_searches_without_a_server() {
    let bundles = gg_bundles();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(bundles.join("manifest.json")).unwrap())
            .unwrap();
    let model_file = manifest["encoder"]["file"]
        .as_str()
        .expect("the build lists the browser's model file")
        .to_string();
    // A copy whose model file is cut short (the manifest still lists the full size).
    let broken = temp_dir();
    for entry in std::fs::read_dir(bundles).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), broken.path().join(entry.file_name())).unwrap();
    }
    let bytes = std::fs::read(bundles.join(&model_file)).unwrap();
    std::fs::write(broken.path().join(&model_file), &bytes[..bytes.len() / 2]).unwrap();

    let (site, site_down) = serve_static_switchable(vec![
        ("/bundles/".into(), bundles.to_path_buf()),
        ("/broken/".into(), broken.path().to_path_buf()),
        ("/".into(), dist()),
    ]);
    let origin = format!("http://{site}");
    let proxy = Proxy::start(&["--allow-origin", &origin, "--rate-per-minute", "0"]);
    let proxy_url = proxy.url();
    let browser = Browser::start();

    // 1. The same 20 questions, dense and hybrid, through the proxy and through the worker.
    let mut tops = Vec::new();
    for vektor in ["server", "browser"] {
        let cold = Instant::now();
        browser.goto(&format!(
            "{origin}/?proxy={proxy_url}&vektor={vektor}&mode=dense&q=Menschenw%C3%BCrde"
        ));
        let (mut last, _, source) = next_results(&browser, 0, vektor);
        // The first search may run before the model is ready (BM25), then once more with the vector.
        if source != vektor {
            (last, _, _) = next_results(&browser, last, vektor);
        }
        println!(
            "{vektor}: first dense result {:.1} s after the page was opened",
            cold.elapsed().as_secs_f64()
        );
        let mut per_mode = Vec::new();
        for mode in ["dense", "hybrid"] {
            if mode != "dense" {
                browser.click(&format!("input[name=mode][value={mode}]"));
                (last, _, _) = next_results(&browser, last, mode);
            }
            for q in CITIZEN_QUESTIONS {
                browser.type_into("#q", &format!("{q}\u{E007}"));
                let (n, top, source) = next_results(&browser, last, q);
                assert_eq!(source, vektor, "{q}: the vector came from {source}");
                assert_eq!(top.len(), 10, "{q}: {top:?}");
                last = n;
                per_mode.push(top);
            }
        }
        tops.push(per_mode);
        let errors = browser.console_errors(&[]);
        assert!(errors.is_empty(), "console errors: {errors:?}");
    }
    for (i, (server, worker)) in tops[0].iter().zip(&tops[1]).enumerate() {
        assert_eq!(
            server,
            worker,
            "{}: proxy and worker disagree",
            CITIZEN_QUESTIONS[i % 20]
        );
    }
    // In the closed settings panel: textContent, not innerText.
    let status = browser.script(
        "return document.getElementById('encoder-status').textContent",
        json!([]),
    );
    assert!(
        status
            .as_str()
            .unwrap()
            .contains("Sprachmodell im Browser bereit"),
        "{status}"
    );

    // 1b. Speed: a short question (~30 tokens) and a long one (~320 tokens) in the worker, next to the native
    // encoder in this process; the first page load above includes model download, verification and preparation.
    let short = "Darf die Polizei ohne richterlichen Beschluss meine Wohnung durchsuchen, wenn ich nicht zu Hause bin?";
    let long: Vec<&str> = CITIZEN_QUESTIONS.iter().cycle().take(26).copied().collect();
    let long = long.join(" ");
    let mut last: u64 = browser.search_number();
    for text in [short, long.as_str()] {
        let mut worker_ms = Vec::new();
        let mut tokens = 0;
        for round in 0..6 {
            // A space more or less each round, so the question is new to the page but not to the model.
            browser.type_into("#q", &format!("{text}{}\u{E007}", " ".repeat(round % 2)));
            (last, _, _) = next_results(&browser, last, "speed");
            let v = browser.script(
                "const m = document.getElementById('result-meta').dataset; return [m.vectorMs, m.vectorTokens]",
                json!([]),
            );
            worker_ms.push(v[0].as_str().unwrap().parse::<f64>().unwrap());
            tokens = v[1].as_str().unwrap().parse::<usize>().unwrap();
        }
        let mut native_ms = Vec::new();
        for _ in 0..6 {
            let t0 = Instant::now();
            std::hint::black_box(
                crate::util::encoder()
                    .embed(&[text], TextKind::Query)
                    .unwrap(),
            );
            native_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "query of {tokens} tokens: worker {:.0} ms (median of 6), native {:.0} ms (same process, all cores)",
            median(worker_ms),
            median(native_ms)
        );
    }

    // 2. The worker never blocks the page: while a long question is embedded, a typed character appears.
    let long = CITIZEN_QUESTIONS.join(" ").repeat(4);
    let before: u64 = browser.search_number();
    browser.type_into("#q", &format!("{long}\u{E007}"));
    let q = browser.element("#q");
    browser.call(
        "POST",
        &format!("/element/{q}/value"),
        json!({ "text": "§" }),
    );
    let typed = browser.script(
        "return [document.getElementById('q').value.endsWith('§'), document.getElementById('result-meta').dataset.search]",
        json!([]),
    );
    assert_eq!(typed[0], json!(true), "the character did not appear");
    assert_eq!(
        typed[1].as_str().unwrap().parse::<u64>().unwrap(),
        before,
        "the long question was embedded before the character could be typed: the test proves nothing"
    );
    let (_, top, source) = next_results(&browser, before, "the long question");
    assert_eq!((source.as_str(), top.len()), ("browser", 10));

    // 3. Proxy stopped and network down: the service worker serves app, bundles and model; dense still works.
    drop(proxy);
    site_down.store(true, std::sync::atomic::Ordering::SeqCst);
    browser.goto(&format!(
        "{origin}/?proxy={proxy_url}&mode=dense&q=Darf+ich+einen+Verein+gr%C3%BCnden%3F"
    ));
    let (last, mut offline_top, mut source) = next_results(&browser, 0, "offline");
    if source != "browser" {
        (_, offline_top, source) = next_results(&browser, last, "offline, with the model");
    }
    assert_eq!(source, "browser");
    assert_eq!(
        offline_top, tops[0][15],
        "offline dense differs from the proxy's"
    );
    assert_eq!(
        browser.count("#proxy-notice"),
        0,
        "no notice: semantic search works"
    );
    browser.screenshot("7-encoder-offline");
    site_down.store(false, std::sync::atomic::Ordering::SeqCst);
    let _ = browser.console_errors(&[]);

    // 4. A truncated model file: its error is shown and BM25 goes on.
    browser.goto(&format!(
        "{origin}/?data=broken/&vektor=browser&q=Versammlungsfreiheit"
    ));
    let notice = browser.wait_text("#proxy-notice", "the model-file error", |t| {
        t.contains("Sprachmodell")
    });
    assert!(
        notice.contains(&format!("Sprachmodell {model_file}"))
            && notice.contains("does not match the manifest"),
        "{notice}"
    );
    browser.wait_text("#result-meta", "BM25 results", |t| t.contains("BM25"));
    browser.wait_text(".results", "lexical results", |t| t.contains("Art. 8"));
    browser.screenshot("7b-encoder-broken");
}

/// The worker's vectors equal the native encoder's: the 20 citizen questions always (and, with
/// `PARAGRAF_BROWSER_PARITY_QUESTIONS=<GerLayQA dev file>`, every question of that file; minutes). Both sides run the
/// browser's pruned model file, so only arithmetic can differ (wasm f32 vs native FMA); the cosine to the full
/// model and the share of questions that read a pruned piece are printed next to it.
#[test]
fn browser_encoder_vectors_equal_the_native_encoders() {
    let bundles = gg_bundles();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(bundles.join("manifest.json")).unwrap())
            .unwrap();
    let entry = manifest["encoder"].clone();
    let file = std::fs::read(bundles.join(entry["file"].as_str().unwrap())).unwrap();
    let pruned = paragraf_e5::file::ModelFile::from_bytes(&file)
        .unwrap()
        .into_encoder();
    let mut questions: Vec<String> = CITIZEN_QUESTIONS.iter().map(|q| q.to_string()).collect();
    if let Some(path) = std::env::var_os("PARAGRAF_BROWSER_PARITY_QUESTIONS") {
        let dev: Vec<paragraf_eval::Question> =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        questions.extend(dev.iter().map(|q| q.text()));
    }
    let site = serve_static_switchable(vec![
        ("/bundles/".into(), bundles.to_path_buf()),
        ("/".into(), dist()),
    ])
    .0;
    let browser = Browser::start();
    browser.goto(&format!("http://{site}/?mode=bm25"));
    browser.call("POST", "/timeouts", json!({"script": 600_000}));
    // The worker driven through its own protocol (`paragraf_worker::protocol`): Started, Load + bytes, Embed per question.
    let ready = browser.call(
        "POST",
        "/execute/async",
        json!({"script": "const [entry, done] = [arguments[0], arguments[arguments.length - 1]];\
            const w = new Worker('paragraf-encoder_loader.js'); window.encoder = w;\
            w.onerror = (e) => done('crashed: ' + e.message);\
            w.onmessage = async (e) => { const head = JSON.parse(e.data[0]);\
              if (head === 'Started') { const bytes = new Uint8Array(await (await fetch('bundles/' + entry.file)).arrayBuffer());\
                w.postMessage([JSON.stringify({Load: {entry}}), bytes], [bytes.buffer]); }\
              else if (head.Ready) done('ready'); else done(JSON.stringify(head)); };",
            "args": [entry]}),
    );
    assert_eq!(ready, json!("ready"));
    let (mut worst, mut worst_full, mut affected) = (1.0f64, 1.0f64, 0);
    let cos = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum::<f64>()
    };
    for chunk in questions.chunks(25) {
        let vectors = browser.call(
            "POST",
            "/execute/async",
            json!({"script": "const [texts, done] = [arguments[0], arguments[arguments.length - 1]];\
                const w = window.encoder; const out = [];\
                w.onmessage = (e) => { out.push(Array.from(e.data[1]));\
                  if (out.length === texts.length) done(out);\
                  else w.postMessage([JSON.stringify({Embed: {id: out.length + 1, text: texts[out.length]}})]); };\
                w.postMessage([JSON.stringify({Embed: {id: 1, text: texts[0]}})]);",
                "args": [chunk]}),
        );
        let vectors: Vec<Vec<f32>> = serde_json::from_value(vectors).unwrap();
        let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
        let native = pruned.embed_texts(&texts, TextKind::Query);
        let full = crate::util::encoder()
            .embed(&texts, TextKind::Query)
            .unwrap();
        for (i, text) in texts.iter().enumerate() {
            let c = cos(&vectors[i], &native[i]);
            assert!(
                c >= 0.999,
                "{text:.60}: cosine {c} between worker and native"
            );
            worst = worst.min(c);
            worst_full = worst_full.min(cos(&vectors[i], &full[i]));
            let mut ids = pruned.content_ids(text, TextKind::Query);
            ids.truncate(pruned.window_tokens());
            affected += usize::from(ids.iter().any(|&id| !pruned.has_row(id)));
        }
    }
    println!(
        "{} questions: worker vs native (same model file) cosine min {worst:.6}; vs the full model min {worst_full:.4}; {affected} read a pruned piece",
        questions.len()
    );
}

/// 32 laws of the federal archive in one folder: the law control is a finder; typing a law's abbreviation or a
/// word of its title suggests it, a click or Enter opens it, and the search then runs in that law.
#[test]
fn law_finder_opens_one_law_among_many() {
    let bundles = crate::util::federal_sample_bundles();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(bundles.join("manifest.json")).unwrap())
            .unwrap();
    let laws = manifest["laws"].as_array().unwrap();
    assert!(laws.len() > 12);
    let site = crate::util::serve_static_site(vec![
        ("/bundles/".into(), bundles.to_path_buf()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    browser.goto(&format!("http://{}/?mode=bm25", site.addr));
    browser.wait_text("#law-current", "the first law", |t| !t.is_empty());
    assert_eq!(browser.count("select#law"), 0, "a finder, not a list of 32");
    let topics_file = manifest["federal"]["topics"]["file"]
        .as_str()
        .expect("a topics file");
    let topics_fetched = |b: &Browser| {
        b.resource_timeline()
            .iter()
            .filter(|(name, _, _)| name == topics_file)
            .count()
    };
    assert_eq!(
        topics_fetched(&browser),
        0,
        "no topics before the finder is used"
    );
    // The law searched through its head-norm text: typed by abbreviation, lower case.
    let head = laws
        .iter()
        .find(|l| l["sections"] == json!(1) && l["law"].as_str().unwrap().contains(' '))
        .or_else(|| laws.iter().find(|l| l["sections"] == json!(1)))
        .unwrap();
    let (name, title) = (
        head["law"].as_str().unwrap(),
        head["title"].as_str().unwrap(),
    );
    browser.type_into("#law-finder", &name.to_lowercase());
    let first = browser.wait_text(
        "#law-suggestions li:first-child button",
        "suggestions",
        |t| !t.is_empty(),
    );
    assert!(first.starts_with(&format!("{name} – ")), "{first}");
    browser.click("#law-suggestions li:first-child button");
    browser.wait_text("#law-current", "the chosen law", |t| t.starts_with(name));
    assert_eq!(browser.count("#law-suggestions li"), 0);
    // Searching now searches that law: its title finds its text.
    browser.type_into("#q", &format!("{title}\u{E007}"));
    let meta = browser.wait_text("#result-meta", "results in the chosen law", |t| {
        t.contains(&format!("Treffer in {name} "))
    });
    assert!(meta.contains("BM25"), "{meta}");
    // A word of another law's title, then Enter: the best suggestion opens.
    let other = laws
        .iter()
        .filter(|l| l["law"] != head["law"])
        .find_map(|l| {
            let title = l["title"].as_str().unwrap();
            let word = title
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| w.chars().count() >= 8)
                .find(|w| {
                    laws.iter()
                        .filter(|o| o["title"].as_str().unwrap().contains(w))
                        .count()
                        == 1
                })?;
            Some((l["law"].as_str().unwrap(), word.to_string()))
        })
        .expect("a law with a title word no other title has");
    browser.type_into("#law-finder", &format!("{}\u{E007}", other.1));
    browser.wait_text("#law-current", "the law found by a title word", |t| {
        t.starts_with(other.0)
    });
    // A word only a law's headings have (no title or abbreviation): found once the topics file is in, which the
    // finder fetched when first used, and only then.
    let topics = paragraf_core::finder::TopicsFile::from_bytes(
        &std::fs::read(bundles.join(topics_file)).unwrap(),
    )
    .unwrap();
    let names_and_titles = laws
        .iter()
        .map(|l| format!("{} {}", l["law"], l["title"]).to_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
    let (topic_law, topic_word) = topics
        .laws
        .iter()
        .find_map(|l| {
            let word = l
                .topics
                .iter()
                .flat_map(|t| t.split(|c: char| !c.is_alphabetic()))
                .filter(|w| w.chars().count() >= 10)
                .find(|w| {
                    !names_and_titles.contains(&w.to_lowercase())
                        && topics
                            .laws
                            .iter()
                            .filter(|o| o.topics.iter().any(|t| t.contains(w)))
                            .count()
                            == 1
                })?;
            Some((l.law.clone(), word.to_string()))
        })
        .expect("a heading word only one law has");
    browser.type_into("#law-finder", &topic_word);
    browser.wait_text(
        "#law-suggestions[data-topics=\"true\"]",
        "the finder with topics",
        |_| true,
    );
    let suggested: Vec<String> = serde_json::from_value(browser.script(
        "return [...document.querySelectorAll('#law-suggestions button')].map(b => b.dataset.law);",
        json!([]),
    ))
    .unwrap();
    assert!(
        suggested.contains(&topic_law),
        "{topic_word}: {suggested:?}"
    );
    // Once for the page's life (Resource Timing also sees answers from the service worker's cache): not again
    // for more typing, nor after another page and back.
    let half: String = topic_word.chars().take(5).collect();
    browser.type_into("#law-finder", &half);
    browser.click("nav a[href=\"?page=strategies\"]");
    browser.click("nav a[href=\"?\"]");
    browser.wait_text("#law-current", "the finder again", |t| !t.is_empty());
    browser.type_into("#law-finder", &topic_word);
    browser.wait_text(
        "#law-suggestions[data-topics=\"true\"]",
        "the finder with topics again",
        |_| true,
    );
    assert_eq!(topics_fetched(&browser), 1, "the topics file, once");
    // The strategies page looks for an evaluation report; this folder has none (no error for the app).
    let errors = browser.console_errors(&["report.json - Failed to load resource"]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // A topics file that does not load is named, and the finder goes on with abbreviations and titles.
    let broken = temp_dir();
    crate::util::copy_folder(bundles, broken.path());
    let path = broken.path().join(topics_file);
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let broken_site = crate::util::serve_static(vec![
        ("/bundles/".into(), broken.path().to_path_buf()),
        ("/".into(), dist()),
    ]);
    browser.goto(&format!("http://{broken_site}/?mode=bm25"));
    browser.wait_text("#law-current", "the first law", |t| !t.is_empty());
    browser.type_into("#law-finder", &name.to_lowercase());
    let failed = browser.wait_text("#law-topics-failed", "the topics file's failure", |t| {
        !t.is_empty()
    });
    assert!(
        failed.starts_with(&format!(
            "Nur Abkürzungen und Titel: Themenliste {topics_file}: "
        )),
        "{failed}"
    );
    let first = browser.wait_text(
        "#law-suggestions li:first-child button",
        "suggestions without topics",
        |t| !t.is_empty(),
    );
    assert!(first.starts_with(&format!("{name} – ")), "{first}");
}

/// The page over all laws: one search over the 32 sample laws (BM25 and hybrid through the proxy), only the
/// question's posting shards fetched, each law's text from its own bundle; the set of laws in the URL; a law the
/// catalogue no longer lists is not shown; a law bundle that fails names its law and the others show their text.
#[test]
fn one_search_over_all_laws_with_a_set_of_laws_in_the_url() {
    let dir = temp_dir();
    let bundles = dir.path().join("bundles");
    crate::util::copy_folder(crate::util::federal_sample_bundles(), &bundles);
    // Small shards, so that a question needs only some of them.
    crate::util::run_ok(&[
        "federal",
        "--bundles",
        bundles.to_str().unwrap(),
        "--shard-bytes",
        "1024",
    ]);
    let manifest = paragraf_bundler::manifest::load_or_new(&bundles).unwrap();
    let federal = manifest.federal.clone().expect("an index across laws");
    // The longest section of the sample whose opening words no other section shares: they find it.
    let sections: Vec<(String, paragraf_law::Section)> = manifest
        .laws
        .iter()
        .flat_map(|entry| {
            let law = paragraf_bundler::manifest::read_law(&bundles, entry).unwrap();
            law.active_sections()
                .map(|(_, s)| (entry.law.clone(), s.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    let opening = |s: &paragraf_law::Section| {
        s.text
            .split_whitespace()
            .take(14)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (law, section) = sections
        .iter()
        .filter(|(_, s)| {
            sections
                .iter()
                .filter(|(_, o)| {
                    o.text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .contains(&opening(s))
                })
                .count()
                == 1
        })
        .filter(|(_, s)| (200..2000).contains(&s.text.len()))
        .max_by_key(|(_, s)| s.text.len())
        .cloned()
        .unwrap();
    let question = opening(&section);
    // The CLI's index across laws (all in memory) says which section comes first; the browser's must agree.
    let cli_bm25 = |question: &str, routing: bool| -> Value {
        let mut args = vec![
            "search",
            "--bundles",
            bundles.to_str().unwrap(),
            "--mode",
            "bm25",
            "--json",
            question,
        ];
        if !routing {
            args.push("--no-routing");
        }
        serde_json::from_str(&crate::util::run_ok(&args)).unwrap()
    };
    let cli = cli_bm25(&question, true);
    assert_eq!(
        (
            cli["hits"][0]["law"].as_str(),
            cli["hits"][0]["designation"].as_str()
        ),
        (Some(law.as_str()), Some(section.designation.as_str())),
        "{question}: {cli:#}"
    );
    let encode = |q: &str| crate::util::form_encode(q);
    let site = crate::util::serve_static_site(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/".into(), dist()),
    ]);
    let origin = format!("http://{}", site.addr);
    let proxy = Proxy::start(&["--allow-origin", &origin, "--rate-per-minute", "0"]);
    let browser = Browser::start();
    let hits = |b: &Browser| -> Vec<(String, String)> {
        serde_json::from_value(b.script(
            "return [...document.querySelectorAll('ol.federal li.hit')].map(e => [e.dataset.law, e.dataset.section]);",
            json!([]),
        ))
        .unwrap()
    };

    // 1. BM25 over all laws: the section's own words put it first; only some shards were fetched.
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    let loaded = browser.wait_text("#federal-loaded", "the index across laws", |t| {
        t.starts_with("Bereit")
    });
    assert!(
        loaded.contains(&format!("{} Gesetze", federal.laws)),
        "{loaded}"
    );
    let meta = browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Treffer in 32 Gesetzen")
    });
    assert!(meta.contains("BM25"), "{meta}");
    // Routed as `paragraf search` routes (the laws' text included, from the head): the same sections in the
    // same order.
    let cli_hits: Vec<(String, String)> = cli["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["law"].as_str().unwrap().to_owned(),
                h["designation"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(hits(&browser), cli_hits, "{question}");
    let shards: usize = browser
        .script(
            "return document.getElementById('result-meta').dataset.shards",
            json!([]),
        )
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        shards >= 1 && shards < federal.shards.len(),
        "{shards} of {} shards",
        federal.shards.len()
    );
    assert_eq!(
        hits(&browser)[0],
        (law.clone(), section.designation.clone())
    );
    let snippet = browser.wait_text(
        "ol.federal li.hit:first-child .snippet:not(.loading)",
        "the first hit's text",
        |t| !t.is_empty(),
    );
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&section.text).starts_with(&words(snippet.trim_end_matches(" …"))),
        "{snippet}"
    );
    // The question's words are marked in it, as `paragraf search` marks them.
    let marked: Vec<String> = serde_json::from_value(browser.script(
        "return [...document.querySelectorAll('ol.federal li.hit:first-child .snippet mark.term')].map(e => e.textContent);",
        json!([]),
    ))
    .unwrap();
    assert!(
        !marked.is_empty() && marked.iter().all(|w| question.contains(w.as_str())),
        "{marked:?} in {snippet}"
    );
    let laws_found: std::collections::BTreeSet<String> =
        hits(&browser).into_iter().map(|h| h.0).collect();
    assert!(
        laws_found.len() > 1,
        "one ranking over several laws: {laws_found:?}"
    );
    // Only what the page over all laws uses: the law bundles of the laws it shows, no synonym table (one
    // law's search is not run here), no topics file (nobody used the law finder), no vectors (BM25).
    let fetched: Vec<String> = site
        .served
        .lock()
        .unwrap()
        .iter()
        .map(|(path, _)| path.rsplit('/').next().unwrap().to_string())
        .collect();
    let shown_files: Vec<&str> = manifest
        .laws
        .iter()
        .filter(|l| laws_found.contains(&l.law))
        .map(|l| l.file.as_str())
        .collect();
    let unwanted: Vec<&String> = fetched
        .iter()
        .filter(|f| {
            (f.contains(".law.") && !shown_files.contains(&f.as_str()))
                || f.starts_with("thesaurus.")
                || f.starts_with("topics.")
                || f.starts_with("federal-vectors.")
        })
        .collect();
    assert!(unwanted.is_empty(), "fetched for nothing: {unwanted:?}");

    browser.screenshot("all-laws");

    // More results below a full first page: 30 sections, the first 10 as they were, and `mehr=an` in the
    // address.
    let first_page = hits(&browser);
    assert_eq!(first_page.len(), 10, "{first_page:?}");
    browser.script("document.querySelector('#more-results').click()", json!([]));
    browser.wait_text("#result-meta", "more results across laws", |t| {
        t.starts_with("30 Treffer in 32 Gesetzen")
    });
    let more = hits(&browser);
    assert_eq!(more[..10], first_page[..]);
    let distinct: std::collections::HashSet<&(String, String)> = more.iter().collect();
    assert_eq!(distinct.len(), 30, "{more:?}");
    assert_eq!(
        browser.script(
            "return document.querySelector('#more-results') === null && location.search.includes('mehr=an')",
            json!([])
        ),
        json!(true)
    );
    // Opening a result's law is another page: it starts with its own first page.
    browser.script(
        "document.querySelector('ol.federal li.hit a.open-law').click()",
        json!([]),
    );
    browser.wait_text("#result-meta", "the law's own results", |t| {
        t.contains(&format!(" Treffer in {law}"))
    });
    let url: Value = browser.script("return location.search", json!([]));
    assert!(!url.as_str().unwrap().contains("mehr="), "{url}");
    assert!(browser.count("li.result") <= 10);

    // 2. Hybrid through the proxy ranks the same section first.
    browser.goto(&format!(
        "{origin}/?page=alle&proxy={}&q={}",
        proxy.url(),
        encode(&question)
    ));
    let meta = browser.wait_text("#result-meta", "hybrid results across laws", |t| {
        t.contains("hybrid")
    });
    assert!(meta.contains("Anfragevektor über den Server"), "{meta}");
    assert_eq!(
        hits(&browser)[0],
        (law.clone(), section.designation.clone())
    );

    // 3. Routed by law as the CLI routes: a question that names a law gets that law's section first, which
    //    the ranking without routing puts behind another law's.
    let top_law = |question: &str, routing: bool| -> String {
        cli_bm25(question, routing)["hits"][0]["law"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let named_question = sections
        .iter()
        .filter(|(l, _)| *l != law && l.chars().filter(|c| c.is_uppercase()).count() >= 2)
        .flat_map(|(l, s)| {
            s.text
                .split(|c: char| !c.is_alphabetic())
                .filter(|w| w.chars().count() >= 8)
                .take(2)
                .map(move |w| (l.clone(), format!("{w} {l}")))
        })
        .take(40)
        .find(|(l, q)| top_law(q, true) == *l && top_law(q, false) != *l)
        .expect("a question whose named law routing puts first");
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&named_question.1)
    ));
    browser.wait_text("#result-meta", "routed results across laws", |t| {
        t.contains("Treffer in 32 Gesetzen")
    });
    assert_eq!(
        hits(&browser)[0].0,
        named_question.0,
        "{}",
        named_question.1
    );

    // A question longer than the engine accepts is refused across laws too.
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        "Kaution+".repeat(600)
    ));
    browser.wait_text("#error", "the refusal of a long question", |t| {
        t.contains("4799 Bytes zu lang")
    });

    // 4. A set of laws: from the URL, kept in it, and only those laws in the results.
    let other = laws_found.iter().find(|l| **l != law).unwrap().clone();
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&gesetze={}&q={}",
        encode(&other),
        encode(&question)
    ));
    browser.wait_text("#result-meta", "results in one law", |t| {
        t.contains("Treffer in 1 Gesetzen")
    });
    let only: Vec<String> = hits(&browser).into_iter().map(|h| h.0).collect();
    assert!(
        !only.is_empty() && only.iter().all(|l| *l == other),
        "{only:?}"
    );
    assert!(browser
        .current_url()
        .contains(&format!("gesetze={}", encode(&other))));
    // "nur hier suchen" on a result narrows to its law; clearing the field searches all again.
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Treffer in 32 Gesetzen")
    });
    browser.click("ol.federal li.hit:first-child .only-law");
    browser.wait_text("#result-meta", "results in the first hit's law", |t| {
        t.contains("Treffer in 1 Gesetzen")
    });
    assert!(browser
        .current_url()
        .contains(&format!("gesetze={}", encode(&law))));

    // Each law's share of the list, adding up to the hits; a click on one narrows the search to it.
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Treffer in 32 Gesetzen")
    });
    let facets: Vec<(String, String)> = serde_json::from_value(browser.script(
        "return [...document.querySelectorAll('#law-facets button')].map(b => [b.dataset.law, b.textContent]);",
        json!([]),
    ))
    .unwrap();
    let counted: usize = facets
        .iter()
        .map(|(law, text)| {
            text.strip_prefix(&format!("{law} "))
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(
        facets.len() > 1 && counted == hits(&browser).len(),
        "{facets:?}"
    );
    let (faceted, _) = facets[1].clone();
    browser.click(&format!("#law-facets button[data-law=\"{faceted}\"]"));
    browser.wait_text("#result-meta", "results in the faceted law", |t| {
        t.contains("Treffer in 1 Gesetzen")
    });
    assert!(hits(&browser).iter().all(|h| h.0 == faceted));
    // A question that names a law offers to search it alone.
    let named = manifest
        .laws
        .iter()
        .map(|l| l.law.clone())
        .find(|l| !l.contains(' ') && l.chars().filter(|c| c.is_uppercase()).count() >= 2)
        .expect("a sample law with an abbreviation of capitals");
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&format!("Was gilt nach dem {named}?"))
    ));
    let offer = browser.wait_text("#named-law", "the law the question names", |t| {
        !t.is_empty()
    });
    assert!(
        offer.starts_with(&format!("Meinten Sie das Gesetz {named} (")),
        "{offer}"
    );
    browser.click("#named-law button");
    browser.wait_text("#result-meta", "results in the named law", |t| {
        t.contains("Treffer in 1 Gesetzen")
    });
    assert!(browser
        .current_url()
        .contains(&format!("gesetze={}", encode(&named))));

    // 5. Opening a result opens its law with the same question.
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Treffer in 32 Gesetzen")
    });
    browser.click("ol.federal li.hit:first-child a.open-law");
    browser.wait_text("#result-meta", "results in the opened law", |t| {
        t.contains(&format!("Treffer in {law} "))
    });

    // 6. A law the catalogue no longer lists is not shown (its sections are still in the index).
    let mut without = manifest.clone();
    without.laws.retain(|l| l.law != law);
    std::fs::write(bundles.join("manifest.json"), without.to_json()).unwrap();
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    browser.wait_text("#result-meta", "results without the removed law", |t| {
        t.contains("Treffer in 31 Gesetzen")
    });
    assert!(
        hits(&browser).iter().all(|h| h.0 != law),
        "{:?}",
        hits(&browser)
    );
    std::fs::write(bundles.join("manifest.json"), manifest.to_json()).unwrap();

    // 7. A law bundle that does not match the manifest: its results name it, the others show their text.
    let entry = manifest.law(&law).unwrap();
    let mut broken = std::fs::read(bundles.join(&entry.file)).unwrap();
    let last = broken.len() - 1;
    broken[last] ^= 0xff;
    std::fs::write(bundles.join(&entry.file), broken).unwrap();
    browser.goto(&format!(
        "{origin}/?page=alle&mode=bm25&q={}",
        encode(&question)
    ));
    let problem = browser.wait_text(
        "ol.federal li.hit:first-child .law-problem",
        "the broken law named",
        |t| !t.is_empty(),
    );
    assert!(
        problem.starts_with(&format!(
            "Text von {law} nicht geladen: Gesetzesbündel {}",
            entry.file
        )),
        "{problem}"
    );
    let second = browser.wait_text(
        &format!("ol.federal li.hit:not([data-law=\"{law}\"]) .snippet:not(.loading)"),
        "another law's text",
        |t| !t.is_empty(),
    );
    assert!(!second.is_empty());

    // 8. Section vectors that do not match the manifest (the service worker keeps the file fetched in 2, so
    // the manifest's hash changes): a hybrid search says so and runs with BM25.
    let vectors = federal.vectors.as_ref().expect("the sample has vectors");
    let mut mismatched = manifest.clone();
    let listed = &mut mismatched
        .federal
        .as_mut()
        .unwrap()
        .vectors
        .as_mut()
        .unwrap()
        .file;
    listed.sha256 = "0".repeat(64);
    std::fs::write(bundles.join("manifest.json"), mismatched.to_json()).unwrap();
    browser.goto(&format!(
        "{origin}/?page=alle&proxy={}&q={}",
        proxy.url(),
        encode(&question)
    ));
    let problem = browser.wait_text("#vectors-problem", "the broken vectors named", |t| {
        !t.is_empty()
    });
    assert!(
        problem.starts_with(&format!(
            "Vektoren aller Gesetze nicht geladen: Gesamtindex {}",
            vectors.file.file
        )) && problem.ends_with("Die Suche läuft lexikalisch (BM25)."),
        "{problem}"
    );
    let meta = browser.wait_text("#result-meta", "BM25 without the vectors", |t| {
        t.contains("BM25")
    });
    assert!(meta.contains("nur lexikalisch"), "{meta}");
    assert_eq!(
        hits(&browser)[0],
        (law.clone(), section.designation.clone())
    );
    let errors = browser.console_errors(&[&entry.file, &vectors.file.file]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// A citation of another law (`§ 1 Abs. 2 Satz 2 AufbhG` in the AufbhV, two real laws of the archive) is a link:
/// it opens the cited law (its bundles load then) with the cited section first, which names the citing section
/// under "Zitiert in anderen Gesetzen", a link back. A damaged cited-by shard is named; the results stay.
#[test]
fn a_citation_of_another_law_opens_that_law_at_the_cited_section_and_back() {
    let dir = temp_dir();
    let bundles = dir.path().join("bundles");
    crate::util::run_ok(&crate::federal::build_laws(
        "AufbhV,AufbhG",
        &crate::util::archive(),
        &bundles,
        "section",
    ));
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    browser.goto(&format!("http://{site}/?law=AufbhV&mode=bm25&q=AufbhG"));
    browser.wait_text("#result-meta", "results in the citing law", |t| {
        t.contains("Treffer in AufbhV ")
    });
    let link = "a.external[data-law=\"AufbhG\"]";
    let label = browser.wait_text(link, "a link to the cited law", |t| t.ends_with("AufbhG"));
    let designation = label.trim_end_matches(" AufbhG").to_string();
    assert!(designation.starts_with("§ "), "{label}");
    browser.click(link);
    browser.wait_text("#result-meta", "results in the cited law", |t| {
        t.contains("Treffer in AufbhG ")
    });
    let first = browser.wait_text("#r0 h2", "the cited section first", |t| !t.is_empty());
    assert!(
        first.starts_with(&format!("{designation} ")) || first == designation,
        "{first}"
    );
    assert!(browser.text("#r0").unwrap().contains("zitiert"));
    assert!(browser.current_url().contains("law=AufbhG"));
    // And back: the cited section names the citing one among "Zitiert in anderen Gesetzen" (the folder's
    // cited-by shard, fetched after the results), a link that opens the citing law at that section.
    let back = "#r0 .cited-elsewhere a.external[data-law=\"AufbhV\"]";
    let label = browser.wait_text(back, "the citing section of the other law", |t| {
        t.ends_with(" AufbhV")
    });
    let citing = label.trim_end_matches(" AufbhV").to_string();
    browser.click(back);
    browser.wait_text("#result-meta", "results in the citing law", |t| {
        t.contains("Treffer in AufbhV ")
    });
    let first = browser.wait_text("#r0 h2", "the citing section first", |t| !t.is_empty());
    assert!(first.starts_with(&citing), "{first} is not {citing}");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // A damaged cited-by shard is named above the results, which stay.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(bundles.join("manifest.json")).unwrap()).unwrap();
    let shard = manifest["federal"]["cited_by"][0]["file"]["file"]
        .as_str()
        .expect("a cited-by shard")
        .to_string();
    let broken = dir.path().join("broken");
    crate::util::copy_folder(&bundles, &broken);
    let mut bytes = std::fs::read(broken.join(&shard)).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(broken.join(&shard), bytes).unwrap();
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), broken.clone()),
        ("/".into(), dist()),
    ]);
    browser.goto(&format!(
        "http://{site}/?law=AufbhG&mode=bm25&q={}",
        crate::util::form_encode(&designation)
    ));
    let problem = browser.wait_text(".cited-by-problem", "the damaged shard named", |t| {
        !t.is_empty()
    });
    assert!(
        problem.starts_with(&format!("Verweise aus anderen Gesetzen {shard}: "))
            && problem.contains("SHA-256"),
        "{problem}"
    );
    assert!(browser.text("#r0 h2").unwrap().starts_with(&designation));
    assert!(browser.text("#r0 .cited-elsewhere").is_none());
}

/// A folder built with `--strategies none` (law bundles and the index across laws, no vectors): one law and all
/// laws are searched with BM25 whatever mode the URL asks for, the page says why, and no query leaves the browser
/// (the proxy named in the URL gets no request).
#[test]
fn a_folder_without_vectors_searches_with_bm25_and_sends_nothing() {
    let dir = temp_dir();
    let bundles = dir.path().join("bundles");
    crate::util::run_ok(&crate::federal::build_laws(
        "AufbhV,AufbhG,KSchG",
        &crate::util::archive(),
        &bundles,
        "none",
    ));
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/".into(), dist()),
    ]);
    // Stands where a proxy would: it must not be asked anything.
    let proxy = crate::util::serve_static_site(vec![("/".into(), dir.path().to_path_buf())]);
    let browser = Browser::start();
    let question = "Kündigung sozial ungerechtfertigt";
    browser.goto(&format!(
        "http://{site}/?law=KSchG&mode=hybrid&proxy=http://{}&q={}",
        proxy.addr,
        crate::util::form_encode(question)
    ));
    browser.wait_text("#loaded", "the law", |t| t.starts_with("Bereit"));
    let loaded = browser.loaded_details();
    assert!(
        loaded.contains("keine Vektoren gebaut (nur BM25)") && !loaded.contains("Modell"),
        "{loaded}"
    );
    let meta = browser.wait_text("#result-meta", "results in the law", |t| {
        t.contains("Treffer in KSchG ")
    });
    assert!(
        meta.contains("keine Vektoren gebaut · BM25") && meta.contains("nur lexikalisch"),
        "{meta}"
    );
    assert!(browser.text("#r0 h2").unwrap().starts_with("§ 1 "));
    let modes = browser.script(
        "return [...document.querySelectorAll('input[name=mode]')].map(e => [e.value, e.disabled, e.checked]);",
        json!([]),
    );
    assert_eq!(
        modes,
        json!([
            ["hybrid", true, false],
            ["dense", true, false],
            ["bm25", false, true]
        ])
    );
    assert!(browser.text("#no-vectors").is_some());

    browser.goto(&format!(
        "http://{site}/?page=alle&mode=dense&proxy=http://{}&q={}",
        proxy.addr,
        crate::util::form_encode(question)
    ));
    let meta = browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Treffer in 3 Gesetzen")
    });
    assert!(meta.contains("BM25"), "{meta}");
    let first: Value = browser.script(
        "return document.querySelector('ol.federal li.hit').dataset.law",
        json!([]),
    );
    assert_eq!(first, json!("KSchG"));
    assert_eq!(proxy.served.lock().unwrap().len(), 0, "the proxy was asked");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// A BGB folder with a learned file (learned from questions written for the tests): the page says what the
/// ranking learned from, a lifted result says how many similar questions led to it, "Weitere Treffer" adds 20
/// below the unchanged first 10, and `lernen=aus` (the "Gelerntes" switch) ranks unlearned.
#[test]
fn learned_ranking_says_where_it_comes_from_and_can_be_switched_off() {
    let dir = temp_dir();
    let bundles = crate::learn::bgb_lexical(dir.path());
    let questions = crate::learn::taught_questions(dir.path());
    let out = crate::learn::run_learn(
        &questions,
        &bundles,
        &["--folds", "3", "--source", "Paragraf-Testfragen"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), bundles.clone()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let question = crate::util::form_encode("Der Vermieter rückt meine Mietkaution nicht raus");
    browser.goto(&format!("http://{site}/?law=BGB&mode=bm25&q={question}"));
    browser.wait_text("#loaded", "the law", |t| t.starts_with("Bereit"));
    let loaded = browser.loaded_details();
    assert!(
        loaded
            .contains("Rangfolge gelernt aus 24 Laienfragen (Paragraf-Testfragen, nur Forschung)"),
        "{loaded}"
    );
    let meta = browser.wait_text("#result-meta", "learned results", |t| {
        t.contains("Treffer in BGB")
    });
    assert!(
        meta.contains(" · Rangfolge gelernt aus 24 Laienfragen"),
        "{meta}"
    );
    let lifted: Value = browser.script(
        "return [...document.querySelectorAll('li.result')].filter(li => li.querySelector('h2').textContent.startsWith('§ 551 ')).map(li => li.querySelector('.precedents')?.textContent ?? '')",
        json!([]),
    );
    let said = lifted[0].as_str().expect("§ 551 among the results");
    assert!(
        said.ends_with("führten zu § 551") || said == "1 ähnliche Frage führte zu § 551",
        "{said}"
    );
    assert_eq!(
        browser.script(
            "return document.querySelector('#learning').checked",
            json!([])
        ),
        json!(true)
    );
    // More results: the first 10 stay as they were and the learned tail orders 20 more; the address says so.
    let headings = "return [...document.querySelectorAll('li.result h2')].map(h => h.textContent)";
    let first: Value = browser.script(headings, json!([]));
    assert_eq!(first.as_array().unwrap().len(), 10, "{first}");
    browser.script("document.querySelector('#more-results').click()", json!([]));
    browser.wait_text("#result-meta", "more learned results", |t| {
        t.starts_with("30 Treffer in BGB") && t.contains("gelernt")
    });
    let all: Value = browser.script(headings, json!([]));
    assert_eq!(all.as_array().unwrap()[..10], first.as_array().unwrap()[..]);
    assert_eq!(
        browser.script(
            "return document.querySelector('#more-results') === null && location.search.includes('mehr=an')",
            json!([])
        ),
        json!(true)
    );
    // A link to a section is another question: it does not carry the more results asked for this one.
    let link: Value = browser.script(
        "return document.querySelector('li.result a.permalink').getAttribute('href')",
        json!([]),
    );
    assert!(!link.as_str().unwrap().contains("mehr="), "{link}");
    // Switched off: unlearned, and the address says so.
    browser.script("document.querySelector('#learning').click()", json!([]));
    let meta = browser.wait_text("#result-meta", "unlearned results", |t| {
        t.contains("Treffer in BGB") && !t.contains("gelernt")
    });
    assert!(!meta.contains("Rangfolge"), "{meta}");
    assert_eq!(
        browser.script(
            "return document.querySelectorAll('.precedents').length",
            json!([])
        ),
        json!(0)
    );
    let url: Value = browser.script("return location.search", json!([]));
    assert!(url.as_str().unwrap().contains("lernen=aus"), "{url}");
    // More results belong to the question they were asked for: a new one shows the first page again.
    browser.type_into("#q", "Kündigungsfrist der Wohnung\u{E007}");
    browser.wait_text("#result-meta", "a new question's first page", |t| {
        t.starts_with("10 Treffer in BGB")
    });
    let url: Value = browser.script("return location.search", json!([]));
    assert!(!url.as_str().unwrap().contains("mehr="), "{url}");
    assert_eq!(browser.count("#more-results"), 1);
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// Questions across all laws for the throttled cold start (lay words of several fields of law).
const FEDERAL_QUERIES: [&str; 10] = [
    "Wie lange darf mein Vermieter die Kaution behalten?",
    "Ich wurde geblitzt, wie viele Punkte bekomme ich?",
    "Mein Arbeitgeber hat mir gekündigt, obwohl ich seit zehn Jahren im Betrieb bin",
    "Bekomme ich Bürgergeld, wenn ich eine Wohnung geerbt habe?",
    "Kann ich die Kosten für mein Arbeitszimmer von der Steuer absetzen?",
    "Darf die Polizei mein Handy durchsuchen?",
    "Wie beantrage ich Elterngeld?",
    "Muss ich für meinen Hund Steuern zahlen?",
    "Welche Frist gilt für einen Widerspruch gegen einen Bescheid?",
    "Darf ich im Naturschutzgebiet eine Drohne fliegen lassen?",
];

/// The README's figures for all federal law in the browser: a cold start (fresh profile) over a link of
/// 50 Mbit/s and 20 ms (the test server's, compressing text files as static hosts do), on the page over all laws
/// with hybrid search through the proxy (BM25 for a folder without vectors): time to the first result (BM25 while
/// the section vectors arrive) and to the first hybrid one, bytes downloaded before each (the largest files
/// named), the tab's memory, and retrieval time per question. Bundles: PARAGRAF_E2E_FEDERAL (a folder built with
/// `paragraf build --laws all`), else the 32-law test sample. Asserts behaviour (results, no console errors);
/// prints the figures.
#[test]
fn all_laws_cold_start_over_a_throttled_link() {
    let bundles = std::env::var_os("PARAGRAF_E2E_FEDERAL")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::util::federal_sample_bundles().to_path_buf());
    let manifest = paragraf_bundler::manifest::load_or_new(&bundles).unwrap();
    let federal = manifest
        .federal
        .clone()
        .expect("an index across laws (`paragraf federal`)");
    // The link is the server's: 50 Mbit/s shared by all answers, 20 ms before each, text files gzip-compressed
    // (Chromium's own emulation does not slow a service worker's fetches).
    let link = crate::util::Link {
        bytes_per_second: 50e6 / 8.0,
        latency: Duration::from_millis(20),
    };
    let site = crate::util::serve_static_over(
        vec![("/bundles/".into(), bundles.clone()), ("/".into(), dist())],
        Some(link),
    );
    let origin = format!("http://{}", site.addr);
    let proxy = Proxy::start(&["--allow-origin", &origin, "--rate-per-minute", "0"]);
    let browser = Browser::start();
    let encode = crate::util::form_encode;
    let cold = Instant::now();
    browser.goto(&format!(
        "{origin}/?page=alle&proxy={}&q={}",
        proxy.url(),
        encode(FEDERAL_QUERIES[0])
    ));
    // The first result: BM25 while the section vectors arrive; then hybrid through the proxy. A folder without
    // vectors (`--strategies none`) searches with BM25 alone.
    let meta = browser.wait_text("#result-meta", "the first result across laws", |t| {
        t.contains("Treffer")
    });
    let first = cold.elapsed();
    // Bytes the server sent so far (page, app, service worker and its fetches; the proxy's few-kB answers aside),
    // the largest named.
    let sent = || -> (f64, String) {
        let mut files: Vec<(String, f64)> = site
            .served
            .lock()
            .unwrap()
            .iter()
            .map(|(path, bytes)| {
                let name = path.rsplit('/').next().unwrap_or(path);
                (name.to_string(), *bytes as f64)
            })
            .collect();
        files.sort_by(|a, b| b.1.total_cmp(&a.1));
        let largest: Vec<String> = files
            .iter()
            .take(5)
            .map(|(name, bytes)| format!("{name} {:.2} MB", bytes / 1e6))
            .collect();
        (files.iter().map(|(_, b)| b).sum(), largest.join(", "))
    };
    let (downloaded, largest) = sent();
    let first_mode = if meta.contains("hybrid") {
        "hybrid"
    } else {
        "BM25"
    };
    let hybrid = match manifest.has_vectors() {
        true => {
            assert!(
                meta.contains("hybrid") || meta.contains("Vektoren aller Gesetze laden"),
                "{meta}"
            );
            let meta = browser.wait_text("#result-meta", "the first hybrid result", |t| {
                t.contains("hybrid")
            });
            assert!(meta.contains("Anfragevektor über den Server"), "{meta}");
            let (bytes, largest) = sent();
            format!(
                "; first hybrid result after {:.2} s, {:.1} MB sent before it ({largest})",
                cold.elapsed().as_secs_f64(),
                bytes / 1e6
            )
        }
        false => {
            assert!(
                meta.contains("BM25") && meta.contains("nur lexikalisch"),
                "{meta}"
            );
            String::new()
        }
    };
    // Where the time went: each file's request and arrival, ms after navigation (Resource Timing).
    let timeline = browser.resource_timeline();
    browser.assert_each_file_once(&timeline);
    let timeline: Vec<String> = timeline
        .iter()
        .map(|(name, start, end)| format!("{name} {start:.0}–{end:.0}"))
        .collect();
    let metric = |name: &str| -> f64 {
        let metrics = browser.call(
            "POST",
            "/goog/cdp/execute",
            json!({"cmd": "Performance.getMetrics", "params": {}}),
        );
        metrics["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map_or(0.0, |m| m["value"].as_f64().unwrap())
    };
    browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Performance.enable", "params": {}}),
    );
    let js_heap = metric("JSHeapUsedSize");
    let wasm: f64 = browser
        .script(
            "return document.getElementById('result-meta').dataset.wasmBytes",
            json!([]),
        )
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Retrieval per question (index search in the browser, after the question's shards arrived).
    let mut retrieval = Vec::new();
    for question in &FEDERAL_QUERIES[1..] {
        let before = browser.search_number();
        browser.type_into("#q", &format!("{question}\u{E007}"));
        let started = Instant::now();
        while browser.search_number() <= before {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "{question}: no results"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let ms: f64 = browser
            .script(
                "return document.getElementById('result-meta').dataset.retrievalMs",
                json!([]),
            )
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        retrieval.push(ms);
    }
    retrieval.sort_by(f64::total_cmp);
    eprintln!(
        "all laws in the browser: {} laws, {} sections; cold start over 50 Mbit/s, 20 ms: first result ({first_mode}) after {:.2} s, {:.1} MB sent before it ({largest}){hybrid}; tab memory: JS heap {:.0} MB, wasm {:.0} MB; retrieval median {:.1} ms, max {:.1} ms over {} questions",
        federal.laws,
        federal.sections,
        first.as_secs_f64(),
        downloaded / 1e6,
        js_heap / 1e6,
        wasm / 1e6,
        retrieval[retrieval.len() / 2],
        retrieval[retrieval.len() - 1],
        retrieval.len()
    );
    eprintln!(
        "files, ms after navigation until the last of those results: {}",
        timeline.join(", ")
    );
    assert!(downloaded > 0.0);
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// `paragraf serve` as `scripts/main.sh` runs it: the built app, the bundles at /bundles/ and the query vectors on
/// one origin. The app finds the endpoint in the `index.html` it is served (no `proxy=` in the URL, no
/// `--allow-origin`), a dense search gets its vector from the server, and the page's files arrive compressed
/// with the right types. With `--no-proxy` the same page asks no endpoint and searches in the browser.
#[test]
fn paragraf_serve_serves_app_bundles_and_query_vectors_on_one_origin() {
    let model = crate::util::model_path();
    let serve = |extra: &[&str]| {
        let mut args = vec!["serve".to_string(), dist().display().to_string()];
        args.extend(["--bundles".into(), gg_bundles().display().to_string()]);
        args.extend(["--bind".into(), "127.0.0.1:0".into()]);
        args.extend(extra.iter().map(|a| a.to_string()));
        crate::util::Server::spawn(&args, &[])
    };
    let server = serve(&["--model", model.to_str().unwrap()]);
    assert!(
        server
            .started
            .contains("query embeddings at /v1/embed with intfloat/multilingual-e5-small"),
        "{}",
        server.started
    );
    let origin = server.url();
    let browser = Browser::start();
    browser.goto(&format!(
        "{origin}/?mode=dense&q={}",
        crate::util::form_encode("Freiheit der Meinungsäußerung und der Presse")
    ));
    let meta = browser.wait_text("#result-meta", "dense results", |t| {
        t.contains("Strategie section")
    });
    let source = browser.script(
        "return document.getElementById('result-meta').dataset.vector",
        json!([]),
    );
    assert_eq!(source, json!("server"), "{meta}");
    assert!(meta.contains("über den Server"), "{meta}");
    let headings = browser.text(".results").unwrap();
    assert!(
        headings.contains("Art 5") || headings.contains("Art. 5"),
        "{headings}"
    );
    // What the browser fetched (the app's wasm and the law bundle) as the server answers it: wasm as
    // application/wasm, both compressed and cached for good. Asked directly, because what went through the
    // service worker (which may control the page before the wasm is asked for) is listed decoded in the timeline.
    let fetched: Value = browser.script(
        "return performance.getEntriesByType('resource').map(e => e.name);",
        json!([]),
    );
    let fetched_url = |start: &str, end: &str| {
        fetched
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e.as_str())
            .find(|name| name.contains(start) && name.ends_with(end))
            .unwrap_or_else(|| panic!("{start}…{end} was fetched: {fetched}"))
            .to_owned()
    };
    for (start, end, content_type) in [
        ("/paragraf-web-", "_bg.wasm", "application/wasm"),
        ("/bundles/GG.law.", ".pgb", "application/octet-stream"),
    ] {
        let needle = format!("{start}…{end}");
        let answer = ureq::get(&fetched_url(start, end))
            .header("Accept-Encoding", "gzip, deflate, br, zstd")
            .call()
            .unwrap();
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(
            header("content-type").as_deref(),
            Some(content_type),
            "{needle}"
        );
        assert_eq!(
            header("content-encoding").as_deref(),
            Some("br"),
            "{needle}"
        );
        assert_eq!(
            header("cache-control").as_deref(),
            Some("public, max-age=31536000, immutable"),
            "{needle}"
        );
    }
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
    drop(server);

    // Files only: the page names no endpoint and asks none. These bundles carry no in-browser encoder, so the
    // search is lexical, without a failed request (no console error for a missing /health).
    let files_only = serve(&["--no-proxy"]);
    assert!(
        files_only
            .started
            .contains("no query embeddings (--no-proxy)"),
        "{}",
        files_only.started
    );
    let html = ureq::get(&format!("{}/", files_only.url()))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    assert!(
        html.contains(r#"<meta name="paragraf-proxy" content="">"#),
        "{html}"
    );
    browser.goto(&format!(
        "{}/?mode=hybrid&q={}",
        files_only.url(),
        crate::util::form_encode("Freiheit der Meinungsäußerung und der Presse")
    ));
    let meta = browser.wait_text("#result-meta", "lexical results", |t| {
        t.contains("Strategie section")
    });
    assert!(meta.contains("nur lexikalisch"), "{meta}");
    let errors = browser.console_errors(&[]);
    assert!(errors.is_empty(), "console errors: {errors:?}");
    let asked: Value = browser.script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('health') || n.includes('/v1/'));",
        json!([]),
    );
    assert_eq!(asked, json!([]), "no endpoint was asked");
}

/// The app as users install it: Chromium finds the web app manifest (name, standalone display, theme colour,
/// icons made from `public/icon.svg` at build time) and reports no installability error; the icons are real PNGs
/// of their stated sizes; the page's favicon is the SVG. (That it starts offline after the first visit is step 5b of
/// `browser_app_searches_switches_shares_degrades_and_reports_errors`.)
#[test]
fn the_start_screen_shows_what_paragraf_is_and_stays_with_the_reason_when_the_app_cannot_start() {
    // The app's page without its wasm: the start screen painted from index.html alone is what remains.
    let dist = dist();
    let broken = temp_dir();
    for entry in std::fs::read_dir(&dist).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && !(name.starts_with("paragraf-web-") && name.ends_with("_bg.wasm")) {
            std::fs::copy(&path, broken.path().join(&name)).unwrap();
        }
    }
    let site = crate::util::serve_static(vec![("/".into(), broken.path().to_path_buf())]);
    let browser = Browser::start();
    browser.goto(&format!("http://{site}/?mode=bm25"));
    let fatal = browser.wait_text("#fatal", "the failed start to be named", |t| !t.is_empty());
    assert!(fatal.starts_with("Die Anwendung ist abgestürzt"), "{fatal}");
    let boot = browser.text("#boot").unwrap_or_default();
    assert!(
        boot.contains("Paragraf findet die Paragraphen") && boot.contains("Rechtsberatung"),
        "{boot}"
    );
    assert!(
        !boot.contains("wird geladen"),
        "the start screen still says it is loading: {boot}"
    );
}

#[test]
fn the_app_is_installable() {
    let dist = dist();
    // Served as users serve it (`paragraf serve`: icons and the manifest with their content types).
    let site = crate::util::Server::spawn(
        &[
            "serve".to_string(),
            dist.display().to_string(),
            "--bundles".into(),
            gg_bundles().display().to_string(),
            "--bind".into(),
            "127.0.0.1:0".into(),
            "--no-proxy".into(),
        ],
        &[],
    );
    let browser = Browser::start();
    browser.goto(&format!("{}/?mode=bm25", site.url()));
    browser.wait_text("#loaded", "the bundles to load", |t| {
        t.contains("Bereit: GG")
    });
    // The service worker controls the page once it is active (installability wants one with a fetch handler).
    browser.call(
        "POST",
        "/execute/async",
        json!({"script": "const done = arguments[arguments.length - 1];\
            navigator.serviceWorker.ready.then(() => done(true), () => done(false));", "args": []}),
    );
    let manifest = browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Page.getAppManifest", "params": {}}),
    );
    assert_eq!(manifest["errors"], json!([]), "{manifest}");
    let parsed: Value = serde_json::from_str(manifest["data"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["display"], "standalone");
    assert_eq!(parsed["short_name"], "Paragraf");
    assert_eq!(parsed["lang"], "de");
    let installability = browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Page.getInstallabilityErrors", "params": {}}),
    );
    assert_eq!(
        installability["installabilityErrors"],
        json!([]),
        "Chromium would not offer to install it: {installability}"
    );
    for (file, size) in [("icon-192.png", 192u32), ("icon-512.png", 512)] {
        let png = std::fs::read(dist.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{file}");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), (size, size), "{file}");
    }
    let icon = browser.script(
        "return document.querySelector('link[rel=icon]').getAttribute('href')",
        json!([]),
    );
    assert_eq!(icon, json!("icon.svg"));
    let theme = browser.script(
        "return document.querySelector('meta[name=theme-color]').content",
        json!([]),
    );
    assert_eq!(theme, parsed["theme_color"]);
}

/// axe-core (the engine of Lighthouse's accessibility audit) on every page and state a user meets: the search page
/// empty, with results (expansion chips, definitions), with the settings open and with a notice; the strategies
/// page; the page over all laws with results. None may have a serious or critical violation.
#[test]
fn every_page_passes_axe_core_without_serious_violations() {
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), gg_bundles().to_path_buf()),
        (
            "/alle/".into(),
            crate::util::federal_sample_bundles().to_path_buf(),
        ),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let mut found = Vec::new();
    let mut check = |state: &str, browser: &Browser| {
        for violation in browser.accessibility_violations() {
            found.push(format!("{state}: {violation}"));
        }
    };
    browser.goto(&format!("http://{site}/?mode=bm25"));
    browser.wait_text("#loaded", "the bundles to load", |t| {
        t.contains("Bereit: GG")
    });
    check("search page, no question", &browser);
    browser.goto(&format!(
        "http://{site}/?mode=bm25&q={}",
        crate::util::form_encode("Meinungsäußerung Presse Deutscher")
    ));
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    check("search page with results", &browser);
    browser.script(
        "document.querySelectorAll('details').forEach(d => d.open = true); return true;",
        json!([]),
    );
    check("search page, every details open", &browser);
    // A notice: dense search with a proxy that is not there.
    browser.goto(&format!(
        "http://{site}/?mode=hybrid&vektor=server&proxy=http://127.0.0.1:{}&q=Presse",
        free_port()
    ));
    browser.wait_text(".notice", "the notice", |t| !t.is_empty());
    check("search page with a notice", &browser);
    browser.goto(&format!("http://{site}/?page=strategies"));
    browser.wait_text("h1", "the strategies page", |t| t.contains("Strategien"));
    check("strategies page", &browser);
    browser.goto(&format!(
        "http://{site}/?data=alle/&page=alle&mode=bm25&q={}",
        crate::util::form_encode("Kündigung Arbeitsverhältnis")
    ));
    browser.wait_text("#result-meta", "results across laws", |t| {
        t.contains("Gesetzen")
    });
    check("page over all laws with results", &browser);
    let _ = browser.console_errors(&[]);
    assert!(found.is_empty(), "axe-core found:\n{}", found.join("\n"));
}

/// A lawyer's two moves on a result: "Zitat kopieren" puts the citation (`Art. 5 GG`) on the clipboard, and
/// printing shows the section, its path and the official link without the page's controls.
#[test]
fn a_result_copies_its_citation_and_prints_without_controls() {
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), gg_bundles().to_path_buf()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let origin = format!("http://{site}");
    browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Browser.grantPermissions", "params": {
            "origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}}),
    );
    browser.goto(&format!("{origin}/?mode=bm25&q=Art.+5+GG"));
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    let button = "#r0 .copy-citation";
    assert_eq!(browser.text(button).as_deref(), Some("Zitat kopieren"));
    browser.click(button);
    browser.wait_text(button, "the copy to be confirmed", |t| {
        t == "Kopiert: Art. 5 GG"
    });
    let clipboard = browser.call(
        "POST",
        "/execute/async",
        json!({"script": "const done = arguments[arguments.length - 1];\
            navigator.clipboard.readText().then(done, e => done('unreadable: ' + e));", "args": []}),
    );
    assert_eq!(clipboard, json!("Art. 5 GG"));

    browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Emulation.setEmulatedMedia", "params": {"media": "print"}}),
    );
    let shown = browser.script(
        "const d = (s) => { const e = document.querySelector(s); return e ? getComputedStyle(e).display : 'absent'; };\
         return { header: d('header.top'), form: d('form.search'), result: d('#r0'), copy: d('#r0 .copy-citation'),\
                  link: getComputedStyle(document.querySelector('#r0 .foot a[target=_blank]'), '::after').content };",
        json!([]),
    );
    assert_eq!(shown["header"], "none", "{shown}");
    assert_eq!(shown["form"], "none", "{shown}");
    assert_eq!(shown["copy"], "none", "{shown}");
    assert_ne!(shown["result"], "none", "{shown}");
    assert!(
        shown["link"]
            .as_str()
            .unwrap()
            .contains("gesetze-im-internet.de/gg/art_5.html"),
        "the official link is printed: {shown}"
    );
}

/// A link to an Absatz or Satz (`?q=Art. 13 Abs. 7 GG`) opens its section with exactly that unit marked and
/// scrolled into view, also deep in a long section's text box; every result links to itself, and prints its
/// law's Stand.
#[test]
fn a_link_to_an_absatz_or_satz_marks_it_and_scrolls_it_into_view() {
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), gg_bundles().to_path_buf()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let law = paragraf_corpus::parse_file(&crate::util::shared("corpus/GG.xml")).unwrap();
    let absatz = |designation: &str, label: &str| -> String {
        let section = &law.sections[law.find_section(designation).unwrap()];
        let a = section
            .subsections
            .iter()
            .find(|a| a.label.as_deref() == Some(label))
            .unwrap();
        section.text[a.span.range()].to_string()
    };
    let shown = |b: &Browser| -> Value {
        b.script(
            "const c = [...document.querySelectorAll('#r0 .cited')];\
             if (!c.length) return null;\
             const t = document.querySelector('#r0 .text'); const box = t.getBoundingClientRect();\
             const r = c[0].getBoundingClientRect();\
             return { text: c.map(e => e.textContent).join(''), elsewhere: document.querySelectorAll('.cited').length - c.length,\
                      inBox: r.top >= box.top - 1 && r.top < box.bottom, scrolled: t.scrollTop > 0, inWindow: r.top >= 0 && r.top < innerHeight,\
                      heading: document.querySelector('#r0 h2').textContent };",
            json!([]),
        )
    };

    // Art. 13 Abs. 7 stands at the end of a long article: its text box must scroll to it.
    browser.goto(&format!(
        "http://{site}/?mode=bm25&q={}",
        crate::util::form_encode("Art. 13 Abs. 7 GG")
    ));
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    let mut found = Value::Null;
    for _ in 0..50 {
        found = shown(&browser);
        if found["inBox"] == true {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(found["text"], absatz("Art. 13", "7"), "{found}");
    assert_eq!(found["elsewhere"], 0, "{found}");
    assert_eq!(found["inBox"], true, "scrolled into its text box: {found}");
    assert_eq!(
        found["scrolled"], true,
        "the unit lies below the box's first screen: {found}"
    );
    assert_eq!(found["inWindow"], true, "{found}");
    assert!(found["heading"].as_str().unwrap().starts_with("Art. 13 "));

    // One Satz: only it is marked.
    browser.goto(&format!(
        "http://{site}/?mode=bm25&q={}",
        crate::util::form_encode("Art. 5 Abs. 1 S. 2 GG")
    ));
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    assert_eq!(
        shown(&browser)["text"],
        "Die Pressefreiheit und die Freiheit der Berichterstattung durch Rundfunk und Film werden gewährleistet."
    );
    // A whole section, or a unit that does not exist: nothing marked, the section still first.
    for q in ["Art. 5 GG", "Art. 5 Abs. 9 GG"] {
        browser.goto(&format!(
            "http://{site}/?mode=bm25&q={}",
            crate::util::form_encode(q)
        ));
        browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
        assert_eq!(shown(&browser), Value::Null, "{q}");
        let heading = browser.text("#r0 h2").unwrap();
        assert_eq!(heading.trim(), "Art. 5", "{q}");
    }

    // Each result's own link searches its citation; it opens the same page.
    let href = browser
        .script(
            "return document.querySelector('#r0 a.permalink').getAttribute('href');",
            json!([]),
        )
        .as_str()
        .unwrap()
        .to_owned();
    assert!(href.contains("q=Art.+5+GG"), "{href}");
    browser.goto(&format!("http://{site}/{href}"));
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    assert_eq!(browser.text("#r0 h2").unwrap().trim(), "Art. 5");

    // The law's Stand: not on screen, printed.
    let stand = |b: &Browser| {
        b.script(
            "const e = document.querySelector('#r0 .stand'); return [getComputedStyle(e).display, e.textContent];",
            json!([]),
        )
    };
    let screen = stand(&browser);
    assert_eq!(screen[0], "none", "{screen}");
    assert!(
        screen[1].as_str().unwrap().starts_with("Stand: "),
        "{screen}"
    );
    browser.call(
        "POST",
        "/goog/cdp/execute",
        json!({"cmd": "Emulation.setEmulatedMedia", "params": {"media": "print"}}),
    );
    assert_eq!(stand(&browser)[0], "block");
}

/// Keyboard only, as someone who cannot use a mouse: Tab reaches the question, Enter searches, Tab walks the
/// first result before the second, Enter opens a defined term's popover and Esc closes it with focus kept on the
/// term, Enter on "Erweitert" opens the researcher's controls; the focused element is always visibly outlined.
/// Over many laws the law finder takes a name and Enter opens its best suggestion.
#[test]
fn everything_works_from_the_keyboard() {
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), gg_bundles().to_path_buf()),
        (
            "/alle/".into(),
            crate::util::federal_sample_bundles().to_path_buf(),
        ),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let keys = |b: &Browser, keys: &str| {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|c| {
                let c = c.to_string();
                [
                    json!({"type": "keyDown", "value": c}),
                    json!({"type": "keyUp", "value": c}),
                ]
            })
            .collect();
        b.call(
            "POST",
            "/actions",
            json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]}),
        );
    };
    let focused = |b: &Browser| -> Value {
        b.script(
            "const e = document.activeElement; const s = getComputedStyle(e);\
             return { id: e.id, tag: e.tagName, class: e.className, term: e.dataset.term ?? null,\
                      result: e.closest('.result')?.id ?? null, summary: e.tagName === 'SUMMARY',\
                      visible: s.outlineStyle !== 'none' && s.outlineWidth !== '0px',\
                      open: document.querySelector(':popover-open')?.id ?? null };",
            json!([]),
        )
    };
    // Tab until `wanted` (at most `limit` presses); every stop visibly focused. Returns the presses.
    let tab_until = |b: &Browser, what: &str, limit: usize, wanted: &dyn Fn(&Value) -> bool| {
        for presses in 1..=limit {
            keys(b, "\u{E004}");
            let now = focused(b);
            if now["tag"] != "BODY" {
                assert_eq!(now["visible"], true, "focus not visible on {now}");
            }
            if wanted(&now) {
                return (presses, now);
            }
        }
        panic!(
            "{what}: not reached in {limit} Tab presses (at {})",
            focused(b)
        );
    };

    browser.goto(&format!("http://{site}/?mode=bm25"));
    browser.wait_text("#law", "the law list", |t| t.contains("GG"));
    tab_until(&browser, "the question", 20, &|f| f["id"] == "q");
    keys(&browser, "Art. 8 GG\u{E007}");
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    let (_, first) = tab_until(&browser, "the first result", 60, &|f| {
        !f["result"].is_null()
    });
    assert_eq!(
        first["result"], "r0",
        "the first result comes first: {first}"
    );
    let (_, term) = tab_until(&browser, "a defined term", 40, &|f| {
        f["term"] == "Deutscher"
    });
    assert!(term["result"].as_str().unwrap().starts_with('r'), "{term}");
    keys(&browser, "\u{E007}");
    let opened = focused(&browser);
    assert!(
        opened["open"]
            .as_str()
            .is_some_and(|id| id.starts_with('d')),
        "Enter opens the definition: {opened}"
    );
    keys(&browser, "\u{E00C}");
    let closed = focused(&browser);
    assert_eq!(closed["open"], Value::Null, "Esc closes it: {closed}");
    assert_eq!(
        closed["term"], "Deutscher",
        "focus stays on the term: {closed}"
    );

    // Back to the top: "Erweitert" opens with Enter.
    browser.goto(&format!("http://{site}/?mode=bm25"));
    browser.wait_text("#law", "the law list", |t| t.contains("GG"));
    tab_until(&browser, "Erweitert", 30, &|f| f["summary"] == true);
    keys(&browser, "\u{E007}");
    let open = browser.script(
        "return document.querySelector('details#advanced').open;",
        json!([]),
    );
    assert_eq!(open, true, "Enter on the summary opens Erweitert");

    // Many laws: the law finder by keyboard.
    let target = crate::util::federal_sample()
        .keys()
        .rev()
        .find(|law| !law.contains(' '))
        .expect("a sample law")
        .clone();
    browser.goto(&format!("http://{site}/?data=alle/&mode=bm25"));
    browser.wait_text("#law-current", "the current law", |t| !t.is_empty());
    tab_until(&browser, "the law finder", 20, &|f| f["id"] == "law-finder");
    keys(&browser, &format!("{target}\u{E007}"));
    browser.wait_text("#law-current", "the chosen law", |t| {
        t.contains(target.as_str())
    });
}

/// A lay view first: the question, the law and the results; strategy, mode, unit search, graph and scores one
/// click away under "Erweitert", open or closed in the URL, and its summary names settings a link changed.
#[test]
fn the_first_screen_is_the_lay_view_and_erweitert_keeps_every_control() {
    let site = crate::util::serve_static(vec![
        ("/bundles/".into(), gg_bundles().to_path_buf()),
        ("/".into(), dist()),
    ]);
    let browser = Browser::start();
    let visible = |b: &Browser, css: &str| -> bool {
        b.script(
            "const e = document.querySelector(arguments[0]); return !!e && e.checkVisibility();",
            json!([css]),
        )
        .as_bool()
        .unwrap()
    };
    browser.goto(&format!(
        "http://{site}/?mode=bm25&q={}",
        crate::util::form_encode("Meinungsäußerung Presse")
    ));
    browser.wait_text("#result-meta", "results", |t| {
        t.contains("Treffer in GG") && !t.starts_with("0 ")
    });
    assert!(visible(&browser, "#q"), "the question");
    assert!(visible(&browser, "#r0 h2"), "the results");
    for hidden in ["#strategy", "input[name=mode]", "#unit-search", "#graph"] {
        assert!(
            !visible(&browser, hidden),
            "{hidden} is not on the first screen"
        );
    }
    assert_eq!(
        browser.count(".score"),
        0,
        "no raw scores on the first screen"
    );
    let summary = browser.text("#advanced summary").unwrap();
    assert_eq!(summary, "Erweitert (bm25)", "the link's mode is named");
    browser.click("#advanced summary");
    assert!(visible(&browser, "#strategy") && visible(&browser, "#graph"));
    assert!(browser.count(".score") > 0, "scores with Erweitert");
    let url = browser.current_url();
    assert!(url.contains("erweitert=an"), "{url}");
    browser.goto(&url);
    browser.wait_text("#result-meta", "results", |t| t.contains("Treffer in GG"));
    assert!(visible(&browser, "#strategy"), "open again from the URL");
}
