//! `skillfold pin`: print the descriptor entry that pins bundles of one commit.

use std::sync::atomic::AtomicBool;

use crate::descriptor::code::DescriptorCode;
use crate::descriptor::signers::TrustPolicy;
#[cfg(feature = "signatures")]
use crate::descriptor::signers::{AllowedSigners, OpenPgpKeys};
use crate::format::limits::Limits;
use crate::format::pin::CommitId;
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::ops::pin;
use crate::source::code::PrepareCode;
use crate::support::escape;
use clap::Args;

use crate::cli::exit::{self, Exit};

/// Fetch one commit and print the descriptor entry that pins the named bundles.
///
/// The reviewer's helper: the commit is fetched exactly as `prepare` fetches it and every check
/// applies (no symlink anywhere in the tree, bundle rules, bounds). The printed `git:` entry
/// holds each bundle's hash and a version placeholder to replace with the reviewed release.
/// Nothing is written to any corpus, and it is never meant to run at startup. To pin a local
/// directory, use `skillfold hash DIR`.
///
/// With `--all` instead of names, every folder under the root holding a `SKILL.md` is taken:
/// the valid bundles are pinned and the refused ones listed on stderr with every reason (the
/// first step of reviewing a whole repository).
///
/// Exit status: 0 printed (with `--all`: at least one bundle pinned, refusals still listed); 1
/// the source could not be fetched; 2 a refused commit or bundle (with `--all`: none pinned).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  skillfold pin --source https://github.com/acme/skills.git \\\n    \
    --revision 0123456789abcdef0123456789abcdef01234567 --root skills pdf docx\n  \
    skillfold pin --source https://github.com/acme/skills.git \\\n    \
    --revision 0123456789abcdef0123456789abcdef01234567 --root skills/.curated --all"
)]
pub struct PinArgs {
    /// Repository URL (no credentials in it).
    #[arg(long, value_name = "URL")]
    source: String,

    /// The full commit id to review (40 or 64 hex digits).
    #[arg(long, value_name = "COMMIT", value_parser = parse_commit)]
    revision: CommitId,

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

    #[command(flatten)]
    fetch_timeout: super::prepare::FetchTimeoutArg,
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_commit(s: &str) -> Result<CommitId, String> {
    CommitId::parse(s).map_err(|e| e.to_string())
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_root(s: &str) -> Result<RootPath, String> {
    RootPath::parse(s.trim_end_matches('/')).map_err(|e| format!("`{}`: {e}", escape::text(s)))
}

// A String: clap's value parser shows it to the operator with the flag; nothing matches it.
fn parse_name(s: &str) -> Result<SkillName, String> {
    SkillName::parse(s).map_err(|e| e.to_string())
}

pub fn run(args: PinArgs) -> Exit {
    // Checked here: clap's `requires` counts the default of a flag as present.
    if args.json && !args.all {
        let code = crate::codes::CommandCode::InvalidUsage;
        diag!(
            "error: `--json` reports `--all`; give it with `--all`, or name the bundles without it [{code}]"
        );
        return exit::of(code);
    }
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
    if args.all {
        return run_all(&args, trust.as_ref(), &files, &interrupt);
    }
    match pin::pin(
        &args.source,
        &args.revision,
        args.root.as_ref(),
        &args.names,
        pin::PinPolicy {
            limits: args.limits,
            trust: trust.as_ref(),
            links: args.links,
        },
        pin::Stop {
            interrupt: &interrupt,
            deadline: args.fetch_timeout.fetch_timeout,
        },
    ) {
        Ok(pinned) => {
            show_links(&pinned.links);
            crate::cli::output::print(&pin::descriptor_entry(
                &args.source,
                &args.revision,
                args.root.as_ref(),
                (args.limits, args.links),
                pinned.signer.as_ref().map(|s| (files.as_slice(), s)),
                &pinned
                    .bundles
                    .iter()
                    .map(pin::PinnedBundle::from)
                    .collect::<Vec<_>>(),
            ))
        }
        Err(pin::PinError::Bundles(errors)) => {
            for e in errors {
                for line in e.lines() {
                    diag!("error: {line}");
                }
            }
            exit::of(PrepareCode::VerificationFailed)
        }
        Err(e) => refused(&e),
    }
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

/// Reports a pin refused as a whole (the fetch, the tree, the signature) and its exit status.
fn refused(e: &pin::PinError) -> Exit {
    diag!("error: {e} [{}]", e.code());
    if let pin::PinError::Commit(crate::source::git::commit::CommitError::Symlinks {
        paths, ..
    }) = e
    {
        for p in paths {
            diag!("  symbolic link: {}", escape::text(p));
        }
    }
    if let pin::PinError::Commit(crate::source::git::commit::CommitError::Fetch(fetch)) = e
        && let Some(hint) = fetch.hint()
    {
        diag!("  hint: {hint}");
    }
    exit::of(e.code())
}

/// `pin --all`: the entry for every valid bundle under the root on stdout (or the JSON report),
/// every refused folder on stderr with its reasons.
fn run_all(
    args: &PinArgs,
    trust: Option<&TrustPolicy>,
    files: &[(&str, &std::path::Path)],
    interrupt: &AtomicBool,
) -> Exit {
    let stop = pin::Stop {
        interrupt,
        deadline: args.fetch_timeout.fetch_timeout,
    };
    let root = args.root.as_ref();
    let shown_root = root.map_or_else(|| "/".to_owned(), |r| escape::text(r.as_str()).to_string());
    let policy = pin::PinPolicy {
        limits: args.limits,
        trust,
        links: args.links,
    };
    let (pinned, refusals, links) =
        match pin::pin_all(&args.source, &args.revision, root, policy, stop) {
            Ok(all) => (Some((all.bundles, all.signer)), all.refused, all.links),
            Err(pin::PinError::NoBundles { refused, .. }) => {
                (None, refused, pin::OutsideLinks::default())
            }
            Err(e) => return refused(&e),
        };
    show_links(&links);
    for r in &refusals {
        diag!("refused: {} [{}]", r.folder, r.code);
        for line in &r.problems {
            diag!("  {line}");
        }
    }
    let entry = pinned.as_ref().map(|(bundles, signer)| {
        pin::descriptor_entry(
            &args.source,
            &args.revision,
            root,
            (args.limits, args.links),
            signer.as_ref().map(|s| (files, s)),
            bundles,
        )
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
        Exit::Ok
    };
    if args.json {
        let report = AllReport {
            source: crate::descriptor::redact::RedactedUrl::new(&args.source)
                .as_str()
                .to_owned(),
            revision: args.revision.as_str(),
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
            links: args.links.as_str(),
            skipped_links: &links.listed,
            entry: entry.as_deref(),
        };
        return crate::cli::output::finish(exit, true, &report);
    }
    match &entry {
        Some(entry) => exit.worse(crate::cli::output::print(entry)),
        None => exit,
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
    refused: &'a [pin::RefusedFolder],
    links: &'static str,
    skipped_links: &'a [crate::source::git::commit::SeenLink],
    entry: Option<&'a str>,
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
        crate::descriptor::signers::SUPPORTED,
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
        let refused = |e: crate::descriptor::signers::SignersError| {
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
        crate::descriptor::signers::unsupported("`--allowed-signers` or `--openpgp-keys`"),
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
