//! Reading a bundle directory from disk, safely, into a [`FileSet`].
//!
//! The reader never trusts a path string twice and never follows a symbolic link:
//!
//! - The root is opened once with `O_NOFOLLOW | O_DIRECTORY`; every entry below is opened relative
//!   to its already-open parent directory, one name at a time, with `openat2` and
//!   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the kernel offers it,
//!   else `openat` with `O_NOFOLLOW` (a single name with `O_NOFOLLOW` cannot traverse a link).
//! - Each directory is inventoried first (`fstatat` with `AT_SYMLINK_NOFOLLOW` on every name):
//!   entries and depth are counted as they are seen, so an enormous tree is refused early, and
//!   symlinks and special files (FIFO, socket, device) are refused without ever being opened.
//! - Regular files are then opened with `O_NONBLOCK` (a FIFO swapped in cannot block the open),
//!   the type is checked with `fstat` on the open descriptor, and the device, inode and size must
//!   equal the inventory's — a file swapped, replaced by a link, or resized in between is refused.
//! - Bytes are read up to one past the file's bound and no further: a size from `stat` is never
//!   trusted. A file whose length read differs from its inventory size is refused.
//!
//! The reader applies the path grammar and tree bounds through [`FileSetBuilder`] and returns
//! every problem it found; content rules are left to [`crate::bundle`].

use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use crate::bundle_path::BundlePath;
use crate::file_set::{FileSet, FileSetBuilder};
use crate::problem::{Problem, ProblemCode, Problems};

/// A failure that stops reading altogether (as opposed to a [`Problem`] with one entry).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The bundle directory does not exist.
    #[error("`{}`: no such directory", crate::escape::path(.path))]
    NotFound {
        /// The directory given.
        path: PathBuf,
    },
    /// The path given is not a directory.
    #[error("`{}`: not a directory", crate::escape::path(.path))]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The path given is a symbolic link; bundles are read without following links.
    #[error("`{}`: is a symbolic link; give the real directory (links are never followed)", crate::escape::path(.path))]
    RootIsSymlink {
        /// The path given.
        path: PathBuf,
    },
    /// Any other I/O failure, with the path it happened on.
    #[error("`{}`: {source}", crate::escape::path(.path))]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The system error.
        source: std::io::Error,
    },
}

impl ReadError {
    /// Stable error code.
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::NotFound { .. } => "not_found",
            ReadError::NotADirectory { .. } => "not_a_directory",
            ReadError::RootIsSymlink { .. } => "root_is_symlink",
            ReadError::Io { .. } => "io_error",
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

/// Reads the bundle rooted at `root`.
pub fn read_bundle_dir(root: &Path) -> Result<ReadOutcome, ReadError> {
    read_bundle_dir_with_hook(root, &mut |_| {})
}

/// Like [`read_bundle_dir`], calling `before_open` between the inventory of each regular file and
/// the moment it is opened — the window in which a hostile writer would swap it. For tests.
#[doc(hidden)]
pub fn read_bundle_dir_with_hook(
    root: &Path,
    before_open: &mut dyn FnMut(&BundlePath),
) -> Result<ReadOutcome, ReadError> {
    let dir = open_root(root)?;
    let mut walk = Walk {
        root,
        builder: FileSetBuilder::new(),
        before_open,
    };
    walk.directory(&dir, None)?;
    let (files, problems) = walk.builder.finish();
    Ok(ReadOutcome { files, problems })
}

fn open_root(root: &Path) -> Result<OwnedFd, ReadError> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::open(root, flags, Mode::empty()).map_err(|errno| {
        let path = root.to_owned();
        match errno {
            Errno::NOENT => ReadError::NotFound { path },
            Errno::LOOP => ReadError::RootIsSymlink { path },
            Errno::NOTDIR => match rustix::fs::lstat(root) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                    ReadError::RootIsSymlink { path }
                }
                _ => ReadError::NotADirectory { path },
            },
            other => ReadError::Io {
                path,
                source: other.into(),
            },
        }
    })
}

