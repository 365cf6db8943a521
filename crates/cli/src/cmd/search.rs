//! `paragraf search`: the app's search from a terminal or a script — same bundles, same engine call, same
//! defaults. People get a compact list (designation, title, breadcrumb, excerpt, score, official link; the
//! words that hit in bold when stdout is a terminal); scripts get `--json` in the schema of
//! [`paragraf_core::results`].

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use paragraf_core::results::{Excerpt, SearchResults};
use paragraf_engine::Mode;

use super::library::{self, Encoder, ExpansionChoice, Library};
use super::refusal::refuse;

/// Where the bundles are: shared by `search`, `show` and `mcp`.
#[derive(Args, Clone)]
pub struct BundlesDir {
    /// Folder with manifest.json and the bundles (`paragraf build --out`).
    #[arg(long, value_name = "DIR", env = "PARAGRAF_BUNDLES", default_value = library::DEFAULT_BUNDLES)]
    pub bundles: PathBuf,
}

impl BundlesDir {
    /// Opens the bundle folder for reading sections (reads only the manifest; nothing is embedded).
    pub fn open(&self) -> Result<Library> {
        Library::open(&self.bundles, Encoder::Local(None))
    }
}

/// Where the bundles are and how questions are embedded: shared by `search` and `mcp`.
#[derive(Args, Clone)]
pub struct Source {
    #[command(flatten)]
    pub dir: BundlesDir,
    /// Embed questions with a query-embedding proxy (`paragraf proxy`) at this URL instead of the local model.
    #[arg(long, value_name = "URL", conflicts_with = "model")]
    pub proxy: Option<String>,
    /// Where the bundles' model is: an e5 model file or an EmbeddingGemma folder (default: e5 from
    /// $PARAGRAF_MODEL, else the cache filled by `paragraf model fetch`; EmbeddingGemma from its fetch cache).
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
}

impl Source {
    /// Opens the bundle folder (reads only the manifest).
    pub fn open(&self) -> Result<Library> {
        let encoder = match &self.proxy {
            Some(url) => Encoder::Proxy(url.clone()),
            None => Encoder::Local(self.model.clone()),
        };
        Library::open(&self.dir.bundles, encoder)
    }
}

#[derive(Args)]
pub struct SearchArgs {
    /// The question, in plain German, or a citation such as `§ 551 BGB` (`-` reads it from stdin).
    question: String,
    #[command(flatten)]
    source: Source,
    /// Laws to search (repeat or separate by commas; default: every law in the folder).
    #[arg(long, value_delimiter = ',')]
    law: Vec<String>,
    /// Strategy bundle for dense search (`paragraf bundles` lists them).
    #[arg(long, default_value = "section")]
    strategy: String,
    /// Ranking: hybrid (BM25 and dense fused by reciprocal rank, the app's default), dense, or bm25 (no model,
    /// no proxy).
    #[arg(long, default_value_t = Mode::Hybrid)]
    mode: Mode,
    /// Sections to return.
    #[arg(short, long, default_value_t = 10)]
    k: usize,
    /// BM25 weight of the statute words query expansion adds for lay words (`Kaution` → `Sicherheitsleistung`),
    /// relative to the question's own words; 0 turns expansion off.
    #[arg(long, value_name = "W", default_value_t = paragraf_engine::DEFAULT_EXPANSION_WEIGHT)]
    expansion_weight: f32,
    /// Added words not to search (repeat or separate by commas), as printed under "also searched".
    #[arg(long, value_name = "WORD", value_delimiter = ',')]
    without: Vec<String>,
    /// Print the results as JSON (schema `paragraf.search/1`).
    #[arg(long)]
    json: bool,
    /// Rank without what the folder learned from past questions (`paragraf learn`), to compare.
    #[arg(long)]
    no_learning: bool,
    /// Across laws: rank without law routing (which law the question belongs to), to compare.
    #[arg(long)]
    no_routing: bool,
}

