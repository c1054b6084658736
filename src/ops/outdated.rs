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
    pub status: &'static str,
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
    /// Whether a source's head could not be read for a reason that may pass.
    pub fn has_fetch_failures(&self) -> bool {
        self.sources
            .iter()
            .any(|s| s.error.as_ref().is_some_and(|e| e.retryable))
    }

    /// Whether a source's head could not be used for a reason that will not pass by itself.
    pub fn has_refusals(&self) -> bool {
        self.sources
            .iter()
            .any(|s| s.error.as_ref().is_some_and(|e| !e.retryable))
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
            status: "unchanged",
            new_hash: None,
            new_version: None,
            problems: Vec::new(),
        };
        // A folder whose bundle now names another is not an update of this pin.
        match commit.take_named(root, &pin.name, git.limits) {
            Ok(bundle) if bundle.digest() == pin.hash => {}
            Ok(bundle) => {
                entry.status = "changed";
                entry.new_hash = Some(bundle.digest().to_string());
                entry.new_version = bundle.declared_version().map(str::to_owned);
            }
            Err(TakeError::Missing { .. }) => entry.status = "removed",
            Err(e) => {
                entry.status = "invalid";
                entry.problems = e.lines();
            }
        }
        report.bundles.push(entry);
    }
    let approved: Vec<&str> = git.approved.iter().map(|p| p.name.as_str()).collect();
    report.available = commit
        .bundle_names(root)
        .map_err(|e| SourceError::of(e.code(), &e, e.is_retryable()))?
        .into_iter()
        .filter(|name| !approved.contains(&name.as_str()))
        .collect();
    Ok(())
}
