//! `skillfold outdated`: what the tracked branch of each Git source, and the tracked tag of each
//! OCI source, offers against the pins.
//!
//! Per Git source: the head of its tracked branch (`track`, or the remote's `HEAD`) is read from
//! the server's ref listing, that commit is fetched into a temporary repository exactly as
//! `prepare` fetches a pin (every check of the tree applies), and each approved bundle is taken
//! from it under the source's limits profile. Per OCI source with `track: TAG`: the digest the
//! tag names now is read (a `HEAD` of its manifest; [`crate::source::oci::candidate`]); when it
//! is the pinned digest nothing else is fetched and every bundle is `unchanged`, otherwise that
//! image is pulled into a temporary directory as `prepare` pulls a pin (every digest, size and
//! bound, the strict layer reader) and each approved bundle is taken from it. An OCI source
//! without `track` is reported as not tracked (no `tracking`, no bundles): an image has no
//! default head to follow.
//!
//! Either way each approved bundle is `unchanged` (same digest), `changed` (the new digest and
//! declared version), `removed` (no folder any more) or `invalid` (it breaks a rule at the head;
//! the problems are listed), and the bundles at the head that are not approved are listed as
//! `available` ([`compare`] is the one place that decides). A bundle whose declared version can
//! never be pinned (`latest`, `^1.2`) is `invalid` too, with the problem line `update` refuses it
//! with ([`crate::ops::update::declared_label`]). Each source is checked as `prepare`
//! checks it, through the same code ([`ApprovedSource`] for Git: its own `links` policy and
//! limits; [`crate::source::oci::approved`] for images: its own limits, the layers its
//! annotations give it, its own pull bound), and holds in memory what `prepare` would: its own
//! approved bundles, never the whole image. Sources of one URL, branch and `links` policy share
//! one look-up and one fetch that brings the files of every one of them; sources of one
//! repository share one look-up per tag and one pull per image. Nothing is written anywhere but
//! temporary directories.

use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::descriptor::plan::{GitSource, OciSource, Plan, Source};
use crate::format::pin::Pin;
use crate::ops::target::{Images, SourceId, Taken};
use crate::ops::update::declared_label;
use crate::source::error::SourceError;
use crate::source::git::approved::{self, ApprovedSource};
use crate::source::git::candidate::{Candidate, CandidateTarget};
use crate::support::error_code::ErrorCode;

/// The report of `outdated`.
#[derive(Debug, Clone, Serialize)]
pub struct OutdatedReport {
    /// One entry per Git and OCI source, in descriptor order.
    pub sources: Vec<SourceOutdated>,
}

/// What one Git source's tracked branch, or one OCI source's tracked tag, offers.
#[derive(Debug, Clone, Serialize)]
pub struct SourceOutdated {
    /// Which source: `location`, `kind` and `url`, flattened into the entry.
    #[serde(flatten)]
    pub id: SourceId,
    /// What is followed: `HEAD` (the remote's default) or `refs/heads/<track>` for Git, the tag
    /// for OCI; absent for an OCI source without `track` (not tracked: nothing was looked at).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking: Option<String>,
    /// The pinned commit (or manifest digest).
    pub pinned: String,
    /// The commit the branch (or digest the tag) points to now (absent when it could not be
    /// read, or the source is not tracked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// Each approved bundle at the head (none when the source is not tracked).
    pub bundles: Vec<BundleOutdated>,
    /// Bundles at the head holding a `SKILL.md` that are not approved (folders under `root` of a
    /// commit, folders of an image; none when the tag names the pinned image, which is not
    /// pulled).
    pub available: Vec<String>,
    /// Who published the head image, when the source checks its publisher (`verify` of an
    /// `oci` source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<crate::trust::verdict::Publisher>,
    /// Why the head could not be read or fetched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SourceError>,
}

