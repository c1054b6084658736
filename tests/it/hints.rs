//! Every refusal names its fix, through the binary as a user meets it: a `hint:` line naming the
//! option that accepts the refusal (a key of the descriptor, or the flag of `pin` and `hash`) or
//! the command that repairs it, with its page, and the same hint as `hint` in `--json`; one
//! wording of `unknown_agent`, with the closest agent; a binary file as one problem; ten problems
//! shown and the count of the rest; a descriptor's syntax error on its line with a caret; `check`
//! listing the problems of an entry and those across entries together.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::pin::{Setup, bundle_in, code, digest};
use super::support::bin::{skillfold_in, stderr, stdout};
use super::support::git::Repo;
use super::support::git_server::HttpServer;
use super::support::world::{World, local_entry, skill_md};

const HASH: &str = "8a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";

/// The stderr line that starts with `hint: ` (after any indentation).
#[track_caller]
fn hint_line(out: &Output) -> String {
    let err = stderr(out);
    err.lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint line in:\n{err}"))
        .to_owned()
}

#[track_caller]
fn assert_hint(out: &Output, option: &str, page: &str) {
    let hint = hint_line(out);
    assert!(hint.contains(option), "{option} missing from {hint}");
    assert!(
        hint.ends_with(&format!("(see {page})")),
        "{page} missing from {hint}"
    );
}

