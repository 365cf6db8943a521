//! How much input the corpus readers accept, in one place.
//!
//! Law XML comes from a download or an archive anybody can hand us, and every stage here (decompression, XML
//! parsing, the text walk) would otherwise grow with whatever it is given: a 1.5 MB zip unpacked to 1.5 GB, a
//! 160 KB file with one entity referenced 20,000 times expanded to 3.8 GiB, 50,000 nested elements overflowed
//! the stack. Each limit is a named constant with a clear error, chosen from the real federal archive
//! (`gii-federal-2026-04.tar.xz`, 6,877 laws) with a wide margin:
//!
//! | limit | value | the archive's maximum |
//! | --- | --- | --- |
//! | [`MAX_XML_BYTES`] | 32 MiB | 3.3 MB (`BJNR031100012`), so ~10x |
//! | [`MAX_XML_NODES`] | 1 M | ~0.1 M (in the same file) |
//! | [`MAX_XML_DEPTH`] | 256 | 34 (`BJNR212390990`) |
//! | document types (`<!DOCTYPE`, where entities are declared) | refused | none in the archive |
//! | [`MAX_COMPRESSION_RATIO`] | 100 | ~10 (the archive: 300 MB from 29 MB) |
//! | [`MAX_ARCHIVE_BYTES`] | 3 GiB unpacked | 300 MB |
//! | [`MAX_META_BYTES`] | 1 MiB per `meta.json` | 2.5 KB |
//! | [`MAX_TAR_EXTENSION_BYTES`] | 64 KiB per GNU long name / PAX header | none (names of 29 bytes at most) |

use std::io::Read;

/// Largest law XML read, from disk, a zip or the archive.
pub const MAX_XML_BYTES: u64 = 32 << 20;
/// Most XML nodes (elements, text runs) in one law: bounds the parser's memory for degenerate inputs whose
/// every few bytes are a node.
pub const MAX_XML_NODES: u32 = 1 << 20;
/// Deepest element nesting accepted; the text walk recurses per level, so this also bounds its stack.
pub const MAX_XML_DEPTH: usize = 256;
/// Largest ratio of unpacked to packed bytes, for a zip entry and for the whole archive.
pub const MAX_COMPRESSION_RATIO: u64 = 100;
/// Most bytes unpacked from one federal archive.
pub const MAX_ARCHIVE_BYTES: u64 = 3 << 30;
/// Largest tar extension header (a GNU long name or link, a PAX record set): the published corpus has none,
/// its names fit the plain header (29 bytes at most).
pub const MAX_TAR_EXTENSION_BYTES: u64 = 64 << 10;
/// Largest `meta.json` of an archive entry.
pub const MAX_META_BYTES: u64 = 1 << 20;

/// Reads all of `reader`, failing with `Err(None)` as soon as more than `limit` bytes come (a bomb is never held
/// in memory beyond the limit) and `Err(Some(e))` on IO errors.
pub(crate) fn read_at_most(
    reader: impl Read,
    limit: u64,
) -> Result<Vec<u8>, Option<std::io::Error>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Some)?;
    if bytes.len() as u64 > limit {
        return Err(None);
    }
    Ok(bytes)
}

/// A human size: `32 MiB`, `1.5 GiB`, `700 bytes` (whole units without decimals).
pub(crate) fn size(bytes: u64) -> String {
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{:.1} {name}", bytes as f64 / unit as f64)
            };
        }
    }
    format!("{bytes} bytes")
}
