//! Output people and machines can trust, tried through the real binary.
//!
//! - Untrusted names and values (a file name, a descriptor value, a declared version) that hold
//!   a newline and a terminal escape are shown escaped: they can neither forge an `ok:` line nor
//!   hide the rest of a terminal.
//! - JSON on stdout (every command's `--json`, one writer) holds no C1 control, bidi, zero-width
//!   or line-separator character raw: each is written `\uXXXX` and reads back as itself.
//! - The exit status contract (0/1/2) holds with stderr full, closed or a pipe whose reader went
//!   away, and with stdout a pipe whose reader went away: never a panic (101), never a signal.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::support::bin::stderr;
use super::support::git::{Repo, git};
use super::support::world::skill_md;

/// A name that forges a success line and then hides everything after it.
const HOSTILE: &str = "x\nok: skills[0].git: all bundles verified and published\n\u{1b}[8m";
/// How [`HOSTILE`] is shown once escaped.
const SHOWN: &str = "x\\nok: skills[0].git: all bundles verified and published\\n\\u{1b}[8m";

/// A temporary folder holding bundles and descriptors.
struct Scene {
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        Scene {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A bundle `name` at `rel` with `SKILL.md` as given, plus `extra` files.
    fn bundle(&self, rel: &str, skill_md: &str, extra: &[(&str, &str)]) -> PathBuf {
        let root = self.path(rel);
        fs_err::create_dir_all(&root).expect("mkdir");
        fs_err::write(root.join("SKILL.md"), skill_md).expect("write");
        for (name, text) in extra {
            fs_err::write(root.join(name), text).expect("write");
        }
        root
    }

    /// A descriptor `skillfold.yaml` with `body` as its text.
    fn descriptor(&self, body: &str) -> PathBuf {
        let path = self.path("skillfold.yaml");
        fs_err::write(&path, body).expect("write descriptor");
        path
    }

    /// A descriptor with one local source: `name` pinned as `version` with `hash` at `dir`.
    fn local(&self, name: &str, version: &str, dir: &Path, hash: &str) -> PathBuf {
        self.descriptor(&format!(
            "skills:\n  - local:\n      name: {name}\n      version: {}\n      directory: {}\n      hash: {hash}\n",
            yaml_string(version),
            yaml_string(dir.to_str().expect("utf-8 path")),
        ))
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skillfold"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_remove("SKILLFOLD_CONFIG")
            .env_remove("SKILLFOLD_SKILL_GUIDES_DIR");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run skillfold")
    }
}

/// `text` as a YAML double-quoted scalar (JSON's escapes are YAML's), ASCII only: the
/// descriptor's reader refuses a raw C1 control.
fn yaml_string(text: &str) -> String {
    let mut out = String::new();
    for c in serde_json::to_string(text).expect("json").chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn digest(dir: &Path) -> String {
    skillfold::Bundle::read_dir(dir)
        .expect("a valid bundle")
        .digest()
        .to_string()
}

/// Asserts that the hostile text reached stderr only escaped: no line it forged, no escape
/// character, and the escaped spelling present.
#[track_caller]
fn assert_escaped(out: &Output) {
    let err = stderr(out);
    assert!(
        !out.stderr.contains(&0x1b),
        "a raw ESC reached stderr:\n{err}"
    );
    assert!(
        !err.lines()
            .any(|l| l.starts_with("ok: skills[0].git: all bundles")),
        "a forged line reached stderr:\n{err}"
    );
    assert!(err.contains(SHOWN), "the escaped name is missing:\n{err}");
}

#[track_caller]
fn assert_code(out: &Output, code: i32) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
}

#[test]
fn hash_shows_a_hostile_file_name_escaped() {
    let s = Scene::new();
    let dir = s.bundle("demo", &skill_md("demo"), &[(HOSTILE, "text\n")]);
    let out = s.run(&["hash", dir.to_str().unwrap()]);
    assert_code(&out, 2);
    assert_escaped(&out);
    assert!(stderr(&out).contains("[control_char_in_path]"));
}

#[test]
fn hash_shows_a_hostile_directory_name_escaped_on_stdout_and_stderr() {
    let s = Scene::new();
    let good = s.bundle(HOSTILE, &skill_md("demo"), &[]);
    let bad = s.bundle(&format!("{HOSTILE}2"), &skill_md("Bad"), &[]);
    let out = s.run(&["hash", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_code(&out, 2);
    assert_escaped(&out);
    let listed = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(listed.lines().count(), 1, "one line per bundle:\n{listed}");
    assert!(listed.contains(SHOWN), "{listed}");
}

#[test]
fn a_backslash_is_doubled_so_an_escape_in_the_output_always_means_an_escape() {
    let s = Scene::new();
    // A literal backslash-n (two characters) and a real newline must not look the same.
    let dir = s.bundle(
        "demo",
        &skill_md("demo"),
        &[("a\\nb", "x\n"), ("c\nd", "y\n")],
    );
    let out = s.run(&["hash", dir.to_str().unwrap()]);
    assert_code(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("demo/a\\\\nb: "), "{err}");
    assert!(err.contains("demo/c\\nd: "), "{err}");
}

#[test]
fn check_shows_hostile_descriptor_values_escaped() {
    let s = Scene::new();
    let hash = "0".repeat(64);
    s.descriptor(&format!(
        "skills:\n  - local: {{ name: {name}, version: {v}, directory: d, hash: {hash} }}\n  - git:\n      source: https://example.com/s.git\n      revision: {rev}\n      directory: /srv/c\n      root: {v}\n      approved:\n        - {{ name: a, version: '1', hash: {hash} }}\nagents:\n  {v}:\n    skills: []\n",
        name = yaml_string(HOSTILE),
        v = yaml_string(HOSTILE),
        rev = yaml_string(&format!("{HOSTILE}main")),
    ));
    let out = s.run(&["check", "-c", "skillfold.yaml"]);
    assert_code(&out, 2);
    assert_escaped(&out);
    let err = stderr(&out);
    for code in [
        "[invalid_name]",
        "[invalid_version]",
        "[revision_not_commit]",
        "[invalid_root]",
        "[invalid_agent_name]",
    ] {
        assert!(err.contains(code), "{code} missing:\n{err}");
    }
    // One line per problem: nothing the values held broke a line.
    assert!(err.lines().all(|l| l.starts_with("error: ")), "{err}");
}

#[test]
fn check_shows_a_hostile_yaml_syntax_error_escaped() {
    let s = Scene::new();
    s.descriptor(&format!("skills: []\n{}: 1\n", yaml_string(HOSTILE)));
    let out = s.run(&["check", "-c", "skillfold.yaml"]);
    assert_code(&out, 2);
    assert_escaped(&out);
    assert!(stderr(&out).contains("[descriptor_syntax]"));
}

#[test]
fn prepare_and_verify_show_a_hostile_local_bundle_escaped() {
    let s = Scene::new();
    let dir = s.bundle(HOSTILE, &skill_md("demo"), &[(HOSTILE, "text\n")]);
    s.local("demo", "1.0.0", &dir, &"0".repeat(64));
    for command in ["prepare", "verify"] {
        let out = s.run(&[command, "-c", "skillfold.yaml"]);
        assert_code(&out, 2);
        assert_escaped(&out);
        assert!(stderr(&out).contains("[control_char_in_path]"), "{command}");
    }
}

#[test]
fn prepare_and_verify_show_a_hostile_declared_version_escaped() {
    let s = Scene::new();
    let text = format!(
        "---\nname: demo\ndescription: A demo.\nmetadata:\n  version: {}\n---\n# Demo\n",
        yaml_string(HOSTILE)
    );
    let dir = s.bundle("demo", &text, &[]);
    s.local("demo", "1.0.0", &dir, &digest(&dir));
    for command in ["prepare", "verify"] {
        let out = s.run(&[command, "-c", "skillfold.yaml"]);
        assert_code(&out, 2);
        assert_escaped(&out);
        assert!(stderr(&out).contains("[version_mismatch]"), "{command}");
    }
}

#[test]
fn prepare_json_keeps_json_escaping() {
    let s = Scene::new();
    let dir = s.bundle(HOSTILE, &skill_md("demo"), &[]);
    s.local("demo", "1.0.0", &dir, &digest(&dir));
    // `-v`: the step lines name the folder too.
    let out = s.run(&["prepare", "-c", "skillfold.yaml", "--json", "-v"]);
    assert_code(&out, 0);
    assert_escaped(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(
        report["sources"][0]["directory"].as_str(),
        dir.to_str(),
        "JSON holds the path itself, escaped by JSON"
    );
}

// --- invisible characters in machine output ---------------------------------------------

/// Names holding every kind of character `serde_json` would write raw: C1 controls (U+009B
/// starts a terminal sequence), bidi embeddings, overrides and isolates, line and paragraph
/// separators, zero-width and direction marks, the byte-order mark.
const INVISIBLE: [&str; 4] = [
    "c1\u{9b}[8m\u{80}\u{9f}",
    "bidi\u{202e}\u{202a}\u{2066}\u{2069}",
    "lines\u{2028}\u{2029}",
    "marks\u{200b}\u{200f}\u{feff}",
];

/// Whether `c` must never reach a stream raw.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{9f}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2028}' | '\u{2029}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}')
}

/// The JSON on `out`'s stdout, after asserting that it holds none of [`invisible`] raw.
#[track_caller]
fn json_without_invisible(out: &Output) -> serde_json::Value {
    let text = std::str::from_utf8(&out.stdout).expect("UTF-8 on stdout");
    let raw: Vec<char> = text.chars().filter(|&c| invisible(c)).collect();
    assert!(raw.is_empty(), "raw {raw:?} on stdout:\n{text}");
    serde_json::from_str(text).expect("JSON on stdout")
}

#[test]
fn outdated_json_escapes_invisible_characters_of_remote_folder_names() {
    let repo = Repo::new();
    repo.bundle("alpha", "");
    for name in INVISIBLE {
        repo.bundle(name, "");
    }
    let pinned = repo.commit("alpha, and folders with invisible names");
    git(&repo.bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let s = Scene::new();
    s.descriptor(&format!(
        "skills:\n  - git:\n      source: {}\n      revision: {pinned}\n      directory: corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1', hash: {} }}\n",
        repo.file_url(),
        repo.digest("alpha")
    ));
    let out = s.run(&["outdated", "-c", "skillfold.yaml", "--json", "--available"]);
    assert_code(&out, 0);
    let report = json_without_invisible(&out);
    let mut names = INVISIBLE.to_vec();
    names.sort_unstable();
    assert_eq!(
        report["sources"][0]["available"],
        serde_json::json!(names),
        "the same strings, escaped"
    );
    // The human lines on stderr escape them too.
    assert!(!stderr(&out).chars().any(invisible), "{}", stderr(&out));
}

#[test]
fn every_json_report_escapes_invisible_characters_and_reads_back() {
    let s = Scene::new();
    let rel = INVISIBLE.concat();
    let dir = s.bundle(&rel, &skill_md("demo"), &[]);
    s.local("demo", "1.0.0", &dir, &digest(&dir));
    let out = s.run(&["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_code(&out, 0);
    let report = json_without_invisible(&out);
    assert_eq!(report["sources"][0]["directory"].as_str(), dir.to_str());
    // `hash`: a description with the characters a description may hold (no control, and no
    // bidi control or invisible character: the content rules refuse those in the frontmatter).
    let described = s.bundle(
        "described",
        "---\nname: described\ndescription: \"A reordered\\u2028 \\u2029 skill.\"\n---\n# x\n",
        &[],
    );
    let out = s.run(&["hash", "--json", described.to_str().expect("UTF-8")]);
    assert_code(&out, 0);
    let report = json_without_invisible(&out);
    assert_eq!(report["description"], "A reordered\u{2028} \u{2029} skill.");
}

// --- exit statuses that hold ---------------------------------------------------------------

/// Where a stream goes.
#[derive(Debug, Clone, Copy)]
enum Sink {
    /// Kept and discarded.
    Null,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
    /// A pipe whose reader is gone: every write fails with EPIPE.
    ClosedPipe,
    /// The descriptor is closed (`2>&-`).
    Closed,
}

fn stdio(sink: Sink) -> Stdio {
    match sink {
        Sink::Null | Sink::Closed => Stdio::null(),
        Sink::Full => fs_err::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into_file()
            .into(),
        Sink::ClosedPipe => {
            let (reader, writer) = std::io::pipe().expect("pipe");
            drop(reader);
            writer.into()
        }
    }
}

/// Runs `args` with stdout and stderr sent to the sinks; returns the exit code, failing on a
/// death by signal.
fn status_with(s: &Scene, args: &[&str], out: Sink, err: Sink) -> i32 {
    let mut cmd = if matches!(out, Sink::Closed) || matches!(err, Sink::Closed) {
        // Close the descriptors in a shell that then becomes skillfold.
        let mut redirect = String::from("exec \"$0\" \"$@\"");
        if matches!(out, Sink::Closed) {
            redirect.push_str(" >&-");
        }
        if matches!(err, Sink::Closed) {
            redirect.push_str(" 2>&-");
        }
        let mut sh = Command::new("/bin/sh");
        sh.arg("-c")
            .arg(redirect)
            .arg(env!("CARGO_BIN_EXE_skillfold"))
            .args(args)
            .current_dir(s.dir.path());
        sh
    } else {
        s.command(args)
    };
    let status = cmd
        .stdin(Stdio::null())
        .stdout(stdio(out))
        .stderr(stdio(err))
        .status()
        .expect("run skillfold");
    match status.code() {
        Some(code) => code,
        None => panic!("{args:?} with stdout {out:?}, stderr {err:?} died: {status}"),
    }
}

/// Commands with output on both streams, and the exit status each must keep.
fn commands(s: &Scene) -> Vec<(Vec<String>, i32)> {
    let good = s.bundle("good", &skill_md("demo"), &[]);
    let bad = s.bundle("bad", &skill_md("demo"), &[(HOSTILE, "x\n")]);
    let hash = digest(&good);
    let cfg = |name: &str, dir: &Path| {
        let path = s.path(name);
        fs_err::write(
            &path,
            format!(
                "skills:\n  - local: {{ name: demo, version: '1', directory: {}, hash: {hash} }}\n",
                yaml_string(dir.to_str().unwrap())
            ),
        )
        .expect("write");
        path.to_str().unwrap().to_owned()
    };
    let ok = cfg("ok.yaml", &good);
    let broken = cfg("broken.yaml", &bad);
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    vec![
        (args(&["hash", good.to_str().unwrap()]), 0),
        (args(&["hash", "--json", good.to_str().unwrap()]), 0),
        (args(&["hash", bad.to_str().unwrap()]), 2),
        (args(&["check", "-c", &ok]), 0),
        (args(&["check", "-c", "missing.yaml"]), 2),
        (args(&["prepare", "-c", &ok, "--json"]), 0),
        (args(&["prepare", "-c", &broken, "--json"]), 2),
        (args(&["verify", "-c", &ok, "--json"]), 0),
        (args(&["verify", "-c", &broken]), 2),
        (args(&["prompt", "-c", &ok]), 0),
        (args(&["prompt", "-c", &ok, "--agent", "nobody"]), 2),
        (args(&["load", "-c", &ok, "demo"]), 0),
        (args(&["hash", "--no-such-flag"]), 2),
    ]
}

#[test]
fn exit_statuses_hold_when_stderr_is_full_closed_or_unread() {
    let s = Scene::new();
    for (args, want) in commands(&s) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(
            status_with(&s, &args, Sink::Null, Sink::Null),
            want,
            "{args:?}"
        );
        for err in [Sink::Full, Sink::Closed, Sink::ClosedPipe] {
            assert_eq!(
                status_with(&s, &args, Sink::Null, err),
                want,
                "{args:?} with stderr {err:?}"
            );
        }
    }
}

#[test]
fn a_stdout_reader_that_went_away_ends_the_output_quietly_with_the_same_status() {
    let s = Scene::new();
    for (args, want) in commands(&s) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for (out, err) in [
            (Sink::ClosedPipe, Sink::Null),
            (Sink::ClosedPipe, Sink::Full),
            (Sink::Closed, Sink::Closed),
        ] {
            assert_eq!(
                status_with(&s, &args, out, err),
                want,
                "{args:?} with stdout {out:?}, stderr {err:?}"
            );
        }
    }
}

#[test]
fn a_full_stdout_loses_the_output_and_says_so_with_exit_1() {
    let s = Scene::new();
    let good = s.bundle("good", &skill_md("demo"), &[]);
    let out = s
        .command(&["hash", good.to_str().unwrap()])
        .stdout(stdio(Sink::Full))
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    assert_code(&out, 1);
    assert!(stderr(&out).contains("[output_failed]"), "{}", stderr(&out));
    // An invalid bundle stays invalid whatever happened to the output.
    let bad = s.bundle("bad", &skill_md("Bad"), &[]);
    let args = ["hash", good.to_str().unwrap(), bad.to_str().unwrap()];
    assert_eq!(status_with(&s, &args, Sink::Full, Sink::Null), 2);
}
