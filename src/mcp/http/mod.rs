//! `skillfold serve --listen`: one skills server for many agents, over MCP Streamable HTTP.
//!
//! Every catalogue the descriptor defines is served at its own endpoint: the defaults at `/mcp`,
//! each agent's (its defaults plus its extras) at `/agents/<name>/mcp`; any other path is 404.
//! With `--tls-cert` and `--tls-key` it serves HTTPS ([`tls`]).
//! Each endpoint is rmcp's Streamable HTTP server ([`StreamableHttpService`]) over the same
//! [`SkillsServer`] handler, [`Live`] catalogues and tools as stdio, with its own session manager,
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
//! idle for `--session-idle` are closed by rmcp; `DELETE` answers 204. Requests that open no
//! session (the stateless 2026-07-28 path, `initialize`) are bounded in flight per token and
//! in total. `GET /healthz` answers 200 while the process
//! runs; `GET /readyz` answers 200 when every catalogue was built from all the bundles it
//! approves, 503 with a JSON reason otherwise (bundles left out at start, until a reload serves
//! them); neither needs a token nor shows a skill. `GET /metrics` is the Prometheus exposition
//! ([`metrics`]), behind its own tokens when `--metrics-tokens` names some. With `--watch`, one watcher re-prepares every source and swaps all catalogues
//! together ([`super::reload::watch`]).

pub mod connections;
pub mod guard;
pub mod jsonrpc;
pub mod limits;
pub mod metrics;
pub mod oauth;
pub(crate) mod splice;
pub mod tls;
pub mod tokens;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode, header};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::reload::{self, Lives};
use super::{Live, ServeError, Served, SkillsServer, diag, warn_unlisted};
use crate::support::escape;

use self::metrics::Metrics;
use self::tokens::{Tokens, Verdict};

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

/// One endpoint: a catalogue and its MCP service.
struct Endpoint {
    agent: Option<String>,
    path: String,
    live: Arc<Live>,
    service: StreamableHttpService<SkillsServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
}

/// A session and who opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Binding {
    endpoint: usize,
    token: Option<[u8; 32]>,
}

/// Everything a request needs.
struct Server {
    endpoints: Vec<Endpoint>,
    tokens: Option<Tokens>,
    bindings: Mutex<HashMap<String, Binding>>,
    /// Held while a new session is counted and bound, so sessions opened together are
    /// counted one after the other.
    admission: tokio::sync::Mutex<()>,
    max_sessions: usize,
    metrics: Arc<Metrics>,
    metrics_tokens: Option<Tokens>,
    guard: guard::Guard,
    in_flight: Arc<limits::InFlight>,
    body_timeout: Duration,
    oauth: Option<Arc<oauth::ResourceServer>>,
    /// Splices the prebuilt bytes of skill bodies into the answers ([`splice`]).
    splicer: Option<Arc<splice::Splicer>>,
}

type Body = BoxBody<Bytes, Infallible>;

/// A request's body as the server reads it: whole within the body timeout.
type Incoming = limits::Deadline<hyper::body::Incoming>;

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
    let result = runtime.block_on(serve(lives, &options, Arc::clone(&shutdown)));
    shutdown.store(true, Ordering::Relaxed);
    runtime.shutdown_timeout(Duration::from_secs(5));
    result
}

