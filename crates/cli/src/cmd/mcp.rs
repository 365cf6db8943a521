//! `paragraf mcp`: a Model Context Protocol server over stdio (official Rust SDK, `rmcp`), so AI assistants can
//! search the same bundles with the same engine as the app: `search_law`, `get_section` (with the definitions
//! a section uses), `resolve_citation` (down to Absatz and Satz), `table_of_contents`, `list_laws`; and the law
//! as MCP resources: `paragraf://BGB` (a law's table of contents) and `paragraf://BGB/§ 551` (one section), so a
//! client can attach a section to a conversation without a tool call.
//!
//! Answers are the JSON of [`paragraf_core::results`] — exactly what `paragraf search --json` and `paragraf show
//! --json` print — as structured content plus the same JSON as text for clients that read only text. Bundles and
//! the model load on the first call that needs them and stay loaded. Arguments the server cannot use (unknown
//! law, empty question, k out of range, wrong types) are JSON-RPC `invalid_params` errors naming what exists;
//! broken data is an `internal_error`; either way the server keeps serving. Log lines go to stderr, never stdout
//! (stdout is the protocol).

use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use rmcp::handler::server::common::schema_for_type;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ErrorCode, Implementation, JsonObject, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt,
};
use serde::Deserialize;

use super::library::{ExpansionChoice, Library};
use super::refusal;
use super::search::Source;

#[derive(Args)]
pub struct McpArgs {
    #[command(flatten)]
    source: Source,
    /// Strategy bundle `search_law` uses for dense search.
    #[arg(long, default_value = "section")]
    strategy: String,
}

