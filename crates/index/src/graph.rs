//! Graph-aware ranking: a section's score spreads to the sections it cites and that cite it.
//!
//! Statutes lean on each other: § 535 is read with §§ 536 ff., definitions sit in §§ 13, 14, 90, and a
//! question answered by a rule often uses the words of the section next to it in the citation graph rather
//! than its own. This re-ranks a first-stage section ranking (dense, BM25 or hybrid, any strategy) with the
//! first [`STEPS`] terms of a personalised PageRank series over the law's resolved in-law citations:
//!
//! - seeds `s`: the candidates' reciprocal ranks `1 / (k + rank)` (the RRF weighting, so dense cosines, BM25
//!   scores and fused scores seed alike), normalised to sum 1;
//! - spread: `P` moves a section's mass evenly to its neighbours (citations in both directions, each pair
//!   once); `g = d·Ps + d²·P²s` with damping `d` = [`DAMPING`];
//! - result: `s + w·g` with the graph weight `w` (0: the ranking unchanged). Sections keep their own seed, so
//!   a section without citations is not pushed down; one cited by several hits rises, and one the first
//!   stage missed can enter the top k.
//!
//! Deterministic: sums run in section order and ties go to the lower index, so native and wasm agree; work is
//! proportional to the candidates' neighbourhoods.

use std::collections::BTreeMap;

use super::Hit;
use paragraf_law::{Law, RefTarget};

/// Damping of the walk: the share of a section's mass that moves to its neighbours per step.
pub const DAMPING: f32 = 0.5;

/// Walk steps (mass reaches sections up to this many citations away).
pub const STEPS: usize = 2;

/// The RRF constant the seeds use.
const SEED_K: f32 = 60.0;

/// Undirected in-law citation graph over a law's sections.
#[derive(Clone, Debug, Default)]
pub struct CitationGraph {
    /// Neighbours of each section, sorted, without duplicates or self-loops.
    neighbours: Vec<Vec<u32>>,
}

impl CitationGraph {
    /// The graph of `law`'s resolved citations of its own sections (external and unresolved ones, and
    /// repealed or empty sections, left out: nothing the walk reaches is a section search cannot show).
    pub fn new(law: &Law) -> Self {
        let mut neighbours = vec![Vec::new(); law.sections.len()];
        let live = |i: usize| {
            law.sections
                .get(i)
                .is_some_and(|s| !s.repealed && !s.text.is_empty())
        };
        for (from, section) in law.sections.iter().enumerate().filter(|(i, _)| live(*i)) {
            for reference in &section.references {
                for target in &reference.targets {
                    if let RefTarget::Section { section: to, .. } = target {
                        let to = *to as usize;
                        if to != from && live(to) {
                            neighbours[from].push(to as u32);
                            neighbours[to].push(from as u32);
                        }
                    }
                }
            }
        }
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        CitationGraph { neighbours }
    }

    /// Edges (each pair once).
    pub fn edges(&self) -> usize {
        self.neighbours.iter().map(Vec::len).sum::<usize>() / 2
    }

    /// Neighbours of `section`.
    pub fn neighbours(&self, section: usize) -> &[u32] {
        self.neighbours.get(section).map_or(&[], Vec::as_slice)
    }

