//! Discovered skills: a read-only folder of skills that are found, not pinned (`guides` in the
//! descriptor, or `SKILLFOLD_SKILL_GUIDES_DIR`).
//!
//! The folder is scanned without following symbolic links, at most 8 levels below its root.
//! A directory is one skill — its id is the directory's name — when it holds either a portable
//! `SKILL.md` whose frontmatter has a non-empty string `name` and `description`, or a legacy
//! `skill.yml` + `SKILL.md` pair (the `skill.yml` wins; it is read as YAML, with a line-based
//! `key: value` fallback for files that are not strict YAML). The scan does not descend into a
//! skill. `SKILL.md` and `skill.yml` are read once, at discovery, at most 256 KiB each.
//!
//! Two directories with the same name are both dropped as ambiguous; a malformed skill is skipped
//! alone; both are reported (`--verbose`). Frontmatter never grants permissions: a discovered
//! skill is text to read through `skill_read_reference`, nothing else.
//!
//! Nothing found here reaches a terminal raw: a directory whose name holds a character that human
//! output escapes (a control, a bidi override, a zero-width mark — [`escape::needs_escape`]) is
//! skipped unscanned, so every id and location is plain text; a skill's `name` and `description`
//! are kept escaped as [`escape::text`] shows them (`\u{1b}` for ESC), since frontmatter may
//! spell any character (`"\e[31m"` in YAML); and the reports of what was dropped or skipped are
//! escaped too.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use crate::format::bundle_path::BundlePath;
use crate::format::safe_read::{self, BeneathError};
use crate::format::untrusted_fs;
use crate::format::yaml::{self, NodeKind};
use crate::support::escape;

/// The environment variable naming the folder (it replaces the descriptor's `guides`).
pub const ENV: &str = "SKILLFOLD_SKILL_GUIDES_DIR";
/// How deep below the root skills are looked for.
pub const MAX_DEPTH: usize = 8;
/// The most directories a scan visits, and the most skills it keeps: a guides folder is a
/// curated set, and a huge tree is not scanned whole.
pub const MAX_DIRECTORIES: usize = 10_000;
/// See [`MAX_DIRECTORIES`].
pub const MAX_GUIDES: usize = 1_000;
/// The most names one directory of the folder may hold; a directory with more is skipped
/// (reported) without being listed whole.
pub const MAX_DIRECTORY_ENTRIES: usize = 10_000;
/// The largest `SKILL.md`, `skill.yml` or reference served.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

/// How a guide is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuideKind {
    /// `SKILL.md` alone.
    Portable,
    /// `skill.yml` beside `SKILL.md`.
    Legacy,
}

impl GuideKind {
    /// `portable` or `legacy`.
    pub fn as_str(self) -> &'static str {
        match self {
            GuideKind::Portable => "portable",
            GuideKind::Legacy => "legacy",
        }
    }
}

impl PartialEq<&str> for GuideKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guide {
    /// Its id: the directory's name.
    pub id: String,
    /// The name it gives itself, escaped for display.
    pub name: String,
    /// Its description, escaped for display.
    pub description: String,
    /// `portable` (`SKILL.md`) or `legacy` (`skill.yml` + `SKILL.md`).
    pub kind: GuideKind,
    /// Its directory relative to the root.
    pub(crate) relative: BundlePath,
    /// The root it was found under.
    pub(crate) root: PathBuf,
    /// `SKILL.md` as read at discovery.
    pub(crate) skill_md: String,
}

impl Guide {
    /// The directory on disk.
    pub fn dir(&self) -> PathBuf {
        self.root.join(self.relative.as_str())
    }

    /// Reads `path` (already checked) below this skill's directory, never through a link.
    pub(crate) fn read(&self, path: &BundlePath) -> Result<Vec<u8>, BeneathError> {
        let full = self.relative.join_path(path);
        safe_read::read_file_beneath(&self.root, &full, MAX_FILE_BYTES)
    }
}

