//! `skill_run_script` end to end: only approved bytes run, every check refuses in order with its
//! code, and the execution limits hold (timeout with grandchildren, output cap, environment,
//! isolation). Each helper here is a real Python program run by the real `python3`.

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};
use skillfold::{Catalogue, Runtime};

use super::support::bin::{assert_stderr_has, stderr, stdout};
use super::support::world::sha256;

/// A skill `tools` with the given helpers, a descriptor approving `approve` (script paths; each
/// approved for its current bytes unless listed in `approve_other_bytes`).
struct Lab {
    tmp: tempfile::TempDir,
    config: PathBuf,
}

impl Lab {
    fn new(helpers: &[(&str, &str)], approve: &[&str], extra_scripts_yaml: &str) -> Lab {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tools");
        fs_err::create_dir_all(dir.join("scripts")).expect("mkdir");
        fs_err::write(
            dir.join("SKILL.md"),
            "---\nname: tools\ndescription: Helpers for tests.\n---\n# Tools\n",
        )
        .expect("write");
        for (path, text) in helpers {
            fs_err::write(dir.join(path), text).expect("write");
        }
        let digest = skillfold::Bundle::read_dir(&dir).expect("valid").digest();
        let mut allow = String::new();
        for script in approve {
            let bytes = fs_err::read(dir.join(script)).expect("helper");
            allow.push_str(&format!(
                "      - {{ skill: tools, script: {script}, sha256: {} }}\n",
                sha256(&bytes)
            ));
        }
        // The real interpreter: a pyenv-style shim would add its own variables to the helper's
        // environment.
        let python = extra_scripts_yaml
            .contains("python:")
            .then(String::new)
            .unwrap_or_else(|| format!("  python: {}\n", real_python().display()));
        let timeout = if extra_scripts_yaml.contains("timeout_seconds:") {
            ""
        } else {
            "  timeout_seconds: 2\n"
        };
        let yaml = format!(
            "skills:\n  - local: {{ name: tools, version: '1', directory: {}, hash: {digest} }}\nscripts:\n{timeout}{python}{extra_scripts_yaml}  allowlist:\n{allow}",
            dir.display()
        );
        let config = tmp.path().join("skillfold.yaml");
        fs_err::write(&config, yaml).expect("write");
        Lab { tmp, config }
    }

    fn catalogue(&self) -> Catalogue {
        Runtime::open(&self.config)
            .expect("open")
            .runtime
            .catalogue(None)
            .expect("catalogue")
    }

    fn run(&self, script: &str, args: &[&str]) -> Result<Value, skillfold::ToolError> {
        self.catalogue()
            .call(
                "skill_run_script",
                &json!({"skill": "tools", "script": script, "args": args}),
            )
            .map(|(v, _)| v)
    }

    fn cli(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"));
        cmd.arg("run-script")
            .args(args)
            .env("SKILLFOLD_CONFIG", &self.config)
            .env_remove("SKILLFOLD_REPLAY");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run")
    }

    fn code_of(&self, script: &str, args: &[&str]) -> String {
        self.run(script, args)
            .expect_err("refused")
            .code
            .to_string()
    }
}

