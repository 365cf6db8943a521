//! HNSW (Malkov & Yashunin 2018): approximate nearest neighbours for the strategies with tens of thousands of
//! units, where a full scan stops being negligible.
//!
//! Written here rather than taken from a crate so that it is small, wasm-safe, deterministic and shares the
//! int8 vectors of exact search: the graph holds only ids (the vectors ship once), nodes are inserted in id
//! order and levels come from a seeded [`SplitMix64`], so the same vectors and settings give a byte-identical
//! graph on every machine. Similarity is the dot product (embeddings are normalised), computed with the int8
//! kernels exactly as [`super::exact`] does, so recall against exact search measures the graph alone.
//!
//! Defaults ([`Builder::default`]): `M = 8` links per node on upper layers and `2M` on layer 0,
//! `ef_construction = 200`, `ef_search = 256`, level factor `1 / ln M`, seed [`DEFAULT_SEED`]. Chosen on the
//! largest real bundle, the BGB's `fixed-16-4` (27,277 windows, 2,154 dev questions; `cargo run --release -p
//! paragraf --example hnsw_sweep`): the paper's protocol needs the top *100* units, so the search is wide; at
//! M 8 / ef 256 the top-10 sections match exact search's at 98.3 %, 3.5x faster, for a 0.72 MB graph
//! (M 16 / ef 100: 98.3 %, 4.6x, but 1.31 MB, which would take the bundle past 1/20 of the paper's index).
//! Neighbours are chosen with the paper's heuristic (keep a candidate only if it is closer to the new node than
//! to every neighbour kept so far), which keeps clusters connected.

use super::varint::{read_varint_checked, write_varint};
use super::{Hit, TopK};
use crate::vectors::{dot_i16_i8_inline, dot_i8, quantize, widen, Int8Vectors, VectorError};
use paragraf_stats::rng::SplitMix64;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use thiserror::Error;

/// The seed used unless another is given.
pub const DEFAULT_SEED: u64 = 0x5eed_2026;

/// Why a search could not run.
#[derive(Debug, Error, PartialEq)]
pub enum HnswError {
    /// The graph was built over a different number of vectors.
    #[error("graph has {graph} nodes but {vectors} vectors were given")]
    Mismatch {
        /// Nodes in the graph.
        graph: usize,
        /// Rows in the matrix.
        vectors: usize,
    },
    /// The query had the wrong dimension.
    #[error(transparent)]
    Vector(#[from] VectorError),
}

/// A deserialised graph whose parts do not fit together (a corrupt or foreign bundle section).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("corrupt HNSW graph: {0}")]
pub struct HnswFormatError(&'static str);

/// Settings for building a graph, instant-distance style: `Builder::default().ef_search(200).seed(7)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Builder {
    m: usize,
    ef_construction: usize,
    ef_search: usize,
    seed: u64,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            m: 8,
            ef_construction: 200,
            ef_search: 256,
            seed: DEFAULT_SEED,
        }
    }
}

impl Builder {
    /// Links per node on upper layers (`2M` on layer 0); at least 2.
    pub fn m(mut self, m: usize) -> Self {
        self.m = m.max(2);
        self
    }

    /// Candidate list size while inserting.
    pub fn ef_construction(mut self, ef: usize) -> Self {
        self.ef_construction = ef.max(1);
        self
    }

    /// Candidate list size while searching (raised to `k` when smaller).
    pub fn ef_search(mut self, ef: usize) -> Self {
        self.ef_search = ef.max(1);
        self
    }

