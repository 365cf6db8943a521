//! Which sections of other laws cite a section: the citation graph across laws, computed once per folder.
//!
//! Finding who cites `§ 1 AufbhG` means reading every other law's citations (6,877 law bundles, 2–3 s natively;
//! impossible in a browser that fetches one law). So `paragraf federal` writes the answer for every section, in
//! shards of contiguous ranges of cited laws (`cited-by-<n>.<hash>.pgb`, about [`SHARD_BYTES`] each, the
//! manifest names each shard's first law), which the CLI, MCP and the app read instead: the app fetches the one
//! shard of the law it shows. A shard holds a table of the sections involved (law, designation, heading, each
//! once) and per cited section the sections citing it. Laws are named by abbreviation and sections by
//! designation, not by index, so a shard stays right for a law bundle rebuilt with the same text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use paragraf_format::frame::{BundleError, FileKind};
use paragraf_law::Law;

use crate::results::LawSectionRef;

/// A cited-by shard (compressed from version 2 on).
pub const CITED_BY: FileKind = FileKind::new(b"PGRF-CBY", "cited-by file", 2, 1)
    .remedy(super::files::REBUILD_FEDERAL)
    .compressed_since(2);

/// About how large `paragraf federal` makes a shard (a law cited more than this ends the shard it is in).
pub const SHARD_BYTES: usize = 64 * 1024;
/// Most laws a cited-by file may name (the federal archive has 6,877).
pub const MAX_CITED_LAWS: usize = 1 << 17;
/// Most sections a cited-by file may name (the archive has about 100,000 active ones).
pub const MAX_CITED_SECTIONS: usize = 1 << 21;
/// Most citations (cited section, citing section) a cited-by file may hold.
pub const MAX_CITATIONS: usize = 1 << 23;
/// Longest abbreviation, designation, heading or generator name a cited-by file may hold (bytes).
const MAX_NAME_BYTES: usize = 4096;

/// Which sections of other laws cite the sections of a contiguous range of a folder's laws.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CitedByFile {
    /// The tool that wrote it.
    pub generator: String,
    /// The first cited law of its range (the manifest lists the shard under it; empty: the first shard).
    pub from: String,
    /// The first cited law of the next shard (`None`: the last shard).
    pub until: Option<String>,
    /// The laws named, in strictly ascending order.
    pub laws: Vec<String>,
    /// Every section cited or citing, each once.
    pub sections: Vec<NamedSection>,
    /// Per cited section, in ascending order of (law, designation): who cites it.
    pub cited: Vec<CitedSection>,
}

/// A section named by law and designation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedSection {
    /// Index into [`CitedByFile::laws`].
    pub law: u32,
    /// `§ 536`.
    pub designation: String,
    /// Heading.
    pub title: String,
}

/// One cited section and the sections of other laws citing it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CitedSection {
    /// Index into [`CitedByFile::sections`].
    pub section: u32,
    /// Indices into [`CitedByFile::sections`], in the folder's law and section order, each (law, designation) once.
    pub by: Vec<u32>,
}

/// Why bytes are not a usable cited-by file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CitedByError {
    /// Framing or decoding failed.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// Decoded, but beyond its limits or inconsistent.
    #[error("corrupt cited-by file: {0}. {rebuild}", rebuild = super::files::REBUILD_FEDERAL)]
    Invalid(String),
    /// A shard of another range than the manifest lists it under.
    #[error("the cited-by file for laws from {expected:?} holds the laws from {found:?}. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`")]
    WrongShard {
        /// The first law the manifest lists it under.
        expected: String,
        /// The first law it holds.
        found: String,
    },
}

/// The shard of `shards` that holds the sections of `law`: the one whose first law (`first_law`) is the last
/// not after it (the first shard's is empty). Any order.
pub fn shard_for<'a, T>(
    shards: &'a [T],
    first_law: impl Fn(&T) -> &str,
    law: &str,
) -> Option<&'a T> {
    shards
        .iter()
        .filter(|s| first_law(s) <= law)
        .max_by(|a, b| first_law(a).cmp(first_law(b)))
}

