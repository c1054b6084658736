//! Hostile Git repositories, built object by object with the real `git` CLI (`hash-object`,
//! `hash-object --literally` for trees `git mktree` would refuse to write, `commit-tree`), served
//! over `file://`, and run through `prepare` and `pin`: tree bombs, bundle folders too wide to
//! read, malformed trees and Git LFS pointers. Each must be refused with its own code and exit 2,
//! within bounded time and memory, and nothing may be published. And over HTTP(S), servers that
//! redirect: followed on their origin, across origins without the first origin's credentials,
//! never down to `http://`, and under the same overall deadline as the fetch.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::support::bin::stderr;
use super::support::git::{git, git_input};
use super::support::git_server::{Answer, HttpServer, Redirect, Scripted, moved};
use super::support::world::skill_md;

/// A bare repository written object by object.
struct Raw {
    tmp: tempfile::TempDir,
    bare: PathBuf,
}

/// One tree entry: mode as Git writes it (`40000` for trees), name, object id (hex).
type Entry<'a> = (&'a str, &'a [u8], &'a str);

impl Raw {
    fn new() -> Raw {
        let tmp = tempfile::tempdir().expect("tempdir");
        git(tmp.path(), &["init", "-q", "--bare", "remote.git"]);
        let bare = tmp.path().join("remote.git");
        Raw { tmp, bare }
    }

    fn blob(&self, bytes: &[u8]) -> String {
        git_input(&self.bare, &["hash-object", "-w", "--stdin"], bytes)
    }

    /// A tree holding `entries` exactly as given: no sorting, no checks.
    fn tree(&self, entries: &[Entry<'_>]) -> String {
        let mut raw = Vec::new();
        for (mode, name, id) in entries {
            raw.extend_from_slice(mode.as_bytes());
            raw.push(b' ');
            raw.extend_from_slice(name);
            raw.push(0);
            raw.extend_from_slice(&unhex(id));
        }
        self.raw_tree(&raw)
    }

    fn raw_tree(&self, bytes: &[u8]) -> String {
        git_input(
            &self.bare,
            &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
            bytes,
        )
    }

    /// A `skills/` tree holding one valid bundle per name, and the bundles' digests.
    fn skills(&self, names: &[&str]) -> (String, Vec<String>) {
        let mut dirs = Vec::new();
        let mut digests = Vec::new();
        for name in names {
            let md = skill_md(name);
            let blob = self.blob(md.as_bytes());
            dirs.push((
                name.to_string(),
                self.tree(&[("100644", b"SKILL.md", &blob)]),
            ));
            digests.push(digest(&[("SKILL.md", md.as_bytes())]));
        }
        let entries: Vec<Entry<'_>> = dirs
            .iter()
            .map(|(n, t)| ("40000", n.as_bytes(), t.as_str()))
            .collect();
        (self.tree(&entries), digests)
    }

    /// A commit of `tree`, at `refs/heads/main`.
    fn commit(&self, tree: &str) -> String {
        let commit = git(&self.bare, &["commit-tree", "-m", "hostile", tree]);
        git(&self.bare, &["update-ref", "refs/heads/main", &commit]);
        commit
    }

    fn url(&self) -> String {
        format!("file://{}", self.bare.display())
    }

    /// Runs `prepare` of `approved` (`(name, digest)`) from `commit` under `root: skills`.
    fn prepare(&self, commit: &str, approved: &[(&str, &str)]) -> Run {
        let dir = self.tmp.path().join(format!("prepare-{}", &commit[..12]));
        Run::new(
            &dir,
            &["prepare"],
            Some(&self.descriptor(&dir, &self.url(), commit, "", approved)),
        )
    }

    /// Writes, in a new folder `dir`, a descriptor of one source `url` at `commit` under
    /// `root: skills` with `extra` lines, pinning `approved` (`(name, digest)`).
    fn descriptor(
        &self,
        dir: &Path,
        url: &str,
        commit: &str,
        extra: &str,
        approved: &[(&str, &str)],
    ) -> PathBuf {
        fs_err::create_dir_all(dir).expect("mkdir");
        let mut text = format!(
            "skills:\n  - git:\n      source: {url}\n      revision: {commit}\n      directory: corpus\n      root: skills\n{extra}      approved:\n"
        );
        for (name, hash) in approved {
            text.push_str(&format!(
                "        - {{ name: {name}, version: '1.0.0', hash: {hash} }}\n"
            ));
        }
        let config = dir.join("skillfold.yaml");
        fs_err::write(&config, text).expect("write descriptor");
        config
    }

    /// Runs `pin` of `names` at `commit` under `--root skills`.
    fn pin(&self, commit: &str, names: &[&str]) -> Run {
        let url = self.url();
        let mut args = vec![
            "pin",
            "--source",
            &url,
            "--revision",
            commit,
            "--root",
            "skills",
        ];
        args.extend_from_slice(names);
        Run::new(self.tmp.path(), &args, None)
    }
}

/// One run of `skillfold`, with its private data segment capped at [`DATA_CAP_KIB`] (so a walk
/// that holds what it should not fails instead of swapping) and its CPU time at [`CPU_CAP_S`]
/// (so work that should not be done fails instead of running for hours), and its duration.
struct Run {
    out: Output,
    took: Duration,
    corpus: PathBuf,
}

/// The cap on each run's data segment (`ulimit -d`): the bound of 256 MiB of RSS.
const DATA_CAP_KIB: u64 = 256 * 1024;

/// The cap on each run's CPU time (`ulimit -t`).
const CPU_CAP_S: u64 = 120;

/// How long a run may last at all before it is killed (and fails every assertion on its exit).
const WATCHDOG_S: u64 = 120;

impl Run {
    fn new(dir: &Path, args: &[&str], config: Option<&Path>) -> Run {
        Run::with_env(dir, args, config, &[])
    }

