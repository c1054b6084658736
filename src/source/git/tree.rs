//! The policy walk over the whole tree of a pinned commit, bounded in memory and time.
//!
//! The walk visits **every** entry, selected or not: a symbolic link anywhere refuses the whole
//! source (a symlink could later be materialised by another client, and a tree that holds one
//! was not written for a link-free format), and gitlinks (submodules) are found so that they can
//! be reported; none is ever followed. Whatever the names and however much the trees share:
//!
//! - **each distinct tree object is read once.** A tree that appears under many paths (a "tree
//!   bomb" of subtrees that all name one another) costs what its own entries cost, once; a link
//!   or gitlink inside it is found once and reported under the first path that reached it;
//! - **no path is kept** except the one being walked and the few reported ([`MAX_REPORTED`]);
//! - **every bound is checked before the work it bounds:** the bytes of tree objects read
//!   ([`MAX_TREE_BYTES`], from the object header, before the object is inflated), the entries of
//!   those trees ([`MAX_TREE_ENTRIES`]), and the length of the longest path ([`MAX_PATH_BYTES`],
//!   computed exactly, once per distinct tree, from the longest path below it);
//! - **malformed trees are refused:** an entry name that is empty, `.` or `..`, or holds `/` or
//!   NUL, two entries of one name, or entries out of Git's order (other tools would read such a
//!   tree differently, e.g. a root entry named `skills/good` merged with `skills/` `good/`).
//!
//! Blobs are never read here; [`super::select`] reads the approved bundles.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use gix::bstr::BString;
use gix::objs::tree::EntryKind;

/// The most entries (files, folders, links) the distinct tree objects of a commit may hold
/// together. A subtree named under many paths counts once.
pub const MAX_TREE_ENTRIES: usize = 1_000_000;

/// The most bytes the distinct tree objects of a commit may hold together (checked from each
/// object's header before it is read). Also bounds what the walk holds in memory at once.
pub const MAX_TREE_BYTES: u64 = 64 * 1024 * 1024;

/// The longest path, in bytes from the repository root with its `/` separators, that a commit's
/// tree may hold (Linux's `PATH_MAX`). It also bounds the nesting of trees.
pub const MAX_PATH_BYTES: usize = 4096;

/// The most symbolic links, and the most gitlinks, named in a report (all are counted).
pub const MAX_REPORTED: usize = 16;

/// Failures reading the object database, and trees refused by the walk.
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
    #[error(
        "the tree of `{id}` holds more than {max} {what}; refusing to walk it \
         (subtrees named under several paths count once)"
    )]
    TooLarge {
        /// The commit.
        id: String,
        /// What was counted: `entries` or `bytes of tree objects`.
        what: &'static str,
        /// The bound.
        max: u64,
    },
    /// A path of the tree is longer than [`MAX_PATH_BYTES`].
    #[error("the tree of `{id}` holds a path of {len} bytes, over the bound of {max}: `{path}`")]
    PathTooLong {
        /// The commit.
        id: String,
        /// The path, escaped and shortened for display (it may end inside a subtree).
        path: String,
        /// Its length in bytes (at least).
        len: usize,
        /// The bound.
        max: usize,
    },
    /// A tree object is malformed (see the module doc).
    #[error("the tree of `{id}` is malformed: entry `{path}` {reason}")]
    Malformed {
        /// The commit.
        id: String,
        /// The entry, escaped and shortened for display.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A tree of the commit is not in the repository: the server's answer left it out
    /// (retryable, as any incomplete answer).
    #[error(
        "the server's answer for commit `{commit}` left out its tree `{id}`; nothing was published"
    )]
    Missing {
        /// The commit.
        commit: String,
        /// The tree.
        id: String,
    },
    /// An object is missing or unreadable.
    #[error("cannot read object `{id}`: {detail}")]
    Object {
        /// The id.
        id: String,
        /// What gix said.
        detail: String,
    },
    /// Stopped by SIGINT/SIGTERM.
    #[error("the walk of the tree of `{id}` was interrupted")]
    Interrupted {
        /// The commit.
        id: String,
    },
}

