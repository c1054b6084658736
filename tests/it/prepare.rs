//! `skillfold check`, `prepare` and `pin` end to end, against bare repositories made with the
//! real `git` CLI, over `file://` and over smart HTTP served on 127.0.0.1 by
//! `git http-backend` behind lighttpd. No other network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::support::bin::{assert_stderr_has, stderr, stdout};
use super::support::git::{PUBLICATION_STEPS, Repo, git};
use super::support::git_server::HttpServer;

/// A descriptor, a corpus directory and the environment to run `skillfold` in.
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

    /// Writes a descriptor with one Git source.
    fn git_source(&self, url: &str, commit: &str, pins: &[(&str, &str, &str)]) {
        let mut text = format!(
            "skills:\n  - git:\n      source: {url}\n      revision: {commit}\n      directory: corpus\n      root: skills\n      approved:\n"
        );
        for (name, version, hash) in pins {
            text.push_str(&format!(
                "        - {{ name: {name}, version: '{version}', hash: {hash} }}\n"
            ));
        }
        fs_err::write(self.config(), text).expect("write descriptor");
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skillfold"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env("SKILLFOLD_CONFIG", self.config())
            .env_remove("SKILLFOLD_FAILPOINT")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run skillfold")
    }

    /// `(name, digest)` of every bundle published at `current/`, verified with the safe reader.
    fn published(&self) -> Vec<(String, String)> {
        let current = self.corpus().join("current");
        let mut out = Vec::new();
        for entry in fs_err::read_dir(&current).expect("current exists") {
            let path = entry.expect("entry").path();
            let bundle = skillfold::Bundle::read_dir(&path).expect("published bundle is valid");
            out.push((bundle.name().to_string(), bundle.digest().to_string()));
        }
        out.sort();
        out
    }

    fn staging_and_fetch_are_empty(&self) -> bool {
        ["staging", "fetch"].iter().all(|sub| {
            fs_err::read_dir(self.corpus().join(".skillfold").join(sub))
                .map(|mut d| d.next().is_none())
                .unwrap_or(true)
        })
    }
}

/// A repository with bundles `alpha` and `beta` (and an unapproved `gamma`).
fn two_bundles() -> (Repo, String) {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    repo.bundle("gamma", "");
    repo.write("README.md", b"# skills\n");
    let commit = repo.commit("bundles");
    (repo, commit)
}

fn pins(repo: &Repo) -> Vec<(String, String, String)> {
    ["alpha", "beta"]
        .iter()
        .map(|n| (n.to_string(), "1.0.0".to_string(), repo.digest(n)))
        .collect()
}

/// [`two_bundles`], pinned and prepared (the pins are returned).
fn prepared_two_bundles() -> (Repo, Setup, Vec<(String, String, String)>) {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    let p = pins(&repo);
    s.git_source(&repo.file_url(), &commit, &as_refs(&p));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    (repo, s, p)
}

fn as_refs(p: &[(String, String, String)]) -> Vec<(&str, &str, &str)> {
    p.iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect()
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn file_url_happy_path_publishes_every_approved_bundle() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    let p = pins(&repo);
    s.git_source(&repo.file_url(), &commit, &as_refs(&p));
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(0), "{}", stderr(&check));
    let out = s.run(&["prepare", "--json"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let published = s.published();
    assert_eq!(
        published,
        vec![
            ("alpha".into(), p[0].2.clone()),
            ("beta".into(), p[1].2.clone())
        ]
    );
    // Read-only regular files, laid out as <name>/SKILL.md.
    let md = s.corpus().join("current/alpha/SKILL.md");
    let meta = fs_err::symlink_metadata(&md).expect("SKILL.md");
    assert!(meta.is_file());
    assert!(meta.permissions().readonly());
    // The report.
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["sources"][0]["kind"], "git");
    assert_eq!(report["sources"][0]["commit"], commit.as_str());
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "published");
    assert!(report["duration_ms"].is_u64());
    // The manifest records every file.
    let gen_id = report["sources"][0]["generation"]
        .as_str()
        .expect("generation");
    let manifest = fs_err::read_to_string(
        s.corpus()
            .join(format!(".skillfold/manifests/{gen_id}.json")),
    )
    .expect("manifest");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("json");
    assert_eq!(
        manifest["bundles"][0]["files"][1]["path"],
        "references/guide.md"
    );
    assert_eq!(manifest["source"]["commit"], commit.as_str());
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn http_happy_path_then_warm_path_without_network() {
    let (repo, commit) = two_bundles();
    let mut server = HttpServer::start(repo.tmp.path());
    let s = Setup::new();
    let p = pins(&repo);
    s.git_source(&server.url("remote.git"), &commit, &as_refs(&p));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_eq!(s.published().len(), 2);
    // Prove the warm path needs no network: the server is gone.
    server.stop();
    let warm = s.run(&["prepare", "--json"]);
    assert_eq!(code(&warm), Some(0), "{}", stderr(&warm));
    let report: serde_json::Value = serde_json::from_slice(&warm.stdout).expect("json");
    assert_eq!(report["sources"][0]["bundles"][0]["status"], "up-to-date");
}

#[test]
fn warm_path_repairs_a_tampered_corpus() {
    let (_repo, s, p) = prepared_two_bundles();
    let md = s.corpus().join("current/alpha/references/guide.md");
    let mut perms = fs_err::metadata(&md).expect("meta").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    fs_err::set_permissions(&md, perms).expect("chmod");
    fs_err::write(&md, b"tampered\n").expect("write");
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_stderr_has(&out, "no longer verifies");
    assert_eq!(s.published()[0].1, p[0].2);
}

#[test]
fn revision_that_is_not_a_full_commit_id_is_a_configuration_error() {
    let (repo, commit) = two_bundles();
    let p = pins(&repo);
    for bad in ["main", &commit[..12]] {
        let s = Setup::new();
        s.git_source(&repo.file_url(), bad, &as_refs(&p));
        let check = s.run(&["check"]);
        assert_eq!(code(&check), Some(2), "{bad}");
        assert_stderr_has(&check, "[revision_not_commit]");
        let prep = s.run(&["prepare"]);
        assert_eq!(code(&prep), Some(2), "{bad}");
    }
}

