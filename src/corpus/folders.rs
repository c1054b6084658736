//! Skillfold's own folders in a corpus, reached, made and emptied without following a link.
//!
//! Every folder the store writes into or empties is opened relative to a descriptor it opened
//! itself, one name at a time, with the no-follow opens of [`crate::format::untrusted_fs`]: a
//! link swapped in for a folder on the way (`.skillfold/staging`, a bundle's `references/`) is
//! refused, never written or emptied through. Only the corpus directory itself is opened by its
//! path, and may be a link (to a volume, say).
//!
//! Folders are made with an explicit mode, whatever the umask ([`make`]), and existing ones lose
//! any bit beyond it ([`restrict`]): [`SHARED`] (`0755`)
//! for what readers of `current` go through (the corpus directory, `.skillfold/`,
//! `generations/`, `manifests/` and every folder of a generation), [`PRIVATE`] (`0700`) for
//! `staging/` and `fetch/`, which no other user may enter: nobody else can swap a folder there
//! while a preparer writes into it.
//!
//! [`remove_tree`] removes a folder and everything below it by the same rules: a link found on
//! the way is removed as a name, never followed. [`BundleFolders`] opens the folders of one
//! bundle's files as they come, each once.

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, Mode};
use rustix::io::Errno;

use crate::format::untrusted_fs::{self, UntrustedOpenError};

/// The mode of the folders readers of `current` go through.
pub const SHARED: u32 = 0o755;
/// The mode of `staging/` and `fetch/`: only the preparer's user enters them.
pub const PRIVATE: u32 = 0o700;

/// Makes the folder `name` of `dir` with exactly `mode` (the umask is undone by an `fchmod`) and
/// opens it. When `name` exists already, `exclusive` refuses it (`EEXIST`); otherwise the folder
/// there is opened as it is. Either way a link at `name` is refused, never followed.
pub fn make(
    dir: impl AsFd,
    name: &CStr,
    mode: u32,
    exclusive: bool,
) -> Result<OwnedFd, UntrustedOpenError> {
    let dir = dir.as_fd();
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode)) {
        Ok(()) => {
            let folder = untrusted_fs::open_dir(dir, name)?;
            rustix::fs::fchmod(&folder, Mode::from_raw_mode(mode))
                .map_err(UntrustedOpenError::Io)?;
            Ok(folder)
        }
        Err(Errno::EXIST) if !exclusive => untrusted_fs::open_dir(dir, name),
        Err(errno) => Err(UntrustedOpenError::Io(errno)),
    }
}

/// Takes from the open `folder` any permission bit `allowed` lacks (a store folder made by an
/// earlier version under a permissive umask: `0777` becomes `0755`, or `0700`), never adding
/// one: a folder an operator closed further stays as it is. Fails where the process may not
/// (the folder is another user's): such a folder is not written into.
pub fn restrict(folder: impl AsFd, allowed: u32) -> Result<(), Errno> {
    let folder = folder.as_fd();
    let mode = rustix::fs::fstat(folder)?.st_mode & 0o7777;
    if mode & 0o777 & !allowed != 0 {
        rustix::fs::fchmod(folder, Mode::from_raw_mode(mode & (0o7000 | allowed)))?;
    }
    Ok(())
}

/// Opens the corpus directory `dir` (a link there is followed: it is the operator's choice), then
/// each of `names` below it, one at a time, never following a link.
pub fn open_below(dir: &Path, names: &[&CStr]) -> Result<OwnedFd, UntrustedOpenError> {
    let mut folder = rustix::fs::open(
        dir,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        Errno::NOENT => UntrustedOpenError::NotFound,
        Errno::NOTDIR => UntrustedOpenError::NotADirectory,
        other => UntrustedOpenError::Io(other),
    })?;
    for name in names {
        folder = untrusted_fs::open_dir(&folder, name)?;
    }
    Ok(folder)
}

