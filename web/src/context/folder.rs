//! The bundle folder: its address, its manifest, and the download in progress.

use std::rc::Rc;

use leptos::prelude::*;
use paragraf_core::manifest::Manifest;

use crate::failure::Failure;
use crate::fetch::Progress;
use crate::load;

/// The bundle folder. All fields are `Copy` handles.
#[derive(Clone, Copy)]
pub struct Folder {
    /// The bundle folder from the page's address, fixed for the page's life: resources await the manifest
    /// untracked ([`Folder::manifest_untracked`]) and rely on that.
    pub data: RwSignal<Option<String>>,
    pub manifest: LocalResource<Result<Rc<Manifest>, Failure>>,
    pub progress: RwSignal<Progress>,
}

impl Folder {
    /// The folder at `data` (`None`: the default) and its manifest, loading.
    pub fn new(data: Option<String>) -> Self {
        let data = RwSignal::new(data);
        Folder {
            data,
            manifest: LocalResource::new(move || load::manifest(address(data))),
            progress: RwSignal::new(None),
        }
    }

    /// The folder's address.
    pub fn data_url(&self) -> String {
        address(self.data)
    }

    /// The manifest, awaited without subscribing to it. A resource that awaits another one while that one is
    /// still loading runs a second time once it arrives (the reactive graph re-runs a resource whose source
    /// changed during its run): every resource would fetch, verify and decode its files twice. The manifest
    /// changes only with the data URL, which is fixed from the page's address for the page's life.
    pub async fn manifest_untracked(self) -> Result<Rc<Manifest>, Failure> {
        ScopedFuture::new_untracked(std::future::IntoFuture::into_future(self.manifest)).await
    }
}

/// The address `data` names, else the default folder.
fn address(data: RwSignal<Option<String>>) -> String {
    data.get()
        .unwrap_or_else(|| crate::DEFAULT_DATA_URL.to_string())
}
