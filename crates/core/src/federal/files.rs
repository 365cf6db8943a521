//! The federal index as files the browser fetches: all laws searched as one without downloading all laws.
//!
//! [`FederalIndex`] holds everything in memory, which is right for the CLI but not for a page over a 50 Mbit/s
//! link: 100,000 sections of federal law are about 150 MB of float vectors and tens of MB of postings. The
//! browser's layout, chosen by measurement (docs/all-laws.md, "All laws in the browser"):
//!
//! - **One head file** (`federal.<hash>.pgb`, magic `PGRF-FHD`): the laws and, per section, its law and
//!   designation (enough to show a result before any law text is fetched); and the BM25 dictionary (vocabulary
//!   with frequencies and document lengths: the query's lexicon for decompounding and the idf of every term);
//!   and the law finder's index of each law's abbreviation, title and headings, which law routing ranks the
//!   laws' text with (in the page, indexing it would take seconds: it is built with the head instead).
//! - **Posting shards** (`federal-postings-<n>.<hash>.pgb`, magic `PGRF-FPS`): the postings of contiguous term
//!   ranges, about [`SHARD_BYTES`] each. A question fetches only the shards of its own terms.
//! - **One vectors file** (`federal-vectors.<hash>.pgb`, magic `PGRF-FVQ`): every section vector rotated and
//!   **product-quantized** (one byte per four dimensions: 96 bytes per e5 section instead of 384 as
//!   int8; see `QuantizedVectors`). A file of its own because it is three times the rest of the head: the
//!   first BM25 result never waits for it, and a lexical search never fetches it.
//! - The laws' texts stay in their law bundles, fetched when a result of that law is shown.
//!
//! Every part is checked against the others on load, so a file of another build fails before a search. Hits
//! carry the same law/section pairs as [`FederalIndex`]'s, and the fusion is the same function.

use serde::{Deserialize, Serialize};

use super::routing::{first_stage_options, LawQuery, LawVectors, Router};
use super::{rank, FederalHit, FederalIndex, FederalLaw};
use crate::routing_weights::RoutingWeights;
use paragraf_engine::{EngineError, Mode, SearchOptions};
use paragraf_format::frame::{BundleError, FileKind};
use paragraf_index::bm25::{top_k, Bm25Dictionary, Bm25Index, PostingShard};
use paragraf_index::vectors::VectorStore;
use paragraf_index::{Hit, TopK};

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

/// What to do with an index file across laws too old to read.
pub(crate) const REBUILD_FEDERAL: &str = "Rebuild the index across laws with `paragraf federal`";

/// The head file (compressed from version 5 on).
pub const HEAD: FileKind = FileKind::new(b"PGRF-FHD", "federal index", 5, 4)
    .remedy(REBUILD_FEDERAL)
    .compressed_since(5);
/// Magic of the head file while it still held the section vectors: recognised, to say what to do.
const OLD_HEAD_MAGIC: &[u8; 8] = b"PGRF-FED";
/// A posting shard (compressed from version 4 on).
pub const SHARD: FileKind = FileKind::new(b"PGRF-FPS", "posting shard", 4, 2)
    .remedy(REBUILD_FEDERAL)
    .compressed_since(4);
/// The vectors file.
pub const VECTORS: FileKind =
    FileKind::new(b"PGRF-FVQ", "federal vectors", 3, 2).remedy(REBUILD_FEDERAL);
/// Postings per shard the build aims at: a question of ten terms fetches well under a megabyte.
pub const SHARD_BYTES: usize = 64 << 10;
/// Widest vectors a vectors file may carry.
const MAX_DIM: u32 = 8192;
/// Longest model name a vectors file may carry.
const MAX_MODEL_BYTES: usize = 256;

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
    /// A head file of the layout that kept the section vectors inside it.
    #[error("the index across laws was written by an older Paragraf (section vectors inside the head file). Rebuild it with `paragraf federal --bundles <folder>`")]
    OldLayout,
    /// A vectors file made for another head.
    #[error("the section vectors belong to another index head than this one. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`")]
    WrongHead,
    /// A law router made for other laws than this head's.
    #[error("the law router knows {router} laws but the index across laws has {head}. Most likely the folder mixes files of two builds; rebuild with `paragraf federal`")]
    RouterMismatch {
        /// Laws the router knows.
        router: usize,
        /// Laws of the head.
        head: usize,
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
    /// Index into its law's [`paragraf_law::Law::sections`].
    pub section: u32,
    /// `§ 535`, `Art. 1`.
    pub designation: String,
}

