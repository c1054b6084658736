//! `skillfold serve --listen` over raw HTTP: who gets in (no token, a wrong token, another
//! agent's token, a valid one; a session id replayed at another endpoint or with another token;
//! `Origin` allowed or refused), the probes, the bounds (request bodies, slow headers, idle
//! connections, a flood of sessions), bad input, and the refusals at start. The MCP sessions
//! themselves are driven by the Python SDK in `tests/it/mcp.rs`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;
use sha2::Digest as _;

use super::http_raw::{INITIALIZE, mcp_headers, parse, post, send};
use super::mcp_client::Listening;
use super::util::{skillfold_in, stderr};

/// A descriptor with a local default bundle and one for agent `writer`, and a tokens file.
struct World {
    tmp: tempfile::TempDir,
}

fn hash(token: &str) -> String {
    sha2::Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut entries = String::new();
        for (name, agent) in [("alpha", false), ("beta", true)] {
            let dir = tmp.path().join(name);
            fs_err::create_dir(&dir).expect("mkdir");
            fs_err::write(
                dir.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"),
            )
            .expect("write");
            let digest = skillfold::format::bundle::Bundle::read_dir(&dir)
                .expect("bundle")
                .digest();
            let entry = format!(
                "  - local: {{ name: {name}, version: '1', directory: {name}, hash: {digest} }}\n"
            );
            if agent {
                entries.push_str(&format!("agents:\n  writer:\n    skills:\n  {entry}"));
            } else {
                entries.insert_str(0, &format!("skills:\n{entry}"));
            }
        }
        fs_err::write(tmp.path().join("skillfold.yaml"), entries).expect("write");
        fs_err::write(
            tmp.path().join("tokens.json"),
            json!([
                {"agent": null, "sha256": hash("default-token")},
                {"agent": null, "sha256": hash("second-default-token")},
                {"agent": "writer", "sha256": hash("writer-token")},
            ])
            .to_string(),
        )
        .expect("write");
        World { tmp }
    }

    fn start(&self, extra: &[&str]) -> Listening {
        let tokens = self.tmp.path().join("tokens.json");
        let mut args = vec!["--tokens", tokens.to_str().expect("utf8")];
        args.extend_from_slice(extra);
        Listening::start(&self.tmp.path().join("skillfold.yaml"), &args, &[])
    }
}

