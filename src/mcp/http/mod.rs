//! `skillfold serve --listen`: one skills server for many agents, over MCP Streamable HTTP.
//!
//! Every catalogue the descriptor defines is served at its own endpoint: the defaults at `/mcp`,
//! each agent's (its defaults plus its extras) at `/agents/<name>/mcp`; any other path is 404.
//! With `--tls-cert` and `--tls-key` it serves HTTPS ([`tls`]).
//! Each endpoint is rmcp's Streamable HTTP server ([`StreamableHttpService`](rmcp::transport::streamable_http_server::StreamableHttpService)) over the same
//! [`SkillsServer`](super::SkillsServer) handler, [`Live`] catalogues and tools as stdio, with its own session manager,
//! so a session exists only at the endpoint that opened it. hyper runs the connections (HTTP/1.1,
//! headers within 10 s, `TCP_NODELAY`), admitted within the connection caps ([`connections`]:
//! per client address until a credential is shown, then per token, and in total, with headroom
//! for probes), each request body within the body
//! timeout (408); [`jsonrpc`] reads request bodies (1 MiB, 413 while streaming) and judges
//! them as stdio judges a line (one JSON-RPC error code for one input on both transports).
//!
//! In front of rmcp this module checks `Host` and `Origin` on every path ([`guard`]), then
//! decides who gets in ([`tokens`], and with `--oauth` the identity provider's access tokens,
//! [`oauth`], which also serves the RFC 9728 documents): without a valid bearer token for the
//! endpoint, 401 (with `WWW-Authenticate: Bearer`) or 403. Every session rmcp opens, whatever
//! headers asked for it, is counted and bound to the endpoint and the token (or the access
//! token's subject) that opened it: the same session id with
//! another token, or at another endpoint, is refused with 403, an unknown id with 404, and a
//! session beyond `--max-sessions` is closed again and answered 503 with `Retry-After`; sessions
//! idle for `--session-idle` are closed ([`sessions`]); `DELETE` answers 204. `load_skill` for a
//! body on an initialised session is answered on the direct lane, without rmcp ([`direct`]). Requests that open no
//! session (the stateless 2026-07-28 path, `initialize`) are bounded in flight per token and
//! in total. `GET /healthz` answers 200 while the process
//! runs; `GET /readyz` answers 200 when every catalogue was built from all the bundles it
//! approves, 503 with a JSON reason otherwise (bundles left out at start, until a reload serves
//! them); neither needs a token nor shows a skill. `GET /metrics` is the Prometheus exposition
//! ([`metrics`]), behind its own tokens when `--metrics-tokens` names some. With `--watch`, one watcher re-prepares every source and swaps all catalogues
//! together ([`super::reload::watch`]).
//!
//! The code reads in that order: [`run`] loads the catalogues, [`assembly`] builds the server and
//! accepts connections, every request goes through the named steps of [`route`] (the probes in
//! [`probes`], authentication in [`auth`], the session table in [`sessions`]), and the answers
//! the server writes itself are [`replies`].

mod assembly;
mod auth;
mod body;
pub mod connections;
mod direct;
pub mod guard;
pub mod jsonrpc;
pub mod limits;
pub mod metrics;
pub mod oauth;
mod options;
mod probes;
mod replies;
mod route;
mod sessions;
pub(crate) mod splice;
mod state;
pub mod tls;
pub mod tokens;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use self::options::{
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_MAX_CONNECTIONS_PER_TOKEN,
    DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT_PER_TOKEN, DEFAULT_MAX_SESSIONS, HttpOptions,
};
use super::reload::{self, Lives};
use super::{Live, ServeError, Served, diag, warn_unlisted};
use crate::support::escape;

/// The refusal of the address and token combination before anything starts.
fn check_exposure(options: &HttpOptions) -> Result<(), ServeError> {
    if !authenticates(options) && !options.listen.ip().is_loopback() && !options.insecure_no_auth {
        return Err(ServeError::Insecure(options.listen));
    }
    if let Some(config) = &options.oauth
        && options.listen.ip().is_unspecified()
        && config.public_url.is_none()
    {
        // Every interface has no one URL: the audience and the metadata need the one clients use.
        return Err(ServeError::OAuth(oauth::config::OAuthError {
            source_name: "--oauth".to_owned(),
            message: format!(
                "`public_url` is required when listening on {} (the URL clients use names the audience and the metadata)",
                options.listen
            ),
        }));
    }
    Ok(())
}

