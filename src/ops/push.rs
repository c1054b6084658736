//! `skillfold push`: the verified bundles of a descriptor (or of one agent) as one OCI image,
//! written into an OCI image layout. Every bundle is loaded exactly as the runtime loads it — the
//! safe reader, the rules, the pin — and the image is built only from verified bytes; if any
//! approved bundle does not verify, nothing is written.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::descriptor::Plan;
use crate::distribution::layout::{self, LayoutError};
use crate::runtime::Runtime;
use crate::runtime::catalogue::CatalogueError;
use crate::runtime::snapshot::{LoadFailure, Snapshot};
use crate::source::oci::code::DistributionCode;
use crate::source::oci::image::{ImageBundle, ImageFile, Platform, Provenance, image};
use crate::support::error_code::{ErrorCode, ExitClass};

/// Where the image goes.
#[derive(Debug, Clone)]
pub enum PushTarget {
    /// An OCI image layout directory, the image named `tag` in its index if given.
    Layout {
        /// The directory.
        dir: PathBuf,
        /// The reference name in the index.
        tag: Option<String>,
    },
    /// A registry repository (feature `oci`).
    #[cfg(feature = "oci")]
    Registry {
        /// `REGISTRY/REPOSITORY[:TAG]`.
        destination: crate::distribution::registry::Destination,
        /// HTTP instead of HTTPS (a registry on a trusted network).
        plain_http: bool,
    },
}

/// What to push and where.
#[derive(Debug, Clone)]
pub struct PushOptions {
    /// Only this agent's skills (the defaults plus its extras); `None`: every approved bundle.
    pub agent: Option<String>,
    /// Where the image goes.
    pub target: PushTarget,
    /// The platform recorded in the image config.
    pub platform: Platform,
    /// Sign the pushed image with this cosign key (`--sign-key`; a registry target only): the
    /// signature goes to the image's `sha256-<hex>.sig` tag in the cosign v2 layout.
    #[cfg(feature = "oci")]
    pub sign_key: Option<Arc<crate::trust::keys::signing_key::SigningKey>>,
}

/// The cosign signature pushed beside the image.
#[cfg(feature = "oci")]
#[derive(Debug, Clone, Serialize)]
pub struct PushedSignature {
    /// `REGISTRY/REPOSITORY:sha256-<hex>.sig`.
    pub reference: String,
    /// The tag, `sha256-<hex>.sig`.
    pub tag: String,
    /// The digest of the `.sig` manifest at the tag.
    pub manifest_digest: String,
    /// The signing key's fingerprint (`sha256:` and the hex SHA-256 of its DER public key), as
    /// `verify.cosign_key` reports it.
    pub key: String,
    /// Whether the tag already held a signature of this image by this key (nothing pushed).
    pub already_signed: bool,
}

/// One bundle of the image.
#[derive(Debug, Clone, Serialize)]
pub struct PushedBundle {
    /// The skill name.
    pub name: String,
    /// Its reviewed version.
    pub version: String,
    /// Its `chamvi-skill-bundle-v1` digest.
    pub hash: String,
    /// The digest of its layer (`sha256:…`).
    pub layer: String,
    /// The compressed layer's size in bytes.
    pub size: u64,
}

/// The outcome of a push.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    /// The image pinned by its manifest digest: `REGISTRY/REPOSITORY@sha256:…`, or
    /// `<layout dir>@sha256:…`.
    pub reference: String,
    /// The manifest digest.
    pub digest: String,
    /// The tag it was given, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The bundles, by name.
    pub bundles: Vec<PushedBundle>,
    /// The cosign signature, when `--sign-key` signed the image.
    #[cfg(feature = "oci")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<PushedSignature>,
}

