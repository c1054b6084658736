//! OCI sources: one image, pinned by manifest digest, per source. The run holds the corpus guard
//! and takes the warm path exactly as a Git source does; otherwise it pulls the manifest and the
//! layers that hold approved bundles (every digest, size and bound checked by
//! [`crate::source::oci::pull`]), reads each layer with the strict reader
//! ([`crate::source::oci::unpack`]: a link, device, unsafe path or duplicate anywhere in a layer
//! refuses the source), checks every approved bundle against the bundle rules and its pin, stages
//! it, verifies the staged bytes and publishes — or leaves the published generation alone.

use std::collections::{BTreeMap, BTreeSet};

use super::run::{CorpusRun, RunTarget, Start};
use super::{Options, PrepareStatus, SourceFailure, SourceReport, bundle_reports, io_failure};
use crate::corpus::manifest::ManifestBundle;
use crate::corpus::pin_check;
use crate::corpus::store::Staging;
use crate::descriptor::kind::SourceKind;
use crate::descriptor::plan::OciSource;
use crate::format::bundle::Bundle;
use crate::format::file_set::FileSet;
use crate::format::problem::Problems;
use crate::runtime::snapshot::Origin;
use crate::source::oci::PulledLayer as Layer;
use crate::source::oci::approved::ApprovedBundles;
use crate::source::oci::code::DistributionCode;
use crate::source::oci::publisher;
use crate::source::oci::publisher::Refusal;
use crate::trust::image::material::SignatureMaterial;
use crate::trust::image::policy::PublisherPolicy;
use crate::trust::verdict::{Rejected, Verified};

impl SourceReport {
    /// The report of an OCI source before anything happened: every bundle `failed`.
    pub(super) fn oci(oci: &OciSource) -> SourceReport {
        SourceReport {
            origin: Origin {
                url: Some(oci.repository()),
                commit: Some(oci.reference.digest.clone()),
                ..Origin::new(SourceKind::Oci, oci.location.clone())
            },
            directory: oci.directory.clone(),
            links: None,
            fetch: None,
            bundles: bundle_reports(&oci.approved, oci.limits, PrepareStatus::Failed),
            signer: None,
            publisher: None,
            error: None,
        }
    }
}

/// Prepares `sources` (each with its index in the descriptor), which all pin one image, with at
/// most one pull; `fetches` counts the pulls made. Each source keeps its own corpus, guard,
/// checks and promotion, and fails on its own.
pub(super) fn prepare_image(
    sources: &[(usize, &OciSource)],
    options: &Options<'_>,
    fetches: &std::sync::atomic::AtomicUsize,
) -> Vec<(usize, SourceReport)> {
    let mut reports = Vec::with_capacity(sources.len());
    let mut pending = Vec::new();
    for &(index, oci) in sources {
        let mut report = SourceReport::oci(oci);
        let target = RunTarget {
            corpus: oci.corpus(),
            url: oci.repository(),
            root: None,
            links: crate::descriptor::Links::Refuse,
            trust: None,
            publisher: oci.publisher.as_deref(),
        };
        match CorpusRun::new(target, options).and_then(CorpusRun::start) {
            Ok(Start::UpToDate(generation, _, publisher)) => {
                report.origin.generation = Some(generation);
                report.publisher = publisher;
                report.bundles = bundle_reports(&oci.approved, oci.limits, PrepareStatus::UpToDate);
            }
            Ok(Start::Fetch(run, staging)) => pending.push((reports.len(), oci, run, staging)),
            Err(failure) => report.fail(failure, options),
        }
        reports.push((index, report));
    }
    // Who published the image, before any layer is read: a source whose `verify` no signature
    // satisfies fails here, and the others go on.
    let pending = judge_publishers(pending, &mut reports, options);
    let Some((_, first, first_run, first_staging, _)) = pending.first() else {
        return reports;
    };
    let wanted: BTreeSet<String> = pending
        .iter()
        .flat_map(|(_, oci, _, _, _)| oci.approved.iter().map(|p| p.name.to_string()))
        .collect();
    // One pull serves every source of the image: it may read what all of them may together;
    // each source's own layers are held to its own bound when it reads them.
    let max_bytes = pending
        .iter()
        .map(|(_, oci, _, _, _)| max_pull_bytes(oci.limits))
        .fold(0u64, u64::saturating_add);
    // The layers stream into files beside the first source's staging (removed with the leftovers
    // of a crashed run), and are read from there one at a time.
    let store = first_run
        .corpus
        .fetch_dir(&first_staging.id)
        .with_extension("layers");
    let scratch = first_run.corpus.clone();
    fetches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pulled = fs_err::create_dir(&store)
        .map_err(|e| io_failure(&e.into()))
        .and_then(|()| pull(first, first_run, &wanted, &store, max_bytes));
    for (slot, oci, run, staging, verified) in pending {
        let publisher = verified.as_ref().map(|v| v.signer.clone());
        let result = pulled
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|layers| stage_and_publish(oci, &run, &staging, layers, verified));
        let report = &mut reports[slot].1;
        match result {
            Ok(generation) => {
                report.origin.generation = Some(generation);
                report.publisher = publisher;
                report.bundles =
                    bundle_reports(&oci.approved, oci.limits, PrepareStatus::Published);
            }
            Err(failure) => {
                // Leave the published generation alone; remove what this run wrote.
                let _ = run.corpus.remove_scratch(&staging.dir);
                report.fail(failure, options);
            }
        }
    }
    drop(pulled);
    let _ = scratch.remove_scratch(&store);
    reports
}

