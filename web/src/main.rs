//! Mounts the app (wasm32); natively this binary only says what it is.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(paragraf_web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("paragraf-web is the browser app: build it with `trunk build` (see docs/app.md)");
    std::process::exit(2);
}
