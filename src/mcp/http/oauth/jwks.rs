//! The issuer's signing keys: discovered, fetched, cached and refreshed.
//!
//! At start the server reads the issuer's metadata, the first of [`discovery_urls`] that answers
//! (OpenID Connect Discovery appends its well-known path to the issuer's, RFC 8414 §3.1 inserts
//! it between the host and the issuer's path: both are tried), whose `issuer` must equal the
//! configured one, and fetches the key set its `jwks_uri` names. Until a key set is in, the
//! server is not ready (`/readyz` 503 with the reason) and the tokens it would need are not
//! accepted (503); the first fetch is retried every [`RETRY`]. Then the keys are fetched again
//! every [`REFRESH_PERIOD`], and once more on a token whose `kid` no cached key has (at most one
//! such fetch per [`COOL_DOWN`]; a token that arrives while one is under way waits for it); a fetch that fails keeps the cached keys (an identity provider that is
//! down does not stop the server).
//!
//! Every fetch is bounded: [`DEADLINE`] overall, at most [`MAX_DOCUMENT_BYTES`] counted while the
//! body is read, at most [`MAX_REDIRECTS`] redirects, each on the issuer's origin (scheme, host and
//! port: [`crate::source::origin::same_origin`]), and `jwks_uri` must be on it too. `https://` is required except for a loopback issuer.
//! The client is reqwest on rustls with ring, the crypto provider every fetcher of the crate
//! installs ([`crate::source::tls`]); no credential is sent.

use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use reqwest::Url;

use super::validate::{self, IssuerKey};
use crate::mcp::http::metrics::Metrics;

/// The bound on one discovery or key set fetch, from the request to the last byte.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The most bytes of a discovery document or a key set.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// The most redirects one fetch follows.
pub const MAX_REDIRECTS: usize = 3;

/// How often the keys are fetched again.
pub const REFRESH_PERIOD: Duration = Duration::from_secs(300);

/// How long after a fetch an unknown `kid` may cause the next one.
pub const COOL_DOWN: Duration = Duration::from_secs(60);

/// How soon the first fetch is tried again after it failed.
pub const RETRY: Duration = Duration::from_secs(2);

/// The cached keys and how to get new ones.
#[derive(Debug)]
pub struct KeyCache {
    issuer: String,
    /// The issuer parsed: its origin is the one every fetch stays on.
    issuer_url: Url,
    client: reqwest::Client,
    keys: RwLock<Option<Arc<Vec<IssuerKey>>>>,
    /// When the last fetch for an unknown `kid` started (for the cool-down).
    last_unknown_kid: Mutex<Option<Instant>>,
    /// Serialises fetches, so an unknown `kid` arriving many times fetches once.
    fetching: tokio::sync::Mutex<()>,
    /// Why the last fetch failed (for `/readyz` before the first key set).
    last_error: Mutex<Option<String>>,
    metrics: Arc<Metrics>,
}

