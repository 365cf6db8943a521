//! `paragraf eval --among`: what other laws cost. The questions' law (the BGB for GerLayQA) is searched alone and
//! among every law of a bundle folder or the federal archive, with the same index and protocol both times
//! ([`FederalIndex`]), so the difference is the distractors alone: Recall@10 per mode with its bootstrap
//! interval, a paired permutation test alone vs among, and which laws the top hits come from.

use anyhow::{Context, Result};
use paragraf_core::bundle::StrategyBundle;
use paragraf_core::engine::{Mode, SearchOptions};
use paragraf_core::eval::gold::Gold;
use paragraf_core::eval::metrics::recall_at;
use paragraf_core::eval::stats::{bootstrap_ci, paired_permutation_test};
use paragraf_core::eval::Question;
use paragraf_core::federal::files::{FederalHead, SHARD_BYTES};
use paragraf_core::federal::{FederalHit, FederalIndex, FederalLaw, SECTION_STRATEGY};
use paragraf_core::manifest::MANIFEST;
use paragraf_core::Law;
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

/// The laws of `source` with their `section` bundles: a bundle folder (with vectors where built), or the
/// federal archive or a folder of XML (lexical only).
fn load(source: &Path) -> Result<Vec<(Law, Option<StrategyBundle>)>> {
    let started = Instant::now();
    let laws = if source.join(MANIFEST).is_file() {
        let manifest = paragraf_bundler::manifest::load_or_new(source)?;
        manifest
            .laws
            .iter()
            .map(|entry| {
                let law = paragraf_bundler::manifest::read_law(source, entry)?;
                let bundle = manifest
                    .bundles_of(&entry.law)
                    .find(|b| b.strategy == SECTION_STRATEGY)
                    .map(|b| paragraf_bundler::manifest::read_strategy(source, b))
                    .transpose()?;
                Ok((law, bundle))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        let mut laws = Vec::new();
        let mut failed = Vec::new();
        paragraf_corpus::for_each_law(source, |entry| {
            match entry.result {
                Ok(law) => laws.push((law, None)),
                Err(e) => failed.push(e.to_string()),
            }
            std::ops::ControlFlow::Continue(())
        })?;
        for failure in failed {
            eprintln!("skipped: {failure}");
        }
        laws
    };
    eprintln!(
        "loaded {} laws from {} in {:.1} s",
        laws.len(),
        source.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(laws)
}

/// One search of a question (text, vector) over one index.
type SearchFn<'a> = dyn Fn(&str, Option<&[f32]>) -> Result<Vec<FederalHit>> + 'a;

fn parts(laws: &[(Law, Option<StrategyBundle>)]) -> Vec<FederalLaw<'_>> {
    laws.iter()
        .map(|(law, bundle)| FederalLaw {
            law,
            sections: bundle.as_ref(),
        })
        .collect()
}

/// Runs the comparison for the questions of `law` (its abbreviation) and prints it as Markdown.
#[allow(clippy::too_many_arguments)]
pub fn run(
    source: &Path,
    law: &str,
    questions: &[Question],
    texts: &[String],
    modes: &[Mode],
    embed: &dyn Fn(&str) -> Result<Vec<Vec<f32>>>,
    rounds: usize,
    seed: u64,
) -> Result<String> {
    let laws = load(source)?;
    let Some(own) = laws.iter().position(|(l, _)| l.abbreviation == law) else {
        anyhow::bail!(
            "{} holds no law {law}: the questions' law must be among the laws searched",
            source.display()
        );
    };
    let gold = Gold::map(&laws[own].0, questions);
    let t0 = Instant::now();
    let among = FederalIndex::new(&parts(&laws))?;
    eprintln!(
        "indexed {} sections of {} laws as one in {:.1} s",
        among.len(),
        laws.len(),
        t0.elapsed().as_secs_f64()
    );
    let alone = FederalIndex::new(&parts(&laws[own..=own]))?;
    // What the browser searches: the same sections, product-quantized vectors, postings in shards.
    let browser_files = FederalHead::build(&parts(&laws), SHARD_BYTES)?;
    let vectors = match (modes.iter().any(|m| *m != Mode::Bm25), among.model()) {
        (true, Some(model)) => Some(embed(model)?),
        (true, None) => anyhow::bail!(
            "{} has no {SECTION_STRATEGY} bundles: dense and hybrid need them (`paragraf build --laws all`); pass --modes bm25 to measure BM25 alone",
            source.display()
        ),
        (false, _) => None,
    };
    let mut out = format!(
        "# {law} alone vs among {} laws ({} sections)\n\n{} questions; Recall@10 [95 % bootstrap CI]; p: paired permutation test alone vs among ({rounds} rounds, seed {seed}). \"Browser layout\": among all, as the app searches them (product-quantized vectors, sharded postings); p against among all.\n\n| mode | {law} alone | among all | Δ | p | browser layout | p | top hit from {law} (alone → among) | laws of the other top hits |\n|---|---|---|---|---|---|---|---|---|\n",
        laws.len(),
        among.len(),
        questions.len(),
    );
    for &mode in modes {
        let options = SearchOptions {
            mode,
            citations_first: false,
            ..SearchOptions::default()
        };
        let recall = |search: &SearchFn, own_law: u32| -> Result<(Vec<f64>, Vec<u32>)> {
            let mut recalls = Vec::new();
            let mut top_laws = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let vector = vectors.as_ref().map(|v| v[i].as_slice());
                let hits = search(text, vector)?;
                let ranking: Vec<(u32, u32)> = hits.iter().map(|h| (h.law, h.section)).collect();
                let gold: Vec<(u32, u32)> =
                    gold.sections[i].iter().map(|&s| (own_law, s)).collect();
                if let Some(r) = recall_at(&ranking, &gold, 10) {
                    recalls.push(r);
                    top_laws.push(hits.first().map_or(u32::MAX, |h| h.law));
                }
            }
            Ok((recalls, top_laws))
        };
        let alone_search = |text: &str, vector: Option<&[f32]>| -> Result<Vec<FederalHit>> {
            Ok(alone.search(text, vector, &options)?.0)
        };
        let among_search = |text: &str, vector: Option<&[f32]>| -> Result<Vec<FederalHit>> {
            Ok(among.search(text, vector, &options)?.0)
        };
        let (alone_r, alone_top) = recall(&alone_search, 0)?;
        let (among_r, among_top) = recall(&among_search, own as u32)?;
        let browser = |text: &str, vector: Option<&[f32]>| -> Result<Vec<FederalHit>> {
            let head = &browser_files.head;
            let coded = browser_files.vectors.as_ref().zip(vector);
            Ok(head
                .search(
                    &head.query_terms(text),
                    coded,
                    &options,
                    |n| browser_files.shards.get(n as usize),
                    |_| true,
                )?
                .0)
        };
        let (browser_r, _) = recall(&browser, own as u32)?;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let ci = |v: &[f64]| bootstrap_ci(v, 0.95, rounds, seed).context("bootstrap");
        let ((a_lo, a_hi), (b_lo, b_hi)) = (ci(&alone_r)?, ci(&among_r)?);
        let p = paired_permutation_test(&alone_r, &among_r, rounds, seed)?.p_value;
        let p_browser = paired_permutation_test(&among_r, &browser_r, rounds, seed)?.p_value;
        let share = |top: &[u32], own_law: u32| {
            top.iter().filter(|&&l| l == own_law).count() as f64 / top.len().max(1) as f64
        };
        let mut others: HashMap<u32, usize> = HashMap::new();
        for &l in among_top
            .iter()
            .filter(|&&l| l != own as u32 && l != u32::MAX)
        {
            *others.entry(l).or_default() += 1;
        }
        let mut others: Vec<(u32, usize)> = others.into_iter().collect();
        others.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = others
            .iter()
            .take(5)
            .map(|(l, n)| format!("{} {n}", laws[*l as usize].0.abbreviation))
            .collect();
        out.push_str(&format!(
            "| {mode} | {:.4} [{a_lo:.4}, {a_hi:.4}] | {:.4} [{b_lo:.4}, {b_hi:.4}] | {:+.4} | {p:.4} | {:.4} | {p_browser:.4} | {:.1} % → {:.1} % | {} |\n",
            mean(&alone_r),
            mean(&among_r),
            mean(&among_r) - mean(&alone_r),
            mean(&browser_r),
            100.0 * share(&alone_top, 0),
            100.0 * share(&among_top, own as u32),
            named.join(", ")
        ));
    }
    Ok(out)
}
