//! Results across laws: law and section at once (from the index), the section's text as soon as its law bundle
//! arrives. Each law is fetched once per result list; a law that cannot be loaded says so in its own results,
//! named, and the others show their text.

use std::collections::HashMap;
use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::results::{excerpt, term_spans, Excerpt, LawCount};
use paragraf_law::Law;

use crate::components::results::{mode_label, more_results, vector_note};
use crate::context::Ctx;
use crate::failure::Failure;
use crate::load::{self, FederalOutcome, FederalResult, FederalVectorsNow};
use crate::state::Page;

/// The list for one search across laws.
#[component]
pub fn FederalResults(outcome: Rc<FederalOutcome>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let data = ctx.folder.data_url();
    // BM25 while the vectors arrive (the search runs again then), or because they cannot be loaded.
    let (vectors, vector_part, vectors_problem) = match &outcome.vectors {
        FederalVectorsNow::Ready(_) => ("ready", vector_note(outcome.embedded.as_ref()), None),
        FederalVectorsNow::Loading { bytes, .. } => (
            "loading",
            format!(
                " · Vektoren aller Gesetze laden ({}), bis dahin BM25",
                crate::format_bytes(*bytes)
            ),
            None,
        ),
        FederalVectorsNow::Failed(failure) => (
            "failed",
            vector_note(None),
            Some(format!(
                "Vektoren aller Gesetze nicht geladen: {failure}. Die Suche läuft lexikalisch (BM25)."
            )),
        ),
    };
    let routed = if outcome.laws_searched > 1 {
        " · nach Gesetz geordnet"
    } else {
        ""
    };
    let meta = format!(
        "{} Treffer in {} Gesetzen · {}{routed} · Suche im Browser {:.1} ms · {} Indexteile ({} nachgeladen){vector_part}",
        outcome.results.len(),
        outcome.laws_searched,
        mode_label(outcome.mode),
        outcome.retrieval_ms,
        outcome.shards_needed,
        crate::format_bytes(outcome.shard_bytes),
    );
    // One download per law of the list.
    let mut texts: HashMap<String, LocalResource<Result<Rc<Law>, Failure>>> = HashMap::new();
    for result in &outcome.results {
        texts.entry(result.law.law.clone()).or_insert_with(|| {
            let (data, entry) = (data.clone(), result.law.clone());
            LocalResource::new(move || load::law_text(data.clone(), entry.clone()))
        });
    }
    let items = outcome
        .results
        .iter()
        .map(|result| {
            let text = texts[&result.law.law];
            view! { <FederalItem result=result text=text question=outcome.question.clone()/> }
        })
        .collect_view();
    let empty = outcome.results.is_empty();
    let more = more_results(ctx, outcome.more, outcome.results.len());
    // Each law's share of the list, most first; a click narrows the search to it (`gesetze=` in the URL).
    let counts = LawCount::tally(
        outcome
            .results
            .iter()
            .map(|r| (r.law.law.as_str(), r.law.title.as_str())),
    );
    let facets = (counts.len() > 1).then(|| {
        let buttons = counts
            .into_iter()
            .map(|c| {
                let law = c.law.clone();
                view! {
                    <li><button type="button" class="facet" data-law=c.law.clone() title=c.title
                        on:click=move |_| ctx.choices.laws.set(vec![law.clone()])>{format!("{} {}", c.law, c.hits)}</button></li>
                }
            })
            .collect_view();
        view! { <ul class="facets" id="law-facets" aria-label="Treffer je Gesetz">{buttons}</ul> }
    });
    let named = outcome.named.clone().map(|law| {
        let (name, title) = (law.law.clone(), law.title.clone());
        view! {
            <p class="named-law" id="named-law">"Meinten Sie das Gesetz "
                <button type="button" class="only-law" data-law=name.clone()
                    on:click=move |_| ctx.choices.laws.set(vec![name.clone()])>{format!("{} ({title})", law.law)}</button>
                "? Ein Klick sucht nur dort."</p>
        }
    });
    // The app's linear memory now (the index, shards and loaded laws live there), for the cold-start benchmark.
    let wasm_bytes = {
        use wasm_bindgen::JsCast;
        wasm_bindgen::memory()
            .unchecked_into::<js_sys::WebAssembly::Memory>()
            .buffer()
            .unchecked_into::<js_sys::ArrayBuffer>()
            .byte_length()
    };
    view! {
        <p class="meta" id="result-meta" data-retrieval-ms=format!("{:.3}", outcome.retrieval_ms)
            data-mode=outcome.mode.name() data-search=outcome.number data-shards=outcome.shards_needed
            data-shard-bytes=outcome.shard_bytes data-wasm-bytes=wasm_bytes data-vectors=vectors>{meta}</p>
        {vectors_problem.map(|why| view! { <p class="law-problem" id="vectors-problem" role="status">{why}</p> })}
        {named}
        {facets}
        {empty.then(|| view! { <p class="empty">"Keine Treffer. Andere Wörter versuchen oder die Auswahl der Gesetze leeren."</p> })}
        <ol class="results federal" aria-label="Ergebnisse">{items}</ol>
        {more}
    }
}

