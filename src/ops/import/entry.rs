//! What `import` takes from one lock entry, whatever the format: where the bundle comes from
//! (a Git URL, the commit or the name that moves, the folder in the repository) and the content
//! hash the lock recorded, if any. Each format's reader builds these; the URL rules every entry
//! passes before anything is fetched live here too.

use serde_json::Value;

use crate::descriptor::redact::RedactedUrl;
use crate::format::pin::CommitId;
use crate::support::escape;

use super::code::ImportCode;

/// One entry of a lock file, ready to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockEntry {
    /// The entry's name in the lock, escaped for display.
    pub key: String,
    /// The repository URL (after `--rewrite`), checked by [`check_url`].
    pub url: String,
    /// What the lock pins the repository at.
    pub at: At,
    /// Where the bundle is in the repository.
    pub folder: Folder,
    /// The content hash the lock recorded for the bundle, if any.
    pub recorded: Option<Recorded>,
    /// The version the lock records for the bundle, if any (unchecked text).
    pub version: Option<String>,
}

/// What a lock pins a repository at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    /// A full commit id; the ref the lock names beside it, if any (a comment in the draft).
    Commit(CommitId, Option<String>),
    /// A branch or a tag: resolved once, written as the commit with a comment naming it.
    Ref(String),
    /// Nothing: the remote's `HEAD`, resolved once.
    Head,
}

/// Where a bundle is in its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Folder {
    /// This folder (`skills/pdf`); its last segment is the skill name.
    Path(String),
    /// The lock does not say: the folder named after the skill in the usual places
    /// ([`SEARCHED_ROOTS`]).
    Named(String),
}

/// The roots searched, in order, for a skill whose lock entry names no folder: where the
/// `skills` CLI finds skills in a repository most often.
pub const SEARCHED_ROOTS: &[&str] = &["skills", "", ".agents/skills", ".claude/skills"];

/// A content hash a lock records for a bundle, compared with the bundle fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// `computedHash` of a `skills-lock.json`: SHA-256 over each file's path and bytes.
    SkillsFolderHash(String),
    /// `skillFolderHash` of the `skills` CLI's global lock, 40 hex digits: the Git tree id of
    /// the folder.
    GitTree(String),
    /// `skillFolderHash` of the `skills` CLI's global lock, 64 hex digits: the CLI's own content
    /// hash (as [`Recorded::SkillsFolderHash`]), recorded for a source not listed by GitHub.
    SkillsGlobalContent(String),
    /// `contentDigest` of a `toolhive.lock.yaml`: `sha256:` and SHA-256 over each file's path
    /// and the SHA-256 of its bytes.
    ToolhiveContent(String),
    /// `content_hash` of an `apm.lock.yaml`: `sha256:` and SHA-256 over each file's path then
    /// its bytes.
    ApmContent(String),
}

impl Recorded {
    /// The lock's field, for messages.
    pub fn field(&self) -> &'static str {
        match self {
            Recorded::SkillsFolderHash(_) => "computedHash",
            Recorded::GitTree(_) | Recorded::SkillsGlobalContent(_) => "skillFolderHash",
            Recorded::ToolhiveContent(_) => "contentDigest",
            Recorded::ApmContent(_) => "content_hash",
        }
    }

    /// The recorded value.
    pub fn value(&self) -> &str {
        match self {
            Recorded::SkillsFolderHash(v)
            | Recorded::GitTree(v)
            | Recorded::SkillsGlobalContent(v)
            | Recorded::ToolhiveContent(v)
            | Recorded::ApmContent(v) => v,
        }
    }
}

/// An entry left out of the draft, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The entry's name in the lock, escaped for display.
    pub key: String,
    /// The code of the reason (any area's: a fetch failure keeps its own).
    pub code: crate::support::error_code::ErrorCode,
    /// Why, one line, escaped for display.
    pub reason: String,
}

impl LeftOut {
    /// An entry of `key` (raw) left out for `reason` (already escaped).
    pub fn new(
        key: &str,
        code: impl Into<crate::support::error_code::ErrorCode>,
        reason: String,
    ) -> LeftOut {
        LeftOut {
            key: shown(key),
            code: code.into(),
            reason,
        }
    }
}

/// The field `name` of a lock entry when it is a non-empty string.
pub fn text<'v>(value: &'v Value, name: &str) -> Option<&'v str> {
    value
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A value of the lock as a message or a comment quotes it: escaped, and, if it holds a URL,
/// with everything from its `://` to its last `@` and any query or fragment replaced by `***`
/// ([`RedactedUrl`]), wherever the value's own delimiters are. Every lock value a reason quotes
/// passes here; [`super::redact`] then scrubs each whole message once more before any is written.
pub fn shown(value: &str) -> String {
    escape::text(RedactedUrl::new(value).as_str()).to_string()
}

