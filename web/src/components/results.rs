//! The result list: top sections with breadcrumb, highlighted text, hit units, score, official and in-app links.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_engine::{Mode, SearchOutcome, SectionHit, UnitRoute};

use crate::context::Ctx;
use crate::highlight::runs;
use crate::load::{Embedded, Outcome, VectorSource, MORE_SECTIONS};
use crate::state::UrlState;
use paragraf_core::results::{
    citations, cited_by, hit_spans, term_spans, Citation, MAX_HIT_CITATIONS,
};
use paragraf_engine::learning::{Provenance, GERLAYQA_LICENCE};
use paragraf_law::definitions::Definition;

/// Said of a law built without strategy bundles (`--strategies none`): BM25 over its sections is all there is.
pub const NO_VECTORS: &str = "keine Vektoren gebaut";

/// Where the query vector came from, for the line above results.
pub fn vector_note(embedded: Option<&Embedded>) -> String {
    match embedded {
        Some(e) => format!(
            " · Anfragevektor {} ({}) {:.0} ms",
            match e.source {
                VectorSource::Browser => "im Browser berechnet",
                VectorSource::Server => "über den Server",
            },
            e.model,
            e.ms
        ),
        None => " · nur lexikalisch".to_string(),
    }
}

/// What the ranking learned from, as the app says it: "gelernt aus 2.153 Laienfragen (GerLayQA, nur
/// Forschung)". The licence of GerLayQA-derived files is "nur Forschung"; any other is quoted.
pub fn learned_label(p: &Provenance) -> String {
    let licence = if p.licence == GERLAYQA_LICENCE {
        "nur Forschung".to_string()
    } else {
        format!("Lizenz: {}", p.licence)
    };
    format!(
        "gelernt aus {} Laienfragen ({}, {licence})",
        thousands(p.questions),
        p.source
    )
}

/// `2153` as `2.153`.
fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

/// The mode's German name.
pub fn mode_label(mode: Mode) -> &'static str {
    match mode {
        Mode::Dense => "dicht",
        Mode::Bm25 => "BM25",
        Mode::Hybrid => "hybrid",
    }
}

/// How the units were found, as the engine reports it (nothing when only BM25 ran).
fn route_label(search: &SearchOutcome) -> &'static str {
    match (search.unit_search, search.hnsw_unavailable) {
        (None, _) => "",
        (Some(UnitRoute::Hnsw), _) => " · HNSW",
        (Some(UnitRoute::Raptor), false) => " · RAPTOR-Baum",
        (Some(UnitRoute::Raptor), true) => " · RAPTOR-Baum (statt HNSW)",
        (Some(UnitRoute::Exact), false) => " · exakt",
        (Some(UnitRoute::Exact), true) => " · exakt (dieses Bündel hat keinen HNSW-Graphen)",
    }
}

