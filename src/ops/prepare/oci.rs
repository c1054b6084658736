//! OCI sources: one image, pinned by manifest digest, per source. The run holds the corpus guard
//! and takes the warm path exactly as a Git source does; otherwise it pulls the manifest and the
//! layers that hold approved bundles (every digest, size and bound checked by
//! [`crate::prepare::oci::pull`]), reads each layer with the strict reader
//! ([`crate::prepare::oci::unpack`]: a link, device, unsafe path or duplicate anywhere in a layer
//! refuses the source), checks every approved bundle against the bundle rules and its pin, stages
//! it, verifies the staged bytes and publishes — or leaves the published generation alone.

use std::collections::{BTreeMap, BTreeSet};

use super::run::{CorpusRun, Start, Target};
use super::{Failure, Options, SourceReport, bundle_reports, io_failure};
use crate::descriptor::plan::OciSource;
use crate::format::bundle::Bundle;
use crate::format::file_set::FileSet;
use crate::format::problem::Problems;
use crate::prepare::corpus::manifest::ManifestBundle;
use crate::prepare::corpus::store::Staging;
use crate::prepare::oci::PulledLayer as Layer;
use crate::prepare::oci::code::DistributionCode;
use crate::prepare::verify;

impl SourceReport {
    /// The report of an OCI source before anything happened: every bundle `failed`.
    pub(super) fn oci(oci: &OciSource) -> SourceReport {
        SourceReport {
            kind: "oci",
            location: oci.location.clone(),
            directory: oci.directory.clone(),
            url: Some(oci.repository()),
            commit: Some(oci.reference.digest.clone()),
            generation: None,
            bundles: bundle_reports(&oci.approved, oci.limits, "failed"),
            signer: None,
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
        let target = Target {
            corpus: oci.corpus(),
            url: oci.repository(),
            root: None,
            trust: None,
        };
        match CorpusRun::new(target, options).and_then(CorpusRun::start) {
            Ok(Start::UpToDate(generation, _)) => {
                report.generation = Some(generation);
                report.bundles = bundle_reports(&oci.approved, oci.limits, "up-to-date");
            }
            Ok(Start::Fetch(run, staging)) => pending.push((reports.len(), oci, run, staging)),
            Err(failure) => report.fail(failure, options),
        }
        reports.push((index, report));
    }
    let Some((_, first, first_run, _)) = pending.first() else {
        return reports;
    };
    let wanted: BTreeSet<String> = pending
        .iter()
        .flat_map(|(_, oci, _, _)| oci.approved.iter().map(|p| p.name.to_string()))
        .collect();
    fetches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pulled = pull(first, first_run, &wanted);
    for (slot, oci, run, staging) in &pending {
        let result = pulled
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|layers| stage_and_publish(oci, run, staging, layers));
        let report = &mut reports[*slot].1;
        match result {
            Ok(generation) => {
                report.generation = Some(generation);
                report.bundles = bundle_reports(&oci.approved, oci.limits, "published");
            }
            Err(failure) => {
                // Leave the published generation alone; remove what this run wrote.
                let _ = fs_err::remove_dir_all(&staging.dir);
                report.fail(failure, options);
            }
        }
    }
    reports
}

fn stage_and_publish(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    staging: &Staging,
    layers: &[Layer],
) -> Result<String, Failure> {
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
            .map_err(|invalid| verify::VerifyError::Load {
                dir: folder.to_owned(),
                source: crate::format::bundle::LoadError::Invalid(invalid),
            })
            .and_then(|bundle| verify::verify_bundle(bundle, folder, pin, None));
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
        let mut failure = Failure::new(
            crate::prepare::code::PrepareCode::VerificationFailed,
            format!(
                "{} problem(s) with the approved bundles of {}",
                details.len(),
                oci.reference
            ),
        );
        failure.details = details;
        return Err(failure);
    }
    run.publish(staging, recorded, None)
}

/// This source's approved bundles, read from the pulled layers with the strict reader.
fn unpack_bundles(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    layers: &[Layer],
) -> Result<BTreeMap<String, (FileSet, Problems)>, Failure> {
    let wanted: BTreeSet<String> = oci.approved.iter().map(|p| p.name.to_string()).collect();
    let mut bundles = BTreeMap::new();
    for layer in layers {
        run.check_interrupt()?;
        let found = crate::prepare::oci::unpack::unpack(&layer.bytes, &wanted, oci.limits)
            .map_err(|e| Failure::new(e.code, format!("layer {}: {}", layer.digest, e.message)))?;
        for (name, files) in found {
            if bundles.insert(name.clone(), files).is_some() {
                return Err(Failure::new(
                    DistributionCode::DuplicateInLayer,
                    format!("`{name}` is in more than one layer of {}", oci.reference),
                ));
            }
        }
    }
    Ok(bundles)
}

/// Pulls the manifest and the layers that may hold `wanted` bundles, once for every source of
/// the image.
#[cfg(feature = "oci")]
fn pull(
    oci: &OciSource,
    run: &CorpusRun<'_>,
    wanted: &BTreeSet<String>,
) -> Result<Vec<Layer>, Failure> {
    run.step(&format!("pulling {}", oci.reference));
    let deadline = run.options.fetch_timeout;
    crate::prepare::oci::pull::pull(
        &oci.reference,
        oci.plain_http,
        &|name| wanted.contains(name),
        deadline,
    )
    .map_err(|e| Failure::new(e.code, e.message))
}

#[cfg(not(feature = "oci"))]
fn pull(
    _oci: &OciSource,
    _run: &CorpusRun<'_>,
    _wanted: &BTreeSet<String>,
) -> Result<Vec<Layer>, Failure> {
    Err(Failure::new(
        DistributionCode::OciDisabled,
        "this build of skillfold has no registry client (built without the `oci` feature)",
    ))
}
