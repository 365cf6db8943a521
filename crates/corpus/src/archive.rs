//! Reading the whole federal corpus straight from its `.tar.xz` (`laws/<BJNR>/source.xml` + `meta.json`), without
//! unpacking 300 MB to disk.

use crate::gii::{parse_bytes, ParseOptions};
use crate::limits::{
    self, MAX_ARCHIVE_BYTES, MAX_COMPRESSION_RATIO, MAX_META_BYTES, MAX_TAR_EXTENSION_BYTES,
    MAX_XML_BYTES,
};
use crate::SourceLaw;
use std::collections::HashMap;
use std::io::Read;
use std::ops::ControlFlow;
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
    /// One entry is larger than its kind may be.
    #[error("{file}: {entry} has {}, more than the {} allowed. Most likely the archive is not the published corpus or was tampered with", limits::size(*.bytes), limits::size(*.limit))]
    EntryTooLarge {
        /// The archive.
        file: String,
        /// The entry's path.
        entry: String,
        /// Its size (from the tar header).
        bytes: u64,
        /// The limit for its kind.
        limit: u64,
    },
    /// The archive unpacks to more than [`MAX_ARCHIVE_BYTES`] or [`MAX_COMPRESSION_RATIO`] times its size.
    #[error("{file}: unpacks to more than {} ({} packed, at most {}x and {} allowed). Most likely the archive is a decompression bomb, not the published corpus", limits::size(*.limit), limits::size(*.packed), MAX_COMPRESSION_RATIO, limits::size(MAX_ARCHIVE_BYTES))]
    Bomb {
        /// The archive.
        file: String,
        /// Its size on disk.
        packed: u64,
        /// The unpacked bytes allowed.
        limit: u64,
    },
}

/// Streams every `source.xml` in the archive through `visit`, in archive order, until `visit` breaks; returns
/// how many it visited. Each law's path is the one inside the archive (`laws/BJNR001950896/source.xml`). The
/// slug comes from the law's `meta.json` (`gii_slug`) when it precedes the XML in the archive, as it does in the
/// published corpus. Entries are held to [`MAX_XML_BYTES`] / [`MAX_META_BYTES`] and the whole archive to
/// [`MAX_ARCHIVE_BYTES`] and [`MAX_COMPRESSION_RATIO`] before anything is unpacked into memory.
pub fn for_each_law(
    path: &Path,
    visit: impl FnMut(SourceLaw) -> ControlFlow<()>,
) -> Result<usize, ArchiveError> {
    let file = path.display().to_string();
    let read_err = |source| ArchiveError::Read {
        file: file.clone(),
        source,
    };
    let reader = paragraf_fs::open_regular(path).map_err(read_err)?;
    let packed = reader.metadata().map_err(read_err)?.len();
    for_each_law_in(reader, packed, &file, visit)
}

