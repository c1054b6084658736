//! `skillfold pin`: print the descriptor entry that pins bundles of one commit.

use std::sync::atomic::AtomicBool;

use crate::descriptor::code::DescriptorCode;
use crate::format::hint::{Hint, Via};
use crate::format::limits::Limits;
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::format::version::VersionLabel;
use crate::ops::pin::{self, entry::Entry, revision::Revision};
use crate::source::code::PrepareCode;
use crate::source::git::candidate::CandidateTarget;
use crate::support::escape;
#[cfg(feature = "signatures")]
use crate::trust::commit::policy::OpenPgpKeys;
use crate::trust::commit::policy::TrustPolicy;
#[cfg(feature = "signatures")]
use crate::trust::keys::allowed_signers::AllowedSigners;
use clap::Args;

use crate::cli::exit::{self, Exit};
use crate::cli::sarif::Format;
use crate::cli::sarif::pin::{self as sarif, PinLog};

/// Fetch one commit and print the descriptor entry that pins the named bundles, or write it
/// into the descriptor.
///
/// The reviewer's helper: the commit is fetched exactly as `prepare` fetches it and every check
/// applies (no symlink anywhere in the tree, bundle rules, bounds). The printed `git:` entry
/// holds the full commit id, each bundle's hash and a version placeholder to replace with the
/// reviewed release (or the label `--version` gives). Nothing is written to any corpus, and it
/// is never meant to run at startup. To pin a local directory, use `skillfold hash DIR`.
///
/// `--revision` may name a branch or a tag: it is resolved once, now, from the server's ref
/// listing, and the entry holds the full commit id with a comment saying what it was resolved
/// from and when.
///
/// With `--write`, the entry is appended to the descriptor (`-c`) instead of printed: to the
/// defaults' `skills`, or to an agent's (`--agent`, made when missing); to the `approved` list
/// of a source of the same URL, commit and root when there is one. Every other byte of the file
/// stays; the new file is read back and checked before it replaces the old one.
///
/// With `--all` instead of names, every folder under the root holding a `SKILL.md` is taken:
/// the valid bundles are pinned and the refused ones listed on stderr with every reason (the
/// first step of reviewing a whole repository).
///
/// Exit status: 0 printed or written (with `--all`: at least one bundle pinned, refusals still
/// listed); 1 the source could not be fetched or the descriptor written; 2 a refused commit or
/// bundle (with `--all`: none pinned), a ref the server does not list, or an entry the
/// descriptor cannot take.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skillfold pin --source https://github.com/acme/skills.git \\\n    \
    --revision 0123456789abcdef0123456789abcdef01234567 --root skills pdf docx\n  \
    skillfold pin --source https://github.com/acme/skills.git --revision v1.2.0 \\\n    \
    --root skills pdf --write --version 2026.12.07 -c skillfold.yaml\n  \
    skillfold pin --source https://github.com/acme/skills.git \\\n    \
    --revision main --root skills/.curated --all"
)]
pub struct PinArgs {
    /// Repository URL (no credentials in it).
    #[arg(long, value_name = "URL")]
    source: String,

    /// The commit to review: a full commit id (40 or 64 hex digits), or a branch or tag name,
    /// resolved once from the server's ref listing (the entry records the full id and what it
    /// was resolved from).
    #[arg(long, value_name = "REF", value_parser = parse_revision)]
    revision: CandidateTarget,

    /// Folder in the repository holding `<name>/SKILL.md` (hidden folders such as
    /// `skills/.curated` allowed; `..`, `.`, empty segments and absolute paths refused).
    #[arg(long, value_name = "DIR", value_parser = parse_root)]
    root: Option<RootPath>,

    /// Check the bundles under this limits profile (`chamvi`, `extended` or `key=value,…`, as
    /// for `hash --limits`); the printed entry names it.
    #[arg(long, value_name = "PROFILE", default_value = "chamvi", value_parser = super::hash::parse_limits)]
    limits: Limits,

    /// Refuse the commit unless it carries an SSH signature by a key this allowed-signers file
    /// (Git's `gpg.ssh.allowedSignersFile` format) lists for the `git` namespace (or an
    /// OpenPGP signature by a key of `--openpgp-keys`); the printed entry then carries
    /// `verify:` with the file.
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<std::path::PathBuf>,

