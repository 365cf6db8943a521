//! HTTP from the browser (fetch API): bundle bytes with progress, text, and JSON posts to the proxy.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Request, RequestInit, Response};

/// A failure shown to the user (German message, never swallowed).
#[derive(Clone, Debug, PartialEq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// The text of a JS exception.
pub fn js_message(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

async fn send(request: &Request, what: &str) -> Result<Response, Failure> {
    let window = web_sys::window().ok_or_else(|| Failure("kein Browserfenster".into()))?;
    let response = JsFuture::from(window.fetch_with_request(request))
        .await
        .map_err(|e| Failure(format!("{what} nicht erreichbar: {}", js_message(&e))))?;
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
        let detail = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
            .unwrap_or_else(|| response.status_text());
        let reason = match status {
            404 => "nicht gefunden".to_string(),
            _ => format!("HTTP {status}"),
        };
        return Err(Failure(format!("{what}: {reason} ({detail})")));
    }
    Ok(response)
}

fn get(url: &str) -> Result<Request, Failure> {
    Request::new_with_str(url)
        .map_err(|e| Failure(format!("ungültige Adresse {url}: {}", js_message(&e))))
}

/// GETs a text file.
pub async fn text(url: &str, what: &str) -> Result<String, Failure> {
    let response = send(&get(url)?, what).await?;
    let promise = response
        .text()
        .map_err(|e| Failure(format!("{what}: {}", js_message(&e))))?;
    JsFuture::from(promise)
        .await
        .map_err(|e| Failure(format!("{what}: {}", js_message(&e))))?
        .as_string()
        .ok_or_else(|| Failure(format!("{what}: keine Textantwort")))
}

/// GETs a binary file, reporting (bytes so far, expected total) as it streams in.
pub async fn bytes(
    url: &str,
    what: &str,
    expected: u64,
    progress: impl Fn(u64, u64),
) -> Result<Vec<u8>, Failure> {
    let response = send(&get(url)?, what).await?;
    let fail = |e: JsValue| {
        Failure(format!(
            "{what} konnte nicht vollständig geladen werden: {}",
            js_message(&e)
        ))
    };
    let Some(body) = response.body() else {
        return Ok(Vec::new());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut out: Vec<u8> = Vec::new();
    if out.try_reserve(expected as usize).is_err() {
        return Err(Failure(format!(
            "{what}: nicht genug Arbeitsspeicher für {} (das Gesetz ist für dieses Gerät zu groß)",
            crate::format_bytes(expected)
        )));
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
            return Err(Failure(format!(
                "{what}: nicht genug Arbeitsspeicher (nach {})",
                crate::format_bytes(start as u64)
            )));
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
    let request = Request::new_with_str_and_init(url, &init)
        .map_err(|e| Failure(format!("ungültige Adresse {url}: {}", js_message(&e))))?;
    request
        .headers()
        .set("Content-Type", "application/json")
        .map_err(|e| Failure(js_message(&e)))?;
    let response = send(&request, what).await?;
    let promise = response.text().map_err(|e| Failure(js_message(&e)))?;
    JsFuture::from(promise)
        .await
        .map_err(|e| Failure(format!("{what}: {}", js_message(&e))))?
        .as_string()
        .ok_or_else(|| Failure(format!("{what}: keine Textantwort")))
}

/// Milliseconds from the page's clock.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
