//! RAPTOR routing: a query descends the bundle's tree of summary nodes instead of scanning every unit.
//!
//! The tree is checked once when the bundle is loaded ([`check_tree`]), so that routing itself can index
//! without bounds failures; routing ([`route`]) keeps the best `beam` nodes per level and scores only the units
//! under the kept level-1 nodes, exactly (see [`super::exact::top_rows`]).

use super::exact::top_rows;
use super::Hit;
use crate::vectors::VectorStore;
use serde::{Deserialize, Serialize};

/// Checks that the tree fits `units` leaf units: one vector per node, children and roots in range.
pub fn check_tree(tree: &RaptorTree, units: usize) -> Result<(), String> {
    if tree.vectors.len() != tree.nodes.len() {
        return Err(format!(
            "{} summary vectors for {} nodes",
            tree.vectors.len(),
            tree.nodes.len()
        ));
    }
    for (i, node) in tree.nodes.iter().enumerate() {
        let bound = if node.level == 1 {
            units
        } else {
            tree.nodes.len()
        };
        if node.children.iter().any(|&c| c as usize >= bound) {
            return Err(format!("summary node {i} has a child out of range"));
        }
    }
    if tree.roots.iter().any(|&r| r as usize >= tree.nodes.len()) {
        return Err("a root is out of range".into());
    }
    Ok(())
}

/// Tree traversal: score the roots, keep the best `beam` nodes per level while descending, then score the leaf
/// units under the kept level-1 nodes and return the best `k`. The tree has passed [`check_tree`].
pub fn route(
    tree: &RaptorTree,
    leaves: &VectorStore,
    query: &[f32],
    beam: usize,
    k: usize,
) -> Vec<Hit> {
    let mut frontier: Vec<u32> = tree.roots.clone();
    loop {
        let kept = top_rows(&tree.vectors, query, beam.max(1), Some(&frontier));
        let level = kept
            .first()
            .map_or(1, |h| tree.nodes[h.index as usize].level);
        let children: Vec<u32> = kept
            .iter()
            .flat_map(|h| tree.nodes[h.index as usize].children.iter().copied())
            .collect();
        if level <= 1 || children.is_empty() {
            return top_rows(leaves, query, k, Some(&children));
        }
        frontier = children;
    }
}

/// RAPTOR's tree of summary nodes above the leaf units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RaptorTree {
    /// Summary nodes; a node's children are units (level 1) or summary nodes of the level below.
    pub nodes: Vec<SummaryNode>,
    /// One vector per summary node, in order.
    pub vectors: VectorStore,
    /// Top-level nodes where routing starts.
    pub roots: Vec<u32>,
}

/// A RAPTOR summary node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryNode {
    /// 1 for nodes above leaves, 2 above those, ...
    pub level: u8,
    /// Unit indices (level 1) or summary node indices (level > 1).
    pub children: Vec<u32>,
    /// The summary: extractive (member section titles) or generated.
    pub label: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(rows: &[[f32; 2]]) -> VectorStore {
        VectorStore::F32 {
            dim: 2,
            values: rows.iter().flatten().copied().collect(),
        }
    }

    fn node(level: u8, children: &[u32]) -> SummaryNode {
        SummaryNode {
            level,
            children: children.to_vec(),
            label: String::new(),
        }
    }

    /// Units 0, 1 point right, 2, 3 up; node 0 summarises the right ones, node 1 the upper ones, node 2 is the
    /// root above both.
    fn tree() -> (RaptorTree, VectorStore) {
        let tree = RaptorTree {
            nodes: vec![node(1, &[0, 1]), node(1, &[2, 3]), node(2, &[0, 1])],
            vectors: store(&[[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]]),
            roots: vec![2],
        };
        let leaves = store(&[[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.6, 0.8]]);
        (tree, leaves)
    }

    #[test]
    fn routes_down_the_best_branch_only() {
        let (tree, leaves) = tree();
        check_tree(&tree, 4).unwrap();
        let ids = |hits: Vec<Hit>| hits.iter().map(|h| h.index).collect::<Vec<_>>();
        assert_eq!(ids(route(&tree, &leaves, &[0.0, 1.0], 1, 10)), [2, 3]);
        assert_eq!(ids(route(&tree, &leaves, &[1.0, 0.0], 1, 1)), [0]);
        assert_eq!(ids(route(&tree, &leaves, &[0.0, 1.0], 2, 10)), [2, 3, 1, 0]);
    }

    #[test]
    fn trees_that_do_not_fit_are_refused() {
        let (tree, _) = tree();
        assert_eq!(
            check_tree(&tree, 3).unwrap_err(),
            "summary node 1 has a child out of range"
        );
        let mut rootless = tree.clone();
        rootless.roots = vec![3];
        assert_eq!(
            check_tree(&rootless, 4).unwrap_err(),
            "a root is out of range"
        );
        let mut short = tree;
        short.vectors = store(&[[1.0, 0.0]]);
        assert_eq!(
            check_tree(&short, 4).unwrap_err(),
            "1 summary vectors for 3 nodes"
        );
    }
}