#[test]
fn each_endpoint_admits_only_its_own_tokens_and_sessions_stay_with_their_opener() {
    let world = World::new();
    let server = world.start(&[]);
    let port = server.port;

    // Probes need no token and show no skill.
    let health = send(port, "GET", "/healthz", &[], "");
    assert_eq!(health.status, 200);
    let ready = send(port, "GET", "/readyz", &[], "");
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert!(ready.body.contains("\"ready\":true"), "{}", ready.body);
    assert!(!ready.body.contains("alpha"), "{}", ready.body);

    // No token, a wrong token, a malformed header: 401 with the Bearer challenge.
    for token in [None, Some("wrong-token")] {
        let answer = post(port, "/mcp", token, &[], INITIALIZE);
        assert_eq!(answer.status, 401, "{token:?}: {}", answer.body);
        assert_eq!(
            answer.header("www-authenticate"),
            Some("Bearer realm=\"skillfold\"")
        );
    }
    let answer = post(
        port,
        "/mcp",
        None,
        &[("Authorization", "Basic ZGVmYXVsdA==")],
        INITIALIZE,
    );
    assert_eq!(answer.status, 401);
    // Another agent's token: 403, both ways.
    assert_eq!(
        post(port, "/mcp", Some("writer-token"), &[], INITIALIZE).status,
        403
    );
    assert_eq!(
        post(
            port,
            "/agents/writer/mcp",
            Some("default-token"),
            &[],
            INITIALIZE
        )
        .status,
        403
    );
    // An agent the descriptor does not name, or another path: 404.
    assert_eq!(
        post(
            port,
            "/agents/nobody/mcp",
            Some("writer-token"),
            &[],
            INITIALIZE
        )
        .status,
        404
    );
    assert_eq!(send(port, "GET", "/", &[], "").status, 404);

    // A valid token opens a session at its endpoint.
    let opened = post(port, "/mcp", Some("default-token"), &[], INITIALIZE);
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert!(opened.body.contains("\"serverInfo\""), "{}", opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("session id")
        .to_owned();
    let writer = post(
        port,
        "/agents/writer/mcp",
        Some("writer-token"),
        &[],
        INITIALIZE,
    );
    assert_eq!(writer.status, 200, "{}", writer.body);
    assert!(
        writer.body.contains("beta"),
        "the writer's prompt names its extra skill"
    );

    // The session id replayed at another endpoint, or with another token of the same
    // endpoint: refused.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_eq!(
        post(
            port,
            "/agents/writer/mcp",
            Some("writer-token"),
            &with_session,
            list
        )
        .status,
        403
    );
    assert_eq!(
        post(
            port,
            "/mcp",
            Some("second-default-token"),
            &with_session,
            list
        )
        .status,
        403
    );
    // With its own token it works.
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(
            port,
            "/mcp",
            Some("default-token"),
            &with_session,
            initialized
        )
        .status,
        202
    );
    let tools = post(port, "/mcp", Some("default-token"), &with_session, list);
    assert_eq!(tools.status, 200, "{}", tools.body);
    assert!(tools.body.contains("load_skill"), "{}", tools.body);
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"alpha","reference":null}}}"#;
    let called = post(port, "/mcp", Some("default-token"), &with_session, call);
    assert!(called.body.contains("# alpha"), "{}", called.body);

    // Bad input is answered and the server keeps serving.
    let malformed = post(
        port,
        "/mcp",
        Some("default-token"),
        &with_session,
        "{not json",
    );
    assert!(
        (400..500).contains(&malformed.status),
        "{}",
        malformed.status
    );
    let put = send(
        port,
        "PUT",
        "/mcp",
        &[("Authorization", "Bearer default-token")],
        "",
    );
    assert!((400..500).contains(&put.status), "{}", put.status);
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);

    // The metrics count what was answered, and `promtool check metrics` accepts them.
    let metrics = send(port, "GET", "/metrics", &[], "");
    assert_eq!(metrics.status, 200);
    assert_eq!(
        metrics.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    for expected in [
        r#"skillfold_tool_calls_total{agent="default",tool="load_skill"#,
        "skillfold_tool_call_duration_seconds_bucket",
        r#"skillfold_http_requests_total{code="401"} 3"#,
        r#"skillfold_http_requests_total{code="403"} 4"#,
        "skillfold_sessions 2",
        r#"skillfold_catalogue_skills{agent="writer"} 2"#,
        r#"skillfold_build_info{version=""#,
    ] {
        assert!(
            metrics.body.contains(expected),
            "{expected} in:\n{}",
            metrics.body
        );
    }
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (Debian's `prometheus` package; scripts/test installs it)");
    promtool
        .stdin
        .take()
        .expect("stdin")
        .write_all(metrics.body.as_bytes())
        .expect("write");
    let checked = promtool.wait_with_output().expect("promtool");
    assert!(
        checked.status.success(),
        "promtool: {}{}\n{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr),
        metrics.body
    );

    // With --metrics-tokens, /metrics needs one of those tokens (and no agent's token will do).
    fs_err::write(
        world.tmp.path().join("metrics-tokens.json"),
        json!([{"agent": null, "sha256": hash("scrape-token")}]).to_string(),
    )
    .expect("write");
    let guarded = world.start(&[
        "--metrics-tokens",
        world
            .tmp
            .path()
            .join("metrics-tokens.json")
            .to_str()
            .expect("utf8"),
    ]);
    let scrape = |token: Option<&str>| {
        let header = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = header
            .as_deref()
            .map(|h| vec![("Authorization", h)])
            .unwrap_or_default();
        send(guarded.port, "GET", "/metrics", &headers, "").status
    };
    assert_eq!(scrape(None), 401);
    assert_eq!(scrape(Some("default-token")), 401);
    assert_eq!(scrape(Some("scrape-token")), 200);

    // No token ever reaches the log.
    let log = server.log();
    for token in ["default-token", "writer-token", "wrong-token"] {
        assert!(!log.contains(token), "{log}");
    }
}

#[test]
fn origins_bodies_headers_and_sessions_are_bounded() {
    let world = World::new();
    let server = world.start(&[
        "--allow-origin",
        "https://app.example.com:443",
        "--max-sessions",
        "2",
    ]);
    let port = server.port;

    // Origin: the allowed one passes, any other present Origin is refused.
    let allowed = post(
        port,
        "/mcp",
        Some("default-token"),
        &[("Origin", "https://app.example.com")],
        INITIALIZE,
    );
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let refused = post(
        port,
        "/mcp",
        Some("default-token"),
        &[("Origin", "https://evil.example.com")],
        INITIALIZE,
    );
    assert_eq!(refused.status, 403, "{}", refused.body);

    // A body over 1 MiB is refused before it has all been sent.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let declared = 4 * 1024 * 1024;
    stream
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer default-token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n"
            )
            .as_bytes(),
        )
        .expect("headers");
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..24 {
        if stream.write_all(&chunk).is_err() {
            break;
        }
    }
    let mut raw = vec![0; 4096];
    let n = stream.read(&mut raw).unwrap_or(0);
    assert_eq!(
        parse(&raw[..n]).status,
        413,
        "{}",
        String::from_utf8_lossy(&raw[..n])
    );

    // A second session fits; a third is refused with Retry-After while two are live.
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
    let flood = post(port, "/mcp", Some("default-token"), &[], INITIALIZE);
    assert_eq!(flood.status, 503, "{}", flood.body);
    assert!(flood.header("retry-after").is_some());

    // Headers that never finish, and a connection left idle, are closed after 10 s.
    let started = Instant::now();
    let mut slow = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    slow.write_all(b"GET /heal").expect("partial headers");
    let mut idle = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("request");
    let mut first = [0u8; 1024];
    assert!(idle.read(&mut first).expect("answer") > 0);
    let mut rest = [0u8; 64];
    assert_eq!(
        slow.read(&mut rest).unwrap_or(0),
        0,
        "the slow client was closed"
    );
    assert_eq!(
        idle.read(&mut rest).unwrap_or(0),
        0,
        "the idle client was closed"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(9) && waited < Duration::from_secs(20),
        "{waited:?}"
    );
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);
}

