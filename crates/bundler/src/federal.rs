//! `paragraf federal`: the index across all laws of a bundle folder, as the browser fetches it
//! ([`paragraf_core::federal::files`]): one head file, posting shards and the section vectors, content-hashed and
//! listed in the manifest, the law finder's topics of every law ([`TopicsFile`]) and which sections of other laws
//! cite each section (shards of [`CitedByFile`]). `paragraf build --laws`
//! writes it after its laws; rewriting it for an unchanged folder writes the same names. Files of the index it
//! replaces are deleted after the manifest no longer lists them.

use std::path::Path;
use std::time::Instant;

use paragraf_core::federal::cited::{self, cited_by_shards, CitedByFile};
use paragraf_core::federal::files::FederalHead;
use paragraf_core::federal::routing::law_signals;
use paragraf_core::federal::{FederalLaw, SECTION_STRATEGY};
use paragraf_core::finder::TopicsFile;
use paragraf_core::manifest::{CitedByEntry, FederalEntry, FileEntry, VectorsEntry};
use paragraf_engine::bundle::StrategyBundle;
use paragraf_format::digest::sha256_hex;
use paragraf_format::fault::{Blame, Fault};
use paragraf_law::Law;

use crate::builder::files::{remove_superseded, write_hashed};
use crate::builder::BuildError;
use crate::manifest;

