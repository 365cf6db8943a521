//! The build pipeline behind `paragraf build`: one law, or many from the federal archive or a folder of XML,
//! incrementally and resumably, then the files that depend on every law of the folder.
//!
//! Why here and not in the binary: what a build decides is the build's, whichever front end starts it. Leftovers
//! of a killed build are removed first; a law whose XML hash, strategies and model are unchanged is skipped; two
//! laws must not share a file name; a law that does not parse or has no text is reported and skipped while the
//! others build; the manifest is saved at least every 30 s so that a kill loses little (the embedding cache
//! keeps the rest); after the laws come the browser's query encoder and the index across laws (when a law
//! changed); last, bundles a killed build wrote but never listed are deleted. Progress arrives as [`Event`]s and
//! the outcome as [`Finished`]; rendering both is the caller's.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use paragraf_core::manifest::{EncoderEntry, Manifest, MANIFEST};
use paragraf_e5::model::E5Weights;
use paragraf_engine::expansion::thesaurus::Thesaurus;
use paragraf_format::names::{check_law_abbreviation, file_stem};
use paragraf_format::strategy::Strategy;
use paragraf_law::Law;

use crate::builder::{build, BuildError, BuildReport, BundleFolder, Embedder};
use crate::federal::{FederalError, FederalSummary};
use crate::generate::Generator;
use crate::manifest::FolderError;
use paragraf_format::fault::{Blame, Fault};

/// How often a many-law build saves the manifest at most: a kill loses at most that much work.
pub const SAVE_EVERY: Duration = Duration::from_secs(30);

/// Which laws a build wants.
pub enum Laws<'a> {
    /// One law, parsed by the caller.
    One(Law),
    /// Many laws of one source (the federal archive or a folder of XML).
    Many {
        /// The archive or folder.
        source: &'a Path,
        /// Which of its laws.
        wanted: LawList,
        /// Build unchanged laws again.
        rebuild: bool,
    },
}

/// Which laws of a source a many-law build wants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LawList {
    /// Every law of the source.
    All,
    /// These abbreviations, each once, in the order given.
    Named(Vec<String>),
}

impl LawList {
    /// Whether `law` is wanted.
    pub fn wants(&self, law: &str) -> bool {
        match self {
            LawList::All => true,
            LawList::Named(names) => names.iter().any(|n| n == law),
        }
    }
}

/// What a build is asked to do besides its laws.
pub struct Plan<'a> {
    /// The laws.
    pub laws: Laws<'a>,
    /// The strategies to build for each law (none: law bundles only).
    pub strategies: &'a [Strategy],
    /// The id of the model the embedder runs (an unchanged law was built with the same).
    pub model: String,
    /// The thesaurus the browser's query encoder keeps the words of, when there is one.
    pub thesaurus: Option<&'a Thesaurus>,
    /// The e5 weights for the browser's query encoder, read only when the folder's bundles are e5's.
    pub e5_weights: Box<dyn FnOnce() -> Result<E5Weights, paragraf_embed::EmbedError> + 'a>,
    /// The posting-shard size of the index across laws (`paragraf_core::federal::files::SHARD_BYTES`).
    pub shard_bytes: usize,
    /// When the build started (before anything was loaded): unlisted bundles older than this are a killed
    /// build's orphans; newer ones may belong to a build running alongside.
    pub started: SystemTime,
}

