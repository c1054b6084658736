//! [`ServeError`]: why `skillfold serve` could not start or stopped with an error, over stdio or
//! HTTP, each with its stable code ([`super::code::ServeCode`], or the reload's for a catalogue
//! that did not load).

#[cfg(feature = "http")]
use std::path::PathBuf;

use crate::support::error_code::ErrorCode;
#[cfg(feature = "http")]
use crate::support::escape;

use super::code::ServeCode;
#[cfg(feature = "http")]
use super::http;
use super::reload::ReloadError;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The catalogue could not be loaded at start.
    #[error(transparent)]
    Load(#[from] ReloadError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP session could not start (the client closed the connection or sent garbage).
    #[error("the MCP session did not start: {0}")]
    Session(String),
    /// A reachable address without tokens, and no `--insecure-no-auth`.
    #[cfg(feature = "http")]
    #[error(
        "refusing to serve {0} without authentication: give --tokens FILE (or SKILLFOLD_SERVE_TOKENS) or --oauth FILE, listen on a loopback address, or pass --insecure-no-auth to accept that anyone who reaches it gets every agent's skills"
    )]
    Insecure(std::net::SocketAddr),
    /// The address cannot be listened on.
    #[cfg(feature = "http")]
    #[error("cannot listen on {0}: {1}")]
    Listen(std::net::SocketAddr, std::io::Error),
    /// The TLS certificate or key cannot be used.
    #[cfg(feature = "http")]
    #[error("cannot serve HTTPS: {0}")]
    Tls(http::tls::TlsError),
    /// The `--oauth` configuration cannot be used as given (it names the rule).
    #[cfg(feature = "http")]
    #[error("{0}")]
    OAuth(http::oauth::config::OAuthError),
    /// The audit log cannot be opened.
    #[cfg(feature = "http")]
    #[error("cannot open the audit log `{}`: {error}", escape::path(.path))]
    AuditLog {
        /// The path given.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl ServeError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ServeError::Load(e) => e.code(),
            ServeError::Runtime(_) => ServeCode::RuntimeFailed.into(),
            ServeError::Session(_) => ServeCode::SessionFailed.into(),
            #[cfg(feature = "http")]
            ServeError::Insecure(_) => ServeCode::InsecureListen.into(),
            #[cfg(feature = "http")]
            ServeError::Listen(..) => ServeCode::ListenFailed.into(),
            #[cfg(feature = "http")]
            ServeError::AuditLog { .. } => ServeCode::AuditLogFailed.into(),
            #[cfg(feature = "http")]
            ServeError::Tls(_) => ServeCode::InvalidTls.into(),
            #[cfg(feature = "http")]
            ServeError::OAuth(e) => e.code().into(),
        }
    }
}

crate::support::error_code::coded_by_code!(ServeError);
