//! Gold sections: a question's designations (`§ 573b`) mapped to section indices of the evaluated law.
//!
//! The paper counts a gold id the corpus lacks (a repealed or renumbered section) as a miss, not as a question
//! to drop: dropping would flatter every strategy alike but hide how much of the benchmark is unreachable. So
//! each missing id gets a placeholder index no ranking can contain, and the ids are kept for the report.

use super::Question;
use paragraf_law::Law;

/// The gold sections of a question set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gold {
    /// Per question, its gold section indices; ids missing from the law are placeholders above every section.
    pub sections: Vec<Vec<u32>>,
    /// Gold ids not found among the law's active sections, in question order (repeats kept: each is a miss).
    pub missing: Vec<String>,
}

impl Gold {
    /// Maps every question's designations to sections of `law`; repealed sections count as missing.
    pub fn map(law: &Law, questions: &[Question]) -> Gold {
        let mut missing = Vec::new();
        let sections = questions
            .iter()
            .map(|q| {
                q.paragraphs
                    .iter()
                    .map(
                        |p| match law.find_section(p).filter(|&i| !law.sections[i].repealed) {
                            Some(i) => i as u32,
                            None => {
                                missing.push(p.clone());
                                u32::MAX - missing.len() as u32
                            }
                        },
                    )
                    .collect()
            })
            .collect();
        Gold { sections, missing }
    }

    /// Gold ids over all questions, missing ones included.
    pub fn count(&self) -> usize {
        self.sections.iter().map(Vec::len).sum()
    }

    /// The missing ids, sorted and without repeats (as the report lists them).
    pub fn missing_distinct(&self) -> Vec<String> {
        let mut ids = self.missing.clone();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Gold across laws: each question's ids mapped to (law, section) pairs of the laws searched. An id names its
/// law after the designation (`§ 3 BUrlG`, `§ 3 StVO 2013`, `Art 5 GG`); a plain `§ 573` means the question
/// file's own law when there is one. Nothing is dropped: an id that cannot be placed is a miss (a placeholder
/// no ranking contains) and a [`GoldWarning`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LawGold {
    /// Per question, its gold (law, section) pairs.
    pub sections: Vec<Vec<(u32, u32)>>,
    /// What could not be placed, or was placed by a guess, in question order.
    pub warnings: Vec<GoldWarning>,
}

/// A gold id that did not name exactly one active section of one law searched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoldWarning {
    /// The law named is not among the laws searched (counted as a miss).
    #[error(
        "question {question}: {id:?} names a law that is not among the laws searched (a miss)"
    )]
    UnknownLaw {
        /// The question's number (from 0).
        question: usize,
        /// The gold id as written.
        id: String,
    },
    /// The id names no law and the questions have no law of their own (counted as a miss).
    #[error("question {question}: {id:?} names no law, and the questions have no law of their own (a miss); write it as `§ 3 BUrlG`")]
    NoLaw {
        /// The question's number (from 0).
        question: usize,
        /// The gold id as written.
        id: String,
    },
    /// The law was found under another name (`StVO` is `StVO 2013`); the id counts for that law.
    #[error("question {question}: {id:?} is read as {law}")]
    Resolved {
        /// The question's number (from 0).
        question: usize,
        /// The gold id as written.
        id: String,
        /// The law it was read as.
        law: String,
    },
    /// The law has no such active section (repealed, renumbered or a typo; counted as a miss).
    #[error("question {question}: {law} has no active section {designation:?} (a miss)")]
    NoSection {
        /// The question's number (from 0).
        question: usize,
        /// The law's abbreviation.
        law: String,
        /// The designation asked for.
        designation: String,
    },
}

/// An id split into its designation and the law it names, if any: `§ 3 StVO 2013` → (`§ 3`, `StVO 2013`).
pub fn split_law_id(id: &str) -> (String, Option<String>) {
    let tokens: Vec<&str> = id.split_whitespace().collect();
    let end = tokens
        .iter()
        .position(|t| t.bytes().any(|b| b.is_ascii_digit()))
        .map_or(tokens.len(), |i| i + 1);
    let law = tokens[end..].join(" ");
    (tokens[..end].join(" "), (!law.is_empty()).then_some(law))
}

