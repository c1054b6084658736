//! Verified bundles as OCI images (DESIGN §7 "OCI image shape"): the reproducible layer tar
//! ([`tar`]), the image — layers, config, manifest and their annotations ([`image`]) — the strict
//! reader of layers that came from a registry ([`unpack`], by the [`tar_header`] grammar, refusing
//! with a [`layer_error`]), and the pull of a digest-pinned image ([`pull`], feature `oci`,
//! failing with a [`pull_error`]) through a registry [`session`] that answers the registry's
//! [`challenge`]s with its [`credentials`], one source's approved bundles read from pulled layers
//! as `prepare` and the review both read them ([`approved`]), and the candidate images `outdated`
//! and `update` weigh against a pin ([`candidate`]: a tag resolved to a digest, an image pulled
//! and read as the pull of a pin is). [`crate::distribution`] writes images with the same pieces
//! (`skillfold push`).
//!
//! Media types: the image manifest [`MEDIA_MANIFEST`], the standard image config
//! [`MEDIA_CONFIG`] (so container runtimes and Kubernetes image volumes mount it), and one
//! [`MEDIA_LAYER_TAR_GZIP`] layer per bundle. Layers are gzip, not zstd: every runtime, registry
//! and mirror in use reads gzip layers, and older containerd, Docker and CRI-O releases cannot read
//! zstd ones; gzip at one fixed level with an empty header is as reproducible.

pub mod approved;
// Used by `outdated` and `update`, which come with the Git fetcher.
#[cfg(feature = "git")]
pub mod candidate;
#[cfg(feature = "oci")]
pub mod challenge;
pub mod code;
#[cfg(feature = "oci")]
pub mod credentials;
pub mod image;
pub mod layer_error;
pub mod publisher;
#[cfg(feature = "oci")]
pub mod pull;
#[cfg(feature = "oci")]
pub mod pull_error;
#[cfg(feature = "oci")]
pub mod session;
pub mod tar;
pub mod tar_header;
pub mod unpack;

/// The OCI image manifest media type.
pub const MEDIA_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI image index media type (what a layout's `index.json` is).
pub const MEDIA_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// The OCI image config media type.
pub const MEDIA_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// A gzip-compressed tar layer.
pub const MEDIA_LAYER_TAR_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// Layer annotation: the bundle's skill name.
pub const ANNOTATION_BUNDLE_NAME: &str = "io.skillfold.bundle.name";
/// Layer annotation: the bundle's reviewed version label.
pub const ANNOTATION_BUNDLE_VERSION: &str = "io.skillfold.bundle.version";
/// Layer annotation: the bundle's `chamvi-skill-bundle-v1` digest (64 hex).
pub const ANNOTATION_BUNDLE_DIGEST: &str = "io.skillfold.bundle.digest";

/// One layer of a pulled image.
#[derive(Debug, Clone)]
pub struct PulledLayer {
    /// `sha256:…`.
    pub digest: String,
    /// The file holding its compressed bytes, verified against the digest.
    pub path: std::path::PathBuf,
    /// The bundle its [`ANNOTATION_BUNDLE_NAME`] annotation names, if it has one: such a layer
    /// is read only for a source that approves that bundle ([`approved`]).
    pub bundle: Option<String>,
    /// Its size, as the manifest declares it (and the pull checked).
    pub size: u64,
}
