//! The state of `serve --listen` every request reads: the endpoints (one catalogue, its handler
//! and its rmcp service each) and the server around them (tokens, sessions, caps, metrics, the
//! guard, OAuth and the splicer), built once by [`super::assembly`] and shared by every
//! connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::metrics::Metrics;
use super::tokens::Tokens;
use super::{guard, limits, oauth, splice};
use crate::mcp::{Live, SkillsServer};

/// One endpoint: a catalogue and its MCP service.
pub(super) struct Endpoint {
    pub(super) agent: Option<String>,
    pub(super) path: String,
    pub(super) live: Arc<Live>,
    /// The handler every session of the endpoint gets, for the calls the direct lane answers
    /// ([`super::direct`]).
    pub(super) handler: SkillsServer,
    pub(super) service: StreamableHttpService<SkillsServer, LocalSessionManager>,
    pub(super) sessions: Arc<LocalSessionManager>,
}

/// Everything a request needs: built once by [`assembly`], shared by every connection's task;
/// a request goes through [`route`]'s steps ([`Server::handle`]).
pub(super) struct Server {
    pub(super) endpoints: Vec<Endpoint>,
    pub(super) tokens: Option<Tokens>,
    /// The live sessions by id ([`super::sessions`]).
    pub(super) sessions: Mutex<HashMap<String, Session>>,
    /// Held while a new session is counted and bound, so sessions opened together are
    /// counted one after the other.
    pub(super) admission: tokio::sync::Mutex<()>,
    pub(super) max_sessions: usize,
    pub(super) metrics: Arc<Metrics>,
    pub(super) metrics_tokens: Option<Tokens>,
    pub(super) guard: guard::HostOriginGuard,
    pub(super) in_flight: Arc<limits::InFlight>,
    pub(super) body_timeout: Duration,
    /// How long an answer's bytes may wait for the client ([`limits::WriteDeadline`]).
    pub(super) write_timeout: Duration,
    pub(super) oauth: Option<Arc<oauth::ResourceServer>>,
    /// Splices the prebuilt bytes of skill bodies into the answers ([`splice`]).
    pub(super) splicer: Option<Arc<splice::Splicer>>,
}

/// A session and who opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Binding {
    pub(super) endpoint: usize,
    pub(super) token: Option<[u8; 32]>,
}

/// A live session as the server knows it ([`super::sessions`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Session {
    /// Who opened it, and where.
    pub(super) binding: Binding,
    /// The client has said `notifications/initialized` (and rmcp took it).
    pub(super) ready: bool,
    /// When a request last named it.
    pub(super) last_request: Instant,
}
