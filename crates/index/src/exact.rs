//! Exact (brute-force) top-k over an [`Int8Vectors`] matrix.
//!
//! For the BGB's few thousand units a full scan is both simplest and fast (one int8 dot product per row, the
//! matrix streamed once from memory), and it is the ground truth HNSW is measured against. [`top_rows`] is the
//! same scan over either vector store, optionally restricted to candidate rows (how RAPTOR scores the children
//! it descends into).

use super::{Hit, TopK};
use crate::vectors::VectorStore;
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

/// Best `k` rows of `store` for `query`, optionally only among `candidates`. The caller has checked the
/// query's dimension and that every candidate is a row of `store`.
pub fn top_rows(
    store: &VectorStore,
    query: &[f32],
    k: usize,
    candidates: Option<&[u32]>,
) -> Vec<Hit> {
    match (store, candidates) {
        (VectorStore::Int8(v), None) => {
            search(v, query, k, QueryPrecision::Int8).expect("dimension checked")
        }
        (store, candidates) => {
            let mut top = TopK::new(k);
            let mut push = |i: u32| {
                top.push(Hit {
                    index: i,
                    score: row_score(store, query, i as usize),
                })
            };
            match candidates {
                Some(c) => c.iter().for_each(|&i| push(i)),
                None => (0..store.len() as u32).for_each(push),
            }
            top.into_sorted()
        }
    }
}

/// The dot product of `query` with row `i` of `store`.
pub fn row_score(store: &VectorStore, query: &[f32], i: usize) -> f32 {
    match store {
        VectorStore::Int8(v) => v.dot_f32(query, i),
        VectorStore::F32 { dim, values } => {
            let d = *dim as usize;
            values[i * d..(i + 1) * d]
                .iter()
                .zip(query)
                .map(|(a, b)| a * b)
                .sum()
        }
    }
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

    #[test]
    fn top_rows_scans_both_stores_and_candidates_only() {
        let rows: Vec<[f32; 2]> = vec![[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]];
        let int8 = VectorStore::Int8(Int8Vectors::from_f32_rows(2, &rows).unwrap());
        let f32s = VectorStore::F32 {
            dim: 2,
            values: rows.iter().flatten().copied().collect(),
        };
        for store in [&int8, &f32s] {
            let order = |hits: Vec<Hit>| hits.iter().map(|h| h.index).collect::<Vec<_>>();
            assert_eq!(order(top_rows(store, &[0.0, 1.0], 2, None)), [1, 2]);
            assert_eq!(
                order(top_rows(store, &[0.0, 1.0], 5, Some(&[0, 2]))),
                [2, 0]
            );
            assert!((row_score(store, &[0.6, 0.8], 2) - 1.0).abs() < 0.01);
        }
    }
}
