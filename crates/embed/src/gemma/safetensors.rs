//! A reader for the `safetensors` files of the EmbeddingGemma release: an 8-byte little-endian header length, a
//! JSON header (`name → {dtype, shape, data_offsets}`), then the raw tensor bytes. Only `F32` tensors are read (the
//! release has no others); each is read straight from the file into its final buffer, so loading never holds the
//! 1.2 GB file twice.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Largest JSON header accepted (the release's is ~30 KB).
const MAX_HEADER_BYTES: u64 = 16 << 20;

#[derive(serde::Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: (u64, u64),
}

/// An open safetensors file.
pub struct SafeTensors {
    file: File,
    data_start: u64,
    entries: HashMap<String, Entry>,
}

impl SafeTensors {
    /// Opens the file and checks its header against the file size.
    pub fn open(path: &Path) -> Result<SafeTensors, String> {
        let mut file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|_| "shorter than a safetensors header".to_string())?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER_BYTES || 8 + header_len > size {
            return Err(format!(
                "not a safetensors file (header of {header_len} bytes in a file of {size})"
            ));
        }
        let mut header = vec![0u8; header_len as usize];
        file.read_exact(&mut header).map_err(|e| e.to_string())?;
        let mut raw: HashMap<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| format!("not a safetensors header: {e}"))?;
        raw.remove("__metadata__");
        let data_start = 8 + header_len;
        let mut entries = HashMap::with_capacity(raw.len());
        for (name, value) in raw {
            let entry: Entry = serde_json::from_value(value)
                .map_err(|e| format!("tensor {name}: bad header entry ({e})"))?;
            let (from, to) = entry.data_offsets;
            if from > to || data_start + to > size {
                return Err(format!(
                    "tensor {name} lies outside the file ({from}..{to} of {} data bytes); the file is truncated",
                    size - data_start
                ));
            }
            entries.insert(name, entry);
        }
        Ok(SafeTensors {
            file,
            data_start,
            entries,
        })
    }

    /// Reads an `F32` tensor of exactly `shape`.
    pub fn f32(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let entry = self.entries.get(name).ok_or_else(|| {
            format!("has no tensor {name}: most likely it is not an EmbeddingGemma file")
        })?;
        if entry.dtype != "F32" || entry.shape != shape {
            return Err(format!(
                "tensor {name} is {} {:?}, expected F32 {shape:?}: a model of another architecture",
                entry.dtype, entry.shape
            ));
        }
        let count: usize = shape.iter().product();
        let (from, to) = entry.data_offsets;
        if to - from != count as u64 * 4 {
            return Err(format!(
                "tensor {name} has {} bytes for {count} floats",
                to - from
            ));
        }
        let mut out = vec![0f32; count];
        self.file
            .seek(SeekFrom::Start(self.data_start + from))
            .map_err(|e| e.to_string())?;
        // SAFETY: `out` owns `count` f32 = `count * 4` initialised bytes; any bit pattern is a valid f32.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), count * 4) };
        self.file
            .read_exact(bytes)
            .map_err(|e| format!("tensor {name}: {e}"))?;
        if cfg!(target_endian = "big") {
            out.iter_mut()
                .for_each(|v| *v = f32::from_bits(v.to_bits().swap_bytes()));
        }
        Ok(out)
    }
}
