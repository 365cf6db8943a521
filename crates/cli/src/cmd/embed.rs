//! `paragraf embed`: embed text with the local e5 encoder, as a quick check (vector summary) or in bulk
//! (`--batch FILE`, one text per line, JSON lines out), which the parity test and benchmark use.
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use paragraf_embed::cache::CachedBackend;
use paragraf_embed::e5::{E5Encoder, LongTextPolicy};
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
    /// Texts over 510 tokens: average 510-token windows (reference behaviour) or keep the first 510 tokens.
    #[arg(long, value_enum, default_value_t = Policy::WindowAverage)]
    long_text: Policy,
    /// Model file (default: $PARAGRAF_MODEL, else the cache filled by `paragraf model fetch`).
    #[arg(long)]
    model: Option<PathBuf>,
    /// With --batch: keep vectors in the embedding cache ($PARAGRAF_CACHE_DIR/embeddings, else
    /// ~/.cache/paragraf/embeddings) and embed only texts not cached yet.
    #[arg(long, requires = "batch")]
    cache: bool,
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
        bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
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
    let path = model::resolve_model_path(args.model.as_deref())?;
    if let Some(batch) = &args.batch {
        let input = read_input(batch)?;
        let texts: Vec<&str> = input.lines().collect();
        let encoder = E5Encoder::load(&path)?.with_policy(policy);
        let cache = args
            .cache_dir
            .or_else(|| args.cache.then(|| model::cache_root().join("embeddings")));
        return embed_batch(&encoder, &texts, kind, args.json, cache);
    }
    let text = match args.text.as_deref() {
        Some("-") => read_input(std::path::Path::new("-"))?,
        Some(t) => t.to_string(),
        None => unreachable!("clap requires TEXT without --batch"),
    };
    if text.trim().is_empty() {
        bail!("the text is empty: nothing to embed");
    }
    let encoder = E5Encoder::load(&path)?.with_policy(policy);
    let ids = encoder.content_ids(&text, kind);
    let v = encoder.embed(&[&text], kind)?.remove(0);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let windows = ids.len().div_ceil(encoder.window_tokens()).max(1);
    if args.json {
        let out = serde_json::json!({
            "model": encoder.model_id(), "kind": kind, "dim": v.len(), "norm": norm,
            "tokens": ids.len() + 2, "windows": windows, "vector": v,
        });
        println!("{out}");
    } else {
        println!("model   {}", encoder.model_id());
        println!(
            "tokens  {} ({} window{}, prefix `{}` included)",
            ids.len() + 2,
            windows,
            if windows == 1 { "" } else { "s" },
            kind.prefix()
        );
        println!("dim     {}", v.len());
        println!("norm    {norm:.6}");
        let head: Vec<String> = v.iter().take(8).map(|x| format!("{x:+.5}")).collect();
        println!("vector  [{} …]", head.join(", "));
    }
    Ok(())
}

fn embed_batch(
    encoder: &E5Encoder,
    texts: &[&str],
    kind: TextKind,
    json: bool,
    cache: Option<PathBuf>,
) -> anyhow::Result<()> {
    let cached = cache
        .map(|root| CachedBackend::open(encoder, &root))
        .transpose()?;
    let backend: &dyn EmbeddingBackend = match &cached {
        Some(c) => c,
        None => encoder,
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
        let ids: Vec<Vec<u32>> = chunk.iter().map(|t| encoder.content_ids(t, kind)).collect();
        tokens += ids.iter().map(|i| i.len() + 2).sum::<usize>();
        hits += cached.as_ref().map_or(0, |c| c.hits(chunk, kind));
        let vectors = backend.embed(chunk, kind)?;
        for ((ids, v), text) in ids.iter().zip(&vectors).zip(chunk) {
            if json {
                let mut all = Vec::with_capacity(ids.len() + 2);
                all.push(encoder.tokenizer().bos());
                all.extend_from_slice(ids);
                all.push(encoder.tokenizer().eos());
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({ "tokens": all.len(), "ids": all, "vector": v })
                )?;
            } else {
                let head: Vec<String> = v.iter().take(4).map(|x| format!("{x:+.4}")).collect();
                let preview: String = text.chars().take(40).collect();
                writeln!(
                    out,
                    "{:>5} tokens [{} …] {preview}",
                    ids.len() + 2,
                    head.join(", ")
                )?;
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
    eprintln!(
        "embedded {} texts, {tokens} tokens in {secs:.2} s ({:.0} tokens/s){cache_note}",
        texts.len(),
        tokens as f64 / secs.max(1e-9)
    );
    Ok(())
}
