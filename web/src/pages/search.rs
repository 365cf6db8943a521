//! The search page.

use leptos::prelude::*;

use crate::components::controls::Controls;
use crate::components::errors::ErrorList;
use crate::components::notice::{LoadProgress, ProxyNotice};
use crate::components::results::{Results, NO_VECTORS};
use crate::context::Ctx;
use crate::failure::Failure;

/// Controls, notices, and the results of the submitted query.
#[component]
pub fn SearchPage() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Load errors of the manifest and the bundles show even before anyone searches.
    let load_state = move || {
        Suspend::new(async move {
            ctx.folder.manifest.await?;
            // Plain values only across awaits: `Suspend` wants a `Send` future, and the bundles are `Rc`.
            // `None` only for a moment after the page over all laws: the law is on its way.
            let Some((law, sections, law_bytes, law_ms, expansions, learned)) =
                ctx.one_law.law_data.await?.map(|l| {
                    let sections = l.index.law.active_sections().count();
                    (
                        l.entry.law.clone(),
                        sections,
                        l.entry.bytes,
                        l.verify_ms,
                        l.expansions.clone(),
                        l.learned.clone(),
                    )
                })
            else {
                return Ok(None);
            };
            // A law built without strategy bundles (`--strategies none`) has no model: BM25 only.
            let (strategy, model, strategy_bytes, strategy_ms) =
                ctx.one_law.strategy_data.await.map(|s| match s {
                    Some(s) => {
                        let text = format!(
                            "Strategie {} mit {} Einheiten",
                            s.entry.strategy,
                            s.index.bundle.units.len(),
                        );
                        (
                            text,
                            Some(s.entry.model.clone()),
                            s.entry.bytes,
                            s.verify_ms,
                        )
                    }
                    None => (format!("{NO_VECTORS} (nur BM25)"), None, 0, 0.0),
                })?;
            let synonyms = match &expansions {
                Some(Ok(words)) => format!(", Synonyme aus einem Thesaurus mit {words} Wörtern"),
                _ => String::new(),
            };
            let learned_note = match &learned {
                Some(Ok(p)) => format!(
                    ", Rangfolge {}",
                    crate::components::results::learned_label(p)
                ),
                _ => String::new(),
            };
            let learned_problem = learned.and_then(Result::err).map(|failure| {
                view! {
                    <p class="notice" role="status" id="learned-problem">
                        {format!("{failure}. Gerankt wird ohne Gelerntes.")}
                    </p>
                }
            });
            let ready = format!("Bereit: {law} ({sections} Paragrafen/Artikel)");
            // A model used under terms of its own (EmbeddingGemma: the Gemma Terms of Use) links them here.
            let terms = model.as_deref().and_then(paragraf_format::models::terms).map(|terms| {
                view! {
                    " ("
                    <a id="model-terms" href=terms.url target="_blank" rel="noopener">{terms.name}</a>
                    ")"
                }
            });
            // A table that did not load is said once; search runs without expansion.
            let expansion_problem = expansions.and_then(Result::err).map(|failure| {
                view! {
                    <p class="notice" role="status" id="expansion-problem">
                        {format!("{failure}. Gesucht wird ohne Synonyme.")}
                    </p>
                }
            });
            // What checking both files against the manifest cost (read by the end-to-end test).
            let verify_ms = format!("{:.1}", law_ms + strategy_ms);
            let verify_bytes = law_bytes + strategy_bytes;
            Ok::<_, Failure>(Some(view! {
                // The law for everyone; how it is searched (strategy, model, synonyms, learning) one click away.
                <details class="loaded" id="loaded" data-verify-ms=verify_ms data-verify-bytes=verify_bytes>
                    <summary>{ready}</summary>
                    {strategy}{model.map(|m| view! { ", Modell "<span id="model">{m}</span> })}{terms}{synonyms}{learned_note}
                </details>
                {expansion_problem}
                {learned_problem}
            }))
        })
    };
    let results = move || {
        Suspend::new(async move {
            match ctx.one_law.results.await {
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
                <section aria-live="polite" aria-busy=move || ctx.one_law.results.get().is_none().to_string()>{results}</section>
            </Transition>
        </ErrorBoundary>
    }
}
