//! The in-browser query encoder's Web Worker: `worker` runs the e5 encoder off the page's main thread (the
//! `paragraf-encoder` binary is its entry), `protocol` is the messages between it and the app (`paragraf-web`'s
//! `encoder` module holds the app's end).
//!
//! `protocol` is platform-free (unit-tested natively); the worker itself is wasm32-only.

pub mod protocol;

#[cfg(target_arch = "wasm32")]
pub mod worker;
