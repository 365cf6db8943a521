//! Choosing the law: a list for a handful of laws, a finder for many (all federal law is 6,877). The finder
//! ([`LawFinder`]: abbreviations, title words, the laws' headings) answers `StVO`, `Mietrecht`,
//! `Kündigungsschutz` while typing; a click on a suggestion opens that law.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::finder::LawFinder;
use paragraf_core::manifest::Manifest;

use crate::context::Ctx;

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
    let finder = StoredValue::new_local(LawFinder::new(&manifest.laws));
    let manifest = StoredValue::new_local(manifest);
    let typed = RwSignal::new(String::new());
    let current = move || {
        manifest.with_value(|m| {
            m.law_or_first(&ctx.law.get())
                .map(|l| format!("{} – {}", l.law, l.title))
                .unwrap_or_default()
        })
    };
    let suggestions = move || {
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
                on:input=move |ev| typed.set(event_target_value(&ev))
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
            <ul id="law-suggestions" class="law-suggestions" role="listbox">{suggestions}</ul>
        </div>
    }
}