/// What the head of the tracked branch holds of an approved bundle (spelled in kebab-case in
/// `--json`, as every command's bundle status is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutdatedStatus {
    /// The same digest.
    Unchanged,
    /// Another digest (see `new_hash`, `new_version`).
    Changed,
    /// No folder any more.
    Removed,
    /// It breaks a rule at the head (see `problems`).
    Invalid,
}

impl OutdatedStatus {
    /// Every status, in the order a summary counts them.
    pub const ALL: [OutdatedStatus; 4] = [
        OutdatedStatus::Changed,
        OutdatedStatus::Removed,
        OutdatedStatus::Invalid,
        OutdatedStatus::Unchanged,
    ];

    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            OutdatedStatus::Unchanged => "unchanged",
            OutdatedStatus::Changed => "changed",
            OutdatedStatus::Removed => "removed",
            OutdatedStatus::Invalid => "invalid",
        }
    }
}

impl std::fmt::Display for OutdatedStatus {
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
    pub status: OutdatedStatus,
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

    /// The counts of the report: what its summary line says, and what `--exit-code` judges.
    pub fn summary(&self) -> OutdatedSummary {
        let mut summary = OutdatedSummary {
            sources: self.sources.len(),
            ..OutdatedSummary::default()
        };
        let mut unapproved = std::collections::BTreeSet::new();
        for source in &self.sources {
            if source.error.is_some() {
                summary.failed += 1;
            }
            for name in self.unapproved(source) {
                unapproved.insert((source.id.url.as_str(), name));
            }
            for bundle in &source.bundles {
                *summary.count_mut(bundle.status) += 1;
            }
        }
        summary.available = unapproved.len();
        summary
    }

    /// The bundles `source` lists as `available` that no source of the same URL approves either
    /// (one repository is often split over several sources, each approving some of its bundles:
    /// a bundle another of them approves is not news).
    pub fn unapproved<'r>(&'r self, source: &'r SourceOutdated) -> impl Iterator<Item = &'r str> {
        source.available.iter().map(String::as_str).filter(|name| {
            !self.sources.iter().any(|other| {
                other.id.url == source.id.url && other.bundles.iter().any(|b| b.name == *name)
            })
        })
    }
}

/// How many sources and approved bundles `outdated` found in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutdatedSummary {
    /// Git and OCI sources looked at.
    pub sources: usize,
    /// Sources whose head could not be read or used.
    pub failed: usize,
    /// Approved bundles whose digest at the head is another.
    pub changed: usize,
    /// Approved bundles the head no longer holds.
    pub removed: usize,
    /// Approved bundles that break a rule at the head.
    pub invalid: usize,
    /// Approved bundles with the same digest at the head.
    pub unchanged: usize,
    /// Bundles at the heads that no source of their URL approves (each counted once).
    pub available: usize,
}

impl OutdatedSummary {
    /// The number of approved bundles in `status`.
    pub fn count(&self, status: OutdatedStatus) -> usize {
        match status {
            OutdatedStatus::Unchanged => self.unchanged,
            OutdatedStatus::Changed => self.changed,
            OutdatedStatus::Removed => self.removed,
            OutdatedStatus::Invalid => self.invalid,
        }
    }

    fn count_mut(&mut self, status: OutdatedStatus) -> &mut usize {
        match status {
            OutdatedStatus::Unchanged => &mut self.unchanged,
            OutdatedStatus::Changed => &mut self.changed,
            OutdatedStatus::Removed => &mut self.removed,
            OutdatedStatus::Invalid => &mut self.invalid,
        }
    }

    /// Whether a pin is not at its head: an approved bundle `changed`, `removed` or `invalid`
    /// there (what `outdated --exit-code` exits 2 for). A head that moved while every approved
    /// bundle kept its digest is not: the reviewed bytes are the same.
    pub fn pins_behind(&self) -> bool {
        self.changed + self.removed + self.invalid > 0
    }
}

