//! `skillfold token`: a new bearer token for `serve --listen --tokens FILE`, its hash appended
//! to the tokens file.
//!
//! The token is 32 bytes from the operating system's random source (ring's `SystemRandom`,
//! `getrandom(2)` on Linux), written as `sft_` and 64 lowercase hex digits: the prefix lets a
//! secret scanner recognise a leaked one. Only its SHA-256 is kept: [`append`] adds
//! `{"agent": NAME or null, "sha256": HEX}` to the JSON array, leaving every byte of the entries
//! before it as they were, and [`write`] replaces the file atomically (a new file beside it,
//! synced, renamed over it, beneath the directory it opened) with the mode the file had, or
//! `0600` for a new one, whatever the umask. A link at the tokens path is refused, never
//! followed (a file written through it would not be the one the server reads), and so is
//! anything but a regular file. Whether the result is a tokens file the server accepts is the
//! caller's to check, with the server's own reader, before it is written.

use std::path::{Path, PathBuf};

use ring::rand::SecureRandom as _;

use crate::support::{escape, hex};

/// The mode of a tokens file this command creates: the owner's alone.
pub const NEW_FILE_MODE: u32 = 0o600;

/// A token just made: shown once, then only its hash is kept.
pub struct NewToken {
    /// What the agent presents (`Authorization: Bearer …`).
    pub token: String,
    /// The SHA-256 of the token, in lowercase hex: what the tokens file holds.
    pub sha256: String,
}

/// A tokens file as it was found.
pub struct Existing {
    /// Its text.
    pub text: String,
    /// Its permission bits, which the new file keeps.
    pub mode: u32,
}

/// Why a token could not be made or its entry not written.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The operating system's random source failed.
    #[error("the operating system's random source failed; no token was made")]
    Random,
    /// The tokens path is a link, or not a regular file.
    #[error("`{}` is {what}, not a regular file; give the path of the file itself", escape::path(.path))]
    NotAFile {
        /// The tokens path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// The file is over the bound the server reads.
    #[error("`{}` holds {size} bytes, over the bound of {limit}", escape::path(.path))]
    TooLarge {
        /// The tokens path.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// The file holds no JSON array to append to.
    #[error("`{}` is not a JSON array of tokens (it does not end with `]`)", escape::path(.path))]
    NotAnArray {
        /// The tokens path.
        path: PathBuf,
    },
    /// Reading or writing failed.
    #[error("`{}`: {}", escape::path(.path), escape::text(&.source.to_string()))]
    Io {
        /// The tokens path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl TokenFileError {
    /// Whether running again may succeed (the random source or the file system failed), as
    /// opposed to a file that must be fixed first.
    pub fn transient(&self) -> bool {
        matches!(self, TokenFileError::Random | TokenFileError::Io { .. })
    }
}

/// A new token from the operating system's random source.
pub fn generate() -> Result<NewToken, TokenFileError> {
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| TokenFileError::Random)?;
    let token = format!("sft_{}", hex::encode(&bytes));
    let sha256 = hex::sha256_hex(token.as_bytes());
    Ok(NewToken { token, sha256 })
}

/// The tokens file at `path`, if there is one (at most `limit` bytes): a link or anything but a
/// regular file is refused.
pub fn read(path: &Path, limit: u64) -> Result<Option<Existing>, TokenFileError> {
    let io = |source| TokenFileError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = match fs_err::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_symlink() {
            "a symbolic link"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "a special file"
        };
        return Err(TokenFileError::NotAFile {
            path: path.to_owned(),
            what,
        });
    }
    if meta.len() > limit {
        return Err(TokenFileError::TooLarge {
            path: path.to_owned(),
            size: meta.len(),
            limit,
        });
    }
    let text = fs_err::read_to_string(path).map_err(io)?;
    use std::os::unix::fs::PermissionsExt as _;
    Ok(Some(Existing {
        text,
        mode: meta.permissions().mode() & 0o7777,
    }))
}

/// `text` (none: a new file) with the entry of `agent` (`None`: the default catalogue at `/mcp`)
/// and `sha256` appended before the array's closing `]`; the bytes before it are kept.
pub fn append(
    path: &Path,
    text: Option<&str>,
    agent: Option<&str>,
    sha256: &str,
) -> Result<String, TokenFileError> {
    let agent = serde_json::to_string(&agent).unwrap_or_else(|_| "null".to_owned());
    let entry = format!("{{\"agent\": {agent}, \"sha256\": \"{sha256}\"}}");
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(format!("[\n  {entry}\n]\n"));
    };
    let body = text.trim_end();
    let Some(inside) = body.strip_suffix(']') else {
        return Err(TokenFileError::NotAnArray {
            path: path.to_owned(),
        });
    };
    let inside = inside.trim_end();
    let separator = if inside.ends_with('[') { "" } else { "," };
    Ok(format!("{inside}{separator}\n  {entry}\n]\n"))
}

/// Replaces (or creates) the file at `path` with `text`, atomically, with permission bits `mode`.
pub fn write(path: &Path, text: &str, mode: u32) -> Result<(), TokenFileError> {
    let io = |source| TokenFileError::Io {
        path: path.to_owned(),
        source,
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io(std::io::Error::other("the path names no file")))?;
    let name = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name))
        .map_err(|e| io(std::io::Error::other(e)))?;
    let dir = crate::format::untrusted_fs::open_root(parent)
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    crate::format::untrusted_fs::replace_file(&dir, &name, text.as_bytes(), mode).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_keeps_what_was_written_and_adds_one_entry() {
        let path = Path::new("tokens.json");
        let hash = "a".repeat(64);
        let first = append(path, None, Some("reviewer"), &hash).expect("new");
        assert_eq!(
            first,
            format!("[\n  {{\"agent\": \"reviewer\", \"sha256\": \"{hash}\"}}\n]\n")
        );
        let second = append(path, Some(&first), None, &hash).expect("appended");
        assert!(second.starts_with(&first[..first.len() - 3]), "{second}");
        assert!(second.ends_with(&format!(
            ",\n  {{\"agent\": null, \"sha256\": \"{hash}\"}}\n]\n"
        )));
        let empty = append(path, Some(" [ ]\n"), None, &hash).expect("empty array");
        assert_eq!(
            empty,
            format!(" [\n  {{\"agent\": null, \"sha256\": \"{hash}\"}}\n]\n")
        );
        assert!(matches!(
            append(path, Some("{}"), None, &hash),
            Err(TokenFileError::NotAnArray { .. })
        ));
    }

    #[test]
    fn a_token_is_random_and_its_hash_is_its_sha256() {
        let one = generate().expect("random");
        let two = generate().expect("random");
        assert_ne!(one.token, two.token);
        assert_eq!(one.token.len(), 4 + 64);
        assert_eq!(one.sha256, hex::sha256_hex(one.token.as_bytes()));
    }
}
