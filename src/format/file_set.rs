//! The in-memory file set of one bundle, and the builder through which every bundle byte enters
//! the program.
//!
//! A [`FileSet`] maps checked [`BundlePath`]s to exact file bytes, ordered by code point (the
//! digest order). It can only be made by a [`FileSetBuilder`], which applies the path grammar and
//! the tree bounds of a [`Limits`] profile (`chamvi` unless the source names another) *as entries arrive*: the safe directory reader feeds it one
//! directory entry at a time (so an enormous tree is refused early), and in-memory or Git sources
//! feed it whole paths. Whatever the source, the same rules hold.
//!
//! The builder records problems instead of stopping at the first one; [`FileSetBuilder::finish`]
//! returns the files that were admitted together with every problem, so content rules can still
//! be checked on them and a reviewer sees everything at once.

use std::collections::{BTreeMap, BTreeSet};

use crate::format::bundle_path::BundlePath;
use crate::format::limits::{self, Limits};
use crate::format::problem::{Problem, ProblemCode, Problems};

/// Whether `bytes` are not text: a NUL byte, or not valid UTF-8 (what the text rule of
/// [`crate::format::bundle`] refuses, and what the content rules do not scan).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// The regular files of one bundle, by path, in code-point order.
///
/// ```
/// let mut builder = skillfold::FileSetBuilder::new();
/// builder.insert("SKILL.md", b"---\nname: hello\ndescription: Says hello.\n---\n# Hello\n".to_vec());
/// let (files, problems) = builder.finish();
/// assert_eq!(files.len(), 1);
/// let bundle = skillfold::Bundle::check(files, problems).unwrap();
/// assert_eq!(bundle.name().as_str(), "hello");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSet {
    files: BTreeMap<BundlePath, Vec<u8>>,
    /// `false` when the source stopped before seeing every entry (the entry bound).
    partial: bool,
    /// The profile it was read under; the content rules follow it.
    limits: Limits,
    /// The files the source marks executable (a Git tree's `100755`, an image layer's execute
    /// bits): covered by the pinned commit or digest, though not by the bundle digest.
    executable: BTreeSet<String>,
}

impl FileSet {
    /// Whether the source marks the file at `path` executable (never for a folder on disk: a
    /// local source's modes are read where it is).
    pub fn is_executable(&self, path: &str) -> bool {
        self.executable.contains(path)
    }

    /// The files, in code-point order of their paths.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&BundlePath, &[u8])> {
        self.files.iter().map(|(p, b)| (p, b.as_slice()))
    }

    /// The bytes of the file at `path`, if present.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Whether the source stopped early (the entry bound was exceeded): files may be missing.
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The profile the file set was read under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The sum of all file sizes.
    pub fn total_bytes(&self) -> u64 {
        self.files.values().map(|b| b.len() as u64).sum()
    }
}

/// Builds a [`FileSet`], enforcing the path grammar and the tree bounds as entries arrive.
///
/// ```
/// let mut builder = skillfold::FileSetBuilder::new();
/// builder.insert("SKILL.md", b"---\nname: hello\ndescription: Says hello.\n---\n".to_vec());
/// builder.insert("../escape.md", b"refused".to_vec()); // a path outside the bundle
/// let (files, problems) = builder.finish();
/// assert_eq!(files.len(), 1);
/// assert!(problems.has_errors());
/// ```
#[derive(Debug)]
pub struct FileSetBuilder {
    limits: Limits,
    files: BTreeMap<BundlePath, Vec<u8>>,
    problems: Problems,
    /// Inventory entries so far; the root counts as one.
    entries: usize,
    /// Regular files seen, read or not.
    file_count: usize,
    /// Bytes of the files admitted so far.
    total_bytes: u64,
    entries_exceeded: bool,
    /// Directories implied by [`FileSetBuilder::insert`] paths, counted once each.
    implied_dirs: BTreeSet<String>,
    /// Paths the source marks executable.
    executable: BTreeSet<String>,
}

