//! Bare repositories written object by object with the `git` CLI (`hash-object --literally`
//! writes trees that `git mktree` would refuse), for the unit tests of the tree walk and of the
//! bundle selection.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// One tree entry: mode as Git writes it (`40000` for trees), name, object id (hex).
pub type RawTreeEntry<'a> = (&'a str, &'a [u8], &'a str);

/// A temporary bare repository.
pub struct TestRepo {
    dir: tempfile::TempDir,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("tempdir");
        git(dir.path(), &["init", "-q", "--bare", "."], b"");
        TestRepo { dir }
    }

    pub fn blob(&self, bytes: &[u8]) -> String {
        git(self.dir.path(), &["hash-object", "-w", "--stdin"], bytes)
    }

    /// A tree of `entries` exactly as given: no sorting, no checks.
    pub fn tree(&self, entries: &[RawTreeEntry<'_>]) -> String {
        let mut raw = Vec::new();
        for (mode, name, id) in entries {
            raw.extend_from_slice(mode.as_bytes());
            raw.push(b' ');
            raw.extend_from_slice(name);
            raw.push(0);
            raw.extend_from_slice(
                gix::ObjectId::from_hex(id.as_bytes())
                    .expect("id")
                    .as_bytes(),
            );
        }
        let args = ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"];
        git(self.dir.path(), &args, &raw)
    }

    /// A commit of `tree`.
    pub fn commit(&self, tree: &str) -> gix::ObjectId {
        let id = git(self.dir.path(), &["commit-tree", "-m", "test", tree], b"");
        gix::ObjectId::from_hex(id.as_bytes()).expect("commit id")
    }

    pub fn open(&self) -> gix::Repository {
        gix::open_opts(self.dir.path(), gix::open::Options::isolated()).expect("open")
    }
}

fn git(cwd: &Path, args: &[&str], input: &[u8]) -> String {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git");
    let _ = child.stdin.take().expect("stdin").write_all(input);
    let out = child.wait_with_output().expect("wait for git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
