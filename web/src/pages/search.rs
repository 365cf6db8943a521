//! The search page.

use leptos::prelude::*;

use crate::app::Ctx;
use crate::components::controls::Controls;
use crate::components::notice::{LoadProgress, ProxyNotice};
use crate::components::results::Results;

/// Controls, notices, and the results of the submitted query.
#[component]
pub fn SearchPage() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Load errors of the manifest and the bundles show even before anyone searches.
    let load_state = move || {
        Suspend::new(async move {
            ctx.manifest.await?;
            let law = ctx
                .law_data
                .await
                .map(|l| (l.entry.law.clone(), l.index.law.active_sections().count()))?;
            let strategy = ctx.strategy_data.await.map(|s| {
                format!(
                    "Strategie {} mit {} Einheiten, Modell {}",
                    s.entry.strategy,
                    s.index.bundle.units.len(),
                    s.entry.model
                )
            })?;
            Ok::<_, crate::fetch::Failure>(view! {
                <p class="loaded" id="loaded">{format!("Bereit: {} ({} Paragrafen/Artikel), {strategy}", law.0, law.1)}</p>
            })
        })
    };
    let results = move || {
        Suspend::new(async move {
            match ctx.results.await {
                None => Ok(
                    view! { <p class="hint">"Enter sucht, die Taste / springt ins Suchfeld."</p> }
                        .into_any(),
                ),
                Some(Ok(outcome)) => Ok(view! { <Results outcome=outcome/> }.into_any()),
                Some(Err(e)) => Err(e),
            }
        })
    };
    view! {
        <Controls/>
        <ProxyNotice/>
        <LoadProgress/>
        <ErrorBoundary fallback=|errors| view! { <ErrorList errors=errors/> }>
            <Transition fallback=|| view! { <p class="loading" role="status">"Lade Bündel …"</p> }>
                {load_state}
            </Transition>
            <Transition fallback=|| view! { <p class="loading" role="status">"Suche …"</p> }>
                <section aria-live="polite" aria-busy=move || ctx.results.get().is_none().to_string()>{results}</section>
            </Transition>
        </ErrorBoundary>
    }
}

/// Every error of a boundary, readable.
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
