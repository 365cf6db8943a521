//! Ranking metrics over section rankings, as the paper defines them.
//!
//! A ranking is a best-first list of ids; gold is the set of relevant ids. Duplicates in a ranking count once,
//! at their first position (a hit cannot be credited twice); duplicates in gold are ignored. A question with
//! empty gold has no defined score: the metrics return `None` and [`mean`] skips it, so it neither helps nor
//! hurts a strategy. Gold ids absent from the corpus should still be passed in (as ids no ranking contains):
//! they count as misses.

use std::collections::HashSet;
use std::hash::Hash;

fn distinct<T: Eq + Hash>(items: &[T]) -> HashSet<&T> {
    items.iter().collect()
}

/// The 1-based positions among the first `k` of `ranking` holding a gold id not seen before.
fn gold_positions<T: Eq + Hash>(ranking: &[T], gold: &HashSet<&T>, k: usize) -> Vec<usize> {
    let mut seen = HashSet::new();
    ranking
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, id)| gold.contains(id) && seen.insert(*id))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Recall@k: `|gold ∩ ranking[..k]| / |gold|`.
pub fn recall_at<T: Eq + Hash>(ranking: &[T], gold: &[T], k: usize) -> Option<f64> {
    let gold = distinct(gold);
    if gold.is_empty() {
        return None;
    }
    Some(gold_positions(ranking, &gold, k).len() as f64 / gold.len() as f64)
}

/// Reciprocal rank of the first gold id within the first `k` (0 when none): MRR@k per question.
pub fn reciprocal_rank_at<T: Eq + Hash>(ranking: &[T], gold: &[T], k: usize) -> Option<f64> {
    let gold = distinct(gold);
    if gold.is_empty() {
        return None;
    }
    Some(
        gold_positions(ranking, &gold, k)
            .first()
            .map_or(0.0, |&r| 1.0 / r as f64),
    )
}

/// What weight fitting maximises per question: Recall@10 plus a tenth of MRR@10 (to prefer gold higher up
/// among equal recalls); 0 for a question without gold.
pub fn tuning_objective<T: Eq + Hash>(ranking: &[T], gold: &[T]) -> f64 {
    recall_at(ranking, gold, 10).unwrap_or(0.0)
        + 0.1 * reciprocal_rank_at(ranking, gold, 10).unwrap_or(0.0)
}

/// nDCG@k with binary relevance: `Σ 1/log2(rank + 1)` over gold hits, divided by the ideal
/// `Σ_{i ≤ min(|gold|, k)} 1/log2(i + 1)`.
pub fn ndcg_at<T: Eq + Hash>(ranking: &[T], gold: &[T], k: usize) -> Option<f64> {
    let gold = distinct(gold);
    if gold.is_empty() {
        return None;
    }
    let gain = |rank: usize| 1.0 / (rank as f64 + 1.0).log2();
    let dcg: f64 = gold_positions(ranking, &gold, k)
        .into_iter()
        .map(gain)
        .sum();
    let ideal: f64 = (1..=gold.len().min(k)).map(gain).sum();
    Some(if ideal > 0.0 { dcg / ideal } else { 0.0 })
}

/// Mean of the defined per-question scores (`None` when there are none).
pub fn mean(scores: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let (sum, n) = scores
        .into_iter()
        .flatten()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn recall_counts_distinct_gold_in_the_top_k() {
        assert!(close(recall_at(&[5, 1, 9, 2], &[1, 2], 10), 1.0));
        assert!(close(recall_at(&[5, 1, 9, 2], &[1, 2], 3), 0.5));
        assert!(close(recall_at(&[5, 1, 9, 2], &[1, 2], 1), 0.0));
        assert!(close(recall_at(&[7], &[1, 2, 3], 10), 0.0));
        // Duplicates in the ranking are credited once, duplicates in gold ignored.
        assert!(close(recall_at(&[1, 1, 1], &[1, 2], 10), 0.5));
        assert!(close(recall_at(&[1, 2], &[1, 1, 2, 2], 10), 1.0));
        // Empty gold: undefined; empty ranking: zero.
        assert_eq!(recall_at::<u32>(&[1, 2], &[], 10), None);
        assert!(close(recall_at::<u32>(&[], &[1], 10), 0.0));
    }

    #[test]
    fn reciprocal_rank_uses_the_first_hit_within_k() {
        assert!(close(reciprocal_rank_at(&[5, 1, 9, 2], &[2, 1], 10), 0.5));
        assert!(close(reciprocal_rank_at(&[1], &[1], 10), 1.0));
        assert!(close(reciprocal_rank_at(&[4, 4, 4, 1], &[1], 10), 0.25));
        assert!(close(reciprocal_rank_at(&[4, 4, 4, 1], &[1], 3), 0.0));
        assert_eq!(reciprocal_rank_at::<u32>(&[1], &[], 10), None);
    }

    #[test]
    fn ndcg_against_hand_computed_values() {
        // Hits at ranks 2 and 4 of 2 gold: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3).
        let expect = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!(close(ndcg_at(&[5, 1, 9, 2], &[1, 2], 10), expect));
        assert!(close(ndcg_at(&[1, 2], &[2, 1], 10), 1.0));
        // A repeated hit earns nothing the second time.
        assert!(close(
            ndcg_at(&[1, 1], &[1, 2], 10),
            1.0 / (1.0 + 1.0 / 3f64.log2())
        ));
        // More gold than k: the ideal is capped at k.
        assert!(close(ndcg_at(&[1], &[1, 2, 3], 1), 1.0));
        assert_eq!(ndcg_at::<u32>(&[], &[], 10), None);
    }

    #[test]
    fn ties_broken_by_order_change_only_the_tied_positions() {
        // Two sections with equal scores are ranked by index (see paragraf_index::Hit::rank_cmp); swapping them
        // moves the gold hit from rank 1 to rank 2.
        assert!(close(reciprocal_rank_at(&[3, 8], &[3], 10), 1.0));
        assert!(close(reciprocal_rank_at(&[8, 3], &[3], 10), 0.5));
        assert!(close(recall_at(&[8, 3], &[3], 2), 1.0));
    }

    #[test]
    fn mean_skips_undefined_questions() {
        assert_eq!(mean([Some(1.0), None, Some(0.0)]), Some(0.5));
        assert_eq!(mean([None]), None);
    }
}
