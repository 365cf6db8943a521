//! Statutory definitions in the real BGB and StGB: hand-checked definitions (term, section, form, where the
//! defining text starts) and hand-checked look-alikes that are not definitions.

use paragraf_law::definitions::{find_definitions, Definition, Form, Glossary};
use paragraf_law::Law;
use std::path::PathBuf;
use std::sync::OnceLock;

fn load(name: &str) -> Law {
    let shared = std::env::var_os("PARAGRAF_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    let xml = shared.join(format!("corpus/{name}.xml"));
    paragraf_corpus::parse_file(&xml)
        .unwrap_or_else(|e| panic!("{}: {e} (the shared corpus is needed)", xml.display()))
}

struct Found {
    law: Law,
    definitions: Vec<Definition>,
}

fn bgb() -> &'static Found {
    static BGB: OnceLock<Found> = OnceLock::new();
    BGB.get_or_init(|| found(load("BGB")))
}

fn stgb() -> &'static Found {
    static STGB: OnceLock<Found> = OnceLock::new();
    STGB.get_or_init(|| found(load("StGB")))
}

fn found(law: Law) -> Found {
    let definitions = find_definitions(&law);
    Found { law, definitions }
}

impl Found {
    /// Definitions found in section `designation`.
    fn in_section(&self, designation: &str) -> Vec<&Definition> {
        let index = self.law.find_section(designation).unwrap() as u32;
        self.definitions
            .iter()
            .filter(|d| d.section == index)
            .collect()
    }

    /// Asserts `term` is defined in `designation` by `form`, its defining text starting with `starts`.
    fn assert_defines(&self, designation: &str, term: &str, form: Form, starts: &str) {
        let here = self.in_section(designation);
        let d = here
            .iter()
            .find(|d| d.term == term)
            .unwrap_or_else(|| panic!("{designation} should define {term:?}; found {here:?}"));
        assert_eq!(d.form, form, "{designation} {term}");
        let text = self.law.sections[d.section as usize].slice(d.span);
        assert!(text.starts_with(starts), "{designation} {term}: {text}");
    }

    fn terms(&self, designation: &str) -> Vec<&str> {
        self.in_section(designation)
            .iter()
            .map(|d| d.term.as_str())
            .collect()
    }
}

#[test]
fn bgb_definitions_by_every_pattern() {
    let bgb = bgb();
    bgb.assert_defines(
        "§ 13",
        "Verbraucher",
        Form::Copula,
        "Verbraucher ist jede natürliche Person, die",
    );
    bgb.assert_defines(
        "§ 14",
        "Unternehmer",
        Form::Copula,
        "Unternehmer ist eine natürliche",
    );
    bgb.assert_defines(
        "§ 14",
        "rechtsfähige Personengesellschaft",
        Form::Copula,
        "Eine rechtsfähige",
    );
    bgb.assert_defines(
        "§ 90",
        "Sachen",
        Form::InTheSense,
        "Sachen im Sinne des Gesetzes sind nur",
    );
    bgb.assert_defines(
        "§ 91",
        "Vertretbare Sachen",
        Form::InTheSense,
        "Vertretbare Sachen im Sinne",
    );
    bgb.assert_defines(
        "§ 93",
        "wesentliche Bestandteile",
        Form::Parenthesis,
        "Bestandteile einer Sache",
    );
    bgb.assert_defines(
        "§ 97",
        "Zubehör",
        Form::Copula,
        "Zubehör sind bewegliche Sachen",
    );
    bgb.assert_defines(
        "§ 121",
        "unverzüglich",
        Form::Parenthesis,
        "Die Anfechtung muss in den Fällen",
    );
    bgb.assert_defines(
        "§ 194",
        "Anspruch",
        Form::Parenthesis,
        "Das Recht, von einem anderen ein Tun",
    );
    bgb.assert_defines(
        "§ 227",
        "Notwehr",
        Form::Copula,
        "Notwehr ist diejenige Verteidigung",
    );
    bgb.assert_defines("§ 276", "Fahrlässig", Form::Who, "Fahrlässig handelt, wer");
    bgb.assert_defines(
        "§ 556",
        "Betriebskosten",
        Form::Copula,
        "Betriebskosten sind die Kosten",
    );
    bgb.assert_defines(
        "§ 1937",
        "Testament",
        Form::Parenthesis,
        "Der Erblasser kann durch einseitige",
    );
    bgb.assert_defines(
        "§ 1937",
        "letztwillige Verfügung",
        Form::Parenthesis,
        "Der Erblasser kann",
    );
    assert_eq!(
        bgb.terms("§ 1922"),
        ["Erbfall", "Erbschaft", "Erben", "Erbteil"]
    );
}

