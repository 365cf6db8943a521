//! EmbeddingGemma's tokenizer, read from the release's `tokenizer.json`: byte-fallback BPE with 262,144 tokens.
//!
//! What the file configures, and what this reader implements (no `tokenizers` crate: it does not build offline
//! here): the 6,415 *added tokens* (`<bos>`, `<eos>`, `<b>`, runs of `\n`/`\t`/`▁`, `<unusedN>` …) are cut out of the
//! raw text first, leftmost-longest; every piece between them is normalised (space → `▁`) and, because the
//! pre-tokenizer splits on a space that normalisation already replaced, merged as one word: characters start as
//! their own tokens (or, when a character is not in the vocabulary, as its UTF-8 bytes `<0xNN>`), then the
//! lowest-ranked adjacent pair is merged until no listed merge applies (ties: leftmost first). `<bos>` … `<eos>`
//! wrap the result. Token ids equal the Hugging Face tokenizer's (tests/parity/gemma_parity.sh checks 70+ texts).

use std::collections::{BinaryHeap, HashMap};

/// Largest `tokenizer.json` accepted (the release's is 33 MB).
pub const MAX_TOKENIZER_BYTES: usize = 128 << 20;

/// The tokenizer.
pub struct Bpe {
    vocab: HashMap<String, u32>,
    /// `(left id, right id)` → `(rank, merged id)`.
    merges: HashMap<(u32, u32), (u32, u32)>,
    /// Added tokens by content, matched on the raw text.
    added: HashMap<String, u32>,
    /// Characters an added token can start with, and the longest added token in characters.
    added_first: Vec<char>,
    added_max_chars: usize,
    byte_tokens: [u32; 256],
    unk: u32,
    bos: u32,
    eos: u32,
}

#[derive(serde::Deserialize)]
struct File {
    added_tokens: Vec<AddedToken>,
    model: Model,
}

#[derive(serde::Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
}

#[derive(serde::Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    merges: Vec<(String, String)>,
    #[serde(default)]
    byte_fallback: bool,
    unk_token: Option<String>,
}

impl Bpe {
    /// Parses `tokenizer.json`; the error says what is missing.
    pub fn from_json(bytes: &[u8]) -> Result<Bpe, String> {
        if bytes.len() > MAX_TOKENIZER_BYTES {
            return Err(format!(
                "{} bytes, more than the {MAX_TOKENIZER_BYTES} a tokenizer.json may have",
                bytes.len()
            ));
        }
        let file: File =
            serde_json::from_slice(bytes).map_err(|e| format!("not a tokenizer.json: {e}"))?;
        let m = file.model;
        if m.kind != "BPE" || !m.byte_fallback {
            return Err(format!(
                "a {} model (byte fallback {}); EmbeddingGemma's is BPE with byte fallback",
                m.kind, m.byte_fallback
            ));
        }
        let id = |s: &str| {
            m.vocab
                .get(s)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {s:?}"))
        };
        let mut byte_tokens = [0u32; 256];
        for (b, slot) in byte_tokens.iter_mut().enumerate() {
            *slot = id(&format!("<0x{b:02X}>"))?;
        }
        let unk = id(m.unk_token.as_deref().unwrap_or("<unk>"))?;
        let mut merges = HashMap::with_capacity(m.merges.len());
        for (rank, (a, b)) in m.merges.iter().enumerate() {
            let merged = id(&format!("{a}{b}"))?;
            merges
                .entry((id(a)?, id(b)?))
                .or_insert((rank as u32, merged));
        }
        let added: HashMap<String, u32> = file
            .added_tokens
            .into_iter()
            .map(|t| (t.content, t.id))
            .collect();
        let bos = *added.get("<bos>").ok_or("no <bos> token")?;
        let eos = *added.get("<eos>").ok_or("no <eos> token")?;
        let mut added_first: Vec<char> = added.keys().filter_map(|k| k.chars().next()).collect();
        added_first.sort_unstable();
        added_first.dedup();
        let added_max_chars = added.keys().map(|k| k.chars().count()).max().unwrap_or(0);
        Ok(Bpe {
            vocab: m.vocab,
            merges,
            added,
            added_first,
            added_max_chars,
            byte_tokens,
            unk,
            bos,
            eos,
        })
    }

