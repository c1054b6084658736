//! `skillfold sbom`: a software bill of materials of what was verified, as CycloneDX 1.6 JSON
//! ([`cyclonedx`]) or SPDX 2.3 JSON ([`spdx`]). It describes, never checks: the bundles of a
//! descriptor's prepared corpora (from each published generation's manifest) or of an agent's
//! folder (from its install record), each with its name, version, bundle digest, source
//! (repository URL and commit, or image and manifest digest), every file's SHA-256 and the
//! verified commit signer or image publisher. `verify` and `verify --installed` are the checks;
//! run one first. Local sources of a descriptor have no manifest and are not listed. For a
//! corpus, each bundle also lists the scanner verdicts the descriptor records for its current
//! hash (`scans`, docs/scanners.md); an install record holds none.
//!
//! The output is byte-reproducible: the same corpus or record gives the same bytes. No
//! wall-clock time is written unless asked for ([`Inventory::timestamp`]); the document's own
//! identifiers are derived from a digest of its content.

pub mod cyclonedx;
pub mod spdx;

use std::path::Path;

use crate::corpus::Corpus;
use crate::corpus::manifest::{FileRecord, Manifest};
use crate::descriptor::scanners::ScanSpec;
use crate::descriptor::{Descriptor, Plan};
use crate::ops::install::record;
use crate::runtime::code::RuntimeCode;
use crate::support::error_code::{Coded, ErrorCode};
use crate::support::escape;

/// The time an SPDX document says it was created when nothing recorded one (an install record).
pub const EPOCH: &str = "1970-01-01T00:00:00Z";

/// Why no bill of materials could be made: a corpus never prepared (`not_prepared`), an
/// unreadable manifest (`corpus_bad_manifest`), an invalid or missing install record
/// (`install_record_invalid`), or an I/O error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct SbomError {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong, untrusted names escaped.
    pub message: String,
}

impl Coded for SbomError {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}

impl From<crate::ops::install::InstallError> for SbomError {
    fn from(e: crate::ops::install::InstallError) -> SbomError {
        SbomError {
            code: e.code,
            message: e.message,
        }
    }
}

/// What the bill of materials lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// When the described data was recorded (RFC 3339): the newest generation's own time, or
    /// [`EPOCH`] for an install record.
    pub recorded: String,
    /// The wall-clock time to write as the document's time, when asked for (`--timestamp`).
    pub timestamp: Option<String>,
    /// Every bundle, sorted by name then digest, each once.
    pub bundles: Vec<SbomBundle>,
}

/// One bundle as verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SbomBundle {
    /// Its skill name.
    pub name: String,
    /// Its pinned version label.
    pub version: String,
    /// Its `chamvi-skill-bundle-v1` digest (lowercase hex).
    pub hash: String,
    /// `git`, `oci` or `local`.
    pub kind: String,
    /// The repository URL without credentials (git), or `REGISTRY/REPOSITORY` (oci).
    pub url: Option<String>,
    /// The pinned commit (git) or manifest digest (oci).
    pub commit: Option<String>,
    /// Its folder in the repository, when known.
    pub path: Option<String>,
    /// Who signed the commit or published the image, as verified; `None` when not required.
    pub signer: Option<String>,
    /// The scanner verdicts recorded for this bundle's hash, as the descriptor holds them.
    pub scans: Vec<ScanSpec>,
    /// Every file.
    pub files: Vec<FileRecord>,
}

impl SbomBundle {
    /// Its identifier: `skill:<name>@<hash>`.
    pub fn reference(&self) -> String {
        format!("skill:{}@{}", self.name, self.hash)
    }
}

impl Inventory {
    fn new(recorded: String, mut bundles: Vec<SbomBundle>) -> Inventory {
        bundles.sort_by(|a, b| (&a.name, &a.hash).cmp(&(&b.name, &b.hash)));
        bundles.dedup_by(|a, b| (&a.name, &a.hash) == (&b.name, &b.hash));
        Inventory {
            recorded,
            timestamp: None,
            bundles,
        }
    }
}

