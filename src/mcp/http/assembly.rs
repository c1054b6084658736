//! The assembly of `serve --listen`: what runs once at start and what runs per connection. It
//! binds the listener, loads the TLS certificate ([`super::tls`]), builds one rmcp service per
//! catalogue with its own session manager, the observers (metrics, audit log), the `--oauth`
//! key task and the `--watch` watcher, then accepts connections until SIGTERM or SIGINT: each
//! admitted within the connection caps ([`super::connections`]) is served by hyper in its own
//! task (HTTP/1.1, headers within [`HEADER_TIMEOUT`], `TCP_NODELAY`, TLS when configured), every
//! request handed to [`Server::handle`] with its body bounded in time ([`super::limits`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::Request;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::signal::unix::Signal;

use super::metrics::Metrics;
use super::options::{HEADER_TIMEOUT, HttpOptions, MAX_BODY_BYTES};
use super::replies::body_timed_out;
use super::state::{Endpoint, Server};
use super::{connections, guard, limits, oauth, sessions, splice, tls};
use crate::mcp::observe::{Fanout, Observer};
use crate::mcp::reload::{self, Lives};
use crate::mcp::{ServeError, SkillsServer, audit, diag};
use crate::support::escape;

/// Serves `lives` as `options` say until SIGTERM or SIGINT.
pub(super) async fn serve(
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
    let guard = guard::HostOriginGuard::new(
        loopback,
        bound.port(),
        tls.is_some(),
        &options.allow_origins,
    );
    let config = rmcp_config(&guard, loopback);
    let cancel = config.cancellation_token.clone();
    let metrics = Arc::new(Metrics::new());
    let scheme = if tls.is_some() { "https" } else { "http" };
    let oauth = start_oauth(options, scheme, bound, &metrics)?;
    let observer = observer(options, &metrics)?;
    let splicer = splice::Splicer::new().map(Arc::new);
    let endpoints = endpoints(&lives, options, &config, &observer, splicer.as_ref());
    let server = Arc::new(Server {
        endpoints,
        tokens: options.tokens.clone(),
        sessions: Mutex::new(HashMap::new()),
        admission: tokio::sync::Mutex::new(()),
        max_sessions: options.max_sessions,
        metrics: Arc::clone(&metrics),
        metrics_tokens: options.metrics_tokens.clone(),
        guard,
        in_flight: limits::InFlight::new(options.max_in_flight, options.max_in_flight_per_token),
        body_timeout: options.body_timeout,
        write_timeout: options.write_timeout,
        oauth,
        splicer,
    });
    let connections = connections::Connections::new(
        options.max_connections,
        options.max_connections_per_client,
        options.max_connections_per_token,
        Arc::clone(&metrics),
    );
    tokio::spawn(sessions::expire_idle(
        Arc::clone(&server),
        options.session_idle,
    ));
    let paths: Vec<&str> = server.endpoints.iter().map(|e| e.path.as_str()).collect();
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
    accept(
        &listener,
        &connections,
        &server,
        tls.as_ref(),
        &mut terminate,
        &mut interrupt,
    )
    .await;
    cancel.cancel();
    shutdown.store(true, Ordering::Relaxed);
    Ok(())
}

/// rmcp's configuration, the same for every endpoint: the body bound, the `Origin` list of
/// `guard` (rmcp checks it again), and the `Host` check only on loopback.
fn rmcp_config(guard: &guard::HostOriginGuard, loopback: bool) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default();
    config.max_request_body_bytes = MAX_BODY_BYTES;
    config.allowed_origins = guard.origins().to_vec();
    config = config.enforce_origin_validation();
    if !loopback {
        // Behind a Service or an ingress the Host is a name this process cannot know; the
        // tokens and the Origin check guard it instead.
        config = config.disable_allowed_hosts();
    }
    config
}

/// With `--oauth`, the resource server (reached at `scheme://bound` unless its `public_url`
/// says otherwise), its key task started.
fn start_oauth(
    options: &HttpOptions,
    scheme: &str,
    bound: SocketAddr,
    metrics: &Arc<Metrics>,
) -> Result<Option<Arc<oauth::ResourceServer>>, ServeError> {
    let Some(config) = &options.oauth else {
        return Ok(None);
    };
    let server = oauth::ResourceServer::new(
        config.clone(),
        &format!("{scheme}://{bound}"),
        Arc::clone(metrics),
    )
    .map_err(|message| {
        ServeError::OAuth(oauth::config::OAuthError {
            source_name: "--oauth".to_owned(),
            message,
        })
    })?;
    let server = Arc::new(server);
    tokio::spawn(Arc::clone(server.keys()).maintain());
    Ok(Some(server))
}

