//! `skillfold serve --listen` over raw HTTP: who gets in (no token, a wrong token, another
//! agent's token, a valid one; a session id replayed at another endpoint or with another token;
//! `Origin` allowed or refused), the probes, the bounds (request bodies, slow headers, idle
//! connections, a flood of sessions), bad input, and the refusals at start. The MCP sessions
//! themselves are driven by the Python SDK in `tests/it/mcp.rs`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::http_raw::{Answer, INITIALIZE, mcp_headers, parse, post, send, send_to};
use super::mcp_client::Listening;
use super::support::bin::{skillfold_in, stderr};
use super::support::world::{World, local_entry, sha256};

/// Two local bundles, `alpha` for the defaults and `beta` for the agent `writer`, and a tokens
/// file with two default tokens and one for `writer`.
pub(super) fn tokens_world() -> World {
    let world = World::new();
    let mut entries = String::new();
    for (name, agent) in [("alpha", false), ("beta", true)] {
        let digest = world.bundle(
            name,
            &format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"),
            &[],
        );
        let entry = local_entry(name, "'1'", name, &digest);
        if agent {
            entries.push_str(&format!("agents:\n  writer:\n    skills:\n  {entry}"));
        } else {
            entries.insert_str(0, &format!("skills:\n{entry}"));
        }
    }
    world.descriptor(&entries);
    fs_err::write(
        world.path("tokens.json"),
        json!([
            {"agent": null, "sha256": sha256(b"default-token")},
            {"agent": null, "sha256": sha256(b"second-default-token")},
            {"agent": "writer", "sha256": sha256(b"writer-token")},
        ])
        .to_string(),
    )
    .expect("write");
    world
}

/// `serve --listen` on the world's descriptor with its tokens file and `extra` arguments.
fn start(world: &World, extra: &[&str]) -> Listening {
    let tokens = world.tmp.path().join("tokens.json");
    let mut args = vec!["--tokens", tokens.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    Listening::start(&world.tmp.path().join("skillfold.yaml"), &args, &[])
}

#[test]
fn each_endpoint_admits_only_its_own_tokens_and_sessions_stay_with_their_opener() {
    let world = tokens_world();
    let server = start(&world, &[]);
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
        json!([{"agent": null, "sha256": sha256(b"scrape-token")}]).to_string(),
    )
    .expect("write");
    let guarded = start(
        &world,
        &[
            "--metrics-tokens",
            world
                .tmp
                .path()
                .join("metrics-tokens.json")
                .to_str()
                .expect("utf8"),
        ],
    );
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
    let world = tokens_world();
    let server = start(
        &world,
        &[
            "--allow-origin",
            "https://app.example.com:443",
            "--max-sessions",
            "2",
        ],
    );
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

    // Headers that never finish, and a connection left idle, are closed by the server (the
    // header timeout): each read ends (EOF or reset) well before the client's own 60 s read
    // timeout would, while other clients are served meanwhile. No wall-clock margin is
    // asserted: a busy machine makes the server slower, never the bound's effect different.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    slow.write_all(b"GET /heal").expect("partial headers");
    let mut idle = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .expect("request");
    let mut first = [0u8; 1024];
    assert!(idle.read(&mut first).expect("answer") > 0);
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);
    assert_closed_by_server(&mut slow, "the slow client");
    assert_closed_by_server(&mut idle, "the idle client");
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);
}

