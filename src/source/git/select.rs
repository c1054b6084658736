//! One approved bundle taken out of a commit whose tree passed [`super::tree::walk`], as a
//! [`FileSet`] with every problem found.
//!
//! The bundle's folder is looked up segment by segment from the root tree. Its own trees are then
//! expanded path by path (a bundle is materialised, so a subtree it names twice is read twice),
//! in two passes, so that nothing is inflated before every bound that the trees and the object
//! headers can decide:
//!
//! 1. **Plan.** Every entry goes through the same [`FileSetBuilder`] as a directory on disk: it is
//!    counted (the walk stops at the first entry over the profile's entry bound), its name checked,
//!    directories are checked against the depth bound, and each file is admitted by the file
//!    count bound and sized from its object header. A file over its size bound is refused from
//!    that header. Gitlinks and links refuse the bundle; none is followed. A file of mode
//!    `100755` is marked executable: the commit id pins that bit as it pins the bytes.
//! 2. **Read.** Unless the entry bound stopped the plan (the bundle is refused then, and the file
//!    set is marked partial), the planned blobs are inflated: at most the profile's file count,
//!    each at most its bound. A Git LFS pointer ([`super::lfs`]) is refused: its content is not in the
//!    pinned commit.

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::lfs;
use super::tree::{TreeError, object_error, shown};
use crate::format::bundle_path::BundlePath;
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits::Limits;
use crate::format::problem::{Problem, ProblemCode, Problems};

/// The bundle in `folder` (a `/`-separated path from the repository root) of the tree `root` of
/// `commit`: its file set and the problems found, or `None` when the tree has no such folder.
pub fn select_bundle(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    root: gix::ObjectId,
    folder: &str,
    limits: Limits,
) -> Result<Option<(FileSet, Problems)>, TreeError> {
    let reader = FolderReader {
        repo,
        commit,
        folder,
    };
    let Some(tree) = reader.folder_tree(root)? else {
        return Ok(None);
    };
    let mut builder = FileSetBuilder::with_limits(limits);
    let planned = reader.plan(tree, &mut builder)?;
    if !builder.is_exhausted() {
        for (path, id) in planned {
            let data = reader.read(id)?;
            if lfs::is_pointer(&data) {
                builder.refuse(Problem::error(
                    ProblemCode::LfsPointer,
                    Some(path.as_str()),
                    "a Git LFS pointer: the real content is stored outside the pinned commit",
                ));
            }
            builder.add_file(path, data);
        }
    }
    Ok(Some(builder.finish()))
}

/// What [`select_bundle`] reads for the bundle in a folder, found from the trees alone.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WantedFolder {
    /// The blobs of its files: what a partial fetch asks the server for.
    pub blobs: Vec<gix::ObjectId>,
    /// Its files, relative to the bundle's folder: where the staging writes those blobs.
    pub files: Vec<String>,
}

/// What [`select_bundle`] reads for the bundle in `folder` under the same `limits` (nothing
/// when the tree has no such folder or the bundle is refused before any file is read).
pub fn wanted_blobs(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    root: gix::ObjectId,
    folder: &str,
    limits: Limits,
) -> Result<WantedFolder, TreeError> {
    let reader = FolderReader {
        repo,
        commit,
        folder,
    };
    let Some(tree) = reader.folder_tree(root)? else {
        return Ok(WantedFolder::default());
    };
    let mut builder = FileSetBuilder::with_limits(limits);
    let planned = reader.plan_with(tree, &mut builder, &mut |_, _| Ok(0))?;
    if builder.is_exhausted() {
        return Ok(WantedFolder::default());
    }
    let (files, blobs) = planned
        .into_iter()
        .map(|(path, id)| (path.as_str().to_owned(), id))
        .unzip();
    Ok(WantedFolder { blobs, files })
}

struct FolderReader<'a> {
    repo: &'a gix::Repository,
    commit: gix::ObjectId,
    folder: &'a str,
}

