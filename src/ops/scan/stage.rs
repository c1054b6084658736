//! The read-only copy a scanner reads: exactly the bytes of the verified bundle, in a fresh
//! temporary folder (`<temp>/<name>/`), every file `r--r--r--` (`r-xr-xr-x` when the bundle marks
//! it executable), every folder, the temporary one included, `r-xr-xr-x`. After the run the copy
//! is read again with the bundle reader and its digest compared with the pinned one
//! ([`Staged::unchanged`]); a scanner of the same user can still make a folder writable again,
//! which this comparison sees. Dropping a [`Staged`] makes the folders writable and removes them.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::format::bundle::Bundle;
use crate::format::digest::BundleDigest;

/// A staged read-only copy of one bundle.
#[derive(Debug)]
pub struct Staged {
    temp: tempfile::TempDir,
    folder: PathBuf,
}

impl Staged {
    /// Writes `bundle`'s files under a fresh temporary folder and makes it all read-only.
    pub fn new(bundle: &Bundle) -> std::io::Result<Staged> {
        let temp = tempfile::Builder::new()
            .prefix("skillfold-scan-")
            .tempdir()?;
        let folder = temp.path().join(bundle.name().as_str());
        let files = bundle.files();
        let mut folders = vec![temp.path().to_path_buf(), folder.clone()];
        fs_err::create_dir(&folder)?;
        for (path, bytes) in files.iter() {
            let target = folder.join(path.as_str());
            let mut parent = target.parent();
            let mut made = Vec::new();
            while let Some(dir) = parent
                && dir != folder
                && !dir.exists()
            {
                made.push(dir.to_path_buf());
                parent = dir.parent();
            }
            for dir in made.into_iter().rev() {
                fs_err::create_dir(&dir)?;
                folders.push(dir);
            }
            fs_err::write(&target, bytes)?;
            let mode = if files.is_executable(path.as_str()) {
                0o555
            } else {
                0o444
            };
            fs_err::set_permissions(&target, std::fs::Permissions::from_mode(mode))?;
        }
        // Deepest first, so each folder is still writable while its children are made read-only.
        for dir in folders.iter().rev() {
            fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o555))?;
        }
        Ok(Staged { temp, folder })
    }

    /// The bundle folder (what the scanner gets as its last argument and working directory).
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Whether the copy still holds exactly the bundle digested as `digest`.
    pub fn unchanged(&self, bundle: &Bundle) -> bool {
        let expected: BundleDigest = bundle.digest();
        Bundle::read_dir_under(&self.folder, bundle.limits()).is_ok_and(|b| b.digest() == expected)
            && fs_err::read_dir(self.temp.path()).is_ok_and(|entries| entries.count() == 1)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        // Writable again (folders only: a file's mode does not stop its removal), so the
        // temporary folder can remove itself.
        writable(self.temp.path());
    }
}

/// Makes `root` and every folder under it writable by their owner, not following links.
fn writable(root: &Path) {
    let mut found = vec![root.to_path_buf()];
    let mut i = 0;
    while let Some(dir) = found.get(i).cloned() {
        i += 1;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = fs_err::read_dir(&dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    found.push(entry.path());
                }
            }
        }
    }
}
