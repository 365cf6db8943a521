//! BM25 over arbitrary documents (units or sections) with the German [`Analyzer`].
//!
//! The index ships inside a bundle, so postings are compact: per term, the documents as delta-encoded LEB128
//! varints interleaved with term frequencies, all terms in one byte vector addressed by offsets. Decoding a
//! posting list is a tight byte loop, fast enough that a 300-word question over the whole BGB stays far under a
//! millisecond of decode work per term.
//!
//! Scoring is Okapi BM25 with Lucene's always-positive idf `ln(1 + (N - df + 0.5) / (df + 0.5))`; repeated query
//! terms count repeatedly (a long question that keeps saying `Miete` is about rent).
//!
//! Decompounding needs a lexicon at query time identical to the one the documents were split with, so the index
//! keeps, per term, its corpus frequency before decompounding and serves as the query's [`Lexicon`].

use super::varint::{read_varint, read_varint_checked, write_varint};
use super::{Hit, TopK};
use paragraf_law::analyzer::{Analyzer, AnalyzerConfig, Lexicon};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use thiserror::Error;

/// A deserialised index whose parts do not fit together (a corrupt or foreign bundle section).
#[derive(Debug, Error, PartialEq, Eq)]
#[error("corrupt BM25 index: {0}")]
pub struct Bm25FormatError(&'static str);

/// BM25's free parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    /// Term-frequency saturation (default 1.2).
    pub k1: f32,
    /// Length normalisation (default 0.75).
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

/// What scoring needs besides the postings: the vocabulary with its frequencies, document lengths and
/// parameters. It is also the query's [`Lexicon`] for decompounding. A [`Bm25Index`] is a dictionary plus all
/// postings; split with [`Bm25Index::into_shards`], the dictionary travels alone and [`PostingShard`]s are
/// fetched only for the terms a query has (the browser's index over all federal law).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bm25Dictionary {
    params: Bm25Params,
    analyzer: AnalyzerConfig,
    /// Sorted vocabulary, stored front-coded (sorted stems share long prefixes: the federal vocabulary shrinks
    /// by about a third).
    #[serde(with = "front_coded")]
    terms: Terms,
    /// Per term: corpus frequency before decompounding (0 for terms that only occur as compound parts).
    lexicon: Vec<u32>,
    /// Per term: number of documents containing it.
    doc_freq: Vec<u32>,
    /// Terms per document.
    doc_len: Vec<u32>,
    /// Mean of `doc_len`.
    avg_len: f32,
}

/// A BM25 index; see the module docs. A deserialised one is checked ([`Bm25Index::check`]) before use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bm25Index {
    dictionary: Bm25Dictionary,
    /// Per term `t`: its postings are `postings[offsets[t]..offsets[t + 1]]`.
    offsets: Vec<u32>,
    /// `(doc delta, tf)` varint pairs.
    #[serde(with = "paragraf_format::bytes")]
    postings: Vec<u8>,
}

/// The postings of a contiguous range of terms (`first_term..first_term + terms()`), checked against its
/// dictionary by [`PostingShard::check`] before use.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PostingShard {
    /// Id of the shard's first term.
    pub first_term: u32,
    /// Per term of the shard: postings are `postings[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u32>,
    #[serde(with = "paragraf_format::bytes")]
    postings: Vec<u8>,
}

impl Bm25Dictionary {
    /// Checks that the parts fit together (a corrupt or foreign file fails here, not mid-query).
    pub fn check(&self) -> Result<(), Bm25FormatError> {
        let fail = |what| Err(Bm25FormatError(what));
        let n = self.terms.len();
        if self.lexicon.len() != n || self.doc_freq.len() != n {
            return fail("per-term vectors differ in length");
        }
        if !self.terms.is_strictly_sorted() {
            return fail("vocabulary not sorted");
        }
        if !self.avg_len.is_finite() || !self.params.k1.is_finite() || !self.params.b.is_finite() {
            return fail("parameters not finite");
        }
        if self
            .doc_freq
            .iter()
            .any(|&df| df as usize > self.doc_len.len())
        {
            return fail("document frequency above the number of documents");
        }
        Ok(())
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether no documents are indexed.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Vocabulary size.
    pub fn num_terms(&self) -> usize {
        self.terms.len()
    }

    fn term_id(&self, term: &str) -> Option<usize> {
        self.terms.find(term)
    }

    /// The analysed terms of a query, as the index sees them.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        Analyzer::new(self.analyzer).terms(query, Some(self))
    }

