//! Paragraf in the browser: loads the manifest, a law bundle and a strategy bundle, and searches them with
//! `paragraf-engine` (one law) and `paragraf-core` (all laws) compiled to WebAssembly. Only the query text leaves the browser, to the query-embedding proxy,
//! and only for dense and hybrid search.
//!
//! The in-browser query encoder runs in a Web Worker (the `paragraf-worker` crate, a wasm binary of its own);
//! `encoder` is the app's handle on it.
//!
//! `failure`, `state` and `highlight` are platform-free (unit-tested natively); the Leptos app is wasm32-only.
//! Its modules depend in one direction: `app` → `pages` → `components` → `context` → `load` → `fetch`, and
//! all of them may use the platform-free ones; nothing imports back from `app`.

pub mod failure;
pub mod highlight;
pub mod state;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod components;
#[cfg(target_arch = "wasm32")]
mod context;
#[cfg(target_arch = "wasm32")]
mod encoder;
#[cfg(target_arch = "wasm32")]
mod fetch;
#[cfg(target_arch = "wasm32")]
mod load;
#[cfg(target_arch = "wasm32")]
mod pages;
#[cfg(target_arch = "wasm32")]
mod shared;

#[cfg(target_arch = "wasm32")]
pub use app::App;

/// The proxy the app asks when neither the URL nor the settings name one (`PARAGRAF_PROXY_URL` at build time).
pub const DEFAULT_PROXY_URL: &str = match option_env!("PARAGRAF_PROXY_URL") {
    Some(url) => url,
    None => "http://127.0.0.1:8787",
};

/// The bundle folder, relative to the page, when the URL names none (`PARAGRAF_DATA_URL` at build time;
/// `index.html` preloads the default's manifest, so a build with another folder changes that line too).
pub const DEFAULT_DATA_URL: &str = match option_env!("PARAGRAF_DATA_URL") {
    Some(url) => url,
    None => "bundles/",
};

/// Joins a folder URL and a file name.
pub fn join_url(base: &str, file: &str) -> String {
    if base.is_empty() || base.ends_with('/') {
        format!("{base}{file}")
    } else {
        format!("{base}/{file}")
    }
}

/// Human-readable byte count (`1,2 MB`, German decimal comma).
pub fn format_bytes(bytes: u64) -> String {
    let (value, unit) = if bytes >= 1_000_000 {
        (bytes as f64 / 1e6, "MB")
    } else if bytes >= 1_000 {
        (bytes as f64 / 1e3, "kB")
    } else {
        return format!("{bytes} B");
    };
    format!("{value:.1} {unit}").replace('.', ",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_sizes() {
        assert_eq!(join_url("bundles/", "m.json"), "bundles/m.json");
        assert_eq!(
            join_url("https://x.org/b", "m.json"),
            "https://x.org/b/m.json"
        );
        assert_eq!(format_bytes(1_234_567), "1,2 MB");
        assert_eq!(format_bytes(999), "999 B");
    }
}
