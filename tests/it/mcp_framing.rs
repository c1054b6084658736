//! `skillfold serve` driven with raw JSON-RPC lines over real pipes, as a broken or hostile client
//! would: every request with an id gets exactly one answer with the right code, lines that are not
//! JSON, malformed params and oversized lines included; notifications and responses are never
//! answered; a 200 MB line is refused in bounded memory and the server keeps serving; the tool
//! list shows output schemas only to the protocol revisions that define them; diagnostics on
//! stderr are escaped and a full stderr stops nothing.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};

use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::support::bin::BIN;
use super::support::world::{World, local_entry};

const WAIT: Duration = Duration::from_secs(30);
/// The longest line `serve` reads over stdio: 4 MiB (docs/mcp.md); the tests at the bound show
/// that the server holds this figure.
const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A descriptor serving one local bundle, `demo`, with one supporting file.
pub(super) fn demo_world() -> World {
    let world = World::new();
    let hash = world.bundle(
        "demo",
        "---\nname: demo\ndescription: A demo skill.\n---\n# demo\n",
        &[("references/notes.md", "# notes\n")],
    );
    world.descriptor(&format!(
        "skills:\n{}",
        local_entry("demo", "'1'", "demo", &hash)
    ));
    world
}

/// A running `skillfold serve` with its stdout read line by line on a thread.
pub(super) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Server {
    pub(super) fn start(world: &World) -> Server {
        Server::start_with(world, &[])
    }

    /// `skillfold serve -c CONFIG EXTRA...` (e.g. `--agent NAME`).
    pub(super) fn start_with(world: &World, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "-c"])
            .arg(&world.config)
            .args(extra)
            .current_dir(world.tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start skillfold serve");
        let stdout = child.stdout.take().expect("stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        });
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    /// The server's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(super) fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    pub(super) fn line(&mut self, text: &str) {
        self.send(format!("{text}\n").as_bytes());
    }

    /// The next message the server writes.
    /// The next line the server writes, as it wrote it.
    pub(super) fn next_line(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    pub(super) fn next(&self, wait: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Initializes a session with `protocol`; returns the server's answer.
    pub(super) fn initialize(&mut self, protocol: &str) -> Value {
        self.line(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": protocol, "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        let answer = self.next(WAIT).expect("an answer to initialize");
        assert_eq!(answer["id"], "init", "{answer}");
        self.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        answer
    }

    /// Collects answers until every id in `ids` has one, then for a moment more (to catch a
    /// second answer to any of them); every answer, by id (`null` ids under "null").
    fn answers(&self, ids: &[Value]) -> BTreeMap<String, Vec<Value>> {
        let mut seen: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let deadline = Instant::now() + WAIT;
        let done = |seen: &BTreeMap<String, Vec<Value>>| {
            ids.iter().all(|id| seen.contains_key(&id.to_string()))
        };
        while !done(&seen) && Instant::now() < deadline {
            if let Some(answer) = self.next(Duration::from_millis(200)) {
                seen.entry(answer["id"].to_string())
                    .or_default()
                    .push(answer);
            }
        }
        while let Some(answer) = self.next(Duration::from_millis(500)) {
            seen.entry(answer["id"].to_string())
                .or_default()
                .push(answer);
        }
        seen
    }

    /// The server's peak resident set, in bytes.
    fn peak_rss(&self) -> u64 {
        let status = fs_err::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM");
        kib * 1024
    }

    /// Closes stdin and waits for the exit; the exit code and stderr.
    pub(super) fn close(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not end after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (status.code(), self.stderr.join().unwrap_or_default())
    }
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[test]
fn every_request_gets_exactly_one_answer_whatever_the_line() {
    let world = demo_world();
    let mut server = Server::start(&world);
    server.initialize("2025-06-18");
    // (id, line, the error code it must get, or 0 for a result)
    let requests: Vec<(Value, String, i64)> = vec![
        (
            json!(1),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_skill","arguments":"x"}}"#.into(),
            -32602,
        ),
        (
            json!(2),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#.into(),
            -32602,
        ),
        (
            json!("three"),
            r#"{"jsonrpc":"2.0","id":"three","method":"tools/list","params":5}"#.into(),
            -32602,
        ),
        (
            json!(4),
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":["x"]}}"#.into(),
            -32602,
        ),
        (json!(5), r#"{"jsonrpc":"2.0","id":5}"#.into(), -32600),
        (
            json!(6),
            r#"{"jsonrpc":"1.0","id":6,"method":"ping"}"#.into(),
            -32600,
        ),
        (
            json!(7),
            r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#.into(),
            -32601,
        ),
        (
            json!(8),
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"demo","reference":null}}}"#.into(),
            0,
        ),
        (json!(9), r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#.into(), 0),
    ];
    // Lines that must be answered with `id: null`.
    let anonymous = [
        "not json".to_owned(),
        "{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": \"ping\"".to_owned(),
        "x\nok: skills[0].git: all bundles verified and published\n\u{1b}[8m".to_owned(),
        "[1, 2]".to_owned(),
        r#"{"jsonrpc":"2.0","id":{"nested":1},"method":"ping"}"#.to_owned(),
    ];
    let anonymous_lines = anonymous.iter().map(|l| l.lines().count()).sum::<usize>();
    // Lines that must never be answered: notifications, responses, blank lines.
    let silent = [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#,
        r#"{"jsonrpc":"2.0","id":"r1","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
        "",
        "   ",
    ];
    for (_, line, _) in &requests {
        server.line(line);
    }
    for line in &anonymous {
        server.line(line);
    }
    for line in silent {
        server.line(line);
    }
    let ids: Vec<Value> = requests.iter().map(|(id, _, _)| id.clone()).collect();
    let answers = server.answers(&ids);
    for (id, line, want) in &requests {
        let got = answers
            .get(&id.to_string())
            .unwrap_or_else(|| panic!("no answer to {line}"));
        assert_eq!(got.len(), 1, "{line}: {got:?}");
        if *want == 0 {
            assert!(got[0].get("result").is_some(), "{line}: {}", got[0]);
        } else {
            assert_eq!(code(&got[0]), *want, "{line}: {}", got[0]);
        }
    }
    // The hostile line is three lines: each is answered on its own.
    let nulls = answers.get("null").cloned().unwrap_or_default();
    assert_eq!(nulls.len(), anonymous_lines, "{nulls:?}");
    let parse_errors = nulls.iter().filter(|a| code(a) == -32700).count();
    assert_eq!(parse_errors, anonymous_lines - 2, "{nulls:?}");
    assert!(
        nulls
            .iter()
            .all(|a| a.as_object().unwrap().contains_key("id"))
    );
    assert_eq!(
        answers.values().map(Vec::len).sum::<usize>(),
        requests.len() + anonymous_lines,
        "nothing else was answered: {answers:?}"
    );
    // Still serving.
    server.line(r#"{"jsonrpc":"2.0","id":"after","method":"tools/list"}"#);
    let after = server.next(WAIT).expect("still serving");
    assert_eq!(after["id"], "after");
    assert_eq!(after["result"]["tools"][0]["name"], "load_skill");
    let (status, stderr) = server.close();
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stderr.contains("ignored a message"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn a_200_mb_line_is_refused_in_bounded_memory_and_the_server_keeps_serving() {
    let world = demo_world();
    let mut server = Server::start(&world);
    server.initialize("2025-06-18");
    // Exactly the bound: read and answered by rmcp. One byte more: refused with its id.
    let at_bound = |id: &str, size: usize| {
        let mut line = format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}"#).into_bytes();
        line.resize(size, b' ');
        line.push(b'\n');
        line
    };
    server.send(&at_bound("fits", MAX_MESSAGE_BYTES));
    server.send(&at_bound("over", MAX_MESSAGE_BYTES + 1));
    let start = Instant::now();
    let head = br#"{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"load_skill","arguments":{"name":""#;
    server.send(head);
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..200 {
        server.send(&chunk);
    }
    server.send(b"\",\"reference\":null}}}\n");
    server.line(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    let answers = server.answers(&[json!("fits"), json!("over"), json!("huge"), json!("after")]);
    let elapsed = start.elapsed();
    let one = |id: &str| {
        let got = &answers[&json!(id).to_string()];
        assert_eq!(got.len(), 1, "{id}: {got:?}");
        got[0].clone()
    };
    assert!(one("fits").get("result").is_some(), "{}", one("fits"));
    assert_eq!(code(&one("over")), -32600);
    let huge = one("huge");
    assert_eq!(code(&huge), -32600, "{huge}");
    assert!(
        huge["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&MAX_MESSAGE_BYTES.to_string()),
        "{huge}"
    );
    assert!(one("after").get("result").is_some());
    assert_eq!(answers.len(), 4, "{answers:?}");
    let peak = server.peak_rss();
    assert!(
        peak < 96 * 1024 * 1024,
        "the server held {peak} bytes for a 200 MB line"
    );
    let (status, stderr) = server.close();
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stderr.contains("refused a message larger than"), "{stderr}");
    eprintln!(
        "a 200 MB line: refused in {:.2} s, server peak RSS {} MiB",
        elapsed.as_secs_f64(),
        peak / (1024 * 1024)
    );
}

#[test]
fn output_schemas_are_listed_for_the_revisions_that_define_them() {
    let world = demo_world();
    // The library's own definition of the tool, as a host gets it.
    let catalogue = skillfold::Runtime::open(&world.config)
        .expect("open")
        .runtime
        .catalogue(None)
        .expect("catalogue");
    let output_schema = catalogue
        .tools()
        .into_iter()
        .find(|t| t.name == "load_skill")
        .expect("load_skill")
        .output_schema;
    for (protocol, shown) in [("2025-03-26", false), ("2025-06-18", true)] {
        let mut server = Server::start(&world);
        let init = server.initialize(protocol);
        assert_eq!(init["result"]["protocolVersion"], protocol);
        server.line(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
        let list = server.next(WAIT).expect("tools/list");
        let tool = &list["result"]["tools"][0];
        assert_eq!(tool["name"], "load_skill");
        if shown {
            assert_eq!(tool["outputSchema"], output_schema, "{protocol}");
        } else {
            assert!(tool.get("outputSchema").is_none(), "{protocol}: {tool}");
        }
        let (status, stderr) = server.close();
        assert_eq!(status, Some(0), "{stderr}");
    }
}

/// A local bundle whose supporting file name forges a log line and hides the terminal: the
/// bundle is refused at start, and the warnings that name it are escaped.
fn hostile_world() -> World {
    let world = demo_world();
    let hostile = "x\nok: skills[0].git: all bundles verified and published\n\u{1b}[8m.md";
    fs_err::write(world.tmp.path().join("demo/references").join(hostile), "x").expect("write");
    world
}

#[test]
fn serve_diagnostics_escape_names_from_input() {
    let world = hostile_world();
    let out = Command::new(BIN)
        .args(["serve", "-c"])
        .arg(&world.config)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("is not served"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("skillfold serve") || l.starts_with("  ")),
        "a line was forged: {stderr}"
    );
    assert!(stderr.contains("\\u{1b}[8m"), "{stderr}");
}

#[test]
fn a_full_stderr_does_not_stop_the_server() {
    let world = hostile_world();
    let full = fs_err::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut child = Command::new(BIN)
        .args(["serve", "-c"])
        .arg(&world.config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(full.into_parts().0))
        .spawn()
        .expect("start");
    let mut stdin = child.stdin.take().expect("stdin");
    // A warning at start (the refused bundle) and one per refused line: all go to a full stderr.
    let mut big = vec![b' '; MAX_MESSAGE_BYTES + 1];
    big.push(b'\n');
    stdin.write_all(&big).expect("write");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n")
        .expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one answer");
    assert_eq!(code(&answer), -32600);
}
