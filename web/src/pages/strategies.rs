//! The "Strategies" page: the evaluation report's figures (`report.json` beside the manifest, as written by
//! `paragraf eval`) as bar charts, and every strategy's one-line description.

use leptos::prelude::*;
use paragraf_eval::report::Row;
use paragraf_format::strategy::Strategy;

use crate::components::errors::ErrorList;
use crate::components::results::learned_label;
use crate::context::Ctx;
use crate::failure::Failure;
use crate::load;

fn bar(value: f64, max: f64, ci: Option<(f64, f64)>, label: String) -> impl IntoView {
    let pct = |v: f64| {
        if max > 0.0 {
            (v / max * 100.0).clamp(0.0, 100.0)
        } else {
            0.0
        }
    };
    let whisker = ci.map(|(lo, hi)| {
        view! { <span class="ci" style=format!("left:{:.2}%;width:{:.2}%", pct(lo), (pct(hi) - pct(lo)).max(0.3))></span> }
    });
    let aria = label.clone();
    view! {
        <div class="bar" role="img" aria-label=aria>
            <span class="fill" style=format!("width:{:.2}%", pct(value))></span>
            {whisker}
            <span class="value">{label}</span>
        </div>
    }
}

fn chart(
    title: &'static str,
    rows: &[Row],
    value: impl Fn(&Row) -> f64,
    ci: impl Fn(&Row) -> Option<(f64, f64)>,
    fmt: impl Fn(&Row) -> String,
) -> impl IntoView {
    let max = rows
        .iter()
        .map(|r| ci(r).map_or(value(r), |(_, hi)| hi.max(value(r))))
        .fold(0.0f64, f64::max);
    let items = rows
        .iter()
        .map(|r| {
            view! {
                <tr>
                    <th scope="row">{format!("{} ({})", r.strategy, r.mode)}</th>
                    <td>{bar(value(r), max, ci(r), fmt(r))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <figure class="chart">
            <figcaption>{title}</figcaption>
            <table><tbody>{items}</tbody></table>
        </figure>
    }
}

/// The page.
#[component]
pub fn StrategiesPage() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let report = LocalResource::new(move || load::report(ctx.folder.data_url()));
    let figures = move || {
        Suspend::new(async move {
            let Some(report) = report.await? else {
                return Ok::<_, Failure>(view! {
                    <p class="hint" id="no-report">"Für diese Bündel liegt kein Evaluationsbericht vor (report.json von `paragraf eval`)."</p>
                }.into_any());
            };
            let rows = report.rows.clone();
            let learning = report.learning.as_ref().map(|l| {
                let caveat = if l.guarded_here {
                    ". Diese Fragen haben das Gelernte gedämpft (bis sie ohne es nicht besser abschnitten): die Werte mit Gelerntem sind nicht unabhängig gemessen"
                } else {
                    ""
                };
                view! { <p class="hint" id="report-learning">{format!("Rangfolge {}{caveat}.", learned_label(&l.provenance))}</p> }
            });
            Ok(view! {
                <p class="hint">{format!(
                    "{} Fragen, Einheitensuche {}{}",
                    report.questions,
                    report.unit_search,
                    report.query_embedding_ms_mean.map(|ms| format!(", Anfragevektor im Mittel {ms:.0} ms (nicht in den Latenzen)")).unwrap_or_default()
                )}</p>
                {learning}
                {chart("Recall@10 (95-%-Bootstrap-Konfidenzintervall)", &rows, |r| r.recall10(), |r| Some(r.recall10_ci), |r| format!("{:.3} [{:.3}–{:.3}]", r.recall10(), r.recall10_ci.0, r.recall10_ci.1))}
                {chart("Latenz je Anfrage (Median, ms; nativ)", &rows, |r| r.latency_ms.p50, |_| None, |r| format!("{:.2} ms (p95 {:.2})", r.latency_ms.p50, r.latency_ms.p95))}
                {chart("Bündelgröße", &rows, |r| r.bundle_bytes as f64, |_| None, |r| crate::format_bytes(r.bundle_bytes))}
                {chart("Bauzeit (s)", &rows, |r| r.build_seconds, |_| None, |r| format!("{:.0} s", r.build_seconds))}
            }.into_any())
        })
    };
    let descriptions = Strategy::all()
        .into_iter()
        .map(|s| view! { <li><code>{s.name()}</code>" – "{s.description()}</li> })
        .collect_view();
    // The list comes with the figures, not before them: charts arriving above it would push it down the page.
    view! {
        <h1>"Strategien"</h1>
        <Transition fallback=|| view! { <p class="loading">"Lade Bericht …"</p> }>
            <ErrorBoundary fallback=|errors| view! { <ErrorList errors=errors/> }>{figures}</ErrorBoundary>
            <h2>"Alle 21 Strategien"</h2>
            <ul class="strategy-list">{descriptions.clone()}</ul>
        </Transition>
    }
}
