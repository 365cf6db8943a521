//! The bundle files on disk: immutable, named after their content, replaced only through the manifest.
//!
//! A bundle's name carries the first 64 bits of its SHA-256, so a browser may cache it forever and a rebuild
//! that changes nothing writes the same name. The write itself is [`paragraf_fs::write_atomic`]; the file a
//! rebuild superseded is deleted only after the saved manifest no longer lists it.

use super::BuildError;
use std::path::Path;

/// Deletes the file a rebuilt bundle replaced, once the saved manifest no longer lists it.
pub(crate) fn remove_superseded(dir: &Path, replaced: Option<String>, current: &str) {
    if let Some(old) = replaced.filter(|old| old != current) {
        match std::fs::remove_file(dir.join(&old)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => eprintln!("warning: could not remove the superseded bundle {old}: {e}"),
        }
    }
}

/// Writes `bytes` atomically as `<stem>.<hash16>.pgb` and returns the file name.
pub fn write_hashed(dir: &Path, stem: &str, bytes: &[u8]) -> Result<String, BuildError> {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name = format!("{stem}.{hex}.pgb");
    paragraf_fs::write_atomic(&dir.join(&name), bytes)?;
    Ok(name)
}