#[test]
fn tree_id_as_pin_is_refused_with_exit_2() {
    let (repo, commit) = two_bundles();
    let tree = git(&repo.work, &["rev-parse", &format!("{commit}^{{tree}}")]);
    let s = Setup::new();
    s.git_source(&repo.file_url(), &tree, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not_a_commit") || stderr(&out).contains("commit_not_found"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn commit_not_on_the_server_is_retryable() {
    let (repo, _) = two_bundles();
    let s = Setup::new();
    let missing = "0123456789abcdef0123456789abcdef01234567";
    s.git_source(&repo.file_url(), missing, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[commit_not_found]");
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn unreachable_source_is_retryable() {
    let s = Setup::new();
    let (repo, commit) = two_bundles();
    // Nothing listens on this port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    s.git_source(
        &format!("http://127.0.0.1:{port}/git/remote.git"),
        &commit,
        &as_refs(&pins(&repo)),
    );
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
}

#[test]
fn digest_mismatch_fails_and_keeps_the_old_corpus() {
    let (repo, s, p) = prepared_two_bundles();
    let before = s.published();
    // A new commit changes alpha, but the pin still names the old digest.
    repo.write("skills/alpha/references/guide.md", b"# changed\n");
    let newer = repo.commit("change alpha");
    s.git_source(&repo.file_url(), &newer, &as_refs(&p));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[digest_mismatch]");
    assert_eq!(
        s.published(),
        before,
        "the previous generation stays published"
    );
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn version_mismatch_is_refused() {
    let repo = Repo::new();
    repo.write(
        "skills/alpha/SKILL.md",
        b"---\nname: alpha\ndescription: Alpha.\nmetadata:\n  version: 2.0.0\n---\nBody\n",
    );
    let commit = repo.commit("versioned");
    let s = Setup::new();
    s.git_source(
        &repo.file_url(),
        &commit,
        &[("alpha", "1.0.0", &repo.digest("alpha"))],
    );
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[version_mismatch]");
}

#[test]
fn symlink_anywhere_in_the_tree_refuses_the_source() {
    let (repo, _) = two_bundles();
    repo.symlink("../README.md", "docs/link.md");
    let commit = repo.commit("a link outside the bundles");
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[symlink_in_tree]");
    assert_stderr_has(&out, "docs/link.md");
    assert!(!s.corpus().join("current").exists());
}

#[test]
fn symlink_gitlink_and_lfs_pointer_inside_a_bundle_are_named() {
    // Symlink inside the selected bundle.
    let (repo, _) = two_bundles();
    let p = pins(&repo);
    repo.symlink("guide.md", "skills/alpha/references/link.md");
    let commit = repo.commit("link in alpha");
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&p));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2));
    assert_stderr_has(&out, "skills/alpha/references/link.md");

    // Gitlink and LFS pointer inside the selected bundle.
    let (repo, base) = two_bundles();
    repo.write(
        "skills/alpha/assets/big.bin",
        b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
    );
    repo.gitlink("skills/alpha/vendor", &base);
    let commit = repo.commit("gitlink and lfs in alpha");
    let s = Setup::new();
    let alpha_pin = [(
        "alpha",
        "1.0.0",
        "0000000000000000000000000000000000000000000000000000000000000000",
    )];
    s.git_source(&repo.file_url(), &commit, &alpha_pin);
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("skills/alpha/vendor") && err.contains("[gitlink]"),
        "{err}"
    );
    assert!(
        err.contains("skills/alpha/assets/big.bin") && err.contains("[lfs_pointer]"),
        "{err}"
    );
}

#[test]
fn gitlink_outside_the_bundles_is_reported_not_followed() {
    let (repo, base) = two_bundles();
    repo.gitlink("vendor/lib", &base);
    let commit = repo.commit("gitlink outside");
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_stderr_has(&out, "vendor/lib");
}

#[test]
fn missing_approved_name_is_refused() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    let mut p = pins(&repo);
    p.push(("delta".into(), "1.0.0".into(), p[0].2.replace('a', "b")));
    s.git_source(&repo.file_url(), &commit, &as_refs(&p));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[bundle_missing]");
}

#[test]
fn invalid_bundle_in_the_commit_lists_every_problem() {
    let repo = Repo::new();
    repo.write(
        "skills/alpha/SKILL.md",
        b"---\nname: alpha\ndescription: ''\n---\n",
    );
    repo.write("skills/alpha/.env", b"SECRET=1\n");
    let commit = repo.commit("broken");
    let s = Setup::new();
    let zero = "0".repeat(64);
    s.git_source(&repo.file_url(), &commit, &[("alpha", "1", &zero)]);
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("[hidden_path]") && err.contains("[description_blank]"),
        "{err}"
    );
}

#[test]
fn local_bundle_is_verified_in_place() {
    let s = Setup::new();
    let skill =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills/commit-message");
    let digest = skillfold::Bundle::read_dir(&skill)
        .expect("example")
        .digest()
        .to_string();
    let write = |hash: &str| {
        fs_err::write(
            s.config(),
            format!("skills:\n  - local: {{ name: commit-message, version: '1.0.0', directory: {}, hash: {hash} }}\n", skill.display()),
        )
        .expect("write");
    };
    write(&digest);
    let ok = s.run(&["prepare"]);
    assert_eq!(code(&ok), Some(0), "{}", stderr(&ok));
    write(&digest.replace('b', "c"));
    let bad = s.run(&["prepare"]);
    assert_eq!(code(&bad), Some(2));
    assert_stderr_has(&bad, "[digest_mismatch]");
}