impl FolderReader<'_> {
    /// The tree of the bundle's folder below `root`, if every segment names a tree.
    fn folder_tree(&self, root: gix::ObjectId) -> Result<Option<gix::ObjectId>, TreeError> {
        let mut tree = root;
        for segment in self.folder.split('/') {
            let data = self.read(tree)?;
            let found = gix::objs::TreeRefIter::from_bytes(&data, self.repo.object_hash())
                .filter_map(Result::ok)
                .find(|entry| entry.filename == segment.as_bytes());
            match found {
                Some(entry) if entry.mode.kind() == EntryKind::Tree => tree = entry.oid.to_owned(),
                _ => return Ok(None),
            }
        }
        Ok(Some(tree))
    }

    /// Pass 1: counts and checks every entry of the bundle rooted at `tree` through `builder`,
    /// sizes the files from their headers, and returns the files to read.
    fn plan(
        &self,
        tree: gix::ObjectId,
        builder: &mut FileSetBuilder,
    ) -> Result<Vec<(BundlePath, gix::ObjectId)>, TreeError> {
        self.plan_with(tree, builder, &mut |id, path| self.blob_size(id, path))
    }

    /// [`plan`](Self::plan), with each file's size from `size` (its id and path).
    fn plan_with(
        &self,
        tree: gix::ObjectId,
        builder: &mut FileSetBuilder,
        size: &mut dyn FnMut(gix::ObjectId, &BundlePath) -> Result<u64, TreeError>,
    ) -> Result<Vec<(BundlePath, gix::ObjectId)>, TreeError> {
        let mut planned = Vec::new();
        let mut todo: Vec<(gix::ObjectId, Option<BundlePath>)> = vec![(tree, None)];
        while let Some((id, dir)) = todo.pop() {
            let data = self.read(id)?;
            for entry in gix::objs::TreeRefIter::from_bytes(&data, self.repo.object_hash()) {
                let entry = entry.map_err(|e| object_error(id, &e))?;
                if !builder.count_entry() {
                    return Ok(planned);
                }
                let Some(path) = entry_path(builder, dir.as_ref(), entry.filename) else {
                    continue;
                };
                let oid = entry.oid.to_owned();
                match entry.mode.kind() {
                    EntryKind::Tree => {
                        if builder.enter_directory(&path) {
                            todo.push((oid, Some(path)));
                        }
                    }
                    EntryKind::Blob | EntryKind::BlobExecutable => {
                        if builder.begin_file(&path).is_none() {
                            continue;
                        }
                        // The executable bit is part of the tree the commit id pins.
                        if entry.mode.kind() == EntryKind::BlobExecutable {
                            builder.mark_executable(path.as_str());
                        }
                        let size = size(oid, &path)?;
                        if size > builder.limits().max_file_bytes(path.as_str()) {
                            builder.add_oversized(path, size);
                        } else {
                            planned.push((path, oid));
                        }
                    }
                    // The whole-tree walk refuses links first; kept so that this never admits one.
                    EntryKind::Link => builder.refuse(Problem::error(
                        ProblemCode::Symlink,
                        Some(path.as_str()),
                        "symbolic links are not allowed in a bundle (never followed)",
                    )),
                    EntryKind::Commit => builder.refuse(Problem::error(
                        ProblemCode::Gitlink,
                        Some(path.as_str()),
                        "a Git submodule (gitlink) is not part of the pinned commit; it is never followed",
                    )),
                }
            }
        }
        Ok(planned)
    }

    /// The size of blob `id` (at `path`) from its object header, without inflating it.
    fn blob_size(&self, id: gix::ObjectId, path: &BundlePath) -> Result<u64, TreeError> {
        let header = self
            .repo
            .find_header(id)
            .map_err(|e| object_error(id, &e))?;
        if header.kind() != gix::objs::Kind::Blob {
            return Err(TreeError::Malformed {
                id: self.commit.to_string(),
                path: shown(format!("{}/{path}", self.folder).as_bytes()),
                reason: "is a file whose object is not a blob",
            });
        }
        Ok(header.size())
    }

    fn read(&self, id: gix::ObjectId) -> Result<Vec<u8>, TreeError> {
        Ok(self
            .repo
            .find_object(id)
            .map_err(|e| object_error(id, &e))?
            .detach()
            .data)
    }
}

