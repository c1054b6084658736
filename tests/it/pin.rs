//! `skillfold pin` through the binary against repositories made with the real `git` CLI and
//! served over smart HTTP on 127.0.0.1: roots under hidden folders (`skills/.curated`, as
//! openai/skills lays its skills out) and the refusals that stay, and `pin --all`.

use std::path::PathBuf;
use std::process::{Command, Output};

use super::support::bin::{stderr, stdout};
use super::support::git::Repo;
use super::support::git_server::HttpServer;

/// A working directory for a descriptor and its corpus.
pub(super) struct Setup {
    pub(super) dir: tempfile::TempDir,
}

impl Setup {
    pub(super) fn new() -> Setup {
        Setup {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub(super) fn corpus(&self) -> PathBuf {
        self.dir.path().join("corpus")
    }

    pub(super) fn config(&self) -> PathBuf {
        self.dir.path().join("skillfold.yaml")
    }

    pub(super) fn run(&self, args: &[&str]) -> Output {
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
    pub(super) fn adopt(&self, entry: &str) {
        let descriptor = format!(
            "skills:\n{}",
            entry
                .replace("/var/lib/skillfold/remote", self.corpus().to_str().unwrap())
                .replace("\"<version>\"", "\"1.0.0\"")
        );
        fs_err::write(self.config(), descriptor).expect("write descriptor");
    }
}

pub(super) fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// A valid bundle `name` in the folder `dir/name` of the work tree.
pub(super) fn bundle_in(repo: &Repo, dir: &str, name: &str) {
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
pub(super) fn digest(repo: &Repo, rel: &str) -> String {
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

// --- pin --all -----------------------------------------------------------------------------------

/// A hostile folder name: it would forge a line and hide what follows on a terminal.
const HOSTILE: &str = "x\nok: forged\u{1b}[8m";

/// A repository with skills under `skills/.curated`: `alpha` and `beta` valid; `broken` without
/// frontmatter; `Upper` and [`HOSTILE`] not skill names; `other` whose frontmatter names `alpha`;
/// `notes` without a `SKILL.md` (not a bundle, not listed).
fn mixed_repository() -> (Repo, String) {
    let repo = Repo::new();
    bundle_in(&repo, "skills/.curated", "alpha");
    bundle_in(&repo, "skills/.curated", "beta");
    repo.write("skills/.curated/broken/SKILL.md", b"no frontmatter here\n");
    bundle_in(&repo, "skills/.curated", "Upper");
    bundle_in(&repo, "skills/.curated", HOSTILE);
    repo.write(
        "skills/.curated/other/SKILL.md",
        b"---\nname: alpha\ndescription: Says it is alpha.\n---\n# other\n",
    );
    repo.write("skills/.curated/notes/README.md", b"# not a bundle\n");
    let commit = repo.commit("a mixed repository");
    (repo, commit)
}

fn all_args<'a>(url: &'a str, commit: &'a str, root: &'a str) -> Vec<&'a str> {
    let mut args = pin_args(url, commit, root);
    args.push("--all");
    args
}

#[test]
fn pin_all_pins_every_valid_bundle_and_lists_each_refused_one_with_its_reason() {
    let (repo, commit) = mixed_repository();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let out = s.run(&all_args(&url, &commit, "skills/.curated"));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let entry = stdout(&out);
    let err = stderr(&out);
    for name in ["alpha", "beta"] {
        let hash = digest(&repo, &format!("skills/.curated/{name}"));
        assert!(
            entry.contains(&format!("- name: {name}\n        hash: {hash}")),
            "{entry}"
        );
    }
    for absent in ["broken", "Upper", "other", "notes", "forged"] {
        assert!(!entry.contains(absent), "{absent}: {entry}");
    }
    for (folder, code) in [
        ("skills/.curated/broken", "[invalid_bundle]"),
        ("skills/.curated/Upper", "[invalid_name]"),
        ("skills/.curated/other", "[name_mismatch]"),
        ("skills/.curated/x\\nok: forged\\u{1b}[8m", "[invalid_name]"),
    ] {
        assert!(
            err.lines()
                .any(|l| l == format!("refused: {folder} {code}")),
            "{folder}: {err}"
        );
    }
    assert!(err.contains("skills/.curated/broken/SKILL.md: "), "{err}");
    assert!(!err.contains("notes"), "not a bundle: {err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains("\nok: forged"),
        "{err}"
    );
    assert!(
        err.contains("pinned 2 of 6 bundle(s) under `skills/.curated`; 4 refused"),
        "{err}"
    );
    // The entry is the descriptor's, as for named bundles.
    s.adopt(&entry);
    let prep = s.run(&["prepare"]);
    assert_eq!(code(&prep), Some(0), "{}", stderr(&prep));
    let verify = s.run(&["verify"]);
    assert_eq!(code(&verify), Some(0), "{}", stderr(&verify));
}

#[test]
fn pin_all_json_reports_the_pinned_the_refused_and_the_entry() {
    let (repo, commit) = mixed_repository();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = all_args(&url, &commit, "skills/.curated");
    args.extend(["--json", "--limits", "extended"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["source"], url.as_str());
    assert_eq!(report["revision"], commit.as_str());
    assert_eq!(report["root"], "skills/.curated");
    assert_eq!(report["limits"], "extended");
    assert!(report["signer"].is_null());
    let pinned = report["pinned"].as_array().expect("pinned");
    let names: Vec<&str> = pinned.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(pinned[0]["folder"], "skills/.curated/alpha");
    assert_eq!(
        pinned[0]["hash"],
        digest(&repo, "skills/.curated/alpha").as_str()
    );
    assert!(pinned[0]["declared_version"].is_null());
    let refused = report["refused"].as_array().expect("refused");
    let codes: Vec<(&str, &str)> = refused
        .iter()
        .map(|r| (r["folder"].as_str().unwrap(), r["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        codes,
        [
            ("skills/.curated/Upper", "invalid_name"),
            ("skills/.curated/broken", "invalid_bundle"),
            ("skills/.curated/other", "name_mismatch"),
            ("skills/.curated/x\\nok: forged\\u{1b}[8m", "invalid_name"),
        ]
    );
    assert!(
        refused
            .iter()
            .all(|r| !r["problems"].as_array().unwrap().is_empty())
    );
    let entry = report["entry"].as_str().expect("entry");
    assert!(entry.contains("    limits: extended"), "{entry}");
    let parsed: serde_yaml::Value = serde_yaml::from_str(entry).expect("YAML");
    assert_eq!(
        parsed[0]["git"]["approved"].as_sequence().map(Vec::len),
        Some(2)
    );
    // The refusals are still listed on stderr.
    assert!(stderr(&out).contains("refused: skills/.curated/other [name_mismatch]"));
}

#[test]
fn pin_all_with_nothing_valid_exits_2_and_still_lists_the_refused() {
    let repo = Repo::new();
    repo.write("skills/.curated/broken/SKILL.md", b"no frontmatter here\n");
    bundle_in(&repo, "skills/.curated", "Upper");
    let commit = repo.commit("nothing valid");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let out = s.run(&all_args(&url, &commit, "skills/.curated"));
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no entry");
    let err = stderr(&out);
    assert!(
        err.contains("refused: skills/.curated/broken [invalid_bundle]"),
        "{err}"
    );
    assert!(
        err.contains("refused: skills/.curated/Upper [invalid_name]"),
        "{err}"
    );
    assert!(
        err.contains(
            "error: no bundle under `skills/.curated` can be pinned (2 refused) [no_bundles]"
        ),
        "{err}"
    );
    let mut args = all_args(&url, &commit, "skills/.curated");
    args.push("--json");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["pinned"].as_array().map(Vec::len), Some(0));
    assert_eq!(report["refused"].as_array().map(Vec::len), Some(2));
    assert!(report["entry"].is_null());
}

#[test]
fn pin_all_under_a_root_without_bundles_exits_2() {
    let (repo, commit) = hidden_groups();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    // `skills` holds only the hidden groups, no `<name>/SKILL.md`; `nowhere` is not in the tree.
    for root in ["skills", "nowhere/.x"] {
        let out = s.run(&all_args(&url, &commit, root));
        assert_eq!(code(&out), Some(2), "{root}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "no bundle under `{root}` can be pinned (0 refused) [no_bundles]"
            )),
            "{root}: {}",
            stderr(&out)
        );
    }
    // Without `--root` the repository's own folders are looked at: none holds a SKILL.md.
    let out = s.run(&["pin", "--source", &url, "--revision", &commit, "--all"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no bundle under `/`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn pin_all_refuses_a_root_with_more_folders_than_it_takes() {
    let repo = Repo::new();
    let skill = b"---\nname: s\ndescription: One of many.\n---\n# s\n";
    for i in 0..1025 {
        repo.write(&format!("skills/s{i}/SKILL.md"), skill);
    }
    let commit = repo.commit("1,025 folders");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let out = s.run(&all_args(&url, &commit, "skills"));
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("`skills` holds 1025 folders with a `SKILL.md`, over the 1024")
            && err.contains("[too_many_bundles]"),
        "{err}"
    );
    // Nothing was taken: not one of them is listed as refused (each names another bundle).
    assert!(!err.contains("refused:"), "{err}");
    assert_eq!(stdout(&out), "");
}

#[test]
fn pin_all_refuses_a_commit_with_a_link_anywhere_as_pin_does() {
    let repo = Repo::new();
    bundle_in(&repo, "skills/.curated", "alpha");
    repo.symlink("CLAUDE.md", "AGENTS.md");
    let commit = repo.commit("a link at the root");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let out = s.run(&all_args(&url, &commit, "skills/.curated"));
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("symbolic link: AGENTS.md"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn pin_all_is_documented_and_its_options_are_checked() {
    let s = Setup::new();
    let help = s.run(&["pin", "--help"]);
    assert_eq!(code(&help), Some(0));
    let text = stdout(&help);
    assert!(text.contains("--all") && text.contains("--json"), "{text}");
    assert!(text.contains("refused"), "{text}");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let url = "http://127.0.0.1:9/git/remote.git";
    // Nothing listens at `url`: a command that went on to fetch would exit 1.
    for (args, says) in [
        (
            vec![
                "pin",
                "--source",
                url,
                "--revision",
                commit,
                "--all",
                "alpha",
            ],
            "cannot be used with",
        ),
        (
            vec![
                "pin",
                "--source",
                url,
                "--revision",
                commit,
                "--json",
                "alpha",
            ],
            "`--json` reports `--all`",
        ),
        (
            vec!["pin", "--source", url, "--revision", commit],
            "required arguments were not provided",
        ),
    ] {
        let out = s.run(&args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn pin_refuses_a_named_folder_whose_bundle_names_another() {
    let (repo, commit) = mixed_repository();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, &commit, "skills/.curated");
    args.push("other");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "no entry pins `other` as `alpha`");
    assert!(
        stderr(&out).contains(
            "`skills/.curated/other/SKILL.md` names the bundle `alpha`, not `other`, the name of its folder [name_mismatch]"
        ),
        "{}",
        stderr(&out)
    );
}

// --- roots from outside, written and matched exactly ---------------------------------------

#[test]
fn an_invisible_root_is_written_escaped_and_reads_back_as_itself() {
    // Allowed in a root (none is a control character), each invisible or reordering on a screen.
    let root = "r\u{2028}\u{202e}\u{200b}\u{feff}";
    let repo = Repo::new();
    bundle_in(&repo, root, "alpha");
    let commit = repo.commit("a root with invisible characters");
    let url = repo.file_url();
    let s = Setup::new();
    let mut args = pin_args(&url, &commit, root);
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let entry = stdout(&out);
    assert!(
        entry.contains("    root: \"r\\u2028\\u202e\\u200b\\ufeff\"\n"),
        "{entry:?}"
    );
    let raw: Vec<char> = entry
        .chars()
        .filter(|c| matches!(c, '\u{2028}' | '\u{202e}' | '\u{200b}' | '\u{feff}'))
        .collect();
    assert!(raw.is_empty(), "raw {raw:?} in {entry:?}");
    // The descriptor's reader takes it back as the root itself: the bundle is found there.
    s.adopt(&entry);
    let prep = s.run(&["prepare", "--json"]);
    assert_eq!(code(&prep), Some(0), "{}", stderr(&prep));
    assert!(s.corpus().join("current/alpha/SKILL.md").is_file());
}

#[test]
fn pin_all_matches_its_root_by_bytes_not_by_a_lossy_reading() {
    use std::os::unix::ffi::OsStrExt as _;

    let repo = Repo::new();
    // `sk\x80` is not UTF-8: read lossily it is `sk\u{fffd}`, and it sorts first.
    let lossy = repo
        .work
        .join(std::ffi::OsStr::from_bytes(b"sk\x80"))
        .join("alpha");
    fs_err::create_dir_all(&lossy).expect("mkdir");
    fs_err::write(
        lossy.join("SKILL.md"),
        "---\nname: alpha\ndescription: The alpha skill.\n---\n# alpha\n",
    )
    .expect("write");
    bundle_in(&repo, "sk\u{fffd}", "beta");
    let commit = repo.commit("two roots that read alike");
    let url = repo.file_url();
    let s = Setup::new();
    let mut args = all_args(&url, &commit, "sk\u{fffd}");
    args.push("--json");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let pinned: Vec<&str> = report["pinned"]
        .as_array()
        .expect("pinned")
        .iter()
        .map(|b| b["name"].as_str().expect("name"))
        .collect();
    assert_eq!(pinned, ["beta"], "{report}");
    assert_eq!(report["refused"], serde_json::json!([]), "{report}");
}