    /// Like [`Run::new`], with `env` set, and killed should it outlive [`WATCHDOG_S`] (a run that
    /// waits on a server uses no CPU time).
    fn with_env(dir: &Path, args: &[&str], config: Option<&Path>, env: &[(&str, &OsStr)]) -> Run {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -d {DATA_CAP_KIB} && ulimit -t {CPU_CAP_S} && exec timeout -s KILL {WATCHDOG_S} \"$0\" \"$@\""
            ))
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .arg(env!("CARGO_BIN_EXE_skillfold"))
            .args(args)
            .current_dir(dir)
            .env_remove("SKILLFOLD_FAILPOINT");
        match config {
            Some(config) => cmd.env("SKILLFOLD_CONFIG", config),
            None => cmd.env_remove("SKILLFOLD_CONFIG"),
        };
        let start = Instant::now();
        let out = cmd.output().expect("run skillfold");
        Run {
            out,
            took: start.elapsed(),
            corpus: dir.join("corpus"),
        }
    }

    /// Asserts exit 2, `[code]` on stderr, every `needle` on stderr, and nothing published.
    #[track_caller]
    fn assert_refused(&self, code: &str, needles: &[&str]) {
        let err = stderr(&self.out);
        assert_eq!(self.out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("[{code}]")), "no [{code}]:\n{err}");
        for needle in needles {
            assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
        }
        assert!(
            !self.corpus.join("current").exists(),
            "something was published"
        );
    }

    #[track_caller]
    fn assert_within(&self, bound: Duration) {
        assert!(self.took < bound, "took {:?}, over {bound:?}", self.took);
    }
}

