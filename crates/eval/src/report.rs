//! `report.json`: what `paragraf eval` writes and the app's strategy page reads, declared once.
//!
//! The field names are the file format; the CLI serialises a [`Report`] and the browser parses it with
//! [`Report::parse`]. Reading is lenient where a report from an older build merely lacks a figure (it defaults)
//! and strict where a row would be meaningless without it (strategy, mode, recall, latency).

use paragraf_engine::learning::Provenance;
use paragraf_engine::{Mode, UnitSearch};
use serde::{Deserialize, Serialize};

/// The cut-offs of Recall@k in every [`Row`].
pub const RECALL_AT: [usize; 5] = [1, 5, 10, 25, 100];

/// A whole evaluation run: settings, gold coverage, significance and one [`Row`] per (strategy, mode).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// The tool that wrote it (`paragraf 0.1.0`).
    pub generator: String,
    /// Questions evaluated.
    pub questions: usize,
    /// The questions file, as given.
    pub questions_file: String,
    /// Gold ids over all questions, missing ones included.
    pub gold_sections: usize,
    /// Gold ids not in the corpus, sorted, without repeats.
    pub gold_missing: Vec<String>,
    /// Gold ids not in the corpus, repeats counted (each is a miss).
    pub gold_missing_count: usize,
    /// Unit search asked for (`exact`, `hnsw`; a RAPTOR bundle routes whatever was asked).
    pub unit_search: UnitSearch,
    /// How unit scores combined per section (`max`, `sum`, `mean`).
    pub aggregation: String,
    /// Reciprocal-rank-fusion constant.
    pub rrf_k: f32,
    /// RRF weights `(bm25, dense)`.
    pub weights: (f32, f32),
    /// Whether greetings, signatures and links were removed from the questions.
    pub questions_cleaned: bool,
    /// Policy for questions over 510 tokens (`truncate`, `window-average`).
    pub long_questions: String,
    /// How many times a heading counts in its BM25 document.
    pub title_weight: u32,
    /// What the ranking learned from (`paragraf learn`), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning: Option<ReportLearning>,
    /// Mean query-embedding time (ms), not part of the latencies; absent when every vector was cached.
    pub query_embedding_ms_mean: Option<f64>,
    /// Friedman test per mode over the strategies' per-question Recall@10: `(mode, χ², p)`.
    pub friedman: Vec<(Mode, f64, f64)>,
    /// One row per evaluated (strategy, mode).
    pub rows: Vec<Row>,
}

/// What the ranking of a report learned from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportLearning {
    /// The questions learned from: how many, source, date, licence.
    pub provenance: Provenance,
    /// Whether the evaluated questions guarded learning (`paragraf learn --guard`: the learned signals were shrunk
    /// run by run until these questions ranked no worse), so that the figures with learning are not held out.
    pub guarded_here: bool,
}

impl ReportLearning {
    /// The report's line about it: "learned from 2153 questions (GerLayQA, 2026-12-04; licence)", and what
    /// being the guard means.
    pub fn line(&self) -> String {
        let p = &self.provenance;
        let mut line = format!(
            "learned from {} questions ({}, {}; {})",
            p.questions, p.source, p.date, p.licence
        );
        if self.guarded_here {
            line.push_str("; these questions guarded learning (its signals were shrunk run by run until they ranked no worse), so the figures with learning are not held out");
        }
        line
    }
}

/// One evaluated (strategy, mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Strategy name (`sections` for BM25 over whole sections).
    pub strategy: String,
    /// The search mode.
    pub mode: Mode,
    /// `(k, mean Recall@k)` for k in [`RECALL_AT`].
    pub recall: Vec<(usize, f64)>,
    /// 95 % percentile-bootstrap confidence interval of the mean Recall@10.
    pub recall10_ci: (f64, f64),
    /// Mean reciprocal rank within the first 10.
    #[serde(default)]
    pub mrr10: f64,
    /// Mean nDCG@10.
    #[serde(default)]
    pub ndcg10: f64,
    /// Retrieval time per query, query embedding excluded.
    pub latency_ms: Latency,
    /// Bundle size (0: no bundle, BM25 over sections).
    #[serde(default)]
    pub bundle_bytes: u64,
    /// Build time of the bundle in seconds (0: no bundle).
    #[serde(default)]
    pub build_seconds: f64,
    /// Units in the bundle (0: no bundle).
    #[serde(default)]
    pub units: usize,
    /// Paired permutation test of per-question Recall@10 against `section` in the same mode, Holm-adjusted.
    #[serde(default)]
    pub p_vs_section: Option<f64>,
}