/// A source whose guard is held and whose staging folder is made, waiting for the pull (its slot
/// in the reports, the source, the run, the staging, and who published the image if it asks).
type Pending<'a> = (
    usize,
    &'a OciSource,
    Box<CorpusRun<'a>>,
    Staging,
    Option<Verified>,
);

/// Judges who published the image for every pending source whose `verify` asks, on signature
/// material fetched once for all of them: a source no signature satisfies fails (its staging
/// removed), the others stay pending with their verdict.
fn judge_publishers<'a>(
    pending: Vec<(usize, &'a OciSource, Box<CorpusRun<'a>>, Staging)>,
    reports: &mut [(usize, SourceReport)],
    options: &Options<'_>,
) -> Vec<Pending<'a>> {
    let asking = pending
        .iter()
        .find(|(_, oci, _, _)| oci.publisher.is_some());
    let material = asking.map(|(_, oci, run, _)| fetch_material(oci, run));
    let mut kept = Vec::with_capacity(pending.len());
    for (slot, oci, run, staging) in pending {
        let verdict = match (&oci.publisher, &material) {
            (None, _) | (_, None) => Ok(None),
            (Some(_), Some(Err(failure))) => Err(failure.clone()),
            (Some(policy), Some(Ok(material))) => {
                run.step("checking who published the image");
                judge(oci, policy, material).map(|verified| {
                    run.step(&format!("published by {}", verified.signer));
                    // What was skipped unread beside it, said once it no longer matters.
                    for skipped in &material.skipped {
                        run.note(&format!("skipped {}", Rejected::from(skipped)));
                    }
                    Some(verified)
                })
            }
        };
        match verdict {
            Ok(verified) => kept.push((slot, oci, run, staging, verified)),
            Err(failure) => {
                let _ = run.corpus.remove_scratch(&staging.dir);
                reports[slot].1.fail(failure, options);
            }
        }
    }
    kept
}

/// The verdict on `material` for `oci`'s pinned image under its publisher policy, as a failure
/// of the source when no signature satisfies it.
fn judge(
    oci: &OciSource,
    policy: &PublisherPolicy,
    material: &SignatureMaterial,
) -> Result<Verified, SourceFailure> {
    crate::trust::image::verify(material, &oci.reference.digest, policy).map_err(|rejected| {
        let refusal = Refusal::of(&oci.reference.to_string(), &rejected);
        let mut failure = SourceFailure::new(refusal.code, refusal.message);
        failure.details = refusal.details;
        failure
    })
}

