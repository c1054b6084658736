//! Who a request is: the route's authentication step. The bearer token is judged by the static
//! tokens ([`super::tokens`]) first, then, with `--oauth`, by the identity provider's access
//! tokens ([`super::oauth`]); a request either accepts gets in, bound to the key its sessions
//! and in-flight place count for (a static token's hash, or the hash of a JWT's issuer and
//! subject). `/metrics` has its own tokens (`--metrics-tokens`), judged here too.

use hyper::{StatusCode, header};

use super::body::Body;
use super::oauth;
use super::replies::{busy, oauth_refusal, token_for_another_endpoint, unauthorized};
use super::state::{Endpoint, Server};
use super::tokens::{self, TokenVerdict};
use crate::mcp::observe::Caller;

impl Server {
    /// 4. The route's step: who a request's bearer token is, at `endpoint`: `Ok((None, None))`
    ///    without authentication, the key its session and in-flight place are bound to (a
    ///    static token's hash, or the hash of a JWT's issuer and subject) with who a JWT named,
    ///    or the refusal (401, 403, or 503 before the issuer's keys). A request is accepted if
    ///    either the static tokens or the identity provider accept it.
    pub(super) async fn authenticate(
        &self,
        headers: &hyper::HeaderMap,
        endpoint: &Endpoint,
    ) -> Result<(Option<[u8; 32]>, Option<Caller>), hyper::Response<Body>> {
        if self.tokens.is_none() && self.oauth.is_none() {
            return Ok((None, None));
        }
        let authorization = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
        let agent = endpoint.agent.as_deref();
        if let Some(tokens) = &self.tokens {
            match tokens.authorize(authorization, agent) {
                TokenVerdict::Allowed(token) => return Ok((token, None)),
                TokenVerdict::Forbidden => return Err(token_for_another_endpoint()),
                TokenVerdict::Unauthenticated => {}
            }
        }
        let Some(oauth) = &self.oauth else {
            return Err(unauthorized());
        };
        let challenge = |error| oauth.challenge(&endpoint.path, agent, error);
        let Some(token) = authorization
            .and_then(tokens::bearer)
            .and_then(|t| std::str::from_utf8(t).ok())
        else {
            return Err(oauth_refusal(
                StatusCode::UNAUTHORIZED,
                &challenge(None),
                false,
            ));
        };
        let outcome = oauth.authorize(token, &endpoint.path, agent).await;
        self.metrics.oauth_validation(outcome.label());
        match outcome {
            oauth::OAuthVerdict::Allowed(principal) => {
                Ok((Some(principal.key), Some(principal.caller)))
            }
            oauth::OAuthVerdict::NoRule => Err(oauth_refusal(
                StatusCode::FORBIDDEN,
                &challenge(Some("insufficient_scope")),
                true,
            )),
            oauth::OAuthVerdict::Invalid(_) => Err(oauth_refusal(
                StatusCode::UNAUTHORIZED,
                &challenge(Some("invalid_token")),
                true,
            )),
            oauth::OAuthVerdict::NoKeys => Err(busy(
                "the identity provider's keys are not in yet; try again later",
            )),
        }
    }

    /// Whether a request may read `/metrics`: always without `--metrics-tokens`, else with one
    /// of them (an entry with `agent: null`).
    pub(super) fn may_read_metrics(&self, headers: &hyper::HeaderMap) -> bool {
        match &self.metrics_tokens {
            None => true,
            Some(tokens) => {
                let authorization = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
                matches!(
                    tokens.authorize(authorization, None),
                    TokenVerdict::Allowed(_)
                )
            }
        }
    }
}