/// Looks at the tracked branch of every Git source and the tracked tag of every OCI source of
/// `plan`. Sources that name the same URL, branch and `links` policy share one look-up and one
/// fetch (bringing the files of every one of them), sources of one repository one look-up per
/// tag and one pull per image, each network operation within `deadline` (`--fetch-timeout`).
/// Each source is then checked on its own terms, as `prepare` checks it.
pub fn outdated(
    plan: &Plan,
    interrupt: &AtomicBool,
    deadline: std::time::Duration,
) -> OutdatedReport {
    let mut heads = Heads::new(plan.sources.iter().filter_map(|s| match s {
        Source::Git(git) => Some(git),
        _ => None,
    }));
    // Every tracked tag is resolved first, so that each pull knows every source it serves.
    let mut images = Images::default();
    let digests: Vec<Option<Result<String, SourceError>>> = plan
        .sources
        .iter()
        .map(|source| match source {
            Source::Oci(oci) => oci.track.as_ref().map(|tag| {
                let digest = images.resolve(oci, tag, deadline);
                if let Ok(digest) = &digest
                    && *digest != oci.reference.digest
                {
                    images.share(oci, digest);
                }
                digest
            }),
            _ => None,
        })
        .collect();
    let mut sources = Vec::new();
    for (source, digest) in plan.sources.iter().zip(digests) {
        match source {
            Source::Git(git) => sources.push(git_source(git, &mut heads, interrupt, deadline)),
            Source::Oci(oci) => sources.push(oci_source(oci, digest, &mut images, deadline)),
            Source::Local(_) => {}
        }
    }
    OutdatedReport { sources }
}

/// The heads fetched so far: sources of one URL, tracked branch and `links` policy share one
/// fetch, which brings the files of the approved bundles of every one of them.
struct Heads<'p> {
    /// Every Git source of the plan.
    sources: Vec<&'p GitSource>,
    /// Each head fetched, by key.
    fetched: Vec<(HeadKey<'p>, Result<Candidate, SourceError>)>,
}

/// A tracked branch (`None`: the remote's `HEAD`) of a URL, under a `links` policy.
type HeadKey<'a> = approved::SharedFetchKey<'a, Option<&'a str>>;

impl<'p> Heads<'p> {
    fn new(sources: impl Iterator<Item = &'p GitSource>) -> Self {
        Heads {
            sources: sources.collect(),
            fetched: Vec::new(),
        }
    }

    fn key(git: &'p GitSource) -> HeadKey<'p> {
        approved::fetch_key(git, git.track.as_deref())
    }

    /// The head `git` tracks, fetched on first use.
    fn get(
        &mut self,
        git: &'p GitSource,
        interrupt: &AtomicBool,
        deadline: std::time::Duration,
    ) -> &Result<Candidate, SourceError> {
        let key = Self::key(git);
        let index = match self.fetched.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                let sharing: Vec<&GitSource> = self
                    .sources
                    .iter()
                    .copied()
                    .filter(|other| Self::key(other) == key)
                    .collect();
                let head = Candidate::fetch(
                    git,
                    &CandidateTarget::Tracked,
                    &sharing,
                    interrupt,
                    deadline,
                );
                self.fetched.push((key, head));
                self.fetched.len() - 1
            }
        };
        &self.fetched[index].1
    }
}

fn git_source<'p>(
    git: &'p GitSource,
    heads: &mut Heads<'p>,
    interrupt: &AtomicBool,
    deadline: std::time::Duration,
) -> SourceOutdated {
    let mut report = SourceOutdated {
        id: SourceId::git(git),
        tracking: Some(CandidateTarget::Tracked.describe(git)),
        pinned: git.revision.to_string(),
        head: None,
        bundles: Vec::new(),
        available: Vec::new(),
        publisher: None,
        error: None,
    };
    match heads.get(git, interrupt, deadline) {
        Ok(head) => {
            report.head = Some(head.id.to_string());
            // The checks `prepare` runs on this source: its own links policy and limits.
            match ApprovedSource::check(&head.commit, git) {
                Ok(source) => {
                    let names = head
                        .commit
                        .bundle_names(git.root.as_ref())
                        .map_err(|e| SourceError::from_error(&e));
                    compare(
                        &git.approved,
                        |pin| Taken::from(source.take_named(pin)),
                        names,
                        &mut report,
                    );
                }
                Err(e) => report.error = Some(SourceError::from_error(&e)),
            }
        }
        Err(error) => report.error = Some(error.clone()),
    }
    report
}

