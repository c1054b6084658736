//! `skillfold update`: re-pinning as a review. For each selected Git source, the target commit
//! (the head of its tracked branch, or `--to`: a full id, a branch or a tag resolved once) is
//! fetched as `prepare` fetches a pin and given every check of `prepare`: the tree, the
//! signature policy (`verify`), the bundle rules under the source's limits, and each approved
//! bundle verified against the pin it would get (its name, the version it declares, its new
//! digest). For each selected OCI source, the target image (the digest its `track` tag names
//! now, or `--to`: a `sha256:` digest, or a tag resolved once) is pulled as `prepare` pulls a pin
//! (every digest, size and bound, the strict layer reader) and its bundles get the same checks.
//! The review lists, per approved bundle, the old and new version and digest and what changed in
//! its files, with a unified diff of the text files ([`diff`]; rendered by [`review`]). With
//! `write`, and only when every selected source passed, the descriptor is rewritten in place
//! ([`rewrite`]): the `revision` (the digest inside an OCI `reference`), `hash` and `version`
//! scalars that change, nothing else. A `"<version>"` placeholder left by `pin` is filled from
//! the version the bundle declares, and refused (`version_placeholder`) when it declares none.
//!
//! An OCI source without `track` has nothing to follow: with no `--to` it is left out when no
//! source is named, and refused (`not_tracked`) when it is named. A `--to` value is checked
//! against every selected source before anything is fetched (`invalid_target`): a digest is no
//! target of a Git source, an abbreviated commit id none of any.
//!
//! Each source is checked with the code `prepare` runs on it ([`ApprovedSource`] for Git,
//! [`crate::source::oci::approved`] for images): its own `links` policy, limits, layers and pull
//! bound. Sources of one URL, target and `links` policy share one ref listing and one fetch that
//! brings the files of every one of them (one repository and tag, one look-up; one image, one
//! pull); the pinned commit (image) is fetched too, for the diff (once per URL and commit).
//! Nothing is written but temporary directories and, with `write`, the descriptor.

pub mod diff;
mod error;
pub mod review;
pub mod rewrite;
mod select;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::descriptor::code::DescriptorCode;
use crate::descriptor::kind::SourceKind;
use crate::descriptor::plan::{GitSource, OciSource};
use crate::format::bundle::Bundle;
use crate::format::pin::Pin;
use crate::format::skill_name::SkillName;
use crate::format::version::VersionLabel;
use crate::ops::check::CheckError;
use crate::ops::target::{Images, SourceId, Taken};
use crate::source::code::PrepareCode;
use crate::source::error::SourceError;
use crate::source::git::approved::{self, ApprovedSource};
use crate::source::git::candidate::{Candidate, CandidateTarget};
use crate::source::git::commit::bundle_folder;
use crate::support::error_code::{ErrorCode, ExitClass};
use crate::support::escape;
use crate::trust::commit::policy::Signer;

pub use error::UpdateError;

use diff::FileChanges;
use rewrite::{Change, PinnedId};
use select::{ImageTarget, Selected, select};

/// What to update.
#[derive(Debug, Clone)]
pub struct UpdateRequest<'a> {
    /// The descriptor.
    pub path: &'a Path,
    /// Which sources: each names a Git or OCI source by its location (`skills[0].git`), its URL
    /// (as shown, without credentials; `REGISTRY/REPOSITORY` for an image) or the name of a
    /// bundle it approves. Empty: every Git source and every OCI source with `track`.
    pub selectors: &'a [String],
    /// What to move to (`--to`): for a Git source a full commit id, a branch or a tag; for an OCI
    /// source a `sha256:` digest or a tag. `None`: each source's tracked branch or tag.
    pub to: Option<&'a str>,
    /// Rewrite the descriptor when every selected source passes.
    pub write: bool,
    /// The label of each bundle whose digest changes and which declares no version
    /// (`--version`; a placeholder it fills too). `None`: the pinned label stays.
    pub version: Option<&'a VersionLabel>,
    /// The overall deadline of each ref listing and fetch (`--fetch-timeout`).
    pub fetch_timeout: std::time::Duration,
}

