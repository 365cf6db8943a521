//! The static site of `paragraf serve`: the built app at `/` and a bundle folder at `/bundles/`, on the same
//! origin as the query-embedding endpoints.
//!
//! One origin needs no CORS set-up, and one binary serves everything a user needs. What a static host has to
//! get right is decided here, once, and tested: `application/wasm` (streaming compilation), brotli or gzip for
//! what compresses (text, wasm, law bundles; kept in memory once compressed), `immutable` caching for
//! content-hashed names (Trunk's `-<hash>`, the bundles' `.<hash>.`), revalidation by ETag for everything else
//! (`index.html` and `sw.js` above all, so a new build reaches its users), HEAD and single byte ranges.
//!
//! Every request path is decoded once and checked before it touches the file system: no `.`/`..` or hidden
//! names, no backslash, NUL or other control character, and a symbolic link must end inside its folder.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::Semaphore;

use crate::error::{ApiError, ConfigError};

/// What `paragraf serve` serves besides the endpoints.
#[derive(Clone, Debug)]
pub struct SiteConfig {
    /// The built app (Trunk's `dist/`), served at `/`; must hold `index.html`.
    pub root: PathBuf,
    /// A bundle folder served at `/bundles/` (must hold `manifest.json`); without it, `<root>/bundles` is served
    /// like any other folder of the app.
    pub bundles: Option<PathBuf>,
    /// Bytes of compressed answers kept in memory (0: compress every time).
    pub compressed_cache_bytes: usize,
}

/// Files larger than this are sent as they are (compressing them would hold them in memory).
pub const MAX_COMPRESSED_FILE_BYTES: u64 = 64 << 20;

/// The URL prefix of the bundle folder.
pub const BUNDLES_PREFIX: &str = "bundles";

/// A site ready to serve.
pub struct Site {
    root: PathBuf,
    bundles: Option<PathBuf>,
    /// The meta element put into `index.html` ([`paragraf_format::api::PROXY_META_NAME`]).
    meta: String,
    compressed: Mutex<CompressedCache>,
    /// Compression runs on the blocking pool, at most this many at once.
    compressing: Semaphore,
}

impl Site {
    /// Checks the folders (the app's `index.html`, the bundles' `manifest.json`) and resolves them once.
    /// `proxy`: whether this server also answers `/v1/embed`.
    pub fn open(
        config: &SiteConfig,
        proxy: bool,
        max_concurrency: usize,
    ) -> Result<Site, ConfigError> {
        let root = folder_with(
            &config.root,
            "index.html",
            "the app's folder",
            "Most likely the app is not built yet: scripts/web_build.sh builds it into dist/",
        )?;
        let bundles = config
            .bundles
            .as_deref()
            .map(|dir| {
                folder_with(
                    dir,
                    "manifest.json",
                    "the bundle folder",
                    "Most likely it is not a bundle folder: `paragraf build --law BGB --out <folder>` makes one",
                )
            })
            .transpose()?;
        let content = if proxy { "./" } else { "" };
        Ok(Site {
            root,
            bundles,
            meta: format!(
                r#"<meta name="{}" content="{content}">"#,
                paragraf_format::api::PROXY_META_NAME
            ),
            compressed: Mutex::new(CompressedCache::new(config.compressed_cache_bytes)),
            compressing: Semaphore::new(max_concurrency.max(1)),
        })
    }

    /// The app's folder, resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bundle folder, resolved.
    pub fn bundles(&self) -> Option<&Path> {
        self.bundles.as_deref()
    }

    /// Answers one request for a file.
    pub async fn serve(self: Arc<Self>, request: Request) -> Response {
        // Only the head is needed; unlike the body, it can be held across awaits by reference.
        let (head, _) = request.into_parts();
        let result = self.answer(&head).await;
        result.unwrap_or_else(|error| {
            tracing::debug!(
                status = error.status.as_u16(),
                code = error.code,
                "site: refused"
            );
            error.into_response()
        })
    }

