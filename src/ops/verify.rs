//! `skillfold verify`: the CronJob check. Re-reads every prepared corpus and local bundle and
//! verifies it against the descriptor's pins, without network access.

use serde::Serialize;

use crate::descriptor::Plan;
use crate::descriptor::plan::Source;
use crate::runtime::Runtime;
use crate::source::code::PrepareCode;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

/// What `verify` found of one bundle. Each command reports its own statuses (`PrepareStatus`,
/// `OutdatedStatus`, `UpdateStatus`), all spelled in kebab-case in `--json` (docs/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyStatus {
    /// It holds.
    Verified,
    /// It does not verify, or is not prepared.
    Failed,
    /// Its corpus is being prepared right now (code `guard_held`).
    BeingPrepared,
    /// An I/O error kept it from being read.
    Unreadable,
}

impl VerifyStatus {
    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyStatus::Verified => "verified",
            VerifyStatus::Failed => "failed",
            VerifyStatus::BeingPrepared => "being-prepared",
            VerifyStatus::Unreadable => "unreadable",
        }
    }
}

/// The outcome of one bundle.
#[derive(Debug, Clone, Serialize)]
pub struct BundleCheck {
    /// Where it is configured.
    pub location: String,
    /// The pinned name.
    pub name: String,
    /// `verified`, `failed`, `being-prepared` or `unreadable` (an I/O error).
    pub status: VerifyStatus,
    /// The limits profile it was verified under (verified bundles).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<crate::format::limits::Limits>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stable code of the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// Every problem, when there were several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

/// The outcome of `verify`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// One entry per pinned bundle.
    pub bundles: Vec<BundleCheck>,
    /// Corpora being prepared right now (`location: holder`).
    pub being_prepared: Vec<String>,
}

impl VerifyReport {
    /// The code of every failure of the report (what the exit status is taken from): each
    /// bundle's that does not hold, and `guard_held` for each corpus being prepared.
    pub fn failures(&self) -> impl Iterator<Item = ErrorCode> + '_ {
        self.bundles.iter().filter_map(|b| b.code).chain(
            self.being_prepared
                .iter()
                .map(|_| ErrorCode::from(PrepareCode::GuardHeld)),
        )
    }
}

/// Verifies every source of `plan`. The bundles of sources whose corpus directories are one
/// folder on disk fail with `shared_directory`, whatever was read there: one corpus cannot hold
/// what two sources pin.
pub fn verify(plan: Plan) -> VerifyReport {
    let shared: Vec<(String, crate::ops::prepare::SourceFailure)> =
        crate::ops::prepare::shared_directories(&plan, false)
            .into_iter()
            .filter_map(|(index, failure)| {
                let location = match &plan.sources[index] {
                    Source::Git(git) => git.location.clone(),
                    Source::Oci(oci) => oci.location.clone(),
                    Source::Local(_) => return None,
                };
                Some((location, failure))
            })
            .collect();
    let mut being_prepared = Vec::new();
    let mut busy_locations = Vec::new();
    for corpus in plan.corpora() {
        if let Some(holder) = crate::corpus::Corpus::at(corpus.directory).preparer() {
            being_prepared.push(format!(
                "{}: `{}` is being prepared by {holder}",
                corpus.location,
                crate::support::escape::path(corpus.directory)
            ));
            busy_locations.push(corpus.location.to_owned());
        }
    }
    crate::support::failpoint::pause("verify-probed");
    let runtime = Runtime::load(plan);
    // A preparer that took its guard while the corpora were being read (a first start that
    // had not published yet) makes what was read inconclusive, not a failure: look again.
    for corpus in runtime.plan().corpora() {
        if busy_locations.iter().any(|l| l == corpus.location) {
            continue;
        }
        if let Some(holder) = crate::corpus::Corpus::at(corpus.directory).preparer() {
            being_prepared.push(format!(
                "{}: `{}` is being prepared by {holder}",
                corpus.location,
                crate::support::escape::path(corpus.directory)
            ));
            busy_locations.push(corpus.location.to_owned());
        }
    }
    let mut bundles: Vec<BundleCheck> = runtime
        .snapshots()
        .map(|s| BundleCheck {
            location: s.origin().location.clone(),
            name: s.pin().name.to_string(),
            status: VerifyStatus::Verified,
            limits: Some(s.limits()),
            error: None,
            code: None,
            details: Vec::new(),
        })
        .collect();
    for failure in runtime.failures() {
        let busy = busy_locations.contains(&failure.location);
        // A bundle of a corpus being prepared was read while a preparer held its guard: what
        // was read is no verdict, and the code says so (`guard_held`, retryable).
        let (status, code) = if busy {
            (
                VerifyStatus::BeingPrepared,
                ErrorCode::from(PrepareCode::GuardHeld),
            )
        } else if failure.transient() {
            // An I/O error: the check could not be made, which is not a mismatch.
            (VerifyStatus::Unreadable, failure.code)
        } else {
            (VerifyStatus::Failed, failure.code)
        };
        bundles.push(BundleCheck {
            location: failure.location.clone(),
            name: failure.name.clone(),
            status,
            limits: None,
            error: Some(failure.reason.clone()),
            code: Some(code),
            details: failure.details.clone(),
        });
    }
    for source in &runtime.plan().sources {
        match source {
            Source::Git(git) => recheck_signature(git, &mut bundles),
            Source::Oci(oci) => recheck_publisher(oci, &mut bundles),
            Source::Local(_) => {}
        }
    }
    name_by_current(runtime.plan(), &mut bundles);
    for (location, failure) in &shared {
        for bundle in bundles.iter_mut().filter(|b| &b.location == location) {
            bundle.status = VerifyStatus::Failed;
            bundle.limits = None;
            bundle.error = Some(format!(
                "`{}` ({location}) is not verified: {}",
                bundle.name, failure.message
            ));
            bundle.code = Some(failure.code);
            bundle.details = Vec::new();
        }
    }
    bundles.sort_by(|a, b| (&a.location, &a.name).cmp(&(&b.location, &b.name)));
    VerifyReport {
        bundles,
        being_prepared,
    }
}