/// The list for one search.
#[component]
pub fn Results(outcome: Rc<Outcome>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let graph = ctx.choices.graph.get_untracked();
    let unit_search = route_label(&outcome.search);
    let meta = format!(
        "{} Treffer in {} · {} · {}{unit_search} · Suche im Browser {:.1} ms{}",
        outcome.search.hits.len(),
        outcome.law.entry.law,
        match &outcome.strategy {
            Some(s) => format!("Strategie {}", s.entry.strategy),
            None => NO_VECTORS.to_string(),
        },
        mode_label(outcome.search.mode),
        outcome.retrieval_ms,
        vector_note(outcome.embedded.as_ref())
    ) + &match (outcome.graph_weight, graph) {
        (w, _) if w > 0.0 => format!(" · Verweisgraph (Gewicht {w})").replace('.', ","),
        (_, true) => " · Verweisgraph bei BM25 ohne Wirkung".to_string(),
        _ => String::new(),
    } + &match &outcome.search.learned {
        Some(p) => format!(" · Rangfolge {}", learned_label(p)),
        None => String::new(),
    };
    let vector_ms = outcome.embedded.as_ref().map(|e| format!("{:.1}", e.ms));
    let tokens = outcome
        .embedded
        .as_ref()
        .and_then(|e| e.tokens)
        .map(|t| t.to_string());
    let vector = match &outcome.embedded {
        Some(e) if e.source == VectorSource::Browser => "browser",
        Some(_) => "server",
        None => "none",
    };
    let retrieval = format!("{:.3}", outcome.retrieval_ms);
    let empty = outcome.search.hits.is_empty();
    let more = more_results(ctx, outcome.more, outcome.search.hits.len());
    if !outcome.cited_units.is_empty() {
        scroll_to_cited();
    }
    let items = outcome
        .search
        .hits
        .iter()
        .enumerate()
        .map(
            |(rank, hit)| view! { <ResultItem outcome=outcome.clone() hit=hit.clone() rank=rank/> },
        )
        .collect_view();
    view! {
        <p class="meta" id="result-meta" data-retrieval-ms=retrieval data-mode=outcome.search.mode.name()
            data-search=outcome.number data-vector=vector data-vector-tokens=tokens data-vector-ms=vector_ms>{meta}</p>
        <Expansions outcome=outcome.clone()/>
        // Its own boundary: the results never wait for the citations from other laws.
        <Suspense fallback=|| ()>{move || match ctx.one_law.cited_by.get() {
            Some(Err(why)) => Some(view! { <p class="cited-by-problem" role="status">{why.to_string()}</p> }),
            _ => None,
        }}</Suspense>
        {empty.then(|| view! { <p class="empty">"Keine Treffer. Andere Wörter oder eine andere Strategie versuchen."</p> })}
        <ol class="results" aria-label="Ergebnisse">{items}</ol>
        {more}
    }
}

/// The button that asks for more results below a full first page of `shown` (a search `asked` for more shows
/// all it found): one law's results and those across laws.
pub fn more_results(ctx: Ctx, asked: bool, shown: usize) -> Option<impl IntoView> {
    (!asked && shown >= paragraf_engine::SearchOptions::default().section_k).then(|| {
        view! {
            <button type="button" id="more-results" class="more-results"
                on:click=move |_| ctx.choices.more.set(true)>{format!("Weitere Treffer zeigen (bis {MORE_SECTIONS})")}</button>
        }
    })
}

/// Brings the Absatz or Satz a query or link cites (`§ 551 Abs. 2 BGB`) into view once the results are drawn.
fn scroll_to_cited() {
    request_animation_frame(|| {
        if let Some(cited) = document().query_selector(".results .cited").ok().flatten() {
            cited.scroll_into_view();
        }
    });
}

/// What query expansion added ("auch gesucht"), per lay word, each word removable with one click; words
/// removed for this question can be taken back. Nothing when nothing was added or removed.
#[component]
fn Expansions(outcome: Rc<Outcome>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let chip = move |word: String, removed: bool| {
        let (label, sign) = if removed {
            (format!("{word} wieder mitsuchen"), "↺")
        } else {
            (format!("{word} nicht mitsuchen"), "×")
        };
        let (clicked, data) = (word.clone(), word.clone());
        view! {
            <span class="expansion" data-word=data>
                {word}
                // The sign is decoration: the button's name is its label (a name must contain the visible text).
                <button type="button" aria-label=label.clone() title=label
                    on:click=move |_| ctx.choices.set_removed(&clicked, !removed)><span aria-hidden="true">{sign}</span></button>
            </span>
        }
    };
    let added = outcome
        .search
        .expansions
        .iter()
        .map(|e| {
            let words = e
                .to
                .iter()
                .map(|t| chip(t.word.clone(), false))
                .collect_view();
            view! { <span class="expanded" data-from=e.from.clone()>{format!("„{}“ → ", e.from)}{words}</span> }
        })
        .collect_view();
    let removed = outcome
        .without
        .iter()
        .map(|w| chip(w.clone(), true))
        .collect_view();
    let any_added = !outcome.search.expansions.is_empty();
    let any_removed = !outcome.without.is_empty();
    (any_added || any_removed).then(|| {
        view! {
            <p class="expansions" id="expansions">
                {any_added.then(|| view! { <span class="label">"auch gesucht: "</span> })}
                {added}
                {any_removed.then(|| view! { <span class="label" id="removed">"entfernt: "</span> })}
                {removed}
            </p>
        }
    })
}

