//! The in-browser query encoder's Web Worker (wasm32); natively this binary only says what it is.

#[cfg(target_arch = "wasm32")]
fn main() {
    paragraf_worker::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("paragraf-encoder is the browser app's query-encoder worker: `trunk build` builds it (see README)");
    std::process::exit(2);
}
