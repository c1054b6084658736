//! `skillfold hash`: check bundle directories and compute their digests.
//!
//! Directories are checked in parallel (one worker per core); results come back in argument order.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::bundle::{Bundle, LoadError};
use crate::digest::BundleDigest;
use crate::hex;

/// The JSON report of one bundle (`skillfold hash --json`).
#[derive(Debug, Clone, Serialize)]
pub struct HashReport {
    /// The frontmatter `name`.
    pub name: String,
    /// The trimmed `description`.
    pub description: String,
    /// The `chamvi-skill-bundle-v1` digest.
    pub hash: BundleDigest,
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
}

impl HashReport {
    /// The report of a checked bundle.
    pub fn of(bundle: &Bundle) -> HashReport {
        HashReport {
            name: bundle.name().to_string(),
            description: bundle.description().to_owned(),
            hash: bundle.digest(),
            ignored_fields: bundle.ignored_fields().to_vec(),
            files: bundle
                .files()
                .iter()
                .map(|(path, bytes)| FileEntry {
                    path: path.to_string(),
                    size: bytes.len() as u64,
                    sha256: hex::sha256_hex(bytes),
                })
                .collect(),
            warnings: bundle.warnings().iter().map(ToString::to_string).collect(),
        }
    }
}

/// Reads and checks every directory, in parallel; results are in the order of `dirs`.
pub fn check_dirs(dirs: &[PathBuf]) -> Vec<Result<Bundle, LoadError>> {
    let workers = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
        .min(dirs.len())
        .max(1);
    if workers == 1 {
        return dirs.iter().map(|d| Bundle::read_dir(d)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<Bundle, LoadError>>> = Vec::new();
    results.resize_with(dirs.len(), || None);
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let result = Bundle::read_dir(dir);
                    slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every index is taken by exactly one worker"))
        .collect()
}

/// Reads and checks one directory.
pub fn check_dir(dir: &Path) -> Result<Bundle, LoadError> {
    Bundle::read_dir(dir)
}
