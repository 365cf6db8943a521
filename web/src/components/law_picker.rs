//! Choosing the law: a list for a handful of laws, a finder for many (all federal law is 6,877). The finder
//! ([`LawFinder`]: abbreviations, title words, the laws' headings) answers `StVO`, `Mietrecht`,
//! `Kündigungsschutz` while typing; a click on a suggestion opens that law. The headings (the topics file, a few
//! MB over all federal law) are fetched the first time someone uses the finder, not with the page, and kept for
//! the page's life: until they arrive, suggestions come from abbreviations and titles, and a topics file that
//! fails to load is shown while those go on working.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::finder::LawFinder;
use paragraf_core::manifest::Manifest;

use crate::context::Ctx;
use crate::failure::Failure;

/// Above this many laws the picker is a finder, not a list.
const LIST_MAX_LAWS: usize = 12;

/// Suggestions shown while typing.
const SUGGESTIONS: usize = 8;

/// The law control.
#[component]
pub fn LawPicker() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let manifest = move || ctx.folder.manifest.get().and_then(|m| m.ok());
    move || match manifest() {
        Some(m) if m.laws.len() > LIST_MAX_LAWS => view! { <Finder manifest=m/> }.into_any(),
        Some(m) => view! { <List manifest=m/> }.into_any(),
        None => view! { <List manifest=Rc::new(Manifest::default())/> }.into_any(),
    }
}

/// Every law as an option.
#[component]
fn List(manifest: Rc<Manifest>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let first = manifest
        .laws
        .first()
        .map(|f| f.law.clone())
        .unwrap_or_default();
    let options = manifest
        .laws
        .iter()
        .map(|l| {
            let value = l.law.clone();
            let first = first.clone();
            let selected = {
                let value = value.clone();
                move || {
                    let current = ctx.choices.law.get();
                    current == value || (current.is_empty() && value == first)
                }
            };
            view! { <option value=value.clone() selected=selected>{format!("{} – {}", l.law, l.title)}</option> }
        })
        .collect_view();
    view! {
        <label>"Gesetz "
            <select id="law" name="law" on:change=move |ev| ctx.choices.law.set(event_target_value(&ev))>{options}</select>
        </label>
    }
}

/// A search field over the catalogue with suggestions: abbreviations and titles at once, the laws' headings as
/// soon as the topics file (fetched on first use, kept in [`Ctx::law_finder`]) is in.
#[component]
fn Finder(manifest: Rc<Manifest>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Reactive closures must be `Send`: the finder and the catalogue stay on this thread in local storage.
    let bare = StoredValue::new_local(LawFinder::new(&manifest.laws, None));
    let manifest = StoredValue::new_local(manifest);
    let typed = RwSignal::new(String::new());
    let want_topics = move || {
        if !ctx.all_laws.topics_wanted.get_untracked() {
            ctx.all_laws.topics_wanted.set(true);
        }
    };
    let find = move |finder: Option<Result<Option<Rc<LawFinder>>, Failure>>, query: &str, k| {
        match finder {
            Some(Ok(Some(finder))) => finder.find(query, k),
            _ => bare.with_value(|f| f.find(query, k)),
        }
    };
    let with_topics = move || matches!(ctx.all_laws.law_finder.get(), Some(Ok(Some(_))));
    let topics_failure = move || {
        ctx.all_laws.law_finder.get().and_then(|t| t.err()).map(|e| {
            view! { <p class="hint" id="law-topics-failed">{format!("Nur Abkürzungen und Titel: {e}")}</p> }
        })
    };
    let current = move || {
        manifest.with_value(|m| {
            m.law_or_first(&ctx.choices.law.get())
                .map(|l| format!("{} – {}", l.law, l.title))
                .unwrap_or_default()
        })
    };
    let suggestions = move || {
        let found = find(ctx.all_laws.law_finder.get(), &typed.get(), SUGGESTIONS);
        manifest.with_value(|m| {
            found
                .into_iter()
                .map(|i| {
                    let law = &m.laws[i];
                    let name = law.law.clone();
                    let label = format!("{} – {} · {} Vorschriften", law.law, law.title, law.sections);
                    view! {
                        <li>
                            <button type="button" class="law-suggestion" data-law=name.clone() on:click=move |_| {
                                ctx.choices.law.set(name.clone());
                                typed.set(String::new());
                            }>{label}</button>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <div class="law-finder">
            <label for="law-finder">"Gesetz "</label>
            <span id="law-current">{current}</span>
            <input id="law-finder" type="search" autocomplete="off" aria-controls="law-suggestions"
                placeholder="anderes Gesetz suchen: StVO, Mietrecht, Kündigungsschutz …"
                prop:value=move || typed.get()
                on:focus=move |_| want_topics()
                on:input=move |ev| {
                    want_topics();
                    typed.set(event_target_value(&ev));
                }
                on:keydown=move |ev| {
                    // Enter opens the best suggestion instead of submitting the question.
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        let best = find(ctx.all_laws.law_finder.get_untracked(), &typed.get_untracked(), 1);
                        if let Some(&i) = best.first() {
                            ctx.choices.law.set(manifest.with_value(|m| m.laws[i].law.clone()));
                            typed.set(String::new());
                        }
                    }
                }/>
            <ul id="law-suggestions" class="law-suggestions" role="listbox" data-topics=move || with_topics().to_string()>{suggestions}</ul>
            {topics_failure}
        </div>
    }
}
