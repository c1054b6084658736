//! `skillfold import FILE`: the lock file of another tool turned into a descriptor draft to
//! review. The steps: read the file within [`MAX_LOCK_BYTES`] (checked before reading), parse it
//! strictly ([`tree`]: no duplicate keys, bounded nesting), tell its format from its content
//! ([`Format`]), read its entries ([`skills_cli`], [`toolhive`], [`apm`]), resolve each one exactly as
//! `skillfold pin` pins ([`resolve`]), and write the draft ([`draft`]). An entry that cannot be
//! resolved is left out with its reason; the lock's own content hashes are compared, never
//! replaced silently. docs/import.md is the user's page.

pub mod apm;
pub mod code;
pub mod draft;
pub mod entry;
pub mod hashes;
pub mod resolve;
pub mod skills_cli;
pub mod toolhive;
pub mod tree;

use std::path::Path;

use rustix::fs::FileType;
use serde_json::Value;

use crate::descriptor::redact::scrub_urls;
use crate::format::untrusted_fs;
use crate::ops::pin::Stop;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

use code::ImportCode;
use entry::{LeftOut, LockEntry, Rewrite};
use resolve::Resolved;
use tree::TreeError;

/// The largest lock file `import` reads, checked from its size before it is read: a real lock
/// of a few hundred skills is far smaller.
pub const MAX_LOCK_BYTES: u64 = 1024 * 1024;

/// The most entries `import` resolves from one lock, counted before anything is fetched: each
/// may cost a ref listing and a fetch, and a real lock holds tens.
pub const MAX_ENTRIES: usize = 1024;

/// The lock formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `skills-lock.json` of the `skills` CLI (version 1).
    SkillsProject,
    /// `~/.agents/.skill-lock.json` of the `skills` CLI (version 3).
    SkillsGlobal,
    /// `toolhive.lock.yaml` of ToolHive (version 1).
    Toolhive,
    /// `apm.lock.yaml` of Microsoft APM (`lockfile_version` 1 to 3).
    Apm,
}

impl Format {
    /// The format, as messages and the draft name it.
    pub fn describe(self) -> &'static str {
        match self {
            Format::SkillsProject => "the `skills` CLI's project lock (skills-lock.json)",
            Format::SkillsGlobal => "the `skills` CLI's global lock (.skill-lock.json)",
            Format::Toolhive => "ToolHive's lock (toolhive.lock.yaml)",
            Format::Apm => "Microsoft APM's lock (apm.lock.yaml)",
        }
    }
}

/// Why a lock file cannot be imported at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The file cannot be read.
    #[error("{0}")]
    Unreadable(String),
    /// The file is larger than [`MAX_LOCK_BYTES`].
    #[error("{path}: {size} bytes or more, over the {MAX_LOCK_BYTES} bytes `import` reads")]
    TooLarge {
        /// The file, escaped.
        path: String,
        /// Its size (at least).
        size: u64,
    },
    /// The file holds more than [`MAX_ENTRIES`] entries.
    #[error("{path}: {count} entries, over the {MAX_ENTRIES} `import` resolves from one lock")]
    TooManyEntries {
        /// The file, escaped.
        path: String,
        /// How many it holds.
        count: usize,
    },
    /// The file nests deeper than [`tree::MAX_DEPTH`].
    #[error("{path}: nested deeper than {} levels", tree::MAX_DEPTH)]
    TooDeep {
        /// The file, escaped.
        path: String,
    },
    /// The file is not JSON or YAML text.
    #[error("{path}: {message}")]
    Syntax {
        /// The file, escaped.
        path: String,
        /// What is wrong, escaped.
        message: String,
    },
    /// A mapping of the file names a key twice.
    #[error("{path}: the key `{key}` appears twice in one mapping")]
    DuplicateKey {
        /// The file, escaped.
        path: String,
        /// The key, escaped.
        key: String,
    },
    /// The file is none of the formats `import` reads.
    #[error(
        "{path}: {detail}; `import` reads skills-lock.json (version 1) and .skill-lock.json \
         (version 3) of the `skills` CLI, toolhive.lock.yaml (version 1) of ToolHive and \
         apm.lock.yaml (lockfile_version 1 to 3) of Microsoft APM"
    )]
    UnknownFormat {
        /// The file, escaped.
        path: String,
        /// What it holds instead.
        detail: String,
    },
}

