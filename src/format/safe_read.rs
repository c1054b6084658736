//! Reading a bundle directory from disk, safely, into a [`FileSet`].
//!
//! The reader never trusts a path string twice and never follows a symbolic link. It opens
//! everything through [`crate::format::untrusted_fs`] and adds the checks that need an inventory:
//!
//! - The root is opened once without following a link; every entry below is opened relative to
//!   its already-open parent directory, one name at a time ([`untrusted_fs::open_dir`],
//!   [`untrusted_fs::open_file`]).
//! - Each directory is inventoried first (a bounded listing, then `fstatat` with
//!   `AT_SYMLINK_NOFOLLOW` on every name): entries and depth are counted as they are seen, so an
//!   enormous tree is refused early, and symlinks and special files (FIFO, socket, device) are
//!   refused without ever being opened.
//! - Each entry is then opened and must be the object the inventory saw: the same device and
//!   inode (a file swapped, or replaced by another of the same size, is refused), and for a
//!   file the same size.
//! - Bytes are read up to one past the file's bound and no further: a size from `stat` is never
//!   trusted. A file whose length read differs from its inventory size is refused.
//!
//! The reader applies the path grammar and tree bounds through [`FileSetBuilder`] and returns
//! every problem it found; content rules are left to [`crate::format::bundle`]. [`read_file_beneath`]
//! reads one file below a directory the same way, for the guides.

use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Stat};

use crate::format::bundle_path::BundlePath;
use crate::format::code::ReadCode;
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits::Limits;
use crate::format::problem::{Problem, ProblemCode, Problems};
use crate::format::untrusted_fs::{self, UntrustedOpenError};

/// A failure that stops reading altogether (as opposed to a [`Problem`] with one entry).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleReadError {
    /// The bundle directory does not exist.
    #[error("`{}`: no such directory", crate::support::escape::path(.path))]
    NotFound {
        /// The directory given.
        path: PathBuf,
    },
    /// The path given is not a directory.
    #[error("`{}`: not a directory", crate::support::escape::path(.path))]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The path given is a symbolic link; bundles are read without following links.
    #[error("`{}`: is a symbolic link; give the real directory (links are never followed)", crate::support::escape::path(.path))]
    RootIsSymlink {
        /// The path given.
        path: PathBuf,
    },
    /// Any other I/O failure, with the path it happened on.
    #[error("`{}`: {source}", crate::support::escape::path(.path))]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
}

impl BundleReadError {
    /// Stable error code.
    pub fn code(&self) -> ReadCode {
        match self {
            BundleReadError::NotFound { .. } => ReadCode::NotFound,
            BundleReadError::NotADirectory { .. } => ReadCode::NotADirectory,
            BundleReadError::RootIsSymlink { .. } => ReadCode::RootIsSymlink,
            BundleReadError::Io { .. } => ReadCode::IoError,
        }
    }
}

/// The files read and every problem found on the way.
#[derive(Debug)]
pub struct ReadOutcome {
    /// The files that were admitted.
    pub files: FileSet,
    /// Path, bound and tree problems.
    pub problems: Problems,
}

/// Reads the bundle rooted at `root` under `chamvi` (for tests).
#[cfg(test)]
pub fn read_bundle_dir(root: &Path) -> Result<ReadOutcome, BundleReadError> {
    read_bundle_dir_under(root, crate::format::limits::CHAMVI)
}

/// A bundle directory read under the bounds of `limits`.
pub fn read_bundle_dir_under(root: &Path, limits: Limits) -> Result<ReadOutcome, BundleReadError> {
    read_bundle_dir_with_hook(root, limits, &mut |_, _| {})
}

/// A moment of the walk at which [`read_bundle_dir_with_hook`] calls its hook: the windows in
/// which a hostile writer would change the tree. For tests.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// An entry (a regular file or a directory) was inventoried and is about to be opened.
    BeforeOpen,
    /// A regular file was opened and its `fstat` checked against the inventory; it is about to
    /// be read.
    BeforeRead,
}

/// Like [`read_bundle_dir_under`], calling `hook` at each [`Moment`] of each entry, so a test can
/// attack one defence while the others have already passed (the readers pass a hook that does
/// nothing).
pub fn read_bundle_dir_with_hook(
    root: &Path,
    limits: Limits,
    hook: &mut dyn FnMut(Moment, &BundlePath),
) -> Result<ReadOutcome, BundleReadError> {
    let dir = untrusted_fs::open_root(root).map_err(|e| {
        let path = root.to_owned();
        match e {
            UntrustedOpenError::NotFound => BundleReadError::NotFound { path },
            UntrustedOpenError::Symlink => BundleReadError::RootIsSymlink { path },
            UntrustedOpenError::NotADirectory | UntrustedOpenError::NotRegular => {
                BundleReadError::NotADirectory { path }
            }
            UntrustedOpenError::Io(errno) => BundleReadError::Io {
                path,
                source: errno.into(),
            },
        }
    })?;
    let mut walk = Walk {
        root,
        builder: FileSetBuilder::with_limits(limits),
        hook,
    };
    walk.directory(&dir, None)?;
    let (files, problems) = walk.builder.finish();
    Ok(ReadOutcome { files, problems })
}

