//! `paragraf mcp`: a Model Context Protocol server over stdio (official Rust SDK, `rmcp`), so AI assistants can
//! search the same bundles with the same engine as the app: `search_law`, `get_section`, `list_laws`.
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
use rmcp::model::{CallToolResult, Implementation, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde::Deserialize;

use super::library::{self, ExpansionChoice, Library};
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
    if library::is_refusal(&e) {
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
            ModeParam::Hybrid => paragraf_core::engine::Mode::Hybrid,
            ModeParam::Dense => paragraf_core::engine::Mode::Dense,
            ModeParam::Bm25 => paragraf_core::engine::Mode::Bm25,
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
footnotes, the provisions it cites (same law and other laws), the sections of the same law that cite it, and the \
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

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Paragraf {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("paragraf", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Offline search over German federal law (Bundesrecht) with the Paragraf engine: call list_laws, then \
search_law with the user's question in German, then get_section to read the sections you rely on. Always cite the \
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
        args.source.bundles.display()
    );
    let server = Paragraf::new(library, args.strategy);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(async move {
            let service = server.serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
            anyhow::Ok(())
        })
}
