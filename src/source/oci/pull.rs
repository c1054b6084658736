//! Pulling an image by digest from a registry (the OCI distribution API on reqwest and rustls),
//! with every bound checked before the bytes it bounds are read: the manifest at most
//! [`MAX_MANIFEST_BYTES`] and equal to its digest; an image index or a layer media type we do not
//! know refused; each layer's declared size within [`MAX_LAYER_BYTES`], the declared sizes of the
//! layers to pull together within the source's pull bound ([`max_pull_bytes`], from its limits
//! profile) before any layer is read, each layer read no further than declared — streamed to a
//! file, its SHA-256 computed while it streams — and equal to its digest. Memory does not grow
//! with the size of the image.
//!
//! Credentials are scoped to the registry's origin (scheme + host + port; [`credentials`]):
//! anonymous, or HTTP Basic with the registry's credentials, or the registry's bearer-token
//! exchange (`WWW-Authenticate: Bearer realm=…`) with them. Redirects are followed here, not by
//! reqwest, so that no `Authorization` header — credentials or token — goes to any origin but the
//! registry's; a challenge is answered only when the registry's own origin sent it (a redirect
//! target that answers 401 gets nothing: `registry_denied`). The token realm a registry's challenge
//! names gets the registry's credentials when it is on the registry's origin, or on an origin the
//! configuration names for that registry (`SKILLFOLD_REGISTRY_TOKEN_REALMS`,
//! [`credentials::token_realm`]); a realm on any other origin is asked for a token anonymously, as
//! for a public image (Docker sends the credentials to any realm; DESIGN §8 is stricter), and a
//! refusal then says which setting would send them. An `https://` registry naming an `http://`
//! realm is refused (`insecure_token_realm`) before anything is sent to it. The credentials are
//! never put in a message. A registry that cannot be reached or answers 5xx is
//! retryable; a refusal, a digest mismatch or a bound is not.
//!
//! [`pull_async`] is one future: a caller may bound it with an overall deadline.

use std::io::Write as _;
use std::path::Path;

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Client, Method, StatusCode, Url};
use serde_json::Value;
use sha2::Digest as _;

use super::code::DistributionCode;
use super::credentials::{self, Credentials, Found, Origin, Unscoped};
use super::image::sha256;
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
/// The largest token answer read.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;
/// The most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

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

/// Why a pull failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct PullError {
    /// The stable code.
    pub code: DistributionCode,
    /// What happened (escaped; never credentials).
    pub message: String,
}