    /// Seed of the level generator.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Builds the graph over `vectors`.
    pub fn build(self, vectors: &Int8Vectors) -> Hnsw {
        let n = vectors.len();
        let mut rng = SplitMix64::new(self.seed);
        let level_mult = 1.0 / (self.m as f64).ln();
        let levels: Vec<u8> = (0..n)
            .map(|_| ((-(1.0 - rng.next_f64()).ln() * level_mult) as usize).min(15) as u8)
            .collect();
        // links[node][layer], built mutable then frozen into CSR layers.
        let mut links: Vec<Vec<Vec<u32>>> = levels
            .iter()
            .map(|&l| vec![Vec::new(); l as usize + 1])
            .collect();
        let sim = |a: u32, b: u32| node_sim(vectors, a, b);
        let mut visited = Visited::new(n);
        let mut entry: Option<u32> = None;
        for node in 0..n as u32 {
            let level = levels[node as usize] as usize;
            let Some(ep) = entry else {
                entry = Some(node);
                continue;
            };
            let top = levels[ep as usize] as usize;
            let score = |other: u32| sim(node, other);
            let mut ep = ep;
            for layer in (level + 1..=top).rev() {
                ep = greedy(ep, layer, &score, |u, l| &links[u as usize][l]);
            }
            for layer in (0..=level.min(top)).rev() {
                let found = search_layer(
                    &[ep],
                    self.ef_construction,
                    layer,
                    &score,
                    |u, l| &links[u as usize][l],
                    &|u| prefetch_row(vectors, u),
                    &mut visited,
                );
                ep = found[0].index;
                let max_links = if layer == 0 { 2 * self.m } else { self.m };
                let chosen = select_neighbours(&found, self.m, &sim);
                for &nb in &chosen {
                    let list = &mut links[nb as usize][layer];
                    list.push(node);
                    if list.len() > max_links {
                        let candidates: Vec<Hit> = {
                            let mut c: Vec<Hit> = list
                                .iter()
                                .map(|&x| Hit {
                                    index: x,
                                    score: sim(nb, x),
                                })
                                .collect();
                            c.sort_by(Hit::rank_cmp);
                            c
                        };
                        links[nb as usize][layer] = select_neighbours(&candidates, max_links, &sim);
                    }
                }
                links[node as usize][layer] = chosen;
            }
            if level > top {
                entry = Some(node);
            }
        }
        let max_level = entry.map_or(0, |e| levels[e as usize]);
        let layers = (0..=max_level as usize)
            .map(|layer| {
                let nodes: Vec<u32> = (0..n as u32)
                    .filter(|&u| levels[u as usize] as usize >= layer)
                    .collect();
                let mut offsets = vec![0u32];
                let mut neighbours = Vec::new();
                for &u in &nodes {
                    let mut list = links[u as usize][layer].clone();
                    list.sort_unstable();
                    list.dedup();
                    neighbours.extend(list);
                    offsets.push(neighbours.len() as u32);
                }
                Layer {
                    nodes: if layer == 0 { Vec::new() } else { nodes },
                    offsets,
                    neighbours,
                }
            })
            .collect();
        Hnsw {
            settings: self,
            len: n as u32,
            entry: entry.unwrap_or(0),
            layers,
        }
    }
}

/// One layer in CSR form; `nodes` lists the layer's node ids (sorted) except on layer 0, which holds all.
/// Each node's neighbours are sorted ascending, so that on disk they can be stored as gaps ([`PackedLayer`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "PackedLayer", try_from = "PackedLayer")]
struct Layer {
    nodes: Vec<u32>,
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
}

/// A layer as stored: per node its number of links, then all links as varints, each node's list as its first
/// (smallest) id followed by the gaps to the next. Plain varint ids of a 27k-node graph take 2–3 bytes; the
/// gaps take under 2, which makes the BGB `fixed-16-4` graph a third smaller. (Coding the first id relative to
/// the node itself was measured too: larger, as a node's neighbours lie anywhere in the law.)
#[derive(Serialize, Deserialize)]
struct PackedLayer {
    nodes: Vec<u32>,
    degrees: Vec<u32>,
    #[serde(with = "paragraf_format::bytes")]
    links: Vec<u8>,
}

impl From<Layer> for PackedLayer {
    fn from(layer: Layer) -> Self {
        let mut links = Vec::with_capacity(layer.neighbours.len() * 2);
        let degrees = layer
            .offsets
            .windows(2)
            .map(|w| {
                let mut prev = 0;
                for &u in &layer.neighbours[w[0] as usize..w[1] as usize] {
                    write_varint(&mut links, u - prev);
                    prev = u;
                }
                w[1] - w[0]
            })
            .collect();
        PackedLayer {
            nodes: layer.nodes,
            degrees,
            links,
        }
    }
}

