//! The release binary goes into other images — distroless, musl-based, `scratch` — so it must be
//! fully static. This builds it as the Containerfile does (glibc with `crt-static`, a static PIE;
//! host names resolved by reqwest's own resolver, not glibc's NSS), checks that it has no program
//! interpreter, and runs it inside an otherwise empty root file system holding the binary, the
//! device nodes and CA roots every container has, and the test's files: `--version`, `hash`,
//! `verify`, and a `prepare` that fetches over HTTP from a host name only the jail's /etc/hosts
//! knows.
//!
//! The static build goes to `target/static` (its own target directory, so it never waits on the
//! build running this test); the first run takes a few minutes, later runs reuse it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::bin::stderr;
use super::support::git::Repo;
use super::support::git_server::HttpServer;

const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Builds (or reuses) the static binary; returns its path.
fn static_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = root.join("target/static");
    let built = Command::new(env!("CARGO"))
        .args([
            "build",
            "--locked",
            "--bin",
            "skillfold",
            "--target",
            TARGET,
        ])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .current_dir(root)
        .output()
        .expect("cargo build");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    target_dir.join(TARGET).join("debug/skillfold")
}

/// Runs `args` as `/skillfold` inside `jail`, with an empty environment but `HOME` and `TMPDIR`.
fn in_jail(jail: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("/usr/sbin/chroot");
    cmd.arg(jail)
        .arg("/skillfold")
        .args(args)
        .env_clear()
        .env("HOME", "/")
        .env("TMPDIR", "/tmp");
    cmd.output().expect("chroot")
}

#[test]
fn the_static_binary_runs_alone_in_an_empty_root_file_system() {
    let binary = static_binary();
    // No program interpreter: `ldd` finds nothing to load.
    let ldd = Command::new("ldd").arg(&binary).output().expect("ldd");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(
        said.contains("not a dynamic executable") || said.contains("statically linked"),
        "{said}"
    );

    // A Git repository served over smart HTTP on loopback, and a jail with nothing but the binary.
    let repo = Repo::new();
    repo.bundle("alpha", "");
    let commit = repo.commit("one bundle");
    let digest = repo.digest("alpha");
    let server = HttpServer::start(repo.tmp.path());
    let jail = tempfile::tempdir().expect("tempdir");
    let jail = jail.path();
    fs_err::copy(&binary, jail.join("skillfold")).expect("copy");
    for dir in ["tmp", "corpus", "local", "etc/ssl/certs", "dev"] {
        fs_err::create_dir_all(jail.join(dir)).expect("mkdir");
    }
    // What every container runtime gives a container, and nothing else: the random and null
    // devices (mknod needs root, as chroot does; CI runs as root) and the CA roots a distroless
    // image ships (the https client will not start without roots, even for http).
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "this test makes device nodes and chroots: run it as root (CI does)"
    );
    for (name, minor) in [("null", "3"), ("random", "8"), ("urandom", "9")] {
        let made = Command::new("mknod")
            .arg(jail.join("dev").join(name))
            .args(["c", "1", minor])
            .status()
            .expect("mknod");
        assert!(made.success());
    }
    fs_err::copy(
        "/etc/ssl/certs/ca-certificates.crt",
        jail.join("etc/ssl/certs/ca-certificates.crt"),
    )
    .expect("the system's CA bundle (ca-certificates)");
    // A host name only the jail's own /etc/hosts knows: resolving it needs no glibc NSS module
    // (there is none in the jail). The name server is never asked.
    fs_err::write(jail.join("etc/hosts"), "127.0.0.1 skills.test\n").expect("write");
    fs_err::write(jail.join("etc/resolv.conf"), "nameserver 127.0.0.1\n").expect("write");
    let local = jail.join("local/alpha");
    fs_err::create_dir_all(local.join("references")).expect("mkdir");
    for rel in ["SKILL.md", "references/guide.md"] {
        fs_err::copy(repo.work.join("skills/alpha").join(rel), local.join(rel)).expect("copy");
    }
    fs_err::write(
        jail.join("skillfold.yaml"),
        format!(
            "skills:\n  - git:\n      source: {}\n      revision: {commit}\n      directory: /corpus\n      root: skills\n      approved:\n        - {{ name: alpha, version: '1', hash: {digest} }}\nagents:\n  local:\n    skills:\n      - local: {{ name: alpha, version: '1', directory: /local/alpha, hash: {digest} }}\n",
            server.url("remote.git").replace("127.0.0.1", "skills.test")
        ),
    )
    .expect("write");

    let version = in_jail(jail, &["--version"]);
    assert!(version.status.success(), "{}", stderr(&version));
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("skillfold "));
    let hash = in_jail(jail, &["hash", "/local/alpha"]);
    assert!(hash.status.success(), "{}", stderr(&hash));
    assert!(String::from_utf8_lossy(&hash.stdout).starts_with(&digest));
    let prepare = in_jail(jail, &["prepare", "-c", "/skillfold.yaml"]);
    assert_eq!(prepare.status.code(), Some(0), "{}", stderr(&prepare));
    let verify = in_jail(jail, &["verify", "-c", "/skillfold.yaml"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert_eq!(
        stderr(&verify).matches("ok: ").count(),
        2,
        "{}",
        stderr(&verify)
    );
}