/// [`for_each_law`] over `reader`, the `.tar.xz` bytes of `packed` bytes named `file` in messages.
pub fn for_each_law_in(
    reader: impl Read,
    packed: u64,
    file: &str,
    mut visit: impl FnMut(SourceLaw) -> ControlFlow<()>,
) -> Result<usize, ArchiveError> {
    let file = file.to_string();
    let read_err = |source| ArchiveError::Read {
        file: file.clone(),
        source,
    };
    let budget = MAX_ARCHIVE_BYTES.min(packed.max(1).saturating_mul(MAX_COMPRESSION_RATIO));
    let mut unpacked = 0u64;
    let mut archive = tar::Archive::new(xz2::read::XzDecoder::new(std::io::BufReader::new(reader)));
    let mut slugs: HashMap<String, String> = HashMap::new();
    let mut count = 0;
    // Raw entries: the tar reader would otherwise read GNU long names and PAX headers whole, whatever their
    // size, before any limit here sees them. They are bounded, counted and applied below.
    let mut long_name: Option<String> = None;
    for entry in archive.entries().map_err(read_err)?.raw(true) {
        let mut entry = entry.map_err(read_err)?;
        // Each entry is a 512-byte header plus its data (padding aside).
        unpacked = unpacked.saturating_add(entry.size()).saturating_add(512);
        if unpacked > budget {
            return Err(ArchiveError::Bomb {
                file,
                packed,
                limit: budget,
            });
        }
        let kind = entry.header().entry_type();
        if kind.is_gnu_longname()
            || kind.is_gnu_longlink()
            || kind.is_pax_local_extensions()
            || kind.is_pax_global_extensions()
        {
            if entry.size() > MAX_TAR_EXTENSION_BYTES {
                return Err(ArchiveError::EntryTooLarge {
                    file,
                    entry: format!("a tar extension header (type {:?})", kind.as_byte() as char),
                    bytes: entry.size(),
                    limit: MAX_TAR_EXTENSION_BYTES,
                });
            }
            let mut bytes = Vec::with_capacity(entry.size() as usize);
            entry.read_to_end(&mut bytes).map_err(read_err)?;
            if kind.is_gnu_longname() {
                long_name = Some(
                    String::from_utf8_lossy(&bytes)
                        .trim_end_matches('\0')
                        .to_string(),
                );
            } else if kind.is_pax_local_extensions() {
                long_name = pax_path(&bytes).or(long_name);
            }
            continue;
        }
        let name = match long_name.take() {
            Some(name) => name,
            None => entry
                .path()
                .map_err(read_err)?
                .to_string_lossy()
                .into_owned(),
        };
        let dir = name.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let limit = if name.ends_with("/meta.json") {
            MAX_META_BYTES
        } else if name.ends_with(".xml") {
            MAX_XML_BYTES
        } else {
            continue;
        };
        if entry.size() > limit {
            return Err(ArchiveError::EntryTooLarge {
                file,
                entry: name,
                bytes: entry.size(),
                limit,
            });
        }
        // `entry.size()` bytes at most are read: the limit above holds for what reaches memory.
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut bytes).map_err(read_err)?;
        if name.ends_with("/meta.json") {
            let json = String::from_utf8_lossy(&bytes);
            if let Some(slug) = serde_json::from_str::<serde_json::Value>(&json)
                .ok()
                .and_then(|v| {
                    v.get("gii_slug")
                        .and_then(|s| s.as_str())
                        .filter(|s| paragraf_format::names::check_slug(s).is_ok())
                        .map(str::to_string)
                })
            {
                slugs.insert(dir, slug);
            }
        } else {
            let options = ParseOptions {
                slug: slugs.get(&dir).cloned(),
            };
            let label = format!("{file}:{name}");
            count += 1;
            let flow = visit(SourceLaw {
                result: parse_bytes(&bytes, &label, &options),
                sha256: paragraf_format::digest::sha256_hex(&bytes),
                path: name,
            });
            if flow.is_break() {
                break;
            }
        }
    }
    Ok(count)
}