    /// Armored OpenPGP public keys: refuse the commit unless it carries an OpenPGP signature by
    /// one of them (or an SSH signature allowed by `--allowed-signers`).
    #[arg(long, value_name = "FILE")]
    openpgp_keys: Option<std::path::PathBuf>,

    /// Which symbolic links the commit may hold: `refuse` (none anywhere in the tree) or
    /// `outside-bundles` (links outside the pinned bundles are listed and skipped; one inside or
    /// above a pinned bundle still refuses the commit); the printed entry names it.
    #[arg(long, value_name = "POLICY", default_value = "refuse", value_parser = crate::descriptor::Links::parse)]
    links: crate::descriptor::Links,

    /// Bundles to pin.
    #[arg(required_unless_present = "all", value_name = "NAME", value_parser = parse_name)]
    names: Vec<SkillName>,

    /// Pin every valid bundle under the root instead of named ones; the refused folders are
    /// listed with their reasons, and the exit status is 0 when at least one was pinned.
    #[arg(long, conflicts_with = "names")]
    all: bool,

    /// With `--all`: print the report as JSON on stdout (`source`, `revision`, `root`,
    /// `limits`, `signer`, `pinned`, `refused`, `entry`; see docs/cli.md).
    #[arg(long)]
    json: bool,

    /// Append the entry to the descriptor (`-c`) instead of printing it; the file is made
    /// when there is none.
    #[arg(long)]
    write: bool,

    /// With `--write`: the agent whose extras get the entry (made when missing); without it,
    /// the defaults.
    #[arg(long, value_name = "NAME", requires = "write", value_parser = parse_agent)]
    agent: Option<String>,

    /// The release label of every pinned bundle, in place of the `"<version>"` placeholder
    /// (see docs/updates.md for a convention).
    #[arg(long, value_name = "LABEL", value_parser = super::update::parse_version)]
    version: Option<VersionLabel>,

    /// The corpus directory of the entry (relative paths resolve against the descriptor's
    /// folder). Default: `/var/lib/skillfold/<owner>-<repo>[-<root>]`, with `-2`, `-3` added by
    /// `--write` when another source uses it.
    #[arg(long, value_name = "DIR")]
    directory: Option<String>,

    /// Run the scanner NAME that the descriptor (`-c`) declares under `scanners` on a read-only
    /// copy of each pinned bundle, and record its verdict in the entry (docs/scanners.md);
    /// repeatable. A scanner that gives no verdict fails the pin (`scan_failed`, exit 1).
    #[arg(long = "scan", value_name = "NAME", conflicts_with = "all")]
    scan: Vec<String>,

    #[command(flatten)]
    config: super::config::ConfigArg,

    #[command(flatten)]
    fetch_timeout: super::prepare::FetchTimeoutArg,