    async fn answer(&self, request: &Parts) -> Result<Response, ApiError> {
        let method = &request.method;
        if method != Method::GET && method != Method::HEAD {
            let mut refusal = ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "the site's files are read with GET or HEAD",
            )
            .into_response();
            refusal
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Ok(refusal);
        }
        let url_path = request.uri.path();
        let segments = checked_segments(url_path)?;
        let (folder, rest) = match (&self.bundles, segments.split_first()) {
            (Some(bundles), Some((first, rest))) if first == BUNDLES_PREFIX => {
                (bundles.as_path(), rest)
            }
            _ => (self.root.as_path(), segments.as_slice()),
        };
        let index = rest.is_empty() || url_path.ends_with('/');
        let mut path = folder.to_path_buf();
        path.extend(rest);
        if index {
            path.push("index.html");
        }
        let not_found = || {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no file {} here", paragraf_format::names::echo(url_path)),
            )
        };
        let resolved = tokio::fs::canonicalize(&path)
            .await
            .map_err(|_| not_found())?;
        if !resolved.starts_with(folder) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "outside_folder",
                format!(
                    "{} is a link out of the served folder: refused",
                    paragraf_format::names::echo(url_path)
                ),
            ));
        }
        let meta = tokio::fs::metadata(&resolved)
            .await
            .map_err(|_| not_found())?;
        if !meta.is_file() {
            return Err(if meta.is_dir() {
                not_found()
            } else {
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    "not_a_file",
                    format!(
                        "{} is not a regular file: refused",
                        paragraf_format::names::echo(url_path)
                    ),
                )
            });
        }
        let name = resolved
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let kind = content_type(&name);
        let app_index = folder == self.root && name == "index.html";
        let modified = meta.modified().ok();
        let mut tag = entity_tag(meta.len(), modified);
        if app_index {
            tag.push_str("-p");
        }
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind.mime));
        headers.insert(header::CACHE_CONTROL, cache_control(&name));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        if let Some(modified) = modified {
            if let Ok(value) = HeaderValue::from_str(&httpdate::fmt_http_date(modified)) {
                headers.insert(header::LAST_MODIFIED, value);
            }
        }
        if kind.compressible {
            headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        let quoted = |suffix: &str| {
            HeaderValue::from_str(&format!("\"{tag}{suffix}\"")).expect("an entity tag is ASCII")
        };
        // A range is served from the file as it is; the app's index.html (with the proxy's meta element) is
        // always answered whole. Everything else with an accepted coding is compressed (and kept).
        let range = (!app_index)
            .then(|| wanted_range(&request.headers, &quoted(""), meta.len()))
            .flatten();
        let encoding =
            (kind.compressible && meta.len() <= MAX_COMPRESSED_FILE_BYTES && range.is_none())
                .then(|| Encoding::accepted(&request.headers))
                .flatten();
        let etag = quoted(encoding.map_or("", Encoding::tag_suffix));
        if not_modified(&request.headers, &etag) {
            headers.insert(header::ETAG, etag);
            return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
        }
        headers.insert(header::ETAG, etag);
        let head_only = method == Method::HEAD;

        if app_index || encoding.is_some() {
            let bytes = self
                .contents(&resolved, &tag, encoding, app_index)
                .await
                .map_err(|e| unreadable(url_path, &e))?;
            if let Some(encoding) = encoding {
                headers.insert(
                    header::CONTENT_ENCODING,
                    HeaderValue::from_static(encoding.name()),
                );
            }
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
            let body = if head_only {
                Body::empty()
            } else {
                Body::from(bytes)
            };
            return Ok((StatusCode::OK, headers, body).into_response());
        }

        headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        let (status, start, length) = match range {
            None => (StatusCode::OK, 0, meta.len()),
            Some(Err(())) => {
                let value =
                    HeaderValue::from_str(&format!("bytes */{}", meta.len())).expect("ASCII");
                headers.insert(header::CONTENT_RANGE, value);
                return Ok((StatusCode::RANGE_NOT_SATISFIABLE, headers).into_response());
            }
            Some(Ok((start, end))) => {
                let value = HeaderValue::from_str(&format!("bytes {start}-{end}/{}", meta.len()))
                    .expect("ASCII");
                headers.insert(header::CONTENT_RANGE, value);
                (StatusCode::PARTIAL_CONTENT, start, end - start + 1)
            }
        };
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
        if head_only {
            return Ok((status, headers, Body::empty()).into_response());
        }
        let mut file = tokio::fs::File::open(&resolved)
            .await
            .map_err(|e| unreadable(url_path, &e))?;
        if start > 0 {
            file.seek(std::io::SeekFrom::Start(start))
                .await
                .map_err(|e| unreadable(url_path, &e))?;
        }
        let stream = tokio_util::io::ReaderStream::new(file.take(length));
        Ok((status, headers, Body::from_stream(stream)).into_response())
    }

    /// The bytes to send for a whole file: compressed with `encoding` (from the cache when there), with the
    /// proxy's meta element when it is the app's index.html.
    async fn contents(
        &self,
        path: &Path,
        tag: &str,
        encoding: Option<Encoding>,
        app_index: bool,
    ) -> std::io::Result<Bytes> {
        let key = (path.to_path_buf(), encoding);
        if let Some(bytes) = self.cached(&key, tag) {
            return Ok(bytes);
        }
        let _permit = self
            .compressing
            .acquire()
            .await
            .expect("the compression semaphore is never closed");
        let (file, meta) = (path.to_path_buf(), app_index.then(|| self.meta.clone()));
        let bytes = tokio::task::spawn_blocking(move || {
            let mut bytes = paragraf_fs::read_regular(&file)?;
            if let Some(meta) = meta {
                bytes = with_meta(&bytes, &meta);
            }
            Ok::<_, std::io::Error>(Bytes::from(match encoding {
                Some(encoding) => encoding.compress(&bytes)?,
                None => bytes,
            }))
        })
        .await
        .map_err(std::io::Error::other)??;
        let mut cache = self
            .compressed
            .lock()
            .expect("the cache lock is never poisoned");
        cache.insert(key, tag.to_owned(), bytes.clone());
        Ok(bytes)
    }

    fn cached(&self, key: &CacheKey, tag: &str) -> Option<Bytes> {
        let mut cache = self
            .compressed
            .lock()
            .expect("the cache lock is never poisoned");
        cache.get(key, tag)
    }
}

