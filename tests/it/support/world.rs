//! The world a test runs in: a temporary directory holding local bundles and the descriptor
//! `skillfold.yaml` that pins them, with the runtime that descriptor opens to and the binary run
//! there. Beside it, the smaller fixtures of the same kind: a bundle in a temporary directory of
//! its own ([`TempBundle`]), the SHA-256 of some bytes, and the guard a preparer holds.

use std::path::{Path, PathBuf};
use std::process::Output;

use skillfold::{Catalogue, Runtime};

use super::bin::skillfold_in;

#[path = "../../../src/testing/bundle_dir.rs"]
mod bundle_dir;
pub use bundle_dir::{TempBundle, skill_md};

/// A temporary directory a test builds its world in: bundles written by [`World::bundle`], the
/// descriptor `config` (`skillfold.yaml`) written by [`World::descriptor`].
pub struct World {
    pub tmp: tempfile::TempDir,
    pub config: PathBuf,
}

impl World {
    /// An empty world: no bundle, no descriptor yet.
    pub fn new() -> World {
        let tmp = tempfile::tempdir().expect("tempdir");
        let config = tmp.path().join("skillfold.yaml");
        World { tmp, config }
    }

    /// `rel` inside the world.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// Writes the bundle directory `dir`: its `SKILL.md`, then each `(path, text)` of `files`;
    /// returns its digest.
    pub fn bundle(&self, dir: &str, skill_md: &str, files: &[(&str, &str)]) -> String {
        let root = self.path(dir);
        fs_err::create_dir_all(&root).expect("mkdir");
        fs_err::write(root.join("SKILL.md"), skill_md).expect("write");
        for (path, text) in files {
            let p = root.join(path);
            fs_err::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            fs_err::write(p, text).expect("write");
        }
        skillfold::Bundle::read_dir(&root)
            .expect("valid")
            .digest()
            .to_string()
    }

    /// Writes the descriptor `skillfold.yaml` and returns its path.
    pub fn descriptor(&self, yaml: &str) -> PathBuf {
        fs_err::write(&self.config, yaml).expect("write");
        self.config.clone()
    }

    /// The runtime the descriptor opens to.
    pub fn runtime(&self) -> Runtime {
        Runtime::open(&self.config).expect("open").runtime
    }

    /// The catalogue of `agent` (the defaults for `None`).
    pub fn catalogue(&self, agent: Option<&str>) -> Catalogue {
        self.runtime().catalogue(agent).expect("catalogue")
    }

    /// Runs the `skillfold` binary in the world's directory.
    pub fn run(&self, args: &[&str]) -> Output {
        skillfold_in(self.tmp.path(), args)
    }

    /// Runs the `skillfold` binary in the world's directory, `SKILLFOLD_CONFIG` naming the
    /// descriptor.
    pub fn cli(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
            .args(args)
            .env("SKILLFOLD_CONFIG", &self.config)
            .current_dir(self.tmp.path())
            .output()
            .expect("run")
    }
}

/// A descriptor's entry for the local bundle `name`: `version` as the YAML is to spell it
/// (`'1'`, `"1"`), `directory` as written.
pub fn local_entry(name: &str, version: &str, directory: &str, hash: &str) -> String {
    format!(
        "  - local: {{ name: {name}, version: {version}, directory: {directory}, hash: {hash} }}\n"
    )
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Holds the guard of the prepared corpus at `corpus` (the `flock` a preparer takes on
/// `.skillfold/guard`, which the binary honours) until the returned file is dropped.
pub fn hold_corpus_guard(corpus: &Path) -> fs_err::File {
    use std::os::fd::AsFd as _;
    let file = fs_err::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(corpus.join(".skillfold/guard"))
        .expect("open the guard file");
    rustix::fs::flock(
        file.file().as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .expect("take the guard");
    file
}
