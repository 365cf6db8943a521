//! The federal index as files the browser fetches: all laws searched as one without downloading all laws.
//!
//! [`FederalIndex`] holds everything in memory, which is right for the CLI but not for a page over a 50 Mbit/s
//! link: 100,000 sections of federal law are about 150 MB of float vectors and tens of MB of postings. The
//! browser's layout, chosen by measurement (README, "All federal law"):
//!
//! - **One head file** (`federal.<hash>.pgb`, magic `PGRF-FED`): the laws and, per section, its law and
//!   designation (enough to show a result before any law text is fetched); the BM25 dictionary (vocabulary with
//!   frequencies and document lengths: the query's lexicon for decompounding and the idf of every term); and
//!   every section vector **product-quantized** (one byte per 8 dimensions: 48 bytes per e5 section instead of
//!   384 as int8; see `QuantizedVectors`).
//! - **Posting shards** (`federal-postings-<n>.<hash>.pgb`, magic `PGRF-FPS`): the postings of contiguous term
//!   ranges, about [`SHARD_BYTES`] each. A question fetches only the shards of its own terms.
//! - The laws' texts stay in their law bundles, fetched when a result of that law is shown.
//!
//! Every part is checked against the others on load, so a file of another build fails before a search. Hits
//! carry the same law/section pairs as [`FederalIndex`]'s, and the fusion is the same function.

use serde::{Deserialize, Serialize};

use super::{rank, FederalHit, FederalIndex, FederalLaw};
use crate::bundle::{decode_framed, encode_framed, BundleError, VectorStore};
use crate::engine::{EngineError, Mode, SearchOptions};
use crate::search::bm25::{top_k, Bm25Dictionary, PostingShard};
use crate::search::{Hit, TopK};

/// Postcard sizes of differently typed parts.
mod erased {
    pub trait Sized {
        fn bytes(&self) -> usize;
    }
    impl<T: serde::Serialize> Sized for T {
        fn bytes(&self) -> usize {
            postcard::to_allocvec(self).map_or(0, |v| v.len())
        }
    }
}

/// Magic of the head file.
pub const HEAD_MAGIC: &[u8; 8] = b"PGRF-FED";
/// Magic of a posting shard.
pub const SHARD_MAGIC: &[u8; 8] = b"PGRF-FPS";
/// Postings per shard the build aims at: a question of ten terms fetches well under a megabyte.
pub const SHARD_BYTES: usize = 64 << 10;
/// Widest vectors a head may carry.
const MAX_DIM: u32 = 8192;

/// Why federal index files cannot be used. Shown to users as they are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FederalFileError {
    /// Framing: magic, version, length, checksum, decoding.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// The parts of the file do not fit together.
    #[error("the federal index is inconsistent: {0}. Rebuild it with `paragraf federal`")]
    Corrupt(String),
    /// A shard file holds another shard than the one it was fetched as.
    #[error("posting shard {found} arrived where shard {expected} was expected. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`")]
    WrongShard {
        /// The shard asked for.
        expected: u32,
        /// The shard the file holds.
        found: u32,
    },
    /// The search needs a shard that is not loaded.
    #[error("the search needs posting shard {0}, which is not loaded")]
    MissingShard(u32),
    /// Vectors of another dimension.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// One section in the head: where it is and what to show before its law's text arrives (the heading comes with
/// the text: headings would make the head a third larger).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeadDoc {
    /// Index into its law's [`crate::Law::sections`].
    pub section: u32,
    /// `§ 535`, `Art. 1`.
    pub designation: String,
}

/// Dimensions per sub-vector of the product quantizer: one byte codes eight dimensions.
const SUB_DIM: usize = 4;
/// Centroids per sub-space (one byte).
const CENTROIDS: usize = 256;
/// Vectors the quantizer is trained on (an even sample beyond this).
const TRAIN_ROWS: usize = 16_384;
/// Lloyd iterations per sub-space.
const TRAIN_ROUNDS: usize = 12;