fn unreadable(url_path: &str, error: &std::io::Error) -> ApiError {
    tracing::warn!(error = %error, "site: a file could not be read");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "unreadable",
        format!(
            "{} could not be read",
            paragraf_format::names::echo(url_path)
        ),
    )
}

/// `dir`, resolved, when it is a folder holding the regular file `file`.
fn folder_with(dir: &Path, file: &str, what: &str, hint: &str) -> Result<PathBuf, ConfigError> {
    let resolved = std::fs::canonicalize(dir).map_err(|e| {
        ConfigError::Invalid(format!("{what} {} cannot be opened: {e}", dir.display()))
    })?;
    if !resolved.is_dir() {
        return Err(ConfigError::Invalid(format!(
            "{what} {} is not a folder",
            dir.display()
        )));
    }
    if !resolved.join(file).is_file() {
        return Err(ConfigError::Invalid(format!(
            "{what} {} has no {file}. {hint}",
            dir.display()
        )));
    }
    Ok(resolved)
}

/// The path's segments, percent-decoded, each checked; a refusal says which rule it broke.
fn checked_segments(url_path: &str) -> Result<Vec<String>, ApiError> {
    let refuse = |why: &str| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_path",
            format!(
                "the path {} is refused: {why}",
                paragraf_format::names::echo(url_path)
            ),
        )
    };
    let decoded = percent_encoding::percent_decode_str(url_path)
        .decode_utf8()
        .map_err(|_| refuse("it is not UTF-8 once decoded"))?;
    let mut segments = Vec::new();
    for segment in decoded.split('/').filter(|s| !s.is_empty()) {
        if segment == "." || segment == ".." {
            return Err(refuse("it climbs out with `.` or `..`"));
        }
        if segment.starts_with('.') {
            return Err(refuse("hidden names (starting with `.`) are not served"));
        }
        if segment.chars().any(|c| c.is_control() || c == '\\') {
            return Err(refuse(
                "it holds a backslash or a control character (NUL, line break)",
            ));
        }
        segments.push(segment.to_owned());
    }
    Ok(segments)
}