impl TreeError {
    /// Stable error code.
    pub fn code(&self) -> crate::source::code::PrepareCode {
        use crate::source::code::PrepareCode;
        match self {
            TreeError::NotACommit { .. } => PrepareCode::NotACommit,
            TreeError::TooLarge { .. } => PrepareCode::TreeTooLarge,
            TreeError::PathTooLong { .. } => PrepareCode::TreePathTooLong,
            TreeError::Malformed { .. } => PrepareCode::TreeMalformed,
            TreeError::Object { .. } => PrepareCode::ObjectUnreadable,
            TreeError::Missing { .. } => PrepareCode::FetchIncomplete,
            TreeError::Interrupted { .. } => PrepareCode::Interrupted,
        }
    }
}

crate::support::error_code::coded_by_code!(TreeError);

/// Paths of one kind of entry found by the walk: the first few, and how many there are.
#[derive(Debug, Clone, Default)]
pub struct FoundPaths {
    /// The first [`MAX_REPORTED`] paths, in the order the walk met them (raw bytes).
    pub paths: Vec<BString>,
    /// The object each of `paths` names (a link's target blob, a gitlink's commit).
    pub ids: Vec<gix::ObjectId>,
    /// How many there are in all (each distinct tree counted once).
    pub count: usize,
}

impl FoundPaths {
    fn push(&mut self, path: impl FnOnce() -> BString, id: gix::ObjectId) {
        self.count += 1;
        if self.paths.len() < MAX_REPORTED {
            self.paths.push(path());
            self.ids.push(id);
        }
    }
}

/// What the walk found in the commit's tree.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The root tree of the commit.
    pub root: gix::ObjectId,
    /// Symbolic links.
    pub symlinks: FoundPaths,
    /// Gitlinks (submodules) and entries of unknown mode.
    pub gitlinks: FoundPaths,
    /// Entries of the distinct tree objects.
    pub entries: usize,
}

/// Walks every distinct tree of `commit`, checking every bound and the form of every entry.
pub fn walk(
    repo: &gix::Repository,
    commit: gix::ObjectId,
    interrupt: &AtomicBool,
) -> Result<Summary, TreeError> {
    let commit_obj = repo
        .find_commit(commit)
        .map_err(|e| TreeError::NotACommit {
            id: commit.to_string(),
            detail: e.to_string(),
        })?;
    let root = commit_obj
        .tree_id()
        .map_err(|e| TreeError::Object {
            id: commit.to_string(),
            detail: e.to_string(),
        })?
        .detach();
    Walker::new(repo, commit, root, interrupt, Bounds::DEFAULT).run()
}

/// The bounds one walk applies (the constants above, smaller in tests).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    entries: usize,
    tree_bytes: u64,
    path_bytes: usize,
}

impl Bounds {
    const DEFAULT: Bounds = Bounds {
        entries: MAX_TREE_ENTRIES,
        tree_bytes: MAX_TREE_BYTES,
        path_bytes: MAX_PATH_BYTES,
    };
}

/// A tree being walked: its bytes, its subtrees, and the longest path found below it so far.
struct Frame {
    id: gix::ObjectId,
    data: Vec<u8>,
    /// Subtree entries: object id and the range of the name in `data`.
    subtrees: Vec<(gix::ObjectId, Range<usize>)>,
    /// Subtrees already walked (the one being walked is `next - 1`).
    next: usize,
    /// Bytes of this tree's own path (0 for the root).
    path_len: usize,
    /// The longest path below this tree so far, relative to it.
    height: usize,
}

struct Walker<'a> {
    repo: &'a gix::Repository,
    commit: gix::ObjectId,
    interrupt: &'a AtomicBool,
    bounds: Bounds,
    summary: Summary,
    tree_bytes: u64,
    /// The longest relative path below each tree walked; `None` while it is being walked.
    heights: HashMap<gix::ObjectId, Option<usize>>,
}

