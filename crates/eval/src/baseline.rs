//! `paragraf eval --baseline`: this evaluation's runs against another's (another model, the same folder
//! without learning), question by question, from the `recall10.tsv` each writes: one column per run, one row per
//! question in file order.

use paragraf_format::fault::{Blame, Fault};
use paragraf_stats::stats::{holm, paired_permutation_test, StatsError};

use crate::harness::{Evaluation, Settings};
use crate::mean;

/// Why two evaluations could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The baseline file is not what `paragraf eval` writes.
    #[error("{source_name} is not a recall10.tsv of `paragraf eval`")]
    NotRecallTsv {
        /// The baseline's file.
        source_name: String,
    },
    /// The two evaluated different questions.
    #[error("the baseline {source_name} has {baseline} questions, this run {ours}: evaluate the same questions (--questions, --limit)")]
    Unpaired {
        /// The baseline's file.
        source_name: String,
        /// Its questions.
        baseline: usize,
        /// This run's.
        ours: usize,
    },
    /// The test could not be computed.
    #[error(transparent)]
    Stats(#[from] StatsError),
}

impl Blame for BaselineError {
    fn fault(&self) -> Fault {
        match self {
            BaselineError::NotRecallTsv { .. } | BaselineError::Unpaired { .. } => Fault::Input,
            BaselineError::Stats(_) => Fault::Other,
        }
    }
}

/// Recall@10 per question and run as a `recall10.tsv`.
pub fn recall10_tsv(evaluations: &[Evaluation], questions: usize) -> String {
    let mut tsv = evaluations
        .iter()
        .map(|e| format!("{} {}", e.row.strategy, e.row.mode))
        .collect::<Vec<_>>()
        .join("\t");
    tsv.push('\n');
    for i in 0..questions {
        let cells: Vec<String> = evaluations
            .iter()
            .map(|e| format!("{:.4}", e.recall10_per_question[i]))
            .collect();
        tsv.push_str(&cells.join("\t"));
        tsv.push('\n');
    }
    tsv
}

/// Columns of a `recall10.tsv`: run name -> Recall@10 per question.
fn read_recall_tsv(text: &str) -> Option<Vec<(String, Vec<f64>)>> {
    let mut lines = text.lines();
    let mut columns: Vec<(String, Vec<f64>)> = lines
        .next()?
        .split('\t')
        .map(|name| (name.to_string(), Vec::new()))
        .collect();
    for line in lines {
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() != columns.len() {
            return None;
        }
        for (column, cell) in columns.iter_mut().zip(cells) {
            column.1.push(cell.parse().ok()?);
        }
    }
    Some(columns)
}

/// Each run of `ours` (a [`recall10_tsv`] of `questions` questions) against the same run of `baseline` (the
/// text of `source_name`), else the baseline's `section` run of the same mode, as Markdown: Recall@10 both,
/// questions helped and hurt, a paired permutation test Holm-corrected over the runs.
pub fn against_baseline(
    ours: &str,
    baseline: &str,
    source_name: &str,
    questions: usize,
    settings: &Settings,
) -> Result<String, BaselineError> {
    let Some(baseline) = read_recall_tsv(baseline) else {
        return Err(BaselineError::NotRecallTsv {
            source_name: source_name.to_string(),
        });
    };
    let ours = read_recall_tsv(ours).expect("written by recall10_tsv");
    let mut rows = Vec::new();
    for (name, recall) in &ours {
        let mode = name.rsplit(' ').next().unwrap_or_default();
        // The same run of the baseline (e.g. the same folder without learning), else its `section` run.
        let Some((base_name, base)) = baseline.iter().find(|(n, _)| n == name).or_else(|| {
            baseline
                .iter()
                .find(|(n, _)| *n == format!("section {mode}"))
        }) else {
            continue;
        };
        if base.len() != recall.len() {
            return Err(BaselineError::Unpaired {
                source_name: source_name.to_string(),
                baseline: base.len(),
                ours: recall.len(),
            });
        }
        let p = paired_permutation_test(recall, base, settings.rounds, settings.seed)?.p_value;
        let helped = recall.iter().zip(base).filter(|(a, b)| a > b).count();
        let hurt = recall.iter().zip(base).filter(|(a, b)| a < b).count();
        rows.push((name, base_name, mean(recall), mean(base), p, helped, hurt));
    }
    let adjusted = holm(&rows.iter().map(|r| r.4).collect::<Vec<_>>());
    let mut md = format!(
        "# Against the baseline {source_name} ({questions} questions)\n\n| run | R@10 | baseline run | baseline R@10 | Δ | questions helped / hurt | p (Holm) |\n|---|---|---|---|---|---|---|\n",
    );
    for ((name, base_name, ours, theirs, _, helped, hurt), p) in rows.iter().zip(adjusted) {
        md.push_str(&format!(
            "| {name} | {ours:.4} | {base_name} | {theirs:.4} | {:+.4} | {helped} / {hurt} | {p:.4} |\n",
            ours - theirs
        ));
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: Settings = Settings {
        runs: 1,
        rounds: 200,
        seed: 7,
    };

    #[test]
    fn a_run_is_compared_with_the_same_run_else_the_baselines_section_run() {
        let ours = "section dense\tchunk dense\n1.0000\t0.0000\n1.0000\t0.0000\n0.0000\t1.0000\n";
        let baseline = "section dense\n0.0000\n1.0000\n0.0000\n";
        let md = against_baseline(ours, baseline, "old/recall10.tsv", 3, &SETTINGS).unwrap();
        assert!(md.starts_with("# Against the baseline old/recall10.tsv (3 questions)"));
        assert!(
            md.contains("| section dense | 0.6667 | section dense | 0.3333 | +0.3333 | 1 / 0 |"),
            "{md}"
        );
        assert!(
            md.contains("| chunk dense | 0.3333 | section dense | 0.3333 | +0.0000 | 1 / 1 |"),
            "{md}"
        );
    }

    #[test]
    fn a_foreign_file_or_other_questions_are_the_inputs_fault() {
        let ours = "section dense\n1.0000\n";
        let error = against_baseline(ours, "not,a,tsv\n1;2\nx", "f.csv", 1, &SETTINGS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "f.csv is not a recall10.tsv of `paragraf eval`"
        );
        assert_eq!(error.fault(), Fault::Input);
        let error =
            against_baseline(ours, "section dense\n0.5\n0.5\n", "b.tsv", 1, &SETTINGS).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the baseline b.tsv has 2 questions, this run 1: evaluate the same questions (--questions, --limit)"
        );
    }
}
