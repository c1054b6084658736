//! The scanner rules of a descriptor, in one pass over it (docs/scanners.md): the declared
//! `scanners` (`invalid_scanner`), each `require_scan` list (`invalid_scanner` for a name not
//! declared), each recorded verdict (`invalid_scan`), and the policy itself: every bundle a
//! source's or an agent's `require_scan` covers has a `pass` verdict by each required scanner
//! for its current hash (`scan_missing`). An agent's list covers every bundle the agent gets,
//! the defaults included. Static, like every rule of `check`: the verdicts are read, no scanner
//! runs.

use std::collections::BTreeMap;
use std::path::Path;

use super::DescriptorProblem;
use crate::descriptor::code::DescriptorCode;
use crate::descriptor::scanners::{self, ScanSpec, ScannerSpec};
use crate::descriptor::{Descriptor, SkillSource};
use crate::support::escape;

/// One approved entry as the policy sees it.
struct Approval<'d> {
    location: String,
    name: &'d str,
    hash: &'d str,
    scans: &'d [ScanSpec],
}

/// Every problem of the scanner keys of `descriptor`; relative paths resolve against `base`.
pub(super) fn problems(descriptor: &Descriptor, base: &Path) -> Vec<DescriptorProblem> {
    let declared = &descriptor.scanners;
    let mut problems = scanners::resolve_scanners(declared, base)
        .err()
        .unwrap_or_default();
    // The bundles each list covers, and the scanners each bundle lacks (one problem per entry
    // and scanner, whoever requires it).
    let mut lacking: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    let mut defaults = Vec::new();
    for (i, source) in descriptor.skills.iter().enumerate() {
        let location = format!("skills[{i}]");
        let (approvals, required) = source_facts(source, &location);
        problems.extend(check_source(
            &approvals, required, declared, &location, source,
        ));
        need(
            &approvals,
            required,
            &source_key(&location, source),
            &mut lacking,
        );
        defaults.extend(approvals);
    }
    for (agent, spec) in &descriptor.agents {
        let at = format!("agents.{agent}");
        problems.extend(scanners::check_required(&spec.require_scan, declared, &at));
        for (i, source) in spec.skills.iter().enumerate() {
            let location = format!("{at}.skills[{i}]");
            let (approvals, required) = source_facts(source, &location);
            problems.extend(check_source(
                &approvals, required, declared, &location, source,
            ));
            need(
                &approvals,
                required,
                &source_key(&location, source),
                &mut lacking,
            );
            need(&approvals, &spec.require_scan, &at, &mut lacking);
        }
        need(&defaults, &spec.require_scan, &at, &mut lacking);
    }
    for ((location, scanner), (name, by)) in lacking {
        problems.push(DescriptorProblem {
            line: None,
            code: DescriptorCode::ScanMissing,
            location,
            message: format!(
                "`{name}` has no `pass` verdict by scanner `{}` for its current hash, which \
                 `{}.require_scan` requires",
                escape::text(&scanner),
                escape::text(&by)
            ),
        });
    }
    problems
}

/// `skills[0].git`: where a source's keys are written.
fn source_key(location: &str, source: &SkillSource) -> String {
    match source {
        SkillSource::Git(_) => format!("{location}.git"),
        SkillSource::Oci(_) => format!("{location}.oci"),
        SkillSource::Local(_) => format!("{location}.local"),
    }
}

/// The approved entries of `source` (at `location`) and its `require_scan`.
fn source_facts<'d>(source: &'d SkillSource, location: &str) -> (Vec<Approval<'d>>, &'d [String]) {
    let at = source_key(location, source);
    let pins = match source {
        SkillSource::Git(git) => (&git.approved, &git.require_scan),
        SkillSource::Oci(oci) => (&oci.approved, &oci.require_scan),
        SkillSource::Local(local) => {
            let approval = Approval {
                location: at,
                name: &local.name,
                hash: &local.hash,
                scans: &local.scans,
            };
            return (vec![approval], &local.require_scan);
        }
    };
    let approvals = pins
        .0
        .iter()
        .enumerate()
        .map(|(i, pin)| Approval {
            location: format!("{at}.approved[{i}]"),
            name: &pin.name,
            hash: &pin.hash,
            scans: &pin.scans,
        })
        .collect();
    (approvals, pins.1)
}

/// The problems of one source's `require_scan` and recorded verdicts.
fn check_source(
    approvals: &[Approval<'_>],
    required: &[String],
    declared: &BTreeMap<String, ScannerSpec>,
    location: &str,
    source: &SkillSource,
) -> Vec<DescriptorProblem> {
    let mut problems = scanners::check_required(required, declared, &source_key(location, source));
    for approval in approvals {
        problems.extend(scanners::check_scans(
            approval.scans,
            declared,
            &approval.location,
        ));
    }
    problems
}

/// Records, for each of `approvals`, the scanners of `required` (written at `by`) it has no
/// `pass` verdict by for its current hash.
fn need(
    approvals: &[Approval<'_>],
    required: &[String],
    by: &str,
    lacking: &mut BTreeMap<(String, String), (String, String)>,
) {
    for approval in approvals {
        for scanner in scanners::missing(required, approval.scans, approval.hash) {
            lacking
                .entry((approval.location.clone(), scanner.to_owned()))
                .or_insert_with(|| (escape::text(approval.name).to_string(), by.to_owned()));
        }
    }
}