async fn serve(
    lives: Lives,
    options: &HttpOptions,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServeError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).map_err(ServeError::Runtime)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Runtime)?;
    reload::hold_hangup().map_err(ServeError::Runtime)?;
    let tls = match &options.tls {
        Some((cert, key)) => Some(tls::acceptor(cert, key).map_err(ServeError::Tls)?),
        None => None,
    };
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| ServeError::Listen(options.listen, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ServeError::Listen(options.listen, e))?;
    let loopback = options.listen.ip().is_loopback();
    // The server's own origins on loopback are known only once the port is.
    let guard = guard::Guard::new(
        loopback,
        bound.port(),
        tls.is_some(),
        &options.allow_origins,
    );
    let mut config = StreamableHttpServerConfig::default();
    let cancel = config.cancellation_token.clone();
    config.max_request_body_bytes = MAX_BODY_BYTES;
    config.allowed_origins = guard.origins().to_vec();
    config = config.enforce_origin_validation();
    if !loopback {
        // Behind a Service or an ingress the Host is a name this process cannot know; the
        // tokens and the Origin check guard it instead.
        config = config.disable_allowed_hosts();
    }
    let metrics = Arc::new(Metrics::new());
    let oauth = match &options.oauth {
        None => None,
        Some(config) => {
            let scheme = if tls.is_some() { "https" } else { "http" };
            let server = oauth::ResourceServer::new(
                config.clone(),
                &format!("{scheme}://{bound}"),
                Arc::clone(&metrics),
            )
            .map_err(|message| {
                ServeError::OAuth(oauth::config::OAuthError {
                    source_name: "--oauth".to_owned(),
                    message,
                })
            })?;
            let server = Arc::new(server);
            tokio::spawn(Arc::clone(server.keys()).maintain());
            Some(server)
        }
    };
    let mut observers: Vec<Arc<dyn super::observe::Observer>> = vec![metrics.clone()];
    if let Some(path) = &options.audit_log {
        let audit =
            Arc::new(
                super::audit::AuditLog::open(path).map_err(|error| ServeError::AuditLog {
                    path: path.clone(),
                    error,
                })?,
            );
        tokio::spawn(reopen_on_hangup(Arc::clone(&audit)));
        observers.push(audit);
    }
    let observer: Arc<dyn super::observe::Observer> = Arc::new(super::observe::Fanout(observers));
    let splicer = splice::Splicer::new().map(Arc::new);
    let endpoints = lives
        .iter()
        .map(|(agent, live)| {
            let observer = Arc::clone(&observer);
            let mut manager = LocalSessionManager::default();
            manager.session_config.keep_alive = Some(options.session_idle);
            let sessions = Arc::new(manager);
            let handler_live = Arc::clone(live);
            let watch = options.watch;
            let endpoint_agent = agent.clone();
            let splicer = splicer.clone();
            Endpoint {
                agent: agent.clone(),
                path: agent
                    .as_ref()
                    .map_or_else(|| "/mcp".to_owned(), |a| format!("/agents/{a}/mcp")),
                live: Arc::clone(live),
                service: StreamableHttpService::new(
                    move || {
                        // Remote clients get `skill://` locations, never the server's paths.
                        Ok(SkillsServer::new(Arc::clone(&handler_live), watch)
                            .remote()
                            .observed(endpoint_agent.as_deref(), Arc::clone(&observer))
                            .spliced(splicer.clone()))
                    },
                    Arc::clone(&sessions),
                    config.clone(),
                ),
                sessions,
            }
        })
        .collect();
    let server = Arc::new(Server {
        endpoints,
        tokens: options.tokens.clone(),
        bindings: Mutex::new(HashMap::new()),
        admission: tokio::sync::Mutex::new(()),
        max_sessions: options.max_sessions,
        metrics: Arc::clone(&metrics),
        metrics_tokens: options.metrics_tokens.clone(),
        guard,
        in_flight: limits::InFlight::new(options.max_in_flight, options.max_in_flight_per_token),
        body_timeout: options.body_timeout,
        oauth,
        splicer,
    });
    let connections = connections::Connections::new(
        options.max_connections,
        options.max_connections_per_client,
        options.max_connections_per_token,
        Arc::clone(&metrics),
    );
    let paths: Vec<&str> = server.endpoints.iter().map(|e| e.path.as_str()).collect();
    let scheme = if tls.is_some() { "https" } else { "http" };
    diag(format_args!(
        "skillfold serve: listening on {scheme}://{bound} ({})",
        escape::text(&paths.join(", "))
    ));
    if options.watch {
        tokio::spawn(reload::watch(
            lives,
            reload::WatchOptions {
                config: options.config.clone(),
                poll_interval: options.poll_interval,
                start_failed: server
                    .endpoints
                    .iter()
                    .any(|e| !e.live.current().missing().is_empty()),
                on_reload: Some(reload::OnReload(Arc::new(move |ok| metrics.reload(ok)))),
            },
            Arc::clone(&shutdown),
        ));
    }
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        };
        let Ok((stream, client)) = accepted else {
            // A failed accept (out of descriptors) must not end the server; try again shortly.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // Over every cap the connection is closed at once, before it costs anything more; over
        // its address's, it waits for a place in its own task.
        let admission = connections.admit(client.ip());
        if matches!(admission, connections::Admission::Refused) {
            continue;
        }
        let server = Arc::clone(&server);
        let tls = tls.clone();
        tokio::spawn(async move {
            let admission = match admission {
                connections::Admission::Wait(waiter) => waiter.admitted(&stream).await,
                admission => admission,
            };
            let (slot, probe) = match admission {
                connections::Admission::Full(slot) => (slot, false),
                connections::Admission::Probe(slot) => (slot, true),
                connections::Admission::Wait(_) | connections::Admission::Refused => return,
            };
            let stream = prepare(stream);
            let limit = if probe {
                connections::PROBE_HEADER_TIMEOUT
            } else {
                HEADER_TIMEOUT
            };
            let link = slot.link();
            let served = async {
                match tls {
                    None => connection(stream, server, probe, link.clone()).await,
                    Some(tls) => {
                        // A handshake that stalls is dropped like headers that stall.
                        if let Ok(Ok(stream)) =
                            tokio::time::timeout(limit, tls.accept(stream)).await
                        {
                            connection(stream, server, probe, link.clone()).await;
                        }
                    }
                }
            };
            // Closed (dropped) when it has to make room for another ([`connections`]).
            tokio::select! {
                () = served => {}
                () = link.evicted() => {}
            }
            drop(slot);
        });
    }
    cancel.cancel();
    shutdown.store(true, Ordering::Relaxed);
    Ok(())
}