impl TryFrom<PackedLayer> for Layer {
    type Error = HnswFormatError;
    fn try_from(packed: PackedLayer) -> Result<Self, HnswFormatError> {
        let mut bytes = packed.links.as_slice();
        let mut offsets = Vec::with_capacity(packed.degrees.len() + 1);
        offsets.push(0u32);
        let mut neighbours = Vec::with_capacity(packed.links.len());
        for &degree in &packed.degrees {
            let mut prev: Option<u32> = None;
            for _ in 0..degree {
                let value = read_varint_checked(&mut bytes)
                    .ok_or(HnswFormatError("truncated link list"))?;
                let id = match prev {
                    None => value,
                    Some(p) if value > 0 => p
                        .checked_add(value)
                        .ok_or(HnswFormatError("link to a node that does not exist"))?,
                    Some(_) => return Err(HnswFormatError("links not in ascending order")),
                };
                neighbours.push(id);
                prev = Some(id);
            }
            offsets.push(neighbours.len() as u32);
        }
        if !bytes.is_empty() {
            return Err(HnswFormatError("link list longer than its degrees"));
        }
        Ok(Layer {
            nodes: packed.nodes,
            offsets,
            neighbours,
        })
    }
}

impl Layer {
    fn links(&self, node: u32) -> &[u32] {
        let pos = if self.nodes.is_empty() {
            node as usize
        } else {
            match self.nodes.binary_search(&node) {
                Ok(p) => p,
                Err(_) => return &[],
            }
        };
        &self.neighbours[self.offsets[pos] as usize..self.offsets[pos + 1] as usize]
    }
}

/// A built graph; search it together with the vectors it was built over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawHnsw")]
pub struct Hnsw {
    settings: Builder,
    len: u32,
    entry: u32,
    layers: Vec<Layer>,
}

/// The serialised form, checked into [`Hnsw`] so that a bad bundle fails on load, not mid-query.
#[derive(Deserialize)]
struct RawHnsw {
    settings: Builder,
    len: u32,
    entry: u32,
    layers: Vec<Layer>,
}

impl TryFrom<RawHnsw> for Hnsw {
    type Error = HnswFormatError;
    fn try_from(raw: RawHnsw) -> Result<Self, HnswFormatError> {
        let fail = |what| Err(HnswFormatError(what));
        if raw.layers.is_empty() {
            return fail("no layers");
        }
        for (i, layer) in raw.layers.iter().enumerate() {
            let members = if i == 0 {
                if !layer.nodes.is_empty() {
                    return fail("layer 0 lists its nodes");
                }
                raw.len as usize
            } else {
                if !layer.nodes.windows(2).all(|w| w[0] < w[1])
                    || layer.nodes.last().is_some_and(|&u| u >= raw.len)
                {
                    return fail("layer nodes unsorted or out of range");
                }
                layer.nodes.len()
            };
            if layer.offsets.len() != members + 1
                || layer.offsets[0] != 0
                || !layer.offsets.windows(2).all(|w| w[0] <= w[1])
                || layer.offsets[members] as usize != layer.neighbours.len()
            {
                return fail("link offsets out of order or range");
            }
            if layer.neighbours.iter().any(|&u| u >= raw.len) {
                return fail("link to a node that does not exist");
            }
        }
        if raw.len > 0 && raw.entry >= raw.len {
            return fail("entry point out of range");
        }
        Ok(Self {
            settings: raw.settings,
            len: raw.len,
            entry: raw.entry,
            layers: raw.layers,
        })
    }
}

impl Hnsw {
    /// The settings it was built with (the seed is recorded here).
    pub fn settings(&self) -> Builder {
        self.settings
    }

