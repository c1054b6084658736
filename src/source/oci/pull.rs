//! Pulling an image by digest from a registry (the OCI distribution API on reqwest and rustls),
//! with every bound checked before the bytes it bounds are read: the manifest at most
//! [`MAX_MANIFEST_BYTES`] and equal to its digest; an image index or a layer media type we do not
//! know refused; each layer's declared size within [`MAX_LAYER_BYTES`], the declared sizes of the
//! layers to pull together within the source's pull bound ([`max_pull_bytes`], from its limits
//! profile) before any layer is read, each layer read no further than declared — streamed to a
//! file, its SHA-256 computed while it streams — and equal to its digest. Memory does not grow
//! with the size of the image.
//!
//! The requests go through a registry session ([`super::session`]): it decides where credentials
//! and tokens go and what each answer of the registry means.
//!
//! [`pull_async`] is one future: a caller may bound it with an overall deadline.

use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::code::DistributionCode;
use super::image::sha256;
use super::pull_error::{PullError, fail};
use super::session::Session;
use super::unpack::MAX_LAYER_TAR_BYTES;
use super::{MEDIA_LAYER_TAR_GZIP, MEDIA_MANIFEST, PulledLayer};
use crate::descriptor::plan::ImageReference;
use crate::format::limits::{self, Limits};
use crate::support::escape;

/// The largest manifest read.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// The largest compressed layer read: a gzip stream is never much larger than what it inflates to.
pub const MAX_LAYER_BYTES: u64 = MAX_LAYER_TAR_BYTES + 1024 * 1024;
/// The most layers an image may list.
pub const MAX_LAYERS: usize = 1024;

/// The largest gzip layer one bundle at the bounds of `limits` makes: its tar (every file byte,
/// a header and a PAX block for each inventory entry, the two end blocks) and deflate's
/// worst-case growth on incompressible bytes (well under 1/1024, plus 64 KiB of headers).
pub fn bundle_layer_bytes(limits: Limits) -> u64 {
    let tar = limits.bundle_bytes() + (limits.entries() as u64 + 1) * 2 * 512;
    tar + tar / 1024 + 64 * 1024
}

/// The most compressed layer bytes one source under `limits` may pull: as many bundles as one
/// catalogue may hold ([`limits::MAX_BUNDLES_PER_CATALOGUE`], 16), each at
/// [`bundle_layer_bytes`] — 34,652,176 bytes (33 MiB) under `chamvi`, 807,157,776 (770 MiB) under
/// `extended`, 2,150,645,776 (2 GiB) at the hard ceilings. Each layer is also within [`MAX_LAYER_BYTES`], so a pull of `n` layers reads at
/// most `min(n × MAX_LAYER_BYTES, max_pull_bytes)`.
pub fn max_pull_bytes(limits: Limits) -> u64 {
    limits::MAX_BUNDLES_PER_CATALOGUE as u64 * bundle_layer_bytes(limits)
}

const MEDIA_DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
const MEDIA_DOCKER_LAYER: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
const INDEX_TYPES: [&str; 2] = [
    super::MEDIA_INDEX,
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// What to pull and where: the image, the layers to keep, the folder their files go into, and
/// the bound on the compressed bytes of all of them.
pub struct PullRequest<'a> {
    /// The image, pinned by digest.
    pub reference: &'a ImageReference,
    /// HTTP instead of HTTPS.
    pub plain_http: bool,
    /// Whether a layer whose bundle-name annotation is this name is pulled (a layer without one
    /// always is).
    pub wanted: &'a dyn Fn(&str) -> bool,
    /// An existing, empty folder on the corpus's file system: each layer is streamed into a new
    /// file in it.
    pub into: &'a Path,
    /// The most compressed layer bytes the pull may read (the sources' [`max_pull_bytes`]).
    pub max_bytes: u64,
    /// The overall deadline of the pull (`pull_deadline` past it: the pull is dropped, its
    /// connections closed).
    pub deadline: std::time::Duration,
}

