//! The paper's statistics: is one chunking strategy really better than another on the same questions?
//!
//! - [`friedman`]: the omnibus test over all strategies (ranks within each question, so per-question
//!   difficulty cancels), with scipy's tie correction; the p-value comes from the chi-square distribution,
//!   computed here via the regularised incomplete gamma function (no statistics crate compiles to wasm lean).
//! - [`paired_permutation_test`]: strategy vs baseline on per-question scores, two-sided, by random sign flips
//!   of the differences (exchangeable under H0), seeded.
//! - [`holm`]: step-down family-wise correction of the per-strategy p-values.
//! - [`bootstrap_ci`]: percentile bootstrap confidence interval of a mean, seeded.

use crate::rng::SplitMix64;
use thiserror::Error;

/// Inputs a test cannot work with.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum StatsError {
    /// Fewer groups or observations than the test needs.
    #[error("{test} needs at least {needed} {what}, got {got}")]
    TooFew {
        /// The test.
        test: &'static str,
        /// What is counted.
        what: &'static str,
        /// The minimum.
        needed: usize,
        /// What was given.
        got: usize,
    },
    /// Groups of different lengths where pairs are required.
    #[error("paired samples differ in length: {0} vs {1}")]
    Unpaired(usize, usize),
}

/// A test's statistic and p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestResult {
    /// The test statistic.
    pub statistic: f64,
    /// Its p-value.
    pub p_value: f64,
}

/// Ranks of `values` (1-based), ties getting their average rank.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            ranks[o] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Friedman's test: `groups[g][q]` is strategy `g`'s score on question `q`. Same statistic as
/// `scipy.stats.friedmanchisquare` (tie-corrected); `p_value` is 1 when every question ties throughout.
pub fn friedman(groups: &[Vec<f64>]) -> Result<TestResult, StatsError> {
    let k = groups.len();
    if k < 3 {
        return Err(StatsError::TooFew {
            test: "the Friedman test",
            what: "groups",
            needed: 3,
            got: k,
        });
    }
    let n = groups[0].len();
    if let Some(g) = groups.iter().find(|g| g.len() != n) {
        return Err(StatsError::Unpaired(n, g.len()));
    }
    if n == 0 {
        return Err(StatsError::TooFew {
            test: "the Friedman test",
            what: "questions",
            needed: 1,
            got: 0,
        });
    }
    let mut rank_sums = vec![0.0; k];
    let mut ties = 0.0;
    for q in 0..n {
        let row: Vec<f64> = groups.iter().map(|g| g[q]).collect();
        let ranks = average_ranks(&row);
        for (s, r) in rank_sums.iter_mut().zip(&ranks) {
            *s += r;
        }
        let mut sorted = row.clone();
        sorted.sort_by(f64::total_cmp);
        let mut i = 0;
        while i < k {
            let j = sorted[i..].iter().take_while(|&&v| v == sorted[i]).count();
            let t = j as f64;
            ties += t * (t * t - 1.0);
            i += j;
        }
    }
    let (kf, nf) = (k as f64, n as f64);
    let correction = 1.0 - ties / (kf * (kf * kf - 1.0) * nf);
    if correction <= 0.0 {
        return Ok(TestResult {
            statistic: 0.0,
            p_value: 1.0,
        });
    }
    let ssbn: f64 = rank_sums.iter().map(|s| s * s).sum();
    let statistic = (12.0 / (kf * nf * (kf + 1.0)) * ssbn - 3.0 * nf * (kf + 1.0)) / correction;
    Ok(TestResult {
        statistic,
        p_value: chi2_sf(statistic, kf - 1.0),
    })
}

