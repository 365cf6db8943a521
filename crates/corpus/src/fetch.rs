//! Downloading a law from gesetze-im-internet.de: `https://www.gesetze-im-internet.de/<slug>/xml.zip` holds one
//! gii-norm XML file. Users on a normal machine get any federal law this way; the shared corpus is only the
//! default for development and CI.

use crate::gii::{parse_bytes, ParseError, ParseOptions};
use crate::limits::{self, MAX_COMPRESSION_RATIO, MAX_XML_BYTES};
use paragraf_format::names::{check_slug, NameError};
use paragraf_law::Law;
use std::time::Duration;

/// The official site.
pub const DEFAULT_BASE_URL: &str = "https://www.gesetze-im-internet.de";

/// Why a download did not give a law.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Network failure or an HTTP error status.
    #[error("{url}: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// No such law.
    #[error("{url}: no law with the slug {slug:?} (HTTP 404). The slug is the path segment of the law's page, e.g. `bgb` in https://www.gesetze-im-internet.de/bgb/")]
    NotFound {
        /// The URL.
        url: String,
        /// The slug asked for.
        slug: String,
    },
    /// The answer was not a zip with one XML file.
    #[error("{url}: not the expected xml.zip ({0}). Most likely the site answered with an error page; try again later", .message)]
    Archive {
        /// The URL.
        url: String,
        /// What was wrong with it.
        message: String,
    },
    /// The slug is not one gesetze-im-internet.de uses; nothing was sent.
    #[error(transparent)]
    Slug(#[from] NameError),
    /// The XML inside unpacks to more than the limits allow.
    #[error("{url}: {name} unpacks to more than {} ({} packed, at most {}x and {} allowed). Most likely the download is a zip bomb, not a law", limits::size(*.limit), limits::size(*.packed), MAX_COMPRESSION_RATIO, limits::size(MAX_XML_BYTES))]
    Bomb {
        /// The URL.
        url: String,
        /// The file inside the zip.
        name: String,
        /// Its packed size.
        packed: u64,
        /// The bytes it was allowed to unpack to.
        limit: u64,
    },
    /// The XML inside did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// Largest zip downloaded: [`MAX_XML_BYTES`] packs to far less.
const MAX_ZIP_BYTES: u64 = MAX_XML_BYTES;

/// Downloads and parses the law `slug` from `base_url`; returns the XML bytes (to store) and the law. The slug
/// is checked ([`check_slug`]) before any request, and the XML is unpacked under [`MAX_XML_BYTES`] and
/// [`MAX_COMPRESSION_RATIO`].
pub fn fetch_law(base_url: &str, slug: &str) -> Result<(Vec<u8>, Law), FetchError> {
    check_slug(slug)?;
    let url = format!("{}/{slug}/xml.zip", base_url.trim_end_matches('/'));
    let http = |message: String| FetchError::Http {
        url: url.clone(),
        message,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent.get(&url).call().map_err(|e| http(e.to_string()))?;
    match response.status().as_u16() {
        200 => {}
        404 => {
            return Err(FetchError::NotFound {
                url,
                slug: slug.to_string(),
            })
        }
        status => return Err(http(format!("HTTP {status}"))),
    }
    let zip_bytes = response
        .body_mut()
        .with_config()
        .limit(MAX_ZIP_BYTES)
        .read_to_vec()
        .map_err(|e| http(e.to_string()))?;
    law_from_zip(zip_bytes, &url, slug)
}

/// The one law XML inside `zip_bytes` (downloaded from `url`), unpacked under the limits and parsed: what
/// [`fetch_law`] does once the download is in.
pub fn law_from_zip(
    zip_bytes: Vec<u8>,
    url: &str,
    slug: &str,
) -> Result<(Vec<u8>, Law), FetchError> {
    let url = url.to_string();
    let archive_err = |message: String| FetchError::Archive {
        url: url.clone(),
        message,
    };
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes))
        .map_err(|e| archive_err(e.to_string()))?;
    let names: Vec<String> = zip
        .file_names()
        .filter(|n| n.ends_with(".xml"))
        .map(str::to_string)
        .collect();
    let [name] = names.as_slice() else {
        return Err(archive_err(format!(
            "expected one .xml file, found {}",
            names.len()
        )));
    };
    let entry = zip.by_name(name).map_err(|e| archive_err(e.to_string()))?;
    let packed = entry.compressed_size();
    let limit = MAX_XML_BYTES.min(packed.max(1).saturating_mul(MAX_COMPRESSION_RATIO));
    let xml = limits::read_at_most(entry, limit).map_err(|e| match e {
        Some(e) => archive_err(e.to_string()),
        None => FetchError::Bomb {
            url: url.clone(),
            name: name.clone(),
            packed,
            limit,
        },
    })?;
    let law = parse_bytes(
        &xml,
        &format!("{url}:{name}"),
        &ParseOptions {
            slug: Some(slug.to_string()),
        },
    )?;
    Ok((xml, law))
}