fn fail(code: DistributionCode, message: impl Into<String>) -> PullError {
    PullError {
        code,
        message: message.into(),
    }
}

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
    crate::source::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(DistributionCode::RegistryUnavailable, e.to_string()))?;
    runtime
        .block_on(async { tokio::time::timeout(request.deadline, pull_async(request)).await })
        .unwrap_or_else(|_| {
            Err(fail(
                DistributionCode::PullDeadline,
                format!(
                    "the pull of {} did not finish within its deadline of {}",
                    request.reference,
                    crate::support::time::seconds(request.deadline)
                ),
            ))
        })
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
    crate::source::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(DistributionCode::RegistryUnavailable, e.to_string()))?;
    runtime
        .block_on(async {
            tokio::time::timeout(request.deadline, resolve_tag_async(request)).await
        })
        .unwrap_or_else(|_| {
            Err(fail(
                DistributionCode::PullDeadline,
                format!(
                    "the digest of tag `{}` of {}/{} was not read within its deadline of {}",
                    request.tag,
                    request.registry,
                    request.repository,
                    crate::support::time::seconds(request.deadline)
                ),
            ))
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

struct Session {
    client: Client,
    base: String,
    /// Where credentials and tokens may go.
    origin: Origin,
    /// `host[:port]`.
    registry: String,
    /// The repository path (the scope of a token).
    repository: String,
    /// What messages name: the image, or the repository and tag being resolved.
    shown: String,
    found: Found,
    authorization: Option<HeaderValue>,
    /// The token realm, on another origin and not named for the registry, that was asked for a
    /// token without the registry's credentials (for the hint of a refusal).
    withheld: Option<Origin>,
}

impl Session {
    /// A session with the registry `registry` for `repository` (no request sent yet), over HTTP
    /// when `plain_http`; messages name `shown`. The client follows no redirect itself.
    fn open(
        registry: &str,
        repository: &str,
        plain_http: bool,
        shown: String,
    ) -> Result<Session, PullError> {
        crate::source::tls::install_provider();
        let client = Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .read_timeout(std::time::Duration::from_secs(60))
            // Redirects are followed by `Session::send`, which decides where `Authorization` goes.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                fail(
                    DistributionCode::RegistryUnavailable,
                    escape::text(&e.to_string()).to_string(),
                )
            })?;
        let origin = Origin::registry(registry, plain_http).ok_or_else(|| {
            fail(
                DistributionCode::MalformedImage,
                format!("`{}` is not a registry host", escape::text(registry)),
            )
        })?;
        Ok(Session {
            client,
            base: format!("{}://{registry}/v2/{repository}", origin.scheme),
            found: credentials::lookup(&origin, Unscoped::Nowhere),
            origin,
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            shown,
            authorization: None,
            withheld: None,
        })
    }
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
struct Wanted {
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
) -> Result<Vec<Wanted>, PullError> {
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
        kept.push(Wanted {
            digest,
            size,
            bundle,
        });
    }
    Ok(kept)
}

impl Session {
    /// GETs `url`, authenticating when the registry asks; the answer, successful, with a length
    /// (when it says one) within `bound`.
    async fn get(
        &mut self,
        url: &str,
        accept: Option<&str>,
        bound: u64,
        what: &str,
    ) -> Result<reqwest::Response, PullError> {
        self.ask(Method::GET, url, accept, bound, what).await
    }

    /// Sends `method` to `url` as [`get`](Self::get) does.
    async fn ask(
        &mut self,
        method: Method,
        url: &str,
        accept: Option<&str>,
        bound: u64,
        what: &str,
    ) -> Result<reqwest::Response, PullError> {
        let response = self.answer(&method, url, accept, what).await?;
        self.judge(response, bound, what)
    }

