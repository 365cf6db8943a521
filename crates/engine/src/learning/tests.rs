use super::fit::{assemble, cross_validate, learn, Labelled, ModelVectors, Run};
use super::*;
use crate::{first_stages, search, LawIndex, SearchOptions};
use paragraf_law::{Law, Section, StructureNode};

/// Twelve sections; questions about "Kaution" always want § 551 although its text never says "Kaution"
/// (it says "Mietsicherheit"), and every third question also wants the much-asked § 535.
fn fixture() -> (LawIndex, Vec<Labelled>) {
    let topics = [
        "Anfang des Vertrags",
        "Bürgschaft für eine Schuld",
        "Darlehen und Zinsen",
        "Eigentum an einer Sache",
        "Frist für eine Erklärung",
        "Garantie beim Kauf",
        "Hypothek am Grundstück",
        "Kauf einer Sache",
        "Leihe einer Sache",
        "Miete einer Wohnung, Pflichten des Vermieters",
        "Mietsicherheit: Rückzahlung nach dem Ende",
        "Kaution im Hotelgewerbe bei der Kaution",
    ];
    let designations = [
        "§ 1", "§ 2", "§ 3", "§ 4", "§ 5", "§ 6", "§ 7", "§ 8", "§ 9", "§ 535", "§ 551", "§ 12",
    ];
    let law = Law::bare(
        "BGB",
        topics
            .iter()
            .zip(designations)
            .map(|(t, d)| Section::bare(d, *t))
            .collect(),
    );
    let index = LawIndex::new(law);
    let terms = |t: &str| index.bm25().query_terms(t);
    let questions = (0..30)
        .map(|i| {
            let mut gold = vec![10];
            if i % 3 == 0 {
                gold.push(9);
            }
            Labelled::new(
                &format!("Mein Vermieter gibt die Kaution nicht zurück, Fall {i}"),
                gold,
                &terms,
            )
        })
        .collect();
    (index, questions)
}

fn provenance(n: usize) -> Provenance {
    Provenance {
        source: "Testfragen".into(),
        file_sha256: "00".repeat(32),
        questions: n as u32,
        skipped: 0,
        date: "2026-12-02".into(),
        licence: "test".into(),
    }
}

fn bm25_run<'a>(index: &LawIndex, questions: &[Labelled]) -> Run<'a> {
    Run {
        strategy: None,
        mode: Mode::Bm25,
        first: (0..questions.len())
            .map(|i| {
                first_stages(
                    index,
                    None,
                    &format!("Mein Vermieter gibt die Kaution nicht zurück, Fall {i}"),
                    None,
                    Mode::Bm25,
                )
                .unwrap()
            })
            .collect(),
    }
}

#[test]
fn learning_lifts_the_section_past_questions_needed_and_says_why() {
    let (index, questions) = fixture();
    let members: Vec<usize> = (0..questions.len()).collect();
    let run = bm25_run(&index, &questions);
    let file = learn(
        &index.law,
        "test",
        provenance(30),
        &questions,
        &members,
        None,
        std::slice::from_ref(&run),
        &[1.0],
    );
    let weights = file.rankers[0].weights;
    assert!(
        weights.vote_lexical > 0.0 || weights.prior > 0.0,
        "the votes or the prior carry weight: {weights:?}"
    );
    let bytes = file.to_bytes();
    let decoded = LearnedFile::from_bytes(&bytes).unwrap();
    assert_eq!(decoded, file);
    let (learning, warnings) = decoded.resolve(&index.law).unwrap();
    assert_eq!(warnings, ResolveWarnings::default());
    assert!(learning.knows(question_hash(
        "mein  VERMIETER gibt die Kaution nicht zurück, Fall 3"
    )));
    assert!(!learning.knows(question_hash("etwas ganz anderes")));
    let index = index.with_learning(learning);
    let options = SearchOptions {
        mode: Mode::Bm25,
        ..SearchOptions::default()
    };
    let question = "Vermieter behält die Kaution";
    let learned = search(&index, None, question, None, &options).unwrap();
    assert_eq!(learned.hits[0].section, 10, "§ 551 first");
    assert!(learned.hits[0].precedents > 0);
    assert_eq!(learned.learned.as_ref().map(|p| p.questions), Some(30));
    let unlearned = search(
        &index,
        None,
        question,
        None,
        &SearchOptions {
            learning: false,
            ..options
        },
    )
    .unwrap();
    assert_eq!(
        unlearned.hits[0].section, 11,
        "by the text alone, the hotel deposit"
    );
    assert!(unlearned.learned.is_none() && unlearned.hits.iter().all(|h| h.precedents == 0));
}

