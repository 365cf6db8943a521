//! The Web Worker that runs the e5 query encoder ([`paragraf_e5`]), so that embedding a long question
//! (about a second) never stalls typing or scrolling on the page. It verifies the model file against its
//! manifest entry itself, so the page never hashes 20 MB on its main thread either.

use std::cell::RefCell;
use std::rc::Rc;

use paragraf_core::manifest::{EncoderEntry, Listed};
use paragraf_e5::file::ModelFile;
use paragraf_e5::model::E5Encoder;
use paragraf_e5::TextKind;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::protocol::{FromWorker, ToWorker};

/// Verifies and decodes the model file.
fn load(entry: &EncoderEntry, bytes: Vec<u8>) -> Result<E5Encoder, String> {
    entry.verify(&bytes).map_err(|e| e.to_string())?;
    let file = ModelFile::from_bytes(&bytes).map_err(|e| e.to_string())?;
    drop(bytes);
    entry
        .check_model(&entry.file, &file.model)
        .map_err(|e| e.to_string())?;
    Ok(file.into_encoder())
}

fn post(scope: &DedicatedWorkerGlobalScope, head: &FromWorker, payload: Option<&JsValue>) {
    let message = js_sys::Array::of1(&JsValue::from_str(&head.to_json()));
    let transfer = js_sys::Array::new();
    if let Some(payload) = payload {
        message.push(payload);
        if let Some(array) = payload.dyn_ref::<js_sys::Float32Array>() {
            transfer.push(&array.buffer());
        }
    }
    // Posting to the page only fails for uncloneable values, which these are not.
    let _ = scope.post_message_with_transfer(&message, &transfer);
}

fn handle(
    scope: &DedicatedWorkerGlobalScope,
    encoder: &RefCell<Option<E5Encoder>>,
    event: MessageEvent,
) {
    let data: js_sys::Array = event.data().unchecked_into();
    let head = data.get(0).as_string().unwrap_or_default();
    let Ok(message) = serde_json::from_str::<ToWorker>(&head) else {
        return post(
            scope,
            &FromWorker::Rejected {
                reason: format!("unknown message {head:.80}"),
            },
            None,
        );
    };
    match message {
        ToWorker::Load { entry } => {
            let t0 = js_sys::Date::now();
            let bytes = js_sys::Uint8Array::new(&data.get(1)).to_vec();
            match load(&entry, bytes) {
                Ok(e) => {
                    *encoder.borrow_mut() = Some(e);
                    post(
                        scope,
                        &FromWorker::Ready {
                            ms: js_sys::Date::now() - t0,
                        },
                        None,
                    );
                }
                Err(reason) => post(scope, &FromWorker::Rejected { reason }, None),
            }
        }
        ToWorker::Embed { id, text } => {
            let encoder = encoder.borrow();
            let Some(encoder) = encoder.as_ref() else {
                return post(
                    scope,
                    &FromWorker::Rejected {
                        reason: "no model loaded".into(),
                    },
                    None,
                );
            };
            let mut ids = encoder.content_ids(&text, TextKind::Query);
            ids.truncate(encoder.window_tokens());
            let tokens = ids.len();
            let vector = encoder.embed_ids(&[ids]).remove(0);
            let head = FromWorker::Vector { id, tokens };
            post(
                scope,
                &head,
                Some(&js_sys::Float32Array::from(vector.as_slice()).into()),
            );
        }
    }
}

/// Installs the message handler; the worker then lives as long as the page keeps it.
pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let encoder = Rc::new(RefCell::new(None));
    let handler_scope = scope.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        handle(&handler_scope, &encoder, event)
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
    post(&scope, &FromWorker::Started, None);
}
