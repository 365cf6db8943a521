//! Why the app cannot do what was asked. One enum, so the UI decides by variant (dense search refuses a model
//! mismatch, a missing report is no error) and never by the words of a message; the texts are German, with the
//! library's own (English) reason appended where one exists.

use std::fmt;

use paragraf_core::federal::cited::CitedByError;
use paragraf_core::federal::files::FederalFileError;
use paragraf_core::finder::TopicsError;
use paragraf_core::manifest::ManifestError;
use paragraf_core::results::{QuestionError, MAX_QUESTION_BYTES};
use paragraf_engine::expansion::ExpansionError;
use paragraf_engine::learning::LearningError;
use paragraf_engine::EngineError;
use paragraf_format::frame::BundleError;

/// Which kind of bundle a failure concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleKind {
    /// A law bundle.
    Law,
    /// A strategy bundle.
    Strategy,
    /// A law's query-expansion table.
    Expansions,
    /// The index across all laws (head or posting shard).
    Federal,
    /// The law finder's topics of all laws.
    Topics,
    /// Which sections of other laws cite a law's sections.
    CitedBy,
    /// What was learned from past questions (`paragraf learn`).
    Learned,
}

impl BundleKind {
    /// The German name shown to users.
    pub fn label(self) -> &'static str {
        match self {
            BundleKind::Law => "Gesetzesbündel",
            BundleKind::Strategy => "Strategie-Bündel",
            BundleKind::Expansions => "Synonymtabelle",
            BundleKind::Federal => "Gesamtindex",
            BundleKind::Topics => "Themenliste",
            BundleKind::CitedBy => "Verweise aus anderen Gesetzen",
            BundleKind::Learned => "Gelerntes aus Laienfragen",
        }
    }
}

/// Why a fetched bundle cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum BundleProblem {
    /// Its size or SHA-256 differs from the manifest entry (checked before decoding), or it decodes to another
    /// law, strategy or model than the entry lists (checked after).
    Mismatch(ManifestError),
    /// The bytes do not decode (header, checksum, payload).
    Decode(BundleError),
    /// It does not fit the loaded law.
    Engine(EngineError),
    /// An expansion table that does not decode or breaks its invariants.
    Expansions(ExpansionError),
    /// Index files across laws that do not decode or do not fit together.
    Federal(FederalFileError),
    /// A topics file that does not decode or breaks its limits.
    Topics(TopicsError),
    /// A cited-by shard that does not decode, breaks its invariants or is another range than listed.
    CitedBy(CitedByError),
    /// A learned file that does not decode, breaks its limits or belongs to another law.
    Learned(LearningError),
}

/// Why the in-browser encoder failed.
#[derive(Clone, Debug, PartialEq)]
pub enum EncoderProblem {
    /// Its size or SHA-256 differs from the manifest, its framing or shapes are broken, or it is another model's
    /// (the library's message).
    Rejected(String),
    /// The worker running it died (most likely out of memory) or could not start.
    Crashed(String),
}