impl Default for FileSetBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl FileSetBuilder {
    /// An empty bundle under the `chamvi` bounds; its root already counts as one inventory entry.
    pub fn new() -> Self {
        Self::with_limits(limits::CHAMVI)
    }

    /// An empty bundle under the bounds of `limits`.
    pub fn with_limits(limits: Limits) -> Self {
        FileSetBuilder {
            limits,
            files: BTreeMap::new(),
            problems: Problems::new(),
            entries: 1,
            file_count: 0,
            total_bytes: 0,
            entries_exceeded: false,
            implied_dirs: BTreeSet::new(),
            executable: BTreeSet::new(),
        }
    }

    /// Counts one inventory entry of any kind. Returns `false` once the entry bound is exceeded:
    /// the caller must then stop walking the tree.
    pub fn count_entry(&mut self) -> bool {
        if self.entries_exceeded {
            return false;
        }
        self.entries += 1;
        if self.entries > self.limits.entries() {
            self.entries_exceeded = true;
            self.problems.push(
                Problem::error(
                    ProblemCode::TooManyEntries,
                    None,
                    format!(
                        "more than {} inventory entries (root and directories included); \
                         stopped walking the tree",
                        self.limits.entries()
                    ),
                )
                .with_bound(self.limits.entries() as u64, self.entries as u64),
            );
            return false;
        }
        true
    }

    /// The profile it checks against.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether the walk was stopped by the entry bound.
    pub fn is_exhausted(&self) -> bool {
        self.entries_exceeded
    }

    /// Admits a directory (already counted as an entry). Returns whether to descend into it:
    /// `false` when it is nested deeper than the bound.
    pub fn enter_directory(&mut self, path: &BundlePath) -> bool {
        let level = path.depth();
        if level > limits::MAX_DEPTH {
            self.problems.push(
                Problem::error(
                    ProblemCode::TooDeep,
                    Some(path.as_str()),
                    format!(
                        "directory is nested {level} levels deep, over the bound of {}",
                        limits::MAX_DEPTH
                    ),
                )
                .with_bound(limits::MAX_DEPTH as u64, level as u64),
            );
            return false;
        }
        true
    }

    /// Announces a regular file (already counted as an entry) and says how many bytes to read
    /// at most: one more than its bound, so a larger file is detected without reading it all.
    /// `None` means do not read it, because the file bound is already exceeded.
    pub fn begin_file(&mut self, path: &BundlePath) -> Option<u64> {
        self.file_count += 1;
        if self.file_count > self.limits.files() {
            return None;
        }
        Some(self.limits.max_file_bytes(path.as_str()) + 1)
    }

    /// Admits the bytes of a file announced with [`begin_file`](Self::begin_file). A file over its
    /// bound is recorded as a problem and its bytes are dropped.
    pub fn add_file(&mut self, path: BundlePath, bytes: Vec<u8>) {
        let len = bytes.len() as u64;
        self.total_bytes += len;
        if len > self.limits.max_file_bytes(path.as_str()) {
            self.problems.push(too_large(&self.limits, &path, len));
            return;
        }
        self.files.insert(path, bytes);
    }

    /// Admits a file announced with [`begin_file`](Self::begin_file) whose exact size the source
    /// knows to be over the cap it was given, without its bytes.
    pub fn add_oversized(&mut self, path: BundlePath, size: u64) {
        self.total_bytes += size;
        self.problems.push(too_large(&self.limits, &path, size));
    }

    /// Marks the file at `path` executable, as the source says (a Git tree entry of mode
    /// `100755`, an image layer entry with an execute bit); kept only if the file is admitted.
    pub fn mark_executable(&mut self, path: &str) {
        self.executable.insert(path.to_owned());
    }

    /// Records a problem found by the source (a symlink, an unreadable name, ...).
    pub fn refuse(&mut self, problem: Problem) {
        self.problems.push(problem);
    }

