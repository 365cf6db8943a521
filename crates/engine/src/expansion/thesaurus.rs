//! Reader for OpenThesaurus's plain-text export (`openthesaurus.txt`, Debian package `openthesaurus-de-text`).
//!
//! One synonym set per line, terms separated by `;`; lines starting with `#` are comments (the file opens with
//! its copyright and LGPL notice, which [`Thesaurus::notice`] keeps so that anything derived can carry it). A
//! term may carry usage labels in a trailing parenthesised group, `Handy (Hauptform)`, `Knete (ugs., salopp)`,
//! and optional context words in other groups, `(sich) beschweren`, `abfinden (mit)`: the labels become
//! [`Term::tags`], every group is removed from [`Term::text`].
//!
//! A bad line does not spoil the file: it is skipped and recorded with its line number and problem, so the build
//! can warn. A file that is mostly bad (or has no synonym set at all) is rejected, since it is most likely not
//! this format.

use std::fmt;

/// Largest thesaurus read (the 2016 export has 2.3 MB).
pub const MAX_THESAURUS_BYTES: usize = 32 << 20;
/// Longest line accepted, in characters (the longest real set has about 1,700).
pub const MAX_LINE_CHARS: usize = 8192;
/// A file with more malformed lines than one in this many synonym lines is rejected as a whole.
pub const MALFORMED_REJECT_RATIO: usize = 10;

/// Usage labels OpenThesaurus puts in a term's trailing parentheses. A trailing group counts as labels only if
/// every comma-separated item is one of these; otherwise it is optional context (`(mit)`, `(sein)`).
pub const LABELS: &[&str] = &[
    "Abkürzung",
    "Amtsdeutsch",
    "DDR",
    "Eigenname",
    "Einheitenzeichen",
    "Hauptform",
    "Jargon",
    "Kindersprache",
    "Kurzform",
    "Markenname",
    "Plural",
    "Sprichwort",
    "Spruch",
    "Symbol",
    "abwertend",
    "altertümelnd",
    "auch fig.",
    "bair.",
    "berlinerisch",
    "bildungssprachlich",
    "biologisch",
    "botanisch",
    "derb",
    "engl.",
    "fachspr.",
    "fig.",
    "floskelhaft",
    "franz.",
    "geh.",
    "griechisch",
    "historisch",
    "ironisch",
    "ital.",
    "jur.",
    "juristisch",
    "kölsch",
    "lat.",
    "literarisch",
    "medizinisch",
    "militärisch",
    "männl.",
    "norddeutsch",
    "poetisch",
    "redensartlich",
    "regional",
    "rheinisch",
    "römisch",
    "ruhrdt.",
    "salopp",
    "schwäbisch",
    "scherzhaft",
    "scherzhaft-ironisch",
    "schweiz.",
    "selten",
    "sprichwörtlich",
    "süddt.",
    "ugs.",
    "variabel",
    "veraltend",
    "veraltet",
    "verhüllend",
    "vulg.",
    "weibl.",
    "wissenschaftlich",
    "österr.",
];

/// One term of a synonym set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The term without any parenthesised group, whitespace collapsed (`Handy`, `beschweren`).
    pub text: String,
    /// Usage labels from [`LABELS`] (`ugs.`, `fachspr.`), in file order.
    pub tags: Vec<String>,
}

impl Term {
    /// Whether the term is one word (no space, no `...` fragment, letters and hyphens only).
    pub fn is_single_word(&self) -> bool {
        !self.text.is_empty() && self.text.chars().all(|c| c.is_alphabetic() || c == '-')
    }

    /// Whether the term carries `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }
}

/// What is wrong with a skipped line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineProblem {
    /// Longer than [`MAX_LINE_CHARS`].
    TooLong,
    /// An empty term (`a;;b`, a trailing `;`, or a term that is only parentheses).
    EmptyTerm,
    /// `(` without `)`, `)` without `(`, or nested groups.
    Parentheses,
    /// A control character (tab, NUL, ...).
    ControlCharacter,
    /// Only one term: not a synonym set.
    SingleTerm,
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LineProblem::TooLong => "line longer than the limit",
            LineProblem::EmptyTerm => "empty term",
            LineProblem::Parentheses => "unbalanced or nested parentheses",
            LineProblem::ControlCharacter => "control character",
            LineProblem::SingleTerm => "only one term, not a synonym set",
        })
    }
}