/// The official page of a section on gesetze-im-internet.de.
fn official_url(law: &paragraf_law::Law, index: usize) -> String {
    law.official_url(index)
}

#[component]
fn ResultItem(outcome: Rc<Outcome>, hit: SectionHit, rank: usize) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let law = &outcome.law.index.law;
    let i = hit.section as usize;
    let section = &law.sections[i];
    let path = law.path_label(i);
    let mut spans = outcome
        .strategy
        .as_ref()
        .map(|s| hit_spans(&s.index.bundle, hit.section, section, &hit.units))
        .unwrap_or_default();
    if spans.is_empty() {
        // No unit narrower than the section was hit (`section`, BM25): the question's words are marked, as
        // `paragraf search` marks them, in the lighter colour.
        spans = term_spans(&section.text, &outcome.question)
            .into_iter()
            .map(|r| (2, r))
            .collect();
    }
    let units = if hit.units.is_empty() {
        String::new()
    } else {
        let list = hit
            .units
            .iter()
            .take(5)
            .map(|u| format!("#{} ({:.3})", u.index, u.score))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "{} Einheit{} getroffen: {list}{}",
            hit.units.len(),
            if hit.units.len() == 1 { "" } else { "en" },
            if hit.units.len() > 5 { " …" } else { "" }
        )
    };
    let definitions = &outcome.law.definitions;
    let terms = definitions.explained_in(law, i);
    let cited_units: Vec<std::ops::Range<usize>> = outcome
        .cited_units
        .iter()
        .filter(|(s, _)| *s == i)
        .map(|(_, r)| r.clone())
        .collect();
    let text = runs(section, &spans, &cited_units, &terms)
        .into_iter()
        .enumerate()
        .map(|(k, run)| {
            let cited = run.cited;
            let look = match (run.link, run.term, run.hit) {
                (None, Some(d), hit) => {
                    let term = defined_term(
                        ctx,
                        law,
                        &definitions.definitions[d],
                        format!("d{rank}-{k}"),
                        run.text,
                    );
                    match hit {
                        Some(r) => {
                            view! { <mark class=format!("hit hit{}", r.min(2))>{term}</mark> }
                                .into_any()
                        }
                        None => term,
                    }
                }
                (Some(target), _, _) => {
                    let designation = law
                        .sections
                        .get(target as usize)
                        .map(|s| s.designation.clone())
                        .unwrap_or_default();
                    search_link(ctx, designation, run.text)
                }
                (None, None, Some(r)) => {
                    view! { <mark class=format!("hit hit{}", r.min(2))>{run.text}</mark> }
                        .into_any()
                }
                (None, None, None) => view! { <span>{run.text}</span> }.into_any(),
            };
            if cited {
                view! { <span class="cited">{look}</span> }.into_any()
            } else {
                look
            }
        })
        .collect_view();
    // One entry per cited section (`Abs. 2 und 3` of one article once), never the section itself.
    let mut cites = citations(law, i);
    let mut seen = vec![section.designation.clone()];
    cites.retain(|c| match c {
        Citation::Section { designation, .. } if seen.contains(designation) => false,
        Citation::Section { designation, .. } => {
            seen.push(designation.clone());
            true
        }
        _ => true,
    });
    let cited_by = cited_by(law, i);
    let links = (!cites.is_empty() || !cited_by.is_empty()).then(|| {
        let cites = (!cites.is_empty()).then(|| {
            let shown = cites.len().min(MAX_HIT_CITATIONS);
            let items = cites[..shown]
                .iter()
                .map(|c| match c {
                    Citation::Section {
                        designation, title, ..
                    } => section_link(ctx, designation, title),
                    Citation::External { law, designation } => external_link(ctx, law, designation),
                    Citation::Unresolved { designation } => {
                        view! { <span>{designation.clone()}</span> }.into_any()
                    }
                })
                .collect();
            let items = separated(items);
            view! { <p class="cites">"Verweist auf: " {items} {more(cites.len() - shown)}</p> }
        });
        let cited_by = (!cited_by.is_empty()).then(|| {
            let shown = cited_by.len().min(MAX_HIT_CITATIONS);
            let items = cited_by[..shown]
                .iter()
                .map(|s| section_link(ctx, &s.designation, &s.title))
                .collect();
            let items = separated(items);
            view! { <p class="cited-by">"Zitiert in: " {items} {more(cited_by.len() - shown)}</p> }
        });
        view! { <div class="links">{cites}{cited_by}</div> }
    });
    // Sections of other laws citing this one, once the law's cited-by shard is in (folders of many laws).
    let (law_name, designation) = (outcome.law.entry.law.clone(), section.designation.clone());
    let elsewhere = move || {
        let file = ctx.one_law.cited_by.get()?.ok()??;
        let citing = file.citing(&law_name, &designation);
        (!citing.is_empty()).then(|| {
            let shown = citing.len().min(MAX_HIT_CITATIONS);
            let items = citing[..shown]
                .iter()
                .map(|s| external_link(ctx, &s.law, &s.designation))
                .collect();
            let items = separated(items);
            view! {
                <div class="links"><p class="cited-elsewhere">
                    "Zitiert in anderen Gesetzen: " {items} {more(citing.len() - shown)}
                </p></div>
            }
        })
    };
    let heading = format!("{} {}", section.designation, section.title);
    let official = official_url(law, i);
    // Printed with the section: the version of the law it is read from.
    let stand = law
        .stand
        .iter()
        .map(|s| format!("{}: {}", s.kind, s.comment))
        .collect::<Vec<_>>()
        .join(" · ");
    let permalink = UrlState {
        law: outcome.law.entry.law.clone(),
        ..ctx
            .url_state_untracked()
            .asking(format!("{} {}", section.designation, outcome.law.entry.law))
    }
    .to_query();
    let cited = hit.cited;
    // Counts and sections only, never a question's text.
    let precedents = (hit.precedents > 0).then(|| {
        let said = match hit.precedents {
            1 => format!("1 ähnliche Frage führte zu {}", section.designation),
            n => format!("{n} ähnliche Fragen führten zu {}", section.designation),
        };
        view! { <p class="precedents" title="Frühere Laienfragen mit ähnlichem Wortlaut, deren Antwort diesen Paragrafen nannte">{said}</p> }
    });
    view! {
        <li class="result" id=format!("r{rank}")>
            <div class="result-head">
                <h2>{heading}</h2>
                {cited.then(|| view! { <span class="badge">"zitiert"</span> })}
                <Show when=move || ctx.choices.advanced.get()>
                    <span class="score" title="Rangwert">{format!("{:.4}", hit.score)}</span>
                </Show>
            </div>
            <p class="path">{format!("{} › {path}", outcome.law.entry.law)}</p>
            {(!stand.is_empty()).then(|| view! { <p class="stand">{stand}</p> })}
            {precedents}
            <p class="text">{text}</p>
            {links}
            <Suspense fallback=|| ()>{elsewhere}</Suspense>
            <p class="foot">
                <span class="units">{units}</span>
                <CopyCitation citation=format!("{} {}", section.designation, outcome.law.entry.law)/>
                <a class="permalink" href=permalink title="Dauerhafter Link zu dieser Vorschrift; mit „Abs. 2 S. 1“ in der Frage zu Absatz und Satz">"Link"</a>
                <a href=official target="_blank" rel="noopener">"Amtliche Fassung ↗"</a>
            </p>
        </li>
    }
}