fn stage_and_publish(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    staging: &Staging,
    layers: &[Layer],
    verified: Option<Verified>,
) -> Result<String, SourceFailure> {
    let mut bundles = unpack_bundles(oci, run, layers)?;
    let mut recorded = Vec::new();
    let mut details = Vec::new();
    for pin in &oci.approved {
        run.check_interrupt()?;
        let Some((files, problems)) = bundles.remove(pin.name.as_str()) else {
            details.push(format!(
                "`{}` is not in the image [{}]",
                pin.name,
                DistributionCode::BundleNotInImage.as_str()
            ));
            continue;
        };
        let folder = std::path::Path::new(pin.name.as_str());
        let checked = Bundle::check(files, problems)
            .map_err(|invalid| pin_check::VerifyError::Load {
                dir: folder.to_owned(),
                source: crate::format::bundle::BundleError::Invalid(invalid),
            })
            .and_then(|bundle| pin_check::verify_bundle(bundle, folder, pin, None));
        match checked {
            Ok(bundle) => {
                staging
                    .write_bundle(pin.name.as_str(), bundle.files())
                    .map_err(|e| io_failure(&e))?;
                recorded.push(ManifestBundle::of(pin, pin.name.to_string(), &bundle));
            }
            Err(e) => details.push(format!("{e} [{}]", e.code())),
        }
    }
    if !details.is_empty() {
        let mut failure = SourceFailure::new(
            crate::source::code::PrepareCode::VerificationFailed,
            format!(
                "{} problem(s) with the approved bundles of {}",
                details.len(),
                oci.reference
            ),
        );
        failure.details = details;
        return Err(failure);
    }
    run.publish(staging, recorded, None, verified)
}

/// This source's approved bundles, read from the pulled layers as every command reads them
/// ([`ApprovedBundles`]: its own limits, the layers its annotations give it).
fn unpack_bundles(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    layers: &[Layer],
) -> Result<BTreeMap<String, (FileSet, Problems)>, SourceFailure> {
    let wanted: BTreeSet<String> = oci.approved.iter().map(|p| p.name.to_string()).collect();
    let image = oci.reference.to_string();
    ApprovedBundles::read(
        (&image, layers),
        &wanted,
        (oci.limits, max_pull_bytes(oci.limits)),
        &|| run.check_interrupt(),
        &|e| SourceFailure::new(e.code, e.message),
    )
    .map(|read| read.bundles)
}

/// Pulls the manifest and the layers that may hold `wanted` bundles into files in `into`, once
/// for every source of the image, reading at most `max_bytes` of layers.
#[cfg(feature = "oci")]
fn pull(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    wanted: &BTreeSet<String>,
    into: &std::path::Path,
    max_bytes: u64,
) -> Result<Vec<Layer>, SourceFailure> {
    run.step(&format!("pulling {}", oci.reference));
    crate::source::oci::pull::pull(&crate::source::oci::pull::PullRequest {
        reference: &oci.reference,
        plain_http: oci.plain_http,
        wanted: &|name| wanted.contains(name),
        into,
        max_bytes,
        deadline: run.options.fetch_timeout,
    })
    .map_err(|e| SourceFailure::new(e.code, e.message))
}

/// The signature material the registry holds for `oci`'s pinned image, within the source's
/// deadline and with the registry's credentials, as for the pull.
fn fetch_material(
    oci: &OciSource,
    run: &CorpusRun<'_>,
) -> Result<SignatureMaterial, SourceFailure> {
    run.step(&format!("fetching the signatures of {}", oci.reference));
    publisher::fetch_material(&oci.reference, oci.plain_http, run.options.fetch_timeout)
        .map_err(|(code, message)| SourceFailure::new(code, message))
}

/// The most layer bytes a source under `limits` may pull.
#[cfg(feature = "oci")]
fn max_pull_bytes(limits: crate::format::limits::Limits) -> u64 {
    crate::source::oci::pull::max_pull_bytes(limits)
}

#[cfg(not(feature = "oci"))]
fn max_pull_bytes(_limits: crate::format::limits::Limits) -> u64 {
    0
}

#[cfg(not(feature = "oci"))]
fn pull(
    _oci: &OciSource,
    _run: &CorpusRun<'_>,
    _wanted: &BTreeSet<String>,
    _into: &std::path::Path,
    _max_bytes: u64,
) -> Result<Vec<Layer>, SourceFailure> {
    Err(SourceFailure::new(
        DistributionCode::OciDisabled,
        "this build of skillfold has no registry client (built without the `oci` feature)",
    ))
}
