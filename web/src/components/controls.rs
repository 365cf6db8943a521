//! The search box and the controls: law, strategy (all 21), mode, synonyms on/off, exact/HNSW, where the query
//! vector is computed, proxy address.

use leptos::prelude::*;
use paragraf_engine::{Mode, UnitSearch};
use paragraf_format::strategy::Strategy;

use crate::components::law_picker::LawPicker;
use crate::components::results::NO_VECTORS;
use crate::context::{save_proxy_url, Ctx};
use crate::state::EncoderChoice;

/// The search box and its button (inside a page's form, whose submit runs [`Ctx::submit`]).
#[component]
pub fn SearchRow(placeholder: &'static str) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    view! {
        <label for="q" class="visually-hidden">"Suchanfrage"</label>
        <div class="searchrow">
            <input id="q" name="q" type="search" autocomplete="off" enterkeyhint="search"
                placeholder=placeholder
                prop:value=move || ctx.choices.input.get()
                on:input=move |ev| ctx.choices.input.set(event_target_value(&ev))/>
            <button type="submit">"Suchen"</button>
        </div>
    }
}

/// Hybrid, dense or BM25 (this page and the one over all laws). Bundles without vectors (`--strategies none`)
/// leave BM25 only: the other two are shown disabled, with why.
#[component]
pub fn ModeChoice() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let lexical_only = move || {
        ctx.folder
            .manifest
            .get()
            .and_then(|m| m.ok())
            .is_some_and(|m| !m.has_vectors())
    };
    let mode_radio = move |mode: Mode, label: &'static str, hint: &'static str| {
        view! {
            <label title=hint>
                <input type="radio" name="mode" value=mode.name()
                    prop:checked=move || mode == if lexical_only() { Mode::Bm25 } else { ctx.choices.mode.get() }
                    disabled=move || mode != Mode::Bm25 && lexical_only()
                    on:change=move |_| ctx.choices.mode.set(mode)/>
                {label}
            </label>
        }
    };
    view! {
        <fieldset class="modes">
            <legend>"Verfahren"</legend>
            {mode_radio(Mode::Hybrid, "Hybrid", "BM25 und Vektoren, per Reciprocal Rank Fusion vereint")}
            {mode_radio(Mode::Dense, "Dicht", "Nur Vektoren (Anfragevektor vom Einbettungsdienst oder im Browser berechnet)")}
            {mode_radio(Mode::Bm25, "BM25", "Nur lexikalisch, ohne jedes Netz")}
            <Show when=lexical_only>
                <span class="hint" id="no-vectors">{format!("Diese Bündel: {NO_VECTORS}, nur BM25.")}</span>
            </Show>
        </fieldset>
    }
}

/// "Erweitert": the researcher's controls, closed by default so that a first screen shows the question, the law
/// and the results; open or closed is kept in the URL (`erweitert=an`). Its summary names the settings that differ
/// from the defaults, so a shared link's choices are never hidden without a word.
#[component]
pub fn Advanced(children: Children) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let changed = move || {
        let mut changed = Vec::new();
        if ctx.choices.mode.get() != Mode::default() {
            changed.push(ctx.choices.mode.get().name().to_string());
        }
        let strategy = ctx.choices.strategy.get();
        if !strategy.is_empty() && strategy != "section" {
            changed.push(strategy);
        }
        if !ctx.choices.expand.get() {
            changed.push("ohne Synonyme".to_string());
        }
        if ctx.choices.graph.get() {
            changed.push("Verweisgraph".to_string());
        }
        if ctx.choices.unit_search.get() != UnitSearch::default() {
            changed.push(ctx.choices.unit_search.get().name().to_string());
        }
        if changed.is_empty() {
            String::new()
        } else {
            format!(" ({})", changed.join(", "))
        }
    };
    view! {
        <details id="advanced" class="advanced" prop:open=move || ctx.choices.advanced.get()
            on:toggle=move |ev| {
                let open = event_target::<web_sys::HtmlDetailsElement>(&ev).open();
                if open != ctx.choices.advanced.get_untracked() {
                    ctx.choices.advanced.set(open);
                }
            }>
            <summary>"Erweitert" <span class="hint">{changed}</span></summary>
            {children()}
        </details>
    }
}

