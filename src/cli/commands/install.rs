//! `skillfold install --into DIR [--agent NAME]`: verified bundles into the folder an agent reads.

use std::path::PathBuf;

use clap::Args;

use super::config::ConfigArg;
use super::prepare::{FetchTimeoutArg, ProgressLines, interrupt_on_signals};
use crate::cli::exit::Exit;
use crate::ops::install::{self, InstallReport};
use crate::ops::prepare;
use crate::support::escape;

/// Install the agent's skills into the folder it reads, verified, atomically per bundle.
///
/// Writes the effective selection (the defaults, plus the agent's extras with `--agent`) into
/// `DIR/<name>/…` from the verified corpus, preparing first — with every check of `prepare` —
/// when a source's corpus is missing or not at its pin. Regular files only, the exact bytes,
/// modes as the corpus has them; each bundle staged in DIR and renamed into place, so a reader
/// sees the old bundle or the new one. `DIR/.skillfold-install.json` records what it installed
/// and for which agent (taken when `--agent` is not given; another one needs `--switch-agent`):
/// a bundle no longer selected is removed, a folder it did not install is never touched, and one
/// that has a selected bundle's name is a refusal (`install_conflict`), nothing changed. What it
/// owns is proven by content: a recorded folder whose files changed is a conflict too, unless
/// `--replace-changed`. A second run with nothing changed writes nothing. See docs/install.md.
///
/// Exit status: 0 installed (or unchanged); 1 retryable (a source unreachable, a guard held, a
/// full disk, another install running); 2 configuration or verification (bad descriptor,
/// unknown agent, a bundle that does not verify, a conflict, a link at the target, a corrupt
/// record, a read-only target).
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// The folder to install into (created if missing), e.g. `.claude/skills` or
    /// `.agents/skills`.
    #[arg(long, value_name = "DIR")]
    into: PathBuf,

    /// Install this agent's selection: the defaults plus its extras (default: the agent the
    /// folder's record remembers, or the defaults for a folder without a record).
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,

    /// Install `--agent`'s selection (or, without it, the defaults) into a folder installed for
    /// another agent: the recorded selection's other bundles are removed.
    #[arg(long)]
    switch_agent: bool,

    /// Replace (or, when no longer selected, remove) a bundle skillfold installed whose files
    /// changed since — edited by hand, or written over by another tool: what it holds is lost.
    /// Without it such a folder is a conflict, left as it is.
    #[arg(long)]
    replace_changed: bool,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    fetch_timeout: FetchTimeoutArg,
}

pub fn run(args: InstallArgs) -> Exit {
    let plan = match args.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let interrupt = interrupt_on_signals();
    let progress = ProgressLines::new();
    let result = install::install(
        &plan,
        install::AgentRequest {
            agent: args.agent.as_deref(),
            switch: args.switch_agent,
        },
        args.replace_changed,
        &args.into,
        &prepare::Options {
            interrupt: &interrupt,
            progress: &progress,
            concurrency: 4,
            fetch_timeout: args.fetch_timeout.fetch_timeout,
        },
    );
    progress.finish();
    match result {
        Ok(report) => {
            print_summary(&report);
            crate::cli::output::finish(Exit::Ok, args.json, &report)
        }
        Err(e) => {
            diag!("error: {e}");
            let hint = crate::format::hint::Hint::of_refusal(
                e.code.as_str(),
                &e.details,
                crate::format::hint::Via::Descriptor,
            );
            crate::cli::output::details("  ", &e.details, hint.as_ref());
            Exit::of(&e)
        }
    }
}

fn print_summary(report: &InstallReport) {
    use install::InstallStatus;
    for b in &report.bundles {
        match (&b.previous_version, &b.previous_hash) {
            (Some(version), Some(hash)) if b.status == InstallStatus::Updated => diag!(
                "updated: {} {} -> {} ({} -> {})",
                escape::text(&b.name),
                escape::text(version),
                escape::text(&b.version),
                crate::support::hex::short(hash),
                crate::support::hex::short(&b.hash)
            ),
            _ => diag!(
                "{}: {} {}",
                b.status.as_str(),
                escape::text(&b.name),
                escape::text(&b.version)
            ),
        }
    }
    for name in &report.foreign {
        diag!("foreign: {name} (not installed by skillfold; left alone)");
    }
    // What the folder holds now, and what the run did, each counted.
    let count =
        |status: InstallStatus| report.bundles.iter().filter(|b| b.status == status).count();
    let removed = count(InstallStatus::Removed);
    let done: Vec<String> = [
        InstallStatus::Installed,
        InstallStatus::Updated,
        InstallStatus::Repaired,
        InstallStatus::Removed,
    ]
    .into_iter()
    .filter(|s| count(*s) > 0)
    .map(|s| format!("{} {}", count(s), s.as_str()))
    .collect();
    diag!(
        "{} bundle(s) in `{}` for {}{}",
        report.bundles.len() - removed,
        escape::path(&report.directory),
        install::agent_shown(report.agent.as_deref()),
        if done.is_empty() {
            ": nothing changed".to_owned()
        } else {
            format!(": {}", done.join(", "))
        },
    );
}
