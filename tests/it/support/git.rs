//! Git repositories made with the real `git` CLI: a work repository that commits bundles and
//! pushes to a bare repository beside it, and descriptors whose sources are Git commits. The
//! servers that serve such repositories over HTTP are in [`super::git_server`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs git with a fixed identity and no user or system configuration.
pub fn git(cwd: &Path, args: &[&str]) -> String {
    let out = git_command(cwd, args).output().expect("run git");
    stdout_of(args, out)
}

/// Like [`git`], writing `input` to git's standard input.
pub fn git_input(cwd: &Path, args: &[&str], input: &[u8]) -> String {
    let mut child = git_command(cwd, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git");
    let mut stdin = child.stdin.take().expect("stdin");
    // A git that fails early closes its input: its status says why.
    let _ = std::io::Write::write_all(&mut stdin, input);
    drop(stdin);
    stdout_of(args, child.wait_with_output().expect("wait for git"))
}

fn git_command(cwd: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.com")
        .env("GIT_COMMITTER_NAME", "Fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.com");
    cmd
}

fn stdout_of(args: &[&str], out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A work repository whose commits are pushed to `remote.git` beside it.
pub struct Repo {
    pub tmp: tempfile::TempDir,
    pub work: PathBuf,
    pub bare: PathBuf,
    /// Gitlinks to add at the next commit (after `git add -A`, which would drop them).
    gitlinks: std::cell::RefCell<Vec<(String, String)>>,
}

impl Repo {
    pub fn new() -> Repo {
        let tmp = tempfile::tempdir().expect("tempdir");
        let work = tmp.path().join("work");
        let bare = tmp.path().join("remote.git");
        fs_err::create_dir(&work).expect("mkdir");
        git(&work, &["init", "-q", "-b", "main"]);
        git(tmp.path(), &["init", "-q", "--bare", "remote.git"]);
        Repo {
            tmp,
            work,
            bare,
            gitlinks: Default::default(),
        }
    }

    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let path = self.work.join(rel);
        fs_err::create_dir_all(path.parent().expect("parent")).expect("mkdir -p");
        fs_err::write(path, bytes).expect("write");
    }

    pub fn symlink(&self, target: &str, rel: &str) {
        let path = self.work.join(rel);
        fs_err::create_dir_all(path.parent().expect("parent")).expect("mkdir -p");
        std::os::unix::fs::symlink(target, path).expect("symlink");
    }

    /// Adds a gitlink (submodule entry) at `rel` pointing to `commit`, at the next commit.
    pub fn gitlink(&self, rel: &str, commit: &str) {
        self.gitlinks
            .borrow_mut()
            .push((rel.to_owned(), commit.to_owned()));
    }

    /// A valid bundle `skills/<name>/` with a reference file.
    pub fn bundle(&self, name: &str, extra: &str) {
        self.write(
            &format!("skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} skill{extra}.\n---\n# {name}\n\nSee references/guide.md.\n").as_bytes(),
        );
        self.write(
            &format!("skills/{name}/references/guide.md"),
            format!("# Guide for {name}\n").as_bytes(),
        );
    }

    /// Commits everything, pushes `main`, returns the commit id.
    pub fn commit(&self, message: &str) -> String {
        git(&self.work, &["add", "-A"]);
        for (rel, commit) in self.gitlinks.borrow().iter() {
            git(
                &self.work,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{commit},{rel}"),
                ],
            );
        }
        git(
            &self.work,
            &["commit", "-q", "--allow-empty", "-m", message],
        );
        self.push("main");
        git(&self.work, &["rev-parse", "HEAD"])
    }

    /// Points the branch `branch` at `id` and pushes it to the bare repository.
    pub fn push_branch(&self, branch: &str, id: &str) {
        git(&self.work, &["branch", "-f", branch, id]);
        self.push(branch);
    }

    /// Force-pushes the work repository's `branch` to the bare repository.
    fn push(&self, branch: &str) {
        let bare = self.bare.to_str().expect("utf8");
        git(&self.work, &["push", "-q", "-f", bare, branch]);
    }

    pub fn file_url(&self) -> String {
        format!("file://{}", self.bare.display())
    }

    /// The digest of `skills/<name>` at the work tree's current content.
    pub fn digest(&self, name: &str) -> String {
        let b = skillfold::Bundle::read_dir(&self.work.join("skills").join(name))
            .expect("valid fixture bundle");
        b.digest().to_string()
    }
}

/// A Git source of a descriptor: URL, commit, corpus directory and `(name, hash)` pins.
/// The steps of a publication, in order, each a fail point (`SKILLFOLD_FAILPOINT`) where the
/// crash tests abort a preparation.
pub const PUBLICATION_STEPS: [&str; 7] = [
    "staged",
    "manifest-written",
    "generation-renamed",
    "previous-recorded",
    "link-created",
    "link-flipped",
    "cleaned",
];

pub type GitSource<'a> = (&'a str, &'a str, &'a str, Vec<(&'a str, String)>);

/// Writes `dir/skillfold.yaml` with `sources` (each under `root: skills`, versions `1.0.0`).
pub fn write_descriptor(dir: &Path, sources: &[GitSource<'_>]) {
    let mut text = String::from("skills:\n");
    for (url, commit, directory, pins) in sources {
        text.push_str(&format!(
            "  - git:\n      source: {url}\n      revision: {commit}\n      directory: {directory}\n      root: skills\n      approved:\n"
        ));
        for (name, hash) in pins {
            text.push_str(&format!(
                "        - {{ name: {name}, version: '1.0.0', hash: {hash} }}\n"
            ));
        }
    }
    fs_err::write(dir.join("skillfold.yaml"), text).expect("write the descriptor");
}

/// `prepare --json` in `dir` (its `skillfold.yaml`): the output and the report (`null` when
/// stdout is not JSON).
pub fn prepare_json(dir: &Path) -> (std::process::Output, serde_json::Value) {
    let out = super::bin::skillfold_in(dir, &["prepare", "-c", "skillfold.yaml", "--json"]);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, report)
}
