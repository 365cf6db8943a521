//! Int8 matrix products for the Gemma encoder: `y = x · Wᵀ` with both operands quantised symmetrically.
//!
//! **Why.** With f32 weights and sgemm the encoder spent ~88 % of its time in matrix products and reached ~240
//! tokens/s on 2 cores. An int8 product does four times the multiply-adds per instruction (AVX-512 VNNI
//! `vpdpbusd`: 64 per 512-bit instruction against 16 f32 FMAs) and the weights shrink fourfold. Weights are
//! quantised once at load time with one scale per output row; activations per input row just before each
//! product (their range changes from token to token, so one scale per row keeps the error of a quiet row small).
//!
//! **The u8 offset.** `vpdpbusd` multiplies *unsigned* bytes by signed ones, so activations are stored as
//! `q + 128` (u8) and `128 · Σₖ w[o][k]`, precomputed per output row, is subtracted from each sum.
//!
//! **Kernels.** AVX-512 VNNI where the CPU has it (detected at run time, like the search kernels), else AVX2
//! (`vpmaddubsw` on sign-adjusted operands, exact), else a portable loop. Integer sums are exact and the final
//! scaling is the same f32 expression in every kernel, so all of them return bit-identical results; the only
//! difference from f32 is the quantisation itself (parity: `tests/parity/gemma_parity.sh`).

use std::ops::Range;

use rayon::prelude::*;

/// Output rows per weight panel (one 512-bit register of i32 sums).
const PANEL: usize = 16;
/// Inputs per `vpdpbusd` lane.
const GROUP: usize = 4;
/// Bytes of one panel's group: `[PANEL rows][GROUP inputs]`.
const BLOCK: usize = PANEL * GROUP;
/// Activation rows per register tile (6 rows × 4 panels = 24 accumulators of 32 registers).
const MR: usize = 6;
/// Panels per register tile; weights are packed in groups of this many panels (padded with zero panels).
const NR: usize = 4;
/// Most activation rows per parallel task (a task's activations stay in L2 while its panels stream by).
const MAX_TASK_ROWS: usize = 192;
/// Activations are stored offset by this to be unsigned.
const OFFSET: i32 = 128;

/// Scale of a row quantised to [-127, 127] and its inverse (both 0 for an all-zero row).
fn row_scale(row: &[f32]) -> (f32, f32) {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max > 0.0 {
        (max / 127.0, 127.0 / max)
    } else {
        (0.0, 0.0)
    }
}

/// 1.5 · 2²³: adding and subtracting it rounds an f32 below 2²² to the nearest integer (ties to even), inline on
/// every x86-64 (`f32::round` is a libm call there without SSE4.1, and quantisation runs before every product).
const ROUND: f32 = 12_582_912.0;

/// `v · inv` rounded to the nearest int8 in [-127, 127].
#[inline(always)]
fn quantize(v: f32, inv: f32) -> i8 {
    ((v * inv).clamp(-127.0, 127.0) + ROUND - ROUND) as i8
}

/// Symmetric int8 quantisation of each `width`-long row: `v ≈ q · scale`.
pub(crate) fn quantize_rows(values: &[f32], width: usize) -> (Vec<i8>, Vec<f32>) {
    let mut q = vec![0i8; values.len()];
    let mut scales = vec![0f32; values.len() / width];
    q.par_chunks_mut(width)
        .zip(scales.par_iter_mut())
        .zip(values.par_chunks(width))
        .for_each(|((q, scale), row)| {
            let (s, inv) = row_scale(row);
            *scale = s;
            q.iter_mut()
                .zip(row)
                .for_each(|(q, &v)| *q = quantize(v, inv));
        });
    (q, scales)
}

