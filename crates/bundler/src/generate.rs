//! Generated text for the strategies that need it: propositions, context prefixes, Lumber boundaries and RAPTOR
//! summaries.
//!
//! The default [`Generator::Builtin`] is deterministic and runs anywhere. [`Generator::Llm`] asks an
//! OpenAI-compatible chat endpoint with prompts modelled on the paper's; every answer is stored in a persistent
//! response cache keyed by model and prompt, written atomically, so an interrupted build resumes where it stopped
//! and a rebuild costs no calls. Bundles record which generator produced them ([`Producer`]).

use crate::chunk::{self, Chunk};
use crate::lumber::BoundaryPredictor;
use paragraf_engine::bundle::Producer;
use paragraf_format::frame::FileKind;
use paragraf_format::strategy::Strategy;
use paragraf_law::Law;
use sha2::Digest;
use std::path::PathBuf;
use std::time::Duration;

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// Network or HTTP failure after retries.
    #[error("language model endpoint {url}: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The model answered something unusable.
    #[error("language model answer could not be used ({0}). Most likely the model does not follow the prompt's output format; try another model")]
    BadAnswer(String),
    /// The response cache could not be read or written.
    #[error("response cache {path}: {message}")]
    Cache {
        /// The cache file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The API key variable is unset.
    #[error(
        "the API key variable {0} is not set. Export it (or choose another with --llm-key-env)"
    )]
    MissingKey(String),
}

/// Who generates derived text.
pub enum Generator {
    /// Deterministic built-in rules.
    Builtin,
    /// An OpenAI-compatible chat model.
    Llm(Box<LlmClient>),
}

impl Generator {
    /// The producer recorded in a strategy's bundle.
    pub fn producer(&self, strategy: Strategy) -> Producer {
        let generated = !matches!(
            strategy,
            Strategy::Section | Strategy::Fixed { .. } | Strategy::Linked(_)
        ) && !matches!(strategy, Strategy::Base(b) | Strategy::Cluster(b) if b != paragraf_format::strategy::BaseUnit::Proposition);
        match self {
            _ if !generated => Producer::None,
            Generator::Builtin => Producer::Builtin {
                version: crate::propositions::RULES_VERSION,
            },
            Generator::Llm(client) => Producer::Llm {
                model: client.model.clone(),
                prompt_hash: prompt_hash(),
            },
        }
    }

    /// Propositions of every sentence of the law.
    pub fn propositions(&mut self, law: &Law) -> Result<Vec<Chunk>, GenerateError> {
        match self {
            Generator::Builtin => Ok(chunk::propositions(law, crate::propositions::split_builtin)),
            Generator::Llm(client) => {
                let mut error = None;
                let chunks =
                    chunk::propositions(law, |sentence| match client.propositions(sentence) {
                        Ok(parts) => parts,
                        Err(e) => {
                            error.get_or_insert(e);
                            vec![sentence.to_string()]
                        }
                    });
                error.map_or(Ok(chunks), Err)
            }
        }
    }

    /// Base units with a context prefix.
    pub fn contextualize(
        &mut self,
        law: &Law,
        units: Vec<Chunk>,
    ) -> Result<Vec<Chunk>, GenerateError> {
        match self {
            Generator::Builtin => Ok(chunk::contextual(law, units, chunk::builtin_context)),
            Generator::Llm(client) => {
                let mut error = None;
                let chunks = chunk::contextual(law, units, |law, unit| {
                    let section = &law.sections[unit.pieces[0].section as usize];
                    let path = law.path_label(unit.pieces[0].section as usize);
                    let document = format!("{path}\n{}\n{}", chunk::heading(section), section.text);
                    match client.context(&document, &unit.embed_text) {
                        Ok(prefix) => prefix,
                        Err(e) => {
                            error.get_or_insert(e);
                            chunk::builtin_context(law, unit)
                        }
                    }
                });
                error.map_or(Ok(chunks), Err)
            }
        }
    }
}

