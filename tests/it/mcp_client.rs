//! The official MCP Python SDK client, for driving `skillfold serve` as a real host would: a
//! virtual environment under the target directory holding exactly the packages pinned in
//! `tests/mcp/requirements.txt` (created on first use, kept between runs, rebuilt when that file
//! changes), and `tests/mcp/client.py`, which runs one scenario and prints a JSON report.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::util::target_dir;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python, creating the venv when it is missing or stale.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let requirements = manifest_dir().join("tests/mcp/requirements.txt");
        let wanted = fs_err::read(&requirements).expect("tests/mcp/requirements.txt");
        let venv = target_dir().join("mcp-client-venv");
        let python = venv.join("bin/python");
        let stamp = venv.join("skillfold-requirements.txt");
        if fs_err::read(&stamp).ok().as_deref() == Some(wanted.as_slice()) && python.exists() {
            return python;
        }
        if venv.exists() {
            fs_err::remove_dir_all(&venv).expect("remove the stale venv");
        }
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements));
        fs_err::write(&stamp, &wanted).expect("write the venv stamp");
        python
    })
}

fn run(command: &mut Command) {
    let out = command.output().expect("run a venv setup step");
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a scenario printed, and the server's and client's stderr.
pub struct Report {
    pub json: Value,
    pub stderr: String,
}

/// Runs `client.py SCENARIO ARGS... -- SERVER...` with extra environment `env`.
pub fn scenario(args: &[&str], server: &[&str], env: &[(&str, &str)]) -> Report {
    let out = Command::new(python())
        .arg(manifest_dir().join("tests/mcp/client.py"))
        .args(args)
        .arg("--")
        .args(server)
        .envs(env.iter().copied())
        .output()
        .expect("run tests/mcp/client.py");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "client.py {args:?} failed ({}):\n{stderr}",
        out.status
    );
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client.py printed no JSON ({e}):\n{}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Report { json, stderr }
}
