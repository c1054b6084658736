//! Lock entries to pins, in two steps: [`plan`] finds each entry's commit (a moving ref resolved
//! once from the server's ref listing), [`fetch`] fetches each repository and commit once and
//! takes the bundles exactly as `skillfold pin` does ([`crate::ops::pin`]), then compares the
//! content hash each lock recorded with the bundle fetched.

use std::collections::HashMap;

use crate::descriptor::plan::check_branch;
use crate::format::limits::Limits;
use crate::format::pin::CommitId;
use crate::format::root_path::RootPath;
use crate::format::skill_name::SkillName;
use crate::ops::pin::{self, PinError, PinPolicy, PinnedBundle, Stop};
use crate::source::git::refs::{self, RefQuery};
use crate::support::error_code::ErrorCode;
use crate::support::escape;

use super::code::ImportCode;
use super::entry::{At, Folder, LeftOut, LockEntry, Recorded, SEARCHED_ROOTS, shown};
use super::hashes;

/// A lock entry resolved to a pin.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The entry's name in the lock, escaped for display.
    pub key: String,
    /// The repository URL.
    pub url: String,
    /// The commit.
    pub commit: CommitId,
    /// The ref the commit came from: the lock's name for it and the full name the server
    /// listed (`refs/heads/main`), or the lock's name beside a commit it pinned; escaped.
    pub from_ref: Option<String>,
    /// The root holding the bundle's folder.
    pub root: Option<RootPath>,
    /// The bundle.
    pub bundle: PinnedBundle,
    /// The version the lock records, if any (unchecked text).
    pub lock_version: Option<String>,
    /// The lock's content hash differs from the bundle's: the field, what the lock says and
    /// what the bundle gives (escaped).
    pub mismatch: Option<String>,
    /// The lock's content hash could not be compared, and why.
    pub uncompared: Option<String>,
}

/// The refs resolved so far, by repository URL and ref (`None` for the remote's `HEAD`): each
/// is looked up once per run, so entries following one branch get one commit even when the
/// branch moves while `import` runs.
pub type RefCache =
    HashMap<(String, Option<String>), Result<(CommitId, String), (ErrorCode, String)>>;

/// A lock entry whose commit is known: what is left to fetch.
#[derive(Debug, Clone)]
pub struct Planned {
    entry: LockEntry,
    commit: CommitId,
    from_ref: Option<String>,
    sought: pin::Sought,
}

/// The commit of `entry` (a moving ref looked up once per run, in `refs`) and where its bundle
/// is looked for.
pub fn plan(entry: LockEntry, stop: Stop<'_>, refs: &mut RefCache) -> Result<Planned, LeftOut> {
    let left_out = |code: ErrorCode, reason: String| LeftOut {
        key: entry.key.clone(),
        code,
        reason,
    };
    let sought = candidates(&entry.folder)
        .map_err(|reason| left_out(ImportCode::LockInvalidEntry.into(), reason))?;
    let (commit, from_ref) = match &entry.at {
        At::Commit(commit, named) => (
            commit.clone(),
            named
                .as_ref()
                .map(|n| format!("the lock's ref `{}`", shown(n))),
        ),
        At::Ref(name) => {
            // A name no server lists (a control character, `..`, a space) is the lock's error,
            // told before any connection, not a fetch that fails.
            check_branch(name).map_err(|why| {
                left_out(
                    ImportCode::LockInvalidEntry.into(),
                    format!(
                        "the ref `{}` is not a branch or tag name: {why}",
                        shown(name)
                    ),
                )
            })?;
            cached(refs, &entry.url, Some(name), stop)
                .map(|(c, full)| (c, Some(format!("`{}` ({full})", shown(name)))))
                .map_err(|(code, reason)| left_out(code, reason))?
        }
        At::Head => cached(refs, &entry.url, None, stop)
            .map(|(c, full)| (c, Some(format!("the remote's `HEAD` ({full})"))))
            .map_err(|(code, reason)| left_out(code, reason))?,
    };
    Ok(Planned {
        entry,
        commit,
        from_ref,
        sought,
    })
}

/// Fetches the bundles of `planned`, one fetch per repository and commit (as `pin` fetches),
/// and compares each lock's recorded hash: each entry resolved or left out, in the order given
/// within each fetch.
pub fn fetch(planned: Vec<Planned>, stop: Stop<'_>) -> Vec<Result<Resolved, LeftOut>> {
    let mut groups: Vec<Vec<Planned>> = Vec::new();
    for p in planned {
        match groups
            .iter_mut()
            .find(|g| g[0].entry.url == p.entry.url && g[0].commit == p.commit)
        {
            Some(group) => group.push(p),
            None => groups.push(vec![p]),
        }
    }
    let policy = PinPolicy {
        limits: Limits::default(),
        trust: None,
        links: crate::descriptor::Links::Refuse,
    };
    let mut out = Vec::new();
    for group in groups {
        let sought: Vec<pin::Sought> = group.iter().map(|p| p.sought.clone()).collect();
        match pin::pin_each(&group[0].entry.url, &group[0].commit, &sought, policy, stop) {
            Ok(found) => out.extend(group.into_iter().zip(found).map(|(p, f)| resolved(p, f))),
            Err(e) => out.extend(group.into_iter().map(|p| Err(left_out(&p, &e)))),
        }
    }
    out
}