#[test]
fn the_server_refuses_to_start_exposed_or_with_bad_tokens() {
    let world = World::new();
    let dir = world.tmp.path();
    // A reachable address without tokens.
    let out = skillfold_in(dir, &["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[insecure_listen]"),
        "{}",
        stderr(&out)
    );
    // Tokens naming an agent the descriptor does not have, or holding a token instead of a hash.
    for (text, expected) in [
        (
            json!([{"agent": "ops", "sha256": hash("t")}]),
            "no agent `ops`",
        ),
        (
            json!([{"agent": null, "sha256": "default-token"}]),
            "64 lowercase hex",
        ),
        (json!([{"sha256": hash("t")}]), "`agent` is missing"),
    ] {
        fs_err::write(dir.join("bad.json"), text.to_string()).expect("write");
        let out = skillfold_in(
            dir,
            &["serve", "--listen", "127.0.0.1:0", "--tokens", "bad.json"],
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("[invalid_tokens]"),
            "{}",
            stderr(&out)
        );
    }
    // --listen serves every agent: --agent makes no sense with it.
    let out = skillfold_in(
        dir,
        &["serve", "--listen", "127.0.0.1:0", "--agent", "writer"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // The same JSON from the environment works like the file.
    let tokens = fs_err::read_to_string(dir.join("tokens.json")).expect("read");
    let server = Listening::start(
        &dir.join("skillfold.yaml"),
        &[],
        &[("SKILLFOLD_SERVE_TOKENS", &tokens)],
    );
    assert_eq!(post(server.port, "/mcp", None, &[], INITIALIZE).status, 401);
    assert_eq!(
        post(server.port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
}

#[test]
fn idle_sessions_expire_and_make_room() {
    let world = World::new();
    let server = world.start(&["--max-sessions", "1", "--session-idle", "1"]);
    let port = server.port;
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        503
    );
    let started = Instant::now();
    loop {
        let status = post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status;
        if status == 200 {
            break;
        }
        assert_eq!(status, 503);
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the idle session never expired: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_audit_log_records_every_call_and_read_and_follows_rotation() {
    let world = World::new();
    let log = world.tmp.path().join("audit.jsonl");
    let server = world.start(&["--audit-log", log.to_str().expect("utf8")]);
    let port = server.port;
    let opened = post(port, "/mcp", Some("default-token"), &[], INITIALIZE);
    let session = opened.header("mcp-session-id").expect("session").to_owned();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let rpc = |body: &str| post(port, "/mcp", Some("default-token"), &headers, body);
    rpc(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    rpc(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"alpha","reference":null}}}"#,
    );
    rpc(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"nope","reference":null}}}"#,
    );
    rpc(
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://alpha/SKILL.md"}}"#,
    );
    rpc(
        r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"skill://alpha/none.md"}}"#,
    );

    let lines: Vec<serde_json::Value> = fs_err::read_to_string(&log)
        .expect("audit log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let skill_md = fs_err::read(world.tmp.path().join("alpha/SKILL.md")).expect("read");
    let pinned = skillfold::format::bundle::Bundle::read_dir(&world.tmp.path().join("alpha"))
        .expect("bundle")
        .digest()
        .to_string();
    let (call, refused, read, missing) = (&lines[0], &lines[1], &lines[2], &lines[3]);
    assert_eq!(call["method"], "tools/call");
    assert_eq!(call["tool"], "load_skill");
    assert_eq!(call["agent"], serde_json::Value::Null);
    assert_eq!(call["session"], session.as_str());
    assert_eq!(call["skill"], "alpha");
    assert_eq!(call["version"], "1");
    assert_eq!(call["hash"], pinned.as_str());
    assert_eq!(call["outcome"], "ok");
    assert!(
        call["sha256"].as_str().is_some_and(|h| h.len() == 64),
        "{call}"
    );
    assert!(
        call["time"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{call}"
    );
    assert_eq!(refused["outcome"], "refused");
    assert_eq!(refused["code"], "validation_error");
    assert_eq!(read["method"], "resources/read");
    assert_eq!(read["path"], "SKILL.md");
    assert_eq!(read["hash"], pinned.as_str());
    assert_eq!(read["bytes"], skill_md.len());
    assert_eq!(read["sha256"], hash_bytes(&skill_md).as_str());
    assert_eq!(missing["outcome"], "refused");
    assert_eq!(missing["code"], "resource_not_found");
    let text = fs_err::read_to_string(&log).expect("audit log");
    assert!(!text.contains("default-token"), "{text}");
    assert!(!text.contains("# alpha"), "no content: {text}");

    // Rotation: the file is moved away, SIGHUP reopens the path.
    let rotated = world.tmp.path().join("audit.jsonl.1");
    fs_err::rename(&log, &rotated).expect("rotate");
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .expect("kill -HUP");
    assert!(hup.success());
    let started = Instant::now();
    while !log.exists() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    rpc(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"alpha","reference":null}}}"#,
    );
    assert_eq!(
        fs_err::read_to_string(&rotated)
            .expect("rotated")
            .lines()
            .count(),
        4
    );
    assert_eq!(
        fs_err::read_to_string(&log)
            .expect("new log")
            .lines()
            .count(),
        1
    );
    assert_eq!(
        send(port, "GET", "/healthz", &[], "").status,
        200,
        "SIGHUP did not stop it"
    );
}

