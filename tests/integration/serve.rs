//! `paragraf serve` as a process: its refusals at start-up, that a client hanging up does not end it, and the
//! static-host configuration the docs give for nginx, run with Debian's nginx to check that it sends the headers
//! that matter. (The site's own behaviour is tested in `crates/proxy/tests/http.rs`, and in a real browser in
//! `web::paragraf_serve_…`.)

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{run, temp_dir};

/// An app folder and a bundle folder with the names a build gives them.
fn site(dir: &Path) {
    let (app, bundles) = (dir.join("dist"), dir.join("dist/bundles"));
    std::fs::create_dir_all(&bundles).unwrap();
    std::fs::write(
        app.join("index.html"),
        "<!DOCTYPE html><html><head><title>Paragraf</title></head><body></body></html>",
    )
    .unwrap();
    let text: String = (0..2000).map(|i| format!("paragraf {i} ")).collect();
    std::fs::write(app.join("paragraf-web-dc55ed44f1ab0d6b_bg.wasm"), &text).unwrap();
    std::fs::write(app.join("paragraf-web-dc55ed44f1ab0d6b.js"), &text).unwrap();
    // Trunk drops its hash's leading zeros: a real build's 14 digits.
    std::fs::write(app.join("paragraf-web-575d4d087776ec_bg.wasm"), &text).unwrap();
    std::fs::write(app.join("sw.js"), &text).unwrap();
    std::fs::write(
        bundles.join("manifest.json"),
        r#"{"laws": [], "bundles": []}"#,
    )
    .unwrap();
    std::fs::write(bundles.join("GG.law.b242b247ec712d40.pgb"), &text).unwrap();
}

#[test]
fn serve_refuses_unbuilt_folders_and_a_port_in_use() {
    let dir = temp_dir();
    site(dir.path());
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let app = dir.path().join("dist");
    let refused = |args: &[&str]| {
        let mut all = vec!["serve", "--bind", "127.0.0.1:0", "--no-proxy"];
        all.extend_from_slice(args);
        let out = run(&all);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        )
    };
    assert_eq!(
        refused(&[empty.to_str().unwrap()]),
        (
            Some(2),
            format!(
                "error: invalid proxy configuration: the app's folder {} has no index.html. Most likely the app is not built yet: scripts/web_build.sh builds it into dist/",
                empty.display()
            )
        )
    );
    let (code, message) = refused(&[app.to_str().unwrap(), "--bundles", empty.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{message}");
    assert!(
        message.contains("manifest.json") && message.contains("paragraf build"),
        "{message}"
    );
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().to_string();
    let out = run(&[
        "serve",
        app.to_str().unwrap(),
        "--no-proxy",
        "--bind",
        &port,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "error: cannot listen on {port}: Address already in use (os error 98). Most likely another server (an earlier `paragraf serve` or `paragraf proxy`?) runs there: stop it, or choose another port with --bind"
        )
    );
}

/// A client that hangs up in the middle of an answer ends that connection only. The server's next write to the
/// socket raises SIGPIPE (hyper writes a head and body with `writev`, which has no `MSG_NOSIGNAL`), and the CLI's
/// default SIGPIPE disposition, right for `paragraf show … | head`, once ended the whole `paragraf serve` or
/// `paragraf proxy` this way. Which write meets the closed socket depends on timing, so the signal is sent
/// directly; the server must ignore it and answer the next request.
#[test]
fn serve_outlives_sigpipe_from_clients_that_hang_up() {
    let dir = temp_dir();
    site(dir.path());
    let app = dir.path().join("dist");
    let args = [
        "serve",
        app.to_str().unwrap(),
        "--no-proxy",
        "--bind",
        "127.0.0.1:0",
    ]
    .map(String::from);
    let mut server = crate::util::Server::spawn(&args, &[]);
    let port = server.addr.port();
    // A hang-up mid-answer, as a browser or script does (the answer's rest is never read).
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "GET /paragraf-web-dc55ed44f1ab0d6b_bg.wasm HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n"
    )
    .unwrap();
    stream.read_exact(&mut [0u8; 12]).unwrap();
    drop(stream);
    let signalled = Command::new("kill")
        .args(["-s", "PIPE", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server ended on SIGPIPE: {}",
        server.stderr()
    );
    assert_eq!(head_of(port, "/").0, 200);
}

/// The status line and headers (lower-case names) of a GET with `Accept-Encoding: gzip`.
fn head_of(port: u16, path: &str) -> (u16, Vec<(String, String)>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&answer[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn documented_nginx_configuration_sends_the_headers_that_matter() {
    let nginx = Path::new("/usr/sbin/nginx");
    assert!(
        nginx.exists(),
        "nginx not found at {}: install Debian's nginx-light (scripts/setup.sh does)",
        nginx.display()
    );
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/serving.md"),
    )
    .unwrap();
    let start = docs
        .find("# paragraf: static site")
        .expect("the nginx block in docs/serving.md");
    let end = docs[start..].find("# paragraf: end").unwrap() + start;
    let block = &docs[start..end];
    let dir = temp_dir();
    site(dir.path());
    let port = crate::util::free_port();
    let tmp = dir.path().display();
    let config = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {tmp}/nginx.pid;\nerror_log {tmp}/error.log;\n\
         events {{}}\nhttp {{\n  access_log off;\n  client_body_temp_path {tmp}/body;\n  proxy_temp_path {tmp}/proxy;\n\
         fastcgi_temp_path {tmp}/fastcgi;\n  uwsgi_temp_path {tmp}/uwsgi;\n  scgi_temp_path {tmp}/scgi;\n\
         server {{\n    listen 127.0.0.1:{port};\n    root {tmp}/dist;\n{block}\n  }}\n}}\n"
    );
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, config).unwrap();
    let child = Command::new(nginx)
        .arg("-p")
        .arg(dir.path())
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nginx");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Kill(child);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.0.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
            panic!("nginx exited ({status}) with the documented configuration:\n{log}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nginx did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let immutable = "public, max-age=31536000, immutable";
    for (path, kind, cache, gzip) in [
        ("/", "text/html", "no-cache", true),
        ("/sw.js", "text/javascript", "no-cache", true),
        (
            "/paragraf-web-dc55ed44f1ab0d6b_bg.wasm",
            "application/wasm",
            immutable,
            true,
        ),
        (
            "/paragraf-web-dc55ed44f1ab0d6b.js",
            "text/javascript",
            immutable,
            true,
        ),
        (
            "/paragraf-web-575d4d087776ec_bg.wasm",
            "application/wasm",
            immutable,
            true,
        ),
        (
            "/bundles/manifest.json",
            "application/json",
            "no-cache",
            true,
        ),
        (
            "/bundles/GG.law.b242b247ec712d40.pgb",
            "application/octet-stream",
            immutable,
            true,
        ),
    ] {
        let (status, headers) = head_of(port, path);
        assert_eq!(status, 200, "{path}: {headers:?}");
        assert!(
            header(&headers, "content-type").is_some_and(|t| t.starts_with(kind)),
            "{path}: {headers:?}"
        );
        assert_eq!(header(&headers, "cache-control"), Some(cache), "{path}");
        assert_eq!(
            header(&headers, "x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            header(&headers, "content-encoding") == Some("gzip"),
            gzip,
            "{path}: {headers:?}"
        );
    }
    assert_eq!(head_of(port, "/nothing.js").0, 404);
}