    /// The ids of the known terms among `terms` (what a query needs postings for), sorted, without repeats.
    pub fn term_ids(&self, terms: &[(String, f32)]) -> Vec<u32> {
        let mut ids: Vec<u32> = terms
            .iter()
            .filter_map(|(t, _)| self.term_id(t).map(|i| i as u32))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The known terms among `terms` with their summed weights, in term order (sums in a fixed order, so that
    /// every reader of the same postings gets the same floats).
    fn query_weights(&self, terms: &[(String, f32)]) -> Vec<(usize, f32)> {
        let mut query_weight: HashMap<usize, f32> = HashMap::new();
        for (term, weight) in terms {
            if let Some(t) = self.term_id(term) {
                *query_weight.entry(t).or_insert(0.0) += weight;
            }
        }
        let mut query_weight: Vec<(usize, f32)> = query_weight.into_iter().collect();
        query_weight.sort_unstable_by_key(|&(t, _)| t);
        query_weight
    }

    /// BM25 scores of every document for weighted, analysed terms, reading each term's postings through
    /// `postings` (`None`: the term is skipped).
    fn scores_with<'p>(
        &self,
        terms: &[(String, f32)],
        postings: impl Fn(usize) -> Option<&'p [u8]>,
    ) -> Vec<f32> {
        let n = self.len() as f32;
        let Bm25Params { k1, b } = self.params;
        let (base, per_term) = (k1 * (1.0 - b), k1 * b / self.avg_len.max(f32::MIN_POSITIVE));
        let mut scores = vec![0.0f32; self.len()];
        for (t, qw) in self.query_weights(terms) {
            let Some(mut bytes) = postings(t) else {
                continue;
            };
            let df = self.doc_freq[t] as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let weight = qw * idf * (k1 + 1.0);
            let mut doc = 0u32;
            while !bytes.is_empty() {
                doc += read_varint(&mut bytes);
                let tf = read_varint(&mut bytes) as f32;
                let norm = base + per_term * self.doc_len[doc as usize] as f32;
                scores[doc as usize] += weight * tf / (tf + norm);
            }
        }
        scores
    }

    /// Per group of documents (`group_of` a document's group, e.g. its law; groups are contiguous runs of
    /// documents in increasing order), the share of the query's weight that occurs somewhere in the group: each
    /// known term weighs its query weight times its idf, and counts once for every group with a document holding
    /// it. A law that holds only one rare word of a question covers little of it, however high that word lifts
    /// one of its sections (`postings` as for scoring; `None`: the term counts in the total but for no group).
    fn coverage_with<'p>(
        &self,
        terms: &[(String, f32)],
        postings: impl Fn(usize) -> Option<&'p [u8]>,
        group_of: impl Fn(u32) -> u32,
    ) -> HashMap<u32, f32> {
        let n = self.len() as f32;
        let mut covered: HashMap<u32, f32> = HashMap::new();
        let mut total = 0.0f32;
        for (t, qw) in self.query_weights(terms) {
            let df = self.doc_freq[t] as f32;
            let weight = qw * (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            total += weight;
            let Some(mut bytes) = postings(t) else {
                continue;
            };
            let (mut doc, mut last) = (0u32, None);
            while !bytes.is_empty() {
                doc += read_varint(&mut bytes);
                read_varint(&mut bytes);
                let group = group_of(doc);
                debug_assert!(last.is_none_or(|l| l <= group), "groups in document order");
                if last != Some(group) {
                    *covered.entry(group).or_insert(0.0) += weight;
                    last = Some(group);
                }
            }
        }
        if total > 0.0 {
            covered.values_mut().for_each(|c| *c /= total);
        }
        covered
    }

    /// [`Bm25Index::coverage`] over shards, as [`Bm25Dictionary::scores_sharded`] scores (a missing shard is an
    /// error naming the term id). Documents of one group must be contiguous.
    pub fn coverage_sharded<'s>(
        &self,
        terms: &[(String, f32)],
        shard: impl Fn(u32) -> Option<&'s PostingShard>,
        group_of: impl Fn(u32) -> u32,
    ) -> Result<HashMap<u32, f32>, u32> {
        let ids = self.term_ids(terms);
        if let Some(&missing) = ids.iter().find(|&&t| shard(t).is_none()) {
            return Err(missing);
        }
        Ok(self.coverage_with(terms, |t| shard(t as u32)?.postings_of(t as u32), group_of))
    }