/// The citations of `laws` among each other, resolved as [`super::routing::cited_by_other_laws`] resolves them, in
/// shards of contiguous ranges of cited laws of about `shard_bytes` each; at least one shard, the first from `""`.
pub fn cited_by_shards(generator: &str, laws: &[&Law], shard_bytes: usize) -> Vec<CitedByFile> {
    let cited = super::routing::cited_by_other_laws(laws);
    let mut keys: Vec<(usize, usize)> = cited.keys().copied().collect();
    keys.sort_unstable_by(|a, b| {
        (laws[a.0].abbreviation.as_str(), a).cmp(&(laws[b.0].abbreviation.as_str(), b))
    });
    // Cut between cited laws once a range's names add up to `shard_bytes`.
    let size = |&(law, section): &(usize, usize)| -> usize {
        let named = |l: usize, s: usize| {
            laws[l].abbreviation.len()
                + laws[l].sections[s].designation.len()
                + laws[l].sections[s].title.len()
        };
        named(law, section)
            + cited[&(law, section)]
                .iter()
                .map(|&(l, s)| named(l, s))
                .sum::<usize>()
    };
    let mut ranges: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    let mut bytes = 0;
    for (k, key) in keys.iter().enumerate() {
        let new_law = k > 0 && laws[keys[k - 1].0].abbreviation != laws[key.0].abbreviation;
        if new_law && bytes >= shard_bytes {
            ranges.push(Vec::new());
            bytes = 0;
        }
        bytes += size(key);
        ranges.last_mut().expect("one range at least").push(*key);
    }
    let firsts: Vec<String> = ranges
        .iter()
        .enumerate()
        .map(|(n, r)| match (n, r.first()) {
            (0, _) | (_, None) => String::new(),
            (_, Some(&(law, _))) => laws[law].abbreviation.clone(),
        })
        .collect();
    ranges
        .iter()
        .enumerate()
        .map(|(n, range)| {
            shard(
                generator,
                laws,
                &cited,
                range,
                firsts[n].clone(),
                firsts.get(n + 1).cloned(),
            )
        })
        .collect()
}

