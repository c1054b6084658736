//! `skillfold verify`: the CronJob check, and `verify --installed DIR`, the CI gate of an
//! agent's folder.

use std::path::PathBuf;

use crate::format::hint::{Hint, Via};
use crate::ops::install::code::InstallCode;
use crate::ops::install::installed::{self, InstalledStatus};
use crate::ops::verify;
use crate::support::error_code::ErrorCode;
use crate::support::escape;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;
use crate::cli::sarif::Format;
use crate::format::sarif::{Base, Entry, Log, Place};

/// Re-verify every prepared corpus and local bundle against the descriptor's pins.
///
/// Reads each published bundle with the same safe reader and rules as preparation, recomputes
/// its digest, and compares name, version and digest with the pin in the descriptor — no network.
/// Run it as a Kubernetes CronJob (exit 2 fails the Job; exit 1 is worth a retry).
///
/// With `--installed DIR`, checks an agent's folder that `install` wrote instead: every selected
/// bundle there, its bytes equal to its pin, nothing installed that is no longer selected
/// (folders skillfold did not install are listed and ignored); each changed, added or missing
/// file is named. No corpus is read.
///
/// Exit status: 0 every bundle holds; 1 a corpus is being prepared right now, or a bundle could
/// not be read (an I/O error); 2 a mismatch, a missing or unprepared bundle, or a bad descriptor
/// (each named).
#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Check the folder `install` wrote (e.g. `.claude/skills`) against the descriptor's pins,
    /// instead of the corpora.
    #[arg(long, value_name = "DIR")]
    installed: Option<PathBuf>,

    /// With `--installed`: the agent whose selection the folder holds (default: the agent its
    /// record remembers; another than that one is refused).
    #[arg(long, value_name = "NAME", requires = "installed")]
    agent: Option<String>,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,

    /// What stdout holds: `text` (nothing; the lines go to stderr), `json` (as `--json`) or,
    /// with `--installed`, `sarif` (a SARIF 2.1.0 log of every bundle that does not hold).
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value = "text",
        conflicts_with = "json"
    )]
    format: Format,
}

