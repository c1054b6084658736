//! `skillfold install --into DIR [--agent NAME]`: the agent's effective selection written into
//! the folder an agent reads (`.claude/skills/`, `.agents/skills/`), as `DIR/<name>/…`, from the
//! verified corpus — and `verify --installed`, the check that the folder still holds exactly
//! that ([`installed`]).
//!
//! The steps, in order (each its own function below):
//!
//! 1. **Select**: the agent first: the folder remembers the agent it was installed for (its
//!    record), and without `--agent` that is the one taken; another one than the record's is
//!    refused unless `--switch-agent` asks for it ([`agent_for`]), since installing another
//!    selection removes the recorded one's extras. Then the sources that agent sees, through
//!    the plan's one API for it ([`Plan::source_indices`]); an agent the descriptor does not
//!    name is refused.
//! 2. **Prepare**: those sources go through `prepare` itself ([`prepare::prepare`], every check
//!    of it): a corpus that is missing or not at its pin is fetched and published; one at its
//!    pin is only verified (no network); a local source is verified in place. Any failure stops
//!    the install before the folder is touched.
//! 3. **Load**: the selection is loaded as verified snapshots (the digest of every bundle is
//!    recomputed from the bytes and compared with the descriptor's pin) and built into the
//!    agent's catalogue, which refuses two bundles of one name and more than 16. What is
//!    written is those verified bytes, each file's mode taken from the file they were read from
//!    (permission bits without group or other write, never setuid): for a Git or OCI source the
//!    corpus's, where `prepare` gave an executable file (`100755` in the pinned tree, an execute
//!    bit in the pinned layer) `0555` and any other `0444`; for a local source its own.
//! 4. **Plan** ([`folder`], [`record`]): the folder is opened (or created) without following a
//!    link, locked, its record read as untrusted input, and each selected name looked at: absent
//!    (install), recorded and identical — bytes, paths and modes (unchanged), recorded and
//!    different (replace), or anything not recorded: a conflict. Conflicts are reported together
//!    and nothing is changed.
//! 5. **Apply**: leftovers of an interrupted run are removed; when new names are installed, a
//!    record claiming them is written first (so a crash never leaves a folder it wrote
//!    unowned); each bundle is staged and swapped in atomically; bundles recorded but no longer
//!    selected are removed; the record is written last, and only when it changes. A second run
//!    with nothing changed writes nothing at all.

pub mod code;
mod error;
pub mod folder;
pub mod installed;
pub mod record;
mod selection;

pub use error::InstallError;
pub use selection::{AgentRequest, agent_for, agent_shown, selection};

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;
use serde::Serialize;

use crate::corpus::manifest::FileRecord;
use crate::descriptor::plan::Plan;
use crate::ops::prepare;
use crate::runtime::Runtime;
use crate::runtime::snapshot::Snapshot;
use crate::support::escape;
use code::InstallCode;
use folder::{StagedFile, Target};
use installed::Held;
use record::{Record, RecordBundle, RecordSource};

/// What `install` did with one bundle. Each command reports its own statuses, all spelled in
/// kebab-case in `--json` (docs/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstallStatus {
    /// Written where no bundle of its name was installed.
    Installed,
    /// Written in place of the installed bundle of another pin ([`InstallEntry::previous_hash`]).
    Updated,
    /// Written again over its own pin's folder, which had drifted (a file changed, missing or
    /// of another mode) or been removed.
    Repaired,
    /// Already there, byte for byte and mode for mode: nothing written.
    Unchanged,
    /// Installed before, no longer selected: removed.
    Removed,
}

impl InstallStatus {
    /// The spelling of the report.
    pub fn as_str(self) -> &'static str {
        match self {
            InstallStatus::Installed => "installed",
            InstallStatus::Updated => "updated",
            InstallStatus::Repaired => "repaired",
            InstallStatus::Unchanged => "unchanged",
            InstallStatus::Removed => "removed",
        }
    }
}

/// One bundle of the report.
#[derive(Debug, Clone, Serialize)]
pub struct InstallEntry {
    /// Its name (`DIR/<name>`).
    pub name: String,
    /// The version installed (or removed).
    pub version: String,
    /// The hash installed (or removed).
    pub hash: String,
    /// `installed`, `updated`, `repaired`, `unchanged` or `removed`.
    pub status: InstallStatus,
    /// For `updated`: the version it replaced (`null` otherwise).
    pub previous_version: Option<String>,
    /// For `updated`: the hash it replaced (`null` otherwise).
    pub previous_hash: Option<String>,
}

