//! What an installed folder holds compared with what it should: the comparison `install` uses to
//! leave an identical bundle alone, and `skillfold verify --installed DIR [--agent NAME]`, the
//! CI gate. Without `--agent` it checks the selection of the agent the folder's record
//! remembers (the defaults for a folder without one); another `--agent` than the record's is
//! refused (`install_agent_mismatch`), as `install` refuses it.
//!
//! `verify --installed` compares the folder with the **descriptor's pins**, not only with the
//! record: each selected bundle `DIR/<name>` is read with the safe reader (no link followed,
//! every bound checked), under its source's limits profile, and verified as `prepare` verifies a
//! bundle (the bundle rules, name, declared version, the `chamvi-skill-bundle-v1` digest). The
//! record says which folders the tool owns and, when it recorded the same pin, which files the
//! bundle had, so a mismatch names each file changed, added or removed (escaped). It reads no
//! corpus and needs no network: its cost is reading the installed bytes once.
//!
//! Statuses: `verified`; `changed` (the bytes differ from the pin, or the folder is a link or a
//! file, or a file's mode is not one `install` writes: writable by group or others, setuid, or
//! — as the record says for this pin — an execute bit other than installed); `missing` (a
//! selected bundle is not there); `unrecorded` (a folder of a selected name that the record does
//! not name: not installed by skillfold); `unexpected` (installed, no longer selected, still
//! there); `unreadable` (an I/O error, exit 1). Folders neither selected
//! nor recorded are listed as `foreign` and ignored; hidden names are ignored.

use std::ffi::CStr;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;
use serde::Serialize;

use super::code::InstallCode;
use super::error::InstallError;
use super::record::{Record, RecordBundle};
use super::{folder, record};
use crate::corpus::manifest::{FileRecord, changed_files, file_records};
use crate::corpus::pin_check::{self, VerifyError};
use crate::descriptor::plan::Plan;
use crate::format::code::ReadCode;
use crate::format::digest::BundleDigest;
use crate::format::limits::Limits;
use crate::format::pin::Pin;
use crate::format::safe_read;
use crate::support::error_code::{ErrorCode, ExitClass};
use crate::support::escape;

/// What a folder at a recorded name holds, judged by its content: what `install` owns is
/// proven by content, not by a record anyone can edit (a record is committed with the folder,
/// so a pull request can plant one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// The verified bundle, byte for byte and mode for mode: nothing to write.
    Same,
    /// What `install` wrote there: the verified bundle's bytes with other modes, or exactly the
    /// files its record entry lists (every path, size and SHA-256), whose digest is the entry's
    /// hash. `install` may replace or remove it.
    Ours,
    /// Neither: edited since, written over by another tool, or never the tool's (a record naming
    /// someone's folder). Never replaced or removed unless asked (`--replace-changed`); each
    /// line says what differs from the record entry, escaped.
    Foreign(Vec<String>),
}

/// Judges the folder at `path`, read with the safe reader under `limits`, against its record
/// entry `recorded` and, for a selected name, the verified files `expected` with their `modes`.
/// An I/O error is an error.
pub fn judge(
    path: &Path,
    limits: Limits,
    recorded: &RecordBundle,
    expected: Option<(&[FileRecord], &[u32])>,
) -> Result<Held, InstallError> {
    let outcome = match safe_read::read_bundle_dir_under(path, limits) {
        Ok(outcome) => outcome,
        Err(e) if e.code() == ReadCode::IoError => {
            return Err(InstallError::io(
                &escape::path(path).to_string(),
                &std::io::Error::other(e.to_string()),
            ));
        }
        Err(e) => return Ok(Held::Foreign(vec![e.to_string()])),
    };
    if outcome.problems.has_errors() {
        let problems = outcome.problems.as_slice().iter();
        return Ok(Held::Foreign(problems.map(ToString::to_string).collect()));
    }
    let now = file_records(&outcome.files);
    if let Some((expected, modes)) = expected
        && changed_files(expected, &now).is_empty()
    {
        for (file, mode) in expected.iter().zip(modes) {
            let found =
                crate::format::untrusted_fs::mode_beneath(path, &file.path).map_err(|e| {
                    InstallError::io(&escape::path(&path.join(&file.path)).to_string(), &e)
                })?;
            if found != *mode {
                return Ok(Held::Ours);
            }
        }
        return Ok(Held::Same);
    }
    let changed = changed_files(&recorded.files, &now);
    if !changed.is_empty() {
        return Ok(Held::Foreign(changed));
    }
    if BundleDigest::of(&outcome.files).to_string() != recorded.hash {
        return Ok(Held::Foreign(vec![format!(
            "the record's hash {} is not the digest of these files",
            escape::text(&recorded.hash)
        )]));
    }
    Ok(Held::Ours)
}

/// The names of `names` that are neither selected nor recorded, nor hidden: folders someone
/// else put there, escaped.
pub fn foreign(names: &[Box<CStr>], selected: &[&str], record: &Record) -> Vec<String> {
    names
        .iter()
        .filter(|n| !n.to_bytes().starts_with(b"."))
        .filter(|n| {
            n.to_str()
                .map_or(true, |t| !selected.contains(&t) && record.get(t).is_none())
        })
        .map(|n| escape::bytes(n.to_bytes()).to_string())
        .collect()
}

