//! A candidate image of an OCI source: an image other than its pin that `outdated` and `update`
//! weigh against the pin — the one the source's `track` tag (or a tag `update --to` names)
//! names now, or an image named by digest. A tag is resolved once ([`resolve`]: a `HEAD` of its
//! manifest, or a `GET` when the registry names no digest; see
//! [`crate::source::oci::pull::resolve_tag`]). The image is pulled by digest into a temporary
//! directory exactly as `prepare` pulls a pin — the manifest equal to its digest, every layer's
//! size and digest, the source's pull bound — and every layer is read with the strict reader
//! ([`super::unpack`]: a link, device, unsafe path or duplicate anywhere refuses the image). Each
//! bundle it holds is kept as a file set (within that bound) and checked when it is taken
//! ([`ImageCandidate::take`]). The temporary directory is removed before the candidate is
//! returned; nothing is published.

use std::collections::BTreeMap;

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

/// A candidate image, pulled and read.
#[derive(Debug)]
pub struct ImageCandidate {
    /// Every bundle folder of the image, with its files and what the rules found in them.
    bundles: BTreeMap<String, (FileSet, Problems)>,
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

    /// The folders of the image that hold a `SKILL.md` file: the bundles it offers, approved or
    /// not, sorted.
    pub fn bundle_names(&self) -> Vec<String> {
        self.bundles
            .iter()
            .filter(|(_, (files, _))| files.get("SKILL.md").is_some())
            .map(|(name, _)| name.clone())
            .collect()
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

/// Pulls the image `digest` of `oci`'s repository, every layer, within `deadline` and the
/// source's pull bound, and reads every bundle it holds.
#[cfg(feature = "oci")]
pub fn pull(
    oci: &OciSource,
    digest: &str,
    deadline: std::time::Duration,
) -> Result<ImageCandidate, CandidateError> {
    let io = |e: std::io::Error| {
        CandidateError::new(
            DistributionCode::WriteFailed,
            format!(
                "cannot use a temporary directory: {}",
                crate::support::escape::text(&e.to_string())
            ),
        )
    };
    let reference = crate::descriptor::plan::ImageReference {
        digest: digest.to_owned(),
        ..oci.reference.clone()
    };
    let temp = tempfile::tempdir().map_err(io)?;
    let layers = super::pull::pull(&super::pull::PullRequest {
        reference: &reference,
        plain_http: oci.plain_http,
        wanted: &|_| true,
        into: temp.path(),
        max_bytes: super::pull::max_pull_bytes(oci.limits),
        deadline,
    })
    .map_err(|e| CandidateError::new(e.code, e.message))?;
    let mut bundles = BTreeMap::new();
    for layer in &layers {
        let file = fs_err::File::open(&layer.path).map_err(io)?;
        let reader = std::io::BufReader::with_capacity(64 * 1024, file);
        let found = super::unpack::unpack_all(reader, oci.limits).map_err(|e| {
            CandidateError::new(e.code, format!("layer {}: {}", layer.digest, e.message))
        })?;
        for (name, files) in found {
            if bundles.insert(name.clone(), files).is_some() {
                return Err(CandidateError::new(
                    DistributionCode::DuplicateInLayer,
                    format!(
                        "`{}` is in more than one layer of {reference}",
                        crate::support::escape::text(&name)
                    ),
                ));
            }
        }
    }
    Ok(ImageCandidate { bundles })
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
    _deadline: std::time::Duration,
) -> Result<ImageCandidate, CandidateError> {
    Err(disabled())
}

#[cfg(not(feature = "oci"))]
fn disabled() -> CandidateError {
    CandidateError::new(
        DistributionCode::OciDisabled,
        "this build of skillfold has no registry client (built without the `oci` feature)",
    )
}
