//! The bundles of one folder, loaded lazily and once, plus the query encoder: what `paragraf search`, `show` and
//! `mcp` share. The search itself is the browser's: [`paragraf_engine::search_expanded`] with the default
//! [`SearchOptions`] (query expansion included), one law at a time.
//!
//! Everything is loaded on first use and kept (the MCP server answers many calls from one process); each load is
//! reported on stderr with its time, so the start-up cost is visible. The encoder is the bundles' model, run
//! locally (e5 or EmbeddingGemma, as the manifest names it) unless a query-embedding proxy is named, which must
//! serve that model: vectors of different models are not comparable.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cmd::refusal::{refuse, Refusal};
use anyhow::{anyhow, Context, Result};
use paragraf_core::federal::cited::{cited_by_shards, shard_for, CitedByFile};
use paragraf_core::federal::{FederalIndex, FederalLaw, LearnedLaw, SECTION_STRATEGY};
use paragraf_core::finder::LawNames;
use paragraf_core::manifest::{BundleEntry, CitedByEntry, LawEntry, Manifest, MANIFEST};
use paragraf_core::results::{
    self, LawCount, LawExpansion, LawName, LawSummary, ResolvedCitation, SearchResults,
    SectionText, TableOfContents,
};
use paragraf_embed::choice::ModelChoice;
use paragraf_embed::{EmbeddingBackend, TextKind};
use paragraf_engine::bundle::StrategyBundle;
use paragraf_engine::expansion::ThesaurusFile;
use paragraf_engine::{self as engine, LawIndex, Mode, SearchOptions, SectionHit, StrategyIndex};
use paragraf_format::api;
use paragraf_format::names;

/// Where `paragraf build` writes by default.
pub const DEFAULT_BUNDLES: &str = "out/bundles";

/// Most sections one search returns.
pub const MAX_K: usize = 50;

/// Query expansion for one search: the weight of the added words and the words the user removed.
#[derive(Clone, Debug)]
pub struct ExpansionChoice {
    /// [`SearchOptions::expansion_weight`] (0: off).
    pub weight: f32,
    /// Added words not to search (as shown, `Sicherheitsleistung`).
    pub removed: Vec<String>,
}

impl ExpansionChoice {
    /// A checked choice: the weight is finite and not negative.
    pub fn new(weight: f32, removed: Vec<String>) -> Result<Self> {
        if !(weight.is_finite() && weight >= 0.0) {
            refuse!("the expansion weight must be 0 (off) or more, not {weight}");
        }
        Ok(ExpansionChoice { weight, removed })
    }
}

impl Default for ExpansionChoice {
    fn default() -> Self {
        ExpansionChoice {
            weight: engine::DEFAULT_EXPANSION_WEIGHT,
            removed: Vec::new(),
        }
    }
}

/// How query vectors are made.
#[derive(Clone, Debug)]
pub enum Encoder {
    /// The bundles' model, run locally; `--model` (a model file or folder, or a name) says where it is
    /// (`None`: e5 from $PARAGRAF_MODEL, else the `paragraf model fetch` cache; EmbeddingGemma from its cache).
    Local(Option<PathBuf>),
    /// A `paragraf proxy` at this base URL.
    Proxy(String),
}

/// A loaded query encoder for one model.
enum QueryEncoder {
    Local(Box<dyn EmbeddingBackend>),
    Proxy {
        url: String,
        /// What the proxy's `/health` said (which models it serves).
        health: api::Health,
        agent: ureq::Agent,
    },
}

impl QueryEncoder {
    /// Vectors of `model` for `question` (the proxy is asked for `model` by name; a local encoder is loaded for
    /// its model, see [`load_encoder`]).
    fn embed(&self, question: &str, model: &str) -> Result<Vec<f32>> {
        match self {
            QueryEncoder::Local(e) => Ok(e.embed(&[question], TextKind::Query)?.remove(0)),
            QueryEncoder::Proxy { url, agent, health } => {
                let Some(request) = health.request(question, model) else {
                    refuse!("{}", not_served(url, health, model));
                };
                let body = serde_json::to_string(&request)?;
                let answer: api::EmbedResponse = proxy_call(
                    url,
                    agent
                        .post(format!("{url}{}", api::EMBED_PATH))
                        .header("Content-Type", "application/json")
                        .send(body),
                )?;
                if answer.model != model {
                    refuse!(
                        "the query-embedding proxy at {url} answered with {} vectors but the bundles were built with {model}; vectors of different models are not comparable",
                        answer.model
                    );
                }
                answer.payload.into_f32().into_iter().next().ok_or_else(|| {
                    anyhow!(Refusal(format!(
                        "the proxy at {url} answered without a vector; most likely it is not a `paragraf proxy`"
                    )))
                })
            }
        }
    }
}