    /// Sends `method` to `url`, authenticating when the registry asks; the answer, whatever its
    /// status ([`judge`](Self::judge) refuses an unsuccessful one).
    async fn answer(
        &mut self,
        method: &Method,
        url: &str,
        accept: Option<&str>,
        what: &str,
    ) -> Result<reqwest::Response, PullError> {
        let mut response = self.send(method, url, accept).await?;
        if response.status() == StatusCode::UNAUTHORIZED {
            let at = Origin::of(response.url());
            if at.as_ref() != Some(&self.origin) {
                return Err(self.denied(&format!(
                    "{what} was redirected to {}, which asks for credentials; none go beyond the registry's origin {}",
                    at.map_or_else(|| "another origin".to_owned(), |o| o.to_string()),
                    self.origin
                )));
            }
            if self.authorization.is_none() {
                let challenge = response
                    .headers()
                    .get(WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                self.authorization = Some(self.authenticate(&challenge).await?);
                response = self.send(method, url, accept).await?;
            }
        }
        Ok(response)
    }

    /// `response` when it is successful, with a length (when it says one) within `bound`.
    fn judge(
        &self,
        response: reqwest::Response,
        bound: u64,
        what: &str,
    ) -> Result<reqwest::Response, PullError> {
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(status, what));
        }
        if response.content_length().is_some_and(|n| n > bound) {
            return Err(self.over(what, bound));
        }
        Ok(response)
    }

    /// GETs `url` into memory, reading at most `bound` bytes.
    async fn get_bytes(
        &mut self,
        url: &str,
        accept: Option<&str>,
        bound: u64,
        what: &str,
    ) -> Result<Vec<u8>, PullError> {
        let response = self.get(url, accept, bound, what).await?;
        self.read_body(response, bound, what).await
    }

    /// The body of `response`, reading at most `bound` bytes.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        bound: u64,
        what: &str,
    ) -> Result<Vec<u8>, PullError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unavailable(&e))? {
            if (body.len() + chunk.len()) as u64 > bound {
                return Err(self.over(what, bound));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// GETs the blob `digest` of `size` bytes at `url` into a new file at `path`, hashing it as it
    /// streams: never more than `size` bytes read, and the bytes equal to the digest.
    async fn get_to_file(
        &mut self,
        url: &str,
        path: &Path,
        size: u64,
        digest: &str,
    ) -> Result<(), PullError> {
        let what = format!("layer {digest}");
        let mut response = self.get(url, None, size, &what).await?;
        let write_failed = |e: std::io::Error| {
            fail(
                DistributionCode::WriteFailed,
                format!(
                    "cannot write {what} to {}: {}",
                    escape::path(path),
                    escape::text(&e.to_string())
                ),
            )
        };
        let file = fs_err::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(write_failed)?;
        let mut file = std::io::BufWriter::with_capacity(64 * 1024, file);
        let mut hasher = sha2::Sha256::new();
        let mut read = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unavailable(&e))? {
            read += chunk.len() as u64;
            if read > size {
                return Err(self.over(&what, size));
            }
            hasher.update(&chunk);
            file.write_all(&chunk).map_err(write_failed)?;
        }
        file.flush().map_err(write_failed)?;
        let got = format!("sha256:{}", crate::support::hex::encode(&hasher.finalize()));
        if read != size || got != digest {
            return Err(fail(
                DistributionCode::DigestMismatch,
                format!(
                    "layer {digest} of {}: the registry sent {read} bytes with digest {got}",
                    self.shown
                ),
            ));
        }
        Ok(())
    }

    /// Sends `method` to `url`, following up to [`MAX_REDIRECTS`] redirects; `Authorization` goes
    /// only to the registry's origin.
    async fn send(
        &self,
        method: &Method,
        url: &str,
        accept: Option<&str>,
    ) -> Result<reqwest::Response, PullError> {
        let mut url = Url::parse(url).map_err(|e| {
            fail(
                DistributionCode::MalformedImage,
                format!("`{}` is not a URL: {e}", escape::text(url)),
            )
        })?;
        for _ in 0..=MAX_REDIRECTS {
            let mut request = self.client.request(method.clone(), url.clone());
            if let Some(accept) = accept {
                request = request.header(ACCEPT, accept);
            }
            if Origin::of(&url).as_ref() == Some(&self.origin)
                && let Some(authorization) = &self.authorization
            {
                request = request.header(AUTHORIZATION, authorization.clone());
            }
            let response = request.send().await.map_err(|e| self.unavailable(&e))?;
            if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
                return Ok(response);
            }
            let next = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .filter(|next| Origin::of(next).is_some())
                .ok_or_else(|| {
                    fail(
                        DistributionCode::RegistryRefused,
                        format!(
                            "the registry `{}` answered HTTP {} without an http(s) location",
                            self.registry,
                            response.status()
                        ),
                    )
                })?;
            url = next;
        }
        Err(fail(
            DistributionCode::RegistryRefused,
            format!(
                "the registry `{}` redirected more than {MAX_REDIRECTS} times",
                self.registry
            ),
        ))
    }

    /// The `Authorization` value the challenge (sent by the registry's own origin) asks for.
    async fn authenticate(&mut self, challenge: &str) -> Result<HeaderValue, PullError> {
        let credentials = self.found.credentials().cloned();
        let credentials = credentials.as_ref();
        let challenges = parse_challenges(challenge).ok_or_else(|| {
            self.denied("the registry's `WWW-Authenticate` challenge is not well formed")
        })?;
        // A bearer challenge when the registry offers one (as Docker prefers it), else Basic.
        let Some(bearer) = challenges.iter().find(|c| c.scheme == "bearer") else {
            if challenges.iter().any(|c| c.scheme == "basic") {
                let credentials =
                    credentials.ok_or_else(|| self.denied("the registry wants credentials"))?;
                return Ok(basic(credentials));
            }
            return Err(self.denied(
                "the registry asks for an authentication scheme other than Basic or Bearer",
            ));
        };
        let realm = bearer
            .param("realm")
            .map_err(|()| self.denied("the registry's bearer challenge names its realm twice"))?
            .ok_or_else(|| self.denied("the registry's bearer challenge has no realm"))?;
        let service = bearer
            .param("service")
            .map_err(|()| self.denied("the registry's bearer challenge names its service twice"))?;
        let realm = Url::parse(&realm)
            .ok()
            .filter(|u| Origin::of(u).is_some())
            .ok_or_else(|| self.denied("the registry's token realm is not an http(s) URL"))?;
        let realm_origin = Origin::of(&realm)
            .ok_or_else(|| self.denied("the registry's token realm is not an http(s) URL"))?;
        if self.origin.scheme == "https" && realm.scheme() != "https" {
            return Err(fail(
                DistributionCode::InsecureTokenRealm,
                format!(
                    "the registry `{}` is spoken to over HTTPS but names a plain-HTTP token realm ({}); nothing was sent to it",
                    self.registry, realm_origin
                ),
            ));
        }
        let mut request = self
            .client
            .get(realm)
            .query(&[("scope", format!("repository:{}:pull", self.repository))]);
        if let Some(service) = service {
            request = request.query(&[("service", service)]);
        }
        // The realm gets the registry's credentials on the registry's origin or one the
        // configuration names for it; elsewhere it is asked anonymously. The token goes only to
        // the registry.
        if let Some(credentials) = credentials {
            if credentials::token_realm(&self.origin, &realm_origin).gets_credentials() {
                request = request.header(AUTHORIZATION, basic(credentials));
            } else {
                self.withheld = Some(realm_origin);
            }
        }
        let mut response = request.send().await.map_err(|e| self.unavailable(&e))?;
        if !response.status().is_success() {
            return Err(self.status_error(response.status(), "the token"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unavailable(&e))? {
            if (body.len() + chunk.len()) as u64 > MAX_TOKEN_BYTES {
                return Err(self.denied("the registry's token answer is over its bound"));
            }
            body.extend_from_slice(&chunk);
        }
        let answer: Value = serde_json::from_slice(&body)
            .map_err(|_| self.denied("the token answer is not JSON"))?;
        let token = answer["token"]
            .as_str()
            .or_else(|| answer["access_token"].as_str())
            .ok_or_else(|| self.denied("the token answer holds no token"))?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| self.denied("the token is not a header value"))?;
        value.set_sensitive(true);
        Ok(value)
    }

    fn over(&self, what: &str, bound: u64) -> PullError {
        fail(
            DistributionCode::ImageTooLarge,
            format!(
                "{what} of {} is over its bound of {bound} bytes",
                self.shown
            ),
        )
    }

    fn denied(&self, why: &str) -> PullError {
        let hint = self.withheld.as_ref().map_or_else(String::new, |realm| {
            format!(
                "; hint: its credentials were not sent to its token realm {realm}, on another origin than the registry's; to send them there, name that realm for it: SKILLFOLD_REGISTRY_TOKEN_REALMS={}={realm}",
                escape::text(&self.registry)
            )
        });
        fail(
            DistributionCode::RegistryDenied,
            format!(
                "the registry `{}` refused access ({}): {why}{hint}",
                self.registry,
                self.found.describe()
            ),
        )
    }

    fn unavailable(&self, e: &reqwest::Error) -> PullError {
        fail(
            DistributionCode::RegistryUnavailable,
            format!(
                "the registry `{}` is unavailable: {}",
                self.registry,
                escape::text(&e.to_string())
            ),
        )
    }

    fn status_error(&self, status: StatusCode, what: &str) -> PullError {
        match status.as_u16() {
            401 | 403 => self.denied(&format!("{what}: HTTP {status}")),
            404 => fail(
                DistributionCode::ImageNotFound,
                format!(
                    "the registry `{}` answered HTTP 404 (not found) for {what} of {}",
                    self.registry, self.shown
                ),
            ),
            500.. => fail(
                DistributionCode::RegistryUnavailable,
                format!(
                    "the registry `{}` answered HTTP {status} for {what}",
                    self.registry
                ),
            ),
            _ => fail(
                DistributionCode::RegistryRefused,
                format!(
                    "the registry `{}` answered HTTP {status} for {what}",
                    self.registry
                ),
            ),
        }
    }
}