/// One entry of a directory as the inventory saw it.
struct DirEntry {
    path: BundlePath,
    name: Box<CStr>,
    stat: Stat,
}

struct Walk<'a> {
    root: &'a Path,
    builder: FileSetBuilder,
    hook: &'a mut dyn FnMut(Moment, &BundlePath),
}

impl Walk<'_> {
    fn io_error(&self, rel: Option<&BundlePath>, source: std::io::Error) -> BundleReadError {
        let path = match rel {
            Some(rel) => self.root.join(rel.as_str()),
            None => self.root.to_owned(),
        };
        BundleReadError::Io { path, source }
    }

    /// Inventories `dir` (at `rel`, `None` for the root), then reads its files and descends.
    fn directory(
        &mut self,
        dir: &OwnedFd,
        rel: Option<&BundlePath>,
    ) -> Result<(), BundleReadError> {
        // One past the bound is enough to refuse: never hold an enormous listing.
        let listing = untrusted_fs::list(dir, self.builder.limits().entries())
            .map_err(|e| self.io_error(rel, e.into()))?;

        // Inventory: count, name-check and lstat every entry before opening any.
        let mut entries = Vec::with_capacity(listing.names.len());
        for name in listing.names {
            if !self.builder.count_entry() {
                return Ok(());
            }
            let Some(path) = self.entry_path(rel, &name) else {
                continue;
            };
            let stat = match untrusted_fs::stat_at(dir, &name) {
                Ok(Some(stat)) => stat,
                // Vanished since the listing: it is not part of the bundle.
                Ok(None) => continue,
                Err(e) => return Err(self.io_error(Some(&path), e.into())),
            };
            match untrusted_fs::kind(&stat) {
                FileType::RegularFile | FileType::Directory => {
                    entries.push(DirEntry { path, name, stat })
                }
                FileType::Symlink => self.builder.refuse(Problem::error(
                    ProblemCode::Symlink,
                    Some(path.as_str()),
                    "symbolic links are not allowed in a bundle (never followed)",
                )),
                other => self.builder.refuse(Problem::error(
                    ProblemCode::SpecialFile,
                    Some(path.as_str()),
                    format!(
                        "{} is not a regular file or directory (never opened)",
                        describe(other)
                    ),
                )),
            }
        }
        // A listing cut short (`listing.over`) never gets here: the root and every name read
        // were counted, one more than the bound.

        // Read: files first, in name order, then the subdirectories.
        for entry in &entries {
            if untrusted_fs::kind(&entry.stat) == FileType::RegularFile {
                self.file(dir, entry)?;
            }
        }
        for entry in &entries {
            if untrusted_fs::kind(&entry.stat) == FileType::Directory {
                if self.builder.is_exhausted() {
                    return Ok(());
                }
                if !self.builder.enter_directory(&entry.path) {
                    continue;
                }
                (self.hook)(Moment::BeforeOpen, &entry.path);
                let opened = untrusted_fs::open_dir(dir, &entry.name).and_then(|fd| {
                    Ok((rustix::fs::fstat(&fd).map_err(UntrustedOpenError::Io)?, fd))
                });
                let Some((_, sub)) = self.checked(entry, opened)? else {
                    continue;
                };
                self.directory(&sub, Some(&entry.path))?;
            }
        }
        Ok(())
    }

    /// The bundle path of `name` in `rel`, or `None` (with a problem recorded) if refused.
    fn entry_path(&mut self, rel: Option<&BundlePath>, name: &CStr) -> Option<BundlePath> {
        let Ok(text) = name.to_str() else {
            let lossy = name.to_string_lossy();
            let shown = match rel {
                Some(rel) => format!("{rel}/{lossy}"),
                None => lossy.into_owned(),
            };
            self.builder.refuse(Problem::error(
                ProblemCode::PathNotUtf8,
                Some(&shown),
                "file names must be valid UTF-8",
            ));
            return None;
        };
        let path = match rel {
            Some(rel) => rel.join(text),
            None => BundlePath::top(text),
        };
        match path {
            Ok(path) => Some(path),
            Err(refusal) => {
                let shown = match rel {
                    Some(rel) => format!("{rel}/{text}"),
                    None => text.to_owned(),
                };
                self.builder
                    .refuse(Problem::error(refusal.code, Some(&shown), refusal.reason));
                None
            }
        }
    }

    /// Checks that what was opened for an inventoried entry is still the object the inventory
    /// saw (the same device and inode). `None` when it changed (a problem is recorded).
    fn checked(
        &mut self,
        entry: &DirEntry,
        opened: Result<(Stat, OwnedFd), UntrustedOpenError>,
    ) -> Result<Option<(Stat, OwnedFd)>, BundleReadError> {
        match opened {
            Ok((now, fd)) if untrusted_fs::same_file(&entry.stat, &now) => Ok(Some((now, fd))),
            Ok(_) => {
                self.changed(entry, "it was replaced by another object");
                Ok(None)
            }
            Err(UntrustedOpenError::Io(errno)) => {
                Err(self.io_error(Some(&entry.path), errno.into()))
            }
            Err(_) => {
                self.changed(entry, "it was replaced (by a link or other object)");
                Ok(None)
            }
        }
    }

    fn changed(&mut self, entry: &DirEntry, why: &str) {
        self.builder.refuse(Problem::error(
            ProblemCode::ChangedDuringRead,
            Some(entry.path.as_str()),
            format!("{why} between inventory and read; refusing it"),
        ));
    }

    fn file(&mut self, dir: &OwnedFd, entry: &DirEntry) -> Result<(), BundleReadError> {
        let Some(limit) = self.builder.begin_file(&entry.path) else {
            return Ok(());
        };
        (self.hook)(Moment::BeforeOpen, &entry.path);
        let opened = untrusted_fs::open_file(dir, &entry.name).map(|(fd, stat)| (stat, fd));
        let Some((now, fd)) = self.checked(entry, opened)? else {
            return Ok(());
        };
        if now.st_size != entry.stat.st_size {
            self.changed(entry, "its size changed");
            return Ok(());
        }
        (self.hook)(Moment::BeforeRead, &entry.path);
        let expected = u64::try_from(entry.stat.st_size).unwrap_or(0);
        let bytes = untrusted_fs::read_at_most(fd, limit, expected)
            .map_err(|e| self.io_error(Some(&entry.path), e))?;
        let got = bytes.len() as u64;
        // Under the limit, the read reached the end of the file: it must be the size listed.
        if got < limit && got != expected {
            self.builder.refuse(Problem::error(
                ProblemCode::ChangedDuringRead,
                Some(entry.path.as_str()),
                format!("its size changed while reading ({expected} bytes listed, {got} read); refusing it"),
            ));
            return Ok(());
        }
        self.builder.add_file(entry.path.clone(), bytes);
        Ok(())
    }
}