/// Why a proxy cannot embed for bundles of `model`, naming both sides.
fn not_served(url: &str, health: &api::Health, model: &str) -> String {
    format!(
        "the query-embedding proxy at {url} serves {} but the bundles were built with {model}; vectors of different models are not comparable. Start the proxy with that model (`paragraf proxy --model ...`), search without it (drop --proxy), or use --mode bm25",
        health.served_ids().join(", ")
    )
}

/// The JSON answer of a proxy request (a type of `paragraf_format::api`), or a refusal saying what went wrong.
fn proxy_call<T: serde::de::DeserializeOwned>(
    url: &str,
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<T> {
    let mut response = response.map_err(|e| {
        Refusal(format!(
            "the query-embedding proxy at {url} cannot be reached ({e}). Most likely it is not running: start it with `paragraf proxy`, or search without it (drop --proxy to use the local model, or --mode bm25)"
        ))
    })?;
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    if !(200..300).contains(&status) {
        refuse!(
            "the query-embedding proxy at {url} answered HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        );
    }
    serde_json::from_str(&text).map_err(|e| {
        anyhow!(Refusal(format!(
            "the proxy at {url} did not answer as a `paragraf proxy` does ({e}); most likely the URL points to another service"
        )))
    })
}

/// The local encoder that computes `model`'s vectors: the bundles' model id names it, `--model` only says where
/// it is (and must be the same model).
fn local_choice(model: &str, given: Option<&Path>) -> Result<ModelChoice> {
    let Some(wanted) = ModelChoice::from_model_id(model) else {
        refuse!(
            "the bundles were built with {model}, which paragraf cannot run itself; embed questions with a query-embedding proxy that serves it (--proxy) or use --mode bm25"
        );
    };
    let Some(given) = given else {
        return Ok(wanted);
    };
    let given = ModelChoice::parse(&given.to_string_lossy()).map_err(|e| Refusal(e.to_string()))?;
    let same_model = matches!(
        (&wanted, &given),
        (ModelChoice::E5 { .. }, ModelChoice::E5 { .. })
            | (ModelChoice::Gemma { .. }, ModelChoice::Gemma { .. })
    );
    if !same_model {
        refuse!(
            "--model names {given} but the bundles were built with {model}; vectors of different models are not comparable. Name that model's file or folder, or leave --model out"
        );
    }
    Ok(wanted.located(&given))
}

/// The encoder for bundles of `model`.
fn load_encoder(encoder: &Encoder, model: &str) -> Result<QueryEncoder> {
    match encoder {
        Encoder::Local(path) => {
            let choice = local_choice(model, path.as_deref())?;
            let backend = choice.load().map_err(|e| {
                Refusal(format!("{e}. Dense and hybrid search embed the question locally; `--mode bm25` needs no model"))
            })?;
            Ok(QueryEncoder::Local(backend))
        }
        Encoder::Proxy(url) => {
            let url = url.trim_end_matches('/').to_string();
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into();
            let health: api::Health =
                proxy_call(&url, agent.get(format!("{url}{}", api::HEALTH_PATH)).call())?;
            if !health.serves(model) {
                refuse!("{}", not_served(&url, &health, model));
            }
            Ok(QueryEncoder::Proxy { url, health, agent })
        }
    }
}

/// A law with its BM25 index.
pub struct LoadedLaw {
    pub entry: LawEntry,
    pub index: LawIndex,
}

/// A law read for its text, with its statutory definitions.
pub struct LawText {
    pub law: paragraf_law::Law,
    pub definitions: paragraf_law::definitions::LawDefinitions,
}

/// The bundles of one folder.
pub struct Library {
    dir: PathBuf,
    manifest: Manifest,
    encoder_source: Encoder,
    laws: Mutex<HashMap<String, Arc<LoadedLaw>>>,
    /// Laws read for their text (`show`, `cite`, `contents`), with their definitions: no BM25 index.
    texts: Mutex<HashMap<String, Arc<LawText>>>,
    strategies: Mutex<HashMap<(String, String), Arc<StrategyIndex>>>,
    /// The last index across several laws, with the laws it holds.
    federal: Mutex<Option<(Vec<String>, Arc<FederalIndex>)>>,
    /// Query encoders by the bundles' model id.
    encoders: Mutex<HashMap<String, std::result::Result<Arc<QueryEncoder>, String>>>,
    /// The folder's thesaurus file, read on the first law (`None`: none listed, or it could not be used).
    thesaurus: std::sync::OnceLock<Option<Arc<ThesaurusFile>>>,
    /// Whether the folder's learned file is used (see [`Library::without_learning`]).
    learning: bool,
    /// Whether searches across laws are routed by law (see [`Library::without_routing`]).
    routing: bool,
    /// Which sections of the folder's other laws cite each section, worked out when a section of a folder of
    /// several laws is first asked for ([`Library::cited_across`]).
    cited_across: std::sync::OnceLock<Vec<CitedByFile>>,
}

/// Milliseconds since `t0`.
fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

impl Library {
    /// Reads `dir/manifest.json`; nothing else is loaded yet.
    pub fn open(dir: &Path, encoder: Encoder) -> Result<Library> {
        let path = dir.join(MANIFEST);
        if !path.exists() {
            refuse!(
                "no bundles in {}: {} is missing. Build them first (`paragraf build --law BGB --out {}`) or name the folder with --bundles",
                dir.display(),
                path.display(),
                dir.display()
            );
        }
        // Bounded, regular files only (`load_or_new`): a giant or a FIFO is refused before it is read.
        let manifest = paragraf_bundler::manifest::load_or_new(dir)
            .map_err(|e| Refusal(format!("{e}. Rebuild the folder with `paragraf build`")))?;
        if manifest.laws.is_empty() {
            refuse!(
                "{} lists no law. Build bundles with `paragraf build --law BGB --out {}`",
                path.display(),
                dir.display()
            );
        }
        Ok(Library {
            dir: dir.to_path_buf(),
            manifest,
            encoder_source: encoder,
            laws: Mutex::new(HashMap::new()),
            texts: Mutex::new(HashMap::new()),
            strategies: Mutex::new(HashMap::new()),
            federal: Mutex::new(None),
            encoders: Mutex::new(HashMap::new()),
            thesaurus: std::sync::OnceLock::new(),
            learning: true,
            routing: true,
            cited_across: std::sync::OnceLock::new(),
        })
    }

    /// Ranks across laws without law routing (`paragraf search --no-routing`), to compare.
    pub fn without_routing(mut self) -> Self {
        self.routing = false;
        self
    }

    /// Ranks without the folder's learned file (`paragraf search --no-learning`): it is not even read.
    pub fn without_learning(mut self) -> Self {
        self.learning = false;
        self
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The law entry named `law` (case-insensitive), or a refusal listing the laws there are.
    pub fn law_entry(&self, law: &str) -> Result<&LawEntry> {
        match self
            .manifest
            .laws
            .iter()
            .find(|l| l.law.eq_ignore_ascii_case(law.trim()))
        {
            Some(entry) => Ok(entry),
            None => refuse!(
                "no law {} in {}; there are: {}",
                names::echo(law),
                self.dir.display(),
                names::listed(self.manifest.laws.iter().map(|l| l.law.as_str()), 20)
            ),
        }
    }

    /// The (law, strategy) bundle entry, or a refusal listing the law's strategies; `None` when the law has no
    /// strategy bundle at all (built with `--strategies none`: BM25 over its sections is all it offers).
    pub fn bundle_entry<'a>(
        &'a self,
        law: &'a str,
        strategy: &str,
    ) -> Result<Option<&'a BundleEntry>> {
        match self
            .manifest
            .bundles_of(law)
            .find(|b| b.strategy == strategy)
        {
            Some(entry) => Ok(Some(entry)),
            None => {
                let have: Vec<&str> = self
                    .manifest
                    .bundles_of(law)
                    .map(|b| b.strategy.as_str())
                    .collect();
                if have.is_empty() {
                    return Ok(None);
                }
                refuse!(
                    "no {} bundle for {law} in {}; there are: {}",
                    names::echo(strategy),
                    self.dir.display(),
                    have.join(", ")
                )
            }
        }
    }

    /// Decodes the law of `law`'s bundle, verified against the manifest (what `paragraf show` needs).
    pub fn read_law(&self, law: &str) -> Result<paragraf_law::Law> {
        self.read_law_bundle(law).map(|bundle| bundle.law)
    }

    /// Decodes the law bundle of `law` (the law and its prebuilt BM25 index), verified against the manifest.
    fn read_law_bundle(&self, law: &str) -> Result<paragraf_engine::bundle::LawBundle> {
        let entry = self.law_entry(law)?;
        let t0 = Instant::now();
        let law = paragraf_bundler::manifest::read_law_bundle(&self.dir, entry)
            .map_err(|e| Refusal(format!("{e}. Rebuild the folder with `paragraf build`")))?;
        eprintln!(
            "loaded {} ({}, {:.1} MB) in {:.0} ms",
            entry.law,
            entry.file,
            entry.bytes as f64 / 1e6,
            ms(t0)
        );
        Ok(law)
    }

    /// The law with its BM25 index, loaded once.
    pub fn law(&self, law: &str) -> Result<Arc<LoadedLaw>> {
        let entry = self.law_entry(law)?.clone();
        let mut laws = self.laws.lock().expect("law cache");
        if let Some(loaded) = laws.get(&entry.law) {
            return Ok(loaded.clone());
        }
        let decoded = self.read_law_bundle(&entry.law)?;
        if !decoded.index.is_current() {
            eprintln!(
                "note: {}'s search index was built by other analysis code; indexing it now (rebuild the folder with `paragraf build` to save this)",
                entry.law
            );
        }
        let mut index = LawIndex::from_bundle(decoded);
        // A broken thesaurus file costs the expansion, not the search (as in the app).
        let thesaurus = self.thesaurus.get_or_init(|| {
            match paragraf_bundler::expansion::read_expansions(&self.dir, &self.manifest) {
                Ok(file) => file.map(Arc::new),
                Err(e) => {
                    eprintln!("warning: {e}; searching without query expansion");
                    None
                }
            }
        });
        if let Some(file) = thesaurus {
            match index.expansion_table(file) {
                Ok(table) => index = index.with_expansions(table),
                Err(e) => eprintln!(
                    "warning: {e}; searching {} without query expansion",
                    entry.law
                ),
            }
        }
        // Likewise a broken learned file costs the learning.
        let learned = match self.learning {
            true => read_learned(&self.dir, &self.manifest, &index.law),
            false => Ok(None),
        };
        match learned {
            Ok(Some(learning)) => {
                let p = &learning.provenance;
                eprintln!(
                    "ranking {} with what was learned from {} questions ({}: {})",
                    entry.law, p.questions, p.source, p.licence
                );
                index = index.with_learning(learning);
            }
            Ok(None) => {}
            Err(e) => eprintln!("warning: {e:#}; searching {} without learning", entry.law),
        }
        let loaded = Arc::new(LoadedLaw { entry, index });
        laws.insert(loaded.entry.law.clone(), loaded.clone());
        Ok(loaded)
    }

    /// The strategy bundle of a loaded law, loaded once; `None` for a law without strategy bundles.
    pub fn strategy(&self, law: &LoadedLaw, strategy: &str) -> Result<Option<Arc<StrategyIndex>>> {
        let Some(entry) = self.bundle_entry(&law.entry.law, strategy)? else {
            return Ok(None);
        };
        let key = (law.entry.law.clone(), entry.strategy.clone());
        let mut strategies = self.strategies.lock().expect("strategy cache");
        if let Some(loaded) = strategies.get(&key) {
            return Ok(Some(loaded.clone()));
        }
        let t0 = Instant::now();
        let bytes = paragraf_bundler::manifest::read_listed(
            &self.dir,
            &entry.file,
            entry.bytes,
            &entry.sha256,
        )
        .map_err(|e| Refusal(format!("{e}. Rebuild the folder with `paragraf build`")))?;
        let bundle = StrategyBundle::from_bytes(&bytes)
            .map_err(|e| Refusal(format!("{}: {e}", self.dir.join(&entry.file).display())))?;
        let index = StrategyIndex::new(bundle, &law.index.law)
            .map_err(|e| Refusal(format!("{}: {e}", self.dir.join(&entry.file).display())))?;
        eprintln!(
            "loaded {} {} ({} units, {:.1} MB) in {:.0} ms",
            entry.law,
            entry.strategy,
            index.bundle.units.len(),
            bytes.len() as f64 / 1e6,
            ms(t0)
        );
        let index = Arc::new(index);
        strategies.insert(key, index.clone());
        Ok(Some(index))
    }

    /// The query encoder for bundles of `model`, loaded once (a failure is remembered too: the model does not
    /// appear mid-session).
    fn encoder(&self, model: &str) -> Result<Arc<QueryEncoder>> {
        let mut encoders = self.encoders.lock().expect("encoder cache");
        encoders
            .entry(model.to_string())
            .or_insert_with(|| {
                let t0 = Instant::now();
                let loaded =
                    load_encoder(&self.encoder_source, model).map_err(|e| e.to_string())?;
                let via = match &self.encoder_source {
                    Encoder::Local(_) => "local model".to_string(),
                    Encoder::Proxy(url) => format!("proxy {url}"),
                };
                eprintln!("query encoder {model} ({via}) ready in {:.0} ms", ms(t0));
                Ok(Arc::new(loaded))
            })
            .clone()
            .map_err(|e| anyhow!(Refusal(e)))
    }

    /// Loads the encoder for bundles of `model` now (so it can overlap with loading bundles).
    pub fn warm_encoder(&self, model: &str) {
        let _ = self.encoder(model);
    }

    /// The laws a search covers: those named (checked), else all in the manifest.
    pub fn resolve_laws(&self, laws: &[String]) -> Result<Vec<String>> {
        if laws.is_empty() {
            return Ok(self.manifest.laws.iter().map(|l| l.law.clone()).collect());
        }
        let mut out: Vec<String> = Vec::new();
        for law in laws {
            let name = self.law_entry(law)?.law.clone();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// Checks the request before anything heavy is loaded: laws exist, each has the strategy, and the models
    /// agree. Returns the law names and the bundles' model (`None`: no law has vectors, BM25 runs).
    pub fn plan(&self, laws: &[String], strategy: &str) -> Result<(Vec<String>, Option<String>)> {
        let laws = self.resolve_laws(laws)?;
        let mut model: Option<String> = None;
        for law in &laws {
            let Some(entry) = self.bundle_entry(law, strategy)? else {
                continue;
            };
            match &model {
                Some(m) if *m != entry.model => refuse!(
                    "the {strategy} bundles were built with different models ({m}, {}); search one law at a time (--law)",
                    entry.model
                ),
                _ => model = Some(entry.model.clone()),
            }
        }
        Ok((laws, model))
    }

    /// The browser's search for `question` over `laws` (all when empty) with `strategy`, `mode` and `k`
    /// sections. Several laws are ranked as one ([`Library::search_across`]; no query expansion there, since
    /// each law's table is its own).
    pub fn search(
        &self,
        question: &str,
        laws: &[String],
        strategy: &str,
        mode: Mode,
        k: usize,
        expansion: &ExpansionChoice,
    ) -> Result<SearchResults> {
        let question = results::check_question(question).map_err(|e| Refusal(e.to_string()))?;
        if !(1..=MAX_K).contains(&k) {
            refuse!("k must be between 1 and {MAX_K}, not {k}");
        }
        let (laws, model) = self.plan(laws, strategy)?;
        let vector = match &model {
            Some(model) if mode != Mode::Bm25 => Some(self.encoder(model)?.embed(question, model)?),
            _ => None,
        };
        let options = SearchOptions {
            mode,
            section_k: k,
            expansion_weight: expansion.weight,
            route_laws: self.routing,
            ..SearchOptions::default()
        };
        if laws.len() > 1 {
            return self.search_across(question, laws, strategy, vector, model, &options);
        }
        let loaded = self.law(&laws[0])?;
        let index = self.strategy(&loaded, strategy)?;
        let found = engine::search_expanded(
            &loaded.index,
            index.as_deref(),
            question,
            vector.as_deref(),
            &expansion.removed,
            &options,
        )
        .map_err(|e| Refusal(e.to_string()))?;
        let hits = found
            .hits
            .iter()
            .enumerate()
            .map(|(rank, hit)| {
                let bundle = index.as_ref().map(|i| &i.bundle);
                results::section_result(&loaded.index.law, bundle, hit, rank, question)
            })
            .collect();
        Ok(SearchResults {
            schema: results::SCHEMA.to_string(),
            question: question.to_string(),
            mode: found.mode,
            strategy: strategy.to_string(),
            model: model.filter(|_| vector.is_some()),
            expansions: LawExpansion::of(&laws[0], &found.expansions),
            learned: found.learned.as_ref().map(Into::into),
            laws,
            by_law: Vec::new(),
            routed: false,
            named_law: None,
            hits,
        })
    }

    /// One ranking across `laws` ([`FederalIndex`]: one BM25 over all their sections, their `section` vectors),
    /// built once per set of laws and kept.
    fn search_across(
        &self,
        question: &str,
        laws: Vec<String>,
        strategy: &str,
        vector: Option<Vec<f32>>,
        model: Option<String>,
        options: &SearchOptions,
    ) -> Result<SearchResults> {
        if strategy != SECTION_STRATEGY {
            refuse!(
                "a search across laws ranks sections with the {SECTION_STRATEGY} bundles; pass --strategy {SECTION_STRATEGY}, or one --law to search {strategy}"
            );
        }
        let loaded: Vec<(Arc<LoadedLaw>, Option<Arc<StrategyIndex>>)> = laws
            .iter()
            .map(|law| {
                let loaded = self.law(law)?;
                let index = self.strategy(&loaded, strategy)?;
                Ok((loaded, index))
            })
            .collect::<Result<_>>()?;
        let index = {
            let mut cached = self.federal.lock().expect("federal index");
            match cached.as_ref().filter(|(names, _)| *names == laws) {
                Some((_, index)) => index.clone(),
                None => {
                    let t0 = Instant::now();
                    let parts: Vec<FederalLaw> = loaded
                        .iter()
                        .map(|(law, index)| FederalLaw {
                            law: &law.index.law,
                            sections: index.as_ref().map(|i| &i.bundle),
                        })
                        .collect();
                    let mut index =
                        FederalIndex::new(&parts).map_err(|e| Refusal(e.to_string()))?;
                    if let Some(learned) = self.learned_across(&loaded) {
                        index = index.with_learning(learned);
                    }
                    let index = Arc::new(index);
                    eprintln!(
                        "indexed {} sections of {} laws as one in {:.0} ms",
                        index.len(),
                        laws.len(),
                        ms(t0)
                    );
                    *cached = Some((laws.clone(), index.clone()));
                    index
                }
            }
        };
        let (found, mode) = index
            .search(question, vector.as_deref(), options)
            .map_err(|e| Refusal(e.to_string()))?;
        let hits = found
            .iter()
            .enumerate()
            .map(|(rank, hit)| {
                let (law, strategy) = &loaded[hit.law as usize];
                let section = SectionHit {
                    section: hit.section,
                    score: hit.score,
                    cited: false,
                    units: Vec::new(),
                    precedents: hit.precedents,
                };
                results::section_result(
                    &law.index.law,
                    strategy.as_ref().map(|s| &s.bundle),
                    &section,
                    rank,
                    question,
                )
            })
            .collect::<Vec<_>>();
        let named_law = self.named_law(question, &laws);
        Ok(SearchResults {
            schema: results::SCHEMA.to_string(),
            question: question.to_string(),
            mode,
            strategy: strategy.to_string(),
            model: model.filter(|_| vector.is_some()),
            laws,
            expansions: Vec::new(),
            learned: index
                .learned()
                .filter(|_| options.route_laws && options.learning)
                .map(|l| (&l.learning.provenance).into()),
            by_law: LawCount::of(&hits),
            routed: options.route_laws,
            named_law,
            hits,
        })
    }

    /// What was learned for one of `loaded` (its learned file read with the law), with the routing weights
    /// `paragraf learn` fit for it across the folder's laws; `None` without them (an older learned file
    /// learned for one law is not used across laws: its weights know nothing of the others).
    fn learned_across(
        &self,
        loaded: &[(Arc<LoadedLaw>, Option<Arc<StrategyIndex>>)],
    ) -> Option<LearnedLaw> {
        let entry = self.manifest.learned.as_ref()?;
        let law = loaded.iter().position(|(l, _)| l.entry.law == entry.law)?;
        let learning = loaded[law].0.index.learning()?.clone();
        let Some(routing) = entry.routing else {
            eprintln!(
                "warning: the learned file of {} has no routing weights across laws: searching across laws without it (learn again with `paragraf learn --bundles {}`)",
                entry.law,
                self.dir.display()
            );
            return None;
        };
        if !routing.weights.valid() {
            eprintln!(
                "warning: the manifest's routing weights for {} are negative or not finite (edited by hand?): searching across laws without what was learned; learn again with `paragraf learn`",
                entry.law
            );
            return None;
        }
        Some(LearnedLaw {
            law: law as u32,
            learning,
            weights: routing.weights,
        })
    }

    /// The law `question` names among `searched`, when it names one ([`paragraf_core::finder::LawNames`]).
    fn named_law(&self, question: &str, searched: &[String]) -> Option<LawName> {
        let laws: Vec<&LawEntry> = self
            .manifest
            .laws
            .iter()
            .filter(|l| searched.contains(&l.law))
            .collect();
        let names = LawNames::new(laws.iter().map(|l| l.names()));
        names.named(question).map(|i| LawName {
            law: laws[i].law.clone(),
            title: laws[i].title.clone(),
        })
    }

    /// Section `designation` of `law` in full, from an already loaded law when there is one.
    pub fn section(&self, law: &str, designation: &str) -> Result<SectionText> {
        let text = self.text(law)?;
        let law = &text.law;
        match law.find_section(designation) {
            Some(i) => {
                let mut section = results::section_text(law, i);
                section.definitions = results::definitions_used(law, &text.definitions, i);
                if self.manifest.laws.len() > 1 {
                    let shards = self.cited_across();
                    section.cited_by_other_laws = shard_for(shards, |s| &s.from, &law.abbreviation)
                        .map(|s| s.citing(&law.abbreviation, &law.sections[i].designation))
                        .unwrap_or_default();
                }
                Ok(section)
            }
            None => refuse!(
                "{} has no section {}; write it as cited, e.g. `{}`",
                law.abbreviation,
                names::echo(designation),
                law.active_sections()
                    .nth(1)
                    .or(law.active_sections().next())
                    .map_or("§ 1", |(_, s)| s.designation.as_str())
            ),
        }
    }

    /// Which sections of the folder's other laws cite each section: the folder's cited-by shards, read once; in a
    /// folder without usable ones (indexed before they existed, or damaged: said on stderr) worked out from every
    /// law of the folder (a law that cannot be read is named and left out).
    fn cited_across(&self) -> &[CitedByFile] {
        self.cited_across.get_or_init(|| {
            let t0 = Instant::now();
            let listed = self.manifest.federal.as_ref().map_or(&[][..], |f| &f.cited_by[..]);
            if listed.is_empty() {
                eprintln!(
                    "note: the folder's index across laws has no cited-by files (indexed before they existed; `paragraf federal --bundles {}` writes them): reading the folder's laws instead",
                    self.dir.display()
                );
            } else {
                match listed.iter().map(|entry| self.read_cited_by(entry)).collect::<Result<Vec<_>>>() {
                    Ok(shards) => {
                        eprintln!(
                            "loaded {} cited-by shard{} ({} sections cited by other laws) in {:.0} ms",
                            shards.len(),
                            if shards.len() == 1 { "" } else { "s" },
                            shards.iter().map(CitedByFile::len).sum::<usize>(),
                            ms(t0)
                        );
                        return shards;
                    }
                    Err(e) => eprintln!("warning: {e:#}; reading the folder's laws instead"),
                }
            }
            let entries = &self.manifest.laws;
            eprintln!(
                "reading the folder's {} laws for their citations of each other …",
                entries.len()
            );
            let laws: Vec<paragraf_law::Law> = entries
                .iter()
                .filter_map(|entry| {
                    paragraf_bundler::manifest::read_law(&self.dir, entry)
                        .inspect_err(|e| {
                            eprintln!("warning: {e}; its citations of other laws are left out")
                        })
                        .ok()
                })
                .collect();
            let shards = cited_by_shards(
                paragraf_bundler::manifest::GENERATOR,
                &laws.iter().collect::<Vec<_>>(),
                usize::MAX,
            );
            eprintln!(
                "{} sections cited by other laws, in {:.1} s",
                shards.iter().map(CitedByFile::len).sum::<usize>(),
                t0.elapsed().as_secs_f64()
            );
            shards
        })
    }

    /// A cited-by shard of the folder, verified against the manifest and decoded.
    fn read_cited_by(&self, entry: &CitedByEntry) -> Result<CitedByFile> {
        let file = &entry.file;
        let bytes = paragraf_bundler::manifest::read_listed(
            &self.dir,
            &file.file,
            file.bytes,
            &file.sha256,
        )?;
        CitedByFile::from_bytes(&bytes, &entry.from)
            .with_context(|| self.dir.join(&file.file).display().to_string())
    }

    /// What a citation string names (`§ 433 Abs. 1 S. 2 BGB`): the law after the provision, or the folder's
    /// only law.
    pub fn resolve(&self, citation: &str) -> Result<ResolvedCitation> {
        let request = paragraf_core::cite::parse(citation).map_err(|e| Refusal(e.to_string()))?;
        let law = match (&request.law, self.manifest.laws.as_slice()) {
            (Some(law), _) => law.clone(),
            (None, [only]) => only.law.clone(),
            (None, _) => refuse!(
                "{} names no law: add its abbreviation after the provision, e.g. `{} BGB` ({} laws here: {})",
                names::echo(citation),
                names::echo(citation.trim()),
                self.manifest.laws.len(),
                names::listed(self.manifest.laws.iter().map(|l| l.law.as_str()), 20)
            ),
        };
        let text = self.text(&law)?;
        let provisions = paragraf_core::cite::resolve(&text.law, &request)
            .map_err(|e| Refusal(e.to_string()))?;
        Ok(ResolvedCitation {
            schema: results::CITATION_SCHEMA.to_string(),
            query: citation.to_string(),
            provisions,
        })
    }

    /// The law's structure with its sections.
    pub fn contents(&self, law: &str) -> Result<TableOfContents> {
        Ok(results::table_of_contents(&self.text(law)?.law))
    }

    /// The law's text and definitions, read once (from the loaded index's law when there is one).
    fn text(&self, law: &str) -> Result<Arc<LawText>> {
        let entry = self.law_entry(law)?;
        if let Some(text) = self.texts.lock().expect("text cache").get(&entry.law) {
            return Ok(text.clone());
        }
        let loaded = self
            .laws
            .lock()
            .expect("law cache")
            .get(&entry.law)
            .map(|l| l.index.law.clone());
        let law = match loaded {
            Some(law) => law,
            None => self.read_law(&entry.law)?,
        };
        let definitions = paragraf_law::definitions::LawDefinitions::new(&law);
        let text = Arc::new(LawText { law, definitions });
        self.texts
            .lock()
            .expect("text cache")
            .insert(entry.law.clone(), text.clone());
        Ok(text)
    }

    /// Every law with its strategies.
    pub fn summaries(&self) -> Vec<LawSummary> {
        self.manifest
            .laws
            .iter()
            .map(|l| LawSummary {
                law: l.law.clone(),
                title: l.title.clone(),
                build_date: l.build_date.clone(),
                sections: l.sections,
                strategies: self
                    .manifest
                    .bundles_of(&l.law)
                    .map(|b| b.strategy.clone())
                    .collect(),
                url: results::law_url(&l.slug),
            })
            .collect()
    }
}

/// The folder's learned file for `law`, verified against the manifest and matched against the law; `None` when
/// the folder has none for it. Names what could not be matched on stderr.
pub fn read_learned(
    dir: &Path,
    manifest: &Manifest,
    law: &paragraf_law::Law,
) -> Result<Option<paragraf_engine::learning::Learning>> {
    let Some(entry) = manifest
        .learned
        .as_ref()
        .filter(|l| l.law == law.abbreviation)
    else {
        return Ok(None);
    };
    let bytes = paragraf_bundler::manifest::read_listed(
        dir,
        &entry.file.file,
        entry.file.bytes,
        &entry.file.sha256,
    )?;
    let file = paragraf_engine::learning::LearnedFile::from_bytes(&bytes)
        .with_context(|| dir.join(&entry.file.file).display().to_string())?;
    let (learning, warnings) = file.resolve(law)?;
    if let Some(build) = warnings.other_build {
        eprintln!("warning: {build}");
    }
    if !warnings.missing_sections.is_empty() {
        eprintln!(
            "warning: {} sections the learned file names are not in {}: their votes are dropped ({})",
            warnings.missing_sections.len(),
            law.abbreviation,
            warnings.missing_sections.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(Some(learning))
}
