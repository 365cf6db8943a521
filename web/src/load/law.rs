//! One law: its law bundle with the learned file and the folder's thesaurus, and its strategy bundles.

use std::rc::Rc;
use std::sync::Arc;

use futures::future::FutureExt;
use leptos::prelude::*;
use paragraf_core::manifest::{BundleEntry, LawEntry, LearnedEntry, Manifest, MANIFEST};
use paragraf_engine::bundle::{LawBundle, StrategyBundle};
use paragraf_engine::expansion::{ThesaurusDecoder, ThesaurusEntry, ThesaurusFile};
use paragraf_engine::learning::{LearnedFile, Provenance};
use paragraf_engine::{LawIndex, StrategyIndex};
use paragraf_law::definitions::{definitions_by_section, LawDefinitions};
use paragraf_law::Law;

use super::files::{bundle_failure, decode_checked, decoded, remember, verified_listed};
use crate::failure::{BundleKind, BundleProblem, Failure};
use crate::fetch;
use crate::fetch::Progress;
use crate::shared::{shared, SharedAnswers};

/// A loaded law.
pub struct LoadedLaw {
    pub entry: LawEntry,
    /// The law's index, with its query-expansion table when the thesaurus file loaded.
    pub index: LawIndex,
    /// Time to check the bytes against the manifest (size and SHA-256), ms.
    pub verify_ms: f64,
    /// Query expansion: `None` when the manifest lists no thesaurus file, else the file's number of words or why
    /// it could not be used (then the law is searched without expansion).
    pub expansions: Option<Result<usize, Failure>>,
    /// What was learned from past questions: `None` when the manifest lists nothing learned for this law, else
    /// where it was learned from, or why it could not be used (then the law is ranked unlearned).
    pub learned: Option<Result<Provenance, Failure>>,
    /// The law's statutory definitions, for the terms marked in results.
    pub definitions: LawDefinitions,
}

/// A loaded strategy bundle.
pub struct LoadedStrategy {
    pub entry: BundleEntry,
    pub index: StrategyIndex,
    /// Time to check the bytes against the manifest (size and SHA-256), ms.
    pub verify_ms: f64,
}

thread_local! {
    /// The folder's thesaurus file, which every law's expansion table is built from: fetched once for all laws.
    static THESAURUS: SharedAnswers<String, Arc<ThesaurusFile>> = const { SharedAnswers::new(1) };
}

/// The law named `law` (or the manifest's first).
pub async fn law(
    data: String,
    manifest: Rc<Manifest>,
    law: String,
    progress: RwSignal<Progress>,
) -> Result<Rc<LoadedLaw>, Failure> {
    let entry = manifest
        .law_or_first(&law)
        .cloned()
        .ok_or_else(|| Failure::NoLaws {
            url: crate::join_url(&data, MANIFEST),
        })?;
    if let Some(loaded) = decoded::<LoadedLaw>(&entry.file) {
        return Ok(loaded);
    }
    let kind = BundleKind::Law;
    let label = format!("Gesetz {}", entry.law);
    // The thesaurus file (the same for every law of the folder) comes alongside the law, its progress unshown.
    let listed = manifest
        .expansions
        .as_ref()
        .and_then(|e| e.built())
        .cloned();
    let thesaurus_file = async {
        match listed {
            Some(listed) => Some(thesaurus(data.clone(), listed, RwSignal::new(None)).await),
            None => None,
        }
    };
    // So does the learned file of this law, if the folder has one.
    let learned_entry = manifest
        .learned
        .as_ref()
        .filter(|l| l.law == entry.law)
        .cloned();
    let learned_file = async {
        match learned_entry {
            Some(listed) => Some(learned(&data, listed).await),
            None => None,
        }
    };
    let (law_bytes, thesaurus_file, learned_file) = futures::join!(
        verified_listed(&data, kind, &entry, &label, progress),
        thesaurus_file,
        learned_file
    );
    let (bytes, verify_ms) = law_bytes?;
    // The thesaurus and learned files may have been decoded in this task: the law gets one of its own.
    fetch::yield_to_browser().await;
    let bundle = decode_law(&entry, bytes)?;
    let index = LawIndex::from_bundle(bundle);
    fetch::yield_to_browser().await;
    // A broken thesaurus file costs the expansion, not the law: the failure is shown and BM25 runs unexpanded.
    let table = thesaurus_file.map(|file| {
        let (file, name) = file?;
        index.expansion_table(&file).map_err(|e| {
            bundle_failure(BundleKind::Expansions, &name, BundleProblem::Expansions(e))
        })
    });
    let (index, expansions) = match table {
        Some(Ok(table)) => {
            let terms = table.file().thesaurus.len();
            (index.with_expansions(table), Some(Ok(terms)))
        }
        Some(Err(failure)) => (index, Some(Err(failure))),
        None => (index, None),
    };
    fetch::yield_to_browser().await;
    // A broken or foreign learned file costs the learning, not the law.
    let (index, learned) = match learned_file {
        Some(Ok((file, name))) => match file.resolve(&index.law) {
            Ok((learning, _)) => {
                let provenance = learning.provenance.clone();
                (index.with_learning(learning), Some(Ok(provenance)))
            }
            Err(e) => {
                let failure = bundle_failure(BundleKind::Learned, &name, BundleProblem::Learned(e));
                (index, Some(Err(failure)))
            }
        },
        Some(Err(failure)) => (index, Some(Err(failure))),
        None => (index, None),
    };
    fetch::yield_to_browser().await;
    let definitions = definitions(&index.law).await;
    let loaded = Rc::new(LoadedLaw {
        definitions,
        index,
        entry,
        verify_ms,
        expansions,
        learned,
    });
    remember(&loaded.entry.file, &loaded);
    Ok(loaded)
}

