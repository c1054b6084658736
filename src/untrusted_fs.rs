//! The one capped, no-follow file-system layer: the only way skillfold opens a file or a
//! directory that came from outside (a bundle, a guides folder, a skill directory handed to the
//! spec tooling). Each caller adds its own rules on top; none spells out open flags of its own.
//!
//! Five steps, each a defence that holds on its own:
//!
//! - [`open_root`]: the directory the caller names, opened once by path with
//!   `O_DIRECTORY | O_NOFOLLOW`. A link at its last component is refused, never followed, and
//!   the failure says why (missing, a link, not a directory).
//! - [`open_dir`] and [`open_file`]: one name below an already-open directory, with `openat2`
//!   and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or `openat` where the
//!   kernel refuses `openat2` (`ENOSYS` on kernels before 5.6, `EPERM` under a seccomp filter).
//!   Both add `O_NOFOLLOW`, which alone refuses a link at that one name. A directory is opened
//!   with `O_DIRECTORY` (anything else swapped in fails at once); a file with `O_NONBLOCK` and
//!   `O_NOCTTY` (a FIFO swapped in cannot block the open, a terminal cannot become ours), and its
//!   type is checked with `fstat` on the open descriptor.
//! - [`stat_at`]: what a name is, without following it, so special files are refused unopened.
//! - [`list`]: the names of an open directory, never more than a bound: an enormous directory is
//!   refused without being held in memory.
//! - [`read_capped`]: at most `cap + 1` bytes from an open file. The size `fstat` reported is
//!   only a hint for the first allocation: a file that grows, or lies about its size (as `/proc`
//!   files do), is still read no further than the cap.
//!
//! [`same_file`] compares the device and inode of what was listed with what was opened, for
//! callers that inventory a tree before reading it.
//!
//! The module depends on nothing but `std` and `rustix`.

use std::cell::Cell;
use std::ffi::CStr;
use std::fmt;
use std::io::Read as _;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

/// Flags of every directory opened: read-only, must be a directory, no link at the name.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Flags of every file opened: read-only, no link at the name, never blocking (a FIFO), never
/// a controlling terminal.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// How `openat2` resolves a name: below the directory, through no link of any kind.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why a directory or file could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// Nothing of that name.
    NotFound,
    /// A symbolic link where a directory or file was expected (never followed).
    Symlink,
    /// Something other than a directory where a directory was expected.
    NotADirectory,
    /// Something other than a regular file (a directory, FIFO, socket or device).
    NotRegular,
    /// Any other failure of the system call.
    Io(Errno),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::NotFound => f.write_str("no such file or directory"),
            OpenError::Symlink => f.write_str("is a symbolic link (links are never followed)"),
            OpenError::NotADirectory => f.write_str("not a directory"),
            OpenError::NotRegular => f.write_str("not a regular file"),
            OpenError::Io(errno) => write!(f, "{}", std::io::Error::from(*errno)),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<OpenError> for std::io::Error {
    fn from(e: OpenError) -> std::io::Error {
        match e {
            OpenError::NotFound => Errno::NOENT.into(),
            OpenError::Symlink => Errno::LOOP.into(),
            OpenError::NotADirectory => Errno::NOTDIR.into(),
            OpenError::NotRegular => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")
            }
            OpenError::Io(errno) => errno.into(),
        }
    }
}

/// Why [`read_capped`] refused.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The file holds more than the cap (it was read no further than one byte past it).
    TooLarge {
        /// The cap.
        cap: u64,
    },
    /// The read failed.
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::TooLarge { cap } => write!(f, "larger than {cap} bytes"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Opens the directory at `path` (as the caller spelled it) without following a link at its
/// last component.
pub fn open_root(path: &Path) -> Result<OwnedFd, OpenError> {
    rustix::fs::open(path, DIR_FLAGS, Mode::empty()).map_err(|errno| match errno {
        Errno::NOENT => OpenError::NotFound,
        Errno::LOOP => OpenError::Symlink,
        // `O_DIRECTORY | O_NOFOLLOW` on a link says "not a directory": tell the two apart.
        Errno::NOTDIR => match rustix::fs::lstat(path) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                OpenError::Symlink
            }
            _ => OpenError::NotADirectory,
        },
        other => OpenError::Io(other),
    })
}

/// Opens the subdirectory `name` (one path component) of `dir`.
pub fn open_dir(dir: impl AsFd, name: &CStr) -> Result<OwnedFd, OpenError> {
    let dir = dir.as_fd();
    open_beneath(dir, name, DIR_FLAGS).map_err(|errno| match errno {
        Errno::NOENT => OpenError::NotFound,
        Errno::LOOP | Errno::XDEV => OpenError::Symlink,
        Errno::NOTDIR => match stat_at(dir, name) {
            Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                OpenError::Symlink
            }
            _ => OpenError::NotADirectory,
        },
        other => OpenError::Io(other),
    })
}

