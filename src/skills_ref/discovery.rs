//! Discovering skills from an ordered list of sources, the way a shell resolves commands on
//! `PATH` (the model of Go's `agentskill` module).
//!
//! - A **source** is a tree whose top-level directories are skill directories: a directory on
//!   disk ([`DirTree`], read without following links) or any in-memory or embedded tree
//!   ([`MemTree`], or your own [`SkillTree`]). Sources are searched in order; directories within
//!   a source in name order; names starting with `.` are skipped.
//! - A directory is a skill when its listing holds `SKILL.md` or else `skill.md`, decided from
//!   the listing by exact name. Another casing (`Skill.md`, `SKILL.MD`) is not a skill file; it
//!   is reported as a warning so the author can rename it.
//! - The frontmatter is read in the skills-ref dialect ([`super::skill_file`],
//!   [`super::strict_yaml`]). A skill **claims a name** when its frontmatter has a non-blank
//!   string `name` and `description` (the stripped `name`). A skill that claims no name — its
//!   `SKILL.md` unreadable, its YAML invalid, or `name`/`description` missing — is reported in
//!   [`Discovery::unclaimed`] with its problems, and is never offered.
//! - **The first claim of a name wins.** A later skill of the same name is reported in
//!   [`Discovery::shadowed`], naming the winner. If its source carries a **qualifier**, it is
//!   instead listed as `qualifier:name` (shadowed only if that id is taken too).
//! - A **broken** skill (it claims a name but breaks a rule of the spec: name format or
//!   directory mismatch, unknown keys, lengths, a malformed `allowed-tools`) keeps its claim and
//!   is listed with its problems, not hidden and not silently replaced by a lower-precedence
//!   skill of the same name; [`Discovery::offered`] leaves it out.
//! - Warnings never break a skill: an odd-cased skill file next to the real one, and a body
//!   longer than 500 lines (the spec recommends keeping `SKILL.md` under that).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use super::allowed_tools::{self, ToolRule};
use super::python;
use super::skill_file::{self, MAX_SKILL_MD_BYTES, SKILL_MD_NAMES};
use super::strict_yaml::Value;
use super::validate;
use crate::format::untrusted_fs;

/// The body length, in lines, above which a warning is given.
pub const MAX_BODY_LINES: usize = 500;

/// The most names a [`DirTree`] lists in one directory (a source, or one skill directory); a
/// directory holding more is reported as unreadable instead of being held in memory.
pub const MAX_LISTING: usize = 10_000;

/// The kind of a directory entry, as seen without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed).
    Symlink,
    /// Anything else (FIFO, socket, device).
    Other,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file name.
    pub name: String,
    /// What it is.
    pub kind: EntryKind,
}

/// A tree of skill directories. Paths are relative, `/`-separated, without `.` or `..`; the
/// root is `""`.
pub trait SkillTree: Send + Sync {
    /// The entries of the directory at `dir`.
    fn list(&self, dir: &str) -> io::Result<Vec<Entry>>;
    /// The bytes of the regular file at `path`, never read through a link.
    fn read(&self, path: &str) -> io::Result<Vec<u8>>;
    /// How `path` is shown in reports.
    fn display(&self, path: &str) -> String;
}

/// A directory on disk, read through [`crate::format::untrusted_fs`]: opens relative to already-open
/// directories that never follow a link, listings of at most [`MAX_LISTING`] names, files of at
/// most [`MAX_SKILL_MD_BYTES`].
#[derive(Debug, Clone)]
pub struct DirTree {
    root: PathBuf,
}

impl DirTree {
    /// The tree rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> DirTree {
        DirTree { root: root.into() }
    }

    /// Opens the directory `rel` component by component, never following a link.
    fn open_dir(&self, rel: &str) -> io::Result<OwnedFd> {
        let parts = rel.split('/').filter(|p| !p.is_empty());
        Ok(untrusted_fs::open_dir_path(&self.root, parts)?)
    }
}