    /// The seed it was built with.
    pub fn seed(&self) -> u64 {
        self.settings.seed
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the graph is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Changes `ef_search` (search-time only).
    pub fn set_ef_search(&mut self, ef: usize) {
        self.settings.ef_search = ef.max(1);
    }

    /// The approximate `k` nearest rows of `vectors` to `query`, best first.
    pub fn search(
        &self,
        vectors: &Int8Vectors,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<Hit>, HnswError> {
        if vectors.len() != self.len() {
            return Err(HnswError::Mismatch {
                graph: self.len(),
                vectors: vectors.len(),
            });
        }
        vectors.check_dim(query.len())?;
        if self.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let (q, qs) = quantize(query);
        let q = widen(&q);
        // As in exact search: the whole walk is compiled per instruction set and picked once per query, so the
        // kernel inlines into the loop instead of being dispatched per node.
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512 F and BW, checked just above.
            return Ok(unsafe { self.walk_avx512(vectors, &q, qs, k) });
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return Ok(unsafe { self.walk_avx2(vectors, &q, qs, k) });
        }
        Ok(self.walk(vectors, &q, qs, k))
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn walk_avx512(&self, vectors: &Int8Vectors, q: &[i16], qs: f32, k: usize) -> Vec<Hit> {
        self.walk(vectors, q, qs, k)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn walk_avx2(&self, vectors: &Int8Vectors, q: &[i16], qs: f32, k: usize) -> Vec<Hit> {
        self.walk(vectors, q, qs, k)
    }

    /// Greedy descent through the upper layers, then the `ef`-wide search on layer 0.
    #[inline(always)]
    fn walk(&self, vectors: &Int8Vectors, q: &[i16], qs: f32, k: usize) -> Vec<Hit> {
        let score = |u: u32| {
            dot_i16_i8_inline(q, vectors.row(u as usize)) as f32 * qs * vectors.scale(u as usize)
        };
        let links = |u: u32, l: usize| self.layers[l].links(u);
        let mut ep = self.entry;
        for layer in (1..self.layers.len()).rev() {
            ep = greedy(ep, layer, &score, links);
        }
        let mut visited = Visited::new(self.len());
        let mut found = search_layer(
            &[ep],
            self.settings.ef_search.max(k),
            0,
            &score,
            links,
            &|u| prefetch_row(vectors, u),
            &mut visited,
        );
        found.truncate(k);
        found
    }
}

/// Asks the CPU to start loading row `u` (a hint; nothing on other targets). A node's neighbours lie anywhere in
/// a 10 MB matrix, so loading them all while the first is scored hides most of the memory latency.
#[inline(always)]
fn prefetch_row(vectors: &Int8Vectors, u: u32) {
    #[cfg(target_arch = "x86_64")]
    for line in vectors.row(u as usize).chunks(64) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of the x86-64 baseline, and a prefetch never faults (the address is in `line`).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (vectors, u);
}

fn node_sim(vectors: &Int8Vectors, a: u32, b: u32) -> f32 {
    let (a, b) = (a as usize, b as usize);
    dot_i8(vectors.row(a), vectors.row(b)) as f32 * vectors.scale(a) * vectors.scale(b)
}

/// A bitset of visited nodes, cleared between searches.
struct Visited {
    bits: Vec<u64>,
    touched: Vec<usize>,
}

impl Visited {
    fn new(n: usize) -> Self {
        Self {
            bits: vec![0; n.div_ceil(64)],
            touched: Vec::new(),
        }
    }

    /// Marks `u`; true if it was not marked before.
    fn insert(&mut self, u: u32) -> bool {
        let (w, b) = (u as usize / 64, 1u64 << (u % 64));
        if self.bits[w] & b != 0 {
            return false;
        }
        if self.bits[w] == 0 {
            self.touched.push(w);
        }
        self.bits[w] |= b;
        true
    }

    fn clear(&mut self) {
        for w in self.touched.drain(..) {
            self.bits[w] = 0;
        }
    }
}

/// Max-heap order: best hit greatest.
struct Best(Hit);
impl PartialEq for Best {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Best {}
impl PartialOrd for Best {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Best {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.rank_cmp(&self.0)
    }
}

/// Greedy walk on one layer to the locally best node.
#[inline(always)]
fn greedy<'a>(
    mut ep: u32,
    layer: usize,
    score: &impl Fn(u32) -> f32,
    links: impl Fn(u32, usize) -> &'a [u32],
) -> u32 {
    let mut best = score(ep);
    loop {
        let mut improved = false;
        for &nb in links(ep, layer) {
            let s = score(nb);
            if s > best || (s == best && nb < ep) {
                best = s;
                ep = nb;
                improved = true;
            }
        }
        if !improved {
            return ep;
        }
    }
}

/// The best `ef` nodes reachable on `layer` from `entries`, best first.
#[inline(always)]
fn search_layer<'a>(
    entries: &[u32],
    ef: usize,
    layer: usize,
    score: &impl Fn(u32) -> f32,
    links: impl Fn(u32, usize) -> &'a [u32],
    prefetch: &impl Fn(u32),
    visited: &mut Visited,
) -> Vec<Hit> {
    visited.clear();
    let mut candidates: BinaryHeap<Best> = BinaryHeap::new();
    let mut results = TopK::new(ef);
    for &e in entries {
        visited.insert(e);
        let hit = Hit {
            index: e,
            score: score(e),
        };
        candidates.push(Best(hit));
        results.push(hit);
    }
    while let Some(Best(current)) = candidates.pop() {
        if current.score < results.threshold() {
            break;
        }
        let neighbours = links(current.index, layer);
        neighbours.iter().for_each(|&nb| prefetch(nb));
        for &nb in neighbours {
            if !visited.insert(nb) {
                continue;
            }
            let s = score(nb);
            if s >= results.threshold() {
                let hit = Hit {
                    index: nb,
                    score: s,
                };
                candidates.push(Best(hit));
                results.push(hit);
            }
        }
    }
    results.into_sorted()
}

/// The paper's neighbour heuristic over `candidates` (best first): keep `c` if it is more similar to the
/// base node than to every neighbour kept so far; fill up with the best rejected ones if fewer than `m` remain.
fn select_neighbours(candidates: &[Hit], m: usize, sim: &impl Fn(u32, u32) -> f32) -> Vec<u32> {
    let mut kept: Vec<u32> = Vec::with_capacity(m);
    let mut rejected = Vec::new();
    for c in candidates {
        if kept.len() == m {
            break;
        }
        if kept.iter().all(|&k| sim(c.index, k) < c.score) {
            kept.push(c.index);
        } else {
            rejected.push(c.index);
        }
    }
    for r in rejected {
        if kept.len() == m {
            break;
        }
        kept.push(r);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{self, QueryPrecision};

    /// Vectors with structure like text embeddings: a mixture of clusters in a low-dimensional latent space,
    /// projected to `dim`, plus isotropic noise, normalised.
    fn structured(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut rng = SplitMix64::new(seed);
        let latent = 64;
        let clusters = 100;
        let projection: Vec<f32> = (0..latent * dim).map(|_| rng.normal() as f32).collect();
        let centres: Vec<Vec<f32>> = (0..clusters)
            .map(|_| (0..latent).map(|_| 2.0 * rng.normal() as f32).collect())
            .collect();
        (0..n)
            .map(|_| {
                let c = &centres[rng.below(clusters)];
                let z: Vec<f32> = c.iter().map(|x| x + rng.normal() as f32).collect();
                let mut v: Vec<f32> = (0..dim)
                    .map(|j| {
                        (0..latent)
                            .map(|i| z[i] * projection[i * dim + j])
                            .sum::<f32>()
                            + 25.0 * rng.normal() as f32
                    })
                    .collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    #[test]
    fn recall_at_10_against_exact_search() {
        let seed = DEFAULT_SEED;
        let (n, dim, queries) = (4000, 128, 100);
        let data = structured(n + queries, dim, 11);
        let vectors = Int8Vectors::from_f32_rows(dim as u32, &data[..n]).unwrap();
        let truth: Vec<Vec<u32>> = data[n..]
            .iter()
            .map(|q| {
                let hits = exact::search(&vectors, q, 10, QueryPrecision::Int8).unwrap();
                hits.iter().map(|h| h.index).collect()
            })
            .collect();
        let recall = |graph: &Hnsw| {
            let hits: usize = data[n..]
                .iter()
                .zip(&truth)
                .map(|(q, t)| {
                    let found = graph.search(&vectors, q, 10).unwrap();
                    found.iter().filter(|h| t.contains(&h.index)).count()
                })
                .sum();
            hits as f64 / (10 * queries) as f64
        };
        let mut graph = Builder::default().seed(seed).build(&vectors);
        let full = recall(&graph);
        graph.set_ef_search(10);
        let narrow = recall(&graph);
        eprintln!(
            "HNSW recall@10 vs exact: {full:.4} at ef_search 256, {narrow:.4} at 10 (n = {n}, dim = {dim}, seed = {seed:#x})"
        );
        assert!(full >= 0.98, "recall@10 {full}");
        // The data is hard enough that the search width matters.
        assert!(narrow < full - 0.05, "ef_search 10: {narrow}");
    }

    #[test]
    fn deterministic_and_serialisable() {
        let data = structured(500, 32, 3);
        let vectors = Int8Vectors::from_f32_rows(32, &data).unwrap();
        let a = Builder::default().m(8).seed(1).build(&vectors);
        let b = Builder::default().m(8).seed(1).build(&vectors);
        assert_eq!(a, b);
        assert_ne!(a, Builder::default().m(8).seed(2).build(&vectors));
        assert_eq!(a.seed(), 1);
        let json = serde_json::to_string(&a).unwrap();
        let back: Hnsw = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.search(&vectors, &data[7], 5).unwrap(),
            a.search(&vectors, &data[7], 5).unwrap()
        );
        // Stored links are gaps; every way of corrupting them is caught on load.
        let corrupt = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
            edit(&mut value["layers"][0]);
            serde_json::from_value::<Hnsw>(value)
                .unwrap_err()
                .to_string()
        };
        let first_link = |layer: &mut serde_json::Value| layer["links"][0].as_u64().unwrap();
        let err = corrupt(&|layer| {
            // One more byte in the first varint: node 0's first link becomes id + 127 * 128, past the last node.
            assert!(first_link(layer) < 0x80, "a one-byte first link");
            layer["links"][0] = serde_json::json!(first_link(layer) | 0x80);
            layer["links"]
                .as_array_mut()
                .unwrap()
                .insert(1, serde_json::json!(0x7f));
        });
        assert!(err.contains("link to a node that does not exist"), "{err}");
        let err = corrupt(&|layer| {
            let degrees = layer["degrees"].as_array_mut().unwrap();
            let last = degrees.last_mut().unwrap();
            *last = serde_json::json!(last.as_u64().unwrap() + 1);
        });
        assert!(err.contains("truncated link list"), "{err}");
        let err = corrupt(&|layer| layer["links"].as_array_mut().unwrap().push(1.into()));
        assert!(err.contains("link list longer than its degrees"), "{err}");
        let err = corrupt(&|layer| {
            let degree = layer["degrees"][0].as_u64().unwrap();
            let links = layer["links"].as_array_mut().unwrap();
            // node 0's second link repeats the first (gap 0)
            assert!(degree >= 2 && links[1].as_u64().unwrap() < 0x80);
            links[1] = 0.into();
        });
        assert!(err.contains("links not in ascending order"), "{err}");
        let err = corrupt(&|layer| {
            layer["degrees"].as_array_mut().unwrap().pop();
        });
        assert!(!err.is_empty());
        // A node finds itself first.
        assert_eq!(a.search(&vectors, &data[7], 1).unwrap()[0].index, 7);
    }

    #[test]
    fn edge_cases() {
        let empty = Int8Vectors::new(4);
        let graph = Builder::default().build(&empty);
        assert!(graph
            .search(&empty, &[1.0, 0.0, 0.0, 0.0], 5)
            .unwrap()
            .is_empty());
        let one = Int8Vectors::from_f32_rows(4, &[[1.0, 0.0, 0.0, 0.0]]).unwrap();
        let graph = Builder::default().build(&one);
        assert_eq!(
            graph.search(&one, &[0.0, 1.0, 0.0, 0.0], 5).unwrap().len(),
            1
        );
        assert_eq!(
            graph.search(&empty, &[1.0, 0.0, 0.0, 0.0], 5),
            Err(HnswError::Mismatch {
                graph: 1,
                vectors: 0
            })
        );
        assert!(graph.search(&one, &[1.0], 5).is_err());
    }
}
