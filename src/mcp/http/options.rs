//! What `serve --listen` is told: the options of the command line and the defaults of its
//! bounds (request body, header time, write time, sessions, connections, requests in flight).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::oauth;
use super::tokens::Tokens;

/// The most bytes of a request body (rmcp answers 413 beyond it, without reading the rest).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long a client may take to send a request's headers before the connection is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The default bound on live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// The default bound on open connections (beyond it, [`connections::PROBE_HEADROOM`] more for
/// probes).
pub const DEFAULT_MAX_CONNECTIONS: usize = 2048;

/// The default bound on open connections from one client address that have not yet presented a
/// valid credential.
pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 64;

/// The default bound on open connections of one token (or one `--oauth` subject).
pub const DEFAULT_MAX_CONNECTIONS_PER_TOKEN: usize = 512;

/// The default bound on requests in flight that open no session (the stateless 2026-07-28
/// path, and `initialize`).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// The default bound on such requests in flight of one token.
pub const DEFAULT_MAX_IN_FLIGHT_PER_TOKEN: usize = 64;

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The descriptor.
    pub config: PathBuf,
    /// Where to listen.
    pub listen: SocketAddr,
    /// The tokens accepted (`None`: no authentication, allowed on loopback only unless
    /// `insecure_no_auth`).
    pub tokens: Option<Tokens>,
    /// Accept the JWT access tokens of this identity provider (`--oauth FILE`), besides
    /// `tokens` if both are given.
    pub oauth: Option<oauth::config::OAuthConfig>,
    /// Browser origins allowed to call (`scheme://host[:port]`); any other present `Origin` is
    /// refused.
    pub allow_origins: Vec<String>,
    /// Serve a non-loopback address without tokens.
    pub insecure_no_auth: bool,
    /// At most this many live sessions.
    pub max_sessions: usize,
    /// Sessions idle this long are closed.
    pub session_idle: Duration,
    /// Reload on a change of the descriptor or `SIGHUP`.
    pub watch: bool,
    /// How often the descriptor is checked with `watch`.
    pub poll_interval: Duration,
    /// Where to append the audit log (`-`: stderr).
    pub audit_log: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain and key (PEM files).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The tokens that may read `/metrics` (entries with `agent: null`); `None`: open.
    pub metrics_tokens: Option<Tokens>,
    /// How long a request body may take to arrive whole (then 408, and the connection closed).
    pub body_timeout: Duration,
    /// How long an answer's bytes may wait for the client to take them (then the connection is
    /// closed).
    pub write_timeout: Duration,
    /// At most this many open connections.
    pub max_connections: usize,
    /// At most this many open connections from one client address that have not yet presented
    /// a valid credential.
    pub max_connections_per_client: usize,
    /// At most this many open connections of one token (or `--oauth` subject).
    pub max_connections_per_token: usize,
    /// At most this many requests in flight that open no session.
    pub max_in_flight: usize,
    /// At most this many of them per token.
    pub max_in_flight_per_token: usize,
}
