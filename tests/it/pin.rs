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
        let corpus = format!("    directory: {}", self.corpus().to_str().unwrap());
        let entry: String = entry
            .lines()
            .map(|line| match line.starts_with("    directory: ") {
                true => format!("{corpus}\n"),
                false => format!("{line}\n"),
            })
            .collect();
        let descriptor = format!("skills:\n{}", entry.replace("\"<version>\"", "\"1.0.0\""));
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

pub(super) fn pin_args<'a>(url: &'a str, commit: &'a str, root: &'a str) -> Vec<&'a str> {
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

// --- refs resolved once, `--write`, `--version`, default directories ------------------------

/// A repository with `alpha` and `beta` under `skills` at a first commit (tagged `v1`, an
/// annotated tag) and `alpha` changed at a second one, the head of `main`: the first commit, the
/// second, and the repository.
fn tagged() -> (Repo, String, String) {
    let repo = Repo::new();
    bundle_in(&repo, "skills", "alpha");
    bundle_in(&repo, "skills", "beta");
    let first = repo.commit("alpha and beta");
    super::support::git::git(&repo.work, &["tag", "-a", "v1", "-m", "release 1", &first]);
    let bare = repo.bare.to_str().expect("utf8").to_owned();
    super::support::git::git(&repo.work, &["push", "-q", &bare, "v1"]);
    repo.write(
        "skills/alpha/references/guide.md",
        b"# Guide for alpha, better\n",
    );
    let second = repo.commit("alpha improved");
    super::support::git::git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    (repo, first, second)
}

/// Whether `comment` ends with an RFC 3339 UTC time to the second.
fn ends_with_a_utc_time(line: &str) -> bool {
    let time = line.rsplit(' ').next().unwrap_or_default();
    time.len() == 20
        && time.ends_with('Z')
        && time.as_bytes()[10] == b'T'
        && time.starts_with("20")
        && time
            .bytes()
            .enumerate()
            .all(|(i, b)| matches!(i, 4 | 7 | 10 | 13 | 16 | 19) || b.is_ascii_digit())
}

#[test]
fn a_branch_or_a_tag_is_resolved_once_and_the_entry_says_from_what_and_when() {
    let (repo, first, second) = tagged();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    for (name, full, commit) in [
        ("main", "refs/heads/main", &second),
        ("v1", "refs/tags/v1", &first),
    ] {
        let mut args = pin_args(&url, name, "skills");
        args.push("alpha");
        let out = s.run(&args);
        assert_eq!(code(&out), Some(0), "{name}: {}", stderr(&out));
        let entry = stdout(&out);
        let line = entry
            .lines()
            .find(|l| l.starts_with("    revision: "))
            .expect("a revision line");
        let prefix = format!("    revision: {commit}  # resolved from `{name}` ({full}) on ");
        assert!(line.starts_with(&prefix), "{line}");
        assert!(ends_with_a_utc_time(line), "{line}");
        assert!(
            stderr(&out).contains(&format!("resolved `{name}` ({full}) to {commit}")),
            "{}",
            stderr(&out)
        );
        assert!(
            entry.contains(&digest(&repo, "skills/alpha")) == (name == "main"),
            "{entry}"
        );
        // The descriptor holds the full id: it checks, and prepares that commit.
        s.adopt(&entry);
        let check = s.run(&["check"]);
        assert_eq!(code(&check), Some(0), "{}", stderr(&check));
    }
}

#[test]
fn a_ref_the_server_does_not_list_is_refused_naming_the_command_that_lists_refs() {
    let (repo, _, _) = tagged();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let mut args = pin_args(&url, "no-such-branch", "skills");
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("`--revision no-such-branch` names no commit of")
            && err.contains("refs/heads/no-such-branch` or `refs/tags/no-such-branch")
            && err.contains("[fetch_invalid]"),
        "{err}"
    );
    assert!(
        err.contains(&format!("hint: list the branches and tags the server has with `git ls-remote --heads --tags {url}`")),
        "{err}"
    );
    // An abbreviated id is no name to look up: refused before anything is asked.
    let mut args = pin_args("http://127.0.0.1:9/git/remote.git", "0123abc", "skills");
    args.push("alpha");
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("looks like an abbreviated commit id"),
        "{}",
        stderr(&out)
    );
}

/// A descriptor in an operator's own style: comments, a local source, an agent with an
/// indentless list, a trailing comment.
const OWN: &str = "# the platform team's skills\nskills:   # every agent gets these\n  - local: { name: notes, version: '3', directory: /opt/notes, hash: HASH }\n\n# reviewed weekly\nagents:\n  writer:\n    skills:\n    - local: { name: style, version: '1', directory: /opt/style, hash: HASH }\n      # style guide\nscripts:\n  timeout_seconds: 10   # seconds\n";

