//! Making what was written durable: `syncfs(2)` of a file system through a folder opened before
//! the writes it is to make durable ([`OpenedFolder`]), once per file system for many folders.
//! Since Linux 5.8 a `syncfs` reports a write that failed on its file system only through a
//! descriptor opened before the failure; a folder opened just before the sync would miss it.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// Makes everything written on the file system of `dir` durable (`syncfs(2)`), through a
/// descriptor opened now: for the early writes of [`super::publish::writing_early`], whose
/// failures are reported on their own.
#[cfg(any(feature = "git", test))]
pub(super) fn sync_file_system(dir: &Path) -> std::io::Result<()> {
    OpenedFolder::open(dir)?.sync()
}

/// A folder opened at a known moment. Since Linux 5.8, `syncfs(2)` reports a write that failed
/// on the file system only through a descriptor opened before the failure: the publication
/// syncs through folders opened before it wrote what the sync makes durable (a staging folder
/// when it was made, the corpus folders before the manifests are written), never through one
/// opened just before the sync.
#[derive(Debug)]
pub struct OpenedFolder {
    file: std::fs::File,
    opened: std::time::Instant,
    device: u64,
}

impl OpenedFolder {
    /// Opens `dir`.
    pub fn open(dir: &Path) -> std::io::Result<OpenedFolder> {
        let opened = std::time::Instant::now();
        let file = fs_err::File::open(dir)?.into_parts().0;
        let device = file.metadata()?.dev();
        Ok(OpenedFolder {
            file,
            opened,
            device,
        })
    }

    /// A folder opened now, by the caller (without following a link on its way).
    pub fn of(folder: std::os::fd::OwnedFd) -> std::io::Result<OpenedFolder> {
        let opened = std::time::Instant::now();
        let file = std::fs::File::from(folder);
        let device = file.metadata()?.dev();
        Ok(OpenedFolder {
            file,
            opened,
            device,
        })
    }

    /// Its descriptor.
    pub(super) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.file)
    }

    /// `syncfs(2)` of its file system.
    pub(super) fn sync(&self) -> std::io::Result<()> {
        rustix::fs::syncfs(&self.file).map_err(std::io::Error::from)
    }
}

/// A failed sync, kept to be given to every folder of its file system (an `io::Error` is not
/// `Clone`): its kind and message.
type Failed = (std::io::ErrorKind, String);

/// One `syncfs` per file system among `folders`, each through the folder opened first on it;
/// each `Some` folder's result is its file system's (`None` is skipped and gets `Ok`).
pub(super) fn sync_file_systems(folders: &[Option<&OpenedFolder>]) -> Vec<std::io::Result<()>> {
    let mut by_age: Vec<&OpenedFolder> = folders.iter().flatten().copied().collect();
    by_age.sort_by_key(|folder| folder.opened);
    let mut synced: Vec<(u64, Result<(), Failed>)> = Vec::new();
    for folder in by_age {
        if !synced.iter().any(|(device, _)| *device == folder.device) {
            let outcome = folder.sync().map_err(|e| (e.kind(), e.to_string()));
            synced.push((folder.device, outcome));
        }
    }
    folders
        .iter()
        .map(|folder| {
            let outcome = folder
                .and_then(|folder| synced.iter().find(|(device, _)| *device == folder.device));
            match outcome {
                Some((_, Err((kind, message)))) => Err(std::io::Error::new(*kind, message.clone())),
                _ => Ok(()),
            }
        })
        .collect()
}