/// A bias-free linear layer with int8 weights, packed for the kernels.
pub(crate) struct QLinear {
    n_in: usize,
    n_out: usize,
    /// `⌈n_in / GROUP⌉`.
    groups: usize,
    /// `⌈n_out / PANEL⌉` rounded up to a multiple of [`NR`].
    panels: usize,
    /// `[panel / NR][group][panel % NR][PANEL rows][GROUP inputs]`: a tile's weights for one group are one
    /// contiguous run. Zero-padded rows, inputs and panels.
    w: Vec<i8>,
    /// Per output row (padded with 0 to whole panels): the weight scale and `OFFSET · Σₖ w[o][k]`.
    scale: Vec<f32>,
    offset: Vec<i32>,
}

/// Activations of one product: rows of `u8` (`q + OFFSET`, zero-padded to whole groups, rows padded to a multiple
/// of [`MR`]) and one scale per row.
struct Acts {
    u: Vec<u8>,
    scale: Vec<f32>,
    stride: usize,
}

impl Acts {
    fn quantize(x: &[f32], n_in: usize, groups: usize) -> Acts {
        let rows = x.len() / n_in;
        let stride = groups * GROUP;
        let mut u = vec![OFFSET as u8; rows.next_multiple_of(MR) * stride];
        let mut scale = vec![0f32; rows];
        u.par_chunks_mut(stride)
            .zip(scale.par_iter_mut())
            .zip(x.par_chunks(n_in))
            .for_each(|((u, scale), row)| {
                let (s, inv) = row_scale(row);
                *scale = s;
                u.iter_mut()
                    .zip(row)
                    .for_each(|(u, &v)| *u = (i32::from(quantize(v, inv)) + OFFSET) as u8);
            });
        Acts { u, scale, stride }
    }
}

/// The output matrix, written by several tasks at disjoint (row, column) cells.
#[derive(Clone, Copy)]
struct Out(*mut f32);
// SAFETY: tasks write disjoint cells of one live `&mut [f32]` (see `QLinear::forward_with`).
unsafe impl Send for Out {}
unsafe impl Sync for Out {}

/// A matrix-product kernel; all return bit-identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// AVX-512 F/BW + VNNI (`vpdpbusd`).
    #[cfg(target_arch = "x86_64")]
    Vnni,
    /// AVX2 `vpmaddubsw` on signed activations (exact, see [`avx2::run`]).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Portable,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
            {
                return Kernel::Vnni;
            }
            if std::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Portable
    }

    /// # Safety
    /// The CPU supports the kernel's instructions; `rows` lie within `a`'s rows and `panels` within `l`'s; `y`
    /// points at a `rows.end × l.n_out` row-major matrix that nothing else reads or writes at these cells.
    unsafe fn run(self, l: &QLinear, a: &Acts, rows: Range<usize>, panels: Range<usize>, y: Out) {
        unsafe {
            match self {
                #[cfg(target_arch = "x86_64")]
                Kernel::Vnni => vnni::run(l, a, rows, panels, y),
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 => avx2::run(l, a, rows, panels, y),
                Kernel::Portable => run_portable(l, a, rows, panels, y),
            }
        }
    }
}

impl QLinear {
    /// Quantises `w` (`[n_out, n_in]` row-major, as PyTorch stores a linear layer) and packs it.
    pub(crate) fn new(w: &[f32], n_out: usize, n_in: usize) -> QLinear {
        assert_eq!(w.len(), n_out * n_in, "weight shape");
        let (q, s) = quantize_rows(w, n_in);
        let groups = n_in.div_ceil(GROUP);
        let panels = n_out.div_ceil(PANEL).next_multiple_of(NR);
        let mut packed = vec![0i8; panels * groups * BLOCK];
        packed
            .par_chunks_mut(NR * groups * BLOCK)
            .enumerate()
            .for_each(|(tile, dst)| {
                let rows = q
                    .chunks_exact(n_in)
                    .skip(tile * NR * PANEL)
                    .take(NR * PANEL);
                for (j, row) in rows.enumerate() {
                    for (k, &v) in row.iter().enumerate() {
                        dst[(k / GROUP * NR * PANEL + j) * GROUP + k % GROUP] = v;
                    }
                }
            });
        let mut scale = s;
        scale.resize(panels * PANEL, 0.0);
        let mut offset: Vec<i32> = q
            .chunks_exact(n_in)
            .map(|row| OFFSET * row.iter().map(|&v| i32::from(v)).sum::<i32>())
            .collect();
        offset.resize(panels * PANEL, 0);
        QLinear {
            n_in,
            n_out,
            groups,
            panels,
            w: packed,
            scale,
            offset,
        }
    }

