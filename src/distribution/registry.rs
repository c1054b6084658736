//! Pushing an image to an OCI registry (the distribution API, through the `oci-client` crate on
//! reqwest and rustls): every blob the registry does not hold yet, then the manifest's exact
//! bytes, so the registry names the image by the digest `push` computed. HTTPS unless
//! `plain_http` (a registry on a trusted network or loopback). A registry that cannot be reached
//! or answers 5xx is a retryable failure; a refusal (credentials, a bad name) is not.

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use crate::source::oci::MEDIA_MANIFEST;
use crate::source::oci::challenge::{self, TokenRealmError};
use crate::source::oci::credentials::{self, FoundCredentials};
use crate::source::oci::image::{Blob, Image};
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
pub enum PushError {
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
}

impl PushError {
    /// Stable error code: a registry that is down or failing is `registry_unavailable`
    /// (retryable); a refusal is not.
    pub fn code(&self) -> crate::source::oci::code::DistributionCode {
        use crate::source::oci::code::DistributionCode;
        match self {
            PushError::Unavailable { .. } => DistributionCode::RegistryUnavailable,
            PushError::Denied { .. } => DistributionCode::RegistryDenied,
            PushError::Refused { .. } => DistributionCode::RegistryRefused,
        }
    }
}

crate::coded_by_code!(PushError);

/// Pushes `image` to `destination`; returns the manifest digest the registry acknowledged.
pub fn push(
    image: &Image,
    destination: &Destination,
    plain_http: bool,
) -> Result<String, PushError> {
    crate::source::tls::install_provider();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PushError::Unavailable {
            registry: destination.registry().to_owned(),
            reason: escape::text(&e.to_string()).to_string(),
        })?;
    runtime.block_on(push_async(image, destination, plain_http))
}

async fn push_async(
    image: &Image,
    destination: &Destination,
    plain_http: bool,
) -> Result<String, PushError> {
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
                TokenRealmError::Unavailable(reason) => PushError::Unavailable {
                    registry: registry.clone(),
                    reason,
                },
                TokenRealmError::Malformed => PushError::Refused {
                    registry: registry.clone(),
                    reason: "the `WWW-Authenticate` challenge of its `/v2/` endpoint is not well formed, or names a token realm twice; no credential is sent".to_owned(),
                },
            })?;
        for realm in &realms {
            check_token_realm(&registry, origin, &found, realm)?;
        }
    }
    let client = Client::new(config);
    let classify = |e: OciDistributionError| classify(&registry, &found, e);
    let reference = &destination.reference;
    client
        .auth(reference, &auth, RegistryOperation::Push)
        .await
        .map_err(classify)?;
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

/// Whether the credentials `found` for the registry at `origin` may go to the token `realm` its
/// challenge names: over HTTPS from an HTTPS registry, and on the registry's origin or one
/// `SKILLFOLD_REGISTRY_TOKEN_REALMS` names for it. Refused before anything is sent otherwise.
fn check_token_realm(
    registry: &str,
    origin: &Origin,
    found: &FoundCredentials,
    realm: &str,
) -> Result<(), PushError> {
    let shown = escape::text(realm);
    if origin.scheme == "https" && !realm.to_ascii_lowercase().starts_with("https://") {
        return Err(PushError::Refused {
            registry: registry.to_owned(),
            reason: format!(
                "it is spoken to over HTTPS but names a plain-HTTP token realm (`{shown}`); credentials are not sent in clear text [insecure_token_realm]"
            ),
        });
    }
    let realm_origin = reqwest::Url::parse(realm)
        .ok()
        .and_then(|url| Origin::of(&url))
        .ok_or_else(|| PushError::Refused {
            registry: registry.to_owned(),
            reason: format!("its token realm `{shown}` is not an http(s) URL"),
        })?;
    if credentials::token_realm(origin, &realm_origin).gets_credentials() {
        return Ok(());
    }
    Err(PushError::Denied {
        registry: registry.to_owned(),
        source_of_credentials: found.describe(),
        reason: format!(
            "its token realm {realm_origin} is on another origin than the registry's, and no setting names it for the registry, so its credentials are not sent there (nothing was sent); hint: to send them there, name that realm for it: SKILLFOLD_REGISTRY_TOKEN_REALMS={}={realm_origin}",
            escape::text(registry)
        ),
    })
}

fn classify(registry: &str, found: &FoundCredentials, e: OciDistributionError) -> PushError {
    let registry = registry.to_owned();
    let reason = escape::text(&e.to_string()).to_string();
    let source_of_credentials = found.describe();
    let denied = |reason| PushError::Denied {
        registry: registry.clone(),
        source_of_credentials: source_of_credentials.clone(),
        reason,
    };
    match &e {
        // An answer with a status: judged by it; none (connection, timeout): unavailable.
        OciDistributionError::RequestError(request) => match request.status().map(|s| s.as_u16()) {
            Some(401 | 403) => denied(reason),
            Some(code) if (400..500).contains(&code) => PushError::Refused { registry, reason },
            _ => PushError::Unavailable { registry, reason },
        },
        OciDistributionError::IoError(_) => PushError::Unavailable { registry, reason },
        OciDistributionError::ServerError { code, .. } if *code >= 500 => {
            PushError::Unavailable { registry, reason }
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
        _ => PushError::Refused { registry, reason },
    }
}
