//! Content hashes as the manifest and content-hashed file names spell them.

use sha2::Digest;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// Lower-case hex of `bytes` (digests as the manifest and file names spell them).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
