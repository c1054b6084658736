//! The tree of a pinned commit: a policy walk over every entry, and the selection of the
//! approved bundles as [`FileSet`]s.
//!
//! The walk visits the **whole** tree, selected or not. A symbolic link anywhere refuses the
//! whole source (a symlink could later be materialised by another client, and a tree that holds
//! one was not written for a link-free format). Gitlinks (submodules) are never followed: inside
//! a selected bundle they refuse that bundle, elsewhere they are reported. Selected bundles go
//! through the same [`FileSetBuilder`] as directories on disk; blobs larger than their bound are
//! refused from their header, without being inflated; Git LFS pointer files are refused because
//! the real content is not in the pin.

use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;

use crate::format::bundle_path::BundlePath;
use crate::format::file_set::{FileSet, FileSetBuilder};
use crate::format::limits;
use crate::format::problem::{Problem, ProblemCode, Problems};
use crate::format::skill_name::SkillName;

/// One blob of the commit's tree.
#[derive(Debug, Clone)]
pub struct Blob {
    /// Path from the repository root, `/`-separated (raw bytes; may not be UTF-8).
    pub path: BString,
    /// Object id.
    pub id: gix::ObjectId,
}

/// What the walk found in the commit's tree.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Every regular (or executable) blob.
    pub blobs: Vec<Blob>,
    /// Every symbolic link.
    pub symlinks: Vec<BString>,
    /// Every gitlink (submodule) or entry of unknown mode.
    pub gitlinks: Vec<BString>,
    /// Every directory.
    pub trees: Vec<BString>,
}

/// Failures reading the object database.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    /// The pinned id does not name a commit (a tree, blob or tag id).
    #[error("`{id}` is not a commit: {detail}")]
    NotACommit {
        /// The id.
        id: String,
        /// What gix said.
        detail: String,
    },
    /// The tree is larger than any skills repository needs (a "tree bomb").
    #[error("the tree of `{id}` has more than {max} entries; refusing to walk it")]
    TooLarge {
        /// The commit.
        id: String,
        /// The bound.
        max: usize,
    },
    /// An object is missing or unreadable.
    #[error("cannot read object `{id}`: {detail}")]
    Object {
        /// The id.
        id: String,
        /// What gix said.
        detail: String,
    },
}

impl TreeError {
    /// Stable error code.
    pub fn code(&self) -> crate::prepare::code::PrepareCode {
        use crate::prepare::code::PrepareCode;
        match self {
            TreeError::NotACommit { .. } => PrepareCode::NotACommit,
            TreeError::TooLarge { .. } => PrepareCode::TreeTooLarge,
            TreeError::Object { .. } => PrepareCode::ObjectUnreadable,
        }
    }
}

/// The most tree entries (files, folders, links, at every depth) a commit may have. Paths are
/// counted, not objects, so a small tree that repeats one subtree many times is bounded too.
pub const MAX_TREE_ENTRIES: usize = 1_000_000;

