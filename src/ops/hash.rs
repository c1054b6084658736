//! `skillfold hash`: check bundle directories and compute their digests.
//!
//! Directories are checked in parallel (one worker per core); results come back in argument
//! order.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::format::bundle::{Bundle, BundleError, is_binary};
use crate::format::digest::BundleDigest;
use crate::format::hint::{Hint, Via};
use crate::format::limits::Limits;
use crate::format::problem::Problem;
use crate::support::error_code::ErrorCode;
use crate::support::{escape, hex};

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

/// The JSON report of a directory that is not a valid bundle (`skillfold hash --json`): every
/// problem, and the hint when an option accepts them.
#[derive(Debug, Clone, Serialize)]
pub struct HashRefusal {
    /// The directory, as given (escaped).
    pub directory: String,
    /// Stable code: `invalid_bundle`, or why the directory could not be read.
    pub code: ErrorCode,
    /// What is wrong.
    pub message: String,
    /// Every problem, errors and warnings (none when the directory could not be read).
    pub problems: Vec<Problem>,
    /// What would accept them, as a flag of `hash` (`--limits extended`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

impl HashRefusal {
    /// The refusal of `dir` for `error`.
    pub fn of(dir: &Path, error: &BundleError) -> HashRefusal {
        let problems = match error {
            BundleError::Invalid(invalid) => invalid.problems.as_slice().to_vec(),
            BundleError::Read(_) => Vec::new(),
        };
        HashRefusal {
            directory: escape::path(dir).to_string(),
            code: error.code().into(),
            message: error.to_string(),
            hint: hint(&problems),
            problems,
        }
    }
}

/// The hint of a bundle's problems, as a flag of `hash` (and `pin`): the first error's that
/// has one.
pub fn hint(problems: &[Problem]) -> Option<Hint> {
    problems
        .iter()
        .filter(|p| p.is_error())
        .find_map(|p| Hint::of(p.code.as_str(), Via::Flags))
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