pub fn run(args: SearchArgs) -> Result<()> {
    let started = Instant::now();
    let question = if args.question == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        text
    } else {
        args.question.clone()
    };
    // Refuse bad input before loading anything.
    if let Err(e) = paragraf_core::results::check_question(&question) {
        refuse!("{e}");
    }
    if !(1..=library::MAX_K).contains(&args.k) {
        refuse!(
            "-k must be between 1 and {}, not {}",
            library::MAX_K,
            args.k
        );
    }
    let expansion = ExpansionChoice::new(args.expansion_weight, args.without.clone())?;
    let lib = args.source.open()?;
    let lib = if args.no_learning {
        lib.without_learning()
    } else {
        lib
    };
    let lib = if args.no_routing {
        lib.without_routing()
    } else {
        lib
    };
    let mode = args.mode;
    let (laws, model) = lib.plan(&args.law, &args.strategy)?;
    // The model loads on a second thread while the bundles load on this one (both cores busy).
    std::thread::scope(|s| -> Result<()> {
        if let Some(model) = model.as_deref().filter(|_| mode != Mode::Bm25) {
            s.spawn(|| lib.warm_encoder(model));
        }
        for law in &laws {
            let loaded = lib.law(law)?;
            lib.strategy(&loaded, &args.strategy)?;
        }
        Ok(())
    })?;
    let results = lib.search(&question, &laws, &args.strategy, mode, args.k, &expansion)?;
    print(&results, args.json, render)?;
    eprintln!(
        "{} hits ({}) in {:.0} ms from start",
        results.hits.len(),
        results.mode,
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// A heading line, trimmed, in ANSI bold on a terminal.
pub fn heading(text: &str, terminal: bool) -> String {
    let text = text.trim_end();
    if terminal {
        format!("\x1b[1m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Prints `value` to stdout: as one JSON line with `json`, else rendered for a person (bold only on a terminal).
pub fn print<T: serde::Serialize>(
    value: &T,
    json: bool,
    render: impl Fn(&T, bool) -> String,
) -> Result<()> {
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal();
    let mut out = stdout.lock();
    if json {
        serde_json::to_writer(&mut out, value)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(value, terminal))?;
    }
    out.flush()?;
    Ok(())
}

/// The excerpt with its highlights in ANSI bold (`bold`) or plain, `…` where text was cut.
pub fn excerpt_text(excerpt: &Excerpt, bold: bool) -> String {
    let mut out = String::new();
    if excerpt.cut_start {
        out.push('…');
    }
    let mut at = 0;
    for &(a, b) in &excerpt.highlights {
        let (a, b) = (a as usize, b as usize);
        let (Some(before), Some(marked)) = (excerpt.text.get(at..a), excerpt.text.get(a..b)) else {
            continue;
        };
        out.push_str(before);
        if bold {
            out.push_str("\x1b[1m");
            out.push_str(marked);
            out.push_str("\x1b[0m");
        } else {
            out.push_str(marked);
        }
        at = b;
    }
    out.push_str(excerpt.text.get(at..).unwrap_or_default());
    if excerpt.cut_end {
        out.push('…');
    }
    out
}

/// The results for a person.
pub fn render(results: &SearchResults, terminal: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for e in &results.expansions {
        let _ = writeln!(
            out,
            "also searched ({} for \"{}\"): {}  [--without WORD removes one]",
            e.law,
            e.from,
            e.to.join(", ")
        );
    }
    if !results.expansions.is_empty() {
        out.push('\n');
    }
    if results.hits.is_empty() {
        out.push_str("No hits. Try other words or another strategy.\n");
    }
    if !results.by_law.is_empty() {
        let counts: Vec<String> = results
            .by_law
            .iter()
            .map(|c| format!("{} {}", c.law, c.hits))
            .collect();
        let routed = if results.routed {
            "routed by law"
        } else {
            "not routed by law"
        };
        let _ = writeln!(out, "laws: {}  ({routed})\n", counts.join(" · "));
    }
    if let Some(learned) = &results.learned {
        let _ = writeln!(
            out,
            "ranked with what was learned from {} questions ({}; {})  [--no-learning to compare]\n",
            learned.questions, learned.source, learned.licence
        );
    }
    if let Some(named) = &results.named_law {
        let _ = writeln!(
            out,
            "The question names {} ({}): --law \"{}\" searches it alone.\n",
            named.law, named.title, named.law
        );
    }
    for hit in &results.hits {
        let heading = heading(&format!("{} {}", hit.designation, hit.title), terminal);
        let cited = if hit.cited { "  [cited]" } else { "" };
        // Across laws, the law's title says what an abbreviation like `BetrKV` is.
        let law = match hit.law_title.as_str() {
            title if !title.is_empty() && !results.by_law.is_empty() => {
                format!("{} ({title})", hit.law)
            }
            _ => hit.law.clone(),
        };
        let _ = writeln!(
            out,
            "{:>2}. {law} {heading}{cited}  ({:.4})",
            hit.rank, hit.score
        );
        if !hit.breadcrumb.is_empty() {
            let _ = writeln!(out, "    {}", hit.breadcrumb);
        }
        if hit.precedents > 0 {
            let _ = writeln!(
                out,
                "    {} of the most similar past questions led here",
                hit.precedents
            );
        }
        let _ = writeln!(out, "    {}", excerpt_text(&hit.excerpt, terminal));
        let _ = writeln!(out, "    {}\n", hit.url);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_are_bold_on_a_terminal_only() {
        let e = Excerpt {
            text: "Die Würde des Menschen".into(),
            highlights: vec![(4, 10)],
            cut_start: false,
            cut_end: true,
        };
        assert_eq!(excerpt_text(&e, false), "Die Würde des Menschen…");
        assert_eq!(
            excerpt_text(&e, true),
            "Die \x1b[1mWürde\x1b[0m des Menschen…"
        );
    }
}