/// The form.
#[component]
pub fn Controls() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        ctx.submit();
    };
    let built = move || -> Vec<String> {
        let manifest = ctx.folder.manifest.get().and_then(|m| m.ok());
        let law = ctx.choices.law.get();
        manifest
            .map(|m| {
                let law = m
                    .law_or_first(&law)
                    .map(|l| l.law.clone())
                    .unwrap_or_default();
                m.bundles_of(&law).map(|b| b.strategy.clone()).collect()
            })
            .unwrap_or_default()
    };
    let current_strategy = move || {
        let s = ctx.choices.strategy.get();
        if s.is_empty() {
            "section".to_string()
        } else {
            s
        }
    };
    let strategies = move || {
        let built = built();
        Strategy::all()
            .into_iter()
            .map(|s| {
                let name = s.name();
                let available = built.contains(&name);
                let label = if available {
                    name.clone()
                } else {
                    format!("{name} (nicht gebaut)")
                };
                let selected = {
                    let name = name.clone();
                    move || current_strategy() == name
                };
                view! {
                    <option value=name.clone() disabled=!available title=s.description() selected=selected>{label}</option>
                }
            })
            .collect_view()
    };
    let description = move || {
        let current = current_strategy();
        Strategy::all()
            .into_iter()
            .find(|s| s.name() == current)
            .map(|s| s.description())
            .unwrap_or_default()
    };
    let proxy_draft = RwSignal::new(ctx.vectors.proxy_url.get_untracked());
    view! {
        <form class="search" role="search" on:submit=on_submit>
            <SearchRow placeholder="Frage oder Zitat, z. B. „Meinungsfreiheit“ oder „Art. 1 GG“ (Taste /)"/>
            <div class="controls">
                <LawPicker/>
            </div>
            <Advanced>
            <div class="controls">
                <label>"Strategie "
                    <select id="strategy" name="s" aria-describedby="strategy-description"
                        on:change=move |ev| ctx.choices.strategy.set(event_target_value(&ev))>{strategies}</select>
                </label>
                <ModeChoice/>
                <label title="Alltagswörter auch in der Sprache des Gesetzes suchen (Kaution → Sicherheitsleistung)">
                    <input id="expand" type="checkbox" prop:checked=move || ctx.choices.expand.get()
                        on:change=move |ev| ctx.choices.expand.set(event_target_checked(&ev))/>
                    " Synonyme"
                </label>
                <label title="Treffer, die viele Treffer zitieren oder von ihnen zitiert werden, steigen (Gewicht per Kreuzvalidierung gewählt)">
                    <input id="graph" type="checkbox" prop:checked=move || ctx.choices.graph.get()
                        on:change=move |ev| ctx.choices.graph.set(event_target_checked(&ev))/>
                    " Verweisgraph"
                </label>
                <Show when=move || ctx.folder.manifest.get().and_then(Result::ok).is_some_and(|m| m.learned.is_some())>
                    <label title="Rangfolge mit dem, was aus früheren Laienfragen gelernt wurde (welche Paragrafen gefragt sind, ähnliche Fragen)">
                        <input id="learning" type="checkbox" prop:checked=move || ctx.choices.learning.get()
                            on:change=move |ev| ctx.choices.learning.set(event_target_checked(&ev))/>
                        " Gelerntes"
                    </label>
                </Show>
                <label>"Einheitensuche "
                    <select id="unit-search" name="u" on:change=move |ev| {
                        ctx.choices.unit_search.set(event_target_value(&ev).parse().unwrap_or_default())
                    }>
                        <option value=UnitSearch::Exact.name() selected=move || ctx.choices.unit_search.get() == UnitSearch::Exact>"exakt"</option>
                        <option value=UnitSearch::Hnsw.name() selected=move || ctx.choices.unit_search.get() == UnitSearch::Hnsw>"HNSW"</option>
                    </select>
                </label>
            </div>
            <p id="strategy-description" class="hint">{description}</p>
            <details class="settings">
                <summary>"Anfragevektor"</summary>
                <label>"Berechnen "
                    <select id="encoder" name="vektor" on:change=move |ev| {
                        ctx.choices.encoder.set(EncoderChoice::from_param(&event_target_value(&ev)))
                    }>
                        <option value="auto" selected=move || ctx.choices.encoder.get() == EncoderChoice::Auto>"automatisch (Server, sonst im Browser)"</option>
                        <option value="server" selected=move || ctx.choices.encoder.get() == EncoderChoice::Server>"nur über den Einbettungsdienst"</option>
                        <option value="browser" selected=move || ctx.choices.encoder.get() == EncoderChoice::Browser>"nur im Browser (kein Text verlässt das Gerät)"</option>
                    </select>
                </label>
                <p class="hint">"Im Browser lädt einmalig ein Sprachmodell (rund 25 MB), danach geht es auch offline."</p>
                <p class="hint" id="encoder-status" role="status">{move || match ctx.vectors.browser_encoder.get().flatten() {
                    None => String::new(),
                    Some(Ok(e)) => format!(
                        "Sprachmodell im Browser bereit ({}, vorbereitet in {:.1} s).",
                        crate::format_bytes(e.entry.bytes),
                        e.load_ms / 1000.0
                    ),
                    Some(Err(failure)) => failure.to_string(),
                }}</p>
                <label>"Einbettungsdienst "
                    <input id="proxy-url" type="url" prop:value=move || proxy_draft.get()
                        on:input=move |ev| proxy_draft.set(event_target_value(&ev))/>
                </label>
                <button type="button" on:click=move |_| {
                    let url = proxy_draft.get_untracked().trim().to_string();
                    save_proxy_url(&url);
                    ctx.vectors.proxy_problem.set(None);
                    if url == ctx.vectors.proxy_url.get_untracked() { ctx.vectors.proxy.refetch(); } else { ctx.vectors.proxy_url.set(url); }
                }>"Übernehmen und prüfen"</button>
                <p class="hint">"Nur der Anfragetext geht an diesen Dienst; Gesetz und Suche bleiben im Browser."</p>
            </details>
            </Advanced>
        </form>
    }
}