    /// [`Bm25Index::scores_weighted`] over shards: `shard(t)` gives the loaded shard holding term `t`. A term
    /// whose shard is missing is an error naming the term id, since silently dropping it would change the ranking.
    pub fn scores_sharded<'s>(
        &self,
        terms: &[(String, f32)],
        shard: impl Fn(u32) -> Option<&'s PostingShard>,
    ) -> Result<Vec<f32>, u32> {
        let ids = self.term_ids(terms);
        if let Some(&missing) = ids.iter().find(|&&t| shard(t).is_none()) {
            return Err(missing);
        }
        Ok(self.scores_with(terms, |t| shard(t as u32)?.postings_of(t as u32)))
    }
}

/// Strings packed into one: no allocation per string, so the 260,495 terms of the index across all laws (or a
/// thesaurus's 75,000 words) decode as one piece in the browser. Sorted, as a vocabulary is, a lookup is a binary
/// search over the ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Terms {
    text: String,
    /// Where term `i` ends in `text` (it starts where term `i - 1` ends, or at 0).
    ends: Vec<u32>,
}

impl Terms {
    /// Packs `terms` (in their order).
    pub fn new<S: AsRef<str>>(terms: &[S]) -> Self {
        let mut packed = Terms::default();
        for term in terms {
            packed.push(term.as_ref());
        }
        packed
    }

    /// Room for `terms` terms of `bytes` bytes in all.
    pub fn with_capacity(terms: usize, bytes: usize) -> Self {
        Terms {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(terms),
        }
    }

    /// Appends `term`.
    pub fn push(&mut self, term: &str) {
        self.text.push_str(term);
        self.ends.push(self.text.len() as u32);
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The last term, if any.
    pub fn last(&self) -> Option<&str> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }

    /// The number of leading terms for which `pred` holds (the terms partitioned by it, as sorted terms are by
    /// `term < x`), found by binary search.
    pub fn partition_point(&self, mut pred: impl FnMut(&str) -> bool) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = (low + high) / 2;
            if pred(self.get(mid)) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// Term `i`.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// The terms in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The index of `term`, if it is one (the terms sorted).
    pub fn find(&self, term: &str) -> Option<usize> {
        let i = self.partition_point(|t| t < term);
        (i < self.len() && self.get(i) == term).then_some(i)
    }

    fn is_strictly_sorted(&self) -> bool {
        (1..self.len()).all(|i| self.get(i - 1) < self.get(i))
    }
}

/// Sorted strings as (bytes shared with the previous one, the rest): `Miete, Mieter` → `(0, Miete), (5, r)`.
mod front_coded {
    use super::Terms;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Coded {
        /// Bytes shared with the previous string (at most 255, on a character boundary).
        #[serde(with = "paragraf_format::bytes")]
        shared: Vec<u8>,
        /// Bytes of each string's own rest in `rests`.
        rest_len: Vec<u32>,
        rests: String,
    }