/// What `verify --installed` found of one bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstalledStatus {
    /// Its bytes equal its pin.
    Verified,
    /// Its bytes differ from its pin, or it is not a folder.
    Changed,
    /// Selected, not there.
    Missing,
    /// A folder of a selected name the record does not name.
    Unrecorded,
    /// Installed, no longer selected, still there.
    Unexpected,
    /// An I/O error kept it from being read.
    Unreadable,
}

impl InstalledStatus {
    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            InstalledStatus::Verified => "verified",
            InstalledStatus::Changed => "changed",
            InstalledStatus::Missing => "missing",
            InstalledStatus::Unrecorded => "unrecorded",
            InstalledStatus::Unexpected => "unexpected",
            InstalledStatus::Unreadable => "unreadable",
        }
    }
}

/// One bundle of the report.
#[derive(Debug, Clone, Serialize)]
pub struct InstalledBundle {
    /// Its name.
    pub name: String,
    /// The pinned version (the recorded one for `unexpected`).
    pub version: String,
    /// The pinned hash (the recorded one for `unexpected`).
    pub hash: String,
    /// See [`InstalledStatus`].
    pub status: InstalledStatus,
    /// Why it does not hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stable code of the failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// Each file changed, added or removed, or each rule broken (escaped).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// The bundle problems behind the rules broken, with their places (`--format sarif`).
    #[serde(skip)]
    pub found: Vec<crate::format::problem::Problem>,
}

/// The outcome of `verify --installed` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct InstalledReport {
    /// The folder checked.
    pub directory: PathBuf,
    /// The agent (`null`: the defaults alone).
    pub agent: Option<String>,
    /// Every selected bundle, then every unexpected one, by name.
    pub bundles: Vec<InstalledBundle>,
    /// Folders neither selected nor installed by skillfold (ignored), escaped.
    pub foreign: Vec<String>,
}

impl InstalledReport {
    /// The code of every failure (what the exit status is taken from).
    pub fn failures(&self) -> impl Iterator<Item = ErrorCode> + '_ {
        self.bundles.iter().filter_map(|b| b.code)
    }
}

/// Checks that `dir` holds exactly the selection of `plan` for the agent `agent` settles with
/// the folder's record ([`super::agent_for`]: the recorded agent without `--agent`), each bundle
/// equal to its pin.
pub fn verify_installed(
    plan: &Plan,
    agent: Option<&str>,
    dir: &Path,
) -> Result<InstalledReport, InstallError> {
    let target = folder::open_target(dir, false)?;
    let record = match &target {
        Some(target) => record::read(&target.fd, &target.shown)?.map(|(r, _)| r),
        None => None,
    };
    let request = super::AgentRequest {
        agent,
        switch: false,
    };
    let shown_dir = escape::path(dir).to_string();
    let agent = super::agent_for(request, record.as_ref(), &shown_dir, "verify")?;
    let mut wanted: Vec<(&Pin, Limits)> = Vec::new();
    for source in super::selection::selection(plan, agent.as_deref())? {
        let limits = source_limits(source);
        for pin in source.pins() {
            if !wanted.iter().any(|(p, _)| p.name == pin.name) {
                wanted.push((pin, limits));
            }
        }
    }
    wanted.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let mut report = InstalledReport {
        directory: dir.to_owned(),
        agent,
        bundles: Vec::new(),
        foreign: Vec::new(),
    };
    let Some(target) = target else {
        for (pin, _) in &wanted {
            report.bundles.push(outcome(
                pin,
                InstalledStatus::Missing,
                Some(format!("`{shown_dir}` does not exist")),
            ));
        }
        return Ok(report);
    };
    let record = record.unwrap_or_default();
    for (pin, limits) in &wanted {
        report
            .bundles
            .push(check_one(&target, dir, pin, *limits, &record));
    }
    let selected: Vec<&str> = wanted.iter().map(|(p, _)| p.name.as_str()).collect();
    for gone in record
        .bundles
        .iter()
        .filter(|b| !selected.contains(&b.name.as_str()))
    {
        if folder::kind_of(&target, &gone.name)?.is_some() {
            let mut b = outcome_of(
                &gone.name,
                &gone.version,
                &gone.hash,
                InstalledStatus::Unexpected,
                None,
            );
            // Said, never advised: what removes it is the operator's decision.
            b.error = Some(format!(
                "`{}/{}` was installed but is not in the selection of {}",
                target.shown,
                gone.name,
                super::agent_shown(report.agent.as_deref())
            ));
            report.bundles.push(b);
        }
    }
    report.foreign = foreign(&folder::names(&target)?, &selected, &record);
    Ok(report)
}

fn source_limits(source: &crate::descriptor::plan::Source) -> Limits {
    use crate::descriptor::plan::Source;
    match source {
        Source::Git(g) => g.limits,
        Source::Oci(o) => o.limits,
        Source::Local(l) => l.limits,
    }
}