/// Asserts that process `pid` is gone (or a zombie waiting to be reaped) within 5 seconds.
#[track_caller]
fn assert_ends(pid: i32, why: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok();
        // The state follows the parenthesised command name; `Z` is a zombie.
        let running = stat.as_deref().is_some_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        });
        if !running {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{why} (pid {pid})");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The interpreter `python3` resolves to (through any shim).
pub(super) fn real_python() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is on every machine");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The environment variable whose JSON list of approvals replaces the descriptor's.
const ALLOWLIST_ENV: &str = "SKILLFOLD_SKILL_SCRIPT_ALLOWLIST";

const HELLO: &str =
    "import sys\nprint('hello', *sys.argv[1:])\nprint('to stderr', file=sys.stderr)\n";

#[test]
fn an_approved_helper_runs_and_its_output_returns_with_a_record() {
    let lab = Lab::new(&[("scripts/hello.py", HELLO)], &["scripts/hello.py"], "");
    let c = lab.catalogue();
    let tools: Vec<&str> = c.tools().iter().map(|t| t.name).collect();
    assert_eq!(tools, ["load_skill", "skill_run_script"]);
    assert!(c.prompt().unwrap().contains("untrusted data"));
    let (out, record) = c
        .call(
            "skill_run_script",
            &json!({"skill": "tools", "script": "scripts/hello.py", "args": ["a b", "--flag"]}),
        )
        .expect("ran");
    assert_eq!(
        out,
        json!({"skill": "tools", "script": "scripts/hello.py", "exit_code": 0, "stdout": "hello a b --flag\n", "stderr": "to stderr\n"})
    );
    assert_eq!(record.sha256, sha256(HELLO.as_bytes()));
    assert_eq!(record.reference.as_deref(), Some("scripts/hello.py"));
    let def = c
        .tools()
        .into_iter()
        .find(|t| t.name == "skill_run_script")
        .unwrap();
    assert!(def.annotations.open_world_hint && !def.annotations.read_only_hint);
}

#[test]
fn the_tool_is_not_offered_without_an_approval_for_a_loaded_skill() {
    let lab = Lab::new(&[("scripts/hello.py", HELLO)], &[], "");
    let c = lab.catalogue();
    assert_eq!(c.tools().len(), 1);
    assert!(!c.prompt().unwrap().contains("skill_run_script"));
    let err = c
        .call(
            "skill_run_script",
            &json!({"skill": "tools", "script": "scripts/hello.py", "args": []}),
        )
        .unwrap_err();
    assert_eq!(err.code, "unknown_tool");
}

#[test]
fn unapproved_and_edited_helpers_never_run() {
    let lab = Lab::new(
        &[
            ("scripts/hello.py", HELLO),
            ("scripts/other.py", "print('other')\n"),
        ],
        &["scripts/hello.py"],
        "",
    );
    let err = lab.run("scripts/other.py", &[]).unwrap_err();
    assert_eq!(err.code, "not_approved");
    assert_eq!(err.valid, ["scripts/hello.py"]);

    // Approve other bytes than the bundle holds: the edited helper is refused.
    let text = fs_err::read_to_string(&lab.config).unwrap();
    fs_err::write(
        &lab.config,
        text.replace(
            &sha256(HELLO.as_bytes()),
            &sha256(b"print('approved version')\n"),
        ),
    )
    .unwrap();
    assert_eq!(lab.code_of("scripts/hello.py", &[]), "not_approved");
}

#[test]
fn a_helper_as_large_as_a_supporting_file_may_be_runs() {
    // 120 KiB of comments, under the 128 KiB bound for a supporting file: the runner's own cap
    // on the bytes it hashes (1 MiB) must not refuse what a bundle may hold.
    let big = format!(
        "{}print('big helper ran')\n",
        "# padding line of a large but approved helper script\n".repeat(2_300)
    );
    assert!(big.len() > 100 * 1024 && big.len() < 128 * 1024);
    let lab = Lab::new(&[("scripts/big.py", &big)], &["scripts/big.py"], "");
    let out = lab
        .run("scripts/big.py", &[])
        .expect("an approved helper runs");
    assert_eq!(out["stdout"], "big helper ran\n");
}

#[test]
fn a_helper_swapped_on_disk_after_loading_runs_its_verified_bytes() {
    let lab = Lab::new(&[("scripts/hello.py", HELLO)], &["scripts/hello.py"], "");
    let c = lab.catalogue();
    fs_err::write(
        lab.tmp.path().join("tools/scripts/hello.py"),
        "print('SWAPPED')\n",
    )
    .unwrap();
    let (out, _) = c
        .call(
            "skill_run_script",
            &json!({"skill": "tools", "script": "scripts/hello.py", "args": []}),
        )
        .unwrap();
    assert_eq!(out["stdout"], "hello\n");
}

#[test]
fn a_timed_out_helper_is_killed_with_its_grandchildren() {
    let helper = "import subprocess, sys, time\n\
p = subprocess.Popen(['sleep', '3600'])\n\
open(sys.argv[1], 'w').write(str(p.pid))\n\
time.sleep(3600)\n";
    let lab = Lab::new(&[("scripts/spawn.py", helper)], &["scripts/spawn.py"], "");
    let pid_file = lab.tmp.path().join("grandchild.pid");
    // The grandchild would sleep for an hour: only the runner's kill ends it.
    let err = lab
        .run("scripts/spawn.py", &[pid_file.to_str().unwrap()])
        .unwrap_err();
    assert_eq!(err.code, "timeout");
    let pid: i32 = fs_err::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ends(pid, "the grandchild survived the timeout");
}

#[test]
fn output_over_the_cap_kills_the_helper() {
    let lab = Lab::new(
        &[(
            "scripts/loud.py",
            "import sys\nsys.stdout.write('x' * 300000)\n",
        )],
        &["scripts/loud.py"],
        "",
    );
    assert_eq!(lab.code_of("scripts/loud.py", &[]), "output_limit");
    let ok = Lab::new(
        &[(
            "scripts/fits.py",
            "import sys\nsys.stdout.write('x' * 200000)\n",
        )],
        &["scripts/fits.py"],
        "",
    );
    assert_eq!(
        ok.run("scripts/fits.py", &[]).unwrap()["stdout"]
            .as_str()
            .unwrap()
            .len(),
        200000
    );
}

#[test]
fn a_failing_helper_reports_its_exit_code_and_the_end_of_stderr() {
    let helper = "import sys\nsys.stderr.write('e' * 5000 + 'THE END')\nsys.exit(3)\n";
    let lab = Lab::new(&[("scripts/fail.py", helper)], &["scripts/fail.py"], "");
    let err = lab.run("scripts/fail.py", &[]).unwrap_err();
    assert_eq!(err.code, "script_failed");
    assert_eq!(err.exit_code, Some(3));
    let tail = err.stderr.unwrap();
    assert_eq!(tail.chars().count(), 4000);
    assert!(tail.ends_with("THE END"));
}

#[test]
fn checks_refuse_in_order_with_their_codes() {
    let lab = Lab::new(
        &[
            ("scripts/hello.py", HELLO),
            ("scripts/place_order.py", HELLO),
        ],
        &["scripts/hello.py", "scripts/place_order.py"],
        "",
    );
    let c = lab.catalogue();
    let call = |input: Value| c.call("skill_run_script", &input).unwrap_err().code;
    // invalid_args
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": [], "extra": 1})),
        "invalid_args"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": vec!["a"; 33]})),
        "invalid_args"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": ["x".repeat(4097)]})),
        "invalid_args"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": ["a\nb"]})),
        "invalid_args"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": [1]})),
        "invalid_args"
    );
    // Bad input is refused before the path is even looked at.
    assert_eq!(
        call(json!({"skill": "nope", "script": "../x.py", "args": vec!["a"; 33]})),
        "invalid_args"
    );
    // invalid_path before unknown_skill.
    for bad in [
        "../x.py",
        "/abs/x.py",
        "scripts/x.sh",
        "other/x.py",
        "scripts\\x.py",
        "scripts/./x.py",
        "scripts/.x.py",
    ] {
        assert_eq!(
            call(json!({"skill": "nope", "script": bad, "args": []})),
            "invalid_path",
            "{bad}"
        );
    }
    assert_eq!(
        call(json!({"skill": "nope", "script": "scripts/hello.py", "args": []})),
        "unknown_skill"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/missing.py", "args": []})),
        "not_found"
    );
    // blocked_tool, even though approved: on the basename and on arguments.
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/place_order.py", "args": []})),
        "blocked_tool"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": ["--place-order"]})),
        "blocked_tool"
    );
    assert_eq!(
        call(json!({"skill": "tools", "script": "scripts/hello.py", "args": ["withdraw"]})),
        "blocked_tool"
    );
}