/// One entry of a directory as the inventory saw it.
struct Entry {
    path: BundlePath,
    name: Box<CStr>,
    stat: Stat,
}

struct Walk<'a> {
    root: &'a Path,
    builder: FileSetBuilder,
    before_open: &'a mut dyn FnMut(&BundlePath),
}

impl Walk<'_> {
    fn io_error(&self, rel: Option<&BundlePath>, errno: Errno) -> ReadError {
        let path = match rel {
            Some(rel) => self.root.join(rel.as_str()),
            None => self.root.to_owned(),
        };
        ReadError::Io {
            path,
            source: errno.into(),
        }
    }

    /// Inventories `dir` (at `rel`, `None` for the root), then reads its files and descends.
    fn directory(&mut self, dir: &OwnedFd, rel: Option<&BundlePath>) -> Result<(), ReadError> {
        let mut names: Vec<Box<CStr>> = Vec::new();
        let mut reader = rustix::fs::Dir::read_from(dir).map_err(|e| self.io_error(rel, e))?;
        while let Some(entry) = reader.read() {
            let entry = entry.map_err(|e| self.io_error(rel, e))?;
            let name = entry.file_name();
            if name != c"." && name != c".." {
                names.push(name.into());
            }
            // One past the bound is enough to refuse: never hold an enormous listing.
            if names.len() > crate::limits::MAX_ENTRIES {
                break;
            }
        }
        names.sort();

        // Inventory: count, name-check and lstat every entry before opening any.
        let mut entries = Vec::with_capacity(names.len());
        for name in names {
            if !self.builder.count_entry() {
                return Ok(());
            }
            let Some(path) = self.entry_path(rel, &name) else {
                continue;
            };
            let stat = match rustix::fs::statat(dir, &*name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                // Vanished since the listing: it is not part of the bundle.
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(self.io_error(Some(&path), e)),
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::RegularFile | FileType::Directory => {
                    entries.push(Entry { path, name, stat })
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

        // Read: files first, in name order, then the subdirectories.
        for entry in &entries {
            if FileType::from_raw_mode(entry.stat.st_mode) == FileType::RegularFile {
                self.file(dir, entry)?;
            }
        }
        for entry in &entries {
            if FileType::from_raw_mode(entry.stat.st_mode) == FileType::Directory {
                if self.builder.is_exhausted() {
                    return Ok(());
                }
                if !self.builder.enter_directory(&entry.path) {
                    continue;
                }
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let Some(sub) = self.open_checked(dir, entry, flags)? else {
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

    /// Opens an inventoried entry and checks it is still the same object. `None` when it changed
    /// (a problem is recorded).
    fn open_checked(
        &mut self,
        dir: &OwnedFd,
        entry: &Entry,
        flags: OFlags,
    ) -> Result<Option<OwnedFd>, ReadError> {
        let changed = |builder: &mut FileSetBuilder, what: &str| {
            builder.refuse(Problem::error(
                ProblemCode::ChangedDuringRead,
                Some(entry.path.as_str()),
                format!("{what} between inventory and read; refusing it"),
            ));
        };
        let fd = match open_beneath(dir, &entry.name, flags) {
            Ok(fd) => fd,
            Err(Errno::LOOP | Errno::XDEV | Errno::NOTDIR | Errno::NOENT | Errno::NXIO) => {
                changed(
                    &mut self.builder,
                    "it was replaced (by a link or other object)",
                );
                return Ok(None);
            }
            Err(e) => return Err(self.io_error(Some(&entry.path), e)),
        };
        let now = rustix::fs::fstat(&fd).map_err(|e| self.io_error(Some(&entry.path), e))?;
        let same_type =
            FileType::from_raw_mode(now.st_mode) == FileType::from_raw_mode(entry.stat.st_mode);
        if !same_type || now.st_dev != entry.stat.st_dev || now.st_ino != entry.stat.st_ino {
            changed(&mut self.builder, "it was replaced by another object");
            return Ok(None);
        }
        if same_type
            && FileType::from_raw_mode(now.st_mode) == FileType::RegularFile
            && now.st_size != entry.stat.st_size
        {
            changed(&mut self.builder, "its size changed");
            return Ok(None);
        }
        Ok(Some(fd))
    }

    fn file(&mut self, dir: &OwnedFd, entry: &Entry) -> Result<(), ReadError> {
        let Some(cap) = self.builder.begin_file(&entry.path) else {
            return Ok(());
        };
        (self.before_open)(&entry.path);
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let Some(fd) = self.open_checked(dir, entry, flags)? else {
            return Ok(());
        };
        let bytes = read_capped(fd, cap, entry.stat.st_size).map_err(|e| ReadError::Io {
            path: self.root.join(entry.path.as_str()),
            source: e,
        })?;
        let expected = u64::try_from(entry.stat.st_size).unwrap_or(0);
        let got = bytes.len() as u64;
        if got < cap && got != expected {
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

/// Reads the regular file at `relative` (a checked bundle-style path) under the directory `root`,
/// one component at a time without following any link, so the file read is exactly
/// `root/relative` on disk. Reads at most `cap` bytes; a larger file is refused.
pub fn read_file_beneath(
    root: &Path,
    relative: &BundlePath,
    cap: u64,
) -> Result<Vec<u8>, BeneathError> {
    let map = |errno: Errno| match errno {
        Errno::NOENT => BeneathError::NotFound,
        Errno::LOOP | Errno::XDEV => BeneathError::Symlink,
        Errno::NOTDIR => BeneathError::NotRegular,
        other => BeneathError::Io(other.into()),
    };
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(root, dir_flags, Mode::empty()).map_err(map)?;
    let segments: Vec<&str> = relative.as_str().split('/').collect();
    let (file, parents) = segments.split_last().ok_or(BeneathError::NotFound)?;
    for segment in parents {
        let name = std::ffi::CString::new(*segment).map_err(|_| BeneathError::NotFound)?;
        dir = match open_beneath(&dir, &name, dir_flags) {
            Ok(fd) => fd,
            // `O_DIRECTORY | O_NOFOLLOW` on a link says "not a directory": tell links apart.
            Err(Errno::NOTDIR) => {
                let is_link = rustix::fs::statat(&dir, &name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
                return Err(if is_link {
                    BeneathError::Symlink
                } else {
                    BeneathError::NotRegular
                });
            }
            Err(e) => return Err(map(e)),
        };
    }
    let name = std::ffi::CString::new(*file).map_err(|_| BeneathError::NotFound)?;
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = open_beneath(&dir, &name, flags).map_err(map)?;
    let stat = rustix::fs::fstat(&fd).map_err(map)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(BeneathError::NotRegular);
    }
    if stat.st_nlink > 1 {
        return Err(BeneathError::HardLink);
    }
    let bytes = read_capped(fd, cap + 1, stat.st_size).map_err(BeneathError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(BeneathError::TooLarge(cap));
    }
    Ok(bytes)
}

/// Reads at most `cap` bytes. `hint` (the inventory size) only sizes the first allocation.
fn read_capped(fd: OwnedFd, cap: u64, hint: i64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let first = u64::try_from(hint).unwrap_or(0).saturating_add(1).min(cap);
    let mut buf = Vec::with_capacity(usize::try_from(first).unwrap_or(0));
    // A `File` made from the descriptor we opened and checked; no path is resolved again.
    std::fs::File::from(fd).take(cap).read_to_end(&mut buf)?;
    Ok(buf)
}

/// `openat2(..., RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` where available,
/// else `openat(..., O_NOFOLLOW)`. `name` is a single path component.
fn open_beneath(dir: &OwnedFd, name: &CStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    static NO_OPENAT2: AtomicBool = AtomicBool::new(false);
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(dir, name, flags, Mode::empty(), resolve) {
            // Not offered by this kernel, or filtered by a seccomp policy: fall back for good.
            Err(Errno::NOSYS | Errno::PERM) => NO_OPENAT2.store(true, Ordering::Relaxed),
            Err(Errno::AGAIN) => {}
            other => return other,
        }
    }
    rustix::fs::openat(dir, name, flags, Mode::empty())
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
