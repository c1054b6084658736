//! `skillfold verify`: the CronJob check.

use crate::ops::verify;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;

/// Re-verify every prepared corpus and local bundle against the descriptor's pins.
///
/// Reads each published bundle with the same safe reader and rules as preparation, recomputes
/// its digest, and compares name, version and digest with the pin in the descriptor — no network.
/// Run it as a Kubernetes CronJob (exit 2 fails the Job; exit 1 is worth a retry).
///
/// Exit status: 0 every bundle holds; 1 a corpus is being prepared right now, or a bundle could
/// not be read (an I/O error); 2 a mismatch, a missing or unprepared bundle, or a bad descriptor
/// (each named).
#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn run(args: VerifyArgs) -> Exit {
    let plan = match args.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let report = verify::verify(plan);
    for b in &report.bundles {
        match (&b.error, b.code) {
            (None, _) => diag!("ok: {}: {} verified", b.location, b.name),
            (Some(error), code) => {
                let level = match b.status {
                    verify::VerifyStatus::Failed => "error",
                    verify::VerifyStatus::BeingPrepared => "busy",
                    other => other.as_str(),
                };
                diag!(
                    "{level}: {error} [{}]",
                    code.map_or("failed", |c| c.as_str())
                );
                for d in &b.details {
                    diag!("  {d}");
                }
            }
        }
    }
    for busy in &report.being_prepared {
        diag!("busy: {busy}");
    }
    let exit = Exit::worst(report.failures());
    crate::cli::output::finish(exit, args.json, &report)
}