/// The section vectors, product-quantized: each run of [`SUB_DIM`] dimensions is replaced by the nearest of
/// [`CENTROIDS`] centroids learnt for that run (k-means), one byte per run: 48 bytes per e5 section instead of 384
/// as int8. A question's score is the sum over runs of its dot product with the chosen centroid, read from a
/// 256-entry table per run. Sign bits (one per dimension, same size) were measured first and ranked far worse:
/// e5 vectors share a large common direction, and a sign keeps too little of what tells sections apart.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct QuantizedVectors {
    model: String,
    dim: u32,
    /// Centroids per sub-space (at most [`CENTROIDS`]; fewer when there are fewer vectors).
    centroids: u32,
    /// Sub-space `j`, centroid `c`: `codebook[(j * centroids + c) * SUB_DIM..][..SUB_DIM]` (the last sub-space
    /// padded with zeros when `dim` is not a multiple of [`SUB_DIM`]).
    codebook: Vec<f32>,
    /// The document each row belongs to.
    rows: Vec<u32>,
    /// One centroid number per sub-space and row.
    codes: Vec<u8>,
}

impl QuantizedVectors {
    fn subspaces(&self) -> usize {
        (self.dim as usize).div_ceil(SUB_DIM)
    }

    fn from_store(store: &VectorStore, rows: Vec<u32>, model: String) -> QuantizedVectors {
        let dim = match store {
            VectorStore::Int8(v) => v.dim(),
            VectorStore::F32 { dim, .. } => *dim as usize,
        };
        let subspaces = dim.div_ceil(SUB_DIM);
        // Every row padded to whole sub-spaces.
        let row = |r: usize| -> Vec<f32> {
            let mut v = match store {
                VectorStore::Int8(v) => v.dequantize_row(r),
                VectorStore::F32 { values, .. } => values[r * dim..(r + 1) * dim].to_vec(),
            };
            v.resize(subspaces * SUB_DIM, 0.0);
            v
        };
        let n = rows.len();
        let step = n.div_ceil(TRAIN_ROWS).max(1);
        let sample: Vec<Vec<f32>> = (0..n).step_by(step).map(row).collect();
        let k = CENTROIDS.min(sample.len()).max(1);
        let mut codebook = vec![0.0f32; subspaces * k * SUB_DIM];
        let mut rng = crate::rng::SplitMix64::new(0x5051_5f46_4544);
        for j in 0..subspaces {
            let part = |v: &[f32]| -> [f32; SUB_DIM] {
                v[j * SUB_DIM..(j + 1) * SUB_DIM]
                    .try_into()
                    .expect("SUB_DIM")
            };
            let points: Vec<[f32; SUB_DIM]> = sample.iter().map(|v| part(v)).collect();
            let centroids = kmeans(&points, k, &mut rng);
            for (c, centroid) in centroids.iter().enumerate() {
                codebook[(j * k + c) * SUB_DIM..][..SUB_DIM].copy_from_slice(centroid);
            }
        }
        let mut codes = Vec::with_capacity(n * subspaces);
        for r in 0..n {
            let v = row(r);
            for j in 0..subspaces {
                let x = &v[j * SUB_DIM..(j + 1) * SUB_DIM];
                let nearest = (0..k)
                    .min_by(|&a, &b| {
                        let d =
                            |c: usize| distance(x, &codebook[(j * k + c) * SUB_DIM..][..SUB_DIM]);
                        d(a).total_cmp(&d(b))
                    })
                    .expect("k >= 1");
                codes.push(nearest as u8);
            }
        }
        QuantizedVectors {
            model,
            dim: dim as u32,
            centroids: k as u32,
            codebook,
            rows,
            codes,
        }
    }