impl<'a> Walker<'a> {
    fn new(
        repo: &'a gix::Repository,
        commit: gix::ObjectId,
        root: gix::ObjectId,
        interrupt: &'a AtomicBool,
        bounds: Bounds,
    ) -> Self {
        Walker {
            repo,
            commit,
            interrupt,
            bounds,
            summary: Summary {
                root,
                symlinks: FoundPaths::default(),
                gitlinks: FoundPaths::default(),
                entries: 0,
            },
            tree_bytes: 0,
            heights: HashMap::new(),
        }
    }

    fn run(mut self) -> Result<Summary, TreeError> {
        let root = self.summary.root;
        self.heights.insert(root, None);
        let mut stack = vec![self.read_tree(root, &[])?];
        while let Some(top) = stack.last_mut() {
            let Some((id, name)) = top.subtrees.get(top.next).cloned() else {
                let done = stack.pop().expect("the stack has a top");
                self.heights.insert(done.id, Some(done.height));
                if let Some(parent) = stack.last_mut() {
                    let name = &parent.subtrees[parent.next - 1].1;
                    parent.height = parent.height.max(below(name.len(), done.height));
                }
                continue;
            };
            top.next += 1;
            match self.heights.get(&id) {
                Some(Some(height)) => {
                    let (height, parent_path) = (*height, top.path_len);
                    top.height = top.height.max(below(name.len(), height));
                    let len = joined(parent_path, below(name.len(), height));
                    if len > self.bounds.path_bytes {
                        let mut path = path_of(&stack);
                        path.extend_from_slice(b"/...");
                        return Err(self.path_too_long(&path, len));
                    }
                }
                // Only a hash collision could build a tree that contains itself; even then the
                // walk ends.
                Some(None) => {
                    return Err(self.malformed(&path_of(&stack), "is a tree that contains itself"));
                }
                None => {
                    if self.interrupt.load(Ordering::Relaxed) {
                        return Err(TreeError::Interrupted {
                            id: self.commit.to_string(),
                        });
                    }
                    self.heights.insert(id, None);
                    let frame = self.read_tree(id, &stack)?;
                    stack.push(frame);
                }
            }
        }
        Ok(self.summary)
    }

    /// Reads and checks the tree `id`, reached by the path the frames of `stack` spell.
    fn read_tree(&mut self, id: gix::ObjectId, stack: &[Frame]) -> Result<Frame, TreeError> {
        let path_len = stack.last().map_or(0, |parent| {
            joined(parent.path_len, parent.subtrees[parent.next - 1].1.len())
        });
        let header = self.repo.find_header(id).map_err(|e| {
            if self.repo.has_object(id) {
                object_error(id, &e)
            } else {
                TreeError::Missing {
                    commit: self.commit.to_string(),
                    id: id.to_string(),
                }
            }
        })?;
        if header.kind() != gix::objs::Kind::Tree {
            return Err(
                self.malformed(&path_of(stack), "is a directory whose object is not a tree")
            );
        }
        self.tree_bytes += header.size();
        if self.tree_bytes > self.bounds.tree_bytes {
            return Err(self.too_large("bytes of tree objects", self.bounds.tree_bytes));
        }
        let data = self
            .repo
            .find_object(id)
            .map_err(|e| object_error(id, &e))?
            .detach()
            .data;
        let mut frame = Frame {
            id,
            data: Vec::new(),
            subtrees: Vec::new(),
            next: 0,
            path_len,
            height: 0,
        };
        let mut order = Order::default();
        for entry in gix::objs::TreeRefIter::from_bytes(&data, self.repo.object_hash()) {
            let Ok(entry) = entry else {
                return Err(self.malformed(&path_of(stack), "is a tree that cannot be decoded"));
            };
            self.summary.entries += 1;
            if self.summary.entries > self.bounds.entries {
                return Err(self.too_large("entries", self.bounds.entries as u64));
            }
            let name: &[u8] = entry.filename;
            let start = name.as_ptr() as usize - data.as_ptr() as usize;
            let range = start..start + name.len();
            let entry_path = || child_path(stack, name);
            let len = joined(path_len, name.len());
            if len > self.bounds.path_bytes {
                return Err(self.path_too_long(&entry_path(), len));
            }
            if let Some(reason) = name_problem(name) {
                return Err(self.malformed(&entry_path(), reason));
            }
            let kind = entry.mode.kind();
            if let Some(reason) = order.admit(&data, range.clone(), kind == EntryKind::Tree) {
                return Err(self.malformed(&entry_path(), reason));
            }
            match kind {
                EntryKind::Tree => frame.subtrees.push((entry.oid.to_owned(), range)),
                EntryKind::Blob | EntryKind::BlobExecutable => {}
                EntryKind::Link => self.summary.symlinks.push(entry_path, entry.oid.to_owned()),
                // gix maps every unknown mode to `Commit` as well: both are treated alike.
                EntryKind::Commit => self.summary.gitlinks.push(entry_path, entry.oid.to_owned()),
            }
            if kind != EntryKind::Tree {
                frame.height = frame.height.max(name.len());
            }
        }
        frame.data = data;
        Ok(frame)
    }

