//! Horizontal bar charts as standalone SVG, for the evaluation report.
//!
//! Written by hand rather than with a plotting crate: the Rust plotting crates need system fonts (font-kit,
//! fontconfig) to lay out text, which a fresh CI machine lacks; an SVG viewer lays out our text itself.

/// One bar: a label, a value and an optional interval drawn as a whisker (a CI, or p50..p95).
pub struct Bar {
    /// Row label.
    pub label: String,
    /// Bar length.
    pub value: f64,
    /// Whisker from..to.
    pub interval: Option<(f64, f64)>,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders `bars` top to bottom under `title`.
pub fn bar_chart(title: &str, bars: &[Bar]) -> String {
    const ROW: f64 = 18.0;
    const LABEL: f64 = 260.0;
    const PLOT: f64 = 420.0;
    const TOP: f64 = 36.0;
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let max = bars
        .iter()
        .map(|b| finite(b.value).max(b.interval.map_or(0.0, |(_, hi)| finite(hi))))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let x = |v: f64| LABEL + finite(v) / max * PLOT;
    let height = TOP + ROW * bars.len() as f64 + 24.0;
    let width = LABEL + PLOT + 80.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\n<title>{t}</title>\n<text x=\"8\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{t}</text>\n",
        t = escape(title)
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n<rect x=\"{LABEL}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#3b6ea5\"/>\n",
            LABEL - 6.0,
            y + 12.0,
            escape(&bar.label),
            y + 3.0,
            x(bar.value) - LABEL,
            ROW - 6.0
        );
        if let Some((lo, hi)) = bar.interval {
            let mid = y + ROW / 2.0;
            svg += &format!(
                "<path d=\"M{:.1} {mid:.1}H{:.1}M{:.1} {:.1}V{:.1}M{:.1} {:.1}V{:.1}\" stroke=\"#111\" fill=\"none\"/>\n",
                x(lo),
                x(hi),
                x(lo),
                mid - 4.0,
                mid + 4.0,
                x(hi),
                mid - 4.0,
                mid + 4.0
            );
        }
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            x(bar.value.max(bar.interval.map_or(0.0, |(_, hi)| hi))) + 4.0,
            y + 12.0,
            format_value(bar.value)
        );
    }
    svg += "</svg>\n";
    svg
}

fn format_value(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_bars_whiskers_and_escaped_labels() {
        let svg = bar_chart(
            "Recall <10>",
            &[
                Bar {
                    label: "section & co".into(),
                    value: 0.5,
                    interval: Some((0.4, 0.6)),
                },
                Bar {
                    label: "fixed".into(),
                    value: 0.25,
                    interval: None,
                },
            ],
        );
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("Recall &lt;10&gt;") && svg.contains("section &amp; co"));
        assert_eq!(svg.matches("<rect").count(), 2);
        assert_eq!(svg.matches("<path").count(), 1);
        // the longest extent (0.6) spans the plot: 260 + 420
        assert!(svg.contains("H680.0"), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
    }
}
