//! Notices: load progress and the one-time notice that the proxy cannot be used.

use leptos::prelude::*;

use crate::context::Ctx;
use crate::failure::Failure;
use crate::format_bytes;

/// Bundle download progress.
#[component]
pub fn LoadProgress() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    move || {
        ctx.folder.progress.get().map(|(label, done, total)| {
            view! {
                <div class="progress" role="status" aria-live="polite">
                    <label for="load-progress">{format!("Lade {label}: {} von {}", format_bytes(done), format_bytes(total))}</label>
                    <progress id="load-progress" max=total.to_string() value=done.to_string()></progress>
                </div>
            }
        })
    }
}

/// The proxy notice: shown once while the proxy cannot be used, until dismissed or the proxy works again.
#[component]
pub fn ProxyNotice() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let dismissed = RwSignal::new(None::<Failure>);
    move || {
        let problem = ctx.vectors.proxy_problem.get()?;
        if dismissed.get().as_ref() == Some(&problem) {
            return None;
        }
        let text = problem.to_string();
        let shown = if text.ends_with('.') {
            text
        } else {
            format!("{text}.")
        };
        Some(view! {
            <div class="notice" role="status" id="proxy-notice">
                <p>
                    <strong>"Nur lexikalische Suche: "</strong>
                    {shown}
                    " Die Suche läuft mit BM25 weiter, ganz ohne Netz."
                </p>
                <button type="button" on:click=move |_| {
                    ctx.vectors.proxy_problem.set(None);
                    ctx.vectors.proxy.refetch();
                }>"Erneut versuchen"</button>
                <button type="button" aria-label="Hinweis schließen" on:click=move |_| dismissed.set(Some(problem.clone()))><span aria-hidden="true">"×"</span></button>
            </div>
        })
    }
}
