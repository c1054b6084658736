//! `skillfold install --into DIR [--agent NAME]` and `skillfold verify --installed DIR` through
//! the binary, on real input: a descriptor with a Git source served over smart HTTP on
//! 127.0.0.1 and a local source, installed into the `.claude/skills` and `.agents/skills`
//! layouts. Every promise of docs/install.md has a test here: exact bytes and modes, regular
//! files only, a second run that writes nothing (inode and mtime compared), drift caught and
//! repaired, unselected bundles removed, foreign folders kept, a same-name foreign folder
//! refused with nothing changed, a crash between bundles leaving each bundle old or new, links
//! and hostile names in the target, a hostile record, and a read-only or full target.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::Output;

use super::support::bin::{stderr, stdout};
use super::support::git::Repo;
use super::support::git_server::HttpServer;
use super::support::world::World;

/// A Git repository with `alpha` (with an executable helper) and `beta`, served on 127.0.0.1, and a world whose descriptor
/// pins both (defaults), a local `gamma` with an executable helper (defaults), and a local
/// `delta` for the agent `dev` only.
struct Setup {
    world: World,
    _repo: Repo,
    _server: HttpServer,
    url: String,
    commit: String,
    pins: BTreeMap<&'static str, String>,
}

impl Setup {
    fn new() -> Setup {
        let repo = Repo::new();
        repo.bundle("alpha", "");
        // A helper of mode 100755 in the pinned commit.
        repo.write("skills/alpha/scripts/run.sh", b"#!/bin/sh\necho alpha\n");
        fs_err::set_permissions(
            repo.work.join("skills/alpha/scripts/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        repo.bundle("beta", "");
        let commit = repo.commit("alpha and beta");
        let server = HttpServer::start(repo.tmp.path());
        let url = server.url("remote.git");
        let world = World::new();
        let mut pins = BTreeMap::new();
        pins.insert("alpha", repo.digest("alpha"));
        pins.insert("beta", repo.digest("beta"));
        let mut s = Setup {
            world,
            _repo: repo,
            _server: server,
            url,
            commit,
            pins,
        };
        s.local("gamma", "", &[("scripts/run.py", "print('gamma')\n")]);
        fs_err::set_permissions(
            s.world.path("local/gamma/scripts/run.py"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        s.local("delta", "", &[]);
        s.write_descriptor();
        s
    }

    /// (Re)writes the local bundle `name` with `extra` in its description and `files`.
    fn local(&mut self, name: &'static str, extra: &str, files: &[(&str, &str)]) {
        let dir = self.world.path(&format!("local/{name}"));
        let _ = fs_err::remove_dir_all(&dir);
        let hash = self.world.bundle(
            &format!("local/{name}"),
            &format!("---\nname: {name}\ndescription: The {name} skill{extra}.\n---\n# {name}\n"),
            files,
        );
        self.pins.insert(name, hash);
    }

    fn write_descriptor(&self) {
        let p = &self.pins;
        self.world.descriptor(&format!(
            "skills:\n  - git:\n      source: {}\n      revision: {}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1.0.0', hash: {} }}\n        - {{ name: beta, version: '1.0.0', hash: {} }}\n  - local: {{ name: gamma, version: '1.0', directory: local/gamma, hash: {} }}\nagents:\n  dev:\n    skills:\n      - local: {{ name: delta, version: '1.0', directory: local/delta, hash: {} }}\n",
            self.url, self.commit, p["alpha"], p["beta"], p["gamma"], p["delta"]
        ));
    }

    fn run(&self, args: &[&str]) -> Output {
        self.world.cli(args)
    }

    fn run_env(&self, env: (&str, &str), args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
            .args(args)
            .env("SKILLFOLD_CONFIG", &self.world.config)
            .env(env.0, env.1)
            .current_dir(self.world.tmp.path())
            .output()
            .expect("run")
    }

    fn dir(&self, rel: &str) -> PathBuf {
        self.world.path(rel)
    }
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[track_caller]
fn ok(o: &Output) {
    assert_eq!(
        code(o),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// Asserts that `o` exited with `status` and named `error_code` on stderr.
#[track_caller]
fn refused(o: &Output, status: i32, error_code: &str) {
    assert_eq!(code(o), Some(status), "{}", stderr(o));
    assert!(
        stderr(o).contains(&format!("[{error_code}]")),
        "{}",
        stderr(o)
    );
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn statuses(report: &serde_json::Value) -> BTreeMap<String, String> {
    report["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .map(|b| {
            (
                b["name"].as_str().expect("name").to_owned(),
                b["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect()
}

/// What [`snapshot`] keeps of one entry: inode, mtime in nanoseconds, mode, bytes for files.
type Entry = (u64, i64, u32, Option<Vec<u8>>);

/// Every entry below `root` (not following links), by relative path.
fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let meta = fs_err::symlink_metadata(&dir).expect("stat");
        let rel = dir
            .strip_prefix(root)
            .expect("below")
            .to_string_lossy()
            .into_owned();
        out.insert(
            rel,
            (
                meta.ino(),
                meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                meta.mode(),
                None,
            ),
        );
        for entry in fs_err::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let meta = fs_err::symlink_metadata(&path).expect("stat");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                let bytes = meta.is_file().then(|| fs_err::read(&path).expect("read"));
                out.insert(
                    rel,
                    (
                        meta.ino(),
                        meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                        meta.mode(),
                        bytes,
                    ),
                );
            }
        }
    }
    out
}

/// The files of a bundle directory (relative path → bytes), `None` for anything not a regular
/// file or directory.
fn files(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    snapshot(root)
        .into_iter()
        .filter(|(rel, (_, _, mode, _))| !rel.is_empty() && mode & 0o170000 != 0o040000)
        .map(|(rel, (_, _, mode, bytes))| {
            (
                rel,
                (mode & 0o170000 == 0o100000).then_some(bytes).flatten(),
            )
        })
        .collect()
}

#[test]
fn installs_the_selection_into_the_claude_and_agents_layouts_as_regular_files_with_exact_bytes_and_modes()
 {
    let s = Setup::new();
    let out = s.run(&["install", "--into", ".claude/skills", "--json"]);
    ok(&out);
    let report = json(&out);
    assert_eq!(
        statuses(&report),
        [
            ("alpha", "installed"),
            ("beta", "installed"),
            ("gamma", "installed")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .into()
    );
    assert!(report["agent"].is_null() && report["foreign"] == serde_json::json!([]));
    // One human line per bundle.
    for name in ["alpha", "beta", "gamma"] {
        assert!(
            stderr(&out).contains(&format!("installed: {name} ")),
            "{}",
            stderr(&out)
        );
    }
    let claude = s.dir(".claude/skills");
    for name in ["alpha", "beta"] {
        let corpus = files(&s.dir(&format!("corpus/current/{name}")));
        assert!(!corpus.is_empty());
        assert_eq!(
            files(&claude.join(name)),
            corpus,
            "{name}: the corpus's bytes"
        );
    }
    assert_eq!(files(&claude.join("gamma")), files(&s.dir("local/gamma")));
    // The executable bit is kept; the corpus's read-only modes are kept.
    let mode = |p: &Path| fs_err::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&claude.join("gamma/scripts/run.py")), 0o755);
    assert_eq!(mode(&claude.join("gamma/SKILL.md")), 0o644);
    assert_eq!(
        mode(&claude.join("alpha/SKILL.md")),
        mode(&s.dir("corpus/current/alpha/SKILL.md"))
    );
    let record: serde_json::Value = serde_json::from_slice(
        &fs_err::read(claude.join(".skillfold-install.json")).expect("record"),
    )
    .expect("json");
    assert_eq!(record["format"], "skillfold-install-v2");
    let alpha = &record["bundles"][0];
    assert_eq!(
        (alpha["name"].as_str(), alpha["hash"].as_str()),
        (Some("alpha"), Some(s.pins["alpha"].as_str()))
    );
    assert_eq!(alpha["source"]["kind"], "git");
    assert_eq!(alpha["source"]["commit"], s.commit.as_str());
    ok(&s.run(&["verify", "--installed", ".claude/skills"]));

    // The agent's selection in the `.agents` layout: the defaults plus its extra.
    let out = s.run(&[
        "install",
        "--into",
        ".agents/skills",
        "--agent",
        "dev",
        "--json",
    ]);
    ok(&out);
    assert_eq!(statuses(&json(&out)).len(), 4);
    assert_eq!(
        files(&s.dir(".agents/skills/delta")),
        files(&s.dir("local/delta"))
    );
    ok(&s.run(&["verify", "--installed", ".agents/skills", "--agent", "dev"]));
    // Without `--agent`, the agent the folder's record remembers.
    ok(&s.run(&["verify", "--installed", ".agents/skills"]));
}

#[test]
fn an_unknown_agent_is_refused_before_anything_is_written() {
    let s = Setup::new();
    let out = s.run(&["install", "--into", "skills", "--agent", "nobody"]);
    assert_eq!(code(&out), Some(2));
    assert!(stderr(&out).contains("[unknown_agent]"), "{}", stderr(&out));
    assert!(!s.dir("skills").exists() && !s.dir("corpus").exists());
}

#[test]
fn a_second_run_with_nothing_changed_writes_nothing() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".claude/skills"]));
    let before = snapshot(&s.dir(".claude/skills"));
    let out = s.run(&["install", "--into", ".claude/skills", "--json"]);
    ok(&out);
    let report = json(&out);
    assert!(
        statuses(&report).values().all(|s| s == "unchanged"),
        "{report}"
    );
    assert_eq!(report["record_written"], false);
    assert_eq!(
        snapshot(&s.dir(".claude/skills")),
        before,
        "inode, mtime, mode and bytes of every entry"
    );
}

#[test]
fn drift_is_named_by_verify_and_repaired_by_install() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".claude/skills"]));
    let claude = s.dir(".claude/skills");
    let guide = claude.join("alpha/references/guide.md");
    fs_err::set_permissions(&guide, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    fs_err::write(&guide, "# Changed\n").expect("write");
    fs_err::write(claude.join("alpha/references/added.md"), "# Added\n").expect("write");
    fs_err::remove_file(claude.join("gamma/scripts/run.py")).expect("rm");
    fs_err::remove_dir_all(claude.join("beta")).expect("rm");
    let out = s.run(&["verify", "--installed", ".claude/skills", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    for needle in [
        "references/guide.md (changed)",
        "references/added.md (added)",
        "scripts/run.py (removed)",
        "beta: missing",
        "[installed_drift]",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let report = json(&out);
    assert_eq!(
        statuses(&report),
        [
            ("alpha", "changed"),
            ("beta", "missing"),
            ("gamma", "changed")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .into()
    );
    // Edited folders may hold someone's work: a conflict naming each, nothing changed (the
    // missing `beta` is not restored either), and the option that takes them named.
    let before = snapshot(&claude);
    let out = s.run(&["install", "--into", ".claude/skills"]);
    refused(&out, 2, "install_conflict");
    for needle in [
        "`.claude/skills/alpha`: recorded, but its files are not what skillfold installed there (references/guide.md (changed), references/added.md (added))",
        "`.claude/skills/gamma`",
        "--replace-changed",
    ] {
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
    }
    assert_eq!(snapshot(&claude), before, "nothing changed");
    let out = s.run(&[
        "install",
        "--into",
        ".claude/skills",
        "--replace-changed",
        "--json",
    ]);
    ok(&out);
    // Each pin written again over its own drifted (or removed) folder: a repair.
    assert!(statuses(&json(&out)).values().all(|s| s == "repaired"));
    assert!(
        stderr(&out).contains("for the defaults: 3 repaired"),
        "{}",
        stderr(&out)
    );
    ok(&s.run(&["verify", "--installed", ".claude/skills"]));
    assert_eq!(files(&claude.join("gamma")), files(&s.dir("local/gamma")));

    // A mode changed is repaired without asking: the bytes still prove the folder is the one
    // installed (the pin covers bytes; install keeps the modes).
    fs_err::set_permissions(
        claude.join("gamma/scripts/run.py"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let out = s.run(&["install", "--into", ".claude/skills", "--json"]);
    ok(&out);
    assert_eq!(statuses(&json(&out))["gamma"], "repaired");
    let mode = fs_err::metadata(claude.join("gamma/scripts/run.py"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[test]
fn unselected_bundles_are_removed_and_foreign_folders_kept_and_listed() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".agents/skills", "--agent", "dev"]));
    let agents = s.dir(".agents/skills");
    fs_err::create_dir_all(agents.join("mine/sub")).expect("mkdir");
    fs_err::write(agents.join("mine/sub/notes.md"), "mine\n").expect("write");
    fs_err::write(agents.join("README.md"), "mine\n").expect("write");
    let out = s.run(&[
        "install",
        "--into",
        ".agents/skills",
        "--switch-agent",
        "--json",
    ]);
    ok(&out);
    let report = json(&out);
    assert_eq!(statuses(&report)["delta"], "removed");
    assert_eq!(report["foreign"], serde_json::json!(["README.md", "mine"]));
    assert!(!agents.join("delta").exists());
    assert_eq!(
        fs_err::read_to_string(agents.join("mine/sub/notes.md")).expect("kept"),
        "mine\n"
    );
    let out = s.run(&["verify", "--installed", ".agents/skills"]);
    ok(&out);
    assert!(stderr(&out).contains("foreign: mine"), "{}", stderr(&out));
}

#[test]
fn a_folder_it_did_not_install_with_a_selected_name_is_a_conflict_and_nothing_changes() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".claude/skills"]));
    let claude = s.dir(".claude/skills");
    // A new selected name, `delta`, is already a folder of the operator's.
    fs_err::create_dir_all(claude.join("delta")).expect("mkdir");
    fs_err::write(claude.join("delta/SKILL.md"), "operator's\n").expect("write");
    // And an installed bundle was edited: a conflict too (its content no longer proves it ours).
    fs_err::write(claude.join("beta/SKILL.md"), "drifted\n").expect("write");
    let before = snapshot(&claude);
    let out = s.run(&[
        "install",
        "--into",
        ".claude/skills",
        "--agent",
        "dev",
        "--switch-agent",
    ]);
    refused(&out, 2, "install_conflict");
    assert!(
        stderr(&out).contains(".claude/skills/delta`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&claude), before, "nothing changed");
}

#[test]
fn links_at_the_target_or_at_a_bundle_name_are_refused_never_followed() {
    let s = Setup::new();
    // DIR itself a link.
    let elsewhere = s.dir("elsewhere");
    fs_err::create_dir_all(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, s.dir("linked")).expect("symlink");
    let out = s.run(&["install", "--into", "linked"]);
    refused(&out, 2, "install_target_unsafe");
    assert_eq!(
        fs_err::read_dir(&elsewhere).expect("ls").count(),
        0,
        "nothing written through it"
    );
    let out = s.run(&["verify", "--installed", "linked"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));

    // DIR a dangling link: refused, and nothing created where it points.
    std::os::unix::fs::symlink(s.dir("nowhere/skills"), s.dir("dangling")).expect("symlink");
    refused(
        &s.run(&["install", "--into", "dangling"]),
        2,
        "install_target_unsafe",
    );
    assert!(!s.dir("nowhere").exists());

    // DIR/<name> a link to a folder outside.
    let target = s.dir("skills");
    fs_err::create_dir_all(&target).expect("mkdir");
    fs_err::create_dir_all(s.dir("outside")).expect("mkdir");
    fs_err::write(s.dir("outside/keep.md"), "keep\n").expect("write");
    std::os::unix::fs::symlink(s.dir("outside"), target.join("alpha")).expect("symlink");
    let out = s.run(&["install", "--into", "skills"]);
    refused(&out, 2, "install_conflict");
    assert_eq!(fs_err::read_dir(s.dir("outside")).expect("ls").count(), 1);
    assert!(!target.join("beta").exists(), "nothing installed");

    // A link planted at an installed bundle's name after an install: verify says so, install
    // refuses (it is not the folder it installed), the link's target untouched.
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    fs_err::remove_dir_all(s.dir("skills/beta")).expect("rm");
    fs_err::create_dir_all(s.dir("outside")).expect("mkdir");
    std::os::unix::fs::symlink(s.dir("outside"), s.dir("skills/beta")).expect("symlink");
    let out = s.run(&["verify", "--installed", "skills"]);
    assert_eq!(code(&out), Some(2));
    assert!(stderr(&out).contains("not a folder"), "{}", stderr(&out));
    let out = s.run(&["install", "--into", "skills"]);
    assert_eq!(code(&out), Some(2));
    assert_eq!(fs_err::read_dir(s.dir("outside")).expect("ls").count(), 0);
}

#[test]
fn hostile_names_in_the_target_are_listed_escaped() {
    let s = Setup::new();
    let target = s.dir("skills");
    fs_err::create_dir_all(target.join("evil\n\u{1b}[31mname\u{202e}")).expect("mkdir");
    let out = s.run(&["install", "--into", "skills", "--json"]);
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("foreign: evil\\n\\u{1b}[31mname\\u{202e}"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !stdout(&out).contains('\u{1b}'));
    // In JSON too the name is given escaped (a name need not be UTF-8), and nothing raw.
    assert_eq!(
        json(&out)["foreign"],
        serde_json::json!(["evil\\n\\u{1b}[31mname\\u{202e}"])
    );
    let out = s.run(&["verify", "--installed", "skills"]);
    ok(&out);
    assert!(!stderr(&out).contains('\u{1b}'));
}

#[test]
fn a_hostile_or_corrupt_record_is_refused_and_nothing_outside_is_deleted() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let record = s.dir("skills/.skillfold-install.json");
    let good = fs_err::read_to_string(&record).expect("record");
    fs_err::create_dir_all(s.dir("victim")).expect("mkdir");
    fs_err::write(s.dir("victim/keep.md"), "keep\n").expect("write");
    let hostile = [
        good.replacen("\"name\": \"alpha\"", "\"name\": \"../victim\"", 1),
        good.replacen("\"name\": \"alpha\"", "\"name\": \"/tmp\"", 1),
        good.replacen("\"name\": \"alpha\"", "\"name\": \".hidden\"", 1),
        good.replacen("\"name\": \"beta\"", "\"name\": \"alpha\"", 1),
        good.replacen("skillfold-install-v2", "skillfold-install-v9", 1),
        good.replacen("\"format\"", "\"unknown\": 1, \"format\"", 1),
        "not json".to_owned(),
        format!("{}{good}", " ".repeat(16 * 1024 * 1024)),
    ];
    for text in &hostile {
        fs_err::write(&record, text).expect("write");
        let before = snapshot(&s.dir("skills"));
        let out = s.run(&["install", "--into", "skills"]);
        refused(&out, 2, "install_record_invalid");
        assert_eq!(snapshot(&s.dir("skills")), before);
        assert!(s.dir("victim/keep.md").exists());
        let out = s.run(&["verify", "--installed", "skills"]);
        assert_eq!(code(&out), Some(2));
        assert!(!stderr(&out).contains('\n') || !stderr(&out).contains("\u{1b}"));
    }
    // A record that is a link is not read through.
    fs_err::remove_file(&record).expect("rm");
    fs_err::write(s.dir("elsewhere.json"), &good).expect("write");
    std::os::unix::fs::symlink(s.dir("elsewhere.json"), &record).expect("symlink");
    let out = s.run(&["install", "--into", "skills"]);
    refused(&out, 2, "install_record_invalid");
    // Removed, the record is gone: the installed folders are no longer known as ours.
    fs_err::remove_file(&record).expect("rm");
    refused(
        &s.run(&["install", "--into", "skills"]),
        2,
        "install_conflict",
    );
    let out = s.run(&["verify", "--installed", "skills", "--json"]);
    assert_eq!(code(&out), Some(2));
    assert!(statuses(&json(&out)).values().all(|s| s == "unrecorded"));
}

#[test]
#[cfg_attr(
    not(feature = "failpoints"),
    ignore = "needs the `failpoints` feature (scripts/test turns it on)"
)]
fn a_crash_between_bundles_leaves_each_bundle_old_or_new_and_the_next_run_completes() {
    let mut s = Setup::new();
    ok(&s.run(&["install", "--into", "skills", "--agent", "dev"]));
    let old: BTreeMap<String, _> = ["delta", "gamma"]
        .iter()
        .map(|n| (n.to_string(), files(&s.dir(&format!("skills/{n}")))))
        .collect();
    s.local("delta", " changed", &[]);
    s.local(
        "gamma",
        " changed",
        &[("scripts/run.py", "print('gamma 2')\n")],
    );
    s.write_descriptor();
    let new: BTreeMap<String, _> = ["delta", "gamma"]
        .iter()
        .map(|n| (n.to_string(), files(&s.dir(&format!("local/{n}")))))
        .collect();
    let out = s.run_env(
        ("SKILLFOLD_FAILPOINT", "install-between-bundles"),
        &["install", "--into", "skills", "--agent", "dev"],
    );
    assert!(!out.status.success(), "aborted at the fail point");
    let mut seen_new = 0;
    for name in ["delta", "gamma"] {
        let now = files(&s.dir(&format!("skills/{name}")));
        assert!(
            now == old[name] || now == new[name],
            "{name} is old or new, never half"
        );
        seen_new += usize::from(now == new[name]);
    }
    assert_eq!(seen_new, 1, "the crash came after the first bundle");
    let out = s.run(&["install", "--into", "skills", "--agent", "dev", "--json"]);
    ok(&out);
    for name in ["delta", "gamma"] {
        assert_eq!(files(&s.dir(&format!("skills/{name}"))), new[name]);
    }
    ok(&s.run(&["verify", "--installed", "skills", "--agent", "dev"]));
    let leftovers: Vec<_> = fs_err::read_dir(s.dir("skills"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".skillfold-install.json")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
#[cfg_attr(
    not(feature = "failpoints"),
    ignore = "needs the `failpoints` feature (scripts/test turns it on)"
)]
fn a_crash_after_the_first_new_bundle_leaves_it_owned_and_the_next_run_completes() {
    let s = Setup::new();
    // Nothing installed yet: both bundles of `dev` beyond the defaults are new names.
    let out = s.run_env(
        ("SKILLFOLD_FAILPOINT", "install-between-bundles"),
        &["install", "--into", "skills", "--agent", "dev"],
    );
    assert!(!out.status.success());
    ok(&s.run(&["install", "--into", "skills", "--agent", "dev"]));
    ok(&s.run(&["verify", "--installed", "skills", "--agent", "dev"]));
}