pub fn run(mut args: VerifyArgs) -> Exit {
    args.json |= args.format == Format::Json;
    if args.format == Format::Sarif && args.installed.is_none() {
        let code = crate::codes::CommandCode::InvalidUsage;
        diag!(
            "error: `--format sarif` reports `--installed`; give it with `--installed DIR` [{code}]"
        );
        return crate::cli::exit::of(code);
    }
    let plan = match args.config.plan_as(args.format) {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    if let Some(dir) = &args.installed {
        return run_installed(&plan, &args, dir);
    }
    let report = verify::verify(plan);
    for (line, code, details) in grouped_lines(&report) {
        diag!("{line}");
        let hint = code.and_then(|code| Hint::of_refusal(code, details, Via::Descriptor));
        crate::cli::output::details("  ", details, hint.as_ref());
    }
    for busy in &report.being_prepared {
        diag!("busy: {busy}");
    }
    diag!("{}", summary_line(&report));
    let exit = Exit::worst(report.failures());
    crate::cli::output::finish(exit, args.json, &report)
}

/// One line per source and outcome: the bundles of a source that verified, then those that
/// failed the same way (the same message and code, as every bundle of a corpus that is not
/// prepared does), named together on one line with the details once.
fn grouped_lines(report: &verify::VerifyReport) -> Vec<(String, Option<&str>, &[String])> {
    let mut groups: Vec<(&verify::BundleCheck, Vec<&str>)> = Vec::new();
    for b in &report.bundles {
        let same = |first: &verify::BundleCheck| {
            first.location == b.location
                && first.status == b.status
                && first.error == b.error
                && first.code == b.code
                && first.details == b.details
        };
        match groups.iter_mut().find(|(first, _)| same(first)) {
            Some((_, names)) => names.push(&b.name),
            None => groups.push((b, vec![&b.name])),
        }
    }
    groups
        .into_iter()
        .map(|(b, names)| {
            let names = names.join(", ");
            let line = match &b.error {
                None => format!("ok: {}: {names} verified", b.location),
                Some(error) => {
                    let level = match b.status {
                        verify::VerifyStatus::Failed => "error",
                        verify::VerifyStatus::BeingPrepared => "busy",
                        other => other.as_str(),
                    };
                    format!(
                        "{level}: {}: {names}: {error} [{}]",
                        b.location,
                        b.code.map_or("failed", |c| c.as_str())
                    )
                }
            };
            (line, b.code.map(|c| c.as_str()), b.details.as_slice())
        })
        .collect()
}

/// The last line: how many of the pinned bundles verified, and how many did not, by status.
fn summary_line(report: &verify::VerifyReport) -> String {
    let count = |status| report.bundles.iter().filter(|b| b.status == status).count();
    let mut line = format!(
        "{} of {} bundle(s) verified",
        count(verify::VerifyStatus::Verified),
        report.bundles.len()
    );
    for status in [
        verify::VerifyStatus::Failed,
        verify::VerifyStatus::Unreadable,
        verify::VerifyStatus::BeingPrepared,
    ] {
        match count(status) {
            0 => {}
            n => line.push_str(&format!(", {n} {}", status.as_str())),
        }
    }
    line
}

fn run_installed(plan: &crate::descriptor::Plan, args: &VerifyArgs, dir: &std::path::Path) -> Exit {
    let report = match installed::verify_installed(plan, args.agent.as_deref(), dir) {
        Ok(report) => report,
        Err(e) => {
            diag!("error: {e}");
            crate::cli::output::details("  ", &e.details, None);
            let exit = Exit::of(&e);
            if args.format != Format::Sarif {
                return exit;
            }
            let mut log = installed_log(&[], dir);
            let code = crate::support::error_code::Coded::error_code(&e);
            let mut message = e.to_string();
            if !e.details.is_empty() {
                message = format!("{message}: {}", e.details.join("; "));
            }
            let place = Place::file(crate::cli::sarif::INSTALL_ROOT, "./");
            log.push(Entry::new(code, crate::cli::sarif::level(code), message).at(place));
            return exit.worse(crate::cli::sarif::print(&log));
        }
    };
    for b in &report.bundles {
        let name = escape::text(&b.name);
        match (b.status, &b.error) {
            (InstalledStatus::Verified, _) | (_, None) => {
                diag!("ok: {name} {} verified", escape::text(&b.version));
            }
            (status, Some(error)) => {
                let code = b.code.map_or("failed", |c| c.as_str());
                diag!("error: {name}: {} — {error} [{code}]", status.as_str());
                crate::cli::output::details("  ", &b.details, None);
            }
        }
    }
    for name in &report.foreign {
        diag!("foreign: {name} (not installed by skillfold; ignored)");
    }
    let drift = report
        .failures()
        .any(|c| c == ErrorCode::from(InstallCode::InstalledDrift));
    let hint = drift.then(|| Hint::repair(&repair_command(args, dir)));
    if let Some(hint) = &hint {
        diag!("hint: {hint}");
    }
    let verified = report
        .bundles
        .iter()
        .filter(|b| b.status == InstalledStatus::Verified)
        .count();
    diag!(
        "{verified} of {} bundle(s) verified in `{}` for {}",
        report.bundles.len(),
        escape::path(&report.directory),
        crate::ops::install::agent_shown(report.agent.as_deref())
    );
    let exit = Exit::worst(report.failures());
    if args.format == Format::Sarif {
        return exit.worse(crate::cli::sarif::print(&installed_log(
            &report.bundles,
            dir,
        )));
    }
    crate::cli::output::finish(
        exit,
        args.json,
        &InstalledJson {
            report: &report,
            hint: hint.as_ref(),
        },
    )
}

/// The SARIF log of `verify --installed`: each bundle that does not hold, at its folder under
/// the agent's folder, its details after its message, then each bundle rule it breaks at its
/// file.
fn installed_log(bundles: &[installed::InstalledBundle], dir: &std::path::Path) -> Log {
    let mut log = Log::new();
    log.base(Base::folder(
        crate::cli::sarif::INSTALL_ROOT,
        dir,
        format!("the agent's folder `{}`", escape::path(dir)),
    ));
    for b in bundles {
        let (Some(error), Some(code)) = (&b.error, b.code) else {
            continue;
        };
        let mut message = format!("{}: {} — {error}", escape::text(&b.name), b.status.as_str());
        if !b.details.is_empty() {
            message.push_str(": ");
            message.push_str(&b.details.join("; "));
        }
        let place = Place::file(crate::cli::sarif::INSTALL_ROOT, format!("{}/", b.name));
        log.push(Entry::new(code, crate::cli::sarif::level(code), message).at(place));
        log.problems(&b.found, crate::cli::sarif::INSTALL_ROOT, &b.name);
    }
    log
}

/// The `skillfold install` that repairs the folder `verify --installed` checked: the same
/// descriptor, agent and folder (escaped as every shown value is).
fn repair_command(args: &VerifyArgs, dir: &std::path::Path) -> String {
    let mut command = "skillfold install".to_owned();
    if args.config.path != std::path::Path::new(crate::descriptor::DEFAULT_PATH) {
        command.push_str(&format!(" --config {}", escape::path(&args.config.path)));
    }
    if let Some(agent) = &args.agent {
        command.push_str(&format!(" --agent {}", escape::text(agent)));
    }
    command.push_str(&format!(" --into {}", escape::path(dir)));
    command
}

/// `verify --installed --json`: the report, and the command that repairs a drift as `hint`.
#[derive(serde::Serialize)]
struct InstalledJson<'a> {
    #[serde(flatten)]
    report: &'a installed::InstalledReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a Hint>,
}
