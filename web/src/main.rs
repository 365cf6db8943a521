//! Mounts the app, which replaces index.html's start screen (wasm32); natively this binary only says what it is.

#[cfg(target_arch = "wasm32")]
fn main() {
    use leptos::prelude::request_animation_frame;
    console_error_panic_hook::set_once();
    // The app replaces index.html's start screen once a frame with it has been on screen (two animation frames
    // on): on a slow link that has long happened, and a fast one would otherwise swap it out before it was shown
    // (paint timing, which Lighthouse reads, would then miss it). A hidden tab runs no animation frames: there
    // the app mounts at once, so a page opened in the background loads its law meanwhile.
    let hidden = web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden());
    if hidden {
        mount();
    } else {
        request_animation_frame(|| request_animation_frame(mount));
    }
}

/// Mounts the app, which takes the start screen away once its page is built.
#[cfg(target_arch = "wasm32")]
fn mount() {
    leptos::mount::mount_to_body(paragraf_web::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("paragraf-web is the browser app: build it with `trunk build` (see docs/app.md)");
    std::process::exit(2);
}