    pub fn serialize<S: Serializer>(terms: &Terms, serializer: S) -> Result<S::Ok, S::Error> {
        let mut coded = Coded {
            shared: Vec::with_capacity(terms.len()),
            rest_len: Vec::with_capacity(terms.len()),
            rests: String::new(),
        };
        let mut previous = "";
        for term in terms.iter() {
            let mut shared = previous
                .bytes()
                .zip(term.bytes())
                .take_while(|(a, b)| a == b)
                .count()
                .min(255);
            while !term.is_char_boundary(shared) {
                shared -= 1;
            }
            coded.shared.push(shared as u8);
            coded.rest_len.push((term.len() - shared) as u32);
            coded.rests.push_str(&term[shared..]);
            previous = term;
        }
        coded.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Terms, D::Error> {
        let coded = Coded::deserialize(deserializer)?;
        if coded.shared.len() != coded.rest_len.len() {
            return Err(D::Error::custom("front-coded terms: lengths differ"));
        }
        // Bytes first, checked as UTF-8 once at the end: a prefix cut inside a character leaves a byte no
        // character can follow, so a valid whole has every term on character boundaries.
        let mut text: Vec<u8> = Vec::with_capacity(coded.rests.len() * 2);
        let mut ends = Vec::with_capacity(coded.shared.len());
        let (mut at, mut previous) = (0usize, 0usize);
        for (&shared, &len) in coded.shared.iter().zip(&coded.rest_len) {
            let start = text.len();
            let end = at.saturating_add(len as usize);
            let (true, Some(rest)) = (
                shared as usize <= start - previous,
                coded.rests.as_bytes().get(at..end),
            ) else {
                return Err(D::Error::custom(
                    "front-coded terms: a prefix or rest out of range",
                ));
            };
            text.extend_from_within(previous..previous + shared as usize);
            text.extend_from_slice(rest);
            ends.push(
                u32::try_from(text.len())
                    .map_err(|_| D::Error::custom("front-coded terms: too long"))?,
            );
            previous = start;
            at = end;
        }
        if at != coded.rests.len() {
            return Err(D::Error::custom("front-coded terms: bytes left over"));
        }
        let text = String::from_utf8(text)
            .map_err(|_| D::Error::custom("front-coded terms: a prefix cut inside a character"))?;
        Ok(Terms { text, ends })
    }
}

impl Lexicon for Bm25Dictionary {
    fn frequency(&self, stem: &str) -> u32 {
        self.term_id(stem).map_or(0, |t| self.lexicon[t])
    }
}

impl PostingShard {
    /// Number of terms in the shard.
    pub fn terms(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether term `t` is in this shard.
    pub fn holds(&self, t: u32) -> bool {
        t >= self.first_term && ((t - self.first_term) as usize) < self.terms()
    }

    fn postings_of(&self, t: u32) -> Option<&[u8]> {
        if !self.holds(t) {
            return None;
        }
        let i = (t - self.first_term) as usize;
        Some(&self.postings[self.offsets[i] as usize..self.offsets[i + 1] as usize])
    }

    /// Checks the shard against its dictionary: offsets in order, every posting list decodes to documents that
    /// exist, in the number the dictionary records.
    pub fn check(&self, dictionary: &Bm25Dictionary) -> Result<(), Bm25FormatError> {
        check_offsets(&self.offsets, self.postings.len())?;
        let n = self.terms();
        if self.first_term as usize + n > dictionary.num_terms() {
            return Err(Bm25FormatError(
                "posting shard for terms the dictionary does not have",
            ));
        }
        check_postings(
            &self.offsets,
            &self.postings,
            &dictionary.doc_freq[self.first_term as usize..self.first_term as usize + n],
            dictionary.len(),
        )
    }
}

/// Offsets start at 0, never decrease and end at the postings' length.
fn check_offsets(offsets: &[u32], postings: usize) -> Result<(), Bm25FormatError> {
    if offsets.first() != Some(&0)
        || !offsets.windows(2).all(|w| w[0] <= w[1])
        || offsets.last().map(|&o| o as usize) != Some(postings)
    {
        return Err(Bm25FormatError("posting offsets out of order or range"));
    }
    Ok(())
}

/// Every posting list decodes, stays below `docs` and has as many entries as `doc_freq` says.
fn check_postings(
    offsets: &[u32],
    postings: &[u8],
    doc_freq: &[u32],
    docs: usize,
) -> Result<(), Bm25FormatError> {
    let fail = |what| Err(Bm25FormatError(what));
    for (t, df) in doc_freq.iter().enumerate() {
        let mut bytes = &postings[offsets[t] as usize..offsets[t + 1] as usize];
        let (mut doc, mut count) = (0u64, 0u32);
        while !bytes.is_empty() {
            let (Some(delta), Some(_tf)) = (
                read_varint_checked(&mut bytes),
                read_varint_checked(&mut bytes),
            ) else {
                return fail("truncated posting list");
            };
            doc += u64::from(delta);
            count += 1;
            if doc >= docs as u64 {
                return fail("posting for a document that does not exist");
            }
        }
        if count != *df {
            return fail("document frequency disagrees with postings");
        }
    }
    Ok(())
}

impl Lexicon for Bm25Index {
    fn frequency(&self, stem: &str) -> u32 {
        self.dictionary.frequency(stem)
    }
}

impl Bm25Index {
    /// Indexes `docs` (their order gives the document indices).
    pub fn build<S: AsRef<str>>(docs: &[S], analyzer: AnalyzerConfig, params: Bm25Params) -> Self {
        let a = Analyzer::new(analyzer);
        // Words per document, lowercased; analysed once per distinct word.
        let doc_words: Vec<Vec<String>> = docs
            .iter()
            .map(|d| Analyzer::words(d.as_ref()).collect())
            .collect();
        let mut lexicon: HashMap<String, u32> = HashMap::new();
        let mut stems: HashMap<&str, Option<String>> = HashMap::new();
        for word in doc_words.iter().flatten() {
            let stem = stems
                .entry(word.as_str())
                .or_insert_with(|| a.stem_word(word));
            if let Some(stem) = stem {
                *lexicon.entry(stem.clone()).or_insert(0) += 1;
            }
        }
        drop(stems);
        let mut word_terms: HashMap<&str, Vec<String>> = HashMap::new();
        for word in doc_words.iter().flatten() {
            word_terms.entry(word.as_str()).or_insert_with(|| {
                let mut out = Vec::new();
                a.word_terms(word, Some(&lexicon), &mut out);
                out
            });
        }
        let per_doc: Vec<Vec<(&str, u32)>> = doc_words
            .iter()
            .map(|words| {
                let mut counts: HashMap<&str, u32> = HashMap::new();
                for term in words.iter().flat_map(|w| &word_terms[w.as_str()]) {
                    *counts.entry(term.as_str()).or_insert(0) += 1;
                }
                let mut counts: Vec<(&str, u32)> = counts.into_iter().collect();
                counts.sort_unstable();
                counts
            })
            .collect();
        let mut terms: Vec<String> = word_terms
            .values()
            .flatten()
            .cloned()
            .collect::<std::collections::HashSet<_>>()
            .into_iter()
            .collect();
        terms.sort_unstable();
        let ids: HashMap<&str, usize> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let mut lists: Vec<Vec<(u32, u32)>> = vec![Vec::new(); terms.len()];
        let mut doc_len = Vec::with_capacity(docs.len());
        for (doc, counts) in per_doc.iter().enumerate() {
            doc_len.push(counts.iter().map(|(_, c)| c).sum());
            for (term, count) in counts {
                lists[ids[term]].push((doc as u32, *count));
            }
        }
        let mut postings = Vec::new();
        let mut offsets = Vec::with_capacity(terms.len() + 1);
        let mut doc_freq = Vec::with_capacity(terms.len());
        for list in &lists {
            offsets.push(postings.len() as u32);
            doc_freq.push(list.len() as u32);
            let mut prev = 0;
            for &(doc, tf) in list {
                write_varint(&mut postings, doc - prev);
                write_varint(&mut postings, tf);
                prev = doc;
            }
        }
        offsets.push(postings.len() as u32);
        let lexicon = terms.iter().map(|t| lexicon.frequency(t)).collect();
        let avg_len =
            (doc_len.iter().map(|&l| f64::from(l)).sum::<f64>() / docs.len().max(1) as f64) as f32;
        Self {
            dictionary: Bm25Dictionary {
                params,
                analyzer,
                terms: Terms::new(&terms),
                lexicon,
                doc_freq,
                doc_len,
                avg_len,
            },
            offsets,
            postings,
        }
    }

