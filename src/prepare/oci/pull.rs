//! Pulling an image by digest from a registry (the OCI distribution API on reqwest and rustls),
//! with every bound checked before the bytes it bounds are read: the manifest at most
//! [`MAX_MANIFEST_BYTES`] and equal to its digest; an image index or a layer media type we do not
//! know refused; each layer's declared size within [`MAX_LAYER_BYTES`], read no further than
//! declared, and equal to its digest. Anonymous, or HTTP Basic with the registry's credentials,
//! or the registry's bearer-token exchange (`WWW-Authenticate: Bearer realm=…`) with them; the
//! credentials are never put in a message. A registry that cannot be reached or answers 5xx is
//! retryable; a refusal, a digest mismatch or a bound is not.

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Client, StatusCode};
use serde_json::Value;

use super::code::DistributionCode;
use super::credentials::{self, Credentials, Found};
use super::image::sha256;
use super::unpack::MAX_LAYER_TAR_BYTES;
use super::{MEDIA_LAYER_TAR_GZIP, MEDIA_MANIFEST, PulledLayer};
use crate::descriptor::plan::ImageReference;
use crate::format::escape;

/// The largest manifest read.
pub const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;
/// The largest compressed layer read: a gzip stream is never much larger than what it inflates to.
pub const MAX_LAYER_BYTES: u64 = MAX_LAYER_TAR_BYTES + 1024 * 1024;
/// The most layers an image may list.
pub const MAX_LAYERS: usize = 1024;
/// The largest token answer read.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

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

/// Pulls the image `reference`: the manifest, then the layers `wanted` keeps (by the bundle-name
/// annotation; a layer without one is always pulled), all within `deadline` (`pull_deadline`
/// past it: the pull is dropped, its connections closed).
pub fn pull(
    reference: &ImageReference,
    plain_http: bool,
    wanted: &dyn Fn(&str) -> bool,
    deadline: std::time::Duration,
) -> Result<Vec<PulledLayer>, PullError> {
    crate::prepare::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(DistributionCode::RegistryUnavailable, e.to_string()))?;
    runtime
        .block_on(async {
            tokio::time::timeout(deadline, pull_async(reference, plain_http, wanted)).await
        })
        .unwrap_or_else(|_| {
            Err(fail(
                DistributionCode::PullDeadline,
                format!(
                    "the pull of {reference} did not finish within its deadline of {} s",
                    deadline.as_secs_f64()
                ),
            ))
        })
}

struct Session<'a> {
    client: Client,
    base: String,
    reference: &'a ImageReference,
    found: Found,
    authorization: Option<HeaderValue>,
}