/// "Zitat kopieren": the section's citation (`§ 551 BGB`) to the clipboard; where the browser refuses, the
/// citation is shown to copy by hand.
#[component]
fn CopyCitation(citation: String) -> impl IntoView {
    let said = RwSignal::new(None::<String>);
    let text = citation.clone();
    let copy = move |_| {
        let text = text.clone();
        leptos::task::spawn_local(async move {
            let copied = match web_sys::window().map(|w| w.navigator().clipboard()) {
                Some(clipboard) => {
                    wasm_bindgen_futures::JsFuture::from(clipboard.write_text(&text))
                        .await
                        .is_ok()
                }
                None => false,
            };
            said.set(Some(if copied {
                format!("Kopiert: {text}")
            } else {
                format!("Zitat: {text}")
            }));
        });
    };
    view! {
        <button type="button" class="copy-citation" data-citation=citation.clone() on:click=copy
            aria-live="polite">{move || said.get().unwrap_or_else(|| "Zitat kopieren".to_string())}</button>
    }
}

/// Longest definition shown, in characters (a definition sentence can run over several enumeration items).
const DEFINITION_CHARS: usize = 400;

/// A term defined in another section: hovering shows its definition as a tooltip, a click or tap opens it as
/// a popover with a link to the defining section.
fn defined_term(
    ctx: Ctx,
    law: &paragraf_law::Law,
    definition: &Definition,
    id: String,
    text: String,
) -> AnyView {
    let section = &law.sections[definition.section as usize];
    let mut defining: String = section
        .slice(definition.span)
        .chars()
        .take(DEFINITION_CHARS)
        .collect();
    if defining.len() < section.slice(definition.span).len() {
        defining.push('…');
    }
    let hover = format!("{} ({}): {defining}", definition.term, section.designation);
    view! {
        <button type="button" class="term" popovertarget=id.clone() title=hover
            data-term=definition.term.clone()>{text}</button>
        <span class="definition" id=id popover="auto" role="note">
            <strong>{definition.term.clone()}</strong>
            " – Legaldefinition in "
            {section_link(ctx, &section.designation, &section.title)}
            ": "
            <q>{defining}</q>
        </span>
    }
    .into_any()
}

