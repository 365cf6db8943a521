//! The messages between the app and the encoder's Web Worker (platform-free, so both ends and the native tests
//! share one definition). Each message is a JS array: this JSON first, then the one binary payload it carries
//! (the model file's bytes with [`ToWorker::Load`], the vector with [`FromWorker::Vector`]), transferred, not
//! copied.

use paragraf_core::manifest::EncoderEntry;
use serde::{Deserialize, Serialize};

/// Where the worker's loader is, relative to the page (Trunk writes it next to `index.html`).
pub const WORKER_SCRIPT: &str = "paragraf-encoder_loader.js";

/// From the app to the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    /// Check the model file (bytes follow) against its manifest entry, decode it, keep the encoder.
    Load {
        /// The manifest's entry (size, SHA-256, model).
        entry: EncoderEntry,
    },
    /// Embed one question.
    Embed {
        /// Request number, echoed in the answer.
        id: u32,
        /// The question as typed (the worker adds `query: ` and truncates to 510 tokens).
        text: String,
    },
}

/// From the worker to the app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker's wasm is running and listens: messages sent before this would be lost.
    Started,
    /// The encoder is ready.
    Ready {
        /// Time to verify, decode and prepare it (ms).
        ms: f64,
    },
    /// The model file cannot be used (`paragraf-e5`'s or the manifest check's reason).
    Rejected {
        /// Why.
        reason: String,
    },
    /// A question's vector (the f32 values follow).
    Vector {
        /// The request's number.
        id: u32,
        /// Tokens the model read (after truncation).
        tokens: usize,
    },
}

impl ToWorker {
    /// The JSON head of the message.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("messages serialise")
    }
}

impl FromWorker {
    /// The JSON head of the message.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("messages serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let load = ToWorker::Embed {
            id: 7,
            text: "Kündigung „fristlos“ 🏠".into(),
        };
        assert_eq!(
            serde_json::from_str::<ToWorker>(&load.to_json()).unwrap(),
            load
        );
        let vector = FromWorker::Vector { id: 7, tokens: 9 };
        assert_eq!(
            serde_json::from_str::<FromWorker>(&vector.to_json()).unwrap(),
            vector
        );
    }
}
