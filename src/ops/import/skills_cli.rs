//! The lock files of vercel's `skills` CLI (`npx skills`): the project lock `skills-lock.json`
//! (version 1: per skill `source`, `sourceType`, `sourceUrl`, `ref`, `skillPath`,
//! `computedHash`) and the global lock `~/.agents/.skill-lock.json` (version 3: the same with
//! `skillFolderHash` for `computedHash`). docs/import.md lists the fields relied on and where
//! the format is defined.

use serde_json::{Map, Value};

use crate::format::pin::CommitId;

use super::code::ImportCode;
use super::entry::{At, Folder, LeftOut, LockEntry, Recorded, Rewrite, check_url, rewrite, shown};

/// Which of the two lock files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `skills-lock.json`, in a project.
    Project,
    /// `.skill-lock.json`, the user's global lock.
    Global,
}

/// Reads the entries of a `skills` CLI lock (`skills` is the lock's `skills` mapping).
pub fn entries(
    scope: Scope,
    skills: &Map<String, Value>,
    rewrites: &[Rewrite],
) -> Vec<Result<LockEntry, LeftOut>> {
    skills
        .iter()
        .map(|(key, value)| entry(scope, key, value, rewrites))
        .collect()
}

fn entry(
    scope: Scope,
    key: &str,
    value: &Value,
    rewrites: &[Rewrite],
) -> Result<LockEntry, LeftOut> {
    let refuse = |code: ImportCode, reason: String| LeftOut::new(key, code, reason);
    let Some(fields) = value.as_object() else {
        return Err(refuse(
            ImportCode::LockInvalidEntry,
            "the entry is not a mapping".to_owned(),
        ));
    };
    let text = |name: &str| -> Result<Option<&str>, LeftOut> {
        match fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(refuse(
                ImportCode::LockInvalidEntry,
                format!("`{name}` is not text"),
            )),
        }
    };
    let source_type = text("sourceType")?.unwrap_or("");
    let source = text("source")?.ok_or_else(|| {
        refuse(
            ImportCode::LockInvalidEntry,
            "the entry has no `source`".to_owned(),
        )
    })?;
    let url = repository_url(source_type, source, text("sourceUrl")?)
        .map_err(|(code, reason)| refuse(code, reason))?;
    let url = rewrite(&url, rewrites);
    check_url(&url).map_err(|(code, reason)| refuse(code, reason))?;
    let at = match text("ref")?.filter(|r| !r.is_empty()) {
        Some(r) => match CommitId::parse(r) {
            Ok(commit) => At::Commit(commit, None),
            Err(_) => At::Ref(r.to_owned()),
        },
        None => At::Head,
    };
    // Both locks name the folder in `skillPath` (the project lock since the CLI's 1.5).
    let folder = match text("skillPath")?.map(skill_folder) {
        Some(path) if path.is_empty() => {
            return Err(refuse(
                ImportCode::LockUnsupportedSource,
                "the skill is the repository's root folder; skillfold takes a bundle from a \
                 folder named after it"
                    .to_owned(),
            ));
        }
        Some(path) => Folder::Path(path),
        None => Folder::Named(key.to_owned()),
    };
    let recorded = match scope {
        Scope::Project => text("computedHash")?
            .filter(|h| !h.is_empty())
            .map(|h| Recorded::SkillsFolderHash(h.to_owned())),
        Scope::Global => text("skillFolderHash")?
            .filter(|h| !h.is_empty())
            .map(global_folder_hash),
    };
    Ok(LockEntry {
        key: shown(key),
        url,
        at,
        folder,
        recorded,
        version: None,
    })
}

/// The global lock's `skillFolderHash` by its form: the CLI records the Git tree id GitHub's
/// tree listing gives (40 hex digits) when it has one, and otherwise (a `git` or `gitlab`
/// source it cloned, a GitHub one whose listing failed, a local folder) the content hash it
/// writes as the project lock's `computedHash` (SHA-256, 64 hex digits).
fn global_folder_hash(value: &str) -> Recorded {
    let content = value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit());
    if content {
        Recorded::SkillsGlobalContent(value.to_owned())
    } else {
        Recorded::GitTree(value.to_owned())
    }
}

/// The Git URL of an entry's source, by its `sourceType`.
fn repository_url(
    source_type: &str,
    source: &str,
    source_url: Option<&str>,
) -> Result<String, (ImportCode, String)> {
    match source_type {
        "github" => Ok(match source_url {
            Some(url) => url.to_owned(),
            None if source.contains("://") => source.to_owned(),
            None => format!("https://github.com/{}.git", source.trim_end_matches(".git")),
        }),
        "gitlab" | "git" => Ok(source_url.unwrap_or(source).to_owned()),
        "local" => Err((
            ImportCode::LockLocalPath,
            format!(
                "`{}` is a local folder; `import` fetches only from servers",
                shown(source)
            ),
        )),
        other => Err((
            ImportCode::LockUnsupportedSource,
            format!(
                "source type `{}` is not a Git repository skillfold can pin",
                shown(other)
            ),
        )),
    }
}