/// What [`write()`] produced.
#[derive(Debug)]
pub struct FederalSummary {
    /// The manifest's entry for it.
    pub entry: FederalEntry,
    /// Vocabulary size.
    pub terms: usize,
    /// Sections cited by another law.
    pub cited_sections: usize,
    /// Bytes of the head's parts ([`FederalHead::part_bytes`]).
    pub parts: [(&'static str, usize); 4],
    /// Seconds to read the laws.
    pub seconds_reading: f64,
    /// Seconds to index them and write the files.
    pub seconds_indexing: f64,
}

/// Why the index could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FederalError {
    /// The manifest lists laws whose files are missing or damaged: every one, by name.
    #[error("{}", unreadable.iter().map(|(law, e)| format!("{law}: {e}")).collect::<Vec<_>>().join("; "))]
    Laws {
        /// Each law's abbreviation and what is wrong with its files.
        unreadable: Vec<(String, manifest::FolderError)>,
    },
    /// The folder holds no laws.
    #[error("{0} lists no laws: build some first (`paragraf build --laws ...`)")]
    Empty(String),
    /// The laws' bundles do not make one index (two models, a foreign bundle).
    #[error(transparent)]
    Engine(#[from] paragraf_engine::EngineError),
    /// Reading the manifest or writing files failed.
    #[error(transparent)]
    Build(#[from] BuildError),
}

impl Blame for FederalError {
    /// The folder's contents are at fault as [`manifest::FolderError`]'s are.
    fn fault(&self) -> Fault {
        match self {
            FederalError::Laws { unreadable }
                if unreadable.iter().all(|(_, e)| e.fault() == Fault::Input) =>
            {
                Fault::Input
            }
            FederalError::Laws { .. } => Fault::Other,
            FederalError::Empty(_) | FederalError::Engine(_) => Fault::Input,
            FederalError::Build(BuildError::Manifest(e)) => e.fault(),
            FederalError::Build(_) => Fault::Other,
        }
    }
}

impl From<manifest::FolderError> for FederalError {
    fn from(e: manifest::FolderError) -> Self {
        FederalError::Build(BuildError::Manifest(e))
    }
}

/// Reads every law of `dir` (with its `section` bundle when there is one), writes the index files (posting shards
/// of about `shard_bytes`, see [`paragraf_core::federal::files::SHARD_BYTES`]) and records them in the manifest.
/// `progress(done, total)` is called as laws are read.
pub fn write(
    dir: &Path,
    shard_bytes: usize,
    mut progress: impl FnMut(usize, usize),
) -> Result<FederalSummary, FederalError> {
    let started = Instant::now();
    let mut listed = manifest::load_or_new(dir)?;
    if listed.laws.is_empty() {
        return Err(FederalError::Empty(dir.display().to_string()));
    }
    let total = listed.laws.len();
    let mut laws: Vec<(Law, Option<StrategyBundle>)> = Vec::with_capacity(total);
    let mut unreadable = Vec::new();
    for (done, entry) in listed.laws.iter().enumerate() {
        let read = manifest::read_law(dir, entry).and_then(|law| {
            let sections = listed
                .bundles_of(&entry.law)
                .find(|b| b.strategy == SECTION_STRATEGY)
                .map(|b| manifest::read_strategy(dir, b))
                .transpose()?;
            Ok((law, sections))
        });
        match read {
            Ok(law) => laws.push(law),
            Err(e) => unreadable.push((entry.law.clone(), e)),
        }
        progress(done + 1, total);
    }
    if !unreadable.is_empty() {
        return Err(FederalError::Laws { unreadable });
    }
    let seconds_reading = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let parts: Vec<FederalLaw> = laws
        .iter()
        .map(|(law, sections)| FederalLaw {
            law,
            sections: sections.as_ref(),
        })
        .collect();
    let built = FederalHead::build(&parts, shard_bytes)?;
    drop(parts);
    let topics = TopicsFile::of(manifest::GENERATOR, laws.iter().map(|(law, _)| law));
    let law_refs: Vec<&Law> = laws.iter().map(|(law, _)| law).collect();
    let cited_by = cited_by_shards(manifest::GENERATOR, &law_refs, cited::SHARD_BYTES);
    // What the browser's law routing knows of each law beside its name and size (`Router::of_catalogue`).
    let refers = law_signals(&law_refs).refers;
    let abbreviations: Vec<String> = listed.laws.iter().map(|e| e.law.clone()).collect();
    for (entry, refers) in listed.laws.iter_mut().zip(refers) {
        entry.refers = refers
            .iter()
            .map(|&l| abbreviations[l as usize].clone())
            .collect();
    }
    drop(law_refs);
    drop(laws);
    let written = |stem: &str, bytes: Vec<u8>| -> Result<FileEntry, BuildError> {
        let file = write_hashed(dir, stem, &bytes)?;
        Ok(FileEntry {
            file,
            bytes: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
        })
    };
    let shard_entries = built
        .shards
        .iter()
        .enumerate()
        .map(|(n, shard)| {
            written(
                &format!("federal-postings-{n}"),
                FederalHead::shard_to_bytes(n as u32, shard),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let vectors = built
        .vectors
        .as_ref()
        .map(|v| {
            Ok::<_, BuildError>(VectorsEntry {
                model: v.model().to_string(),
                file: written("federal-vectors", v.to_bytes())?,
            })
        })
        .transpose()?;
    let head = &built.head;
    let entry = FederalEntry {
        head: written("federal", head.to_bytes())?,
        shards: shard_entries,
        laws: head.laws().len(),
        sections: head.len(),
        vectors,
        topics: Some(written("topics", topics.to_bytes())?),
        cited_by: cited_by
            .iter()
            .enumerate()
            .map(|(n, shard)| {
                Ok(CitedByEntry {
                    from: shard.from.clone(),
                    file: written(&format!("cited-by-{n}"), shard.to_bytes())?,
                })
            })
            .collect::<Result<Vec<_>, BuildError>>()?,
    };
    let old = listed.federal.replace(entry.clone());
    manifest::save(&mut listed, dir)?;
    let current: std::collections::HashSet<&str> = listed.files().collect();
    for file in old.iter().flat_map(FederalEntry::files) {
        if !current.contains(file.file.as_str()) {
            remove_superseded(dir, Some(file.file.clone()), "");
        }
    }
    Ok(FederalSummary {
        entry,
        terms: head.terms(),
        cited_sections: cited_by.iter().map(CitedByFile::len).sum(),
        parts: head.part_bytes(),
        seconds_reading,
        seconds_indexing: started.elapsed().as_secs_f64(),
    })
}
