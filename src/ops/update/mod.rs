//! `skillfold update`: re-pinning as a review. For each selected Git source, the target commit
//! (the head of its tracked branch, or `--to`: a full id, a branch or a tag resolved once) is
//! fetched as `prepare` fetches a pin and given every check of `prepare`: the tree, the
//! signature policy (`verify`), the bundle rules under the source's limits, and each approved
//! bundle verified against the pin it would get (its name, the version it declares, its new
//! digest). The review lists, per approved bundle, the old and new version and digest and what
//! changed in its files, with a unified diff of the text files ([`diff`]; rendered by
//! [`review`]). With `write`, and only when every selected source passed, the descriptor is
//! rewritten in place ([`rewrite`]): the `revision`, `hash` and `version` scalars that change,
//! nothing else. A `"<version>"` placeholder left by `pin` is filled from the version the bundle
//! declares, and refused (`version_placeholder`) when it declares none.
//!
//! Sources of one URL and target share one ref listing and one fetch; the pinned commit is
//! fetched too, for the diff (once per URL and commit). Nothing is written but temporary
//! directories and, with `write`, the descriptor.

pub mod diff;
pub mod review;
pub mod rewrite;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::descriptor::code::DescriptorCode;
use crate::descriptor::plan::{GitSource, Plan};
use crate::descriptor::signers::Signer;
use crate::format::pin::Pin;
use crate::format::version::VersionLabel;
use crate::ops::check::CheckError;
use crate::source::code::PrepareCode;
use crate::source::git::candidate::{Candidate, SourceError, Target};
use crate::source::git::commit::{TakeError, bundle_folder};
use crate::support::error_code::{ErrorCode, ExitClass};
use crate::support::escape;

use diff::FileChanges;
use rewrite::Change;

/// What to update.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The descriptor.
    pub path: &'a Path,
    /// Which Git sources: each names a source by its location (`skills[0].git`), its URL (as
    /// shown, without credentials) or the name of a bundle it approves. Empty: every Git source.
    pub selectors: &'a [String],
    /// The commit to move to.
    pub target: Target,
    /// Rewrite the descriptor when every selected source passes.
    pub write: bool,
    /// The overall deadline of each ref listing and fetch (`--fetch-timeout`).
    pub fetch_timeout: std::time::Duration,
}

/// Why no update could be looked at.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateError {
    /// The descriptor cannot be read or breaks a rule.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// A selector matches no Git source.
    #[error("no Git source of the descriptor is `{}` (name a source by its location such as `skills[0].git`, its URL, or a bundle it approves)", escape::text(.0))]
    UnknownSource(String),
}

impl UpdateError {
    /// Every problem as one line, with its code.
    pub fn lines(&self) -> Vec<String> {
        match self {
            UpdateError::Check(e) => e.lines(),
            UpdateError::UnknownSource(_) => {
                vec![format!("{self} [{}]", DescriptorCode::UnknownSource)]
            }
        }
    }
}

impl crate::support::error_code::Coded for UpdateError {
    fn error_code(&self) -> ErrorCode {
        match self {
            UpdateError::Check(e) => e.error_code(),
            UpdateError::UnknownSource(_) => DescriptorCode::UnknownSource.into(),
        }
    }
}

/// The review of an update.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
    /// One entry per selected Git source, in descriptor order.
    pub sources: Vec<SourceUpdate>,
    /// Whether the descriptor was rewritten.
    pub written: bool,
    /// How many scalars the rewrite changes (or would change).
    pub scalars: usize,
    /// Why the descriptor was not rewritten although every source passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrite_error: Option<SourceError>,
}

/// One source's update.
#[derive(Debug, Clone, Serialize)]
pub struct SourceUpdate {
    /// Where it is written in the descriptor.
    pub location: String,
    /// The repository URL without credentials.
    pub url: String,
    /// What was looked at: `HEAD`, `refs/heads/<track>`, the `--to` name or id.
    pub target: String,
    /// The ref that named the target, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The pinned commit.
    pub from: String,
    /// The target commit (absent when it could not be resolved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Who signed the target, when the source has a `verify` policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<Signer>,
    /// Each approved bundle.
    pub bundles: Vec<BundleUpdate>,
    /// Why the target cannot be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SourceError>,
}

/// What an update does to one approved bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BundleStatus {
    /// Same digest and version at the target.
    Unchanged,
    /// A new digest or version at the target.
    Changed,
    /// It cannot be pinned at the target (see `problems`).
    Refused,
}