    /// Checks a deserialised index: its dictionary, then every posting list against it.
    pub fn check(&self) -> Result<(), Bm25FormatError> {
        self.dictionary.check()?;
        check_offsets(&self.offsets, self.postings.len())?;
        if self.offsets.len() != self.dictionary.num_terms() + 1 {
            return Err(Bm25FormatError(
                "posting lists for terms the dictionary does not have",
            ));
        }
        check_postings(
            &self.offsets,
            &self.postings,
            &self.dictionary.doc_freq,
            self.dictionary.len(),
        )
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.dictionary.len()
    }

    /// Whether no documents are indexed.
    pub fn is_empty(&self) -> bool {
        self.dictionary.is_empty()
    }

    /// Vocabulary size.
    pub fn num_terms(&self) -> usize {
        self.dictionary.num_terms()
    }

    /// Bytes of encoded postings.
    pub fn postings_bytes(&self) -> usize {
        self.postings.len()
    }

    /// The analyzer configuration the index was built with.
    pub fn analyzer(&self) -> AnalyzerConfig {
        self.dictionary.analyzer
    }

    /// The BM25 parameters.
    pub fn params(&self) -> Bm25Params {
        self.dictionary.params
    }

    /// Changes k1/b (they only enter scoring, so no rebuild is needed).
    pub fn set_params(&mut self, params: Bm25Params) {
        self.dictionary.params = params;
    }