    /// `y[t, :] = x[t, :] · Wᵀ` for all `t` rows of `x` (`x.len() = t × n_in`, `y.len() = t × n_out`).
    pub(crate) fn forward(&self, x: &[f32], y: &mut [f32]) {
        self.forward_with(Kernel::detect(), x, y);
    }

    fn forward_with(&self, kernel: Kernel, x: &[f32], y: &mut [f32]) {
        let t = x.len() / self.n_in;
        assert_eq!(x.len(), t * self.n_in, "input shape");
        assert_eq!(y.len(), t * self.n_out, "output shape");
        let acts = Acts::quantize(x, self.n_in, self.groups);
        // Tasks: row chunks (multiples of MR) and, when there are fewer chunks than threads (a short text
        // alone), panel ranges too.
        let threads = rayon::current_num_threads();
        let per = t
            .div_ceil(threads)
            .next_multiple_of(MR)
            .clamp(MR, MAX_TASK_ROWS);
        let row_chunks = t.div_ceil(per);
        let splits = threads
            .div_ceil(row_chunks.max(1))
            .min(self.panels.div_ceil(NR))
            .max(1);
        let panels_per = self.panels.div_ceil(splits).next_multiple_of(NR);
        let tasks: Vec<(Range<usize>, Range<usize>)> = (0..row_chunks)
            .flat_map(|r| {
                (0..self.panels).step_by(panels_per).map(move |p| {
                    (
                        r * per..(r * per + per).min(t),
                        p..(p + panels_per).min(self.panels),
                    )
                })
            })
            .collect();
        let out = Out(y.as_mut_ptr());
        tasks.into_par_iter().for_each(|(rows, panels)| {
            // SAFETY: `kernel` is `detect()`ed or, in tests, one of `available()`; the tasks' (rows, panels)
            // rectangles are disjoint and inside `acts` and `self`; `y` is `t × n_out` and borrowed mutably
            // for the whole call.
            unsafe { kernel.run(self, &acts, rows, panels, out) }
        });
    }
}

/// Writes `sums` (`Σₖ q·w`, one panel of one row) to `y`: `sum · (weight scale · activation scale)`.
#[inline(always)]
unsafe fn store(l: &QLinear, a: &Acts, t: usize, p: usize, sums: &[i32; PANEL], y: Out) {
    unsafe {
        for (j, &sum) in sums.iter().enumerate() {
            let o = p * PANEL + j;
            if o < l.n_out {
                *y.0.add(t * l.n_out + o) = sum as f32 * (l.scale[o] * a.scale[t]);
            }
        }
    }
}