impl KeyCache {
    /// A cache for `issuer` (already checked by the configuration), with no keys yet.
    pub fn new(issuer: &str, metrics: Arc<Metrics>) -> Result<KeyCache, String> {
        let issuer_url =
            Url::parse(issuer).map_err(|e| format!("the issuer is not a URL ({e})"))?;
        crate::source::tls::install_provider();
        let allowed = issuer_url.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if !crate::source::origin::same_origin(attempt.url(), &allowed) {
                // The target is not shown: it is whatever the server wrote.
                attempt.error("a redirect leaves the issuer's origin")
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .user_agent(concat!("skillfold/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(DEADLINE)
            .timeout(DEADLINE)
            .build()
            .map_err(|e| format!("cannot build the HTTPS client ({e})"))?;
        Ok(KeyCache {
            issuer: issuer.to_owned(),
            issuer_url,
            client,
            keys: RwLock::new(None),
            last_unknown_kid: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            last_error: Mutex::new(None),
            metrics,
        })
    }

    /// The keys in the cache (`None`: none fetched yet).
    pub fn keys(&self) -> Option<Arc<Vec<IssuerKey>>> {
        self.keys.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why the last fetch failed, if it did.
    pub fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Fetches the keys again for a token with an unknown `kid`, unless such a fetch started
    /// within [`COOL_DOWN`] (the periodic fetches do not count: a key rotated just after one is
    /// followed at once).
    pub async fn refresh_for_unknown_kid(&self) {
        let _one = self.fetching.lock().await;
        {
            let mut last = self
                .last_unknown_kid
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| at.elapsed() < COOL_DOWN) {
                return;
            }
            *last = Some(Instant::now());
        }
        self.fetch_locked().await;
    }

    /// Fetches the keys now; whether it worked.
    pub async fn refresh(&self) -> bool {
        let _one = self.fetching.lock().await;
        self.fetch_locked().await
    }

    async fn fetch_locked(&self) -> bool {
        match tokio::time::timeout(DEADLINE, self.fetch()).await {
            Ok(Ok(keys)) => {
                *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(keys));
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                self.metrics.jwks_fetch(true);
                true
            }
            outcome => {
                let reason = match outcome {
                    Ok(Err(reason)) => reason,
                    _ => format!("no answer within {} s", DEADLINE.as_secs()),
                };
                crate::mcp::diag(format_args!(
                    "skillfold serve: warning: cannot fetch the identity provider's keys ({}); {}",
                    crate::support::escape::text(&reason),
                    if self.keys().is_some() {
                        "the cached keys stay in use"
                    } else {
                        "tokens are refused until they are in"
                    }
                ));
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
                self.metrics.jwks_fetch(false);
                false
            }
        }
    }

    // Strings, not typed errors, here and in `new`, `discover` and `get_json`: each is only ever
    // shown (the warning, `/readyz`'s detail, `--oauth`'s refusal at start).
    async fn fetch(&self) -> Result<Vec<IssuerKey>, String> {
        let jwks_uri = self.discover().await?;
        let document = self.get_json(&jwks_uri).await?;
        let keys = validate::parse_key_set(&document)?;
        if keys.is_empty() {
            return Err("the key set holds no key this server can verify with".to_owned());
        }
        Ok(keys)
    }

    /// The `jwks_uri` of the issuer's metadata.
    async fn discover(&self) -> Result<Url, String> {
        let mut last = String::new();
        for url in discovery_urls(&self.issuer_url) {
            match self.get_json(&url).await {
                Ok(document) => return jwks_uri(&document, &self.issuer, &url),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// GETs `url` as JSON within [`MAX_DOCUMENT_BYTES`], counted while reading.
    async fn get_json(&self, url: &Url) -> Result<serde_json::Value, String> {
        let mut response = self
            .client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{}: {}", url.path(), crate::support::error_text::chain(&e)))?;
        if !response.status().is_success() {
            return Err(format!(
                "{}: HTTP {}",
                url.path(),
                response.status().as_u16()
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("{}: {}", url.path(), crate::support::error_text::chain(&e)))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{}: more than {MAX_DOCUMENT_BYTES} bytes",
                    url.path()
                ));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|_| format!("{}: not JSON", url.path()))
    }

    /// Fetches until a key set is in, then every [`REFRESH_PERIOD`]; runs for the server's life.
    pub async fn maintain(self: Arc<Self>) {
        while !self.refresh().await {
            tokio::time::sleep(RETRY).await;
        }
        loop {
            tokio::time::sleep(REFRESH_PERIOD).await;
            self.refresh().await;
        }
    }
}

// A string, not a typed error: the server only shows it (the fetch's reason, via `discover`).
/// The key set's URL that the metadata `document`, read from `at`, names for `issuer`: its
/// `issuer` must be `issuer` and its `jwks_uri` a URL on the origin of `at` (the issuer's).
pub fn jwks_uri(document: &serde_json::Value, issuer: &str, at: &Url) -> Result<Url, String> {
    let well_known = at.path();
    if document.get("issuer").and_then(serde_json::Value::as_str) != Some(issuer) {
        return Err(format!(
            "{well_known} names another issuer than the configured one"
        ));
    }
    let jwks_uri = document
        .get("jwks_uri")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| format!("{well_known} has no `jwks_uri`"))?;
    let jwks_uri =
        Url::parse(jwks_uri).map_err(|_| format!("{well_known}: `jwks_uri` is not a URL"))?;
    if !crate::source::origin::same_origin(&jwks_uri, at) {
        return Err(format!(
            "{well_known}: `jwks_uri` is not on the issuer's origin"
        ));
    }
    Ok(jwks_uri)
}

/// Where the metadata of `issuer` may be, in the order tried: OpenID Connect Discovery
/// (`<issuer>/.well-known/openid-configuration`), RFC 8414 (`/.well-known/oauth-authorization-server`
/// inserted before the issuer's path), OpenID Connect Discovery with the same insertion, and
/// RFC 8414's suffix appended; an issuer without a path has two.
pub fn discovery_urls(issuer: &Url) -> Vec<Url> {
    const OIDC: &str = "/.well-known/openid-configuration";
    const OAUTH: &str = "/.well-known/oauth-authorization-server";
    let path = issuer.path().trim_end_matches('/');
    let candidates = [
        format!("{path}{OIDC}"),
        format!("{OAUTH}{path}"),
        format!("{OIDC}{path}"),
        format!("{path}{OAUTH}"),
    ];
    let mut urls: Vec<Url> = Vec::new();
    for candidate in candidates {
        let mut url = issuer.clone();
        url.set_path(&candidate);
        if !urls.contains(&url) {
            urls.push(url);
        }
    }
    urls
}

#[cfg(test)]
#[path = "jwks_tests.rs"]
mod tests;
