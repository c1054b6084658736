//! `skillfold update`: re-pin Git and OCI sources after a review, and optionally write the new
//! pins.

use std::sync::atomic::AtomicBool;

use crate::format::version::VersionLabel;
use crate::ops::update::{self, UpdateRequest, UpdateStatus, review};
use crate::support::escape;
use clap::Args;

use super::config::ConfigArg;
use crate::cli::exit::Exit;
use crate::cli::sarif::Format;

/// Review moving Git sources to a new commit (OCI sources to a new image), and write the new
/// pins with `--write`.
///
/// For each Git source (or only those named), fetches the target commit — the head of the
/// source's `track` branch (default: the remote's `HEAD`), or `--to` — exactly as `prepare`
/// would, and applies every check of `prepare` to it: the tree, the signature policy (`verify`),
/// the bundle rules under the source's limits, and each approved bundle against the pin it would
/// get (its name, the version it declares, its digest). For each OCI source with `track: TAG`
/// (or named, with `--to`), pulls the image the tag (or `--to`) names as `prepare` would and
/// applies the same checks. It prints a review in Markdown on stdout: per approved bundle the old
/// and new version and digest, the files added, removed and changed, and a unified diff of the
/// text files.
///
/// Without `--write` nothing is written. With `--write`, and only when every selected source
/// passes, the descriptor is rewritten in place: only the `revision` (the digest in an OCI
/// `reference`), `hash` and `version` values that change; comments, key order, quoting and line
/// endings stay as they are. The new
/// file is read back and checked before it atomically replaces the old one. A `"<version>"`
/// placeholder left by `pin` is filled from the version the bundle declares, and refused when
/// it declares none. Run `skillfold prepare` afterwards to deploy the new pins.
///
/// Exit status: 0 the review was made (and written, with `--write`), whether or not anything
/// changed; 1 a commit could not be fetched or the file could not be written (worth a retry);
/// 2 a bad descriptor, an unknown source, or a target that fails a check (nothing written).
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    skillfold update -c skillfold.yaml                    # review every Git source\n  \
    skillfold update -c skillfold.yaml pdf --write        # re-pin the source approving `pdf`\n  \
    skillfold update -c skillfold.yaml --to v2.1.0 'skills[0].git' > review.md")]
pub struct UpdateArgs {
    #[command(flatten)]
    config: ConfigArg,

    /// The sources to update: a location such as `skills[0].git` (as `check` names it),
    /// a repository URL as written (without credentials; `REGISTRY/REPOSITORY` for an image),
    /// or the name of a bundle the source approves. Default: every Git source and every OCI
    /// source with `track`.
    #[arg(value_name = "SOURCE")]
    sources: Vec<String>,

    /// The commit to move to: a full commit id, or a branch or tag name (resolved once, on each
    /// source's server, to a full id); for an OCI source, a `sha256:` manifest digest or a tag
    /// (resolved once). Default: the head of each source's tracked branch or tag.
    #[arg(long, value_name = "REVISION")]
    to: Option<String>,

    /// Rewrite the descriptor with the new pins when every selected source passes.
    #[arg(long)]
    write: bool,

    /// The release label of each bundle whose digest changes and which declares no version of
    /// its own (a `"<version>"` placeholder it fills too); without it, such a bundle keeps its
    /// label.
    #[arg(long, value_name = "LABEL", value_parser = parse_version)]
    version: Option<VersionLabel>,

    /// Print the report as JSON on stdout instead of the Markdown review.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    fetch_timeout: super::prepare::FetchTimeoutArg,

    /// What stdout holds: `text` (the Markdown review), `json` (as `--json`) or `sarif` (a
    /// SARIF 2.1.0 log of the refusals and findings).
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value = "text",
        conflicts_with = "json"
    )]
    format: Format,
}

pub fn run(mut args: UpdateArgs) -> Exit {
    args.json |= args.format == Format::Json;
    let sarif = args.format == Format::Sarif;
    let interrupt = AtomicBool::new(false);
    let request = UpdateRequest {
        path: &args.config.path,
        selectors: &args.sources,
        to: args.to.as_deref(),
        write: args.write,
        version: args.version.as_ref(),
        fetch_timeout: args.fetch_timeout.fetch_timeout,
    };
    let report = match update::update(&request, &interrupt) {
        Ok(report) => report,
        Err(e) => {
            for line in e.lines() {
                diag!("error: {line}");
            }
            if sarif {
                let log = crate::cli::sarif::update::failed(&args.config.path, &e);
                return Exit::of(&e).worse(crate::cli::sarif::print(&log));
            }
            return Exit::of(&e);
        }
    };
    for source in &report.sources {
        if let Some(error) = &source.error {
            diag!(
                "error: {}: {}: {} [{}]",
                source.id.location,
                escape::text(&source.id.url),
                error.message,
                error.code
            );
        }
        for bundle in &source.bundles {
            for problem in &bundle.problems {
                diag!("error: {}: {}: {problem}", source.id.location, bundle.name);
            }
        }
    }
    same_label_notice(&report);
    let shown = args.config.path.display().to_string();
    if let Some(error) = &report.rewrite_error {
        diag!("error: {} [{}]", error.message, error.code);
    } else if report.written {
        diag!(
            "wrote {}: {} value(s) changed",
            escape::text(&shown),
            report.scalars
        );
    } else if !report.has_refusals() && !report.has_transient_failures() {
        if report.scalars == 0 {
            diag!("nothing to update: the pins are the target's");
        } else {
            diag!(
                "review only: nothing written (add --write to change {} value(s) in {})",
                report.scalars,
                escape::text(&shown)
            );
        }
    }
    let exit = Exit::worst(report.failures());
    if args.json {
        return crate::cli::output::finish(exit, true, &report);
    }
    if sarif {
        let log = crate::cli::sarif::update::reviewed(&args.config.path, &report);
        return exit.worse(crate::cli::sarif::print(&log));
    }
    exit.worse(crate::cli::output::print(&review::markdown(
        &report, &shown,
    )))
}

/// Says of each bundle whose bytes change under an unchanged label that it does, and which
/// option sets a new one: a label names one reviewed release.
fn same_label_notice(report: &update::UpdateReport) {
    for source in &report.sources {
        for bundle in &source.bundles {
            let moved = bundle.status == UpdateStatus::Changed
                && bundle.new_hash.as_deref() != Some(bundle.old_hash.as_str())
                && bundle.new_version.as_deref() == Some(bundle.old_version.as_str());
            if moved {
                diag!(
                    "note: {}: {}: its bytes change but its version stays `{}`: give \
                     `--version LABEL` to label the new release",
                    source.id.location,
                    bundle.name,
                    escape::text(&bundle.old_version)
                );
            }
        }
    }
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
pub(super) fn parse_version(s: &str) -> Result<VersionLabel, String> {
    if s == crate::descriptor::VERSION_PLACEHOLDER {
        return Err("the placeholder is not a label: give the release label you reviewed".into());
    }
    VersionLabel::parse(s).map_err(|e| e.to_string())
}