/// Names each bundle of a corpus in a message as the operator reaches it,
/// `<directory>/current/<name>`, not by the generation folder that was read
/// (`<directory>/.skillfold/generations/<id>/<name>`, an id that changes with every
/// preparation): `current` is the stable path, the one `prepare`'s lines and the runtime's
/// prompt block name.
fn name_by_current(plan: &Plan, bundles: &mut [BundleCheck]) {
    for corpus in plan.corpora() {
        let Ok(Some(generation)) = crate::corpus::Corpus::at(corpus.directory).current() else {
            continue;
        };
        let read = escape::path(&generation.dir).to_string();
        let current = escape::path(&corpus.directory.join("current")).to_string();
        for bundle in bundles.iter_mut().filter(|b| b.location == corpus.location) {
            for text in bundle.error.iter_mut().chain(bundle.details.iter_mut()) {
                if text.contains(&read) {
                    *text = text.replace(&read, &current);
                }
            }
        }
    }
}

/// For a Git source with a trust policy whose published manifest keeps the signed commit object
/// of the pinned commit: checks the signature again, and fails every verified bundle of the
/// source when it no longer holds (the allowed signers changed, or the manifest was edited).
fn recheck_signature(git: &crate::descriptor::plan::GitSource, bundles: &mut [BundleCheck]) {
    let Some(trust) = &git.trust else { return };
    let Ok(Some(current)) = crate::corpus::Corpus::at(&git.directory).current() else {
        return;
    };
    let source = &current.manifest.source;
    let (Some(object), true) = (
        &source.commit_object,
        source.commit == git.revision.as_str(),
    ) else {
        return;
    };
    let Err(e) =
        crate::trust::commit::verify_commit_object(&source.commit, object.as_bytes(), trust)
    else {
        return;
    };
    for bundle in bundles
        .iter_mut()
        .filter(|b| b.location == git.location && b.status == VerifyStatus::Verified)
    {
        bundle.status = VerifyStatus::Failed;
        bundle.limits = None;
        bundle.error = Some(format!(
            "the published commit's signature no longer holds: {e}"
        ));
        bundle.code = Some(e.code().into());
    }
}

/// For an OCI source with a publisher policy: checks the signature material its published
/// manifest records again, offline, under today's `verify`, and fails every verified bundle of
/// the source when none is recorded or it no longer holds (the keys or identities changed, or
/// the manifest was edited): `publisher_changed`.
fn recheck_publisher(oci: &crate::descriptor::plan::OciSource, bundles: &mut [BundleCheck]) {
    use crate::source::oci::code::DistributionCode;
    let Some(policy) = &oci.publisher else { return };
    let Ok(Some(current)) = crate::corpus::Corpus::at(&oci.directory).current() else {
        return;
    };
    let source = &current.manifest.source;
    if source.commit != oci.reference.digest {
        return;
    }
    let why = match &source.publisher {
        None => "the published generation records no publisher's signature".to_owned(),
        Some(recorded) => {
            match crate::trust::image::verify(&recorded.material, &source.commit, policy) {
                Ok(now) if now.signer == recorded.signer => return,
                Ok(now) => format!(
                    "the recorded signature now verifies as {}, not as the recorded {}",
                    now.signer, recorded.signer
                ),
                Err(rejected) => {
                    let reasons: Vec<String> = rejected.iter().map(ToString::to_string).collect();
                    format!(
                        "the recorded signature no longer verifies under `verify`: {}",
                        reasons.join("; ")
                    )
                }
            }
        }
    };
    for bundle in bundles
        .iter_mut()
        .filter(|b| b.location == oci.location && b.status == VerifyStatus::Verified)
    {
        bundle.status = VerifyStatus::Failed;
        bundle.limits = None;
        bundle.error = Some(format!("who published the image: {why}"));
        bundle.code = Some(DistributionCode::PublisherChanged.into());
    }
}