    /// The analysed terms of a query, as the index sees them.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.dictionary.query_terms(query)
    }

    /// In how many documents `term` (an index term, e.g. a stem) occurs.
    pub fn doc_freq(&self, term: &str) -> u32 {
        let d = &self.dictionary;
        d.term_id(term).map_or(0, |t| d.doc_freq[t])
    }

    /// BM25 scores of every document for `query` (0 for documents sharing no term).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let terms: Vec<(String, f32)> = self
            .query_terms(query)
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        self.scores_weighted(&terms)
    }

    /// BM25 scores for already analysed terms, each with a weight that scales its contribution (a term listed
    /// twice counts with the sum of its weights; unknown terms are ignored).
    pub fn scores_weighted(&self, terms: &[(String, f32)]) -> Vec<f32> {
        self.dictionary.scores_with(terms, |t| {
            Some(&self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize])
        })
    }

    /// Per group of documents, the share of the weighted, analysed `terms` that occurs in one of its documents
    /// (see [`Bm25Dictionary::coverage_sharded`]); `group_of` gives a document's group, and the documents of one
    /// group must be contiguous (a law's sections are).
    pub fn coverage(
        &self,
        terms: &[(String, f32)],
        group_of: impl Fn(u32) -> u32,
    ) -> HashMap<u32, f32> {
        self.dictionary.coverage_with(
            terms,
            |t| Some(&self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize]),
            group_of,
        )
    }

    /// Splits the index into its dictionary and posting shards of contiguous terms, each about `shard_bytes`
    /// of postings (a term's list is never split, so a very common term may make a shard larger). The shard
    /// holding term `t` is the last whose `first_term` is at most `t`.
    pub fn into_shards(self, shard_bytes: usize) -> (Bm25Dictionary, Vec<PostingShard>) {
        let mut shards = Vec::new();
        let terms = self.dictionary.num_terms();
        let mut first = 0;
        while first < terms {
            let start = self.offsets[first];
            let mut end = first + 1;
            while end < terms && (self.offsets[end + 1] - start) as usize <= shard_bytes {
                end += 1;
            }
            shards.push(PostingShard {
                first_term: first as u32,
                offsets: self.offsets[first..=end]
                    .iter()
                    .map(|o| o - start)
                    .collect(),
                postings: self.postings[start as usize..self.offsets[end] as usize].to_vec(),
            });
            first = end;
        }
        (self.dictionary, shards)
    }

    /// The best `k` documents for `query`, best first; only documents sharing a term with it.
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        top_k(self.scores(query), k)
    }

    /// [`Bm25Index::search`] for weighted, analysed terms (see [`Bm25Index::scores_weighted`]).
    pub fn search_weighted(&self, terms: &[(String, f32)], k: usize) -> Vec<Hit> {
        top_k(self.scores_weighted(terms), k)
    }
}