/// The bundle path of entry `name` in `dir` (`None` for the bundle root), or `None` with a
/// problem recorded when the name is refused.
fn entry_path(
    builder: &mut FileSetBuilder,
    dir: Option<&BundlePath>,
    name: &[u8],
) -> Option<BundlePath> {
    let joined = |name: &str| match dir {
        Some(dir) => format!("{dir}/{name}"),
        None => name.to_owned(),
    };
    let Ok(name) = name.to_str() else {
        builder.refuse(Problem::error(
            ProblemCode::PathNotUtf8,
            Some(&joined(&name.to_str_lossy())),
            "file names must be valid UTF-8",
        ));
        return None;
    };
    let path = match dir {
        Some(dir) => dir.join(name),
        None => BundlePath::top(name),
    };
    path.map_err(|refusal| {
        builder.refuse(Problem::error(
            refusal.code,
            Some(&joined(name)),
            refusal.reason,
        ));
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::limits;
    use crate::source::git::test_repo::TestRepo;

    fn select(repo: &TestRepo, root: &str) -> Result<Option<(FileSet, Problems)>, TreeError> {
        let commit = repo.commit(root);
        let root = gix::ObjectId::from_hex(root.as_bytes()).expect("id");
        select_bundle(&repo.open(), commit, root, "skills/good", limits::CHAMVI)
    }

    fn skill(repo: &TestRepo, extra: &[(&str, &[u8], &str)]) -> String {
        let md = repo.blob(b"---\nname: good\ndescription: Good.\n---\n");
        let mut entries = vec![("100644", &b"SKILL.md"[..], md.as_str())];
        entries.extend_from_slice(extra);
        let good = repo.tree(&entries);
        let skills = repo.tree(&[("40000", b"good", &good)]);
        repo.tree(&[("40000", b"skills", &skills)])
    }

    #[test]
    fn the_wanted_files_are_every_file_of_the_bundle_at_any_depth() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let deep = repo.tree(&[("100644", b"c.md", &file)]);
        let refs = repo.tree(&[("100644", b"b.md", &file), ("40000", b"deep", &deep)]);
        let root = skill(&repo, &[("40000", b"refs", &refs)]);
        let commit = repo.commit(&root);
        let root = gix::ObjectId::from_hex(root.as_bytes()).expect("id");
        let wanted =
            wanted_blobs(&repo.open(), commit, root, "skills/good", limits::CHAMVI).expect("reads");
        assert_eq!(wanted.files, ["SKILL.md", "refs/b.md", "refs/deep/c.md"]);
        assert_eq!(wanted.blobs.len(), 3);
        let absent =
            wanted_blobs(&repo.open(), commit, root, "skills/none", limits::CHAMVI).expect("reads");
        assert_eq!(absent, WantedFolder::default());
    }

    #[test]
    fn a_file_of_mode_100755_is_marked_executable() {
        let repo = TestRepo::new();
        let script = repo.blob(b"echo hi\n");
        let scripts = repo.tree(&[("100755", b"run.sh", &script), ("100644", b"x.md", &script)]);
        let root = skill(&repo, &[("40000", b"scripts", &scripts)]);
        let (files, problems) = select(&repo, &root).expect("reads").expect("present");
        assert!(!problems.has_errors());
        assert!(files.is_executable("scripts/run.sh"));
        assert!(!files.is_executable("scripts/x.md") && !files.is_executable("SKILL.md"));
    }

    #[test]
    fn a_folder_that_is_a_file_or_absent_is_missing() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let skills = repo.tree(&[("100644", b"good", &file)]);
        let root = repo.tree(&[("40000", b"skills", &skills)]);
        assert!(select(&repo, &root).expect("reads").is_none());
        let root = repo.tree(&[("100644", b"other", &file)]);
        assert!(select(&repo, &root).expect("reads").is_none());
    }

    #[test]
    fn a_file_entry_naming_a_tree_is_malformed() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let sub = repo.tree(&[("100644", b"a.md", &file)]);
        let root = skill(&repo, &[("100644", b"notes.md", &sub)]);
        let err = select(&repo, &root).unwrap_err();
        assert_eq!(err.code(), "tree_malformed");
        assert!(
            err.to_string()
                .contains("`skills/good/notes.md` is a file whose object is not a blob")
        );
    }

    #[test]
    fn an_oversized_file_is_refused_from_its_header() {
        let repo = TestRepo::new();
        let big = repo.blob(&vec![b'a'; limits::MAX_SUPPORTING_FILE_BYTES as usize + 1]);
        let root = skill(&repo, &[("100644", b"big.md", &big)]);
        let (files, problems) = select(&repo, &root).expect("reads").expect("present");
        assert!(problems.contains(ProblemCode::FileTooLarge));
        assert!(files.get("big.md").is_none() && files.get("SKILL.md").is_some());
    }

    #[test]
    fn nothing_is_read_once_the_entry_bound_is_exceeded() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let names: Vec<String> = (0..limits::MAX_ENTRIES)
            .map(|i| format!("f{i:05}"))
            .collect();
        let extra: Vec<(&str, &[u8], &str)> = names
            .iter()
            .map(|n| ("100644", n.as_bytes(), file.as_str()))
            .collect();
        let root = skill(&repo, &extra);
        let (files, problems) = select(&repo, &root).expect("reads").expect("present");
        assert!(problems.contains(ProblemCode::TooManyEntries));
        assert!(
            files.is_partial() && files.is_empty(),
            "{} files read",
            files.len()
        );
    }
}