/// Dimensions per sub-vector of the product quantizer: one byte codes four dimensions.
const SUB_DIM: usize = 4;
/// Centroids per sub-space (one byte).
const CENTROIDS: usize = 256;
/// Rows scored together by [`QuantizedVectors::top`] (their codes, 96 bytes each for e5, stay in the
/// first-level cache while each sub-space's table is read).
const SCORE_BLOCK: usize = 128;
/// Vectors the quantizer is trained on (an even sample beyond this).
const TRAIN_ROWS: usize = 16_384;
/// Lloyd iterations per sub-space.
const TRAIN_ROUNDS: usize = 12;

/// The section vectors, product-quantized: each vector is rotated onto the principal axes of all of them, each
/// run of [`SUB_DIM`] rotated dimensions is replaced by the nearest of [`CENTROIDS`] centroids learnt for that run
/// (k-means), one byte per run: 96 bytes per e5 section instead of 384 as int8. A question is rotated the same way
/// (a rotation keeps dot products); its score is the sum over runs of its dot product with the chosen centroid,
/// read from a 256-entry table per run. The axes are dealt to the runs so that each run's product of variances is
/// about the same (eigenvalue allocation, as in optimized product quantization): on raw dimensions a few runs
/// carry most of the variance and the others waste their centroids. Sign bits (one per dimension, same size)
/// were measured first and ranked far worse: e5 vectors share a large common direction, and a sign keeps too
/// little of what tells sections apart.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct QuantizedVectors {
    model: String,
    dim: u32,
    /// Row `i` (of `subspaces * SUB_DIM`, each `dim` values) gives rotated dimension `i`; rows past the
    /// principal axes are zero.
    rotation: Vec<f32>,
    /// Centroids per sub-space (at most [`CENTROIDS`]; fewer when there are fewer vectors).
    centroids: u32,
    /// Sub-space `j`, centroid `c`: `codebook[(j * centroids + c) * SUB_DIM..][..SUB_DIM]` (a rotated dimension
    /// past the principal axes, when `dim` is not a multiple of [`SUB_DIM`], is zero).
    codebook: Vec<f32>,
    /// The document each row belongs to.
    rows: Vec<u32>,
    /// One centroid number per sub-space and row.
    #[serde(with = "paragraf_format::bytes")]
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
        let raw_row = |r: usize| -> Vec<f32> {
            match store {
                VectorStore::Int8(v) => v.dequantize_row(r),
                VectorStore::F32 { values, .. } => values[r * dim..(r + 1) * dim].to_vec(),
            }
        };
        let n = rows.len();
        let step = n.div_ceil(TRAIN_ROWS).max(1);
        let rotation = principal_rotation(
            &(0..n).step_by(step).map(raw_row).collect::<Vec<_>>(),
            dim,
            subspaces,
        );
        // Every row rotated (whole sub-spaces).
        let row = |r: usize| rotate(&rotation, dim, &raw_row(r));
        let sample: Vec<Vec<f32>> = (0..n).step_by(step).map(row).collect();
        let k = CENTROIDS.min(sample.len()).max(1);
        let mut codebook = vec![0.0f32; subspaces * k * SUB_DIM];
        let mut rng = paragraf_stats::rng::SplitMix64::new(0x5051_5f46_4544);
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
            rotation,
            centroids: k as u32,
            codebook,
            rows,
            codes,
        }
    }

    /// The best `k` documents that `keep` allows, by the question's dot product with the coded vectors.
    fn top(&self, query: &[f32], k: usize, keep: &dyn Fn(u32) -> bool) -> Vec<Hit> {
        let (subspaces, centroids) = (self.subspaces(), self.centroids as usize);
        let padded = rotate(&self.rotation, self.dim as usize, query);
        // One full 256-entry table per sub-space (a `u8` code indexes it without a bounds check).
        let mut table = vec![[0.0f32; CENTROIDS]; subspaces];
        for (j, row) in table.iter_mut().enumerate() {
            let q = &padded[j * SUB_DIM..(j + 1) * SUB_DIM];
            for (c, entry) in row.iter_mut().enumerate().take(centroids) {
                let centroid = &self.codebook[(j * centroids + c) * SUB_DIM..][..SUB_DIM];
                *entry = q.iter().zip(centroid).map(|(a, b)| a * b).sum();
            }
        }
        let mut top = TopK::new(k);
        // Rows in blocks, and within a block sub-space by sub-space: one sub-space's table (1 KB) stays in the
        // first-level cache while the block's rows read it; row by row, every row would sweep all the tables
        // (96 KB for e5, more than that cache).
        let mut scores = [0.0f32; SCORE_BLOCK];
        let blocks = self.codes.chunks(SCORE_BLOCK * subspaces);
        for (codes, docs) in blocks.zip(self.rows.chunks(SCORE_BLOCK)) {
            let scores = &mut scores[..docs.len()];
            scores.fill(0.0);
            for (j, row) in table.iter().enumerate() {
                for (score, codes) in scores.iter_mut().zip(codes.chunks_exact(subspaces)) {
                    *score += row[codes[j] as usize];
                }
            }
            for (&score, &doc) in scores.iter().zip(docs) {
                if keep(doc) {
                    top.push(Hit { index: doc, score });
                }
            }
        }
        top.into_sorted()
    }

    /// Whether the parts fit together and the rows name distinct documents of `docs`, ascending.
    fn fits(&self, docs: usize) -> bool {
        let centroids = self.centroids as usize;
        self.dim != 0
            && self.dim <= MAX_DIM
            && self.model.len() <= MAX_MODEL_BYTES
            && self.rotation.len() == self.subspaces() * SUB_DIM * self.dim as usize
            && self.rotation.iter().all(|x| x.is_finite())
            && self.rows.len() <= docs
            && self.rows.windows(2).all(|w| w[0] < w[1])
            && centroids != 0
            && centroids <= CENTROIDS
            && self.codebook.len() == self.subspaces() * centroids * SUB_DIM
            && self.codebook.iter().all(|x| x.is_finite())
            && Some(self.codes.len()) == self.rows.len().checked_mul(self.subspaces())
            && self.codes.iter().all(|&c| (c as usize) < centroids)
            && self.rows.iter().all(|&d| (d as usize) < docs)
    }
}