#[test]
fn stgb_definitions_by_every_pattern() {
    let stgb = stgb();
    // § 11: an enumeration of `Begriff:Definition` items after `Im Sinne dieses Gesetzes ist`.
    stgb.assert_defines(
        "§ 11",
        "Angehöriger",
        Form::ListEntry,
        "1. Angehöriger:wer zu den folgenden",
    );
    stgb.assert_defines(
        "§ 11",
        "Amtsträger",
        Form::ListEntry,
        "2. Amtsträger:wer nach deutschem Recht",
    );
    stgb.assert_defines(
        "§ 11",
        "Entgelt",
        Form::ListEntry,
        "9. Entgelt:jede in einem Vermögensvorteil",
    );
    stgb.assert_defines(
        "§ 11",
        "Vorsätzlich",
        Form::InTheSense,
        "Vorsätzlich im Sinne dieses Gesetzes",
    );
    stgb.assert_defines(
        "§ 12",
        "Verbrechen",
        Form::Copula,
        "Verbrechen sind rechtswidrige Taten",
    );
    stgb.assert_defines(
        "§ 32",
        "Notwehr",
        Form::Copula,
        "Notwehr ist die Verteidigung, die",
    );
    stgb.assert_defines(
        "§ 92",
        "Verfassungsgrundsätze",
        Form::InTheSense,
        "Im Sinne dieses Gesetzes sind Verfassungsgrundsätze",
    );
    stgb.assert_defines(
        "§ 176",
        "Kind",
        Form::Parenthesis,
        "Mit Freiheitsstrafe nicht unter einem Jahr",
    );
    stgb.assert_defines("§ 211", "Mörder", Form::Who, "Mörder ist, wer");
    stgb.assert_defines(
        "§ 265c",
        "Trainer",
        Form::InTheSense,
        "Trainer im Sinne dieser Vorschrift ist, wer",
    );
}

#[test]
fn look_alikes_are_not_definitions() {
    let bgb = bgb();
    // `Tiere sind keine Sachen.`: a negation.
    assert_eq!(bgb.terms("§ 90a"), Vec::<&str>::new());
    // `Zuständig ist das Amtsgericht, ...`: an adjective subject assigns competence.
    assert_eq!(bgb.terms("§ 37"), Vec::<&str>::new());
    // `Maßgeblich ist die früher endende Frist.`
    assert!(!bgb.terms("§ 199").contains(&"Maßgeblich"));
    // `Die Verjährung ist gehemmt, solange ...`: predicate adjective.
    assert_eq!(bgb.terms("§ 205"), Vec::<&str>::new());
    // `Eine Geldschuld ist während des Verzugs zu verzinsen.`
    assert_eq!(bgb.terms("§ 288"), Vec::<&str>::new());
    // `Der Anmeldung sind Abschriften ... beizufügen.`
    assert_eq!(bgb.terms("§ 59"), Vec::<&str>::new());
    // `Antragsberechtigt sind der Vormund, ...`: names who may apply.
    assert_eq!(bgb.terms("§ 1793"), Vec::<&str>::new());
    // `(Tag, Monat und Jahr)`: the parts of the date, not a name for it.
    assert!(
        !bgb.terms("§ 2247").iter().any(|t| t.contains("Tag")),
        "{:?}",
        bgb.terms("§ 2247")
    );
    // `1. (Annahme- und Leistungsfrist)eine Bestimmung, ...`: headings of enumeration items.
    assert_eq!(bgb.terms("§ 308"), Vec::<&str>::new());
    // `Verordnung (EU) 2016/679`: an abbreviation.
    assert!(!bgb
        .definitions
        .iter()
        .any(|d| d.term == "EU" || d.term == "EG"));

    let stgb = stgb();
    // `Straffrei ist, wer ...`: a legal consequence.
    assert_eq!(stgb.terms("§ 139"), Vec::<&str>::new());
    // `Verbrechen nach § 211 (Mord)`: the name of a cited provision.
    assert_eq!(stgb.terms("§ 78"), Vec::<&str>::new());
    // `beim Teilnehmer (Anstifter oder Gehilfe)`: an explanation.
    assert_eq!(stgb.terms("§ 28"), Vec::<&str>::new());
    // `Die Strafe ist Freiheitsstrafe ..., wenn ...`: a rule about a named thing.
    assert_eq!(stgb.terms("§ 90"), Vec::<&str>::new());
}

