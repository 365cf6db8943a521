//! Choosing the law: a list for a handful of laws, a finder for many (all federal law is 6,877). The finder
//! ([`LawFinder`]: abbreviations, title words, the laws' headings) answers `StVO`, `Mietrecht`,
//! `Kündigungsschutz` while typing; a click on a suggestion opens that law. The headings (the topics file, a few
//! MB over all federal law) are fetched the first time someone uses the finder, not with the page: until they
//! arrive, suggestions come from abbreviations and titles, and a topics file that fails to load is shown while
//! those go on working.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::finder::LawFinder;
use paragraf_core::manifest::Manifest;

use crate::context::Ctx;
use crate::load;

/// Above this many laws the picker is a finder, not a list.
const LIST_MAX_LAWS: usize = 12;

/// Suggestions shown while typing.
const SUGGESTIONS: usize = 8;

/// The law control.
#[component]
pub fn LawPicker() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let manifest = move || ctx.manifest.get().and_then(|m| m.ok());
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
                    let current = ctx.law.get();
                    current == value || (current.is_empty() && value == first)
                }
            };
            view! { <option value=value.clone() selected=selected>{format!("{} – {}", l.law, l.title)}</option> }
        })
        .collect_view();
    view! {
        <label>"Gesetz "
            <select id="law" name="law" on:change=move |ev| ctx.law.set(event_target_value(&ev))>{options}</select>
        </label>
    }
}

/// A search field over the catalogue with suggestions.
#[component]
fn Finder(manifest: Rc<Manifest>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    // Reactive closures must be `Send`: the finder and the catalogue stay on this thread in local storage.
    let finder = StoredValue::new_local(LawFinder::new(&manifest.laws, None));
    let manifest = StoredValue::new_local(manifest);
    let typed = RwSignal::new(String::new());
    // Set by the first focus or keystroke: the topics are fetched then, and the finder rebuilt with them.
    let wanted = RwSignal::new(false);
    let topics = LocalResource::new(move || {
        let (data, wanted, listed) = (ctx.data_url(), wanted.get(), manifest.get_value());
        async move {
            match wanted {
                true => load::topics(data, listed).await,
                false => Ok(None),
            }
        }
    });
    // Whether the finder holds the topics; suggestions are computed again when it changes.
    let with_topics = RwSignal::new(false);
    Effect::new(move |_| {
        if let Some(Ok(Some(file))) = topics.get() {
            manifest.with_value(|m| finder.set_value(LawFinder::new(&m.laws, Some(&file))));
            with_topics.set(true);
        }
    });
    let topics_failure = move || {
        topics
            .get()
            .and_then(|t| t.err())
            .map(|e| view! { <p class="hint" id="law-topics-failed">{format!("Nur Abkürzungen und Titel: {e}")}</p> })
    };
    let current = move || {
        manifest.with_value(|m| {
            m.law_or_first(&ctx.law.get())
                .map(|l| format!("{} – {}", l.law, l.title))
                .unwrap_or_default()
        })
    };
    let suggestions = move || {
        with_topics.track();
        let found = finder.with_value(|f| f.find(&typed.get(), SUGGESTIONS));
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
                                ctx.law.set(name.clone());
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
                on:focus=move |_| wanted.set(true)
                on:input=move |ev| {
                    wanted.set(true);
                    typed.set(event_target_value(&ev));
                }
                on:keydown=move |ev| {
                    // Enter opens the best suggestion instead of submitting the question.
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        let best = finder.with_value(|f| f.find(&typed.get_untracked(), 1));
                        if let Some(&i) = best.first() {
                            ctx.law.set(manifest.with_value(|m| m.laws[i].law.clone()));
                            typed.set(String::new());
                        }
                    }
                }/>
            <ul id="law-suggestions" class="law-suggestions" role="listbox" data-topics=move || with_topics.get().to_string()>{suggestions}</ul>
            {topics_failure}
        </div>
    }
}
