//! Every file a command reads because the user named it — the descriptor of `-c` (for every
//! command that takes it), `--tokens`, `--metrics-tokens`, `--tls-cert`/`--tls-key`, allowed
//! signers, a `push --oci-layout` directory's `index.json`, `validate DIR/SKILL.md` — is refused
//! when it is a FIFO (or another special file), with exit 2 and a message naming it, instead of
//! blocking forever on a pipe nobody writes. Each command runs under a deadline, so a regression
//! fails instead of hanging.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::support::bin::{BIN, stderr};
use super::support::world::{World, local_entry, skill_md};

/// How long a refusal may take; a command that waits on a FIFO never ends.
const DEADLINE: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
}

/// Runs `skillfold ARGS` in `cwd` with stdin closed; panics if it has not ended by the deadline
/// (it is killed first).
fn run(cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env_remove("SKILLFOLD_CONFIG")
        .env_remove("SKILLFOLD_SERVE_TOKENS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start skillfold");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "skillfold {args:?} blocked on a special file: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_refused(out: &Output, what: &str, name: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains(name),
        "{what}: the message names `{name}`: {err}"
    );
    assert!(
        err.contains("FIFO")
            || err.contains("not a regular file")
            || err.contains("not a directory"),
        "{what}: the message says why: {err}"
    );
}

/// A world with one local bundle `demo` and the descriptor that pins it.
fn demo_world() -> World {
    let world = World::new();
    let digest = world.bundle("demo", &skill_md("demo"), &[]);
    world.descriptor(&format!(
        "skills:\n{}",
        local_entry("demo", "'1'", "demo", &digest)
    ));
    world
}

/// A FIFO `name` in `world`, as a path argument.
fn make_fifo(world: &World, name: &str) -> String {
    let path = world.path(name);
    mkfifo(&path);
    path.to_str().expect("utf8").to_owned()
}

#[test]
fn a_fifo_as_the_descriptor_is_refused_by_every_command() {
    let world = demo_world();
    let fifo = make_fifo(&world, "fifo.yaml");
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["check"],
        vec!["prepare"],
        vec!["verify"],
        vec!["prompt"],
        vec!["load", "demo"],
        vec!["run-script", "demo", "x.py"],
        vec!["push", "--oci-layout", "layout"],
    ];
    if cfg!(feature = "mcp") {
        commands.push(vec!["serve"]);
    }
    if cfg!(feature = "http") {
        commands.push(vec!["serve", "--listen", "127.0.0.1:0"]);
    }
    if cfg!(feature = "git") {
        commands.push(vec!["outdated"]);
        commands.push(vec!["update"]);
    }
    for command in commands {
        // `-c` right after the command: after `run-script`'s SCRIPT every argument is the
        // helper's.
        let mut args = vec![command[0], "-c", &fifo];
        args.extend(&command[1..]);
        assert_refused(
            &run(world.tmp.path(), &args),
            &format!("{command:?}"),
            "fifo.yaml",
        );
    }
    // The environment variable reads the same way.
    let out = Command::new(BIN)
        .arg("check")
        .env("SKILLFOLD_CONFIG", &fifo)
        .current_dir(world.tmp.path())
        .stdin(Stdio::null())
        .output();
    assert_refused(&out.expect("check"), "SKILLFOLD_CONFIG", "fifo.yaml");
    // A character device is refused too, unread.
    let out = run(world.tmp.path(), &["check", "-c", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("character device"),
        "{}",
        stderr(&out)
    );
    // The real descriptor still checks.
    let out = run(world.tmp.path(), &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[cfg(feature = "http")]
#[test]
fn fifos_as_the_server_s_tokens_and_certificates_are_refused() {
    let world = demo_world();
    let tokens = make_fifo(&world, "tokens.json");
    let listen = ["serve", "--listen", "127.0.0.1:0"];
    let mut args = listen.to_vec();
    args.extend(["--tokens", &tokens]);
    let out = run(world.tmp.path(), &args);
    assert_refused(&out, "serve --listen --tokens", "tokens.json");
    assert!(
        stderr(&out).contains("[invalid_tokens]"),
        "{}",
        stderr(&out)
    );
    let mut args = listen.to_vec();
    args.extend(["--metrics-tokens", &tokens]);
    assert_refused(
        &run(world.tmp.path(), &args),
        "--metrics-tokens",
        "tokens.json",
    );
    let cert = make_fifo(&world, "cert.pem");
    let key = make_fifo(&world, "key.pem");
    let mut args = listen.to_vec();
    args.extend(["--tls-cert", &cert, "--tls-key", &key]);
    assert_refused(&run(world.tmp.path(), &args), "--tls-cert", "cert.pem");
}

#[test]
fn a_fifo_where_a_skill_or_a_layout_file_belongs_is_refused() {
    let world = demo_world();
    // validate DIR/SKILL.md and validate DIR, with SKILL.md a FIFO.
    let dir = world.path("piped");
    fs_err::create_dir(&dir).expect("mkdir");
    let skill = dir.join("SKILL.md");
    mkfifo(&skill);
    for arg in [skill.to_str().expect("utf8"), dir.to_str().expect("utf8")] {
        let out = run(world.tmp.path(), &["validate", arg]);
        assert_ne!(
            out.status.code(),
            Some(0),
            "validate {arg}: {}",
            stderr(&out)
        );
    }
    let out = run(world.tmp.path(), &["hash", dir.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(2), "hash: {}", stderr(&out));
    // push --oci-layout into a layout whose index.json is a FIFO.
    let layout = world.path("layout");
    fs_err::create_dir(&layout).expect("mkdir");
    mkfifo(&layout.join("index.json"));
    let out = run(
        world.tmp.path(),
        &["push", "--oci-layout", layout.to_str().expect("utf8")],
    );
    assert_refused(&out, "push --oci-layout", "index.json");
}

#[test]
fn a_fifo_as_allowed_signers_is_refused() {
    let world = demo_world();
    make_fifo(&world, "allowed_signers");
    fs_err::write(
        world.path("signed.yaml"),
        format!(
            "skills:\n  - git:\n      source: https://git.example.com/acme/skills.git\n      revision: {}\n      directory: corpus\n      verify:\n        allowed_signers: allowed_signers\n      approved:\n        - {{ name: demo, version: '1', hash: {} }}\n",
            "a".repeat(40),
            "b".repeat(64)
        ),
    )
    .expect("write");
    let out = run(world.tmp.path(), &["check", "-c", "signed.yaml"]);
    assert_refused(&out, "allowed_signers", "allowed_signers");
}