/// One shard: `keys` (cited sections, in order) and who cites them.
fn shard(
    generator: &str,
    laws: &[&Law],
    cited: &HashMap<(usize, usize), Vec<(usize, usize)>>,
    keys: &[(usize, usize)],
    from: String,
    until: Option<String>,
) -> CitedByFile {
    let mut named: Vec<(usize, usize)> = keys
        .iter()
        .flat_map(|key| std::iter::once(*key).chain(cited[key].iter().copied()))
        .collect();
    named.sort_unstable();
    named.dedup();
    let mut names: Vec<&str> = named
        .iter()
        .map(|&(l, _)| laws[l].abbreviation.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let law_number = |l: usize| -> u32 {
        names
            .binary_search(&laws[l].abbreviation.as_str())
            .expect("every named law is listed") as u32
    };
    let sections: Vec<NamedSection> = named
        .iter()
        .map(|&(l, s)| NamedSection {
            law: law_number(l),
            designation: laws[l].sections[s].designation.clone(),
            title: laws[l].sections[s].title.clone(),
        })
        .collect();
    let number = |key: &(usize, usize)| -> u32 {
        named.binary_search(key).expect("every section is named") as u32
    };
    let name = |n: u32| {
        let s = &sections[n as usize];
        (s.law, s.designation.as_str())
    };
    let mut entries: Vec<CitedSection> = keys
        .iter()
        .map(|key| {
            // Two citing sections of one law under one designation (`Anlage` twice) would be one link twice.
            let mut by: Vec<u32> = Vec::new();
            for n in cited[key].iter().map(&number) {
                if !by.iter().any(|&b| name(b) == name(n)) {
                    by.push(n);
                }
            }
            CitedSection {
                section: number(key),
                by,
            }
        })
        .collect();
    entries.sort_by(|a, b| name(a.section).cmp(&name(b.section)));
    // One entry per cited designation: the cited sections come from designation lookups, which name one section
    // each, so two keys only meet here when two laws share an abbreviation (which a build refuses).
    entries.dedup_by(|later, kept| name(later.section) == name(kept.section));
    CitedByFile {
        generator: generator.to_string(),
        from,
        until,
        laws: names.into_iter().map(str::to_string).collect(),
        sections,
        cited: entries,
    }
}

impl CitedByFile {
    /// Encodes with magic, version and checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        CITED_BY.encode(self)
    }

    /// Decodes and checks limits and consistency: at most [`MAX_CITED_LAWS`] laws in strictly ascending order,
    /// [`MAX_CITED_SECTIONS`] sections and [`MAX_CITATIONS`] citations, every index in range, the cited sections
    /// in strictly ascending order and inside the file's range, no section cited by its own law; and that it is
    /// the shard `from` (the first law the manifest lists it under).
    pub fn from_bytes(bytes: &[u8], from: &str) -> Result<CitedByFile, CitedByError> {
        let file: CitedByFile = CITED_BY.decode(bytes)?;
        file.check().map_err(CitedByError::Invalid)?;
        if file.from != from {
            return Err(CitedByError::WrongShard {
                expected: from.to_string(),
                found: file.from,
            });
        }
        Ok(file)
    }

    fn check(&self) -> Result<(), String> {
        let long = |what: &str, s: &str| {
            (s.len() > MAX_NAME_BYTES)
                .then(|| format!("{what} of {} bytes, more than {MAX_NAME_BYTES}", s.len()))
        };
        for (what, name) in [
            ("a generator name", &self.generator),
            ("a first law", &self.from),
            (
                "a next shard's first law",
                self.until.as_ref().unwrap_or(&self.from),
            ),
        ] {
            if let Some(e) = long(what, name) {
                return Err(e);
            }
        }
        if self.until.as_ref().is_some_and(|until| *until <= self.from) {
            return Err(format!(
                "a range from {:?} until {:?}",
                self.from,
                self.until.as_deref().unwrap_or_default()
            ));
        }
        if self.laws.len() > MAX_CITED_LAWS {
            return Err(format!(
                "{} laws, more than {MAX_CITED_LAWS}",
                self.laws.len()
            ));
        }
        for law in &self.laws {
            if law.is_empty() {
                return Err("a law without an abbreviation".into());
            }
            if let Some(e) = long("an abbreviation", law) {
                return Err(e);
            }
        }
        if let Some(pair) = self.laws.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "the laws are not in ascending order ({} before {})",
                pair[0], pair[1]
            ));
        }
        if self.sections.len() > MAX_CITED_SECTIONS {
            return Err(format!(
                "{} sections, more than {MAX_CITED_SECTIONS}",
                self.sections.len()
            ));
        }
        for s in &self.sections {
            if s.law as usize >= self.laws.len() {
                return Err(format!("a section of law {} of {}", s.law, self.laws.len()));
            }
            if let Some(e) =
                long("a designation", &s.designation).or_else(|| long("a heading", &s.title))
            {
                return Err(e);
            }
        }
        if self.cited.len() > MAX_CITED_SECTIONS {
            return Err(format!(
                "{} cited sections, more than {MAX_CITED_SECTIONS}",
                self.cited.len()
            ));
        }
        let citations: usize = self.cited.iter().map(|c| c.by.len()).sum();
        if citations > MAX_CITATIONS {
            return Err(format!("{citations} citations, more than {MAX_CITATIONS}"));
        }
        let named = |n: u32| -> Result<&NamedSection, String> {
            self.sections
                .get(n as usize)
                .ok_or_else(|| format!("section {n} of {} named", self.sections.len()))
        };
        let mut last: Option<&NamedSection> = None;
        for entry in &self.cited {
            let cited = named(entry.section)?;
            if let Some(last) = last {
                if (last.law, &last.designation) >= (cited.law, &cited.designation) {
                    return Err(format!(
                        "the cited sections are not in ascending order ({} {} before {} {})",
                        last.designation,
                        self.laws[last.law as usize],
                        cited.designation,
                        self.laws[cited.law as usize]
                    ));
                }
            }
            let law = &self.laws[cited.law as usize];
            if *law < self.from || self.until.as_ref().is_some_and(|until| law >= until) {
                return Err(format!(
                    "{} {law} outside its range from {:?}",
                    cited.designation, self.from
                ));
            }
            last = Some(cited);
            for &by in &entry.by {
                if named(by)?.law == cited.law {
                    return Err(format!(
                        "{} {} cited by its own law",
                        cited.designation, self.laws[cited.law as usize]
                    ));
                }
            }
        }
        Ok(())
    }

    /// The sections of other laws citing `designation` of `law`, in the folder's law and section order (none
    /// when nothing cites it or the file does not know the law).
    pub fn citing(&self, law: &str, designation: &str) -> Vec<LawSectionRef> {
        let Ok(law) = self.laws.binary_search_by(|l| l.as_str().cmp(law)) else {
            return Vec::new();
        };
        let key = |c: &CitedSection| {
            let s = &self.sections[c.section as usize];
            (s.law as usize, s.designation.as_str())
        };
        let Ok(at) = self
            .cited
            .binary_search_by(|c| key(c).cmp(&(law, designation)))
        else {
            return Vec::new();
        };
        self.cited[at]
            .by
            .iter()
            .map(|&n| {
                let s = &self.sections[n as usize];
                LawSectionRef {
                    law: self.laws[s.law as usize].clone(),
                    designation: s.designation.clone(),
                    title: s.title.clone(),
                }
            })
            .collect()
    }

    /// Sections of its range cited by another law.
    pub fn len(&self) -> usize {
        self.cited.len()
    }

    /// Whether no section is cited by another law.
    pub fn is_empty(&self) -> bool {
        self.cited.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> CitedByFile {
        let section = |law: u32, designation: &str| NamedSection {
            law,
            designation: designation.into(),
            title: format!("Titel {designation}"),
        };
        CitedByFile {
            generator: "test".into(),
            from: "A".into(),
            until: Some("B".into()),
            laws: vec!["AufbhG".into(), "AufbhV".into()],
            sections: vec![section(0, "§ 1"), section(1, "§ 2"), section(1, "§ 3")],
            cited: vec![CitedSection {
                section: 0,
                by: vec![1, 2],
            }],
        }
    }

    #[test]
    fn round_trip_and_bad_input() {
        let bytes = file().to_bytes();
        assert_eq!(&bytes[..8], CITED_BY.magic);
        let back = CitedByFile::from_bytes(&bytes, "A").unwrap();
        assert_eq!(back, file());
        assert_eq!(
            back.citing("AufbhG", "§ 1"),
            [
                LawSectionRef {
                    law: "AufbhV".into(),
                    designation: "§ 2".into(),
                    title: "Titel § 2".into()
                },
                LawSectionRef {
                    law: "AufbhV".into(),
                    designation: "§ 3".into(),
                    title: "Titel § 3".into()
                }
            ]
        );
        let message = |bytes: &[u8]| CitedByFile::from_bytes(bytes, "A").unwrap_err().to_string();
        assert_eq!(
            CitedByFile::from_bytes(&bytes, "BGB").unwrap_err().to_string(),
            "the cited-by file for laws from \"BGB\" holds the laws from \"A\". Most likely the folder mixes files of two builds; rebuild with `paragraf federal`"
        );
        let payload = bytes.len() - 24;
        assert_eq!(
            message(&bytes[..bytes.len() - 3]),
            format!("bundle is truncated: the header announces {payload} payload bytes but {} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`", payload - 3)
        );
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(
            message(&flipped).starts_with("bundle is corrupt: checksum"),
            "{}",
            message(&flipped)
        );
        assert_eq!(
            message(b"<html>not found</html>...................."),
            "not a Paragraf cited-by file: the file starts with \"<html>no\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut old = bytes.clone();
        old[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(
            message(&old),
            "cited-by file format version 0 is older than this Paragraf reads (1 to 2). Rebuild the index across laws with `paragraf federal`"
        );
        // Decoded, but inconsistent: each refused with its reason.
        let refused = |change: fn(&mut CitedByFile)| {
            let mut file = file();
            change(&mut file);
            message(&file.to_bytes())
        };
        assert_eq!(
            refused(|f| f.laws.swap(0, 1)),
            "corrupt cited-by file: the laws are not in ascending order (AufbhV before AufbhG). Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.cited[0].by.push(7)),
            "corrupt cited-by file: section 7 of 3 named. Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.sections[1].law = 0),
            "corrupt cited-by file: § 1 AufbhG cited by its own law. Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.sections[2].law = 5),
            "corrupt cited-by file: a section of law 5 of 2. Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.cited.push(CitedSection {
                section: 0,
                by: vec![1]
            })),
            "corrupt cited-by file: the cited sections are not in ascending order (§ 1 AufbhG before § 1 AufbhG). Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.until = Some("AufbhG".into())),
            "corrupt cited-by file: § 1 AufbhG outside its range from \"A\". Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.until = Some("A".into())),
            "corrupt cited-by file: a range from \"A\" until \"A\". Rebuild the index across laws with `paragraf federal`"
        );
        assert_eq!(
            refused(|f| f.laws[0] = "x".repeat(5000)),
            "corrupt cited-by file: an abbreviation of 5000 bytes, more than 4096. Rebuild the index across laws with `paragraf federal`"
        );
    }
}