/// One approved bundle's update.
#[derive(Debug, Clone, Serialize)]
pub struct BundleUpdate {
    /// The name.
    pub name: String,
    /// `unchanged` (same digest and version), `changed`, or `refused` (see `problems`).
    pub status: BundleStatus,
    /// The pinned version.
    pub old_version: String,
    /// The version it gets (absent when refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_version: Option<String>,
    /// The pinned digest.
    pub old_hash: String,
    /// The digest at the target (absent when refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_hash: Option<String>,
    /// What changed in its files.
    pub files: FileChanges,
    /// Why it cannot be pinned at the target, each with its code.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl UpdateReport {
    /// The code of every failure of the report (what the exit status is taken from): each
    /// source's error, `verification_failed` for each bundle that cannot be pinned (its problems
    /// name their own codes), and the rewrite's error.
    pub fn failures(&self) -> impl Iterator<Item = ErrorCode> + '_ {
        self.sources
            .iter()
            .flat_map(|s| {
                s.error.iter().map(|e| e.code).chain(
                    s.bundles
                        .iter()
                        .filter(|b| b.status == BundleStatus::Refused)
                        .map(|_| ErrorCode::from(PrepareCode::VerificationFailed)),
                )
            })
            .chain(self.rewrite_error.iter().map(|e| e.code))
    }

    /// Whether a source failed for a reason that may pass (a fetch, a write).
    pub fn has_transient_failures(&self) -> bool {
        self.failures().any(|c| c.exit() == ExitClass::Retryable)
    }

    /// Whether something was refused: a target that fails a check, a bundle that cannot be
    /// pinned, a descriptor that cannot be rewritten.
    pub fn has_refusals(&self) -> bool {
        self.failures().any(|c| c.exit() == ExitClass::Invalid)
    }
}

/// Looks at the update `request` asks for and, when it asks and everything passes, writes it.
pub fn update(request: &Request<'_>, interrupt: &AtomicBool) -> Result<UpdateReport, UpdateError> {
    let text = crate::descriptor::read_text(request.path).map_err(CheckError::from)?;
    let (stood_in, placeholders) = rewrite::stand_in(&text);
    let loaded = crate::descriptor::from_text(request.path, &stood_in).map_err(CheckError::from)?;
    let (_, plan) = crate::ops::check::check_loaded(loaded)?;
    let selected = select(&plan, request.selectors)?;

    let mut fetches = Fetches::default();
    let mut sources = Vec::new();
    let mut changes = Vec::new();
    for git in selected {
        let mut report = SourceUpdate {
            location: git.location.clone(),
            url: git.shown.as_str().to_owned(),
            target: request.target.describe(git),
            reference: None,
            from: git.revision.to_string(),
            to: None,
            signer: None,
            bundles: Vec::new(),
            error: None,
        };
        let new = fetches.get(git, &request.target, interrupt, request.fetch_timeout);
        let old = match &fetches.done[new].1 {
            Ok(candidate) if candidate.id == git.revision => None,
            Ok(_) => Some(fetches.get(
                git,
                &Target::Commit(git.revision.clone()),
                interrupt,
                request.fetch_timeout,
            )),
            Err(_) => None,
        };
        let placeholder = |i: usize| placeholders.contains(&(git.location.clone(), i));
        match &fetches.done[new].1 {
            Err(error) => report.error = Some(error.clone()),
            Ok(candidate) => {
                let old = match old.map(|i| &fetches.done[i].1) {
                    None => Ok(candidate),
                    Some(Ok(old)) => Ok(old),
                    Some(Err(error)) => Err(error.clone()),
                };
                match old {
                    Err(error) => report.error = Some(error),
                    Ok(old) => {
                        if let Some(change) =
                            review_source(git, candidate, old, &placeholder, &mut report)
                        {
                            changes.push(change);
                        }
                    }
                }
            }
        }
        sources.push(report);
    }

    let mut report = UpdateReport {
        sources,
        written: false,
        scalars: 0,
        rewrite_error: None,
    };
    if report.has_refusals() || report.has_transient_failures() {
        return Ok(report);
    }
    let source_error = |e: &rewrite::RewriteError| SourceError::of(e.code(), e);
    match rewrite::rewrite(request.path, &text, &changes) {
        Err(e) => report.rewrite_error = Some(source_error(&e)),
        Ok((new_text, scalars)) => {
            report.scalars = scalars;
            if request.write && scalars > 0 {
                match rewrite::write(request.path, &text, &new_text) {
                    Ok(()) => report.written = true,
                    Err(e) => report.rewrite_error = Some(source_error(&e)),
                }
            }
        }
    }
    Ok(report)
}

/// The commits fetched so far, by URL and target: sources of one repository and target share
/// one fetch.
#[derive(Default)]
struct Fetches {
    done: Vec<((String, Target), Result<Candidate, SourceError>)>,
}

impl Fetches {
    /// The index of `target` of `git` in `done`, fetched on first use.
    fn get(
        &mut self,
        git: &GitSource,
        target: &Target,
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
    ) -> usize {
        let key = (git.url.clone(), resolved(git, target));
        if let Some(index) = self.done.iter().position(|(k, _)| *k == key) {
            return index;
        }
        self.done
            .push((key, Candidate::fetch(git, target, interrupt, deadline)));
        self.done.len() - 1
    }
}