    fn too_large(&self, what: &'static str, max: u64) -> TreeError {
        TreeError::TooLarge {
            id: self.commit.to_string(),
            what,
            max,
        }
    }

    fn path_too_long(&self, path: &[u8], len: usize) -> TreeError {
        TreeError::PathTooLong {
            id: self.commit.to_string(),
            path: shown(path),
            len,
            max: self.bounds.path_bytes,
        }
    }

    fn malformed(&self, path: &[u8], reason: &'static str) -> TreeError {
        TreeError::Malformed {
            id: self.commit.to_string(),
            path: shown(path),
            reason,
        }
    }
}

/// Git's canonical order of the entries of one tree, checked as entries arrive: strictly
/// increasing (trees compare as if their name ended in `/`), and no name twice.
#[derive(Default)]
struct Order {
    previous: Option<(Range<usize>, bool)>,
    /// Names of non-tree entries that a later tree entry of the same name could still follow:
    /// each is a prefix of the next, and every entry since then extends the last one with a byte
    /// that sorts before `/`.
    open: Vec<Range<usize>>,
}

impl Order {
    fn admit(&mut self, data: &[u8], name: Range<usize>, is_tree: bool) -> Option<&'static str> {
        let current = &data[name.clone()];
        if let Some((previous, previous_is_tree)) = self.previous.replace((name.clone(), is_tree)) {
            let order =
                gix::objs::tree::name_order(&data[previous], previous_is_tree, current, is_tree);
            if order != std::cmp::Ordering::Less {
                return Some(if order.is_eq() {
                    "appears twice in its tree"
                } else {
                    "is out of Git's order in its tree"
                });
            }
        }
        while let Some(open) = self.open.last() {
            let open = &data[open.clone()];
            if is_tree && current == open {
                return Some("appears twice in its tree (as a file and as a directory)");
            }
            let extends = current.len() > open.len()
                && current.starts_with(open)
                && current[open.len()] < b'/';
            if extends {
                break;
            }
            self.open.pop();
        }
        if !is_tree {
            self.open.push(name);
        }
        None
    }
}

/// Why `name` cannot be a tree entry name, if it cannot.
fn name_problem(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("has an empty name")
    } else if name == b"." || name == b".." {
        Some("is named `.` or `..`")
    } else if name.contains(&b'/') {
        Some("has a name that holds `/`")
    } else if name.contains(&0) {
        Some("has a name that holds NUL")
    } else {
        None
    }
}

/// Bytes of a path made of a directory of `dir_len` bytes (0 for the root) and a relative path
/// of `rel_len` bytes.
fn joined(dir_len: usize, rel_len: usize) -> usize {
    if dir_len == 0 {
        rel_len
    } else {
        dir_len + 1 + rel_len
    }
}

/// The longest relative path through an entry named with `name_len` bytes, whose subtree's own
/// longest relative path is `height` (0 for a file or an empty tree).
fn below(name_len: usize, height: usize) -> usize {
    if height == 0 {
        name_len
    } else {
        name_len + 1 + height
    }
}

