//! `serve --listen --oauth FILE`: the server as an OAuth 2.1 resource server (the MCP
//! specification's authorization section). Agents present the short-lived JWT access tokens
//! their identity provider issues them ([`config`] names the issuer and the rules); each is
//! checked against the issuer's keys ([`jwks`]) by [`validate`], for the audience of the
//! endpoint it calls (the endpoint's own URL, RFC 8707's resource, or the configured `audience`),
//! and its claims decide the endpoint it may open: the first rule it matches. A token that fails
//! a check is 401 (`error="invalid_token"`), a valid one no rule gives this endpoint is 403
//! (`error="insufficient_scope"`); every challenge names the endpoint's RFC 9728 document
//! ([`metadata`]) and the scopes its rules name. A token is never logged, stored or passed on: a
//! session is bound to a hash of the issuer, the claim that named the principal (`sub`, else
//! `client_id`) and its value; the audit record names `sub` and `client_id`.

pub mod config;
pub mod jwks;
pub mod metadata;
pub mod validate;

use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use self::config::OAuthConfig;
use self::jwks::KeyCache;
use self::validate::JwtFailure;
use super::metrics::Metrics;
use crate::mcp::observe::Caller;

/// Whom an accepted token names (no token text: only what the audit record keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Issuer, `sub`, `client_id`, for the audit record.
    pub caller: Caller,
    /// What sessions and in-flight bounds are keyed by: SHA-256 over the issuer, the claim that
    /// named the principal and its value.
    pub key: [u8; 32],
}

/// The verdict on a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OAuthVerdict {
    /// Valid, and a rule gives it this endpoint.
    Allowed(Principal),
    /// Valid, but the first rule it matches is another endpoint's, or none matches: 403.
    NoRule,
    /// Not valid: 401.
    Invalid(JwtFailure),
    /// No key set yet: 503.
    NoKeys,
}

impl OAuthVerdict {
    /// The bounded metrics label.
    pub fn label(&self) -> &'static str {
        match self {
            OAuthVerdict::Allowed(_) => "ok",
            OAuthVerdict::NoRule => "no_rule",
            OAuthVerdict::Invalid(failure) => failure.label(),
            OAuthVerdict::NoKeys => "no_keys",
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
    // A string, not a typed error: it is only ever shown, as the `message` of `OAuthError`.
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

    /// The `scope` values the rules give the endpoint of `agent`, each once, in rule order.
    pub fn scopes(&self, agent: Option<&str>) -> Vec<&str> {
        let mut scopes: Vec<&str> = Vec::new();
        for rule in &self.config.rules {
            if rule.claim == "scope"
                && rule.agent.as_deref() == agent
                && !scopes.contains(&rule.value.as_str())
            {
                scopes.push(&rule.value);
            }
        }
        scopes
    }

    /// The `WWW-Authenticate` value of a refusal at the endpoint at `path`, which serves `agent`:
    /// its RFC 9728 document, the scopes its rules name (those that are RFC 6749 scope tokens,
    /// so the quoted string holds them as written) and, when a token was given, the RFC 6750
    /// `error`.
    pub fn challenge(&self, path: &str, agent: Option<&str>, error: Option<&str>) -> String {
        // The URL is the configuration's (checked to be a URL), never the request's.
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url(path));
        let scopes: Vec<&str> = self
            .scopes(agent)
            .into_iter()
            .filter(|scope| is_scope_token(scope))
            .collect();
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        challenge
    }

    /// The audiences a token for the endpoint at `path` may hold: the endpoint's own URL (the
    /// RFC 9728 `resource` a client asks its token for, RFC 8707) and the configured `audience`.
    fn audiences(&self, path: &str) -> Vec<String> {
        let mut audiences = vec![self.resource(path)];
        audiences.extend(self.config.audience.clone());
        audiences
    }

    /// The verdict on `token` at the endpoint at `path`, which serves `agent`.
    pub async fn authorize(&self, token: &str, path: &str, agent: Option<&str>) -> OAuthVerdict {
        let parsed = match validate::parse(token, &self.config.algorithms) {
            Ok(parsed) => parsed,
            Err(failure) => return OAuthVerdict::Invalid(failure),
        };
        let Some(mut keys) = self.keys.keys() else {
            return OAuthVerdict::NoKeys;
        };
        let mut verdict = parsed.verify(&keys);
        if verdict == Err(JwtFailure::UnknownKey) {
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
            return OAuthVerdict::Invalid(failure);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let audiences = self.audiences(path);
        let audiences: Vec<&str> = audiences.iter().map(String::as_str).collect();
        let identity = match parsed.check_claims(&self.config.issuer, &audiences, now) {
            Ok(identity) => identity,
            Err(failure) => return OAuthVerdict::Invalid(failure),
        };
        let rule = self
            .config
            .rules
            .iter()
            .find(|rule| validate::claim_holds(&identity.claims, &rule.claim, &rule.value));
        match rule {
            Some(rule) if rule.agent.as_deref() == agent => {
                let key = principal_key(&self.config.issuer, &identity);
                OAuthVerdict::Allowed(Principal {
                    caller: Caller {
                        issuer: self.config.issuer.clone(),
                        sub: identity.sub,
                        client_id: identity.client_id,
                    },
                    key,
                })
            }
            _ => OAuthVerdict::NoRule,
        }
    }
}

/// What the sessions of `identity`'s principal are bound to: SHA-256 over the issuer, the claim
/// that named the principal and its value, each prefixed by its length.
fn principal_key(issuer: &str, identity: &validate::Identity) -> [u8; 32] {
    let (claim, subject) = identity.principal();
    let mut hash = Sha256::new();
    for part in ["oauth", issuer, claim, subject] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().into()
}

/// Whether `text` is an RFC 6749 §3.3 scope token: printable ASCII without space, `"` or a backslash.
fn is_scope_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(sub: Option<&str>, client_id: Option<&str>) -> validate::Identity {
        validate::Identity {
            sub: sub.map(str::to_owned),
            client_id: client_id.map(str::to_owned),
            claims: serde_json::Map::new(),
        }
    }

    #[test]
    fn a_principal_is_the_claim_that_named_it_and_its_value() {
        let issuer = "https://idp.example";
        let by_sub = principal_key(issuer, &identity(Some("alice"), None));
        let by_client = principal_key(issuer, &identity(None, Some("alice")));
        assert_ne!(by_sub, by_client);
        // `sub` names the principal whatever `client_id` says.
        assert_eq!(
            by_sub,
            principal_key(issuer, &identity(Some("alice"), Some("bot")))
        );
        assert_ne!(
            by_sub,
            principal_key("https://other.example", &identity(Some("alice"), None))
        );
    }

    #[test]
    fn only_scope_tokens_go_into_a_challenge() {
        for good in ["skills.default", "a!#[]~", "api://skills/.default"] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\u{7f}"] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }
}