/// The target as a fetch key: a tracked branch is that branch of that source.
fn resolved(git: &GitSource, target: &Target) -> Target {
    match (target, &git.track) {
        (Target::Tracked, Some(branch)) => Target::Named(format!("refs/heads/{branch}")),
        _ => target.clone(),
    }
}

/// The Git sources `selectors` name (every one when there are none), in descriptor order.
fn select<'p>(plan: &'p Plan, selectors: &[String]) -> Result<Vec<&'p GitSource>, UpdateError> {
    let matches = |git: &GitSource, selector: &str| {
        git.location == selector
            || git.shown.as_str() == selector
            || git.approved.iter().any(|p| p.name.as_str() == selector)
    };
    if let Some(unknown) = selectors
        .iter()
        .find(|s| !plan.git_sources().any(|git| matches(git, s)))
    {
        return Err(UpdateError::UnknownSource(unknown.clone()));
    }
    Ok(plan
        .git_sources()
        .filter(|git| selectors.is_empty() || selectors.iter().any(|s| matches(git, s)))
        .collect())
}

/// Checks `git`'s target `candidate` (the pin's commit is `old`) and fills `report`; the new
/// pins when every check passes.
fn review_source(
    git: &GitSource,
    candidate: &Candidate,
    old: &Candidate,
    placeholder: &dyn Fn(usize) -> bool,
    report: &mut SourceUpdate,
) -> Option<Change> {
    report.to = Some(candidate.id.to_string());
    report.reference = candidate.reference.clone();
    if let Some(trust) = &git.trust {
        match candidate.commit.verify_signature(trust) {
            Ok(signer) => report.signer = Some(signer),
            Err(e) => {
                report.error = Some(SourceError::from_error(&e));
                return None;
            }
        }
    }
    let root = git.root.as_ref();
    let mut pins = Vec::new();
    for (i, pin) in git.approved.iter().enumerate() {
        let mut entry = BundleUpdate {
            name: pin.name.to_string(),
            status: BundleStatus::Refused,
            old_version: if placeholder(i) {
                crate::ops::pin::VERSION_PLACEHOLDER.to_owned()
            } else {
                pin.version.as_str().to_owned()
            },
            new_version: None,
            old_hash: pin.hash.to_string(),
            new_hash: None,
            files: FileChanges::default(),
            problems: Vec::new(),
        };
        let old_files = old.commit.take(root, &pin.name, git.limits).ok();
        match candidate.commit.take(root, &pin.name, git.limits) {
            Err(TakeError::Missing { path, .. }) => entry.problems.push(format!(
                "no folder `{}` at the target: the bundle was removed or renamed; remove its entry or pin another commit [{}]",
                escape::text(&path),
                PrepareCode::VerificationFailed
            )),
            Err(e) => entry.problems = e.lines(),
            Ok(bundle) => {
                entry.files =
                    diff::compare(pin.name.as_str(), old_files.as_ref().map(|b| b.files()), bundle.files());
                match new_pin(pin, &bundle, placeholder(i)) {
                    Err(problem) => entry.problems.push(problem),
                    Ok(new) => {
                        let folder = bundle_folder(root, &pin.name);
                        match crate::corpus::pin_check::verify_bundle(
                            bundle,
                            Path::new(&folder),
                            &new,
                            None,
                        ) {
                            Err(e) => entry.problems.push(format!("{e} [{}]", e.code())),
                            Ok(_) => {
                                entry.status = if new == *pin && !placeholder(i) {
                                    BundleStatus::Unchanged
                                } else {
                                    BundleStatus::Changed
                                };
                                entry.new_version = Some(new.version.as_str().to_owned());
                                entry.new_hash = Some(new.hash.to_string());
                                pins.push(new);
                            }
                        }
                    }
                }
            }
        }
        report.bundles.push(entry);
    }
    (pins.len() == git.approved.len()).then(|| Change {
        location: git.location.clone(),
        revision: candidate.id.clone(),
        pins,
    })
}

/// The pin `bundle` gets: its digest, and the version it declares (the pinned one when it
/// declares none, unless that is the placeholder).
fn new_pin(
    pin: &Pin,
    bundle: &crate::format::bundle::Bundle,
    placeholder: bool,
) -> Result<Pin, String> {
    let version = match bundle.declared_version() {
        Some(declared) => VersionLabel::parse(declared).map_err(|e| {
            format!(
                "the bundle declares version `{}`, which cannot be pinned: {e} [{}]",
                escape::text(declared),
                ErrorCode::from(DescriptorCode::InvalidVersion)
            )
        })?,
        None if placeholder => {
            return Err(format!(
                "the pin's version is the placeholder `{}` and the bundle declares none: write the release label by hand [{}]",
                crate::ops::pin::VERSION_PLACEHOLDER,
                DescriptorCode::VersionPlaceholder
            ));
        }
        None => pin.version.clone(),
    };
    Ok(Pin {
        name: pin.name.clone(),
        version,
        hash: bundle.digest(),
    })
}