/// The outcome of a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// The skills found, sorted by id.
    pub guides: Vec<Guide>,
    /// Ids dropped as ambiguous, with where they were.
    pub dropped: Vec<String>,
    /// Directories skipped, with why.
    pub skipped: Vec<String>,
}

impl Discovery {
    /// One skill by id.
    pub fn get(&self, id: &str) -> Option<&Guide> {
        self.guides.iter().find(|g| g.id == id)
    }

    /// Removes skills whose id is taken (by an approved bundle), reporting them.
    pub fn without(mut self, taken: &[&str]) -> Discovery {
        let (kept, removed): (Vec<Guide>, Vec<Guide>) = self
            .guides
            .into_iter()
            .partition(|g| !taken.contains(&g.id.as_str()));
        for g in removed {
            self.dropped.push(format!(
                "`{}` ({}): an approved skill has this name",
                g.id, g.relative
            ));
        }
        self.guides = kept;
        self
    }
}

/// The folder in force: the environment's, else the descriptor's.
pub fn effective_root(descriptor: Option<&Path>) -> Option<PathBuf> {
    match std::env::var_os(ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => descriptor.map(Path::to_path_buf),
    }
}

/// Scans `root`.
pub fn discover(root: &Path) -> std::io::Result<Discovery> {
    let fd = untrusted_fs::open_root(root).map_err(|e| {
        let message = format!("`{}`: {e}", escape::path(root));
        std::io::Error::new(e.into_io().kind(), message)
    })?;
    let mut found: Vec<(BundlePath, bool)> = Vec::new();
    let mut skipped = Vec::new();
    let mut budget = MAX_DIRECTORIES;
    walk(&fd, None, 0, &mut budget, &mut found, &mut skipped);
    if budget == 0 {
        skipped.push(format!(
            "more than {MAX_DIRECTORIES} directories: the rest was not scanned"
        ));
    }
    if found.len() > MAX_GUIDES {
        skipped.push(format!(
            "more than {MAX_GUIDES} skills: only the first {MAX_GUIDES} are kept"
        ));
        found.truncate(MAX_GUIDES);
    }

    let mut by_id: BTreeMap<String, Vec<Guide>> = BTreeMap::new();
    for (relative, legacy) in found {
        match load(root, &relative, legacy) {
            Ok(guide) => by_id.entry(guide.id.clone()).or_default().push(guide),
            Err(why) => skipped.push(format!("{relative}: {why}")),
        }
    }
    let mut discovery = Discovery {
        skipped,
        ..Discovery::default()
    };
    for (id, mut guides) in by_id {
        if guides.len() == 1 {
            discovery.guides.extend(guides.pop());
        } else {
            let places: Vec<String> = guides.iter().map(|g| g.relative.to_string()).collect();
            discovery
                .dropped
                .push(format!("`{id}` is ambiguous: {}", places.join(", ")));
        }
    }
    Ok(discovery)
}

