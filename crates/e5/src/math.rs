//! Numeric kernels of the encoders: a parallel `X · Wᵀ + b`, LayerNorm, exact (erf) GELU for e5 and tanh GELU for Gemma.
//!
//! The 4-bit weights are dequantised to f32 once at load, so every matrix product is a plain sgemm
//! (`matrixmultiply`, which picks AVX-512/AVX2/FMA kernels at run time). Rows of `X` are split into one block per
//! thread of the rayon pool: sgemm packs `W` once per call, so many small blocks would spend their time packing
//! (17 % of a profile with 64-row blocks).

use rayon::prelude::*;

/// A dense linear layer `y = x · Wᵀ + b` with `W` stored row-major as `[out, in]`.
pub struct Linear {
    /// The weights, `[out, in]` row-major.
    pub w: Vec<f32>,
    /// The bias, one per output.
    pub b: Vec<f32>,
    /// Input width.
    pub n_in: usize,
    /// Output width.
    pub n_out: usize,
}

/// Fewest rows worth a call of their own (below this, one thread does the whole product).
const MIN_ROWS_PER_TASK: usize = 32;

impl Linear {
    /// `y[t, :] = x[t, :] · Wᵀ + b` for all `t` rows of `x` (`x.len() = t × n_in`, `y.len() = t × n_out`).
    pub fn forward(&self, x: &[f32], y: &mut [f32]) {
        let t = x.len() / self.n_in;
        debug_assert_eq!(y.len(), t * self.n_out);
        let per = t
            .div_ceil(rayon::current_num_threads())
            .max(MIN_ROWS_PER_TASK);
        x.par_chunks(per * self.n_in)
            .zip(y.par_chunks_mut(per * self.n_out))
            .for_each(|(xc, yc)| {
                let rows = xc.len() / self.n_in;
                for row in yc.chunks_exact_mut(self.n_out) {
                    row.copy_from_slice(&self.b);
                }
                // SAFETY: the pointers and strides describe `xc` ([rows, n_in] row-major), `W` read as its transpose
                // ([n_in, n_out] with column stride n_in) and `yc` ([rows, n_out] row-major), all in bounds.
                unsafe {
                    matrixmultiply::sgemm(
                        rows,
                        self.n_in,
                        self.n_out,
                        1.0,
                        xc.as_ptr(),
                        self.n_in as isize,
                        1,
                        self.w.as_ptr(),
                        1,
                        self.n_in as isize,
                        1.0,
                        yc.as_mut_ptr(),
                        self.n_out as isize,
                        1,
                    );
                }
            });
    }
}

/// `x = LayerNorm(x + y)` row by row (`y = None`: `LayerNorm(x)`), with weight `w`, bias `b` and epsilon `eps`.
pub fn add_layer_norm(x: &mut [f32], y: Option<&[f32]>, w: &[f32], b: &[f32], eps: f32) {
    let h = w.len();
    let norm = |row: &mut [f32], add: Option<&[f32]>| {
        if let Some(add) = add {
            row.iter_mut().zip(add).for_each(|(r, a)| *r += a);
        }
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((r, w), b) in row.iter_mut().zip(w).zip(b) {
            *r = (*r - mean) * inv * w + b;
        }
    };
    match y {
        Some(y) => x
            .par_chunks_mut(h)
            .zip(y.par_chunks(h))
            .for_each(|(r, a)| norm(r, Some(a))),
        None => x.par_chunks_mut(h).for_each(|r| norm(r, None)),
    }
}

/// Exact GELU as BERT uses it, `x · Φ(x) = 0.5 x (1 + erf(x / √2))`, over a slice.
///
/// erf is a rational approximation in f32 (odd degree-13 numerator over an even degree-8 denominator on
/// [-4, 4], saturating beyond): absolute error below 4e-7 against the f64 reference, branch-free so the loop
/// vectorises. The former scalar f64 erf took 22 % of the encoder's time.
pub fn gelu_in_place(xs: &mut [f32]) {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329_2e-3,
        -1.426_473_9e-2,
    ];
    for v in xs {
        let x = (*v * std::f32::consts::FRAC_1_SQRT_2).clamp(-4.0, 4.0);
        let x2 = x * x;
        let p = ALPHA[1..].iter().fold(ALPHA[0], |p, &c| p * x2 + c) * x;
        let q = BETA[1..].iter().fold(BETA[0], |q, &c| q * x2 + c);
        *v = 0.5 * *v * (1.0 + p / q);
    }
}