const PROPOSITION_PROMPT: &str = "Zerlege den folgenden Satz aus einem deutschen Gesetz in einzelne, in sich verständliche Aussagen (Propositionen). Jede Aussage behält alle Voraussetzungen (Tatbestand) des Satzes und enthält genau eine Rechtsfolge. Ist keine Zerlegung möglich, gib den Satz unverändert zurück. Antworte nur mit einem JSON-Array von Strings.";
const CONTEXT_PROMPT: &str = "Hier ist ein Paragraph eines deutschen Gesetzes mit seiner Gliederung. Schreibe einen kurzen Kontext (höchstens 25 Wörter), der die folgende Einheit innerhalb des Paragraphen und des Gesetzes einordnet, damit sie bei einer Suche besser gefunden wird. Antworte nur mit dem Kontext.";
const BOUNDARY_PROMPT: &str = "Hier sind aufeinanderfolgende, nummerierte Einheiten eines deutschen Gesetzes. Nenne die Nummer der ersten Einheit, mit der ein neues Thema beginnt (nicht die erste Einheit). Gibt es keinen Themenwechsel, antworte mit 0. Antworte nur mit der Zahl.";
const SUMMARY_PROMPT: &str = "Fasse die folgenden Vorschriften eines deutschen Gesetzes in höchstens zwei Sätzen zusammen: welche Rechtsfragen regeln sie gemeinsam? Antworte nur mit der Zusammenfassung.";

