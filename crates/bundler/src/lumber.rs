//! Lumber-style chunking: the base-unit stream cut into multi-unit chunks at predicted topic boundaries.
//!
//! As in the paper, units are accumulated from the current position up to a token budget and a predictor names
//! the first unit of the *next* chunk; everything before it forms one chunk, and when no earlier boundary is
//! predicted the whole group is kept. The built-in predictor cuts where the cosine similarity of consecutive
//! units falls below a threshold (the lower quartile of all consecutive similarities in the law); a language
//! model can predict instead (see [`crate::generate`]).

use crate::chunk::Chunk;

/// Decides where the next chunk starts within a group of consecutive units.
pub trait BoundaryPredictor {
    /// `group` holds the indices of consecutive units (at least two); returns the position in `group` (1..len)
    /// of the first unit of the next chunk, or `group.len()` to keep the whole group.
    fn next_start(&mut self, group: &[usize]) -> usize;
}

/// The built-in predictor: the first similarity drop below `threshold`.
pub struct SimilarityDrop<'a> {
    vectors: &'a [Vec<f32>],
    threshold: f32,
}

impl<'a> SimilarityDrop<'a> {
    /// Threshold = the `quantile` of consecutive similarities over the whole stream.
    pub fn new(vectors: &'a [Vec<f32>], quantile: f64) -> Self {
        let mut sims: Vec<f32> = vectors
            .windows(2)
            .map(|w| similarity(&w[0], &w[1]))
            .collect();
        sims.sort_by(f32::total_cmp);
        let threshold = if sims.is_empty() {
            0.0
        } else {
            sims[((sims.len() - 1) as f64 * quantile) as usize]
        };
        SimilarityDrop { vectors, threshold }
    }

    /// The similarity below which a boundary is predicted.
    pub fn threshold(&self) -> f32 {
        self.threshold
    }
}

fn similarity(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl BoundaryPredictor for SimilarityDrop<'_> {
    fn next_start(&mut self, group: &[usize]) -> usize {
        (1..group.len())
            .find(|&j| {
                similarity(&self.vectors[group[j - 1]], &self.vectors[group[j]]) < self.threshold
            })
            .unwrap_or(group.len())
    }
}

/// Cuts `units` (with their token counts) into chunks of at most `budget` tokens (a single longer unit stays
/// alone), asking `predictor` for boundaries. Returns the unit index ranges of the chunks.
pub fn boundaries(
    tokens: &[usize],
    budget: usize,
    predictor: &mut dyn BoundaryPredictor,
) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    while start < tokens.len() {
        let mut end = start + 1;
        let mut used = tokens[start];
        while end < tokens.len() && used + tokens[end] <= budget {
            used += tokens[end];
            end += 1;
        }
        let group: Vec<usize> = (start..end).collect();
        let cut = if group.len() > 1 {
            predictor.next_start(&group).clamp(1, group.len())
        } else {
            1
        };
        ranges.push(start..start + cut);
        start += cut;
    }
    ranges
}

/// Builds the Lumber chunks from base units.
pub fn lumber(
    units: &[Chunk],
    tokens: &[usize],
    budget: usize,
    predictor: &mut dyn BoundaryPredictor,
) -> Vec<Chunk> {
    boundaries(tokens, budget, predictor)
        .into_iter()
        .map(|r| Chunk::concat(&units[r]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<usize>);
    impl BoundaryPredictor for Fixed {
        fn next_start(&mut self, group: &[usize]) -> usize {
            // cut before the first unit listed as a boundary
            (1..group.len())
                .find(|&j| self.0.contains(&group[j]))
                .unwrap_or(group.len())
        }
    }

    #[test]
    fn respects_budget_and_predictions() {
        let tokens = [10, 10, 10, 10, 10, 50, 10];
        let ranges = boundaries(&tokens, 30, &mut Fixed(vec![2]));
        assert_eq!(ranges, vec![0..2, 2..5, 5..6, 6..7]);
        for r in &ranges {
            assert!(r.len() == 1 || tokens[r.clone()].iter().sum::<usize>() <= 30);
        }
    }

    #[test]
    fn similarity_drop_cuts_between_topics() {
        let a = vec![1.0, 0.0];
        let b = vec![0.0, 1.0];
        let vectors = vec![a.clone(), a.clone(), a, b.clone(), b];
        let mut predictor = SimilarityDrop::new(&vectors, 0.5);
        assert_eq!(predictor.next_start(&[0, 1, 2, 3, 4]), 3);
        assert_eq!(boundaries(&[1; 5], 100, &mut predictor), vec![0..3, 3..5]);
    }
}
