//! Int8 embedding matrices: the storage format of dense bundles and the hot loop of exact search.
//!
//! Embeddings are L2-normalised, so every component lies in [-1, 1] and a symmetric per-vector scale
//! (`max |x| / 127`) keeps almost all of f32's ranking quality at a quarter of the size; scores of int8 rows
//! against an int8 query are integer dot products, the cheapest thing a CPU (or wasm SIMD) can do per byte.
//!
//! The kernels are plain Rust written so that LLVM vectorises them: the integer ones as widening
//! `i16 × i16 → i32` reductions (which become `pmaddwd`), the f32 one with independent accumulator lanes (no
//! loop-carried dependency on one sum). On x86-64 an AVX2 build of the same code is picked at run time. The
//! browser's wasm is built for size, where LLVM does not vectorise, so there the integer kernel is written out
//! in wasm SIMD (`simd128`); every kernel returns exactly the plain reduction's sums.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a matrix could not be made.
#[derive(Debug, Error, PartialEq)]
pub enum VectorError {
    /// A row or query had the wrong length.
    #[error("vector of dimension {got}, expected {expected}")]
    Dimension {
        /// The matrix's dimension.
        expected: u32,
        /// The offending length.
        got: usize,
    },
    /// Stored values and scales disagree.
    #[error("{values} values and {scales} scales do not make rows of dimension {dim}")]
    Shape {
        /// Dimension.
        dim: u32,
        /// Number of values.
        values: usize,
        /// Number of scales.
        scales: usize,
    },
    /// A value was NaN or infinite.
    #[error("row {row} holds a value that is not finite")]
    NotFinite {
        /// The row.
        row: usize,
    },
}

/// Symmetrically quantised vectors, row-major: row `i` is `values[i * dim..(i + 1) * dim] * scales[i]`.
///
/// Scales are half-precision values (held as f32): a half's 11-bit mantissa is far finer than the int8 steps it
/// scales, and it saves 2 of the 388 bytes per vector on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RawInt8Vectors", try_from = "RawInt8Vectors")]
pub struct Int8Vectors {
    dim: u32,
    values: Vec<i8>,
    scales: Vec<f32>,
}

/// The serialised form, validated into [`Int8Vectors`]; scales as IEEE half bits, little-endian.
#[derive(Clone, Serialize, Deserialize)]
struct RawInt8Vectors {
    dim: u32,
    #[serde(with = "paragraf_format::bytes::signed")]
    values: Vec<i8>,
    scales: Vec<[u8; 2]>,
}

impl From<Int8Vectors> for RawInt8Vectors {
    fn from(v: Int8Vectors) -> Self {
        RawInt8Vectors {
            dim: v.dim,
            values: v.values,
            scales: v
                .scales
                .iter()
                .map(|&s| half_at_least(s).expect("scales are halves").to_le_bytes())
                .collect(),
        }
    }
}

impl TryFrom<RawInt8Vectors> for Int8Vectors {
    type Error = VectorError;
    fn try_from(raw: RawInt8Vectors) -> Result<Self, VectorError> {
        let scales = raw
            .scales
            .iter()
            .map(|&b| half_to_f32(u16::from_le_bytes(b)))
            .collect();
        Self::from_parts(raw.dim, raw.values, scales)
    }
}