#[test]
fn counts_stay_where_the_readme_reports_them() {
    assert_eq!(bgb().definitions.len(), 241);
    assert_eq!(stgb().definitions.len(), 57);
}

#[test]
fn glossary_finds_defined_terms_in_other_words() {
    let bgb = bgb();
    let glossary = Glossary::new(&bgb.definitions);
    let used = |text: &str| -> Vec<&str> {
        glossary
            .used_in(text)
            .into_iter()
            .map(|i| bgb.definitions[i].term.as_str())
            .collect()
    };
    let terms = used("Der Verkäufer einer Sache muss unverzüglich liefern.");
    assert!(
        terms.contains(&"Sachen") && terms.contains(&"unverzüglich"),
        "{terms:?}"
    );
    // Multi-word terms need their words in a row.
    assert!(used("eine Sache, die vertretbar ist")
        .iter()
        .all(|t| *t != "Vertretbare Sachen"));
    assert!(used("vertretbare Sachen").contains(&"Vertretbare Sachen"));
}

#[test]
fn uses_mark_each_term_where_it_is_printed_longest_first() {
    let bgb = bgb();
    let glossary = Glossary::new(&bgb.definitions);
    let text = "Vertretbare Sachen und eine Sache sind unverzüglich zu liefern.";
    let uses: Vec<(&str, &str)> = glossary
        .uses(text)
        .iter()
        .map(|u| {
            (
                &text[u.range.clone()],
                bgb.definitions[u.definition].term.as_str(),
            )
        })
        .collect();
    assert_eq!(
        uses,
        [
            ("Vertretbare Sachen", "Vertretbare Sachen"),
            ("Sache", "Sachen"),
            ("unverzüglich", "unverzüglich")
        ]
    );
}

#[test]
fn gg_defines_deutscher_for_the_rights_of_germans() {
    let gg = found(load("GG"));
    gg.assert_defines(
        "Art 116",
        "Deutscher",
        Form::InTheSense,
        "Deutscher im Sinne dieses Grundgesetzes ist",
    );
    let glossary = Glossary::new(&gg.definitions);
    let art8 = &gg.law.sections[gg.law.find_section("Art 8").unwrap()];
    let uses = glossary.uses(&art8.text);
    let first = uses.first().expect("Art. 8 names the Germans");
    assert_eq!(&art8.text[first.range.clone()], "Deutschen");
    assert_eq!(gg.definitions[first.definition].term, "Deutscher");
}

#[test]
fn a_section_explains_each_term_once_and_not_its_own() {
    let law = load("BGB");
    let definitions = paragraf_law::definitions::LawDefinitions::new(&law);
    let terms = |designation: &str| -> Vec<String> {
        let index = law.find_section(designation).unwrap();
        definitions
            .explained_in(&law, index)
            .iter()
            .map(|u| definitions.definitions[u.definition].term.clone())
            .collect()
    };
    // § 13 defines `Verbraucher` itself; § 312 uses both `Verbraucher` and `Unternehmer` several times.
    assert!(!terms("§ 13").contains(&"Verbraucher".to_string()));
    let in_312 = terms("§ 312");
    for term in ["Verbraucher", "Unternehmer"] {
        assert_eq!(
            in_312.iter().filter(|t| *t == term).count(),
            1,
            "{in_312:?}"
        );
    }
}
