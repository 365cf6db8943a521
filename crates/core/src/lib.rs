//! Paragraf core.