/// How a file is labelled and whether it is worth compressing.
struct Kind {
    mime: &'static str,
    compressible: bool,
}

fn content_type(name: &str) -> Kind {
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    let (mime, compressible) = match extension.to_ascii_lowercase().as_str() {
        "html" | "htm" => ("text/html; charset=utf-8", true),
        "js" | "mjs" => ("text/javascript; charset=utf-8", true),
        "css" => ("text/css; charset=utf-8", true),
        "json" => ("application/json", true),
        "webmanifest" => ("application/manifest+json", true),
        "wasm" => ("application/wasm", true),
        "svg" => ("image/svg+xml", true),
        "txt" => ("text/plain; charset=utf-8", true),
        "xml" => ("application/xml", true),
        // Bundles: the text-heavy kinds are stored compressed since their formats 4/5 (and then gain little),
        // those of older folders compress about 3×, vectors hardly (measured with gzip -6).
        "pgb" => ("application/octet-stream", true),
        "png" => ("image/png", false),
        "ico" => ("image/x-icon", false),
        "woff2" => ("font/woff2", false),
        _ => ("application/octet-stream", false),
    };
    Kind { mime, compressible }
}

/// Whether `name` carries a content hash (and so never changes) as its last part before the extension: bundles are
/// `<law>.<kind>.<16 hex>.pgb`, Trunk's files `<name>-<hash>[_bg].<ext>`. Trunk writes its 64-bit hash in hex
/// without leading zeros, so about one build in 16 has a shorter one; 8 to 16 lowercase hex digits count (as
/// `HASHED` in `public/sw.js`).
fn content_hashed(name: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    match stem.rsplit_once(['.', '-']) {
        Some((_, hash)) => {
            (8..=16).contains(&hash.len())
                && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        }
        None => false,
    }
}

fn cache_control(name: &str) -> HeaderValue {
    HeaderValue::from_static(if content_hashed(name) {
        "public, max-age=31536000, immutable"
    } else {
        // Revalidated on every use (a 304 when unchanged): index.html, sw.js and the manifests reach users
        // as soon as a new build is there.
        "no-cache"
    })
}

fn entity_tag(len: u64, modified: Option<SystemTime>) -> String {
    let nanos = modified
        .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{len:x}-{nanos:x}")
}

fn not_modified(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Some(wanted) = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let ours = etag.to_str().unwrap_or_default();
    wanted
        .split(',')
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == ours)
}

/// The one byte range asked for (`Range: bytes=a-b`, `a-` or `-n`), as inclusive offsets, `Err` when it cannot
/// be satisfied; `None` for no range, several ranges, a unit other than bytes, or an `If-Range` that no longer
/// matches (the whole file is the answer then).
fn wanted_range(
    headers: &HeaderMap,
    etag: &HeaderValue,
    len: u64,
) -> Option<Result<(u64, u64), ()>> {
    let spec = headers.get(header::RANGE)?.to_str().ok()?;
    if let Some(condition) = headers.get(header::IF_RANGE) {
        if condition != etag {
            return None;
        }
    }
    let spec = spec.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (first, last) = spec.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    let range = if first.is_empty() {
        let suffix: u64 = last.parse().ok()?;
        (suffix > 0 && len > 0).then(|| (len.saturating_sub(suffix), len - 1))
    } else {
        let start: u64 = first.parse().ok()?;
        let end = if last.is_empty() {
            len.checked_sub(1)
        } else {
            let end: u64 = last.parse().ok()?;
            if end < start {
                return None;
            }
            Some(end.min(len.saturating_sub(1)))
        };
        end.filter(|_| start < len).map(|end| (start, end))
    };
    Some(range.ok_or(()))
}

/// `html` with `meta` right before `</head>` (at the start when there is none).
fn with_meta(html: &[u8], meta: &str) -> Vec<u8> {
    let at = html
        .windows(7)
        .position(|w| w.eq_ignore_ascii_case(b"</head>"))
        .unwrap_or(0);
    [&html[..at], meta.as_bytes(), &html[at..]].concat()
}