/// A skipped line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// 1-based line number.
    pub line: usize,
    /// Why it was skipped.
    pub problem: LineProblem,
}

/// Why a thesaurus file is not usable at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThesaurusError {
    /// Larger than [`MAX_THESAURUS_BYTES`].
    #[error("the thesaurus has {0} bytes, more than the {MAX_THESAURUS_BYTES} read. Most likely this is not OpenThesaurus's text export")]
    TooLarge(usize),
    /// Not one usable synonym set.
    #[error("the thesaurus has no synonym set (lines of `;`-separated terms). Most likely this is not OpenThesaurus's text export (openthesaurus.txt)")]
    NoSynonymSets,
    /// Too many malformed lines.
    #[error("{malformed} of {lines} synonym lines of the thesaurus are malformed (first: line {}: {}). Most likely this is not OpenThesaurus's text export (openthesaurus.txt)", first.line, first.problem)]
    MostlyMalformed {
        /// Malformed lines.
        malformed: usize,
        /// Non-comment, non-empty lines.
        lines: usize,
        /// The first of them.
        first: Malformed,
    },
}

/// A parsed thesaurus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thesaurus {
    /// The comment lines before the first set, without `# ` (copyright and licence).
    pub notice: String,
    /// The synonym sets, each with at least two terms.
    pub sets: Vec<Vec<Term>>,
    /// Lines skipped, in order.
    pub malformed: Vec<Malformed>,
}

