//! Runtime configuration of the proxy.
//!
//! The library takes one plain [`Config`] value so that the CLI (flags and environment), the tests and the load
//! test all build servers the same way; [`Config::validate`] rejects combinations that would make the server
//! misbehave (e.g. a batch larger than the rate-limit burst could never be served).

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::ConfigError;
use crate::site::SiteConfig;

/// Everything that shapes the server's behaviour. [`Config::default`] holds the documented defaults.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port).
    pub bind: SocketAddr,
    /// Origins allowed to call the proxy from a browser (exact `scheme://host[:port]`, or `*` for any).
    pub allow_origins: Vec<String>,
    /// Also allow `http://localhost:*`, `http://127.0.0.1:*` and `http://[::1]:*` (development only).
    pub dev: bool,
    /// Largest accepted request body in bytes (larger: 413).
    pub max_body_bytes: usize,
    /// Longest accepted text in Unicode scalar values (longer: 422).
    pub max_chars: usize,
    /// Most texts in one batch request (more: 422).
    pub max_batch: usize,
    /// Sustained per-client rate in texts per minute; 0 disables rate limiting.
    pub rate_per_minute: u32,
    /// Per-client burst: texts a client may send at once before the sustained rate applies.
    pub burst: u32,
    /// Take the client address from this request header (set by a trusted reverse proxy) instead of the socket.
    pub client_ip_header: Option<String>,
    /// Embedding jobs running at once (the CPU budget); further requests queue.
    pub max_concurrency: usize,
    /// Most texts embedded in one forward pass: waiting cache misses of concurrent requests are coalesced up to
    /// this (1 turns coalescing off).
    pub pass_texts: usize,
    /// Requests allowed to wait for a free embedding slot; beyond that: 503 at once.
    pub max_queue: usize,
    /// Longest wait for an embedding slot before answering 503.
    pub queue_timeout: Duration,
    /// Longest time for a whole request (reading the body, queueing, embedding) before answering 503.
    pub request_timeout: Duration,
    /// Longest time for a client to send a request head, and longest idle time between keep-alive requests.
    pub header_timeout: Duration,
    /// Most open connections; further ones wait in the kernel's backlog until one closes.
    pub max_connections: usize,
    /// Query vectors kept in the LRU cache; 0 disables the cache.
    pub cache_size: usize,
    /// Log query texts (off by default: queries are private).
    pub log_queries: bool,
    /// After SIGINT/SIGTERM, longest wait for in-flight requests before exiting anyway.
    pub shutdown_grace: Duration,
    /// The app and bundles to serve on the same origin (`paragraf serve`); `None`: the endpoints alone.
    pub site: Option<SiteConfig>,
}

/// Default listen address: loopback only, so nothing is exposed until the operator decides to.
pub const DEFAULT_BIND: &str = "127.0.0.1:8787";

/// The number of CPU cores, the default embedding concurrency.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: DEFAULT_BIND.parse().expect("valid default address"),
            allow_origins: Vec::new(),
            dev: false,
            max_body_bytes: 16 * 1024,
            max_chars: 2000,
            max_batch: 16,
            rate_per_minute: 120,
            burst: 30,
            client_ip_header: None,
            max_concurrency: default_concurrency(),
            pass_texts: 16,
            max_queue: 128,
            queue_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            max_connections: 1024,
            cache_size: 4096,
            log_queries: false,
            shutdown_grace: Duration::from_secs(10),
            site: None,
        }
    }
}

impl Config {
    /// Checks that the settings can work together.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("max body bytes", self.max_body_bytes),
            ("max chars", self.max_chars),
            ("max batch", self.max_batch),
            ("max concurrency", self.max_concurrency),
            ("texts per pass", self.pass_texts),
            ("max connections", self.max_connections),
        ];
        for (name, value) in positive {
            if value == 0 {
                return Err(ConfigError::Invalid(format!("{name} must be at least 1")));
            }
        }
        if self.rate_per_minute > 0 && (self.burst as usize) < self.max_batch {
            return Err(ConfigError::Invalid(format!(
                "burst ({}) must be at least max batch ({}): a full batch could never pass the rate limit",
                self.burst, self.max_batch
            )));
        }
        if self.request_timeout.is_zero()
            || self.queue_timeout.is_zero()
            || self.header_timeout.is_zero()
        {
            return Err(ConfigError::Invalid(
                "timeouts must be longer than zero".into(),
            ));
        }
        for origin in &self.allow_origins {
            if origin != "*" && !valid_origin(origin) {
                return Err(ConfigError::Invalid(format!(
                    "allowed origin {origin:?} is not of the form scheme://host[:port] (no path, no trailing slash)"
                )));
            }
        }
        if let Some(header) = &self.client_ip_header {
            axum::http::HeaderName::try_from(header.as_str()).map_err(|_| {
                ConfigError::Invalid(format!(
                    "client IP header {header:?} is not a valid header name"
                ))
            })?;
        }
        Ok(())
    }
}

/// `scheme://host[:port]` exactly as a browser sends it in the `Origin` header.
fn valid_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !rest.contains('/')
        && !rest.chars().any(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Config::default().validate().unwrap();
    }

    #[test]
    fn rejects_bad_settings() {
        let bad = |f: fn(&mut Config)| {
            let mut config = Config::default();
            f(&mut config);
            config.validate().unwrap_err().to_string()
        };
        assert!(bad(|c| c.burst = 4).contains("burst"));
        assert!(bad(|c| c.max_chars = 0).contains("max chars"));
        assert!(
            bad(|c| c.allow_origins = vec!["https://example.org/".into()])
                .contains("scheme://host")
        );
        assert!(bad(|c| c.allow_origins = vec!["example.org".into()]).contains("scheme://host"));
        assert!(bad(|c| c.client_ip_header = Some("bad header".into())).contains("header"));
        // Rate limiting off: the burst no longer matters.
        let mut config = Config {
            rate_per_minute: 0,
            burst: 0,
            ..Config::default()
        };
        config.validate().unwrap();
        config.allow_origins = vec!["*".into(), "https://paragraf.example:8443".into()];
        config.validate().unwrap();
    }
}
