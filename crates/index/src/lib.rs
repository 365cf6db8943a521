//! The search kernels the engine (`paragraf_engine`) runs, natively and in the browser.
//!
//! The query protocol is the paper's: score indexed units (exactly, through HNSW or routed down a RAPTOR
//! tree: [`exact`], [`hnsw`], [`raptor`]; or with [`bm25`]), keep the top 100, propagate their scores to the
//! sections they belong to ([`aggregate`]), keep the top 10 distinct sections; optionally fuse lexical and dense
//! section rankings ([`fusion`]) and spread scores over the citation graph ([`graph`]), with cited sections
//! ([`citation`]) ahead of everything. The protocol itself
//! — which of these run, in which order, with which weights — has one owner, `paragraf_engine::search`;
//! this crate holds the kernels and the vectors they read ([`vectors`]). Why a crate of its own: the kernels know
//! sections and units only by index, so nothing here reaches back up to bundles, laws in folders or learning.
//!
//! Every function here is deterministic: equal scores are ordered by the lower index, so the same bundle gives
//! the same ranking natively and in wasm.
#![warn(missing_docs)]

pub mod aggregate;
pub mod bm25;
pub mod citation;
pub mod exact;
pub mod fusion;
pub mod graph;
pub mod hnsw;
pub mod raptor;
mod varint;
pub mod vectors;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Units scored by a first-stage search and kept for aggregation (the paper's candidate set).
pub const DEFAULT_UNIT_K: usize = 100;

/// Distinct sections a query returns.
pub const DEFAULT_SECTION_K: usize = 10;

/// One scored item: a unit, a section or a document, by index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Index of the unit / section / document.
    pub index: u32,
    /// Its score; higher is better.
    pub score: f32,
}

impl Hit {
    /// Ranking order: higher score first, then lower index.
    pub fn rank_cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.index.cmp(&other.index))
    }
}

/// Heap entry ordered so that the heap's maximum is the *worst* kept hit.
struct Worst(Hit);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.rank_cmp(&other.0)
    }
}

/// Keeps the best `k` hits pushed into it.
pub struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
}

impl TopK {
    /// An empty collector for `k` hits.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The score a new hit must beat to get in (`-inf` while not full).
    #[inline]
    pub fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.heap.peek().map_or(f32::NEG_INFINITY, |w| w.0.score)
        }
    }

    /// Offers a hit.
    #[inline]
    pub fn push(&mut self, hit: Hit) {
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(Worst(hit));
        } else if let Some(mut worst) = self.heap.peek_mut() {
            if hit.rank_cmp(&worst.0) == Ordering::Less {
                *worst = Worst(hit);
            }
        }
    }

    /// The kept hits, best first.
    pub fn into_sorted(self) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self.heap.into_iter().map(|w| w.0).collect();
        hits.sort_by(Hit::rank_cmp);
        hits
    }
}

/// The best `k` of `scores` (by index), best first.
pub fn top_k_scores(scores: &[f32], k: usize) -> Vec<Hit> {
    let mut top = TopK::new(k);
    for (i, &score) in scores.iter().enumerate() {
        if score >= top.threshold() {
            top.push(Hit {
                index: i as u32,
                score,
            });
        }
    }
    top.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_orders_by_score_then_index() {
        let hits = top_k_scores(&[0.5, 0.9, 0.5, 0.1, 0.9, 0.7], 4);
        let order: Vec<u32> = hits.iter().map(|h| h.index).collect();
        assert_eq!(order, [1, 4, 5, 0]);
        assert_eq!(top_k_scores(&[1.0, 2.0], 5).len(), 2);
        assert!(top_k_scores(&[1.0], 0).is_empty());
    }
}