impl Thesaurus {
    /// Parses the text of an `openthesaurus.txt`; see the module docs.
    pub fn parse(text: &str) -> Result<Self, ThesaurusError> {
        if text.len() > MAX_THESAURUS_BYTES {
            return Err(ThesaurusError::TooLarge(text.len()));
        }
        let mut notice = Vec::new();
        let mut sets = Vec::new();
        let mut malformed = Vec::new();
        let mut lines = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(comment) = line.strip_prefix('#') {
                if sets.is_empty() && malformed.is_empty() {
                    notice.push(comment.strip_prefix(' ').unwrap_or(comment));
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            lines += 1;
            match parse_line(line) {
                Ok(set) => sets.push(set),
                Err(problem) => malformed.push(Malformed {
                    line: i + 1,
                    problem,
                }),
            }
        }
        if let Some(&first) = malformed.first() {
            if malformed.len() * MALFORMED_REJECT_RATIO > lines {
                return Err(ThesaurusError::MostlyMalformed {
                    malformed: malformed.len(),
                    lines,
                    first,
                });
            }
        }
        if sets.is_empty() {
            return Err(ThesaurusError::NoSynonymSets);
        }
        Ok(Self {
            notice: notice.join("\n").trim().to_string(),
            sets,
            malformed,
        })
    }
}

fn parse_line(line: &str) -> Result<Vec<Term>, LineProblem> {
    if line.chars().count() > MAX_LINE_CHARS {
        return Err(LineProblem::TooLong);
    }
    if line.chars().any(char::is_control) {
        return Err(LineProblem::ControlCharacter);
    }
    let terms = line
        .split(';')
        .map(parse_term)
        .collect::<Result<Vec<_>, _>>()?;
    if terms.len() < 2 {
        return Err(LineProblem::SingleTerm);
    }
    Ok(terms)
}

fn parse_term(raw: &str) -> Result<Term, LineProblem> {
    let raw = raw.trim();
    // Outside text and the parenthesised groups, checking balance.
    let mut text = String::new();
    let mut groups: Vec<(usize, String)> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (at, c) in raw.char_indices() {
        match (c, &mut open) {
            ('(', None) => open = Some((at, String::new())),
            (')', Some(_)) => groups.push(open.take().expect("open group")),
            ('(' | ')', _) => return Err(LineProblem::Parentheses),
            (c, Some((_, group))) => group.push(c),
            (c, None) => text.push(c),
        }
    }
    if open.is_some() {
        return Err(LineProblem::Parentheses);
    }
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(LineProblem::EmptyTerm);
    }
    // Labels: the last group, if it ends the term, follows a space and holds labels only.
    let tags = match groups.last() {
        Some((at, group)) if raw.ends_with(')') && raw[..*at].ends_with(char::is_whitespace) => {
            let items: Vec<&str> = group.split(',').map(str::trim).collect();
            if items.iter().all(|i| LABELS.contains(i)) {
                items.into_iter().map(String::from).collect()
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    };
    Ok(Term { text, tags })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str, tags: &[&str]) -> Term {
        Term {
            text: text.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn labels_are_unique() {
        let mut sorted = LABELS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), LABELS.len());
    }

    #[test]
    fn reads_sets_tags_context_and_the_notice() {
        let text = "# OpenThesaurus - German Thesaurus\n# GNU Lesser General Public License\n\
                    Einsatz;Kaution;Depot (schweiz.);Sicherheit\n\
                    \n\
                    (sich) beschweren;abfinden (mit);Knete (ugs., salopp);Angestellte(r)\n";
        let t = Thesaurus::parse(text).unwrap();
        assert_eq!(
            t.notice,
            "OpenThesaurus - German Thesaurus\nGNU Lesser General Public License"
        );
        assert!(t.malformed.is_empty());
        assert_eq!(
            t.sets,
            [
                vec![
                    term("Einsatz", &[]),
                    term("Kaution", &[]),
                    term("Depot", &["schweiz."]),
                    term("Sicherheit", &[]),
                ],
                vec![
                    term("beschweren", &[]),
                    term("abfinden", &[]),
                    term("Knete", &["ugs.", "salopp"]),
                    term("Angestellte", &[]),
                ],
            ]
        );
        assert!(t.sets[0][0].is_single_word());
        assert!(!term("Entschädigung in Geld", &[]).is_single_word());
        assert!(!term("Deputat...", &[]).is_single_word());
    }

    #[test]
    fn malformed_lines_are_skipped_with_their_line_numbers() {
        let long = vec!["Wort"; MAX_LINE_CHARS / 4].join(";");
        let good = "Miete;Pacht\n".repeat(80);
        let text = format!(
            "# notice\nKaution;;Sicherheit\nHandy;(Mobiltelefon\nChef;Boss)\nEinzelwort\n{long}\nTier;Vieh\tx\nErbe;(ugs.)\n{good}"
        );
        let t = Thesaurus::parse(&text).unwrap();
        let problems: Vec<(usize, LineProblem)> =
            t.malformed.iter().map(|m| (m.line, m.problem)).collect();
        assert_eq!(
            problems,
            [
                (2, LineProblem::EmptyTerm),
                (3, LineProblem::Parentheses),
                (4, LineProblem::Parentheses),
                (5, LineProblem::SingleTerm),
                (6, LineProblem::TooLong),
                (7, LineProblem::ControlCharacter),
                (8, LineProblem::EmptyTerm),
            ]
        );
        assert_eq!(t.sets.len(), 80);
        assert_eq!(t.notice, "notice");
        assert_eq!(
            LineProblem::Parentheses.to_string(),
            "unbalanced or nested parentheses"
        );
    }

    #[test]
    fn rejects_files_that_are_not_a_thesaurus() {
        assert_eq!(
            Thesaurus::parse("# only a comment\n\n").unwrap_err(),
            ThesaurusError::NoSynonymSets
        );
        let err = Thesaurus::parse("<html>\n<body>Not found</body>\n</html>\nA;B\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "3 of 4 synonym lines of the thesaurus are malformed (first: line 1: only one term, not a synonym set). \
             Most likely this is not OpenThesaurus's text export (openthesaurus.txt)"
        );
        let huge = "a".repeat(MAX_THESAURUS_BYTES + 1);
        assert_eq!(
            Thesaurus::parse(&huge).unwrap_err(),
            ThesaurusError::TooLarge(MAX_THESAURUS_BYTES + 1)
        );
    }
}
