//! `skillfold hash`: check bundle directories and compute their digests.
//!
//! Directories are checked in parallel (one worker per core); results come back in argument
//! order.

use std::path::PathBuf;

use serde::Serialize;

use crate::format::bundle::{Bundle, BundleError, is_binary};
use crate::format::digest::BundleDigest;
use crate::format::limits::Limits;
use crate::support::hex;

/// The JSON report of one bundle (`skillfold hash --json`).
#[derive(Debug, Clone, Serialize)]
pub struct HashReport {
    /// The frontmatter `name`.
    pub name: String,
    /// The trimmed `description`.
    pub description: String,
    /// The `chamvi-skill-bundle-v1` digest.
    pub hash: BundleDigest,
    /// The limits profile it was checked under: `chamvi`, `extended`, or `key=value,…`.
    pub limits: Limits,
    /// Frontmatter keys that grant nothing, sorted.
    pub ignored_fields: Vec<String>,
    /// Every file, in digest order.
    pub files: Vec<FileEntry>,
    /// Warnings such as case collisions (empty when none).
    pub warnings: Vec<String>,
}

/// One file of a [`HashReport`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    /// Bundle-relative POSIX path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// Whether the file is binary (not UTF-8 text, or holding a NUL byte); only a profile with
    /// `binary` admits such a file.
    pub binary: bool,
}

impl HashReport {
    /// The report of a checked bundle.
    pub fn of(bundle: &Bundle) -> HashReport {
        HashReport {
            name: bundle.name().to_string(),
            description: bundle.description().to_owned(),
            hash: bundle.digest(),
            limits: bundle.limits(),
            ignored_fields: bundle.ignored_fields().to_vec(),
            files: bundle
                .files()
                .iter()
                .map(|(path, bytes)| FileEntry {
                    path: path.to_string(),
                    size: bytes.len() as u64,
                    sha256: hex::sha256_hex(bytes),
                    binary: is_binary(bytes),
                })
                .collect(),
            warnings: bundle.warnings().iter().map(ToString::to_string).collect(),
        }
    }
}

/// Reads and checks every directory under `limits`, in parallel; results are in the order of
/// `dirs`.
pub fn check_dirs(dirs: &[PathBuf], limits: Limits) -> Vec<Result<Bundle, BundleError>> {
    crate::support::parallel::map(dirs, crate::support::parallel::cores(), |d| {
        Bundle::read_dir_under(d, limits)
    })
}