fn unhex(id: &str) -> Vec<u8> {
    (0..id.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&id[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The digest of a bundle holding `files`.
fn digest(files: &[(&str, &[u8])]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("bundle");
    for (path, bytes) in files {
        let path = root.join(path);
        fs_err::create_dir_all(path.parent().expect("parent")).expect("mkdir -p");
        fs_err::write(path, bytes).expect("write");
    }
    skillfold::Bundle::read_dir(&root)
        .expect("valid bundle")
        .digest()
        .to_string()
}

/// A generous bound on the duration of a refused run in a debug build on a busy machine; the
/// code it guards against took minutes (or aborted) on these inputs.
const QUICK: Duration = Duration::from_secs(60);

// --- 1. tree bombs ------------------------------------------------------------------------------

/// `levels` levels of trees, each naming the level below twice (as `a…` and `b…`, `name_len`
/// bytes each), above one file: 2^levels paths from `levels + 1` tree objects.
fn bomb(raw: &Raw, levels: usize, name_len: usize, bottom: &[Entry<'_>]) -> String {
    let (a, b) = ("a".repeat(name_len), "b".repeat(name_len));
    let mut tree = raw.tree(bottom);
    for _ in 0..levels {
        tree = raw.tree(&[
            ("40000", a.as_bytes(), &tree),
            ("40000", b.as_bytes(), &tree),
        ]);
    }
    tree
}

#[test]
fn a_tree_bomb_of_long_names_is_refused_quickly_in_bounded_memory() {
    // The input: 16 levels of two 1,000-byte names beside a normal `skills/good/`.
    let raw = Raw::new();
    let (skills, digests) = raw.skills(&["good"]);
    let leaf = raw.blob(b"x\n");
    let bomb = bomb(&raw, 16, 1000, &[("100644", b"leaf.md", &leaf)]);
    let root = raw.tree(&[("40000", b"bomb", &bomb), ("40000", b"skills", &skills)]);
    let commit = raw.commit(&root);

    let prepare = raw.prepare(&commit, &[("good", &digests[0])]);
    prepare.assert_refused("tree_path_too_long", &["over the bound of 4096"]);
    prepare.assert_within(QUICK);
    let pin = raw.pin(&commit, &["good"]);
    pin.assert_refused("tree_path_too_long", &["over the bound of 4096"]);
    pin.assert_within(QUICK);
}

#[test]
fn a_tree_bomb_of_short_names_prepares_with_each_subtree_walked_once() {
    // 2^40 paths, 41 tree objects: every path fits the path bound, and the entries of the
    // distinct trees are few. Counting paths, as before, refused this with `tree_too_large`.
    let raw = Raw::new();
    let (skills, digests) = raw.skills(&["good"]);
    let leaf = raw.blob(b"x\n");
    let bomb = bomb(&raw, 40, 3, &[("100644", b"leaf.md", &leaf)]);
    let root = raw.tree(&[("40000", b"bomb", &bomb), ("40000", b"skills", &skills)]);
    let commit = raw.commit(&root);

    let prepare = raw.prepare(&commit, &[("good", &digests[0])]);
    assert_eq!(
        prepare.out.status.code(),
        Some(0),
        "{}",
        stderr(&prepare.out)
    );
    assert!(prepare.corpus.join("current/good/SKILL.md").is_file());
    prepare.assert_within(QUICK);
}

#[test]
fn a_symlink_in_a_shared_subtree_is_reported_once() {
    let raw = Raw::new();
    let (skills, digests) = raw.skills(&["good"]);
    let leaf = raw.blob(b"x\n");
    let target = raw.blob(b"../../../etc/passwd");
    let bomb = bomb(
        &raw,
        40,
        3,
        &[("100644", b"leaf.md", &leaf), ("120000", b"link", &target)],
    );
    let root = raw.tree(&[("40000", b"bomb", &bomb), ("40000", b"skills", &skills)]);
    let commit = raw.commit(&root);

    let first = format!("bomb/{}link", "aaa/".repeat(40));
    let prepare = raw.prepare(&commit, &[("good", &digests[0])]);
    prepare.assert_refused("symlink_in_tree", &["holds 1 symbolic link(s)", &first]);
    let pin = raw.pin(&commit, &["good"]);
    pin.assert_refused("symlink_in_tree", &["holds 1 symbolic link(s)", &first]);
}

// --- 2. no work after a bound -------------------------------------------------------------------

#[test]
fn a_bundle_folder_too_wide_is_refused_before_any_blob_is_inflated() {
    // The input, narrower so that a debug build fetches it quickly: `skills/big/` holds
    // `SKILL.md` and 100,000 entries that all name one 128 KiB blob. Inflating each (as before)
    // took 238 s of CPU in a debug build; the entry bound decides before any blob is read.
    let raw = Raw::new();
    let md = raw.blob(skill_md("big").as_bytes());
    let blob = unhex(&raw.blob(&vec![b'a'; 128 * 1024]));
    let mut listing = Vec::with_capacity(100_001 * 40);
    listing.extend_from_slice(b"100644 SKILL.md\0");
    listing.extend_from_slice(&unhex(&md));
    for i in 1..=100_000 {
        listing.extend_from_slice(format!("100644 f{i:07}.md\0").as_bytes());
        listing.extend_from_slice(&blob);
    }
    let big = raw.raw_tree(&listing);
    let skills = raw.tree(&[("40000", b"big", &big)]);
    let commit = raw.commit(&raw.tree(&[("40000", b"skills", &skills)]));

    let zero = "0".repeat(64);
    let prepare = raw.prepare(&commit, &[("big", &zero)]);
    prepare.assert_refused("verification_failed", &["[too_many_entries]"]);
    prepare.assert_within(QUICK);
    let pin = raw.pin(&commit, &["big"]);
    pin.assert_refused("too_many_entries", &["skills/big"]);
    pin.assert_within(QUICK);
}

#[test]
fn an_object_over_the_bound_is_refused_before_it_is_allocated() {
    // One blob of zeros outside the bundles, a little over the bound once inflated (a gigabyte
    // of zeros is a megabyte of pack): refused from its header, never held in memory.
    let raw = Raw::new();
    let (skills, digests) = raw.skills(&["good"]);
    // The bound on one object: 100 MiB (docs/corpus.md), the figure the refusal names.
    let max = 100 * 1024 * 1024;
    let zeros = raw.blob(&vec![0; max + 1]);
    let root = raw.tree(&[
        ("40000", b"skills", &skills),
        ("100644", b"zeros.bin", &zeros),
    ]);
    let commit = raw.commit(&root);
    let prepare = raw.prepare(&commit, &[("good", &digests[0])]);
    prepare.assert_refused("object_too_large", &["larger than 104857600 bytes"]);
    prepare.assert_within(QUICK);
}

// --- 3. malformed trees -------------------------------------------------------------------------

/// A commit whose root holds `skills/` (a valid `good` bundle) and the entries `extra` before it.
fn beside_skills(raw: &Raw, extra: &[Entry<'_>]) -> (String, String) {
    let (skills, digests) = raw.skills(&["good"]);
    let mut entries = extra.to_vec();
    entries.push(("40000", b"skills", &skills));
    (raw.commit(&raw.tree(&entries)), digests[0].clone())
}

#[test]
fn a_root_entry_named_like_a_bundle_path_is_refused_as_malformed() {
    // A root entry literally named `skills/good`: other tools merge it with `skills/good/`.
    let raw = Raw::new();
    let evil = raw.blob(b"---\nname: good\ndescription: Not what was reviewed.\n---\n");
    let evil_dir = raw.tree(&[("100644", b"SKILL.md", &evil)]);
    let (commit, digest) = beside_skills(&raw, &[("40000", b"skills/good", &evil_dir)]);
    let prepare = raw.prepare(&commit, &[("good", &digest)]);
    prepare.assert_refused(
        "tree_malformed",
        &["`skills/good` has a name that holds `/`"],
    );
    let pin = raw.pin(&commit, &["good"]);
    pin.assert_refused(
        "tree_malformed",
        &["`skills/good` has a name that holds `/`"],
    );
}

#[test]
fn dot_names_duplicates_and_unsorted_entries_are_refused_as_malformed() {
    let raw = Raw::new();
    let a = raw.blob(b"a\n");
    let sub = raw.tree(&[("100644", b"a.md", &a)]);
    let cases: [(&[Entry<'_>], &str); 6] = [
        (&[("40000", b".", &sub)], "`.` is named `.` or `..`"),
        (&[("40000", b"..", &sub)], "`..` is named `.` or `..`"),
        (
            &[("100644", b"docs", &a), ("100644", b"docs", &a)],
            "`docs` appears twice",
        ),
        (
            &[
                ("100644", b"docs", &a),
                ("100644", b"docs.md", &a),
                ("40000", b"docs", &sub),
            ],
            "`docs` appears twice in its tree (as a file and as a directory)",
        ),
        (
            &[("100644", b"b.md", &a), ("100644", b"a.md", &a)],
            "`a.md` is out of Git's order",
        ),
        // A tree sorts as if its name ended in `/`: `docs/` comes after `docs.md`.
        (
            &[("40000", b"docs", &sub), ("100644", b"docs.md", &a)],
            "`docs.md` is out of Git's order",
        ),
    ];
    for (extra, needle) in cases {
        let (commit, digest) = beside_skills(&raw, extra);
        raw.prepare(&commit, &[("good", &digest)])
            .assert_refused("tree_malformed", &[needle]);
    }
}

#[test]
fn a_malformed_tree_inside_a_bundle_is_refused_by_pin() {
    let raw = Raw::new();
    let md = raw.blob(skill_md("good").as_bytes());
    let other = raw.blob(b"---\nname: good\ndescription: The other one.\n---\n");
    let good = raw.tree(&[
        ("100644", b"SKILL.md", &md),
        ("100644", b"SKILL.md", &other),
    ]);
    let skills = raw.tree(&[("40000", b"good", &good)]);
    let commit = raw.commit(&raw.tree(&[("40000", b"skills", &skills)]));
    raw.pin(&commit, &["good"])
        .assert_refused("tree_malformed", &["`skills/good/SKILL.md` appears twice"]);
}

// --- 4. Git LFS pointers ------------------------------------------------------------------------

#[test]
fn every_lfs_pointer_spelling_git_lfs_accepts_is_refused() {
    let raw = Raw::new();
    let oid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
    let pointer = |version: &str| format!("version {version}\noid sha256:{oid}\nsize 12345\n");
    let files = [
        ("launch.bin", pointer("https://git-lfs.github.com/spec/v1")),
        (
            "prerelease.bin",
            pointer("https://hawser.github.com/spec/v1"),
        ),
        ("alpha.bin", pointer("http://git-media.io/v/2")),
        // Leading blank lines, CRLF, and padding past 1,024 bytes: git-lfs still smudges it.
        (
            "padded.bin",
            format!(
                "\r\n{}{}",
                pointer("https://git-lfs.github.com/spec/v1").replace('\n', "\r\n"),
                " ".repeat(4096)
            ),
        ),
    ];
    let md = raw.blob(skill_md("good").as_bytes());
    let ids: Vec<String> = files
        .iter()
        .map(|(_, text)| raw.blob(text.as_bytes()))
        .collect();
    let mut assets: Vec<Entry<'_>> = files
        .iter()
        .zip(&ids)
        .map(|((name, _), id)| ("100644", name.as_bytes(), id.as_str()))
        .collect();
    assets.sort_by(|a, b| a.1.cmp(b.1));
    let assets = raw.tree(&assets);
    let good = raw.tree(&[("100644", b"SKILL.md", &md), ("40000", b"assets", &assets)]);
    let skills = raw.tree(&[("40000", b"good", &good)]);
    let commit = raw.commit(&raw.tree(&[("40000", b"skills", &skills)]));

    let needles: Vec<String> = files
        .iter()
        .map(|(name, _)| format!("skills/good/assets/{name}"))
        .collect();
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    let zero = "0".repeat(64);
    let prepare = raw.prepare(&commit, &[("good", &zero)]);
    prepare.assert_refused("verification_failed", &needles);
    let pin = raw.pin(&commit, &["good"]);
    pin.assert_refused("lfs_pointer", &needles);
    assert_eq!(
        stderr(&pin.out).matches("[lfs_pointer]").count(),
        files.len()
    );
}

// --- redirects ------------------------------------------------------------------------------------

/// A repository of one valid bundle `alpha`, its commit and the bundle's digest.
fn one_bundle() -> (Raw, String, String) {
    let raw = Raw::new();
    let (skills, digests) = raw.skills(&["alpha"]);
    let root = raw.tree(&[("40000", b"skills", &skills)]);
    let commit = raw.commit(&root);
    let digest = digests.into_iter().next().expect("one digest");
    (raw, commit, digest)
}

/// A redirect of `^/git/<from>/(.*)$` to `<to>$1`.
fn redirect(from: &'static str, to: String, code: u16) -> Redirect {
    Redirect {
        from,
        to,
        code,
        after_auth: false,
    }
}

impl Run {
    #[track_caller]
    fn assert_published(&self) {
        let err = stderr(&self.out);
        assert_eq!(self.out.status.code(), Some(0), "{err}");
        assert!(
            self.corpus
                .join("current")
                .join("alpha")
                .join("SKILL.md")
                .is_file(),
            "nothing published:\n{err}"
        );
    }

    /// Asserts a retryable failure (exit 1) with `[code]` and every `needle` on stderr, and
    /// nothing published.
    #[track_caller]
    fn assert_retryable(&self, code: &str, needles: &[&str]) {
        let err = stderr(&self.out);
        assert_eq!(self.out.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("[{code}]")), "no [{code}]:\n{err}");
        for needle in needles {
            assert!(err.contains(needle), "stderr lacks {needle:?}:\n{err}");
        }
        assert!(
            !self.corpus.join("current").exists(),
            "something was published"
        );
    }
}

// A repository URL that redirects on its own origin — renamed (301), moved for now (302, 307),
// `/repo` to `/repo.git`, or twice — prepares, `pin`s and answers `outdated`, as it did before
// every request got its share of the deadline.
#[test]
fn a_repository_url_that_redirects_on_its_origin_prepares() {
    let (raw, commit, digest) = one_bundle();
    let server = HttpServer::redirecting(
        raw.tmp.path(),
        false,
        false,
        &[
            redirect(
                "^/git/renamed[.]git/(.*)$",
                "/git/remote.git/$1".into(),
                301,
            ),
            redirect("^/git/found[.]git/(.*)$", "/git/remote.git/$1".into(), 302),
            redirect(
                "^/git/temporary[.]git/(.*)$",
                "/git/remote.git/$1".into(),
                307,
            ),
            redirect("^/git/remote/(.*)$", "/git/remote.git/$1".into(), 301),
            redirect("^/git/twice[.]git/(.*)$", "/git/renamed.git/$1".into(), 301),
        ],
    );
    for name in [
        "renamed.git",
        "found.git",
        "temporary.git",
        "remote",
        "twice.git",
    ] {
        let url = server.url(name);
        let dir = raw.tmp.path().join(format!("redirected-{name}"));
        let config = raw.descriptor(
            &dir,
            &url,
            &commit,
            "      track: main\n",
            &[("alpha", &digest)],
        );
        let run = Run::new(&dir, &["prepare"], Some(&config));
        run.assert_published();
        let outdated = Run::new(&dir, &["outdated", "--json"], Some(&config));
        assert_eq!(
            outdated.out.status.code(),
            Some(0),
            "{name}: {}",
            stderr(&outdated.out)
        );
        let pin = Run::new(
            &dir,
            &[
                "pin",
                "--source",
                &url,
                "--revision",
                &commit,
                "--root",
                "skills",
                "alpha",
            ],
            None,
        );
        assert_eq!(
            pin.out.status.code(),
            Some(0),
            "{name}: {}",
            stderr(&pin.out)
        );
        assert!(
            String::from_utf8_lossy(&pin.out.stdout).contains(&digest),
            "{name}"
        );
    }
    assert!(server.fetches() >= 15, "{:?}", server.requests());
}

/// A credential helper in `dir` that logs the host of every request to `dir/asked` and answers
/// [`USER`](super::support::git_server::USER) and its password only for the hosts in `answers`; and the
/// Git configuration naming it.
fn scoped_helper(dir: &Path, answers: &[String]) -> PathBuf {
    let script = dir.join("helper.sh");
    let log = dir.join("asked");
    let cases: String = answers
        .iter()
        .map(|host| {
            format!(
                "  \"host={host}\") echo username={}; echo password={};;\n",
                super::support::git_server::USER,
                super::support::git_server::PASSWORD
            )
        })
        .collect();
    fs_err::write(
        &script,
        format!(
            "#!/bin/sh\n[ \"$1\" = get ] || exit 0\nwhile read -r line; do\n  [ -n \"$line\" ] || break\n  case \"$line\" in host=*) echo \"$line\" >> '{log}';; esac\n  case \"$line\" in\n{cases}  esac\ndone\n",
            log = log.display()
        ),
    )
    .expect("write helper");
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = dir.join("gitconfig");
    fs_err::write(
        &config,
        format!("[credential]\n\thelper = \"!{}\"\n", script.display()),
    )
    .expect("write gitconfig");
    config
}

/// Whether the helper's log `asked` names `host`, and no other.
fn only(asked: &str, host: &str) -> bool {
    let wanted = format!("host={host}");
    !asked.is_empty() && asked.lines().all(|line| line == wanted)
}

// Credentials stay with their origin. `moved` on one HTTPS server (which demands credentials)
// redirects to another port, whose server accepts the very same user and password: with a
// credential helper answering only for the first origin, the second gets nothing (the helper is
// asked for the second origin's own, and has none), whether the redirect comes before the first
// server asked for credentials or after it got them. Answering for the second origin too, the
// redirect is followed and the source prepares.
#[test]
fn credentials_never_follow_a_redirect_to_another_origin() {
    let (raw, commit, digest) = one_bundle();
    let target = HttpServer::https_with_auth(raw.tmp.path());
    let target_host = format!("127.0.0.1:{}", target.port);
    for after_auth in [false, true] {
        let first = HttpServer::redirecting(
            raw.tmp.path(),
            true,
            true,
            &[Redirect {
                from: "^/git/moved[.]git/(.*)$",
                to: format!("https://{target_host}/git/remote.git/$1"),
                code: 301,
                after_auth,
            }],
        );
        let first_host = format!("127.0.0.1:{}", first.port);
        let dir = raw.tmp.path().join(format!("cross-origin-{after_auth}"));
        let config = raw.descriptor(
            &dir,
            &first.url("moved.git"),
            &commit,
            "",
            &[("alpha", &digest)],
        );
        // Both servers' CAs.
        let cas = dir.join("cas.pem");
        let mut pem = fs_err::read(first.ca_file()).expect("ca");
        pem.extend(fs_err::read(target.ca_file()).expect("ca"));
        fs_err::write(&cas, pem).expect("write cas");
        let run_with = |answers: &[String], label: &str| {
            let home = dir.join(label);
            fs_err::create_dir_all(&home).expect("mkdir");
            let gitconfig = scoped_helper(&home, answers);
            let run = Run::with_env(
                &dir,
                &["prepare"],
                Some(&config),
                &[
                    ("SSL_CERT_FILE", cas.as_os_str()),
                    ("GIT_CONFIG_GLOBAL", gitconfig.as_os_str()),
                    ("GIT_CONFIG_NOSYSTEM", OsStr::new("1")),
                    ("GIT_ASKPASS", OsStr::new("")),
                    ("SSH_ASKPASS", OsStr::new("")),
                ],
            );
            let asked = fs_err::read_to_string(home.join("asked")).unwrap_or_default();
            (run, asked)
        };
        let before = target.requests().len();
        let (run, asked) = run_with(std::slice::from_ref(&first_host), "first-only");
        let err = stderr(&run.out);
        assert_eq!(
            run.out.status.code(),
            Some(1),
            "after_auth={after_auth}: {err}"
        );
        assert!(!run.corpus.join("current").exists(), "{err}");
        assert_eq!(
            target.requests().len(),
            before,
            "after_auth={after_auth}: the other origin accepted credentials:\n{err}"
        );
        assert!(!err.contains(super::support::git_server::PASSWORD), "{err}");
        if after_auth {
            // The redirect of a request that carried credentials is not followed at all.
            assert!(only(&asked, &first_host), "{asked}\n{err}");
        } else {
            // Nothing was asked of the first origin: the helper was asked for the second.
            assert!(err.contains("[fetch_unauthenticated]"), "{err}");
            assert!(only(&asked, &target_host), "{asked}\n{err}");
            let (run, asked) = run_with(&[first_host.clone(), target_host.clone()], "both-origins");
            run.assert_published();
            assert!(only(&asked, &target_host), "{asked}");
            assert!(
                target.requests().len() > before,
                "the target served the fetch"
            );
        }
    }
}

// A redirect from `https://` down to `http://` is refused before the `http://` server is asked
// anything; from `http://` up to `https://` (another origin) it is followed.
#[test]
fn a_redirect_never_leaves_https_for_http_but_may_upgrade() {
    let (raw, commit, digest) = one_bundle();
    let plain = HttpServer::start(raw.tmp.path());
    let secure = HttpServer::redirecting(
        raw.tmp.path(),
        true,
        false,
        &[redirect(
            "^/git/down[.]git/(.*)$",
            format!("http://127.0.0.1:{}/git/remote.git/$1", plain.port),
            301,
        )],
    );
    let upgrading = HttpServer::redirecting(
        raw.tmp.path(),
        false,
        false,
        &[redirect(
            "^/git/up[.]git/(.*)$",
            format!("https://127.0.0.1:{}/git/remote.git/$1", secure.port),
            301,
        )],
    );
    let env = [("SSL_CERT_FILE", secure.ca_file().into_os_string())];
    let env: Vec<(&str, &OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    let run = |url: String, label: &str| {
        let dir = raw.tmp.path().join(label);
        let config = raw.descriptor(&dir, &url, &commit, "", &[("alpha", &digest)]);
        Run::with_env(&dir, &["prepare"], Some(&config), &env)
    };
    run(secure.url("down.git"), "down")
        .assert_retryable("fetch_failed", &["never leaves `https://` for `http://`"]);
    assert!(plain.requests().is_empty(), "{:?}", plain.requests());
    run(upgrading.url("up.git"), "up").assert_published();
    assert!(secure.fetches() > 0);
}

// Redirects gix would not follow are not followed either: one that drops the request's
// `/info/refs?service=git-upload-pack` tail, and a loop (past 20 redirects); nor one to a URL
// holding credentials of its own.
#[test]
fn a_redirect_that_loses_the_request_or_loops_is_refused() {
    let (raw, commit, digest) = one_bundle();
    let server = HttpServer::redirecting(
        raw.tmp.path(),
        false,
        false,
        &[
            redirect("^/git/lost[.]git/(.*)$", "/git/remote.git/".into(), 301),
            redirect("^/git/loop[.]git/(.*)$", "/git/loop.git/$1".into(), 302),
            redirect(
                "^/git/userinfo[.]git/(.*)$",
                "http://mallory:planted@127.0.0.1:1/git/remote.git/$1".into(),
                301,
            ),
        ],
    );
    for (name, needle) in [
        (
            "lost.git",
            "keeps the request's `/info/refs?service=git-upload-pack` tail",
        ),
        ("loop.git", "more than 20 redirects"),
        ("userinfo.git", "a redirect never brings credentials"),
    ] {
        let dir = raw.tmp.path().join(name);
        let config = raw.descriptor(&dir, &server.url(name), &commit, "", &[("alpha", &digest)]);
        Run::new(&dir, &["prepare"], Some(&config)).assert_retryable("fetch_failed", &[needle]);
    }
    assert_eq!(server.fetches(), 0, "{:?}", server.requests());
}

// The overall deadline bounds a redirected fetch as a direct one: a server that answers the
// redirect once and then trickles its answer to the request that follows it (the fetcher's own,
// without gix), and one whose redirect target trickles the ref advertisement, both end at the
// deadline with `fetch_deadline` (exit 1).
#[test]
fn a_redirected_fetch_is_cut_off_at_the_fetch_deadline() {
    let (raw, commit, digest) = one_bundle();
    let tail = "/info/refs?service=git-upload-pack";
    let trickling_redirect = Scripted::start(vec![
        moved(&format!("/git/new.git{tail}")),
        Answer::Trickle("HTTP/1.1 301 Moved Permanently\r\nX-Padding: ".into()),
    ]);
    // Its first answer goes to the fetcher's request (which reads no further than the head),
    // the trickle to gix's.
    let advertisement = "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 1000000\r\n\r\n";
    let trickling_target = Scripted::start(vec![
        Answer::Now(advertisement.into()),
        Answer::Trickle(format!("{advertisement}fff0# service=git-upload-pack\n")),
    ]);
    let redirecting = Scripted::start(vec![moved(&format!(
        "{}{tail}",
        trickling_target.url("new.git")
    ))]);
    for (server, label) in [
        (&trickling_redirect, "trickling-redirect"),
        (&redirecting, "trickling-target"),
    ] {
        let dir = raw.tmp.path().join(label);
        let config = raw.descriptor(
            &dir,
            &server.url("old.git"),
            &commit,
            "",
            &[("alpha", &digest)],
        );
        let run = Run::new(&dir, &["prepare", "--fetch-timeout", "2"], Some(&config));
        run.assert_retryable("fetch_deadline", &["within its deadline of 2 s"]);
    }
    // gix's request, then the fetcher's own that follows the redirect.
    assert_eq!(
        trickling_redirect.heads().len(),
        2,
        "{:?}",
        trickling_redirect.heads()
    );
    // The fetcher's request, then gix's, both to the redirect's target.
    let heads = trickling_target.heads();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(
        heads
            .iter()
            .all(|head| head.starts_with(&format!("GET /git/new.git{tail} "))),
        "{heads:?}"
    );
}

// A signal stops the fetcher's own request that follows a redirect as it stops gix: SIGTERM
// while the redirect's answer trickles (the deadline the default 300 s) ends the run at once,
// interrupted (exit 1), nothing published.
#[test]
fn sigterm_while_a_redirect_is_followed_interrupts_the_fetch() {
    let (raw, commit, digest) = one_bundle();
    let server = Scripted::start(vec![
        moved("/git/new.git/info/refs?service=git-upload-pack"),
        Answer::Trickle("HTTP/1.1 301 Moved Permanently\r\nX-Padding: ".into()),
    ]);
    let dir = raw.tmp.path().join("sigterm");
    let config = raw.descriptor(
        &dir,
        &server.url("old.git"),
        &commit,
        "",
        &[("alpha", &digest)],
    );
    // `--foreground`: `timeout` passes a signal on to the run once (without it, it also sends it
    // to its process group, and a second signal ends `prepare` at once, with status 130).
    let mut cmd = Command::new("timeout");
    cmd.args(["--foreground", "-s", "KILL", &WATCHDOG_S.to_string()])
        .arg(env!("CARGO_BIN_EXE_skillfold"))
        .arg("prepare")
        .current_dir(&dir)
        .env("SKILLFOLD_CONFIG", &config)
        .env_remove("SKILLFOLD_FETCH_TIMEOUT")
        .env_remove("SKILLFOLD_FAILPOINT")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    // Until the fetcher's own request (the second) is being answered; a run that ends first
    // (the watchdog ends any run) never got there.
    while server.heads().len() < 2 {
        if let Some(status) = child.try_wait().expect("poll") {
            panic!(
                "prepare ended ({status}) before its fetch: {:?}",
                server.heads()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).expect("pid"),
        rustix::process::Signal::TERM,
    )
    .expect("kill");
    let out = child.wait_with_output().expect("wait");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!dir.join("corpus").join("current").exists(), "{err}");
}

// The fallback fetch of branches and tags (after a server refused the want by id: here a `404`)
// has the same per-request bound as the fetch by id: a server that trickles its ref advertisement
// is cut off at the deadline (`fetch_deadline`). It had none, and gix polls no flag while it
// reads the advertisement: such a run was still going when the watchdog killed it.
#[test]
fn a_trickling_fallback_fetch_is_cut_off_at_the_fetch_deadline() {
    let (raw, commit, digest) = one_bundle();
    let server = Scripted::start(vec![
        Answer::Now(
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into(),
        ),
        Answer::Trickle(
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 1000000\r\n\r\nfff0# service=git-upload-pack\n"
                .into(),
        ),
    ]);
    let dir = raw.tmp.path().join("fallback");
    let config = raw.descriptor(
        &dir,
        &server.url("remote.git"),
        &commit,
        "",
        &[("alpha", &digest)],
    );
    let run = Run::new(&dir, &["prepare", "--fetch-timeout", "3"], Some(&config));
    run.assert_retryable("fetch_deadline", &["within its deadline of 3 s"]);
    assert_eq!(server.heads().len(), 2, "{:?}", server.heads());
}