/// Why nothing was pushed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// Approved bundles did not verify (each with its own code).
    #[error("{} approved bundle(s) did not verify; nothing was written", .0.len())]
    NotVerified(Vec<LoadFailure>),
    /// The agent's catalogue could not be built; or, without an agent, two agents' own bundles
    /// share a name (one image holds one bundle per name).
    #[error("{0}")]
    Catalogue(#[from] CatalogueError),
    /// No bundle to push.
    #[error("nothing to push: {0}")]
    Nothing(String),
    /// A verified file could no longer be read back from disk unchanged.
    #[error("{0}")]
    Changed(#[from] crate::runtime::snapshot::FileReadError),
    /// The layout could not be written.
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// The registry push failed.
    #[cfg(feature = "oci")]
    #[error("{0}")]
    Registry(#[from] crate::distribution::registry::UploadError),
    /// The image was pushed, and its signature was not.
    #[cfg(feature = "oci")]
    #[error("the image {reference} was pushed, but its signature was not: {source}")]
    Signature {
        /// The image, pinned by digest.
        reference: String,
        /// Why.
        source: crate::distribution::registry::UploadError,
    },
    /// `--sign-key` with an OCI layout: a layout has no registry tag for the signature.
    #[cfg(feature = "oci")]
    #[error("--sign-key signs an image pushed to a registry (--to); an OCI layout is not signed")]
    SignLayout,
}

impl PushError {
    /// The stable code of this failure (the worst of them, for several unverified bundles).
    pub fn code(&self) -> ErrorCode {
        match self {
            PushError::NotVerified(failures) => failures
                .iter()
                .map(|f| f.code)
                .max_by_key(|c| matches!(c.exit(), ExitClass::Invalid))
                .unwrap_or_else(|| DistributionCode::NothingToPush.into()),
            PushError::Catalogue(e) => e.code().into(),
            PushError::Nothing(_) => DistributionCode::NothingToPush.into(),
            PushError::Changed(e) => e.code().into(),
            PushError::Layout(LayoutError::NotLayout { .. }) => DistributionCode::NotLayout.into(),
            PushError::Layout(LayoutError::Io(_)) => DistributionCode::WriteFailed.into(),
            #[cfg(feature = "oci")]
            PushError::Registry(e) => e.code().into(),
            #[cfg(feature = "oci")]
            PushError::Signature { source, .. } => source.code().into(),
            #[cfg(feature = "oci")]
            PushError::SignLayout => DistributionCode::SignKeyRefused.into(),
        }
    }
}

crate::support::error_code::coded_by_code!(PushError);

/// Verifies the bundles and writes the image.
pub fn push(plan: Plan, options: &PushOptions) -> Result<PushReport, PushError> {
    #[cfg(feature = "oci")]
    if options.sign_key.is_some() && matches!(options.target, PushTarget::Layout { .. }) {
        return Err(PushError::SignLayout);
    }
    let runtime = match &options.agent {
        Some(agent) => Runtime::load_for(plan, Some(agent))?,
        None => Runtime::load(plan),
    };
    let failures: Vec<LoadFailure> = runtime.failures().cloned().collect();
    if !failures.is_empty() {
        return Err(PushError::NotVerified(failures));
    }
    // One agent's set is its catalogue (a name is unique in it); the whole descriptor's may give
    // one name to two agents with different bytes, which one image cannot hold.
    let snapshots: Vec<Arc<Snapshot>> = match &options.agent {
        Some(agent) => runtime.catalogue(Some(agent))?.skills().cloned().collect(),
        None => distinct(runtime.snapshots())?,
    };
    let snapshots: Vec<&Snapshot> = snapshots.iter().map(AsRef::as_ref).collect();
    if snapshots.is_empty() {
        return Err(PushError::Nothing(match &options.agent {
            Some(agent) => format!(
                "agent `{}` has no approved bundle",
                crate::support::escape::text(agent)
            ),
            None => "the descriptor approves no bundle".to_owned(),
        }));
    }
    let mut bundles = Vec::new();
    for snapshot in &snapshots {
        let mut files = Vec::new();
        for file in snapshot.files() {
            // Where the verified file sits: its execute bit is the one `prepare` carried over.
            let mode = snapshot.mode(file).map_err(|e| {
                crate::runtime::snapshot::FileReadError::Unreadable {
                    path: file.path().to_owned(),
                    reason: e.to_string(),
                }
            })?;
            files.push(ImageFile {
                path: file.path().to_owned(),
                bytes: snapshot.read(file)?.into_owned(),
                executable: mode & 0o111 != 0,
            });
        }
        bundles.push(ImageBundle {
            pin: snapshot.pin(),
            files,
        });
    }
    let built = image(&bundles, provenance(&snapshots).as_ref(), &options.platform);
    #[cfg(feature = "oci")]
    let mut signature = None;
    let (reference, digest, tag) = match &options.target {
        PushTarget::Layout { dir, tag } => {
            let digest = layout::write(dir, &built, tag.as_deref())?;
            (format!("{}@{digest}", dir.display()), digest, tag.clone())
        }
        #[cfg(feature = "oci")]
        PushTarget::Registry {
            destination,
            plain_http,
        } => {
            let digest = crate::distribution::registry::push(&built, destination, *plain_http)?;
            let reference = format!("{}@{digest}", destination.repository());
            if let Some(key) = &options.sign_key {
                let pushed = crate::distribution::registry::push_signature(
                    destination,
                    *plain_http,
                    &digest,
                    key,
                )
                .map_err(|source| PushError::Signature {
                    reference: reference.clone(),
                    source,
                })?;
                signature = Some(PushedSignature {
                    reference: format!("{}:{}", destination.repository(), pushed.tag),
                    tag: pushed.tag,
                    manifest_digest: pushed.manifest_digest,
                    key: key.public_key().fingerprint(),
                    already_signed: pushed.already_signed,
                });
            }
            (reference, digest, destination.tag().map(str::to_owned))
        }
    };
    Ok(PushReport {
        reference,
        digest,
        tag,
        bundles: built
            .layers
            .iter()
            .map(|l| PushedBundle {
                name: l.pin.name.to_string(),
                version: l.pin.version.to_string(),
                hash: l.pin.hash.to_string(),
                layer: l.blob.digest.clone(),
                size: l.blob.size(),
            })
            .collect(),
        #[cfg(feature = "oci")]
        signature,
    })
}

/// One snapshot per name: snapshots of one pin count once (their bytes verified against it); two
/// different bundles under one name (two agents' own `pdf`) are refused, naming both entries.
fn distinct<'a>(
    snapshots: impl Iterator<Item = &'a Arc<Snapshot>>,
) -> Result<Vec<Arc<Snapshot>>, CatalogueError> {
    let mut kept: Vec<Arc<Snapshot>> = Vec::new();
    for snapshot in snapshots {
        match kept.iter().find(|k| k.pin().name == snapshot.pin().name) {
            Some(same) if same.same_content(snapshot) => {}
            Some(other) => {
                return Err(CatalogueError::Conflict {
                    name: snapshot.pin().name.to_string(),
                    first: other.origin().location.clone(),
                    second: snapshot.origin().location.clone(),
                });
            }
            None => kept.push(Arc::clone(snapshot)),
        }
    }
    Ok(kept)
}

/// The Git source and commit, when every bundle came from the same one.
fn provenance(snapshots: &[&Snapshot]) -> Option<Provenance> {
    let mut found: Option<Provenance> = None;
    for snapshot in snapshots {
        let origin = snapshot.origin();
        let this = Provenance {
            source: origin.url.clone()?,
            revision: origin.commit.clone()?,
        };
        match &found {
            None => found = Some(this),
            Some(same) if *same == this => {}
            Some(_) => return None,
        }
    }
    found
}
