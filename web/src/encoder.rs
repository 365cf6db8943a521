//! The app's side of the in-browser query encoder: downloads the model file the manifest lists (after the
//! bundles, with progress), hands it to the Web Worker ([`crate::worker`]) and asks it for query vectors.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::manifest::EncoderEntry;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::failure::{EncoderProblem, Failure};
use crate::fetch;
use crate::fetch::Progress;
use paragraf_worker::protocol::{FromWorker, ToWorker, WORKER_SCRIPT};

/// What the worker answered to one request.
enum Reply {
    Started,
    Ready(f64),
    Vector { vector: Vec<f32>, tokens: usize },
    Failed(EncoderProblem),
}

/// Requests waiting for the worker: the promise's resolve function and where the reply goes.
type Pending = Rc<RefCell<HashMap<u32, (js_sys::Function, Rc<RefCell<Option<Reply>>>)>>>;

/// Number of the start-up and load requests (embed requests count up from 1).
const LOAD: u32 = 0;

/// A running encoder worker.
pub struct BrowserEncoder {
    worker: Worker,
    pending: Pending,
    next: Cell<u32>,
    /// Set once the worker died: every later request fails with it.
    crashed: Rc<RefCell<Option<String>>>,
    /// The model file's entry.
    pub entry: EncoderEntry,
    /// Time to verify, decode and prepare the model in the worker (ms).
    pub load_ms: f64,
    /// Kept alive as long as the worker: its message and error handlers.
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(ErrorEvent)>,
}

/// A query vector from the worker.
pub struct Embedding {
    pub vector: Vec<f32>,
    /// Tokens the model read.
    pub tokens: usize,
}

impl Drop for BrowserEncoder {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

fn failure(entry: &EncoderEntry, problem: EncoderProblem) -> Failure {
    Failure::Encoder {
        file: entry.file.clone(),
        problem,
    }
}

/// Downloads the model file and starts the worker with it; resolves when the worker has checked and prepared it.
pub async fn load(
    data: String,
    entry: EncoderEntry,
    progress: RwSignal<Progress>,
) -> Result<Rc<BrowserEncoder>, Failure> {
    let url = crate::join_url(&data, &entry.file);
    let bytes = fetch::bytes(
        &url,
        &format!("Sprachmodell {}", entry.file),
        entry.bytes,
        |done, total| {
            progress.set(Some((
                "Sprachmodell (Suche ohne Server)".into(),
                done,
                total,
            )))
        },
    )
    .await;
    progress.set(None);
    let bytes = bytes?;
    let crashed_on = |e: JsValue| failure(&entry, EncoderProblem::Crashed(fetch::js_message(&e)));
    let worker = Worker::new(WORKER_SCRIPT).map_err(crashed_on)?;
    let pending: Pending = Rc::default();
    let crashed: Rc<RefCell<Option<String>>> = Rc::default();
    let answer = pending.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let data: js_sys::Array = event.data().unchecked_into();
        let Some(head) = data
            .get(0)
            .as_string()
            .and_then(|h| serde_json::from_str(&h).ok())
        else {
            return;
        };
        let (id, reply) = match head {
            FromWorker::Started => (LOAD, Reply::Started),
            FromWorker::Ready { ms } => (LOAD, Reply::Ready(ms)),
            FromWorker::Rejected { reason } => {
                (LOAD, Reply::Failed(EncoderProblem::Rejected(reason)))
            }
            FromWorker::Vector { id, tokens } => {
                let vector = js_sys::Float32Array::new(&data.get(1)).to_vec();
                (id, Reply::Vector { vector, tokens })
            }
        };
        if let Some((resolve, slot)) = answer.borrow_mut().remove(&id) {
            *slot.borrow_mut() = Some(reply);
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    let (dead, crash) = (pending.clone(), crashed.clone());
    // A trap (out of memory while decoding, a bug) kills the worker: every waiting request fails with it.
    let on_error = Closure::<dyn Fn(ErrorEvent)>::new(move |event: ErrorEvent| {
        let message = event.message();
        *crash.borrow_mut() = Some(message.clone());
        for (_, (resolve, slot)) in dead.borrow_mut().drain() {
            *slot.borrow_mut() = Some(Reply::Failed(EncoderProblem::Crashed(message.clone())));
            let _ = resolve.call0(&JsValue::NULL);
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let mut encoder = BrowserEncoder {
        worker,
        pending,
        next: Cell::new(LOAD + 1),
        crashed,
        entry,
        load_ms: 0.0,
        _on_message: on_message,
        _on_error: on_error,
    };
    // The worker listens only once its wasm runs; it says so first.
    let started = encoder.expect(LOAD);
    if !matches!(encoder.reply(started).await?, Reply::Started) {
        unreachable!("the worker's first message is Started");
    }
    let payload = js_sys::Uint8Array::from(bytes.as_slice());
    drop(bytes);
    let head = ToWorker::Load {
        entry: encoder.entry.clone(),
    };
    match encoder.request(LOAD, &head, Some(payload)).await? {
        Reply::Ready(ms) => encoder.load_ms = ms,
        _ => unreachable!("the load request is answered with Ready or a failure"),
    }
    Ok(Rc::new(encoder))
}

impl BrowserEncoder {
    /// Registers interest in the reply numbered `id`.
    fn expect(&self, id: u32) -> (js_sys::Promise, Rc<RefCell<Option<Reply>>>) {
        let slot = Rc::new(RefCell::new(None));
        let mut resolver = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| resolver = Some(resolve));
        self.pending.borrow_mut().insert(
            id,
            (resolver.expect("the executor runs at once"), slot.clone()),
        );
        (promise, slot)
    }

    /// Waits for a reply registered with [`Self::expect`].
    async fn reply(
        &self,
        (promise, slot): (js_sys::Promise, Rc<RefCell<Option<Reply>>>),
    ) -> Result<Reply, Failure> {
        if let Some(message) = self.crashed.borrow().clone() {
            return Err(failure(&self.entry, EncoderProblem::Crashed(message)));
        }
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        let reply = slot.borrow_mut().take().expect("resolved with a reply");
        match reply {
            Reply::Failed(problem) => Err(failure(&self.entry, problem)),
            other => Ok(other),
        }
    }

    /// Sends one message and waits for its reply.
    async fn request(
        &self,
        id: u32,
        head: &ToWorker,
        payload: Option<js_sys::Uint8Array>,
    ) -> Result<Reply, Failure> {
        let waiting = self.expect(id);
        let message = js_sys::Array::of1(&JsValue::from_str(&head.to_json()));
        let transfer = js_sys::Array::new();
        if let Some(payload) = payload {
            transfer.push(&payload.buffer());
            message.push(&payload);
        }
        if let Err(e) = self.worker.post_message_with_transfer(&message, &transfer) {
            self.pending.borrow_mut().remove(&id);
            return Err(failure(
                &self.entry,
                EncoderProblem::Crashed(fetch::js_message(&e)),
            ));
        }
        self.reply(waiting).await
    }

    /// The question's vector, computed in the worker.
    pub async fn embed(&self, text: &str) -> Result<Embedding, Failure> {
        let id = self.next.get();
        self.next.set(id + 1);
        let head = ToWorker::Embed {
            id,
            text: text.to_string(),
        };
        match self.request(id, &head, None).await? {
            Reply::Vector { vector, tokens } => Ok(Embedding { vector, tokens }),
            _ => unreachable!("embed requests are answered with a vector or a failure"),
        }
    }
}