impl ImportError {
    /// Stable error code.
    pub fn code(&self) -> ImportCode {
        match self {
            ImportError::Unreadable(_) => ImportCode::LockUnreadable,
            ImportError::TooLarge { .. } | ImportError::TooManyEntries { .. } => {
                ImportCode::LockTooLarge
            }
            ImportError::TooDeep { .. } => ImportCode::LockTooDeep,
            ImportError::Syntax { .. } => ImportCode::LockSyntax,
            ImportError::DuplicateKey { .. } => ImportCode::LockDuplicateKey,
            ImportError::UnknownFormat { .. } => ImportCode::LockUnknownFormat,
        }
    }
}

crate::support::error_code::coded_by_code!(ImportError);

/// What `import` made of a lock file.
#[derive(Debug)]
pub struct Imported {
    /// Its format.
    pub format: Format,
    /// The entries resolved to pins (in the draft), in the lock's order.
    pub resolved: Vec<Resolved>,
    /// The entries left out, and why.
    pub left_out: Vec<LeftOut>,
    /// The descriptor draft.
    pub draft: String,
}

impl Imported {
    /// The code of every finding: each entry left out, each content-hash mismatch (the exit
    /// status is the worst of them; none is exit 0).
    pub fn findings(&self) -> Vec<ErrorCode> {
        self.left_out
            .iter()
            .map(|l| l.code)
            .chain(
                self.resolved
                    .iter()
                    .filter(|r| r.mismatch.is_some())
                    .map(|_| ImportCode::LockHashMismatch.into()),
            )
            .collect()
    }
}

/// Reads the lock file at `path` and resolves every entry (see the module docs).
pub fn import(path: &Path, rewrites: &[Rewrite], stop: Stop<'_>) -> Result<Imported, ImportError> {
    let (format, entries) = read(path, rewrites)?;
    let mut planned = Vec::new();
    let mut left_out = Vec::new();
    let mut refs = resolve::RefCache::new();
    for entry in entries {
        match entry.and_then(|entry| resolve::plan(entry, stop, &mut refs)) {
            Ok(p) => planned.push(p),
            Err(l) => left_out.push(l),
        }
    }
    let mut resolved = Vec::new();
    for outcome in resolve::fetch(planned, stop) {
        match outcome {
            Ok(r) => resolved.push(r),
            Err(l) => left_out.push(l),
        }
    }
    redact(&mut resolved, &mut left_out);
    let shown = escape::path(path).to_string();
    let draft = draft::draft(
        &format!("`{shown}`, {}", format.describe()),
        &resolved,
        &left_out,
    );
    Ok(Imported {
        format,
        resolved,
        left_out,
        draft,
    })
}

/// The one choke point between what `import` found and what it writes: every text the report
/// on stderr or a comment of the draft shows (each entry's name and reason, the ref it was
/// resolved from, a mismatch, a note), whoever made it, with each URL in it redacted
/// ([`scrub_urls`]), so no message carries a lock's credentials.
fn redact(resolved: &mut [Resolved], left_out: &mut [LeftOut]) {
    let scrub = |text: &mut String| *text = scrub_urls(text);
    for l in left_out {
        scrub(&mut l.key);
        scrub(&mut l.reason);
    }
    for r in resolved {
        scrub(&mut r.key);
        [&mut r.from_ref, &mut r.mismatch, &mut r.uncompared]
            .into_iter()
            .flatten()
            .for_each(scrub);
    }
}