/// The outcome of `install` (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    /// The target folder.
    pub directory: PathBuf,
    /// The agent (`null`: the defaults alone).
    pub agent: Option<String>,
    /// One entry per bundle, by name.
    pub bundles: Vec<InstallEntry>,
    /// Folders in the target that skillfold did not install (left alone), escaped.
    pub foreign: Vec<String>,
    /// Whether the record was written.
    pub record_written: bool,
}

/// One verified bundle to install: its snapshot and, per file, its record and mode.
struct Verified {
    snapshot: std::sync::Arc<Snapshot>,
    files: Vec<FileRecord>,
    modes: Vec<u32>,
}

/// Installs the selection of `plan` for the agent `request` settles ([`agent_for`]: the
/// folder's recorded agent unless another is asked for explicitly) into `dir` (see the module
/// doc); `replace_changed` (`--replace-changed`) lets it replace or remove a recorded folder
/// whose content changed since it was installed.
pub fn install(
    plan: &Plan,
    request: AgentRequest<'_>,
    replace_changed: bool,
    dir: &Path,
    options: &prepare::Options<'_>,
) -> Result<InstallReport, InstallError> {
    let shown_dir = escape::path(dir).to_string();
    let recorded = match folder::open_target(dir, false)? {
        Some(target) => record::read(&target.fd, &target.shown)?.map(|(r, _)| r),
        None => None,
    };
    let agent = agent_for(request, recorded.as_ref(), &shown_dir, "install")?;
    let agent = agent.as_deref();
    let sources = selection(plan, agent).map_err(|e| from_record(e, request, &shown_dir))?;
    let selected = Plan {
        defaults: (0..sources.len()).collect(),
        sources: sources.into_iter().cloned().collect(),
        max_skills: plan.max_skills,
        ..Plan::default()
    };
    prepare_selection(&selected, options)?;
    let verified = load_selection(selected)?;
    let target = folder::open_target(dir, true)?.ok_or_else(|| {
        InstallError::new(
            InstallCode::InstallTargetUnsafe,
            "the target folder could not be created",
        )
    })?;
    folder::lock(&target)?;
    let before = record::read(&target.fd, &target.shown)?;
    // The record read before preparing settled the agent; one written since must agree.
    if agent_for(
        request,
        before.as_ref().map(|(r, _)| r),
        &target.shown,
        "install",
    )?
    .as_deref()
        != agent
    {
        return Err(InstallError::new(
            InstallCode::InstallIo,
            format!(
                "the record of `{}` changed while the selection was prepared; run again",
                target.shown
            ),
        ));
    }
    let (old, old_bytes) = before.map_or((Record::default(), None), |(r, b)| (r, Some(b)));
    let plan = plan_changes(&target, dir, &verified, &old, replace_changed)?;
    let record_written = apply(&target, agent, &verified, &old, old_bytes.as_deref(), &plan)?;
    Ok(InstallReport {
        directory: dir.to_owned(),
        agent: agent.map(str::to_owned),
        bundles: plan.entries,
        foreign: plan.foreign,
        record_written,
    })
}

/// An unknown agent that the record named (not `--agent`): said so, with the way out.
fn from_record(mut e: InstallError, request: AgentRequest<'_>, shown_dir: &str) -> InstallError {
    if request.agent.is_none() && !request.switch {
        e.details.push(format!(
            "the agent is the one the record `{shown_dir}/{}` remembers; to install another selection, pass `--agent NAME --switch-agent` (or `--switch-agent` alone for the defaults)",
            record::RECORD_NAME
        ));
    }
    e
}

/// Step 2: `prepare` on the selection; any failure stops the install.
fn prepare_selection(selected: &Plan, options: &prepare::Options<'_>) -> Result<(), InstallError> {
    let report = prepare::prepare(selected, options);
    let failures: Vec<_> = report
        .sources
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| (s, e)))
        .collect();
    let Some(worst) = failures
        .iter()
        .map(|(_, e)| e.code)
        .max_by_key(|c| c.exit())
    else {
        return Ok(());
    };
    let mut error = InstallError::new(
        worst,
        "the selection could not be prepared; nothing was installed",
    );
    for (source, failure) in failures {
        error.details.push(format!(
            "{}: {} [{}]",
            source.origin.location, failure.message, failure.code
        ));
        error
            .details
            .extend(failure.details.iter().map(|d| format!("  {d}")));
    }
    Err(error)
}

