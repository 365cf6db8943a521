//! Built-in, deterministic proposition splitting.
//!
//! The paper has an LLM decompose sentences so that "each proposition retains the conditions of the original
//! norm and isolates one of its legal consequences". Without a model we apply the three decompositions that
//! statute grammar makes mechanical, and leave everything else whole (the paper's rule for unsplittable units):
//!
//! 1. **Enumerations**: `Berechtigt sind: 1. der Mann, 2. die Mutter und 3. das Kind.` gives one proposition per
//!    item, each with the lead-in (`Berechtigt sind: der Mann`), since the lead-in carries the condition.
//! 2. **Semicolons**: `...; dies gilt nicht, wenn ...` separates independent Halbsätze.
//! 3. **Coordinated consequences**: `Der Verkäufer ist verpflichtet, dem Käufer die Sache zu übergeben und das
//!    Eigentum zu verschaffen.` gives `Der Verkäufer ist verpflichtet, dem Käufer die Sache zu übergeben.` and
//!    `Der Verkäufer ist verpflichtet, das Eigentum zu verschaffen.` — the shared clause before the comma is
//!    repeated, each coordinated infinitive group (`zu` + verb) becomes its own consequence.

use paragraf_law::sentences::starts_list_item;

/// Version of these rules, recorded in bundles built with them.
pub const RULES_VERSION: u32 = 1;

/// Splits one sentence into propositions; returns the sentence alone when no rule applies.
pub fn split_builtin(sentence: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in split_enumeration(sentence) {
        for half in split_semicolons(&part) {
            out.extend(split_coordinated_infinitives(&half));
        }
    }
    out
}

fn finish(text: &str) -> String {
    let t = text.trim().trim_end_matches([',', ';', ':']).trim_end();
    let t = t
        .strip_suffix(" und")
        .or_else(|| t.strip_suffix(" oder"))
        .unwrap_or(t)
        .trim_end();
    if t.ends_with(['.', '?', '!']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// `lead-in:\n1. a,\n2. b und\n3. c.` -> `lead-in a.`, `lead-in b.`, `lead-in c.` (nested items stay with their parent).
fn split_enumeration(sentence: &str) -> Vec<String> {
    let lines: Vec<&str> = sentence.split('\n').collect();
    if lines.len() < 3 || !lines[1..].iter().any(|l| starts_list_item(l)) {
        return vec![sentence.to_string()];
    }
    let lead = lines[0].trim_end_matches(':').trim_end();
    let mut items: Vec<String> = Vec::new();
    let mut tail = String::new();
    for line in &lines[1..] {
        if starts_list_item(line) && !is_nested_label(line) {
            let body = line.split_once(' ').map_or("", |(_, b)| b);
            items.push(body.to_string());
        } else if let Some(last) = items.last_mut().filter(|_| is_nested_label(line)) {
            last.push(' ');
            last.push_str(line);
        } else {
            tail.push(' ');
            tail.push_str(line);
        }
    }
    if items.len() < 2 {
        return vec![sentence.to_string()];
    }
    items
        .iter()
        .map(|item| {
            let item = item.trim().trim_end_matches(['.', ',', ';']);
            let item = item
                .strip_suffix(" und")
                .or_else(|| item.strip_suffix(" oder"))
                .unwrap_or(item);
            finish(&format!("{lead} {item}{tail}"))
        })
        .collect()
}

/// Letter labels (`a)`, `aa)`) and dashes nest under numbered items.
fn is_nested_label(line: &str) -> bool {
    line.split_once(' ').is_some_and(|(label, _)| {
        label.ends_with(')') && label.starts_with(|c: char| c.is_ascii_lowercase())
    })
}

fn split_semicolons(sentence: &str) -> Vec<String> {
    let parts: Vec<&str> = sentence
        .split("; ")
        .filter(|p| !p.trim().is_empty())
        .collect();
    if parts.len() < 2 || parts.iter().any(|p| p.split_whitespace().count() < 4) {
        return vec![sentence.to_string()];
    }
    parts.into_iter().map(finish).collect()
}

fn is_infinitive_group(part: &str) -> bool {
    part.split_whitespace().any(|w| w == "zu")
        || part.split_whitespace().last().is_some_and(|w| {
            let w = w.trim_end_matches(['.', ',']);
            w.len() > 6 && w.ends_with("en") && w[2..w.len() - 2].contains("zu")
        })
}

/// `X verpflichtet, A zu tun und B zu tun.` -> `X verpflichtet, A zu tun.`, `X verpflichtet, B zu tun.`
fn split_coordinated_infinitives(sentence: &str) -> Vec<String> {
    let Some(comma) = sentence.find(", ") else {
        return vec![sentence.to_string()];
    };
    let (head, group) = (&sentence[..comma], &sentence[comma + 2..]);
    if group.contains(", ") {
        return vec![sentence.to_string()]; // nested clauses: leave to a language model
    }
    let parts: Vec<&str> = group.split(" und ").collect();
    if parts.len() < 2 || !parts.iter().all(|p| is_infinitive_group(p)) {
        return vec![sentence.to_string()];
    }
    parts
        .into_iter()
        .map(|p| finish(&format!("{head}, {p}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bgb_433_1_s1_gives_two_propositions() {
        let s = "Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet, dem Käufer die Sache zu übergeben und das Eigentum an der Sache zu verschaffen.";
        assert_eq!(
            split_builtin(s),
            vec![
                "Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet, dem Käufer die Sache zu übergeben.",
                "Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet, das Eigentum an der Sache zu verschaffen.",
            ]
        );
        let s2 = "Der Käufer ist verpflichtet, dem Verkäufer den vereinbarten Kaufpreis zu zahlen und die gekaufte Sache abzunehmen.";
        assert_eq!(split_builtin(s2).len(), 2);
        assert_eq!(
            split_builtin(s2)[1],
            "Der Käufer ist verpflichtet, die gekaufte Sache abzunehmen."
        );
    }

    #[test]
    fn enumerations_keep_the_lead_in() {
        let s = "Berechtigt, die Vaterschaft anzufechten, sind:\n1. der Mann, dessen Vaterschaft besteht,\n2. die Mutter und\n3. das Kind.";
        assert_eq!(
            split_builtin(s),
            vec![
                "Berechtigt, die Vaterschaft anzufechten, sind der Mann, dessen Vaterschaft besteht.",
                "Berechtigt, die Vaterschaft anzufechten, sind die Mutter.",
                "Berechtigt, die Vaterschaft anzufechten, sind das Kind.",
            ]
        );
    }

    #[test]
    fn semicolons_and_unsplittable_sentences() {
        let s = "Die Frist beginnt mit der Kenntnis des Gläubigers; sie endet spätestens nach zehn Jahren.";
        assert_eq!(
            split_builtin(s),
            vec![
                "Die Frist beginnt mit der Kenntnis des Gläubigers.",
                "sie endet spätestens nach zehn Jahren."
            ]
        );
        let whole = "Die Rechtsfähigkeit des Menschen beginnt mit der Vollendung der Geburt.";
        assert_eq!(split_builtin(whole), vec![whole]);
    }
}
