//! Reciprocal-rank fusion (Cormack et al., 2009) of section rankings, the hybrid of lexical and dense search.
//!
//! RRF ignores the incomparable raw scores of BM25 and cosine similarity and adds `weight / (k + rank)` per list
//! a section appears in; `k` (60 by default) damps the advantage of the very first ranks.

use super::{Hit, TopK};
use std::collections::HashMap;

/// The usual RRF constant.
pub const DEFAULT_RRF_K: f32 = 60.0;

/// One ranked list to fuse: section ids best first, and the list's weight.
#[derive(Clone, Copy, Debug)]
pub struct Ranked<'a> {
    /// Ids, best first; a repeated id counts at its first position only.
    pub ids: &'a [u32],
    /// Weight of this list (1.0 for plain RRF).
    pub weight: f32,
}

/// Fuses `lists` with constant `k` and returns the best `top` ids (ties: lower id first).
pub fn reciprocal_rank_fusion(lists: &[Ranked<'_>], k: f32, top: usize) -> Vec<Hit> {
    let mut scores: HashMap<u32, f32> = HashMap::new();
    for list in lists {
        let mut seen = std::collections::HashSet::new();
        let mut rank = 0;
        for &id in list.ids {
            if seen.insert(id) {
                rank += 1;
                *scores.entry(id).or_insert(0.0) += list.weight / (k + rank as f32);
            }
        }
    }
    let mut best = TopK::new(top);
    for (index, score) in scores {
        best.push(Hit { index, score });
    }
    best.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(hits: &[Hit]) -> Vec<u32> {
        hits.iter().map(|h| h.index).collect()
    }

    #[test]
    fn fuses_by_reciprocal_rank() {
        let bm25 = [1, 2, 3];
        let dense = [3, 1, 4];
        let lists = [
            Ranked {
                ids: &bm25,
                weight: 1.0,
            },
            Ranked {
                ids: &dense,
                weight: 1.0,
            },
        ];
        let fused = reciprocal_rank_fusion(&lists, 60.0, 10);
        // 1: 1/61 + 1/62; 3: 1/63 + 1/61; 2: 1/62; 4: 1/63.
        assert_eq!(ids(&fused), [1, 3, 2, 4]);
        assert!((fused[0].score - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-7);
        assert_eq!(ids(&reciprocal_rank_fusion(&lists, 60.0, 2)), [1, 3]);
    }

    #[test]
    fn weights_k_duplicates_and_ties() {
        let a = [1, 2];
        let b = [2, 1];
        // Equal weights: 1 and 2 tie exactly, the lower id wins.
        let tie = [
            Ranked {
                ids: &a,
                weight: 1.0,
            },
            Ranked {
                ids: &b,
                weight: 1.0,
            },
        ];
        assert_eq!(ids(&reciprocal_rank_fusion(&tie, 60.0, 10)), [1, 2]);
        // Weighting the second list flips it.
        let weighted = [
            Ranked {
                ids: &a,
                weight: 1.0,
            },
            Ranked {
                ids: &b,
                weight: 2.0,
            },
        ];
        assert_eq!(ids(&reciprocal_rank_fusion(&weighted, 60.0, 10)), [2, 1]);
        // A repeated id does not push the later ones down, nor count twice.
        let dup = [Ranked {
            ids: &[5, 5, 6],
            weight: 1.0,
        }];
        let fused = reciprocal_rank_fusion(&dup, 1.0, 10);
        assert_eq!(ids(&fused), [5, 6]);
        assert!((fused[0].score - 0.5).abs() < 1e-7 && (fused[1].score - 1.0 / 3.0).abs() < 1e-7);
        assert!(reciprocal_rank_fusion(&[], 60.0, 10).is_empty());
    }
}