#[test]
fn a_custom_blocklist_replaces_the_default() {
    let lab = Lab::new(
        &[("scripts/hello.py", HELLO), ("scripts/launch.py", HELLO)],
        &["scripts/hello.py", "scripts/launch.py"],
        "  blocklist: [launch]\n",
    );
    assert_eq!(lab.code_of("scripts/launch.py", &[]), "blocked_tool");
    assert!(lab.run("scripts/hello.py", &["withdraw"]).is_ok());
}

#[test]
fn a_missing_interpreter_is_spawn_failed() {
    let lab = Lab::new(
        &[("scripts/hello.py", HELLO)],
        &["scripts/hello.py"],
        "  python: /nonexistent/python3\n",
    );
    assert_eq!(lab.code_of("scripts/hello.py", &[]), "spawn_failed");
}

#[test]
fn the_replay_guard_blocks_unless_off() {
    let lab = Lab::new(&[("scripts/hello.py", HELLO)], &["scripts/hello.py"], "");
    let blocked = lab.cli(&["tools", "scripts/hello.py"], &[("SKILLFOLD_REPLAY", "1")]);
    assert_eq!(blocked.status.code(), Some(2));
    assert_stderr_has(&blocked, "replay_blocked");
    let off = lab.cli(
        &["tools", "scripts/hello.py"],
        &[("SKILLFOLD_REPLAY", "off")],
    );
    assert_eq!(off.status.code(), Some(0), "{}", stderr(&off));
    let unset = lab.cli(&["tools", "scripts/hello.py", "x"], &[]);
    assert_eq!(unset.status.code(), Some(0), "{}", stderr(&unset));
    assert!(stdout(&unset).contains("hello x"));
}

