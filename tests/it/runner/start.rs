//! What a helper starts with: its arguments exactly as given after `SCRIPT` on the command line
//! (none of them read as skillfold's own option), no descriptor of skillfold's but standard
//! input, output and error, and a working directory even after its skill's directory is gone.

use std::process::Command;

use serde_json::Value;

use super::super::support::bin::{BIN, assert_stderr_has, stderr, stdout};
use super::Lab;

/// Prints its arguments as a JSON list.
const ARGV: &str = "import json, sys\nprint(json.dumps(sys.argv[1:]))\n";

/// The arguments the helper printed, from the CLI's JSON result.
#[track_caller]
fn helper_args(out: &std::process::Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "exit {:?}\n{}\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    );
    let result: Value = serde_json::from_str(&stdout(out)).expect("a JSON result");
    serde_json::from_str(result["stdout"].as_str().expect("stdout")).expect("a JSON list")
}

// Everything after SCRIPT is the helper's: an option skillfold has (`-c`, `--config=`,
// `--agent`, `--help`, `-v`) and `--` reach the helper as they are, first or later.
#[test]
fn every_argument_after_the_script_goes_to_the_helper() {
    let lab = Lab::new(&[("scripts/argv.py", ARGV)], &["scripts/argv.py"], "");
    for args in [
        &["-c", "other.yaml"][..],
        &["--config=other.yaml"],
        &["--agent", "nobody"],
        &["--help"],
        &["-h"],
        &["-v"],
        &["--verbose", "x"],
        &["--", "x"],
        &["x", "--", "-c", "other.yaml"],
        &["--version"],
    ] {
        let mut line = vec!["tools", "scripts/argv.py"];
        line.extend_from_slice(args);
        let out = lab.cli(&line, &[]);
        assert_eq!(helper_args(&out), args, "{args:?}");
    }
    // skillfold's options still go before SKILL.
    let out = lab.cli(&["-v", "tools", "scripts/argv.py", "a"], &[]);
    assert_eq!(helper_args(&out), ["a"]);
}

