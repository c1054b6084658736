//! Pushing an image to an OCI registry (the distribution API, through the `oci-client` crate on
//! reqwest and rustls): every blob the registry does not hold yet, then the manifest's exact
//! bytes, so the registry names the image by the digest `push` computed. HTTPS unless
//! `plain_http` (a registry on a trusted network or loopback). A registry that cannot be reached
//! or answers 5xx is a retryable failure; a refusal (credentials, a bad name) is not.

use base64::Engine as _;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use crate::source::oci::MEDIA_MANIFEST;
use crate::source::oci::challenge::{self, TokenRealmError};
use crate::source::oci::credentials::{self, FoundCredentials};
use crate::source::oci::image::sha256;
use crate::source::oci::image::{Blob, Image};
use crate::source::oci::pull::MAX_MANIFEST_BYTES;
use crate::source::origin::Origin;
use crate::support::escape;

/// Where to push: a parsed `REGISTRY/REPOSITORY[:TAG]`.
#[derive(Debug, Clone)]
pub struct Destination {
    reference: Reference,
    tag: Option<String>,
}

impl Destination {
    /// Parses `REGISTRY/REPOSITORY[:TAG]`; a digest is refused (the digest is what `push` makes).
    // A String: clap's value parser shows it to the operator with the flag; nothing matches it.
    pub fn parse(value: &str) -> Result<Destination, String> {
        if value.contains('@') {
            return Err("give a tag or none; the digest is the image's own".to_owned());
        }
        let first = value.split('/').next().unwrap_or_default();
        if !value.contains('/')
            || !(first.contains('.') || first.contains(':') || first == "localhost")
        {
            return Err(
                "expected REGISTRY/REPOSITORY[:TAG], with the registry's host first".to_owned(),
            );
        }
        let reference: Reference = value.parse().map_err(|e| format!("{e}"))?;
        let tag = reference.tag().map(str::to_owned).filter(|_| {
            // oci-client fills in `latest` when no tag was written; keep only a written one.
            value
                .rsplit('/')
                .next()
                .is_some_and(|last| last.contains(':'))
        });
        Ok(Destination { reference, tag })
    }

    /// `host[:port]`.
    pub fn registry(&self) -> &str {
        self.reference.registry()
    }

    /// `REGISTRY/REPOSITORY`.
    pub fn repository(&self) -> String {
        format!(
            "{}/{}",
            self.reference.registry(),
            self.reference.repository()
        )
    }

    /// The tag, if one was given.
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }
}

/// Why a push failed.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The registry could not be reached, or failed (5xx): worth another try.
    #[error("the registry `{registry}` is unavailable: {reason}")]
    Unavailable {
        /// `host[:port]`.
        registry: String,
        /// What happened (escaped).
        reason: String,
    },
    /// The registry refused the credentials or the access.
    #[error("the registry `{registry}` refused access ({source_of_credentials}): {reason}")]
    Denied {
        /// `host[:port]`.
        registry: String,
        /// Where the credentials came from (never the credentials).
        source_of_credentials: String,
        /// What it said (escaped).
        reason: String,
    },
    /// The registry refused the request otherwise.
    #[error("the registry `{registry}` refused the push: {reason}")]
    Refused {
        /// `host[:port]`.
        registry: String,
        /// What it said (escaped).
        reason: String,
    },
    /// What the push would write is over a bound the verifier reads within (the `.sig` image
    /// `push --sign-key` appends to): nothing is written for `prepare` to refuse.
    #[error("{reason}; nothing was written, as `prepare` would refuse it")]
    OverBound {
        /// What is over which bound.
        reason: String,
    },
}

impl UploadError {
    /// Stable error code: a registry that is down or failing is `registry_unavailable`
    /// (retryable); a refusal is not.
    pub fn code(&self) -> crate::source::oci::code::DistributionCode {
        use crate::source::oci::code::DistributionCode;
        match self {
            UploadError::Unavailable { .. } => DistributionCode::RegistryUnavailable,
            UploadError::Denied { .. } => DistributionCode::RegistryDenied,
            UploadError::Refused { .. } => DistributionCode::RegistryRefused,
            UploadError::OverBound { .. } => DistributionCode::ImageTooLarge,
        }
    }
}

crate::support::error_code::coded_by_code!(UploadError);

/// A runtime of its own (one thread, I/O and time) for one upload to `destination`, with the TLS
/// provider installed.
fn runtime_for(destination: &Destination) -> Result<tokio::runtime::Runtime, UploadError> {
    crate::source::tls::install_provider();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| UploadError::Unavailable {
            registry: destination.registry().to_owned(),
            reason: escape::text(&e.to_string()).to_string(),
        })
}