#[test]
fn credentials_in_the_url_never_appear_in_output() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(
        "https://alice:s3cret-token@git.example.com/skills.git",
        &commit,
        &as_refs(&pins(&repo)),
    );
    for args in [&["check"][..], &["prepare", "--json"][..]] {
        let out = s.run(args);
        assert_eq!(code(&out), Some(2));
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(all.contains("[credentials_in_url]"), "{all}");
        assert!(
            !all.contains("s3cret-token") && !all.contains("alice"),
            "{all}"
        );
    }
    let pin = s.run(&[
        "pin",
        "--source",
        "https://alice:s3cret-token@git.example.com/s.git",
        "--revision",
        &commit,
        "alpha",
    ]);
    assert_eq!(code(&pin), Some(2));
    let all = format!("{}{}", stdout(&pin), stderr(&pin));
    assert!(!all.contains("s3cret-token"), "{all}");
}

#[test]
fn termination_log_receives_the_failure() {
    let (repo, _) = two_bundles();
    let s = Setup::new();
    s.git_source(
        &repo.file_url(),
        "0123456789abcdef0123456789abcdef01234567",
        &as_refs(&pins(&repo)),
    );
    let log = s.dir.path().join("termination.log");
    let out = s.run(&["prepare", "--termination-log", log.to_str().unwrap()]);
    assert_eq!(code(&out), Some(1));
    let text = fs_err::read_to_string(&log).expect("log written");
    assert!(text.contains("[commit_not_found]"), "{text}");
}

#[test]
fn rollback_returns_to_the_previous_generation() {
    let (repo, s, _) = prepared_two_bundles();
    let first = s.published();
    repo.write("skills/alpha/references/guide.md", b"# v2\n");
    let newer = repo.commit("v2");
    let p2 = pins(&repo);
    s.git_source(&repo.file_url(), &newer, &as_refs(&p2));
    assert_eq!(code(&s.run(&["prepare"])), Some(0));
    assert_ne!(s.published(), first);
    let out = s.run(&["prepare", "--rollback"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_eq!(s.published(), first);
}

// A previous generation that no longer verifies cannot be rolled back to, whatever the reader
// says (a digest mismatch here; an I/O error too): the code of its own, exit 2, and `current`
// stays where it is.
#[test]
fn rollback_to_a_previous_generation_that_does_not_verify_is_refused_with_its_own_code() {
    use std::os::unix::fs::PermissionsExt as _;
    let (repo, s, _) = prepared_two_bundles();
    let previous = fs_err::canonicalize(s.corpus().join("current")).expect("current");
    repo.write("skills/alpha/references/guide.md", b"# v2\n");
    let newer = repo.commit("v2");
    s.git_source(&repo.file_url(), &newer, &as_refs(&pins(&repo)));
    assert_eq!(code(&s.run(&["prepare"])), Some(0));
    let published = s.published();
    let tampered = previous.join("alpha/references/guide.md");
    for dir in [previous.join("alpha/references"), previous.join("alpha")] {
        fs_err::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    fs_err::set_permissions(&tampered, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    fs_err::write(&tampered, b"# tampered\n").expect("tamper");
    let out = s.run(&["prepare", "--rollback"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[corpus_previous_unverified]");
    assert_stderr_has(&out, "(digest_mismatch)");
    assert_eq!(s.published(), published, "nothing was rolled back");
}

#[test]
fn pin_prints_an_entry_that_prepare_accepts_once_versions_are_filled() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    let corpus = s.corpus();
    let out = s.run(&[
        "pin",
        "--source",
        &repo.file_url(),
        "--revision",
        &commit,
        "--root",
        "skills",
        "--directory",
        corpus.to_str().unwrap(),
        "alpha",
        "beta",
    ]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let entry = stdout(&out);
    assert!(entry.contains("only as good as the review"), "{entry}");
    assert!(entry.contains(&repo.digest("alpha")) && entry.contains(&repo.digest("beta")));
    let mut descriptor = format!("skills:\n{entry}");
    // Unfilled placeholders are refused by `check`.
    fs_err::write(s.config(), &descriptor).expect("write");
    assert_eq!(code(&s.run(&["check"])), Some(2));
    descriptor = descriptor.replace("\"<version>\"", "\"1.0.0\"");
    fs_err::write(s.config(), &descriptor).expect("write");
    let prep = s.run(&["prepare"]);
    assert_eq!(code(&prep), Some(0), "{}\n{descriptor}", stderr(&prep));
    assert!(
        !corpus
            .join(".skillfold/staging")
            .read_dir()
            .unwrap()
            .any(|_| true)
    );
}

// --- concurrency, signals and crashes -----------------------------------------------------------

/// A `git-upload-pack` on PATH that waits before serving, so a fetch over `file://` is slow.
/// It touches `slow-bin/started` first, so tests know the fetch is under way.
fn slow_upload_pack(dir: &Path, seconds: u32) -> String {
    let bin = dir.join("slow-bin");
    fs_err::create_dir_all(&bin).expect("mkdir");
    let script = bin.join("git-upload-pack");
    let marker = bin.join("started");
    let body = format!(
        "#!/bin/sh\ntouch '{}'\nsleep {seconds}\nexec git upload-pack \"$@\"\n",
        marker.display()
    );
    fs_err::write(&script, body).expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Waits until the slow `git-upload-pack` of [`slow_upload_pack`] runs: the preparer holds its
/// guard and is in the middle of its fetch (and done spawning, so no child of it still shares
/// its open files).
fn wait_for_fetch(dir: &Path) {
    let marker = dir.join("slow-bin/started");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the first preparer never started fetching"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_concurrent_preparers_exactly_one_proceeds() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    let path = slow_upload_pack(s.dir.path(), 2);
    let first = s
        .command(&["prepare"])
        .env("PATH", &path)
        .spawn()
        .expect("spawn");
    wait_for_fetch(s.dir.path());
    let second = s.run(&["prepare"]);
    assert_eq!(code(&second), Some(1), "{}", stderr(&second));
    assert_stderr_has(&second, "[guard_held]");
    assert_stderr_has(&second, "is being prepared by pid");
    let first = first.wait_with_output().expect("wait");
    assert_eq!(code(&first), Some(0), "{}", stderr(&first));
}

#[test]
fn guard_of_a_killed_preparer_is_recovered() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    let path = slow_upload_pack(s.dir.path(), 30);
    let mut first = s
        .command(&["prepare"])
        .env("PATH", &path)
        .spawn()
        .expect("spawn");
    wait_for_fetch(s.dir.path());
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first.id() as i32).expect("pid"),
        rustix::process::Signal::KILL,
    )
    .expect("kill");
    let _ = first.wait();
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_stderr_has(&out, "recovered the guard");
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn sigterm_during_a_slow_fetch_cleans_up_and_keeps_the_old_corpus() {
    let (repo, s, _) = prepared_two_bundles();
    let before = s.published();
    repo.write("skills/beta/references/guide.md", b"# beta v2\n");
    let newer = repo.commit("beta v2");
    s.git_source(&repo.file_url(), &newer, &as_refs(&pins(&repo)));
    let path = slow_upload_pack(s.dir.path(), 3);
    let child = s
        .command(&["prepare"])
        .env("PATH", &path)
        .spawn()
        .expect("spawn");
    wait_for_fetch(s.dir.path());
    std::thread::sleep(Duration::from_millis(300));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).expect("pid"),
        rustix::process::Signal::TERM,
    )
    .expect("kill");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "interrupted");
    assert!(s.staging_and_fetch_are_empty(), "no staging left behind");
    assert_eq!(s.published(), before);
}

#[test]
#[cfg_attr(
    not(feature = "failpoints"),
    ignore = "needs the `failpoints` feature (scripts/test turns it on)"
)]
fn a_crash_at_any_step_of_promotion_leaves_the_old_or_the_new_generation() {
    let (repo, commit) = two_bundles();
    let old_pins = pins(&repo);
    repo.write("skills/alpha/references/guide.md", b"# alpha v2\n");
    let newer = repo.commit("alpha v2");
    let new_pins = pins(&repo);
    let old: Vec<(String, String)> = old_pins
        .iter()
        .map(|(n, _, h)| (n.clone(), h.clone()))
        .collect();
    let new: Vec<(String, String)> = new_pins
        .iter()
        .map(|(n, _, h)| (n.clone(), h.clone()))
        .collect();
    for point in PUBLICATION_STEPS {
        let s = Setup::new();
        s.git_source(&repo.file_url(), &commit, &as_refs(&old_pins));
        assert_eq!(code(&s.run(&["prepare"])), Some(0));
        s.git_source(&repo.file_url(), &newer, &as_refs(&new_pins));
        let crashed = s
            .command(&["prepare"])
            .env("SKILLFOLD_FAILPOINT", point)
            .output()
            .expect("run");
        assert_ne!(
            code(&crashed),
            Some(0),
            "{point}: the fail point must abort"
        );
        let now = s.published();
        assert!(now == old || now == new, "{point}: published {now:?}");
        // The next preparation succeeds and publishes the new pins.
        let again = s.run(&["prepare"]);
        assert_eq!(code(&again), Some(0), "{point}: {}", stderr(&again));
        assert_eq!(s.published(), new, "{point}");
        assert!(s.staging_and_fetch_are_empty(), "{point}");
    }
}

