//! EmbeddingGemma-300m, our own implementation of the published architecture (Gemma 3 text encoder).
//!
//! Token embeddings (scaled by √768) → 24 layers, each `x += N(attn(N(x)))`, `x += N(mlp(N(x)))` with
//! RMSNorm `N(x) = x / rms(x) · (1 + w)` → final RMSNorm → mean pooling over all tokens (`<bos>`/`<eos>` included)
//! → two bias-free dense layers (768 → 3,072 → 768) → L2 normalisation; a Matryoshka prefix (512/256/128 dims) is
//! cut and renormalised. Attention is grouped-query (3 query heads share 1 key/value head of 256 dims) with RMSNorm
//! on queries and keys, rotary positions (θ 10,000 on the sliding layers, 1,000,000 on every sixth, full layer),
//! scale `query_pre_attn_scalar^-½`, and bidirectional: full layers see every token, sliding layers the tokens at a
//! distance below `sliding_window / 2 + 1` = 257 (how transformers configures a bidirectional Gemma 3). The MLP is
//! GeGLU with the tanh GELU.
//!
//! **Prompts** (model card): `task: search result | query: ` before questions, `title: none | text: ` before
//! statute units. **Long texts** are truncated to [`DEFAULT_MAX_TOKENS`] (the model's 2,048) including the specials.
//!
//! **Numerics.** The per-token matrix weights (attention projections and MLP, 101 M multiply-adds per token) are
//! quantised at load time to int8 with one scale per output row, activations per row before each product
//! (`quant.rs`: AVX-512 VNNI, AVX2 or portable, bit-identical); attention itself, norms, pooling and the two dense
//! layers (once per text) stay f32. The 262,144-row embedding table, which is only gathered from, is int8 with one
//! f32 scale per row too (805 MB → 201 MB). The parity test (`tests/parity/gemma_parity.sh`) compares with the
//! numpy reference `tests/parity/gemma_reference.py` (f32), which reproduces the model card's example
//! similarities within 1e-3.
//!
//! The weights are under the Gemma Terms of Use, not an open licence: they are fetched by `paragraf model fetch
//! embeddinggemma` ([`fetch`]) and never committed.

pub mod bpe;
pub mod fetch;
mod quant;
mod safetensors;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::{EmbedError, EmbeddingBackend, TextKind};
use bpe::Bpe;
use paragraf_e5::math::{attend, gelu_tanh_in_place, mean_rows, Linear};
use quant::{quantize_rows, QLinear};
use safetensors::SafeTensors;

/// Model id in bundles for full-size vectors; Matryoshka prefixes add `@<dims>` (e.g. `…@256`).
pub const MODEL_ID: &str = paragraf_format::models::GEMMA_MODEL_ID;
/// Prompt before questions.
pub const QUERY_PROMPT: &str = "task: search result | query: ";
/// Prompt before statute units (no title).
pub const DOCUMENT_PROMPT: &str = "title: none | text: ";

/// What goes into the document prompt's title (the model card: `title: {title | "none"} | text: ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DocumentTitle {
    /// `title: none` (the default).
    #[default]
    None,
    /// The unit's first line is its title (`title: § 535 Inhalt und Hauptpflichten des Mietvertrags | text:
    /// (1) ...`): right for `section` units, which begin with their heading line, and only for them.
    FirstLine,
}
/// Longest input in tokens, `<bos>` and `<eos>` included (the model's maximum).
pub const DEFAULT_MAX_TOKENS: usize = 2048;
/// Matryoshka sizes the model was trained for.
pub const DIMS: [usize; 4] = paragraf_format::models::GEMMA_DIMS;
/// Soft cap on tokens per forward pass (bounds the activation memory of large batches).
const CHUNK_TOKENS: usize = 8192;

/// The architecture this encoder implements, checked against `config.json`.
#[derive(serde::Deserialize)]
struct Config {
    architectures: Vec<String>,
    hidden_size: usize,
    intermediate_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    num_key_value_heads: usize,
    head_dim: usize,
    vocab_size: usize,
    rms_norm_eps: f32,
    rope_theta: f64,
    rope_local_base_freq: f64,
    sliding_window: usize,
    query_pre_attn_scalar: f64,
    layer_types: Vec<String>,
    hidden_activation: String,
    #[serde(default)]
    use_bidirectional_attention: bool,
}