/// Pushes `image` to `destination`; returns the manifest digest the registry acknowledged.
pub fn push(
    image: &Image,
    destination: &Destination,
    plain_http: bool,
) -> Result<String, UploadError> {
    let runtime = runtime_for(destination)?;
    runtime.block_on(push_async(image, destination, plain_http))
}

/// The Docker image manifest media type (a `.sig` image cosign wrote with Docker media types).
const MEDIA_DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

/// A client authenticated for pushing to one destination.
struct Connection {
    client: Client,
    /// For the bounded reads oci-client does not bound (an existing `.sig` image); it drops
    /// `Authorization` on a redirect to another origin.
    http: reqwest::Client,
    registry: String,
    found: FoundCredentials,
    /// What `Authorization` a request made outside oci-client carries: the bearer token oci-client
    /// obtained, or the Basic credentials it would send.
    authorization: Option<String>,
    scheme: &'static str,
}

impl Connection {
    fn classify(&self, e: OciDistributionError) -> UploadError {
        classify(&self.registry, &self.found, e)
    }
}

/// Connects to `destination`'s registry and authenticates for a push (credentials checked
/// against the token realm first).
async fn connect(destination: &Destination, plain_http: bool) -> Result<Connection, UploadError> {
    let registry = destination.registry().to_owned();
    // The one registry `--to` names: a SKILLFOLD_REGISTRY_AUTH naming no registry is for it.
    let origin = Origin::registry(&registry, plain_http);
    let found = origin.as_ref().map_or(FoundCredentials::Anonymous, |o| {
        credentials::lookup(o, credentials::Unscoped::CommandRegistry)
    });
    let auth = match found.credentials() {
        Some(c) => RegistryAuth::Basic(c.user.clone(), c.password.clone()),
        None => RegistryAuth::Anonymous,
    };
    let config = ClientConfig {
        protocol: if plain_http {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        platform_resolver: None,
        connect_timeout: Some(std::time::Duration::from_secs(10)),
        read_timeout: Some(std::time::Duration::from_secs(60)),
        ..ClientConfig::default()
    };
    // oci-client sends the credentials to whatever token realm the registry names: never to a
    // plain-HTTP one from an HTTPS registry, nor to one on another origin than the registry's
    // unless SKILLFOLD_REGISTRY_TOKEN_REALMS names it for the registry (docs/distribution.md,
    // "Registry credentials").
    if let Some(origin) = &origin
        && found.credentials().is_some()
    {
        let realms = challenge::bearer_token_realms(&registry, plain_http)
            .await
            .map_err(|e| match e {
                TokenRealmError::Unavailable(reason) => UploadError::Unavailable {
                    registry: registry.clone(),
                    reason,
                },
                TokenRealmError::Malformed => UploadError::Refused {
                    registry: registry.clone(),
                    reason: "the `WWW-Authenticate` challenge of its `/v2/` endpoint is not well formed, or names a token realm twice; no credential is sent".to_owned(),
                },
            })?;
        for realm in &realms {
            check_token_realm(&registry, origin, &found, realm)?;
        }
    }
    let client = Client::new(config);
    let token = client
        .auth(&destination.reference, &auth, RegistryOperation::Push)
        .await
        .map_err(|e| classify(&registry, &found, e))?;
    let authorization = match (token, found.credentials()) {
        (Some(token), _) => Some(format!("Bearer {token}")),
        (None, Some(c)) => Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", c.user, c.password))
        )),
        (None, None) => None,
    };
    let http = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::limited(5))
        .build()
        .map_err(|e| UploadError::Unavailable {
            registry: registry.clone(),
            reason: escape::text(&e.to_string()).to_string(),
        })?;
    Ok(Connection {
        client,
        http,
        registry,
        found,
        authorization,
        scheme: if plain_http { "http" } else { "https" },
    })
}

async fn push_async(
    image: &Image,
    destination: &Destination,
    plain_http: bool,
) -> Result<String, UploadError> {
    let connection = connect(destination, plain_http).await?;
    let client = &connection.client;
    let classify = |e: OciDistributionError| connection.classify(e);
    let reference = &destination.reference;
    let blobs: Vec<&Blob> = image
        .layers
        .iter()
        .map(|l| &l.blob)
        .chain([&image.config])
        .collect();
    for blob in blobs {
        if !client
            .blob_exists(reference, &blob.digest)
            .await
            .map_err(classify)?
        {
            client
                .push_blob(reference, blob.bytes.clone(), &blob.digest)
                .await
                .map_err(classify)?;
        }
    }
    let content_type = reqwest::header::HeaderValue::from_static(MEDIA_MANIFEST);
    // By tag when one was given (the tag then names the digest), else by the digest itself.
    let target = match destination.tag() {
        Some(_) => reference.clone(),
        None => Reference::with_digest(
            reference.registry().to_owned(),
            reference.repository().to_owned(),
            image.manifest.digest.clone(),
        ),
    };
    client
        .push_manifest_raw(&target, image.manifest.bytes.clone(), content_type)
        .await
        .map_err(classify)?;
    Ok(image.manifest.digest.clone())
}