/// A short hash of all prompt templates, recorded in bundles so changed prompts are visible.
pub fn prompt_hash() -> String {
    let digest = sha2::Sha256::digest(
        [
            PROPOSITION_PROMPT,
            CONTEXT_PROMPT,
            BOUNDARY_PROMPT,
            SUMMARY_PROMPT,
        ]
        .concat(),
    );
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Connection settings for an OpenAI-compatible chat endpoint.
#[derive(Clone, Debug)]
pub struct LlmConfig {
    /// Base URL, e.g. `http://127.0.0.1:8080` (the client posts to `{base}/v1/chat/completions`).
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// Environment variable holding the API key (unset key variable is an error only if named explicitly).
    pub api_key_env: Option<String>,
    /// Folder of the persistent response cache.
    pub cache_dir: PathBuf,
    /// Retries on 429/5xx/network errors.
    pub retries: u32,
}

/// The chat client with its response cache.
pub struct LlmClient {
    config: LlmConfig,
    model: String,
    key: Option<String>,
    agent: ureq::Agent,
    /// Answers served from the cache in this run.
    pub cache_hits: usize,
    /// Answers fetched from the endpoint in this run.
    pub calls: usize,
}

/// Magic of a response cache entry.
const CACHE: FileKind = FileKind::new(b"PGRF-LLM", "LLM response cache entry", 3, 2);

impl LlmClient {
    /// Creates the client; fails when the named API key variable is unset.
    pub fn new(config: LlmConfig) -> Result<Self, GenerateError> {
        let key = match &config.api_key_env {
            Some(var) => {
                Some(std::env::var(var).map_err(|_| GenerateError::MissingKey(var.clone()))?)
            }
            None => None,
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(LlmClient {
            model: config.model.clone(),
            config,
            key,
            agent,
            cache_hits: 0,
            calls: 0,
        })
    }

    fn cache_path(&self, system: &str, user: &str) -> PathBuf {
        let digest = sha2::Sha256::digest(format!("{}\u{0}{system}\u{0}{user}", self.model));
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.config
            .cache_dir
            .join(&hex[..2])
            .join(format!("{hex}.pgrf"))
    }

    /// One chat completion, from the cache when it is there.
    pub fn complete(&mut self, system: &str, user: &str) -> Result<String, GenerateError> {
        let path = self.cache_path(system, user);
        let cache_err = |message: String| GenerateError::Cache {
            path: path.display().to_string(),
            message,
        };
        if let Ok(bytes) = std::fs::read(&path) {
            match CACHE.decode::<String>(&bytes) {
                Ok(answer) => {
                    self.cache_hits += 1;
                    return Ok(answer);
                }
                Err(e) => eprintln!(
                    "warning: ignoring damaged cache entry {}: {e}",
                    path.display()
                ),
            }
        }
        let answer = self.request(system, user)?;
        self.calls += 1;
        let dir = path.parent().expect("cache path has a parent");
        std::fs::create_dir_all(dir).map_err(|e| cache_err(e.to_string()))?;
        paragraf_fs::write_atomic(&path, &CACHE.encode(&answer))
            .map_err(|e| cache_err(e.to_string()))?;
        Ok(answer)
    }

    fn request(&self, system: &str, user: &str) -> Result<String, GenerateError> {
        let url = format!(
            "{}/v1/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let body = serde_json::json!({
            "model": self.model,
            "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        });
        let http = |message: String| GenerateError::Http {
            url: url.clone(),
            message,
        };
        let mut delay = Duration::from_millis(200);
        for attempt in 0..=self.config.retries {
            let mut request = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json");
            if let Some(key) = &self.key {
                request = request.header("Authorization", &format!("Bearer {key}"));
            }
            match request.send(body.to_string()) {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    let text = response
                        .body_mut()
                        .read_to_string()
                        .map_err(|e| http(e.to_string()))?;
                    if status == 200 {
                        let json: serde_json::Value = serde_json::from_str(&text)
                            .map_err(|e| GenerateError::BadAnswer(e.to_string()))?;
                        return json["choices"][0]["message"]["content"]
                            .as_str()
                            .map(|s| s.trim().to_string())
                            .ok_or_else(|| {
                                GenerateError::BadAnswer(format!(
                                    "no choices[0].message.content in {text}"
                                ))
                            });
                    }
                    let retryable = status == 429 || status >= 500;
                    if !retryable || attempt == self.config.retries {
                        return Err(http(format!(
                            "HTTP {status}: {}",
                            text.chars().take(300).collect::<String>()
                        )));
                    }
                }
                Err(e) if attempt == self.config.retries => return Err(http(e.to_string())),
                Err(_) => {}
            }
            std::thread::sleep(delay);
            delay *= 2;
        }
        unreachable!("the loop returns on its last attempt")
    }

    /// Propositions of one sentence.
    pub fn propositions(&mut self, sentence: &str) -> Result<Vec<String>, GenerateError> {
        let answer = self.complete(PROPOSITION_PROMPT, sentence)?;
        let json = answer
            .trim()
            .trim_start_matches("```json")
            .trim_start_matches("```")
            .trim_end_matches("```");
        let parts: Vec<String> = serde_json::from_str(json)
            .map_err(|e| GenerateError::BadAnswer(format!("{e}: {answer}")))?;
        let parts: Vec<String> = parts
            .into_iter()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        if parts.is_empty() {
            return Err(GenerateError::BadAnswer(format!(
                "no propositions in {answer}"
            )));
        }
        Ok(parts)
    }

    /// A context prefix for `unit` within `document`.
    pub fn context(&mut self, document: &str, unit: &str) -> Result<String, GenerateError> {
        self.complete(
            CONTEXT_PROMPT,
            &format!("<dokument>\n{document}\n</dokument>\n<einheit>\n{unit}\n</einheit>"),
        )
    }

    /// A summary of some units' texts.
    pub fn summary(&mut self, texts: &[String]) -> Result<String, GenerateError> {
        self.complete(SUMMARY_PROMPT, &texts.join("\n\n"))
    }

    /// A Lumber predictor over `units`; call [`LlmBoundaries::finish`] afterwards to surface errors.
    pub fn boundary_predictor<'a>(&'a mut self, units: &'a [Chunk]) -> LlmBoundaries<'a> {
        LlmBoundaries {
            client: self,
            units,
            error: None,
        }
    }
}

/// Lumber boundaries predicted by the language model.
pub struct LlmBoundaries<'a> {
    client: &'a mut LlmClient,
    units: &'a [Chunk],
    error: Option<GenerateError>,
}

impl LlmBoundaries<'_> {
    /// The first error any prediction hit.
    pub fn finish(self) -> Result<(), GenerateError> {
        self.error.map_or(Ok(()), Err)
    }
}

impl BoundaryPredictor for LlmBoundaries<'_> {
    fn next_start(&mut self, group: &[usize]) -> usize {
        if self.error.is_some() {
            return group.len();
        }
        let listing: String = group
            .iter()
            .enumerate()
            .map(|(n, &u)| format!("{}: {}\n", n + 1, self.units[u].embed_text))
            .collect();
        let answer = match self.client.complete(BOUNDARY_PROMPT, &listing) {
            Ok(a) => a,
            Err(e) => {
                self.error = Some(e);
                return group.len();
            }
        };
        match answer.trim().trim_end_matches('.').parse::<usize>() {
            Ok(0) => group.len(),
            Ok(n) if (2..=group.len()).contains(&n) => n - 1,
            _ => {
                self.error = Some(GenerateError::BadAnswer(format!(
                    "expected a unit number 0 or 2..{}, got {answer:?}",
                    group.len()
                )));
                group.len()
            }
        }
    }
}