/// Reads the lock file at `path`: its format and entries (each ready to resolve, or left out).
pub fn read(
    path: &Path,
    rewrites: &[Rewrite],
) -> Result<(Format, Vec<Result<LockEntry, LeftOut>>), ImportError> {
    let shown = escape::path(path).to_string();
    // A link at the file's own name is refused, not followed as other inputs' are: a lock file
    // comes with a project (a pull request may change it, or plant a link to a file elsewhere).
    if rustix::fs::lstat(path).is_ok_and(|st| untrusted_fs::kind(&st) == FileType::Symlink) {
        return Err(ImportError::Unreadable(format!(
            "`{shown}`: is a symbolic link; `import` reads the lock file itself, never through \
             a link (give the path it points to)"
        )));
    }
    let bytes = untrusted_fs::read_input(path, MAX_LOCK_BYTES)
        .map_err(|e| ImportError::Unreadable(escape::text(&e.to_string()).to_string()))?
        .map_err(|size| ImportError::TooLarge {
            path: shown.clone(),
            size,
        })?;
    let text = String::from_utf8(bytes).map_err(|e| ImportError::Syntax {
        path: shown.clone(),
        message: format!(
            "not UTF-8 text (an invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let json = text.trim_start().starts_with('{');
    let parsed = if json {
        tree::json(text)
    } else {
        tree::yaml(text)
    };
    let value = parsed.map_err(|e| match e {
        TreeError::TooDeep => ImportError::TooDeep {
            path: shown.clone(),
        },
        TreeError::DuplicateKey(key) => ImportError::DuplicateKey {
            path: shown.clone(),
            key: scrub_urls(&key),
        },
        // Text that is neither JSON nor YAML, in a file not named like a YAML lock, is some
        // other file (a SKILL.md, where `gh skill` keeps its metadata): an unknown format.
        TreeError::Syntax(message) if json || named_yaml(path) => ImportError::Syntax {
            path: shown.clone(),
            message,
        },
        TreeError::Syntax(message) => ImportError::UnknownFormat {
            path: shown.clone(),
            detail: format!("neither JSON nor YAML ({message})"),
        },
    })?;
    let unknown = |detail: String| ImportError::UnknownFormat {
        path: shown.clone(),
        detail,
    };
    let version = value.get("version");
    let skills = value.get("skills");
    // APM's lock names its entries `dependencies` and its version `lockfile_version`, a string.
    if let Some(lockfile) = value.get("lockfile_version") {
        return read_apm(lockfile, value.get("dependencies"), rewrites, &shown);
    }
    let count = match skills {
        Some(Value::Object(map)) => map.len(),
        Some(Value::Array(list)) => list.len(),
        _ => 0,
    };
    if count > MAX_ENTRIES {
        return Err(ImportError::TooManyEntries {
            path: shown.clone(),
            count,
        });
    }
    match (json, version.and_then(Value::as_u64), skills) {
        (true, Some(1), Some(Value::Object(skills))) => Ok((
            Format::SkillsProject,
            skills_cli::entries(skills_cli::Scope::Project, skills, rewrites),
        )),
        (true, Some(3), Some(Value::Object(skills))) => Ok((
            Format::SkillsGlobal,
            skills_cli::entries(skills_cli::Scope::Global, skills, rewrites),
        )),
        (false, Some(1), Some(Value::Array(skills))) => {
            Ok((Format::Toolhive, toolhive::entries(skills, rewrites)))
        }
        (false, None, Some(Value::Array(skills))) if version.is_none() => {
            Ok((Format::Toolhive, toolhive::entries(skills, rewrites)))
        }
        (_, _, Some(_)) if version.is_some_and(|v| !matches!(v.as_u64(), Some(1 | 3))) => {
            Err(unknown(format!(
                "`version` {} is not a version of a format `import` reads",
                entry::shown(&version.map(Value::to_string).unwrap_or_default())
            )))
        }
        _ => Err(unknown(
            "no `version` and `skills` of a known lock format".to_owned(),
        )),
    }
}

/// The entries of an APM lock whose `lockfile_version` is `lockfile`.
fn read_apm(
    lockfile: &Value,
    dependencies: Option<&Value>,
    rewrites: &[Rewrite],
    shown: &str,
) -> Result<(Format, Vec<Result<LockEntry, LeftOut>>), ImportError> {
    let unknown = |detail: String| ImportError::UnknownFormat {
        path: shown.to_owned(),
        detail,
    };
    if !lockfile
        .as_str()
        .is_some_and(|v| apm::VERSIONS.contains(&v))
    {
        return Err(unknown(format!(
            "`lockfile_version` {} is not a version of APM's lock `import` reads",
            entry::shown(&lockfile.to_string())
        )));
    }
    let dependencies = match dependencies {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(list)) => list.as_slice(),
        Some(_) => {
            return Err(unknown(
                "APM's lock, but its `dependencies` is not a list".to_owned(),
            ));
        }
    };
    if dependencies.len() > MAX_ENTRIES {
        return Err(ImportError::TooManyEntries {
            path: shown.to_owned(),
            count: dependencies.len(),
        });
    }
    Ok((Format::Apm, apm::entries(dependencies, rewrites)))
}

/// Whether the file's name says YAML (`.yaml`, `.yml`).
fn named_yaml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &[u8]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("temp file");
        fs_err::write(file.path(), text).expect("write");
        file
    }

    fn code_of(text: &[u8]) -> ImportCode {
        read(write(text).path(), &[]).unwrap_err().code()
    }

    #[test]
    fn the_format_is_told_from_the_content() {
        let read_format = |text: &str| read(write(text.as_bytes()).path(), &[]).map(|(f, _)| f);
        assert_eq!(
            read_format(r#"{"version": 1, "skills": {}}"#).unwrap(),
            Format::SkillsProject
        );
        assert_eq!(
            read_format(r#"{"version": 3, "skills": {}, "dismissed": {}}"#).unwrap(),
            Format::SkillsGlobal
        );
        assert_eq!(
            read_format("version: 1\nskills: []\n").unwrap(),
            Format::Toolhive
        );
        assert_eq!(read_format("skills: []\n").unwrap(), Format::Toolhive);
        assert_eq!(
            read_format("lockfile_version: '1'\napm_version: 0.35.0\ndependencies: []\n").unwrap(),
            Format::Apm
        );
        assert_eq!(read_format("lockfile_version: '3'\n").unwrap(), Format::Apm);
        for unknown in [
            r#"{"version": 2, "skills": {}}"#,
            r#"{"lockfileVersion": 3, "packages": {}}"#,
            "version: 1\nskills: {}\n",
            "lockfile_version: '4'\ndependencies: []\n",
            "lockfile_version: 1\ndependencies: []\n",
            "lockfile_version: '1'\ndependencies: {}\n",
            "---\nname: pdf\ndescription: d\n---\n",
            "[]",
        ] {
            assert_eq!(
                code_of(unknown.as_bytes()),
                ImportCode::LockUnknownFormat,
                "{unknown}"
            );
        }
    }

    #[test]
    fn hostile_files_are_refused_with_their_codes() {
        let huge = vec![b' '; usize::try_from(MAX_LOCK_BYTES).unwrap() + 1];
        assert_eq!(code_of(&huge), ImportCode::LockTooLarge);
        let entries = |n: usize| format!("version: 1\nskills:\n{}", "- name: x\n".repeat(n));
        assert!(read(write(entries(MAX_ENTRIES).as_bytes()).path(), &[]).is_ok());
        assert_eq!(
            code_of(entries(MAX_ENTRIES + 1).as_bytes()),
            ImportCode::LockTooLarge
        );
        let apm = format!(
            "lockfile_version: '1'\ndependencies:\n{}",
            "- repo_url: a/b\n".repeat(MAX_ENTRIES + 1)
        );
        assert_eq!(code_of(apm.as_bytes()), ImportCode::LockTooLarge);
        let deep = format!(
            "{{\"skills\": {}{}}}",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert_eq!(code_of(deep.as_bytes()), ImportCode::LockTooDeep);
        assert_eq!(
            code_of(br#"{"version": 1, "skills": {}, "skills": {}}"#),
            ImportCode::LockDuplicateKey
        );
        assert_eq!(
            code_of(b"version: 1\nversion: 1\nskills: []\n"),
            ImportCode::LockDuplicateKey
        );
        assert_eq!(code_of(b"{\"version\": 1,"), ImportCode::LockSyntax);
        let yaml = tempfile::Builder::new()
            .suffix(".lock.yaml")
            .tempfile()
            .expect("temp");
        fs_err::write(yaml.path(), "skills: [\n").expect("write");
        assert_eq!(
            read(yaml.path(), &[]).unwrap_err().code(),
            ImportCode::LockSyntax
        );
        assert_eq!(code_of(b"\xff\xfe"), ImportCode::LockSyntax);
        let missing = read(Path::new("/nonexistent/skills-lock.json"), &[]).unwrap_err();
        assert_eq!(missing.code(), ImportCode::LockUnreadable);
    }
}