/// Pulls the image: the manifest, then the layers `wanted` keeps, each into a file in `into`,
/// all within the request's deadline.
pub fn pull(request: &PullRequest<'_>) -> Result<Vec<PulledLayer>, PullError> {
    run_within(request.deadline, pull_async(request), || {
        format!(
            "the pull of {} did not finish within its deadline of {}",
            request.reference,
            crate::support::time::seconds(request.deadline)
        )
    })
}

/// Runs `work` on a runtime of its own (one thread, I/O and time enabled) within `deadline`:
/// past it, `work` is dropped, its connections closed, and the failure is `pull_deadline`,
/// saying `late`. The signature material's fetch ([`super::publisher::fetch`]) runs within
/// its deadline the same way.
pub(super) fn run_within<T>(
    deadline: std::time::Duration,
    work: impl std::future::Future<Output = Result<T, PullError>>,
    late: impl FnOnce() -> String,
) -> Result<T, PullError> {
    crate::source::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(DistributionCode::RegistryUnavailable, e.to_string()))?;
    runtime
        .block_on(async { tokio::time::timeout(deadline, work).await })
        .unwrap_or_else(|_| Err(fail(DistributionCode::PullDeadline, late())))
}

/// A tag to resolve to the digest of the manifest it names now.
#[cfg(any(feature = "git", fuzzing))]
pub struct TagRequest<'a> {
    /// `host[:port]`.
    pub registry: &'a str,
    /// The repository path.
    pub repository: &'a str,
    /// The tag (the OCI tag grammar; anything else is refused before a request is sent).
    pub tag: &'a str,
    /// HTTP instead of HTTPS.
    pub plain_http: bool,
    /// The overall deadline (`pull_deadline` past it).
    pub deadline: std::time::Duration,
}

// `outdated` and `update` (which come with the Git fetcher) resolve tags; the fuzz target
// `oci_tag` (fuzz/harness.rs) does too.
#[cfg(any(feature = "git", fuzzing))]
/// The digest of the manifest `request`'s tag names now: a `HEAD` of the manifest, whose
/// `Docker-Content-Digest` is the answer; when the registry sends none, or answers the `HEAD`
/// 405 or 501 (it does not answer `HEAD`; any other failure is final), a `GET` of the manifest
/// (at most [`MAX_MANIFEST_BYTES`]) whose bytes give the digest, and which must equal the
/// `Docker-Content-Digest` the `GET` sends, if any. Nothing else is fetched; the credentials
/// are those of the pull, scoped to the registry's origin the same way. A digest named by a
/// `HEAD` alone is checked when the image is pulled by it ([`pull`]: the manifest must hash to
/// it).
pub fn resolve_tag(request: &TagRequest<'_>) -> Result<String, PullError> {
    run_within(request.deadline, resolve_tag_async(request), || {
        format!(
            "the digest of tag `{}` of {}/{} was not read within its deadline of {}",
            request.tag,
            request.registry,
            request.repository,
            crate::support::time::seconds(request.deadline)
        )
    })
}

/// The header a registry names a manifest's digest in.
#[cfg(any(feature = "git", fuzzing))]
const DOCKER_CONTENT_DIGEST: &str = "docker-content-digest";

/// Whether a `HEAD` answered `status` because the registry does not answer `HEAD` at all
/// (405 Method Not Allowed, 501 Not Implemented): [`resolve_tag`] then reads the tag with a
/// `GET`, as for a `HEAD` without a digest.
#[cfg(any(feature = "git", fuzzing))]
fn head_unsupported(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED
    )
}