/// One section: law and heading, a link that opens the law with the same question, and its text.
#[component]
fn FederalItem<'a>(
    result: &'a FederalResult,
    text: LocalResource<Result<Rc<Law>, Failure>>,
    question: String,
) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let law = result.law.law.clone();
    let section = result.section as usize;
    let heading = format!("{} {}", law, result.designation);
    let (open, only) = (law.clone(), law.clone());
    // Heading and text arrive with the law's bundle.
    let snippet = move || {
        let (law, question) = (law.clone(), question.clone());
        Suspend::new(async move {
            // Plain values only across the await (`Suspend` wants a `Send` future).
            let shown: Result<Option<(String, Excerpt)>, String> = match text.await {
                // Around the question's first word, its words marked, as `paragraf search` shows it.
                Ok(l) => Ok(l
                    .sections
                    .get(section)
                    .map(|s| (s.title.clone(), excerpt(s, &term_spans(&s.text, &question))))),
                Err(failure) => Err(failure.to_string()),
            };
            match shown {
                Ok(Some((title, e))) => view! {
                    <p class="section-title">{title}</p>
                    <p class="snippet">{marked(&e)}</p>
                }
                .into_any(),
                Ok(None) => ().into_any(),
                Err(why) => view! {
                    <p class="law-problem" role="status">{format!("Text von {law} nicht geladen: {why}")}</p>
                }
                .into_any(),
            }
        })
    };
    view! {
        <li class="hit" data-law=result.law.law.clone() data-section=result.designation.clone()
            data-score=format!("{:.4}", result.score)>
            // h2 as on the search page: the page's h1 comes right before (headings keep their order).
            <h2>
                <a class="open-law" href=format!("?law={}", crate::state::encode(&open))
                    on:click=move |ev| {
                        ev.prevent_default();
                        ctx.choices.law.set(open.clone());
                        ctx.choices.page.set(Page::Search);
                    }>{heading}</a>
            </h2>
            <p class="law-title">
                {result.law.title.clone()}
                " "
                <button type="button" class="only-law" on:click=move |_| ctx.choices.laws.set(vec![only.clone()])>"nur hier suchen"</button>
            </p>
            <Suspense fallback=|| view! { <p class="snippet loading">"Text wird geladen …"</p> }>{snippet}</Suspense>
        </li>
    }
}

/// An excerpt as text with its highlights marked, "…" where text was left out.
fn marked(e: &Excerpt) -> impl IntoView {
    let text = e.text.as_str();
    let mut parts = Vec::new();
    let mut at = 0;
    for &(a, b) in &e.highlights {
        let (a, b) = (a as usize, b as usize);
        parts.push(text[at..a].to_string().into_any());
        parts.push(view! { <mark class="term">{text[a..b].to_string()}</mark> }.into_any());
        at = b;
    }
    parts.push(text[at..].to_string().into_any());
    view! {
        {e.cut_start.then_some("… ")}
        {parts}
        {e.cut_end.then_some(" …")}
    }
}
