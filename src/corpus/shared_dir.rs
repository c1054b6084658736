//! Corpus directories that are one folder on disk: two sources whose `directory` values differ as
//! text (which `check` compares) but lead to one folder, or one inside the other, through a link
//! or a bind mount. `prepare` and `verify` compare the folders themselves, by their identity
//! (device and inode): the folder each directory leads to, and every folder above it.
//!
//! Two sources preparing one corpus would take each other's guard (one of them failing on every
//! run), or, one after the other, publish over each other; neither is what the descriptor says.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use crate::support::escape;

/// A folder's identity: its device and inode.
type Identity = (u64, u64);

/// Two corpus directories that are one folder, or one inside the other, on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedDirectory {
    /// The index (among those given) of the one written first.
    pub first: usize,
    /// The index of the other.
    pub second: usize,
    /// Whether one is inside the other rather than the same folder.
    pub nested: bool,
}

/// The identities of the folder `dir` leads to and of every folder above it, nearest first;
/// `None` when it cannot be looked up (missing: nothing there to share yet).
fn identities(dir: &Path) -> Option<Vec<Identity>> {
    let real = fs_err::canonicalize(dir).ok()?;
    real.ancestors()
        .map(|folder| {
            fs_err::metadata(folder)
                .ok()
                .map(|meta| (meta.dev(), meta.ino()))
        })
        .collect()
}

/// Every pair of `directories` that are one folder, or one inside the other, on disk (each pair
/// once, in order). A directory that does not exist shares nothing.
pub fn shared_directories(directories: &[&Path]) -> Vec<SharedDirectory> {
    let chains: Vec<Option<Vec<Identity>>> =
        directories.iter().map(|dir| identities(dir)).collect();
    let mut shared = Vec::new();
    for (first, a) in chains.iter().enumerate() {
        let Some(a) = a else { continue };
        for (second, b) in chains.iter().enumerate().skip(first + 1) {
            let Some(b) = b else { continue };
            let same = a[0] == b[0];
            if same || a.contains(&b[0]) || b.contains(&a[0]) {
                shared.push(SharedDirectory {
                    first,
                    second,
                    nested: !same,
                });
            }
        }
    }
    shared
}

impl SharedDirectory {
    /// What the source at `this` (`first` or `second`) is told: its directory, the other
    /// source's location and directory, and what to do. `locations` and `directories` are the
    /// ones given to [`shared_directories`].
    pub fn message(&self, this: usize, locations: &[&str], directories: &[&Path]) -> String {
        let other = if this == self.first {
            self.second
        } else {
            self.first
        };
        let how = if self.nested {
            "is inside, or holds,"
        } else {
            "is the same folder as"
        };
        format!(
            "`{}` {how} the corpus of {} (`{}`) on disk, through a link or a mount; each Git or OCI \
             source needs its own directory",
            escape::path(directories[this]),
            escape::text(locations[other]),
            escape::path(directories[other]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Directories spelled differently but leading to one folder (a link to it, a link above
    // it) or one inside the other are found; distinct and missing ones are not.
    #[test]
    fn one_folder_through_a_link_is_shared_and_distinct_ones_are_not() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        fs_err::create_dir_all(root.join("real/sub")).expect("mkdir");
        fs_err::create_dir(root.join("other")).expect("mkdir");
        std::os::unix::fs::symlink("real", root.join("alias")).expect("link");
        let dirs = [
            root.join("real"),
            root.join("alias"),
            root.join("other"),
            root.join("alias/sub"),
            root.join("missing"),
        ];
        let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        let shared = shared_directories(&refs);
        let pairs: Vec<(usize, usize, bool)> = shared
            .iter()
            .map(|s| (s.first, s.second, s.nested))
            .collect();
        assert_eq!(pairs, [(0, 1, false), (0, 3, true), (1, 3, true)]);
        let locations = ["skills[0].git", "skills[1].git", "", "", ""];
        let told = shared[0].message(1, &locations, &refs);
        assert!(told.contains("skills[0].git"), "{told}");
        assert!(told.contains("alias") && told.contains("real"), "{told}");
    }

    use std::path::PathBuf;
}
