//! k-fold cross-validation of one tuning parameter (the query-expansion weight) inside the dev questions.
//!
//! Choosing a weight on the very questions it is then reported on flatters it. Here the questions are split
//! into `folds` seeded random folds; for each fold the candidate with the best mean Recall@10 on the *other*
//! folds is chosen and scored on the held-out fold only. The held-out scores of all folds together are an
//! honest estimate of "tune, then use", paired question by question with the baseline for the tests.

use super::stats::StatsError;
use crate::rng::SplitMix64;

/// One fold's choice and its held-out result.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    /// Index into the candidates of the one chosen on the other folds.
    pub chosen: usize,
    /// Its mean Recall@10 on the other folds.
    pub train: f64,
    /// Its mean Recall@10 on this fold.
    pub held_out: f64,
    /// Questions in this fold.
    pub questions: usize,
}

/// The folds and, per question, the score under the candidate its fold chose.
#[derive(Clone, Debug, PartialEq)]
pub struct CrossValidation {
    /// In fold order.
    pub folds: Vec<Fold>,
    /// Held-out Recall@10 per question, in question order.
    pub per_question: Vec<f64>,
}

/// The fold of each of `n` questions: a seeded Fisher-Yates shuffle, then the question at position `i` goes to
/// fold `i % folds` (so fold sizes differ by at most one). Every cross-validation in Paragraf splits this way.
pub fn fold_assignment(n: usize, folds: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut fold_of = vec![0; n];
    for (i, &q) in order.iter().enumerate() {
        fold_of[q] = i % folds.max(1);
    }
    fold_of
}

/// Cross-validates: `scores[c][q]` is question `q`'s Recall@10 under candidate `c`. Ties go to the earlier
/// candidate (list the cautious one, e.g. weight 0, first).
pub fn cross_validate(
    scores: &[Vec<f64>],
    folds: usize,
    seed: u64,
) -> Result<CrossValidation, StatsError> {
    let n = scores.first().map_or(0, Vec::len);
    if let Some(other) = scores.iter().find(|s| s.len() != n) {
        return Err(StatsError::Unpaired(n, other.len()));
    }
    let too_few = |what, needed, got| StatsError::TooFew {
        test: "cross-validation",
        what,
        needed,
        got,
    };
    if scores.is_empty() {
        return Err(too_few("candidates", 1, 0));
    }
    if folds < 2 {
        return Err(too_few("folds", 2, folds));
    }
    if n < folds {
        return Err(too_few("questions (one per fold)", folds, n));
    }
    let fold_of = fold_assignment(n, folds, seed);
    let mean = |c: usize, keep: &dyn Fn(usize) -> bool| {
        let v: Vec<f64> = (0..n).filter(|&q| keep(q)).map(|q| scores[c][q]).collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let mut per_question = vec![0.0; n];
    let folds = (0..folds)
        .map(|f| {
            let (chosen, train) = (0..scores.len())
                .map(|c| (c, mean(c, &|q| fold_of[q] != f)))
                .fold(
                    (0, f64::NEG_INFINITY),
                    |best, x| if x.1 > best.1 { x } else { best },
                );
            for q in (0..n).filter(|&q| fold_of[q] == f) {
                per_question[q] = scores[chosen][q];
            }
            Fold {
                chosen,
                train,
                held_out: mean(chosen, &|q| fold_of[q] == f),
                questions: fold_of.iter().filter(|&&g| g == f).count(),
            }
        })
        .collect();
    Ok(CrossValidation {
        folds,
        per_question,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fold_is_scored_with_the_choice_of_the_others() {
        // Candidate 1 is better on every question but the first two, where candidate 0 wins.
        let a = vec![1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let b = vec![0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let cv = cross_validate(&[a.clone(), b.clone()], 5, 7).unwrap();
        assert_eq!(cv.folds.len(), 5);
        assert_eq!(cv.folds.iter().map(|f| f.questions).sum::<usize>(), 10);
        assert!(cv.folds.iter().all(|f| f.chosen == 1));
        // Held out, the first two questions get candidate 1's score: tuning does not see them.
        assert_eq!(cv.per_question, b);
        // Equal candidates: the first is chosen.
        let tie = cross_validate(&[a.clone(), a.clone()], 2, 1).unwrap();
        assert!(tie.folds.iter().all(|f| f.chosen == 0));
        assert_eq!(
            cross_validate(&[a.clone(), vec![1.0]], 5, 1).unwrap_err(),
            StatsError::Unpaired(10, 1)
        );
        assert_eq!(
            cross_validate(&[a], 11, 1).unwrap_err().to_string(),
            "cross-validation needs at least 11 questions (one per fold), got 10"
        );
    }
}
