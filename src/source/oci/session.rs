//! The registry session of one pull or tag resolution: the requests to one registry for one
//! repository, with the bounds the pull sets on each answer, and where credentials and tokens go.
//!
//! Credentials are scoped to the registry's origin (scheme + host + port; [`super::credentials`]):
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

use std::io::Write as _;
use std::path::Path;

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use reqwest::{Client, Method, StatusCode, Url};
use serde_json::Value;
use sha2::Digest as _;

use super::challenge::parse_challenges;
use super::code::DistributionCode;
use super::credentials::{self, Credentials, FoundCredentials, Unscoped};
use super::pull_error::{PullError, fail};
use crate::source::origin::Origin;
use crate::support::escape;

/// The largest token answer read.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;
/// The most redirects followed for one request.
pub const MAX_REDIRECTS: usize = 10;

/// Requests to one registry for one repository, and the credentials and token they carry.
pub(super) struct Session {
    client: Client,
    /// `scheme://registry/v2/repository`: the manifests and blobs are below it.
    pub(super) base: String,
    /// Where credentials and tokens may go.
    origin: Origin,
    /// `host[:port]`.
    registry: String,
    /// The repository path (the scope of a token).
    repository: String,
    /// What messages name: the image, or the repository and tag being resolved.
    shown: String,
    found: FoundCredentials,
    authorization: Option<HeaderValue>,
    /// The token realm, on another origin and not named for the registry, that was asked for a
    /// token without the registry's credentials (for the hint of a refusal).
    withheld: Option<Origin>,
}

impl Session {
    /// A session with the registry `registry` for `repository` (no request sent yet), over HTTP
    /// when `plain_http`; messages name `shown`. The client follows no redirect itself.
    pub(super) fn open(
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

    /// GETs `url`, authenticating when the registry asks; the answer, successful, with a length
    /// (when it says one) within `bound`.
    pub(super) async fn get(
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
    pub(super) async fn answer(
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
    pub(super) fn judge(
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
    pub(super) async fn get_bytes(
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
    pub(super) async fn read_body(
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
    pub(super) async fn get_to_file(
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

fn basic(credentials: &Credentials) -> HeaderValue {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", credentials.user, credentials.password));
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
        .unwrap_or(HeaderValue::from_static("Basic"));
    value.set_sensitive(true);
    value
}
