//! Bundles written to temporary directories for the unit tests of the format (the same fixture
//! as `tests/it/util.rs`'s `TempBundle`, which the integration tests use).

use std::path::{Path, PathBuf};

use crate::format::problem::ProblemCode;

/// A minimal valid `SKILL.md` for a skill called `name`.
pub fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: A test skill for {name}.\n---\n# {name}\n\nBody.\n")
}

/// A bundle being written into a temporary directory.
pub struct TempBundle {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl TempBundle {
    /// A directory `demo/` holding a valid `SKILL.md`.
    pub fn new() -> TempBundle {
        let b = TempBundle::empty();
        b.write("SKILL.md", skill_md("demo").as_bytes());
        b
    }

    /// A directory `demo/` with nothing in it.
    pub fn empty() -> TempBundle {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("demo");
        fs_err::create_dir(&root).expect("mkdir");
        TempBundle { _dir: dir, root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temporary directory that holds the bundle (outside of it).
    pub fn outside(&self) -> &Path {
        self.root.parent().expect("parent")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).expect("mkdir -p");
        }
        fs_err::write(path, bytes).expect("write");
    }

    pub fn mkdir(&self, rel: &str) {
        fs_err::create_dir_all(self.path(rel)).expect("mkdir -p");
    }

    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        std::os::unix::fs::symlink(target, self.path(rel)).expect("symlink");
    }

    /// The error codes `Bundle::read_dir` reports (empty when the bundle is valid).
    pub fn codes(&self) -> Vec<ProblemCode> {
        match crate::format::bundle::Bundle::read_dir(&self.root) {
            Ok(_) => Vec::new(),
            Err(crate::format::bundle::LoadError::Invalid(e)) => e
                .problems
                .as_slice()
                .iter()
                .filter(|p| p.is_error())
                .map(|p| p.code)
                .collect(),
            Err(other) => panic!("unexpected load error: {other}"),
        }
    }

    pub fn assert_valid(&self) {
        assert_eq!(
            self.codes(),
            Vec::<ProblemCode>::new(),
            "expected a valid bundle"
        );
    }

    pub fn assert_refused(&self, code: ProblemCode) {
        let codes = self.codes();
        assert!(codes.contains(&code), "expected {code:?}, got {codes:?}");
    }
}
