//! `skillfold pin` through the binary against repositories made with the real `git` CLI and
//! served over smart HTTP on 127.0.0.1: roots under hidden folders (`skills/.curated`, as
//! openai/skills lays its skills out) and the refusals that stay, and `pin --all`.

use std::path::PathBuf;
use std::process::{Command, Output};

use super::git_fixture::{HttpServer, Repo};
use super::util::{stderr, stdout};

/// A working directory for a descriptor and its corpus.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn corpus(&self) -> PathBuf {
        self.dir.path().join("corpus")
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("skillfold.yaml")
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_skillfold"))
            .args(args)
            .current_dir(self.dir.path())
            .env("SKILLFOLD_CONFIG", self.config())
            .env_remove("SKILLFOLD_FAILPOINT")
            .output()
            .expect("run skillfold")
    }

    /// The entry `pin` printed as this setup's descriptor, its corpus here and every version
    /// filled in.
    fn adopt(&self, entry: &str) {
        let descriptor = format!(
            "skills:\n{}",
            entry
                .replace("/var/lib/skillfold/remote", self.corpus().to_str().unwrap())
                .replace("\"<version>\"", "\"1.0.0\"")
        );
        fs_err::write(self.config(), descriptor).expect("write descriptor");
    }
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// A valid bundle `name` in the folder `dir/name` of the work tree.
fn bundle_in(repo: &Repo, dir: &str, name: &str) {
    repo.write(
        &format!("{dir}/{name}/SKILL.md"),
        format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n").as_bytes(),
    );
    repo.write(
        &format!("{dir}/{name}/references/guide.md"),
        format!("# Guide for {name}\n").as_bytes(),
    );
}

/// The digest of the bundle at `rel` in the work tree.
fn digest(repo: &Repo, rel: &str) -> String {
    skillfold::Bundle::read_dir(&repo.work.join(rel))
        .expect("valid fixture bundle")
        .digest()
        .to_string()
}

/// A repository shaped like openai/skills at its head: skills under `skills/.curated`,
/// `skills/.system` and `skills/.experimental`, nothing at `skills/` itself.
fn hidden_groups() -> (Repo, String) {
    let repo = Repo::new();
    bundle_in(&repo, "skills/.curated", "alpha");
    bundle_in(&repo, "skills/.curated", "beta");
    bundle_in(&repo, "skills/.system", "gamma");
    bundle_in(&repo, "skills/.experimental", "delta");
    repo.write("README.md", b"# skills\n");
    let commit = repo.commit("skills in hidden groups");
    (repo, commit)
}

fn pin_args<'a>(url: &'a str, commit: &'a str, root: &'a str) -> Vec<&'a str> {
    vec!["pin", "--source", url, "--revision", commit, "--root", root]
}

#[test]
fn a_root_under_a_hidden_folder_pins_prepares_and_verifies() {
    let (repo, commit) = hidden_groups();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit, "skills/.curated");
    args.extend(["alpha", "beta"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let entry = stdout(&out);
    assert!(entry.contains("    root: \"skills/.curated\""), "{entry}");
    for name in ["alpha", "beta"] {
        let hash = digest(&repo, &format!("skills/.curated/{name}"));
        assert!(entry.contains(&hash), "{name}: {entry}");
    }
    s.adopt(&entry);
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(0), "{}", stderr(&check));
    let prep = s.run(&["prepare", "--json"]);
    assert_eq!(code(&prep), Some(0), "{}", stderr(&prep));
    let report: serde_json::Value = serde_json::from_slice(&prep.stdout).expect("json");
    let bundles = report["sources"][0]["bundles"].as_array().expect("bundles");
    assert_eq!(bundles.len(), 2, "{report}");
    assert!(s.corpus().join("current/alpha/SKILL.md").is_file());
    assert!(
        s.corpus()
            .join("current/beta/references/guide.md")
            .is_file()
    );
    let verify = s.run(&["verify"]);
    assert_eq!(code(&verify), Some(0), "{}", stderr(&verify));
}

#[test]
fn a_hidden_file_inside_a_bundle_under_a_hidden_root_is_still_refused() {
    let repo = Repo::new();
    bundle_in(&repo, "skills/.curated", "alpha");
    repo.write("skills/.curated/alpha/.env", b"TOKEN=x\n");
    let commit = repo.commit("a hidden file in a bundle");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit, "skills/.curated");
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("skills/.curated/alpha/.env"), "{err}");
    assert!(err.contains("[hidden_path]"), "{err}");
    // The same commit through a descriptor: `prepare` refuses it too.
    let entry = format!(
        "- git:\n    source: {url}\n    revision: {commit}\n    directory: corpus\n    \
         root: skills/.curated\n    approved:\n      - {{ name: alpha, version: '1', hash: {} }}\n",
        "0".repeat(64)
    );
    s.adopt(&entry);
    let prep = s.run(&["prepare"]);
    assert_eq!(code(&prep), Some(2), "{}", stderr(&prep));
    assert!(stderr(&prep).contains("[hidden_path]"), "{}", stderr(&prep));
}

/// A root that is still refused: `pin --root` refuses it as a usage error (exit 2, naming the
/// rule), and a descriptor's `root:` with `invalid_root`, before anything is fetched.
fn assert_root_refused(root: &str, reason: &str) {
    let s = Setup::new();
    // Nothing listens here: a root that were accepted would fail the fetch with exit 1.
    let url = "http://127.0.0.1:9/git/remote.git";
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let mut args = pin_args(url, commit, root);
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{root:?}: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--root") && err.contains(reason),
        "{root:?}: {err}"
    );
    assert!(!err.contains('\u{1}'), "escaped: {err}");
    let quoted = serde_json::to_string(root).expect("json");
    fs_err::write(
        s.config(),
        format!(
            "skills:\n  - git:\n      source: {url}\n      revision: {commit}\n      \
             directory: corpus\n      root: {quoted}\n      approved:\n        \
             - {{ name: alpha, version: '1', hash: {} }}\n",
            "0".repeat(64)
        ),
    )
    .expect("write descriptor");
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(2), "{root:?}: {}", stderr(&check));
    let err = stderr(&check);
    assert!(
        err.contains("skills[0].git.root")
            && err.contains("[invalid_root]")
            && err.contains(reason),
        "{root:?}: {err}"
    );
}

#[test]
fn a_root_with_a_parent_segment_is_refused() {
    assert_root_refused("skills/../..", "`..` segments");
    assert_root_refused("../skills", "`..` segments");
}

#[test]
fn a_root_with_an_empty_segment_is_refused() {
    assert_root_refused("skills//.curated", "empty");
}

#[test]
fn a_root_with_a_dot_segment_is_refused() {
    assert_root_refused("skills/./.curated", "`.`");
}

#[test]
fn an_absolute_root_is_refused() {
    assert_root_refused("/skills/.curated", "absolute");
}

#[test]
fn a_root_with_a_backslash_is_refused() {
    assert_root_refused("skills\\.curated", "backslash");
}

#[test]
fn a_root_with_a_control_character_is_refused() {
    assert_root_refused("skills/.cur\u{1}ated", "control character");
}