/// Ranking of `search_law`.
#[derive(Clone, Copy, Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(rename_all = "lowercase")]
enum ModeParam {
    /// BM25 + dense vectors, fused (best in general).
    #[default]
    Hybrid,
    /// Dense vectors only (paraphrases, lay wording).
    Dense,
    /// BM25 only (exact legal terms).
    Bm25,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
struct SearchLawParams {
    /// The legal question in plain German (best) or English, or a citation such as "§ 551 BGB" / "Art. 1 GG".
    /// Die Rechtsfrage in normalem Deutsch oder ein Zitat wie „§ 551 BGB“.
    question: String,
    /// Law abbreviations to search, e.g. ["BGB"]; omit to search every law (see list_laws).
    /// Gesetzeskürzel, z. B. ["BGB"]; weglassen = alle Gesetze.
    #[serde(default)]
    laws: Vec<String>,
    /// Number of sections to return (1–50, default 10).
    #[serde(default = "default_k")]
    k: usize,
    /// Ranking: hybrid (default), dense or bm25.
    #[serde(default)]
    mode: ModeParam,
}

fn default_k() -> usize {
    10
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
struct GetSectionParams {
    /// Law abbreviation, e.g. "BGB" (Gesetzeskürzel).
    law: String,
    /// The section as cited: "§ 535", "535", "Art. 1" (Paragraf oder Artikel).
    designation: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
struct ListLawsParams {}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
struct ResolveCitationParams {
    /// The citation as a lawyer writes it: "§ 433 Abs. 1 S. 2 BGB", "Art. 20a GG", "§§ 535 bis 548 BGB".
    /// Ein Zitat wie „§ 433 Abs. 1 S. 2 BGB“.
    citation: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
#[serde(deny_unknown_fields)]
struct TableOfContentsParams {
    /// Law abbreviation, e.g. "BGB" (Gesetzeskürzel).
    law: String,
}

/// The server: the bundle library and the tools.
#[derive(Clone)]
pub struct Paragraf {
    library: Arc<Library>,
    strategy: String,
    tool_router: ToolRouter<Self>,
}

/// A failed call as a JSON-RPC error: refusals are the caller's to fix (`invalid_params`).
fn to_error(e: anyhow::Error) -> ErrorData {
    let message = format!("{e:#}");
    if refusal::is_refusal(&e) {
        ErrorData::invalid_params(message, None)
    } else {
        ErrorData::internal_error(message, None)
    }
}

/// The arguments of a call as `T`. rmcp reports arguments that do not deserialise as a tool result with
/// `isError`; this server promises a JSON-RPC `invalid_params` error instead, so tools take the raw object (their
/// schema still comes from `T`) and parse it here.
fn arguments<T: serde::de::DeserializeOwned>(raw: JsonObject) -> Result<T, ErrorData> {
    serde_json::from_value(serde_json::Value::Object(raw))
        .map_err(|e| ErrorData::invalid_params(format!("bad arguments: {e}"), None))
}

/// `value` as the tool's answer. Serialised to text first, so scores print as `paragraf search --json` prints them
/// (the shortest f32 form, not the f32 widened to f64 that `serde_json::to_value` would give).
fn structured<T: serde::Serialize>(value: &T) -> Result<CallToolResult, ErrorData> {
    let value = serde_json::to_string(value)
        .and_then(|text| serde_json::from_str(&text))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::structured(value))
}

impl Paragraf {
    /// Runs blocking work (loading, encoding, searching) off the protocol's threads.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Library) -> Result<T> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let library = self.library.clone();
        tokio::task::spawn_blocking(move || work(&library))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .map_err(to_error)
    }
}

#[tool_router]
impl Paragraf {
    pub fn new(library: Library, strategy: String) -> Self {
        Paragraf {
            library: Arc::new(library),
            strategy,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "search_law",
        description = "Search German federal statutes (e.g. BGB, StGB, GG) for the sections that answer a legal question. \
Returns the best sections (Paragraphen/Artikel), each with designation, title, breadcrumb, a text excerpt with the \
matching passage, the sections it cites, and the official link on gesetze-im-internet.de. Ask in plain German for \
best results; a citation such as \"§ 551 BGB\" returns that section first. Use get_section to read a hit in full \
before relying on it; cite the designation and link in your answer. \
/ Durchsucht deutsche Bundesgesetze nach den Vorschriften, die eine Rechtsfrage beantworten: liefert die besten \
Paragraphen mit Auszug, Verweisen und amtlichem Link. Frage in normalem Deutsch stellen; ein Zitat wie „§ 551 BGB“ \
liefert diese Vorschrift zuerst. Treffer mit get_section vollständig lesen.",
        input_schema = schema_for_type::<SearchLawParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search_law(
        &self,
        Parameters(raw): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let p: SearchLawParams = arguments(raw)?;
        let strategy = self.strategy.clone();
        let mode = match p.mode {
            ModeParam::Hybrid => paragraf_engine::Mode::Hybrid,
            ModeParam::Dense => paragraf_engine::Mode::Dense,
            ModeParam::Bm25 => paragraf_engine::Mode::Bm25,
        };
        let results = self
            .blocking(move |lib| {
                lib.search(
                    &p.question,
                    &p.laws,
                    &strategy,
                    mode,
                    p.k,
                    &ExpansionChoice::default(),
                )
            })
            .await?;
        structured(&results)
    }

    #[tool(
        name = "get_section",
        description = "Read one section of a German statute in full: every Absatz with its numbered sentences, \
footnotes, the provisions it cites (same law and other laws), the sections that cite it (of the same law, and \
of the folder's other laws when it has several: the first such call reads them all), the statutory definitions of other sections whose terms it uses (term, defining section, defining sentence), and the \
official link. Use it to verify a search_law hit or when the user names a provision (\"§ 535 BGB\" -> law \"BGB\", \
designation \"§ 535\"). / Liest eine Vorschrift vollständig: Absätze mit Sätzen, Verweise in beide Richtungen, \
amtlicher Link.",
        input_schema = schema_for_type::<GetSectionParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_section(
        &self,
        Parameters(raw): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let p: GetSectionParams = arguments(raw)?;
        let section = self
            .blocking(move |lib| lib.section(&p.law, &p.designation))
            .await?;
        structured(&section)
    }

    #[tool(
        name = "resolve_citation",
        description = "Resolve a citation of German federal law to exactly the text it names: \"§ 433 Abs. 1 S. 2 BGB\" gives that sentence, \
\"§ 551 Abs. 1 BGB\" that Absatz, \"Art. 20a GG\" the article, \"§§ 535 bis 548 BGB\" each section of the range; with \
the canonical citation, heading, path in the law, the law's Stand and the official link. A citation that names nothing \
(no such section, Absatz or Satz) is an error saying what exists. Use it to check a citation before relying on it. \
/ Löst ein Zitat bis auf Absatz und Satz auf und nennt Fundstelle, Stand und amtlichen Link; ein falsches Zitat wird \
mit dem, was es gibt, zurückgewiesen.",
        input_schema = schema_for_type::<ResolveCitationParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn resolve_citation(
        &self,
        Parameters(raw): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let p: ResolveCitationParams = arguments(raw)?;
        let resolved = self.blocking(move |lib| lib.resolve(&p.citation)).await?;
        structured(&resolved)
    }

    #[tool(
        name = "table_of_contents",
        description = "A German statute's table of contents: its structure (Buch, Abschnitt, Titel …) in order, each unit with the \
sections directly under it (designation and heading). Use it to see where a provision stands or what a part of a law \
regulates. / Inhaltsübersicht eines Gesetzes: Gliederung mit den Paragraphen jeder Einheit.",
        input_schema = schema_for_type::<TableOfContentsParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn table_of_contents(
        &self,
        Parameters(raw): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let p: TableOfContentsParams = arguments(raw)?;
        let contents = self.blocking(move |lib| lib.contents(&p.law)).await?;
        structured(&contents)
    }

    #[tool(
        name = "list_laws",
        description = "List the German statutes available offline here: abbreviation, full title, version date, number of \
sections and search strategies. Call it first to know which laws search_law and get_section accept. / Listet die \
verfügbaren Gesetze (Kürzel, Titel, Stand, Zahl der Paragraphen).",
        input_schema = schema_for_type::<ListLawsParams>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_laws(
        &self,
        Parameters(raw): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        let _: ListLawsParams = arguments(raw)?;
        structured(&serde_json::json!({ "laws": self.library.summaries() }))
    }
}

/// The scheme of the server's resources: `paragraf://<law>` and `paragraf://<law>/<designation>`.
pub const RESOURCE_SCHEME: &str = "paragraf://";

/// Laws per page of `resources/list` (a folder of all federal law holds 6,877).
const RESOURCES_PER_PAGE: usize = 500;

/// What a resource URI names: a law (its table of contents) or one of its sections.
#[derive(Debug, PartialEq)]
enum ResourceName {
    Law(String),
    Section { law: String, designation: String },
}

/// A resource URI read: `paragraf://BGB/§ 551`, percent-encoded or not (`paragraf://BGB/%C2%A7%20551`, `paragraf://StVO%202013`).
fn resource_name(uri: &str) -> Result<ResourceName, ErrorData> {
    let not_found = |why: &str| {
        ErrorData::resource_not_found(
            format!(
                "{}: {why}; resources are `{RESOURCE_SCHEME}<law>` (its table of contents) and `{RESOURCE_SCHEME}<law>/<section>`, e.g. `{RESOURCE_SCHEME}BGB/§ 551`",
                paragraf_format::names::echo(uri)
            ),
            None,
        )
    };
    let rest = uri
        .strip_prefix(RESOURCE_SCHEME)
        .ok_or_else(|| not_found("not a paragraf:// URI"))?;
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .map_err(|_| not_found("its percent-encoding is not UTF-8"))?;
    let (law, designation) = match decoded.split_once('/') {
        Some((law, designation)) => (law.trim(), Some(designation.trim())),
        None => (decoded.trim(), None),
    };
    if law.is_empty() {
        return Err(not_found("it names no law"));
    }
    Ok(match designation {
        None | Some("") => ResourceName::Law(law.to_string()),
        Some(designation) => ResourceName::Section {
            law: law.to_string(),
            designation: designation.to_string(),
        },
    })
}

/// `value` as a resource's JSON contents.
fn json_contents<T: serde::Serialize>(
    uri: &str,
    value: &T,
) -> Result<ReadResourceResponse, ErrorData> {
    let text =
        serde_json::to_string(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("application/json")
    ])
    .into())
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Paragraf {
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let laws = self.library.summaries();
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|&at| at <= laws.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("unknown cursor {}", paragraf_format::names::echo(&cursor)),
                        None,
                    )
                })?,
        };
        let end = (start + RESOURCES_PER_PAGE).min(laws.len());
        let mut page = ListResourcesResult::with_all_items(
            laws[start..end]
                .iter()
                .map(|l| {
                    Resource::new(format!("{RESOURCE_SCHEME}{}", l.law), l.law.clone())
                        .with_title(l.title.clone())
                        .with_description(format!(
                            "Inhaltsübersicht / table of contents: {} sections, Stand {}",
                            l.sections, l.build_date
                        ))
                        .with_mime_type("application/json")
                })
                .collect(),
        );
        page.next_cursor = (end < laws.len()).then(|| end.to_string());
        Ok(page)
    }

    async fn list_resource_templates(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{RESOURCE_SCHEME}{{law}}/{{designation}}"), "section")
                .with_title("Vorschrift / section")
                .with_description(
                    "One section of a law in full, as get_section gives it: e.g. paragraf://BGB/§ 551, paragraf://GG/Art. 1",
                )
                .with_mime_type("application/json"),
            ResourceTemplate::new(format!("{RESOURCE_SCHEME}{{law}}"), "table_of_contents")
                .with_title("Inhaltsübersicht / table of contents")
                .with_description("A law's structure with its sections, as table_of_contents gives it")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        // A name that resolves to nothing is "resource not found" (-32002), as the protocol asks.
        let not_found = |e: ErrorData| {
            if e.code == ErrorCode::INVALID_PARAMS {
                ErrorData::resource_not_found(e.message, None)
            } else {
                e
            }
        };
        match resource_name(&uri)? {
            ResourceName::Law(law) => {
                let contents = self
                    .blocking(move |lib| lib.contents(&law))
                    .await
                    .map_err(not_found)?;
                json_contents(&uri, &contents)
            }
            ResourceName::Section { law, designation } => {
                let section = self
                    .blocking(move |lib| lib.section(&law, &designation))
                    .await
                    .map_err(not_found)?;
                json_contents(&uri, &section)
            }
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
            .with_server_info(Implementation::new("paragraf", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Offline search over German federal law (Bundesrecht) with the Paragraf engine: call list_laws, then \
search_law with the user's question in German, then get_section to read the sections you rely on; resolve_citation \
checks a citation down to Absatz and Satz, table_of_contents shows a law's structure. Sections are also resources \
(paragraf://BGB/§ 551) and laws too (paragraf://BGB, the table of contents). Always cite the \
designation (e.g. § 535 BGB) and the official link. This is the statute text only, not legal advice or case law. \
/ Offline-Suche im Bundesrecht: list_laws, dann search_law, dann get_section; immer Paragraf und amtlichen Link nennen.",
            )
    }
}

pub fn run(args: McpArgs) -> Result<()> {
    let library = args.source.open()?;
    // Refuse a strategy the folder lacks now, not on the first call.
    for law in &library.manifest().laws {
        library.bundle_entry(&law.law, &args.strategy)?;
    }
    eprintln!(
        "paragraf mcp: serving {} law(s) from {} over stdio",
        library.manifest().laws.len(),
        args.source.dir.bundles.display()
    );
    let server = Paragraf::new(library, args.strategy);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(async move {
            let (requests, responses) = gate::stdio();
            let service = server.serve((requests, responses)).await?;
            service.waiting().await?;
            anyhow::Ok(())
        })
}

/// Most bytes of one JSON-RPC message (one line on stdin).
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// The server's stdio behind a size gate. The SDK's transport drops a line over its own limit (16 MiB) without
/// an answer, and the client waits forever for it; here a line over [`MAX_MESSAGE_BYTES`] is discarded as it
/// streams in (never held) and answered with a JSON-RPC error naming the limit, written between the server's own
/// messages, never inside one. Its `id` is the message's: read from its first bytes when the id comes before the
/// params, else from its last bytes (the TypeScript SDK writes the id last).
mod gate {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
    use tokio::sync::mpsc;

    use super::MAX_MESSAGE_BYTES;

    /// The ends the SDK reads requests from and writes responses to.
    pub fn stdio() -> (DuplexStream, DuplexStream) {
        let (requests, mut to_server) = tokio::io::duplex(1 << 16);
        let (responses, from_server) = tokio::io::duplex(1 << 16);
        let (refusals, mut refused) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            let mut stdin = BufReader::new(tokio::io::stdin());
            let mut line = Vec::new();
            loop {
                match read_line(&mut stdin, &mut line).await {
                    Ok(Line::Whole) => {
                        if to_server.write_all(&line).await.is_err() {
                            return;
                        }
                    }
                    Ok(Line::Oversized(id)) => {
                        let _ = refusals.send(refusal(&id));
                    }
                    Ok(Line::End) | Err(_) => return,
                }
            }
        });
        tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            let mut from_server = BufReader::new(from_server);
            // A server message may arrive in parts (`read_until` keeps what it read when the other branch
            // wins): refusals wait until no message is half written.
            let mut message = Vec::new();
            let mut waiting: Vec<String> = Vec::new();
            loop {
                let out: Vec<u8> = tokio::select! {
                    read = from_server.read_until(b'\n', &mut message) => {
                        if !matches!(read, Ok(n) if n > 0) {
                            return;
                        }
                        let mut out = std::mem::take(&mut message);
                        for refusal in waiting.drain(..) {
                            out.extend_from_slice(refusal.as_bytes());
                        }
                        out
                    }
                    Some(refusal) = refused.recv() => {
                        if !message.is_empty() {
                            waiting.push(refusal);
                            continue;
                        }
                        refusal.into_bytes()
                    }
                };
                if stdout.write_all(&out).await.is_err() || stdout.flush().await.is_err() {
                    return;
                }
            }
        });
        (requests, responses)
    }

    enum Line {
        /// A whole line (with its newline) is in the buffer.
        Whole,
        /// A line over the limit was discarded; its `id` (JSON), if its first or last bytes show one.
        Oversized(Option<String>),
        End,
    }

    /// Reads one line into `line` without holding more than [`MAX_MESSAGE_BYTES`] of it.
    async fn read_line(
        input: &mut BufReader<tokio::io::Stdin>,
        line: &mut Vec<u8>,
    ) -> std::io::Result<Line> {
        line.clear();
        // Once over the limit: the id its first bytes showed, and its last bytes (`line` holds those then).
        let mut oversized: Option<Option<String>> = None;
        let finish = |oversized: Option<Option<String>>, tail: &[u8]| {
            oversized.map(|head| Line::Oversized(head.or_else(|| last_id(tail))))
        };
        loop {
            let available = input.fill_buf().await?;
            if available.is_empty() {
                return Ok(match finish(oversized, line) {
                    Some(refused) => refused,
                    None if line.is_empty() => Line::End,
                    None => {
                        line.push(b'\n');
                        Line::Whole
                    }
                });
            }
            let end = available.iter().position(|&b| b == b'\n');
            let take = end.map_or(available.len(), |i| i + 1);
            line.extend_from_slice(&available[..take]);
            match &oversized {
                None if line.len() > MAX_MESSAGE_BYTES + 1 => {
                    oversized = Some(first_id(line));
                    keep_tail(line);
                    line.shrink_to(2 * TAIL_BYTES);
                }
                Some(_) => keep_tail(line),
                None => {}
            }
            input.consume(take);
            if end.is_some() {
                return Ok(finish(oversized, line).unwrap_or(Line::Whole));
            }
        }
    }

    /// Bytes of a discarded message's end kept to find its id.
    const TAIL_BYTES: usize = 4096;

    fn keep_tail(line: &mut Vec<u8>) {
        let cut = line.len().saturating_sub(TAIL_BYTES);
        line.drain(..cut);
    }

    /// The `id` of a JSON-RPC message from its first bytes, when it comes before the params (an `id` after them
    /// could be one of the params').
    fn first_id(start: &[u8]) -> Option<String> {
        let head = String::from_utf8_lossy(&start[..start.len().min(TAIL_BYTES)]);
        let at = head.find("\"id\"")?;
        if head.find("\"params\"").is_some_and(|params| params < at) {
            return None;
        }
        id_value(&head[at + 4..]).map(|(id, _)| id)
    }

    /// The `id` of a JSON-RPC message from its last bytes, when it is the message's last member.
    fn last_id(end: &[u8]) -> Option<String> {
        let tail = String::from_utf8_lossy(end);
        let at = tail.rfind("\"id\"")?;
        let (id, rest) = id_value(&tail[at + 4..])?;
        rest.trim()
            .trim_end_matches('\n')
            .chars()
            .all(|c| c == '}' || c.is_whitespace())
            .then_some(id)
    }

    /// A number or a short string after `"id"` (`: 7`), as JSON, and what follows it.
    fn id_value(after_key: &str) -> Option<(String, &str)> {
        let after = after_key.trim_start().strip_prefix(':')?.trim_start();
        if let Some(text) = after.strip_prefix('"') {
            let (text, rest) = text.split_once('"')?;
            if text.len() > 128 || text.contains('\\') {
                return None;
            }
            return Some((format!("\"{text}\""), rest));
        }
        let len = after
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len());
        (len > 0).then(|| (after[..len].to_string(), &after[len..]))
    }

    /// The JSON-RPC error line for an oversized request.
    fn refusal(id: &Option<String>) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32600,\"message\":\"request of more than {} MiB refused: one message may have at most {MAX_MESSAGE_BYTES} bytes\"}}}}\n",
            id.as_deref().unwrap_or("null"),
            MAX_MESSAGE_BYTES >> 20
        )
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn ids_are_read_from_the_first_or_last_bytes() {
            assert_eq!(
                super::first_id(br#"{"jsonrpc":"2.0","id":42,"method""#),
                Some("42".into())
            );
            assert_eq!(
                super::first_id(br#"{"id": "a-1", "x"#),
                Some("\"a-1\"".into())
            );
            assert_eq!(
                super::first_id(br#"{"method":"tools/call","params":{"id":3,"#),
                None,
                "an id inside the params is not the message's"
            );
            // The TypeScript SDK writes the id last.
            assert_eq!(
                super::last_id(b"xxxx\"}},\"jsonrpc\":\"2.0\",\"id\":7}\n"),
                Some("7".into())
            );
            assert_eq!(
                super::last_id(br#"xx","id":3,"more":"x"}}"#),
                None,
                "not the last member"
            );
            assert_eq!(
                super::refusal(&Some("7".into())),
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":\"request of more than 8 MiB refused: one message may have at most 8388608 bytes\"}}\n"
            );
        }
    }
}
