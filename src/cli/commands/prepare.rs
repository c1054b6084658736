//! `skillfold prepare`: fetch, verify and publish every source of the descriptor.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use crate::descriptor::kind::SourceKind;
use crate::ops::check;
use crate::ops::prepare::{self, PrepareReport, Progress};
use crate::support::{escape, hex};
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;

/// Fetch the pinned commits, verify every approved bundle, and publish them atomically.
///
/// For each Git source: take the corpus guard (a second preparer is refused at once), and if the
/// corpus already holds this commit and these pins, verify the bytes and stop — no network.
/// Otherwise fetch exactly the pinned commit (once per run, however many sources pin the same
/// URL and commit; each still has its own corpus, guard and promotion), refuse a tree holding any symlink, take the
/// approved bundles, check every bundle rule, compare name, version and digest with each pin,
/// and publish them at `<directory>/current/` with one atomic step. Local bundles are verified
/// in place. Any failure leaves the previously published corpus intact.
///
/// Credentials never belong in the descriptor: they come from the user's Git credential helper
/// or `GIT_ASKPASS`. SIGINT/SIGTERM stop the fetch and clean up before exiting.
///
/// Exit status: 0 prepared; 1 retryable (source unreachable, commit not on the server, guard
/// held, interrupted); 2 configuration or verification (bad descriptor, not a commit, symlink in
/// the tree, missing or invalid bundle, digest or version mismatch).
#[derive(Debug, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Print the final report as JSON on stdout.
    #[arg(long)]
    json: bool,

    /// Print every step of every source as it happens (without a terminal the step lines are
    /// otherwise kept back for the first 2 seconds: a quick run prints only its result).
    #[arg(short = 'v', long)]
    verbose: bool,

    /// Also write the causes of a failure to this file (Kubernetes `terminationMessagePath`).
    #[arg(long, value_name = "PATH")]
    termination_log: Option<PathBuf>,

    /// Point every Git and OCI corpus back at the generation its last preparation replaced.
    #[arg(long)]
    rollback: bool,

    /// How many jobs to run at the same time: each local source, and each distinct URL and
    /// commit of the Git sources (fetched once for all the sources that pin it), is one job.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: u16,

    #[command(flatten)]
    fetch_timeout: FetchTimeoutArg,
}

/// `--fetch-timeout SECONDS`, for every command that fetches from a Git server or a registry.
#[derive(Debug, Clone, Copy, Args)]
pub struct FetchTimeoutArg {
    /// The overall deadline of each fetch or pull, besides the idle timeouts: 1 to 86,400
    /// seconds, fractions allowed (default 300). Past it the source fails, retryable.
    #[arg(
        long = "fetch-timeout",
        value_name = "SECONDS",
        env = "SKILLFOLD_FETCH_TIMEOUT",
        default_value = "300",
        value_parser = parse_fetch_timeout
    )]
    pub fetch_timeout: std::time::Duration,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_fetch_timeout(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(1.0..=86_400.0).contains(&seconds) {
        return Err(format!("{seconds} s is outside 1 to 86,400 seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

pub fn run(args: PrepareArgs) -> Exit {
    let (_, plan) = match check::load_plan(&args.config.path) {
        Ok(ok) => ok,
        Err(e) => {
            let lines = crate::cli::output::check_error(&e);
            write_termination_log(args.termination_log.as_ref(), &lines);
            return Exit::of(&e);
        }
    };
    let interrupt = interrupt_on_signals();
    let progress = ProgressLines::new().verbose(args.verbose);
    let report = if args.rollback {
        prepare::rollback(&plan, &progress)
    } else {
        prepare::prepare(
            &plan,
            &prepare::Options {
                interrupt: &interrupt,
                progress: &progress,
                concurrency: usize::from(args.concurrency),
                fetch_timeout: args.fetch_timeout.fetch_timeout,
            },
        )
    };
    progress.finish();
    print_summary(&report);
    let printed = if args.json {
        crate::cli::output::print_json(&report)
    } else {
        Exit::Ok
    };
    let failures: Vec<String> = report
        .sources
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| (s, e)))
        .flat_map(|(s, e)| {
            std::iter::once(format!("{}: {} [{}]", s.origin.location, e.message, e.code))
                .chain(e.details.iter().map(|d| format!("  {d}")))
        })
        .collect();
    write_termination_log(args.termination_log.as_ref(), &failures);
    Exit::worst(report.failures().map(|f| f.code)).worse(printed)
}

fn print_summary(report: &PrepareReport) {
    for source in &report.sources {
        let origin = &source.origin;
        let what = match (origin.kind, &origin.url) {
            // The commit and the image digest shortened, as a generation id shortens them
            // (`--json` has them whole).
            (SourceKind::Git, Some(url)) => format!(
                "{} @ {}",
                escape::text(url),
                escape::text(hex::short(origin.commit.as_deref().unwrap_or("?")))
            ),
            // The image as the descriptor pins it: `REGISTRY/REPOSITORY@sha256:…`.
            (SourceKind::Oci, Some(repository)) => format!(
                "{}@{}",
                escape::text(repository),
                escape::text(hex::short(origin.commit.as_deref().unwrap_or("?")))
            ),
            _ => escape::path(&source.directory).to_string(),
        };
        match &source.error {
            None => {
                let statuses: Vec<String> = source
                    .bundles
                    .iter()
                    .map(|b| {
                        format!(
                            "{}@{} {}",
                            escape::text(&b.name),
                            escape::text(&b.version),
                            b.status
                        )
                    })
                    .collect();
                diag!("ok: {}: {what}: {}", origin.location, statuses.join(", "));
            }
            Some(e) => {
                diag!(
                    "error: {}: {what}: {} [{}]",
                    origin.location,
                    e.message,
                    e.code
                );
                crate::cli::output::details("  ", &e.details, e.hint().as_ref());
            }
        }
    }
    diag!("{}", summary_line(report));
}

/// The last line: how many sources were prepared and, when some failed, how many of them, so
/// that the line a log keeps tells a run that failed from one that did not.
fn summary_line(report: &PrepareReport) -> String {
    let total = report.sources.len();
    let failed = report.failures().count();
    let sources = if failed == 0 {
        format!("prepared {total} source(s)")
    } else {
        format!(
            "prepared {} of {total} source(s), {failed} failed,",
            total - failed
        )
    };
    format!(
        "{sources} with {} fetch(es) in {} ms",
        report.fetches, report.duration_ms
    )
}

/// A flag SIGINT and SIGTERM set (a second signal while the first is being handled exits at
/// once): what a preparation polls.
pub(super) fn interrupt_on_signals() -> Arc<AtomicBool> {
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ =
            signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&interrupt));
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupt));
    }
    interrupt
}