/// What a build reports while it runs.
pub enum Event<'a> {
    /// A temporary file of an earlier, killed build was removed.
    LeftoverRemoved(&'a str),
    /// One law was built (its strategies' figures).
    LawBuilt(&'a BuildReport),
    /// A many-law build starts: the laws it will look at (the named ones, or every law of the source after a
    /// first pass of about 10 s over the whole archive).
    LawsCounted(u64),
    /// A many-law build took up one more law (`looked_at` counts it), and again when it is done; the tally so
    /// far.
    LawsProgress(&'a Tally),
    /// A many-law build is through its laws (before the manifest is saved and the files that depend on every
    /// law are written): the tally, and the laws named but not in the source.
    LawsDone {
        /// How the laws went.
        tally: &'a Tally,
        /// Laws named but not in the source, each with similar names.
        missing: &'a [String],
    },
    /// The index across laws is being written: `done` of `total` laws read.
    FederalReading {
        /// Laws read.
        done: usize,
        /// Laws to read.
        total: usize,
    },
    /// A bundle a killed build wrote but never listed was deleted.
    OrphanRemoved(&'a str),
}

/// How the laws of a build went.
#[derive(Default)]
pub struct Tally {
    /// Laws built.
    pub built: usize,
    /// Laws left as they were (unchanged).
    pub unchanged: usize,
    /// `path: why`, for laws reported and skipped.
    pub skipped: Vec<String>,
    /// Laws looked at so far.
    pub looked_at: u64,
    /// Embedding figures summed over the laws built, and the time of the whole build.
    pub report: BuildReport,
}

/// What a build did.
pub struct Finished {
    /// How the laws went.
    pub tally: Tally,
    /// Laws named but not in the source, each with up to three similar names (`StVO (did you mean StVO 2013?)`).
    pub missing: Vec<String>,
    /// The browser's query encoder written, when the folder's bundles are e5's.
    pub encoder: Option<EncoderEntry>,
    /// The index across laws, when a many-law build changed a law.
    pub federal: Option<FederalSummary>,
}

/// Why a build stopped (large, but made once per build, so unboxed). Whose fault it is comes from the cause
/// ([`Blame`]: the transparent variants hide theirs from the error chain, so they answer for it).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The source of many laws could not be read at all.
    #[error(transparent)]
    Source(#[from] paragraf_corpus::SourceError),
    /// Building the one law failed.
    #[error("building {law} into {}", out.display())]
    One {
        /// Its abbreviation.
        law: String,
        /// The bundle folder.
        out: PathBuf,
        /// What failed.
        #[source]
        source: BuildError,
    },
    /// Building one of many laws failed in a way the others would fail too (disk full, the encoder failed).
    #[error("building {law} ({path})")]
    Law {
        /// Its abbreviation.
        law: String,
        /// Where it was read.
        path: String,
        /// What failed.
        #[source]
        source: BuildError,
    },
    /// Writing a file or the manifest failed.
    #[error(transparent)]
    Build(BuildError),
    /// The browser's query encoder could not be written.
    #[error("writing the browser's query encoder into {}", out.display())]
    Encoder {
        /// The bundle folder.
        out: PathBuf,
        /// What failed.
        #[source]
        source: BuildError,
    },
    /// The index across laws could not be written.
    #[error("writing the index across the laws of {dir}")]
    Federal {
        /// The folder.
        dir: PathBuf,
        /// What failed.
        #[source]
        source: FederalError,
    },
    /// The folder's manifest could not be read.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// A killed build's orphans could not be found or removed.
    #[error(transparent)]
    Orphans(#[from] OrphanError),
}

impl Blame for PipelineError {
    fn fault(&self) -> Fault {
        match self {
            PipelineError::Build(e) => e.fault(),
            PipelineError::Folder(e) => e.fault(),
            // The others name their cause as the next error of the chain, which says whose fault it is.
            PipelineError::Source(_)
            | PipelineError::One { .. }
            | PipelineError::Law { .. }
            | PipelineError::Encoder { .. }
            | PipelineError::Federal { .. }
            | PipelineError::Orphans(_) => Fault::Other,
        }
    }
}

/// Why a killed build's orphans could not be found or removed.
#[derive(Debug, thiserror::Error)]
pub enum OrphanError {
    /// The manifest could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The manifest.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// The manifest is not one.
    #[error("{path}")]
    Invalid {
        /// The manifest.
        path: String,
        /// What is wrong with it.
        source: paragraf_core::manifest::ManifestError,
    },
    /// The folder could not be listed.
    #[error("cannot list {path}")]
    List {
        /// The folder.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// An orphan could not be removed.
    #[error("cannot remove the orphan bundle {path}")]
    Remove {
        /// The bundle.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
}

impl From<BuildError> for PipelineError {
    fn from(e: BuildError) -> Self {
        PipelineError::Build(e)
    }
}

/// Runs `plan` into `folder` with `embedder` (its per-strategy progress left on for one law, quiet for many): removes a killed build's leftovers, builds the laws, saves the manifest (also
/// when a law stopped the build: what was built stays listed), writes the browser's query encoder and, after a
/// many-law build that changed a law, the index across laws, and removes orphaned bundles.
#[allow(clippy::result_large_err)] // see PipelineError
pub fn run(
    plan: Plan<'_>,
    embedder: Embedder,
    generator: &mut Generator,
    folder: &mut BundleFolder,
    mut on: impl FnMut(Event<'_>),
) -> Result<Finished, PipelineError> {
    let out = folder.out().to_path_buf();
    for name in paragraf_fs::remove_leftovers(&out).map_err(BuildError::Fs)? {
        on(Event::LeftoverRemoved(&name));
    }
    let many = matches!(plan.laws, Laws::Many { .. });
    let laws = match plan.laws {
        Laws::One(law) => {
            let mut embedder = embedder;
            build_one(
                &law,
                plan.strategies,
                &mut embedder,
                generator,
                folder,
                &mut on,
            )
        }
        Laws::Many {
            source,
            wanted,
            rebuild,
        } => {
            let mut embedder = embedder.quiet();
            let many = Many {
                source,
                wanted: &wanted,
                rebuild,
                strategies: plan.strategies,
                model: &plan.model,
            };
            many.build(&mut embedder, generator, folder, &mut on)
        }
    };
    if let Ok((tally, missing)) = &laws {
        if many {
            on(Event::LawsDone { tally, missing });
        }
    }
    folder.save()?;
    let (tally, missing) = laws?;
    let encoder =
        crate::browser_model::write(&out, plan.e5_weights, plan.thesaurus).map_err(|source| {
            PipelineError::Encoder {
                out: out.clone(),
                source,
            }
        })?;
    // A change to any law drops the index across laws from the manifest: written again then.
    let federal = if many && crate::manifest::load_or_new(&out)?.federal.is_none() {
        let summary = crate::federal::write(&out, plan.shard_bytes, |done, total| {
            on(Event::FederalReading { done, total })
        })
        .map_err(|source| PipelineError::Federal {
            dir: out.clone(),
            source,
        })?;
        Some(summary)
    } else {
        None
    };
    for name in remove_orphans(&out, plan.started)? {
        on(Event::OrphanRemoved(&name));
    }
    Ok(Finished {
        tally,
        missing,
        encoder,
        federal,
    })
}

#[allow(clippy::result_large_err)] // see PipelineError
fn build_one(
    law: &Law,
    strategies: &[Strategy],
    embedder: &mut Embedder,
    generator: &mut Generator,
    folder: &mut BundleFolder,
    on: &mut impl FnMut(Event<'_>),
) -> Result<(Tally, Vec<String>), PipelineError> {
    let report = build(law, None, strategies, embedder, generator, folder).map_err(|source| {
        PipelineError::One {
            law: law.abbreviation.clone(),
            out: folder.out().to_path_buf(),
            source,
        }
    })?;
    on(Event::LawBuilt(&report));
    let tally = Tally {
        built: 1,
        looked_at: 1,
        report,
        ..Tally::default()
    };
    Ok((tally, Vec::new()))
}

/// A build of many laws from one source.
struct Many<'a> {
    source: &'a Path,
    wanted: &'a LawList,
    rebuild: bool,
    strategies: &'a [Strategy],
    model: &'a str,
}

/// Why a law of a many-law build was not built.
enum Skip {
    /// This law only (reported, the others build).
    Law(String),
    /// The build cannot go on (disk full, the encoder failed).
    Fatal(BuildError),
}

impl Many<'_> {
    #[allow(clippy::result_large_err)] // see PipelineError
    fn build(
        &self,
        embedder: &mut Embedder,
        generator: &mut Generator,
        folder: &mut BundleFolder,
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(Tally, Vec<String>), PipelineError> {
        let started = Instant::now();
        let total = match self.wanted {
            LawList::Named(names) => names.len() as u64,
            LawList::All => {
                paragraf_corpus::for_each_law(self.source, |_| ControlFlow::Continue(()))? as u64
            }
        };
        on(Event::LawsCounted(total));
        folder.save_every = SAVE_EVERY;
        let mut tally = Tally::default();
        let mut stems: HashMap<String, String> = HashMap::new();
        let mut found: HashSet<String> = HashSet::new();
        let mut seen: Vec<String> = Vec::new();
        let mut failure = None;
        paragraf_corpus::for_each_law(self.source, |entry| {
            if let Ok(law) = &entry.result {
                seen.push(law.abbreviation.clone());
            }
            let law = match entry.result {
                Ok(law) if !self.wanted.wants(&law.abbreviation) => {
                    return ControlFlow::Continue(())
                }
                Ok(law) => law,
                Err(e) => {
                    tally.skipped.push(format!("{e}"));
                    tally.looked_at += 1;
                    on(Event::LawsProgress(&tally));
                    return ControlFlow::Continue(());
                }
            };
            tally.looked_at += 1;
            on(Event::LawsProgress(&tally));
            match self.one(
                &law,
                &entry.path,
                &entry.sha256,
                &mut stems,
                &mut found,
                embedder,
                generator,
                folder,
            ) {
                Ok(Some(report)) => {
                    tally.built += 1;
                    tally.report.tokens_embedded += report.tokens_embedded;
                    tally.report.seconds_embedding += report.seconds_embedding;
                }
                Ok(None) => tally.unchanged += 1,
                Err(Skip::Law(why)) => tally.skipped.push(why),
                Err(Skip::Fatal(source)) => {
                    failure = Some(PipelineError::Law {
                        law: law.abbreviation.clone(),
                        path: entry.path.clone(),
                        source,
                    });
                    return ControlFlow::Break(());
                }
            }
            on(Event::LawsProgress(&tally));
            // Every named law is in: the rest of the archive is not read (a few laws build in seconds, not
            // after a pass over all 6,877).
            match self.wanted {
                LawList::Named(names) if found.len() == names.len() => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        tally.report.seconds = started.elapsed().as_secs_f64();
        let missing = match self.wanted {
            LawList::All => Vec::new(),
            LawList::Named(names) => names
                .iter()
                .filter(|n| !found.contains(*n))
                .map(|n| match similar(n, &seen) {
                    Some(like) => format!("{n} (did you mean {like}?)"),
                    None => n.clone(),
                })
                .collect(),
        };
        Ok((tally, missing))
    }

    /// Builds one law; `Ok(None)` when it is unchanged.
    #[allow(clippy::too_many_arguments)]
    fn one(
        &self,
        law: &Law,
        path: &str,
        sha256: &str,
        stems: &mut HashMap<String, String>,
        found: &mut HashSet<String>,
        embedder: &mut Embedder,
        generator: &mut Generator,
        folder: &mut BundleFolder,
    ) -> Result<Option<BuildReport>, Skip> {
        let name = &law.abbreviation;
        check_law_abbreviation(name).map_err(|e| Skip::Law(format!("{path}: {e}")))?;
        // Two laws whose abbreviations map to one file name would overwrite each other's bundles.
        let stem = file_stem(name);
        if let Some(first) = stems.get(&stem) {
            return Err(Skip::Law(format!(
                "{path}: {name} has the file name {stem} of {first}, built before it"
            )));
        }
        stems.insert(stem, format!("{name} ({path})"));
        found.insert(name.clone());
        if law.active_sections().next().is_none() {
            return Err(Skip::Law(format!("{path}: {name} has no text to search")));
        }
        if !self.rebuild && folder.is_current(name, sha256, self.strategies, self.model) {
            return Ok(None);
        }
        let report = build(
            law,
            Some(sha256),
            self.strategies,
            embedder,
            generator,
            folder,
        )
        .map_err(Skip::Fatal)?;
        embedder.forget_texts();
        Ok(Some(report))
    }
}

/// Up to three abbreviations of `seen` that start with `name` or match it ignoring case and spaces (`StVO` ->
/// `StVO 2013`), for the message about a law that is not there.
fn similar(name: &str, seen: &[String]) -> Option<String> {
    let key = |s: &str| s.to_lowercase().replace(' ', "");
    let wanted = key(name);
    let mut like: Vec<&str> = seen
        .iter()
        .filter(|s| key(s).starts_with(&wanted))
        .map(String::as_str)
        .collect();
    // `StVO 2013` (the name plus a version) before `StVorV` (a longer word).
    like.sort_by_key(|s| (!s.starts_with(&format!("{name} ")), s.len()));
    like.dedup();
    like.truncate(3);
    (!like.is_empty()).then(|| like.join(", "))
}

/// Deletes the bundles (`*.pgb`) in `out` that its manifest does not list and that are older than `started`:
/// a build killed between writing a bundle and listing it leaves such a file, and nothing else would ever
/// remove it. Newer files may belong to a build running alongside and are kept. Returns the names removed.
pub fn remove_orphans(out: &Path, started: SystemTime) -> Result<Vec<String>, OrphanError> {
    let manifest_path = out.join(MANIFEST);
    let shown = |path: &Path| path.display().to_string();
    let bytes = paragraf_fs::read_regular(&manifest_path).map_err(|source| OrphanError::Read {
        path: shown(&manifest_path),
        source,
    })?;
    let manifest = Manifest::parse(&bytes).map_err(|source| OrphanError::Invalid {
        path: shown(&manifest_path),
        source,
    })?;
    let listed: HashSet<&str> = manifest.files().collect();
    let list = |source| OrphanError::List {
        path: shown(out),
        source,
    };
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(out).map_err(list)? {
        let entry = entry.map_err(list)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let older = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified < started);
        if name.ends_with(".pgb")
            && !name.starts_with('.')
            && !listed.contains(name.as_str())
            && older
        {
            std::fs::remove_file(entry.path()).map_err(|source| OrphanError::Remove {
                path: shown(&entry.path()),
                source,
            })?;
            removed.push(name);
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_law_is_named_with_similar_ones() {
        let seen = ["StVO 2013", "StVorV", "StVG", "BGB"].map(String::from);
        assert_eq!(similar("StVO", &seen).as_deref(), Some("StVO 2013, StVorV"));
        assert_eq!(similar("KSchG", &seen), None);
    }

    #[test]
    fn orphans_older_than_the_build_are_removed_and_listed_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = Manifest::default();
        manifest.bundles.clear();
        std::fs::write(dir.path().join(MANIFEST), manifest.to_json()).unwrap();
        std::fs::write(dir.path().join("BGB.section.0.pgb"), b"orphan").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"not a bundle").unwrap();
        let later = SystemTime::now() + Duration::from_secs(5);
        assert_eq!(
            remove_orphans(dir.path(), later).unwrap(),
            ["BGB.section.0.pgb"]
        );
        assert!(dir.path().join("notes.txt").exists());
        let missing = tempfile::tempdir().unwrap();
        assert_eq!(
            remove_orphans(missing.path(), later)
                .unwrap_err()
                .to_string(),
            format!("cannot read {}", missing.path().join(MANIFEST).display())
        );
    }
}
