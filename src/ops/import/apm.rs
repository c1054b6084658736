//! Microsoft APM's lock, `apm.lock.yaml` (`lockfile_version` `"1"` to `"3"`, as `apm-cli` 0.35
//! writes and reads it): a `dependencies` list, each entry naming its repository by `host`
//! (default `github.com`), `port` and `repo_url` (the repository's path, `owner/repo`), the
//! commit it resolved to (`resolved_commit`), the ref it was asked for (`resolved_ref`), the
//! folder of the skill in the repository (`virtual_path`, for a package that is one folder of
//! its repository) and `content_hash`, APM's hash of the folder's files. The repository URL is
//! the one APM clones: `https://HOST[:PORT]/REPO_URL.git`, `http://` when the entry says
//! `is_insecure`. Local, registry and Artifactory entries, and packages that are a whole
//! repository or a bundle of several skills, are left out with their reason. docs/import.md
//! lists the fields relied on.

use serde_json::Value;

use crate::format::pin::CommitId;

use super::code::ImportCode;
use super::entry::{At, Folder, LeftOut, LockEntry, Recorded, Rewrite, check_url, rewrite, shown};

/// The `lockfile_version` values `apm-cli` reads, all with the fields used here.
pub const VERSIONS: &[&str] = &["1", "2", "3"];

/// Reads the entries of an APM lock (`dependencies` is its `dependencies` list).
pub fn entries(dependencies: &[Value], rewrites: &[Rewrite]) -> Vec<Result<LockEntry, LeftOut>> {
    dependencies
        .iter()
        .enumerate()
        .map(|(i, value)| entry(i, value, rewrites))
        .collect()
}

fn entry(index: usize, value: &Value, rewrites: &[Rewrite]) -> Result<LockEntry, LeftOut> {
    let text = |name: &str| super::entry::text(value, name);
    let flag = |name: &str| value.get(name).and_then(Value::as_bool) == Some(true);
    let folder = text("virtual_path")
        .map(|p| p.trim_matches('/'))
        .filter(|p| !p.is_empty());
    let named = text("name").or_else(|| folder.and_then(|p| p.rsplit('/').next()));
    let key = named.map_or_else(|| format!("dependencies[{index}]"), str::to_owned);
    let refuse = |code: ImportCode, reason: String| LeftOut::new(&key, code, reason);
    if !value.is_object() {
        return Err(refuse(
            ImportCode::LockInvalidEntry,
            "the entry is not a mapping".to_owned(),
        ));
    }
    match text("source") {
        None => {}
        Some("local") => {
            return Err(refuse(
                ImportCode::LockLocalPath,
                "a local dependency (`source: local`); `import` fetches only from servers"
                    .to_owned(),
            ));
        }
        Some(other) => {
            return Err(refuse(
                ImportCode::LockUnsupportedSource,
                format!(
                    "a `{}` dependency; skillfold pins APM's Git dependencies",
                    shown(other)
                ),
            ));
        }
    }
    if text("registry_prefix").is_some() {
        return Err(refuse(
            ImportCode::LockUnsupportedSource,
            "an Artifactory dependency (`registry_prefix`); skillfold pins APM's Git \
             dependencies"
                .to_owned(),
        ));
    }
    let Some(repo) = text("materialization_repo_url").or_else(|| text("repo_url")) else {
        return Err(refuse(
            ImportCode::LockInvalidEntry,
            "the entry has no `repo_url`".to_owned(),
        ));
    };
    let url = repository_url(
        text("host").unwrap_or("github.com"),
        value.get("port"),
        repo,
        flag("is_insecure"),
    )
    .map_err(|bad| refuse(ImportCode::LockInvalidEntry, bad.to_string()))?;
    let url = rewrite(&url, rewrites);
    check_url(&url).map_err(|(code, reason)| refuse(code, reason))?;
    if value
        .get("skill_subset")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(refuse(
            ImportCode::LockUnsupportedSource,
            "a bundle of several skills (`skill_subset`); add each skill's folder to `apm.yml` \
             as its own dependency, or pin them with `skillfold pin`"
                .to_owned(),
        ));
    }
    let Some(folder) = folder.filter(|_| flag("is_virtual") || value.get("is_virtual").is_none())
    else {
        return Err(refuse(
            ImportCode::LockUnsupportedSource,
            "the package is a whole repository; skillfold takes a bundle from a folder named \
             after it (`virtual_path`)"
                .to_owned(),
        ));
    };
    let asked = text("resolved_ref").map(str::to_owned);
    // A number (`0123`) or any other value that is no string is never a commit id.
    let commit = match value.get("resolved_commit") {
        None | Some(Value::Null) => None,
        Some(Value::String(commit)) => Some(commit.clone()),
        Some(other) => Some(other.to_string()),
    };
    let at = match commit.as_deref() {
        Some(commit) => match CommitId::parse(commit) {
            // A ref that is the commit itself says nothing more.
            Ok(id) => At::Commit(id, asked.filter(|r| !r.eq_ignore_ascii_case(commit))),
            Err(_) => {
                return Err(refuse(
                    ImportCode::LockInvalidEntry,
                    format!(
                        "`resolved_commit` `{}` is not a full commit id",
                        shown(commit)
                    ),
                ));
            }
        },
        None => asked.map_or(At::Head, At::Ref),
    };
    Ok(LockEntry {
        key: shown(&key),
        url,
        at,
        folder: Folder::Path(folder.to_owned()),
        recorded: text("content_hash").map(|h| Recorded::ApmContent(h.to_owned())),
        // APM writes `unknown` where a package declares no version.
        version: text("version")
            .filter(|v| *v != "unknown")
            .map(str::to_owned),
    })
}

/// A field of an entry that cannot be part of the repository's URL (the value, shown escaped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadField {
    #[error("`host` `{0}` is not a host name")]
    Host(String),
    #[error("`port` {0} is not a port")]
    Port(String),
    #[error("`repo_url` `{0}` is not a repository path")]
    RepoUrl(String),
}

/// The URL APM clones for `host`, `port`, `repo` (its path) and `insecure`:
/// `https://HOST[:PORT]/REPO.git` (`http://` when insecure). A host or path that would change
/// the URL's shape (a `/`, `@`, `?` or `#` in the host, a path that climbs) is refused.
fn repository_url(
    host: &str,
    port: Option<&Value>,
    repo: &str,
    insecure: bool,
) -> Result<String, BadField> {
    let odd = |c: char| matches!(c, '/' | '\\' | '?' | '#') || c.is_whitespace() || c.is_control();
    if host.chars().any(odd) {
        return Err(BadField::Host(shown(host)));
    }
    let port = match port {
        None | Some(Value::Null) => String::new(),
        Some(value) => match value.as_u64().filter(|p| (1..=65_535).contains(p)) {
            Some(p) => format!(":{p}"),
            None => {
                return Err(BadField::Port(shown(&value.to_string())));
            }
        },
    };
    let path = repo.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    if path.is_empty()
        || path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        || path.contains("://")
        || path
            .chars()
            .any(|c| matches!(c, '?' | '#') || c.is_whitespace() || c.is_control())
    {
        return Err(BadField::RepoUrl(shown(repo)));
    }
    let scheme = if insecure { "http" } else { "https" };
    Ok(format!("{scheme}://{host}{port}/{path}.git"))
}

#[cfg(test)]
#[path = "apm_tests.rs"]
mod tests;