/// A signature pushed beside an image (`push --sign-key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedSignature {
    /// The `.sig` tag: `sha256-<hex>.sig`.
    pub tag: String,
    /// The digest of the `.sig` manifest now at the tag.
    pub manifest_digest: String,
    /// Whether a layer with the same payload already held a signature by this key (nothing
    /// pushed, as cosign does).
    pub already_signed: bool,
}

/// Pushes `key`'s cosign signature of the image `digest` (just pushed to `destination`) at the
/// image's `sha256-<hex>.sig` tag, appended to the `.sig` image already there if any.
pub fn push_signature(
    destination: &Destination,
    plain_http: bool,
    digest: &str,
    key: &crate::trust::keys::signing_key::SigningKey,
) -> Result<PushedSignature, UploadError> {
    let runtime = runtime_for(destination)?;
    runtime.block_on(push_signature_async(destination, plain_http, digest, key))
}

async fn push_signature_async(
    destination: &Destination,
    plain_http: bool,
    digest: &str,
    key: &crate::trust::keys::signing_key::SigningKey,
) -> Result<PushedSignature, UploadError> {
    use crate::distribution::sign;
    let connection = connect(destination, plain_http).await?;
    let refused = |reason: String| UploadError::Refused {
        registry: connection.registry.clone(),
        reason,
    };
    // The `.sig` image there does not take the signature: unreadable (as a refusal), or full
    // for the verifier (nothing written that `prepare` would refuse).
    let not_taken = |e: sign::SignatureImageError| match e {
        sign::SignatureImageError::Unreadable(reason) => refused(reason),
        sign::SignatureImageError::OverBound(reason) => UploadError::OverBound {
            reason: format!(
                "the signature tag `{}`: {reason}",
                sign::signature_tag(digest)
            ),
        },
    };
    let layer = sign::SignatureLayer::new(key, &destination.repository(), digest)
        .map_err(|e| refused(e.to_string()))?;
    let tag = sign::signature_tag(digest);
    let reference = &destination.reference;
    let base = format!(
        "{}://{}/v2/{}",
        connection.scheme,
        reference.registry(),
        reference.repository()
    );
    let accept = [MEDIA_MANIFEST, MEDIA_DOCKER_MANIFEST].join(", ");
    let existing = bounded_get(
        &connection,
        &format!("{base}/manifests/{tag}"),
        Some(&accept),
        MAX_MANIFEST_BYTES,
        "the existing signature manifest",
    )
    .await?;
    let image = match existing {
        None => sign::new_signature_image(&layer),
        Some(manifest) => match sign::existing(&manifest, &layer, key.public_key())
            .map_err(&not_taken)?
        {
            sign::Existing::AlreadySigned => {
                return Ok(PushedSignature {
                    tag,
                    manifest_digest: sha256(&manifest),
                    already_signed: true,
                });
            }
            sign::Existing::Append {
                config_digest,
                config_size,
            } => {
                let config = bounded_get(
                    &connection,
                    &format!("{base}/blobs/{config_digest}"),
                    None,
                    config_size,
                    "the existing signature config",
                )
                .await?
                .ok_or_else(|| refused("the existing signature config is missing".to_owned()))?;
                sign::append_signature(&manifest, &config, &layer).map_err(&not_taken)?
            }
        },
    };
    let client = &connection.client;
    let classify = |e: OciDistributionError| connection.classify(e);
    for (bytes, blob_digest) in [
        (layer.payload.clone(), sha256(&layer.payload)),
        (image.config.clone(), sha256(&image.config)),
    ] {
        if !client
            .blob_exists(reference, &blob_digest)
            .await
            .map_err(classify)?
        {
            client
                .push_blob(reference, bytes, &blob_digest)
                .await
                .map_err(classify)?;
        }
    }
    let target = Reference::with_tag(
        reference.registry().to_owned(),
        reference.repository().to_owned(),
        tag.clone(),
    );
    let content_type = reqwest::header::HeaderValue::from_str(&image.media_type).map_err(|_| {
        refused("the existing signature manifest's media type is not a header value".to_owned())
    })?;
    let manifest_digest = sha256(&image.manifest);
    client
        .push_manifest_raw(&target, image.manifest.clone(), content_type)
        .await
        .map_err(classify)?;
    Ok(PushedSignature {
        tag,
        manifest_digest,
        already_signed: false,
    })
}