/// The names in the open `folder` (`.` and `..` left out).
pub fn names(folder: impl AsFd) -> Result<Vec<Box<CStr>>, Errno> {
    let mut names = Vec::new();
    untrusted_fs::scan(folder, |name| {
        names.push(name.into());
        std::ops::ControlFlow::Continue(())
    })?;
    Ok(names)
}

/// Whether `name` of `dir` is a folder (a link is not followed).
pub fn stat_is_dir(dir: impl AsFd, name: &CStr) -> bool {
    untrusted_fs::stat_at(dir, name).is_ok_and(|stat| {
        stat.is_some_and(|stat| untrusted_fs::kind(&stat) == rustix::fs::FileType::Directory)
    })
}

/// Removes `name` of `dir` and, if it is a folder, everything below it (read-only files
/// included), never following a link: a link anywhere is removed as a name, and each folder is
/// emptied through a descriptor opened without following one. Missing is not an error.
pub fn remove_tree(dir: impl AsFd, name: &CStr) -> Result<(), Errno> {
    let dir = dir.as_fd();
    let Some(stat) = untrusted_fs::stat_at(dir, name)? else {
        return Ok(());
    };
    if untrusted_fs::kind(&stat) != rustix::fs::FileType::Directory {
        return unlink(dir, name, AtFlags::empty());
    }
    let folder = match untrusted_fs::open_dir(dir, name) {
        Ok(folder) => folder,
        // Swapped for something else since the `stat`: remove that name instead.
        Err(UntrustedOpenError::Symlink | UntrustedOpenError::NotADirectory) => {
            return unlink(dir, name, AtFlags::empty());
        }
        Err(UntrustedOpenError::NotFound) => return Ok(()),
        Err(UntrustedOpenError::Io(errno)) => return Err(errno),
        Err(UntrustedOpenError::NotRegular) => return Err(Errno::NOTDIR),
    };
    // A folder without its owner's write bit is given it before its entries are removed.
    let _ = ensure_writable(folder.as_fd());
    for entry in names(&folder)? {
        remove_tree(&folder, &entry)?;
    }
    unlink(dir, name, AtFlags::REMOVEDIR)
}

/// Adds the owner's write and search bits to the open `folder` if it lacks them.
fn ensure_writable(folder: BorrowedFd<'_>) -> Result<(), Errno> {
    let stat = rustix::fs::fstat(folder)?;
    if stat.st_mode & 0o300 != 0o300 {
        rustix::fs::fchmod(folder, Mode::from_raw_mode((stat.st_mode & 0o7777) | 0o700))?;
    }
    Ok(())
}

/// `unlinkat`, where a name already gone is not an error.
fn unlink(dir: BorrowedFd<'_>, name: &CStr, flags: AtFlags) -> Result<(), Errno> {
    match rustix::fs::unlinkat(dir, name, flags) {
        Err(Errno::NOENT) => Ok(()),
        other => other,
    }
}

/// The folders of one bundle's files, opened as the files come (each folder made with
/// [`SHARED`] if missing, never through a link): the chain from the bundle's folder down to the
/// folder of the last file. Files in code-point order of their paths (as a bundle's are) find
/// their folder open already, or open each folder once; any order works.
pub struct BundleFolders<'f> {
    /// The bundle's folder.
    root: BorrowedFd<'f>,
    /// The folders open below it, outermost first: each one's path (below the bundle's folder)
    /// and descriptor.
    chain: Vec<(String, OwnedFd)>,
}