/// `v` (`dim` values) in the rotated coordinates of `rotation` (see [`QuantizedVectors::rotation`]).
fn rotate(rotation: &[f32], dim: usize, v: &[f32]) -> Vec<f32> {
    rotation
        .chunks_exact(dim)
        .map(|axis| axis.iter().zip(v).map(|(a, b)| a * b).sum())
        .collect()
}

/// The principal axes of `sample` (vectors of `dim` values) as the rows of a rotation, dealt to `subspaces`
/// runs of [`SUB_DIM`] rows: in rounds from the largest variance down, the round's largest goes to the run whose
/// product of variances is smallest so far. Rows past the axes are zero.
fn principal_rotation(sample: &[Vec<f32>], dim: usize, subspaces: usize) -> Vec<f32> {
    let n = sample.len().max(1) as f64;
    let mut mean = vec![0.0f64; dim];
    for v in sample {
        mean.iter_mut()
            .zip(v)
            .for_each(|(m, x)| *m += f64::from(*x) / n);
    }
    let mut covariance = vec![0.0f64; dim * dim];
    for v in sample {
        let centred: Vec<f64> = v
            .iter()
            .zip(&mean)
            .map(|(x, m)| f64::from(*x) - m)
            .collect();
        for i in 0..dim {
            for j in i..dim {
                covariance[i * dim + j] += centred[i] * centred[j] / n;
            }
        }
    }
    for i in 0..dim {
        for j in 0..i {
            covariance[i * dim + j] = covariance[j * dim + i];
        }
    }
    let (values, axes) = symmetric_eigen(covariance, dim);
    let mut order: Vec<usize> = (0..dim).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    // (sum of log variances, axes) per run.
    let mut runs: Vec<(f64, Vec<usize>)> = vec![(0.0, Vec::new()); subspaces];
    for round in order.chunks(subspaces) {
        let mut open: Vec<usize> = (0..subspaces).collect();
        open.sort_by(|&a, &b| runs[a].0.total_cmp(&runs[b].0));
        for (&axis, &run) in round.iter().zip(&open) {
            runs[run].0 += values[axis].max(1e-12).ln();
            runs[run].1.push(axis);
        }
    }
    let mut rotation = vec![0.0f32; subspaces * SUB_DIM * dim];
    for (j, (_, axes_of_run)) in runs.iter().enumerate() {
        for (t, &axis) in axes_of_run.iter().enumerate() {
            let row = &mut rotation[(j * SUB_DIM + t) * dim..][..dim];
            for (r, a) in row.iter_mut().zip(&axes[axis * dim..(axis + 1) * dim]) {
                *r = *a as f32;
            }
        }
    }
    rotation
}