/// The bits of the smallest positive IEEE half that is `>= x` (`x >= 0`; below the smallest normal half, that
/// one), or `None` beyond the largest half (65504).
fn half_at_least(x: f32) -> Option<u16> {
    const SMALLEST_NORMAL: u16 = 0x0400; // 2^-14
    if x <= half_to_f32(SMALLEST_NORMAL) {
        return Some(SMALLEST_NORMAL);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    if exponent >= 31 {
        return None;
    }
    let mantissa = bits & 0x7f_ffff;
    // A carry out of the mantissa correctly bumps the exponent.
    let half = ((exponent as u32) << 10 | mantissa >> 13) + u32::from(mantissa & 0x1fff != 0);
    (half < 0x7c00).then_some(half as u16)
}

/// An IEEE half's value (infinities and NaN included, so that validation can reject them).
fn half_to_f32(half: u16) -> f32 {
    let sign = if half & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((half >> 10) & 0x1f);
    let mantissa = f32::from(half & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        31 if mantissa == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f32.powi(e - 15),
    }
}

/// One vector quantised: its int8 values and scale.
pub fn quantize(row: &[f32]) -> (Vec<i8>, f32) {
    let max = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let values = row
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (values, scale)
}

impl Int8Vectors {
    /// An empty matrix of dimension `dim`.
    pub fn new(dim: u32) -> Self {
        Self {
            dim,
            values: Vec::new(),
            scales: Vec::new(),
        }
    }

    /// Quantises f32 rows (normally L2-normalised embeddings).
    pub fn from_f32_rows<R: AsRef<[f32]>>(dim: u32, rows: &[R]) -> Result<Self, VectorError> {
        let mut vectors = Self::new(dim);
        for row in rows {
            vectors.push(row.as_ref())?;
        }
        Ok(vectors)
    }

    /// Validates stored parts.
    fn from_parts(dim: u32, values: Vec<i8>, scales: Vec<f32>) -> Result<Self, VectorError> {
        if dim == 0 || values.len() != scales.len() * dim as usize {
            return Err(VectorError::Shape {
                dim,
                values: values.len(),
                scales: scales.len(),
            });
        }
        if let Some(row) = scales.iter().position(|s| !s.is_finite() || *s < 0.0) {
            return Err(VectorError::NotFinite { row });
        }
        Ok(Self {
            dim,
            values,
            scales,
        })
    }

    /// Appends one f32 row.
    pub fn push(&mut self, row: &[f32]) -> Result<(), VectorError> {
        self.check_dim(row.len())?;
        if !row.iter().all(|x| x.is_finite()) {
            return Err(VectorError::NotFinite { row: self.len() });
        }
        let max = row.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let scale = match max {
            0.0 => 1.0,
            max => half_at_least(max / 127.0)
                .map(half_to_f32)
                .ok_or(VectorError::NotFinite { row: self.len() })?,
        };
        self.values.extend(
            row.iter()
                .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8),
        );
        self.scales.push(scale);
        Ok(())
    }

    /// Errors unless `len` is the dimension.
    pub fn check_dim(&self, len: usize) -> Result<(), VectorError> {
        if len == self.dim as usize {
            Ok(())
        } else {
            Err(VectorError::Dimension {
                expected: self.dim,
                got: len,
            })
        }
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.dim as usize
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// The int8 values of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[i8] {
        let d = self.dim as usize;
        &self.values[i * d..(i + 1) * d]
    }

    /// The scale of row `i`.
    #[inline]
    pub fn scale(&self, i: usize) -> f32 {
        self.scales[i]
    }

    /// Row `i` back in f32.
    pub fn dequantize_row(&self, i: usize) -> Vec<f32> {
        let s = self.scales[i];
        self.row(i).iter().map(|&v| f32::from(v) * s).collect()
    }

    /// `query · row i` for an f32 query.
    #[inline]
    pub fn dot_f32(&self, query: &[f32], i: usize) -> f32 {
        dot_f32_i8(query, self.row(i)) * self.scales[i]
    }

    /// `query · row i` for a quantised query `(values, scale)`.
    #[inline]
    pub fn dot_i8(&self, query: &[i8], query_scale: f32, i: usize) -> f32 {
        dot_i8(query, self.row(i)) as f32 * query_scale * self.scales[i]
    }

    /// Scores of every row against an f32 query, into `out` (cleared first).
    pub fn scores_f32(&self, query: &[f32], out: &mut Vec<f32>) -> Result<(), VectorError> {
        self.check_dim(query.len())?;
        out.clear();
        out.extend((0..self.len()).map(|i| self.dot_f32(query, i)));
        Ok(())
    }

    /// Scores of every row against an f32 query quantised to int8 first (the fast path), into `out`.
    pub fn scores_i8(&self, query: &[f32], out: &mut Vec<f32>) -> Result<(), VectorError> {
        self.check_dim(query.len())?;
        out.clear();
        self.scan_i8(query, |_, score| out.push(score));
        Ok(())
    }

    /// Calls `f(row, score)` for every row in order, the query quantised to int8: the hot loop of exact
    /// search. The caller has checked the query's dimension.
    ///
    /// The whole scan, `f` included, is one function compiled three times: for the baseline target and, on
    /// x86-64 CPUs with AVX-512 (BW) or AVX2 (detected at run time, cached by std), for those, where LLVM
    /// vectorises the kernel ([`dot_i16_i8`]) four or two times as wide. Dispatching once per scan rather than
    /// per row lets the kernel and `f` inline into the loop. (AVX-512 against AVX2 on the BGB `subsection`
    /// bundle, dense search + aggregation: see docs/evaluation.md, "Native search latency".)
    pub fn scan_i8(&self, query: &[f32], mut f: impl FnMut(usize, f32)) {
        debug_assert_eq!(query.len(), self.dim as usize);
        let (q, qs) = quantize(query);
        let q = widen(&q);
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512 F and BW (BW implies F), checked just above.
            unsafe { scan_avx512(&q, qs, self, &mut f) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { scan_avx2(&q, qs, self, &mut f) };
            return;
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            simd128::scan(&q, qs, self, &mut f);
            return;
        }
        #[allow(unreachable_code)]
        scan_portable(&q, qs, self, &mut f);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn scan_avx512<F: FnMut(usize, f32)>(q: &[i16], qs: f32, m: &Int8Vectors, f: &mut F) {
    scan_portable(q, qs, m, f);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2<F: FnMut(usize, f32)>(q: &[i16], qs: f32, m: &Int8Vectors, f: &mut F) {
    scan_portable(q, qs, m, f);
}

#[inline(always)]
fn scan_portable<F: FnMut(usize, f32)>(q: &[i16], qs: f32, m: &Int8Vectors, f: &mut F) {
    let rows = m.values.chunks_exact(m.dim as usize).zip(&m.scales);
    for (i, (row, s)) in rows.enumerate() {
        f(i, dot_i16_i8_inline(q, row) as f32 * qs * s);
    }
}

/// An int8 query widened to i16 once, the operand shape of the fastest kernel ([`dot_i16_i8`]).
pub fn widen(values: &[i8]) -> Vec<i16> {
    values.iter().map(|&v| i16::from(v)).collect()
}

/// `Σ q[i] * b[i]` of a widened int8 query and an int8 row, i32 accumulation.
///
/// Written as a plain widening reduction: LLVM recognises the `i16 × i16 → i32` pair sum as `pmaddwd`
/// (SSE2/AVX2), eight or sixteen multiply-adds per instruction (wasm: the `simd128` module). Measured
/// on the 5,000 × 384 scan this beat hand-unrolled lane arrays by 1.6× in both the SSE2 and the AVX2 build.
/// On x86-64 CPUs with AVX2 (detected at run time, cached by std) the AVX2 build of the same code runs.
#[inline]
pub fn dot_i16_i8(q: &[i16], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512bw") {
        // SAFETY: the CPU supports AVX-512 F and BW, checked just above.
        return unsafe { dot_i16_i8_avx512(q, b) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot_i16_i8_avx2(q, b) };
    }
    dot_i16_i8_inline(q, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn dot_i16_i8_avx512(q: &[i16], b: &[i8]) -> i32 {
    dot_i16_i8_inline(q, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i16_i8_avx2(q: &[i16], b: &[i8]) -> i32 {
    dot_i16_i8_inline(q, b)
}

/// [`dot_i16_i8`] without run-time dispatch, for loops compiled per instruction set as a whole (on wasm32 with
/// simd128, the explicit `simd128` kernel).
#[inline(always)]
pub(crate) fn dot_i16_i8_inline(q: &[i16], b: &[i8]) -> i32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd128::dot(q, b);
    #[allow(unreachable_code)]
    dot_i16_i8_portable(q, b)
}

/// The plain widening reduction every other kernel must equal.
#[inline(always)]
fn dot_i16_i8_portable(q: &[i16], b: &[i8]) -> i32 {
    debug_assert_eq!(q.len(), b.len());
    q.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(i16::from(y)))
        .sum()
}

/// The int8 kernel written out in WebAssembly SIMD (128-bit), because the browser build is optimised for size
/// (`opt-level = "z"`), which switches LLVM's loop vectoriser off: the plain reduction stayed scalar there.
///
/// Each 16-value step widens 16 row bytes to two i16x8 halves (`i16x8.extend_{low,high}_i8x16_s`) and
/// multiplies them with the widened query pairwise into i32 lanes (`i32x4.dot_i16x8_s`, `pmaddwd` on x86).
/// The scan takes four rows at a time, so each query step is loaded once for four rows and the four sums
/// are independent dependency chains. Integer arithmetic throughout: the sums equal the portable kernel's.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::Int8Vectors;
    use core::arch::wasm32::{
        i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8,
        i32x4_extract_lane, i32x4_splat, v128, v128_load,
    };

    /// Values per step: one v128 of row bytes, two of query i16s.
    const STEP: usize = 16;

    /// `acc + q[i..i + 16] · row[i..i + 16]` in four i32 lanes.
    ///
    /// SAFETY: `i + 16 <= q.len()` and `i + 16 <= row.len()`.
    #[inline(always)]
    unsafe fn step(acc: v128, q_lo: v128, q_hi: v128, row: &[i8], i: usize) -> v128 {
        // SAFETY: in bounds by the caller's promise; wasm loads need no alignment.
        let b = unsafe { v128_load(row.as_ptr().add(i).cast()) };
        let lo = i32x4_dot_i16x8(q_lo, i16x8_extend_low_i8x16(b));
        let hi = i32x4_dot_i16x8(q_hi, i16x8_extend_high_i8x16(b));
        i32x4_add(acc, i32x4_add(lo, hi))
    }

    /// The query's two i16x8 halves at step `i`.
    ///
    /// SAFETY: `i + 16 <= q.len()`.
    #[inline(always)]
    unsafe fn query_at(q: &[i16], i: usize) -> (v128, v128) {
        // SAFETY: in bounds by the caller's promise.
        unsafe {
            (
                v128_load(q.as_ptr().add(i).cast()),
                v128_load(q.as_ptr().add(i + 8).cast()),
            )
        }
    }

    /// The lanes' sum plus the scalar dot product of the values past the last whole step.
    #[inline(always)]
    fn finish(acc: v128, q: &[i16], row: &[i8]) -> i32 {
        let whole = q.len() / STEP * STEP;
        let tail: i32 = q[whole..]
            .iter()
            .zip(&row[whole..])
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        i32x4_extract_lane::<0>(acc)
            + i32x4_extract_lane::<1>(acc)
            + i32x4_extract_lane::<2>(acc)
            + i32x4_extract_lane::<3>(acc)
            + tail
    }

    /// `q · row`.
    #[inline(always)]
    pub(super) fn dot(q: &[i16], row: &[i8]) -> i32 {
        assert_eq!(q.len(), row.len());
        let mut acc = i32x4_splat(0);
        for i in (0..q.len() / STEP * STEP).step_by(STEP) {
            // SAFETY: i + 16 <= both lengths (equal, asserted above).
            unsafe {
                let (q_lo, q_hi) = query_at(q, i);
                acc = step(acc, q_lo, q_hi, row, i);
            }
        }
        finish(acc, q, row)
    }

    /// `q` against four rows of its length.
    #[inline(always)]
    fn dot4(q: &[i16], r: [&[i8]; 4]) -> [i32; 4] {
        assert!(r.iter().all(|row| row.len() == q.len()));
        let [mut a0, mut a1, mut a2, mut a3] = [i32x4_splat(0); 4];
        for i in (0..q.len() / STEP * STEP).step_by(STEP) {
            // SAFETY: i + 16 <= every length (all equal, asserted above).
            unsafe {
                let (q_lo, q_hi) = query_at(q, i);
                a0 = step(a0, q_lo, q_hi, r[0], i);
                a1 = step(a1, q_lo, q_hi, r[1], i);
                a2 = step(a2, q_lo, q_hi, r[2], i);
                a3 = step(a3, q_lo, q_hi, r[3], i);
            }
        }
        [
            finish(a0, q, r[0]),
            finish(a1, q, r[1]),
            finish(a2, q, r[2]),
            finish(a3, q, r[3]),
        ]
    }

    /// [`Int8Vectors::scan_i8`]'s loop: rows four at a time, then the rest one by one.
    #[inline(always)]
    pub(super) fn scan<F: FnMut(usize, f32)>(q: &[i16], qs: f32, m: &Int8Vectors, f: &mut F) {
        let d = m.dim as usize;
        let mut blocks = m.values.chunks_exact(4 * d);
        let mut i = 0;
        for block in &mut blocks {
            let (r0, rest) = block.split_at(d);
            let (r1, rest) = rest.split_at(d);
            let (r2, r3) = rest.split_at(d);
            for (k, dot) in dot4(q, [r0, r1, r2, r3]).into_iter().enumerate() {
                f(i + k, dot as f32 * qs * m.scales[i + k]);
            }
            i += 4;
        }
        for row in blocks.remainder().chunks_exact(d) {
            f(i, dot(q, row) as f32 * qs * m.scales[i]);
            i += 1;
        }
    }
}

/// `Σ a[i] * b[i]` of two int8 vectors, i32 accumulation (row against row, as when building HNSW); same
/// shape and dispatch as [`dot_i16_i8`], widening both operands on the fly.
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_portable(a, b)
}

#[inline(always)]
fn dot_i8_portable(a: &[i8], b: &[i8]) -> i32 {
    debug_assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(i16::from(x)) * i32::from(i16::from(y)))
        .sum()
}

/// Lanes of the f32 kernel: independent accumulators so the sum has no loop-carried dependency.
const LANES: usize = 16;

/// `Σ a[i] * b[i]` of an f32 vector and an int8 vector.
#[inline]
pub fn dot_f32_i8(a: &[f32], b: &[i8]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0f32; LANES];
    let mut ca = a.chunks_exact(LANES);
    let mut cb = b.chunks_exact(LANES);
    for (x, y) in (&mut ca).zip(&mut cb) {
        let x: &[f32; LANES] = x.try_into().expect("chunk of 16");
        let y: &[i8; LANES] = y.try_into().expect("chunk of 16");
        for l in 0..LANES {
            acc[l] += x[l] * f32::from(y[l]);
        }
    }
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| x * f32::from(y))
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// Vector storage of a strategy bundle (and of its RAPTOR summaries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VectorStore {
    /// int8 with one scale per vector (the default).
    Int8(Int8Vectors),
    /// Full precision, to measure what quantisation costs.
    F32 {
        /// Dimension.
        dim: u32,
        /// Row-major values.
        values: Vec<f32>,
    },
}