/// Step 3: the selection as verified snapshots, through the agent's catalogue.
fn load_selection(selected: Plan) -> Result<Vec<Verified>, InstallError> {
    let runtime = Runtime::load(selected);
    let failures: Vec<_> = runtime.failures().collect();
    if let Some(first) = failures.first() {
        let worst = failures
            .iter()
            .map(|f| f.code)
            .max_by_key(|c| c.exit())
            .unwrap_or(first.code);
        let mut error = InstallError::new(
            worst,
            "a selected bundle does not verify; nothing was installed",
        );
        for f in &failures {
            error.details.push(f.to_string());
            error
                .details
                .extend(f.details.iter().map(|d| format!("  {d}")));
        }
        return Err(error);
    }
    let catalogue = runtime
        .catalogue(None)
        .map_err(|e| InstallError::new(e.code(), e.to_string()))?;
    catalogue.skills().map(verified).collect()
}

/// A snapshot's files: their records, and their modes read from where they were verified.
fn verified(snapshot: &std::sync::Arc<Snapshot>) -> Result<Verified, InstallError> {
    let mut files = Vec::new();
    let mut modes = Vec::new();
    for file in snapshot.files() {
        let mode = snapshot.mode(file).map_err(|e| {
            let dir = snapshot.dir().map(escape::path);
            let shown = dir.map_or_else(String::new, |d| format!("{d}/"));
            InstallError::io(&format!("{shown}{}", escape::text(file.path())), &e)
        })?;
        let mode = mode & 0o755;
        files.push(FileRecord {
            path: file.path().to_owned(),
            size: file.size(),
            sha256: file.sha256().to_owned(),
            executable: mode & 0o111 != 0,
        });
        modes.push(mode);
    }
    Ok(Verified {
        snapshot: std::sync::Arc::clone(snapshot),
        files,
        modes,
    })
}

/// What to do with one selected bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// `DIR/<name>` is absent: rename the staged copy in.
    Install,
    /// `DIR/<name>` is ours and differs: exchange it with the staged copy.
    Replace,
    /// `DIR/<name>` is ours and identical.
    Keep,
}

/// The changes an install makes, found before any is made.
struct Changes {
    /// Per verified bundle, in the same order.
    actions: Vec<Action>,
    /// Recorded bundles no longer selected whose folder is still there.
    removals: Vec<RecordBundle>,
    /// Leftovers of an interrupted run (the tool's own names).
    leftovers: Vec<Box<std::ffi::CStr>>,
    /// The report's bundles.
    entries: Vec<InstallEntry>,
    /// Folders skillfold did not install, escaped.
    foreign: Vec<String>,
}