// The case: `-c other.yaml` after SCRIPT does not make skillfold read another
// descriptor, one that approves a helper the descriptor in force never approved.
#[test]
fn a_descriptor_named_after_the_script_approves_nothing() {
    let lab = Lab::new(
        &[
            ("scripts/argv.py", ARGV),
            ("scripts/unapproved.py", "print('ran')\n"),
        ],
        &["scripts/argv.py"],
        "",
    );
    let other = lab.tmp.path().join("other.yaml");
    let text = fs_err::read_to_string(&lab.config).expect("read");
    let approval = format!(
        "      - {{ skill: tools, script: scripts/unapproved.py, sha256: {} }}\n",
        super::sha256(b"print('ran')\n")
    );
    fs_err::write(&other, format!("{text}{approval}")).expect("write");
    let out = lab.cli(
        &[
            "tools",
            "scripts/unapproved.py",
            "-c",
            other.to_str().expect("utf8"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert_stderr_has(&out, "not_approved");
    assert!(!stdout(&out).contains("ran"), "{}", stdout(&out));
}

// A descriptor skillfold inherited without close-on-exec (`exec 7<secret` in the shell that
// started it) does not reach the helper.
#[test]
fn a_descriptor_skillfold_inherited_does_not_reach_the_helper() {
    let probe = "import os\n\
try:\n    print('open', os.read(7, 100).decode())\n\
except OSError as e:\n    print('closed', e.errno)\n\
print(sorted(int(fd) for fd in os.listdir('/proc/self/fd')))\n";
    let lab = Lab::new(&[("scripts/probe.py", probe)], &["scripts/probe.py"], "");
    let secret = lab.tmp.path().join("secret.txt");
    fs_err::write(&secret, "TOP-SECRET-42").expect("write");
    let shell = |program: &str| {
        Command::new("sh")
            .args(["-c", &format!("exec 7<\"$SECRET\"; exec {program}")])
            .env("SECRET", &secret)
            .env("SKILLFOLD_CONFIG", &lab.config)
            .env("BIN", BIN)
            .env("PYTHON", super::real_python())
            .env("PROBE", probe)
            .env_remove("SKILLFOLD_REPLAY")
            .output()
            .expect("run sh")
    };
    // The shell does hand descriptor 7 on: a program it starts reads the secret.
    let direct = shell("\"$PYTHON\" -c \"$PROBE\"");
    assert!(
        stdout(&direct).contains("open TOP-SECRET-42"),
        "{}",
        stdout(&direct)
    );

    let out = shell("\"$BIN\" run-script tools scripts/probe.py");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).expect("a JSON result");
    let seen = result["stdout"].as_str().expect("stdout");
    assert!(!seen.contains("TOP-SECRET"), "{seen}");
    assert!(seen.starts_with("closed 9\n"), "{seen}");
    // No other descriptor either (the cargo jobserver's, say): only the standard three and the
    // one the listing itself opened.
    assert!(seen.ends_with("\n[0, 1, 2, 3]\n"), "{seen}");
}

/// Prints its working directory, then the skill's `scripts/data.txt` read by a relative path.
const WHERE: &str = "import os\nprint(os.getcwd())\nprint(open('scripts/data.txt').read())\n";

/// Calls `scripts/where.py` on `catalogue`.
fn call_where(catalogue: &skillfold::Catalogue) -> Result<Value, skillfold::ToolError> {
    catalogue
        .call(
            "skill_run_script",
            &serde_json::json!({"skill": "tools", "script": "scripts/where.py", "args": []}),
        )
        .map(|(v, _)| v)
}

// Once the skill's directory is gone (as when later `prepare`s remove the generation a server
// without `--watch` loaded), the helper still runs: in a private copy of the skill's verified
// files, removed after the run.
#[test]
fn a_helper_runs_in_a_private_copy_once_its_skill_directory_is_gone() {
    let lab = Lab::new(
        &[
            ("scripts/where.py", WHERE),
            ("scripts/data.txt", "verified"),
        ],
        &["scripts/where.py"],
        "",
    );
    let catalogue = lab.catalogue();
    let dir = lab.tmp.path().join("tools");
    let first = call_where(&catalogue).expect("ran in the skill's directory");
    let seen = first["stdout"].as_str().expect("stdout");
    assert_eq!(seen, format!("{}\nverified\n", dir.display()));

    fs_err::remove_dir_all(&dir).expect("remove the skill's directory");
    let out = call_where(&catalogue).expect("ran in a copy");
    let seen = out["stdout"].as_str().expect("stdout");
    let (cwd, data) = seen.split_once('\n').expect("two lines");
    assert_eq!(data, "verified\n");
    assert_ne!(std::path::Path::new(cwd), dir);
    assert!(
        !std::path::Path::new(cwd).exists(),
        "the copy {cwd} is removed after the run"
    );
}

// When a file of the skill was kept only in the directory that is gone (a binary file under
// `limits: extended`), no copy can stand in: `workdir_missing` names the directory and the file.
#[test]
fn a_gone_directory_that_held_a_file_of_the_skill_is_named() {
    let lab = Lab::new(
        &[
            ("scripts/where.py", WHERE),
            ("scripts/data.txt", "verified"),
        ],
        &["scripts/where.py"],
        "",
    );
    let dir = lab.tmp.path().join("tools");
    fs_err::write(dir.join("scripts/blob.bin"), b"\0\x01binary").expect("write");
    let hashed = std::process::Command::new(BIN)
        .args(["hash", "--limits", "extended", dir.to_str().expect("utf8")])
        .output()
        .expect("run hash");
    let hash = stdout(&hashed)
        .split_whitespace()
        .next()
        .expect("a digest")
        .to_owned();
    let text = fs_err::read_to_string(&lab.config).expect("read");
    let at = text.find("hash: ").expect("a hash") + "hash: ".len();
    let text = text.replacen(
        &format!("hash: {} }}", &text[at..at + 64]),
        &format!("hash: {hash}, limits: extended }}"),
        1,
    );
    fs_err::write(&lab.config, text).expect("write");
    let catalogue = lab.catalogue();
    call_where(&catalogue).expect("ran in the skill's directory");

    fs_err::remove_dir_all(&dir).expect("remove the skill's directory");
    let err = call_where(&catalogue).expect_err("refused");
    assert_eq!(err.code, "workdir_missing", "{}", err.message);
    assert!(
        err.message.contains(&dir.display().to_string())
            && err.message.contains("scripts/blob.bin"),
        "{}",
        err.message
    );
}
