//! The search state that lives in the URL (`?q=&ohne=&law=&s=&mode=&syn=&graph=&lernen=&mehr=&u=&vektor=`), so a search can be shared and
//! reloaded.

use paragraf_engine::{Mode, UnitSearch};

/// What the address bar says.
#[derive(Clone, Debug, PartialEq)]
pub struct UrlState {
    /// The query text.
    pub q: String,
    /// Expansion words the user removed (`ohne=Sicherheit,Hinterlegung`), in the order removed.
    pub without: Vec<String>,
    /// Law abbreviation (`GG`); empty: the first law of the manifest.
    pub law: String,
    /// On the page over all laws: only these laws (`gesetze=BGB,KSchG`); empty: every law.
    pub laws: Vec<String>,
    /// Strategy name (`section`); empty: `section` or the first bundle of the law.
    pub strategy: String,
    /// Dense, BM25 or hybrid (hybrid when absent).
    pub mode: Mode,
    /// Query expansion on (the default) or off (`syn=aus`).
    pub expand: bool,
    /// Citation-graph re-ranking on (`graph=an`; off by default).
    pub graph: bool,
    /// Ranking with what the folder learned from past questions, when it has it (on by default; `lernen=aus`).
    pub learning: bool,
    /// More results than the first page (`mehr=an`: `load::MORE_SECTIONS`), asked for below the list.
    pub more: bool,
    /// Exact scan or HNSW.
    pub unit_search: UnitSearch,
    /// Another bundle folder (`?data=`), relative to the page or absolute.
    pub data: Option<String>,
    /// Another query-embedding proxy (`?proxy=`), overriding the build-time default and the saved setting.
    pub proxy: Option<String>,
    /// Which page: `strategies` or the search page.
    pub page: Page,
    /// Where query vectors are computed (`vektor=server|browser`; automatic when absent).
    pub encoder: EncoderChoice,
    /// The researcher's controls (strategy, mode, unit search, graph, scores) shown (`erweitert=an`); a lay view
    /// (question, law, results) by default.
    pub advanced: bool,
}

/// Where the query vector of a dense or hybrid search comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EncoderChoice {
    /// The proxy when it serves the bundles' model, else the in-browser encoder, else BM25 alone.
    #[default]
    Auto,
    /// Only the proxy (`vektor=server`).
    Server,
    /// Only the in-browser encoder (`vektor=browser`): no question leaves the device.
    Browser,
}

impl EncoderChoice {
    /// The URL value (`None` for the default).
    pub fn as_param(self) -> Option<&'static str> {
        match self {
            EncoderChoice::Auto => None,
            EncoderChoice::Server => Some("server"),
            EncoderChoice::Browser => Some("browser"),
        }
    }

    /// From a URL value; anything else is automatic.
    pub fn from_param(value: &str) -> EncoderChoice {
        match value {
            "server" => EncoderChoice::Server,
            "browser" => EncoderChoice::Browser,
            _ => EncoderChoice::Auto,
        }
    }

    /// Whether the proxy may be asked.
    pub fn uses_server(self) -> bool {
        self != EncoderChoice::Browser
    }

    /// Whether the in-browser encoder may be used.
    pub fn uses_browser(self) -> bool {
        self != EncoderChoice::Server
    }
}

/// The app's pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Page {
    /// Search.
    #[default]
    Search,
    /// Evaluation figures per strategy.
    Strategies,
    /// One search over all laws of the folder (`page=alle`).
    AllLaws,
}

impl Default for UrlState {
    fn default() -> Self {
        UrlState {
            q: String::new(),
            without: Vec::new(),
            law: String::new(),
            laws: Vec::new(),
            strategy: String::new(),
            mode: Mode::default(),
            expand: true,
            graph: false,
            learning: true,
            more: false,
            unit_search: UnitSearch::default(),
            data: None,
            proxy: None,
            page: Page::default(),
            encoder: EncoderChoice::default(),
            advanced: false,
        }
    }
}