/// The path of the tree on top of `stack` (empty for the root).
fn path_of(stack: &[Frame]) -> BString {
    let mut path = BString::default();
    for frame in stack {
        let Some((_, name)) = frame.next.checked_sub(1).map(|i| &frame.subtrees[i]) else {
            break;
        };
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(&frame.data[name.clone()]);
    }
    path
}

/// The path of entry `name` of the tree being read, whose parents are `stack`.
fn child_path(stack: &[Frame], name: &[u8]) -> BString {
    let mut path = path_of(stack);
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// At most this many bytes of a path are shown in a message, from its start and from its end.
const SHOWN_BYTES: usize = 96;

/// `path` for a message: escaped, and shortened in the middle when long (`/` for the root).
pub(crate) fn shown(path: &[u8]) -> String {
    if path.is_empty() {
        return "/".to_owned();
    }
    if path.len() <= 2 * SHOWN_BYTES {
        return crate::support::escape::bytes(path).to_string();
    }
    format!(
        "{}...{}",
        crate::support::escape::bytes(&path[..SHOWN_BYTES]),
        crate::support::escape::bytes(&path[path.len() - SHOWN_BYTES..])
    )
}

/// An object that gix could not find or read.
pub(crate) fn object_error(id: gix::ObjectId, e: &dyn std::fmt::Display) -> TreeError {
    TreeError::Object {
        id: id.to_string(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::git::test_repo::TestRepo;

    fn walk_with(repo: &TestRepo, root: &str, bounds: Bounds) -> Result<Summary, TreeError> {
        let interrupt = AtomicBool::new(false);
        let commit = repo.commit(root);
        let root = gix::ObjectId::from_hex(root.as_bytes()).expect("id");
        Walker::new(&repo.open(), commit, root, &interrupt, bounds).run()
    }

    fn walk_default(repo: &TestRepo, root: &str) -> Result<Summary, TreeError> {
        walk_with(repo, root, Bounds::DEFAULT)
    }

    fn bounds(entries: usize, tree_bytes: u64, path_bytes: usize) -> Bounds {
        Bounds {
            entries,
            tree_bytes,
            path_bytes,
        }
    }

    /// `name/name/.../file.md` with `levels` directories.
    fn chain(repo: &TestRepo, name: &[u8], levels: usize, file: &str) -> String {
        let mut tree = repo.tree(&[("100644", b"file.md", file)]);
        for _ in 0..levels {
            tree = repo.tree(&[("40000", name, &tree)]);
        }
        tree
    }

    #[test]
    fn a_shared_subtree_is_walked_and_counted_once() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let link = repo.blob(b"target");
        let shared = repo.tree(&[("100644", b"a.md", &file), ("120000", b"l", &link)]);
        let root = repo.tree(&[
            ("40000", b"one", &shared),
            ("40000", b"three", &shared),
            ("40000", b"two", &shared),
        ]);
        let summary = walk_default(&repo, &root).expect("walks");
        assert_eq!(summary.entries, 3 + 2);
        assert_eq!(summary.symlinks.count, 1);
        assert_eq!(summary.symlinks.paths, [BString::from("one/l")]);
    }

    #[test]
    fn the_path_bound_is_exact() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        // `dd/` * 10 + `file.md`: 37 bytes.
        let root = chain(&repo, b"dd", 10, &file);
        assert!(walk_with(&repo, &root, bounds(100, 1 << 20, 37)).is_ok());
        let err = walk_with(&repo, &root, bounds(100, 1 << 20, 36)).unwrap_err();
        assert_eq!(err.code(), "tree_path_too_long");
        assert!(err.to_string().contains("a path of 37 bytes"), "{err}");
    }

    #[test]
    fn a_long_path_through_a_subtree_first_met_by_a_short_one_is_refused() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        // `s/dd/dd/dd/dd/file.md` (21 bytes) is met first; `zz/zz/zz/zz/s/dd/...` (33) later.
        let shared = chain(&repo, b"dd", 4, &file);
        let deep = repo.tree(&[("40000", b"s", &shared)]);
        let deep = chain_to(&repo, b"zz", 4, &deep);
        let root = repo.tree(&[("40000", b"s", &shared), ("40000", b"zz", &deep)]);
        assert!(walk_with(&repo, &root, bounds(100, 1 << 20, 33)).is_ok());
        let err = walk_with(&repo, &root, bounds(100, 1 << 20, 32)).unwrap_err();
        assert_eq!(err.code(), "tree_path_too_long");
        assert!(err.to_string().contains("a path of 33 bytes"), "{err}");
        assert!(err.to_string().contains("`zz/zz/zz/zz/s/...`"), "{err}");
    }

    /// `levels - 1` directories named `name` above `tree` (the root names the last one).
    fn chain_to(repo: &TestRepo, name: &[u8], levels: usize, tree: &str) -> String {
        let mut tree = tree.to_owned();
        for _ in 1..levels {
            tree = repo.tree(&[("40000", name, &tree)]);
        }
        tree
    }

    #[test]
    fn the_entry_and_byte_bounds_count_distinct_trees() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let shared = repo.tree(&[("100644", b"a", &file), ("100644", b"b", &file)]);
        let root = repo.tree(&[("40000", b"x", &shared), ("40000", b"y", &shared)]);
        // 2 + 2 entries; `100644 a\0` and `40000 x\0`, each with a 20-byte id.
        let bytes = 2 * (9 + 20) + 2 * (8 + 20);
        assert!(walk_with(&repo, &root, bounds(4, bytes, 100)).is_ok());
        let err = walk_with(&repo, &root, bounds(3, bytes, 100)).unwrap_err();
        assert_eq!(err.code(), "tree_too_large");
        assert!(err.to_string().contains("more than 3 entries"), "{err}");
        let err = walk_with(&repo, &root, bounds(4, bytes - 1, 100)).unwrap_err();
        assert_eq!(err.code(), "tree_too_large");
        assert!(err.to_string().contains("bytes of tree objects"), "{err}");
    }

    #[test]
    fn names_no_git_server_sends_are_refused_too() {
        // `git upload-pack` dies on an empty name, so only a local or foreign object database
        // can hold one; the walk refuses it all the same.
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        for name in [&b""[..], b"a/b", b".", b".."] {
            let root = repo.tree(&[("100644", name, &file)]);
            let err = walk_default(&repo, &root).unwrap_err();
            assert_eq!(err.code(), "tree_malformed", "{name:?}: {err}");
        }
    }

    #[test]
    fn a_directory_entry_naming_a_blob_is_malformed() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let root = repo.tree(&[("40000", b"dir", &file)]);
        let err = walk_default(&repo, &root).unwrap_err();
        assert_eq!(err.code(), "tree_malformed");
        assert!(
            err.to_string()
                .contains("`dir` is a directory whose object is not a tree")
        );
    }

    #[test]
    fn an_interrupt_stops_the_walk() {
        let repo = TestRepo::new();
        let file = repo.blob(b"x");
        let root = chain(&repo, b"d", 3, &file);
        let commit = repo.commit(&root);
        let err = walk(&repo.open(), commit, &AtomicBool::new(true)).unwrap_err();
        assert_eq!(err.code(), "interrupted");
        assert!(crate::support::error_code::Coded::is_retryable(&err));
    }

    #[test]
    fn order_checks_follow_git() {
        let data = b"aa.mdaa-ba/b";
        let admit = |entries: &[(Range<usize>, bool)]| {
            let mut order = Order::default();
            entries
                .iter()
                .find_map(|(name, is_tree)| order.admit(data, name.clone(), *is_tree))
        };
        // `a` (file), `a.md`, `a` (tree): the tree sorts as `a/`, after `a.md`: a duplicate.
        assert!(admit(&[(0..1, false), (1..5, false), (0..1, true)]).is_some());
        // `a` (file), `a-b` (file), `a.md`, then tree `a` again.
        assert!(admit(&[(0..1, false), (6..9, false), (1..5, false), (0..1, true)]).is_some());
        // `a.md`, `a` (tree): in order, distinct.
        assert!(admit(&[(1..5, false), (0..1, true)]).is_none());
        // `a` (tree) then `a.md`: out of order.
        assert!(admit(&[(0..1, true), (1..5, false)]).is_some());
    }
}