struct Layer {
    /// Fused `[q (heads × hd) | k (hd) | v (hd)]`.
    qkv: QLinear,
    out: QLinear,
    /// Fused `[gate | up]`.
    gate_up: QLinear,
    down: QLinear,
    /// RMSNorm weights as `1 + w`.
    input_norm: Vec<f32>,
    post_attn_norm: Vec<f32>,
    pre_ffn_norm: Vec<f32>,
    post_ffn_norm: Vec<f32>,
    q_norm: Vec<f32>,
    k_norm: Vec<f32>,
    /// Full attention (and the global rotary base) or the sliding window.
    full: bool,
}

/// EmbeddingGemma-300m loaded from a release folder.
pub struct GemmaEncoder {
    tokenizer: Bpe,
    hidden: usize,
    heads: usize,
    head_dim: usize,
    ffn: usize,
    eps: f32,
    /// Sliding layers attend to tokens at a distance below this.
    radius: usize,
    /// Attention logit scale, `query_pre_attn_scalar^-½`.
    attn_scale: f32,
    /// int8 embedding rows and one scale per row.
    embed_q: Vec<i8>,
    embed_scale: Vec<f32>,
    layers: Vec<Layer>,
    final_norm: Vec<f32>,
    /// f32: the dense layers run once per text, not per token, so int8 would save nothing, and there it cost the
    /// most parity (72 parity texts: mean cosine 0.9971 with int8 dense layers, 0.9986 with f32).
    dense: [Linear; 2],
    /// cos/sin tables `[position][head_dim / 2]` for the local and global rotary bases.
    rope_local: (Vec<f32>, Vec<f32>),
    rope_global: (Vec<f32>, Vec<f32>),
    max_tokens: usize,
    title: DocumentTitle,
    dims: usize,
    model_id: String,
}