impl VectorStore {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        match self {
            VectorStore::Int8(v) => v.len(),
            VectorStore::F32 { dim, values } => values.len() / (*dim as usize).max(1),
        }
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalised(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn rows() -> Vec<Vec<f32>> {
        (0..5)
            .map(|r| {
                normalised(
                    &(0..37)
                        .map(|i| ((i * 7 + r * 13) % 11) as f32 - 5.0)
                        .collect::<Vec<_>>(),
                )
            })
            .collect()
    }

    #[test]
    fn quantisation_round_trips_closely() {
        let rows = rows();
        let v = Int8Vectors::from_f32_rows(37, &rows).unwrap();
        assert_eq!((v.len(), v.dim()), (5, 37));
        for (i, row) in rows.iter().enumerate() {
            let back = v.dequantize_row(i);
            let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
            for (a, b) in row.iter().zip(&back) {
                assert!((a - b).abs() <= max / 254.0 + 1e-6);
            }
            // The largest component maps to ±127 exactly.
            assert_eq!(v.row(i).iter().map(|x| x.unsigned_abs()).max(), Some(127));
        }
    }

    #[test]
    fn kernels_match_naive_dot_products() {
        let a: Vec<i8> = (0..389).map(|i| ((i * 31) % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..389).map(|i| ((i * 17 + 5) % 255 - 127) as i8).collect();
        let naive: i32 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        assert_eq!(dot_i8(&a, &b), naive);
        assert_eq!(dot_i8_portable(&a, &b), naive);
        assert_eq!(dot_i16_i8(&widen(&a), &b), naive);
        assert_eq!(dot_i16_i8_inline(&widen(&a), &b), naive);
        // Extremes do not overflow.
        assert_eq!(dot_i8(&[-127; 384], &[-127; 384]), 127 * 127 * 384);
        assert_eq!(dot_i16_i8(&[-127; 384], &[-127; 384]), 127 * 127 * 384);
        let f: Vec<f32> = (0..389).map(|i| (i as f32).sin()).collect();
        let naive: f32 = f.iter().zip(&b).map(|(&x, &y)| x * f32::from(y)).sum();
        assert!((dot_f32_i8(&f, &b) - naive).abs() < 1e-3);
    }

    /// The kernel this build dispatches to (AVX-512 / AVX2 natively, simd128 in wasm) equals the plain
    /// reduction bit for bit, at dimensions around the 16-value step and row counts around the 4-row block.
    #[test]
    fn dispatched_kernels_equal_the_portable_one_on_random_data() {
        let mut rng = paragraf_stats::rng::SplitMix64::new(7);
        let mut random = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.normal() as f32).collect() };
        for dim in [1, 8, 15, 16, 17, 31, 100, 384, 768] {
            for rows in [0, 1, 3, 4, 5, 8, 11] {
                let data: Vec<Vec<f32>> = (0..rows).map(|_| random(dim)).collect();
                let v = Int8Vectors::from_f32_rows(dim as u32, &data).unwrap();
                let query = random(dim);
                let (q, qs) = quantize(&query);
                let wide = widen(&q);
                let mut scanned = Vec::new();
                v.scan_i8(&query, |i, score| scanned.push((i, score)));
                let portable: Vec<(usize, f32)> = (0..rows)
                    .map(|i| {
                        let dot = dot_i16_i8_portable(&wide, v.row(i));
                        assert_eq!(dot_i16_i8(&wide, v.row(i)), dot, "dim {dim}");
                        assert_eq!(dot_i16_i8_inline(&wide, v.row(i)), dot, "dim {dim}");
                        (i, dot as f32 * qs * v.scale(i))
                    })
                    .collect();
                assert_eq!(scanned, portable, "dim {dim}, {rows} rows");
            }
        }
        // Stored rows may hold -128 (only quantisation stops at -127): no lane overflows.
        let v = Int8Vectors::from_parts(48, vec![i8::MIN; 5 * 48], vec![1.0; 5]).unwrap();
        let mut scanned = Vec::new();
        v.scan_i8(&[-1.0; 48], |_, score| scanned.push(score));
        assert_eq!(scanned, [(127 * 128 * 48) as f32 * (1.0 / 127.0); 5]);
    }