/// Eigenvalues and eigenvectors (row `i` of the second, `n` values, belongs to value `i`) of the symmetric
/// `n`×`n` matrix `a` (row-major), by cyclic Jacobi rotations.
fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let scale: f64 = a.iter().map(|x| x * x).sum::<f64>().max(f64::MIN_POSITIVE);
    for _ in 0..50 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        if off <= scale * 1e-22 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() <= f64::MIN_POSITIVE {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let sign = if theta >= 0.0 { 1.0 } else { -1.0 };
                let t = sign / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vpk, vqk) = (v[p * n + k], v[q * n + k]);
                    v[p * n + k] = c * vpk - s * vqk;
                    v[q * n + k] = s * vpk + c * vqk;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

fn distance(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// `k` centroids of `points` by Lloyd's algorithm from `k` distinct seeded starting points; an emptied cluster
/// keeps its centroid.
fn kmeans(
    points: &[[f32; SUB_DIM]],
    k: usize,
    rng: &mut paragraf_stats::rng::SplitMix64,
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

/// The vectors file: see the module docs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FederalVectors {
    /// CRC-32 of the serialised (uncompressed) head it was built with ([`FederalHead::checksum`]).
    head: u32,
    quantized: QuantizedVectors,
    /// Each law's mean coded vector, in the rotated space (made on reading, from the head's law ranges).
    #[serde(skip)]
    law_means: LawVectors,
}

impl FederalVectors {
    /// The file.
    pub fn to_bytes(&self) -> Vec<u8> {
        VECTORS.encode(self)
    }

    /// The model of the section vectors: questions must be embedded with it.
    pub fn model(&self) -> &str {
        &self.quantized.model
    }

    /// Dimensions of the section vectors.
    pub fn dim(&self) -> usize {
        self.quantized.dim as usize
    }

    /// Sections with a vector.
    pub fn len(&self) -> usize {
        self.quantized.rows.len()
    }

    /// The laws closest to the question's `vector` by their mean section vectors ([`LawVectors::ranking`]).
    pub fn law_ranking(&self, vector: &[f32]) -> Vec<usize> {
        let q = &self.quantized;
        if vector.len() != q.dim as usize {
            return Vec::new();
        }
        self.law_means
            .ranking(&rotate(&q.rotation, q.dim as usize, vector))
    }

    /// With each law's mean vector, summed from the codes (`law_of`: a document's law, `laws` laws in all).
    fn with_law_means(mut self, laws: usize, law_of: impl Fn(u32) -> u32) -> Self {
        let q = &self.quantized;
        let (subspaces, centroids) = (q.subspaces(), q.centroids as usize);
        let dim = subspaces * SUB_DIM;
        let mut sums = vec![0.0f32; laws * dim];
        for (codes, &doc) in q.codes.chunks_exact(subspaces).zip(&q.rows) {
            let sum = &mut sums[law_of(doc) as usize * dim..][..dim];
            for (j, &c) in codes.iter().enumerate() {
                let centroid = &q.codebook[(j * centroids + c as usize) * SUB_DIM..][..SUB_DIM];
                for (s, x) in sum[j * SUB_DIM..][..SUB_DIM].iter_mut().zip(centroid) {
                    *s += x;
                }
            }
        }
        self.law_means = LawVectors::of_sums(dim, sums);
        self
    }

    /// Whether no section has a vector.
    pub fn is_empty(&self) -> bool {
        self.quantized.rows.is_empty()
    }
}

/// What [`FederalHead::build`] makes: the files' contents.
pub struct FederalFiles {
    /// The head: laws, designations, the BM25 dictionary.
    pub head: FederalHead,
    /// The posting shards, in term order.
    pub shards: Vec<PostingShard>,
    /// `None` when no law brought a `section` bundle with vectors.
    pub vectors: Option<FederalVectors>,
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
    /// The law finder's index of the laws' abbreviations, titles and topics, one document per law
    /// ([`Router::law_text_index`]).
    law_text: Bm25Index,
    /// CRC-32 of the serialised head (not stored: computed on reading), which its vectors file names.
    #[serde(skip)]
    checksum: u32,
}

impl FederalHead {
    /// The head, its posting shards (of about `shard_bytes` postings) and its vectors for `laws` (see
    /// [`FederalIndex::new`] for what is refused).
    pub fn build(laws: &[FederalLaw], shard_bytes: usize) -> Result<FederalFiles, EngineError> {
        let FederalIndex {
            docs,
            bm25,
            vectors,
            router,
            law_vectors: _,
            learned: _,
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
        let mut head = FederalHead {
            laws: laws.iter().map(|l| l.law.abbreviation.clone()).collect(),
            law_starts,
            docs: heads,
            dictionary,
            shard_starts: shards.iter().map(|s| s.first_term).collect(),
            law_text: router
                .law_text_index()
                .expect("a router over the laws themselves indexes their text")
                .clone(),
            checksum: 0,
        };
        head.checksum =
            crc32fast::hash(&postcard::to_allocvec(&head).expect("bundle types always serialise"));
        let vectors = vectors.map(|(store, rows, model)| {
            FederalVectors {
                head: head.checksum,
                quantized: QuantizedVectors::from_store(&store, rows, model),
                law_means: LawVectors::default(),
            }
            .with_law_means(head.laws.len(), |doc| head.law_of(doc))
        });
        Ok(FederalFiles {
            head,
            shards,
            vectors,
        })
    }

    /// The head as a file.
    pub fn to_bytes(&self) -> Vec<u8> {
        HEAD.encode(self)
    }

    /// Reads a head file and checks that its parts fit together.
    pub fn from_bytes(bytes: &[u8]) -> Result<FederalHead, FederalFileError> {
        if bytes.starts_with(OLD_HEAD_MAGIC) {
            return Err(FederalFileError::OldLayout);
        }
        let payload = HEAD.payload(bytes)?;
        let mut head: FederalHead = paragraf_format::frame::decode_payload(&payload)?;
        // Of the payload as serialised, as the build computed it (a compressed file's header checks the
        // stored bytes).
        head.checksum = crc32fast::hash(&payload);
        head.check()?;
        Ok(head)
    }

    /// CRC-32 of the serialised (uncompressed) head: what its vectors file names.
    pub fn checksum(&self) -> u32 {
        self.checksum
    }

    /// Reads this head's vectors file and checks it against the head.
    pub fn vectors_from_bytes(&self, bytes: &[u8]) -> Result<FederalVectors, FederalFileError> {
        let vectors: FederalVectors = VECTORS.decode(bytes)?;
        if vectors.head != self.checksum {
            return Err(FederalFileError::WrongHead);
        }
        if !vectors.quantized.fits(self.docs.len()) {
            return Err(FederalFileError::Corrupt(
                "the section vectors do not fit the documents".into(),
            ));
        }
        Ok(vectors.with_law_means(self.laws.len(), |doc| self.law_of(doc)))
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
            .find(|l| paragraf_format::names::check_law_abbreviation(l).is_err())
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
        crate::finder::LawFinder::check_index(&self.law_text, self.laws.len())
            .map_err(FederalFileError::Corrupt)
    }

    /// A posting shard as a file.
    pub fn shard_to_bytes(index: u32, shard: &PostingShard) -> Vec<u8> {
        SHARD.encode(&ShardFile {
            index,
            shard: shard.clone(),
        })
    }

    /// Reads posting shard `index` of this head and checks it against the dictionary.
    pub fn shard_from_bytes(
        &self,
        index: u32,
        bytes: &[u8],
    ) -> Result<PostingShard, FederalFileError> {
        let file: ShardFile = SHARD.decode(bytes)?;
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

    /// Encoded bytes of the head's parts (laws, section designations, BM25 dictionary, the laws' text index),
    /// for reports.
    pub fn part_bytes(&self) -> [(&'static str, usize); 4] {
        let size = |value: &dyn erased::Sized| value.bytes();
        [
            ("laws", size(&(&self.laws, &self.law_starts))),
            ("designations", size(&self.docs)),
            ("dictionary", size(&self.dictionary)),
            ("law text", size(&self.law_text)),
        ]
    }

    /// The law finder's index of the laws' abbreviations, titles and topics, for a router over the catalogue
    /// ([`Router::of_catalogue`]).
    pub fn law_text_index(&self) -> &Bm25Index {
        &self.law_text
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

    /// The law of document `doc` (one the head holds).
    fn law_of(&self, doc: u32) -> u32 {
        (self.law_starts.partition_point(|&s| s <= doc) - 1) as u32
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
    /// for the analysed `terms` and the question's `vector` against this head's vectors file (the question
    /// embedded with [`FederalVectors::model`]), in `options.mode`; BM25 without them. `shard(n)` gives loaded
    /// posting shards: every shard [`FederalHead::shards_for`] names must be there. With `routing` (a router
    /// over this head's laws and the question asked of it) and `options.route_laws`, the first stage goes
    /// [`super::routing::ROUTING_DEPTH`] deep and is routed by law with the mode's [`RoutingWeights::shipped`], as
    /// [`super::FederalIndex::search`] does (each law's coverage of `terms` read from the same shards).
    pub fn search<'s>(
        &self,
        terms: &[(String, f32)],
        vector: Option<(&FederalVectors, &[f32])>,
        options: &SearchOptions,
        shard: impl Fn(u32) -> Option<&'s PostingShard>,
        keep: impl Fn(u32) -> bool,
        routing: Option<(&Router, &LawQuery)>,
    ) -> Result<(Vec<FederalHit>, Mode), FederalFileError> {
        let routing = routing.filter(|_| options.route_laws);
        if let Some((router, _)) = routing.filter(|(r, _)| r.laws() != self.laws.len()) {
            return Err(FederalFileError::RouterMismatch {
                router: router.laws(),
                head: self.laws.len(),
            });
        }
        let first_options = match routing {
            Some(_) => first_stage_options(options),
            None => *options,
        };
        let law_of = |doc: u32| self.law_of(doc);
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
        let dense = match (options.mode, vector) {
            (Mode::Bm25, _) | (_, None) => None,
            (_, Some((vectors, v))) => {
                if vectors.head != self.checksum {
                    return Err(FederalFileError::WrongHead);
                }
                let coded = &vectors.quantized;
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
        let (mut ranking, mode) = rank(
            &first_options,
            |k| top_k(scores.clone(), k),
            dense.as_ref().map(|f| f as &dyn Fn(usize) -> Vec<Hit>),
        );
        if let Some((router, query)) = routing {
            // A term's documents come in order, mostly several of one law: its range is kept, not searched again.
            let last = std::cell::Cell::new((0u32, 0u32, 0u32));
            let law_of_ordered = |doc: u32| {
                let (start, end, law) = last.get();
                if (start..end).contains(&doc) {
                    return law;
                }
                let law = law_of(doc);
                let range = &self.law_starts[law as usize..];
                last.set((range[0], range[1], law));
                law
            };
            let query = LawQuery {
                dense_ranking: match (mode, vector) {
                    (Mode::Bm25, _) | (_, None) => Vec::new(),
                    (_, Some((vectors, v))) => vectors.law_ranking(v),
                },
                coverage: self
                    .dictionary
                    .coverage_sharded(terms, |t| shard(self.shard_of(t)), law_of_ordered)
                    .map_err(|t| FederalFileError::MissingShard(self.shard_of(t)))?,
                ..query.clone()
            };
            ranking = router.route(
                &ranking,
                &law_of,
                &query,
                &RoutingWeights::shipped(mode),
                options.section_k,
            );
        }
        Ok((
            ranking
                .into_iter()
                .map(|h| FederalHit {
                    law: law_of(h.index),
                    section: self.docs[h.index as usize].section,
                    doc: h.index,
                    score: h.score,
                    precedents: 0,
                })
                .collect(),
            mode,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_refused_when_its_law_text_index_does_not_fit_its_laws_or_it_is_older() {
        let (a, b) = (
            crate::federal::tests::law("A", &["Der Mieter zahlt."]),
            crate::federal::tests::law("B", &["Die Steuer ist fällig."]),
        );
        let parts = [&a, &b].map(|law| FederalLaw {
            law,
            sections: None,
        });
        let mut head = FederalHead::build(&parts, SHARD_BYTES).unwrap().head;
        assert_eq!(head.law_text_index().len(), 2);
        let message = |head: &FederalHead| {
            FederalHead::from_bytes(&head.to_bytes())
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let mut old = head.to_bytes();
        old[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            FederalHead::from_bytes(&old).map(|_| ()).unwrap_err().to_string(),
            "federal index format version 3 is older than this Paragraf reads (4 to 5). Rebuild the index across laws with `paragraf federal`"
        );
        let finder = |docs: &[&str], b: f32| {
            Bm25Index::build(
                docs,
                paragraf_law::analyzer::AnalyzerConfig::default(),
                paragraf_index::bm25::Bm25Params { k1: 1.2, b },
            )
        };
        head.law_text = finder(&["A"], 0.0);
        assert_eq!(
            message(&head),
            "the federal index is inconsistent: the law-text index has 1 documents for 2 laws. Rebuild it with `paragraf federal`"
        );
        head.law_text = finder(&["A", "B"], 0.75);
        assert_eq!(
            message(&head),
            "the federal index is inconsistent: the law-text index has other analyzer settings or BM25 parameters than the finder's. Rebuild it with `paragraf federal`"
        );
    }

    #[test]
    fn the_eigen_solver_finds_the_axes_of_a_known_matrix() {
        let (values, axes) = symmetric_eigen(vec![2.0, 1.0, 1.0, 2.0], 2);
        let mut found: Vec<(f64, [f64; 2])> = (0..2)
            .map(|i| (values[i], [axes[2 * i], axes[2 * i + 1]]))
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        let half = std::f64::consts::FRAC_1_SQRT_2;
        for ((value, axis), (expected, direction)) in found
            .iter()
            .zip([(1.0, [half, -half]), (3.0, [half, half])])
        {
            assert!((value - expected).abs() < 1e-12, "{found:?}");
            let along = axis[0] * direction[0] + axis[1] * direction[1];
            assert!((along.abs() - 1.0).abs() < 1e-12, "{found:?}");
        }
    }

    #[test]
    fn the_principal_rotation_keeps_dot_products_and_balances_the_runs() {
        let mut rng = paragraf_stats::rng::SplitMix64::new(7);
        let mut uniform = || (rng.below(2001) as f32 - 1000.0) / 1000.0;
        // Ten dimensions (three runs of four, the last padded), of very different variances.
        // Neighbouring dimensions correlated: the principal axes are not the coordinate axes.
        let sample: Vec<Vec<f32>> = (0..500)
            .map(|_| {
                let x: Vec<f32> = (0..10).map(|_| uniform()).collect();
                (0..10)
                    .map(|d| {
                        let mixed = x[d] + if d > 0 { 0.5 * x[d - 1] } else { 0.0 };
                        mixed * (d as f32 + 1.0).powi(2)
                    })
                    .collect()
            })
            .collect();
        let rotation = principal_rotation(&sample, 10, 3);
        assert_eq!(rotation.len(), 3 * SUB_DIM * 10);
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for (a, b) in sample.iter().zip(&sample[1..]).take(50) {
            let (ra, rb) = (rotate(&rotation, 10, a), rotate(&rotation, 10, b));
            assert!(
                (dot(&ra, &rb) - dot(a, b)).abs() < 1e-3 * dot(a, a).max(1.0),
                "{a:?} {b:?}"
            );
        }
        // Two rows are zero (padding); the others are orthonormal.
        let rows: Vec<&[f32]> = rotation.chunks_exact(10).collect();
        assert_eq!(
            rows.iter().filter(|r| r.iter().all(|x| *x == 0.0)).count(),
            2
        );
        for (i, a) in rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.iter().any(|x| *x != 0.0))
        {
            for (j, b) in rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.iter().any(|x| *x != 0.0))
            {
                let expected = if i == j { 1.0 } else { 0.0 };
                assert!((dot(a, b) - expected).abs() < 1e-4, "rows {i} and {j}");
            }
        }
        // Not the coordinate axes: some row mixes dimensions.
        assert!(rows
            .iter()
            .any(|r| r.iter().filter(|x| x.abs() > 0.1).count() > 1));
        // Runs balanced: their products of variances (along their rows) spread far less than the variances.
        let log_variance = |row: &[f32]| {
            let along: Vec<f32> = sample.iter().map(|v| dot(row, v)).collect();
            let mean = along.iter().sum::<f32>() / along.len() as f32;
            (along.iter().map(|a| (a - mean) * (a - mean)).sum::<f32>() / along.len() as f32).ln()
        };
        let used = |r: &[f32]| r.iter().any(|x| *x != 0.0);
        let runs: Vec<f32> = rows
            .chunks(SUB_DIM)
            .map(|run| {
                run.iter()
                    .filter(|r| used(r))
                    .map(|r| log_variance(r))
                    .sum()
            })
            .collect();
        let axes: Vec<f32> = rows
            .iter()
            .filter(|r| used(r))
            .map(|r| log_variance(r))
            .collect();
        let spread = |v: &[f32]| {
            v.iter().copied().fold(f32::MIN, f32::max) - v.iter().copied().fold(f32::MAX, f32::min)
        };
        assert!(
            spread(&runs) < spread(&axes),
            "runs {runs:?}, axes {axes:?}"
        );
    }

    /// Scoring in blocks gives each row the sum of its table entries, across a partial last block and with
    /// rows left out by `keep`.
    #[test]
    fn blocked_scores_equal_row_by_row_sums() {
        let mut rng = paragraf_stats::rng::SplitMix64::new(11);
        let (n, dim) = (SCORE_BLOCK * 2 + 37, 10);
        let values: Vec<f32> = (0..n * dim)
            .map(|_| (rng.below(2001) as f32 - 1000.0) / 1000.0)
            .collect();
        let store = VectorStore::F32 {
            dim: dim as u32,
            values,
        };
        let rows: Vec<u32> = (0..n as u32).map(|r| r * 2).collect();
        let vectors = QuantizedVectors::from_store(&store, rows.clone(), "m".into());
        let query: Vec<f32> = (0..dim).map(|d| d as f32 / 10.0 - 0.4).collect();
        let padded = rotate(&vectors.rotation, dim, &query);
        let (subspaces, centroids) = (vectors.subspaces(), vectors.centroids as usize);
        let expected = |r: usize| -> f32 {
            (0..subspaces)
                .map(|j| {
                    let c = vectors.codes[r * subspaces + j] as usize;
                    let centroid = &vectors.codebook[(j * centroids + c) * SUB_DIM..][..SUB_DIM];
                    let q = &padded[j * SUB_DIM..(j + 1) * SUB_DIM];
                    q.iter().zip(centroid).map(|(a, b)| a * b).sum::<f32>()
                })
                .sum()
        };
        let keep = |doc: u32| !doc.is_multiple_of(3);
        let hits = vectors.top(&query, n, &keep);
        assert_eq!(hits.len(), rows.iter().filter(|&&d| keep(d)).count());
        for hit in &hits {
            let r = (hit.index / 2) as usize;
            assert!(keep(hit.index));
            assert!(
                (hit.score - expected(r)).abs() < 1e-4,
                "row {r}: {} vs {}",
                hit.score,
                expected(r)
            );
        }
    }
}