#[test]
fn unlearned_weights_rank_as_the_plain_fusion() {
    let (index, questions) = fixture();
    let file = assemble(
        &index.law,
        "t",
        provenance(30),
        &questions,
        &[0, 1, 2],
        None,
    );
    let (learning, _) = file.resolve(&index.law).unwrap();
    let lexical = index.lexical("Sache Kauf Miete", 100);
    let dense: Vec<Hit> = [4u32, 7, 8, 1]
        .iter()
        .enumerate()
        .map(|(i, &s)| Hit {
            index: s,
            score: 1.0 - i as f32 / 10.0,
        })
        .collect();
    let features = learning.features(
        FirstStage {
            lexical: &lexical,
            dense: Some(&dense),
        },
        &Neighbours::default(),
        &[],
    );
    let learned: Vec<u32> = fit::ranked(&features, &Weights::UNLEARNED, learning.max_count(), 10)
        .iter()
        .map(|h| h.index)
        .collect();
    let ids = |h: &[Hit]| h.iter().map(|h| h.index).collect::<Vec<_>>();
    let (l, d) = (ids(&lexical), ids(&dense));
    let fused: Vec<u32> = paragraf_index::fusion::reciprocal_rank_fusion(
        &[
            paragraf_index::fusion::Ranked {
                ids: &l,
                weight: 1.0,
            },
            paragraf_index::fusion::Ranked {
                ids: &d,
                weight: 1.0,
            },
        ],
        DEFAULT_RRF_K,
        10,
    )
    .iter()
    .map(|h| h.index)
    .collect();
    assert_eq!(learned, fused);
}

#[test]
fn cross_validation_ranks_each_fold_with_what_the_others_taught() {
    let (index, questions) = fixture();
    let run = bm25_run(&index, &questions);
    let vectors: Vec<Vec<f32>> = (0..questions.len())
        .map(|i| vec![1.0, i as f32 / 30.0])
        .collect();
    let held = cross_validate(
        &index.law,
        &questions,
        Some(ModelVectors {
            model: "m",
            vectors: &vectors,
        }),
        std::slice::from_ref(&run),
        5,
        42,
        &[1.0],
        &mut |_| {},
    );
    assert_eq!(held[0].weights.len(), 5);
    assert!(held[0].rankings.iter().all(|r| r.first() == Some(&10)));
}

#[test]
fn broken_files_are_refused_with_their_reason() {
    let (index, questions) = fixture();
    let file = assemble(&index.law, "t", provenance(30), &questions, &[0, 1], None);
    let bytes = file.to_bytes();
    let err = |b: &[u8]| LearnedFile::from_bytes(b).unwrap_err().to_string();
    assert_eq!(
        err(&bytes[..10]),
        "learned file: bundle is truncated: 10 bytes, but the header alone has 24. Most likely the download was interrupted: reload, or rebuild with `paragraf build`"
    );
    assert_eq!(
        err(b"<!DOCTYPE html><html>not a learned file</html>"),
        "learned file: not a Paragraf learned file: the file starts with \"<!DOCTYP\". Most likely another file (an HTML error page?) was served in its place"
    );
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert!(err(&flipped).starts_with("learned file: bundle is corrupt: checksum"));
    let mut bad = file.clone();
    bad.precedents[0].terms.push((bad.terms.len() as u32, 1));
    assert_eq!(
        err(&bad.to_bytes()),
        "learned file is inconsistent: precedent 0 names a term past the vocabulary. Most likely it was made by another program or damaged before its checksum was written: learn again with `paragraf learn`"
    );
    let mut negative = file.clone();
    negative.rankers.push(Ranker {
        strategy: None,
        mode: Mode::Bm25,
        weights: Weights {
            prior: -1.0,
            ..Weights::UNLEARNED
        },
        tail: None,
        cv: CvFigures::default(),
    });
    assert!(
        err(&negative.to_bytes()).contains("the bm25 ranker has a negative or non-finite weight")
    );
    let mut negative_tail = file.clone();
    negative_tail.rankers.push(Ranker {
        strategy: None,
        mode: Mode::Bm25,
        weights: Weights::UNLEARNED,
        tail: Some(Weights {
            linked: f32::NAN,
            ..Weights::UNLEARNED
        }),
        cv: CvFigures::default(),
    });
    assert!(err(&negative_tail.to_bytes())
        .contains("the bm25 ranker has a negative or non-finite weight"));
    let mut other = file.clone();
    other.law = "StGB".into();
    assert_eq!(
        other.resolve(&index.law).unwrap_err().to_string(),
        "the learned file was learned for StGB, but the law searched is BGB. Learn again with `paragraf learn --bundles` on this folder"
    );
    let mut renamed = file;
    renamed.sections[0] = "§ 9999".into();
    renamed.law_build_date = "older".into();
    let (_, warnings) = renamed.resolve(&index.law).unwrap();
    assert_eq!(warnings.missing_sections, ["§ 9999"]);
    assert!(warnings.other_build.is_some());
}