/// The `path` record of a PAX extended header (`<length> path=<value>\n` records), if it has one.
fn pax_path(records: &[u8]) -> Option<String> {
    String::from_utf8_lossy(records)
        .split('\n')
        .filter_map(|record| record.split_once(' ')?.1.split_once('='))
        .find(|(key, _)| *key == "path")
        .map(|(_, value)| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.tar.xz` at `path` holding `(name, bytes)` entries.
    fn archive(path: &Path, entries: &[(&str, Vec<u8>)]) {
        let xz = xz2::write::XzEncoder::new(std::fs::File::create(path).unwrap(), 1);
        let mut tar = tar::Builder::new(xz);
        for (name, bytes) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, bytes.as_slice())
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
    }

    fn error(entries: &[(&str, Vec<u8>)]) -> String {
        let dir =
            std::env::temp_dir().join(format!("paragraf-archive-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.tar.xz", entries[0].0.replace('/', "_")));
        archive(&path, entries);
        let err = for_each_law(&path, |_| ControlFlow::Continue(()))
            .unwrap_err()
            .to_string();
        std::fs::remove_file(&path).unwrap();
        err.replace(&path.display().to_string(), "a.tar.xz")
    }

    #[test]
    fn bombs_and_oversized_entries_are_refused_before_unpacking() {
        // 40 MiB of zeros pack to a few KB: the ratio stops it long before the XML limit.
        let err = error(&[("laws/B1/source.xml", vec![0; 40 << 20])]);
        assert!(err.starts_with("a.tar.xz: unpacks to more than "), "{err}");
        assert!(err.ends_with(" packed, at most 100x and 3 GiB allowed). Most likely the archive is a decompression bomb, not the published corpus"), "{err}");
        // An incompressible 2 MiB meta.json passes the ratio but not its own limit.
        let mut rng = paragraf_stats::rng::SplitMix64::new(1);
        let noise: Vec<u8> = (0..2 << 20).map(|_| rng.next_u64() as u8).collect();
        let err = error(&[("laws/B1/meta.json", noise)]);
        assert_eq!(err, "a.tar.xz: laws/B1/meta.json has 2 MiB, more than the 1 MiB allowed. Most likely the archive is not the published corpus or was tampered with");
    }

    #[test]
    fn tar_extension_headers_are_bounded_and_applied() {
        let dir = std::env::temp_dir().join(format!("paragraf-archive-ext-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let law = b"<?xml version=\"1.0\"?><dokumente><norm><metadaten><jurabk>TG</jurabk><enbez>\xc2\xa7 1</enbez></metadaten><textdaten><text><Content><P>Text.</P></Content></text></textdaten></norm></dokumente>";
        // `(type, extension data)` before one law entry named `short.xml`.
        let write = |name: &str, kind: u8, data: &[u8]| -> std::path::PathBuf {
            let path = dir.join(name);
            let xz = xz2::write::XzEncoder::new(std::fs::File::create(&path).unwrap(), 1);
            let mut tar = tar::Builder::new(xz);
            let mut ext = tar::Header::new_ustar();
            ext.set_entry_type(tar::EntryType::new(kind));
            ext.set_size(data.len() as u64);
            ext.set_cksum();
            tar.append_data(&mut ext, "ext", data).unwrap();
            let mut header = tar::Header::new_ustar();
            header.set_size(law.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, "short.xml", &law[..]).unwrap();
            tar.into_inner().unwrap().finish().unwrap();
            path
        };
        let paths = |path: &Path| {
            let mut seen = Vec::new();
            for_each_law(path, |law| {
                seen.push(law.path.clone());
                ControlFlow::Continue(())
            })
            .map(|_| seen)
            .map_err(|e| {
                e.to_string()
                    .replace(&path.display().to_string(), "a.tar.xz")
            })
        };
        // A GNU long name and a PAX path name the entry that follows them.
        let gnu = write("gnu.tar.xz", b'L', b"laws/B1/a-long-name/source.xml\0");
        assert_eq!(paths(&gnu).unwrap(), ["laws/B1/a-long-name/source.xml"]);
        let pax = write("pax.tar.xz", b'x', b"33 path=laws/B2/pax/source.xml\n");
        assert_eq!(paths(&pax).unwrap(), ["laws/B2/pax/source.xml"]);
        // Larger than any name: refused before it is read (the second round: 1.5 GiB, 3.1 GiB of memory).
        let mut rng = paragraf_stats::rng::SplitMix64::new(2);
        let noise: Vec<u8> = (0..100 << 10).map(|_| rng.next_u64() as u8).collect();
        for (name, kind) in [("long.tar.xz", b'L'), ("paxbig.tar.xz", b'x')] {
            let big = write(name, kind, &noise);
            assert_eq!(
                paths(&big).unwrap_err(),
                format!("a.tar.xz: a tar extension header (type {:?}) has 100 KiB, more than the 64 KiB allowed. Most likely the archive is not the published corpus or was tampered with", kind as char)
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
