//! RAPTOR: a tree of summary nodes built bottom-up over the base units by recursive clustering.
//!
//! Level 1 clusters the leaf vectors into groups of about `branching` units; each group gets a summary node whose
//! vector is the unit-length mean of its members (built-in) or the embedding of a generated summary, and whose
//! label names the member sections (extractive) or is the generated text. Levels repeat until at most
//! `branching` nodes remain: those are the roots where query routing starts.

use crate::kmeans::{cluster, mean_direction, KMeans};
use paragraf_index::raptor::SummaryNode;

/// Tree settings.
#[derive(Clone, Copy, Debug)]
pub struct RaptorSettings {
    /// Children per summary node, on average.
    pub branching: usize,
    /// k-means seed.
    pub seed: u64,
}

impl Default for RaptorSettings {
    fn default() -> Self {
        RaptorSettings {
            branching: 10,
            seed: 42,
        }
    }
}

/// The built tree before quantisation.
pub struct Tree {
    /// Summary nodes (children: unit indices at level 1, node indices above).
    pub nodes: Vec<SummaryNode>,
    /// One vector per node.
    pub vectors: Vec<Vec<f32>>,
    /// Top-level node indices.
    pub roots: Vec<u32>,
}

/// Writes a node's summary: `(label, vector)` from the leaf indices below it and the mean of its children.
pub trait Summarizer {
    /// `leaves` are all unit indices under the node; `mean` is the unit-length mean of its children's vectors.
    fn summarize(&mut self, leaves: &[u32], mean: Vec<f32>) -> (String, Vec<f32>);
}

/// Builds the tree over `leaf_vectors`.
pub fn build(
    leaf_vectors: &[Vec<f32>],
    settings: RaptorSettings,
    summarizer: &mut dyn Summarizer,
) -> Tree {
    let mut tree = Tree {
        nodes: Vec::new(),
        vectors: Vec::new(),
        roots: Vec::new(),
    };
    // current level: (vector, leaves below, child id)
    let mut level: Vec<u32> = (0..leaf_vectors.len() as u32).collect();
    let mut level_vectors: Vec<Vec<f32>> = leaf_vectors.to_vec();
    let mut level_leaves: Vec<Vec<u32>> = level.iter().map(|&i| vec![i]).collect();
    let mut depth = 1u8;
    while level.len() > settings.branching || depth == 1 {
        let k = level.len().div_ceil(settings.branching).max(1);
        let clustering = cluster(
            &level_vectors,
            KMeans {
                k,
                max_iterations: 15,
                seed: settings.seed + depth as u64,
            },
        );
        let mut next = Vec::new();
        let mut next_vectors = Vec::new();
        let mut next_leaves = Vec::new();
        for members in clustering.members() {
            let mean = mean_direction(
                members
                    .iter()
                    .map(|&m| level_vectors[m as usize].as_slice()),
            );
            let leaves: Vec<u32> = members
                .iter()
                .flat_map(|&m| level_leaves[m as usize].iter().copied())
                .collect();
            let (label, vector) = summarizer.summarize(&leaves, mean);
            tree.nodes.push(SummaryNode {
                level: depth,
                children: members.iter().map(|&m| level[m as usize]).collect(),
                label,
            });
            tree.vectors.push(vector.clone());
            next.push(tree.nodes.len() as u32 - 1);
            next_vectors.push(vector);
            next_leaves.push(leaves);
        }
        level = next;
        level_vectors = next_vectors;
        level_leaves = next_leaves;
        depth += 1;
        if level.len() <= 1 {
            break;
        }
    }
    tree.roots = level;
    tree
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kmeans::normalize;
    use paragraf_stats::rng::SplitMix64;

    struct Mean;
    impl Summarizer for Mean {
        fn summarize(&mut self, leaves: &[u32], mean: Vec<f32>) -> (String, Vec<f32>) {
            (format!("{} leaves", leaves.len()), mean)
        }
    }

    #[test]
    fn every_leaf_is_under_exactly_one_root_path() {
        let mut rng = SplitMix64::new(5);
        let leaves: Vec<Vec<f32>> = (0..250)
            .map(|_| {
                let mut v: Vec<f32> = (0..8).map(|_| rng.next_f64() as f32 - 0.5).collect();
                normalize(&mut v);
                v
            })
            .collect();
        let tree = build(
            &leaves,
            RaptorSettings {
                branching: 10,
                seed: 1,
            },
            &mut Mean,
        );
        assert!(tree.roots.len() <= 10 && !tree.roots.is_empty());
        let mut seen = vec![0; leaves.len()];
        let mut stack: Vec<u32> = tree.roots.clone();
        while let Some(n) = stack.pop() {
            let node = &tree.nodes[n as usize];
            if node.level == 1 {
                node.children.iter().for_each(|&c| seen[c as usize] += 1);
            } else {
                stack.extend(&node.children);
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }
}
