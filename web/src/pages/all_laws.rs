//! One search over all laws of the folder: the index across laws (`core::federal::files`) is fetched once, each
//! question fetches only its posting shards, and results show law and section at once; each law's text follows
//! from its own law bundle. `gesetze=` in the URL narrows the search to a set of laws.

use leptos::prelude::*;

use crate::components::controls::{Advanced, ModeChoice, SearchRow};
use crate::components::errors::ErrorList;
use crate::components::federal_results::FederalResults;
use crate::components::notice::{LoadProgress, ProxyNotice};
use crate::context::Ctx;
use crate::failure::Failure;
use crate::state::parse_laws;

/// Search box, mode, the set of laws, and the results across laws.
#[component]
pub fn AllLawsPage() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        ctx.submit();
    };
    let load_state = move || {
        Suspend::new(async move {
            let loaded = ctx.all_laws.federal.await?.map(|f| {
                (
                    f.entry.laws,
                    f.entry.sections,
                    f.entry.head.bytes,
                    f.entry.shards.len(),
                    f.verify_ms,
                )
            });
            let Some((laws, sections, bytes, shards, verify_ms)) = loaded else {
                return Err(Failure::NoFederal {
                    url: crate::join_url(&ctx.folder.data_url(), paragraf_core::manifest::MANIFEST),
                });
            };
            Ok::<_, Failure>(view! {
                <p class="loaded" id="federal-loaded" data-verify-ms=format!("{verify_ms:.1}") data-bytes=bytes>
                    {format!(
                        "Bereit: {laws} Gesetze mit {sections} Vorschriften in einem Index ({}; {shards} Teile mit Wortlisten werden je Frage nachgeladen)",
                        crate::format_bytes(bytes)
                    )}
                </p>
            })
        })
    };
    let results = move || {
        Suspend::new(async move {
            match ctx.all_laws.federal_results.await {
                None => Ok(view! {
                    <p class="hint">"Eine Frage durchsucht alle Gesetze auf einmal; Enter sucht."</p>
                }
                .into_any()),
                Some(Ok(outcome)) => Ok(view! { <FederalResults outcome=outcome/> }.into_any()),
                Some(Err(e)) => Err(e),
            }
        })
    };
    let laws_text = move || ctx.choices.laws.get().join(", ");
    view! {
        <form class="search" role="search" on:submit=on_submit>
            <SearchRow placeholder="Frage in Alltagssprache, z. B. „Wie lange darf mein Vermieter die Kaution behalten?“ (Taste /)"/>
            <div class="controls">
                <label title="Abkürzungen, mit Komma getrennt; leer: alle Gesetze">"Nur in "
                    <input id="laws-filter" type="text" autocomplete="off" placeholder="allen Gesetzen"
                        prop:value=laws_text
                        on:change=move |ev| ctx.choices.laws.set(parse_laws(&event_target_value(&ev)))/>
                </label>
            </div>
            <Advanced>
                <div class="controls"><ModeChoice/></div>
            </Advanced>
        </form>
        <ProxyNotice/>
        <LoadProgress/>
        <ErrorBoundary fallback=|errors| view! { <ErrorList errors=errors/> }>
            <Transition fallback=|| view! { <p class="loading" role="status">"Lade Gesamtindex …"</p> }>
                {load_state}
            </Transition>
            <Transition fallback=|| view! { <p class="loading" role="status">"Suche …"</p> }>
                <section aria-live="polite" aria-busy=move || ctx.all_laws.federal_results.get().is_none().to_string()>{results}</section>
            </Transition>
        </ErrorBoundary>
    }
}