/// A content coding this server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Encoding {
    Brotli,
    Gzip,
}

impl Encoding {
    /// The best coding the client accepts (`Accept-Encoding`, a `q=0` refuses): brotli, else gzip.
    fn accepted(headers: &HeaderMap) -> Option<Encoding> {
        let accepted = headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|item| {
                let mut parts = item.split(';');
                let name = parts.next()?.trim().to_ascii_lowercase();
                let refused = parts.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q <= 0.0)
                });
                (!refused).then_some(name)
            })
            .collect::<Vec<_>>();
        let has = |name: &str| accepted.iter().any(|a| a == name);
        if has("br") {
            Some(Encoding::Brotli)
        } else if has("gzip") {
            Some(Encoding::Gzip)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Encoding::Brotli => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// Each representation has its own entity tag.
    fn tag_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => "-br",
            Encoding::Gzip => "-gz",
        }
    }

    fn compress(self, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        use std::io::Write;
        match self {
            Encoding::Brotli => {
                let mut out = Vec::with_capacity(bytes.len() / 3);
                let params = brotli::enc::BrotliEncoderParams {
                    quality: 5,
                    ..Default::default()
                };
                brotli::BrotliCompress(&mut &bytes[..], &mut out, &params)?;
                Ok(out)
            }
            Encoding::Gzip => {
                let mut encoder = flate2::write::GzEncoder::new(
                    Vec::with_capacity(bytes.len() / 3),
                    flate2::Compression::default(),
                );
                encoder.write_all(bytes)?;
                encoder.finish()
            }
        }
    }
}

type CacheKey = (PathBuf, Option<Encoding>);

/// Compressed answers by file and coding, checked against the file's entity tag, at most `capacity` bytes.
struct CompressedCache {
    entries: lru::LruCache<CacheKey, (String, Bytes)>,
    bytes: usize,
    capacity: usize,
}

impl CompressedCache {
    fn new(capacity: usize) -> Self {
        CompressedCache {
            entries: lru::LruCache::unbounded(),
            bytes: 0,
            capacity,
        }
    }

    fn get(&mut self, key: &CacheKey, tag: &str) -> Option<Bytes> {
        match self.entries.get(key) {
            Some((kept, bytes)) if kept == tag => Some(bytes.clone()),
            _ => None,
        }
    }

