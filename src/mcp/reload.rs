//! Loading an agent's catalogue for the server, and hot reload: watching the descriptor,
//! re-preparing, and swapping the catalogue atomically.
//!
//! [`load`] reads the descriptor and the verified snapshots the agent sees (the catalogue at
//! start); [`prepare_and_load`] first prepares those sources (fetches pinned commits, verifies,
//! publishes) and is strict: any source that fails to prepare, or any bundle that fails to load,
//! fails the whole reload, so a reload never replaces a complete catalogue with a partial one.
//! Only the agent's own sources (the defaults plus its extras) are prepared; another agent's
//! broken source cannot hold this server back.
//!
//! [`watch`] polls the descriptor every interval (its bytes, so an editor's write-and-rename
//! counts) and takes `SIGHUP` as a request to reload now. A change re-prepares and swaps the
//! catalogue; a failed reload keeps serving the previous catalogue, logs why on stderr, and
//! retries with [`Backoff`]: twice the poll interval, doubling up to the greater of one minute and
//! the interval. An edit (or `SIGHUP`) resets the delay and is tried at once; success clears the
//! error. A start that left bundles out is treated as a failed reload, so the server keeps
//! trying to serve them. Calls in flight keep the catalogue they started with (see
//! [`super::Live`]).
//!
//! Without `--watch` there is nothing to reload, and `SIGHUP` (whose default action ends the
//! process) must not end a server either: [`hold_hangup`] takes it over for the whole process
//! before a server starts, so it is ignored (the HTTP server still reopens its audit log on it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::descriptor::Plan;
use crate::ops::check::{self, CheckError};
use crate::ops::prepare;
use crate::runtime::Runtime;
use crate::runtime::catalogue::{Catalogue, CatalogueError};
use crate::runtime::snapshot::LoadFailure;
use crate::support::error_code::ErrorCode;

use super::code::ServeCode;
use super::{Live, Served, diag};
use crate::support::escape;

/// Why a catalogue could not be loaded or reloaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The descriptor is unreadable or has problems.
    #[error("{}", .0.lines().join("; "))]
    Descriptor(#[from] CheckError),
    /// The agent is unknown or its skills do not make a catalogue.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
    /// A source could not be prepared (each named).
    #[error("preparation failed: {}", .0.join("; "))]
    Prepare(Vec<String>),
    /// Bundles failed to load after preparation (each named).
    #[error("{}", .0.join("; "))]
    Load(Vec<String>),
}

impl ReloadError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ReloadError::Descriptor(CheckError::Load(e)) => e.code().into(),
            ReloadError::Descriptor(_) => ServeCode::DescriptorInvalid.into(),
            ReloadError::Catalogue(e) => e.code().into(),
            ReloadError::Prepare(_) => ServeCode::PrepareFailed.into(),
            ReloadError::Load(_) => ServeCode::LoadFailed.into(),
        }
    }

    /// Every problem, one per line.
    pub fn lines(&self) -> Vec<String> {
        match self {
            ReloadError::Descriptor(e) => e.lines(),
            ReloadError::Catalogue(e) => vec![format!("{e} [{}]", e.code())],
            ReloadError::Prepare(lines) | ReloadError::Load(lines) => lines.clone(),
        }
    }
}

/// A catalogue and the bundles that were left out of it.
#[derive(Debug)]
pub struct LoadedCatalogue {
    /// The agent's catalogue: its verified snapshots.
    pub catalogue: Catalogue,
    /// Bundles that failed to load (not served, never replaced).
    pub failures: Vec<LoadFailure>,
}

/// Loads the catalogue of `agent` from the prepared sources of the descriptor at `config`,
/// without preparing anything. Bundles that fail to load are left out and returned.
pub fn load(config: &Path, agent: Option<&str>) -> Result<LoadedCatalogue, ReloadError> {
    let (_, plan) = check::load_plan(config)?;
    let runtime = Runtime::load_for(plan, agent)?;
    let failures = runtime.failures().cloned().collect();
    let catalogue = runtime.catalogue(agent)?;
    Ok(LoadedCatalogue {
        catalogue,
        failures,
    })
}

