//! All laws: the index across laws, its section vectors, the search over it, the law finder's topics and the
//! law texts of results.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use futures::future::FutureExt;
use leptos::prelude::*;
use paragraf_core::federal::cited::CitedByFile;
use paragraf_core::federal::files::{FederalHead, FederalVectors};
use paragraf_core::federal::routing::{CatalogueLaw, Router};
use paragraf_core::finder::TopicsFile;
use paragraf_core::manifest::{self, FederalEntry, LawEntry, Manifest};
use paragraf_engine::{Mode, SearchOptions};
use paragraf_index::bm25::PostingShard;
use paragraf_law::Law;

use super::files::{bundle_failure, decode_checked, decoded, remember, verified_listed};
use super::law::decode_law;
use super::vectors::{query_vector, search_vector, Embedded, VectorSources};
use crate::failure::{BundleKind, BundleProblem, Failure};
use crate::fetch;
use crate::fetch::Progress;
use crate::shared::{shared, SharedAnswers};

/// The index across all laws, with the posting shards fetched so far (kept for later questions).
pub struct LoadedFederal {
    pub entry: FederalEntry,
    pub head: FederalHead,
    shards: RefCell<HashMap<u32, Rc<PostingShard>>>,
    /// Time to check the head against the manifest, ms.
    pub verify_ms: f64,
    /// Law routing over the head's laws, from the catalogue it was made with (at the first search, and again
    /// when the catalogue changes): which law a question belongs to, and the law it names.
    router: RefCell<Option<(Rc<Manifest>, Rc<Router>)>>,
}

impl LoadedFederal {
    /// The router over the head's laws for `manifest`'s catalogue (`catalogue`: its laws by abbreviation).
    fn router_for(
        &self,
        manifest: &Rc<Manifest>,
        catalogue: &HashMap<&str, &LawEntry>,
    ) -> Rc<Router> {
        let mut cached = self.router.borrow_mut();
        match &*cached {
            Some((made_for, router)) if Rc::ptr_eq(made_for, manifest) => router.clone(),
            _ => {
                let listed = self.head.laws().iter().map(|l| {
                    catalogue
                        .get(l.as_str())
                        .map_or(CatalogueLaw::default(), |e| CatalogueLaw {
                            law: &e.law,
                            title: &e.title,
                            short_title: &e.short_title,
                            sections: e.sections as u32,
                            refers: e.refers.iter().map(String::as_str).collect(),
                        })
                });
                let law_text = Some(self.head.law_text_index());
                let router = Rc::new(Router::of_catalogue(listed, law_text));
                *cached = Some((manifest.clone(), router.clone()));
                router
            }
        }
    }
}

/// The head of the manifest's index across laws, verified and checked; `None` when the folder has none.
pub async fn federal(
    data: String,
    manifest: Rc<Manifest>,
    progress: RwSignal<Progress>,
) -> Result<Option<Rc<LoadedFederal>>, Failure> {
    let Some(entry) = manifest.federal.clone() else {
        return Ok(None);
    };
    if let Some(loaded) = decoded::<LoadedFederal>(&entry.head.file) {
        return Ok(Some(loaded));
    }
    let kind = BundleKind::Federal;
    let file = &entry.head.file;
    let (bytes, verify_ms) =
        verified_listed(&data, kind, &entry.head, "Gesamtindex", progress).await?;
    let head = FederalHead::from_bytes(&bytes)
        .map_err(|e| bundle_failure(kind, file, BundleProblem::Federal(e)))?;
    if head.shards() != entry.shards.len() {
        return Err(bundle_failure(
            kind,
            file,
            BundleProblem::Mismatch(manifest::ManifestError::Mislabeled {
                file: file.clone(),
                found: format!("{} posting shards", head.shards()),
                expected: format!("{} posting shards", entry.shards.len()),
            }),
        ));
    }
    let loaded = Rc::new(LoadedFederal {
        entry,
        head,
        shards: RefCell::new(HashMap::new()),
        verify_ms,
        router: RefCell::new(None),
    });
    remember(&loaded.entry.head.file, &loaded);
    Ok(Some(loaded))
}