    /// `ranking` (best first) re-ranked with graph weight `weight` (0: unchanged); the best `k` sections.
    /// Scores are seed + weighted spread (comparable within one ranking only).
    pub fn rerank(&self, ranking: &[Hit], weight: f32, k: usize) -> Vec<Hit> {
        if weight <= 0.0 || ranking.is_empty() {
            let mut out = ranking.to_vec();
            out.truncate(k);
            return out;
        }
        let mut seeds: BTreeMap<u32, f32> = ranking
            .iter()
            .enumerate()
            .map(|(rank, h)| (h.index, 1.0 / (SEED_K + rank as f32 + 1.0)))
            .collect();
        let total: f32 = seeds.values().sum();
        seeds.values_mut().for_each(|s| *s /= total);
        let mut score = seeds.clone();
        let mut wave = seeds;
        let mut factor = weight;
        for _ in 0..STEPS {
            factor *= DAMPING;
            let mut next: BTreeMap<u32, f32> = BTreeMap::new();
            for (&i, &mass) in &wave {
                let out = self.neighbours(i as usize);
                for &j in out {
                    *next.entry(j).or_insert(0.0) += mass / out.len() as f32;
                }
            }
            for (&j, &mass) in &next {
                *score.entry(j).or_insert(0.0) += factor * mass;
            }
            wave = next;
        }
        let mut mixed: Vec<Hit> = score
            .into_iter()
            .map(|(index, score)| Hit { index, score })
            .collect();
        mixed.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        mixed.truncate(k);
        mixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made law: 0 is cited by 1 and 3, 2 cites 5, 4 and 6–8 stand alone.
    fn graph() -> CitationGraph {
        CitationGraph {
            neighbours: vec![
                vec![1, 3],
                vec![0],
                vec![5],
                vec![0],
                vec![],
                vec![2],
                vec![],
                vec![],
                vec![],
            ],
        }
    }

    fn hits(order: &[u32]) -> Vec<Hit> {
        order
            .iter()
            .enumerate()
            .map(|(r, &index)| Hit {
                index,
                score: 10.0 - r as f32,
            })
            .collect()
    }

    fn order(hits: &[Hit]) -> Vec<u32> {
        hits.iter().map(|h| h.index).collect()
    }

    #[test]
    fn weight_zero_keeps_the_ranking() {
        let ranking = hits(&[4, 3, 0]);
        assert_eq!(order(&graph().rerank(&ranking, 0.0, 2)), vec![4, 3]);
    }

    #[test]
    fn a_section_cited_by_two_hits_enters_above_a_lone_low_hit() {
        // The first stage finds 1 and 3 (both cite 0) and five sections without citations; 0 is not found.
        let ranking = hits(&[1, 3, 6, 7, 8, 5, 4]);
        let reranked = graph().rerank(&ranking, 1.0, 7);
        let got = order(&reranked);
        let position = |i: u32| got.iter().position(|&x| x == i);
        let zero = position(0).expect("0 enters");
        assert!(position(4).is_none_or(|four| zero < four), "{reranked:?}");
        // 5 passes a little mass to 2, which was not found and links no hit: it stays out of the top 7.
        assert_eq!(position(2), None, "{reranked:?}");
        // The hits that cite 0 keep their lead (their own seed plus 0's echo).
        assert_eq!(&got[..2], &[1, 3], "{reranked:?}");
        // A small weight only breaks near-ties: the first stage's order survives.
        assert_eq!(order(&graph().rerank(&ranking, 0.05, 7)), order(&ranking));
    }

    #[test]
    fn reranking_is_deterministic() {
        let ranking = hits(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(
            graph().rerank(&ranking, 0.5, 6),
            graph().rerank(&ranking, 0.5, 6)
        );
    }

    #[test]
    fn citations_become_undirected_edges_once() {
        use paragraf_law::{Reference, Section, Span};
        let cite = |to: u32| Reference {
            span: Span { start: 0, end: 1 },
            targets: vec![
                RefTarget::Section {
                    section: to,
                    subsection: None,
                    sentence: None,
                },
                RefTarget::External {
                    law: "InsO".into(),
                    designation: "§ 15a".into(),
                },
            ],
        };
        let section = |designation: &str, references: Vec<Reference>| Section {
            references,
            ..Section::bare(designation, "x")
        };
        let law = Law {
            build_date: "d".into(),
            // § 1 cites § 2 twice and itself; § 2 cites § 1 back.
            sections: vec![
                section("§ 1", vec![cite(1), cite(1), cite(0)]),
                section("§ 2", vec![cite(0)]),
            ],
            ..Law::bare("TG", vec![])
        };
        let g = CitationGraph::new(&law);
        assert_eq!(g.edges(), 1);
        assert_eq!(g.neighbours(0), &[1]);
        assert_eq!(g.neighbours(1), &[0]);
    }
}
