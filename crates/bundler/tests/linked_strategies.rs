//! The reference-aware strategies on the real BGB: what each adds to a section and where.

use paragraf_bundler::chunk::{linked_sections, sections, Chunk};
use paragraf_format::strategy::Link;
use paragraf_law::Law;
use std::path::PathBuf;
use std::sync::OnceLock;

fn bgb() -> &'static Law {
    static LAW: OnceLock<Law> = OnceLock::new();
    LAW.get_or_init(|| {
        let shared = std::env::var_os("PARAGRAF_SHARED").map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
            PathBuf::from,
        );
        let xml = shared.join("corpus/BGB.xml");
        paragraf_corpus::parse_file(&xml)
            .unwrap_or_else(|e| panic!("{}: {e} (the shared corpus is needed)", xml.display()))
    })
}

/// The chunk of `designation` in `chunks`.
fn chunk<'a>(chunks: &'a [Chunk], designation: &str) -> &'a Chunk {
    let law = bgb();
    let index = law.find_section(designation).unwrap() as u32;
    chunks.iter().find(|c| c.sections == [index]).unwrap()
}

/// The text a linked strategy adds after the section's own embedded text.
fn addition(link: Link, designation: &str) -> String {
    let plain = sections(bgb());
    let linked = linked_sections(bgb(), link);
    assert_eq!(
        linked.len(),
        plain.len(),
        "one chunk per section, as `section`"
    );
    let own = &chunk(&plain, designation).embed_text;
    let text = &chunk(&linked, designation).embed_text;
    assert!(
        text.starts_with(own.as_str()),
        "the section's own text comes first: {text}"
    );
    text[own.len()..].to_string()
}

#[test]
fn cited_appends_the_headings_of_cited_sections_once_without_itself() {
    // § 536 cites § 555b and (three times) itself.
    assert_eq!(
        addition(Link::Cited, "§ 536"),
        "\nVerweist auf: § 555b Modernisierungsmaßnahmen"
    );
    // § 13 cites nothing: the chunk is the `section` chunk.
    assert_eq!(addition(Link::Cited, "§ 13"), "");
}

#[test]
fn citing_appends_the_headings_of_citing_sections_in_law_order() {
    assert_eq!(
        addition(Link::Citing, "§ 13"),
        "\nZitiert in: § 655a Darlehensvermittlungsvertrag; § 675d Unterrichtung bei Zahlungsdiensten; \
         § 707b Entsprechend anwendbare Vorschriften des Handelsgesetzbuchs; § 2249 Nottestament vor dem \
         Bürgermeister; § 2250 Nottestament vor drei Zeugen"
    );
    let added = addition(Link::Citing, "§ 536");
    let order: Vec<usize> = [
        "§ 536a ", "§ 536b ", "§ 536c ", "§ 549 ", "§ 578b ", "§ 586 ",
    ]
    .iter()
    .map(|d| {
        added
            .find(d)
            .unwrap_or_else(|| panic!("{d} missing in {added}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{added}");
    assert!(!added.contains("§ 536 "), "no self-citation: {added}");
}

#[test]
fn defined_appends_definitions_of_terms_used_elsewhere() {
    // § 433 (Kaufvertrag) speaks of `Sache`; § 90 defines `Sachen`.
    let added = addition(Link::Defined, "§ 433");
    assert!(added.starts_with("\nBegriffe: "), "{added}");
    assert!(
        added.contains(
            "Sachen (§ 90): Sachen im Sinne des Gesetzes sind nur körperliche Gegenstände."
        ),
        "{added}"
    );
    // § 13 defines `Verbraucher` itself: its own definition is not repeated.
    assert!(!addition(Link::Defined, "§ 13").contains("(§ 13)"));
    // § 312 uses `Verbraucher` and `Unternehmer`: both definitions, in law order.
    let added = addition(Link::Defined, "§ 312");
    let consumer = added
        .find("Verbraucher (§ 13): Verbraucher ist jede natürliche Person")
        .unwrap();
    let trader = added
        .find("Unternehmer (§ 14): Unternehmer ist eine natürliche")
        .unwrap();
    assert!(consumer < trader, "{added}");
}