/// Mean pooling: for each `(start row, rows)` span of the `[tokens, width]` matrix `x`, the mean of its rows.
pub fn mean_rows(x: &[f32], width: usize, spans: &[(usize, usize)]) -> Vec<Vec<f32>> {
    spans
        .par_iter()
        .map(|&(start, len)| {
            let mut mean = vec![0.0f32; width];
            for row in x[start * width..(start + len) * width].chunks_exact(width) {
                mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
            }
            mean.iter_mut().for_each(|m| *m /= len as f32);
            mean
        })
        .collect()
}

/// Softmax of one row of attention scores, in place (`-inf` entries get weight 0).
pub fn softmax_in_place(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// Scaled dot-product attention of one head over one sequence: `q`, `k` and `v` start at the sequence's first
/// row of this head and have `len` rows of `hd` values, `stride` apart; a pair `(i, j)` for which `keep` is false
/// is masked out. Returns the head's `[len, hd]` output.
pub fn attend(
    (q, k, v): (&[f32], &[f32], &[f32]),
    len: usize,
    hd: usize,
    stride: usize,
    scale: f32,
    keep: impl Fn(usize, usize) -> bool,
) -> Vec<f32> {
    assert!(len == 0 || [q, k, v].iter().all(|m| m.len() >= (len - 1) * stride + hd));
    let mut scores = vec![0.0f32; len * len];
    let mut out = vec![0.0f32; len * hd];
    let rs = stride as isize;
    // SAFETY: q, k and v are [len, hd] views with row stride `stride` inside their slices (asserted above);
    // `scores` is [len, len] and `out` [len, hd], both contiguous.
    unsafe {
        matrixmultiply::sgemm(
            len,
            hd,
            len,
            scale,
            q.as_ptr(),
            rs,
            1,
            k.as_ptr(),
            1,
            rs,
            0.0,
            scores.as_mut_ptr(),
            len as isize,
            1,
        );
    }
    for (i, row) in scores.chunks_exact_mut(len).enumerate() {
        for (j, s) in row.iter_mut().enumerate() {
            if !keep(i, j) {
                *s = f32::NEG_INFINITY;
            }
        }
        softmax_in_place(row);
    }
    // SAFETY: as above.
    unsafe {
        matrixmultiply::sgemm(
            len,
            len,
            hd,
            1.0,
            scores.as_ptr(),
            len as isize,
            1,
            v.as_ptr(),
            rs,
            1,
            0.0,
            out.as_mut_ptr(),
            hd as isize,
            1,
        );
    }
    out
}

/// GELU in its tanh form, `0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))` (Gemma's `gelu_pytorch_tanh`), over a
/// slice. tanh is written with one `exp` of a non-positive argument, so it cannot overflow.
pub fn gelu_tanh_in_place(xs: &mut [f32]) {
    const C: f32 = 0.797_884_6; // √(2/π)
    for v in xs {
        let x = *v;
        let u = C * (x + 0.044_715 * x * x * x);
        let e = (-2.0 * u.abs()).exp();
        let tanh = ((1.0 - e) / (1.0 + e)).copysign(u);
        *v = 0.5 * x * (1.0 + tanh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference error function: W. J. Cody's rational approximations in f64 (relative error < 1e-15); Rust's std
    /// has no `erf`.
    #[allow(clippy::excessive_precision)] // the published coefficients, kept verbatim
    fn erf(x: f64) -> f64 {
        let ax = x.abs();
        let r = if ax < 0.5 {
            const P: [f64; 5] = [
                3.161_123_743_870_565_6,
                113.864_154_151_050_16,
                377.485_237_685_302_02,
                3_209.377_589_138_469_5,
                0.185_777_706_184_603_15,
            ];
            const Q: [f64; 4] = [
                23.601_290_952_344_122,
                244.024_637_934_444_17,
                1_282.616_526_077_372_3,
                2_844.236_833_439_170_6,
            ];
            let z = x * x;
            let num = (((P[4] * z + P[0]) * z + P[1]) * z + P[2]) * z + P[3];
            let den = (((z + Q[0]) * z + Q[1]) * z + Q[2]) * z + Q[3];
            return x * num / den;
        } else if ax < 4.0 {
            const P: [f64; 9] = [
                0.564_188_496_988_670_1,
                8.883_149_794_388_376,
                66.119_190_637_141_63,
                298.635_138_197_400_1,
                881.952_221_241_769_1,
                1_712.047_612_634_070_7,
                2_051.078_377_826_071_6,
                1_230.339_354_797_997_2,
                2.153_115_354_744_038_3e-8,
            ];
            const Q: [f64; 8] = [
                15.744_926_110_709_835,
                117.693_950_891_312_5,
                537.181_101_862_009_9,
                1_621.389_574_566_690_3,
                3_290.799_235_733_459_7,
                4_362.619_090_143_247,
                3_439.367_674_143_721_6,
                1_230.339_354_803_749_5,
            ];
            let mut num = P[8] * ax;
            let mut den = ax;
            for i in 0..7 {
                num = (num + P[i]) * ax;
                den = (den + Q[i]) * ax;
            }
            let erfc = (num + P[7]) / (den + Q[7]) * (-ax * ax).exp();
            1.0 - erfc
        } else if ax < 6.0 {
            const P: [f64; 6] = [
                0.305_326_634_961_232_36,
                0.360_344_899_949_804_4,
                0.125_781_726_111_229_26,
                0.016_083_785_148_742_275,
                6.587_491_615_298_378e-4,
                0.016_315_387_137_302_097,
            ];
            const Q: [f64; 5] = [
                2.568_520_192_289_822,
                1.872_952_849_923_460_4,
                0.527_905_102_951_428_4,
                0.060_518_341_312_441_32,
                0.002_335_204_976_268_691_8,
            ];
            let z = 1.0 / (ax * ax);
            let mut num = P[5] * z;
            let mut den = z;
            for i in 0..4 {
                num = (num + P[i]) * z;
                den = (den + Q[i]) * z;
            }
            let frac = z * (num + P[4]) / (den + Q[4]);
            let erfc = ((1.0 / std::f64::consts::PI.sqrt()) - frac) / ax * (-ax * ax).exp();
            1.0 - erfc
        } else {
            1.0
        };
        if x < 0.0 {
            -r
        } else {
            r
        }
    }

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916_018_284_9),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (3.5, 0.999_999_256_901_627_7),
            (5.0, 0.999_999_999_998_462_5),
            (-1.0, -0.842_700_792_949_714_9),
        ] {
            assert!(
                (erf(x) - want).abs() < 1e-12,
                "erf({x}) = {} want {want}",
                erf(x)
            );
        }
    }

    #[test]
    fn tanh_gelu_matches_the_f64_formula() {
        let xs: Vec<f32> = (-800..=800).map(|i| i as f32 / 50.0).collect();
        let mut ys = xs.clone();
        gelu_tanh_in_place(&mut ys);
        for (x, y) in xs.iter().zip(&ys) {
            let x = f64::from(*x);
            let want = 0.5
                * x
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh());
            assert!((f64::from(*y) - want).abs() < 2e-6, "x {x}: {y} vs {want}");
        }
    }

    #[test]
    fn gelu_matches_the_exact_f64_form() {
        let xs: Vec<f32> = (-200_000..=200_000).map(|i| i as f32 * 5e-5).collect();
        let mut got = xs.clone();
        gelu_in_place(&mut got);
        for (&x, &g) in xs.iter().zip(&got) {
            let x64 = x as f64;
            let want = 0.5 * x64 * (1.0 + erf(x64 * std::f64::consts::FRAC_1_SQRT_2));
            assert!(
                (g as f64 - want).abs() < 2e-6,
                "gelu({x}) = {g}, want {want}"
            );
        }
        let mut one = [1.0f32];
        gelu_in_place(&mut one);
        assert!((one[0] - 0.841_344_7).abs() < 1e-6);
    }

    #[test]
    fn linear_matches_naive_product() {
        let (n_in, n_out, t) = (32, 5, 150);
        let w: Vec<f32> = (0..n_in * n_out)
            .map(|i| ((i * 7) % 13) as f32 - 6.0)
            .collect();
        let b: Vec<f32> = (0..n_out).map(|i| i as f32).collect();
        let x: Vec<f32> = (0..t * n_in).map(|i| ((i * 5) % 11) as f32 * 0.5).collect();
        let lin = Linear {
            w: w.clone(),
            b: b.clone(),
            n_in,
            n_out,
        };
        let mut y = vec![0.0; t * n_out];
        lin.forward(&x, &mut y);
        for r in 0..t {
            for o in 0..n_out {
                let want: f32 = b[o]
                    + (0..n_in)
                        .map(|i| x[r * n_in + i] * w[o * n_in + i])
                        .sum::<f32>();
                assert!((y[r * n_out + o] - want).abs() < 1e-3);
            }
        }
    }
}