    /// For in-memory and Git sources: admits a file by its whole path, counting and checking
    /// every directory the path implies.
    pub fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        if let Some(path) = self.admit_path(path) {
            self.add_file(path, bytes);
        }
    }

    /// Like [`insert`](Self::insert) for a file whose exact size is known to be over its bound;
    /// its bytes are never loaded.
    pub fn insert_oversized(&mut self, path: &str, size: u64) {
        if let Some(path) = self.admit_path(path) {
            self.add_oversized(path, size);
        }
    }

    /// Parses `path`, counts the directories it implies and the file itself; `None` when the
    /// path is refused or the file must not be read.
    fn admit_path(&mut self, path: &str) -> Option<BundlePath> {
        let path = match BundlePath::parse(path) {
            Ok(p) => p,
            Err(refusal) => {
                self.count_entry();
                self.refuse(Problem::error(refusal.code, Some(path), refusal.reason));
                return None;
            }
        };
        let clash = self.files.contains_key(path.as_str())
            || self.implied_dirs.contains(path.as_str())
            || path
                .as_str()
                .match_indices('/')
                .any(|(i, _)| self.files.contains_key(&path.as_str()[..i]));
        if clash {
            self.count_entry();
            self.refuse(Problem::error(
                ProblemCode::DuplicatePath,
                Some(path.as_str()),
                "the path appears twice, or as both a file and a directory",
            ));
            return None;
        }
        let segments: Vec<&str> = path.as_str().split('/').collect();
        for end in 1..segments.len() {
            let dir = segments[..end].join("/");
            if self.implied_dirs.insert(dir.clone()) {
                if !self.count_entry() {
                    return None;
                }
                let dir = BundlePath::parse(&dir).expect("prefix of a checked path");
                if !self.enter_directory(&dir) {
                    return None;
                }
            }
        }
        (self.count_entry() && self.begin_file(&path).is_some()).then_some(path)
    }

    /// Finishes: applies the bundle-wide bounds and returns the admitted files with every
    /// problem recorded.
    pub fn finish(mut self) -> (FileSet, Problems) {
        if self.file_count > self.limits.files() {
            let count = self.file_count;
            self.problems.push(
                Problem::error(
                    ProblemCode::TooManyFiles,
                    None,
                    format!(
                        "bundle holds {count}{} regular files, over the bound of {}",
                        if self.entries_exceeded {
                            " or more"
                        } else {
                            ""
                        },
                        self.limits.files()
                    ),
                )
                .with_bound(self.limits.files() as u64, count as u64),
            );
        }
        if self.total_bytes > self.limits.bundle_bytes() {
            let total = self.total_bytes;
            self.problems.push(
                Problem::error(
                    ProblemCode::BundleTooLarge,
                    None,
                    format!(
                        "files add up to {total} bytes, over the bound of {} bytes",
                        self.limits.bundle_bytes()
                    ),
                )
                .with_bound(self.limits.bundle_bytes(), total),
            );
        }
        let mut executable = self.executable;
        executable.retain(|path| self.files.contains_key(path.as_str()));
        let files = FileSet {
            files: self.files,
            partial: self.entries_exceeded,
            limits: self.limits,
            executable,
        };
        (files, self.problems)
    }
}

