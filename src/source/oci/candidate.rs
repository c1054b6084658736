//! A candidate image of an OCI source: an image other than its pin that `outdated` and `update`
//! weigh against the pin — the one the source's `track` tag (or a tag `update --to` names)
//! names now, or an image named by digest. A tag is resolved once ([`resolve`]: a `HEAD` of its
//! manifest, or a `GET` when the registry names no digest; see
//! [`crate::source::oci::pull::resolve_tag`]). The image is pulled by digest into a temporary
//! directory exactly as `prepare` pulls a pin ([`pull`]: the manifest equal to its digest, the
//! layers the sources sharing the pull approve by annotation, every layer's size and digest, the
//! pull bound); the layers stay on disk in a [`PulledImage`]. Each source then reads its own
//! approved bundles from them with the reader `prepare` uses
//! ([`crate::source::oci::approved`]: its limits, its layers, the strict reader, its pull
//! bound) into an [`ImageCandidate`], whose bundles are checked when they are taken
//! ([`ImageCandidate::take`]). Nothing is published; the directory is removed when the
//! [`PulledImage`] is dropped.

use std::collections::{BTreeMap, BTreeSet};

use crate::descriptor::plan::OciSource;
use crate::format::bundle::Bundle;
use crate::format::file_set::FileSet;
use crate::format::problem::Problems;
use crate::format::skill_name::SkillName;
use crate::support::error_code::ErrorCode;

use super::code::DistributionCode;

/// Why a candidate image could not be resolved, pulled or read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct CandidateError {
    /// The stable code.
    pub code: DistributionCode,
    /// What happened (escaped; never credentials).
    pub message: String,
}

impl CandidateError {
    fn new(code: DistributionCode, message: impl Into<String>) -> Self {
        CandidateError {
            code,
            message: message.into(),
        }
    }
}

impl crate::support::error_code::Coded for CandidateError {
    fn error_code(&self) -> ErrorCode {
        self.code.into()
    }
}

/// A candidate image, pulled: its layers in files of a temporary directory.
#[derive(Debug)]
pub struct PulledImage {
    /// The image, as shown in messages.
    image: String,
    /// The layers the pull kept.
    layers: Vec<super::PulledLayer>,
    /// The bundle names of the annotations of every layer of the image, pulled or not.
    annotated: BTreeSet<String>,
    /// Removed when the image is dropped.
    _temp: tempfile::TempDir,
}

impl PulledImage {
    /// `oci`'s approved bundles, read from the layers as `prepare` reads them (see
    /// [`crate::source::oci::approved`]).
    pub fn read(&self, oci: &OciSource) -> Result<ImageCandidate, CandidateError> {
        let approved: BTreeSet<String> = oci.approved.iter().map(|p| p.name.to_string()).collect();
        let read = super::approved::ApprovedBundles::read(
            (&self.image, &self.layers),
            &approved,
            (oci.limits, max_pull_bytes(oci.limits)),
            &|| Ok(()),
            &|e| CandidateError::new(e.code, e.message),
        )?;
        let mut offered = read.offered;
        offered.extend(self.annotated.iter().cloned());
        Ok(ImageCandidate {
            bundles: read.bundles,
            offered,
        })
    }
}

/// One source's approved bundles of a candidate image, read.
#[derive(Debug)]
pub struct ImageCandidate {
    /// Each approved bundle found, with its files and what the rules found in them.
    bundles: BTreeMap<String, (FileSet, Problems)>,
    /// The bundles the image offers, approved or not.
    offered: BTreeSet<String>,
}

/// Why an approved bundle cannot be taken from a candidate image.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ImageTakeError {
    /// The image has no `name/` folder.
    #[error("approved bundle `{name}` is not in the image (no folder `{name}/`)")]
    Missing {
        /// The name.
        name: SkillName,
    },
    /// The bundle breaks the bundle rules.
    #[error("`{name}` breaks the bundle rules")]
    Invalid {
        /// The folder.
        name: SkillName,
        /// Every problem.
        problems: Problems,
    },
    /// Its frontmatter names another bundle than its folder.
    #[error("`{name}/SKILL.md` names the bundle `{found}`, not `{name}`, the name of its folder")]
    NameMismatch {
        /// The folder.
        name: SkillName,
        /// The frontmatter `name`.
        found: SkillName,
    },
}

impl ImageTakeError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ImageTakeError::Missing { .. } => DistributionCode::BundleNotInImage.into(),
            ImageTakeError::Invalid { .. } => crate::format::code::ReadCode::InvalidBundle.into(),
            ImageTakeError::NameMismatch { .. } => {
                crate::format::code::PinCode::NameMismatch.into()
            }
        }
    }

    /// The bundle problems behind an `Invalid` refusal, errors and warnings, with their places
    /// (none for the other refusals).
    pub fn problems(&self) -> &[crate::format::problem::Problem] {
        match self {
            ImageTakeError::Invalid { problems, .. } => problems.as_slice(),
            _ => &[],
        }
    }

    /// Every problem as one line each, with its code (for reports).
    pub fn lines(&self) -> Vec<String> {
        match self {
            ImageTakeError::Invalid { name, problems } => problems
                .as_slice()
                .iter()
                .filter(|p| p.is_error())
                .map(|p| p.display_under(name.as_str()).to_string())
                .collect(),
            other => vec![format!("{other} [{}]", other.code())],
        }
    }
}