fn own(repo: &Repo) -> String {
    // Any valid digest: `check` reads no local bundle.
    OWN.replace("HASH", &digest(repo, "skills/beta"))
}

/// `text` with `inserted` before the first occurrence of `at`.
fn inserted(text: &str, at: &str, lines: &str) -> String {
    let i = text.find(at).unwrap_or_else(|| panic!("{at:?} in {text}"));
    format!("{}{lines}{}", &text[..i], &text[i..])
}

fn write_args<'a>(
    url: &'a str,
    revision: &'a str,
    names: &[&'a str],
    more: &[&'a str],
) -> Vec<&'a str> {
    let mut args = pin_args(url, revision, "skills");
    args.extend(names);
    args.push("--write");
    args.extend(more);
    args
}

#[test]
fn write_appends_to_the_defaults_keeping_every_other_byte_and_check_refuses_the_placeholder() {
    let (repo, first, _) = tagged();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let before = own(&repo);
    fs_err::write(s.config(), &before).expect("write");
    let out = s.run(&write_args(&url, &first, &["beta"], &[]));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "written, not printed");
    let hash = digest(&repo, "skills/beta");
    let block = format!(
        "  - git:\n      source: \"{url}\"\n      revision: {first}\n      directory: /var/lib/skillfold/git-remote-skills  # the corpus `prepare` manages\n      root: \"skills\"\n      approved:\n        - name: beta\n          hash: {hash}\n          version: \"<version>\"\n"
    );
    let after = fs_err::read_to_string(s.config()).expect("read");
    assert_eq!(after, inserted(&before, "\n# reviewed weekly", &block));
    let err = stderr(&out);
    assert!(
        err.contains("a new source at skills[1].git") && err.contains("approving beta"),
        "{err}"
    );
    assert!(
        err.contains("[version_placeholder]") && err.contains("--version LABEL"),
        "{err}"
    );
    // `check` refuses the placeholder with its own code, naming the option that fills it.
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(2), "{}", stderr(&check));
    let err = stderr(&check);
    assert!(
        err.contains("skills[1].git.approved[0].version")
            && err.contains("[version_placeholder]")
            && err.contains("--version LABEL")
            && !err.contains("version_range"),
        "{err}"
    );
    // The same pin again: nothing to add, nothing written.
    let out = s.run(&write_args(&url, &first, &["beta"], &[]));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("beta: already approved with this hash at skills[1].git.approved[0]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs_err::read_to_string(s.config()).expect("read"), after);
}

#[test]
fn write_into_an_agent_new_or_existing_with_a_version_then_prepare() {
    let (repo, first, _) = tagged();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let before = own(&repo);
    fs_err::write(s.config(), &before).expect("write");
    let corpus = s.corpus();
    let corpus = corpus.to_str().expect("utf8");
    let hash = digest(&repo, "skills/beta");
    // An agent that has a list: the entry goes after its last item, at its indentation.
    let out = s.run(&write_args(
        &url,
        &first,
        &["beta"],
        &[
            "--agent",
            "writer",
            "--version",
            "2026.12.07",
            "--directory",
            corpus,
        ],
    ));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let block = format!(
        "    - git:\n        source: \"{url}\"\n        revision: {first}\n        directory: {corpus}  # the corpus `prepare` manages\n        root: \"skills\"\n        approved:\n          - name: beta\n            hash: {hash}\n            version: \"2026.12.07\"\n"
    );
    let with_writer = inserted(&before, "scripts:", &block);
    assert_eq!(
        fs_err::read_to_string(s.config()).expect("read"),
        with_writer
    );
    assert!(
        stderr(&out).contains("a new source at agents.writer.skills[1].git"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("placeholder"), "{}", stderr(&out));
    // A new agent: made after the last one, with its `skills`.
    let out = s.run(&write_args(
        &url,
        &first,
        &["alpha"],
        &["--agent", "ops", "--version", "2026.12.07"],
    ));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let after = fs_err::read_to_string(s.config()).expect("read");
    assert!(
        after
            .starts_with(&with_writer.replace("scripts:\n  timeout_seconds: 10   # seconds\n", "")),
        "{after}"
    );
    let added = &after[with_writer.find("scripts:").unwrap()..];
    assert!(
        added.starts_with("  ops:\n    skills:\n      - git:\n          source: "),
        "{after}"
    );
    assert!(
        after.ends_with("scripts:\n  timeout_seconds: 10   # seconds\n"),
        "{after}"
    );
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(0), "{}", stderr(&check));
    // The written entry prepares: the corpus given by `--directory` holds the bundle.
    let prep = s.run(&["prepare", "--json"]);
    assert!(
        corpus_holds(&s, "beta"),
        "{}\n{}",
        stderr(&prep),
        stdout(&prep)
    );
}

/// Whether the setup's corpus publishes `name`.
fn corpus_holds(s: &Setup, name: &str) -> bool {
    s.corpus()
        .join(format!("current/{name}/SKILL.md"))
        .is_file()
}