fn oci_source(
    oci: &OciSource,
    digest: Option<Result<String, SourceError>>,
    images: &mut Images,
    deadline: std::time::Duration,
) -> SourceOutdated {
    let mut report = SourceOutdated {
        id: SourceId::oci(oci),
        tracking: oci.track.clone(),
        pinned: oci.reference.digest.clone(),
        head: None,
        bundles: Vec::new(),
        available: Vec::new(),
        publisher: None,
        error: None,
    };
    let digest = match digest {
        // Not tracked: nothing was looked at.
        None => return report,
        Some(Err(error)) => {
            report.error = Some(error);
            return report;
        }
        Some(Ok(digest)) => digest,
    };
    report.head = Some(digest.clone());
    if digest == oci.reference.digest {
        // The pinned image: its bundles are the pins (prepare checks them); nothing is pulled.
        report.bundles = oci.approved.iter().map(unchanged).collect();
        return report;
    }
    // The head is judged as `prepare` would judge it: who published it first.
    match images.publisher(oci, &digest, deadline) {
        Ok(publisher) => report.publisher = publisher,
        Err(error) => {
            report.error = Some(error);
            return report;
        }
    }
    match images.read(oci, &digest, deadline) {
        Ok(head) => compare(
            &oci.approved,
            |pin| Taken::from(head.take_named(&pin.name)),
            Ok(head.bundle_names()),
            &mut report,
        ),
        Err(error) => report.error = Some(error),
    }
    report
}

/// Fills `report` from the head: each of the `approved` bundles as `take` finds it (a folder
/// whose bundle now names another is not an update of its pin: `take` refuses it), then the
/// `names` of the head's bundles that are not approved.
fn compare(
    approved: &[Pin],
    take: impl Fn(&Pin) -> Taken,
    names: Result<Vec<String>, SourceError>,
    report: &mut SourceOutdated,
) {
    report.bundles = approved
        .iter()
        .map(|pin| bundle_report(pin, take(pin)))
        .collect();
    match names {
        Ok(names) => {
            report.available = names
                .into_iter()
                .filter(|name| !approved.iter().any(|p| p.name.as_str() == name))
                .collect();
        }
        Err(error) => report.error = Some(error),
    }
}

/// The report of the approved bundle `pin` where the head is the pin.
fn unchanged(pin: &Pin) -> BundleOutdated {
    BundleOutdated {
        name: pin.name.to_string(),
        version: pin.version.as_str().to_owned(),
        hash: pin.hash.to_string(),
        status: OutdatedStatus::Unchanged,
        new_hash: None,
        new_version: None,
        problems: Vec::new(),
    }
}

/// The report of the approved bundle `pin` as the head holds it.
fn bundle_report(pin: &Pin, taken: Taken) -> BundleOutdated {
    let mut entry = unchanged(pin);
    match taken {
        Taken::Bundle(bundle) if bundle.digest() == pin.hash => {}
        // A version `update` would refuse to pin is `invalid` here too, with its problem line.
        Taken::Bundle(bundle) => match bundle.declared_version().map(declared_label) {
            Some(Err(problem)) => {
                entry.status = OutdatedStatus::Invalid;
                entry.problems = vec![problem];
            }
            _ => {
                entry.status = OutdatedStatus::Changed;
                entry.new_hash = Some(bundle.digest().to_string());
                entry.new_version = bundle.declared_version().map(str::to_owned);
            }
        },
        Taken::Missing => entry.status = OutdatedStatus::Removed,
        Taken::Invalid(problems, _) => {
            entry.status = OutdatedStatus::Invalid;
            entry.problems = problems;
        }
    }
    entry
}
