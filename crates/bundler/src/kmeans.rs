//! Seeded spherical k-means (cosine similarity on unit vectors), for the cluster and RAPTOR strategies.
//!
//! Deterministic for a given seed (k-means++ seeding from `paragraf_stats::rng`'s SplitMix64 stream, Lloyd iterations in a fixed
//! order), so a bundle can be rebuilt bit for bit; the seed is recorded in the bundle's parameters.

use paragraf_stats::rng::SplitMix64;
use rayon::prelude::*;

/// k-means settings.
#[derive(Clone, Copy, Debug)]
pub struct KMeans {
    /// Number of clusters (capped at the number of points).
    pub k: usize,
    /// Lloyd iterations at most.
    pub max_iterations: usize,
    /// Seed for k-means++ seeding.
    pub seed: u64,
}

impl Default for KMeans {
    fn default() -> Self {
        KMeans {
            k: 1000,
            max_iterations: 20,
            seed: 42,
        }
    }
}

/// The result: a cluster per point and one unit-length centroid per non-empty cluster.
#[derive(Clone, Debug)]
pub struct Clustering {
    /// Cluster index of each point.
    pub assignment: Vec<u32>,
    /// Centroids, L2-normalised.
    pub centroids: Vec<Vec<f32>>,
}

impl Clustering {
    /// Point indices of each cluster, in order.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut members = vec![Vec::new(); self.centroids.len()];
        for (point, &cluster) in self.assignment.iter().enumerate() {
            members[cluster as usize].push(point as u32);
        }
        members
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Clusters unit vectors by cosine similarity.
pub fn cluster(points: &[Vec<f32>], settings: KMeans) -> Clustering {
    let n = points.len();
    let k = settings.k.min(n).max(1);
    if n == 0 {
        return Clustering {
            assignment: Vec::new(),
            centroids: Vec::new(),
        };
    }
    let mut rng = SplitMix64::new(settings.seed);
    // k-means++ seeding on cosine distance (1 - similarity).
    let mut centroids: Vec<Vec<f32>> = vec![points[(rng.next_u64() % n as u64) as usize].clone()];
    let mut distance: Vec<f32> = points
        .par_iter()
        .map(|p| (1.0 - dot(p, &centroids[0])).max(0.0))
        .collect();
    while centroids.len() < k {
        let total: f64 = distance.iter().map(|&d| d as f64 * d as f64).sum();
        let next = if total <= 0.0 {
            (rng.next_u64() % n as u64) as usize
        } else {
            let mut target = rng.next_f64() * total;
            let mut chosen = n - 1;
            for (i, &d) in distance.iter().enumerate() {
                target -= d as f64 * d as f64;
                if target <= 0.0 {
                    chosen = i;
                    break;
                }
            }
            chosen
        };
        let c = points[next].clone();
        distance
            .par_iter_mut()
            .zip(points)
            .for_each(|(d, p)| *d = d.min((1.0 - dot(p, &c)).max(0.0)));
        centroids.push(c);
    }
    let mut assignment = vec![0u32; n];
    for _ in 0..settings.max_iterations {
        let next: Vec<u32> = points
            .par_iter()
            .map(|p| {
                let mut best = (f32::MIN, 0u32);
                for (j, c) in centroids.iter().enumerate() {
                    let s = dot(p, c);
                    if s > best.0 {
                        best = (s, j as u32);
                    }
                }
                best.1
            })
            .collect();
        let changed = next != assignment;
        assignment = next;
        let dim = points[0].len();
        let mut sums = vec![vec![0.0f32; dim]; centroids.len()];
        for (p, &a) in points.iter().zip(&assignment) {
            sums[a as usize]
                .iter_mut()
                .zip(p)
                .for_each(|(s, x)| *s += x);
        }
        for (c, mut s) in centroids.iter_mut().zip(sums) {
            if s.iter().any(|&x| x != 0.0) {
                normalize(&mut s);
                *c = s;
            }
        }
        if !changed {
            break;
        }
    }
    // Drop empty clusters and renumber.
    let mut used = vec![false; centroids.len()];
    assignment.iter().for_each(|&a| used[a as usize] = true);
    let mut renumber = vec![u32::MAX; centroids.len()];
    let mut kept = Vec::new();
    for (j, c) in centroids.into_iter().enumerate() {
        if used[j] {
            renumber[j] = kept.len() as u32;
            kept.push(c);
        }
    }
    Clustering {
        assignment: assignment
            .into_iter()
            .map(|a| renumber[a as usize])
            .collect(),
        centroids: kept,
    }
}

/// The unit-length mean of some vectors.
pub fn mean_direction<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Vec<f32> {
    let mut sum: Vec<f32> = Vec::new();
    for v in vectors {
        if sum.is_empty() {
            sum = vec![0.0; v.len()];
        }
        sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
    }
    normalize(&mut sum);
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs() -> Vec<Vec<f32>> {
        let mut rng = SplitMix64::new(7);
        let axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        (0..90)
            .map(|i| {
                let mut v: Vec<f32> = axes[i % 3]
                    .iter()
                    .map(|&a| a + (rng.next_f64() as f32 - 0.5) * 0.2)
                    .collect();
                normalize(&mut v);
                v
            })
            .collect()
    }

    #[test]
    fn finds_well_separated_clusters_deterministically() {
        let points = blobs();
        let a = cluster(
            &points,
            KMeans {
                k: 3,
                max_iterations: 20,
                seed: 1,
            },
        );
        let b = cluster(
            &points,
            KMeans {
                k: 3,
                max_iterations: 20,
                seed: 1,
            },
        );
        assert_eq!(a.assignment, b.assignment);
        assert_eq!(a.centroids.len(), 3);
        for members in a.members() {
            assert_eq!(members.len(), 30);
            assert!(members.iter().all(|&m| m % 3 == members[0] % 3));
        }
    }

    #[test]
    fn k_is_bounded_by_the_points() {
        let points = blobs();
        let c = cluster(
            &points[..5],
            KMeans {
                k: 50,
                max_iterations: 5,
                seed: 3,
            },
        );
        assert!(c.centroids.len() <= 5);
        assert_eq!(c.assignment.len(), 5);
    }
}