fn hash_bytes(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn https_with_a_certificate_and_key() {
    let world = World::new();
    let dir = world.tmp.path();
    let openssl = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=skillfold test",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
        ])
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        openssl.status.success(),
        "{}",
        String::from_utf8_lossy(&openssl.stderr)
    );
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let server = world.start(&[
        "--tls-cert",
        cert.to_str().expect("utf8"),
        "--tls-key",
        key.to_str().expect("utf8"),
    ]);
    assert!(
        server.log().contains("listening on https://"),
        "{}",
        server.log()
    );
    let curl = |args: &[&str]| {
        std::process::Command::new("curl")
            .args([
                "-sS",
                "--cacert",
                "cert.pem",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("curl")
    };
    let url = format!("https://127.0.0.1:{}", server.port);
    let health = curl(&[&format!("{url}/healthz")]);
    assert_eq!(
        String::from_utf8_lossy(&health.stdout),
        "200",
        "{}",
        String::from_utf8_lossy(&health.stderr)
    );
    let init = curl(&[
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: application/json, text/event-stream",
        "-H",
        "Authorization: Bearer default-token",
        "--data",
        INITIALIZE,
        &format!("{url}/mcp"),
    ]);
    assert_eq!(String::from_utf8_lossy(&init.stdout), "200");
    // Plain HTTP to the TLS port gets no HTTP answer.
    assert_eq!(send(server.port, "GET", "/healthz", &[], "").status, 0);

    // A key that does not go with the certificate, or a file that is not PEM: refused at start.
    let other = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out", "other.pem"])
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(other.status.success());
    for (cert, key) in [("cert.pem", "other.pem"), ("tokens.json", "key.pem")] {
        let out = skillfold_in(
            dir,
            &[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--tls-cert",
                cert,
                "--tls-key",
                key,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("[invalid_tls]"), "{}", stderr(&out));
    }
}

#[test]
fn readiness_waits_for_every_approved_bundle() {
    let world = World::new();
    // beta's bundle changes on disk after it was pinned: it fails verification at start.
    fs_err::write(
        world.tmp.path().join("beta/SKILL.md"),
        "---\nname: beta\ndescription: The beta skill, edited.\n---\n# beta\n",
    )
    .expect("write");
    let server = world.start(&[]);
    let ready = send(server.port, "GET", "/readyz", &[], "");
    assert_eq!(ready.status, 503, "{}", ready.body);
    let reason: serde_json::Value = serde_json::from_str(&ready.body).expect("JSON");
    assert_eq!(reason["ready"], false);
    assert_eq!(reason["endpoints"], json!(["/agents/writer/mcp"]));
    assert!(!ready.body.contains("edited"), "no content: {}", ready.body);
    // The process is alive, and the rest is served.
    assert_eq!(send(server.port, "GET", "/healthz", &[], "").status, 200);
    assert_eq!(
        post(server.port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
}

/// Open file descriptors and threads of a process, from /proc.
fn resources(pid: u32) -> (usize, usize) {
    let fds = fs_err::read_dir(format!("/proc/{pid}/fd"))
        .expect("fds")
        .count();
    let status = fs_err::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads:");
    (fds, threads)
}

/// Clients that hang up in the middle of an answer (after its first bytes, or before reading
/// anything) leave no connection, task, session or half-written audit record behind: the
/// server's descriptors and threads return to where they were, its session count does not move,
/// and the same session keeps answering in full.
#[test]
fn clients_that_disconnect_mid_response_leave_nothing_behind() {
    let world = World::new();
    let audit = world.tmp.path().join("audit.jsonl");
    let server = world.start(&["--audit-log", audit.to_str().expect("utf8")]);
    let port = server.port;
    let opened = post(port, "/mcp", Some("default-token"), &[], INITIALIZE);
    let session = opened.header("mcp-session-id").expect("session").to_owned();
    let headers = mcp_headers(
        Some("default-token"),
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
    );
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"alpha","reference":null}}}"#;
    send(
        port,
        "POST",
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert!(
        send(port, "POST", "/mcp", &headers, call)
            .body
            .contains("# alpha")
    );
    std::thread::sleep(Duration::from_millis(300));
    let before = resources(server.pid());

    for round in 0..60 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
            call.len()
        );
        for (name, value) in &headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(call);
        stream.write_all(request.as_bytes()).expect("send");
        if round % 2 == 0 {
            // Read the first bytes of the answer, then hang up.
            let mut first = [0u8; 16];
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .expect("timeout");
            let _ = stream.read(&mut first);
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }

    // Everything the hung-up requests opened is released (allowing for a moment to notice).
    let started = Instant::now();
    let after = loop {
        let now = resources(server.pid());
        if now.0 <= before.0 && now.1 <= before.1 + 2 || started.elapsed() > Duration::from_secs(10)
        {
            break now;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        after.0 <= before.0 && after.1 <= before.1 + 2,
        "descriptors/threads before {before:?}, after {after:?}"
    );
    let metrics = send(port, "GET", "/metrics", &[], "").body;
    assert!(metrics.contains("\nskillfold_sessions 1\n"), "{metrics}");
    let answer = send(port, "POST", "/mcp", &headers, call);
    assert_eq!(answer.status, 200, "{}", server.log());
    assert!(answer.body.contains("# alpha"), "{}", answer.body);
    // Every audit line is a whole JSON record.
    for line in fs_err::read_to_string(&audit).expect("audit").lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("a whole record per line");
    }
}