/// Two-sided paired permutation test of `mean(a - b) = 0`: `rounds` random sign flips of the differences
/// (seeded), p-value `(1 + #{|mean*| >= |mean|}) / (1 + rounds)`.
pub fn paired_permutation_test(
    a: &[f64],
    b: &[f64],
    rounds: usize,
    seed: u64,
) -> Result<TestResult, StatsError> {
    if a.len() != b.len() {
        return Err(StatsError::Unpaired(a.len(), b.len()));
    }
    if a.is_empty() {
        return Err(StatsError::TooFew {
            test: "the permutation test",
            what: "pairs",
            needed: 1,
            got: 0,
        });
    }
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let observed = diffs.iter().sum::<f64>().abs();
    // Compare sums with a relative tolerance so that flips giving the same sum in exact arithmetic count.
    let tolerance = 1e-9 * diffs.iter().map(|d| d.abs()).sum::<f64>();
    let mut rng = SplitMix64::new(seed);
    let mut extreme = 0usize;
    for _ in 0..rounds {
        let sum: f64 = diffs.iter().map(|&d| if rng.coin() { d } else { -d }).sum();
        if sum.abs() >= observed - tolerance {
            extreme += 1;
        }
    }
    Ok(TestResult {
        statistic: observed / diffs.len() as f64,
        p_value: (1 + extreme) as f64 / (1 + rounds) as f64,
    })
}

/// Holm's step-down adjustment of `p_values` (returned in the given order).
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (i, &o) in order.iter().enumerate() {
        running = running.max(((m - i) as f64 * p_values[o]).min(1.0));
        adjusted[o] = running;
    }
    adjusted
}

/// Percentile bootstrap confidence interval of the mean of `values` at `level` (0.95 for 95 %): `rounds`
/// resamples with replacement (seeded); quantiles interpolate linearly like numpy's default.
pub fn bootstrap_ci(
    values: &[f64],
    level: f64,
    rounds: usize,
    seed: u64,
) -> Result<(f64, f64), StatsError> {
    if values.is_empty() || rounds == 0 {
        return Err(StatsError::TooFew {
            test: "the bootstrap",
            what: "values and rounds",
            needed: 1,
            got: 0,
        });
    }
    let n = values.len();
    let mut rng = SplitMix64::new(seed);
    let mut means: Vec<f64> = (0..rounds)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Ok((quantile(&means, alpha), quantile(&means, 1.0 - alpha)))
}