/// The review of an update.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
    /// One entry per selected Git or OCI source, in descriptor order.
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
    /// Which source: `location`, `kind` and `url`, flattened into the entry.
    #[serde(flatten)]
    pub id: SourceId,
    /// What was looked at: `HEAD`, `refs/heads/<track>`, the `--to` name or id; for an image the
    /// tracked tag or the `--to` tag or digest.
    pub target: String,
    /// The ref (or tag) that named the target, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The pinned commit (or manifest digest).
    pub from: String,
    /// The target commit or manifest digest (absent when it could not be resolved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Who signed the target, when the source has a `verify` policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<Signer>,
    /// Who published the target image, when the source checks its publisher (`verify` of an
    /// `oci` source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<crate::trust::verdict::Publisher>,
    /// Each approved bundle.
    pub bundles: Vec<BundleUpdate>,
    /// Why the target cannot be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SourceError>,
}

/// What an update does to one approved bundle (spelled in kebab-case in `--json`, as every
/// command's bundle status is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpdateStatus {
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
    pub status: UpdateStatus,
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
    /// What the bundle rules report without refusing it at the target (content findings, case
    /// collisions), each with its code.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The bundle problems behind `problems` (a bundle that breaks the rules) or `warnings`,
    /// with their places (`--format sarif`).
    #[serde(skip)]
    pub found: Vec<crate::format::problem::Problem>,
    /// Its folder in the repository (or the image), where `found` is.
    #[serde(skip)]
    pub folder: String,
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
                        .filter(|b| b.status == UpdateStatus::Refused)
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
pub fn update(
    request: &UpdateRequest<'_>,
    interrupt: &AtomicBool,
) -> Result<UpdateReport, UpdateError> {
    let text = crate::descriptor::read_text(request.path).map_err(CheckError::from)?;
    let (stood_in, placeholders) = rewrite::stand_in(&text);
    let loaded = crate::descriptor::from_text(request.path, &stood_in).map_err(CheckError::from)?;
    let (_, plan) = crate::ops::check::check_loaded_for_review(loaded)?;
    let selected = select(&plan, request.selectors, request.to)?;

    let mut fetches = Fetches::new(&selected);
    // Every target image is resolved first, so that each pull knows every source it serves.
    let mut images = Images::default();
    let digests: Vec<Option<Result<String, SourceError>>> = selected
        .iter()
        .map(|source| match source {
            Selected::Oci(oci, target) => {
                let digest = match target {
                    ImageTarget::Digest(digest) => Ok(digest.clone()),
                    ImageTarget::Tag(tag) => images.resolve(oci, tag, request.fetch_timeout),
                };
                if let Ok(digest) = &digest {
                    images.share(oci, digest);
                    if *digest != oci.reference.digest {
                        images.share(oci, &oci.reference.digest);
                    }
                }
                Some(digest)
            }
            Selected::Git(..) => None,
        })
        .collect();
    let mut sources = Vec::new();
    let mut changes = Vec::new();
    for (source, digest) in selected.iter().zip(digests) {
        let location = source.location().to_owned();
        let placeholder = |i: usize| placeholders.contains(&(location.clone(), i));
        let (report, change) = match (source, digest) {
            (Selected::Git(git, target), _) => git_update(
                git,
                target,
                &mut fetches,
                (&placeholder, request.version),
                interrupt,
                request.fetch_timeout,
            ),
            (Selected::Oci(oci, target), digest) => oci_update(
                (oci, target),
                digest,
                &mut images,
                (&placeholder, request.version),
                request.fetch_timeout,
            ),
        };
        sources.push(report);
        changes.extend(change);
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

/// The review of `git` moved to `target`, and its new pins when every check passes.
fn git_update<'p>(
    git: &'p GitSource,
    target: &CandidateTarget,
    fetches: &mut Fetches<'p>,
    placeholder: Labels<'_>,
    interrupt: &AtomicBool,
    deadline: std::time::Duration,
) -> (SourceUpdate, Option<Change>) {
    let mut report = SourceUpdate {
        id: SourceId::git(git),
        target: target.describe(git),
        reference: None,
        from: git.revision.to_string(),
        to: None,
        signer: None,
        publisher: None,
        bundles: Vec::new(),
        error: None,
    };
    let new = fetches.get(git, target, interrupt, deadline);
    let old = match &fetches.done[new].1 {
        Ok(candidate) if candidate.id == git.revision => None,
        Ok(_) => Some(fetches.get(
            git,
            &CandidateTarget::Commit(git.revision.clone()),
            interrupt,
            deadline,
        )),
        Err(_) => None,
    };
    let mut change = None;
    match &fetches.done[new].1 {
        Err(error) => report.error = Some(error.clone()),
        Ok(candidate) => {
            // The target is known even when the pinned commit (for the diff) cannot be had.
            report.to = Some(candidate.id.to_string());
            report.reference = candidate.reference.clone();
            let old = match old.map(|i| &fetches.done[i].1) {
                None => Ok(candidate),
                Some(Ok(old)) => Ok(old),
                Some(Err(error)) => Err(error.clone()),
            };
            match old {
                Err(error) => report.error = Some(error),
                Ok(old) => change = review_source(git, candidate, old, placeholder, &mut report),
            }
        }
    }
    (report, change)
}

/// The review of `oci` moved to `target` (resolved to `digest`), and its new pins when every
/// check passes.
fn oci_update(
    (oci, target): (&OciSource, &ImageTarget),
    digest: Option<Result<String, SourceError>>,
    images: &mut Images,
    placeholder: Labels<'_>,
    deadline: std::time::Duration,
) -> (SourceUpdate, Option<Change>) {
    let mut report = SourceUpdate {
        id: SourceId::oci(oci),
        target: escape::text(&target.describe()).to_string(),
        reference: None,
        from: oci.reference.digest.clone(),
        to: None,
        signer: None,
        publisher: None,
        bundles: Vec::new(),
        error: None,
    };
    let digest = match digest {
        Some(Ok(digest)) => digest,
        Some(Err(error)) => {
            report.error = Some(error);
            return (report, None);
        }
        None => return (report, None),
    };
    if let ImageTarget::Tag(tag) = target {
        report.reference = Some(tag.clone());
    }
    report.to = Some(digest.clone());
    // The checks `prepare` runs on this source, on the image it would pin and on the pinned one
    // (for the diff): each read as `prepare` reads it.
    match images.publisher(oci, &digest, deadline) {
        Ok(publisher) => report.publisher = publisher,
        Err(error) => {
            report.error = Some(error);
            return (report, None);
        }
    }
    let candidate = match images.read(oci, &digest, deadline) {
        Ok(candidate) => candidate,
        Err(error) => {
            report.error = Some(error);
            return (report, None);
        }
    };
    let old = if digest == oci.reference.digest {
        None
    } else {
        match images.read(oci, &oci.reference.digest, deadline) {
            Ok(old) => Some(old),
            Err(error) => {
                report.error = Some(error);
                return (report, None);
            }
        }
    };
    let old = old.as_ref().unwrap_or(&candidate);
    let pins = review_bundles(
        &oci.approved,
        &|name| name.to_string(),
        &|pin| Taken::from(candidate.take(&pin.name)),
        &|pin| old.take(&pin.name).ok(),
        placeholder,
        &mut report,
    );
    let change = pins.map(|pins| Change {
        location: oci.location.clone(),
        pinned: PinnedId::Digest(digest),
        pins,
    });
    (report, change)
}

/// The commits fetched so far: sources of one URL, target and `links` policy share one fetch,
/// which brings the files of the approved bundles of every selected source that fetches the
/// same (its target, or its pinned commit for the diff).
struct Fetches<'p> {
    /// Every selected Git source and its target.
    selected: Vec<(&'p GitSource, CandidateTarget)>,
    done: Vec<(TargetKey<'p>, Result<Candidate, SourceError>)>,
}

/// A URL, a target (a tracked branch as that branch), and a `links` policy.
type TargetKey<'a> = approved::SharedFetchKey<'a, CandidateTarget>;

impl<'p> Fetches<'p> {
    fn new(selected: &[Selected<'p>]) -> Self {
        Fetches {
            selected: selected
                .iter()
                .filter_map(|s| match s {
                    Selected::Git(git, target) => Some((*git, target.clone())),
                    Selected::Oci(..) => None,
                })
                .collect(),
            done: Vec::new(),
        }
    }

    /// The index of `target` of `git` in `done`, fetched on first use.
    fn get(
        &mut self,
        git: &'p GitSource,
        target: &CandidateTarget,
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
    ) -> usize {
        let key = approved::fetch_key(git, resolved(git, target));
        if let Some(index) = self.done.iter().position(|(k, _)| *k == key) {
            return index;
        }
        let sharing: Vec<&GitSource> = self
            .selected
            .iter()
            .filter(|(other, other_target)| {
                approved::fetch_key(other, resolved(other, other_target)) == key
                    || approved::fetch_key(other, CandidateTarget::Commit(other.revision.clone()))
                        == key
            })
            .map(|(other, _)| *other)
            .chain(std::iter::once(git))
            .collect();
        let fetched = Candidate::fetch(git, target, &sharing, interrupt, deadline);
        self.done.push((key, fetched));
        self.done.len() - 1
    }
}

/// The target as a fetch key: a tracked branch is that branch of that source.
fn resolved(git: &GitSource, target: &CandidateTarget) -> CandidateTarget {
    match (target, &git.track) {
        (CandidateTarget::Tracked, Some(branch)) => {
            CandidateTarget::Named(format!("refs/heads/{branch}"))
        }
        _ => target.clone(),
    }
}

/// Checks `git`'s target `candidate` (the pin's commit is `old`) and fills `report`; the new
/// pins when every check passes.
fn review_source(
    git: &GitSource,
    candidate: &Candidate,
    old: &Candidate,
    placeholder: Labels<'_>,
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
    // The checks `prepare` runs on this source, on the commit it would pin and on the pinned
    // one (for the diff).
    let source = match ApprovedSource::check(&candidate.commit, git) {
        Ok(source) => source,
        Err(e) => {
            report.error = Some(SourceError::from_error(&e));
            return None;
        }
    };
    let pinned = ApprovedSource::check(&old.commit, git).ok();
    let pins = review_bundles(
        &git.approved,
        &|name| bundle_folder(git.root.as_ref(), name),
        &|pin| Taken::from(source.take(pin)),
        &|pin| pinned.as_ref().and_then(|old| old.take(pin).ok()),
        placeholder,
        report,
    )?;
    Some(Change {
        location: git.location.clone(),
        pinned: PinnedId::Revision(candidate.id.clone()),
        pins,
    })
}

/// Reviews each of the `approved` bundles as the target holds it (`take_new`) against the pinned
/// one (`take_old`, for the diff; `folder` names where a bundle is) and fills `report`; the new
/// pins when every bundle can be pinned. The entries whose version is the placeholder are those
/// `placeholder` says.
fn review_bundles(
    approved: &[Pin],
    folder: &dyn Fn(&SkillName) -> String,
    take_new: &dyn Fn(&Pin) -> Taken,
    take_old: &dyn Fn(&Pin) -> Option<Bundle>,
    (placeholder, label): Labels<'_>,
    report: &mut SourceUpdate,
) -> Option<Vec<Pin>> {
    let mut pins = Vec::new();
    for (i, pin) in approved.iter().enumerate() {
        let mut entry = BundleUpdate {
            name: pin.name.to_string(),
            status: UpdateStatus::Refused,
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
            warnings: Vec::new(),
            found: Vec::new(),
            folder: folder(&pin.name),
        };
        match take_new(pin) {
            // The code `prepare` gives a bundle it cannot find.
            Taken::Missing => entry.problems.push(match report.id.kind {
                SourceKind::Oci => format!(
                    "no folder `{}` at the target: the bundle was removed or renamed; remove its entry or pin another image [{}]",
                    escape::text(&folder(&pin.name)),
                    crate::source::oci::code::DistributionCode::BundleNotInImage.as_str()
                ),
                _ => format!(
                    "no folder `{}` at the target: the bundle was removed or renamed; remove its entry or pin another commit [{}]",
                    escape::text(&folder(&pin.name)),
                    PrepareCode::BundleMissing
                ),
            }),
            Taken::Invalid(problems, found) => {
                entry.problems = problems;
                entry.found = found;
            }
            Taken::Bundle(bundle) => {
                entry.warnings = bundle.warnings().iter().map(ToString::to_string).collect();
                entry.found = bundle.warnings().to_vec();
                let old_files = take_old(pin);
                entry.files = diff::compare(
                    pin.name.as_str(),
                    old_files.as_ref().map(|b| b.files()),
                    bundle.files(),
                );
                match new_pin(pin, &bundle, placeholder(i), label) {
                    Err(problem) => entry.problems.push(problem),
                    Ok(new) => {
                        let folder = folder(&pin.name);
                        match crate::corpus::pin_check::verify_bundle(
                            *bundle,
                            Path::new(&folder),
                            &new,
                            None,
                        ) {
                            Err(e) => entry.problems.push(format!("{e} [{}]", e.code())),
                            Ok(_) => {
                                entry.status = if new == *pin && !placeholder(i) {
                                    UpdateStatus::Unchanged
                                } else {
                                    UpdateStatus::Changed
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
    (pins.len() == approved.len()).then_some(pins)
}

/// The label a bundle's declared `version` gives its pin, or the problem line (code
/// `invalid_version`) when it can never be pinned (`latest`, `^1.2`, a space, over 128
/// characters): the one judgement of `update` (which refuses the bundle) and `outdated` (which
/// reports it `invalid`).
pub(crate) fn declared_label(declared: &str) -> Result<VersionLabel, String> {
    VersionLabel::parse(declared).map_err(|e| {
        format!(
            "the bundle declares version `{}`, which cannot be pinned: {e} [{}]",
            escape::text(declared),
            ErrorCode::from(DescriptorCode::InvalidVersion)
        )
    })
}

/// Which approved entries hold `pin`'s placeholder (by index), and the label `--version` gives.
type Labels<'a> = (&'a dyn Fn(usize) -> bool, Option<&'a VersionLabel>);

/// The pin `bundle` gets: its digest, and the version it declares; when it declares none, the
/// `label` given if its digest changes or its version is the placeholder, else the pinned one.
// A String: a problem line of the bundle's report (its code already in brackets); only shown.
fn new_pin(
    pin: &Pin,
    bundle: &crate::format::bundle::Bundle,
    placeholder: bool,
    label: Option<&VersionLabel>,
) -> Result<Pin, String> {
    let version = match bundle.declared_version() {
        Some(declared) => declared_label(declared)?,
        None if label.is_some() && (placeholder || bundle.digest() != pin.hash) => {
            label.cloned().unwrap_or_else(|| pin.version.clone())
        }
        None if placeholder => {
            return Err(format!(
                "the pin's version is the placeholder `{}` and the bundle declares none: give `--version LABEL`, or write the release label by hand [{}]",
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