/// Asserts that the server closed `stream`: a read ends with EOF or a reset, not with the
/// client's own read timeout, and nothing more than an answer came first.
#[track_caller]
fn assert_closed_by_server(stream: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return raw,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return raw,
            Err(e) => panic!(
                "{what} was not closed by the server ({e}) after {:?}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
}

#[test]
fn the_server_refuses_to_start_exposed_or_with_bad_tokens() {
    let world = tokens_world();
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
            json!([{"agent": "ops", "sha256": sha256(b"t")}]),
            "no agent `ops`",
        ),
        (
            json!([{"agent": null, "sha256": "default-token"}]),
            "64 lowercase hex",
        ),
        (json!([{"sha256": sha256(b"t")}]), "`agent` is missing"),
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
    let world = tokens_world();
    let server = start(&world, &["--max-sessions", "1", "--session-idle", "1"]);
    let port = server.port;
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        503
    );
    // The idle session is closed, and its place given to a new one: refused (503) until then.
    // The minute is a guard against hanging, not a margin.
    let started = Instant::now();
    loop {
        let status = post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status;
        if status == 200 {
            break;
        }
        assert_eq!(status, 503);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the idle session never expired: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_audit_log_records_every_call_and_read_and_follows_rotation() {
    let world = tokens_world();
    let log = world.tmp.path().join("audit.jsonl");
    let server = start(&world, &["--audit-log", log.to_str().expect("utf8")]);
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
    let pinned = skillfold::Bundle::read_dir(&world.tmp.path().join("alpha"))
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
    assert_eq!(refused["skill"], "nope", "the skill asked for: {refused}");
    assert_eq!(refused["hash"], serde_json::Value::Null, "{refused}");
    assert_eq!(read["method"], "resources/read");
    assert_eq!(read["path"], "SKILL.md");
    assert_eq!(read["hash"], pinned.as_str());
    assert_eq!(read["bytes"], skill_md.len());
    assert_eq!(read["sha256"], sha256(&skill_md).as_str());
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
    while !log.exists() && started.elapsed() < Duration::from_secs(60) {
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

#[test]
fn https_with_a_certificate_and_key() {
    let world = tokens_world();
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
    let server = start(
        &world,
        &[
            "--tls-cert",
            cert.to_str().expect("utf8"),
            "--tls-key",
            key.to_str().expect("utf8"),
        ],
    );
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
    let world = tokens_world();
    // beta's bundle changes on disk after it was pinned: it fails verification at start.
    fs_err::write(
        world.tmp.path().join("beta/SKILL.md"),
        "---\nname: beta\ndescription: The beta skill, edited.\n---\n# beta\n",
    )
    .expect("write");
    let server = start(&world, &[]);
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
    let world = tokens_world();
    let audit = world.tmp.path().join("audit.jsonl");
    let server = start(&world, &["--audit-log", audit.to_str().expect("utf8")]);
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
        if now.0 <= before.0 && now.1 <= before.1 + 2 || started.elapsed() > Duration::from_secs(60)
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

/// The live sessions `/metrics` reports.
fn live_sessions(port: u16) -> usize {
    let metrics = send(port, "GET", "/metrics", &[], "").body;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("skillfold_sessions "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no skillfold_sessions: {metrics}"))
}

/// A POST whose headers promise 1000 bytes of body, of which it sends one and then stalls.
fn stall(port: u16, path: &str, token: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let _ = stream.write_all(
        format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
        )
        .as_bytes(),
    );
    stream
}

/// Stalled requests ([`stall`]) meant to hold places in flight.
struct Stalled {
    port: u16,
    requests: Vec<(&'static str, &'static str, TcpStream)>,
}

impl Stalled {
    fn new(port: u16) -> Stalled {
        Stalled {
            port,
            requests: Vec::new(),
        }
    }

    fn add(&mut self, path: &'static str, token: &'static str) {
        let stream = stall(self.port, path, token);
        self.requests.push((path, token, stream));
    }

    /// Sends again each stalled request the server has answered (or closed): one that arrived
    /// while an earlier request still held its place (a probe, or an answer not yet all sent)
    /// was refused, not held.
    fn resend_refused(&mut self) {
        for (path, token, stream) in &mut self.requests {
            stream.set_nonblocking(true).expect("nonblocking");
            let answered = !matches!(
                stream.peek(&mut [0u8; 1]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
            );
            stream.set_nonblocking(false).expect("blocking");
            if answered {
                *stream = stall(self.port, path, token);
            }
        }
    }

    /// Repeats `request` until it answers `status`, keeping the stalled requests in place.
    #[track_caller]
    fn eventually(&mut self, status: u16, mut request: impl FnMut() -> Answer) -> Answer {
        eventually(status, || {
            self.resend_refused();
            request()
        })
    }
}

/// Repeats `request` until it answers `status` (the server may not have seen what came before
/// it yet), for at most a minute: a guard against hanging, not a margin.
#[track_caller]
fn eventually(status: u16, mut request: impl FnMut() -> Answer) -> Answer {
    let started = Instant::now();
    loop {
        let answer = request();
        if answer.status == status {
            return answer;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never {status}: last {} {}",
            answer.status,
            answer.body
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_session_is_counted_and_bound_whatever_its_opener_sent() {
    let world = tokens_world();
    let server = start(&world, &["--max-sessions", "2"]);
    let port = server.port;
    let initialize_03_26 = INITIALIZE.replace("2025-06-18", "2025-03-26");
    let mut opened = Vec::new();
    let mut first_body = String::new();
    let mut refused = 0;
    // Openers with the protocol header (which once opened uncounted, unbound sessions),
    // without it, and of another stateful revision: never more than two live sessions.
    for round in 0..45 {
        let (headers, body): (&[(&str, &str)], &str) = match round % 3 {
            0 => (&[("MCP-Protocol-Version", "2025-06-18")], INITIALIZE),
            1 => (&[], INITIALIZE),
            _ => (
                &[("MCP-Protocol-Version", "2025-03-26")],
                initialize_03_26.as_str(),
            ),
        };
        let answer = post(port, "/mcp", Some("default-token"), headers, body);
        match answer.status {
            200 => {
                if opened.is_empty() {
                    first_body = answer.body.clone();
                }
                opened.push(answer.header("mcp-session-id").expect("id").to_owned());
            }
            503 => {
                assert!(answer.header("retry-after").is_some());
                refused += 1;
            }
            other => panic!("round {round}: {other} {}", answer.body),
        }
        assert!(live_sessions(port) <= 2, "round {round}: {}", server.log());
    }
    assert_eq!((opened.len(), refused), (2, 43));

    // Remote clients are told `skill://` locations, never the server's paths.
    assert!(
        first_body.contains("<location>\\nskill://alpha/SKILL.md\\n</location>"),
        "{first_body}"
    );
    let dir = world.tmp.path().to_str().expect("utf8");
    assert!(!first_body.contains(dir), "{first_body}");

    // The session opened with the header is bound to its token: another token of the same
    // endpoint can neither use it nor end it.
    let session = opened[0].as_str();
    let with_session = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let delete = |token: &str| {
        let headers = mcp_headers(Some(token), &with_session);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        send(port, "DELETE", "/mcp", &headers, "")
    };
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
    assert_eq!(delete("second-default-token").status, 403);
    assert_eq!(live_sessions(port), 2);
    // Its opener ends it: 204 (the Python SDK accepts 200 or 204, not 202).
    let deleted = delete("default-token");
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert_eq!(live_sessions(port), 1);
    // Gone, like an id that was never issued: 404; and there is room again.
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &with_session, list).status,
        404
    );
    let made_up = [
        ("Mcp-Session-Id", "made-up"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &made_up, list).status,
        404
    );
    assert_eq!(
        post(
            port,
            "/mcp",
            Some("default-token"),
            &[("MCP-Protocol-Version", "2025-06-18")],
            INITIALIZE
        )
        .status,
        200
    );
    assert_eq!(live_sessions(port), 2);
}

#[test]
fn requests_without_a_session_are_bounded_in_flight_per_token_and_in_total() {
    let world = tokens_world();
    // The stalled requests below must hold their places for the whole test, however slowly it
    // runs: a body timeout far beyond it.
    let server = start(
        &world,
        &[
            "--max-in-flight",
            "3",
            "--max-in-flight-per-token",
            "2",
            "--body-timeout",
            "600",
        ],
    );
    let port = server.port;
    let opened = post(port, "/mcp", Some("default-token"), &[], INITIALIZE);
    let session = opened.header("mcp-session-id").expect("id").to_owned();

    // Two requests of one token whose bodies are still arriving: a third of that token waits.
    // The probes send a body the judge refuses (400, once they hold a place): until the server
    // has seen the stalled requests, a probe must not open a session of its own.
    const PROBE: &str = "not json";
    let mut stalled = Stalled::new(port);
    stalled.add("/mcp", "default-token");
    stalled.add("/mcp", "default-token");
    let busy = stalled.eventually(429, || {
        post(port, "/mcp", Some("default-token"), &[], PROBE)
    });
    assert_eq!(busy.header("retry-after"), Some("1"));
    // Another token still gets in, up to the server's bound; then everyone waits.
    stalled.add("/mcp", "second-default-token");
    let full = stalled.eventually(503, || {
        post(port, "/agents/writer/mcp", Some("writer-token"), &[], PROBE)
    });
    assert!(full.header("retry-after").is_some(), "{}", full.body);
    // Requests of a live session are not held back.
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    post(
        port,
        "/mcp",
        Some("default-token"),
        &with_session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let listed = post(port, "/mcp", Some("default-token"), &with_session, list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    // Once the stalled clients hang up, their places are free again.
    drop(stalled);
    eventually(200, || {
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE)
    });
    eventually(200, || {
        post(
            port,
            "/agents/writer/mcp",
            Some("writer-token"),
            &[],
            INITIALIZE,
        )
    });
}

#[test]
fn stalled_bodies_are_answered_408_and_probes_stay_answerable() {
    let world = tokens_world();
    let server = start(
        &world,
        &[
            "--body-timeout",
            "20",
            "--max-connections",
            "8",
            "--max-connections-per-client",
            "4",
            // The in-flight bounds would refuse most of them early: the connection bounds are
            // what this tests.
            "--max-in-flight",
            "1000",
            "--max-in-flight-per-token",
            "1000",
        ],
    );
    let port = server.port;
    // The server gets 128 descriptors, as in the report: 140 stalled requests once took all.
    let limit = rustix::process::Rlimit {
        current: Some(128),
        maximum: Some(128),
    };
    rustix::process::prlimit(
        rustix::process::Pid::from_raw(server.pid() as i32),
        rustix::process::Resource::Nofile,
        limit,
    )
    .expect("prlimit");
    let mut stalled: Vec<TcpStream> = (0..140)
        .map(|_| stall(port, "/mcp", "default-token"))
        .collect();
    // Probes are answered while they are open: the first stalled request (admitted, its body
    // awaited) is still unanswered after them.
    let health = eventually(200, || send(port, "GET", "/healthz", &[], ""));
    assert_eq!(health.body, "ok\n");
    eventually(200, || send(port, "GET", "/readyz", &[], ""));
    stalled[0].set_nonblocking(true).expect("nonblocking");
    let mut byte = [0u8; 1];
    let pending = stalled[0].read(&mut byte);
    assert!(
        matches!(&pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the probes were answered only after the stalled requests ended: {pending:?}"
    );
    stalled[0].set_nonblocking(false).expect("blocking");
    // Every stalled request ends: those admitted with 408 once the body timeout passes, those
    // over the caps at once (closed, or 503 on a probe's place).
    let mut timed_out = 0;
    for stream in &mut stalled {
        let raw = assert_closed_by_server(stream, "a stalled request");
        let answer = parse(&raw);
        match answer.status {
            408 => timed_out += 1,
            0 | 503 => {}
            other => panic!("{other}: {}", answer.body),
        }
    }
    assert!(timed_out >= 4, "{timed_out}");
    // And the server serves as before.
    assert_eq!(
        post(port, "/mcp", Some("default-token"), &[], INITIALIZE).status,
        200
    );
}

#[test]
fn own_loopback_origins_pass_and_every_path_checks_host_and_origin() {
    let world = tokens_world();
    let server = start(&world, &[]);
    let port = server.port;
    // The server's own origins on loopback (as the MCP conformance suite's
    // dns-rebinding-protection scenario sends them) are accepted without --allow-origin.
    for host in ["localhost", "127.0.0.1", "[::1]"] {
        let authority = format!("{host}:{port}");
        let origin = format!("http://{authority}");
        let headers = mcp_headers(Some("default-token"), &[("Origin", origin.as_str())]);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let answer = send_to(port, &authority, "POST", "/mcp", &headers, INITIALIZE);
        assert_eq!(answer.status, 200, "{origin}: {}", answer.body);
    }
    // Any other origin, and any foreign Host, is refused.
    let own = format!("127.0.0.1:{port}");
    for origin in [
        "http://evil.example".to_owned(),
        format!("https://127.0.0.1:{port}"),
        "http://localhost:1".to_owned(),
        "null".to_owned(),
    ] {
        let headers = mcp_headers(Some("default-token"), &[("Origin", origin.as_str())]);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let answer = send_to(port, &own, "POST", "/mcp", &headers, INITIALIZE);
        assert_eq!(answer.status, 403, "{origin}: {}", answer.body);
    }
    // Every path, the probes and /metrics included: a rebinding page reads nothing.
    let evil = format!("evil.example:{port}");
    for path in ["/metrics", "/readyz", "/healthz", "/mcp", "/nowhere"] {
        let answer = send_to(port, &evil, "GET", path, &[], "");
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        assert!(!answer.body.contains("writer"), "{path}: {}", answer.body);
        let answer = send_to(
            port,
            &own,
            "GET",
            path,
            &[("Origin", "http://evil.example")],
            "",
        );
        assert_eq!(answer.status, 403, "{path}: {}", answer.body);
        assert!(!answer.body.contains("writer"), "{path}: {}", answer.body);
    }
    // What a foreign page would have read.
    let metrics = send_to(port, &own, "GET", "/metrics", &[], "");
    assert_eq!(metrics.status, 200);
    assert!(metrics.body.contains("writer"), "{}", metrics.body);
}
