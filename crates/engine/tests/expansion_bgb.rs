//! Query expansion over the real BGB and the real OpenThesaurus (Debian `openthesaurus-de-text`, installed by
//! scripts/setup.sh): hand-written lay phrasings, what they must expand to and what they must not.

use paragraf_engine::expansion::thesaurus::Thesaurus;
use paragraf_engine::expansion::{
    expand, weighted_terms, ExpansionTable, PreparedThesaurus, TableParams, ThesaurusFile,
};
use paragraf_engine::LawIndex;
use std::path::PathBuf;
use std::sync::OnceLock;

const THESAURUS: &str = "/usr/share/openthesaurus-de/openthesaurus.txt";

fn shared_dir() -> PathBuf {
    std::env::var_os("PARAGRAF_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    )
}

struct Fixture {
    index: LawIndex,
    table: ExpansionTable,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let xml = shared_dir().join("corpus/BGB.xml");
        let law = paragraf_corpus::parse_file(&xml)
            .unwrap_or_else(|e| panic!("{}: {e} (the shared corpus is needed)", xml.display()));
        let text = std::fs::read_to_string(THESAURUS).unwrap_or_else(|e| {
            panic!("{THESAURUS}: {e}. Most likely openthesaurus-de-text is not installed: run scripts/setup.sh")
        });
        let thesaurus = Thesaurus::parse(&text).unwrap();
        let index = LawIndex::new(law);
        let file = ThesaurusFile {
            generator: String::new(),
            source: THESAURUS.into(),
            notice: thesaurus.notice.clone(),
            params: TableParams::default(),
            thesaurus: PreparedThesaurus::new(&thesaurus, LawIndex::analyzer()),
        };
        let table = index.expansion_table(&std::sync::Arc::new(file)).unwrap();
        Fixture { index, table }
    })
}

/// The words `query` expanded, and what to.
fn expansions(query: &str, removed: &[String]) -> Vec<(String, Vec<String>)> {
    expand(query, &fixture().table, fixture().index.bm25(), removed)
        .into_iter()
        .map(|e| (e.from, e.to.into_iter().map(|t| t.word).collect()))
        .collect()
}

#[test]
fn lay_words_meet_the_statute_words() {
    // (phrasing, lay word, statute words it must add)
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "Vermieter gibt die Kaution nach dem Auszug nicht zurück",
            "kaution",
            &["Sicherheitsleistung", "Hinterlegung"],
        ),
        (
            "Wie hoch dürfen Kautionen sein?",
            "kautionen",
            &["Sicherheitsleistung"],
        ),
        (
            "Wir haben die Mietkaution nie wiederbekommen",
            "mietkaution",
            &["Sicherheitsleistung", "Hinterlegung"],
        ),
        (
            "Meine Oma hat ein Testament gemacht",
            "oma",
            &["Großmutter"],
        ),
        (
            "Der Bauträger ist pleite, was passiert mit der Anzahlung",
            "pleite",
            &["Insolvenz", "zahlungsunfähig"],
        ),
        (
            "Muss ich das Geld zurückzahlen?",
            "zurückzahlen",
            &["Rückzahlung"],
        ),
    ];
    for (query, word, wanted) in cases {
        let found = expansions(query, &[]);
        let added = found
            .iter()
            .find(|(from, _)| from == word)
            .unwrap_or_else(|| panic!("{query:?}: {word} not expanded ({found:?})"));
        for w in wanted {
            assert!(
                added.1.iter().any(|a| a == w),
                "{query:?}: {w} missing in {added:?}"
            );
        }
    }
}

#[test]
fn words_the_law_has_or_whose_synonyms_it_lacks_are_not_expanded() {
    // (phrasing, lay words that must stay as they are)
    let cases: [(&str, &[&str]); 15] = [
        // No synonym of these occurs in the BGB.
        ("Mein neues Handy funktioniert nicht", &["handy"]),
        ("Die Putzfrau kommt jede Woche", &["putzfrau"]),
        ("Gebrauchtwagen vom Händler gekauft", &["gebrauchtwagen"]),
        ("Schwarzarbeit am Bau", &["schwarzarbeit"]),
        ("Darf der Kellner das Trinkgeld behalten", &["trinkgeld"]),
        ("Der Hund des Nachbarn hat mich gebissen", &["hund"]),
        ("Wie viel Schmerzensgeld bekomme ich", &["schmerzensgeld"]),
        ("Kündigungsschutz in der Probezeit", &["kündigungsschutz"]),
        // Words of the law itself: BM25 matches them as they are.
        ("Kann ich das Erbe ausschlagen", &["erbe", "ausschlagen"]),
        (
            "Scheidung nach einem Jahr Trennung",
            &["scheidung", "trennung"],
        ),
        ("Wer haftet für ein Tier", &["tier"]),
        (
            "Der Vermieter will die Miete erhöhen",
            &["vermieter", "miete"],
        ),
        ("Wird mein Gehalt gepfändet", &["gehalt"]),
        ("Heirat im Ausland", &["heirat"]),
        ("Vertrag mit dem Käufer", &["vertrag", "käufer"]),
    ];
    for (query, words) in cases {
        let found = expansions(query, &[]);
        for w in words {
            assert!(
                !found.iter().any(|(from, _)| from == w),
                "{query:?}: {w} expanded: {found:?}"
            );
        }
    }
}

#[test]
fn a_removed_expansion_stays_removed() {
    let query = "Vermieter gibt die Kaution nicht zurück";
    let removed = vec!["Sicherheitsleistung".to_string()];
    let found = expansions(query, &removed);
    assert!(
        found[0].1.iter().all(|w| w != "Sicherheitsleistung"),
        "{found:?}"
    );
    assert!(found[0].1.iter().any(|w| w == "Hinterlegung"), "{found:?}");
}

#[test]
fn expansion_finds_sections_for_a_word_the_law_lacks_at_lower_weight() {
    let f = fixture();
    let query = "Oma";
    assert!(f.index.lexical(query, 10).is_empty());
    let expansions = expand(query, &f.table, f.index.bm25(), &[]);
    let terms = weighted_terms(f.index.bm25(), query, &expansions, 0.5);
    // The user's own word at weight 1, the statute's word below it.
    assert_eq!(terms[0], ("oma".to_string(), 1.0));
    assert!(
        terms.len() > 1 && terms[1..].iter().all(|(_, w)| *w <= 0.5),
        "{terms:?}"
    );
    let hits = f.index.lexical_weighted(&terms, 10);
    let first = &f.index.law.sections[hits[0].index as usize];
    assert!(
        first.text.contains("Großmutter"),
        "{} {}",
        first.designation,
        first.title
    );
}