/// The token realms that the registry `registry` (`host[:port]`, over HTTPS, or HTTP when
/// `plain_http`) names in the bearer challenges of its `/v2/` endpoint, as written: where a client
/// that answers challenges itself would send credentials. Every realm of every bearer challenge in
/// every `WWW-Authenticate` header is listed, whichever one that client picks; a header that is
/// not well formed, or a challenge naming its realm twice, is an error (what that client would
/// read in it is not known). `push` (whose client does answer challenges) asks this before
/// sending any credential.
pub async fn bearer_token_realms(
    registry: &str,
    plain_http: bool,
) -> Result<Vec<String>, TokenRealmError> {
    crate::source::tls::install_provider();
    let unavailable = |e: &dyn std::fmt::Display| {
        TokenRealmError::Unavailable(escape::text(&e.to_string()).to_string())
    };
    let client = Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unavailable(&e))?;
    let scheme = if plain_http { "http" } else { "https" };
    let response = client
        .get(format!("{scheme}://{registry}/v2/"))
        .send()
        .await
        .map_err(|e| unavailable(&e))?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return Ok(Vec::new());
    }
    let mut realms = Vec::new();
    for header in response.headers().get_all(WWW_AUTHENTICATE) {
        let challenges = header
            .to_str()
            .ok()
            .and_then(parse_challenges)
            .ok_or(TokenRealmError::Malformed)?;
        for challenge in challenges.iter().filter(|c| c.scheme == "bearer") {
            realms.extend(
                challenge
                    .param("realm")
                    .map_err(|()| TokenRealmError::Malformed)?,
            );
        }
    }
    Ok(realms)
}