impl SkillTree for DirTree {
    fn list(&self, dir: &str) -> io::Result<Vec<Entry>> {
        let fd = self.open_dir(dir)?;
        let listing = untrusted_fs::list(&fd, MAX_LISTING)?;
        if listing.over {
            return Err(io::Error::other(format!(
                "more than {MAX_LISTING} entries; not scanned"
            )));
        }
        let mut out = Vec::with_capacity(listing.names.len());
        for name in listing.names {
            let Ok(text) = name.to_str() else { continue };
            let kind = match untrusted_fs::stat_at(&fd, &name) {
                Ok(Some(st)) => match untrusted_fs::kind(&st) {
                    FileType::RegularFile => EntryKind::File,
                    FileType::Directory => EntryKind::Dir,
                    FileType::Symlink => EntryKind::Symlink,
                    _ => EntryKind::Other,
                },
                _ => continue,
            };
            out.push(Entry {
                name: text.to_owned(),
                kind,
            });
        }
        Ok(out)
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        let (parents, file) = path.rsplit_once('/').unwrap_or(("", path));
        let dir = self.open_dir(parents)?;
        let (fd, st) = untrusted_fs::open_file(&dir, &untrusted_fs::component(file)?)?;
        let hint = u64::try_from(st.st_size).unwrap_or(0);
        untrusted_fs::read_capped(fd, MAX_SKILL_MD_BYTES, hint).map_err(|e| match e {
            untrusted_fs::ReadError::TooLarge { cap } => io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!(
                    "larger than {cap} bytes ({} MiB), the most skillfold reads [file_too_large]",
                    cap >> 20
                ),
            ),
            untrusted_fs::ReadError::Io(e) => e,
        })
    }

    fn display(&self, path: &str) -> String {
        let full = if path.is_empty() {
            self.root.clone()
        } else {
            self.root
                .join(Path::new(OsStr::from_bytes(path.as_bytes())))
        };
        full.display().to_string()
    }
}

/// An in-memory (or embedded) tree: files by relative path; directories are implied.
#[derive(Debug, Clone, Default)]
pub struct MemTree {
    label: String,
    files: BTreeMap<String, Vec<u8>>,
}

impl MemTree {
    /// An empty tree shown as `label` in reports.
    pub fn new(label: impl Into<String>) -> MemTree {
        MemTree {
            label: label.into(),
            files: BTreeMap::new(),
        }
    }

    /// Adds a file.
    pub fn with_file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> MemTree {
        self.files.insert(path.into(), bytes.into());
        self
    }
}

impl SkillTree for MemTree {
    fn list(&self, dir: &str) -> io::Result<Vec<Entry>> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut out: Vec<Entry> = Vec::new();
        for path in self.files.keys() {
            let Some(rest) = path.strip_prefix(&prefix) else {
                continue;
            };
            let (name, kind) = match rest.split_once('/') {
                Some((d, _)) => (d, EntryKind::Dir),
                None => (rest, EntryKind::File),
            };
            if !out.iter().any(|e| e.name == name) {
                out.push(Entry {
                    name: name.to_owned(),
                    kind,
                });
            }
        }
        if out.is_empty() && !dir.is_empty() {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        Ok(out)
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn display(&self, path: &str) -> String {
        format!("{}:{path}", self.label)
    }
}

/// A source: a tree, and optionally a qualifier for names already taken.
#[derive(Clone)]
pub struct Source {
    tree: Arc<dyn SkillTree>,
    qualifier: Option<String>,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("root", &self.tree.display(""))
            .field("qualifier", &self.qualifier)
            .finish()
    }
}

impl Source {
    /// A directory on disk.
    pub fn dir(root: impl Into<PathBuf>) -> Source {
        Source::tree(DirTree::new(root))
    }

    /// Any tree.
    pub fn tree(tree: impl SkillTree + 'static) -> Source {
        Source {
            tree: Arc::new(tree),
            qualifier: None,
        }
    }

    /// Lists this source's skills as `qualifier:name` when their name is already taken.
    pub fn with_qualifier(mut self, qualifier: impl Into<String>) -> Source {
        self.qualifier = Some(qualifier.into());
        self
    }
}

/// Where a skill directory is: the index of its source and its directory in that source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Index into the source list.
    pub source: usize,
    /// The skill directory's name in the source.
    pub dir: String,
    /// How it is shown (the path on disk, or `label:dir`).
    pub shown: String,
}

