//! The parts of `manifest.json` (written by `paragraf build`) and `report.json` (written by `paragraf eval`)
//! the app reads. Unknown fields are ignored, so newer tools can add to them.

use serde::Deserialize;

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Manifest {
    /// Bundle format version of the listed files.
    #[serde(default)]
    pub format_version: u32,
    /// Law bundles.
    pub laws: Vec<LawEntry>,
    /// Strategy bundles.
    pub bundles: Vec<BundleEntry>,
}

/// A law bundle.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct LawEntry {
    /// Abbreviation (`GG`).
    pub law: String,
    /// Full title.
    pub title: String,
    /// gesetze-im-internet.de slug.
    pub slug: String,
    /// Active sections.
    #[serde(default)]
    pub sections: usize,
    /// File name (content-hashed).
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
}

/// A strategy bundle.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct BundleEntry {
    /// Law abbreviation.
    pub law: String,
    /// Strategy name.
    pub strategy: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Embedding model id.
    pub model: String,
    /// Vector dimension.
    #[serde(default)]
    pub dim: usize,
    /// Indexed units.
    #[serde(default)]
    pub units: usize,
    /// Whether it carries an HNSW graph.
    #[serde(default)]
    pub hnsw: bool,
    /// File name (content-hashed).
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
}

impl Manifest {
    /// Parses the manifest, with a message for people when it is not one.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("manifest.json ist keine Paragraf-Bündelliste ({e})"))
    }

    /// The law entry for an abbreviation, or the first law when it is empty or unknown.
    pub fn law(&self, abbreviation: &str) -> Option<&LawEntry> {
        self.laws
            .iter()
            .find(|l| l.law == abbreviation)
            .or_else(|| self.laws.first())
    }

    /// The strategy bundles of a law.
    pub fn bundles_of<'a>(&'a self, law: &'a str) -> impl Iterator<Item = &'a BundleEntry> + 'a {
        self.bundles.iter().filter(move |b| b.law == law)
    }

    /// The bundle to use: the named strategy, else `section`, else the law's first bundle.
    pub fn bundle<'a>(&'a self, law: &'a str, strategy: &str) -> Option<&'a BundleEntry> {
        self.bundles_of(law)
            .find(|b| b.strategy == strategy)
            .or_else(|| self.bundles_of(law).find(|b| b.strategy == "section"))
            .or_else(|| self.bundles_of(law).next())
    }
}

/// `report.json` of `paragraf eval`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Report {
    /// Questions evaluated.
    #[serde(default)]
    pub questions: usize,
    /// Exact or HNSW.
    #[serde(default)]
    pub unit_search: String,
    /// Mean query-embedding time (ms), not part of the latencies.
    #[serde(default)]
    pub query_embedding_ms_mean: Option<f64>,
    /// One row per (strategy, mode).
    pub rows: Vec<ReportRow>,
}

/// One evaluated (strategy, mode).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ReportRow {
    /// Strategy name.
    pub strategy: String,
    /// Mode.
    pub mode: String,
    /// (k, Recall@k).
    pub recall: Vec<(usize, f64)>,
    /// 95 % bootstrap CI of Recall@10.
    pub recall10_ci: (f64, f64),
    /// MRR@10.
    #[serde(default)]
    pub mrr10: f64,
    /// Latency (ms).
    pub latency_ms: Latency,
    /// Bundle size.
    #[serde(default)]
    pub bundle_bytes: u64,
    /// Build time.
    #[serde(default)]
    pub build_seconds: f64,
}

/// Latency figures (ms).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
}

impl ReportRow {
    /// Recall@10.
    pub fn recall10(&self) -> f64 {
        self.recall
            .iter()
            .find(|(k, _)| *k == 10)
            .map_or(0.0, |(_, r)| *r)
    }
}

impl Report {
    /// Parses `report.json`.
    pub fn parse(text: &str) -> Result<Report, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("report.json ist kein Paragraf-Evaluationsbericht ({e})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_named_then_section_then_first() {
        let m = Manifest::parse(
            r#"{"generator":"x","format_version":1,"laws":[{"law":"GG","title":"Grundgesetz","slug":"gg","build_date":"d","sections":1,"file":"GG.abc.plaw","bytes":5,"sha256":""}],
               "bundles":[{"law":"GG","strategy":"sentence","model":"m","file":"a","bytes":1},{"law":"GG","strategy":"section","model":"m","file":"b","bytes":1}]}"#,
        )
        .unwrap();
        assert_eq!(m.law("").unwrap().law, "GG");
        assert_eq!(m.bundle("GG", "sentence").unwrap().file, "a");
        assert_eq!(m.bundle("GG", "raptor").unwrap().file, "b");
        assert!(m.bundle("BGB", "section").is_none());
        assert!(Manifest::parse("<html>")
            .unwrap_err()
            .contains("keine Paragraf-Bündelliste"));
    }
}
