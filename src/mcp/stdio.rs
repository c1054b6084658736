//! The stdio transport (`skillfold serve` without `--listen`): one agent's catalogue to one
//! client on stdin and stdout until the client leaves or SIGTERM/SIGINT arrive. rmcp does not
//! read stdin itself: [`super::framing`] reads every line first, bounds it, answers what rmcp
//! would drop or answer wrongly, and passes the rest on. With `watch`, [`super::reload::watch`]
//! swaps the catalogue while the session runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ServiceExt as _;

use crate::support::escape;

use super::diagnostics::{diag, warn_unlisted};
use super::error::ServeError;
use super::handler::SkillsServer;
use super::live::{Live, Served};
use super::{framing, reload};

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The descriptor.
    pub config: PathBuf,
    /// The agent whose catalogue to serve (`None`: the defaults).
    pub agent: Option<String>,
    /// Reload on a change of the descriptor or `SIGHUP`.
    pub watch: bool,
    /// How often the descriptor is checked with `watch`.
    pub poll_interval: Duration,
}

/// Serves the catalogue over stdio until the client closes the connection or SIGTERM/SIGINT
/// arrive. Bundles that fail to load at start are named on stderr and left out (and, with
/// `watch`, retried).
pub fn run(options: ServeOptions) -> Result<(), ServeError> {
    let loaded = reload::load(&options.config, options.agent.as_deref())?;
    for failure in &loaded.failures {
        diag(format_args!(
            "skillfold serve: warning: {} [{}]",
            escape::text(&failure.to_string()),
            failure.code
        ));
        for detail in &failure.details {
            diag(format_args!("  {}", escape::text(detail)));
        }
    }
    let served = Served::new(loaded.catalogue);
    warn_unlisted(&served);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let shutdown = Arc::new(AtomicBool::new(false));
    let result = runtime.block_on(serve_stdio(
        Live::new(served),
        &options,
        !loaded.failures.is_empty(),
        Arc::clone(&shutdown),
    ));
    shutdown.store(true, Ordering::Relaxed);
    // A preparation under way sees the flag and cleans up; do not wait on stdin or on it forever.
    runtime.shutdown_timeout(Duration::from_secs(5));
    result
}

async fn serve_stdio(
    live: Arc<Live>,
    options: &ServeOptions,
    start_failed: bool,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServeError> {
    reload::hold_hangup().map_err(ServeError::Runtime)?;
    if options.watch {
        tokio::spawn(reload::watch(
            vec![(options.agent.clone(), Arc::clone(&live))],
            reload::WatchOptions {
                config: options.config.clone(),
                poll_interval: options.poll_interval,
                start_failed,
                on_reload: None,
            },
            Arc::clone(&shutdown),
        ));
    }
    let server = SkillsServer::new(Arc::clone(&live), options.watch);
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, framing) = framing::start(stdin, stdout);
    let result = session(server, transport, &shutdown).await;
    // Answers already queued (to lines rmcp never saw, or rmcp's last) reach the client.
    framing.finish(Duration::from_secs(2)).await;
    result
}

/// Runs one MCP session on `transport` until the client leaves or SIGTERM/SIGINT arrive.
async fn session(
    server: SkillsServer,
    transport: tokio::io::DuplexStream,
    shutdown: &AtomicBool,
) -> Result<(), ServeError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).map_err(ServeError::Runtime)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Runtime)?;
    let session = tokio::select! {
        s = server.serve(transport) => s,
        _ = terminate.recv() => return Ok(()),
        _ = interrupt.recv() => return Ok(()),
    };
    let running = match session {
        Ok(running) => running,
        // A client that connects and leaves at once is not an error of the server.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(ServeError::Session(e.to_string())),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        _ = terminate.recv() => cancel.cancel(),
        _ = interrupt.recv() => cancel.cancel(),
    }
    shutdown.store(true, Ordering::Relaxed);
    Ok(())
}