async fn pull_async(
    reference: &ImageReference,
    plain_http: bool,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<PulledLayer>, PullError> {
    let client = Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| {
            fail(
                DistributionCode::RegistryUnavailable,
                escape::text(&e.to_string()).to_string(),
            )
        })?;
    let scheme = if plain_http { "http" } else { "https" };
    let mut session = Session {
        client,
        base: format!(
            "{scheme}://{}/v2/{}",
            reference.registry, reference.repository
        ),
        reference,
        found: credentials::lookup(&reference.registry),
        authorization: None,
    };
    let accept = [MEDIA_MANIFEST, MEDIA_DOCKER_MANIFEST]
        .iter()
        .chain(INDEX_TYPES.iter())
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let url = format!("{}/manifests/{}", session.base, reference.digest);
    let manifest = session
        .get(&url, Some(&accept), MAX_MANIFEST_BYTES, "the manifest")
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
    let manifest: Value = serde_json::from_slice(&manifest).map_err(|e| {
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
    let mut pulled = Vec::new();
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
        let url = format!("{}/blobs/{digest}", session.base);
        let bytes = session
            .get(&url, None, size, &format!("layer {digest}"))
            .await?;
        if bytes.len() as u64 != size || sha256(&bytes) != digest {
            return Err(fail(
                DistributionCode::DigestMismatch,
                format!(
                    "layer {digest} of {reference}: the registry sent {} bytes with digest {}",
                    bytes.len(),
                    sha256(&bytes)
                ),
            ));
        }
        pulled.push(PulledLayer {
            digest,
            bundle,
            bytes,
        });
    }
    Ok(pulled)
}

impl Session<'_> {
    /// GETs `url`, authenticating when the registry asks, reading at most `bound` bytes.
    async fn get(
        &mut self,
        url: &str,
        accept: Option<&str>,
        bound: u64,
        what: &str,
    ) -> Result<Vec<u8>, PullError> {
        let mut response = self.send(url, accept).await?;
        if response.status() == StatusCode::UNAUTHORIZED && self.authorization.is_none() {
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            self.authorization = Some(self.authenticate(&challenge).await?);
            response = self.send(url, accept).await?;
        }
        let status = response.status();
        if !status.is_success() {
            return Err(self.status_error(status, what));
        }
        if response.content_length().is_some_and(|n| n > bound) {
            return Err(fail(
                DistributionCode::ImageTooLarge,
                format!(
                    "{what} of {} is over its bound of {bound} bytes",
                    self.reference
                ),
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unavailable(&e))? {
            if (body.len() + chunk.len()) as u64 > bound {
                return Err(fail(
                    DistributionCode::ImageTooLarge,
                    format!(
                        "{what} of {} is over its bound of {bound} bytes",
                        self.reference
                    ),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    async fn send(&self, url: &str, accept: Option<&str>) -> Result<reqwest::Response, PullError> {
        let mut request = self.client.get(url);
        if let Some(accept) = accept {
            request = request.header(ACCEPT, accept);
        }
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        request.send().await.map_err(|e| self.unavailable(&e))
    }

    /// The `Authorization` value the challenge asks for.
    async fn authenticate(&self, challenge: &str) -> Result<HeaderValue, PullError> {
        let credentials = self.found.credentials();
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            let credentials =
                credentials.ok_or_else(|| self.denied("the registry wants credentials"))?;
            return Ok(basic(credentials));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(self.denied(
                "the registry asks for an authentication scheme other than Basic or Bearer",
            ));
        }
        let param = |key: &str| {
            params.split(',').find_map(|p| {
                let (k, v) = p.trim().split_once('=')?;
                (k.eq_ignore_ascii_case(key)).then(|| v.trim_matches('"').to_owned())
            })
        };
        let realm = param("realm")
            .ok_or_else(|| self.denied("the registry's bearer challenge has no realm"))?;
        if !realm.starts_with("https://") && !realm.starts_with("http://") {
            return Err(self.denied("the registry's token realm is not an http(s) URL"));
        }
        let mut request = self.client.get(&realm).query(&[(
            "scope",
            format!("repository:{}:pull", self.reference.repository),
        )]);
        if let Some(service) = param("service") {
            request = request.query(&[("service", service)]);
        }
        if let Some(credentials) = credentials {
            request = request.header(AUTHORIZATION, basic(credentials));
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
        HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| self.denied("the token is not a header value"))
    }

    fn denied(&self, why: &str) -> PullError {
        fail(
            DistributionCode::RegistryDenied,
            format!(
                "the registry `{}` refused access ({}): {why}",
                self.reference.registry,
                self.found.describe()
            ),
        )
    }

    fn unavailable(&self, e: &reqwest::Error) -> PullError {
        fail(
            DistributionCode::RegistryUnavailable,
            format!(
                "the registry `{}` is unavailable: {}",
                self.reference.registry,
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
                    "the registry `{}` has no {what} of {}",
                    self.reference.registry, self.reference
                ),
            ),
            500.. => fail(
                DistributionCode::RegistryUnavailable,
                format!(
                    "the registry `{}` answered HTTP {status} for {what}",
                    self.reference.registry
                ),
            ),
            _ => fail(
                DistributionCode::RegistryRefused,
                format!(
                    "the registry `{}` answered HTTP {status} for {what}",
                    self.reference.registry
                ),
            ),
        }
    }
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