impl LawGold {
    /// Maps every question's ids to sections of `laws` (indices into it); `own` is the law a plain id means.
    pub fn map(laws: &[&Law], own: Option<usize>, questions: &[Question]) -> LawGold {
        let mut warnings = Vec::new();
        let mut misses = 0u32;
        let sections = questions
            .iter()
            .enumerate()
            .map(|(question, q)| {
                q.paragraphs
                    .iter()
                    .map(|id| {
                        let (designation, named) = split_law_id(id);
                        let law = match &named {
                            None => own.ok_or_else(|| GoldWarning::NoLaw {
                                question,
                                id: id.clone(),
                            }),
                            Some(named) => laws
                                .iter()
                                .position(|l| l.abbreviation == *named)
                                .or_else(|| {
                                    let found = paragraf_core::finder::cited_law_index(
                                        laws,
                                        |l| (&l.abbreviation, &l.title),
                                        named,
                                    )?;
                                    warnings.push(GoldWarning::Resolved {
                                        question,
                                        id: id.clone(),
                                        law: laws[found].abbreviation.clone(),
                                    });
                                    Some(found)
                                })
                                .ok_or_else(|| GoldWarning::UnknownLaw {
                                    question,
                                    id: id.clone(),
                                }),
                        };
                        let placed = law.and_then(|l| {
                            let law = laws[l];
                            law.find_section(&designation)
                                .filter(|&i| !law.sections[i].repealed)
                                .map(|s| (l as u32, s as u32))
                                .ok_or_else(|| GoldWarning::NoSection {
                                    question,
                                    law: law.abbreviation.clone(),
                                    designation: designation.clone(),
                                })
                        });
                        placed.unwrap_or_else(|warning| {
                            warnings.push(warning);
                            misses += 1;
                            (u32::MAX, u32::MAX - misses)
                        })
                    })
                    .collect()
            })
            .collect();
        LawGold { sections, warnings }
    }

    /// The laws of question `q`'s gold (placed ids only), without repeats.
    pub fn laws(&self, q: usize) -> Vec<u32> {
        let mut laws: Vec<u32> = self.sections[q]
            .iter()
            .map(|&(l, _)| l)
            .filter(|&l| l != u32::MAX)
            .collect();
        laws.sort_unstable();
        laws.dedup();
        laws
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use paragraf_law::Section;

    pub(crate) fn section(designation: &str, repealed: bool, text: &str) -> Section {
        Section {
            repealed,
            ..Section::bare(designation, text)
        }
    }

    pub(crate) fn law(sections: Vec<Section>) -> Law {
        Law::bare("BGB", sections)
    }

    pub(crate) fn question(paragraphs: &[&str]) -> Question {
        Question {
            raw_text: String::new(),
            paragraphs: paragraphs.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn missing_and_repealed_ids_become_distinct_placeholders() {
        let law = law(vec![
            section("§ 535", false, ""),
            section("§ 536", true, ""),
            section("§ 573b", false, ""),
        ]);
        let gold = Gold::map(
            &law,
            &[
                question(&["§ 573b", "§ 999"]),
                question(&["§ 536", "535"]),
                question(&["§ 999"]),
            ],
        );
        assert_eq!(
            gold.sections,
            [
                vec![2, u32::MAX - 1],
                vec![u32::MAX - 2, 0],
                vec![u32::MAX - 3]
            ]
        );
        assert_eq!(gold.missing, ["§ 999", "§ 536", "§ 999"]);
        assert_eq!(gold.missing_distinct(), ["§ 536", "§ 999"]);
        assert_eq!(gold.count(), 5);
    }

    #[test]
    fn ids_naming_their_law_map_across_laws_and_every_failure_is_a_named_miss() {
        assert_eq!(
            split_law_id("§ 3 StVO 2013"),
            ("§ 3".into(), Some("StVO 2013".into()))
        );
        assert_eq!(
            split_law_id("Art 5 GG"),
            ("Art 5".into(), Some("GG".into()))
        );
        assert_eq!(split_law_id("§ 573c"), ("§ 573c".into(), None));
        let bgb = law(vec![
            section("§ 535", false, ""),
            section("§ 536", true, ""),
        ]);
        let mut stvo = law(vec![section("§ 3", false, "")]);
        stvo.abbreviation = "StVO 2013".into();
        let mut burlg = law(vec![section("§ 1", false, ""), section("§ 3", false, "")]);
        burlg.abbreviation = "BUrlG".into();
        let laws = [&bgb, &stvo, &burlg];
        let questions = [
            question(&["§ 3 BUrlG", "§ 535 BGB"]),
            question(&["§ 3 StVO", "§ 535"]),
            question(&["§ 536 BGB", "§ 1 KSchG", "§ 9 BUrlG"]),
        ];
        let gold = LawGold::map(&laws, Some(0), &questions);
        assert_eq!(
            gold.sections,
            [
                vec![(2, 1), (0, 0)],
                vec![(1, 0), (0, 0)],
                vec![
                    (u32::MAX, u32::MAX - 1),
                    (u32::MAX, u32::MAX - 2),
                    (u32::MAX, u32::MAX - 3)
                ]
            ]
        );
        assert_eq!((gold.laws(0), gold.laws(2)), (vec![0, 2], vec![]));
        let warnings: Vec<String> = gold.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "question 1: \"§ 3 StVO\" is read as StVO 2013",
                "question 2: BGB has no active section \"§ 536\" (a miss)",
                "question 2: \"§ 1 KSchG\" names a law that is not among the laws searched (a miss)",
                "question 2: BUrlG has no active section \"§ 9\" (a miss)",
            ]
        );
        // Without a law of their own, plain ids are misses that say how to write them.
        let plain = LawGold::map(&laws, None, &[question(&["§ 535"])]);
        assert_eq!(plain.sections, [vec![(u32::MAX, u32::MAX - 1)]]);
        assert_eq!(
            plain.warnings[0].to_string(),
            "question 0: \"§ 535\" names no law, and the questions have no law of their own (a miss); write it as `§ 3 BUrlG`"
        );
    }
}