/// Who hears of every tool call and resource read: the metrics, and the audit log when
/// `--audit-log` names one (opened again on every `SIGHUP`).
fn observer(
    options: &HttpOptions,
    metrics: &Arc<Metrics>,
) -> Result<Arc<dyn Observer>, ServeError> {
    let mut observers: Vec<Arc<dyn Observer>> = vec![metrics.clone()];
    if let Some(path) = &options.audit_log {
        let audit =
            Arc::new(
                audit::AuditLog::open(path).map_err(|error| ServeError::AuditLog {
                    path: path.clone(),
                    error,
                })?,
            );
        tokio::spawn(reopen_on_hangup(Arc::clone(&audit)));
        observers.push(audit);
    }
    Ok(Arc::new(Fanout(observers)))
}

/// One endpoint per catalogue: the defaults at `/mcp`, each agent's at `/agents/<name>/mcp`,
/// each an rmcp service with its own session manager and one handler, cloned for each session.
fn endpoints(
    lives: &Lives,
    options: &HttpOptions,
    config: &StreamableHttpServerConfig,
    observer: &Arc<dyn Observer>,
    splicer: Option<&Arc<splice::Splicer>>,
) -> Vec<Endpoint> {
    lives
        .iter()
        .map(|(agent, live)| {
            // Sessions idle for `--session-idle` are closed by the server, which sees every
            // request ([`sessions::expire_idle`]), not by rmcp, which does not.
            let mut manager = LocalSessionManager::default();
            manager.session_config.keep_alive = None;
            let sessions = Arc::new(manager);
            // Remote clients get `skill://` locations, never the server's paths.
            let handler = SkillsServer::new(Arc::clone(live), options.watch)
                .remote()
                .observed(agent.as_deref(), Arc::clone(observer))
                .spliced(splicer.cloned());
            let session_handler = handler.clone();
            Endpoint {
                agent: agent.clone(),
                path: agent
                    .as_ref()
                    .map_or_else(|| "/mcp".to_owned(), |a| format!("/agents/{a}/mcp")),
                live: Arc::clone(live),
                handler,
                service: StreamableHttpService::new(
                    move || Ok(session_handler.clone()),
                    Arc::clone(&sessions),
                    config.clone(),
                ),
                sessions,
            }
        })
        .collect()
}

/// Accepts connections until SIGTERM (`terminate`) or SIGINT (`interrupt`) arrives. Over every cap a
/// connection is closed at once, before it costs anything more; any other is served in its own
/// task ([`serve_connection`]).
async fn accept(
    listener: &tokio::net::TcpListener,
    connections: &Arc<connections::Connections>,
    server: &Arc<Server>,
    tls: Option<&tokio_rustls::TlsAcceptor>,
    terminate: &mut Signal,
    interrupt: &mut Signal,
) {
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
        // its address's, it is served waiting for a place.
        let admission = connections.admit(client.ip());
        if matches!(admission, connections::Admission::Refused) {
            continue;
        }
        tokio::spawn(serve_connection(
            stream,
            admission,
            Arc::clone(server),
            tls.cloned(),
        ));
    }
}

/// Serves one accepted connection, in its own task, with a place or waiting for one ([`route`]'s
/// step 5 gives it one), over TLS when configured (a handshake that stalls is dropped like
/// headers that stall), every write taken within the write timeout, until it ends or is closed
/// (to make room for another, or out of time to wait).
async fn serve_connection(
    stream: tokio::net::TcpStream,
    admission: connections::Admission,
    server: Arc<Server>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let (slot, probe) = match admission {
        connections::Admission::Full(slot) | connections::Admission::Waiting(slot) => (slot, false),
        connections::Admission::Probe(slot) => (slot, true),
        connections::Admission::Refused => return,
    };
    let stream = limits::WriteDeadline::new(prepare(stream), server.write_timeout);
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
                if let Ok(Ok(stream)) = tokio::time::timeout(limit, tls.accept(stream)).await {
                    connection(stream, server, probe, link.clone()).await;
                }
            }
        }
    };
    // Closed (dropped) when it has to make room for another, or its time to wait for a place
    // is up ([`connections`]).
    tokio::select! {
        () = served => {}
        () = link.closed() => {}
    }
    drop(slot);
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

/// Opens the audit log again on every `SIGHUP` (log rotation).
async fn reopen_on_hangup(audit: Arc<audit::AuditLog>) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
