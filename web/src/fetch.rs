//! HTTP from the browser (fetch API): bundle bytes with progress, text, and JSON posts to the proxy. Each
//! failure becomes the [`Failure`] variant that says what happened (404, other status, no answer).

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request, RequestInit, Response};

use crate::failure::Failure;

/// Download progress of a file: (label, bytes so far, total).
pub type Progress = Option<(String, u64, u64)>;
use paragraf_format::api::ErrorBody;

/// The text of a JS exception.
pub fn js_message(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

async fn send(request: &Request, what: &str) -> Result<Response, Failure> {
    let window = web_sys::window().ok_or_else(|| Failure::Browser("kein Browserfenster".into()))?;
    let response = JsFuture::from(window.fetch_with_request(request))
        .await
        .map_err(|e| Failure::Network {
            what: what.to_string(),
            detail: js_message(&e),
        })?;
    let response: Response = response.unchecked_into();
    if !response.ok() {
        let status = response.status();
        let body = match response.text() {
            Ok(p) => JsFuture::from(p)
                .await
                .ok()
                .and_then(|t| t.as_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        // The `error` of a JSON refusal (the proxy's), else the status text.
        let detail = serde_json::from_str::<ErrorBody>(&body)
            .map(|b| b.error)
            .unwrap_or_else(|_| response.status_text());
        let what = what.to_string();
        return Err(match status {
            404 => Failure::NotFound { what, detail },
            _ => Failure::Http {
                what,
                status,
                detail,
            },
        });
    }
    Ok(response)
}

fn invalid_address(url: &str, e: &JsValue) -> Failure {
    Failure::Browser(format!("ungültige Adresse {url}: {}", js_message(e)))
}

async fn response_text(response: Response, what: &str) -> Result<String, Failure> {
    let broken = |e: JsValue| Failure::Incomplete {
        what: what.to_string(),
        detail: js_message(&e),
    };
    let promise = response.text().map_err(broken)?;
    JsFuture::from(promise)
        .await
        .map_err(broken)?
        .as_string()
        .ok_or_else(|| Failure::Browser(format!("{what}: keine Textantwort")))
}

/// GETs a text file.
pub async fn text(url: &str, what: &str) -> Result<String, Failure> {
    let request = Request::new_with_str(url).map_err(|e| invalid_address(url, &e))?;
    response_text(send(&request, what).await?, what).await
}

/// GETs a binary file, reporting (bytes so far, expected total) as it streams in.
pub async fn bytes(
    url: &str,
    what: &str,
    expected: u64,
    progress: impl Fn(u64, u64),
) -> Result<Vec<u8>, Failure> {
    let request = Request::new_with_str(url).map_err(|e| invalid_address(url, &e))?;
    let response = send(&request, what).await?;
    let fail = |e: JsValue| Failure::Incomplete {
        what: what.to_string(),
        detail: js_message(&e),
    };
    let out_of_memory = |bytes: u64| Failure::OutOfMemory {
        what: what.to_string(),
        bytes,
    };
    let Some(body) = response.body() else {
        return Ok(Vec::new());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut out: Vec<u8> = Vec::new();
    // The manifest's size is only a hint here (it is verified after the download): reserve at most what fits.
    let hint = usize::try_from(expected).unwrap_or(usize::MAX);
    if out.try_reserve(hint).is_err() {
        return Err(out_of_memory(expected));
    }
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(fail)?;
        let done = Reflect::get(&chunk, &"done".into())
            .map_err(fail)?
            .as_bool()
            .unwrap_or(true);
        if done {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(fail)?
            .unchecked_into();
        let start = out.len();
        let n = value.length() as usize;
        if out.try_reserve(n).is_err() {
            return Err(out_of_memory((start + n) as u64));
        }
        out.resize(start + n, 0);
        value.copy_to(&mut out[start..]);
        progress(out.len() as u64, expected.max(out.len() as u64));
    }
    Ok(out)
}

/// POSTs JSON and returns the answer's text.
pub async fn post_json(url: &str, body: &str, what: &str) -> Result<String, Failure> {
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(&JsValue::from_str(body));
    let request =
        Request::new_with_str_and_init(url, &init).map_err(|e| invalid_address(url, &e))?;
    request
        .headers()
        .set("Content-Type", "application/json")
        .map_err(|e| Failure::Browser(js_message(&e)))?;
    response_text(send(&request, what).await?, what).await
}

/// Milliseconds from the page's clock.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Gives the browser the main thread for a moment (a macrotask: input, painting and other tasks run first), so
/// that preparing a law after its download is several short tasks instead of one that freezes the page.
pub async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            // A timer that cannot be set resolves at once: yielding is a courtesy, never a condition.
            if window
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0)
                .is_err()
            {
                let _ = resolve.call0(&JsValue::NULL);
            }
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Longest stretch of work between two [`Slices::tick`] yields, in ms: under Lighthouse's fourfold slowdown of a
/// phone still below the 50 ms that count as blocking.
const SLICE_MS: f64 = 8.0;

/// Splits long work into short tasks: [`Slices::tick`] between its steps yields once [`SLICE_MS`] have passed.
pub struct Slices {
    since: f64,
}

impl Slices {
    /// Starts the first slice now.
    pub fn new() -> Slices {
        Slices { since: now_ms() }
    }

    /// Yields to the browser if this slice is used up.
    pub async fn tick(&mut self) {
        if now_ms() - self.since >= SLICE_MS {
            yield_to_browser().await;
            self.since = now_ms();
        }
    }
}

/// Lower-case hex SHA-256 of `bytes`: the browser's `crypto.subtle` digest (native code, off the main thread),
/// or `paragraf_format::digest`'s where the page has none (an `http:` origin other than localhost is not a secure context).
pub async fn sha256_hex(bytes: &[u8]) -> String {
    let subtle = web_sys::window()
        .and_then(|w| Reflect::get(&w, &JsValue::from_str("crypto")).ok())
        .and_then(|crypto| Reflect::get(&crypto, &JsValue::from_str("subtle")).ok())
        .filter(|subtle| !subtle.is_undefined() && !subtle.is_null())
        .map(web_sys::SubtleCrypto::unchecked_from_js);
    if let Some(subtle) = subtle {
        if let Ok(promise) = subtle.digest_with_str_and_u8_array("SHA-256", bytes) {
            if let Ok(digest) = JsFuture::from(promise).await {
                return paragraf_format::digest::hex(&Uint8Array::new(&digest).to_vec());
            }
        }
    }
    paragraf_format::digest::sha256_hex(bytes)
}