/// Opens the regular file `name` (one path component) of `dir`, with the `fstat` of the open
/// descriptor.
pub fn open_file(dir: impl AsFd, name: &CStr) -> Result<(OwnedFd, Stat), OpenError> {
    let fd = open_beneath(dir.as_fd(), name, FILE_FLAGS).map_err(|errno| match errno {
        Errno::NOENT => OpenError::NotFound,
        Errno::LOOP | Errno::XDEV => OpenError::Symlink,
        // A socket cannot be opened; a device without its driver neither.
        Errno::NXIO | Errno::NODEV => OpenError::NotRegular,
        Errno::NOTDIR => OpenError::NotADirectory,
        other => OpenError::Io(other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(OpenError::Io)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(OpenError::NotRegular);
    }
    Ok((fd, stat))
}

/// Opens the directory `segments` (path components, each one name) below `root`, one at a time.
pub fn open_dir_path<'a>(
    root: &Path,
    segments: impl IntoIterator<Item = &'a str>,
) -> Result<OwnedFd, OpenError> {
    let mut dir = open_root(root)?;
    for segment in segments {
        dir = open_dir(&dir, &component(segment)?)?;
    }
    Ok(dir)
}

/// One path component as a C string; an empty one, `.`, `..`, one holding `/` or NUL is refused
/// as not found (no such single name exists below a directory).
pub fn component(segment: &str) -> Result<Box<CStr>, OpenError> {
    if matches!(segment, "" | "." | "..") || segment.contains('/') {
        return Err(OpenError::NotFound);
    }
    std::ffi::CString::new(segment)
        .map(Into::into)
        .map_err(|_| OpenError::NotFound)
}

/// What `name` in `dir` is, without following a link: `None` when it does not exist (any more).
pub fn stat_at(dir: impl AsFd, name: &CStr) -> Result<Option<Stat>, Errno> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(stat)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The kind of a [`Stat`].
pub fn kind(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// Whether two stats are of one object: the same device and the same inode.
pub fn same_file(listed: &Stat, opened: &Stat) -> bool {
    listed.st_dev == opened.st_dev && listed.st_ino == opened.st_ino
}

/// The names in a directory, `.` and `..` left out, sorted by bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The names read, at most the bound.
    pub names: Vec<Box<CStr>>,
    /// Whether the directory holds more names than the bound (the rest were not read).
    pub over: bool,
}

/// Lists `dir`, reading at most `max` names: one more means [`Listing::over`].
pub fn list(dir: impl AsFd, max: usize) -> Result<Listing, Errno> {
    let mut names: Vec<Box<CStr>> = Vec::new();
    let mut over = false;
    scan(dir, |name| {
        if names.len() == max {
            over = true;
            return ControlFlow::Break(());
        }
        names.push(name.into());
        ControlFlow::Continue(())
    })?;
    names.sort_unstable();
    Ok(Listing { names, over })
}

/// Calls `visit` with each name in `dir` (`.` and `..` left out), in directory order, until it
/// breaks. Nothing is kept: for callers that look for names without listing them all.
pub fn scan(dir: impl AsFd, mut visit: impl FnMut(&CStr) -> ControlFlow<()>) -> Result<(), Errno> {
    let mut reader = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if visit(name).is_break() {
            break;
        }
    }
    Ok(())
}

/// Reads `file` to its end, at most `cap + 1` bytes: more than `cap` is refused. `size_hint`
/// (from `fstat`) only sizes the first allocation, never more than the cap.
pub fn read_capped(file: OwnedFd, cap: u64, size_hint: u64) -> Result<Vec<u8>, ReadError> {
    let bytes = read_at_most(file, cap.saturating_add(1), size_hint).map_err(ReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Reads `file` to its end, but never more than `limit` bytes (the caller judges a read that
/// reached the limit). `size_hint` only sizes the first allocation.
pub fn read_at_most(file: OwnedFd, limit: u64, size_hint: u64) -> std::io::Result<Vec<u8>> {
    let first = size_hint.min(limit);
    let mut buf = Vec::with_capacity(usize::try_from(first).unwrap_or(0));
    // A `File` made from the descriptor opened and checked; no path is resolved again.
    std::fs::File::from(file)
        .take(limit)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

/// `openat2(dir, name, flags, RESOLVE)`, or `openat(dir, name, flags)` where the kernel refuses
/// `openat2` itself. `name` is a single component, so `O_NOFOLLOW` in `flags` alone keeps the
/// fallback from traversing a link.
fn open_beneath(
    dir: rustix::fd::BorrowedFd<'_>,
    name: &CStr,
    flags: OFlags,
) -> Result<OwnedFd, Errno> {
    match openat2(dir, name, flags) {
        Err(errno) if openat2_unavailable(errno) => {
            rustix::fs::openat(dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

/// Whether `openat2` failed because the kernel does not offer it to us (too old: `ENOSYS`;
/// filtered by a seccomp policy: `EPERM`), rather than because of the name.
fn openat2_unavailable(errno: Errno) -> bool {
    errno == Errno::NOSYS || errno == Errno::PERM
}

thread_local! {
    /// The error `openat2` is made to fail with on this thread, for [`with_openat2_failing`].
    static OPENAT2_FAILS: Cell<Option<Errno>> = const { Cell::new(None) };
}

fn openat2(dir: rustix::fd::BorrowedFd<'_>, name: &CStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    if let Some(errno) = OPENAT2_FAILS.get() {
        return Err(errno);
    }
    rustix::fs::openat2(dir, name, flags, Mode::empty(), RESOLVE)
}

/// Runs `f` with every `openat2` on this thread failing with `errno`, as on a kernel without it
/// (`ENOSYS`) or under a seccomp filter (`EPERM`): the fallback path, for tests.
#[doc(hidden)]
pub fn with_openat2_failing<R>(errno: Errno, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Errno>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OPENAT2_FAILS.set(self.0);
        }
    }
    let _restore = Restore(OPENAT2_FAILS.replace(Some(errno)));
    f()
}