/// Walks every tree entry of `commit`.
pub fn inventory(repo: &gix::Repository, commit: gix::ObjectId) -> Result<Inventory, TreeError> {
    let commit_obj = repo
        .find_commit(commit)
        .map_err(|e| TreeError::NotACommit {
            id: commit.to_string(),
            detail: e.to_string(),
        })?;
    let tree_id = commit_obj.tree_id().map_err(|e| TreeError::Object {
        id: commit.to_string(),
        detail: e.to_string(),
    })?;
    let mut inventory = Inventory::default();
    let mut seen = 0usize;
    let mut todo: Vec<(BString, gix::ObjectId)> = vec![(BString::default(), tree_id.detach())];
    while let Some((dir, id)) = todo.pop() {
        let object_error = |e: &dyn std::fmt::Display| TreeError::Object {
            id: id.to_string(),
            detail: e.to_string(),
        };
        let tree = repo.find_tree(id).map_err(|e| object_error(&e))?;
        let decoded = tree.decode().map_err(|e| object_error(&e))?;
        for entry in decoded.entries {
            seen += 1;
            if seen > MAX_TREE_ENTRIES {
                return Err(TreeError::TooLarge {
                    id: commit.to_string(),
                    max: MAX_TREE_ENTRIES,
                });
            }
            let path = join(dir.as_ref(), entry.filename);
            match entry.mode.kind() {
                EntryKind::Tree => {
                    inventory.trees.push(path.clone());
                    todo.push((path, entry.oid.to_owned()));
                }
                EntryKind::Blob | EntryKind::BlobExecutable => inventory.blobs.push(Blob {
                    path,
                    id: entry.oid.to_owned(),
                }),
                EntryKind::Link => inventory.symlinks.push(path),
                // gix maps every unknown mode to `Commit` as well: both are refused alike.
                EntryKind::Commit => inventory.gitlinks.push(path),
            }
        }
    }
    inventory.blobs.sort_by(|a, b| a.path.cmp(&b.path));
    inventory.symlinks.sort();
    inventory.gitlinks.sort();
    Ok(inventory)
}

fn join(dir: &BStr, name: &BStr) -> BString {
    let mut path = BString::from(dir.to_vec());
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// The first line of every Git LFS pointer file.
const LFS_POINTER_PREFIX: &[u8] = b"version https://git-lfs.github.com/spec/";

/// The approved bundle `name` under `root`: its file set and the problems found, or `None` when
/// the tree has no `root/name/` directory.
pub fn select_bundle(
    repo: &gix::Repository,
    inventory: &Inventory,
    root: Option<&BundlePath>,
    name: &SkillName,
) -> Result<Option<(FileSet, Problems)>, TreeError> {
    let prefix = match root {
        Some(root) => format!("{root}/{name}/"),
        None => format!("{name}/"),
    };
    let dir = &prefix[..prefix.len() - 1];
    if !inventory.trees.iter().any(|t| t == dir.as_bytes()) {
        return Ok(None);
    }
    let mut builder = FileSetBuilder::new();
    let mut lfs = Problems::new();
    for gitlink in inventory
        .gitlinks
        .iter()
        .filter(|p| p.starts_with(prefix.as_bytes()))
    {
        builder.count_entry();
        builder.refuse(Problem::error(
            ProblemCode::Gitlink,
            Some(&gitlink[prefix.len()..].to_str_lossy()),
            "a Git submodule (gitlink) is not part of the pinned commit; it is never followed",
        ));
    }
    for blob in inventory
        .blobs
        .iter()
        .filter(|b| b.path.starts_with(prefix.as_bytes()))
    {
        let rel = &blob.path[prefix.len()..];
        let Ok(rel) = rel.to_str() else {
            builder.count_entry();
            builder.refuse(Problem::error(
                ProblemCode::PathNotUtf8,
                Some(&rel.to_str_lossy()),
                "file names must be valid UTF-8",
            ));
            continue;
        };
        let size = repo
            .find_header(blob.id)
            .map_err(|e| TreeError::Object {
                id: blob.id.to_string(),
                detail: e.to_string(),
            })?
            .size();
        if size > limits::max_file_bytes(rel) {
            builder.insert_oversized(rel, size);
            continue;
        }
        let data = repo
            .find_blob(blob.id)
            .map_err(|e| TreeError::Object {
                id: blob.id.to_string(),
                detail: e.to_string(),
            })?
            .detach()
            .data;
        if data.starts_with(LFS_POINTER_PREFIX) {
            lfs.push(Problem::error(
                ProblemCode::LfsPointer,
                Some(rel),
                "a Git LFS pointer: the real content is stored outside the pinned commit",
            ));
        }
        builder.insert(rel, data);
    }
    let (files, mut problems) = builder.finish();
    problems.extend(lfs);
    Ok(Some((files, problems)))
}