/// Prepares the sources `agents` see (one agent: its sources alone; several: every source of
/// the descriptor), then loads each agent's catalogue, in order; any failure fails the whole
/// reload, so no agent is served a catalogue of another generation than the rest.
pub fn prepare_and_load_all(
    config: &Path,
    agents: &[Option<String>],
    interrupt: &AtomicBool,
) -> Result<Vec<Catalogue>, ReloadError> {
    let (_, plan) = check::load_plan(config)?;
    let plan = match agents {
        [agent] => agent_plan(&plan, agent.as_deref())?,
        _ => plan,
    };
    let report = prepare::prepare(
        &plan,
        &prepare::Options {
            interrupt,
            progress: &LogLines,
            concurrency: 4,
            fetch_timeout: prepare::DEFAULT_FETCH_TIMEOUT,
        },
    );
    let failed: Vec<String> = report
        .sources
        .iter()
        .filter_map(|s| {
            s.error
                .as_ref()
                .map(|e| format!("{}: {} [{}]", s.origin.location, e.message, e.code))
        })
        .collect();
    if !failed.is_empty() {
        return Err(ReloadError::Prepare(failed));
    }
    let runtime = Runtime::load(plan);
    let failures: Vec<String> = runtime
        .failures()
        .map(|f| format!("{f} [{}]", f.code))
        .collect();
    if !failures.is_empty() {
        return Err(ReloadError::Load(failures));
    }
    agents
        .iter()
        .map(|agent| Ok(runtime.catalogue(agent.as_deref())?))
        .collect()
}

/// The part of `plan` that `agent` sees, as a plan of its own: its sources are the defaults.
fn agent_plan(plan: &Plan, agent: Option<&str>) -> Result<Plan, CatalogueError> {
    let indices = plan
        .agent_indices(agent)
        .map_err(|e| CatalogueError::UnknownAgent(e.to_string()))?;
    let sources: Vec<_> = indices.iter().map(|&i| plan.sources[i].clone()).collect();
    Ok(Plan {
        defaults: (0..sources.len()).collect(),
        sources,
        agents: agent
            .map(|a| (a.to_owned(), Vec::new()))
            .into_iter()
            .collect(),
        runner: plan.runner.clone(),
        guides: plan.guides.clone(),
        max_skills: plan.max_skills,
    })
}

/// Preparation steps as log lines on stderr (a server's stdout is the protocol).
struct LogLines;

impl prepare::Progress for LogLines {
    fn step(&self, location: &str, message: &str) {
        self.note(location, message);
    }

    fn note(&self, location: &str, message: &str) {
        diag(format_args!(
            "skillfold serve: reload: {}: {}",
            escape::text(location),
            escape::text(message)
        ));
    }
}

/// The delay before retrying a failed reload: twice the poll interval after the first failure,
/// doubling after each further one, never more than the greater of one minute and the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    interval: Duration,
    delay: Option<Duration>,
}

impl Backoff {
    /// No failure yet.
    pub fn new(interval: Duration) -> Backoff {
        Backoff {
            interval,
            delay: None,
        }
    }

    /// The longest delay.
    pub fn max(&self) -> Duration {
        self.interval.max(Duration::from_secs(60))
    }

    /// A reload failed: the delay before the next try.
    pub fn failed(&mut self) -> Duration {
        let next = match self.delay {
            None => self.interval.saturating_mul(2),
            Some(d) => d.saturating_mul(2),
        }
        .min(self.max());
        self.delay = Some(next);
        next
    }

    /// A reload succeeded, or the descriptor was edited: start over.
    pub fn reset(&mut self) {
        self.delay = None;
    }

    /// The current delay (`None`: no failure since the last reset).
    #[cfg(test)]
    pub fn delay(&self) -> Option<Duration> {
        self.delay
    }
}

/// What the watcher needs.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// The descriptor.
    pub config: PathBuf,
    /// How often the descriptor is checked.
    pub poll_interval: Duration,
    /// The start left bundles out: retry as after a failed reload.
    pub start_failed: bool,
    /// Told of every reload's outcome.
    pub on_reload: Option<OnReload>,
}

/// Called with each reload's outcome (`true`: swapped in).
#[derive(Clone)]
pub struct OnReload(pub Arc<dyn Fn(bool) + Send + Sync>);

impl std::fmt::Debug for OnReload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnReload")
    }
}

/// Takes `SIGHUP` over for the process, so that it no longer ends it: a task on the current
/// tokio runtime receives it and does nothing (a [`watch`] or an audit log listens too and acts on
/// it). Call it on the server's runtime before the server starts; the server then keeps serving
/// on `SIGHUP` with or without `--watch`.
pub fn hold_hangup() -> std::io::Result<()> {
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    tokio::spawn(async move { while hangup.recv().await.is_some() {} });
    Ok(())
}

/// The catalogues a server serves: each agent (`None`: the defaults alone) and its live
/// catalogue.
pub type Lives = Vec<(Option<String>, Arc<Live>)>;