/// The plain loop every other kernel must equal.
unsafe fn run_portable(l: &QLinear, a: &Acts, rows: Range<usize>, panels: Range<usize>, y: Out) {
    unsafe {
        for p in panels {
            let w = &l.w[(p / NR * l.groups * NR + p % NR) * BLOCK..];
            for t in rows.clone() {
                let x = &a.u[t * a.stride..][..a.stride];
                let mut sums = [0i32; PANEL];
                for (xg, wg) in x.chunks_exact(GROUP).zip(w.chunks(NR * BLOCK)) {
                    for (sum, wj) in sums.iter_mut().zip(wg[..BLOCK].chunks_exact(GROUP)) {
                        *sum += xg
                            .iter()
                            .zip(wj)
                            .map(|(&x, &w)| (i32::from(x) - OFFSET) * i32::from(w))
                            .sum::<i32>();
                    }
                }
                store(l, a, t, p, &sums, y);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::{store, Acts, Out, QLinear, BLOCK, GROUP, MR, NR, PANEL};

    /// Rows per tile (a divisor of [`MR`], so tiles never cross the activations' padding).
    const ROWS: usize = 3;
    const _: () = assert!(MR.is_multiple_of(ROWS));

    /// Without VNNI: `vpmaddubsw` multiplies u8 by i8 and adds pairs into i16, saturating. Exact with signed
    /// activations `x` (the stored `u8 ^ 0x80`) as `|x| · (w · sign x)`: each pair is at most 2 · 127 · 127 =
    /// 32,258 < 32,767. `vpmaddwd` by ones then adds pairs into i32: `Σₖ x·w` directly, no offset.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run(
        l: &QLinear,
        a: &Acts,
        rows: Range<usize>,
        panels: Range<usize>,
        y: Out,
    ) {
        unsafe {
            let ones = _mm256_set1_epi16(1);
            let flip = _mm256_set1_epi8(-128);
            for p in panels {
                let w = l.w.as_ptr().add((p / NR * l.groups * NR + p % NR) * BLOCK);
                for t0 in rows.clone().step_by(ROWS) {
                    let mut acc = [[_mm256_setzero_si256(); 2]; ROWS];
                    for g in 0..l.groups {
                        let wp = w.add(g * NR * BLOCK);
                        let w0 = _mm256_loadu_si256(wp.cast());
                        let w1 = _mm256_loadu_si256(wp.add(BLOCK / 2).cast());
                        for (r, acc) in acc.iter_mut().enumerate() {
                            let bytes =
                                a.u.as_ptr()
                                    .add((t0 + r) * a.stride + g * GROUP)
                                    .cast::<i32>()
                                    .read_unaligned();
                            let x = _mm256_xor_si256(_mm256_set1_epi32(bytes), flip);
                            let ax = _mm256_abs_epi8(x);
                            let d0 = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(w0, x));
                            let d1 = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(w1, x));
                            acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(d0, ones));
                            acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(d1, ones));
                        }
                    }
                    for (r, acc) in acc.iter().enumerate() {
                        if t0 + r >= rows.end {
                            break;
                        }
                        let mut sums = [0i32; PANEL];
                        _mm256_storeu_si256(sums.as_mut_ptr().cast(), acc[0]);
                        _mm256_storeu_si256(sums.as_mut_ptr().add(PANEL / 2).cast(), acc[1]);
                        store(l, a, t0 + r, p, &sums, y);
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::{Acts, Out, QLinear, BLOCK, GROUP, MR, NR, PANEL};

    const _: () = assert!(
        MR == 6 && NR == 4,
        "the tile below is written out for 6 × 4"
    );

    /// Tiles of [`MR`] rows × [`NR`] panels; `rows.start` is a multiple of `MR` and `panels` of `NR` (the
    /// activations and weights are padded to whole tiles).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn run(
        l: &QLinear,
        a: &Acts,
        rows: Range<usize>,
        panels: Range<usize>,
        y: Out,
    ) {
        unsafe {
            for p in panels.step_by(NR) {
                for t in rows.clone().step_by(MR) {
                    tile(l, a, t, rows.end, p, y);
                }
            }
        }
    }

    /// One tile: 24 accumulators in registers, named (arrays of vectors were spilled to the stack).
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn tile(l: &QLinear, a: &Acts, t0: usize, t_end: usize, p0: usize, y: Out) {
        unsafe {
            let w = l.w.as_ptr().add(p0 * l.groups * BLOCK);
            let x = a.u.as_ptr().add(t0 * a.stride);
            let s = a.stride;
            let z = _mm512_setzero_si512();
            let [mut c00, mut c01, mut c02, mut c03] = [z; NR];
            let [mut c10, mut c11, mut c12, mut c13] = [z; NR];
            let [mut c20, mut c21, mut c22, mut c23] = [z; NR];
            let [mut c30, mut c31, mut c32, mut c33] = [z; NR];
            let [mut c40, mut c41, mut c42, mut c43] = [z; NR];
            let [mut c50, mut c51, mut c52, mut c53] = [z; NR];
            for g in 0..l.groups {
                let wp = w.add(g * NR * BLOCK);
                let w0 = _mm512_loadu_si512(wp.cast());
                let w1 = _mm512_loadu_si512(wp.add(BLOCK).cast());
                let w2 = _mm512_loadu_si512(wp.add(2 * BLOCK).cast());
                let w3 = _mm512_loadu_si512(wp.add(3 * BLOCK).cast());
                let xp = x.add(g * GROUP);
                macro_rules! row {
                    ($r:expr, $c0:ident, $c1:ident, $c2:ident, $c3:ident) => {
                        let b = _mm512_set1_epi32(xp.add($r * s).cast::<i32>().read_unaligned());
                        $c0 = _mm512_dpbusd_epi32($c0, b, w0);
                        $c1 = _mm512_dpbusd_epi32($c1, b, w1);
                        $c2 = _mm512_dpbusd_epi32($c2, b, w2);
                        $c3 = _mm512_dpbusd_epi32($c3, b, w3);
                    };
                }
                row!(0, c00, c01, c02, c03);
                row!(1, c10, c11, c12, c13);
                row!(2, c20, c21, c22, c23);
                row!(3, c30, c31, c32, c33);
                row!(4, c40, c41, c42, c43);
                row!(5, c50, c51, c52, c53);
            }
            let acc: [[__m512i; NR]; MR] = [
                [c00, c01, c02, c03],
                [c10, c11, c12, c13],
                [c20, c21, c22, c23],
                [c30, c31, c32, c33],
                [c40, c41, c42, c43],
                [c50, c51, c52, c53],
            ];
            for (r, acc) in acc.iter().enumerate() {
                let t = t0 + r;
                if t >= t_end {
                    break;
                }
                let sx = _mm512_set1_ps(a.scale[t]);
                for (n, &acc) in acc.iter().enumerate() {
                    let o = (p0 + n) * PANEL;
                    if o >= l.n_out {
                        break;
                    }
                    let sums =
                        _mm512_sub_epi32(acc, _mm512_loadu_si512(l.offset.as_ptr().add(o).cast()));
                    let s = _mm512_mul_ps(_mm512_loadu_ps(l.scale.as_ptr().add(o)), sx);
                    let v = _mm512_mul_ps(_mm512_cvtepi32_ps(sums), s);
                    let valid = (l.n_out - o).min(PANEL);
                    let mask = (((1u32 << valid) - 1) & 0xffff) as __mmask16;
                    _mm512_mask_storeu_ps(y.0.add(t * l.n_out + o), mask, v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64: seeded, reproducible test data without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            (z >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
        fn matrix(&mut self, len: usize) -> Vec<f32> {
            (0..len).map(|_| self.next()).collect()
        }
    }

    fn available() -> Vec<Kernel> {
        let mut kernels = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                kernels.push(Kernel::Avx2);
            }
            if std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vnni")
            {
                kernels.push(Kernel::Vnni);
            }
        }
        kernels
    }

    /// Sizes that are not multiples of the panel, group or tile: tails everywhere.
    const SHAPES: [(usize, usize, usize); 7] = [
        (1, 1, 1),
        (1, 5, 17),
        (5, 3, 70),
        (7, 101, 33),
        (13, 63, 15),
        (50, 257, 129),
        (389, 96, 48),
    ];

    /// Against f64 products of the f32 inputs: each output's error stays below the bound that rounding both
    /// operands to half a step each allows, `Σₖ |x|·sw/2 + |w|·sx/2 + sx·sw/4` (plus 1e-5 relative for f32
    /// arithmetic), and whole output rows keep a cosine ≥ 0.9995 (over 96+ inputs).
    #[test]
    fn int8_product_matches_f32_within_quantisation_error() {
        let mut rng = Rng(7);
        for (t, n_in, n_out) in SHAPES {
            let x = rng.matrix(t * n_in);
            let w = rng.matrix(n_out * n_in);
            let l = QLinear::new(&w, n_out, n_in);
            let mut y = vec![0f32; t * n_out];
            l.forward(&x, &mut y);
            for (ti, xr) in x.chunks_exact(n_in).enumerate() {
                let sx = row_scale(xr).0;
                let (mut dot, mut norm_y, mut norm_r) = (0f64, 0f64, 0f64);
                for (o, wr) in w.chunks_exact(n_in).enumerate() {
                    let sw = row_scale(wr).0;
                    let exact: f64 = xr
                        .iter()
                        .zip(wr)
                        .map(|(&a, &b)| f64::from(a) * f64::from(b))
                        .sum();
                    let bound: f64 = xr
                        .iter()
                        .zip(wr)
                        .map(|(&a, &b)| {
                            f64::from(a.abs() * sw + b.abs() * sx) / 2.0 + f64::from(sx * sw) / 4.0
                        })
                        .sum::<f64>()
                        + 1e-5 * exact.abs();
                    let got = f64::from(y[ti * n_out + o]);
                    assert!(
                        (got - exact).abs() <= bound,
                        "{t}×{n_in}→{n_out} row {ti} out {o}: {got} vs {exact}, bound {bound}"
                    );
                    dot += got * exact;
                    norm_y += got * got;
                    norm_r += exact * exact;
                }
                if n_in >= 96 {
                    let cos = dot / (norm_y.sqrt() * norm_r.sqrt());
                    assert!(cos >= 0.9995, "{t}×{n_in}→{n_out} row {ti}: cosine {cos}");
                }
            }
        }
    }

    #[test]
    fn every_kernel_equals_the_portable_one_bit_for_bit() {
        let kernels = available();
        eprintln!("kernels on this CPU: {kernels:?}");
        let mut rng = Rng(11);
        for (t, n_in, n_out) in SHAPES {
            let x = rng.matrix(t * n_in);
            let l = QLinear::new(&rng.matrix(n_out * n_in), n_out, n_in);
            let mut reference = vec![f32::NAN; t * n_out];
            l.forward_with(Kernel::Portable, &x, &mut reference);
            assert!(reference.iter().all(|v| v.is_finite()));
            for &kernel in &kernels {
                let mut y = vec![f32::NAN; t * n_out];
                l.forward_with(kernel, &x, &mut y);
                let same = y
                    .iter()
                    .zip(&reference)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(
                    same,
                    "{kernel:?} differs from the portable kernel at {t}×{n_in}→{n_out}"
                );
            }
        }
    }

    /// Each row is quantised and multiplied on its own, so a text's vector does not depend on its batch (the
    /// embedding cache relies on that): any row of a 389-row product equals the product of that row alone.
    #[test]
    fn a_row_gives_the_same_result_alone_and_in_a_batch() {
        let mut rng = Rng(5);
        let (t, n_in, n_out) = (389, 70, 50);
        let x = rng.matrix(t * n_in);
        let l = QLinear::new(&rng.matrix(n_out * n_in), n_out, n_in);
        let mut batch = vec![0f32; t * n_out];
        l.forward(&x, &mut batch);
        for r in [0, 5, 6, 191, 388] {
            let mut alone = vec![0f32; n_out];
            l.forward(&x[r * n_in..][..n_in], &mut alone);
            assert_eq!(alone, batch[r * n_out..][..n_out], "row {r}");
        }
    }

    #[test]
    fn zero_rows_give_zero_outputs() {
        let mut rng = Rng(3);
        let (n_in, n_out) = (37, 21);
        let mut w = rng.matrix(n_out * n_in);
        w[..n_in].fill(0.0);
        let l = QLinear::new(&w, n_out, n_in);
        let mut x = rng.matrix(3 * n_in);
        x[n_in..2 * n_in].fill(0.0);
        let mut y = vec![f32::NAN; 3 * n_out];
        l.forward(&x, &mut y);
        for (t, row) in y.chunks_exact(n_out).enumerate() {
            assert_eq!(row[0], 0.0, "zero weight row, input row {t}");
            if t == 1 {
                assert!(row.iter().all(|&v| v == 0.0), "zero input row: {row:?}");
            }
        }
    }
}