    fn insert(&mut self, key: CacheKey, tag: String, bytes: Bytes) {
        if bytes.len() > self.capacity {
            return;
        }
        if let Some((_, old)) = self.entries.put(key, (tag, bytes.clone())) {
            self.bytes -= old.len();
        }
        self.bytes += bytes.len();
        while self.bytes > self.capacity {
            match self.entries.pop_lru() {
                Some((_, (_, old))) => self.bytes -= old.len(),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_after_decoding() {
        let ok = checked_segments("/bundles/BGB.law.5df684a425f80468.pgb").unwrap();
        assert_eq!(ok, ["bundles", "BGB.law.5df684a425f80468.pgb"]);
        assert_eq!(checked_segments("/%C2%A7%20551").unwrap(), ["§ 551"]);
        for (bad, why) in [
            ("/../etc/passwd", "climbs out"),
            ("/%2e%2e/etc/passwd", "climbs out"),
            ("/a/%2E%2E/%2E%2E/b", "climbs out"),
            ("/.git/config", "hidden"),
            ("/a%5c..%5cb", "backslash"),
            ("/a%00b", "control"),
            ("/%ff", "UTF-8"),
        ] {
            let refusal = checked_segments(bad).unwrap_err();
            assert_eq!(refusal.status, StatusCode::BAD_REQUEST, "{bad}");
            assert!(refusal.message.contains(why), "{bad}: {}", refusal.message);
        }
    }

    #[test]
    fn hashed_names_are_immutable_and_the_rest_revalidated() {
        for hashed in [
            "paragraf-web-dc55ed44f1ab0d6b_bg.wasm",
            "paragraf-web-dc55ed44f1ab0d6b.js",
            "BGB.section.489bee3e71c5f3fe.pgb",
            "style-d3db5a26620f0c1c.css",
            // Trunk drops leading zeros: a real build's 14-digit hash.
            "paragraf-web-575d4d087776ec_bg.wasm",
            "paragraf-web-575d4d087776ec.js",
        ] {
            assert!(content_hashed(hashed), "{hashed}");
        }
        for plain in [
            "index.html",
            "sw.js",
            "manifest.json",
            "paragraf-encoder_bg.wasm",
            "report.json",
            // Hex-looking parts that are not the last before the extension, or too short to be a hash.
            "dc55ed44f1ab0d6b-notes.txt",
            "paragraf-web-abc123.js",
            "BGB.section.489BEE3E71C5F3FE.pgb",
        ] {
            assert!(!content_hashed(plain), "{plain}");
        }
    }

    #[test]
    fn ranges() {
        let etag = HeaderValue::from_static("\"a-1\"");
        let range = |spec: &str, len| {
            let mut headers = HeaderMap::new();
            headers.insert(header::RANGE, HeaderValue::from_str(spec).unwrap());
            wanted_range(&headers, &etag, len)
        };
        assert_eq!(range("bytes=0-9", 100), Some(Ok((0, 9))));
        assert_eq!(range("bytes=90-", 100), Some(Ok((90, 99))));
        assert_eq!(range("bytes=-10", 100), Some(Ok((90, 99))));
        assert_eq!(range("bytes=-200", 100), Some(Ok((0, 99))));
        assert_eq!(range("bytes=50-500", 100), Some(Ok((50, 99))));
        assert_eq!(range("bytes=100-", 100), Some(Err(())));
        assert_eq!(range("bytes=0-0", 0), Some(Err(())));
        assert_eq!(range("bytes=0-1,5-6", 100), None);
        assert_eq!(range("items=0-1", 100), None);
        assert_eq!(range("bytes=9-1", 100), None);
        let mut stale = HeaderMap::new();
        stale.insert(header::RANGE, HeaderValue::from_static("bytes=0-9"));
        stale.insert(header::IF_RANGE, HeaderValue::from_static("\"b-2\""));
        assert_eq!(wanted_range(&stale, &etag, 100), None);
    }

    #[test]
    fn encodings_follow_accept_encoding() {
        let accepted = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            Encoding::accepted(&headers)
        };
        assert_eq!(accepted("gzip, deflate, br, zstd"), Some(Encoding::Brotli));
        assert_eq!(accepted("gzip"), Some(Encoding::Gzip));
        assert_eq!(accepted("br;q=0, gzip;q=0.5"), Some(Encoding::Gzip));
        assert_eq!(accepted("identity"), None);
        assert_eq!(Encoding::accepted(&HeaderMap::new()), None);
    }

    #[test]
    fn the_meta_goes_into_the_head() {
        let html = b"<html><head><title>x</title></HEAD><body></body></html>";
        let out = String::from_utf8(with_meta(html, "<meta name=\"m\">")).unwrap();
        assert_eq!(
            out,
            "<html><head><title>x</title><meta name=\"m\"></HEAD><body></body></html>"
        );
    }

    #[test]
    fn the_cache_stays_within_its_bytes() {
        let mut cache = CompressedCache::new(10);
        let key = |n: &str| (PathBuf::from(n), Some(Encoding::Gzip));
        cache.insert(key("a"), "1".into(), Bytes::from_static(b"123456"));
        cache.insert(key("b"), "1".into(), Bytes::from_static(b"1234"));
        assert_eq!(cache.bytes, 10);
        cache.insert(key("c"), "1".into(), Bytes::from_static(b"12"));
        assert!(cache.get(&key("a"), "1").is_none(), "the oldest went");
        assert_eq!(cache.get(&key("b"), "1").as_deref(), Some(&b"1234"[..]));
        assert!(
            cache.get(&key("b"), "2").is_none(),
            "a changed file is not answered from the cache"
        );
        cache.insert(key("d"), "1".into(), Bytes::from(vec![0; 11]));
        assert!(
            cache.get(&key("d"), "1").is_none(),
            "larger than the whole cache"
        );
        assert!(cache.bytes <= 10);
    }
}
