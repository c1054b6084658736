//! The working directory a helper runs in.
//!
//! A helper runs in the directory its skill's verified bytes were read from (a corpus
//! generation, never `current`, or a local bundle's folder), so that it finds the skill's other
//! files by relative paths (`assets/example.csv`). The helper's own bytes come from memory, on
//! stdin; the directory is the one thing the run still needs from the disk.
//!
//! A server that does not `--watch` keeps the snapshots it loaded, and two later `prepare`s
//! remove the generation they were read from. Then, rather than fail, the helper runs in a
//! **private copy**: a fresh temporary directory (mode 0700, under `TMPDIR`) holding every file
//! of the skill written from the snapshot's verified bytes — the bytes the server still serves —
//! removed once the run is over. Only when one of the skill's files is not held in memory (a
//! raised limits profile keeps large and binary files on disk, and they are gone with their
//! directory) does the call fail, `workdir_missing`, naming the directory that is gone. A held
//! descriptor of the old directory would not do: removing a generation empties its folders
//! first, so a helper started there would find none of the skill's files.

use std::path::{Path, PathBuf};

use crate::runtime::snapshot::Snapshot;

/// Where one run happens.
#[derive(Debug)]
pub enum WorkDir<'a> {
    /// The directory the skill was verified from.
    Skill(&'a Path),
    /// A private copy of the skill's verified files, removed when dropped.
    Copy(tempfile::TempDir),
}

impl WorkDir<'_> {
    /// The directory to run in.
    pub fn path(&self) -> &Path {
        match self {
            WorkDir::Skill(dir) => dir,
            WorkDir::Copy(copy) => copy.path(),
        }
    }
}

/// Why a helper has no directory to run in.
#[derive(Debug, thiserror::Error)]
pub enum WorkDirError {
    /// The skill was not read from a directory (a host's source): helpers need one.
    #[error("the skill was not read from a directory; helpers need one to run in")]
    NoDirectory,
    /// The skill's directory is gone and a file of the skill is held only there.
    #[error(
        "the skill's directory `{dir}` is gone (a later `prepare` removed the generation this \
         catalogue was loaded from) and its file `{file}` was kept only there; reload the \
         catalogue (restart the server, or serve with `--watch`)"
    )]
    Gone {
        /// The directory, escaped.
        dir: String,
        /// The first file not held in memory, escaped.
        file: String,
    },
    /// The skill's directory is gone and the private copy could not be written.
    #[error(
        "the skill's directory `{dir}` is gone (a later `prepare` removed the generation this \
         catalogue was loaded from) and a private copy could not be written: {reason}"
    )]
    Copy {
        /// The directory, escaped.
        dir: String,
        /// Why, escaped.
        reason: String,
    },
    /// The skill's directory went away while the helper was being started.
    #[error(
        "the skill's directory `{dir}` was removed while the helper was starting (a `prepare` \
         removed its generation); call again"
    )]
    Vanished {
        /// The directory, escaped.
        dir: String,
    },
}

/// The directory to run `skill`'s helper in: its own while it exists, else a private copy.
pub fn choose(skill: &Snapshot) -> Result<WorkDir<'_>, WorkDirError> {
    let dir = skill.dir().ok_or(WorkDirError::NoDirectory)?;
    if dir.is_dir() {
        return Ok(WorkDir::Skill(dir));
    }
    copy(skill, dir).map(WorkDir::Copy)
}

/// The error for a start that failed in `workdir` because the directory went away meanwhile;
/// `None` when it is still there (the interpreter is what failed).
pub fn vanished(workdir: &WorkDir<'_>) -> Option<WorkDirError> {
    match workdir {
        WorkDir::Skill(dir) if !dir.is_dir() => Some(WorkDirError::Vanished { dir: shown(dir) }),
        _ => None,
    }
}

/// Writes every file of `skill` (its verified bytes, from memory) into a new private
/// temporary directory; `gone` is the directory that no longer holds them.
fn copy(skill: &Snapshot, gone: &Path) -> Result<tempfile::TempDir, WorkDirError> {
    let failed = |e: std::io::Error| WorkDirError::Copy {
        dir: shown(gone),
        reason: crate::support::escape::text(&e.to_string()).to_string(),
    };
    // Every file is checked before anything is written.
    let mut files = Vec::with_capacity(skill.files().len());
    for file in skill.files() {
        match skill.read(file) {
            Ok(bytes) => files.push((file.path(), bytes)),
            Err(_) => {
                return Err(WorkDirError::Gone {
                    dir: shown(gone),
                    file: crate::support::escape::text(file.path()).to_string(),
                });
            }
        }
    }
    let copy = tempfile::Builder::new()
        .prefix("skillfold-helper-")
        .tempdir()
        .map_err(failed)?;
    for (path, bytes) in files {
        // A verified bundle path: relative, `/`-separated, no `.` or `..` segment.
        let target: PathBuf = copy.path().join(path);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent).map_err(failed)?;
        }
        fs_err::write(&target, &bytes).map_err(failed)?;
    }
    Ok(copy)
}

/// A directory as messages show it.
fn shown(dir: &Path) -> String {
    crate::support::escape::path(dir).to_string()
}