/// Largest `config.json` accepted (the release's has 1.6 KB).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The whole file at `path` when it is a regular file of at most `limit` bytes: checked from its metadata before
/// anything is read (a FIFO, a device or a sparse giant is refused by name), and the read itself bounded.
fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, EmbedError> {
    use std::io::Read;
    let read_error = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound => EmbedError::GemmaMissing {
            path: path.to_path_buf(),
        },
        _ => EmbedError::ModelRead {
            path: path.to_path_buf(),
            source,
        },
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_file() {
        return Err(invalid(path, "not a regular file"));
    }
    if meta.len() > limit {
        return Err(invalid(
            path,
            format!("{} bytes, more than the {limit} allowed", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(invalid(
            path,
            format!("more than the {limit} bytes allowed"),
        ));
    }
    Ok(bytes)
}

fn invalid(path: &Path, reason: impl Into<String>) -> EmbedError {
    EmbedError::ModelInvalid {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// A bias-free f32 layer.
fn f32_linear(w: Vec<f32>, n_out: usize, n_in: usize) -> Linear {
    Linear {
        w,
        b: vec![0.0; n_out],
        n_in,
        n_out,
    }
}

fn plus_one(w: Vec<f32>) -> Vec<f32> {
    w.into_iter().map(|v| 1.0 + v).collect()
}

fn rope_table(theta: f64, head_dim: usize, positions: usize) -> (Vec<f32>, Vec<f32>) {
    let half = head_dim / 2;
    let mut cos = Vec::with_capacity(positions * half);
    let mut sin = Vec::with_capacity(positions * half);
    for p in 0..positions {
        for i in 0..half {
            let inv = 1.0 / theta.powf((2 * i) as f64 / head_dim as f64);
            let angle = p as f64 * inv;
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    (cos, sin)
}

impl GemmaEncoder {
    /// Loads the release folder written by `paragraf model fetch embeddinggemma` (`config.json`, `tokenizer.json`,
    /// `model.safetensors`, `2_Dense/`, `3_Dense/`).
    pub fn load(dir: &Path) -> Result<GemmaEncoder, EmbedError> {
        let file = |name: &str| dir.join(name);
        let config_path = file("config.json");
        let cfg: Config = serde_json::from_slice(&read_bounded(&config_path, MAX_CONFIG_BYTES)?)
            .map_err(|e| invalid(&config_path, format!("not a Gemma 3 config ({e})")))?;
        let expected = cfg.architectures.iter().any(|a| a == "Gemma3TextModel")
            && cfg.hidden_activation == "gelu_pytorch_tanh"
            && cfg.use_bidirectional_attention
            && cfg.layer_types.len() == cfg.num_hidden_layers
            && cfg.num_key_value_heads >= 1
            && cfg
                .num_attention_heads
                .is_multiple_of(cfg.num_key_value_heads)
            && cfg.num_key_value_heads == 1
            && cfg.head_dim.is_multiple_of(2);
        if !expected {
            return Err(invalid(
                &config_path,
                format!(
                    "architecture {:?} ({} layers, {} kv heads, activation {}, bidirectional {}) is not the bidirectional Gemma 3 encoder this reader implements",
                    cfg.architectures, cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.hidden_activation, cfg.use_bidirectional_attention
                ),
            ));
        }
        let tokenizer_path = file("tokenizer.json");
        let tokenizer = Bpe::from_json(&read_bounded(
            &tokenizer_path,
            bpe::MAX_TOKENIZER_BYTES as u64,
        )?)
        .map_err(|e| invalid(&tokenizer_path, e))?;

        let (h, ff, hd, nh) = (
            cfg.hidden_size,
            cfg.intermediate_size,
            cfg.head_dim,
            cfg.num_attention_heads,
        );
        let weights_path = file("model.safetensors");
        let open = |path: &Path| {
            if !path.is_file() {
                return Err(EmbedError::GemmaMissing {
                    path: path.to_path_buf(),
                });
            }
            SafeTensors::open(path).map_err(|e| invalid(path, e))
        };
        let mut st = open(&weights_path)?;
        let mut tensor = |name: &str, shape: &[usize]| {
            st.f32(name, shape).map_err(|e| invalid(&weights_path, e))
        };
        let linear = |w: Vec<f32>, n_out: usize, n_in: usize| QLinear::new(&w, n_out, n_in);
        let embed = tensor("embed_tokens.weight", &[cfg.vocab_size, h])?;
        let (embed_q, embed_scale) = quantize_rows(&embed, h);
        drop(embed);
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for (l, kind) in cfg.layer_types.iter().enumerate() {
            let p = |s: &str| format!("layers.{l}.{s}");
            let mut qkv = tensor(&p("self_attn.q_proj.weight"), &[nh * hd, h])?;
            qkv.extend(tensor(&p("self_attn.k_proj.weight"), &[hd, h])?);
            qkv.extend(tensor(&p("self_attn.v_proj.weight"), &[hd, h])?);
            let mut gate_up = tensor(&p("mlp.gate_proj.weight"), &[ff, h])?;
            gate_up.extend(tensor(&p("mlp.up_proj.weight"), &[ff, h])?);
            layers.push(Layer {
                qkv: linear(qkv, nh * hd + 2 * hd, h),
                out: linear(
                    tensor(&p("self_attn.o_proj.weight"), &[h, nh * hd])?,
                    h,
                    nh * hd,
                ),
                gate_up: linear(gate_up, 2 * ff, h),
                down: linear(tensor(&p("mlp.down_proj.weight"), &[h, ff])?, h, ff),
                input_norm: plus_one(tensor(&p("input_layernorm.weight"), &[h])?),
                post_attn_norm: plus_one(tensor(&p("post_attention_layernorm.weight"), &[h])?),
                pre_ffn_norm: plus_one(tensor(&p("pre_feedforward_layernorm.weight"), &[h])?),
                post_ffn_norm: plus_one(tensor(&p("post_feedforward_layernorm.weight"), &[h])?),
                q_norm: plus_one(tensor(&p("self_attn.q_norm.weight"), &[hd])?),
                k_norm: plus_one(tensor(&p("self_attn.k_norm.weight"), &[hd])?),
                full: match kind.as_str() {
                    "full_attention" => true,
                    "sliding_attention" => false,
                    other => {
                        return Err(invalid(
                            &config_path,
                            format!("unknown layer type {other:?}"),
                        ))
                    }
                },
            });
        }
        let final_norm = plus_one(tensor("norm.weight", &[h])?);
        let dense_path = |i: usize| file(&format!("{i}_Dense/model.safetensors"));
        let mut d2 = open(&dense_path(2))?;
        let mut d3 = open(&dense_path(3))?;
        let w2 = d2
            .f32("linear.weight", &[4 * h, h])
            .map_err(|e| invalid(&dense_path(2), e))?;
        let w3 = d3
            .f32("linear.weight", &[h, 4 * h])
            .map_err(|e| invalid(&dense_path(3), e))?;
        let positions = DEFAULT_MAX_TOKENS;
        Ok(GemmaEncoder {
            tokenizer,
            hidden: h,
            heads: nh,
            head_dim: hd,
            ffn: ff,
            eps: cfg.rms_norm_eps,
            radius: cfg.sliding_window / 2 + 1,
            attn_scale: cfg.query_pre_attn_scalar.powf(-0.5) as f32,
            embed_q,
            embed_scale,
            layers,
            final_norm,
            dense: [f32_linear(w2, 4 * h, h), f32_linear(w3, h, 4 * h)],
            rope_local: rope_table(cfg.rope_local_base_freq, hd, positions),
            rope_global: rope_table(cfg.rope_theta, hd, positions),
            max_tokens: DEFAULT_MAX_TOKENS,
            title: DocumentTitle::None,
            dims: h,
            model_id: MODEL_ID.to_string(),
        })
    }

    /// Keeps the first `dims` components (Matryoshka: 768, 512, 256 or 128), renormalised.
    pub fn with_dims(mut self, dims: usize) -> Result<GemmaEncoder, EmbedError> {
        if !DIMS.contains(&dims) {
            return Err(EmbedError::UnsupportedDims { dims });
        }
        self.dims = dims;
        self.model_id = paragraf_format::models::gemma_model_id(dims);
        Ok(self)
    }

    /// What the document prompt's title holds.
    pub fn with_document_title(mut self, title: DocumentTitle) -> GemmaEncoder {
        self.title = title;
        self
    }

    /// Truncates inputs to `max_tokens` (specials included; at least 3, at most the model's 2,048).
    pub fn with_max_tokens(mut self, max_tokens: usize) -> GemmaEncoder {
        self.max_tokens = max_tokens.clamp(3, DEFAULT_MAX_TOKENS);
        self
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Bpe {
        &self.tokenizer
    }

    /// Token ids the model sees for `text` of `kind`: prompt, `<bos>`/`<eos>`, truncation.
    pub fn input_ids(&self, text: &str, kind: TextKind) -> Vec<u32> {
        let input = match (kind, self.title, text.split_once('\n')) {
            (TextKind::Query, _, _) => format!("{QUERY_PROMPT}{text}"),
            (TextKind::Passage, DocumentTitle::FirstLine, Some((title, rest)))
                if !title.trim().is_empty() =>
            {
                format!("title: {} | text: {rest}", title.trim())
            }
            (TextKind::Passage, _, _) => format!("{DOCUMENT_PROMPT}{text}"),
        };
        let mut ids = self.tokenizer.encode_with_specials(&input);
        if ids.len() > self.max_tokens {
            ids.truncate(self.max_tokens - 1);
            ids.push(self.tokenizer.eos());
        }
        ids
    }

    /// Embeds token sequences (as from [`GemmaEncoder::input_ids`]): normalised vectors of [`Self::dims`].
    pub fn embed_ids(&self, inputs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let mut out = Vec::with_capacity(inputs.len());
        let mut start = 0;
        while start < inputs.len() {
            let mut end = start;
            let mut tokens = 0;
            while end < inputs.len() && (end == start || tokens + inputs[end].len() <= CHUNK_TOKENS)
            {
                tokens += inputs[end].len();
                end += 1;
            }
            out.extend(self.forward(&inputs[start..end]));
            start = end;
        }
        out
    }

    /// Vector dimension produced.
    pub fn dims(&self) -> usize {
        self.dims
    }

    fn forward(&self, inputs: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let (h, hd, nh) = (self.hidden, self.head_dim, self.heads);
        let qkv_width = nh * hd + 2 * hd;
        let mut spans = Vec::with_capacity(inputs.len());
        let mut rows = Vec::new();
        for ids in inputs {
            spans.push((rows.len(), ids.len()));
            rows.extend(ids.iter().enumerate().map(|(p, &id)| (id as usize, p)));
        }
        let total = rows.len();
        let scale = (h as f32).sqrt();
        let mut x = vec![0f32; total * h];
        x.par_chunks_mut(h)
            .zip(rows.par_iter())
            .for_each(|(r, &(id, _))| {
                let s = self.embed_scale[id] * scale;
                for (v, &q) in r.iter_mut().zip(&self.embed_q[id * h..(id + 1) * h]) {
                    *v = f32::from(q) * s;
                }
            });
        let mut normed = vec![0f32; total * h];
        let mut qkv = vec![0f32; total * qkv_width];
        let mut ctx = vec![0f32; total * nh * hd];
        let mut tmp = vec![0f32; total * h];
        let mut gate_up = vec![0f32; total * 2 * self.ffn];
        let mut mid = vec![0f32; total * self.ffn];
        for layer in &self.layers {
            self.norm_into(&x, &layer.input_norm, &mut normed);
            layer.qkv.forward(&normed, &mut qkv);
            let rope = if layer.full {
                &self.rope_global
            } else {
                &self.rope_local
            };
            qkv.par_chunks_mut(qkv_width)
                .zip(rows.par_iter())
                .for_each(|(row, &(_, p))| {
                    for (i, head) in row.chunks_exact_mut(hd).enumerate() {
                        if i <= nh {
                            let w = if i < nh { &layer.q_norm } else { &layer.k_norm };
                            rms_norm(head, w, self.eps);
                            rotate(head, rope, p);
                        }
                    }
                });
            self.attention(&qkv, &spans, layer.full, &mut ctx);
            layer.out.forward(&ctx, &mut tmp);
            self.add_normed(&mut x, &mut tmp, &layer.post_attn_norm);
            self.norm_into(&x, &layer.pre_ffn_norm, &mut normed);
            layer.gate_up.forward(&normed, &mut gate_up);
            let ff = self.ffn;
            mid.par_chunks_mut(ff)
                .zip(gate_up.par_chunks(2 * ff))
                .for_each(|(m, gu)| {
                    m.copy_from_slice(&gu[..ff]);
                    gelu_tanh_in_place(m);
                    m.iter_mut().zip(&gu[ff..]).for_each(|(a, u)| *a *= u);
                });
            layer.down.forward(&mid, &mut tmp);
            self.add_normed(&mut x, &mut tmp, &layer.post_ffn_norm);
        }
        x.par_chunks_mut(h)
            .for_each(|r| rms_norm(r, &self.final_norm, self.eps));
        let pooled: Vec<f32> = mean_rows(&x, h, &spans).concat();
        let mut wide = vec![0f32; inputs.len() * 4 * h];
        self.dense[0].forward(&pooled, &mut wide);
        let mut projected = vec![0f32; inputs.len() * h];
        self.dense[1].forward(&wide, &mut projected);
        projected
            .chunks_exact(h)
            .map(|v| matryoshka(v, self.dims))
            .collect()
    }

    fn norm_into(&self, x: &[f32], w: &[f32], out: &mut [f32]) {
        out.copy_from_slice(x);
        out.par_chunks_mut(self.hidden)
            .for_each(|r| rms_norm(r, w, self.eps));
    }

    /// `x += N(y)` row by row.
    fn add_normed(&self, x: &mut [f32], y: &mut [f32], w: &[f32]) {
        x.par_chunks_mut(self.hidden)
            .zip(y.par_chunks_mut(self.hidden))
            .for_each(|(xr, yr)| {
                rms_norm(yr, w, self.eps);
                xr.iter_mut().zip(yr.iter()).for_each(|(a, b)| *a += b);
            });
    }

    /// Attention per (sequence, head); rows of `qkv` are `[q heads | k | v]` (normed and rotated).
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)], full: bool, ctx: &mut [f32]) {
        let (hd, nh) = (self.head_dim, self.heads);
        let width = nh * hd + 2 * hd;
        let scale = self.attn_scale;
        let tasks: Vec<(usize, usize, usize)> = spans
            .iter()
            .flat_map(|&(s, len)| (0..nh).map(move |head| (s, len, head)))
            .collect();
        let outs: Vec<Vec<f32>> = tasks
            .par_iter()
            .map(|&(s, len, head)| {
                let q = &qkv[s * width + head * hd..];
                let k = &qkv[s * width + nh * hd..];
                let v = &qkv[s * width + nh * hd + hd..];
                attend((q, k, v), len, hd, width, scale, |i, j| {
                    full || i.abs_diff(j) < self.radius
                })
            })
            .collect();
        let ctx_width = nh * hd;
        for (&(s, _, head), out) in tasks.iter().zip(&outs) {
            for (t, row) in out.chunks_exact(hd).enumerate() {
                let at = (s + t) * ctx_width + head * hd;
                ctx[at..at + hd].copy_from_slice(row);
            }
        }
    }
}

/// `x = x / rms(x) · w` (with `w` already `1 + weight`).
fn rms_norm(x: &mut [f32], w: &[f32], eps: f32) {
    let mean = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let inv = 1.0 / (mean + eps).sqrt();
    x.iter_mut().zip(w).for_each(|(v, w)| *v *= inv * w);
}

/// Rotary position embedding of one head vector at `position` (halves rotated, as Gemma's `rotate_half`).
fn rotate(x: &mut [f32], (cos, sin): &(Vec<f32>, Vec<f32>), position: usize) {
    let half = x.len() / 2;
    let (c, s) = (
        &cos[position * half..][..half],
        &sin[position * half..][..half],
    );
    let (a, b) = x.split_at_mut(half);
    for i in 0..half {
        let (x1, x2) = (a[i], b[i]);
        a[i] = x1 * c[i] - x2 * s[i];
        b[i] = x2 * c[i] + x1 * s[i];
    }
}

impl EmbeddingBackend for GemmaEncoder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dims
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        Some(self.tokenizer.encode(text).len())
    }

    /// Truncation length changes long texts' vectors, so it is part of the key space.
    fn cache_id(&self) -> String {
        // `int8`: vectors of the quantised encoder, never mixed with cached ones of the earlier f32 encoder.
        let title = match self.title {
            DocumentTitle::None => "",
            DocumentTitle::FirstLine => "+title-first-line",
        };
        format!("{}+int8{title}+truncate{}", self.model_id, self.max_tokens)
    }

    fn embed(&self, texts: &[&str], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<Vec<u32>> = texts.par_iter().map(|t| self.input_ids(t, kind)).collect();
        Ok(self.embed_ids(&inputs))
    }
}

/// The first `dims` components of `v`, renormalised: a Matryoshka prefix (the whole vector when `dims` is its
/// length). Build and eval cache full vectors and cut them with this; the query encoder cuts the same way.
pub fn matryoshka(v: &[f32], dims: usize) -> Vec<f32> {
    let mut v = v[..dims.min(v.len())].to_vec();
    let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-24).sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// The default folder of the release: `<cache>/models/embeddinggemma-300m`.
pub fn default_dir() -> PathBuf {
    crate::model::default_model_dir().join(fetch::FOLDER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn giant_and_non_regular_config_files_are_refused_before_reading() {
        let dir = std::env::temp_dir().join(format!("paragraf-gemma-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("config.json");
        // 3 GB that occupy no disk: refused from the metadata, nothing read.
        std::fs::File::create(&config)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        let refused = GemmaEncoder::load(&dir).err().unwrap().to_string();
        assert_eq!(
            refused,
            format!(
                "model file {} is invalid: 3221225472 bytes, more than the 1048576 allowed; delete it and run `paragraf model fetch` again",
                config.display()
            )
        );
        std::fs::remove_file(&config).unwrap();
        std::fs::create_dir(&config).unwrap();
        let refused = GemmaEncoder::load(&dir).err().unwrap().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            refused.ends_with(
                "is invalid: not a regular file; delete it and run `paragraf model fetch` again"
            ),
            "{refused}"
        );
    }
}