// --- credentials ---------------------------------------------------------------------------------

/// An executable in `dir` that answers the user name or password prompt.
fn askpass(dir: &Path) -> PathBuf {
    let script = dir.join("askpass.sh");
    let body = format!(
        "#!/bin/sh\ncase \"$1\" in *sername*) echo {};; *) echo {};; esac\n",
        super::support::git_server::USER,
        super::support::git_server::PASSWORD
    );
    fs_err::write(&script, body).expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

fn https_setup() -> (Repo, HttpServer, Setup, String) {
    let (repo, commit) = two_bundles();
    let server = HttpServer::https_with_auth(repo.tmp.path());
    let s = Setup::new();
    s.git_source(&server.url("remote.git"), &commit, &as_refs(&pins(&repo)));
    (repo, server, s, commit)
}

fn assert_password_never_shown(s: &Setup, out: &Output) {
    let mut all = format!("{}{}", stdout(out), stderr(out));
    for dir in ["manifests", "generations"] {
        if let Ok(entries) = fs_err::read_dir(s.corpus().join(".skillfold").join(dir)) {
            for e in entries {
                all.push_str(&fs_err::read_to_string(e.expect("entry").path()).unwrap_or_default());
            }
        }
    }
    assert!(
        !all.contains(super::support::git_server::PASSWORD),
        "the password leaked: {all}"
    );
}

#[test]
fn https_credentials_come_from_git_askpass() {
    let (_repo, server, s, _) = https_setup();
    let out = s
        .command(&["prepare", "--json"])
        .env("SSL_CERT_FILE", server.ca_file())
        .env("GIT_ASKPASS", askpass(s.dir.path()))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run");
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_eq!(s.published().len(), 2);
    assert_password_never_shown(&s, &out);
}

#[test]
fn https_credentials_come_from_the_users_credential_helper() {
    let (_repo, server, s, _) = https_setup();
    let config = s.dir.path().join("gitconfig");
    fs_err::write(
        &config,
        format!(
            // The helper reads its request before it answers: gix (unlike git) fails when a
            // helper exits before the request is written to it (a broken pipe, in some runs).
            "[credential]\n\thelper = \"!f() {{ cat >/dev/null; echo username={}; echo password={}; }}; f\"\n",
            super::support::git_server::USER,
            super::support::git_server::PASSWORD
        ),
    )
    .expect("write");
    let out = s
        .command(&["prepare"])
        .env("SSL_CERT_FILE", server.ca_file())
        .env("GIT_CONFIG_GLOBAL", &config)
        .env_remove("GIT_ASKPASS")
        .output()
        .expect("run");
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_password_never_shown(&s, &out);
}

#[test]
fn missing_credentials_fail_at_once_without_prompting() {
    let (_repo, server, s, _) = https_setup();
    let mut cmd = s.command(&["prepare"]);
    cmd.env("SSL_CERT_FILE", server.ca_file())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_ASKPASS")
        .env_remove("SSH_ASKPASS")
        .stdin(std::process::Stdio::null());
    // A prompt would wait for ever: the watchdog turns that into a killed process, which fails
    // the exit-code assertion.
    let out = output_within(cmd, Duration::from_secs(120));
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[fetch_unauthenticated]");
}

// A plain `http://` server that asks for credentials will never get them (gix does not send
// credentials in clear text): running again cannot help, so it is a configuration error with a
// hint, whether credentials are at hand or not, and nothing is published.
#[test]
fn an_http_source_that_demands_credentials_is_a_configuration_error_with_a_hint() {
    let (repo, commit) = two_bundles();
    let server = HttpServer::http_with_auth(repo.tmp.path());
    let s = Setup::new();
    s.git_source(&server.url("remote.git"), &commit, &as_refs(&pins(&repo)));
    for with_askpass in [true, false] {
        let mut cmd = s.command(&["prepare"]);
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("SSH_ASKPASS")
            .stdin(std::process::Stdio::null());
        if with_askpass {
            cmd.env("GIT_ASKPASS", askpass(s.dir.path()));
        } else {
            cmd.env_remove("GIT_ASKPASS");
        }
        let out = cmd.output().expect("run");
        assert_eq!(
            code(&out),
            Some(2),
            "askpass {with_askpass}: {}",
            stderr(&out)
        );
        assert_stderr_has(&out, "[fetch_cleartext_credentials]");
        assert_stderr_has(&out, "\n  hint: ");
        assert_stderr_has(&out, "https://");
        assert_password_never_shown(&s, &out);
        assert!(!s.corpus().join("current").exists());
        assert!(s.staging_and_fetch_are_empty());
    }
    // `pin` fetches the same way, and says the same.
    let url = server.url("remote.git");
    let out = s.run(&[
        "pin",
        "--source",
        &url,
        "--revision",
        &commit,
        "--root",
        "skills",
        "alpha",
    ]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "[fetch_cleartext_credentials]");
    assert_stderr_has(&out, "\n  hint: ");
    // The same server without authentication is fetched as before: the refusal is about the
    // credentials, not about `http://`.
    let open = HttpServer::start(repo.tmp.path());
    s.git_source(&open.url("remote.git"), &commit, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
}

#[test]
fn an_unknown_certificate_authority_is_refused() {
    let (_repo, _server, s, _) = https_setup();
    let out = s
        .command(&["prepare"])
        .env("GIT_ASKPASS", askpass(s.dir.path()))
        .env_remove("SSL_CERT_FILE")
        .output()
        .expect("run");
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert!(!s.corpus().join("current").exists());
}

// --- servers that refuse a want-by-id ------------------------------------------------------------

/// A `git-upload-pack` on PATH that forces protocol v0, whose servers refuse to send a commit
/// that no branch or tag points at (unless `uploadpack.allowReachableSHA1InWant` is set).
fn v0_upload_pack(dir: &Path) -> String {
    let bin = dir.join("v0-bin");
    fs_err::create_dir_all(&bin).expect("mkdir");
    let script = bin.join("git-upload-pack");
    fs_err::write(
        &script,
        "#!/bin/sh\nunset GIT_PROTOCOL\nexec git upload-pack \"$@\"\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn a_server_refusing_the_id_falls_back_to_branches_and_tags_and_still_uses_exactly_that_commit() {
    let (repo, older) = two_bundles();
    let older_pins = pins(&repo);
    // `older` is no longer a branch tip: a v0 server refuses to send it by id.
    repo.write("skills/alpha/references/guide.md", b"# newer\n");
    repo.commit("newer");
    let s = Setup::new();
    s.git_source(&repo.file_url(), &older, &as_refs(&older_pins));
    let path = v0_upload_pack(s.dir.path());
    let out = s
        .command(&["prepare", "--json"])
        .env("PATH", &path)
        .output()
        .expect("run");
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_stderr_has(&out, "refused to send the commit by id");
    let published: Vec<String> = s.published().into_iter().map(|(_, d)| d).collect();
    let want: Vec<String> = older_pins.iter().map(|(_, _, d)| d.clone()).collect();
    assert_eq!(
        published, want,
        "the pinned commit's bytes, not the branch tip's"
    );
}

#[test]
fn a_commit_no_branch_reaches_on_a_refusing_server_is_not_found() {
    let (repo, _) = two_bundles();
    // A dangling commit: in the server's object database, reachable from nothing.
    let tree = git(&repo.work, &["rev-parse", "HEAD^{tree}"]);
    let dangling = git(&repo.work, &["commit-tree", &tree, "-m", "dangling"]);
    git(
        &repo.work,
        &[
            "push",
            "-q",
            repo.bare.to_str().unwrap(),
            &format!("{dangling}:refs/heads/tmp"),
        ],
    );
    git(&repo.bare, &["update-ref", "-d", "refs/heads/tmp"]);
    let s = Setup::new();
    s.git_source(&repo.file_url(), &dangling, &as_refs(&pins(&repo)));
    let out = s
        .command(&["prepare"])
        .env("PATH", v0_upload_pack(s.dir.path()))
        .output()
        .expect("run");
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[commit_not_found]");
    assert_stderr_has(&out, "not reachable from any branch or tag");
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn a_current_that_is_not_our_link_is_refused_without_leaving_a_generation_behind() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    // A corpus (it has `.skillfold/`) whose `current` someone replaced with a folder.
    fs_err::create_dir_all(s.corpus().join(".skillfold")).expect("mkdir");
    fs_err::create_dir_all(s.corpus().join("current/alpha")).expect("mkdir");
    for _ in 0..2 {
        let out = s.run(&["prepare"]);
        assert_eq!(code(&out), Some(2), "{}", stderr(&out));
        assert_stderr_has(&out, "[corpus_not_managed]");
    }
    let generations = fs_err::read_dir(s.corpus().join(".skillfold/generations"))
        .expect("dir")
        .count();
    assert_eq!(generations, 0, "no orphan generation");
    assert!(
        s.corpus().join("current/alpha").is_dir(),
        "what is there is left alone"
    );
}

#[test]
fn a_corpus_directory_holding_other_files_is_refused_before_anything_is_written() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    // Stands for `directory: /` or a home directory: never written into.
    fs_err::create_dir_all(s.corpus().join("projects")).expect("mkdir");
    fs_err::write(s.corpus().join("notes.txt"), "mine\n").expect("write");
    let before = listing(&s.corpus());
    for args in [&["prepare"][..], &["prepare", "--rollback"]] {
        let out = s.run(args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", stderr(&out));
        assert_stderr_has(&out, "[corpus_not_managed]");
        assert_eq!(listing(&s.corpus()), before, "{args:?} wrote into it");
    }
}

#[test]
fn an_empty_corpus_directory_is_prepared() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    fs_err::create_dir_all(s.corpus()).expect("mkdir");
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_eq!(s.published().len(), 2);
}

/// Every path under `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs_err::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn a_symlinked_guard_file_is_never_followed() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    let victim = s.dir.path().join("victim.txt");
    fs_err::write(&victim, "precious\n").expect("write");
    fs_err::create_dir_all(s.corpus().join(".skillfold")).expect("mkdir");
    std::os::unix::fs::symlink(&victim, s.corpus().join(".skillfold/guard")).expect("symlink");
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[guard_io]");
    assert_eq!(fs_err::read_to_string(&victim).expect("read"), "precious\n");
}

#[test]
fn a_leftover_previous_record_does_not_block_publishing() {
    let (repo, s, _) = prepared_two_bundles();
    fs_err::write(s.corpus().join(".skillfold/previous.tmp"), "junk").expect("write");
    repo.write("skills/alpha/references/guide.md", b"# v2\n");
    let newer = repo.commit("v2");
    s.git_source(&repo.file_url(), &newer, &as_refs(&pins(&repo)));
    let out = s.run(&["prepare"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    // Rolling back twice returns to where it started; a rollback to itself is refused.
    assert_eq!(code(&s.run(&["prepare", "--rollback"])), Some(0));
    assert_eq!(code(&s.run(&["prepare", "--rollback"])), Some(0));
}

// Pods sharing a volume start together on a corpus directory that does not exist yet: every
// racer that loses gets the guard's answer (retryable), never a configuration error about a
// corpus it saw half made, and the corpus is whole afterwards.
#[test]
fn concurrent_cold_starts_exit_only_ok_or_retryable() {
    const ROUNDS: usize = 40;
    const RACERS: usize = 8;
    let (repo, commit) = two_bundles();
    let p = pins(&repo);
    let mut counts = std::collections::BTreeMap::<Option<i32>, usize>::new();
    let mut refused = Vec::new();
    for round in 0..ROUNDS {
        let s = Setup::new();
        s.git_source(&repo.file_url(), &commit, &as_refs(&p));
        let barrier = std::sync::Barrier::new(RACERS);
        let outs: Vec<Output> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..RACERS)
                .map(|racer| {
                    let (s, barrier) = (&s, &barrier);
                    scope.spawn(move || {
                        let mut cmd = s.command(&["prepare"]);
                        // Half the racers linger between looking for `.skillfold/` and listing
                        // the directory, the others between making their store and renaming it
                        // into place: the windows in which another racer creates the corpus.
                        let window = ["corpus-looked", "store-staged"][racer % 2];
                        cmd.env("SKILLFOLD_FAILPOINT", format!("pause:{window}"));
                        barrier.wait();
                        cmd.output().expect("run skillfold")
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("racer"))
                .collect()
        });
        let mut ok = 0;
        for out in &outs {
            *counts.entry(code(out)).or_default() += 1;
            match code(out) {
                Some(0) => ok += 1,
                Some(1) => assert!(
                    stderr(out).contains("[guard_held]"),
                    "round {round}: {}",
                    stderr(out)
                ),
                _ => refused.push(format!("round {round}: {}", stderr(out))),
            }
        }
        assert!(
            ok >= 1 || !refused.is_empty(),
            "round {round}: no racer succeeded"
        );
        if ok >= 1 {
            assert_eq!(s.published().len(), 2, "round {round}");
            assert!(s.staging_and_fetch_are_empty(), "round {round}");
            let verified = s.run(&["verify"]);
            assert_eq!(
                code(&verified),
                Some(0),
                "round {round}: {}",
                stderr(&verified)
            );
        }
    }
    assert!(
        refused.is_empty(),
        "exit codes {counts:?}; refusals:\n{}",
        refused.join("\n")
    );
    assert!(!counts.contains_key(&Some(2)), "{counts:?}");
    eprintln!("exit codes over {ROUNDS} rounds of {RACERS}: {counts:?}");
}

// `prepare --rollback` on a corpus never prepared (or whose first preparation has not made its
// store yet) has nothing to roll back to: a configuration answer, and nothing is written.
#[test]
fn rollback_of_a_corpus_never_prepared_has_no_previous_and_writes_nothing() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    for make_dir in [false, true] {
        if make_dir {
            fs_err::create_dir_all(s.corpus()).expect("mkdir");
        }
        let out = s.run(&["prepare", "--rollback"]);
        assert_eq!(code(&out), Some(2), "{}", stderr(&out));
        assert_stderr_has(&out, "[corpus_no_previous]");
        assert!(!s.corpus().join(".skillfold").exists(), "nothing written");
    }
}

// --- overall deadlines -------------------------------------------------------------------------

/// An HTTP server on 127.0.0.1 that answers every request `200` with `content_type` and a large
/// declared length, then sends its body one byte a second: every byte resets an idle timeout, so
/// only an overall deadline ends a transfer from it. Stopped on drop.
struct Trickle {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Trickle {
    fn start(content_type: &'static str, body: &'static [u8]) -> Trickle {
        use std::io::{BufRead as _, Write as _};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (stopped, seen) = (stop.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let (stopped, seen) = (stopped.clone(), seen.clone());
                std::thread::spawn(move || {
                    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_ok() {
                        seen.lock().expect("lock").push(line.trim_end().to_owned());
                    }
                    // The rest of the request head.
                    loop {
                        let mut header = String::new();
                        match reader.read_line(&mut header) {
                            Ok(0) | Err(_) => return,
                            Ok(_) if header == "\r\n" => break,
                            Ok(_) => {}
                        }
                    }
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: 1000000\r\n\r\n"
                    );
                    if stream.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                    for byte in body.iter().chain(std::iter::repeat(&b' ')) {
                        if stopped.load(Ordering::Relaxed)
                            || stream.write_all(std::slice::from_ref(byte)).is_err()
                            || stream.flush().is_err()
                        {
                            return;
                        }
                        std::thread::sleep(Duration::from_secs(1));
                    }
                });
            }
        });
        Trickle {
            port,
            stop,
            requests,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

impl Drop for Trickle {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Wake the accepting thread so that it sees the flag.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Runs `cmd` to its end, killing it if it is still running after `watchdog` (then its exit
/// status is that of a killed process, which no assertion on an exit code accepts).
fn output_within(mut cmd: Command, watchdog: Duration) -> Output {
    let child = cmd.spawn().expect("spawn");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let finished = done.clone();
    let killer = std::thread::spawn(move || {
        let end = Instant::now() + watchdog;
        while Instant::now() < end {
            if finished.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid as i32).expect("pid"),
            rustix::process::Signal::KILL,
        );
    });
    let out = child.wait_with_output().expect("wait");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = killer.join();
    out
}

// A Git server that sends its ref advertisement one byte a second holds no fetch past its
// deadline: the source fails retryable with `fetch_deadline`, nothing is published and staging
// is cleaned, and the previous corpus stays as it was.
#[test]
fn a_trickling_git_server_is_cut_off_at_the_fetch_deadline() {
    let (repo, s, _) = prepared_two_bundles();
    let before = s.published();
    repo.write("skills/beta/references/guide.md", b"# beta v2\n");
    let newer = repo.commit("beta v2");
    // The first pkt-line declares 65,516 bytes: read a byte a second, it would take 18 hours.
    let server = Trickle::start(
        "application/x-git-upload-pack-advertisement",
        b"fff0# service=git-upload-pack\n",
    );
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    s.git_source(&url, &newer, &as_refs(&pins(&repo)));
    let mut cmd = s.command(&["prepare", "--fetch-timeout", "3"]);
    cmd.stdin(std::process::Stdio::null());
    let out = output_within(cmd, Duration::from_secs(120));
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[fetch_deadline]");
    assert_stderr_has(&out, "within its deadline of 3 s");
    assert!(!server.requests().is_empty(), "the server was asked");
    assert_eq!(s.published(), before, "the previous corpus is intact");
    assert!(s.staging_and_fetch_are_empty());
}

// The same for a registry that sends its manifest one byte a second, with the deadline from the
// environment: the pull fails retryable with `pull_deadline`, and the generation the corpus
// held (here one a Git source published) stays published.
#[test]
fn a_trickling_registry_is_cut_off_at_the_fetch_deadline() {
    let (_repo, s, _) = prepared_two_bundles();
    let before = s.published();
    let server = Trickle::start(
        "application/vnd.oci.image.manifest.v1+json",
        b"{\"schemaVersion\": 2",
    );
    let digest = format!("sha256:{}", "ab".repeat(32));
    fs_err::write(
        s.config(),
        format!(
            "skills:\n  - oci:\n      reference: 127.0.0.1:{}/skills/demo@{digest}\n      directory: corpus\n      plain_http: true\n      approved:\n        - {{ name: alpha, version: '1.0.0', hash: {} }}\n",
            server.port,
            before[0].1
        ),
    )
    .expect("write descriptor");
    let mut cmd = s.command(&["prepare"]);
    cmd.env("SKILLFOLD_FETCH_TIMEOUT", "3");
    let out = output_within(cmd, Duration::from_secs(120));
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "[pull_deadline]");
    assert!(
        server.requests().iter().any(|r| r.contains("/manifests/")),
        "{:?}",
        server.requests()
    );
    assert_eq!(s.published(), before, "the previous corpus is intact");
    assert!(s.staging_and_fetch_are_empty());
}

#[test]
fn a_fetch_timeout_outside_its_range_is_a_usage_error() {
    let s = Setup::new();
    for bad in ["0", "0.5", "86401", "soon", "-3"] {
        let out = s.run(&["prepare", "--fetch-timeout", bad]);
        assert_eq!(code(&out), Some(2), "{bad}: {}", stderr(&out));
    }
}

// `pin` and `outdated` fetch as `prepare` does, under the same deadline: `outdated` reads the
// tracked branch from the ref listing first, which a trickling server holds as long as it likes
// but for the deadline.
#[test]
fn pin_and_outdated_are_cut_off_at_the_fetch_deadline() {
    let (repo, commit) = two_bundles();
    let server = Trickle::start(
        "application/x-git-upload-pack-advertisement",
        b"fff0# service=git-upload-pack\n",
    );
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let s = Setup::new();
    s.git_source(&url, &commit, &as_refs(&pins(&repo)));
    for args in [
        &[
            "pin",
            "--fetch-timeout",
            "2",
            "--source",
            &url,
            "--revision",
            &commit,
            "--root",
            "skills",
            "alpha",
        ][..],
        &["outdated", "--fetch-timeout", "2"],
    ] {
        let mut cmd = s.command(args);
        cmd.stdin(std::process::Stdio::null());
        let out = output_within(cmd, Duration::from_secs(120));
        assert_eq!(code(&out), Some(1), "{args:?}: {}", stderr(&out));
        assert_stderr_has(&out, "[fetch_deadline]");
    }
}

// A preparer that takes the guard after `verify` first looked (a first start that has not
// published yet) makes `verify` inconclusive (exit 1, being prepared), not a verdict that the
// corpus was never prepared (exit 2).
#[test]
#[cfg_attr(
    not(feature = "failpoints"),
    ignore = "needs the `failpoints` feature (scripts/test turns it on)"
)]
fn verify_during_a_first_preparation_is_inconclusive_not_a_failure() {
    let (repo, commit) = two_bundles();
    let s = Setup::new();
    s.git_source(&repo.file_url(), &commit, &as_refs(&pins(&repo)));
    // `verify` stops between its first look and reading the corpus, says so (`<go>.reached`)
    // and waits for `<go>`: the window is held open by the test, not guessed in milliseconds.
    let go = s.dir.path().join("verify-go");
    let mut verify = s
        .command(&["verify"])
        .env(
            "SKILLFOLD_FAILPOINT",
            format!("pause:verify-probed:until:{}", go.display()),
        )
        .spawn()
        .expect("spawn verify");
    let reached = s.dir.path().join("verify-go.reached");
    while !reached.exists() {
        if let Some(status) = verify.try_wait().expect("poll verify") {
            panic!("verify ended ({status}) before its first look");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // In the window, a preparer makes the corpus and takes its guard, and holds it in the
    // middle of a fetch from a Git server that sends its ref advertisement a byte a second (its
    // request shows the guard is held: the guard is taken before the fetch starts).
    let server = Trickle::start(
        "application/x-git-upload-pack-advertisement",
        b"fff0# service=git-upload-pack\n",
    );
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let preparer_config = s.dir.path().join("preparer.yaml");
    fs_err::write(
        &preparer_config,
        fs_err::read_to_string(s.config())
            .expect("read descriptor")
            .replace(&repo.file_url(), &url),
    )
    .expect("write descriptor");
    let mut preparer = s
        .command(&["prepare", "-c", preparer_config.to_str().expect("utf8")])
        .stdin(std::process::Stdio::null())
        .spawn()
        .expect("spawn prepare");
    while server.requests().is_empty() {
        if let Some(status) = preparer.try_wait().expect("poll prepare") {
            panic!("the preparer ended ({status}) before it fetched");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    fs_err::write(&go, b"").expect("let verify go on");
    let out = verify.wait_with_output().expect("wait");
    let _ = preparer.kill();
    let _ = preparer.wait();
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "is being prepared by pid");
}

#[test]
fn a_run_without_a_terminal_prints_its_result_and_a_failure_in_its_last_line() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let commit = repo.commit("alpha and beta");
    let setup = Setup::new();
    setup.git_source(
        &repo.file_url(),
        &commit,
        &[("alpha", "1", &repo.digest("alpha"))],
    );
    // Quiet by default: one `ok:` line per source (the commit shortened) and the summary; the
    // step lines only with `-v`.
    let out = setup.run(&["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        lines[0],
        format!(
            "ok: skills[0].git: {} @ {}: alpha@1 published",
            repo.file_url(),
            &commit[..12]
        )
    );
    assert!(
        lines[1].starts_with("prepared 1 source(s) with 1 fetch(es) in "),
        "{text}"
    );
    let out = setup.run(&["prepare", "-v"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_stderr_has(
        &out,
        "skillfold: skills[0].git: verifying the published generation\nskillfold: skills[0].git: up to date (verified, no fetch)\n",
    );
    // A source that fails is counted in the last line, which a log keeps.
    let mut descriptor = fs_err::read_to_string(setup.config()).expect("read");
    descriptor.push_str(&format!(
        "  - git:\n      source: {}\n      revision: {commit}\n      directory: corpus2\n      root: skills\n      approved:\n        - {{ name: beta, version: '1', hash: {} }}\n",
        repo.file_url(),
        "0".repeat(64)
    ));
    fs_err::write(setup.config(), descriptor).expect("write");
    let out = setup.run(&["prepare"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("prepared 1 of 2 source(s), 1 failed, with 1 fetch(es) in "),
        "{text}"
    );
    assert_eq!(text.matches("[digest_mismatch]").count(), 1, "{text}");
    // The failure is said once, on its `error:` line: no progress line repeats it.
    assert!(!text.contains("skillfold: "), "{text}");
}

#[test]
fn verify_collapses_what_repeats_names_current_and_ends_with_a_summary() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    repo.bundle("beta", "");
    let commit = repo.commit("alpha and beta");
    let setup = Setup::new();
    setup.git_source(
        &repo.file_url(),
        &commit,
        &[
            ("alpha", "1", &repo.digest("alpha")),
            ("beta", "1", &repo.digest("beta")),
        ],
    );
    // Not prepared: the same cause for both bundles, one line.
    let out = setup.run(&["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("error: skills[0].git: alpha, beta: `")
            && lines[0]
                .ends_with("holds no prepared generation; run `skillfold prepare` [not_prepared]"),
        "{text}"
    );
    assert_eq!(lines[1], "0 of 2 bundle(s) verified, 2 failed");

    let out = setup.run(&["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = setup.run(&["verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "ok: skills[0].git: alpha, beta verified\n2 of 2 bundle(s) verified\n"
    );

    // A changed file is named where the operator finds it: under `current/`, as `prepare`'s
    // and the prompt's lines name it, not under the generation folder that was read.
    let skill = setup.corpus().join("current/alpha/SKILL.md");
    let mut mode = fs_err::metadata(&skill).expect("stat").permissions();
    #[expect(
        clippy::permissions_set_readonly_false,
        reason = "a test edits the corpus"
    )]
    mode.set_readonly(false);
    fs_err::set_permissions(&skill, mode).expect("chmod");
    fs_err::write(&skill, "---\nname: alpha\ndescription: Edited.\n---\n").expect("edit");
    let out = setup.run(&["verify"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    let current = setup.corpus().join("current/alpha");
    assert!(
        text.contains(&format!(
            "error: skills[0].git: alpha: `{}`: `alpha` has digest ",
            current.display()
        )) && !text.contains(".skillfold/generations"),
        "{text}"
    );
    assert!(
        text.ends_with("ok: skills[0].git: beta verified\n1 of 2 bundle(s) verified, 1 failed\n"),
        "{text}"
    );
}