/// The bundles of every Git and OCI corpus of `plan`, from each published generation's
/// manifest: each approved pin, as the manifest recorded it, with the verdicts `descriptor`
/// (the plan's own) records for its hash.
pub fn of_corpora(plan: &Plan, descriptor: &Descriptor) -> Result<Inventory, SbomError> {
    let verdicts = crate::descriptor::plan::scans::current_verdicts(descriptor);
    let mut bundles = Vec::new();
    let mut newest: Option<u64> = None;
    for corpus in plan.corpora() {
        let shown = escape::path(corpus.directory).to_string();
        let not_prepared = |why: String| SbomError {
            code: RuntimeCode::NotPrepared.into(),
            message: format!(
                "{}: {why}; run `skillfold prepare` (and `skillfold verify`) first",
                corpus.location
            ),
        };
        let generation = match Corpus::at(corpus.directory).current() {
            Ok(Some(g)) => g,
            Ok(None) => {
                return Err(not_prepared(format!(
                    "`{shown}` holds no prepared generation"
                )));
            }
            Err(e @ crate::corpus::CorpusError::BadManifest { .. }) => {
                return Err(SbomError {
                    code: RuntimeCode::CorpusBadManifest.into(),
                    message: format!("{}: {e}", corpus.location),
                });
            }
            Err(e) => {
                return Err(SbomError {
                    code: e.code().into(),
                    message: format!("{}: {e}", corpus.location),
                });
            }
        };
        let manifest: &Manifest = &generation.manifest;
        if manifest.source.commit != corpus.revision {
            return Err(not_prepared(format!(
                "the published generation holds {}, but the descriptor pins {}",
                escape::text(&manifest.source.commit),
                corpus.revision
            )));
        }
        newest = newest.max(Some(manifest.created_unix));
        let signer = signer_of(manifest);
        for pin in corpus.approved {
            let Some(recorded) = manifest.bundles.iter().find(|b| b.pin.name == pin.name) else {
                return Err(not_prepared(format!(
                    "the published generation {} does not hold `{}`",
                    generation.id, pin.name
                )));
            };
            bundles.push(SbomBundle {
                name: recorded.pin.name.to_string(),
                version: recorded.pin.version.as_str().to_owned(),
                hash: recorded.pin.hash.to_string(),
                kind: corpus.kind.as_str().to_owned(),
                url: Some(manifest.source.url.clone()),
                commit: Some(manifest.source.commit.clone()),
                path: Some(recorded.path.clone()),
                signer: signer.clone(),
                scans: verdicts
                    .get(&(recorded.pin.name.to_string(), recorded.pin.hash.to_string()))
                    .cloned()
                    .unwrap_or_default(),
                files: recorded.files.clone(),
            });
        }
    }
    let recorded = newest.map_or_else(|| EPOCH.to_owned(), crate::support::time::format_unix);
    Ok(Inventory::new(recorded, bundles))
}

/// The bundles `install` recorded in the agent's folder `dir` (its `.skillfold-install.json`).
pub fn of_installed(dir: &Path) -> Result<Inventory, SbomError> {
    let shown = escape::path(dir).to_string();
    let missing = || SbomError {
        code: crate::ops::install::code::InstallCode::InstallRecordInvalid.into(),
        message: format!(
            "`{shown}` holds no install record `{}`; run `skillfold install --into` first",
            record::RECORD_NAME
        ),
    };
    let target = crate::ops::install::folder::open_target(dir, false)?.ok_or_else(missing)?;
    let (record, _) = record::read(&target.fd, &target.shown)?.ok_or_else(missing)?;
    let bundles = record
        .bundles
        .into_iter()
        .map(|b| SbomBundle {
            name: b.name,
            version: b.version,
            hash: b.hash,
            kind: b.source.kind,
            url: b.source.url,
            commit: b.source.commit,
            path: None,
            signer: None,
            scans: Vec::new(),
            files: b.files,
        })
        .collect();
    Ok(Inventory::new(EPOCH.to_owned(), bundles))
}

/// Who signed the generation's commit or published its image, in words.
fn signer_of(manifest: &Manifest) -> Option<String> {
    use crate::trust::verdict::Publisher;
    if let Some(signer) = &manifest.source.signer {
        return Some(format!(
            "{} key {} (principal {})",
            signer.format, signer.fingerprint, signer.principal
        ));
    }
    manifest
        .source
        .publisher
        .as_ref()
        .map(|verified| match &verified.signer {
            Publisher::Key { fingerprint } => format!("cosign key {fingerprint}"),
            Publisher::Identity { issuer, subject } => format!("{subject} (issuer {issuer})"),
        })
}

/// The lowercase hex SHA-256 of `bytes`, for identifiers derived from content.
fn digest_of(bytes: &[u8]) -> String {
    crate::support::hex::sha256_hex(bytes)
}