/// Retrieval latency in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

/// A `report.json` that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON of the report's shape.
    #[error("report.json is not a Paragraf evaluation report ({0}). Most likely, it was not written by `paragraf eval`; run it again")]
    Format(String),
    /// A row without Recall@10, the figure every view of a report shows.
    #[error("report.json row {row} ({strategy}) has no Recall@10. Most likely, the file was edited by hand; run `paragraf eval` again")]
    NoRecall10 {
        /// The row's position, from 1.
        row: usize,
        /// The row's strategy.
        strategy: String,
    },
}

impl paragraf_format::fault::Blame for ReportError {
    fn fault(&self) -> paragraf_format::fault::Fault {
        paragraf_format::fault::Fault::Input
    }
}

impl Report {
    /// Parses `report.json`.
    pub fn parse(bytes: &[u8]) -> Result<Report, ReportError> {
        let report: Report =
            serde_json::from_slice(bytes).map_err(|e| ReportError::Format(e.to_string()))?;
        if let Some(i) = report.rows.iter().position(|r| r.recall(10).is_none()) {
            return Err(ReportError::NoRecall10 {
                row: i + 1,
                strategy: report.rows[i].strategy.clone(),
            });
        }
        Ok(report)
    }

    /// The report as pretty-printed JSON, as `paragraf eval` writes it.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises")
    }

    /// The report as Markdown: the settings, one table row per run, the learned file, the Friedman tests, the
    /// query embedding time and the paper's latencies for comparison.
    pub fn markdown(&self) -> String {
        let report = self;
        let recall = |row: &Row, k: usize| row.recall(k).unwrap_or(f64::NAN);
        let mut md = String::new();
        md += &format!(
            "{} questions ({}{}), {} gold sections, {} gold ids not in the corpus (counted as misses); long questions: {}; unit search {}, aggregation {}, RRF k={} (weights bm25 {}, dense {}); BM25 heading weight {}\n\n",
            report.questions, report.questions_file, if report.questions_cleaned { ", cleaned" } else { "" }, report.gold_sections, report.gold_missing_count, report.long_questions, report.unit_search, report.aggregation, report.rrf_k, report.weights.0, report.weights.1, report.title_weight
        );
        md += "| strategy | mode | R@10 [95% CI] | R@1 | R@5 | R@25 | R@100 | MRR@10 | nDCG@10 | p vs section (Holm) | latency ms mean / p50 / p95 | units | bundle KB | build s |\n";
        md += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
        for row in &report.rows {
            md += &format!(
                "| {} | {} | {:.3} [{:.3}, {:.3}] | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.3} / {:.3} / {:.3} | {} | {} | {} |\n",
                row.strategy,
                row.mode,
                recall(row, 10),
                row.recall10_ci.0,
                row.recall10_ci.1,
                recall(row, 1),
                recall(row, 5),
                recall(row, 25),
                recall(row, 100),
                row.mrr10,
                row.ndcg10,
                row.p_vs_section.map_or("–".into(), |p| format!("{p:.4}")),
                row.latency_ms.mean,
                row.latency_ms.p50,
                row.latency_ms.p95,
                if row.units > 0 { row.units.to_string() } else { "–".into() },
                if row.bundle_bytes > 0 { format!("{:.0}", row.bundle_bytes as f64 / 1024.0) } else { "–".into() },
                if row.build_seconds > 0.0 { format!("{:.0}", row.build_seconds) } else { "–".into() },
            );
        }
        if let Some(learning) = &report.learning {
            md += &format!("\nRanked with what was {}.\n", learning.line());
        }
        for (mode, statistic, p) in &report.friedman {
            md += &format!("\nFriedman test over strategies ({mode}, Recall@10): χ² = {statistic:.1}, p = {p:.3e}\n");
        }
        if let Some(ms) = report.query_embedding_ms_mean.filter(|ms| ms.is_finite()) {
            md += &format!("\nQuery embedding (not in the latencies above): {ms:.0} ms per question on this machine.\n");
        }
        let slowest = report
            .rows
            .iter()
            .map(|r| r.latency_ms.mean)
            .fold(0.0, f64::max);
        md += &format!(
            "\nThe paper reports {PAPER_LATENCY_MS} ms per query for the same protocol (100 units, aggregation to sections); the slowest row here takes {slowest:.2} ms.\n"
        );
        md
    }
}

