//! Gold sections: a question's designations (`§ 573b`) mapped to section indices of the evaluated law.
//!
//! The paper counts a gold id the corpus lacks (a repealed or renumbered section) as a miss, not as a question
//! to drop: dropping would flatter every strategy alike but hide how much of the benchmark is unreachable. So
//! each missing id gets a placeholder index no ranking can contain, and the ids are kept for the report.

use super::Question;
use crate::Law;

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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::law::Section;

    pub(crate) fn section(designation: &str, repealed: bool, text: &str) -> Section {
        Section {
            designation: designation.into(),
            title: String::new(),
            structure: None,
            repealed,
            text: text.into(),
            subsections: vec![],
            sentences: vec![],
            list_items: vec![],
            references: vec![],
            footnotes: vec![],
        }
    }

    pub(crate) fn law(sections: Vec<Section>) -> Law {
        Law {
            abbreviation: "BGB".into(),
            slug: "bgb".into(),
            title: String::new(),
            doknr: String::new(),
            build_date: String::new(),
            stand: vec![],
            source: String::new(),
            structure: vec![],
            sections,
        }
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
}
