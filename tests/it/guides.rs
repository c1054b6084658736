//! Discovered skill roots and `skill_read_reference`: what is found and what is not, and every
//! refusal of the tool with its code.

use std::path::Path;

use serde_json::{Value, json};
use skillfold::Catalogue;

/// The environment variable naming the guides folder (it replaces the descriptor's `guides`).
const GUIDES_ENV: &str = "SKILLFOLD_SKILL_GUIDES_DIR";

#[path = "../../src/testing/guides.rs"]
mod guides_fixture;
use guides_fixture::{guides_root, hostile_guides_root, portable};

fn read(c: &Catalogue, skill: &str, path: &str) -> Result<Value, skillfold::ToolError> {
    c.call(
        "skill_read_reference",
        &json!({"skill": skill, "path": path}),
    )
    .map(|(v, _)| v)
}

#[test]
fn the_descriptor_and_the_environment_configure_the_guides_folder() {
    let tmp = guides_root();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skillfold.yaml");
    fs_err::write(&config, format!("guides: {}\n", tmp.path().display())).unwrap();
    let run = |env: Option<&Path>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"));
        cmd.args(["prompt", "--verbose", "-c", config.to_str().unwrap()]);
        match env {
            Some(p) => cmd.env(GUIDES_ENV, p),
            None => cmd.env_remove(GUIDES_ENV),
        };
        cmd.output().unwrap()
    };
    let out = run(None);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("<name>\nstyle\n</name>"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`dup` is ambiguous"));
    let empty = tempfile::tempdir().unwrap();
    let out = run(Some(empty.path()));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "the environment replaces the descriptor's folder"
    );
}

#[test]
fn a_discovered_skill_never_stands_in_for_a_pinned_one_that_failed() {
    let tmp = guides_root();
    portable(tmp.path(), "x/pdf", "pdf");
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join("pdf");
    fs_err::create_dir_all(&skill).unwrap();
    fs_err::write(
        skill.join("SKILL.md"),
        "---\nname: pdf\ndescription: Reviewed.\n---\nBody\n",
    )
    .unwrap();
    // Pinned to other bytes: it fails verification and is not served.
    let config = dir.path().join("skillfold.yaml");
    fs_err::write(
        &config,
        format!(
            "skills:\n  - local: {{ name: pdf, version: '1', directory: {}, hash: {} }}\nguides: {}\n",
            skill.display(),
            "0".repeat(64),
            tmp.path().display()
        ),
    )
    .unwrap();
    let runtime = skillfold::Runtime::open(&config).unwrap().runtime;
    assert_eq!(runtime.failures().count(), 1);
    let c = runtime.catalogue(None).unwrap();
    // The unpinned `pdf` is not offered: not in the prompt, not readable.
    assert!(
        !c.prompt()
            .unwrap_or_default()
            .contains("<name>\npdf\n</name>")
    );
    assert_eq!(
        read(&c, "pdf", "SKILL.md").unwrap_err().code,
        "unknown_skill"
    );
}

#[test]
fn a_guides_description_with_terminal_controls_is_shown_escaped_by_the_binary() {
    let tmp = hostile_guides_root();
    let r = tmp.path();

    // `skillfold prompt --verbose`: nothing on stdout or stderr a terminal would act on.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("skillfold.yaml");
    fs_err::write(&config, format!("guides: {}\n", r.display())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["prompt", "--verbose", "-c", config.to_str().unwrap()])
        .env_remove(GUIDES_ENV)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        for c in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!text.contains(c), "{what} holds {c:?}:\n{text}");
        }
    }
    assert!(
        stdout.contains(
            "<description>\nRed \\u{1b}[31mtext\\u{7} and a bell\\u{202e}.\n</description>"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("Clear \\u{1b}[2J screen\\u{7}"), "{stdout}");
    assert!(stderr.contains("esc\\u{1b}[8m"), "{stderr}");
}