/// Linear-interpolation quantile of sorted data.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Survival function of the chi-square distribution with `df` degrees of freedom.
pub fn chi2_sf(x: f64, df: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    gamma_q(df / 2.0, x / 2.0)
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, n = 9; ~15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let series = COEF[1..]
        .iter()
        .enumerate()
        .fold(COEF[0], |s, (i, c)| s + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
}

/// Regularised lower incomplete gamma `P(a, x)`.
pub fn gamma_p(a: f64, x: f64) -> f64 {
    1.0 - gamma_q(a, x)
}

/// Regularised upper incomplete gamma `Q(a, x) = 1 - P(a, x)`: series below `a + 1`, Lentz continued
/// fraction above (Numerical Recipes §6.2).
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_prefix = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * log_prefix.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        log_prefix.exp() * h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    // Reference values from scipy 1.x (`special.gammaln`, `special.gammaincc`, `stats.chi2.sf`,
    // `stats.friedmanchisquare`, `stats.permutation_test`, `stats.rankdata`).

    #[test]
    fn special_functions_match_scipy() {
        for (x, want) in [
            (0.1, 2.252712651734206),
            (0.5, 0.5723649429247),
            (3.7, 1.428072326665388),
            (10.0, 12.801827480081469),
            (171.3, 708.1149470389971),
        ] {
            assert!(
                close(ln_gamma(x), want, 1e-12),
                "lnΓ({x}) = {}",
                ln_gamma(x)
            );
        }
        assert!(ln_gamma(1.0).abs() < 1e-14);
        for (a, x, want) in [
            (0.5, 0.1, 0.6547208460185768),
            (1.0, 1.0, 0.36787944117144245),
            (2.5, 4.0, 0.1562356275777222),
            (10.0, 3.0, 0.9988975118698845),
            (10.0, 25.0, 0.0002214766382487835),
            (50.0, 49.0, 0.5378956063990598),
        ] {
            assert!(
                close(gamma_q(a, x), want, 1e-10),
                "Q({a}, {x}) = {}",
                gamma_q(a, x)
            );
            assert!(close(gamma_p(a, x), 1.0 - want, 1e-9));
        }
        for (x, df, want) in [
            (3.84, 1.0, 0.05004352124870519),
            (10.0, 4.0, 0.04042768199451279),
            (0.5, 2.0, 0.7788007830714049),
            (100.0, 20.0, 1.2596084591660847e-12),
            (25.0, 20.0, 0.2014311049455359),
        ] {
            assert!(
                close(chi2_sf(x, df), want, 1e-9),
                "sf({x}, {df}) = {}",
                chi2_sf(x, df)
            );
        }
        assert_eq!(chi2_sf(0.0, 3.0), 1.0);
    }

    #[test]
    fn average_ranks_match_rankdata() {
        let ranks = average_ranks(&[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0]);
        assert_eq!(ranks, [4.0, 1.5, 5.0, 1.5, 6.5, 9.0, 3.0, 8.0, 6.5]);
    }

    fn groups() -> Vec<Vec<f64>> {
        vec![
            vec![0.1, 0.5, 0.5, 0.0, 1.0, 0.3, 0.0, 0.2],
            vec![0.2, 0.5, 0.4, 0.0, 1.0, 0.6, 0.1, 0.2],
            vec![0.3, 0.5, 0.9, 0.0, 0.5, 0.6, 0.5, 0.4],
            vec![0.3, 0.1, 0.9, 0.0, 0.9, 0.7, 0.5, 0.8],
        ]
    }

    #[test]
    fn friedman_matches_scipy_with_ties() {
        let r = friedman(&groups()).unwrap();
        assert!(close(r.statistic, 4.649999999999996, 1e-12), "{r:?}");
        assert!(close(r.p_value, 0.19929455769808013, 1e-9), "{r:?}");
        let r = friedman(&groups()[..3]).unwrap();
        assert!(close(r.statistic, 4.095238095238095, 1e-12), "{r:?}");
        assert!(close(r.p_value, 0.12904178044763628, 1e-9), "{r:?}");
        // All questions tied across strategies: no evidence at all.
        let flat = vec![vec![0.5; 4]; 3];
        assert_eq!(friedman(&flat).unwrap().p_value, 1.0);
        assert!(matches!(
            friedman(&groups()[..2]),
            Err(StatsError::TooFew { .. })
        ));
        assert_eq!(
            friedman(&[vec![1.0], vec![1.0, 2.0], vec![1.0]]),
            Err(StatsError::Unpaired(1, 2))
        );
    }

    #[test]
    fn permutation_test_approaches_the_exact_p_value() {
        let a = [0.5, 1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0];
        let b = [0.0, 1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.5, 0.5];
        // Exact over all 1024 sign patterns (and scipy's exact permutation_test): 0.0625.
        let r = paired_permutation_test(&a, &b, 20_000, 42).unwrap();
        assert!((r.p_value - 0.0625).abs() < 0.006, "{r:?}");
        assert!((r.statistic - 0.3).abs() < 1e-12);
        // Same seed, same answer; identical samples are never significant.
        assert_eq!(r, paired_permutation_test(&a, &b, 20_000, 42).unwrap());
        assert_eq!(
            paired_permutation_test(&a, &a, 999, 1).unwrap().p_value,
            1.0
        );
        assert!(paired_permutation_test(&a, &b[..3], 10, 1).is_err());
    }

    #[test]
    fn holm_adjusts_step_down_and_stays_monotone() {
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        // Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 → max(0.06, 0.04) = 0.06.
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adjusted.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.6, 0.9]), [1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bootstrap_ci_brackets_the_mean_at_the_normal_width() {
        let mut rng = SplitMix64::new(5);
        let values: Vec<f64> = (0..400).map(|_| rng.normal()).collect();
        let mean = values.iter().sum::<f64>() / 400.0;
        let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 399.0).sqrt();
        let (lo, hi) = bootstrap_ci(&values, 0.95, 4000, 9).unwrap();
        assert!(lo < mean && mean < hi);
        // The normal approximation gives ±1.96 sd / √n.
        let half = 1.96 * sd / 20.0;
        assert!(
            ((hi - lo) / 2.0 - half).abs() < 0.1 * half,
            "[{lo}, {hi}] vs ±{half}"
        );
        assert_eq!((lo, hi), bootstrap_ci(&values, 0.95, 4000, 9).unwrap());
        assert_eq!(
            bootstrap_ci(&[0.25; 10], 0.95, 100, 1).unwrap(),
            (0.25, 0.25)
        );
        assert!(bootstrap_ci(&[], 0.95, 100, 1).is_err());
    }
}
