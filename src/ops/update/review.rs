//! The review of an update as Markdown, the text `update` prints on stdout: fit to read in a
//! terminal and to paste (or pipe) as a merge request's description. Per source: the commits (an
//! image's digests), the signer, a table of the approved bundles (version and digest, old and
//! new, and a count of the files changed), then per changed bundle the files added, removed and
//! changed and the unified diff in a fenced block whose fence is longer than any run of backticks
//! inside it, so bundle content cannot close it early. Values from outside are escaped.

use std::fmt::Write as _;

use crate::support::error_code::Coded as _;
use crate::support::escape;

use super::{BundleUpdate, SourceUpdate, UpdateReport, UpdateStatus};

/// The review of `report` as Markdown; `written` says whether the descriptor was rewritten,
/// `descriptor` names it.
pub fn markdown(report: &UpdateReport, descriptor: &str) -> String {
    let mut out = String::new();
    let changed: usize = report
        .sources
        .iter()
        .map(|s| {
            s.bundles
                .iter()
                .filter(|b| b.status == UpdateStatus::Changed)
                .count()
        })
        .sum();
    let _ = writeln!(out, "# skillfold update\n");
    let _ = writeln!(
        out,
        "{} source(s) reviewed, {changed} bundle(s) changed. {}\n",
        report.sources.len(),
        outcome(report, descriptor)
    );
    for source in &report.sources {
        source_section(&mut out, source);
    }
    out
}

fn outcome(report: &UpdateReport, descriptor: &str) -> String {
    let descriptor = escape::text(descriptor);
    if report.written {
        format!(
            "`{descriptor}` was rewritten: {} value(s) changed, nothing else.",
            report.scalars
        )
    } else if let Some(error) = &report.rewrite_error {
        format!(
            "`{descriptor}` was not rewritten: {} [{}]",
            error.message, error.code
        )
    } else if report.has_refusals() || report.has_transient_failures() {
        format!("Nothing was written to `{descriptor}`: see the refusals below.")
    } else if report.scalars == 0 {
        format!("`{descriptor}` already pins these commits and bundles.")
    } else {
        format!(
            "Review only: `--write` would change {} value(s) in `{descriptor}`.",
            report.scalars
        )
    }
}

fn source_section(out: &mut String, source: &SourceUpdate) {
    let _ = writeln!(
        out,
        "## `{}`: {}\n",
        source.id.location,
        escape::text(&source.id.url)
    );
    // Without the commit (or digest) it names, the target is shown as it was asked for (`HEAD`,
    // `refs/heads/main`, a tag; escaped in the report): the error below says how far it got.
    let to = source.to.as_deref().unwrap_or(&source.target);
    let named = source
        .reference
        .as_deref()
        .map(|r| format!(" (`{}`)", escape::text(r)))
        .unwrap_or_default();
    let _ = writeln!(out, "- From `{}`", source.from);
    let moved = match (
        source.to.as_deref() == Some(source.from.as_str()),
        source.id.kind,
    ) {
        (false, _) => "",
        (true, crate::descriptor::kind::SourceKind::Oci) => " (the same image)",
        (true, _) => " (the same commit)",
    };
    let _ = writeln!(out, "- To `{to}`{named}{moved}");
    if let Some(signer) = &source.signer {
        let _ = writeln!(
            out,
            "- Signed by {} (`{}`, {})",
            escape::text(&signer.principal),
            signer.fingerprint,
            signer.format
        );
    }
    if let Some(publisher) = &source.publisher {
        let _ = writeln!(out, "- Published by {publisher}");
    }
    if let Some(error) = &source.error {
        let kind = if error.is_retryable() {
            "Could not be fetched"
        } else {
            "Refused"
        };
        let _ = writeln!(out, "- **{kind}**: {} [{}]", error.message, error.code);
    }
    let _ = writeln!(out);
    if source.bundles.is_empty() {
        return;
    }
    let _ = writeln!(out, "| Bundle | Version | Digest | Files |");
    let _ = writeln!(out, "|---|---|---|---|");
    for bundle in &source.bundles {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            bundle.name,
            cell(&version_change(bundle)),
            digest_change(bundle),
            cell(&file_counts(bundle))
        );
    }
    let _ = writeln!(out);
    for bundle in &source.bundles {
        bundle_section(out, bundle);
    }
}

fn version_change(bundle: &BundleUpdate) -> String {
    let old = escape::text(&bundle.old_version).to_string();
    match &bundle.new_version {
        Some(new) if *new != bundle.old_version => format!("{old} → {}", escape::text(new)),
        _ => old,
    }
}

fn digest_change(bundle: &BundleUpdate) -> String {
    let short = |h: &str| format!("`{}…`", &h[..h.len().min(12)]);
    match (&bundle.status, &bundle.new_hash) {
        (_, Some(new)) if *new != bundle.old_hash => {
            format!("{} → {}", short(&bundle.old_hash), short(new))
        }
        (_, Some(_)) => format!("{} (unchanged)", short(&bundle.old_hash)),
        _ => "**refused**".to_owned(),
    }
}