/// The section vectors across laws, verified and checked against their head; `None` when the folder has none
/// (lexical only). The file is fetched once the head is in: it is three times the head's size, and sharing the
/// link with the head would delay the first (BM25) result, which never waits for it.
pub async fn federal_vectors(
    data: String,
    manifest: Rc<Manifest>,
    head: impl std::future::Future<Output = Result<Option<Rc<LoadedFederal>>, Failure>>,
) -> Result<Option<Rc<FederalVectors>>, Failure> {
    let Some(entry) = manifest.federal.as_ref().and_then(|f| f.vectors.clone()) else {
        return Ok(None);
    };
    let file = &entry.file.file;
    if let Some(loaded) = decoded::<FederalVectors>(file) {
        return Ok(Some(loaded));
    }
    let Some(head) = head.await? else {
        return Ok(None);
    };
    let kind = BundleKind::Federal;
    let label = "Vektoren aller Gesetze";
    let (bytes, _) = verified_listed(&data, kind, &entry.file, label, RwSignal::new(None)).await?;
    let vectors = decode_checked(
        kind,
        file,
        bytes,
        |b| {
            head.head
                .vectors_from_bytes(b)
                .map_err(BundleProblem::Federal)
        },
        |v| {
            (v.model() == entry.model).then_some(()).ok_or_else(|| {
                manifest::ManifestError::Mislabeled {
                    file: file.clone(),
                    found: format!("model {}", v.model()),
                    expected: format!("model {}", entry.model),
                }
            })
        },
    )?;
    let vectors = Rc::new(vectors);
    remember(file, &vectors);
    Ok(Some(vectors))
}

impl LoadedFederal {
    /// Fetches the posting shards among `needed` not loaded yet (in parallel), returning their bytes.
    async fn fetch_shards(&self, data: &str, needed: &[u32]) -> Result<u64, Failure> {
        let missing: Vec<u32> = needed
            .iter()
            .copied()
            .filter(|n| !self.shards.borrow().contains_key(n))
            .collect();
        let kind = BundleKind::Federal;
        let fetches = missing.iter().map(|&n| async move {
            let listed = &self.entry.shards[n as usize];
            let (bytes, _) =
                verified_listed(data, kind, listed, "Gesamtindex", RwSignal::new(None)).await?;
            let shard = self
                .head
                .shard_from_bytes(n, &bytes)
                .map_err(|e| bundle_failure(kind, &listed.file, BundleProblem::Federal(e)))?;
            Ok::<_, Failure>((n, shard, listed.bytes))
        });
        let mut fetched = 0;
        for result in futures::future::join_all(fetches).await {
            let (n, shard, bytes) = result?;
            self.shards.borrow_mut().insert(n, Rc::new(shard));
            fetched += bytes;
        }
        Ok(fetched)
    }
}

/// One section found across laws.
pub struct FederalResult {
    /// The law's catalogue entry.
    pub law: LawEntry,
    /// Index into the law's sections.
    pub section: u32,
    pub designation: String,
    pub score: f32,
}

/// Where the section vectors across laws stood when a search ran.
#[derive(Clone)]
pub enum FederalVectorsNow {
    /// In use, or not needed (BM25 was asked for, or the folder has none).
    Ready(Option<Rc<FederalVectors>>),
    /// Still arriving: BM25 until then; the search runs again once they are in.
    Loading {
        bytes: u64,
        /// Their model: the proxy is asked for the question's vector meanwhile.
        model: String,
    },
    /// They cannot be loaded: BM25, and why.
    Failed(Failure),
}

/// A finished search across laws.
pub struct FederalOutcome {
    pub results: Vec<FederalResult>,
    /// The mode that ran.
    pub mode: Mode,
    /// Whether the vectors were there (when the mode wanted them).
    pub vectors: FederalVectorsNow,
    /// Laws searched (the catalogue, or the chosen set).
    pub laws_searched: usize,
    /// Posting shards the question needed, and the bytes of those that had to be fetched for it.
    pub shards_needed: usize,
    pub shard_bytes: u64,
    /// Core search time in the browser (ms), without fetching.
    pub retrieval_ms: f64,
    pub embedded: Option<Embedded>,
    /// Running number of finished searches (`data-search`).
    pub number: u32,
    /// The law the question names, when it is searched among others ("Meinten Sie das Gesetz …?").
    pub named: Option<LawEntry>,
    /// The question searched (its words are marked in the results' excerpts).
    pub question: String,
    /// Asked for more than the first page ([`super::MORE_SECTIONS`]).
    pub more: bool,
}