    #[test]
    fn scores_approximate_cosine() {
        let rows = rows();
        let v = Int8Vectors::from_f32_rows(37, &rows).unwrap();
        let (mut exact8, mut exact32) = (Vec::new(), Vec::new());
        v.scores_i8(&rows[2], &mut exact8).unwrap();
        v.scores_f32(&rows[2], &mut exact32).unwrap();
        for (i, row) in rows.iter().enumerate() {
            let cos: f32 = row.iter().zip(&rows[2]).map(|(a, b)| a * b).sum();
            assert!((exact32[i] - cos).abs() < 0.01, "{} vs {cos}", exact32[i]);
            assert!((exact8[i] - cos).abs() < 0.02, "{} vs {cos}", exact8[i]);
        }
    }

    #[test]
    fn half_scales_round_up_and_round_trip() {
        for x in [1e-9f32, 6.1e-5, 4.1e-4, 7.874e-3, 0.5, 1.0, 1000.3, 65504.0] {
            let half = half_at_least(x).unwrap();
            let back = half_to_f32(half);
            assert!(back >= x && back <= x.max(6.11e-5) * 1.001, "{x} -> {back}");
            assert_eq!(
                half_at_least(back),
                Some(half),
                "{x}: halves are fixed points"
            );
        }
        assert_eq!(half_at_least(65505.0), None);
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert!(half_to_f32(0x7c00).is_infinite() && half_to_f32(0x7e00).is_nan());
        // The stored scale never lets a component overflow the int8 range.
        let v = Int8Vectors::from_f32_rows(3, &[[0.3, -0.9, 0.1]]).unwrap();
        assert!(v.row(0).iter().all(|&q| q != i8::MIN));
        assert_eq!(v.row(0)[1], -127);
    }

