//! Evaluation: GerLayQA questions, gold mapping, the harness and the `report.json` contract, all pure so the
//! CLI, the browser app and tests share one implementation.
//!
//! A front end reads the questions (optionally [`question::clean_question`]) and embeds them (IO and the
//! encoder stay outside), maps their gold ids with [`gold`], runs [`harness::evaluate`] per strategy and mode
//! (which ranks with the engine and scores with `paragraf_stats::metrics`), lets [`harness::significance`] say
//! whether differences are real (`paragraf_stats::stats`), and writes or reads the result as a
//! [`report::Report`]. Why a crate of its own: nothing that searches needs it; it sits above the engine.
#![warn(missing_docs)]

pub mod among;
pub mod baseline;
pub mod gold;
pub mod harness;
pub mod learning;
pub mod question;
pub mod report;
pub mod tuning;

/// The fault of `cause` if it is one of this crate's errors ([`paragraf_format::fault`]).
pub fn fault_of(
    cause: &(dyn std::error::Error + 'static),
) -> Option<paragraf_format::fault::Fault> {
    use paragraf_format::fault::blame;
    blame::<report::ReportError>(cause).or_else(|| blame::<baseline::BaselineError>(cause))
}

use serde::Deserialize;

/// Mean of per-question figures (0 for none): one figure per question, every one defined.
fn mean(values: &[f64]) -> f64 {
    paragraf_stats::metrics::mean(values.iter().map(|&v| Some(v))).unwrap_or(0.0)
}

/// One GerLayQA question as stored in the dataset files.
#[derive(Clone, Debug, Deserialize)]
pub struct Question {
    /// The raw forum text (HTML entities still escaped; see [`Question::text`]).
    #[serde(rename = "Question_text")]
    pub raw_text: String,
    /// Gold section designations as written (`§ 573b`).
    #[serde(rename = "Paragraphs")]
    pub paragraphs: Vec<String>,
}

impl Question {
    /// The question text with HTML entities unescaped.
    pub fn text(&self) -> String {
        unescape_html(&self.raw_text)
    }
}

/// Replaces HTML character references (`&#8222;`, `&#x201E;`, `&auml;`, `&amp;`, ...) by their characters.
/// Unknown or malformed references are left as they are.
pub fn unescape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| decode_entity(&rest[1..=end]).map(|c| (c, end + 2)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "shy" => '\u{ad}',
        "plus" => '+',
        "lsqb" => '[',
        "rsqb" => ']',
        "auml" => 'ä',
        "ouml" => 'ö',
        "uuml" => 'ü',
        "Auml" => 'Ä',
        "Ouml" => 'Ö',
        "Uuml" => 'Ü',
        "szlig" => 'ß',
        "sect" => '§',
        "euro" => '€',
        "bdquo" => '„',
        "ldquo" => '“',
        "rdquo" => '”',
        "sbquo" => '‚',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "bull" => '•',
        "deg" => '°',
        "acute" => '´',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_numeric_and_named_references() {
        assert_eq!(
            unescape_html(
                "&#8222;Mieter&#8220; &amp; K&auml;ufer &#x201E;x&plus;y&#39; &lsqb;1&rsqb;"
            ),
            "„Mieter“ & Käufer „x+y' [1]"
        );
        // Unknown, unterminated and bare ampersands stay.
        assert_eq!(unescape_html("A & B &foo; &amp"), "A & B &foo; &amp");
    }

    #[test]
    fn parses_the_dataset_format() {
        let json = r#"[{"Question_text": "Darf der Vermieter &#8222;einfach&#8220; k&uuml;ndigen?", "Paragraphs": ["§ 573", "§ 573b"]}]"#;
        let questions: Vec<Question> = serde_json::from_str(json).unwrap();
        assert_eq!(
            questions[0].text(),
            "Darf der Vermieter „einfach“ kündigen?"
        );
        assert_eq!(questions[0].paragraphs, ["§ 573", "§ 573b"]);
    }
}
