//! `paragraf mcp` spoken to as an MCP client would: JSON-RPC lines over the child's stdin/stdout. Every tool's
//! answer is checked against the CLI's `--json`, and bad arguments must come back as JSON-RPC errors while the
//! server keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Instant;

use crate::search_cli::search_json;
use crate::util::{gg_bundles, model_path, paragraf, run_ok};
use serde_json::{json, Value};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start() -> Server {
        let mut child = paragraf()
            .args(["mcp", "--bundles"])
            .arg(gg_bundles())
            .arg("--model")
            .arg(model_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start paragraf mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns the response with its id (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the server closed stdout while {method} was pending");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            if message["id"] == json!(id) {
                assert_eq!(message["jsonrpc"], "2.0");
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The structured answer of a successful call.
fn answer(response: &Value) -> &Value {
    let result = &response["result"];
    assert_eq!(result["isError"], false, "{response}");
    let text = result["content"][0]["text"].as_str().expect("text content");
    assert_eq!(
        &serde_json::from_str::<Value>(text).unwrap(),
        &result["structuredContent"],
        "the text is the structured JSON"
    );
    &result["structuredContent"]
}

/// The JSON-RPC error of a failed call.
fn error(response: &Value) -> (i64, String) {
    assert!(
        response.get("result").is_none(),
        "expected an error: {response}"
    );
    (
        response["error"]["code"].as_i64().unwrap(),
        response["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn mcp_server_answers_as_the_cli_does() {
    let mut server = Server::start();
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "paragraf-test", "version": "0"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "paragraf", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let tools = server.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
    for name in [
        "search_law",
        "get_section",
        "resolve_citation",
        "table_of_contents",
        "list_laws",
    ] {
        let tool = tools.iter().find(|t| t["name"] == name).expect(name);
        let description = tool["description"].as_str().unwrap();
        // English and German.
        assert!(
            description.contains("German") && description.contains(" / "),
            "{name}: {description}"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    let search = tools.iter().find(|t| t["name"] == "search_law").unwrap();
    assert_eq!(
        search["inputSchema"]["required"],
        json!(["question"]),
        "{search}"
    );

    let laws = server.call("list_laws", json!({}));
    let laws = answer(&laws);
    assert_eq!(laws["laws"][0]["law"], "GG", "{laws}");
    assert_eq!(
        laws["laws"][0]["strategies"],
        json!(["section", "subsection", "sentence"])
    );

    let dir = gg_bundles();
    for question in [
        "Darf der Staat meine Briefe lesen?",
        "Art. 20a GG",
        "Wer bestimmt über die religiöse Erziehung?",
    ] {
        let t0 = Instant::now();
        let response = server.call(
            "search_law",
            json!({"question": question, "laws": ["GG"], "k": 10}),
        );
        eprintln!(
            "tools/call search_law: {:.1} ms",
            t0.elapsed().as_secs_f64() * 1e3
        );
        assert_eq!(
            answer(&response),
            &search_json(dir, question, &["--law", "GG"]),
            "{question}"
        );
    }
    let bm25 = server.call(
        "search_law",
        json!({"question": "Asylrecht", "mode": "bm25", "k": 3}),
    );
    assert_eq!(
        answer(&bm25),
        &search_json(dir, "Asylrecht", &["--mode", "bm25", "-k", "3"])
    );

    let section = server.call("get_section", json!({"law": "GG", "designation": "Art. 1"}));
    let cli: Value = serde_json::from_str(&run_ok(&[
        "show",
        "GG",
        "Art. 1",
        "--json",
        "--bundles",
        dir.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(answer(&section), &cli);

    // Bad arguments: JSON-RPC errors (invalid params), and the server keeps serving.
    let (code, message) =
        error(&server.call("search_law", json!({"question": "Asyl", "k": "zehn"})));
    assert_eq!(code, -32602, "{message}");
    let (code, message) =
        error(&server.call("search_law", json!({"question": "Asyl", "laws": ["BGB"]})));
    assert_eq!(code, -32602);
    assert!(
        message.contains("no law \"BGB\"") && message.contains("there are: GG"),
        "{message}"
    );
    // A huge unknown law name is named by its size, not handed back.
    let (code, message) = error(&server.call(
        "search_law",
        json!({"question": "Asyl", "laws": ["B".repeat(1 << 20)]}),
    ));
    assert_eq!(code, -32602);
    assert!(
        message.starts_with("no law (1048576 bytes) in ") && message.len() < 1000,
        "{}",
        &message[..message.len().min(300)]
    );
    // A message over the limit is answered (the SDK alone dropped it, and the client waited forever), and the
    // server goes on.
    let id = server.next_id;
    server.next_id += 1;
    let huge = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search_law", "arguments": {"question": "x".repeat(17 << 20)}}});
    server.send(&huge);
    let mut line = String::new();
    server.stdout.read_line(&mut line).unwrap();
    let refused: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(refused["id"], json!(id), "{line}");
    assert_eq!(
        error(&refused),
        (
            -32600,
            "request of more than 8 MiB refused: one message may have at most 8388608 bytes"
                .to_string()
        )
    );
    let (code, message) = error(&server.call("search_law", json!({"question": " "})));
    assert_eq!(code, -32602);
    assert!(message.contains("the question is empty"), "{message}");
    let (code, message) =
        error(&server.call("search_law", json!({"question": "x".repeat(100_000)})));
    assert_eq!(code, -32602);
    assert!(message.contains("more than the 4096 accepted"), "{message}");
    let (code, message) = error(&server.call(
        "get_section",
        json!({"law": "GG", "designation": "Art. 999"}),
    ));
    assert_eq!(code, -32602);
    assert!(
        message.contains("GG has no section \"Art. 999\""),
        "{message}"
    );
    let (code, _) = error(&server.call("get_section", json!({"law": "GG"})));
    assert_eq!(code, -32602);
    let (code, _) = error(&server.call("no_such_tool", json!({})));
    assert!(code == -32602 || code == -32601, "{code}");

    let again = server.call("get_section", json!({"law": "gg", "designation": "Art 1"}));
    assert_eq!(answer(&again), &cli, "still serving after errors");
}

/// `paragraf mcp` as a real client sees it: the official MCP TypeScript SDK (`tests/tools`, pinned) connects over
/// stdio, lists the five tools and calls each, bad arguments included, and reads sections and a table of contents
/// as resources; its answers are the CLI's JSON.
#[test]
fn the_official_typescript_sdk_client_uses_every_tool_and_resource() {
    let dir = crate::util::temp_dir();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tools/mcp_client.mjs");
    assert!(
        script
            .with_file_name("node_modules/@modelcontextprotocol/sdk")
            .exists(),
        "the MCP TypeScript SDK is not installed in tests/tools: scripts/setup.sh installs it"
    );
    let bundles = gg_bundles().display().to_string();
    let calls = json!([
        {"tool": "list_laws", "arguments": {}},
        {"tool": "search_law", "arguments": {"question": "Art. 5 GG", "k": 3, "mode": "bm25"}},
        {"tool": "get_section", "arguments": {"law": "GG", "designation": "Art. 5"}},
        {"tool": "resolve_citation", "arguments": {"citation": "Art. 5 Abs. 1 S. 2 GG"}},
        {"tool": "resolve_citation", "arguments": {"citation": "Art. 5 Abs. 9 GG"}},
        {"tool": "table_of_contents", "arguments": {"law": "GG"}},
        {"tool": "table_of_contents", "arguments": {"law": "XYZ"}},
        {"tool": "resolve_citation", "arguments": {"citation": "x".repeat(10 << 20)}},
        {"tool": "list_laws", "arguments": {}},
    ]);
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        json!({
            "command": env!("CARGO_BIN_EXE_paragraf"),
            "args": ["mcp", "--bundles", bundles, "--model", model_path()],
            "calls": calls,
            "read": [
                "paragraf://GG/Art. 5",
                "paragraf://GG/Art.%205",
                "paragraf://GG",
                "paragraf://GG/Art. 999",
                "paragraf://XYZ/§ 1",
                "https://example.org/GG",
            ],
        })
        .to_string(),
    )
    .unwrap();
    let out = std::process::Command::new("node")
        .arg(&script)
        .arg(&plan)
        .output()
        .expect("node (Node 20) runs the SDK client");
    assert!(
        out.status.success(),
        "the SDK client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"]["name"], "paragraf", "{report}");
    assert!(report["instructions"]
        .as_str()
        .unwrap()
        .contains("resolve_citation"));
    let mut names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "get_section",
            "list_laws",
            "resolve_citation",
            "search_law",
            "table_of_contents"
        ]
    );
    let results = report["results"].as_array().unwrap();
    let structured = |i: usize| {
        assert_eq!(results[i]["isError"], false, "{}", results[i]);
        results[i]["structured"].clone()
    };
    assert_eq!(structured(0)["laws"][0]["law"], "GG");
    assert_eq!(structured(1)["hits"][0]["designation"], "Art. 5");
    // The same JSON as `paragraf show --json` and `paragraf cite --json`.
    let show: Value = serde_json::from_str(&run_ok(&[
        "show",
        "GG",
        "Art. 5",
        "--bundles",
        &bundles,
        "--json",
    ]))
    .unwrap();
    assert_eq!(structured(2), show);
    let cited = structured(3);
    let cli: Value = serde_json::from_str(&run_ok(&[
        "cite",
        "Art. 5 Abs. 1 S. 2 GG",
        "--bundles",
        &bundles,
        "--json",
    ]))
    .unwrap();
    assert_eq!(cited, cli);
    let provision = &cited["provisions"][0];
    assert_eq!(provision["citation"], "Art. 5 Abs. 1 S. 2 GG");
    assert_eq!(
        provision["text"],
        "Die Pressefreiheit und die Freiheit der Berichterstattung durch Rundfunk und Film werden gewährleistet."
    );
    assert!(
        provision["url"].as_str().unwrap().ends_with("/art_5.html"),
        "{provision}"
    );
    // Refusals are JSON-RPC errors (invalid params, -32602) that say what exists; the server keeps serving.
    let refusal = |i: usize| {
        let error = &results[i]["error"];
        assert_eq!(error["code"], -32602, "{}", results[i]);
        error["message"].as_str().unwrap().to_owned()
    };
    assert!(
        refusal(4).contains("Art. 5 GG has no Abs. 9 (it has Abs. 1, 2, 3)"),
        "{}",
        refusal(4)
    );
    assert!(refusal(6).contains("no law \"XYZ\""), "{}", refusal(6));
    // 10 MiB of citation: over the message limit, answered -32600 with the request's id (the SDK writes it
    // last), not left waiting.
    assert_eq!(results[7]["error"]["code"], -32600, "{}", results[7]);
    let huge = results[7]["error"]["message"].as_str().unwrap();
    assert!(
        huge.contains("request of more than 8 MiB refused"),
        "{huge}"
    );
    let contents = structured(5);
    let sections: Vec<&str> = contents["units"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|u| u["sections"].as_array().unwrap())
        .map(|s| s["designation"].as_str().unwrap())
        .collect();
    assert!(
        sections.contains(&"Art. 5") && sections.contains(&"Art. 116"),
        "{sections:?}"
    );
    assert_eq!(
        structured(8),
        structured(0),
        "still serving after the refusals"
    );

    // Resources: one per law (its table of contents), templates for sections and laws; a section read is
    // `paragraf show --json`, a law `paragraf contents --json`; names that resolve to nothing are -32002.
    assert_eq!(report["resources"][0]["uri"], "paragraf://GG", "{report}");
    assert_eq!(report["resources"][0]["mimeType"], "application/json");
    let templates: Vec<&str> = report["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        ["paragraf://{law}/{designation}", "paragraf://{law}"]
    );
    let reads = report["reads"].as_array().unwrap();
    let read = |i: usize| -> Value {
        let contents = &reads[i]["contents"][0];
        assert_eq!(contents["mimeType"], "application/json", "{}", reads[i]);
        serde_json::from_str(contents["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(read(0), show);
    assert_eq!(read(1), show, "percent-encoded URIs name the same section");
    let cli_contents: Value = serde_json::from_str(&run_ok(&[
        "contents",
        "GG",
        "--bundles",
        &bundles,
        "--json",
    ]))
    .unwrap();
    assert_eq!(read(2), cli_contents);
    let not_found = |i: usize| {
        let error = &reads[i]["error"];
        assert_eq!(error["code"], -32002, "{}", reads[i]);
        error["message"].as_str().unwrap().to_owned()
    };
    assert!(
        not_found(3).contains("GG has no section \"Art. 999\""),
        "{}",
        not_found(3)
    );
    assert!(not_found(4).contains("no law \"XYZ\""), "{}", not_found(4));
    assert!(
        not_found(5).contains("not a paragraf:// URI"),
        "{}",
        not_found(5)
    );
}
