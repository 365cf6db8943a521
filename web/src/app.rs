//! The app shell: the shared context from the URL, the URL kept in step with it, the header and the two pages.
//!
//! Mounting runs in two tasks, so neither blocks the page for long on a slow phone: the first builds the context
//! (which starts the manifest's download at once), the next one builds the page and then takes index.html's start
//! screen away, before that frame is painted.

use leptos::prelude::*;
use paragraf_engine::Mode;

use crate::context::Ctx;
use crate::pages::{all_laws::AllLawsPage, search::SearchPage, strategies::StrategiesPage};
use crate::state::{Page, UrlState};

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let ctx = Ctx::new(&UrlState::parse(&search));
    provide_context(ctx);

    // The URL follows the state, so the address can be shared and reloaded.
    Effect::new(move |_| {
        let state = ctx.url_state();
        if let Some(window) = web_sys::window() {
            // Replacing the address costs the browser milliseconds: not when it already says the same.
            let current = window.location().search().unwrap_or_default();
            if UrlState::parse(&current) == state {
                return;
            }
            let path = window.location().pathname().unwrap_or_default();
            if let Ok(history) = window.history() {
                let _ = history.replace_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("{path}{}", state.to_query())),
                );
            }
        }
    });

    // More results belong to the page they were asked on: another page opens with its first page (a memo, so
    // that setting the page it already shows changes nothing).
    let page = Memo::new(move |_| ctx.choices.page.get());
    Effect::watch(
        move || page.get(),
        move |_, _, _| ctx.choices.more.set(false),
        false,
    );

    // The proxy's answer to /health decides whether dense search is possible at all.
    Effect::new(move |_| {
        if let Some(Some(Err(e))) = ctx.vectors.proxy.get() {
            if ctx.choices.mode.get_untracked() != Mode::Bm25 {
                ctx.vectors.proxy_problem.set(Some(e));
            }
        }
    });

    // `/` focuses the search box (unless one is typing somewhere already).
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() != "/" {
            return;
        }
        let document = web_sys::window().and_then(|w| w.document());
        let typing = document
            .as_ref()
            .and_then(|d| d.active_element())
            .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        if let (false, Some(input)) = (typing, document.and_then(|d| d.get_element_by_id("q"))) {
            use wasm_bindgen::JsCast;
            ev.prevent_default();
            if let Ok(input) = input.dyn_into::<web_sys::HtmlElement>() {
                let _ = input.focus();
            }
        }
    });
    // The app lives as long as the page: the listener is never removed.
    std::mem::forget(handle);

    let built = RwSignal::new(false);
    set_timeout(
        move || {
            built.set(true);
            request_animation_frame(remove_start_screen);
        },
        std::time::Duration::ZERO,
    );
    let page = ctx.choices.page;
    move || {
        built.get().then(|| view! {
            <header class="top">
                <a class="brand" href="?" on:click=move |ev| { ev.prevent_default(); page.set(Page::Search); }>"Paragraf"</a>
                <span class="tagline">"Private Suche im Bundesrecht – alles läuft in Ihrem Browser"</span>
                <nav aria-label="Seiten">
                    <a href="?" class:active=move || page.get() == Page::Search
                        on:click=move |ev| { ev.prevent_default(); page.set(Page::Search); }>"Suche"</a>
                    {move || ctx.folder.manifest.get().and_then(|m| m.ok()).is_some_and(|m| m.federal.is_some()).then(|| view! {
                        <a id="nav-all-laws" href="?page=alle" class:active=move || page.get() == Page::AllLaws
                            on:click=move |ev| { ev.prevent_default(); page.set(Page::AllLaws); }>"Alle Gesetze"</a>
                    })}
                    <a href="?page=strategies" class:active=move || page.get() == Page::Strategies
                        on:click=move |ev| { ev.prevent_default(); page.set(Page::Strategies); }>"Strategien"</a>
                </nav>
            </header>
            <main>
                {move || match page.get() {
                    // Every page has one h1 (the strategies page shows its own): screen readers jump to it.
                    Page::Search => view! {
                        <h1 class="visually-hidden">"Suche in einem Gesetz"</h1>
                        <SearchPage/>
                    }.into_any(),
                    Page::Strategies => view! { <StrategiesPage/> }.into_any(),
                    Page::AllLaws => view! {
                        <h1 class="visually-hidden">"Suche in allen Gesetzen"</h1>
                        <AllLawsPage/>
                    }.into_any(),
                }}
            </main>
        })
    }
}

/// Removes index.html's start screen (`#boot`), which the app replaces.
fn remove_start_screen() {
    if let Some(boot) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("boot"))
    {
        boot.remove();
    }
}