/// [`resolve_tag`] as one future.
#[cfg(any(feature = "git", fuzzing))]
async fn resolve_tag_async(request: &TagRequest<'_>) -> Result<String, PullError> {
    let tag = request.tag;
    if let Err(rule) = crate::descriptor::plan::check_tag(tag) {
        return Err(fail(
            DistributionCode::MalformedImage,
            format!("`{}` is not an OCI tag: {rule}", escape::text(tag)),
        ));
    }
    let shown = format!("{}/{}:{tag}", request.registry, request.repository);
    let mut session = Session::open(
        request.registry,
        request.repository,
        request.plain_http,
        shown.clone(),
    )?;
    let url = format!("{}/manifests/{tag}", session.base);
    let accept = manifest_accept();
    let what = "the manifest";
    let not_found = |e: PullError| {
        if e.code == DistributionCode::ImageNotFound {
            fail(
                DistributionCode::TagNotFound,
                format!(
                    "the registry `{}` has no tag `{tag}` in `{}`",
                    request.registry, request.repository
                ),
            )
        } else {
            e
        }
    };
    let named = |response: &reqwest::Response| -> Result<Option<String>, PullError> {
        let Some(value) = response.headers().get(DOCKER_CONTENT_DIGEST) else {
            return Ok(None);
        };
        value
            .to_str()
            .ok()
            .filter(|v| crate::descriptor::plan::is_sha256_digest(v))
            .map(|v| Some(v.to_owned()))
            .ok_or_else(|| {
                fail(
                    DistributionCode::MalformedImage,
                    format!(
                        "the registry's `Docker-Content-Digest` for {shown} is not `sha256:` and 64 lowercase hex digits"
                    ),
                )
            })
    };
    let head = session
        .answer(&Method::HEAD, &url, Some(&accept), what)
        .await?;
    if head_unsupported(head.status()) {
        drop(head);
    } else {
        let head = session
            .judge(head, MAX_MANIFEST_BYTES, what)
            .map_err(not_found)?;
        if let Some(digest) = named(&head)? {
            return Ok(digest);
        }
    }
    let response = session
        .get(&url, Some(&accept), MAX_MANIFEST_BYTES, what)
        .await
        .map_err(not_found)?;
    let claimed = named(&response)?;
    let body = session
        .read_body(response, MAX_MANIFEST_BYTES, what)
        .await?;
    let digest = sha256(&body);
    if let Some(claimed) = claimed
        && claimed != digest
    {
        return Err(fail(
            DistributionCode::DigestMismatch,
            format!(
                "the registry names the manifest of {shown} {claimed}, but its bytes have digest {digest}"
            ),
        ));
    }
    Ok(digest)
}

/// The media types a manifest request accepts: images, and indexes (to refuse them by name).
fn manifest_accept() -> String {
    [MEDIA_MANIFEST, MEDIA_DOCKER_MANIFEST]
        .iter()
        .chain(INDEX_TYPES.iter())
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`pull`] as one future, on a tokio runtime with I/O and time enabled.
pub async fn pull_async(request: &PullRequest<'_>) -> Result<Vec<PulledLayer>, PullError> {
    let reference = request.reference;
    let mut session = Session::open(
        &reference.registry,
        &reference.repository,
        request.plain_http,
        reference.to_string(),
    )?;
    let url = format!("{}/manifests/{}", session.base, reference.digest);
    let manifest = session
        .get_bytes(
            &url,
            Some(&manifest_accept()),
            MAX_MANIFEST_BYTES,
            "the manifest",
        )
        .await?;
    if sha256(&manifest) != reference.digest {
        return Err(fail(
            DistributionCode::DigestMismatch,
            format!(
                "the registry's manifest for {reference} has digest {}",
                sha256(&manifest)
            ),
        ));
    }
    let layers = wanted_layers(reference, &manifest, request.wanted)?;
    let declared: u64 = layers.iter().map(|l| l.size).sum();
    if declared > request.max_bytes {
        return Err(fail(
            DistributionCode::PullTooLarge,
            format!(
                "the {} layer(s) of {reference} to pull declare {declared} bytes, over the source's pull bound of {} bytes (16 bundles at the bounds of its limits profile); nothing was read",
                layers.len(),
                request.max_bytes
            ),
        ));
    }
    let mut pulled = Vec::with_capacity(layers.len());
    for (index, layer) in layers.into_iter().enumerate() {
        let url = format!("{}/blobs/{}", session.base, layer.digest);
        let path = request
            .into
            .join(format!("{index:04}-{}.tar.gz", &layer.digest[7..]));
        session
            .get_to_file(&url, &path, layer.size, &layer.digest)
            .await?;
        pulled.push(PulledLayer {
            digest: layer.digest,
            path,
            bundle: layer.bundle,
            size: layer.size,
        });
    }
    Ok(pulled)
}

