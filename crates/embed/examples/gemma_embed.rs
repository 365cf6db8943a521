//! Embeds JSON lines `{"text", "kind": "query" | "document"}` with the Rust EmbeddingGemma encoder and writes
//! `{"ids", "vector"}` lines, for tests/parity/gemma_parity.py; prints tokens/s on stderr.
//!
//! cargo run --release -p paragraf-embed --example gemma_embed -- MODEL_DIR IN.jsonl OUT.jsonl

use std::io::{BufRead, Write};
use std::time::Instant;

use paragraf_embed::gemma::GemmaEncoder;
use paragraf_embed::TextKind;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, input, output] = &args[..] else {
        return Err("usage: gemma_embed MODEL_DIR IN.jsonl OUT.jsonl".into());
    };
    let t0 = Instant::now();
    let encoder = GemmaEncoder::load(std::path::Path::new(dir))?;
    eprintln!("loaded in {:.1} s", t0.elapsed().as_secs_f64());
    let mut inputs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(input)?).lines() {
        let item: serde_json::Value = serde_json::from_str(&line?)?;
        let kind = match item["kind"].as_str() {
            Some("query") => TextKind::Query,
            _ => TextKind::Passage,
        };
        inputs.push(encoder.input_ids(item["text"].as_str().unwrap_or_default(), kind));
    }
    let t0 = Instant::now();
    let vectors = encoder.embed_ids(&inputs);
    let secs = t0.elapsed().as_secs_f64();
    let tokens: usize = inputs.iter().map(Vec::len).sum();
    eprintln!(
        "{} texts, {tokens} tokens in {secs:.2} s = {:.0} tokens/s ({} threads)",
        inputs.len(),
        tokens as f64 / secs,
        rayon::current_num_threads()
    );
    let mut out = std::io::BufWriter::new(std::fs::File::create(output)?);
    for (ids, v) in inputs.iter().zip(vectors) {
        writeln!(out, "{}", serde_json::json!({ "ids": ids, "vector": v }))?;
    }
    Ok(())
}