/// Sets up an accepted connection before hyper (or TLS) gets it: `TCP_NODELAY`, so an answer
/// written in more than one segment is not held back by Nagle's algorithm waiting for a delayed
/// ACK (~40 ms at every few answers).
fn prepare(stream: tokio::net::TcpStream) -> tokio::net::TcpStream {
    // A socket that refuses the option still serves, only slower.
    let _ = stream.set_nodelay(true);
    stream
}

/// Serves HTTP/1.1 on one connection, headers within [`HEADER_TIMEOUT`], each request body
/// within the body timeout (else 408, and the connection closed). A `probe` connection (over
/// the connection caps) answers one request, `GET /healthz` or `GET /readyz`, and is closed.
/// Each request carries the connection's `link`, marked busy until its answer's last byte.
async fn connection<I>(io: I, server: Arc<Server>, probe: bool, link: connections::Link)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
        let server = Arc::clone(&server);
        let link = link.clone();
        async move {
            if probe {
                return Ok::<_, Infallible>(server.probe(request).await);
            }
            let busy = link.busy();
            let timed_out = Arc::new(AtomicBool::new(false));
            let limit = server.body_timeout;
            let mut request =
                request.map(|body| limits::Deadline::new(body, limit, Arc::clone(&timed_out)));
            request.extensions_mut().insert(link.clone());
            let response = server.handle(request).await;
            if timed_out.load(Ordering::Relaxed) {
                return Ok(body_timed_out());
            }
            if link.is_authenticated() {
                // Never closed to make room now: whether it idles no longer matters.
                return Ok(response);
            }
            Ok(response.map(|body| limits::Holding::new(body, busy).boxed()))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(if probe {
            connections::PROBE_HEADER_TIMEOUT
        } else {
            HEADER_TIMEOUT
        })
        .keep_alive(!probe);
    let _ = builder
        .serve_connection(hyper_util::rt::TokioIo::new(io), service)
        .await;
}

/// The answer to a body that did not arrive in time; the connection is closed after it.
fn body_timed_out() -> Response<Body> {
    let mut response = json(
        StatusCode::REQUEST_TIMEOUT,
        serde_json::json!({"error": "the request body did not arrive in time"}),
    );
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// Opens the audit log again on every `SIGHUP` (log rotation).
async fn reopen_on_hangup(audit: Arc<super::audit::AuditLog>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangup) = signal(SignalKind::hangup()) else {
        return;
    };
    while hangup.recv().await.is_some() {
        if let Err(e) = audit.reopen() {
            diag(format_args!(
                "skillfold serve: warning: cannot reopen the audit log: {e}"
            ));
        }
    }
}