/// Why [`read_file_beneath`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BeneathError {
    /// A component does not exist.
    #[error("no such file")]
    NotFound,
    /// A component is a symbolic link (never followed).
    #[error("a symbolic link is on the path")]
    Symlink,
    /// The path names something other than a regular file, or a directory is not one.
    #[error("not a regular file")]
    NotRegular,
    /// The file has other hard links (it may be a file from elsewhere, linked in).
    #[error("the file has other hard links")]
    HardLink,
    /// The file holds more than the cap.
    #[error("larger than {0} bytes")]
    TooLarge(u64),
    /// Any other failure.
    #[error("{0}")]
    Io(std::io::Error),
}

impl From<UntrustedOpenError> for BeneathError {
    fn from(e: UntrustedOpenError) -> BeneathError {
        match e {
            UntrustedOpenError::NotFound => BeneathError::NotFound,
            UntrustedOpenError::Symlink => BeneathError::Symlink,
            UntrustedOpenError::NotADirectory | UntrustedOpenError::NotRegular => {
                BeneathError::NotRegular
            }
            UntrustedOpenError::Io(errno) => BeneathError::Io(errno.into()),
        }
    }
}

/// Reads the regular file at `relative` (a checked bundle-style path) under the directory `root`,
/// one component at a time without following any link, so the file read is exactly
/// `root/relative` on disk. Reads at most `cap` bytes; a larger file is refused, and so is a
/// file with other hard links.
pub fn read_file_beneath(
    root: &Path,
    relative: &BundlePath,
    cap: u64,
) -> Result<Vec<u8>, BeneathError> {
    let segments: Vec<&str> = relative.as_str().split('/').collect();
    let (file, parents) = segments.split_last().ok_or(BeneathError::NotFound)?;
    let dir = untrusted_fs::open_dir_path(root, parents.iter().copied())?;
    let (fd, stat) = untrusted_fs::open_file(&dir, &untrusted_fs::component(file)?)?;
    if stat.st_nlink > 1 {
        return Err(BeneathError::HardLink);
    }
    let hint = u64::try_from(stat.st_size).unwrap_or(0);
    untrusted_fs::read_capped(fd, cap, hint).map_err(|e| match e {
        untrusted_fs::UntrustedReadError::TooLarge { cap } => BeneathError::TooLarge(cap),
        untrusted_fs::UntrustedReadError::Io(e) => BeneathError::Io(e),
    })
}

fn describe(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "an entry of unknown type",
    }
}

crate::support::error_code::coded_by_code!(BundleReadError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_named_in_refusals() {
        let cases = [
            (FileType::Fifo, "a FIFO"),
            (FileType::Socket, "a socket"),
            (FileType::CharacterDevice, "a character device"),
            (FileType::BlockDevice, "a block device"),
            (FileType::Unknown, "an entry of unknown type"),
        ];
        for (kind, want) in cases {
            assert_eq!(describe(kind), want);
        }
    }
}

#[cfg(test)]
#[path = "safe_read_tests.rs"]
mod boundary_tests;
