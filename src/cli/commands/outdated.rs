//! `skillfold outdated`: what the tracked branches offer against the pins.

use std::sync::atomic::AtomicBool;

use crate::descriptor::kind::SourceKind;
use crate::format::hint::{Hint, Via};
use crate::ops::outdated::{self, OutdatedStatus};
use crate::support::escape;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;

/// Compare each source's pins with the head of its tracked branch (Git) or tag (OCI).
///
/// For every Git source, reads the head of `track` (default: the remote's `HEAD`) from the
/// server's ref listing, fetches that commit into a temporary directory as `prepare` would, and
/// reports each approved bundle as `unchanged`, `changed` (with its new digest and declared
/// version), `removed` or `invalid`, and the folders holding a `SKILL.md` that are not approved
/// as `available`. For every OCI source with `track: TAG`, reads the digest the tag names (a
/// `HEAD` of its manifest): the pinned digest means every bundle is `unchanged` and nothing else
/// is fetched; another is pulled into a temporary directory as `prepare` would and reported the
/// same way. An OCI source without `track` is reported as not tracked. Nothing is written; the
/// descriptor and the corpora are not touched.
///
/// Exit status: 0 the report was made, whether or not updates exist; 1 a branch or tag could not
/// be read or fetched (worth a retry); 2 a bad descriptor, or a head that is refused (a symbolic
/// link in its tree, a branch or tag that does not exist, an image that fails a check).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  skillfold outdated -c skillfold.yaml --json")]
pub struct OutdatedArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,

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
    for source in &report.sources {
        let url = escape::text(&source.id.url);
        if let Some(error) = &source.error {
            diag!(
                "error: {}: {url}: {} [{}]",
                source.id.location,
                error.message,
                error.code
            );
            continue;
        }
        let Some(tracking) = &source.tracking else {
            diag!(
                "{}: {url}: not tracked (no `track:` tag; an image has no default head): pinned {}",
                source.id.location,
                source.pinned
            );
            continue;
        };
        let head = source.head.as_deref().unwrap_or_default();
        let moved = if head == source.pinned {
            "the pin is the head"
        } else {
            "the head moved"
        };
        let followed = match source.id.kind {
            SourceKind::Oci => format!("{url}:{}", escape::text(tracking)),
            _ => format!("{url} {tracking}"),
        };
        diag!(
            "{}: {followed}: pinned {}, head {head} ({moved})",
            source.id.location,
            source.pinned
        );
        for b in &source.bundles {
            let detail = match b.status {
                OutdatedStatus::Changed => format!(
                    " → {}{}",
                    b.new_hash.as_deref().unwrap_or_default(),
                    b.new_version
                        .as_deref()
                        .map(|v| format!(" (declares `{}`)", escape::text(v)))
                        .unwrap_or_default()
                ),
                _ => String::new(),
            };
            diag!(
                "  {} {}@{}: {}{detail}",
                b.status,
                b.name,
                escape::text(&b.version),
                b.hash
            );
            if b.status == OutdatedStatus::Invalid {
                let hint = Hint::of_lines(b.problems.iter().map(String::as_str), Via::Descriptor);
                crate::cli::output::details("    ", &b.problems, hint.as_ref());
            }
        }
        for name in &source.available {
            diag!("  available {}", escape::text(name));
        }
    }
    let exit = Exit::worst(report.failures());
    crate::cli::output::finish(exit, args.json, &report)
}
