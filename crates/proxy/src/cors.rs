//! CORS with an explicit allowlist, enforced on the server side.
//!
//! Plain CORS only stops a foreign page from *reading* the answer; the browser still sends the request, and
//! each one costs a forward pass. So a request that carries an `Origin` not on the list is refused with 403
//! before any work is done, and preflights for such origins fail the same way. Requests without `Origin`
//! (curl, server-to-server) are not browser cross-origin calls and pass; the rate limit covers them.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Which browser origins may call the proxy.
pub struct CorsPolicy {
    any: bool,
    origins: HashSet<String>,
    dev: bool,
    /// The server's own pages (`paragraf serve`) may call it.
    same_origin: bool,
}

impl CorsPolicy {
    /// A policy from the configured list (`*` allows every origin), the dev switch (local origins) and whether
    /// the server's own pages may call it (`paragraf serve`).
    pub fn new(origins: &[String], dev: bool, same_origin: bool) -> Self {
        CorsPolicy {
            any: origins.iter().any(|o| o == "*"),
            origins: origins.iter().filter(|o| *o != "*").cloned().collect(),
            dev,
            same_origin,
        }
    }

    /// Whether `origin` (the `Origin` header's value) is allowed for a request to `host` (its `Host` header).
    pub fn allows(&self, origin: &str, host: Option<&str>) -> bool {
        self.any
            || self.origins.contains(origin)
            || (self.dev && is_local_origin(origin))
            || (self.same_origin && host.is_some_and(|host| is_same_origin(origin, host)))
    }
}

/// An origin of this very server: a browser sends the page's origin, and the page was served by the host the
/// request goes to.
fn is_same_origin(origin: &str, host: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host))
    })
}

/// `http://localhost`, `http://127.0.0.1` or `http://[::1]`, with any port.
fn is_local_origin(origin: &str) -> bool {
    let Some(authority) = origin.strip_prefix("http://") else {
        return false;
    };
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|host| match authority.strip_prefix(host) {
            Some("") => true,
            Some(port) => port
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())),
            None => false,
        })
}

/// Seconds a browser may cache a successful preflight.
const PREFLIGHT_MAX_AGE: u32 = 600;

/// The 403 for a request whose origin is refused.
fn refuse(message: &'static str) -> Response {
    let mut response =
        ApiError::new(StatusCode::FORBIDDEN, "origin_not_allowed", message).into_response();
    response
        .headers_mut()
        .append(header::VARY, HeaderValue::from_static("origin"));
    response
}

/// The middleware: refuses foreign origins, answers preflights, and labels allowed answers.
pub async fn cors(State(policy): State<Arc<CorsPolicy>>, request: Request, next: Next) -> Response {
    // A browser sends one `Origin`; with several, checking one would let the others through unchecked.
    if request
        .headers()
        .get_all(header::ORIGIN)
        .iter()
        .nth(1)
        .is_some()
    {
        return refuse("more than one Origin header; a browser sends exactly one");
    }
    let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
        let mut response = next.run(request).await;
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("origin"));
        return response;
    };
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    if !origin.to_str().is_ok_and(|o| policy.allows(o, host)) {
        return refuse("this origin is not allowed to use the proxy (the operator can add it with --allow-origin)");
    }
    let preflight = request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("content-type"),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from(PREFLIGHT_MAX_AGE),
        );
        response
    } else {
        let mut response = next.run(request).await;
        response.headers_mut().insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("retry-after, x-cache"),
        );
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.append(header::VARY, HeaderValue::from_static("origin"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_and_dev_origins() {
        let policy = CorsPolicy::new(&["https://paragraf.example".into()], false, false);
        assert!(policy.allows("https://paragraf.example", None));
        assert!(!policy.allows("https://paragraf.example.evil", None));
        assert!(
            !policy.allows("http://localhost:8080", None),
            "local origins need --dev"
        );
        assert!(
            !policy.allows("http://127.0.0.1:8080", Some("127.0.0.1:8080")),
            "the own origin only for `paragraf serve`"
        );
        let site = CorsPolicy::new(&[], false, true);
        assert!(site.allows("http://127.0.0.1:8080", Some("127.0.0.1:8080")));
        assert!(site.allows("https://Paragraf.example", Some("paragraf.example")));
        assert!(!site.allows("http://127.0.0.1:8081", Some("127.0.0.1:8080")));
        assert!(!site.allows("http://evil.example", Some("127.0.0.1:8080")));
        assert!(!site.allows("http://127.0.0.1:8080", None));
        let dev = CorsPolicy::new(&[], true, false);
        for ok in [
            "http://localhost:8080",
            "http://127.0.0.1:3000",
            "http://[::1]:1",
            "http://localhost",
        ] {
            assert!(dev.allows(ok, None), "{ok}");
        }
        for bad in [
            "https://localhost:8080",
            "http://localhost.evil",
            "http://localhost:",
            "http://localhost:80x",
            "null",
        ] {
            assert!(!dev.allows(bad, None), "{bad}");
        }
        assert!(CorsPolicy::new(&["*".into()], false, false).allows("null", None));
    }
}