fn file_counts(bundle: &BundleUpdate) -> String {
    let files = &bundle.files;
    let parts: Vec<String> = [
        (files.changed.len(), "changed"),
        (files.added.len(), "added"),
        (files.removed.len(), "removed"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        "—".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A table cell: a `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn bundle_section(out: &mut String, bundle: &BundleUpdate) {
    if bundle.status == UpdateStatus::Unchanged && bundle.files.is_empty() {
        return;
    }
    let _ = writeln!(out, "### `{}` {}\n", bundle.name, version_change(bundle));
    for problem in &bundle.problems {
        let _ = writeln!(out, "- **refused**: {problem}");
    }
    for warning in &bundle.warnings {
        let _ = writeln!(out, "- **warning**: {warning}");
    }
    let list = |paths: &[String]| {
        paths
            .iter()
            .map(|p| format!("`{}`", escape::text(p)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (paths, what) in [
        (&bundle.files.changed, "Changed"),
        (&bundle.files.added, "Added"),
        (&bundle.files.removed, "Removed"),
    ] {
        if !paths.is_empty() {
            let _ = writeln!(out, "- {what}: {}", list(paths));
        }
    }
    if !bundle.files.diff.is_empty() {
        let fence = "`".repeat(longest_backtick_run(&bundle.files.diff).max(2) + 1);
        let _ = writeln!(out, "\n{fence}diff\n{}{fence}", bundle.files.diff);
    }
    let _ = writeln!(out);
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::update::diff::FileChanges;

    fn report(diff: &str) -> UpdateReport {
        UpdateReport {
            sources: vec![SourceUpdate {
                id: crate::ops::target::SourceId {
                    location: "skills[0].git".into(),
                    kind: crate::descriptor::kind::SourceKind::Git,
                    url: "https://example.com/s.git".into(),
                },
                target: "HEAD".into(),
                reference: Some("HEAD".into()),
                from: "a".repeat(40),
                to: Some("b".repeat(40)),
                signer: None,
                publisher: None,
                bundles: vec![
                    BundleUpdate {
                        name: "pdf".into(),
                        status: UpdateStatus::Changed,
                        old_version: "1.0".into(),
                        new_version: Some("1.1".into()),
                        old_hash: "c".repeat(64),
                        new_hash: Some("d".repeat(64)),
                        files: FileChanges {
                            changed: vec!["SKILL.md".into()],
                            diff: diff.into(),
                            ..FileChanges::default()
                        },
                        problems: vec![],
                        warnings: vec![
                            "SKILL.md: line 9, column 1: an HTML comment of 1 line(s) [hidden_comment]"
                                .into(),
                        ],
                        found: vec![],
                        folder: String::new(),
                    },
                    BundleUpdate {
                        name: "docx".into(),
                        status: UpdateStatus::Unchanged,
                        old_version: "2".into(),
                        new_version: Some("2".into()),
                        old_hash: "e".repeat(64),
                        new_hash: Some("e".repeat(64)),
                        files: FileChanges::default(),
                        problems: vec![],
                        warnings: vec![],
                        found: vec![],
                        folder: String::new(),
                    },
                ],
                error: None,
            }],
            written: false,
            scalars: 3,
            rewrite_error: None,
        }
    }

    #[test]
    fn the_review_lists_every_bundle_and_diffs_the_changed_ones() {
        let text = markdown(
            &report("--- a/pdf/SKILL.md\n+++ b/pdf/SKILL.md\n"),
            "skillfold.yaml",
        );
        assert!(text.contains("1 source(s) reviewed, 1 bundle(s) changed. Review only: `--write` would change 3 value(s) in `skillfold.yaml`."), "{text}");
        assert!(
            text.contains("| `pdf` | 1.0 → 1.1 | `cccccccccccc…` → `dddddddddddd…` | 1 changed |"),
            "{text}"
        );
        assert!(
            text.contains("| `docx` | 2 | `eeeeeeeeeeee…` (unchanged) | — |"),
            "{text}"
        );
        assert!(
            text.contains(
                "### `pdf` 1.0 → 1.1\n\n- **warning**: SKILL.md: line 9, column 1: an HTML comment of 1 line(s) [hidden_comment]\n- Changed: `SKILL.md`\n\n```diff\n--- a/pdf/SKILL.md\n"
            ),
            "{text}"
        );
        assert!(!text.contains("### `docx`"), "{text}");
    }

    #[test]
    fn a_target_without_its_commit_is_shown_as_it_was_asked_for() {
        let mut unresolved = report("");
        let source = &mut unresolved.sources[0];
        (source.to, source.reference, source.bundles) = (None, None, vec![]);
        source.target = "refs/heads/main".into();
        let text = markdown(&unresolved, "d.yaml");
        assert!(text.contains("- To `refs/heads/main`\n"), "{text}");
    }

    #[test]
    fn bundle_content_cannot_close_the_fence() {
        let text = markdown(&report(" ````\n+```` evil\n"), "d.yaml");
        assert!(
            text.contains("`````diff\n ````\n+```` evil\n`````\n"),
            "{text}"
        );
    }
}
