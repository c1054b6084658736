//! `skillfold outdated`: what the tracked branch of each Git source offers against the pins.
//!
//! Per Git source: the head of its tracked branch (`track`, or the remote's `HEAD`) is read from
//! the server's ref listing, that commit is fetched into a temporary repository exactly as
//! `prepare` fetches a pin (every check of the tree applies), and each approved bundle is taken
//! from it under the source's limits profile: `unchanged` (same digest), `changed` (the new
//! digest and declared version), `removed` (no folder any more) or `invalid` (it breaks a rule
//! at the head; the problems are listed). Folders under `root` with a `SKILL.md` that are not
//! approved are listed as `available`. Sources of one URL and branch share one listing and one
//! fetch. Nothing is written anywhere but a temporary directory.

use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::descriptor::plan::{GitSource, Plan, Source};
use crate::source::git::candidate::{Candidate, SourceError, Target};
use crate::source::git::commit::{PinnedCommit, TakeError};
use crate::support::error_code::ErrorCode;

/// The report of `outdated`.
#[derive(Debug, Clone, Serialize)]
pub struct OutdatedReport {
    /// One entry per Git source, in descriptor order.
    pub sources: Vec<SourceOutdated>,
}

/// What one Git source's tracked branch offers.
#[derive(Debug, Clone, Serialize)]
pub struct SourceOutdated {
    /// Where it is written in the descriptor.
    pub location: String,
    /// The repository URL without credentials.
    pub url: String,
    /// The branch followed: `HEAD` (the remote's default) or `refs/heads/<track>`.
    pub tracking: String,
    /// The pinned commit.
    pub pinned: String,
    /// The commit the branch points to now (absent when it could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// Each approved bundle at the head.
    pub bundles: Vec<BundleOutdated>,
    /// Folders under `root` at the head holding a `SKILL.md` that are not approved.
    pub available: Vec<String>,
    /// Why the head could not be read or fetched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SourceError>,
}

/// What the head of the tracked branch holds of an approved bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BundleStatus {
    /// The same digest.
    Unchanged,
    /// Another digest (see `new_hash`, `new_version`).
    Changed,
    /// No folder any more.
    Removed,
    /// It breaks a rule at the head (see `problems`).
    Invalid,
}

impl BundleStatus {
    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            BundleStatus::Unchanged => "unchanged",
            BundleStatus::Changed => "changed",
            BundleStatus::Removed => "removed",
            BundleStatus::Invalid => "invalid",
        }
    }
}

impl std::fmt::Display for BundleStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An approved bundle at the head of the tracked branch.
#[derive(Debug, Clone, Serialize)]
pub struct BundleOutdated {
    /// The pinned name.
    pub name: String,
    /// The pinned version.
    pub version: String,
    /// The pinned digest.
    pub hash: String,
    /// `unchanged`, `changed`, `removed` or `invalid`.
    pub status: BundleStatus,
    /// The digest at the head (`changed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_hash: Option<String>,
    /// The version the bundle declares at the head, if it declares one (`changed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_version: Option<String>,
    /// What is wrong with it at the head (`invalid`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl OutdatedReport {
    /// The code of each source whose head could not be read or used (what the exit status is
    /// taken from). A bundle that is `invalid` at the head is reported, not a failure.
    pub fn failures(&self) -> impl Iterator<Item = ErrorCode> + '_ {
        self.sources
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| e.code))
    }
}

/// Looks at the tracked branch of every Git source of `plan`. Sources that name the same URL
/// and branch share one ref listing and one fetch, within `deadline` (`--fetch-timeout`).
pub fn outdated(
    plan: &Plan,
    interrupt: &AtomicBool,
    deadline: std::time::Duration,
) -> OutdatedReport {
    let mut heads: Vec<(Branch<'_>, Result<Candidate, SourceError>)> = Vec::new();
    let mut sources = Vec::new();
    for source in &plan.sources {
        let Source::Git(git) = source else { continue };
        let key = (git.url.as_str(), git.track.as_deref());
        let index = match heads.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                heads.push((
                    key,
                    Candidate::fetch(git, &Target::Tracked, interrupt, deadline),
                ));
                heads.len() - 1
            }
        };
        let mut report = SourceOutdated {
            location: git.location.clone(),
            url: git.shown.as_str().to_owned(),
            tracking: Target::Tracked.describe(git),
            pinned: git.revision.to_string(),
            head: None,
            bundles: Vec::new(),
            available: Vec::new(),
            error: None,
        };
        match &heads[index].1 {
            Ok(head) => {
                report.head = Some(head.id.to_string());
                if let Err(error) = compare(git, &head.commit, &mut report) {
                    report.error = Some(error);
                }
            }
            Err(error) => report.error = Some(error.clone()),
        }
        sources.push(report);
    }
    OutdatedReport { sources }
}

/// A tracked branch: the repository URL and the branch (`None`: the remote's `HEAD`).
type Branch<'a> = (&'a str, Option<&'a str>);

/// Takes `git`'s approved bundles and the available ones from the head `commit`.
fn compare(
    git: &GitSource,
    commit: &PinnedCommit,
    report: &mut SourceOutdated,
) -> Result<(), SourceError> {
    let root = git.root.as_ref();
    for pin in &git.approved {
        let mut entry = BundleOutdated {
            name: pin.name.to_string(),
            version: pin.version.as_str().to_owned(),
            hash: pin.hash.to_string(),
            status: BundleStatus::Unchanged,
            new_hash: None,
            new_version: None,
            problems: Vec::new(),
        };
        // A folder whose bundle now names another is not an update of this pin.
        match commit.take_named(root, &pin.name, git.limits) {
            Ok(bundle) if bundle.digest() == pin.hash => {}
            Ok(bundle) => {
                entry.status = BundleStatus::Changed;
                entry.new_hash = Some(bundle.digest().to_string());
                entry.new_version = bundle.declared_version().map(str::to_owned);
            }
            Err(TakeError::Missing { .. }) => entry.status = BundleStatus::Removed,
            Err(e) => {
                entry.status = BundleStatus::Invalid;
                entry.problems = e.lines();
            }
        }
        report.bundles.push(entry);
    }
    let approved: Vec<&str> = git.approved.iter().map(|p| p.name.as_str()).collect();
    report.available = commit
        .bundle_names(root)
        .map_err(|e| SourceError::from_error(&e))?
        .into_iter()
        .filter(|name| !approved.contains(&name.as_str()))
        .collect();
    Ok(())
}