/// GETs `url` with the connection's authorization: `None` when the registry has nothing there
/// (404), else the body, refused over `bound` bytes before more is read.
async fn bounded_get(
    connection: &Connection,
    url: &str,
    accept: Option<&str>,
    bound: u64,
    what: &str,
) -> Result<Option<Vec<u8>>, UploadError> {
    use reqwest::header::{ACCEPT, AUTHORIZATION};
    let registry = connection.registry.clone();
    let unavailable = |e: reqwest::Error| UploadError::Unavailable {
        registry: registry.clone(),
        reason: format!("{what}: {}", escape::text(&e.to_string())),
    };
    let refused = |reason: String| UploadError::Refused {
        registry: registry.clone(),
        reason: format!("{what}: {reason}"),
    };
    let mut request = connection.http.get(url);
    if let Some(accept) = accept {
        request = request.header(ACCEPT, accept);
    }
    if let Some(authorization) = &connection.authorization {
        request = request.header(AUTHORIZATION, authorization);
    }
    let mut response = request.send().await.map_err(unavailable)?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(UploadError::Denied {
            registry: registry.clone(),
            source_of_credentials: connection.found.describe(),
            reason: format!("{what}: HTTP {status}"),
        });
    }
    if status.is_server_error() {
        return Err(UploadError::Unavailable {
            registry: registry.clone(),
            reason: format!("{what}: HTTP {status}"),
        });
    }
    if !status.is_success() {
        return Err(refused(format!("HTTP {status}")));
    }
    if response
        .content_length()
        .is_some_and(|length| length > bound)
    {
        return Err(refused(format!("over {bound} bytes")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unavailable)? {
        if (body.len() + chunk.len()) as u64 > bound {
            return Err(refused(format!("over {bound} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// Whether the credentials `found` for the registry at `origin` may go to the token `realm` its
/// challenge names: over HTTPS from an HTTPS registry, and on the registry's origin or one
/// `SKILLFOLD_REGISTRY_TOKEN_REALMS` names for it. Refused before anything is sent otherwise.
fn check_token_realm(
    registry: &str,
    origin: &Origin,
    found: &FoundCredentials,
    realm: &str,
) -> Result<(), UploadError> {
    let shown = escape::text(realm);
    if origin.scheme == "https" && !realm.to_ascii_lowercase().starts_with("https://") {
        return Err(UploadError::Refused {
            registry: registry.to_owned(),
            reason: format!(
                "it is spoken to over HTTPS but names a plain-HTTP token realm (`{shown}`); credentials are not sent in clear text [insecure_token_realm]"
            ),
        });
    }
    let realm_origin = reqwest::Url::parse(realm)
        .ok()
        .and_then(|url| Origin::of(&url))
        .ok_or_else(|| UploadError::Refused {
            registry: registry.to_owned(),
            reason: format!("its token realm `{shown}` is not an http(s) URL"),
        })?;
    if credentials::token_realm(origin, &realm_origin).gets_credentials() {
        return Ok(());
    }
    Err(UploadError::Denied {
        registry: registry.to_owned(),
        source_of_credentials: found.describe(),
        reason: format!(
            "its token realm {realm_origin} is on another origin than the registry's, and no setting names it for the registry, so its credentials are not sent there (nothing was sent); hint: to send them there, name that realm for it: SKILLFOLD_REGISTRY_TOKEN_REALMS={}={realm_origin}",
            escape::text(registry)
        ),
    })
}

fn classify(registry: &str, found: &FoundCredentials, e: OciDistributionError) -> UploadError {
    let registry = registry.to_owned();
    let reason = escape::text(&e.to_string()).to_string();
    let source_of_credentials = found.describe();
    let denied = |reason| UploadError::Denied {
        registry: registry.clone(),
        source_of_credentials: source_of_credentials.clone(),
        reason,
    };
    match &e {
        // An answer with a status: judged by it; none (connection, timeout): unavailable.
        OciDistributionError::RequestError(request) => match request.status().map(|s| s.as_u16()) {
            Some(401 | 403) => denied(reason),
            Some(code) if (400..500).contains(&code) => UploadError::Refused { registry, reason },
            _ => UploadError::Unavailable { registry, reason },
        },
        OciDistributionError::IoError(_) => UploadError::Unavailable { registry, reason },
        OciDistributionError::ServerError { code, .. } if *code >= 500 => {
            UploadError::Unavailable { registry, reason }
        }
        OciDistributionError::ServerError {
            code: 401 | 403, ..
        }
        | OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => denied(reason),
        OciDistributionError::RegistryError { envelope, .. }
            if envelope.errors.iter().any(|err| {
                matches!(
                    err.code,
                    oci_client::errors::OciErrorCode::Unauthorized
                        | oci_client::errors::OciErrorCode::Denied
                )
            }) =>
        {
            denied(reason)
        }
        _ => UploadError::Refused { registry, reason },
    }
}