/// A skill that claimed an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// How it is addressed: its name, or `qualifier:name`.
    pub id: String,
    /// The stripped frontmatter `name`.
    pub name: String,
    /// The stripped `description`.
    pub description: String,
    /// Where it is.
    pub location: Location,
    /// `SKILL.md` or `skill.md`.
    pub file: &'static str,
    /// The `allowed-tools` rules it asks for (empty when absent or refused).
    pub allowed_tools: Vec<ToolRule>,
    /// Rules of the spec it breaks; a skill with problems is not offered.
    pub problems: Vec<String>,
    /// Things worth fixing that do not break it.
    pub warnings: Vec<String>,
}

impl Skill {
    /// Whether the skill may be offered to a model.
    pub fn is_offered(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A skill hidden by an earlier one of the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The id it would have had.
    pub id: String,
    /// Where it is.
    pub location: Location,
    /// Where the winner is.
    pub by: Location,
}

/// A skill directory that claims no name (unreadable, invalid YAML, no name or description).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unclaimed {
    /// Where it is.
    pub location: Location,
    /// What is wrong.
    pub problems: Vec<String>,
}

/// The result of [`discover`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Skills that claimed an id, in precedence order (broken ones included, with problems).
    pub skills: Vec<Skill>,
    /// Skills hidden by an earlier claim.
    pub shadowed: Vec<Shadowed>,
    /// Skill directories that claim no name.
    pub unclaimed: Vec<Unclaimed>,
    /// Source-level warnings (an unreadable source, a directory with only `Skill.md`).
    pub warnings: Vec<String>,
}

impl Discovery {
    /// The skills that may be offered: claimed and without problems.
    pub fn offered(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| s.is_offered())
    }

    /// The skill that won `id`, offered or not.
    pub fn get(&self, id: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.id == id)
    }
}

/// Scans every source, in order.
pub fn discover(sources: &[Source]) -> Discovery {
    let mut out = Discovery::default();
    for (index, source) in sources.iter().enumerate() {
        let tree = source.tree.as_ref();
        let mut dirs = match tree.list("") {
            Ok(entries) => entries,
            Err(e) => {
                out.warnings.push(format!(
                    "`{}`: cannot list the source: {e}",
                    tree.display("")
                ));
                continue;
            }
        };
        dirs.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in dirs {
            if entry.name.starts_with('.') {
                continue;
            }
            let location = Location {
                source: index,
                dir: entry.name.clone(),
                shown: tree.display(&entry.name),
            };
            match entry.kind {
                EntryKind::Dir => {}
                EntryKind::Symlink => {
                    out.unclaimed.push(Unclaimed {
                        location,
                        problems: vec![
                            "the skill directory is a symbolic link (never followed)".into(),
                        ],
                    });
                    continue;
                }
                _ => continue,
            }
            let Some(found) = scan_dir(tree, &entry.name, &location, &mut out.warnings) else {
                continue;
            };
            match found {
                Scanned::Unclaimed(problems) => {
                    out.unclaimed.push(Unclaimed { location, problems })
                }
                Scanned::Claimed(skill) => claim(&mut out, *skill, source.qualifier.as_deref()),
            }
        }
    }
    out
}

fn claim(out: &mut Discovery, mut skill: Skill, qualifier: Option<&str>) {
    let winner = |out: &Discovery, id: &str| {
        out.skills
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.location.clone())
    };
    let Some(by) = winner(out, &skill.name) else {
        skill.id = skill.name.clone();
        out.skills.push(skill);
        return;
    };
    if let Some(q) = qualifier {
        let id = format!("{q}:{}", skill.name);
        match winner(out, &id) {
            None => {
                skill.id = id;
                out.skills.push(skill);
            }
            Some(by) => out.shadowed.push(Shadowed {
                id,
                location: skill.location,
                by,
            }),
        }
        return;
    }
    out.shadowed.push(Shadowed {
        id: skill.name,
        location: skill.location,
        by,
    });
}

enum Scanned {
    Claimed(Box<Skill>),
    Unclaimed(Vec<String>),
}