impl Server {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let response = self.route(request).await;
        self.metrics.http_request(response.status().as_u16());
        response
    }

    /// A request on a connection admitted for probes only: `GET /healthz` and `GET /readyz`
    /// are answered (behind the same checks), anything else gets 503.
    async fn probe(&self, request: Request<hyper::body::Incoming>) -> Response<Body> {
        let is_probe = request.method() == Method::GET
            && matches!(request.uri().path(), "/healthz" | "/readyz");
        if is_probe {
            let timed_out = Arc::new(AtomicBool::new(false));
            let limit = self.body_timeout;
            return self
                .handle(request.map(|body| limits::Deadline::new(body, limit, timed_out)))
                .await;
        }
        self.metrics
            .http_request(StatusCode::SERVICE_UNAVAILABLE.as_u16());
        let mut response = busy(
            "too many connections; try again later (this one only answers /healthz and /readyz)",
        );
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        response
    }

    async fn route(&self, request: Request<Incoming>) -> Response<Body> {
        // Every path, the probes and /metrics included: a page that rebinds a name to this
        // address reads nothing.
        if let Err(refusal) = self.guard.check(request.headers()) {
            let status = match refusal {
                guard::Refusal::BadHost | guard::Refusal::Repeated => StatusCode::BAD_REQUEST,
                guard::Refusal::ForeignHost | guard::Refusal::ForeignOrigin => {
                    StatusCode::FORBIDDEN
                }
            };
            return json(status, serde_json::json!({"error": refusal.message()}));
        }
        let path = request.uri().path();
        if request.method() == Method::GET {
            match path {
                "/healthz" => return plain(StatusCode::OK, "ok\n"),
                "/readyz" => return self.readiness(),
                "/metrics" => {
                    if let Some(tokens) = &self.metrics_tokens {
                        let authorization = request
                            .headers()
                            .get(header::AUTHORIZATION)
                            .map(|v| v.as_bytes());
                        if !matches!(tokens.authorize(authorization, None), Verdict::Allowed(_)) {
                            return unauthorized();
                        }
                    }
                    return self.exposition().await;
                }
                _ => {}
            }
            if let Some(oauth) = &self.oauth
                && let Some(endpoint_path) = oauth::metadata::endpoint_path(path)
            {
                return match self.endpoints.iter().find(|e| e.path == endpoint_path) {
                    Some(e) => json(
                        StatusCode::OK,
                        oauth::metadata::document(oauth, &e.path, e.agent.as_deref()),
                    ),
                    None => json(
                        StatusCode::NOT_FOUND,
                        serde_json::json!({"error": "no MCP endpoint has this metadata"}),
                    ),
                };
            }
        }
        let Some(index) = self.endpoints.iter().position(|e| e.path == path) else {
            return json(
                StatusCode::NOT_FOUND,
                serde_json::json!({"error": "no MCP endpoint here: /mcp, or /agents/<name>/mcp for an agent the descriptor names"}),
            );
        };
        let endpoint = &self.endpoints[index];
        let (token, caller) = match self.authenticate(request.headers(), endpoint).await {
            Ok(accepted) => accepted,
            Err(refusal) => return refusal,
        };
        // Its connection counts for the token from now on, within the token's bound.
        if let (Some(key), Some(link)) = (token, request.extensions().get::<connections::Link>())
            && link.authenticated(key).is_err()
        {
            return too_many_connections();
        }
        let mut request = request;
        if let Some(caller) = caller {
            // For the audit record: who the access token named (never the token).
            request.extensions_mut().insert(caller);
        }
        let binding = Binding {
            endpoint: index,
            token,
        };
        let session = request
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().map(str::to_owned));
        let session = match session {
            None => None,
            Some(Ok(id)) => Some(id),
            Some(Err(_)) => return no_such_session(),
        };
        if let Some(id) = &session {
            // Every session is bound when it opens: an id that is not bound is no session of
            // this server (or one that is gone).
            match self.bindings().get(id).copied() {
                Some(bound) if bound == binding => {}
                Some(_) => {
                    return json(
                        StatusCode::FORBIDDEN,
                        serde_json::json!({"error": "this session was opened at another endpoint or with another token"}),
                    );
                }
                None => return no_such_session(),
            }
        }
        let method = request.method().clone();
        // A request without a session (the stateless 2026-07-28 path, or an `initialize`)
        // holds a place in flight until its answer has been sent.
        let flight = match &session {
            Some(_) => None,
            None => match self.in_flight.enter(token) {
                Ok(flight) => Some(flight),
                Err(limits::Busy::Token) => {
                    let mut response = json(
                        StatusCode::TOO_MANY_REQUESTS,
                        serde_json::json!({"error": "too many requests in flight for this token; try again later"}),
                    );
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                    return response;
                }
                Err(limits::Busy::Server) => {
                    return busy("too many requests in flight; try again later");
                }
            },
        };
        // Every POST body is judged as stdio judges a line ([`jsonrpc`]) before rmcp reads it,
        // within the request's place in flight (a body still arriving holds it).
        let request = match jsonrpc::screen(request).await {
            Ok(request) => request,
            Err(refusal) => return refusal,
        };
        let mut response = endpoint.service.handle(request).await;
        if let Some(splicer) = &self.splicer {
            response = splice::response(splicer, response).await;
        }
        if session.is_none()
            && let Some(id) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        {
            // rmcp opened a session, whatever headers asked for it: counted and bound here, or
            // closed again.
            if !self.admit(endpoint, id, binding).await {
                let mut response = json(
                    StatusCode::SERVICE_UNAVAILABLE,
                    serde_json::json!({"error": "too many live sessions; try again later"}),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("30"));
                return response;
            }
        }
        if method == Method::DELETE
            && let Some(id) = &session
            && response.status().is_success()
        {
            self.bindings().remove(id);
            // The session is gone: 204 (clients accept 200 or 204, not rmcp's 202).
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
                *response.body_mut() = full(Bytes::new());
                response.headers_mut().remove(header::CONTENT_LENGTH);
            }
        }
        match flight {
            None => response,
            Some(flight) => response.map(|body| limits::Holding::new(body, flight).boxed()),
        }
    }

    /// Who a request's bearer token is, at `endpoint`: `Ok((None, None))` without
    /// authentication, the key its session and in-flight place are bound to (a static token's
    /// hash, or the hash of a JWT's issuer and subject) with who a JWT named, or the refusal (401, 403, or 503 before the issuer's keys).
    /// A request is accepted if either the static tokens or the identity provider accept it.
    async fn authenticate(
        &self,
        headers: &hyper::HeaderMap,
        endpoint: &Endpoint,
    ) -> Result<(Option<[u8; 32]>, Option<super::observe::Caller>), Response<Body>> {
        if self.tokens.is_none() && self.oauth.is_none() {
            return Ok((None, None));
        }
        let authorization = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
        let agent = endpoint.agent.as_deref();
        let forbidden = || {
            json(
                StatusCode::FORBIDDEN,
                serde_json::json!({"error": "this token is for another endpoint"}),
            )
        };
        if let Some(tokens) = &self.tokens {
            match tokens.authorize(authorization, agent) {
                Verdict::Allowed(token) => return Ok((token, None)),
                Verdict::Forbidden => return Err(forbidden()),
                Verdict::Unauthenticated => {}
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
            oauth::Outcome::Allowed(principal) => Ok((Some(principal.key), Some(principal.caller))),
            oauth::Outcome::NoRule => Err(oauth_refusal(
                StatusCode::FORBIDDEN,
                &challenge(Some("insufficient_scope")),
                true,
            )),
            oauth::Outcome::Invalid(_) => Err(oauth_refusal(
                StatusCode::UNAUTHORIZED,
                &challenge(Some("invalid_token")),
                true,
            )),
            oauth::Outcome::NoKeys => Err(busy(
                "the identity provider's keys are not in yet; try again later",
            )),
        }
    }

    /// Counts and binds a session rmcp has just opened, or closes it when `--max-sessions`
    /// are live already.
    async fn admit(&self, endpoint: &Endpoint, id: String, binding: Binding) -> bool {
        let _admission = self.admission.lock().await;
        let mut live = std::collections::HashSet::new();
        for endpoint in &self.endpoints {
            live.extend(
                endpoint
                    .sessions
                    .sessions
                    .read()
                    .await
                    .keys()
                    .map(|k| k.to_string()),
            );
        }
        let admitted = {
            let mut bindings = self.bindings();
            bindings.retain(|id, _| live.contains(id));
            if bindings.len() < self.max_sessions {
                bindings.insert(id.clone(), binding);
                true
            } else {
                false
            }
        };
        if !admitted {
            let _ = endpoint.sessions.close_session(&id.into()).await;
        }
        admitted
    }

    fn bindings(&self) -> std::sync::MutexGuard<'_, HashMap<String, Binding>> {
        self.bindings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions are open at every endpoint.
    async fn live_sessions(&self) -> usize {
        let mut count = 0;
        for endpoint in &self.endpoints {
            count += endpoint.sessions.sessions.read().await.len();
        }
        count
    }

    async fn exposition(&self) -> Response<Body> {
        let sessions = self.live_sessions().await;
        let skills: Vec<(Option<&str>, usize)> = self
            .endpoints
            .iter()
            .map(|e| {
                (
                    e.agent.as_deref(),
                    e.live.current().catalogue().skills().count(),
                )
            })
            .collect();
        let mut response = Response::new(full(self.metrics.render(sessions, &skills)));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(metrics::CONTENT_TYPE),
        );
        response
    }

    fn readiness(&self) -> Response<Body> {
        if let Some(oauth) = &self.oauth
            && oauth.keys().keys().is_none()
        {
            return json(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({
                    "ready": false,
                    "reason": "the identity provider's keys (--oauth) are not fetched yet",
                    "detail": oauth.keys().last_error(),
                }),
            );
        }
        let waiting: Vec<String> = self
            .endpoints
            .iter()
            .filter(|e| !e.live.current().missing().is_empty())
            .map(|e| e.path.clone())
            .collect();
        if waiting.is_empty() {
            json(
                StatusCode::OK,
                serde_json::json!({"ready": true, "endpoints": self.endpoints.len()}),
            )
        } else {
            json(
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({
                    "ready": false,
                    "reason": "approved bundles failed to load; the server serves the rest and retries with --watch",
                    "endpoints": waiting,
                }),
            )
        }
    }
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(status: StatusCode, value: serde_json::Value) -> Response<Body> {
    let mut response = Response::new(full(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// 503 with `Retry-After`: a bound is full.
fn busy(message: &str) -> Response<Body> {
    let mut response = json(
        StatusCode::SERVICE_UNAVAILABLE,
        serde_json::json!({ "error": message }),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    response
}

/// 429 with `Retry-After`, the connection closed: a token is at `--max-connections-per-token`.
fn too_many_connections() -> Response<Body> {
    let mut response = json(
        StatusCode::TOO_MANY_REQUESTS,
        serde_json::json!({"error": "too many open connections for this token; try again later"}),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// 404 for a session id that names no live session of this server.
fn no_such_session() -> Response<Body> {
    json(
        StatusCode::NOT_FOUND,
        serde_json::json!({"error": "no such session (it expired, was closed, or never existed): initialize again"}),
    )
}

fn unauthorized() -> Response<Body> {
    let mut response = json(
        StatusCode::UNAUTHORIZED,
        serde_json::json!({"error": "a bearer token for this endpoint is required"}),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer realm=\"skillfold\""),
    );
    response
}

/// The answer to a request `--oauth` refuses: 401 or 403 with `challenge`
/// ([`oauth::ResourceServer::challenge`]) in `WWW-Authenticate`; `given`: a token was given.
fn oauth_refusal(status: StatusCode, challenge: &str, given: bool) -> Response<Body> {
    let message = match status {
        StatusCode::FORBIDDEN => {
            "this token opens another endpoint (no rule of --oauth gives it this one)"
        }
        _ if given => {
            "the bearer token is not valid here (expired, another issuer or audience, or a bad signature)"
        }
        _ => "a bearer token for this endpoint is required",
    };
    let mut response = json(status, serde_json::json!({ "error": message }));
    if let Ok(value) = header::HeaderValue::from_str(challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn accepted_connections_go_to_hyper_with_nodelay() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let client = tokio::net::TcpStream::connect(address).await.unwrap();
            let (accepted, _) = listener.accept().await.unwrap();
            // The kernel's default is off: the set-up function is what turns it on.
            assert!(!accepted.nodelay().unwrap());
            let stream = prepare(accepted);
            assert!(stream.nodelay().unwrap());
            drop(client);
        });
    }
}