/// One selected bundle of the folder against its pin.
fn check_one(
    target: &folder::Target,
    dir: &Path,
    pin: &Pin,
    limits: Limits,
    record: &Record,
) -> InstalledBundle {
    let name = pin.name.as_str();
    let shown = format!("{}/{name}", target.shown);
    match folder::kind_of(target, name) {
        Ok(None) => {
            return outcome(
                pin,
                InstalledStatus::Missing,
                Some(format!("`{shown}` is missing")),
            );
        }
        Ok(Some(FileType::Directory)) => {}
        Ok(Some(_)) => {
            return outcome(
                pin,
                InstalledStatus::Changed,
                Some(format!(
                    "`{shown}` is not a folder (a link or a file; never followed)"
                )),
            );
        }
        Err(e) => return failed(pin, InstalledStatus::Unreadable, e),
    }
    let Some(recorded) = record.get(name) else {
        return outcome(
            pin,
            InstalledStatus::Unrecorded,
            Some(format!(
                "`{shown}` was not installed by skillfold (the record does not name it)"
            )),
        );
    };
    // The record's files name what changed only when it recorded this same pin.
    let files = (recorded.hash == pin.hash.to_string()).then_some(recorded.files.as_slice());
    // What the record says of each file's execute bit holds for this pin's files, when it says.
    let executable =
        (files.is_some() && record.records_modes()).then_some(recorded.files.as_slice());
    match pin_check::verify_dir(&dir.join(name), pin, limits, files) {
        Ok(bundle) => match mode_drift(&dir.join(name), &bundle, executable) {
            Ok(drift) if drift.is_empty() => outcome(pin, InstalledStatus::Verified, None),
            Ok(drift) => {
                let mut b = outcome(
                    pin,
                    InstalledStatus::Changed,
                    Some(format!(
                        "`{shown}` holds the pinned bytes, but file modes are not those `install` writes"
                    )),
                );
                b.details = drift;
                b
            }
            Err(e) => failed(pin, InstalledStatus::Unreadable, e),
        },
        Err(e) => {
            let status = if e.code().exit() == ExitClass::Retryable {
                InstalledStatus::Unreadable
            } else {
                InstalledStatus::Changed
            };
            let (error, details) = match &e {
                // Said for an installed copy (the message of `DigestMismatch` speaks of a
                // publication); each file changed, added or removed since the install (as the
                // record lists them) is a detail line.
                VerifyError::DigestMismatch(m) => (
                    format!(
                        "`{shown}` has digest {}, but the pin is {}",
                        m.actual, m.expected
                    ),
                    m.changed.clone(),
                ),
                other => (other.to_string(), other.problem_lines()),
            };
            let mut b = outcome(pin, status, Some(error));
            if status == InstalledStatus::Unreadable {
                b.code = Some(e.code());
            }
            b.details = details;
            b.found = e.problems().to_vec();
            b
        }
    }
}

/// The files of the verified copy at `path` whose mode is not one `install` writes: writable by
/// group or others, setuid, setgid or sticky — or, where the record says (`executable`, the
/// files of this pin), with an execute bit other than recorded. One line each, escaped.
fn mode_drift(
    path: &Path,
    bundle: &crate::format::bundle::Bundle,
    executable: Option<&[FileRecord]>,
) -> Result<Vec<String>, InstallError> {
    let mut drift = Vec::new();
    for (file, _) in bundle.files().iter() {
        let file = file.as_str();
        let mode = crate::format::untrusted_fs::mode_beneath(path, file)
            .map_err(|e| InstallError::io(&escape::path(&path.join(file)).to_string(), &e))?;
        let expected = executable.and_then(|r| r.iter().find(|f| f.path == file));
        let why = if mode & 0o7000 != 0 {
            Some("setuid, setgid or sticky")
        } else if mode & 0o022 != 0 {
            Some("writable by group or others")
        } else {
            match expected.map(|f| f.executable) {
                Some(true) if mode & 0o100 == 0 => Some("expected executable"),
                Some(false) if mode & 0o111 != 0 => Some("expected not executable"),
                _ => None,
            }
        };
        if let Some(why) = why {
            drift.push(format!("{} (mode {mode:o}, {why})", escape::text(file)));
        }
    }
    Ok(drift)
}

fn outcome(pin: &Pin, status: InstalledStatus, error: Option<String>) -> InstalledBundle {
    outcome_of(
        pin.name.as_str(),
        pin.version.as_str(),
        &pin.hash.to_string(),
        status,
        error,
    )
}

fn outcome_of(
    name: &str,
    version: &str,
    hash: &str,
    status: InstalledStatus,
    error: Option<String>,
) -> InstalledBundle {
    let code =
        (status != InstalledStatus::Verified).then(|| ErrorCode::from(InstallCode::InstalledDrift));
    InstalledBundle {
        name: name.to_owned(),
        version: version.to_owned(),
        hash: hash.to_owned(),
        status,
        error,
        code,
        details: Vec::new(),
        found: Vec::new(),
    }
}

fn failed(pin: &Pin, status: InstalledStatus, e: InstallError) -> InstalledBundle {
    let mut b = outcome(pin, status, Some(e.message));
    b.code = Some(e.code);
    b
}
