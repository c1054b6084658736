//! The scanner rules of a descriptor, in one pass over it (docs/scanners.md): the declared
//! `scanners` (`invalid_scanner`), each `require_scan` list (`invalid_scanner` for a name not
//! declared), each recorded verdict (`invalid_scan`), and the policy itself: every bundle a
//! source's or an agent's `require_scan` covers has a `pass` verdict by each required scanner
//! for its current hash (`scan_missing`). An agent's list covers every bundle the agent gets,
//! the defaults included. Static, like every rule of `check`: the verdicts are read, no scanner
//! runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::DescriptorProblem;
use crate::descriptor::code::DescriptorCode;
use crate::descriptor::scanners::{
    self, DEFAULT_SCAN_TIMEOUT_SECONDS, MAX_COMMAND_ARGS, MAX_SCAN_TIMEOUT_SECONDS,
    MAX_SUMMARY_CHARS, ScanSpec, Scanner, ScannerSpec, is_utc_date_time, valid_scanner_name,
};
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
    let mut problems = resolve_scanners(declared, base).err().unwrap_or_default();
    // The bundles each list covers, and the scanners each bundle lacks (one problem per entry
    // and scanner, whoever requires it).
    let mut lacking: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    let mut defaults = Vec::new();
    for (i, source) in descriptor.skills.iter().enumerate() {
        let location = format!("skills[{i}]");
        let approvals = source_problems(source, &location, declared, &mut problems, &mut lacking);
        defaults.extend(approvals);
    }
    for (agent, spec) in &descriptor.agents {
        let at = format!("agents.{agent}");
        problems.extend(check_required(&spec.require_scan, declared, &at));
        for (i, source) in spec.skills.iter().enumerate() {
            let location = format!("{at}.skills[{i}]");
            let approvals =
                source_problems(source, &location, declared, &mut problems, &mut lacking);
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

/// The problems of one source at `location` (its `require_scan`, its verdicts), and the
/// scanners its own `require_scan` finds lacking; its approved entries.
fn source_problems<'d>(
    source: &'d SkillSource,
    location: &str,
    declared: &BTreeMap<String, ScannerSpec>,
    problems: &mut Vec<DescriptorProblem>,
    lacking: &mut BTreeMap<(String, String), (String, String)>,
) -> Vec<Approval<'d>> {
    let (approvals, required) = source_facts(source, location);
    problems.extend(check_source(
        &approvals, required, declared, location, source,
    ));
    need(&approvals, required, &source_key(location, source), lacking);
    approvals
}

/// Every verdict recorded for its entry's current hash, by bundle name and hash, each once (a
/// verdict for another hash is void and left out): what a bill of materials lists beside each
/// bundle. Read from the descriptor as written; no scanner runs.
pub fn current_verdicts(descriptor: &Descriptor) -> BTreeMap<(String, String), Vec<ScanSpec>> {
    let sources = descriptor.skills.iter().chain(
        descriptor
            .agents
            .values()
            .flat_map(|agent| agent.skills.iter()),
    );
    let mut verdicts: BTreeMap<(String, String), Vec<ScanSpec>> = BTreeMap::new();
    for source in sources {
        for approval in source_facts(source, "").0 {
            let listed = verdicts
                .entry((approval.name.to_owned(), approval.hash.to_owned()))
                .or_default();
            for scan in approval.scans.iter().filter(|s| s.hash == approval.hash) {
                if !listed.contains(scan) {
                    listed.push(scan.clone());
                }
            }
        }
    }
    verdicts.retain(|_, list| !list.is_empty());
    verdicts
}