#[test]
fn write_adds_to_a_source_of_the_same_commit_and_refuses_a_name_approved_with_another_hash() {
    let (repo, first, second) = tagged();
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    // No descriptor yet: it is made.
    let out = s.run(&write_args(&url, &first, &["alpha"], &["--version", "1"]));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let made = fs_err::read_to_string(s.config()).expect("made");
    assert!(made.starts_with("skills:\n  - git:\n"), "{made}");
    // The same URL, commit and root: beta joins alpha's source.
    let out = s.run(&write_args(&url, &first, &["beta"], &["--version", "1"]));
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("beta added to skills[0].git"),
        "{}",
        stderr(&out)
    );
    let both = fs_err::read_to_string(s.config()).expect("read");
    let hash = digest(&repo, "skills/beta");
    assert_eq!(
        both,
        format!("{made}        - name: beta\n          hash: {hash}\n          version: \"1\"\n")
    );
    assert_eq!(both.matches("- git:").count(), 1, "{both}");
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(0), "{}", stderr(&check));
    // alpha at the next commit has other bytes: another pin of the same name in the defaults.
    let out = s.run(&write_args(&url, &second, &["alpha"], &["--version", "2"]));
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("`alpha` is already approved at skills[0].git.approved[0] with hash")
            && err.contains("[conflicting_pins]")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(fs_err::read_to_string(s.config()).expect("read"), both);
    // An agent gets the defaults too: for it, the other alpha is a conflict as well.
    let out = s.run(&write_args(
        &url,
        &second,
        &["alpha"],
        &["--version", "2", "--agent", "next"],
    ));
    assert_eq!(
        code(&out),
        Some(2),
        "the agent also gets the defaults' alpha: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("[conflicting_pins]"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn two_repositories_named_skills_under_different_owners_get_different_directories() {
    let (repo, first, _) = tagged();
    let s = Setup::new();
    let mut directories = Vec::new();
    for owner in ["anthropics", "openai"] {
        // The same repository, copied to `<owner>/skills.git`.
        let path = repo.tmp.path().join(owner);
        fs_err::create_dir(&path).expect("mkdir");
        super::support::git::git(
            &path,
            &[
                "clone",
                "-q",
                "--bare",
                repo.bare.to_str().expect("utf8"),
                "skills.git",
            ],
        );
        let url = format!("file://{}/skills.git", path.display());
        let mut args = pin_args(&url, &first, "skills");
        args.push("beta");
        let out = s.run(&args);
        assert_eq!(code(&out), Some(0), "{}", stderr(&out));
        let entry = stdout(&out);
        let directory = entry
            .lines()
            .find_map(|l| l.strip_prefix("    directory: "))
            .and_then(|l| l.split("  #").next())
            .expect("a directory")
            .to_owned();
        assert_eq!(
            directory,
            format!("/var/lib/skillfold/{owner}-skills-skills")
        );
        directories.push(directory);
    }
    assert_ne!(directories[0], directories[1]);
}

#[test]
fn update_says_when_bytes_change_under_an_unchanged_label_and_version_sets_one() {
    let (repo, first, second) = tagged();
    let url = repo.file_url();
    let s = Setup::new();
    let mut args = write_args(
        &url,
        &first,
        &["alpha", "beta"],
        &["--version", "2026.12.07"],
    );
    args.extend(["--directory", "corpus"]);
    let out = s.run(&args);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let before = fs_err::read_to_string(s.config()).expect("read");
    // alpha changed at `main`, declaring no version: its label would stay.
    let out = s.run(&["update", "--write"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("note: skills[0].git: alpha: its bytes change but its version stays `2026.12.07`: give `--version LABEL`"),
        "{err}"
    );
    assert!(!err.contains("beta: its bytes"), "beta is unchanged: {err}");
    let kept = fs_err::read_to_string(s.config()).expect("read");
    assert!(
        kept.contains(&second) && kept.matches("\"2026.12.07\"").count() == 2,
        "{kept}"
    );
    // `--version` labels the bundles whose bytes change, and only those.
    fs_err::write(s.config(), &before).expect("write");
    let out = s.run(&["update", "--write", "--version", "2027.01.15"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
    let labelled = fs_err::read_to_string(s.config()).expect("read");
    let alpha = digest(&repo, "skills/alpha");
    assert!(
        labelled.contains(&format!(
            "- name: alpha\n          hash: {alpha}\n          version: \"2027.01.15\""
        )),
        "{labelled}"
    );
    assert!(
        labelled.contains("- name: beta\n") && labelled.matches("\"2026.12.07\"").count() == 1,
        "{labelled}"
    );
    let check = s.run(&["check"]);
    assert_eq!(code(&check), Some(0), "{}", stderr(&check));
}
