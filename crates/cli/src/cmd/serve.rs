//! `paragraf serve`: the built app, a bundle folder and the query-embedding endpoints on one origin.
//!
//! One process and one origin: nothing to set up for CORS, and the app finds the endpoints itself (the served
//! `index.html` names this origin as its proxy). The static side — content types, compression, caching, ranges,
//! path checks — is `paragraf_proxy::site`; the endpoints keep every limit of `paragraf proxy`.
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use paragraf_embed::choice::ModelChoice;
use paragraf_proxy::site::SiteConfig;

use super::proxy::{load_models, run_server, EndpointArgs};
use super::refusal::Refusal;

/// The default address: loopback, the port `scripts/main.sh` has always used.
const DEFAULT_BIND: &str = "127.0.0.1:8080";

#[derive(Args)]
pub struct ServeArgs {
    /// The built app (`scripts/web_build.sh` writes it to dist/).
    #[arg(default_value = "dist")]
    site: PathBuf,
    /// The bundle folder, served at /bundles/ (where the app looks by default). Without it, a `bundles` folder
    /// inside the app's folder is served like the rest of it.
    #[arg(long, env = "PARAGRAF_SERVE_BUNDLES")]
    bundles: Option<PathBuf>,
    /// Address to listen on; loopback by default (put a TLS-terminating reverse proxy in front for public use).
    #[arg(long, env = "PARAGRAF_SERVE_BIND", default_value = DEFAULT_BIND)]
    bind: SocketAddr,
    /// Serve the app and the bundles only, without query embeddings: the app then searches with its in-browser
    /// encoder (e5 bundles) or BM25. Default: the endpoints serve --model, else the bundles' model.
    #[arg(long, conflicts_with = "model")]
    no_proxy: bool,
    /// Megabytes of compressed files kept in memory.
    #[arg(long, env = "PARAGRAF_SERVE_CACHE_MB", default_value_t = 256)]
    compressed_cache_mb: usize,
    #[command(flatten)]
    endpoints: EndpointArgs,
}

pub fn run(args: ServeArgs) -> Result<()> {
    let explicit_models = !args.endpoints.models().is_empty();
    let (mut config, mut choices) = args.endpoints.config(args.bind)?;
    let bundles = args
        .bundles
        .as_deref()
        .map(paragraf_bundler::manifest::load_or_new)
        .transpose()
        .map_err(|e| Refusal(format!("{e}. Rebuild the folder with `paragraf build`")))?;
    let bundle_models: Vec<String> = bundles.iter().flat_map(|m| m.models()).collect();
    if args.no_proxy {
        choices.clear();
    } else if !explicit_models {
        // The bundles' own models, so that dense search works without naming one; none: BM25 bundles.
        choices = bundle_models
            .iter()
            .map(|id| {
                ModelChoice::from_model_id(id).ok_or_else(|| {
                    Refusal(format!(
                        "the bundles were built with {id}, which this build cannot serve. Name a model with --model, or serve without one (--no-proxy)"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        if bundles.is_none() && choices.is_empty() {
            choices.push(ModelChoice::default());
        }
    }
    let (backends, models) = if choices.is_empty() {
        (Vec::new(), String::new())
    } else {
        load_models(&choices)?
    };
    config.site = Some(SiteConfig {
        root: args.site.clone(),
        bundles: args.bundles.clone(),
        compressed_cache_bytes: args.compressed_cache_mb << 20,
    });
    let data = match (&args.bundles, &bundles) {
        (Some(dir), Some(manifest)) => {
            let laws = match manifest.laws.len() {
                1 => "1 law".to_owned(),
                n => format!("{n} laws"),
            };
            format!(
                "bundles {} at /bundles/ ({laws}, {} strategy bundles)",
                dir.display(),
                manifest.bundles.len()
            )
        }
        _ => format!("bundles from {}/bundles", args.site.display()),
    };
    let endpoints = if backends.is_empty() {
        let why = if args.no_proxy {
            "--no-proxy"
        } else {
            "the bundles have no vectors"
        };
        format!("no query embeddings ({why}): the app searches with its in-browser encoder or BM25")
    } else {
        format!("query embeddings at /v1/embed with {models}")
    };
    let site = args.site.display().to_string();
    run_server(config, backends, |addr| {
        format!("paragraf serve: app {site} at /, {data}, {endpoints}; open http://{addr}/")
    })
}