#[test]
fn the_helper_sees_a_reduced_environment_and_isolated_python() {
    let helper = "import os, sys, site, json\n\
try:\n    import planted\n    planted_ok = True\nexcept ImportError:\n    planted_ok = False\n\
print(json.dumps({'env': sorted(os.environ), 'planted': planted_ok, 'user_site': site.ENABLE_USER_SITE, \
'argv0': sys.argv[0], 'file': __file__, 'name': __name__, 'cwd': os.getcwd(), 'replay': os.environ.get('SKILLFOLD_REPLAY')}))\n";
    let lab = Lab::new(&[("scripts/env.py", helper)], &["scripts/env.py"], "");
    let planted = lab.tmp.path().join("planted");
    fs_err::create_dir_all(&planted).unwrap();
    fs_err::write(planted.join("planted.py"), "").unwrap();
    let out = lab.cli(
        &["tools", "scripts/env.py"],
        &[
            ("MY_SECRET_TOKEN", "hunter2"),
            ("PYTHONPATH", planted.to_str().unwrap()),
            ("LANG", "C.UTF-8"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen: Value = serde_json::from_str(result["stdout"].as_str().unwrap()).unwrap();
    let env: Vec<&str> = seen["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let allowed = [
        "PATH",
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "TMPDIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "SKILLFOLD_REPLAY",
        "LC_CTYPE",
    ];
    assert!(env.iter().all(|k| allowed.contains(k)), "leaked: {env:?}");
    assert!(env.contains(&"LANG") && !env.contains(&"MY_SECRET_TOKEN"));
    assert_eq!(seen["planted"], false, "PYTHONPATH must be ignored");
    assert_eq!(seen["user_site"], false, "user site-packages must be off");
    assert_eq!(seen["argv0"], "scripts/env.py");
    assert_eq!(seen["file"], "scripts/env.py");
    assert_eq!(seen["name"], "__main__");
    assert_eq!(seen["replay"], "off");
    let cwd = PathBuf::from(seen["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        lab.tmp.path().join("tools").canonicalize().unwrap()
    );
}

#[test]
fn malformed_or_duplicate_policies_deny_everything() {
    let lab = Lab::new(&[("scripts/hello.py", HELLO)], &["scripts/hello.py"], "");
    let h = sha256(HELLO.as_bytes());
    let good = format!(r#"{{"skill":"tools","script":"scripts/hello.py","sha256":"{h}"}}"#);
    for policy in [
        format!("[{good}, {good}]"),
        format!(r#"[{good}, {{"skill":"tools","script":"scripts/x.py","sha256":"nothex"}}]"#),
        format!(r#"[{good}, {{"skill":"tools","script":"scripts/x.py"}}]"#),
        "not json".to_owned(),
    ] {
        let out = lab.cli(&["tools", "scripts/hello.py"], &[(ALLOWLIST_ENV, &policy)]);
        assert_eq!(out.status.code(), Some(2), "{policy}");
        assert!(!stdout(&out).contains("hello"), "{policy}");
    }
    // The environment's list replaces the descriptor's: a valid one works.
    let ok = lab.cli(
        &["tools", "scripts/hello.py"],
        &[(ALLOWLIST_ENV, &format!("[{good}]"))],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    // In the descriptor, a duplicate is a configuration error.
    let text = fs_err::read_to_string(&lab.config).unwrap();
    let line = text.lines().last().unwrap().to_owned();
    fs_err::write(&lab.config, format!("{text}{line}\n")).unwrap();
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["check", "-c", lab.config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(2));
    assert_stderr_has(&check, "invalid_script_allowlist");
}

#[test]
fn a_helper_dies_with_skillfold() {
    let helper =
        "import sys, os, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(60)\n";
    let lab = Lab::new(
        &[("scripts/wait.py", helper)],
        &["scripts/wait.py"],
        "  timeout_seconds: 30\n",
    );
    let pid_file = lab.tmp.path().join("helper.pid");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args([
            "run-script",
            "tools",
            "scripts/wait.py",
            pid_file.to_str().unwrap(),
        ])
        .env("SKILLFOLD_CONFIG", &lab.config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid: i32 = loop {
        if let Some(pid) = fs_err::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the helper never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().expect("kill skillfold");
    let _ = child.wait();
    assert_ends(pid, "the helper outlived skillfold");
}

/// `call_async` runs a helper off the executor: on a single-threaded tokio runtime, another task
/// keeps running while a helper sleeps, and the helper's output and record still arrive.
#[cfg(feature = "mcp")]
#[test]
fn call_async_runs_a_helper_without_blocking_the_executor() {
    const SLEEPY: &str = "import time\ntime.sleep(0.6)\nprint('done')\n";
    let lab = Lab::new(&[("scripts/sleepy.py", SLEEPY)], &["scripts/sleepy.py"], "");
    let c = lab.catalogue();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let ticks = std::cell::Cell::new(0u32);
    let (ticks_when_done, outcome) = runtime.block_on(async {
        let ticker = async {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                ticks.set(ticks.get() + 1);
            }
        };
        let input = json!({"skill": "tools", "script": "scripts/sleepy.py", "args": []});
        let call = async {
            let outcome = c.call_async("skill_run_script", &input).await;
            (ticks.get(), outcome)
        };
        tokio::select! {
            done = call => done,
            () = ticker => unreachable!("the ticker never ends"),
        }
    });
    assert!(
        ticks_when_done >= 3,
        "the other task ran only {ticks_when_done} times while the helper slept"
    );
    let (out, record) = outcome.expect("ran");
    assert_eq!(out["stdout"], "done\n");
    assert_eq!(record.sha256, sha256(SLEEPY.as_bytes()));
    // Tools that serve from memory answer through the same call.
    let body =
        runtime.block_on(c.call_async("load_skill", &json!({"name": "tools", "reference": null})));
    assert_eq!(body.expect("served").1.skill, "tools");
}

mod start;
