//! Exact (brute-force) top-k over an [`Int8Vectors`] matrix.
//!
//! For the BGB's few thousand units a full scan is both simplest and fast (one int8 dot product per row, the
//! matrix streamed once from memory), and it is the ground truth HNSW is measured against.

use super::{Hit, TopK};
use crate::vectors::{dot_f32_i8, Int8Vectors, VectorError};

/// How the query meets the int8 rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryPrecision {
    /// Quantise the query to int8 too: integer dot products, the fast default.
    #[default]
    Int8,
    /// Keep the query in f32: slightly more precise scores, somewhat slower.
    F32,
}

/// The `k` rows with the highest dot product with `query`, best first (ties: lower row first).
pub fn search(
    vectors: &Int8Vectors,
    query: &[f32],
    k: usize,
    precision: QueryPrecision,
) -> Result<Vec<Hit>, VectorError> {
    vectors.check_dim(query.len())?;
    let mut top = TopK::new(k);
    let d = vectors.dim();
    match precision {
        QueryPrecision::Int8 => vectors.scan_i8(query, |i, score| {
            if score >= top.threshold() {
                top.push(Hit {
                    index: i as u32,
                    score,
                });
            }
        }),
        QueryPrecision::F32 => {
            for i in 0..vectors.len() {
                let score = dot_f32_i8(&query[..d], vectors.row(i)) * vectors.scale(i);
                if score >= top.threshold() {
                    top.push(Hit {
                        index: i as u32,
                        score,
                    });
                }
            }
        }
    }
    Ok(top.into_sorted())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_rows_in_order() {
        let rows: Vec<[f32; 4]> = vec![
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.6, 0.8, 0.0, 0.0],
            [0.8, 0.6, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let v = Int8Vectors::from_f32_rows(4, &rows).unwrap();
        for precision in [QueryPrecision::Int8, QueryPrecision::F32] {
            let hits = search(&v, &[1.0, 0.0, 0.0, 0.0], 3, precision).unwrap();
            let order: Vec<u32> = hits.iter().map(|h| h.index).collect();
            assert_eq!(order, [0, 3, 2]);
            assert!((hits[1].score - 0.8).abs() < 0.01);
        }
        assert!(search(&v, &[1.0], 3, QueryPrecision::Int8).is_err());
        assert_eq!(
            search(&v, &[0.0, 0.0, 1.0, 0.0], 10, QueryPrecision::Int8)
                .unwrap()
                .len(),
            5
        );
    }
}
