//! `skillfold import FILE`: print a descriptor draft made from another tool's lock file.

use std::sync::atomic::AtomicBool;

use clap::Args;

use crate::cli::exit::{self, Exit};
use crate::ops::import::{self, entry::Rewrite};
use crate::ops::pin::Stop;
use crate::support::escape;

/// Turn another tool's lock file into a descriptor draft to review.
///
/// Reads `skills-lock.json` or `~/.agents/.skill-lock.json` of the `skills` CLI,
/// `toolhive.lock.yaml` of ToolHive, or `apm.lock.yaml` of Microsoft APM (the format is told from
/// the content), resolves every entry
/// to a full commit and the digest of its bundle, fetching exactly as `skillfold pin` does, and
/// prints the draft on stdout (YAML that passes `skillfold check`); what was resolved, compared
/// and left out goes to stderr. A moving ref is resolved once and written as the commit, with a
/// comment naming the ref. A content hash the lock records is compared with the bundle fetched;
/// a mismatch is reported, never silently replaced. Entries that cannot be resolved (a local
/// path, credentials in a URL, an unreachable host, a source type skillfold does not pin, a
/// bundle that breaks the rules) are left out and listed with the reason. See docs/import.md.
///
/// Exit status: 0 every entry is in the draft, hashes agreeing; 1 some entries were left out,
/// each for a retryable reason (the network); 2 the file was refused, or an entry was left out
/// for a configuration or verification reason, or a recorded hash differs.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skillfold import skills-lock.json > skillfold.yaml\n  \
    skillfold import ~/.agents/.skill-lock.json\n  \
    skillfold import toolhive.lock.yaml --rewrite https://github.com/=https://git.example.com/mirror/\n  \
    skillfold import apm.lock.yaml > skillfold.yaml"
)]
pub struct ImportArgs {
    /// The lock file (at most 1 MiB).
    #[arg(value_name = "FILE")]
    file: std::path::PathBuf,

    /// Replace the URL prefix FROM with TO in every repository URL of the lock before it is
    /// checked and fetched (as Git's `url.<base>.insteadOf`: a mirror, a GitHub Enterprise
    /// host); repeatable, the first matching prefix applies. The draft names the rewritten URL.
    #[arg(long, value_name = "FROM=TO", value_parser = Rewrite::parse)]
    rewrite: Vec<Rewrite>,

    #[command(flatten)]
    fetch_timeout: super::prepare::FetchTimeoutArg,
}

pub fn run(args: ImportArgs) -> Exit {
    let interrupt = AtomicBool::new(false);
    let stop = Stop {
        interrupt: &interrupt,
        deadline: args.fetch_timeout.fetch_timeout,
    };
    let imported = match import::import(&args.file, &args.rewrite, stop) {
        Ok(imported) => imported,
        Err(e) => {
            diag!("error: {e} [{}]", e.code());
            return exit::of(e.code());
        }
    };
    diag!(
        "{}: {}",
        escape::path(&args.file),
        imported.format.describe()
    );
    for r in &imported.resolved {
        let from = r
            .from_ref
            .as_ref()
            .map(|f| format!(", resolved from {f}"))
            .unwrap_or_default();
        diag!(
            "resolved: `{}` -> {} at {}{from}",
            r.key,
            r.bundle.name(),
            r.commit
        );
        if let Some(mismatch) = &r.mismatch {
            diag!(
                "error: `{}`: {mismatch} [{}]",
                r.key,
                import::code::ImportCode::LockHashMismatch
            );
        }
        if let Some(uncompared) = &r.uncompared {
            diag!("note: `{}`: {uncompared}", r.key);
        }
    }
    for l in &imported.left_out {
        diag!("left out: `{}`: {} [{}]", l.key, l.reason, l.code);
    }
    let findings = imported.findings();
    diag!(
        "{} of {} entries in the draft; {} left out",
        imported.resolved.len(),
        imported.resolved.len() + imported.left_out.len(),
        imported.left_out.len()
    );
    let max = crate::format::limits::MAX_BUNDLES_PER_CATALOGUE;
    if imported.resolved.len() > max {
        diag!(
            "note: an agent gets at most {max} skills unless the descriptor raises \
             `selection.max_skills` (`check` refuses more): move some to \
             agents' `skills` in the draft"
        );
    }
    Exit::worst(findings).worse(crate::cli::output::print(&imported.draft))
}
