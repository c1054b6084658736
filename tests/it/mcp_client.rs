//! The official MCP Python SDK client, for driving `skillfold serve` as a real host would: a
//! virtual environment under the target directory holding exactly the packages pinned in
//! `tests/mcp/requirements.txt` (created on first use, kept between runs, rebuilt when that file
//! changes), and `tests/mcp/client.py`, which runs one scenario and prints a JSON report.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::support::bin::target_dir;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python, creating the venv when it is missing or stale.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        super::support::venv::python_with("tests/mcp/requirements.txt", "mcp-client-venv")
    })
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

/// A `skillfold serve --listen 127.0.0.1:0` process: its port (read from its start-up line) and
/// its stderr, collected as it runs. Stopped with SIGTERM when dropped.
pub struct Listening {
    child: std::process::Child,
    pub port: u16,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Listening {
    /// Starts `skillfold serve -c CONFIG --listen 127.0.0.1:0 EXTRA...` with extra environment
    /// `env`, and waits for it to listen.
    pub fn start(config: &Path, extra: &[&str], env: &[(&str, &str)]) -> Listening {
        use std::io::BufRead as _;
        let mut child = Command::new(env!("CARGO_BIN_EXE_skillfold"))
            .args(["serve", "-c"])
            .arg(config)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start skillfold serve --listen");
        let stderr = child.stderr.take().expect("stderr");
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let sink = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line
                    .split("listening on http://127.0.0.1:")
                    .nth(1)
                    .or_else(|| line.split("listening on https://127.0.0.1:").nth(1))
                {
                    let port: u16 = rest
                        .split(' ')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .expect("port");
                    // Logged before the port is announced: the caller may read the log at once.
                    push_line(&sink, &line);
                    let _ = port_tx.send(port);
                    continue;
                }
                push_line(&sink, &line);
            }
        });
        let port = port_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("the server did not listen: {}", log.lock().expect("log")));
        Listening { child, port, log }
    }

    /// The URL of `path` on the server.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }
}

fn push_line(log: &std::sync::Mutex<String>, line: &str) {
    let mut log = log.lock().expect("log");
    log.push_str(line);
    log.push('\n');
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// `node` with the official MCP TypeScript SDK installed exactly as `tests/mcp-ts/package-lock.json`
/// pins it: the folder is copied under the target directory and `npm ci` run there (kept between
/// runs; done again when the lock file changes). Returns the folder holding `client.mjs`.
pub fn typescript_client() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| npm_installed("tests/mcp-ts", "mcp-ts-client", Some("client.mjs")))
}

/// The TypeScript SDK client (`client.mjs`) connected to `url` with the bearer `token`, once it
/// said `READY` on stderr: the child, the rest of its stderr, and what it said before.
pub fn typescript_session(
    url: &str,
    token: &str,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    String,
) {
    use std::io::BufRead as _;
    let mut node = Command::new("node")
        .arg(typescript_client().join("client.mjs"))
        .arg(url)
        .env("MCP_BEARER_TOKEN", token)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node");
    let mut lines = std::io::BufReader::new(node.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.expect("client stderr");
        if line == "READY" {
            break;
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    (node, lines, seen)
}

/// The node project in `source` (relative to the crate) installed by `npm ci` from its lock file
/// into `target/<name>` (kept between runs; done again when the lock file changes), with `script`
/// (if any) copied beside it on every call. Returns the folder.
pub fn npm_installed(source: &str, name: &str, script: Option<&str>) -> PathBuf {
    {
        let source = manifest_dir().join(source);
        let lock = fs_err::read(source.join("package-lock.json")).expect("package-lock.json");
        let dir = target_dir().join(name);
        let stamp = dir.join("skillfold-package-lock.json");
        if fs_err::read(&stamp).ok().as_deref() != Some(lock.as_slice()) {
            if dir.exists() {
                fs_err::remove_dir_all(&dir).expect("remove the stale client");
            }
            fs_err::create_dir_all(&dir).expect("mkdir");
            for file in ["package.json", "package-lock.json"] {
                fs_err::copy(source.join(file), dir.join(file)).expect("copy");
            }
            super::support::venv::run(
                Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--silent"])
                    .current_dir(&dir),
            );
            fs_err::write(&stamp, &lock).expect("write the stamp");
        }
        // The script itself is copied on every run, so an edit needs no reinstall.
        if let Some(script) = script {
            fs_err::copy(source.join(script), dir.join(script)).expect("copy the script");
        }
        dir
    }
}

/// The lines of the audit log at `log` once it holds `count` of them (each one JSON object);
/// the ten seconds guard against hanging.
pub fn audit_lines(log: &Path, count: usize) -> Vec<serde_json::Value> {
    for _ in 0..200 {
        let text = fs_err::read_to_string(log).unwrap_or_default();
        if text.lines().count() >= count {
            return text
                .lines()
                .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
                .collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!(
        "{count} audit lines: {}",
        fs_err::read_to_string(log).unwrap_or_default()
    );
}