#[test]
fn familiarity_runs_from_the_fifth_percentile_down_as_far_as_the_median_lies_above() {
    // Nearest-precedent cosines 0.70, 0.71, …, 0.90: the 5th percentile is 0.71, the median 0.80.
    let nearest: Vec<f32> = (0..=20).map(|i| 0.70 + i as f32 / 100.0).collect();
    let f = Familiarity::of(&nearest).unwrap();
    assert!(
        (f.full - 0.71).abs() < 1e-6 && (f.none - 0.62).abs() < 1e-6,
        "{f:?}"
    );
    assert_eq!(f.confidence(0.95), 1.0);
    assert_eq!(f.confidence(0.71), 1.0);
    assert!((f.confidence(0.665) - 0.5).abs() < 1e-4);
    assert_eq!(f.confidence(0.61), 0.0);
    assert_eq!(f.confidence(-1.0), 0.0);
    assert_eq!(Familiarity::of(&[0.9]), None, "one precedent says nothing");
    assert_eq!(Familiarity::of(&[0.9, f32::NAN]), None);
    assert_eq!(Familiarity::ANY.confidence(-1.0), 1.0);
}

#[test]
fn a_question_unlike_every_precedent_gets_less_of_what_was_learned() {
    let (index, questions) = fixture();
    // The precedents' vectors lie close together in one quarter of a plane (nearest cosines 0.995–1).
    let vectors: Vec<Vec<f32>> = (0..questions.len())
        .map(|i| {
            let t = i as f32 / 10.0;
            let norm = (1.0 + t * t).sqrt();
            vec![1.0 / norm, t / norm, 0.0]
        })
        .collect();
    let members: Vec<usize> = (0..questions.len()).collect();
    let model = ModelVectors {
        model: "m",
        vectors: &vectors,
    };
    let file = assemble(
        &index.law,
        "t",
        provenance(30),
        &questions,
        &members,
        Some(model),
    );
    let familiarity = file.vectors[0].familiarity;
    assert!(
        familiarity.none < familiarity.full && familiarity.full > 0.99,
        "{familiarity:?}"
    );
    let decoded = LearnedFile::from_bytes(&file.to_bytes()).unwrap();
    let (learning, _) = decoded.resolve(&index.law).unwrap();
    let terms = learning.term_ids(&index.bm25().query_terms("Kaution"));
    let near = learning.neighbours(&terms, Some(("m", &vectors[3])), &|_| false);
    let far = learning.neighbours(&terms, Some(("m", &[0.0, 0.0, 1.0])), &|_| false);
    let lexical_only = learning.neighbours(&terms, None, &|_| false);
    assert_eq!(near.confidence, 1.0);
    assert_eq!(far.confidence, 0.0);
    assert_eq!(
        lexical_only.confidence, 1.0,
        "without a vector nothing says how familiar"
    );
    // The learned signals of the far question count for nothing: its score is its ranks' alone.
    let first = FirstStage {
        lexical: &[],
        dense: None,
    };
    let weights = Weights {
        prior: 1.0,
        vote_lexical: 1.0,
        vote_dense: 1.0,
        ..Weights::UNLEARNED
    };
    let max = learning.max_count();
    let score = |n: &Neighbours| {
        learning
            .features(first, n, &[])
            .iter()
            .find(|f| f.section == 10)
            .map(|f| f.score(&weights, max))
            .unwrap()
    };
    assert!(score(&near) > 1.0);
    assert_eq!(score(&far), 0.0);

    let mut upside_down = file;
    upside_down.vectors[0].familiarity = Familiarity {
        full: 0.1,
        none: 0.9,
    };
    assert_eq!(
        LearnedFile::from_bytes(&upside_down.to_bytes()).unwrap_err().to_string(),
        "learned file is inconsistent: the familiarity of the m vectors is not finite or upside down. Most likely it was made by another program or damaged before its checksum was written: learn again with `paragraf learn`"
    );
    let mut old = assemble(&index.law, "t", provenance(30), &questions, &members, None).to_bytes();
    old[8..12].copy_from_slice(&5u32.to_le_bytes());
    assert_eq!(
        LearnedFile::from_bytes(&old).unwrap_err().to_string(),
        "learned file: learned file format version 5 is older than this Paragraf reads (6 to 6). Learn again with `paragraf learn` (search goes on without it)"
    );
}

