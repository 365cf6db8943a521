//! Verified fetching: the manifest, and every file it lists checked against its entry (size, then SHA-256)
//! before anyone decodes it; decoded files shared while anyone holds them; the evaluation report.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use leptos::prelude::*;
use paragraf_core::manifest::{self, Listed, Manifest, MANIFEST};
use paragraf_eval::report::Report;

use crate::failure::{BundleKind, BundleProblem, Failure};
use crate::fetch::{self, Progress};

/// The manifest of a bundle folder.
pub async fn manifest(data: String) -> Result<Rc<Manifest>, Failure> {
    let url = crate::join_url(&data, MANIFEST);
    let text = fetch::text(&url, &format!("Bündelliste {url}")).await?;
    let manifest = Manifest::parse(text.as_bytes()).map_err(|error| Failure::Manifest {
        url: url.clone(),
        error,
    })?;
    if manifest.laws.is_empty() {
        return Err(Failure::NoLaws { url });
    }
    Ok(Rc::new(manifest))
}

/// Downloads a file the manifest lists and checks it against its entry (size, then SHA-256: the browser's digest,
/// which runs off the page's main thread) before anyone decodes it, then yields, so that the decoding is a task of
/// its own. Returns the bytes and the time the check took (ms).
pub(super) async fn verified_listed(
    data: &str,
    kind: BundleKind,
    listed: &impl Listed,
    label: &str,
    progress: RwSignal<Progress>,
) -> Result<(Vec<u8>, f64), Failure> {
    let file = listed.file();
    let url = crate::join_url(data, file);
    let bytes = fetch::bytes(
        &url,
        &format!("{} {file}", kind.label()),
        listed.size(),
        |done, total| progress.set(Some((label.to_string(), done, total))),
    )
    .await;
    progress.set(None);
    let bytes = bytes?;
    let t0 = fetch::now_ms();
    let mismatch = |e| bundle_failure(kind, file, BundleProblem::Mismatch(e));
    manifest::verify_size(file, bytes.len(), listed.size()).map_err(mismatch)?;
    let found = fetch::sha256_hex(&bytes).await;
    manifest::verify_sha256(file, &found, listed.sha256()).map_err(mismatch)?;
    let verify_ms = fetch::now_ms() - t0;
    fetch::yield_to_browser().await;
    Ok((bytes, verify_ms))
}

/// Decodes verified bytes (freeing them before anything else is built) and checks that the bundle records what
/// its manifest entry lists (law, strategy, model).
pub(super) fn decode_checked<B>(
    kind: BundleKind,
    file: &str,
    bytes: Vec<u8>,
    decode: impl FnOnce(&[u8]) -> Result<B, BundleProblem>,
    check: impl FnOnce(&B) -> Result<(), manifest::ManifestError>,
) -> Result<B, Failure> {
    let bundle = decode(&bytes).map_err(|problem| bundle_failure(kind, file, problem))?;
    drop(bytes);
    check(&bundle).map_err(|e| bundle_failure(kind, file, BundleProblem::Mismatch(e)))?;
    Ok(bundle)
}

pub(super) fn bundle_failure(kind: BundleKind, file: &str, problem: BundleProblem) -> Failure {
    Failure::Bundle {
        kind,
        file: file.to_string(),
        problem,
    }
}

thread_local! {
    /// Decoded files by name while anyone holds them. Names are content hashes, so a name is one content. A
    /// resource runs a second time when a resource it awaited arrived during its run (the reactive graph's rule):
    /// it then gets the value of the first run instead of fetching, verifying and decoding the file again.
    static DECODED: RefCell<HashMap<String, Weak<dyn Any>>> = RefCell::new(HashMap::new());
}

/// The value decoded from `file` earlier, if anyone still holds it.
pub(super) fn decoded<T: 'static>(file: &str) -> Option<Rc<T>> {
    let held = DECODED.with(|d| d.borrow().get(file).and_then(Weak::upgrade))?;
    held.downcast::<T>().ok()
}

/// Records the value decoded from `file` for [`decoded`] (forgetting values nobody holds any more).
pub(super) fn remember<T: 'static>(file: &str, value: &Rc<T>) {
    let weak: Weak<dyn Any> = Rc::downgrade(value) as Weak<dyn Any>;
    DECODED.with(|d| {
        let mut d = d.borrow_mut();
        d.retain(|_, w| w.strong_count() > 0);
        d.insert(file.to_string(), weak);
    });
}

/// `report.json` of `paragraf eval` in the bundle folder, if there is one.
pub async fn report(data: String) -> Result<Option<Rc<Report>>, Failure> {
    // `paragraf eval` writes <bundles>/report/report.json (asked first: a folder evaluated as `scripts/main.sh`
    // does costs no 404); a deployment may also put it next to the manifest.
    for file in ["report/report.json", "report.json"] {
        let url = crate::join_url(&data, file);
        match fetch::text(&url, &format!("Evaluationsbericht {url}")).await {
            Ok(text) => {
                return Report::parse(text.as_bytes())
                    .map(|r| Some(Rc::new(r)))
                    .map_err(|e| Failure::Report {
                        url,
                        detail: e.to_string(),
                    })
            }
            Err(Failure::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}