fn write_termination_log(path: Option<&PathBuf>, lines: &[String]) {
    let Some(path) = path else { return };
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    if let Err(e) = fs_err::write(path, text) {
        diag!("warning: cannot write the termination log: {e}");
    }
}

/// How long a run without a terminal keeps its step lines back: a run that ends sooner prints
/// only its notes and its result; one that takes longer says from then on what it is doing.
const QUIET_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// Progress: a live status line on a terminal; without one (containers, CI logs) the step lines
/// after [`QUIET_FOR`], or all of them with `-v`. Notes (warnings, a recovered guard) are
/// always printed.
pub(super) struct ProgressLines {
    terminal: bool,
    /// `-v`: every step line, from the start.
    verbose: bool,
    started: std::time::Instant,
    status_shown: Mutex<bool>,
    /// When the last transfer line was logged (plain output keeps one every few seconds). Only
    /// the Git fetcher reports transfers.
    last_transfer: Mutex<Option<std::time::Instant>>,
}

impl ProgressLines {
    pub(super) fn new() -> ProgressLines {
        ProgressLines {
            terminal: std::io::stderr().is_terminal(),
            verbose: false,
            started: std::time::Instant::now(),
            status_shown: Mutex::new(false),
            last_transfer: Mutex::new(None),
        }
    }

    /// With `verbose`, every step line is printed from the start.
    pub(super) fn verbose(mut self, verbose: bool) -> ProgressLines {
        self.verbose = verbose;
        self
    }

    /// Whether a step line is printed now without a terminal.
    fn logs_steps(&self) -> bool {
        self.verbose || self.started.elapsed() >= QUIET_FOR
    }

    fn clear_status(&self, shown: &mut bool) {
        if *shown {
            crate::cli::output::status("\r\x1b[2K", "");
            *shown = false;
        }
    }

    pub(super) fn finish(&self) {
        let mut shown = self.status_shown.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_status(&mut shown);
    }
}

impl Progress for ProgressLines {
    fn step(&self, location: &str, message: &str) {
        let mut shown = self.status_shown.lock().unwrap_or_else(|e| e.into_inner());
        if self.terminal {
            self.clear_status(&mut shown);
            // One line that is rewritten in place: it must not wrap.
            let width = rustix::termios::tcgetwinsize(std::io::stderr())
                .map(|w| usize::from(w.ws_col))
                .unwrap_or(80)
                .max(20);
            let line: String = crate::cli::output::guard(&format!("{location}: {message}"))
                .chars()
                .take(width - 1)
                .collect();
            crate::cli::output::status("", &format!("{line}…"));
            *shown = true;
        } else if self.logs_steps() {
            diag!("skillfold: {location}: {message}");
        }
    }

    fn transfer(&self, location: &str, message: &str) {
        if !self.terminal {
            let mut last = self.last_transfer.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| at.elapsed() < std::time::Duration::from_secs(5)) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        self.step(location, message);
    }

    fn note(&self, location: &str, message: &str) {
        let mut shown = self.status_shown.lock().unwrap_or_else(|e| e.into_inner());
        self.clear_status(&mut shown);
        diag!("skillfold: {location}: {message}");
    }
}