impl UrlState {
    /// This state for another question `q`: what belonged to the current one (expansion words removed from it,
    /// more results asked for it) is dropped, as a question submitted in the app drops it.
    pub fn asking(&self, q: String) -> UrlState {
        UrlState {
            q,
            without: Vec::new(),
            more: false,
            ..self.clone()
        }
    }

    /// Parses a query string (with or without the leading `?`); unknown keys and bad values are ignored.
    pub fn parse(search: &str) -> UrlState {
        let mut state = UrlState::default();
        for pair in search
            .trim_start_matches('?')
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = decode(value);
            match decode(key).as_str() {
                "q" => state.q = value,
                "ohne" => {
                    // Each word is encoded on its own, so a comma in the raw value separates words.
                    state.without = pair
                        .split_once('=')
                        .map_or("", |(_, v)| v)
                        .split(',')
                        .map(decode)
                        .filter(|w| !w.trim().is_empty())
                        .collect()
                }
                "law" => state.law = value,
                "gesetze" => state.laws = parse_laws(&value),
                "s" => state.strategy = value,
                "mode" => state.mode = value.parse().unwrap_or_default(),
                "syn" => state.expand = value != "aus",
                "graph" => state.graph = value == "an",
                "lernen" => state.learning = value != "aus",
                "mehr" => state.more = value == "an",
                "u" => state.unit_search = value.parse().unwrap_or_default(),
                "data" if !value.is_empty() => state.data = Some(value),
                "proxy" if !value.is_empty() => state.proxy = Some(value),
                "page" if value == "strategies" => state.page = Page::Strategies,
                "page" if value == "alle" => state.page = Page::AllLaws,
                "vektor" => state.encoder = EncoderChoice::from_param(&value),
                "erweitert" => state.advanced = value == "an",
                _ => {}
            }
        }
        state
    }

    /// The query string, `?`-prefixed; default values are left out.
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        match self.page {
            Page::Strategies => parts.push("page=strategies".to_string()),
            Page::AllLaws => parts.push("page=alle".to_string()),
            Page::Search => {}
        }
        if !self.q.is_empty() {
            parts.push(format!("q={}", encode(&self.q)));
        }
        if !self.without.is_empty() {
            let words: Vec<String> = self.without.iter().map(|w| encode(w)).collect();
            parts.push(format!("ohne={}", words.join(",")));
        }
        if !self.law.is_empty() {
            parts.push(format!("law={}", encode(&self.law)));
        }
        if !self.laws.is_empty() {
            parts.push(format!("gesetze={}", encode(&self.laws.join(","))));
        }
        if !self.strategy.is_empty() {
            parts.push(format!("s={}", encode(&self.strategy)));
        }
        if self.mode != Mode::default() {
            parts.push(format!("mode={}", self.mode));
        }
        if !self.expand {
            parts.push("syn=aus".to_string());
        }
        if self.graph {
            parts.push("graph=an".to_string());
        }
        if !self.learning {
            parts.push("lernen=aus".to_string());
        }
        if self.more {
            parts.push("mehr=an".to_string());
        }
        if self.unit_search != UnitSearch::default() {
            parts.push(format!("u={}", self.unit_search));
        }
        if self.advanced {
            parts.push("erweitert=an".to_string());
        }
        if let Some(data) = &self.data {
            parts.push(format!("data={}", encode(data)));
        }
        if let Some(proxy) = &self.proxy {
            parts.push(format!("proxy={}", encode(proxy)));
        }
        if let Some(value) = self.encoder.as_param() {
            parts.push(format!("vektor={value}"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!("?{}", parts.join("&"))
        }
    }
}

/// Law abbreviations from a comma-separated list as typed or in the URL: trimmed, empty ones dropped, each once.
pub fn parse_laws(value: &str) -> Vec<String> {
    let mut laws: Vec<String> = Vec::new();
    for law in value.split(',').map(str::trim).filter(|l| !l.is_empty()) {
        if !laws.iter().any(|l| l == law) {
            laws.push(law.to_string());
        }
    }
    laws
}