/// Why [`bearer_token_realms`] could not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRealmError {
    /// The registry could not be reached (escaped).
    Unavailable(String),
    /// Its challenge is not well formed, or names a realm twice.
    Malformed,
}

/// One challenge of a `WWW-Authenticate` value: its scheme (lowercase) and parameters (names
/// lowercase, quoted values unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of the parameter `name`: none, one, or `Err` when it is given twice (readers
    /// disagree on which counts).
    fn param(&self, name: &str) -> Result<Option<String>, ()> {
        let mut values = self.params.iter().filter(|(k, _)| k == name);
        let first = values.next().map(|(_, v)| v.clone());
        if values.next().is_some() {
            return Err(());
        }
        Ok(first)
    }
}

/// The challenges of a `WWW-Authenticate` value (RFC 9110 §11.6.1: `scheme param=value, …`, the
/// values tokens or quoted strings, several challenges separated by commas); `None` when it is
/// not well formed (a `token68` challenge included: registries send parameters).
pub(crate) fn parse_challenges(value: &str) -> Option<Vec<Challenge>> {
    fn tchar(c: char) -> bool {
        c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
    }
    let mut chars = value.chars().peekable();
    let mut challenges: Vec<Challenge> = Vec::new();
    let skip_spaces = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    };
    loop {
        skip_spaces(&mut chars);
        while chars.next_if(|c| *c == ',').is_some() {
            skip_spaces(&mut chars);
        }
        if chars.peek().is_none() {
            break;
        }
        let mut token = String::new();
        while let Some(c) = chars.next_if(|c| tchar(*c)) {
            token.push(c);
        }
        if token.is_empty() {
            return None;
        }
        skip_spaces(&mut chars);
        if chars.next_if(|c| *c == '=').is_none() {
            // A new challenge: its scheme, then a space or the end or a comma.
            challenges.push(Challenge {
                scheme: token.to_ascii_lowercase(),
                params: Vec::new(),
            });
            continue;
        }
        skip_spaces(&mut chars);
        let mut value = String::new();
        if chars.next_if(|c| *c == '"').is_some() {
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => value.push(chars.next()?),
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| tchar(*c) || *c == '/' || *c == ':') {
                value.push(c);
            }
            if value.is_empty() {
                return None;
            }
        }
        challenges
            .last_mut()?
            .params
            .push((token.to_ascii_lowercase(), value));
        skip_spaces(&mut chars);
        // A parameter ends at a comma or the end.
        if chars.peek().is_some_and(|c| *c != ',') {
            return None;
        }
    }
    Some(challenges)
}