/// The best `k` positive scores, best first. Unlike [`crate::top_k_scores`] it skips zeros before the heap: BM25
/// scores over many sections are mostly 0, and each would otherwise be pushed.
pub fn top_k(scores: Vec<f32>, k: usize) -> Vec<Hit> {
    let mut top = TopK::new(k);
    for (i, score) in scores.into_iter().enumerate() {
        if score > 0.0 && score >= top.threshold() {
            top.push(Hit {
                index: i as u32,
                score,
            });
        }
    }
    top.into_sorted()
}
#[cfg(test)]
mod tests {
    use super::*;

    const DOCS: [&str; 4] = [
        "§ 536 Mietminderung bei Sach- und Rechtsmängeln. Hat die Mietsache einen Mangel, ist der Mieter von der Entrichtung der Miete befreit.",
        "§ 433 Vertragstypische Pflichten beim Kaufvertrag. Durch den Kaufvertrag wird der Verkäufer einer Sache verpflichtet.",
        "§ 573b Teilkündigung des Vermieters. Der Vermieter kann nicht zum Wohnen bestimmte Nebenräume kündigen.",
        "§ 441 Minderung. Statt zurückzutreten, kann der Käufer den Kaufpreis durch Erklärung gegenüber dem Verkäufer mindern.",
    ];

    #[test]
    fn finds_the_right_section_and_section_numbers() {
        let index = Bm25Index::build(&DOCS, AnalyzerConfig::PLAIN, Bm25Params::default());
        assert_eq!(
            index.search("Kündigung der Nebenräume durch den Vermieter", 1)[0].index,
            2
        );
        assert_eq!(index.search("573b", 10).len(), 1);
        assert_eq!(index.search("Kaufverträge und Verkäufer", 2)[0].index, 1);
        assert!(index.search("Donaudampfschifffahrt", 10).is_empty());
    }