/// Query latency range of the paper's strategies on the BGB (section 4), for comparison in the report.
pub const PAPER_LATENCY_MS: &str = "2.0–16.1";

impl Row {
    /// Mean Recall@k, when `k` was evaluated (see [`RECALL_AT`]).
    pub fn recall(&self, k: usize) -> Option<f64> {
        self.recall.iter().find(|(at, _)| *at == k).map(|&(_, r)| r)
    }

    /// Mean Recall@10: present in every row [`Report::parse`] accepts and every row the harness makes.
    pub fn recall10(&self) -> f64 {
        self.recall(10).unwrap_or(f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        Row {
            strategy: "section".into(),
            mode: Mode::Dense,
            recall: RECALL_AT.iter().map(|&k| (k, k as f64 / 100.0)).collect(),
            recall10_ci: (0.05, 0.15),
            mrr10: 0.2,
            ndcg10: 0.3,
            latency_ms: Latency {
                mean: 1.5,
                p50: 1.0,
                p95: 3.0,
            },
            bundle_bytes: 2048,
            build_seconds: 4.0,
            units: 12,
            p_vs_section: None,
        }
    }

    #[test]
    fn round_trips_with_the_field_names_of_the_file_format() {
        let report = Report {
            generator: "paragraf 0.1.0".into(),
            questions: 3,
            unit_search: UnitSearch::Hnsw,
            query_embedding_ms_mean: Some(12.0),
            friedman: vec![(Mode::Hybrid, 7.5, 0.02)],
            rows: vec![row()],
            ..Report::default()
        };
        let json = report.to_json();
        for field in [
            "\"generator\"",
            "\"gold_missing_count\"",
            "\"weights\"",
            "\"unit_search\": \"hnsw\"",
            "\"friedman\": [\n    [\n      \"hybrid\"",
            "\"mode\": \"dense\"",
            "\"recall\": [\n        [\n          1,",
            "\"recall10_ci\"",
            "\"latency_ms\": {\n        \"mean\": 1.5",
            "\"p_vs_section\": null",
        ] {
            assert!(json.contains(field), "{field} missing in {json}");
        }
        let back = Report::parse(json.as_bytes()).unwrap();
        assert_eq!(back, report);
        assert_eq!(back.rows[0].recall10(), 0.1);
        assert_eq!(back.rows[0].recall(7), None);
    }

    #[test]
    fn older_reports_without_optional_figures_are_read() {
        let json = r#"{"questions": 2, "rows": [{"strategy": "sentence", "mode": "hybrid",
            "recall": [[10, 0.5]], "recall10_ci": [0.4, 0.6], "latency_ms": {"mean": 1, "p50": 1, "p95": 2}}]}"#;
        let report = Report::parse(json.as_bytes()).unwrap();
        assert_eq!(report.questions, 2);
        assert_eq!(report.rows[0].mode, Mode::Hybrid);
        assert_eq!(report.rows[0].recall10(), 0.5);
        assert_eq!(report.rows[0].bundle_bytes, 0);
        assert_eq!(report.query_embedding_ms_mean, None);
    }

    #[test]
    fn bad_reports_are_refused_with_the_reason() {
        let err = Report::parse(b"<html>").unwrap_err().to_string();
        assert_eq!(
            err,
            "report.json is not a Paragraf evaluation report (expected value at line 1 column 1). Most likely, it was not written by `paragraf eval`; run it again"
        );
        let err = Report::parse(br#"{"rows": [{"strategy": "x", "mode": "fast"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `fast`"), "{err}");
        let mut no_recall10 = row();
        no_recall10.recall.retain(|&(k, _)| k != 10);
        let json = Report {
            rows: vec![no_recall10],
            ..Report::default()
        }
        .to_json();
        assert_eq!(
            Report::parse(json.as_bytes()).unwrap_err().to_string(),
            "report.json row 1 (section) has no Recall@10. Most likely, the file was edited by hand; run `paragraf eval` again"
        );
    }
}