fn too_large(limits: &Limits, path: &BundlePath, len: u64) -> Problem {
    let max = limits.max_file_bytes(path.as_str());
    let what = if path.as_str() == limits::SKILL_MD {
        "`SKILL.md` (fences, frontmatter and body together)"
    } else {
        "a supporting file"
    };
    Problem::error(
        ProblemCode::FileTooLarge,
        Some(path.as_str()),
        format!("file holds at least {len} bytes, over the {max}-byte bound for {what}"),
    )
    .with_bound(max, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(files: &[(&str, usize)]) -> (FileSet, Problems) {
        let mut b = FileSetBuilder::new();
        for (path, size) in files {
            b.insert(path, vec![b'a'; *size]);
        }
        b.finish()
    }

    #[test]
    fn get_and_order() {
        let (fs, problems) = build(&[("b.md", 1), ("SKILL.md", 2), ("a/z.md", 3)]);
        assert!(!problems.has_errors());
        let paths: Vec<_> = fs.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "a/z.md", "b.md"]);
        assert_eq!(fs.get("a/z.md").map(<[u8]>::len), Some(3));
        assert_eq!(fs.get("a"), None);
        assert_eq!(fs.total_bytes(), 6);
    }

    #[test]
    fn supporting_file_bound_is_exact() {
        let max = limits::MAX_SUPPORTING_FILE_BYTES as usize;
        let (_, ok) = build(&[("a.md", max)]);
        assert!(!ok.has_errors());
        let (fs, over) = build(&[("a.md", max + 1)]);
        assert!(over.contains(ProblemCode::FileTooLarge));
        assert!(fs.is_empty());
        let p = &over.as_slice()[0];
        assert_eq!(
            (p.limit, p.actual),
            (Some(max as u64), Some(max as u64 + 1))
        );
    }

    #[test]
    fn file_count_and_total_bounds() {
        let names: Vec<String> = (0..limits::MAX_FILES).map(|i| format!("f{i}")).collect();
        let at: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 16 * 1024)).collect();
        let (_, ok) = build(&at);
        assert!(!ok.has_errors(), "{ok:?}");
        let mut over = at.clone();
        over.push(("one-more", 0));
        assert!(build(&over).1.contains(ProblemCode::TooManyFiles));

        let big: Vec<(&str, usize)> = names[..8]
            .iter()
            .map(|n| (n.as_str(), 128 * 1024))
            .collect();
        assert!(!build(&big).1.has_errors());
        let mut big_over = big.clone();
        big_over.push(("x", 1));
        let (_, p) = build(&big_over);
        assert!(p.contains(ProblemCode::BundleTooLarge));
    }

    #[test]
    fn depth_bound_counts_directory_levels() {
        let deep = |levels: usize| format!("{}f.md", "d/".repeat(levels));
        assert!(!build(&[(&deep(limits::MAX_DEPTH), 1)]).1.has_errors());
        assert!(
            build(&[(&deep(limits::MAX_DEPTH + 1), 1)])
                .1
                .contains(ProblemCode::TooDeep)
        );
    }

    #[test]
    fn duplicate_and_clashing_paths_are_refused() {
        let (fs, p) = build(&[
            ("a.md", 1),
            ("a.md", 2),
            ("d/x.md", 1),
            ("d", 1),
            ("f", 1),
            ("f/y.md", 1),
        ]);
        let codes: Vec<_> = p.as_slice().iter().map(|p| p.code).collect();
        assert_eq!(codes, [ProblemCode::DuplicatePath; 3]);
        assert_eq!(fs.get("a.md").map(<[u8]>::len), Some(1));
    }

    #[test]
    fn bad_paths_are_refused_with_their_code() {
        let (_, p) = build(&[("../x", 1), (".env", 1), ("a\\b", 1)]);
        let codes: Vec<_> = p.as_slice().iter().map(|p| p.code).collect();
        assert_eq!(
            codes,
            [
                ProblemCode::PathEscapes,
                ProblemCode::HiddenPath,
                ProblemCode::BackslashInPath
            ]
        );
    }

    // The profile given to the builder is the one its sources read with (the listing bound of
    // the safe reader, the header-sized bound of Git blobs) and the one its file set carries.
    #[test]
    fn the_builder_reads_and_records_under_its_profile() {
        let extended = limits::EXTENDED;
        let mut b = FileSetBuilder::with_limits(extended);
        assert_eq!(b.limits(), extended);
        let big = vec![b'a'; limits::MAX_SUPPORTING_FILE_BYTES as usize + 1];
        b.insert("SKILL.md", b"x".to_vec());
        b.insert("big.txt", big);
        let (files, problems) = b.finish();
        assert!(!problems.has_errors(), "{problems:?}");
        assert_eq!(files.limits(), extended);
        assert_eq!(FileSetBuilder::new().limits(), limits::CHAMVI);
    }
}

#[cfg(test)]
#[path = "contracts_tests.rs"]
mod contract_tests;