#[test]
fn the_tail_orders_what_follows_the_head_by_its_own_features() {
    let (index, questions) = fixture();
    let members: Vec<usize> = (0..questions.len()).collect();
    let file = assemble(&index.law, "t", provenance(30), &questions, &members, None);
    let (learning, _) = file.resolve(&index.law).unwrap();
    let lexical = [Hit {
        index: 10,
        score: 1.0,
    }];
    let first = FirstStage {
        lexical: &lexical,
        dense: None,
    };
    let features = learning.features(first, &Neighbours::default(), &[]);
    let head = Weights {
        lexical: 1.0,
        ..Weights::UNLEARNED
    };
    let order_by = |learning: &Learning, tail: Option<&Weights>| -> Vec<u32> {
        let ranked = learning.ranked(features.clone(), &head, tail, &|_| false, &[], 100);
        assert!(
            ranked.windows(2).all(|w| w[0].score > w[1].score),
            "scores fall: {ranked:?}"
        );
        ranked.iter().map(|h| h.index).collect()
    };
    let order = |tail: Option<&Weights>| order_by(&learning, tail);
    // Without a tail the head's weights rank everything: only the BM25 hit scores.
    assert_eq!(order(None), vec![10]);
    // § 535 (9) was asked about together with § 551 (10) in a third of its questions and lies next to it, as
    // does § 12 (11); the head stays first.
    let tail = Weights {
        lexical: 0.0,
        cogold: 1.0,
        adjacent: 0.5,
        ..Weights::UNLEARNED
    };
    assert_eq!(order(Some(&tail)), vec![10, 9, 11]);
    // Leaving out the precedents that pair them leaves adjacency alone: § 535 and § 12 tie, lower index first.
    let alone = learning.ranked(
        features.clone(),
        &head,
        Some(&tail),
        &|p| p % 3 == 0,
        &[],
        100,
    );
    assert_eq!(
        alone.iter().map(|h| h.index).collect::<Vec<_>>(),
        vec![10, 9, 11]
    );
    assert_eq!(
        alone[1].score,
        alone[2].score * 2.0,
        "below the head, scores only order (scaled under the head's last)"
    );
    // The sections of the head's title (the law's innermost structural unit) follow it, those of no title not.
    let mut titled = index.law.clone();
    titled.structure = vec![StructureNode {
        code: "010".into(),
        designation: "Titel 5".into(),
        title: "Mietvertrag".into(),
        parent: None,
    }];
    for s in [2, 7, 10] {
        titled.sections[s].structure = Some(0);
    }
    let (in_titles, _) = assemble(&titled, "t", provenance(30), &questions, &members, None)
        .resolve(&titled)
        .unwrap();
    let by_unit = Weights {
        lexical: 0.0,
        unit: 1.0,
        ..Weights::UNLEARNED
    };
    assert_eq!(order_by(&in_titles, Some(&by_unit)), vec![10, 2, 7]);
    // The title's share is of the whole head: with § 1 (0), outside any title, after § 551, it halves.
    let mut shared = features.clone();
    in_titles.add_tail_features(&mut shared, &[10, 0], &|_| false, &[]);
    let unit_of = |s: u32| shared.iter().find(|f| f.section == s).map(|f| f.unit);
    assert_eq!(
        (unit_of(2), unit_of(7), unit_of(11)),
        (Some(0.5), Some(0.5), Some(0.0)),
        "§ 12 (11) joins as § 551's neighbour, outside the title"
    );
    // Ranks within the head are never the tail's, even when it would put another section first.
    assert_eq!(
        learning.ranked(features, &head, Some(&tail), &|_| false, &[], 10)[0].index,
        10
    );
}