/// The law's statutory definitions, found a few sections per task: over the BGB in one piece it was a task of
/// 20-30 ms in the page.
async fn definitions(law: &Law) -> LawDefinitions {
    let mut slices = fetch::Slices::new();
    let mut found = Vec::new();
    for section in definitions_by_section(law) {
        slices.tick().await;
        found.extend(section);
    }
    LawDefinitions::of(found)
}

/// Decodes a verified law bundle and checks that it is the law its manifest entry lists.
pub(super) fn decode_law(entry: &LawEntry, bytes: Vec<u8>) -> Result<LawBundle, Failure> {
    decode_checked(
        BundleKind::Law,
        &entry.file,
        bytes,
        |b| LawBundle::from_bytes(b).map_err(BundleProblem::Decode),
        |b| entry.check_law(&entry.file, &b.law),
    )
}

/// A law's learned file (`learned.<hash>.pgb`), verified and decoded, with its name.
async fn learned(data: &str, listed: LearnedEntry) -> Result<(LearnedFile, String), Failure> {
    let kind = BundleKind::Learned;
    let name = listed.file.file.clone();
    let (bytes, _) =
        verified_listed(data, kind, &listed.file, "Gelerntes", RwSignal::new(None)).await?;
    let file = decode_checked(
        kind,
        &name,
        bytes,
        |b| LearnedFile::from_bytes(b).map_err(BundleProblem::Learned),
        |_| Ok(()),
    )?;
    Ok((file, name))
}

/// Words or synonym sets of the thesaurus decoded between two checks of the time ([`fetch::Slices`]).
const THESAURUS_STEP: usize = 2_000;

/// The folder's thesaurus file (`thesaurus.<hash>.pgb`), verified and decoded once for all laws, with its name.
async fn thesaurus(
    data: String,
    listed: ThesaurusEntry,
    progress: RwSignal<Progress>,
) -> Result<(Arc<ThesaurusFile>, String), Failure> {
    let file = listed.file.clone();
    let name = file.clone();
    let decoded = shared(&THESAURUS, file.clone(), move || {
        async move {
            let kind = BundleKind::Expansions;
            let (bytes, _) =
                verified_listed(&data, kind, &listed, "Synonymtabelle", progress).await?;
            // In short tasks: in one piece the BGB folder's thesaurus was a task of about 50 ms.
            let decoded = async {
                let payload = ThesaurusFile::payload(&bytes)?;
                let mut decoder = ThesaurusDecoder::new(&payload)?;
                let mut slices = fetch::Slices::new();
                while !decoder.step(THESAURUS_STEP)? {
                    slices.tick().await;
                }
                decoder.finish()
            }
            .await
            .map_err(|e| bundle_failure(kind, &file, BundleProblem::Expansions(e)))?;
            Ok(Arc::new(decoded))
        }
        .boxed_local()
    })
    .await?;
    Ok((decoded, name))
}

/// The strategy bundle named `strategy` of the loaded law (or its `section` or first bundle); `None` when the
/// law has none (a folder built with `--strategies none`: its sections are searched with BM25 alone).
pub async fn strategy(
    data: String,
    manifest: Rc<Manifest>,
    law: Rc<LoadedLaw>,
    strategy: String,
    progress: RwSignal<Progress>,
) -> Result<Option<Rc<LoadedStrategy>>, Failure> {
    let Some(entry) = manifest.bundle(&law.entry.law, &strategy).cloned() else {
        return Ok(None);
    };
    if let Some(loaded) = decoded::<LoadedStrategy>(&entry.file) {
        return Ok(Some(loaded));
    }
    let kind = BundleKind::Strategy;
    let label = format!("Strategie {}", entry.strategy);
    let (bytes, verify_ms) = verified_listed(&data, kind, &entry, &label, progress).await?;
    let bundle = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| StrategyBundle::from_bytes(b).map_err(BundleProblem::Decode),
        |b| entry.check_bundle(&entry.file, b),
    )?;
    let index = StrategyIndex::new(bundle, &law.index.law)
        .map_err(|e| bundle_failure(kind, &entry.file, BundleProblem::Engine(e)))?;
    let loaded = Rc::new(LoadedStrategy {
        entry,
        index,
        verify_ms,
    });
    remember(&loaded.entry.file, &loaded);
    Ok(Some(loaded))
}
