//! Reading a key file a trust policy names (an allowed-signers file, an OpenPGP keyring): through
//! the capped input reader, refused over [`MAX_SIGNERS_BYTES`] without reading more, and the error
//! that names the file and, when one is at fault, its line.

use std::path::{Path, PathBuf};

/// The most bytes an allowed-signers file may hold.
pub const MAX_SIGNERS_BYTES: u64 = 1024 * 1024;

/// Why an allowed-signers file (or an OpenPGP keyring) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", crate::support::escape::path(.path), .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SignersError {
    /// The file.
    pub path: PathBuf,
    /// The line at fault, if one is.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The bytes of the key file at `path`, refused over [`MAX_SIGNERS_BYTES`] without reading more.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, SignersError> {
    let error = |message: String| SignersError {
        path: path.to_owned(),
        line: None,
        message,
    };
    crate::format::untrusted_fs::read_input(path, MAX_SIGNERS_BYTES)
        .map_err(|e| error(e.reason))?
        .map_err(|_| error(format!("larger than {MAX_SIGNERS_BYTES} bytes")))
}