/// A bundle `dir/name` with a supporting file over the `chamvi` bound and a binary one.
fn write_large_and_binary(dir: &Path, name: &str) {
    fs_err::create_dir_all(dir.join("refs")).expect("mkdir");
    fs_err::write(dir.join("SKILL.md"), skill_md(name)).expect("write");
    fs_err::write(dir.join("refs/big.md"), "a".repeat(200_000)).expect("write");
    fs_err::write(dir.join("refs/img.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
}

#[test]
fn a_refusal_a_limits_profile_accepts_names_the_flag_or_the_key_and_its_page() {
    let w = World::new();
    write_large_and_binary(&w.path("big"), "big");
    // `hash` names the flag.
    let out = w.run(&["hash", "big"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_hint(&out, "`--limits extended`", "docs/limits.md");
    let json = w.run(&["hash", "--json", "big"]);
    let report: Value = serde_json::from_slice(&json.stdout).expect("json");
    let hint = report["hint"].as_str().expect("a hint field");
    assert!(hint.contains("`--limits extended`"), "{report}");
    // `prepare` names the key of the descriptor.
    w.descriptor(&format!(
        "skills:\n{}",
        local_entry("big", "'1'", "./big", HASH)
    ));
    let out = w.run(&["prepare", "-c", "skillfold.yaml", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_hint(&out, "`limits: extended` on the source", "docs/limits.md");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hint = report["sources"][0]["error"]["hint"]
        .as_str()
        .unwrap_or_else(|| panic!("no hint in {report}"));
    assert!(hint.contains("`limits: extended`"), "{report}");
}

#[test]
fn pin_names_the_limits_flag_for_a_bundle_with_a_binary_file() {
    let repo = Repo::new();
    write_large_and_binary(&repo.work.join("skills/big"), "big");
    let commit = repo.commit("a large bundle");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let out = s.run(&[
        "pin",
        "--source",
        &url,
        "--revision",
        &commit,
        "--root",
        "skills",
        "big",
    ]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_hint(&out, "`--limits extended`", "docs/limits.md");
}

#[test]
fn a_link_in_the_tree_names_links_outside_bundles_as_flag_and_key() {
    let repo = Repo::new();
    bundle_in(&repo, "skills", "alpha");
    repo.write("CLAUDE.md", b"# Agents\n");
    repo.symlink("CLAUDE.md", "AGENTS.md");
    let commit = repo.commit("a root link");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
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
    assert!(
        stderr(&out).contains("[symlink_in_tree]"),
        "{}",
        stderr(&out)
    );
    assert_hint(&out, "`--links outside-bundles`", "docs/links.md");
    let entry = format!(
        "skills:\n- git:\n    source: {url}\n    revision: {commit}\n    directory: {}\n    \
         root: skills\n    approved:\n      - {{ name: alpha, version: '1', hash: {} }}\n",
        s.corpus().display(),
        digest(&repo, "skills/alpha")
    );
    fs_err::write(s.config(), entry).expect("write");
    let out = s.run(&["prepare", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert_hint(
        &out,
        "`links: outside-bundles` on the source",
        "docs/links.md",
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hint = report["sources"][0]["error"]["hint"]
        .as_str()
        .unwrap_or_default();
    assert!(hint.contains("`links: outside-bundles`"), "{report}");
}

#[test]
fn no_bundles_under_a_root_names_the_hidden_folders_that_hold_them() {
    let repo = Repo::new();
    bundle_in(&repo, "skills/.curated", "alpha");
    bundle_in(&repo, "skills/.system", "beta");
    let commit = repo.commit("skills in hidden folders only");
    let server = HttpServer::start(repo.tmp.path());
    let url = server.url("remote.git");
    let s = Setup::new();
    let args = [
        "pin",
        "--source",
        &url,
        "--revision",
        &commit,
        "--root",
        "skills",
        "--all",
    ];
    let out = s.run(&args);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("[no_bundles]"), "{}", stderr(&out));
    assert_hint(&out, "`--root skills/.curated`", "docs/cli.md");
    assert!(
        hint_line(&out).contains("`skills/.system`"),
        "{}",
        stderr(&out)
    );
    let mut json = args.to_vec();
    json.push("--json");
    let out = s.run(&json);
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hint = report["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("`--root skills/.curated`"), "{report}");
}

/// A world with the bundle `ok` for the defaults and the agents `ops` and `reviewer`.
fn agents_world() -> World {
    let w = World::new();
    let hash = w.bundle("ok", &skill_md("ok"), &[]);
    w.descriptor(&format!(
        "skills:\n{}agents:\n  ops: {{ skills: [] }}\n  reviewer: {{ skills: [] }}\n",
        local_entry("ok", "'1'", "./ok", &hash)
    ));
    w
}

#[test]
fn installed_drift_names_the_command_that_repairs_it() {
    let w = agents_world();
    let out = w.cli(&["install", "--agent", "ops", "--into", "agent"]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    fs_err::write(
        w.path("agent/ok/SKILL.md"),
        format!("{}Changed.\n", skill_md("ok")),
    )
    .expect("write");
    let out = w.cli(&["verify", "--installed", "agent", "--agent", "ops", "--json"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[installed_drift]"),
        "{}",
        stderr(&out)
    );
    assert_hint(
        &out,
        "--agent ops --into agent` repairs it",
        "docs/install.md",
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hint = report["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("`skillfold install --config "), "{report}");
    assert!(hint.contains(" --agent ops --into agent`"), "{report}");
}

#[test]
fn unknown_agent_is_worded_once_with_the_agents_and_the_closest() {
    let w = agents_world();
    let wording = "the descriptor names no agent `reviewr` (did you mean `reviewer`?); its \
                   agents: `ops`, `reviewer` [unknown_agent]";
    for args in [
        &["load", "--agent", "reviewr", "ok"][..],
        &["prompt", "--agent", "reviewr"],
        &["install", "--agent", "reviewr", "--into", "agent"],
        &["verify", "--installed", "agent", "--agent", "reviewr"],
        &["run-script", "--agent", "reviewr", "ok", "scripts/x.py"],
    ] {
        let out = w.cli(args);
        assert_eq!(code(&out), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(wording),
            "{args:?}:\n{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_binary_file_is_one_problem() {
    let w = World::new();
    write_large_and_binary(&w.path("big"), "big");
    let out = w.run(&["hash", "big"]);
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("refs/img.png")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].ends_with("[nul_byte]"), "{}", lines[0]);
}

#[test]
fn thirty_problems_show_ten_and_how_many_more() {
    let w = World::new();
    let dir = w.path("many");
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join("SKILL.md"), skill_md("many")).expect("write");
    for i in 0..30 {
        fs_err::write(dir.join(format!("f{i:02}.md")), b"caf\xe9").expect("write");
    }
    let out = w.run(&["hash", "many"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error: ")).count(),
        10,
        "{err}"
    );
    assert!(err.contains("… 20 more (`--json` for all)"), "{err}");
    let json = w.run(&["hash", "--json", "many"]);
    let report: Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(
        report["problems"].as_array().map(Vec::len),
        Some(30),
        "{report}"
    );
}

#[test]
fn a_tab_in_the_descriptor_is_shown_on_its_line_with_a_caret() {
    let w = World::new();
    w.descriptor("skills:\n  - local:\n      name: x\n\t  version: 1\n");
    let out = w.run(&["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("error: skillfold.yaml:4:1: a tab where YAML needs spaces"),
        "{err}"
    );
    assert!(lines[0].ends_with("[descriptor_syntax]"), "{err}");
    assert_eq!(lines[1], "  4 | \\t  version: 1", "{err}");
    assert_eq!(lines[2], "    | ^", "{err}");
}

#[test]
fn check_lists_an_entry_s_problem_and_too_many_skills_in_one_pass() {
    let w = World::new();
    let mut yaml = String::from(
        "skills:\n  - git:\n      source: https://example.com/s.git\n      revision: main\n      \
         directory: ./corpus\n      approved:\n",
    );
    for i in 0..17 {
        yaml.push_str(&format!(
            "        - {{ name: s{i:02}, version: '1', hash: {HASH} }}\n"
        ));
    }
    w.descriptor(&yaml);
    let out = skillfold_in(w.tmp.path(), &["check"]);
    assert_eq!(code(&out), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("skills[0].git.revision"), "{err}");
    assert!(err.contains("[revision_not_commit]"), "{err}");
    assert!(err.contains("[too_many_skills]"), "{err}");
    assert!(stdout(&out).is_empty());
}
