//! `skillfold outdated`: what the tracked branches offer against the pins.

use std::sync::atomic::AtomicBool;

use crate::codes::CommandCode;
use crate::descriptor::kind::SourceKind;
use crate::format::hint::{Hint, Via};
use crate::ops::outdated::{self, OutdatedStatus, OutdatedSummary, SourceOutdated};
use crate::support::{escape, hex};
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;

/// Compare each source's pins with the head of its tracked branch (Git) or tag (OCI).
///
/// For every Git source, reads the head of `track` (default: the remote's `HEAD`) from the
/// server's ref listing, fetches that commit into a temporary directory as `prepare` would, and
/// reports each approved bundle as `unchanged`, `changed` (with its new digest and declared
/// version), `removed` or `invalid`, and the folders holding a `SKILL.md` that are not approved
/// as `available`. It prints one line per source, a line per approved bundle that is not
/// `unchanged`, and a summary line; `--available` lists the bundles not approved, `--json`
/// everything (whole commit ids and digests; the lines shorten them to 12 digits). For every OCI source with `track: TAG`, reads the digest the tag names (a
/// `HEAD` of its manifest): the pinned digest means every bundle is `unchanged` and nothing else
/// is fetched; another is pulled into a temporary directory as `prepare` would and reported the
/// same way. An OCI source without `track` is reported as not tracked. Nothing is written; the
/// descriptor and the corpora are not touched.
///
/// Exit status: 0 the report was made, whether or not updates exist (with `--exit-code`: and no
/// pin is behind); 1 a branch or tag could not be read or fetched (worth a retry); 2 a bad
/// descriptor, or a head that is refused (a symbolic link in its tree, a branch or tag that does
/// not exist, an image that fails a check), or with `--exit-code` an approved bundle changed,
/// removed or invalid at its head (`pins_outdated`: a review is due, which a retry cannot do).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  skillfold outdated -c skillfold.yaml --exit-code")]
pub struct OutdatedArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,

    /// Also list the bundles at each head that no source of its URL approves (the summary line
    /// counts them).
    #[arg(long)]
    available: bool,

    /// Exit 2 (`pins_outdated`) when an approved bundle is changed, removed or invalid at its
    /// head, for a CI job that fails when the pins are behind.
    #[arg(long)]
    exit_code: bool,

    #[command(flatten)]
    fetch_timeout: super::prepare::FetchTimeoutArg,
}

pub fn run(args: OutdatedArgs) -> Exit {
    let plan = match args.config.plan() {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    let interrupt = AtomicBool::new(false);
    let report = outdated::outdated(&plan, &interrupt, args.fetch_timeout.fetch_timeout);
    // A bundle no source of a URL approves is shown with the first source of that URL only.
    let mut shown = std::collections::BTreeSet::new();
    for source in &report.sources {
        let unapproved: Vec<&str> = report
            .unapproved(source)
            .filter(|name| shown.insert((source.id.url.as_str(), *name)))
            .collect();
        print_source(source, &unapproved, args.available);
    }
    let summary = report.summary();
    diag!("{}", summary_line(&summary, args.available));
    let mut exit = Exit::worst(report.failures());
    if args.exit_code && summary.pins_behind() {
        let code = CommandCode::PinsOutdated;
        diag!("error: a pin is not at its head (--exit-code) [{code}]");
        exit = exit.worse(crate::cli::exit::of(code));
    }
    crate::cli::output::finish(exit, args.json, &report)
}

/// One line per source, then one per approved bundle that is not `unchanged` at the head, then
/// (with `--available`) one per bundle at the head that no source of its URL approves.
fn print_source(source: &SourceOutdated, unapproved: &[&str], list: bool) {
    let url = escape::text(&source.id.url);
    let location = &source.id.location;
    if let Some(error) = &source.error {
        diag!(
            "error: {location}: {url}: {} [{}]",
            error.message,
            error.code
        );
        return;
    }
    let Some(tracking) = &source.tracking else {
        diag!(
            "{location}: {url}: not tracked (no `track:` tag; an image has no default head): pinned {}",
            escape::text(hex::short(&source.pinned))
        );
        return;
    };
    let head = source.head.as_deref().unwrap_or_default();
    let at = if head == source.pinned {
        format!("at the head {}", escape::text(hex::short(head)))
    } else {
        format!(
            "head {}, pinned {}",
            escape::text(hex::short(head)),
            escape::text(hex::short(&source.pinned))
        )
    };
    let followed = match source.id.kind {
        SourceKind::Oci => format!("{url}:{}", escape::text(tracking)),
        _ => format!("{url} {}", escape::text(tracking)),
    };
    let mut counts =
        bundle_counts(|status| source.bundles.iter().filter(|b| b.status == status).count());
    if !unapproved.is_empty() {
        counts.push_str(&format!(", {} not approved", unapproved.len()));
    }
    diag!("{location}: {followed}: {at}: {counts}");
    for b in &source.bundles {
        let detail = match b.status {
            OutdatedStatus::Unchanged => continue,
            OutdatedStatus::Changed => format!(
                ": {} → {}{}",
                hex::short(&b.hash),
                escape::text(hex::short(b.new_hash.as_deref().unwrap_or_default())),
                b.new_version
                    .as_deref()
                    .map(|v| format!(" (declares `{}`)", escape::text(v)))
                    .unwrap_or_default()
            ),
            OutdatedStatus::Invalid => format!(": {}", b.problems.join("; ")),
            OutdatedStatus::Removed => ": no folder at the head".to_owned(),
        };
        diag!(
            "  {} {}@{}{detail}",
            b.status,
            escape::text(&b.name),
            escape::text(&b.version)
        );
        if b.status == OutdatedStatus::Invalid
            && let Some(hint) =
                Hint::of_lines(b.problems.iter().map(String::as_str), Via::Descriptor)
        {
            diag!("    hint: {hint}");
        }
    }
    if list {
        for name in unapproved {
            diag!("  available {}", escape::text(name));
        }
    }
}

/// `1 changed, 4 unchanged`: each status that counts any bundle, or `no approved bundle`.
fn bundle_counts(count: impl Fn(OutdatedStatus) -> usize) -> String {
    let parts: Vec<String> = OutdatedStatus::ALL
        .iter()
        .filter_map(|&status| match count(status) {
            0 => None,
            n => Some(format!("{n} {status}")),
        })
        .collect();
    if parts.is_empty() {
        "no approved bundle".to_owned()
    } else {
        parts.join(", ")
    }
}

/// The last line: how many sources, what the approved bundles are at the heads, and how many
/// bundles there are not approved.
fn summary_line(summary: &OutdatedSummary, listed: bool) -> String {
    let mut line = format!("{} source(s) checked", summary.sources);
    if summary.failed > 0 {
        line.push_str(&format!(", {} failed", summary.failed));
    }
    line.push_str(": ");
    line.push_str(&bundle_counts(|status| summary.count(status)));
    if summary.available > 0 {
        line.push_str(&format!(
            "; {} bundle(s) not approved{}",
            summary.available,
            if listed {
                ""
            } else {
                " (--available lists them)"
            }
        ));
    }
    line
}