    /// The best `k` documents that `keep` allows, by the question's dot product with the coded vectors.
    fn top(&self, query: &[f32], k: usize, keep: &dyn Fn(u32) -> bool) -> Vec<Hit> {
        let (subspaces, centroids) = (self.subspaces(), self.centroids as usize);
        let mut padded = query.to_vec();
        padded.resize(subspaces * SUB_DIM, 0.0);
        let table: Vec<f32> = (0..subspaces * centroids)
            .map(|jc| {
                let j = jc / centroids;
                let q = &padded[j * SUB_DIM..(j + 1) * SUB_DIM];
                let c = &self.codebook[jc * SUB_DIM..][..SUB_DIM];
                q.iter().zip(c).map(|(a, b)| a * b).sum()
            })
            .collect();
        let mut top = TopK::new(k);
        for (row, codes) in self.codes.chunks(subspaces).enumerate() {
            let doc = self.rows[row];
            if !keep(doc) {
                continue;
            }
            let score = codes
                .iter()
                .enumerate()
                .map(|(j, &c)| table[j * centroids + c as usize])
                .sum();
            top.push(Hit { index: doc, score });
        }
        top.into_sorted()
    }
}

fn distance(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// `k` centroids of `points` by Lloyd's algorithm from `k` distinct seeded starting points; an emptied cluster
/// keeps its centroid.
fn kmeans(
    points: &[[f32; SUB_DIM]],
    k: usize,
    rng: &mut crate::rng::SplitMix64,
) -> Vec<[f32; SUB_DIM]> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut centroids: Vec<[f32; SUB_DIM]> = order.iter().take(k).map(|&i| points[i]).collect();
    let mut assigned = vec![0usize; points.len()];
    for _ in 0..TRAIN_ROUNDS {
        for (p, a) in points.iter().zip(assigned.iter_mut()) {
            *a = (0..k)
                .min_by(|&x, &y| distance(p, &centroids[x]).total_cmp(&distance(p, &centroids[y])))
                .expect("k >= 1");
        }
        let mut sums = vec![[0.0f64; SUB_DIM]; k];
        let mut counts = vec![0usize; k];
        for (p, &a) in points.iter().zip(&assigned) {
            counts[a] += 1;
            sums[a]
                .iter_mut()
                .zip(p)
                .for_each(|(s, x)| *s += f64::from(*x));
        }
        for c in 0..k {
            if counts[c] > 0 {
                for d in 0..SUB_DIM {
                    centroids[c][d] = (sums[c][d] / counts[c] as f64) as f32;
                }
            }
        }
    }
    centroids
}

/// A posting shard as stored: its number travels with it, so a file fetched under the wrong name is caught.
#[derive(Serialize, Deserialize)]
struct ShardFile {
    index: u32,
    shard: PostingShard,
}

/// The head file: see the module docs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FederalHead {
    /// Laws (abbreviations) in index order.
    laws: Vec<String>,
    /// First document of each law, and the number of documents at the end.
    law_starts: Vec<u32>,
    docs: Vec<HeadDoc>,
    dictionary: Bm25Dictionary,
    /// First term of each posting shard.
    shard_starts: Vec<u32>,
    vectors: Option<QuantizedVectors>,
}

impl FederalHead {
    /// The head and its posting shards for `laws` (see [`FederalIndex::new`] for what is refused), shards of
    /// about `shard_bytes` postings.
    pub fn build(
        laws: &[FederalLaw],
        shard_bytes: usize,
    ) -> Result<(FederalHead, Vec<PostingShard>), EngineError> {
        let FederalIndex {
            docs,
            bm25,
            vectors,
        } = FederalIndex::new(laws)?;
        let mut law_starts = Vec::with_capacity(laws.len() + 1);
        for l in 0..laws.len() as u32 {
            law_starts.push(docs.partition_point(|&(law, _)| law < l) as u32);
        }
        law_starts.push(docs.len() as u32);
        let heads = docs
            .iter()
            .map(|&(l, s)| {
                let section = &laws[l as usize].law.sections[s as usize];
                HeadDoc {
                    section: s,
                    designation: section.designation.clone(),
                }
            })
            .collect();
        let (dictionary, shards) = bm25.into_shards(shard_bytes);
        let head = FederalHead {
            laws: laws.iter().map(|l| l.law.abbreviation.clone()).collect(),
            law_starts,
            docs: heads,
            dictionary,
            shard_starts: shards.iter().map(|s| s.first_term).collect(),
            vectors: vectors
                .map(|(store, rows, model)| QuantizedVectors::from_store(&store, rows, model)),
        };
        Ok((head, shards))
    }