    #[test]
    fn scores_follow_bm25() {
        let docs = ["apfel birne", "apfel apfel apfel kirsche", "birne"];
        let index = Bm25Index::build(&docs, AnalyzerConfig::PLAIN, Bm25Params::default());
        let scores = index.scores("apfel");
        // df = 2, N = 3, avgdl = 7/3.
        let idf = (1.0f32 + (3.0 - 2.0 + 0.5) / (2.0 + 0.5)).ln();
        let expect =
            |tf: f32, dl: f32| idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / (7.0 / 3.0)));
        assert!((scores[0] - expect(1.0, 2.0)).abs() < 1e-6);
        assert!((scores[1] - expect(3.0, 4.0)).abs() < 1e-6);
        assert_eq!(scores[2], 0.0);
        // Repeated query terms count repeatedly.
        let twice = index.scores("apfel apfel");
        assert!((twice[0] - 2.0 * scores[0]).abs() < 1e-6);
    }

    #[test]
    fn coverage_is_the_idf_weighted_share_of_the_query_each_group_holds() {
        // Two groups (laws): documents 0 and 1, and document 2.
        let docs = ["apfel birne", "apfel kirsche", "apfel"];
        let index = Bm25Index::build(&docs, AnalyzerConfig::PLAIN, Bm25Params::default());
        let group = |doc: u32| u32::from(doc == 2);
        let terms: Vec<(String, f32)> = index
            .query_terms("apfel kirsche pflaume")
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        assert_eq!(terms.len(), 3);
        let idf = |df: f32| (1.0f32 + (3.0 - df + 0.5) / (df + 0.5)).ln();
        let (apfel, kirsche) = (idf(3.0), idf(1.0));
        let covered = index.coverage(&terms, group);
        // The first group holds both known terms (the common one in both its documents: counted once); the
        // second only the common one. A term no document has counts for none and weighs nothing.
        assert!((covered[&0] - 1.0).abs() < 1e-6, "{covered:?}");
        assert!((covered[&1] - apfel / (apfel + kirsche)).abs() < 1e-6);
        assert_eq!(covered.len(), 2);
        assert!(index.coverage(&terms[2..], group).is_empty());
        // Over shards, the same; a missing shard is named.
        let (dictionary, shards) = index.into_shards(1);
        let find = |t: u32| shards.iter().find(|s| s.holds(t));
        assert_eq!(
            dictionary.coverage_sharded(&terms, find, group).unwrap(),
            covered
        );
        let needed = dictionary.term_ids(&terms);
        let without = |t: u32| find(t).filter(|s| !s.holds(needed[0]));
        assert_eq!(
            dictionary.coverage_sharded(&terms, without, group),
            Err(needed[0])
        );
    }

    #[test]
    fn decompounding_lets_a_compound_meet_its_phrase() {
        let docs = [
            "Minderung der Miete bei Mängeln der Mietsache. Die Miete ist gemindert.",
            "Die Minderung beim Kauf. Der Käufer kann mindern.",
            "Der Mieter zahlt die Miete.",
        ];
        let plain = Bm25Index::build(&docs, AnalyzerConfig::PLAIN, Bm25Params::default());
        assert!(plain.search("Mietminderung", 10).is_empty());
        let index = Bm25Index::build(&docs, AnalyzerConfig::default(), Bm25Params::default());
        assert_eq!(
            index.query_terms("Mietminderung"),
            ["mietminder", "miet", "minder"]
        );
        assert_eq!(index.search("Mietminderung", 10)[0].index, 0);
    }

    #[test]
    fn shards_score_exactly_like_the_whole_index_and_check_their_parts() {
        let index = Bm25Index::build(&DOCS, AnalyzerConfig::default(), Bm25Params::default());
        let whole = index.clone();
        let query: Vec<(String, f32)> = whole
            .query_terms("Mängel der Mietsache, Minderung beim Kaufvertrag")
            .into_iter()
            .map(|t| (t, 1.0))
            .collect();
        let (dictionary, shards) = index.into_shards(16);
        assert!(shards.len() > 3, "{} shards", shards.len());
        dictionary.check().unwrap();
        let decoded: Bm25Dictionary =
            postcard::from_bytes(&postcard::to_allocvec(&dictionary).unwrap()).unwrap();
        for shard in &shards {
            shard.check(&decoded).unwrap();
        }
        let find = |t: u32| shards.iter().find(|s| s.holds(t));
        assert_eq!(
            decoded.scores_sharded(&query, find).unwrap(),
            whole.scores_weighted(&query)
        );
        // Front coding: umlauts and shared prefixes survive, a damaged coding is refused.
        let words: Vec<String> = ["miet", "miete", "mieter", "mäßig", "mäßigung", "ö", "öl"]
            .map(String::from)
            .to_vec();
        let mut coded = decoded.clone();
        coded.terms = Terms::new(&words);
        coded.lexicon = vec![1; words.len()];
        coded.doc_freq = vec![1; words.len()];
        let bytes = postcard::to_allocvec(&coded).unwrap();
        let back: Bm25Dictionary = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.terms.iter().collect::<Vec<_>>(), words);
        assert_eq!(back.terms.find("mieter"), Some(2));
        assert_eq!(back.terms.find("mietx"), None);
        assert!((1..bytes.len())
            .all(|cut| postcard::from_bytes::<Bm25Dictionary>(&bytes[..cut]).is_err()));
        // A shard the query needs but that is not loaded is named, not skipped.
        let needed = decoded.term_ids(&query);
        let without = |t: u32| find(t).filter(|s| !s.holds(needed[0]));
        assert_eq!(decoded.scores_sharded(&query, without), Err(needed[0]));
        // A shard against another dictionary, or with broken offsets, is refused.
        let mut broken = shards[0].clone();
        broken.offsets[1] = u32::MAX;
        assert_eq!(
            broken.check(&decoded).unwrap_err().to_string(),
            "corrupt BM25 index: posting offsets out of order or range"
        );
        let small = Bm25Index::build(&DOCS[..1], AnalyzerConfig::default(), Bm25Params::default())
            .into_shards(1 << 20)
            .0;
        assert!(shards.iter().any(|s| s.check(&small).is_err()));
    }
}
