//! The error box of an `<ErrorBoundary>`: every error it caught, readable.

use leptos::prelude::*;

/// Every error of a boundary.
#[component]
pub fn ErrorList(errors: ArcRwSignal<Errors>) -> impl IntoView {
    view! {
        <div class="error" role="alert" id="error">
            <strong>"Fehler: "</strong>
            <ul>
                {move || errors.get().into_iter().map(|(_, e)| view! { <li>{e.to_string()}</li> }).collect_view()}
            </ul>
        </div>
    }
}
