//! Cleaning of free-text questions before search.
//!
//! Questions written for a forum (GerLayQA's are) open with a greeting, close with thanks and a signature, and
//! carry links. None of that says anything about the law, yet every word of it is a BM25 term and a token of the
//! dense model's 512-token window. [`clean_question`] removes these parts with fixed, general rules (no list is
//! learned from the evaluation questions); `paragraf eval --clean-questions` measures what it changes.

/// Openings removed from the start of a question (longest first where one is a prefix of another).
const GREETINGS: &[&str] = &[
    "sehr geehrte damen und herren",
    "sehr geehrte",
    "sehr geehrter",
    "liebe community",
    "liebes forum",
    "liebe forengemeinde",
    "hallo zusammen",
    "hallo liebe",
    "hallo",
    "guten tag",
    "guten morgen",
    "guten abend",
    "moin",
    "servus",
    "hi",
];

/// Closings: from the first of these in the question's last [`SIGN_OFF_TAIL_BYTES`] onwards, everything is
/// dropped, unless a question (`?`) still follows.
const SIGN_OFFS: &[&str] = &[
    "vielen dank",
    "danke im voraus",
    "danke schon",
    "danke schön",
    "besten dank",
    "herzlichen dank",
    "mit freundlichen grüßen",
    "mit freundlichem gruß",
    "freundliche grüße",
    "viele grüße",
    "liebe grüße",
    "beste grüße",
    "schöne grüße",
];

/// Short closings that are also ordinary words or abbreviations (`LG` is also the Landgericht): they only count
/// when at most [`NAME_BYTES`] follow (a name).
const SHORT_SIGN_OFFS: &[&str] = &["mfg", "lg", "gruß", "grüße", "vg"];

/// A greeting clause ends at one of these within this many bytes after the greeting word.
const GREETING_CLAUSE_BYTES: usize = 80;
/// A closing is only looked for this close to the end.
const SIGN_OFF_TAIL_BYTES: usize = 300;
/// What may follow a short closing: a signature.
const NAME_BYTES: usize = 40;

/// The question without greeting, closing/signature and links, whitespace collapsed. Text without any of these
/// comes back unchanged apart from whitespace.
pub fn clean_question(text: &str) -> String {
    let without_links: Vec<&str> = text
        .split_whitespace()
        .filter(|w| {
            let w = w.trim_start_matches(['(', '<', '[', '"']);
            !(w.starts_with("http://") || w.starts_with("https://") || w.starts_with("www."))
        })
        .collect();
    let joined = without_links.join(" ");
    let body = strip_sign_off(strip_greeting(&joined));
    body.trim().to_string()
}

fn strip_greeting(text: &str) -> &str {
    for greeting in GREETINGS {
        if let Some(len) = prefix_len_ignoring_case(text, greeting) {
            if text[len..].starts_with(|c: char| c.is_alphanumeric()) {
                continue; // "Hinweis", "Hallodri": not a greeting
            }
            let rest = &text[len..];
            let clause_end = rest
                .char_indices()
                .take_while(|(i, _)| *i < GREETING_CLAUSE_BYTES)
                .find(|(_, c)| matches!(c, ',' | '!' | '.' | ':'))
                .map(|(i, c)| i + c.len_utf8());
            return rest[clause_end.unwrap_or(0)..].trim_start();
        }
    }
    text
}

fn strip_sign_off(text: &str) -> &str {
    let from = text.len().saturating_sub(SIGN_OFF_TAIL_BYTES).max(1);
    let cut = text
        .char_indices()
        .filter(|&(i, _)| i >= from)
        .filter(|&(i, _)| {
            text[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        })
        .find(|&(i, _)| {
            let rest = &text[i..];
            let closes = |list: &[&str], max_after: usize| {
                list.iter().any(|s| {
                    prefix_len_ignoring_case(rest, s).is_some_and(|len| {
                        !rest[len..].starts_with(|c: char| c.is_alphanumeric())
                            && rest.len() - len <= max_after
                    })
                })
            };
            !rest.contains('?')
                && (closes(SIGN_OFFS, SIGN_OFF_TAIL_BYTES) || closes(SHORT_SIGN_OFFS, NAME_BYTES))
        })
        .map(|(i, _)| i);
    match cut {
        Some(i) => &text[..i],
        None => text,
    }
}

/// Bytes of `text` that spell `lower_prefix` (lower case) ignoring case, or `None`.
fn prefix_len_ignoring_case(text: &str, lower_prefix: &str) -> Option<usize> {
    let mut want = lower_prefix.chars();
    let mut used = 0;
    for c in text.chars() {
        let Some(w) = want.as_str().chars().next() else {
            break;
        };
        if !c.to_lowercase().eq(std::iter::once(w)) {
            return None;
        }
        want.next();
        used += c.len_utf8();
    }
    want.as_str().is_empty().then_some(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_greeting_closing_and_links() {
        let q =
            "Sehr geehrte Damen und Herren,   mein Vermieter verlangt eine Mieterhöhung (siehe \
                 https://example.org/brief). Ist das zulässig? Mit freundlichen Grüßen Max Muster";
        assert_eq!(
            clean_question(q),
            "mein Vermieter verlangt eine Mieterhöhung (siehe Ist das zulässig?"
        );
        assert_eq!(
            clean_question(
                "Hallo zusammen! Darf der Nachbar bauen? Vielen Dank im Voraus, LG Anna"
            ),
            "Darf der Nachbar bauen?"
        );
        assert_eq!(
            clean_question("Guten Tag, kann ich kündigen? MfG"),
            "kann ich kündigen?"
        );
    }

    #[test]
    fn leaves_legal_text_alone() {
        for q in [
            "Hinweis des Vermieters: Ist die Kaution verzinst?",
            "Hallodri schuldet mir Geld.",
            "Wer haftet für den Schaden am Zaun?",
            // A thank-you early in the text, or one followed by the actual question, stays.
            "Vielen Dank vorab. Mein Arbeitgeber zahlt nicht, was kann ich tun?",
            "Der Mieter schuldet die Miete. Vielen Dank für Hinweise, aber gilt § 535 auch hier?",
            "Das LG München hat die Klage abgewiesen, weil die Frist schon lange abgelaufen war.",
        ] {
            assert_eq!(clean_question(q), q, "{q}");
        }
    }

    #[test]
    fn whitespace_only_and_greeting_only() {
        assert_eq!(clean_question("  \n "), "");
        assert_eq!(clean_question("Hallo,"), "");
        assert_eq!(clean_question("Grüße"), "Grüße");
    }

    #[test]
    fn prefix_matching_ignores_case_including_umlauts() {
        assert_eq!(prefix_len_ignoring_case("GRÜSSE", "grüße"), None);
        assert_eq!(prefix_len_ignoring_case("Grüße Anna", "grüße"), Some(7));
        assert_eq!(prefix_len_ignoring_case("Gr", "grüße"), None);
    }
}