fn walk(
    dir: &OwnedFd,
    rel: Option<&BundlePath>,
    depth: usize,
    budget: &mut usize,
    found: &mut Vec<(BundlePath, bool)>,
    skipped: &mut Vec<String>,
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let shown = || rel.map_or("(root)".into(), ToString::to_string);
    let listing = match untrusted_fs::list(dir, MAX_DIRECTORY_ENTRIES) {
        Ok(listing) if !listing.over => listing,
        Ok(_) => {
            skipped.push(format!(
                "{}: more than {MAX_DIRECTORY_ENTRIES} entries, not scanned",
                shown()
            ));
            return;
        }
        Err(_) => return,
    };
    let mut subdirs: Vec<(String, Box<std::ffi::CStr>)> = Vec::new();
    let (mut has_skill_md, mut has_skill_yml) = (false, false);
    for name in listing.names {
        let Ok(text) = name.to_str() else { continue };
        let Ok(Some(stat)) = untrusted_fs::stat_at(dir, &name) else {
            continue;
        };
        match (untrusted_fs::kind(&stat), text) {
            (FileType::RegularFile, "SKILL.md") => has_skill_md = true,
            (FileType::RegularFile, "skill.yml") => has_skill_yml = true,
            (FileType::Directory, _) if text.chars().any(escape::needs_escape) => {
                skipped.push(format!(
                    "{}: the directory `{}` has a name that is shown escaped, not scanned",
                    shown(),
                    escape::text(text)
                ));
            }
            (FileType::Directory, _) if !text.starts_with('.') => {
                subdirs.push((text.to_owned(), name.clone()))
            }
            _ => {}
        }
    }
    if let Some(rel) = rel
        && has_skill_md
    {
        found.push((rel.clone(), has_skill_yml));
        return;
    }
    if depth >= MAX_DEPTH {
        if !subdirs.is_empty() {
            skipped.push(format!(
                "{}: deeper than {MAX_DEPTH} levels, not scanned",
                shown()
            ));
        }
        return;
    }
    for (text, name) in subdirs {
        let child = match rel {
            Some(rel) => rel.join(&text),
            None => BundlePath::top(&text),
        };
        let Ok(child) = child else { continue };
        if let Ok(sub) = untrusted_fs::open_dir(dir, &name) {
            walk(&sub, Some(&child), depth + 1, budget, found, skipped);
        }
    }
}

// A String: the reason a folder is skipped, only listed in the discovery's `skipped`.
fn read_text(root: &Path, path: &BundlePath) -> Result<String, String> {
    let bytes = safe_read::read_file_beneath(root, path, MAX_FILE_BYTES)
        .map_err(|e| format!("{}: {e}", path.file_name()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.file_name()))
}

// A String: the reason a folder is skipped, only listed in the discovery's `skipped`.
fn load(root: &Path, relative: &BundlePath, legacy: bool) -> Result<Guide, String> {
    let skill_md_path =
        relative.join_path(&BundlePath::top("SKILL.md").map_err(|e| e.to_string())?);
    let skill_md = read_text(root, &skill_md_path)?;
    let fields = if legacy {
        let yml_path =
            relative.join_path(&BundlePath::top("skill.yml").map_err(|e| e.to_string())?);
        let yml = read_text(root, &yml_path)?;
        name_and_description(&yml).or_else(|| line_fields(&yml))
    } else {
        crate::format::frontmatter::layout(&skill_md)
            .ok()
            .and_then(|l| name_and_description(&skill_md[l.frontmatter]))
    };
    let (name, description) =
        fields.ok_or_else(|| "no non-empty string `name` and `description`".to_owned())?;
    Ok(Guide {
        id: relative.file_name().to_owned(),
        name: escape::text(&name).to_string(),
        description: escape::text(&description).to_string(),
        kind: if legacy {
            GuideKind::Legacy
        } else {
            GuideKind::Portable
        },
        relative: relative.clone(),
        root: root.to_owned(),
        skill_md,
    })
}

/// `name` and `description` of a YAML mapping, both non-empty strings.
fn name_and_description(yaml_text: &str) -> Option<(String, String)> {
    let root = yaml::parse(yaml_text).ok()??;
    let NodeKind::Mapping { entries, .. } = &root.kind else {
        return None;
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_scalar().map(|(v, _)| v) == Some(key))
            .and_then(|(_, v)| v.as_scalar())
            .map(|(v, _)| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    Some((get("name")?, get("description")?))
}

/// The lenient reading of a legacy `skill.yml`: `key: value` lines, quotes removed.
fn line_fields(text: &str) -> Option<(String, String)> {
    let get = |key: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| {
                v.trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .trim()
                    .to_owned()
            })
            .filter(|v| !v.is_empty())
    };
    Some((get("name")?, get("description")?))
}

#[cfg(test)]
#[path = "guides_tests.rs"]
mod boundary_tests;