/// The entry `p` left out for `e`.
fn left_out(p: &Planned, e: &PinError) -> LeftOut {
    LeftOut {
        key: p.entry.key.clone(),
        code: e.code(),
        reason: refusal(e),
    }
}

/// `p` with what its fetch found.
fn resolved(p: Planned, found: Result<pin::Found, PinError>) -> Result<Resolved, LeftOut> {
    let found = found.map_err(|e| left_out(&p, &e))?;
    let (mismatch, uncompared) = match &p.entry.recorded {
        None => (None, None),
        Some(recorded) => compare(recorded, &found),
    };
    Ok(Resolved {
        key: p.entry.key,
        url: p.entry.url,
        commit: p.commit,
        from_ref: p.from_ref,
        root: found.root,
        bundle: PinnedBundle::from(&found.bundle),
        lock_version: p.entry.version,
        mismatch,
        uncompared,
    })
}

/// The roots to look under and the skill name, from where the lock says the bundle is.
fn candidates(folder: &Folder) -> Result<pin::Sought, String> {
    match folder {
        Folder::Path(path) => {
            let (root, last) = match path.rsplit_once('/') {
                Some((root, last)) => (Some(root), last),
                None => (None, path.as_str()),
            };
            let name = SkillName::parse(last).map_err(|e| {
                format!(
                    "the folder `{}` is not named after a skill: {e}",
                    shown(path)
                )
            })?;
            let root = root
                .map(RootPath::parse)
                .transpose()
                .map_err(|e| format!("the folder `{}`: {e}", shown(path)))?;
            Ok((vec![root], name))
        }
        Folder::Named(name) => {
            let name = SkillName::parse(name).map_err(|e| e.to_string())?;
            let roots = SEARCHED_ROOTS
                .iter()
                .map(|r| (!r.is_empty()).then(|| RootPath::parse(r).expect("a valid root")))
                .collect();
            Ok((roots, name))
        }
    }
}

/// [`at_ref`] for `name` (a branch or tag; `None` for the remote's `HEAD`) on `url`, looked up
/// once per run.
fn cached(
    refs: &mut RefCache,
    url: &str,
    name: Option<&str>,
    stop: Stop<'_>,
) -> Result<(CommitId, String), (ErrorCode, String)> {
    refs.entry((url.to_owned(), name.map(str::to_owned)))
        .or_insert_with(|| {
            let query = name.map_or(RefQuery::Head, RefQuery::BranchOrTag);
            at_ref(url, query, stop)
        })
        .clone()
}

/// The commit `query` names on `url` now, and the full name of the ref.
fn at_ref(
    url: &str,
    query: RefQuery<'_>,
    stop: Stop<'_>,
) -> Result<(CommitId, String), (ErrorCode, String)> {
    let temp = tempfile::tempdir().map_err(|e| {
        let e = PinError::Temp(e);
        (e.code(), e.to_string())
    })?;
    let (object, name) = refs::resolve_ref(
        url,
        query,
        &temp.path().join("refs.git"),
        stop.interrupt,
        stop.deadline,
    )
    .map_err(|e| (e.code().into(), e.to_string()))?;
    let commit = CommitId::parse(&object.to_string())
        .map_err(|e| (ImportCode::LockInvalidEntry.into(), e.to_string()))?;
    Ok((commit, escape::text(&name).to_string()))
}

/// One line for a pin refused (each part escaped when it was built).
fn refusal(e: &PinError) -> String {
    match e {
        PinError::Bundles(errors) => errors
            .iter()
            .flat_map(|e| e.lines())
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

/// The recorded hash against the bundle found: a mismatch, or why it could not be compared.
fn compare(recorded: &Recorded, found: &pin::Found) -> (Option<String>, Option<String>) {
    let files = found.bundle.files();
    let computed = match recorded {
        Recorded::SkillsFolderHash(_) | Recorded::SkillsGlobalContent(_) => {
            hashes::skills_folder_hash(files)
        }
        Recorded::GitTree(_) => found.tree.clone(),
        Recorded::ToolhiveContent(_) => Some(hashes::toolhive_content_digest(files)),
        Recorded::ApmContent(_) => Some(hashes::apm_content_hash(files)),
    };
    let field = recorded.field();
    let said = shown(recorded.value());
    match computed {
        None => (
            None,
            Some(format!(
                "`{field}` not compared: a path of the bundle is not ASCII, whose order the \
                 lock's tool leaves to the machine's collation"
            )),
        ),
        Some(got) if got.eq_ignore_ascii_case(recorded.value()) => (None, None),
        Some(got) => (
            Some(format!(
                "the lock's `{field}` is `{said}`, the bundle at this commit gives `{got}`"
            )),
            None,
        ),
    }
}
