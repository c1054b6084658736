//! A bundle written to a temporary directory: the fixture both the unit tests
//! (`src/testing/temp_bundle.rs` adds what the format's tests need) and the integration tests
//! (`tests/it/support/world.rs` includes this file) build bundles with. Plain std, `tempfile` and
//! `fs_err`, so it compiles in either crate.

use std::path::{Path, PathBuf};

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
}