    /// What stdout holds: `text` (the entry), `json` (as `--json`, with `--all`) or `sarif` (a
    /// SARIF 2.1.0 log of the refusals and findings, in place of the entry).
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        default_value = "text",
        conflicts_with = "json"
    )]
    format: Format,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_revision(s: &str) -> Result<CandidateTarget, String> {
    CandidateTarget::parse(s)
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_agent(s: &str) -> Result<String, String> {
    if crate::descriptor::plan::valid_agent_name(s) {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{}`: an agent name is 1-64 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or digit",
            escape::text(s)
        ))
    }
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_root(s: &str) -> Result<RootPath, String> {
    RootPath::parse(s.trim_end_matches('/')).map_err(|e| format!("`{}`: {e}", escape::text(s)))
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_name(s: &str) -> Result<SkillName, String> {
    SkillName::parse(s).map_err(|e| e.to_string())
}

pub fn run(mut args: PinArgs) -> Exit {
    args.json |= args.format == Format::Json;
    // Checked here: clap's `requires` counts the default of a flag as present.
    if args.json && !args.all {
        let code = crate::codes::CommandCode::InvalidUsage;
        diag!(
            "error: `--json` reports `--all`; give it with `--all`, or name the bundles without it [{code}]"
        );
        return exit::of(code);
    }
    // Before any fetch: a scanner the descriptor does not declare is refused at once.
    let scanners = if args.scan.is_empty() {
        Vec::new()
    } else {
        match crate::ops::scan::declared(&args.config.path, &args.scan) {
            Ok(scanners) => scanners,
            Err(e) => {
                diag!("error: {e} [{}]", e.code());
                return exit::of(e.code());
            }
        }
    };
    let interrupt = AtomicBool::new(false);
    let trust = match trust_policy(&args) {
        Ok(trust) => trust,
        Err((code, e)) => {
            diag!("error: {e} [{code}]");
            return exit::of(code);
        }
    };
    let files: Vec<(&str, &std::path::Path)> = [
        ("allowed_signers", args.allowed_signers.as_deref()),
        ("openpgp_keys", args.openpgp_keys.as_deref()),
    ]
    .into_iter()
    .filter_map(|(key, path)| path.map(|p| (key, p)))
    .collect();
    let stop = pin::Stop {
        interrupt: &interrupt,
        deadline: args.fetch_timeout.fetch_timeout,
    };
    let out = PinLog {
        format: args.format,
        source: &args.source,
        root: args.root.as_ref(),
    };
    let revision = match pin::revision::resolve(&args.source, &args.revision, stop) {
        Ok(revision) => revision,
        Err(e) => return refused(&e).worse(out.refused(None, &e)),
    };
    if let Some(from) = &revision.from {
        diag!(
            "resolved `{}` ({}) to {}",
            escape::text(&from.name),
            escape::text(&from.full),
            revision.commit
        );
    }
    let directory = args
        .directory
        .clone()
        .unwrap_or_else(|| pin::entry::default_directory(&args.source, args.root.as_ref()));
    let shown = Shown {
        args: &args,
        revision: &revision,
        directory: &directory,
        files: &files,
    };
    if args.all {
        return run_all(&shown, trust.as_ref(), stop);
    }
    match pin::pin(
        &args.source,
        &revision.commit,
        args.root.as_ref(),
        &args.names,
        pin::PinPolicy {
            limits: args.limits,
            trust: trust.as_ref(),
            links: args.links,
        },
        stop,
    ) {
        Ok(pinned) => {
            show_links(&pinned.links);
            let log = out.pinned(revision.commit.as_str(), &pinned.bundles);
            for bundle in &pinned.bundles {
                let folder =
                    crate::source::git::commit::bundle_folder(args.root.as_ref(), bundle.name());
                for w in bundle.warnings() {
                    diag!("warning: {}", w.display_under(&folder));
                }
            }
            let bundles = match scanned(&pinned.bundles, &scanners) {
                Ok(bundles) => bundles,
                Err(exit) => return exit,
            };
            let entry = shown.entry(pinned.signer.as_ref());
            if args.write {
                return write(&shown, entry, &bundles).worse(sarif::print(log.as_ref()));
            }
            if let Some(log) = &log {
                return sarif::print(Some(log));
            }
            crate::cli::output::print(&pin::entry::descriptor_entry(&entry, &bundles))
        }
        Err(pin::PinError::Bundles(errors)) => {
            let log = out.not_taken(revision.commit.as_str(), &errors);
            for e in errors {
                let lines: Vec<String> = e.lines().iter().map(|l| format!("error: {l}")).collect();
                let hint = Hint::of_refusal(e.code().as_str(), &lines, Via::Flags);
                crate::cli::output::details_with(
                    "",
                    &lines,
                    "`--all --json` for all",
                    hint.as_ref(),
                );
            }
            exit::of(PrepareCode::VerificationFailed).worse(sarif::print(log.as_ref()))
        }
        Err(e) => refused(&e).worse(out.refused(Some(revision.commit.as_str()), &e)),
    }
}

/// Each of `bundles` with the verdicts of `scanners` on it (`--scan`), each said on stderr; a
/// scanner that gives no verdict ends the pin (`scan_failed`).
fn scanned(
    bundles: &[crate::format::bundle::Bundle],
    scanners: &[crate::descriptor::scanners::Scanner],
) -> Result<Vec<pin::PinnedBundle>, Exit> {
    let mut out = Vec::new();
    for bundle in bundles {
        let mut scans = Vec::new();
        for scanner in scanners {
            match crate::ops::scan::scan(scanner, bundle) {
                Ok(scanned) => {
                    diag!(
                        "scan: {} on `{}`: {} ({})",
                        scanned.scanner,
                        bundle.name(),
                        scanned.verdict.as_str(),
                        scanned.record.summary
                    );
                    scans.push(scanned.record);
                }
                Err(e) => {
                    diag!("error: `{}`: {e} [{}]", bundle.name(), e.code());
                    diag!(
                        "  hint: no verdict is recorded; fix the scanner or its `timeout` and pin again (see docs/scanners.md)"
                    );
                    return Err(exit::of(e.code()));
                }
            }
        }
        out.push(pin::PinnedBundle::from(bundle).with_scans(scans));
    }
    Ok(out)
}

/// What the entry says beside the bundles: the arguments, the commit, the directory and the
/// key files.
struct Shown<'a> {
    args: &'a PinArgs,
    revision: &'a Revision,
    directory: &'a str,
    files: &'a [(&'a str, &'a std::path::Path)],
}

impl<'a> Shown<'a> {
    /// The entry, with who signed the commit when its signature was checked.
    fn entry(&self, signer: Option<&'a crate::trust::commit::policy::Signer>) -> Entry<'a> {
        Entry {
            url: &self.args.source,
            revision: self.revision,
            root: self.args.root.as_ref(),
            limits: self.args.limits,
            links: self.args.links,
            trust: signer.map(|s| (self.files, s)),
            directory: self.directory,
            version: self.args.version.as_ref(),
        }
    }
}

/// `pin --write`: the entry appended to the descriptor, and what was done said on stderr.
fn write(shown: &Shown<'_>, entry: Entry<'_>, bundles: &[pin::PinnedBundle]) -> Exit {
    let path = &shown.args.config.path;
    let request = pin::write::WriteRequest {
        path,
        agent: shown.args.agent.as_deref(),
        entry,
        directory_given: shown.args.directory.is_some(),
        bundles,
    };
    let written = match pin::write::write(&request) {
        Ok(written) => written,
        Err(e) => {
            diag!("error: {e} [{}]", e.code());
            return exit::of(e.code());
        }
    };
    let file = escape::path(path);
    for (name, location) in &written.already {
        diag!("{name}: already approved with this hash at {location}; left as it is");
        if bundles
            .iter()
            .any(|b| b.name() == name && !b.scans().is_empty())
        {
            diag!(
                "note: its verdicts are not recorded there: copy the `scans:` that `pin --scan` \
                 prints without `--write` into that entry (see docs/scanners.md)"
            );
        }
    }
    if !written.written {
        diag!("nothing written to `{file}`: every bundle is already approved");
        return Exit::Ok;
    }
    let names: Vec<&str> = written.added.iter().map(|n| n.as_str()).collect();
    match &written.directory {
        Some(directory) => diag!(
            "wrote `{file}`: a new source at {} (corpus `{}`) approving {}",
            written.location,
            escape::text(directory),
            names.join(", ")
        ),
        None => diag!(
            "wrote `{file}`: {} added to {}",
            names.join(", "),
            written.location
        ),
    }
    if shown.args.version.is_none() {
        diag!(
            "note: each version is the placeholder `{}`, which `check` refuses \
             [{}]: write the release label you reviewed, or pin again with `--version LABEL`",
            pin::VERSION_PLACEHOLDER,
            crate::descriptor::code::DescriptorCode::VersionPlaceholder
        );
    }
    Exit::Ok
}

/// Lists the symbolic links outside the pinned bundles (`--links outside-bundles`).
fn show_links(links: &pin::OutsideLinks) {
    for link in &links.listed {
        diag!(
            "link: {} -> {} (outside the pinned bundles, skipped)",
            link.path,
            link.target
        );
    }
    if links.more > 0 {
        diag!("link: {} more not listed", links.more);
    }
}

/// Reports a pin refused as a whole (the ref, the fetch, the tree, the signature) and its exit
/// status.
fn refused(e: &pin::PinError) -> Exit {
    diag!("error: {e} [{}]", e.code());
    if let pin::PinError::Commit(crate::source::git::commit::CommitError::Symlinks {
        paths, ..
    }) = e
    {
        for p in paths {
            diag!("  symbolic link: {}", escape::text(p));
        }
        if let Some(hint) = Hint::of(e.code().as_str(), Via::Flags) {
            diag!("  hint: {hint}");
        }
    }
    if let Some(hint) = e.hint() {
        diag!("  hint: {hint}");
    }
    exit::of(e.code())
}

/// `pin --all`: the entry for every valid bundle under the root on stdout (or the JSON report),
/// every refused folder on stderr with its reasons; with `--write`, the entry appended to the
/// descriptor instead of printed.
fn run_all(shown: &Shown<'_>, trust: Option<&TrustPolicy>, stop: pin::Stop<'_>) -> Exit {
    let args = shown.args;
    let root = args.root.as_ref();
    let shown_root = root.map_or_else(|| "/".to_owned(), |r| escape::text(r.as_str()).to_string());
    let policy = pin::PinPolicy {
        limits: args.limits,
        trust,
        links: args.links,
    };
    let commit = &shown.revision.commit;
    let out = PinLog {
        format: args.format,
        source: &args.source,
        root,
    };
    let (pinned, refusals, links, hidden) =
        match pin::pin_all(&args.source, commit, root, policy, stop) {
            Ok(all) => (
                Some((all.bundles, all.signer)),
                all.refused,
                all.links,
                None,
            ),
            Err(pin::PinError::NoBundles {
                refused, hidden, ..
            }) => (
                None,
                refused,
                pin::OutsideLinks::default(),
                Hint::hidden_roots(&hidden),
            ),
            Err(e) => {
                return refused(&e).worse(out.refused(Some(commit.as_str()), &e));
            }
        };
    show_links(&links);
    let log = out.refused_folders(commit.as_str(), &refusals);
    let refusals: Vec<RefusedReport<'_>> = refusals
        .iter()
        .map(|folder| RefusedReport {
            hint: Hint::of_refusal(folder.code.as_str(), &folder.problems, Via::Flags),
            folder,
        })
        .collect();
    for r in &refusals {
        diag!("refused: {} [{}]", r.folder.folder, r.folder.code);
        crate::cli::output::details("  ", &r.folder.problems, r.hint.as_ref());
    }
    let entry = pinned.as_ref().map(|(bundles, signer)| {
        pin::entry::descriptor_entry(&shown.entry(signer.as_ref()), bundles)
    });
    let (bundles, signer) = match &pinned {
        Some((bundles, signer)) => (bundles.as_slice(), signer.as_ref()),
        None => (&[][..], None),
    };
    let exit = if bundles.is_empty() {
        diag!(
            "error: no bundle under `{shown_root}` can be pinned ({} refused) [{}]",
            refusals.len(),
            PrepareCode::NoBundles
        );
        if let Some(hint) = &hidden {
            diag!("hint: {hint}");
        }
        exit::of(PrepareCode::NoBundles)
    } else {
        diag!(
            "pinned {} of {} bundle(s) under `{shown_root}`; {} refused",
            bundles.len(),
            bundles.len() + refusals.len(),
            refusals.len()
        );
        let max = crate::format::limits::MAX_BUNDLES_PER_CATALOGUE;
        if bundles.len() > max {
            diag!(
                "note: an agent gets at most {max} skills unless the descriptor raises \
                 `selection.max_skills` (`check` refuses more): keep the \
                 bundles you review, or give some to agents"
            );
        }
        if args.write {
            write(shown, shown.entry(signer), bundles)
        } else {
            Exit::Ok
        }
    };
    if args.json {
        let report = AllReport {
            source: crate::descriptor::redact::RedactedUrl::new(&args.source)
                .as_str()
                .to_owned(),
            revision: commit.as_str(),
            root: root.map(RootPath::as_str),
            limits: args
                .limits
                .name()
                .map_or_else(|| args.limits.to_string(), str::to_owned),
            signer: signer.map(|s| SignerReport {
                principal: &s.principal,
                fingerprint: &s.fingerprint,
            }),
            pinned: bundles
                .iter()
                .map(|b| PinnedReport {
                    name: b.name().as_str(),
                    folder: crate::source::git::commit::bundle_folder(root, b.name()),
                    hash: b.digest().to_string(),
                    declared_version: b.declared_version(),
                })
                .collect(),
            refused: &refusals,
            hint: hidden.as_ref(),
            links: args.links.as_str(),
            skipped_links: &links.listed,
            entry: entry.as_deref(),
        };
        return crate::cli::output::finish(exit, true, &report);
    }
    if log.is_some() {
        return exit.worse(sarif::print(log.as_ref()));
    }
    match &entry {
        Some(entry) if !args.write => exit.worse(crate::cli::output::print(entry)),
        _ => exit,
    }
}

/// The JSON report of `pin --all --json` (docs/cli.md).
#[derive(serde::Serialize)]
struct AllReport<'a> {
    source: String,
    revision: &'a str,
    root: Option<&'a str>,
    limits: String,
    signer: Option<SignerReport<'a>>,
    pinned: Vec<PinnedReport<'a>>,
    refused: &'a [RefusedReport<'a>],
    /// `no_bundles` with bundles in hidden folders under the root: the `--root` to give.
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a Hint>,
    links: &'static str,
    skipped_links: &'a [crate::source::git::commit::SeenLink],
    entry: Option<&'a str>,
}

/// A refused folder of `pin --all --json`: `{folder, code, problems, hint}`.
#[derive(serde::Serialize)]
struct RefusedReport<'a> {
    #[serde(flatten)]
    folder: &'a pin::RefusedFolder,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<Hint>,
}

#[derive(serde::Serialize)]
struct SignerReport<'a> {
    principal: &'a str,
    fingerprint: &'a str,
}

#[derive(serde::Serialize)]
struct PinnedReport<'a> {
    name: &'a str,
    folder: String,
    hash: String,
    declared_version: Option<&'a str>,
}

/// The trust policy of `--allowed-signers` and `--openpgp-keys`, if either is given; a build
/// without signature support refuses them (`signatures_not_built`).
fn trust_policy(args: &PinArgs) -> Result<Option<TrustPolicy>, (DescriptorCode, String)> {
    read_trust_policy(
        args.allowed_signers.as_deref(),
        args.openpgp_keys.as_deref(),
        crate::trust::commit::policy::SUPPORTED,
    )
}

/// [`trust_policy`] as a build with commit signatures (`signatures`) or without them would read it.
fn read_trust_policy(
    allowed_signers: Option<&std::path::Path>,
    openpgp_keys: Option<&std::path::Path>,
    signatures: bool,
) -> Result<Option<TrustPolicy>, (DescriptorCode, String)> {
    if allowed_signers.is_none() && openpgp_keys.is_none() {
        return Ok(None);
    }
    #[cfg(feature = "signatures")]
    if signatures {
        let refused = |e: crate::trust::keys::key_file::SignersError| {
            (DescriptorCode::InvalidTrustPolicy, e.to_string())
        };
        return Ok(Some(TrustPolicy {
            ssh: allowed_signers
                .map(AllowedSigners::read)
                .transpose()
                .map_err(refused)?,
            openpgp: openpgp_keys
                .map(OpenPgpKeys::read)
                .transpose()
                .map_err(refused)?,
        }));
    }
    // Without the feature there is nothing to read the keys with, whatever `signatures` says.
    let _ = signatures;
    Err((
        DescriptorCode::SignaturesNotBuilt,
        crate::trust::commit::policy::unsupported("`--allowed-signers` or `--openpgp-keys`"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_signatures_refuses_the_key_options() {
        let keys = std::path::Path::new("/nowhere/allowed_signers");
        for (ssh, pgp) in [
            (Some(keys), None),
            (None, Some(keys)),
            (Some(keys), Some(keys)),
        ] {
            let (code, message) = read_trust_policy(ssh, pgp, false).unwrap_err();
            assert_eq!(code, DescriptorCode::SignaturesNotBuilt);
            assert!(message.contains("lacks") && message.contains("`signatures`"));
            // A build with the feature reads the (missing) file instead.
            let (code, _) = read_trust_policy(ssh, pgp, true).unwrap_err();
            let read = if cfg!(feature = "signatures") {
                DescriptorCode::InvalidTrustPolicy
            } else {
                DescriptorCode::SignaturesNotBuilt
            };
            assert_eq!(code, read);
        }
        assert!(read_trust_policy(None, None, false).unwrap().is_none());
    }
}
