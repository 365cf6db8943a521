//! Placeholder for the Leptos app; the web app issue replaces it.
fn main() {}