/// A section of the same law as a link that searches it in the app (`§ 536 Mietminderung`).
fn section_link(ctx: Ctx, designation: &str, title: &str) -> AnyView {
    let label = if title.is_empty() {
        designation.to_string()
    } else {
        format!("{designation} {title}")
    };
    search_link(ctx, designation.to_string(), label)
}

/// A link showing `label` that searches `designation` in the app (a shareable URL; a click searches in place).
fn search_link(ctx: Ctx, designation: String, label: String) -> AnyView {
    let href = ctx
        .url_state_untracked()
        .asking(designation.clone())
        .to_query();
    let title = format!("{designation} in der App öffnen");
    view! {
        <a class="ref" href=href title=title on:click=move |ev| {
            ev.prevent_default();
            ctx.choices.input.set(designation.clone());
            ctx.submit();
            scroll_to_top();
        }>{label}</a>
    }
    .into_any()
}

/// A provision of another law: a link that opens that law (its bundles load on demand) and searches the
/// designation there, which puts the section first; plain text when the folder does not hold the law.
fn external_link(ctx: Ctx, law: &str, designation: &str) -> AnyView {
    let label = format!("{designation} {law}");
    let listed = ctx.folder.manifest.get_untracked().and_then(|m| m.ok());
    let Some(target) = listed
        .as_ref()
        .and_then(|m| paragraf_core::finder::cited_law(&m.laws, law))
        .map(|entry| entry.law.clone())
    else {
        return view! { <span class="external">{label}</span> }.into_any();
    };
    let designation = designation.to_string();
    let href = UrlState {
        law: target.clone(),
        strategy: String::new(),
        ..ctx.url_state_untracked().asking(designation.clone())
    }
    .to_query();
    let title = format!("{designation} {target} öffnen");
    view! {
        <a class="ref external" href=href title=title data-law=target.clone() on:click=move |ev| {
            ev.prevent_default();
            ctx.choices.law.set(target.clone());
            ctx.choices.strategy.set(String::new());
            ctx.choices.input.set(designation.clone());
            ctx.submit();
            scroll_to_top();
        }>{label}</a>
    }
    .into_any()
}

/// The items with ` · ` between them.
fn separated(items: Vec<AnyView>) -> impl IntoView {
    items
        .into_iter()
        .enumerate()
        .map(|(k, item)| view! { {(k > 0).then_some(" · ")} {item} })
        .collect_view()
}

/// "… und 3 weitere" after a shortened list.
fn more(hidden: usize) -> Option<String> {
    (hidden > 0).then(|| format!(" … und {hidden} weitere"))
}

fn scroll_to_top() {
    if let Some(w) = web_sys::window() {
        w.scroll_to_with_x_and_y(0.0, 0.0);
    }
}