/// Step 4: every selected name looked at, and every recorded one no longer selected; conflicts
/// refused together, nothing changed. A recorded folder is the tool's to replace or remove only
/// when its content proves it ([`installed::judge`]); `replace_changed` takes a changed one too.
fn plan_changes(
    target: &Target,
    dir: &Path,
    verified: &[Verified],
    old: &Record,
    replace_changed: bool,
) -> Result<Changes, InstallError> {
    let mut actions = Vec::new();
    let mut conflicts = Conflicts::default();
    let mut entries = Vec::new();
    for bundle in verified {
        let pin = bundle.snapshot.pin();
        let name = pin.name.as_str();
        let kind = folder::kind_of(target, name)?;
        let action = match (kind, old.get(name)) {
            (None, _) => Action::Install,
            (Some(FileType::Directory), Some(recorded)) => {
                let expected = Some((bundle.files.as_slice(), bundle.modes.as_slice()));
                let limits = bundle.snapshot.limits();
                match installed::judge(&dir.join(name), limits, recorded, expected)? {
                    Held::Same => Action::Keep,
                    Held::Ours => Action::Replace,
                    Held::Foreign(_) if replace_changed => Action::Replace,
                    Held::Foreign(why) => {
                        conflicts.changed(&target.shown, name, &why);
                        continue;
                    }
                }
            }
            (Some(FileType::Directory), None) => {
                conflicts.lines.push(format!(
                    "`{}/{name}`: a folder skillfold did not install (the record does not name it)",
                    target.shown
                ));
                continue;
            }
            (Some(_), _) => {
                conflicts.lines.push(format!(
                    "`{}/{name}`: not a folder (a link or a file; never followed)",
                    target.shown
                ));
                continue;
            }
        };
        actions.push(action);
        let hash = pin.hash.to_string();
        let recorded = old.get(name);
        // What the run does to the name, as the report says it: a pin that replaces another is
        // an update, the same pin written again a repair.
        let (status, previous) = match (action, recorded) {
            (Action::Keep, _) => (InstallStatus::Unchanged, None),
            (_, Some(r)) if r.hash != hash && kind.is_some() => (InstallStatus::Updated, Some(r)),
            (_, Some(r)) if r.hash == hash => (InstallStatus::Repaired, None),
            _ => (InstallStatus::Installed, None),
        };
        entries.push(InstallEntry {
            name: name.to_owned(),
            version: pin.version.as_str().to_owned(),
            hash,
            status,
            previous_version: previous.map(|r| r.version.clone()),
            previous_hash: previous.map(|r| r.hash.clone()),
        });
    }
    let selected: Vec<&str> = verified
        .iter()
        .map(|v| v.snapshot.pin().name.as_str())
        .collect();
    let removals = removals(
        target,
        dir,
        &selected,
        old,
        replace_changed,
        &mut conflicts,
        &mut entries,
    )?;
    conflicts.refuse(&target.shown)?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let names = folder::names(target)?;
    let leftovers = names
        .iter()
        .filter(|n| folder::is_own(n))
        .cloned()
        .collect();
    let foreign = installed::foreign(&names, &selected, old);
    Ok(Changes {
        actions,
        removals,
        leftovers,
        entries,
        foreign,
    })
}

/// The folders `install` will not touch, found while planning.
#[derive(Default)]
struct Conflicts {
    /// One line each, escaped.
    lines: Vec<String>,
    /// Whether one of them is a recorded folder that changed (what `--replace-changed` takes).
    changed: bool,
}

impl Conflicts {
    /// The recorded folder `name` whose content is not what was installed: `why`, the first
    /// few differences.
    fn changed(&mut self, shown: &str, name: &str, why: &[String]) {
        const SHOWN: usize = 4;
        let mut said = why
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if why.len() > SHOWN {
            said.push_str(&format!(", and {} more", why.len() - SHOWN));
        }
        self.lines.push(format!(
            "`{shown}/{name}`: recorded, but its files are not what skillfold installed there ({said}): edited since, or written by another tool"
        ));
        self.changed = true;
    }

    /// The refusal, when there is anything to refuse.
    fn refuse(self, shown: &str) -> Result<(), InstallError> {
        if self.lines.is_empty() {
            return Ok(());
        }
        let option = if self.changed {
            "; to overwrite (or remove) the changed ones with what is pinned, losing what they hold, pass `--replace-changed`"
        } else {
            ""
        };
        let mut error = InstallError::new(
            InstallCode::InstallConflict,
            format!(
                "{} folder(s) in `{shown}` are not what skillfold installed; nothing was changed: move or remove them, then run again{option}",
                self.lines.len(),
            ),
        );
        error.details = self.lines;
        Err(error)
    }
}

/// The recorded bundles no longer selected whose folder is still there and holds what was
/// installed (each added to `entries` as `removed`). Only a folder is the tool's to remove; a
/// link or a file put at a recorded name since is left alone; a folder whose content changed is
/// a conflict (unless `replace_changed`).
fn removals(
    target: &Target,
    dir: &Path,
    selected: &[&str],
    old: &Record,
    replace_changed: bool,
    conflicts: &mut Conflicts,
    entries: &mut Vec<InstallEntry>,
) -> Result<Vec<RecordBundle>, InstallError> {
    let mut removals = Vec::new();
    for gone in old
        .bundles
        .iter()
        .filter(|b| !selected.contains(&b.name.as_str()))
    {
        if folder::kind_of(target, &gone.name)? != Some(FileType::Directory) {
            continue;
        }
        // Its profile is no longer known: read under the hard ceiling (a record entry naming
        // a larger folder cannot match it).
        let path = dir.join(&gone.name);
        match installed::judge(&path, crate::format::limits::CEILING, gone, None)? {
            Held::Foreign(why) if !replace_changed => {
                conflicts.changed(&target.shown, &gone.name, &why);
                continue;
            }
            _ => {}
        }
        entries.push(InstallEntry {
            name: gone.name.clone(),
            version: gone.version.clone(),
            hash: gone.hash.clone(),
            status: InstallStatus::Removed,
            previous_version: None,
            previous_hash: None,
        });
        removals.push(gone.clone());
    }
    Ok(removals)
}