fn basic(credentials: &Credentials) -> HeaderValue {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", credentials.user, credentials.password));
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
        .unwrap_or(HeaderValue::from_static("Basic"));
    value.set_sensitive(true);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn realms(value: &str) -> Option<Vec<Result<Option<String>, ()>>> {
        let challenges = parse_challenges(value)?;
        Some(
            challenges
                .iter()
                .filter(|c| c.scheme == "bearer")
                .map(|c| c.param("realm"))
                .collect(),
        )
    }

    #[test]
    fn challenges_are_read_as_http_auth_reads_them() {
        let one = |v: &str| realms(v).unwrap();
        assert_eq!(
            one(r#"Bearer realm="https://auth.example.com/token",service="registry""#),
            [Ok(Some("https://auth.example.com/token".to_owned()))]
        );
        assert_eq!(
            one("bearer Realm=https://a.example.com/t , scope=x"),
            [Ok(Some("https://a.example.com/t".to_owned()))]
        );
        // A realm hidden in a quoted value is not one; the realm after it is.
        assert_eq!(
            one(r#"Bearer service="x,realm=https://registry/token",realm="https://evil/t""#),
            [Ok(Some("https://evil/t".to_owned()))]
        );
        assert_eq!(
            one(r#"Bearer realm="https://a/\"q\"",service=s"#),
            [Ok(Some(r#"https://a/"q""#.to_owned()))]
        );
        // A bearer challenge after a Basic one, in one header.
        assert_eq!(
            one(r#"Basic realm="registry", Bearer realm="https://evil/t""#),
            [Ok(Some("https://evil/t".to_owned()))]
        );
        assert_eq!(one(r#"Basic realm="registry""#), []);
        // A realm named twice: which one a reader takes differs.
        assert_eq!(
            one(r#"Bearer realm="https://a/t",REALM="https://b/t""#),
            [Err(())]
        );
        for malformed in [
            r#"Bearer realm="https://a/t"#,
            "realm=https://a/t",
            "Bearer realm=https://a/t b",
            "Bearer realm=",
            "Bearer abc==",
            "Bearer realm=\"a\" Basic realm=b",
            "Bearer (realm)",
        ] {
            assert!(realms(malformed).is_none(), "{malformed}");
        }
    }

    #[test]
    fn the_pull_bounds_are_the_documented_figures() {
        // docs/distribution.md states these figures.
        assert_eq!(max_pull_bytes(limits::CHAMVI), 34_652_176);
        assert_eq!(max_pull_bytes(limits::EXTENDED), 807_157_776);
        assert_eq!(max_pull_bytes(limits::CEILING), 2_150_645_776);
        assert!(bundle_layer_bytes(limits::CEILING) <= MAX_LAYER_BYTES);
    }
}
