//! Names that come from data or users, checked before they are used: law abbreviations, official slugs and the
//! file names a manifest lists.
//!
//! Why: a law's abbreviation comes from the XML (`jurabk`), a slug from a user or a catalogue, a file name from a
//! `manifest.json` anybody can edit. Each becomes part of a path or a URL, so each is held to a small documented
//! alphabet here, in paragraf-format, where the CLI and the browser both see the same rule. Native code turns checked names
//! into paths with `paragraf_fs::join_name`.
//!
//! * Law abbreviation: 1–64 characters; letters (including umlauts and ß), digits, space and `- / § . , ( ) & '`;
//!   no leading or trailing space. The federal archive's 6,877 abbreviations all fit (`BBesG/BesÜGBek 2010`).
//! * Slug (gesetze-im-internet.de): 1–100 characters of `a-z 0-9 _ -`.
//! * File name: 1–200 characters of `A-Z a-z 0-9 . _ -`, not starting with a dot: never a folder, never hidden,
//!   never `..`. [`file_stem`] turns any abbreviation into such a name part.

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Not a law abbreviation (named as [`echo`] names it).
    #[error("{0} is not a law abbreviation: allowed are 1 to 64 letters, digits, spaces and - / § . , ( ) & ' (no space at either end)")]
    Abbreviation(String),
    /// Not a slug.
    #[error("{0} is not a gesetze-im-internet.de slug: allowed are 1 to 100 characters a-z, 0-9, _ and -")]
    Slug(String),
    /// Not a plain file name.
    #[error("{0} is not a plain file name: allowed are 1 to 200 characters A-Z, a-z, 0-9, '.', '_' and '-', not starting with '.'. Most likely the manifest was edited by hand or comes from elsewhere")]
    FileName(String),
}

/// Longest input quoted back in a message ([`echo`]).
pub const MAX_ECHO_CHARS: usize = 64;

/// How a message names an input it refuses: quoted when short and printable, else only by its size — a refusal
/// must not hand a 15 MiB argument back, nor a control character to a terminal or log.
pub fn echo(input: &str) -> String {
    if input.chars().count() <= MAX_ECHO_CHARS && !input.chars().any(char::is_control) {
        format!("{input:?}")
    } else {
        format!("({} bytes)", input.len())
    }
}

/// At most `max` of `names`, comma-separated, with how many more there are: a refusal lists what exists without
/// listing 6,877 laws.
pub fn listed<'a>(names: impl ExactSizeIterator<Item = &'a str>, max: usize) -> String {
    let total = names.len();
    let shown: Vec<&str> = names.take(max).collect();
    match total - shown.len() {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Longest abbreviation.
pub const MAX_ABBREVIATION_CHARS: usize = 64;
/// Longest slug.
pub const MAX_SLUG_CHARS: usize = 100;
/// Longest file name.
pub const MAX_FILE_NAME_CHARS: usize = 200;

/// Checks a law abbreviation (see the module docs).
pub fn check_law_abbreviation(name: &str) -> Result<(), NameError> {
    let ok = (1..=MAX_ABBREVIATION_CHARS).contains(&name.chars().count())
        && !name.starts_with(' ')
        && !name.ends_with(' ')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || " -/§.,()&'".contains(c));
    ok.then_some(())
        .ok_or_else(|| NameError::Abbreviation(echo(name)))
}

/// Checks an official slug (see the module docs).
pub fn check_slug(slug: &str) -> Result<(), NameError> {
    let ok = (1..=MAX_SLUG_CHARS).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    ok.then_some(()).ok_or_else(|| NameError::Slug(echo(slug)))
}

/// Checks a plain file name (see the module docs): it can only name a file directly inside a folder.
pub fn check_file_name(name: &str) -> Result<(), NameError> {
    let ok = (1..=MAX_FILE_NAME_CHARS).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
    ok.then_some(())
        .ok_or_else(|| NameError::FileName(echo(name)))
}

/// A file-name part for a law abbreviation: umlauts and ß spelled out (`Ü` → `Ue`), every other character outside
/// `A-Z a-z 0-9 -` becomes `_` (`BBesG/BesÜGBek 2010` → `BBesG_BesUeGBek_2010`). Plain abbreviations (`BGB`)
/// stay as they are, so existing file names do not change.
pub fn file_stem(abbreviation: &str) -> String {
    let mut out = String::with_capacity(abbreviation.len());
    for c in abbreviation.chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' => out.push(c),
            'Ä' => out.push_str("Ae"),
            'Ö' => out.push_str("Oe"),
            'Ü' => out.push_str("Ue"),
            'ä' => out.push_str("ae"),
            'ö' => out.push_str("oe"),
            'ü' => out.push_str("ue"),
            'ß' => out.push_str("ss"),
            _ => out.push('_'),
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_input_is_named_by_its_size_when_long_or_unprintable() {
        assert_eq!(echo("BGB"), "\"BGB\"");
        assert_eq!(echo(&"x".repeat(15 << 20)), "(15728640 bytes)");
        assert_eq!(echo("a\u{1b}[31m"), "(6 bytes)");
        assert_eq!(
            check_law_abbreviation(&"A".repeat(1000)).unwrap_err().to_string(),
            "(1000 bytes) is not a law abbreviation: allowed are 1 to 64 letters, digits, spaces and - / § . , ( ) & ' (no space at either end)"
        );
        let laws = ["BGB", "GG", "StGB"];
        assert_eq!(listed(laws.iter().copied(), 5), "BGB, GG, StGB");
        assert_eq!(listed(laws.iter().copied(), 2), "BGB, GG and 1 more");
    }

    #[test]
    fn abbreviations_of_the_archive_pass_and_path_tricks_do_not() {
        for good in [
            "BGB",
            "BBesG/BesÜGBek 2010",
            "SGB 5",
            "AO 1977",
            "BPräsKldgBAG/BSGAnO",
            "§ 10 AEG",
        ] {
            check_law_abbreviation(good).unwrap();
        }
        for bad in [
            "",
            " BGB",
            "BGB ",
            "a\0b",
            "a\\b",
            "a\nb",
            &"A".repeat(65),
            "<script>",
        ] {
            assert!(check_law_abbreviation(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_law_abbreviation("").unwrap_err().to_string(),
            "\"\" is not a law abbreviation: allowed are 1 to 64 letters, digits, spaces and - / § . , ( ) & ' (no space at either end)"
        );
    }

    #[test]
    fn slugs() {
        for good in ["bgb", "sgb_5", "thw-helfrg", "bpr_skldgbag_bsgano"] {
            check_slug(good).unwrap();
        }
        for bad in ["", "../../etc", "BGB", "a/b", "a b", "a.b", "%2e%2e"] {
            assert!(check_slug(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn file_names_stay_inside_their_folder() {
        for good in ["BGB.law.0123abcd.pgb", "manifest.json", "GG.xml"] {
            check_file_name(good).unwrap();
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "/dev/zero",
            "a/b",
            ".hidden",
            "a\\b",
            "ä.pgb",
        ] {
            assert!(check_file_name(bad).is_err(), "{bad:?}");
        }
        let stem = file_stem("BBesG/BesÜGBek 2010");
        assert_eq!(stem, "BBesG_BesUeGBek_2010");
        check_file_name(&format!("{stem}.xml")).unwrap();
        assert_eq!(file_stem("BGB"), "BGB");
        assert_eq!(file_stem(""), "_");
    }
}
