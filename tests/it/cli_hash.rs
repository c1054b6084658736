//! `skillfold hash` end to end: output shapes, `--json`, `--expect`, exit statuses.

use super::support::bin::{assert_stderr_has, skillfold, stderr, stdout};
use super::support::world::{TempBundle, skill_md};

const V2_DIGEST: &str = "8a531fcd108297bda8aa470d42f427779daad537bb2a31addef29087b5ab9f9e";

/// The sample bundle of the digest vectors (V2), on disk.
fn sample_bundle() -> TempBundle {
    let b = TempBundle::empty();
    b.write(
        "SKILL.md",
        b"---\nname: sample-bundle\ndescription: A tiny sample bundle used as a digest test vector.\n---\n# Sample bundle\n\nRead `references/a.md`, then run `scripts/x.py`.\n",
    );
    b.write("references/a.md", b"# A\n\nReference text.\n");
    b.write("scripts/x.py", b"print(\"hello from x\")\n");
    b
}

#[test]
fn one_directory_prints_the_digest_alone() {
    let b = sample_bundle();
    let out = skillfold(&["hash", b.root().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{V2_DIGEST}\n"));
    assert_eq!(stderr(&out), "");
}

#[test]
fn several_directories_print_like_sha256sum() {
    let a = sample_bundle();
    let b = TempBundle::new();
    let (pa, pb) = (a.root().to_str().unwrap(), b.root().to_str().unwrap());
    let out = skillfold(&["hash", pa, pb]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], format!("{V2_DIGEST}  {pa}"));
    assert!(lines[1].ends_with(&format!("  {pb}")));
}

#[test]
fn json_report_lists_files_with_sizes_and_hashes() {
    let b = sample_bundle();
    b.write(
        "SKILL.md",
        b"---\nname: sample-bundle\ndescription: A tiny sample bundle used as a digest test vector.\nmodel: x\nallowed-tools: Read\n---\n# Sample bundle\n\nRead `references/a.md`, then run `scripts/x.py`.\n",
    );
    let out = skillfold(&["hash", "--json", b.root().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["name"], "sample-bundle");
    assert_eq!(
        v["ignored_fields"],
        serde_json::json!(["allowed-tools", "model"])
    );
    assert_eq!(v["files"][1]["path"], "references/a.md");
    assert_eq!(v["files"][1]["size"], 21);
    assert_eq!(
        v["files"][1]["sha256"],
        "25f7de9be9677ec2fe224c5478069ad514fa3e9f6aef0b30058d1ead46b674d9"
    );
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for key in ["name", "description", "hash", "ignored_fields", "files"] {
        assert!(keys.contains(&key), "{key}");
    }
}

#[test]
fn expect_accepts_the_right_digest_and_refuses_another() {
    let b = sample_bundle();
    let dir = b.root().to_str().unwrap();
    let ok = skillfold(&["hash", "--expect", V2_DIGEST, dir]);
    assert_eq!(ok.status.code(), Some(0));
    let wrong = V2_DIGEST.replace('8', "9");
    let bad = skillfold(&["hash", "--expect", &wrong, dir]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stdout(&bad), "");
    assert_stderr_has(&bad, "[digest_mismatch]");
    let malformed = skillfold(&["hash", "--expect", "ABC", dir]);
    assert_eq!(malformed.status.code(), Some(2));
    assert!(stderr(&malformed).contains("64 lowercase hexadecimal digits"));
}

#[test]
fn invalid_bundle_exits_2_with_one_line_per_problem() {
    let b = TempBundle::empty();
    b.write("SKILL.md", b"---\nname: Bad\ndescription: ''\n---\n");
    b.write(".hidden", b"x");
    let dir = b.root().to_str().unwrap();
    let out = skillfold(&["hash", dir]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("error: {dir}/.hidden: "))
                && l.ends_with("[hidden_path]")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("SKILL.md: line 2:") && l.ends_with("[name_invalid]")),
        "{err}"
    );
    assert!(
        lines.iter().any(|l| l.ends_with("[description_blank]")),
        "{err}"
    );
}

#[test]
fn one_bad_directory_among_several_still_reports_the_others() {
    let good = TempBundle::new();
    let bad = TempBundle::empty();
    let out = skillfold(&[
        "hash",
        good.root().to_str().unwrap(),
        bad.root().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out).lines().count(), 1);
    assert!(stderr(&out).contains("[missing_skill_md]"));
}

#[test]
fn missing_directory_exits_2() {
    let out = skillfold(&["hash", "/definitely/not/here"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("[not_found]"));
}

#[test]
fn case_collision_warns_but_succeeds() {
    let b = TempBundle::new();
    b.write("a.md", b"1");
    b.write("A.md", b"2");
    let out = skillfold(&["hash", b.root().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).starts_with("warning: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("[case_collision]"));
}

#[test]
fn help_teaches_the_command() {
    let out = skillfold(&["hash", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for needle in ["--expect", "--json", "Exit status", "Examples"] {
        assert!(text.contains(needle), "{needle} missing from help");
    }
}

#[test]
fn example_bundles_are_valid() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let mut dirs: Vec<String> = fs_err::read_dir(&root)
        .expect("examples")
        .map(|e| e.expect("entry").path().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3);
    let mut args = vec!["hash"];
    args.extend(dirs.iter().map(String::as_str));
    let out = skillfold(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let _ = skill_md;
}