/// One directory: `None` when it holds no skill file.
fn scan_dir(
    tree: &dyn SkillTree,
    dir: &str,
    location: &Location,
    source_warnings: &mut Vec<String>,
) -> Option<Scanned> {
    let entries = match tree.list(dir) {
        Ok(entries) => entries,
        Err(e) => return Some(Scanned::Unclaimed(vec![format!("cannot list: {e}")])),
    };
    let exact = SKILL_MD_NAMES
        .iter()
        .find_map(|want| entries.iter().find(|e| e.name == *want));
    let odd: Vec<&str> = entries
        .iter()
        .filter(|e| {
            python::lower(&e.name) == "skill.md" && !SKILL_MD_NAMES.contains(&e.name.as_str())
        })
        .map(|e| e.name.as_str())
        .collect();
    let mut warnings: Vec<String> = odd
        .iter()
        .map(|name| format!("`{name}` is not a skill file; name it `SKILL.md`"))
        .collect();
    let Some(file) = exact else {
        if !warnings.is_empty() {
            source_warnings.extend(
                warnings
                    .into_iter()
                    .map(|w| format!("`{}`: {w}", location.shown)),
            );
        }
        return None;
    };
    let file_name: &'static str = if file.name == SKILL_MD_NAMES[0] {
        SKILL_MD_NAMES[0]
    } else {
        SKILL_MD_NAMES[1]
    };
    match file.kind {
        EntryKind::File => {}
        EntryKind::Symlink => {
            return Some(Scanned::Unclaimed(vec![format!(
                "`{file_name}` is a symbolic link (never followed)"
            )]));
        }
        _ => {
            return Some(Scanned::Unclaimed(vec![format!(
                "`{file_name}` is not a regular file"
            )]));
        }
    }
    let bytes = match tree.read(&format!("{dir}/{file_name}")) {
        Ok(bytes) => bytes,
        Err(e) => {
            return Some(Scanned::Unclaimed(vec![format!(
                "cannot read `{file_name}`: {e}"
            )]));
        }
    };
    let text = match skill_file::decode(&bytes) {
        Ok(text) => text,
        Err((byte, offset)) => {
            return Some(Scanned::Unclaimed(vec![format!(
                "`{file_name}` is not valid UTF-8: byte 0x{byte:02x} at offset {offset}"
            )]));
        }
    };
    let map = match skill_file::parse(&text) {
        Ok(map) => map,
        Err(e) => return Some(Scanned::Unclaimed(vec![e.to_string()])),
    };
    let non_blank = |key: &str| match skill_file::get(&map, key) {
        Some(Value::Str(s)) if !python::strip(s).is_empty() => Some(python::strip(s).to_owned()),
        _ => None,
    };
    let (Some(name), Some(description)) = (non_blank("name"), non_blank("description")) else {
        let problems = ["name", "description"]
            .iter()
            .filter_map(|key| match skill_file::get(&map, key) {
                None => Some(format!("Missing required field in frontmatter: {key}")),
                Some(_) if non_blank(key).is_none() => {
                    Some(format!("Field '{key}' must be a non-empty string"))
                }
                Some(_) => None,
            })
            .collect();
        return Some(Scanned::Unclaimed(problems));
    };
    let mut problems = validate::validate_metadata(&map, dir);
    let allowed_tools = match skill_file::get(&map, "allowed-tools") {
        None => Vec::new(),
        Some(Value::Str(s)) => match allowed_tools::parse(s) {
            Ok(rules) => rules,
            Err(e) => {
                problems.push(format!("allowed-tools: {e} [{}]", e.code()));
                Vec::new()
            }
        },
        Some(_) => {
            problems.push("allowed-tools: must be a space-separated string".into());
            Vec::new()
        }
    };
    let body_lines = body(&text).lines().count();
    if body_lines > MAX_BODY_LINES {
        warnings.push(format!(
            "the body is {body_lines} lines; the spec recommends under {MAX_BODY_LINES}"
        ));
    }
    Some(Scanned::Claimed(Box::new(Skill {
        id: String::new(),
        name,
        description,
        location: location.clone(),
        file: file_name,
        allowed_tools,
        problems,
        warnings,
    })))
}

/// The Markdown after the closing fence line.
fn body(text: &str) -> &str {
    let Ok(yaml) = skill_file::frontmatter(text) else {
        return "";
    };
    let closing = 3 + yaml.len();
    let rest = &text[closing..];
    rest.find('\n').map_or("", |i| &rest[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_follows_the_closing_fence() {
        assert_eq!(
            body("---\nname: x\n---\nline 1\nline 2\n"),
            "line 1\nline 2\n"
        );
        assert_eq!(body("---\n---"), "");
    }
}