/// What the user asked of all laws.
pub struct FederalRequest {
    /// The submitted query.
    pub query: String,
    pub mode: Mode,
    /// Only these laws (empty: all of the catalogue).
    pub only: Vec<String>,
    /// More than the first page ([`super::MORE_SECTIONS`] instead of the engine's default).
    pub more: bool,
}

/// Searches all laws of the catalogue (or the set `only` names): the question's posting shards are fetched,
/// the query vector comes as for one law ([`VectorSources`]) once the section `vectors` are there, and only laws
/// the manifest lists are shown.
pub async fn run_federal_search(
    data: String,
    request: FederalRequest,
    manifest: Rc<Manifest>,
    federal: Rc<LoadedFederal>,
    vectors: FederalVectorsNow,
    sources: VectorSources,
    proxy_problem: RwSignal<Option<Failure>>,
) -> Result<Rc<FederalOutcome>, Failure> {
    let FederalRequest {
        query,
        mode,
        only,
        more,
    } = request;
    let head = &federal.head;
    let terms = head.query_terms(&query);
    let needed = head.shards_for(&terms);
    let shard_bytes = federal.fetch_shards(&data, &needed).await?;
    let coded = match &vectors {
        FederalVectorsNow::Ready(v) => v.clone(),
        FederalVectorsNow::Loading { model, .. } => {
            // The proxy embeds the question while the vectors arrive; the run once they are in finds it.
            if let (true, Some(Ok(health))) = (mode != Mode::Bm25, &sources.proxy) {
                let (q, m, url, health) = (
                    query.clone(),
                    model.clone(),
                    sources.proxy_url.clone(),
                    health.clone(),
                );
                leptos::task::spawn_local(async move {
                    // A failure is met again, and reported, by that run.
                    let _ = query_vector(&q, &m, &url, Ok(health)).await;
                });
            }
            None
        }
        FederalVectorsNow::Failed(_) => None,
    };
    let model = coded.as_deref().map(FederalVectors::model);
    let (vector, embedded) = search_vector(&query, mode, model, sources, proxy_problem).await?;
    // Laws of the catalogue (a law the manifest no longer lists is not shown), narrowed to the chosen set; one
    // table, not a scan of the catalogue per law (6,877² comparisons were most of a search across all laws).
    let catalogue: HashMap<&str, &LawEntry> =
        manifest.laws.iter().map(|l| (l.law.as_str(), l)).collect();
    let entries: Vec<Option<&LawEntry>> = head
        .laws()
        .iter()
        .map(|l| {
            catalogue
                .get(l.as_str())
                .copied()
                .filter(|_| only.is_empty() || only.iter().any(|o| o == l))
        })
        .collect();
    let defaults = SearchOptions::default();
    let options = SearchOptions {
        mode,
        section_k: if more {
            super::MORE_SECTIONS
        } else {
            defaults.section_k
        },
        ..defaults
    };
    // Routed by law as `paragraf search` routes, with what the catalogue says of each law (a law it no longer
    // lists has no name) and the head's index of the laws' text; made again when the catalogue changes.
    let router = federal.router_for(&manifest, &catalogue);
    // The law the question names: among all laws the router's, among a chosen set that set's own (a word may
    // name one law of the set and several of the catalogue).
    let searched: Vec<(usize, &LawEntry)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.map(|e| (i, e)))
        .collect();
    let mut asked = router.ask(&query);
    asked.named = match (searched.len() > 1, only.is_empty()) {
        (false, _) => None,
        (true, true) => asked.named,
        (true, false) => {
            paragraf_core::finder::LawNames::new(searched.iter().map(|(_, l)| l.names()))
                .named(&query)
                .map(|k| searched[k].0)
        }
    };
    let t0 = fetch::now_ms();
    let shards = federal.shards.borrow();
    let (hits, ran) = head
        .search(
            &terms,
            coded.as_deref().zip(vector.as_deref()),
            &options,
            |n| shards.get(&n).map(|s| s.as_ref()),
            |l| entries[l as usize].is_some(),
            Some((&router, &asked)),
        )
        .map_err(|e| {
            bundle_failure(
                BundleKind::Federal,
                &federal.entry.head.file,
                BundleProblem::Federal(e),
            )
        })?;
    let retrieval_ms = fetch::now_ms() - t0;
    let results = hits
        .iter()
        .map(|hit| {
            let doc = head.doc(hit);
            FederalResult {
                law: entries[hit.law as usize].cloned().expect("kept laws only"),
                section: hit.section,
                designation: doc.designation.clone(),
                score: hit.score,
            }
        })
        .collect();
    let named = asked.named.and_then(|i| entries[i].cloned());
    static SEARCHES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    Ok(Rc::new(FederalOutcome {
        results,
        mode: ran,
        vectors,
        laws_searched: entries.iter().filter(|e| e.is_some()).count(),
        shards_needed: needed.len(),
        shard_bytes,
        retrieval_ms,
        embedded,
        number: SEARCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        named,
        question: query,
        more,
    }))
}