impl ImageCandidate {
    /// The bundle in the image's folder `name`, checked under the bundle rules (its files were
    /// read under the source's limits).
    pub fn take(&self, name: &SkillName) -> Result<Bundle, ImageTakeError> {
        let Some((files, problems)) = self.bundles.get(name.as_str()) else {
            return Err(ImageTakeError::Missing { name: name.clone() });
        };
        Bundle::check(files.clone(), problems.clone()).map_err(|invalid| ImageTakeError::Invalid {
            name: name.clone(),
            problems: invalid.problems,
        })
    }

    /// [`take`](Self::take), refusing a bundle whose frontmatter names another than its folder
    /// (that is not an update of the pin of that name).
    pub fn take_named(&self, name: &SkillName) -> Result<Bundle, ImageTakeError> {
        let bundle = self.take(name)?;
        if bundle.name() != name {
            return Err(ImageTakeError::NameMismatch {
                name: name.clone(),
                found: bundle.name().clone(),
            });
        }
        Ok(bundle)
    }

    /// The bundles the image offers, approved or not, sorted: the folders holding a `SKILL.md`
    /// file in the layers read for the source, and the names the layers' annotations give.
    pub fn bundle_names(&self) -> Vec<String> {
        self.offered.iter().cloned().collect()
    }
}

/// The digest the tag `tag` of `oci`'s repository names now, within `deadline`.
#[cfg(feature = "oci")]
pub fn resolve(
    oci: &OciSource,
    tag: &str,
    deadline: std::time::Duration,
) -> Result<String, CandidateError> {
    super::pull::resolve_tag(&super::pull::TagRequest {
        registry: &oci.reference.registry,
        repository: &oci.reference.repository,
        tag,
        plain_http: oci.plain_http,
        deadline,
    })
    .map_err(|e| CandidateError::new(e.code, e.message))
}

/// What one pull of a candidate image serves: the sources that share it. It brings the layers
/// any of them approves (by annotation) within the sum of their pull bounds, as `prepare`'s
/// shared pull does; each source is held to its own when it reads them.
#[derive(Debug, Default, Clone)]
pub struct Sharing {
    /// The bundle names approved by any of the sources.
    pub wanted: BTreeSet<String>,
    /// The sum of their pull bounds.
    pub max_bytes: u64,
}

impl Sharing {
    /// Adds `oci` to the sources the pull serves.
    pub fn add(&mut self, oci: &OciSource) {
        self.wanted
            .extend(oci.approved.iter().map(|p| p.name.to_string()));
        self.max_bytes = self.max_bytes.saturating_add(max_pull_bytes(oci.limits));
    }
}

/// Pulls the image `digest` of `oci`'s repository for the sources `sharing` describes, within
/// `deadline`, into a temporary directory.
#[cfg(feature = "oci")]
pub fn pull(
    oci: &OciSource,
    digest: &str,
    sharing: &Sharing,
    deadline: std::time::Duration,
) -> Result<PulledImage, CandidateError> {
    let reference = crate::descriptor::plan::ImageReference {
        digest: digest.to_owned(),
        ..oci.reference.clone()
    };
    let temp = tempfile::tempdir().map_err(|e| {
        CandidateError::new(
            DistributionCode::WriteFailed,
            format!(
                "cannot use a temporary directory: {}",
                crate::support::escape::text(&e.to_string())
            ),
        )
    })?;
    // Every bundle name the manifest's annotations give, pulled or not: what the image offers.
    let annotated = std::cell::RefCell::new(BTreeSet::new());
    let layers = super::pull::pull(&super::pull::PullRequest {
        reference: &reference,
        plain_http: oci.plain_http,
        wanted: &|name| {
            annotated.borrow_mut().insert(name.to_owned());
            sharing.wanted.contains(name)
        },
        into: temp.path(),
        max_bytes: sharing.max_bytes,
        deadline,
    })
    .map_err(|e| CandidateError::new(e.code, e.message))?;
    Ok(PulledImage {
        image: reference.to_string(),
        layers,
        annotated: annotated.into_inner(),
        _temp: temp,
    })
}

/// The most layer bytes a source under `limits` may pull.
#[cfg(feature = "oci")]
fn max_pull_bytes(limits: crate::format::limits::Limits) -> u64 {
    super::pull::max_pull_bytes(limits)
}

#[cfg(not(feature = "oci"))]
fn max_pull_bytes(_limits: crate::format::limits::Limits) -> u64 {
    0
}

/// Without a registry client, no tag can be resolved.
#[cfg(not(feature = "oci"))]
pub fn resolve(
    _oci: &OciSource,
    _tag: &str,
    _deadline: std::time::Duration,
) -> Result<String, CandidateError> {
    Err(disabled())
}

/// Without a registry client, no image can be pulled.
#[cfg(not(feature = "oci"))]
pub fn pull(
    _oci: &OciSource,
    _digest: &str,
    _sharing: &Sharing,
    _deadline: std::time::Duration,
) -> Result<PulledImage, CandidateError> {
    Err(disabled())
}

#[cfg(not(feature = "oci"))]
fn disabled() -> CandidateError {
    CandidateError::new(
        DistributionCode::OciDisabled,
        "this build of skillfold has no registry client (built without the `oci` feature)",
    )
}