/// A URL prefix rewrite (`--rewrite FROM=TO`), applied to every repository URL of the lock
/// before it is checked, as Git's `url.<base>.insteadOf` does: for a mirror, or a GitHub
/// Enterprise host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The prefix replaced.
    pub from: String,
    /// What replaces it.
    pub to: String,
}

impl Rewrite {
    /// Parses `FROM=TO` (both non-empty).
    pub fn parse(spec: &str) -> Result<Rewrite, String> {
        match spec.split_once('=') {
            Some((from, to)) if !from.is_empty() && !to.is_empty() => Ok(Rewrite {
                from: from.to_owned(),
                to: to.to_owned(),
            }),
            _ => Err(format!(
                "`{}` is not FROM=TO (a URL prefix and its replacement)",
                escape::text(spec)
            )),
        }
    }
}

/// `url` after the first rewrite whose prefix it starts with.
pub fn rewrite(url: &str, rewrites: &[Rewrite]) -> String {
    rewrites
        .iter()
        .find_map(|r| {
            url.strip_prefix(&r.from)
                .map(|rest| format!("{}{rest}", r.to))
        })
        .unwrap_or_else(|| url.to_owned())
}

/// Refuses a URL `import` never fetches: a local path or `file://` URL (a lock must not make the
/// tool read the machine it runs on), user information, a query or a fragment (credentials,
/// which belong in a credential helper), and anything but `https://` and `http://`. The reason
/// is escaped and shows the URL redacted.
pub fn check_url(url: &str) -> Result<(), (ImportCode, String)> {
    let shown = || shown(url);
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("file:")
        || url.starts_with('/')
        || url.starts_with('.')
        || url.starts_with('~')
    {
        return Err((
            ImportCode::LockLocalPath,
            format!(
                "`{}` is a local path; `import` fetches only from servers",
                shown()
            ),
        ));
    }
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let Some(rest) = rest else {
        return Err((
            ImportCode::LockUnsupportedSource,
            format!("`{}` is not an `https://` or `http://` URL", shown()),
        ));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // A fragment is no part of a repository URL, and `check` takes it for a token as a query.
    if authority.contains('@') || url.contains(['?', '#']) {
        return Err((
            ImportCode::LockCredentials,
            format!(
                "`{}` carries credentials; give them through a credential helper or GIT_ASKPASS instead",
                shown()
            ),
        ));
    }
    if authority.is_empty()
        || url.chars().any(char::is_control)
        || url.contains(char::is_whitespace)
    {
        return Err((
            ImportCode::LockInvalidEntry,
            format!("`{}` is not a repository URL", shown()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_paths_and_credentials_are_refused_before_any_fetch() {
        for url in [
            "file:///etc",
            "FILE:///x",
            "/srv/repo.git",
            "./repo",
            "~/repo",
        ] {
            assert_eq!(
                check_url(url).unwrap_err().0,
                ImportCode::LockLocalPath,
                "{url}"
            );
        }
        for url in [
            "https://user:token@github.com/a/b.git",
            "https://token@github.com/a/b.git",
            "https://github.com/a/b.git?access_token=x",
            "https://github.com/a/b.git#x",
        ] {
            let (code, reason) = check_url(url).unwrap_err();
            assert_eq!(code, ImportCode::LockCredentials, "{url}");
            assert!(
                !reason.contains("token@") && !reason.contains("access_token=x"),
                "{reason}"
            );
        }
        for url in ["ssh://git@host/x", "git@github.com:a/b.git", "ftp://host/x"] {
            assert!(check_url(url).is_err(), "{url}");
        }
        assert_eq!(check_url("https://git.example.com/a/b.git"), Ok(()));
        assert_eq!(check_url("http://127.0.0.1:8080/git/remote.git"), Ok(()));
        assert_eq!(
            check_url("https://host/a\nb").unwrap_err().0,
            ImportCode::LockInvalidEntry
        );
    }

    #[test]
    fn the_first_matching_rewrite_applies() {
        let rewrites = [
            Rewrite::parse("https://github.com/=http://127.0.0.1:1/git/").unwrap(),
            Rewrite::parse("https://github.com/acme/=http://other/").unwrap(),
        ];
        assert_eq!(
            rewrite("https://github.com/acme/skills.git", &rewrites),
            "http://127.0.0.1:1/git/acme/skills.git"
        );
        assert_eq!(
            rewrite("https://gitlab.com/x", &rewrites),
            "https://gitlab.com/x"
        );
        assert!(Rewrite::parse("nothing").is_err());
        assert!(Rewrite::parse("=x").is_err());
    }
}
