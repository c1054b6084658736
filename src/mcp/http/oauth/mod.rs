//! `serve --listen --oauth FILE`: the server as an OAuth 2.1 resource server (the MCP
//! specification's authorization section). Agents present the short-lived JWT access tokens
//! their identity provider issues them ([`config`] names the issuer and the rules); each is
//! checked against the issuer's keys ([`jwks`]) by [`validate`], for the audience of the
//! endpoint it calls, and its claims decide the endpoint it may open: the first rule it matches.
//! A token that fails a check is 401 (`error="invalid_token"`), a valid one no rule gives this
//! endpoint is 403 (`error="insufficient_scope"`); every 401 names the endpoint's RFC 9728
//! document ([`metadata`]). A token is never logged, stored or passed on: a session is bound to
//! a hash of the issuer and the token's subject, the audit record names `sub` and `client_id`.

pub mod config;
pub mod jwks;
pub mod metadata;
pub mod validate;

use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use self::config::OAuthConfig;
use self::jwks::KeyCache;
use self::validate::Failure;
use super::metrics::Metrics;
use crate::mcp::observe::Caller;

/// Whom an accepted token names (no token text: only what the audit record keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Issuer, `sub`, `client_id`, for the audit record.
    pub caller: Caller,
    /// What sessions and in-flight bounds are keyed by: SHA-256 over the issuer and the subject.
    pub key: [u8; 32],
}

/// The verdict on a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Valid, and a rule gives it this endpoint.
    Allowed(Principal),
    /// Valid, but the first rule it matches is another endpoint's, or none matches: 403.
    NoRule,
    /// Not valid: 401.
    Invalid(Failure),
    /// No key set yet: 503.
    NoKeys,
}

impl Outcome {
    /// The bounded metrics label.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Allowed(_) => "ok",
            Outcome::NoRule => "no_rule",
            Outcome::Invalid(failure) => failure.label(),
            Outcome::NoKeys => "no_keys",
        }
    }
}

/// The resource server: its configuration and the issuer's keys.
#[derive(Debug)]
pub struct ResourceServer {
    config: OAuthConfig,
    /// The URL clients reach the server by, without a trailing `/`.
    base_url: String,
    keys: Arc<KeyCache>,
}

impl ResourceServer {
    /// A resource server for `config`, reached at `base_url` unless `public_url` says otherwise.
    pub fn new(
        config: OAuthConfig,
        base_url: &str,
        metrics: Arc<Metrics>,
    ) -> Result<ResourceServer, String> {
        let keys = Arc::new(KeyCache::new(&config.issuer, metrics)?);
        let base_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| base_url.trim_end_matches('/').to_owned());
        Ok(ResourceServer {
            config,
            base_url,
            keys,
        })
    }

    /// The key cache (to start its [`KeyCache::maintain`] task, and for the metrics).
    pub fn keys(&self) -> &Arc<KeyCache> {
        &self.keys
    }

    /// The configuration.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The URL of the endpoint at `path`.
    pub fn resource(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// The URL of the RFC 9728 document of the endpoint at `path`.
    pub fn metadata_url(&self, path: &str) -> String {
        format!("{}{}{path}", self.base_url, metadata::WELL_KNOWN)
    }

    /// The audience a token for the endpoint at `path` must hold.
    fn audience(&self, path: &str) -> String {
        self.config
            .audience
            .clone()
            .unwrap_or_else(|| self.resource(path))
    }

    /// The verdict on `token` at the endpoint at `path`, which serves `agent`.
    pub async fn authorize(&self, token: &str, path: &str, agent: Option<&str>) -> Outcome {
        let parsed = match validate::parse(token, &self.config.algorithms) {
            Ok(parsed) => parsed,
            Err(failure) => return Outcome::Invalid(failure),
        };
        let Some(mut keys) = self.keys.keys() else {
            return Outcome::NoKeys;
        };
        let mut verdict = parsed.verify(&keys);
        if verdict == Err(Failure::UnknownKey) {
            // The issuer may have rotated its key: once per cool-down, the set is fetched again.
            // A token that waited for another's fetch uses what that fetch brought.
            self.keys.refresh_for_unknown_kid().await;
            if let Some(fresh) = self.keys.keys()
                && !Arc::ptr_eq(&fresh, &keys)
            {
                keys = fresh;
                verdict = parsed.verify(&keys);
            }
        }
        if let Err(failure) = verdict {
            return Outcome::Invalid(failure);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let identity = match parsed.check_claims(&self.config.issuer, &self.audience(path), now) {
            Ok(identity) => identity,
            Err(failure) => return Outcome::Invalid(failure),
        };
        let rule = self
            .config
            .rules
            .iter()
            .find(|rule| validate::claim_holds(&identity.claims, &rule.claim, &rule.value));
        match rule {
            Some(rule) if rule.agent.as_deref() == agent => {
                let subject = identity
                    .sub
                    .as_deref()
                    .or(identity.client_id.as_deref())
                    .unwrap_or_default();
                let mut hash = Sha256::new();
                for part in ["oauth", &self.config.issuer, subject] {
                    hash.update((part.len() as u64).to_be_bytes());
                    hash.update(part.as_bytes());
                }
                Outcome::Allowed(Principal {
                    caller: Caller {
                        issuer: self.config.issuer.clone(),
                        sub: identity.sub,
                        client_id: identity.client_id,
                    },
                    key: hash.finalize().into(),
                })
            }
            _ => Outcome::NoRule,
        }
    }
}