/// A failure shown to the user (never swallowed).
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The server answered 404.
    NotFound {
        /// What was asked for (`Bündelliste …`).
        what: String,
        /// The server's reason.
        detail: String,
    },
    /// The server answered another error status.
    Http {
        /// What was asked for.
        what: String,
        /// HTTP status.
        status: u16,
        /// The server's reason.
        detail: String,
    },
    /// No answer (server down, CORS, offline).
    Network {
        /// What was asked for.
        what: String,
        /// The browser's reason.
        detail: String,
    },
    /// The transfer broke off.
    Incomplete {
        /// What was loading.
        what: String,
        /// The browser's reason.
        detail: String,
    },
    /// The browser refused (no window, an invalid address, no text in an answer).
    Browser(String),
    /// The download does not fit into memory.
    OutOfMemory {
        /// What was loading.
        what: String,
        /// The size that did not fit.
        bytes: u64,
    },
    /// `manifest.json` is not a usable manifest.
    Manifest {
        /// Its address.
        url: String,
        /// Why.
        error: ManifestError,
    },
    /// The manifest lists no law.
    NoLaws {
        /// Its address.
        url: String,
    },
    /// The folder has no index across laws.
    NoFederal {
        /// The manifest's address.
        url: String,
    },
    /// A law or strategy bundle cannot be used.
    Bundle {
        /// Law or strategy.
        kind: BundleKind,
        /// File name from the manifest.
        file: String,
        /// Why.
        problem: BundleProblem,
    },
    /// The query-embedding proxy answered something that is not its protocol.
    ProxyAnswer {
        /// Its address.
        url: String,
        /// The parser's reason.
        detail: String,
    },
    /// The proxy does not embed with the model the bundle was built with: the vectors are not comparable.
    ModelMismatch {
        /// The models the proxy serves (or the one it answered with).
        served: Vec<String>,
        /// The bundle's model.
        bundle: String,
    },
    /// The question is not searched: longer than the engine accepts, or nothing but spaces.
    Question(QuestionError),
    /// The search itself failed.
    Search(EngineError),
    /// The in-browser query encoder cannot be used; searches go on with the proxy or BM25.
    Encoder {
        /// Its file name from the manifest.
        file: String,
        /// Why.
        problem: EncoderProblem,
    },
    /// `report.json` is not an evaluation report.
    Report {
        /// Its address.
        url: String,
        /// paragraf-eval's reason (`ReportError`, as text: it is neither `Clone` nor `PartialEq`).
        detail: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NotFound { what, detail } => write!(f, "{what}: nicht gefunden ({detail})"),
            Failure::Http {
                what,
                status,
                detail,
            } => write!(f, "{what}: HTTP {status} ({detail})"),
            Failure::Network { what, detail } => write!(f, "{what} nicht erreichbar: {detail}"),
            Failure::Incomplete { what, detail } => {
                write!(f, "{what} konnte nicht vollständig geladen werden: {detail}")
            }
            Failure::Browser(message) => f.write_str(message),
            Failure::OutOfMemory { what, bytes } => write!(
                f,
                "{what}: nicht genug Arbeitsspeicher für {} (das Gesetz ist für dieses Gerät zu groß)",
                crate::format_bytes(*bytes)
            ),
            Failure::Manifest { url, error } => write!(f, "Bündelliste {url}: {error}"),
            Failure::NoLaws { url } => write!(
                f,
                "{url} nennt kein Gesetz. Bündel mit `paragraf build` erzeugen"
            ),
            Failure::NoFederal { url } => write!(
                f,
                "{url} nennt keinen Gesamtindex über alle Gesetze. Mit `paragraf federal` erzeugen"
            ),
            Failure::Bundle {
                kind,
                file,
                problem,
            } => {
                write!(f, "{} {file}: ", kind.label())?;
                match problem {
                    BundleProblem::Mismatch(e) => write!(f, "{e}"),
                    BundleProblem::Decode(e) => write!(f, "{e}"),
                    BundleProblem::Engine(e) => write!(f, "{e}"),
                    BundleProblem::Expansions(e) => write!(f, "{e}"),
                    BundleProblem::Federal(e) => write!(f, "{e}"),
                    BundleProblem::Topics(e) => write!(f, "{e}"),
                    BundleProblem::CitedBy(e) => write!(f, "{e}"),
                    BundleProblem::Learned(e) => write!(f, "{e}"),
                }
            }
            Failure::ProxyAnswer { url, detail } => {
                write!(f, "Einbettungsdienst {url}: unerwartete Antwort ({detail})")
            }
            Failure::ModelMismatch { served, bundle } => {
                let names = served
                    .iter()
                    .map(|m| format!("„{m}“"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let models = if served.len() == 1 {
                    "dem Modell"
                } else {
                    "den Modellen"
                };
                write!(
                    f,
                    "Der Einbettungsdienst rechnet mit {models} {names}, die Bündel wurden aber mit „{bundle}“ gebaut. \
                     Vektoren verschiedener Modelle sind nicht vergleichbar: die dichte Suche ist aus, gesucht wird lexikalisch (BM25)."
                )
            }
            Failure::Question(QuestionError::TooLong(bytes)) => write!(
                f,
                "Die Frage ist mit {bytes} Bytes zu lang (höchstens {MAX_QUESTION_BYTES}): bitte auf die Frage selbst kürzen; das Sprachmodell liest ohnehin nur etwa 2.000 Zeichen"
            ),
            Failure::Question(QuestionError::Empty) => f.write_str("Die Frage ist leer"),
            Failure::Search(e) => write!(f, "{e}"),
            Failure::Report { url, detail } => write!(f, "Evaluationsbericht {url}: {detail}"),
            Failure::Encoder { file, problem } => match problem {
                EncoderProblem::Rejected(reason) => write!(f, "Sprachmodell {file}: {reason}"),
                EncoderProblem::Crashed(reason) => write!(
                    f,
                    "Sprachmodell {file}: der Rechenprozess im Browser ist ausgefallen ({reason}); vermutlich reicht der Arbeitsspeicher nicht"
                ),
            },
        }
    }
}

impl std::error::Error for Failure {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_and_the_reason() {
        let mismatch = Failure::Bundle {
            kind: BundleKind::Law,
            file: "GG.law.abc.pgb".into(),
            problem: BundleProblem::Mismatch(ManifestError::Mismatch {
                file: "GG.law.abc.pgb".into(),
                expected: "SHA-256 00".into(),
                found: "SHA-256 ff".into(),
            }),
        };
        assert_eq!(
            mismatch.to_string(),
            "Gesetzesbündel GG.law.abc.pgb: GG.law.abc.pgb does not match the manifest: expected SHA-256 00, \
             found SHA-256 ff. Most likely the folder mixes files of two builds; rebuild with `paragraf build`"
        );
        let model = Failure::ModelMismatch {
            served: vec!["a".into()],
            bundle: "b".into(),
        };
        assert!(
            model
                .to_string()
                .starts_with("Der Einbettungsdienst rechnet mit dem Modell „a“, die Bündel wurden aber mit „b“ gebaut."),
            "{model}"
        );
        let models = Failure::ModelMismatch {
            served: vec!["a".into(), "c".into()],
            bundle: "b".into(),
        };
        assert!(
            models
                .to_string()
                .starts_with("Der Einbettungsdienst rechnet mit den Modellen „a“, „c“, die Bündel wurden aber mit „b“"),
            "{models}"
        );
        assert_eq!(
            Failure::OutOfMemory {
                what: "Gesetzesbündel x".into(),
                bytes: 1_234_567
            }
            .to_string(),
            "Gesetzesbündel x: nicht genug Arbeitsspeicher für 1,2 MB (das Gesetz ist für dieses Gerät zu groß)"
        );
        assert_eq!(
            Failure::Question(QuestionError::TooLong(5000)).to_string(),
            "Die Frage ist mit 5000 Bytes zu lang (höchstens 4096): bitte auf die Frage selbst kürzen; das Sprachmodell liest ohnehin nur etwa 2.000 Zeichen"
        );
    }
}
