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
        let mut file = paragraf_fs::open_regular(path).map_err(|e| format!("cannot open: {e}"))?;
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
            if from > to || to.checked_add(data_start).is_none_or(|end| end > size) {
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
        let (from, to) = entry.data_offsets;
        let count = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|&n| n.checked_mul(4).is_some())
            .ok_or_else(|| format!("tensor {name} has the shape {shape:?}: too large to read"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file with `header` (JSON) and `data` bytes, written to a fresh temporary path.
    fn file(name: &str, header: &str, data: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "paragraf-safetensors-{}-{name}",
            std::process::id()
        ));
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn hostile_offsets_and_shapes_are_refused_without_overflow() {
        let path = file(
            "offsets",
            r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}}"#,
            &[0; 4],
        );
        let refused = SafeTensors::open(&path).err().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            refused,
            "tensor w lies outside the file (0..18446744073709551615 of 4 data bytes); the file is truncated"
        );

        let huge = [1usize << 32, 1 << 32];
        let path = file(
            "shape",
            r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}"#,
            &[0; 4],
        );
        let mut tensors = SafeTensors::open(&path).unwrap();
        let refused = tensors.f32("w", &huge).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            refused,
            "tensor w has the shape [4294967296, 4294967296]: too large to read"
        );
    }
}