    #[test]
    fn rejects_bad_shapes_and_values() {
        let mut v = Int8Vectors::new(3);
        assert_eq!(
            v.push(&[1.0, 0.0]),
            Err(VectorError::Dimension {
                expected: 3,
                got: 2
            })
        );
        assert_eq!(
            v.push(&[f32::NAN, 0.0, 0.0]),
            Err(VectorError::NotFinite { row: 0 })
        );
        assert!(Int8Vectors::from_parts(3, vec![1; 5], vec![1.0; 2]).is_err());
        assert!(Int8Vectors::from_parts(1, vec![1], vec![-1.0]).is_err());
        // Components beyond what a half scale can carry.
        assert_eq!(
            v.push(&[1e7, 0.0, 0.0]),
            Err(VectorError::NotFinite { row: 0 })
        );
        let mut out = Vec::new();
        assert!(v.scores_i8(&[1.0], &mut out).is_err());
        // Serialised data is validated on the way in.
        let bad = r#"{"dim":3,"values":[1,2],"scales":[[0,60]]}"#;
        assert!(serde_json::from_str::<Int8Vectors>(bad).is_err());
        let infinite = r#"{"dim":1,"values":[1],"scales":[[0,124]]}"#;
        assert!(serde_json::from_str::<Int8Vectors>(infinite).is_err());
        v.push(&[0.6, 0.8, 0.0]).unwrap();
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Int8Vectors>(&json).unwrap(), v);
    }
}