/// Mounts a tmpfs of `size` at `dir` with `options`; `None` where the test cannot mount (not
/// root, no capability): the caller skips.
fn mount_tmpfs(dir: &Path, options: &str) -> Option<Mount> {
    fs_err::create_dir_all(dir).expect("mkdir");
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(dir)
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| Mount(dir.to_owned()))
}

struct Mount(PathBuf);

impl Mount {
    fn remount(&self, options: &str) {
        let status = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .expect("mount");
        assert!(status.success());
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_read_only_target_exits_2_and_a_full_one_exits_1_with_the_previous_install_intact() {
    let mut s = Setup::new();
    let Some(mount) = mount_tmpfs(&s.dir("mnt"), "size=512k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    ok(&s.run(&["install", "--into", "mnt/skills"]));
    let before = snapshot(&s.dir("mnt/skills"));
    s.local(
        "gamma",
        " changed",
        &[("scripts/run.py", "print('gamma 2')\n")],
    );
    s.write_descriptor();

    mount.remount("ro");
    let out = s.run(&["install", "--into", "mnt/skills"]);
    refused(&out, 2, "install_not_writable");
    assert_eq!(snapshot(&s.dir("mnt/skills")), before);
    mount.remount("rw");

    // Fill the file system, then ask for a change.
    let filler = s.dir("mnt/filler");
    let _ = std::process::Command::new("dd")
        .args(["if=/dev/zero", "bs=4k", "count=1024"])
        .arg(format!("of={}", filler.display()))
        .stderr(std::process::Stdio::null())
        .status();
    let out = s.run(&["install", "--into", "mnt/skills"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("[install_io]"), "{}", stderr(&out));
    let after = snapshot(&s.dir("mnt/skills"));
    assert_eq!(
        after.get("gamma/SKILL.md"),
        before.get("gamma/SKILL.md"),
        "the old bundle intact"
    );
    fs_err::remove_file(&filler).expect("rm");
    ok(&s.run(&["install", "--into", "mnt/skills"]));
    ok(&s.run(&["verify", "--installed", "mnt/skills"]));
    drop(mount);
}

#[test]
fn a_bundle_that_cannot_be_staged_leaves_every_bundle_of_the_run_as_it_was() {
    let mut s = Setup::new();
    let Some(mount) = mount_tmpfs(&s.dir("mnt"), "size=512k") else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    ok(&s.run(&["install", "--into", "mnt/skills", "--agent", "dev"]));
    let before = snapshot(&s.dir("mnt/skills"));
    // `delta` (staged first) fits; `gamma` carries more than the whole file system holds.
    s.local("delta", " changed", &[]);
    // Five supporting files of 120 KiB each (the contract's bound is 128 KiB a file).
    let large = "a".repeat(120 * 1024);
    let names: Vec<String> = (0..5).map(|i| format!("references/part-{i}.md")).collect();
    let parts: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), large.as_str())).collect();
    s.local("gamma", " changed", &parts);
    s.write_descriptor();
    let out = s.run(&["install", "--into", "mnt/skills", "--agent", "dev"]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("[install_io]"), "{}", stderr(&out));
    // Every bundle is staged before the first is swapped in: `delta` is not new alone, and no
    // staging folder is left (the folder's own times change with them).
    let mut after = snapshot(&s.dir("mnt/skills"));
    let mut before = before;
    after.remove("");
    before.remove("");
    assert_eq!(after, before, "nothing changed");
    drop(mount);
}

#[test]
fn the_summary_counts_what_was_installed_updated_repaired_and_removed() {
    let mut s = Setup::new();
    ok(&s.run(&["install", "--into", "skills", "--agent", "dev"]));
    let old_gamma = s.pins["gamma"].clone();
    // `gamma` gets a new pin (an update), `alpha`'s folder loses a file (a repair), and `delta`
    // leaves the selection (the defaults alone: removed).
    s.local("gamma", " changed", &[]);
    s.write_descriptor();
    fs_err::remove_file(s.dir("skills/alpha/references/guide.md")).expect("rm");
    let out = s.run(&[
        "install",
        "--into",
        "skills",
        "--agent",
        "dev",
        "--replace-changed",
        "--json",
    ]);
    ok(&out);
    let report = json(&out);
    assert_eq!(
        statuses(&report),
        [
            ("alpha", "repaired"),
            ("beta", "unchanged"),
            ("delta", "unchanged"),
            ("gamma", "updated")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .into()
    );
    let gamma = report["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .find(|b| b["name"] == "gamma")
        .expect("gamma");
    assert_eq!(gamma["previous_hash"], old_gamma.as_str());
    assert_eq!(gamma["previous_version"], "1.0");
    assert_eq!(gamma["hash"], s.pins["gamma"].as_str());
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "updated: gamma 1.0 -> 1.0 ({} -> {})",
            &old_gamma[..12],
            &s.pins["gamma"][..12]
        )),
        "{err}"
    );
    assert!(
        err.contains("4 bundle(s) in `skills` for agent `dev`: 1 updated, 1 repaired"),
        "{err}"
    );
    // Back to the defaults alone: `delta` is removed, and nothing else changes.
    let out = s.run(&["install", "--into", "skills", "--switch-agent"]);
    ok(&out);
    assert!(
        stderr(&out).contains("3 bundle(s) in `skills` for the defaults: 1 removed"),
        "{}",
        stderr(&out)
    );
    let out = s.run(&["install", "--into", "skills"]);
    ok(&out);
    assert!(
        stderr(&out).contains("for the defaults: nothing changed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn verify_installed_reports_a_missing_folder_and_json_shape() {
    let s = Setup::new();
    let out = s.run(&["verify", "--installed", "nowhere", "--json"]);
    assert_eq!(code(&out), Some(2));
    let report = json(&out);
    assert_eq!(report["directory"], "nowhere");
    assert!(statuses(&report).values().all(|s| s == "missing"));
    assert_eq!(report["bundles"][0]["code"], "installed_drift");
    // `--agent` only with `--installed`.
    let out = s.run(&["verify", "--agent", "dev"]);
    assert_eq!(code(&out), Some(2));
}

#[test]
fn a_second_install_into_the_same_folder_is_refused_at_once_retryable() {
    use std::os::fd::AsFd as _;
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let before = snapshot(&s.dir("skills"));
    // The lock a running install holds on the open folder.
    let held = fs_err::File::open(s.dir("skills")).expect("open the folder");
    rustix::fs::flock(
        held.file().as_fd(),
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .expect("lock");
    let switch = [
        "install",
        "--into",
        "skills",
        "--agent",
        "dev",
        "--switch-agent",
    ];
    let out = s.run(&switch);
    refused(&out, 1, "install_io");
    assert!(
        stderr(&out).contains("another `install`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&s.dir("skills")), before);
    drop(held);
    ok(&s.run(&switch));
}

#[test]
fn a_target_with_too_many_entries_is_refused_before_it_is_inventoried() {
    let s = Setup::new();
    let target = s.dir("skills");
    fs_err::create_dir_all(&target).expect("mkdir");
    for i in 0..=4096 {
        fs_err::write(target.join(format!("f{i}")), b"").expect("write");
    }
    refused(
        &s.run(&["install", "--into", "skills"]),
        2,
        "install_target_unsafe",
    );
    assert!(!target.join("alpha").exists());
}

/// The folder remembers its agent: `verify --installed` and `install` without `--agent` take
/// the record's, never the defaults that would remove the agent's extras.
#[test]
fn without_agent_the_recorded_agent_is_used_and_its_extras_are_never_removed() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills", "--agent", "dev"]));
    let before = snapshot(&s.dir("skills"));
    // The CI recipe: no `--agent`.
    let out = s.run(&["verify", "--installed", "skills", "--json"]);
    ok(&out);
    assert_eq!(json(&out)["agent"], "dev");
    assert_eq!(statuses(&json(&out)).len(), 4);
    assert!(!stderr(&out).contains("remove"), "{}", stderr(&out));
    // A fresh clone's command: nothing removed, nothing written.
    let out = s.run(&["install", "--into", "skills", "--json"]);
    ok(&out);
    let report = json(&out);
    assert_eq!(report["agent"], "dev");
    assert!(
        statuses(&report).values().all(|s| s == "unchanged"),
        "{report}"
    );
    assert_eq!(snapshot(&s.dir("skills")), before, "nothing changed");
    assert!(
        stderr(&out).contains("4 bundle(s) in `skills` for agent `dev`"),
        "{}",
        stderr(&out)
    );
}

/// Another selection than the recorded one is refused, naming both, unless `--switch-agent`
/// asks for it; the summary then counts what is left and what was removed.
#[test]
fn another_agent_than_the_recorded_one_is_refused_unless_switch_agent_is_given() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let before = snapshot(&s.dir("skills"));
    for args in [
        &["install", "--into", "skills", "--agent", "dev"][..],
        &["verify", "--installed", "skills", "--agent", "dev"][..],
    ] {
        let out = s.run(args);
        refused(&out, 2, "install_agent_mismatch");
        let err = stderr(&out);
        assert!(
            err.contains("the defaults") && err.contains("`dev`"),
            "{err}"
        );
        assert_eq!(snapshot(&s.dir("skills")), before, "nothing changed");
    }
    assert!(
        stderr(&s.run(&["install", "--into", "skills", "--agent", "dev"]))
            .contains("--switch-agent")
    );
    let out = s.run(&[
        "install",
        "--into",
        "skills",
        "--agent",
        "dev",
        "--switch-agent",
        "--json",
    ]);
    ok(&out);
    assert_eq!(statuses(&json(&out))["delta"], "installed");
    ok(&s.run(&["verify", "--installed", "skills"]));
    // Back to the defaults: refused without the flag, then `delta` removed and counted apart.
    let out = s.run(&["install", "--into", "skills", "--agent", "dev"]);
    ok(&out);
    let out = s.run(&["install", "--into", "skills", "--switch-agent", "--json"]);
    ok(&out);
    let report = json(&out);
    assert!(report["agent"].is_null());
    assert_eq!(statuses(&report)["delta"], "removed");
    assert!(
        stderr(&out).contains("3 bundle(s) in `skills` for the defaults: 1 removed"),
        "{}",
        stderr(&out)
    );
    assert!(!s.dir("skills/delta").exists());
    // A record of the defaults: `verify` and `install` without `--agent` check the defaults.
    ok(&s.run(&["verify", "--installed", "skills"]));
}

/// Edits `DIR/.skillfold-install.json` with `edit`.
fn forge(record: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut value: serde_json::Value =
        serde_json::from_slice(&fs_err::read(record).expect("record")).expect("json");
    edit(&mut value);
    fs_err::write(record, serde_json::to_vec_pretty(&value).expect("json")).expect("write");
}

/// A record entry for `name` listing `files` (path, bytes) with `hash`.
fn entry(name: &str, hash: &str, files: &[(&str, &[u8])]) -> serde_json::Value {
    let files: Vec<serde_json::Value> = files
        .iter()
        .map(|(path, bytes)| {
            serde_json::json!({
                "path": path,
                "size": bytes.len(),
                "sha256": super::support::world::sha256(bytes),
            })
        })
        .collect();
    serde_json::json!({
        "name": name,
        "version": "1.0.0",
        "hash": hash,
        "source": {"kind": "local", "location": "skills[9].local"},
        "files": files,
    })
}

/// A planted record never makes `install` remove or overwrite a folder it did not write:
/// ownership is proven by the folder's content, not by the record.
#[test]
fn a_forged_record_entry_never_removes_or_overwrites_a_folder_install_did_not_write() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let record = s.dir("skills/.skillfold-install.json");
    let good = fs_err::read(&record).expect("record");
    let notes: &[u8] = b"---\nname: my-notes\ndescription: Mine.\n---\n# Notes\n";
    fs_err::create_dir_all(s.dir("skills/my-notes")).expect("mkdir");
    fs_err::write(s.dir("skills/my-notes/SKILL.md"), notes).expect("write");
    let zero = "0".repeat(64);
    // Listed with a file it does not hold, then with its exact files but a hash that is not
    // their digest: either way not what install wrote.
    for files in [
        &[("SKILL.md", &b"other"[..])][..],
        &[("SKILL.md", notes)][..],
    ] {
        forge(&record, |r| {
            r["bundles"]
                .as_array_mut()
                .expect("bundles")
                .push(entry("my-notes", &zero, files));
        });
        let before = snapshot(&s.dir("skills"));
        let out = s.run(&["install", "--into", "skills"]);
        refused(&out, 2, "install_conflict");
        assert!(
            stderr(&out).contains("`skills/my-notes`"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("removed:"), "{}", stderr(&out));
        assert_eq!(snapshot(&s.dir("skills")), before, "nothing changed");
        fs_err::write(&record, &good).expect("write");
    }
    assert_eq!(
        fs_err::read(s.dir("skills/my-notes/SKILL.md")).expect("kept"),
        notes
    );

    // A selected name the user made, claimed by a planted entry (copied from a real record).
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let good: serde_json::Value =
        serde_json::from_slice(&fs_err::read(s.dir("skills/.skillfold-install.json")).expect("r"))
            .expect("json");
    let t = Setup::new();
    fs_err::create_dir_all(t.dir("mine/alpha")).expect("mkdir");
    let own: &[u8] = b"---\nname: alpha\ndescription: My own alpha.\n---\n# Mine\n";
    fs_err::write(t.dir("mine/alpha/SKILL.md"), own).expect("write");
    let planted = serde_json::json!({
        "format": good["format"],
        "agent": null,
        "bundles": [good["bundles"][0].clone()],
    });
    fs_err::write(
        t.dir("mine/.skillfold-install.json"),
        serde_json::to_vec(&planted).expect("json"),
    )
    .expect("write");
    let out = t.run(&["install", "--into", "mine"]);
    refused(&out, 2, "install_conflict");
    assert!(stderr(&out).contains("`mine/alpha`"), "{}", stderr(&out));
    assert_eq!(
        fs_err::read(t.dir("mine/alpha/SKILL.md")).expect("kept"),
        own
    );
    assert!(!t.dir("mine/beta").exists(), "nothing installed");
}

/// The migration section's promise: `skills remove --all` (every installed folder deleted) and
/// `skills add` writing over one are caught by `verify --installed`, and `install` restores
/// them (the overwritten one when `--replace-changed` says its content may go).
#[test]
fn folders_removed_or_overwritten_by_another_tool_are_caught_and_restored() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", ".agents/skills"]));
    let agents = s.dir(".agents/skills");
    let installed = snapshot(&agents);
    // `skills remove --all`.
    for name in ["alpha", "beta", "gamma"] {
        fs_err::remove_dir_all(agents.join(name)).expect("rm");
    }
    let out = s.run(&["verify", "--installed", ".agents/skills", "--json"]);
    assert_eq!(code(&out), Some(2));
    assert!(statuses(&json(&out)).values().all(|s| s == "missing"));
    ok(&s.run(&["install", "--into", ".agents/skills"]));
    ok(&s.run(&["verify", "--installed", ".agents/skills"]));
    assert_eq!(
        files(&agents.join("alpha")),
        files(&s.dir("corpus/current/alpha"))
    );
    assert_eq!(snapshot(&agents).len(), installed.len());

    // `skills add` writes its own copy of `alpha` over the installed one.
    fs_err::remove_dir_all(agents.join("alpha")).expect("rm");
    fs_err::create_dir_all(agents.join("alpha")).expect("mkdir");
    fs_err::write(
        agents.join("alpha/SKILL.md"),
        "---\nname: alpha\ndescription: Another tool's alpha.\n---\n# alpha\n",
    )
    .expect("write");
    let out = s.run(&["verify", "--installed", ".agents/skills", "--json"]);
    assert_eq!(code(&out), Some(2));
    assert_eq!(statuses(&json(&out))["alpha"], "changed");
    let out = s.run(&["install", "--into", ".agents/skills"]);
    refused(&out, 2, "install_conflict");
    assert!(
        stderr(&out).contains("--replace-changed"),
        "{}",
        stderr(&out)
    );
    let out = s.run(&[
        "install",
        "--into",
        ".agents/skills",
        "--replace-changed",
        "--json",
    ]);
    ok(&out);
    assert_eq!(statuses(&json(&out))["alpha"], "repaired");
    assert_eq!(
        files(&agents.join("alpha")),
        files(&s.dir("corpus/current/alpha"))
    );
    ok(&s.run(&["verify", "--installed", ".agents/skills"]));
}

/// The executable bit of a Git tree entry is pinned by the commit id: it reaches the corpus
/// (`0555`, recorded in the manifest) and the installed folder, the record says so, and
/// `verify --installed` reports a mode drift that `install` repairs.
#[test]
fn a_helper_executable_in_the_pinned_commit_is_installed_executable_and_its_mode_verified() {
    let s = Setup::new();
    ok(&s.run(&["install", "--into", "skills"]));
    let mode = |rel: &str| {
        fs_err::metadata(s.dir(rel))
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!(mode("corpus/current/alpha/scripts/run.sh") & 0o111, 0o111);
    assert_eq!(mode("corpus/current/alpha/SKILL.md") & 0o333, 0);
    assert_eq!(
        mode("skills/alpha/scripts/run.sh"),
        mode("corpus/current/alpha/scripts/run.sh")
    );
    assert_eq!(mode("skills/alpha/SKILL.md") & 0o111, 0);
    let run = std::process::Command::new(s.dir("skills/alpha/scripts/run.sh"))
        .output()
        .expect("runs");
    assert_eq!(run.stdout, b"alpha\n");
    // The manifest and the record say which file is executable, and only that one.
    let manifests = s.dir("corpus/.skillfold/manifests");
    let manifest = fs_err::read_dir(&manifests)
        .expect("ls")
        .next()
        .expect("one")
        .expect("e");
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs_err::read(manifest.path()).expect("read")).expect("json");
    let record: serde_json::Value =
        serde_json::from_slice(&fs_err::read(s.dir("skills/.skillfold-install.json")).expect("r"))
            .expect("json");
    for files in [
        &manifest["bundles"][0]["files"],
        &record["bundles"][0]["files"],
    ] {
        let marked: Vec<&str> = files
            .as_array()
            .expect("files")
            .iter()
            .filter(|f| f["executable"] == true)
            .map(|f| f["path"].as_str().expect("path"))
            .collect();
        assert_eq!(marked, ["scripts/run.sh"], "{files}");
    }
    ok(&s.run(&["verify", "--installed", "skills"]));

    // The execute bit lost, a file made group-writable: both named; `install` repairs them.
    let set = |rel: &str, mode: u32| {
        fs_err::set_permissions(s.dir(rel), std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    set("skills/alpha/scripts/run.sh", 0o444);
    set("skills/gamma/SKILL.md", 0o664);
    let out = s.run(&["verify", "--installed", "skills", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    for needle in [
        "scripts/run.sh (mode 444, expected executable)",
        "SKILL.md (mode 664, writable by group or others)",
    ] {
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
    }
    let report = json(&out);
    assert_eq!(statuses(&report)["alpha"], "changed");
    assert_eq!(statuses(&report)["gamma"], "changed");
    let out = s.run(&["install", "--into", "skills", "--json"]);
    ok(&out);
    assert_eq!(statuses(&json(&out))["alpha"], "repaired");
    assert_eq!(
        mode("skills/alpha/scripts/run.sh"),
        mode("corpus/current/alpha/scripts/run.sh")
    );
    ok(&s.run(&["verify", "--installed", "skills"]));

    // A record written before execute bits were recorded is still read (those bits unchecked)
    // and written anew by the next install.
    let path = s.dir("skills/.skillfold-install.json");
    let old = fs_err::read_to_string(&path)
        .expect("record")
        .replace("skillfold-install-v2", "skillfold-install-v1")
        .replace(",\n          \"executable\": true", "");
    assert!(!old.contains("executable"), "{old}");
    fs_err::write(&path, old).expect("write");
    ok(&s.run(&["verify", "--installed", "skills"]));
    let out = s.run(&["install", "--into", "skills", "--json"]);
    ok(&out);
    assert_eq!(json(&out)["record_written"], true);
    assert!(
        fs_err::read_to_string(&path)
            .expect("r")
            .contains("skillfold-install-v2")
    );
}