/// The law finder's topics of every law, verified and decoded; `None` when the folder has none (an index across
/// laws built before topics had a file of their own, or none at all): the finder then matches abbreviations and
/// titles only.
pub async fn topics(
    data: String,
    manifest: Rc<Manifest>,
    progress: RwSignal<Progress>,
) -> Result<Option<TopicsFile>, Failure> {
    let Some(entry) = manifest.federal.as_ref().and_then(|f| f.topics.clone()) else {
        return Ok(None);
    };
    let kind = BundleKind::Topics;
    let (bytes, _) = verified_listed(&data, kind, &entry, "Themen der Gesetze", progress).await?;
    let file = decode_checked(
        kind,
        &entry.file,
        bytes,
        |b| TopicsFile::from_bytes(b).map_err(BundleProblem::Topics),
        |_| Ok(()),
    )?;
    Ok(Some(file))
}

/// Which sections of other laws cite the sections of `law`: the folder's cited-by shard that holds it, verified
/// and decoded (kept while anyone holds it); `None` when the folder has none (one law, or indexed before they
/// existed).
pub async fn cited_by(
    data: String,
    manifest: Rc<Manifest>,
    law: String,
) -> Result<Option<Rc<CitedByFile>>, Failure> {
    let Some(entry) = manifest
        .federal
        .as_ref()
        .and_then(|f| f.cited_by_shard(&law))
        .cloned()
    else {
        return Ok(None);
    };
    if let Some(file) = decoded::<CitedByFile>(&entry.file.file) {
        return Ok(Some(file));
    }
    let kind = BundleKind::CitedBy;
    let (bytes, _) =
        verified_listed(&data, kind, &entry.file, kind.label(), RwSignal::new(None)).await?;
    let file = decode_checked(
        kind,
        &entry.file.file,
        bytes,
        |b| CitedByFile::from_bytes(b, &entry.from).map_err(BundleProblem::CitedBy),
        |_| Ok(()),
    )?;
    let file = Rc::new(file);
    remember(&entry.file.file, &file);
    Ok(Some(file))
}

/// Law texts kept for results across laws (the newest last).
const KEPT_LAW_TEXTS: usize = 32;

thread_local! {
    /// Law texts for results across laws, arrived or arriving: a result list replaced by the next (BM25 while
    /// the vectors arrive, then hybrid; the next question) finds the laws it shares with the last ones instead
    /// of fetching and decoding them again.
    static LAW_TEXTS: SharedAnswers<String, Rc<Law>> = const { SharedAnswers::new(KEPT_LAW_TEXTS) };
}

/// A law's text for results across laws: its law bundle, verified and decoded, without building its search
/// index (that happens when the law is opened); fetched once while it is among the last [`KEPT_LAW_TEXTS`]
/// laws shown. A law that failed is tried again by the next list.
pub async fn law_text(data: String, entry: LawEntry) -> Result<Rc<Law>, Failure> {
    let file = entry.file.clone();
    shared(&LAW_TEXTS, file, move || {
        fetch_law_text(data, entry).boxed_local()
    })
    .await
}

async fn fetch_law_text(data: String, entry: LawEntry) -> Result<Rc<Law>, Failure> {
    let kind = BundleKind::Law;
    let label = format!("Gesetz {}", entry.law);
    let (bytes, _) = verified_listed(&data, kind, &entry, &label, RwSignal::new(None)).await?;
    Ok(Rc::new(decode_law(&entry, bytes)?.law))
}