/// A layer the manifest lists and the pull keeps.
struct KeptLayer {
    digest: String,
    size: u64,
    /// Its bundle-name annotation.
    bundle: Option<String>,
}

/// The layers of `manifest` to pull, every descriptor checked.
fn wanted_layers(
    reference: &ImageReference,
    manifest: &[u8],
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<KeptLayer>, PullError> {
    let manifest: Value = serde_json::from_slice(manifest).map_err(|e| {
        fail(
            DistributionCode::MalformedImage,
            format!("the manifest of {reference} is not JSON: {e}"),
        )
    })?;
    let media_type = manifest["mediaType"].as_str().unwrap_or(MEDIA_MANIFEST);
    if INDEX_TYPES.contains(&media_type) || manifest.get("manifests").is_some() {
        return Err(fail(
            DistributionCode::ImageIndex,
            format!(
                "{reference} is an image index, not an image: pin the digest of one image (what `skillfold push` printed)"
            ),
        ));
    }
    if media_type != MEDIA_MANIFEST && media_type != MEDIA_DOCKER_MANIFEST {
        return Err(fail(
            DistributionCode::MalformedImage,
            format!(
                "{reference} has manifest media type `{}`",
                escape::text(media_type)
            ),
        ));
    }
    let layers = manifest["layers"].as_array().ok_or_else(|| {
        fail(
            DistributionCode::MalformedImage,
            format!("the manifest of {reference} lists no layers"),
        )
    })?;
    if layers.len() > MAX_LAYERS {
        return Err(fail(
            DistributionCode::ImageTooLarge,
            format!(
                "{reference} lists {} layers, over the bound of {MAX_LAYERS}",
                layers.len()
            ),
        ));
    }
    let mut kept = Vec::new();
    for layer in layers {
        let kind = layer["mediaType"].as_str().unwrap_or_default();
        if kind != MEDIA_LAYER_TAR_GZIP && kind != MEDIA_DOCKER_LAYER {
            return Err(fail(
                DistributionCode::MalformedImage,
                format!(
                    "{reference} has a layer of media type `{}`; only gzip tar layers are read",
                    escape::text(kind)
                ),
            ));
        }
        let digest = layer["digest"].as_str().unwrap_or_default().to_owned();
        if !crate::descriptor::plan::is_sha256_digest(&digest) {
            return Err(fail(
                DistributionCode::MalformedImage,
                format!("{reference} has a layer without a sha256 digest"),
            ));
        }
        let size = layer["size"].as_u64().ok_or_else(|| {
            fail(
                DistributionCode::MalformedImage,
                format!("{reference} has a layer without a size"),
            )
        })?;
        if size > MAX_LAYER_BYTES {
            return Err(fail(
                DistributionCode::ImageTooLarge,
                format!(
                    "layer {digest} of {reference} declares {size} bytes, over the bound of {MAX_LAYER_BYTES}"
                ),
            ));
        }
        let bundle = layer["annotations"][super::ANNOTATION_BUNDLE_NAME]
            .as_str()
            .map(str::to_owned);
        if bundle.as_deref().is_some_and(|b| !wanted(b)) {
            continue;
        }
        kept.push(KeptLayer {
            digest,
            size,
            bundle,
        });
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pull_bounds_are_the_documented_figures() {
        // docs/distribution.md states these figures.
        assert_eq!(max_pull_bytes(limits::CHAMVI), 34_652_176);
        assert_eq!(max_pull_bytes(limits::EXTENDED), 807_157_776);
        assert_eq!(max_pull_bytes(limits::CEILING), 2_150_645_776);
        assert!(bundle_layer_bytes(limits::CEILING) <= MAX_LAYER_BYTES);
    }
}