/// The folder of `skillPath` (which names the folder or its `SKILL.md`), without a trailing `/`.
fn skill_folder(path: &str) -> String {
    let path = path.replace('\\', "/");
    let path = path
        .strip_suffix("SKILL.md")
        .unwrap_or(&path)
        .trim_end_matches('/');
    path.trim_start_matches("./").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::error_code::ErrorCode;

    fn read(scope: Scope, json: &str) -> Vec<Result<LockEntry, LeftOut>> {
        let tree = super::super::tree::json(json).expect("json");
        entries(scope, tree["skills"].as_object().expect("skills"), &[])
    }

    #[test]
    fn a_project_lock_entry_names_its_repository_ref_and_hash() {
        let got = read(
            Scope::Project,
            r#"{"version": 1, "skills": {
                "pdf": {"source": "acme/skills", "sourceType": "github", "ref": "main", "computedHash": "ab"},
                "csv": {"source": "https://git.example.com/t/s.git", "sourceType": "git",
                        "ref": "0123456789abcdef0123456789abcdef01234567", "computedHash": "cd"},
                "mine": {"source": "./skills/mine", "sourceType": "local", "computedHash": "ef"},
                "npm": {"source": "@acme/skills", "sourceType": "node_modules", "computedHash": "ef"},
                "gamma": {"source": "acme/skills", "sourceType": "github",
                          "skillPath": "plugins/x/skills/gamma/SKILL.md", "computedHash": "ab"}
            }}"#,
        );
        assert_eq!(
            got[4].as_ref().expect("gamma").folder,
            Folder::Path("plugins/x/skills/gamma".to_owned())
        );
        let csv = got[1].as_ref().expect("csv");
        assert_eq!(csv.url, "https://git.example.com/t/s.git");
        assert!(matches!(csv.at, At::Commit(..)));
        assert_eq!(csv.folder, Folder::Named("csv".to_owned()));
        let pdf = got[0].as_ref().expect("pdf");
        assert_eq!(pdf.url, "https://github.com/acme/skills.git");
        assert_eq!(pdf.at, At::Ref("main".to_owned()));
        assert_eq!(
            pdf.recorded,
            Some(Recorded::SkillsFolderHash("ab".to_owned()))
        );
        assert_eq!(
            got[2].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockLocalPath)
        );
        assert_eq!(
            got[3].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockUnsupportedSource)
        );
    }

    #[test]
    fn a_global_lock_entry_names_its_folder_and_tree() {
        let got = read(
            Scope::Global,
            &r#"{"version": 3, "skills": {
                "pdf": {"source": "acme/skills", "sourceType": "github",
                        "sourceUrl": "https://github.com/acme/skills.git",
                        "skillPath": "skills/pdf/SKILL.md", "skillFolderHash": "1234"},
                "root": {"source": "acme/one", "sourceType": "github", "skillPath": "SKILL.md",
                         "skillFolderHash": "1"},
                "bad": {"source": "acme/x", "sourceType": "github",
                        "sourceUrl": "https://me:ghp_secret@github.com/acme/x.git"},
                "odd": {"source": 3, "sourceType": "github"},
                "cloned": {"source": "https://git.example.com/a/b.git", "sourceType": "git",
                           "skillPath": "skills/cloned/SKILL.md", "skillFolderHash": "%H"}
            }}"#
            .replace("%H", &"ab".repeat(32)),
        );
        assert_eq!(
            got[4].as_ref().expect("cloned").recorded,
            Some(Recorded::SkillsGlobalContent("ab".repeat(32)))
        );
        assert_eq!(
            got[2].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockCredentials)
        );
        assert!(!got[2].as_ref().unwrap_err().reason.contains("ghp_secret"));
        assert_eq!(
            got[3].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockInvalidEntry)
        );
        let pdf = got[0].as_ref().expect("pdf");
        assert_eq!(pdf.folder, Folder::Path("skills/pdf".to_owned()));
        assert_eq!(pdf.at, At::Head);
        assert_eq!(pdf.recorded, Some(Recorded::GitTree("1234".to_owned())));
        assert_eq!(
            got[1].as_ref().unwrap_err().code,
            ErrorCode::from(ImportCode::LockUnsupportedSource)
        );
    }
}
