//! Reading the whole federal corpus straight from its `.tar.xz` (`laws/<BJNR>/source.xml` + `meta.json`), without
//! unpacking 300 MB to disk.

use crate::gii::{parse_bytes, ParseError, ParseOptions};
use paragraf_core::Law;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// Why the archive itself could not be read (a single bad law is reported per entry instead).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// IO or decompression failed.
    #[error("{file}: cannot read the archive: {source}. Most likely it is truncated or not a .tar.xz file")]
    Read {
        /// The archive.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// One law of the archive: its path inside the archive and the parse result.
pub struct ArchiveLaw {
    /// e.g. `laws/BJNR001950896/source.xml`.
    pub path: String,
    /// The parsed law or why it failed.
    pub result: Result<Law, ParseError>,
}

/// Streams every `source.xml` in the archive through `visit`, in archive order. The slug comes from the law's
/// `meta.json` (`gii_slug`) when it precedes the XML in the archive, as it does in the published corpus.
pub fn for_each_law(path: &Path, mut visit: impl FnMut(ArchiveLaw)) -> Result<usize, ArchiveError> {
    let file = path.display().to_string();
    let read_err = |source| ArchiveError::Read {
        file: file.clone(),
        source,
    };
    let reader = std::fs::File::open(path).map_err(read_err)?;
    let mut archive = tar::Archive::new(xz2::read::XzDecoder::new(std::io::BufReader::new(reader)));
    let mut slugs: HashMap<String, String> = HashMap::new();
    let mut count = 0;
    for entry in archive.entries().map_err(read_err)? {
        let mut entry = entry.map_err(read_err)?;
        let name = entry
            .path()
            .map_err(read_err)?
            .to_string_lossy()
            .into_owned();
        let dir = name.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        if name.ends_with("/meta.json") {
            let mut json = String::new();
            entry.read_to_string(&mut json).map_err(read_err)?;
            if let Some(slug) = serde_json::from_str::<serde_json::Value>(&json)
                .ok()
                .and_then(|v| {
                    v.get("gii_slug")
                        .and_then(|s| s.as_str())
                        .map(str::to_string)
                })
            {
                slugs.insert(dir, slug);
            }
        } else if name.ends_with(".xml") {
            let mut bytes = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut bytes).map_err(read_err)?;
            let options = ParseOptions {
                slug: slugs.get(&dir).cloned(),
            };
            let label = format!("{file}:{name}");
            visit(ArchiveLaw {
                result: parse_bytes(&bytes, &label, &options),
                path: name,
            });
            count += 1;
        }
    }
    Ok(count)
}