    /// `<bos>` id.
    pub fn bos(&self) -> u32 {
        self.bos
    }

    /// `<eos>` id.
    pub fn eos(&self) -> u32 {
        self.eos
    }

    /// Token ids of `text` without `<bos>`/`<eos>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 2);
        let mut plain_from = 0;
        let mut i = 0;
        while i < text.len() {
            let c = text[i..].chars().next().expect("inside the text");
            if let Some((len, id)) = self.added_at(&text[i..], c) {
                self.encode_plain(&text[plain_from..i], &mut ids);
                ids.push(id);
                i += len;
                plain_from = i;
            } else {
                i += c.len_utf8();
            }
        }
        self.encode_plain(&text[plain_from..], &mut ids);
        ids
    }

    /// `<bos>` + [`Bpe::encode`] + `<eos>`.
    pub fn encode_with_specials(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.bos];
        ids.extend(self.encode(text));
        ids.push(self.eos);
        ids
    }

    /// The longest added token at the start of `rest` (byte length, id).
    fn added_at(&self, rest: &str, first: char) -> Option<(usize, u32)> {
        if self.added_first.binary_search(&first).is_err() {
            return None;
        }
        let ends: Vec<usize> = rest
            .char_indices()
            .skip(1)
            .map(|(at, _)| at)
            .chain(std::iter::once(rest.len()))
            .take(self.added_max_chars)
            .collect();
        ends.iter()
            .rev()
            .find_map(|&end| self.added.get(&rest[..end]).map(|&id| (end, id)))
    }

    /// BPE over one piece of text between added tokens.
    fn encode_plain(&self, piece: &str, out: &mut Vec<u32>) {
        if piece.is_empty() {
            return;
        }
        let normalised = piece.replace(' ', "\u{2581}");
        let mut symbols: Vec<u32> = Vec::with_capacity(normalised.len());
        let mut buf = [0u8; 4];
        for c in normalised.chars() {
            match self.vocab.get(c.encode_utf8(&mut buf) as &str) {
                Some(&id) => symbols.push(id),
                None => symbols.extend(c.to_string().bytes().map(|b| self.byte_tokens[b as usize])),
            }
        }
        self.merge(&mut symbols);
        // Byte fallback covers every character, so `unk` only appears when the vocabulary itself maps to it.
        let mut last_unk = false;
        for id in symbols {
            if id == self.unk && last_unk {
                continue;
            }
            last_unk = id == self.unk;
            out.push(id);
        }
    }

    /// Applies merges, lowest rank first, leftmost on ties, over a doubly linked list of symbols.
    fn merge(&self, symbols: &mut Vec<u32>) {
        let n = symbols.len();
        if n < 2 {
            return;
        }
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut alive = vec![true; n];
        // Min-heap on (rank, position) via Reverse; entries are re-checked when popped.
        let mut heap = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<_>, symbols: &[u32], i: usize, j: usize| {
            if let Some(&(rank, id)) = self.merges.get(&(symbols[i], symbols[j])) {
                heap.push(std::cmp::Reverse((rank, i, j, id)));
            }
        };
        for i in 0..n - 1 {
            push(&mut heap, symbols, i, i + 1);
        }
        while let Some(std::cmp::Reverse((_, i, j, id))) = heap.pop() {
            if !alive[i] || !alive[j] || next[i] != j {
                continue;
            }
            if self.merges.get(&(symbols[i], symbols[j])).map(|m| m.1) != Some(id) {
                continue;
            }
            symbols[i] = id;
            alive[j] = false;
            next[i] = next[j];
            if next[j] < n {
                prev[next[j]] = i;
            }
            if prev[i] < n {
                push(&mut heap, symbols, prev[i], i);
            }
            if next[i] < n {
                push(&mut heap, symbols, i, next[i]);
            }
        }
        let mut k = 0;
        for i in 0..n {
            if alive[i] {
                symbols[k] = symbols[i];
                k += 1;
            }
        }
        symbols.truncate(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny tokenizer.json in the release's shape: byte tokens, a few pieces, ranked merges, added tokens.
    fn tiny() -> Bpe {
        let mut vocab: Vec<(String, u32)> = ["<pad>", "<eos>", "<bos>", "<unk>"]
            .iter()
            .enumerate()
            .map(|(i, t)| (t.to_string(), i as u32))
            .collect();
        vocab.extend((0..256).map(|b| (format!("<0x{b:02X}>"), 4 + b)));
        for piece in ["a", "b", "c", "▁", "ab", "bc", "▁a", "▁ab", "abc"] {
            vocab.push((piece.to_string(), vocab.len() as u32));
        }
        vocab.push(("<b>".into(), vocab.len() as u32));
        let json = serde_json::json!({
            "added_tokens": [
                {"id": 0, "content": "<pad>"}, {"id": 1, "content": "<eos>"}, {"id": 2, "content": "<bos>"},
                {"id": 3, "content": "<unk>"}, {"id": vocab.len() - 1, "content": "<b>"}
            ],
            "model": {
                "type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
                "vocab": vocab.iter().cloned().collect::<HashMap<String, u32>>(),
                // "bc" outranks "ab": in "abc" the merge of b+c happens first, so no "ab" remains to form "abc".
                "merges": [["b", "c"], ["a", "b"], ["▁", "a"], ["▁a", "b"], ["ab", "c"]]
            }
        });
        Bpe::from_json(json.to_string().as_bytes()).unwrap()
    }

    fn pieces(bpe: &Bpe, text: &str) -> Vec<String> {
        let names: HashMap<u32, &String> = bpe.vocab.iter().map(|(k, &v)| (v, k)).collect();
        bpe.encode(text)
            .iter()
            .map(|id| names[id].clone())
            .collect()
    }

    #[test]
    fn merges_by_rank_then_leftmost() {
        let bpe = tiny();
        assert_eq!(pieces(&bpe, "abc"), ["a", "bc"]);
        // a+b (rank 1) beats ▁+a (rank 2), and no merge joins ▁ with ab.
        assert_eq!(pieces(&bpe, "ab ab"), ["ab", "▁", "ab"]);
        assert_eq!(pieces(&bpe, " a"), ["▁a"]);
        assert_eq!(pieces(&bpe, "abab"), ["ab", "ab"]);
    }

    #[test]
    fn added_tokens_cut_first_and_bytes_fall_back() {
        let bpe = tiny();
        assert_eq!(pieces(&bpe, "a<b>b"), ["a", "<b>", "b"]);
        assert_eq!(pieces(&bpe, "<eos>"), ["<eos>"]);
        // "ä" is not in the vocabulary: its two UTF-8 bytes.
        assert_eq!(pieces(&bpe, "ä"), ["<0xC3>", "<0xA4>"]);
        assert_eq!(
            bpe.encode_with_specials("a"),
            vec![bpe.bos(), bpe.encode("a")[0], bpe.eos()]
        );
        assert!(bpe.encode("").is_empty());
    }

    #[test]
    fn foreign_files_are_refused() {
        let err = |json: &[u8]| Bpe::from_json(json).err().expect("refused");
        assert!(err(b"{}").starts_with("not a tokenizer.json"));
        let unigram = serde_json::json!({"added_tokens": [], "model": {"type": "Unigram", "vocab": {}, "merges": []}});
        assert_eq!(
            err(unigram.to_string().as_bytes()),
            "a Unigram model (byte fallback false); EmbeddingGemma's is BPE with byte fallback"
        );
    }
}