/// Whether requests are authenticated at all (static tokens, OAuth, or both).
fn authenticates(options: &HttpOptions) -> bool {
    options.tokens.is_some() || options.oauth.is_some()
}

/// Serves every catalogue of the descriptor over HTTP until SIGTERM or SIGINT.
pub fn run(options: HttpOptions) -> Result<(), ServeError> {
    check_exposure(&options)?;
    if !authenticates(&options) && !options.listen.ip().is_loopback() {
        diag(format_args!(
            "skillfold serve: warning: serving {} without authentication (--insecure-no-auth): anyone who reaches it gets every agent's skills",
            options.listen
        ));
    }
    let (_, plan) = crate::ops::check::load_plan(&options.config)
        .map_err(|e| ServeError::Load(reload::ReloadError::from(e)))?;
    let agents: Vec<Option<String>> = std::iter::once(None)
        .chain(plan.agents.keys().cloned().map(Some))
        .collect();
    let mut lives: Lives = Vec::new();
    for agent in &agents {
        let loaded = reload::load(&options.config, agent.as_deref())?;
        let served = Served::new(loaded.catalogue).with_missing(
            loaded
                .failures
                .iter()
                .map(|f| format!("{f} [{}]", f.code))
                .collect(),
        );
        if agent.is_none() {
            for failure in &loaded.failures {
                diag(format_args!(
                    "skillfold serve: warning: {} [{}]",
                    escape::text(&failure.to_string()),
                    failure.code
                ));
            }
        }
        warn_unlisted(&served);
        lives.push((agent.clone(), Live::new(served)));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let shutdown = Arc::new(AtomicBool::new(false));
    let result = runtime.block_on(assembly::serve(lives, &options, Arc::clone(&shutdown)));
    shutdown.store(true, Ordering::Relaxed);
    runtime.shutdown_timeout(Duration::from_secs(5));
    result
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::tokens::Tokens;
    use super::*;

    fn options(listen: &str, tokens: bool, insecure: bool) -> HttpOptions {
        HttpOptions {
            config: PathBuf::from("skillfold.yaml"),
            listen: listen.parse().unwrap(),
            tokens: tokens
                .then(|| Tokens::parse("[]", "t", &std::collections::BTreeSet::new()).unwrap()),
            oauth: None,
            allow_origins: Vec::new(),
            insecure_no_auth: insecure,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: Duration::from_secs(30 * 60),
            watch: false,
            poll_interval: Duration::from_secs(2),
            audit_log: None,
            tls: None,
            metrics_tokens: None,
            body_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            max_connections_per_token: DEFAULT_MAX_CONNECTIONS_PER_TOKEN,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_per_token: DEFAULT_MAX_IN_FLIGHT_PER_TOKEN,
        }
    }

    #[test]
    fn a_reachable_address_needs_tokens_or_an_explicit_insecure_choice() {
        assert!(check_exposure(&options("0.0.0.0:8080", false, false)).is_err());
        assert!(check_exposure(&options("[::]:8080", false, false)).is_err());
        assert!(check_exposure(&options("0.0.0.0:8080", true, false)).is_ok());
        assert!(check_exposure(&options("0.0.0.0:8080", false, true)).is_ok());
        assert!(check_exposure(&options("127.0.0.1:8080", false, false)).is_ok());
        assert!(check_exposure(&options("[::1]:8080", false, false)).is_ok());
    }

    #[test]
    fn oauth_counts_as_authentication_and_every_interface_needs_a_public_url() {
        let config = |public_url: Option<&str>| oauth::config::OAuthConfig {
            issuer: "https://idp.example".to_owned(),
            audience: None,
            public_url: public_url.map(str::to_owned),
            algorithms: oauth::validate::Algorithm::ALL.to_vec(),
            rules: Vec::new(),
        };
        let mut reachable = options("10.0.0.1:8080", false, false);
        reachable.oauth = Some(config(None));
        assert!(check_exposure(&reachable).is_ok());
        let mut any = options("0.0.0.0:8080", false, false);
        any.oauth = Some(config(None));
        let err = check_exposure(&any).unwrap_err();
        assert_eq!(err.code().to_string(), "invalid_oauth");
        assert!(
            err.to_string().contains("`public_url` is required"),
            "{err}"
        );
        any.oauth = Some(config(Some("https://skills.example")));
        assert!(check_exposure(&any).is_ok());
    }
}