    /// The head as a file.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode_framed(HEAD_MAGIC, self)
    }

    /// Reads a head file and checks that its parts fit together.
    pub fn from_bytes(bytes: &[u8]) -> Result<FederalHead, FederalFileError> {
        let head: FederalHead = decode_framed(HEAD_MAGIC, "federal index", bytes)?;
        head.check()?;
        Ok(head)
    }

    fn check(&self) -> Result<(), FederalFileError> {
        let corrupt = |what: &str| Err(FederalFileError::Corrupt(what.to_string()));
        let docs = self.docs.len();
        if self.law_starts.len() != self.laws.len() + 1
            || self.law_starts.first() != Some(&0)
            || !self.law_starts.windows(2).all(|w| w[0] <= w[1])
            || self.law_starts.last().copied() != Some(docs as u32)
        {
            return corrupt("the laws' document ranges do not cover the documents");
        }
        if let Some(bad) = self
            .laws
            .iter()
            .find(|l| crate::names::check_law_abbreviation(l).is_err())
        {
            return Err(FederalFileError::Corrupt(format!(
                "`{}` is not a law abbreviation",
                bad.escape_debug()
            )));
        }
        self.dictionary
            .check()
            .map_err(|e| FederalFileError::Corrupt(e.to_string()))?;
        if self.dictionary.len() != docs {
            return corrupt("the dictionary counts other documents than the head lists");
        }
        let terms = self.dictionary.num_terms();
        let starts_ok = match self.shard_starts.first() {
            None => terms == 0,
            Some(&first) => {
                first == 0
                    && self.shard_starts.windows(2).all(|w| w[0] < w[1])
                    && (*self.shard_starts.last().expect("not empty") as usize) < terms
            }
        };
        if !starts_ok {
            return corrupt("the posting shards do not partition the vocabulary");
        }
        if let Some(v) = &self.vectors {
            let subspaces = v.subspaces();
            let centroids = v.centroids as usize;
            if v.dim == 0
                || v.dim > MAX_DIM
                || centroids == 0
                || centroids > CENTROIDS
                || v.codebook.len() != subspaces * centroids * SUB_DIM
                || !v.codebook.iter().all(|x| x.is_finite())
                || v.codes.len() != v.rows.len() * subspaces
                || v.codes.iter().any(|&c| c as usize >= centroids)
                || v.rows.iter().any(|&d| d as usize >= docs)
            {
                return corrupt("the section vectors do not fit the documents");
            }
        }
        Ok(())
    }

    /// A posting shard as a file.
    pub fn shard_to_bytes(index: u32, shard: &PostingShard) -> Vec<u8> {
        encode_framed(
            SHARD_MAGIC,
            &ShardFile {
                index,
                shard: shard.clone(),
            },
        )
    }

    /// Reads posting shard `index` of this head and checks it against the dictionary.
    pub fn shard_from_bytes(
        &self,
        index: u32,
        bytes: &[u8],
    ) -> Result<PostingShard, FederalFileError> {
        let file: ShardFile = decode_framed(SHARD_MAGIC, "posting shard", bytes)?;
        if file.index != index {
            return Err(FederalFileError::WrongShard {
                expected: index,
                found: file.index,
            });
        }
        let (first, end) = self.shard_range(index)?;
        if file.shard.first_term != first
            || file.shard.first_term as usize + file.shard.terms() != end
        {
            return Err(FederalFileError::Corrupt(format!(
                "posting shard {index} holds other terms than the head says"
            )));
        }
        file.shard
            .check(&self.dictionary)
            .map_err(|e| FederalFileError::Corrupt(e.to_string()))?;
        Ok(file.shard)
    }

    /// Terms `first..end` of shard `index`.
    fn shard_range(&self, index: u32) -> Result<(u32, usize), FederalFileError> {
        let i = index as usize;
        let first = *self.shard_starts.get(i).ok_or_else(|| {
            FederalFileError::Corrupt(format!("there is no posting shard {index}"))
        })?;
        let end = self
            .shard_starts
            .get(i + 1)
            .map_or(self.dictionary.num_terms(), |&s| s as usize);
        Ok((first, end))
    }

    /// Encoded bytes of the head's parts (laws, section designations, BM25 dictionary, quantized vectors), for
    /// reports.
    pub fn part_bytes(&self) -> [(&'static str, usize); 4] {
        let size = |value: &dyn erased::Sized| value.bytes();
        [
            ("laws", size(&(&self.laws, &self.law_starts))),
            ("designations", size(&self.docs)),
            ("dictionary", size(&self.dictionary)),
            ("vectors", size(&self.vectors)),
        ]
    }

    /// Laws (abbreviations) in index order; [`FederalHit::law`] indexes this.
    pub fn laws(&self) -> &[String] {
        &self.laws
    }

    /// Sections indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Posting shards.
    pub fn shards(&self) -> usize {
        self.shard_starts.len()
    }

    /// Vocabulary size.
    pub fn terms(&self) -> usize {
        self.dictionary.num_terms()
    }

    /// The model of the section vectors, when any law brought some.
    pub fn model(&self) -> Option<&str> {
        self.vectors.as_ref().map(|v| v.model.as_str())
    }

    /// What a hit shows before its law is loaded.
    pub fn doc(&self, hit: &FederalHit) -> &HeadDoc {
        &self.docs[hit.doc as usize]
    }

    /// The analysed terms of a question (weight 1 each), as the index sees them.
    pub fn query_terms(&self, text: &str) -> Vec<(String, f32)> {
        self.dictionary
            .query_terms(text)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect()
    }

    fn shard_of(&self, term: u32) -> u32 {
        (self.shard_starts.partition_point(|&s| s <= term) - 1) as u32
    }

    /// The posting shards a question with these terms needs, ascending.
    pub fn shards_for(&self, terms: &[(String, f32)]) -> Vec<u32> {
        let mut shards: Vec<u32> = self
            .dictionary
            .term_ids(terms)
            .into_iter()
            .map(|t| self.shard_of(t))
            .collect();
        shards.dedup();
        shards
    }

    /// The best `options.section_k` sections of the laws `keep` allows (by index into [`FederalHead::laws`])
    /// for the analysed `terms` and `vector` (the question embedded with [`FederalHead::model`]), in
    /// `options.mode`; BM25 when there is no vector. `shard(n)` gives loaded posting shards: every shard
    /// [`FederalHead::shards_for`] names must be there.
    pub fn search<'s>(
        &self,
        terms: &[(String, f32)],
        vector: Option<&[f32]>,
        options: &SearchOptions,
        shard: impl Fn(u32) -> Option<&'s PostingShard>,
        keep: impl Fn(u32) -> bool,
    ) -> Result<(Vec<FederalHit>, Mode), FederalFileError> {
        let law_of = |doc: u32| (self.law_starts.partition_point(|&s| s <= doc) - 1) as u32;
        let keep_doc = |doc: u32| keep(law_of(doc));
        let mut scores = self
            .dictionary
            .scores_sharded(terms, |t| shard(self.shard_of(t)))
            .map_err(|t| FederalFileError::MissingShard(self.shard_of(t)))?;
        for (doc, score) in scores.iter_mut().enumerate() {
            if *score > 0.0 && !keep_doc(doc as u32) {
                *score = 0.0;
            }
        }
        let dense = match (options.mode, &self.vectors, vector) {
            (Mode::Bm25, _, _) | (_, None, _) | (_, _, None) => None,
            (_, Some(coded), Some(v)) => {
                if v.len() != coded.dim as usize {
                    return Err(EngineError::Dimension {
                        model: coded.model.clone(),
                        expected: coded.dim as usize,
                        found: v.len(),
                    }
                    .into());
                }
                Some(move |k: usize| coded.top(v, k, &keep_doc))
            }
        };
        let (ranking, mode) = rank(
            options,
            |k| top_k(scores.clone(), k),
            dense.as_ref().map(|f| f as &dyn Fn(usize) -> Vec<Hit>),
        );
        Ok((
            ranking
                .into_iter()
                .map(|h| FederalHit {
                    law: law_of(h.index),
                    section: self.docs[h.index as usize].section,
                    doc: h.index,
                    score: h.score,
                })
                .collect(),
            mode,
        ))
    }
}