/// `descriptor` without its scan policy: every `require_scan` emptied, every other key as it is
/// (the verdicts are still checked). `update` reviews and rewrites pins under it: a new hash has
/// no verdict yet, which the full `check` then reports (`scan_missing`).
#[cfg(feature = "git")]
pub fn without_scan_policy(descriptor: &Descriptor) -> Descriptor {
    let mut waived = descriptor.clone();
    let sources = waived
        .agents
        .values_mut()
        .flat_map(|agent| {
            agent.require_scan.clear();
            agent.skills.iter_mut()
        })
        .chain(waived.skills.iter_mut());
    for source in sources {
        match source {
            SkillSource::Git(git) => git.require_scan.clear(),
            SkillSource::Oci(oci) => oci.require_scan.clear(),
            SkillSource::Local(local) => local.require_scan.clear(),
        }
    }
    waived
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
    let mut problems = check_required(required, declared, &source_key(location, source));
    for approval in approvals {
        problems.extend(check_scans(approval.scans, declared, &approval.location));
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

/// The declared scanners, checked (`invalid_scanner` for each problem); relative paths resolve
/// against `base`.
pub fn resolve_scanners(
    specs: &BTreeMap<String, ScannerSpec>,
    base: &Path,
) -> Result<BTreeMap<String, Scanner>, Vec<DescriptorProblem>> {
    let mut problems = Vec::new();
    let mut scanners = BTreeMap::new();
    for (name, spec) in specs {
        let at = format!("scanners.{name}");
        let mut refuse = |location: String, message: String| {
            problems.push(DescriptorProblem {
                line: None,
                code: DescriptorCode::InvalidScanner,
                location,
                message,
            })
        };
        if !valid_scanner_name(name) {
            refuse(
                at.clone(),
                "a scanner name is 1-64 characters of `a-z 0-9 _ -`, starting with a letter"
                    .to_owned(),
            );
            continue;
        }
        let Some(program) = spec.command.first() else {
            refuse(
                format!("{at}.command"),
                "the command is empty: name the executable first".to_owned(),
            );
            continue;
        };
        if spec.command.len() > MAX_COMMAND_ARGS {
            refuse(
                format!("{at}.command"),
                format!(
                    "{} arguments, over the bound of {MAX_COMMAND_ARGS}",
                    spec.command.len()
                ),
            );
            continue;
        }
        if let Some((i, _)) = spec
            .command
            .iter()
            .enumerate()
            .find(|(_, a)| a.is_empty() || a.contains('\0'))
        {
            refuse(
                format!("{at}.command[{i}]"),
                "an argument is empty or holds a NUL character".to_owned(),
            );
            continue;
        }
        let timeout = match spec.timeout {
            None => DEFAULT_SCAN_TIMEOUT_SECONDS,
            Some(secs @ 1..=MAX_SCAN_TIMEOUT_SECONDS) => secs,
            Some(other) => {
                refuse(
                    format!("{at}.timeout"),
                    format!("{other} is not between 1 and {MAX_SCAN_TIMEOUT_SECONDS} seconds"),
                );
                continue;
            }
        };
        let program = PathBuf::from(program);
        let program = if program.components().count() > 1 || program.is_absolute() {
            base.join(program)
        } else {
            program
        };
        scanners.insert(
            name.clone(),
            Scanner {
                name: name.clone(),
                program,
                args: spec.command[1..].to_vec(),
                timeout: Duration::from_secs(u64::from(timeout)),
            },
        );
    }
    if problems.is_empty() {
        Ok(scanners)
    } else {
        Err(problems)
    }
}

/// The problems of one approved entry's recorded verdicts (`invalid_scan`): each names a
/// declared scanner, a `sha256:` digest, a 64-hex hash, an RFC 3339 UTC time and a bounded
/// one-line summary; a scanner judges a hash once.
fn check_scans(
    scans: &[ScanSpec],
    declared: &BTreeMap<String, ScannerSpec>,
    location: &str,
) -> Vec<DescriptorProblem> {
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, scan) in scans.iter().enumerate() {
        let at = format!("{location}.scans[{i}]");
        let mut refuse = |key: &str, message: String| {
            problems.push(DescriptorProblem {
                line: None,
                code: DescriptorCode::InvalidScan,
                location: format!("{at}.{key}"),
                message,
            })
        };
        if !declared.contains_key(&scan.scanner) {
            refuse(
                "scanner",
                format!(
                    "`{}` is not a scanner the descriptor declares in `scanners`",
                    escape::text(&scan.scanner)
                ),
            );
        }
        let digest_ok = scan
            .digest
            .strip_prefix("sha256:")
            .is_some_and(|hex| crate::support::hex::decode_lower_32(hex).is_some());
        if !digest_ok {
            refuse(
                "digest",
                format!(
                    "`{}` is not `sha256:` and 64 lowercase hexadecimal digits",
                    escape::text(&scan.digest)
                ),
            );
        }
        if crate::support::hex::decode_lower_32(&scan.hash).is_none() {
            refuse(
                "hash",
                format!(
                    "`{}` is not 64 lowercase hexadecimal digits",
                    escape::text(&scan.hash)
                ),
            );
        } else if !seen.insert((scan.scanner.as_str(), scan.hash.as_str())) {
            refuse(
                "hash",
                "this scanner's verdict on this hash is recorded twice".to_owned(),
            );
        }
        if !is_utc_date_time(&scan.at) {
            refuse(
                "at",
                format!(
                    "`{}` is not an RFC 3339 UTC date-time (`YYYY-MM-DDTHH:MM:SSZ`)",
                    escape::text(&scan.at)
                ),
            );
        }
        let chars = scan.summary.chars().count();
        if chars > MAX_SUMMARY_CHARS
            || scan
                .summary
                .chars()
                .any(|c| c != '\\' && escape::needs_escape(c))
        {
            refuse(
                "summary",
                format!(
                    "the summary is one line of at most {MAX_SUMMARY_CHARS} characters without \
                     control or invisible characters ({chars} characters)"
                ),
            );
        }
    }
    problems
}

/// The problems of a `require_scan` list at `location` (`invalid_scanner`): each name is a
/// declared scanner, named once.
fn check_required(
    required: &[String],
    declared: &BTreeMap<String, ScannerSpec>,
    location: &str,
) -> Vec<DescriptorProblem> {
    let mut problems = Vec::new();
    for (i, name) in required.iter().enumerate() {
        let message = if !declared.contains_key(name) {
            format!(
                "`{}` is not a scanner the descriptor declares in `scanners`",
                escape::text(name)
            )
        } else if required[..i].contains(name) {
            format!("`{name}` is required twice")
        } else {
            continue;
        };
        problems.push(DescriptorProblem {
            line: None,
            code: DescriptorCode::InvalidScanner,
            location: format!("{location}.require_scan[{i}]"),
            message,
        });
    }
    problems
}