/// The record entry of a verified bundle.
fn record_entry(bundle: &Verified) -> RecordBundle {
    let pin = bundle.snapshot.pin();
    let origin = bundle.snapshot.origin();
    RecordBundle {
        name: pin.name.to_string(),
        version: pin.version.as_str().to_owned(),
        hash: pin.hash.to_string(),
        source: RecordSource {
            kind: origin.kind.as_str().to_owned(),
            location: origin.location.clone(),
            url: origin.url.clone(),
            commit: origin.commit.clone(),
        },
        files: bundle.files.clone(),
    }
}

/// Step 5: leftovers, the claim, each bundle, the removals, the record.
fn apply(
    target: &Target,
    agent: Option<&str>,
    verified: &[Verified],
    old: &Record,
    old_bytes: Option<&[u8]>,
    changes: &Changes,
) -> Result<bool, InstallError> {
    if !changes.leftovers.is_empty() {
        folder::remove_leftovers(target, &changes.leftovers)?;
    }
    let claimed: Vec<RecordBundle> = verified
        .iter()
        .zip(&changes.actions)
        .filter(|(v, a)| {
            **a == Action::Install && old.get(v.snapshot.pin().name.as_str()).is_none()
        })
        .map(|(v, _)| record_entry(v))
        .collect();
    let mut written = false;
    if !claimed.is_empty() {
        let claim = Record::new(agent, old.bundles.iter().cloned().chain(claimed).collect());
        written |= record::write(&target.fd, &target.shown, &claim, old_bytes)?;
    }
    let changed: Vec<(&Verified, &Action)> = verified
        .iter()
        .zip(&changes.actions)
        .filter(|(_, action)| **action != Action::Keep)
        .collect();
    // Every changed bundle is staged, then all of them are synced at once, then swapped in.
    for (done, (bundle, _)) in changed.iter().enumerate() {
        if let Err(e) = stage_bundle(target, bundle) {
            for (staged, _) in &changed[..done] {
                folder::unstage(target, staged.snapshot.pin().name.as_str());
            }
            return Err(e);
        }
    }
    if !changed.is_empty() {
        folder::sync_staged(target)?;
    }
    for (bundle, action) in &changed {
        let name = bundle.snapshot.pin().name.as_str();
        folder::swap_in(target, name, **action == Action::Replace)?;
        crate::support::failpoint::hit("install-between-bundles");
    }
    for gone in &changes.removals {
        folder::remove(target, &gone.name)?;
    }
    if !changed.is_empty() || !changes.removals.is_empty() {
        folder::sync_folder(target)?;
    }
    let record = Record::new(agent, verified.iter().map(record_entry).collect());
    let current = if written { None } else { old_bytes };
    written |= record::write(&target.fd, &target.shown, &record, current)?;
    Ok(written)
}

/// Writes the verified bytes of `bundle`, with their modes, into its staging folder.
fn stage_bundle(target: &Target, bundle: &Verified) -> Result<(), InstallError> {
    let name = bundle.snapshot.pin().name.as_str();
    let bytes: Vec<Cow<'_, [u8]>> = bundle
        .snapshot
        .files()
        .iter()
        .map(|f| bundle.snapshot.read(f))
        .collect::<Result<_, _>>()
        .map_err(|e| InstallError::new(e.code(), e.to_string()))?;
    let files: Vec<StagedFile<'_>> = bundle
        .files
        .iter()
        .zip(&bytes)
        .zip(&bundle.modes)
        .map(|((record, bytes), mode)| StagedFile {
            path: &record.path,
            bytes,
            mode: *mode,
        })
        .collect();
    folder::stage(target, name, &files)
}