/// Watches the descriptor (and `SIGHUP`) and reloads every catalogue of `lives` until `shutdown`
/// is set. Runs on the server's tokio runtime; preparation runs on a blocking thread.
pub async fn watch(lives: Lives, options: WatchOptions, shutdown: Arc<AtomicBool>) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            diag(format_args!(
                "skillfold serve: warning: cannot watch SIGHUP: {e}"
            ));
            None
        }
    };
    let mut seen = fingerprint(&options.config);
    let mut backoff = Backoff::new(options.poll_interval);
    let mut retry_at = options
        .start_failed
        .then(|| tokio::time::Instant::now() + backoff.failed());
    let mut ticker = tokio::time::interval(options.poll_interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        let signalled = tokio::select! {
            _ = ticker.tick() => false,
            Some(()) = async {
                match hangup.as_mut() {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            } => true,
        };
        if shutdown.load(Ordering::Relaxed) {
            return;
        }
        let now = fingerprint(&options.config);
        let edited = now != seen;
        if edited {
            seen = now;
        }
        if edited || signalled {
            backoff.reset();
        }
        let due = retry_at.is_some_and(|t| tokio::time::Instant::now() >= t);
        if !(edited || signalled || due) {
            continue;
        }
        let why = if signalled {
            "SIGHUP"
        } else if edited {
            "the descriptor changed"
        } else {
            "retrying"
        };
        diag(format_args!(
            "skillfold serve: reloading `{}` ({why})",
            escape::text(&options.config.display().to_string())
        ));
        let config = options.config.clone();
        let agents: Vec<Option<String>> = lives.iter().map(|(agent, _)| agent.clone()).collect();
        let interrupt = Arc::clone(&shutdown);
        let result =
            tokio::task::spawn_blocking(move || prepare_and_load_all(&config, &agents, &interrupt))
                .await;
        if shutdown.load(Ordering::Relaxed) {
            return;
        }
        if let Some(OnReload(observe)) = &options.on_reload {
            observe(matches!(result, Ok(Ok(_))));
        }
        match result {
            Ok(Ok(catalogues)) => {
                let mut count = 0;
                for ((_, live), catalogue) in lives.iter().zip(catalogues) {
                    let served = Served::new(catalogue);
                    count += served.catalogue().skills().count();
                    super::warn_unlisted(&served);
                    live.replace(served);
                }
                backoff.reset();
                retry_at = None;
                diag(format_args!(
                    "skillfold serve: reloaded: serving {count} skill(s)"
                ));
            }
            Ok(Err(e)) => {
                let delay = backoff.failed();
                retry_at = Some(tokio::time::Instant::now() + delay);
                diag(format_args!(
                    "skillfold serve: reload failed [{}]; still serving the previous catalogue ({} skill(s)); retrying in {}",
                    e.code(),
                    lives
                        .iter()
                        .map(|(_, live)| live.current().catalogue().skills().count())
                        .sum::<usize>(),
                    seconds(delay)
                ));
                for line in e.lines() {
                    diag(format_args!("  {}", escape::text(&line)));
                }
            }
            Err(join) => {
                let delay = backoff.failed();
                retry_at = Some(tokio::time::Instant::now() + delay);
                diag(format_args!(
                    "skillfold serve: reload failed: {}; still serving the previous catalogue; retrying in {}",
                    escape::text(&join.to_string()),
                    seconds(delay)
                ));
            }
        }
    }
}

/// The descriptor's bytes, or `None` when it cannot be read (a change like any other).
type Fingerprint = Option<Vec<u8>>;

fn fingerprint(path: &Path) -> Fingerprint {
    // Never waits on a FIFO swapped in for the descriptor: it is refused unopened, a change.
    crate::descriptor::bounds::read_bounded(path)
        .ok()
        .and_then(Result::ok)
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

crate::support::error_code::coded_by_code!(ReloadError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_twice_the_interval_up_to_a_minute() {
        let mut b = Backoff::new(Duration::from_secs(2));
        let delays: Vec<u64> = (0..7).map(|_| b.failed().as_secs()).collect();
        assert_eq!(delays, [4, 8, 16, 32, 60, 60, 60]);
        b.reset();
        assert_eq!(b.delay(), None);
        assert_eq!(
            b.failed(),
            Duration::from_secs(4),
            "an edit or success starts over"
        );
    }

    #[test]
    fn backoff_is_capped_by_a_long_interval() {
        let mut b = Backoff::new(Duration::from_secs(90));
        assert_eq!(b.failed(), Duration::from_secs(90));
        assert_eq!(b.failed(), Duration::from_secs(90));
        let mut short = Backoff::new(Duration::from_millis(100));
        assert_eq!(short.failed(), Duration::from_millis(200));
        assert_eq!(short.failed(), Duration::from_millis(400));
    }
}