/// `application/x-www-form-urlencoded` encoding of a value (UTF-8, space as `+`).
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes a form-encoded value; malformed escapes are kept as written, invalid UTF-8 is replaced.
pub fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi * 16 + lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_umlauts_and_paragraph_signs() {
        let state = UrlState {
            q: "§ 535 Miete & Kündigung – Frist?".into(),
            without: vec!["Sicherheitsleistung".into(), "Groß, mutter".into()],
            law: "GG".into(),
            laws: vec![],
            strategy: "subsection".into(),
            mode: Mode::Bm25,
            expand: false,
            graph: true,
            learning: false,
            more: true,
            unit_search: UnitSearch::Hnsw,
            data: Some("https://example.org/b/".into()),
            proxy: Some("http://127.0.0.1:9/".into()),
            page: Page::Search,
            encoder: EncoderChoice::Browser,
            advanced: true,
        };
        let query = state.to_query();
        assert!(
            query.starts_with("?q=%C2%A7+535+Miete+%26+K%C3%BCndigung"),
            "{query}"
        );
        assert!(
            query.contains("&ohne=Sicherheitsleistung,Gro%C3%9F%2C+mutter&"),
            "{query}"
        );
        assert!(query.contains("&lernen=aus&mehr=an&"), "{query}");
        assert_eq!(UrlState::parse(&query), state);
        assert!(!UrlState::default().to_query().contains("lernen"));
    }

    #[test]
    fn another_question_drops_what_belonged_to_the_current_one() {
        let state = UrlState::parse("?q=Kaution&ohne=Sicherheit&law=BGB&mode=bm25&mehr=an");
        assert_eq!(
            state.asking("§ 551 BGB".into()).to_query(),
            "?q=%C2%A7+551+BGB&law=BGB&mode=bm25"
        );
    }

    #[test]
    fn removed_expansions_round_trip_and_empty_words_are_dropped() {
        let state = UrlState::parse("?q=Kaution&ohne=Sicherheit,,Hinterlegung,+");
        assert_eq!(state.without, ["Sicherheit", "Hinterlegung"]);
        assert_eq!(state.to_query(), "?q=Kaution&ohne=Sicherheit,Hinterlegung");
        assert_eq!(UrlState::parse(&state.to_query()), state);
    }

    #[test]
    fn defaults_are_left_out_and_bad_values_ignored() {
        assert_eq!(UrlState::default().to_query(), "");
        let state = UrlState::parse("?mode=quantum&u=x&zzz=1&q=%ZZa%2");
        assert_eq!(state.mode, Mode::Hybrid);
        assert_eq!(state.unit_search, UnitSearch::Exact);
        assert!(state.expand, "expansion is on unless switched off");
        assert_eq!(state.q, "%ZZa%2");
        assert_eq!(UrlState::parse("page=strategies").page, Page::Strategies);
        assert_eq!(UrlState::parse("vektor=gpu").encoder, EncoderChoice::Auto);
    }

    #[test]
    fn the_page_over_all_laws_keeps_its_set_of_laws() {
        let state = UrlState::parse("?page=alle&q=K%C3%BCndigung&gesetze=KSchG,+BGB,,KSchG");
        assert_eq!(
            (state.page, &state.laws[..]),
            (Page::AllLaws, &["KSchG".to_string(), "BGB".to_string()][..])
        );
        assert_eq!(
            state.to_query(),
            "?page=alle&q=K%C3%BCndigung&gesetze=KSchG%2CBGB"
        );
        assert_eq!(UrlState::parse(&state.to_query()), state);
    }

    #[test]
    fn encoder_choice_round_trips() {
        for choice in [EncoderChoice::Server, EncoderChoice::Browser] {
            let state = UrlState {
                encoder: choice,
                ..UrlState::default()
            };
            assert_eq!(UrlState::parse(&state.to_query()), state);
        }
        let browser = UrlState::parse("?vektor=browser");
        assert!(browser.encoder.uses_browser() && !browser.encoder.uses_server());
        assert_eq!(browser.to_query(), "?vektor=browser");
    }
}
