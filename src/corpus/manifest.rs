//! The manifest of a published generation (`.skillfold/manifests/<id>.json`): for each bundle
//! its pin, its source (a Git repository's URL without credentials, commit and root, or an OCI
//! image's repository and manifest digest), its folder and every file's `{path, size, sha256}` —
//! so verification can say which file changed and hosts can check each read — and whether its
//! source marks it executable (`executable`, written only when true), which the digest does not
//! cover but the pinned commit or image does. The `format` field versions the file; an unknown format is never read as this one.

use serde::{Deserialize, Serialize};

use crate::descriptor::Links;
use crate::format::bundle::Bundle;
use crate::format::limits::Limits;
use crate::format::pin::Pin;
use crate::support::escape;
use crate::support::hex;
use crate::trust::commit::policy::Signer;
use crate::trust::verdict::Verified;

/// The only manifest format this version reads and writes.
pub const FORMAT: &str = "skillfold-corpus-manifest-v1";

/// One generation's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The generation id.
    pub generation: String,
    /// When it was written (Unix seconds).
    pub created_unix: u64,
    /// Where the bundles came from.
    pub source: ManifestSource,
    /// The bundles, sorted by name.
    pub bundles: Vec<ManifestBundle>,
}

/// The source of a generation: a Git repository (URL, commit, root, links, signer) or an OCI
/// image (`url` its `REGISTRY/REPOSITORY`, `commit` its manifest digest, no root).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestSource {
    /// The repository URL with credentials removed.
    pub url: String,
    /// The pinned commit.
    pub commit: String,
    /// The folder holding the bundles, if not the repository root.
    pub root: Option<String>,
    /// The links policy the commit was checked under (`links`); not written when `refuse`.
    #[serde(default, skip_serializing_if = "Links::is_refuse")]
    pub links: Links,
    /// Who signed the commit, when the source requires a signature (`verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<Signer>,
    /// The signed commit object itself (when it is UTF-8 text), so `verify` can check the
    /// signature again without the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_object: Option<String>,
    /// Who published the image, when the source requires a publisher's signature (`verify` of
    /// an `oci` source): the signer and the signature material that verified, so `verify`
    /// checks it again without the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Verified>,
}

/// One bundle of a generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestBundle {
    /// The pin it was verified against.
    pub pin: Pin,
    /// Its folder in the repository.
    pub path: String,
    /// The profile it was verified under (`chamvi` when absent, as in manifests written before
    /// profiles existed).
    #[serde(default)]
    pub limits: Limits,
    /// Every file.
    pub files: Vec<FileRecord>,
}

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRecord {
    /// Bundle-relative path.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256, lowercase hex.
    pub sha256: String,
    /// Whether the source marks it executable (a Git tree's `100755`, an image layer's execute
    /// bit; for an install record, whether it was installed with an execute bit). Written only
    /// when true; a manifest or record written before it existed reads as `false`. Not part of
    /// the bundle digest, and not compared by [`changed_files`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

impl ManifestBundle {
    /// The record of a verified bundle.
    pub fn of(pin: &Pin, repo_path: String, bundle: &Bundle) -> ManifestBundle {
        ManifestBundle {
            pin: pin.clone(),
            path: repo_path,
            limits: bundle.limits(),
            files: file_records(bundle.files()),
        }
    }
}

/// `{path, size, sha256}` of every file of a file set.
pub fn file_records(files: &crate::format::file_set::FileSet) -> Vec<FileRecord> {
    files
        .iter()
        .map(|(path, bytes)| FileRecord {
            path: path.as_str().to_owned(),
            size: bytes.len() as u64,
            sha256: hex::sha256_hex(bytes),
            executable: files.is_executable(path.as_str()),
        })
        .collect()
}

/// The paths whose bytes differ between a manifest's records and what was read now (changed,
/// added or removed), for error messages: each path escaped ([`crate::support::escape`]), since a
/// manifest on disk may have been edited.
pub fn changed_files(recorded: &[FileRecord], now: &[FileRecord]) -> Vec<String> {
    use std::collections::BTreeMap;
    let before: BTreeMap<&str, &FileRecord> =
        recorded.iter().map(|r| (r.path.as_str(), r)).collect();
    let after: BTreeMap<&str, &FileRecord> = now.iter().map(|r| (r.path.as_str(), r)).collect();
    let mut changed: Vec<String> = Vec::new();
    for (path, record) in &before {
        match after.get(path) {
            Some(now) if (now.size, &now.sha256) == (record.size, &record.sha256) => {}
            Some(_) => changed.push(format!("{} (changed)", escape::text(path))),
            None => changed.push(format!("{} (removed)", escape::text(path))),
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        changed.push(format!("{} (added)", escape::text(path)));
    }
    changed
}