impl<'f> BundleFolders<'f> {
    /// The folders below the bundle's open `root`.
    pub fn new(root: BorrowedFd<'f>) -> BundleFolders<'f> {
        BundleFolders {
            root,
            chain: Vec::new(),
        }
    }

    /// The folder holding the file `path` (a relative path of `/`-separated names), made and
    /// opened if need be, and the file's own name. On failure, the folder (its path below the
    /// bundle's folder) that could not be made or opened, and why: a link or anything but a
    /// folder in its place is `ELOOP` or `ENOTDIR`, never followed.
    pub fn parent_of<'p>(
        &mut self,
        path: &'p str,
    ) -> Result<(BorrowedFd<'_>, Box<CStr>), (&'p str, Errno)> {
        let (folder, file) = path.rsplit_once('/').unwrap_or(("", path));
        // Keep the folders that hold `folder` (or are it); close the others.
        while let Some((open, _)) = self.chain.last() {
            let holds = folder == open
                || folder
                    .strip_prefix(open.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if holds {
                break;
            }
            self.chain.pop();
        }
        let done = self.chain.last().map_or(0, |(open, _)| open.len());
        if done < folder.len() {
            let start = if done == 0 { 0 } else { done + 1 };
            let mut at = start;
            for segment in folder[start..].split('/') {
                let end = at + segment.len();
                let sub = &path[..end];
                let failed = |errno| (sub, errno);
                let name = untrusted_fs::component(segment).map_err(|e| failed(errno_of(e)))?;
                let parent = self.chain.last().map_or(self.root, |(_, fd)| fd.as_fd());
                let opened = make(parent, &name, SHARED, false).map_err(|e| failed(errno_of(e)))?;
                self.chain.push((sub.to_owned(), opened));
                at = end + 1;
            }
        }
        let name = untrusted_fs::component(file).map_err(|e| (path, errno_of(e)))?;
        let parent = self.chain.last().map_or(self.root, |(_, fd)| fd.as_fd());
        Ok((parent, name))
    }
}

/// The `errno` an open refusal stands for (a link is `ELOOP`).
pub fn errno_of(e: UntrustedOpenError) -> Errno {
    match e {
        UntrustedOpenError::NotFound => Errno::NOENT,
        UntrustedOpenError::Symlink => Errno::LOOP,
        UntrustedOpenError::NotADirectory | UntrustedOpenError::NotRegular => Errno::NOTDIR,
        UntrustedOpenError::Io(errno) => errno,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> Box<CStr> {
        untrusted_fs::component(name).expect("a name")
    }

    // The mode asked for is the mode made, whatever the umask lets through.
    #[test]
    fn a_folder_is_made_with_its_mode_whatever_the_umask() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = rustix::fs::open(
            tmp.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            Mode::empty(),
        )
        .expect("open");
        for (name, mode) in [("shared", SHARED), ("private", PRIVATE)] {
            make(&dir, &c(name), mode, true).expect("made");
            let made = fs_err::metadata(tmp.path().join(name)).expect("meta");
            assert_eq!(made.permissions().mode() & 0o7777, mode, "{name}");
            assert!(make(&dir, &c(name), mode, true).is_err(), "exclusive");
            make(&dir, &c(name), mode, false).expect("opened");
        }
    }

    // A tree is removed whole, read-only files and folders included; a link in it is removed
    // as a name, and what it leads to is left alone.
    #[test]
    fn a_tree_is_removed_without_following_its_links() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        fs_err::write(outside.path().join("kept"), "precious").expect("write");
        let tree = tmp.path().join("tree");
        fs_err::create_dir_all(tree.join("a/b")).expect("mkdir");
        fs_err::write(tree.join("a/b/file"), "x").expect("write");
        fs_err::set_permissions(
            tree.join("a/b/file"),
            std::fs::Permissions::from_mode(0o444),
        )
        .expect("chmod");
        std::os::unix::fs::symlink(outside.path(), tree.join("a/link")).expect("link");
        fs_err::set_permissions(tree.join("a/b"), std::fs::Permissions::from_mode(0o555))
            .expect("chmod");
        let dir = open_below(tmp.path(), &[]).expect("open");
        remove_tree(&dir, &c("tree")).expect("removed");
        assert!(!tree.exists());
        assert_eq!(
            fs_err::read_to_string(outside.path().join("kept")).expect("kept"),
            "precious"
        );
        remove_tree(&dir, &c("tree")).expect("missing is no error");
    }
}
