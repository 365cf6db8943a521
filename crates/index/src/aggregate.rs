//! From unit hits to section rankings: the paper's step 5.
//!
//! Every indexed unit belongs to one or more sections (a subsection to one; a fixed-size window, a cluster or a
//! RAPTOR summary to several). [`UnitSections`] stores that map in compressed-sparse-row form (offsets +
//! section ids), two flat `u32` vectors that serialise compactly into a bundle. A unit's score propagates to
//! each of its sections; a section's score is the max (default), sum or mean of what reaches it.

use super::{Hit, TopK};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A malformed unit → section map.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("unit-section offsets are not a monotone index into {sections} section ids")]
pub struct UnitSectionsError {
    sections: usize,
}

/// Which sections each unit belongs to: unit `u`'s sections are `sections[offsets[u]..offsets[u + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawUnitSections")]
pub struct UnitSections {
    offsets: Vec<u32>,
    sections: Vec<u32>,
}

#[derive(Deserialize)]
struct RawUnitSections {
    offsets: Vec<u32>,
    sections: Vec<u32>,
}

impl TryFrom<RawUnitSections> for UnitSections {
    type Error = UnitSectionsError;
    fn try_from(raw: RawUnitSections) -> Result<Self, UnitSectionsError> {
        Self::from_parts(raw.offsets, raw.sections)
    }
}

impl UnitSections {
    /// The map from one section list per unit.
    pub fn from_lists<L, I>(lists: L) -> Self
    where
        L: IntoIterator<Item = I>,
        I: IntoIterator<Item = u32>,
    {
        let mut offsets = vec![0];
        let mut sections = Vec::new();
        for list in lists {
            sections.extend(list);
            offsets.push(sections.len() as u32);
        }
        Self { offsets, sections }
    }

    /// The map where unit `u` belongs to `section_of[u]` only.
    pub fn one_each(section_of: &[u32]) -> Self {
        Self {
            offsets: (0..=section_of.len() as u32).collect(),
            sections: section_of.to_vec(),
        }
    }

    /// Validates stored parts.
    pub fn from_parts(offsets: Vec<u32>, sections: Vec<u32>) -> Result<Self, UnitSectionsError> {
        let ok = offsets.first() == Some(&0)
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && offsets.last().copied() == Some(sections.len() as u32);
        if ok {
            Ok(Self { offsets, sections })
        } else {
            Err(UnitSectionsError {
                sections: sections.len(),
            })
        }
    }

    /// Number of units.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no units.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sections of unit `unit`.
    #[inline]
    pub fn sections_of(&self, unit: usize) -> &[u32] {
        &self.sections[self.offsets[unit] as usize..self.offsets[unit + 1] as usize]
    }
}

/// How unit scores combine into a section score.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aggregation {
    /// The best unit's score (the paper's default: one strong passage makes a section relevant).
    #[default]
    Max,
    /// The sum over the section's hit units (rewards sections hit many times).
    Sum,
    /// The mean over the section's hit units.
    Mean,
}

/// Propagates unit `hits` (normally the top 100) to sections and returns the best `k` distinct sections.
pub fn aggregate(hits: &[Hit], map: &UnitSections, mode: Aggregation, k: usize) -> Vec<Hit> {
    let mut pairs: Vec<(u32, f32)> = hits
        .iter()
        .flat_map(|h| {
            map.sections_of(h.index as usize)
                .iter()
                .map(move |&s| (s, h.score))
        })
        .collect();
    pairs.sort_unstable_by_key(|&(s, _)| s);
    let mut top = TopK::new(k);
    let mut i = 0;
    while i < pairs.len() {
        let section = pairs[i].0;
        let mut j = i;
        let (mut max, mut sum) = (f32::NEG_INFINITY, 0.0f32);
        while j < pairs.len() && pairs[j].0 == section {
            max = max.max(pairs[j].1);
            sum += pairs[j].1;
            j += 1;
        }
        let score = match mode {
            Aggregation::Max => max,
            Aggregation::Sum => sum,
            Aggregation::Mean => sum / (j - i) as f32,
        };
        top.push(Hit {
            index: section,
            score,
        });
        i = j;
    }
    top.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(index: u32, score: f32) -> Hit {
        Hit { index, score }
    }

    fn ids(hits: &[Hit]) -> Vec<u32> {
        hits.iter().map(|h| h.index).collect()
    }

    // Units 0..5: unit 0 → §A(0), 1 → §A, 2 → §B(1), 3 → §B and §C(2) (a window across two), 4 → §D(3).
    fn map() -> UnitSections {
        UnitSections::from_lists([vec![0], vec![0], vec![1], vec![1, 2], vec![3]])
    }

    #[test]
    fn max_sum_and_mean_rank_sections_differently() {
        let hits = [
            hit(0, 0.9),
            hit(2, 0.8),
            hit(3, 0.7),
            hit(1, 0.1),
            hit(4, 0.75),
        ];
        let max = aggregate(&hits, &map(), Aggregation::Max, 10);
        assert_eq!(ids(&max), [0, 1, 3, 2]);
        assert_eq!(max[0].score, 0.9);
        let sum = aggregate(&hits, &map(), Aggregation::Sum, 10);
        assert_eq!(ids(&sum), [1, 0, 3, 2]);
        assert!((sum[0].score - 1.5).abs() < 1e-6);
        let mean = aggregate(&hits, &map(), Aggregation::Mean, 10);
        // §B and §D tie at 0.75: the lower section id first.
        assert_eq!(ids(&mean), [1, 3, 2, 0]);
        assert!((mean[3].score - 0.5).abs() < 1e-6);
    }

    #[test]
    fn keeps_the_top_k_distinct_sections_with_ties_by_index() {
        let hits = [hit(4, 0.5), hit(2, 0.5), hit(0, 0.5)];
        assert_eq!(ids(&aggregate(&hits, &map(), Aggregation::Max, 2)), [0, 1]);
        assert!(aggregate(&[], &map(), Aggregation::Max, 10).is_empty());
    }

    #[test]
    fn csr_map_validates_and_round_trips() {
        let m = map();
        assert_eq!((m.len(), m.sections_of(3)), (5, &[1, 2][..]));
        assert_eq!(UnitSections::one_each(&[7, 8]).sections_of(1), [8]);
        assert!(UnitSections::from_parts(vec![0, 2, 1], vec![0, 0]).is_err());
        assert!(UnitSections::from_parts(vec![0, 1], vec![0, 0]).is_err());
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<UnitSections>(&json).unwrap(), m);
        assert!(serde_json::from_str::<UnitSections>(r#"{"offsets":[1],"sections":[]}"#).is_err());
    }
}
