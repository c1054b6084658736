//! The JSON-RPC answers of `skillfold serve`, the same on both transports: a table of hostile
//! messages (not JSON, a batch, `id: null`, no `method`, `tools/call` with bad params, …) is sent
//! as stdio lines and as HTTP POST bodies (of the stateful revisions and of 2026-07-28), and each
//! gets the same JSON-RPC error code and id, over HTTP with a status the MCP Streamable HTTP
//! transport allows (400 for a body it cannot accept, 200 for a request answered with an error);
//! a broken chunked body and an oversized one are answered with JSON-RPC errors too; a method the
//! server does not serve is not found whatever its params (404 on the 2026-07-28 path), and a
//! resource not found names its URI. Also: the audit log escapes what a client chose, `SIGHUP`
//! without `--watch` ends neither server, and `Host`, `Authorization` or `Origin` sent twice is 400.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use super::http_raw::{self, INITIALIZE, post, send, send_raw};
use super::mcp_client::Listening;
use super::mcp_framing::{Server, demo_world};

/// Hostile messages and the JSON-RPC error code and id every transport answers them with.
fn hostile() -> Vec<(&'static str, String, i64, Value)> {
    let call = |params: Value| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).to_string()
    };
    vec![
        ("not JSON", "not json".to_owned(), -32700, Value::Null),
        (
            "cut short",
            r#"{"jsonrpc":"2.0","id":3"#.to_owned(),
            -32700,
            Value::Null,
        ),
        (
            "a batch",
            r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#.to_owned(),
            -32600,
            Value::Null,
        ),
        ("a number", "5".to_owned(), -32600, Value::Null),
        (
            "id null",
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_owned(),
            -32600,
            Value::Null,
        ),
        (
            "no method",
            r#"{"jsonrpc":"2.0","id":7}"#.to_owned(),
            -32600,
            json!(7),
        ),
        (
            "jsonrpc 1.0",
            r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#.to_owned(),
            -32600,
            json!(8),
        ),
        (
            "method not a string",
            r#"{"jsonrpc":"2.0","id":9,"method":3}"#.to_owned(),
            -32600,
            json!(9),
        ),
        (
            "arguments a string",
            call(json!({"name": "load_skill", "arguments": "x"})),
            -32602,
            json!(2),
        ),
        (
            "no tool name",
            call(json!({"arguments": {}})),
            -32602,
            json!(2),
        ),
        (
            "initialize without params",
            r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#.to_owned(),
            -32602,
            json!("i"),
        ),
        // A key written twice: which copy counts is up to the parser, so none does; at the top,
        // not even the id.
        (
            "id written twice",
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_owned(),
            -32600,
            Value::Null,
        ),
        (
            "method written twice",
            r#"{"jsonrpc":"2.0","id":11,"method":"ping","method":"tools/list"}"#.to_owned(),
            -32600,
            Value::Null,
        ),
        (
            "jsonrpc written twice",
            r#"{"jsonrpc":"2.0","id":12,"jsonrpc":"2.0","method":"ping"}"#.to_owned(),
            -32600,
            Value::Null,
        ),
        (
            "a params key written twice",
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"load_skill","name":"x","arguments":{}}}"#.to_owned(),
            -32600,
            json!(13),
        ),
    ]
}

/// The JSON-RPC message in an HTTP answer's body: JSON, or the `data:` of an SSE event.
pub(super) fn message_of(answer: &http_raw::Answer) -> Value {
    let body = answer.body.trim();
    let text = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|data| !data.is_empty())
        .unwrap_or(body);
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not a JSON-RPC answer ({e}): {} {body}", answer.status))
}

fn code_and_id(message: &Value) -> (i64, Value) {
    (
        message["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {message}")),
        message["id"].clone(),
    )
}

#[test]
fn the_same_hostile_message_gets_the_same_json_rpc_error_on_both_transports() {
    let world = demo_world();
    let mut stdio = Server::start(&world);
    stdio.initialize("2025-06-18");
    let http = Listening::start(&world.config, &[], &[]);
    // A session of a stateful revision, to send the table inside it too.
    let opened = post(http.port, "/mcp", None, &[], INITIALIZE);
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let stateless = [("MCP-Protocol-Version", "2026-07-28")];
    let ways: [(&str, &[(&str, &str)]); 3] = [
        ("a new client", &[]),
        ("a session", &in_session),
        ("2026-07-28", &stateless),
    ];
    for (what, message, code, id) in hostile() {
        stdio.line(&message);
        let answer = stdio
            .next(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{what}: no answer on stdio"));
        assert_eq!(code_and_id(&answer), (code, id.clone()), "stdio, {what}");
        // A response always has an `id` member, `null` when the request's cannot be known.
        assert!(answer.get("id").is_some(), "stdio, {what}: {answer}");
        for (way, headers) in ways {
            let answer = post(http.port, "/mcp", None, headers, &message);
            let mut expected_status = if code == -32602 { 200 } else { 400 };
            let (mut code, mut id) = (code, id.clone());
            if way == "2026-07-28" && message.contains(r#""method":"initialize""#) {
                // That revision removed the handshake: not found, before its params are judged.
                (expected_status, code, id) = (404, -32601, id);
            }
            assert_eq!(
                answer.status, expected_status,
                "HTTP ({way}), {what}: {}",
                answer.body
            );
            assert_eq!(
                answer.header("content-type"),
                Some("application/json"),
                "HTTP ({way}), {what}"
            );
            assert_eq!(
                code_and_id(&message_of(&answer)),
                (code, id),
                "HTTP ({way}), {what}"
            );
        }
    }
    // The servers kept serving: a good request after the table is answered on both.
    stdio.line(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    let pong = stdio.next(Duration::from_secs(30)).expect("pong");
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!("after"), json!({}))
    );
    let pong = post(
        http.port,
        "/mcp",
        None,
        &in_session,
        r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#,
    );
    assert_eq!(pong.status, 200, "{}", pong.body);
    assert_eq!(message_of(&pong)["id"], "after", "{}", pong.body);
    let (code, _) = stdio.close();
    assert_eq!(code, Some(0));
}

/// RFC 8259 §8.1 lets a parser ignore a leading byte order mark: both transports do, so a message
/// that starts with one gets the answer it gets without one (a pong on stdio and in a session,
/// a session opened by an `initialize`), never HTTP 415.
#[test]
fn a_message_that_starts_with_a_byte_order_mark_gets_the_same_answer_on_both_transports() {
    let world = demo_world();
    let mut stdio = Server::start(&world);
    stdio.initialize("2025-06-18");
    let http = Listening::start(&world.config, &[], &[]);
    let ping = "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":\"bom\",\"method\":\"ping\"}";
    stdio.line(ping);
    let pong = stdio.next(Duration::from_secs(30)).expect("an answer");
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!("bom"), json!({}))
    );
    let opened = post(
        http.port,
        "/mcp",
        None,
        &[],
        &format!("\u{feff}{INITIALIZE}"),
    );
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert!(
        message_of(&opened)["result"]["serverInfo"].is_object(),
        "{}",
        opened.body
    );
    let session = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let in_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let pong = post(http.port, "/mcp", None, &in_session, ping);
    assert_eq!(pong.status, 200, "{}", pong.body);
    let pong = message_of(&pong);
    assert_eq!(
        (pong["id"].clone(), pong["result"].clone()),
        (json!("bom"), json!({}))
    );
    let (code, _) = stdio.close();
    assert_eq!(code, Some(0));
}

/// The 2026-07-28 revision removed `initialize` (its clients use `server/discover`): sent on
/// that revision's path (its `MCP-Protocol-Version` header), it is not found, 404 with `-32601`
/// and its id, as the other removed methods are, whatever its params; without that header (a
/// client of an earlier revision, whatever version it asks for) it opens a session.
#[test]
fn initialize_on_the_2026_07_28_path_is_not_found() {
    let world = demo_world();
    let http = Listening::start(&world.config, &[], &[]);
    let stateless = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "initialize"),
    ];
    let asking = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}, "_meta": stateless_meta()}})
        .to_string()
    };
    for body in [
        asking("2026-07-28"),
        asking("2025-06-18"),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#.to_owned(),
    ] {
        let answer = post(http.port, "/mcp", None, &stateless, &body);
        assert_eq!(answer.status, 404, "{body}: {}", answer.body);
        assert_eq!(
            code_and_id(&message_of(&answer)),
            (-32601, json!(1)),
            "{body}"
        );
        assert!(answer.header("mcp-session-id").is_none(), "{body}");
    }
    let opened = post(http.port, "/mcp", None, &[], &asking("2026-07-28"));
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert!(opened.header("mcp-session-id").is_some(), "{}", opened.body);
}

/// A notification or response that cannot be used: never answered on stdio; over HTTP, which
/// must answer every POST, 400 with a JSON-RPC error without an id.
#[test]
fn an_unusable_notification_is_refused_over_http_and_unanswered_on_stdio() {
    let world = demo_world();
    let mut stdio = Server::start(&world);
    stdio.initialize("2025-06-18");
    let http = Listening::start(&world.config, &[], &[]);
    let messages = [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
    ];
    for message in messages {
        stdio.line(message);
        let answer = post(http.port, "/mcp", None, &[], message);
        assert_eq!(answer.status, 400, "{message}: {}", answer.body);
        assert_eq!(
            code_and_id(&message_of(&answer)),
            (-32600, Value::Null),
            "{message}"
        );
    }
    stdio.line(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    let next = stdio.next(Duration::from_secs(30)).expect("an answer");
    assert_eq!(next["id"], "after", "only the ping is answered: {next}");
    let (code, _) = stdio.close();
    assert_eq!(code, Some(0));
}

#[test]
fn broken_empty_and_oversized_bodies_get_json_rpc_errors() {
    let world = demo_world();
    let http = Listening::start(&world.config, &[], &[]);
    let port = http.port;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    // A chunk size that is not hexadecimal.
    let broken = format!("{head}Transfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n");
    let answer = send_raw(port, broken.as_bytes());
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(code_and_id(&message_of(&answer)), (-32700, Value::Null));
    // An empty body and a blank one.
    for body in ["", " \r\n\t"] {
        let answer = post(port, "/mcp", None, &[], body);
        assert_eq!(answer.status, 400, "{body:?}: {}", answer.body);
        assert_eq!(code_and_id(&message_of(&answer)), (-32700, Value::Null));
    }
    // A body over the bound, in chunks: refused with the id its start shows, before it has all
    // been sent (the writing may fail once the server has answered and closed).
    // The bound on a request body: 1 MiB (docs/mcp.md).
    let max = 1024 * 1024;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let chunk = |data: &[u8]| {
        let mut framed = format!("{:x}\r\n", data.len()).into_bytes();
        framed.extend(data);
        framed.extend(b"\r\n");
        framed
    };
    let mut first = format!("{head}Transfer-Encoding: chunked\r\n\r\n").into_bytes();
    first.extend(chunk(
        br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":""#,
    ));
    stream.write_all(&first).expect("headers");
    let filler = chunk(&[b'a'; 64 * 1024]);
    for _ in 0..(max / filler.len() + 8) {
        if stream.write_all(&filler).is_err() {
            break;
        }
    }
    let mut raw = vec![0; 4096];
    let n = stream.read(&mut raw).unwrap_or(0);
    let answer = http_raw::parse(&raw[..n]);
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(code_and_id(&message_of(&answer)), (-32600, json!(42)));
    // The server still answers.
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);
}

/// Opens a session of the 2025-06-18 revision at `/mcp`; the headers to send inside it.
fn open_session(port: u16) -> Vec<(&'static str, String)> {
    open_session_at(port, "/mcp")
}

/// Opens a session of the 2025-06-18 revision at the endpoint `path`; the headers to send inside it.
pub(super) fn open_session_at(port: u16, path: &str) -> Vec<(&'static str, String)> {
    let opened = post(port, path, None, &[], INITIALIZE);
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened.header("mcp-session-id").expect("a session id");
    let headers = vec![
        ("Mcp-Session-Id", session.to_owned()),
        ("MCP-Protocol-Version", "2025-06-18".to_owned()),
    ];
    let borrowed: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let initialized = post(
        port,
        path,
        None,
        &borrowed,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(initialized.status, 202, "{}", initialized.body);
    headers
}

#[test]
fn the_audit_log_escapes_what_a_client_chose_and_stays_json() {
    let world = demo_world();
    let log = world.tmp.path().join("audit.jsonl");
    let http = Listening::start(
        &world.config,
        &["--audit-log", log.to_str().expect("utf8")],
        &[],
    );
    let headers = open_session(http.port);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let hostile = "\u{202e}\u{2028}\u{9b}\u{7f}\u{feff}\u{1b}[8m";
    for uri in [
        format!("skill://demo/{hostile}.md"),
        format!("file:///{hostile}"),
    ] {
        let read = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read",
            "params": {"uri": uri}});
        let answer = post(http.port, "/mcp", None, &headers, &read.to_string());
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    let call = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": hostile, "reference": hostile}}});
    let answer = post(http.port, "/mcp", None, &headers, &call.to_string());
    assert_eq!(answer.status, 200, "{}", answer.body);
    let text = (0..200)
        .find_map(|_| {
            let text = fs_err::read_to_string(&log).unwrap_or_default();
            if text.lines().count() >= 3 {
                return Some(text);
            }
            std::thread::sleep(Duration::from_millis(50));
            None
        })
        .unwrap_or_else(|| {
            panic!(
                "three audit lines: {}",
                fs_err::read_to_string(&log).unwrap_or_default()
            )
        });
    // Every character of `hostile` but the printable `[8m` is one the log shows escaped.
    for character in [
        '\u{202e}', '\u{2028}', '\u{9b}', '\u{7f}', '\u{feff}', '\u{1b}',
    ] {
        assert!(
            !text.contains(character),
            "U+{:04X} written raw: {text}",
            character as u32
        );
    }
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let escaped = r"\u{202e}\u{2028}\u{9b}\u{7f}\u{feff}\u{1b}[8m";
    assert_eq!(
        records[0]["uri"],
        format!("skill://demo/{escaped}.md"),
        "{text}"
    );
    assert_eq!(records[0]["path"], format!("{escaped}.md"), "{text}");
    assert_eq!(records[1]["uri"], format!("file:///{escaped}"), "{text}");
    assert_eq!(records[2]["tool"], "load_skill", "{text}");
    // A refused call names the skill asked for, escaped as the rest.
    assert_eq!(records[2]["outcome"], "refused", "{text}");
    assert_eq!(records[2]["skill"], escaped, "{text}");
}

/// Whether process `pid` is still running (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    fs_err::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
}

fn hang_up(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[test]
fn sighup_without_watch_ends_neither_server() {
    let world = demo_world();
    // stdio: the session answers after two hang-ups, and the exit is still 0.
    let mut stdio = Server::start(&world);
    stdio.initialize("2025-06-18");
    for round in 0..2 {
        hang_up(stdio.pid());
        stdio.line(&format!(
            r#"{{"jsonrpc":"2.0","id":"after-{round}","method":"ping"}}"#
        ));
        let pong = stdio
            .next(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("no answer after SIGHUP {round}"));
        assert_eq!(pong["id"], format!("after-{round}"), "{pong}");
    }
    let (code, stderr) = stdio.close();
    assert_eq!(code, Some(0), "{stderr}");
    // HTTP, with and without an audit log: probes and sessions are answered after a hang-up.
    let log = world.tmp.path().join("audit.jsonl");
    for extra in [vec![], vec!["--audit-log", log.to_str().expect("utf8")]] {
        let http = Listening::start(&world.config, &extra, &[]);
        let headers = open_session(http.port);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        for _ in 0..2 {
            hang_up(http.pid());
            assert_eq!(
                send(http.port, "GET", "/healthz", &[], "").status,
                200,
                "{extra:?}"
            );
            let pong = post(
                http.port,
                "/mcp",
                None,
                &headers,
                r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
            );
            assert_eq!(pong.status, 200, "{extra:?}: {}", pong.body);
            assert!(alive(http.pid()), "{extra:?}");
        }
    }
}

/// The `_meta` every request of the stateless 2026-07-28 path carries.
fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// Conformance suite 0.2.0, `sep-2575-http-server-method-not-found-404-*`: on the 2026-07-28
/// path a method that revision removed is 404 with `-32601`, whatever its params; the method is
/// decided before its params, on stdio and in a stateful session too (`-32601`, HTTP 200).
#[test]
fn a_method_the_server_does_not_serve_is_not_found_before_its_params_are_judged() {
    let world = demo_world();
    let mut stdio = Server::start(&world);
    stdio.initialize("2025-06-18");
    let http = Listening::start(&world.config, &[], &[]);
    let session = open_session(http.port);
    let in_session: Vec<(&str, &str)> = session.iter().map(|(n, v)| (*n, v.as_str())).collect();
    for (method, params) in [
        ("logging/setLevel", json!({"level": "info"})),
        ("logging/setLevel", json!({"level": 7})),
        ("logging/setLevel", json!({})),
        (
            "resources/subscribe",
            json!({"uri": "skill://demo/SKILL.md"}),
        ),
        ("resources/subscribe", json!({})),
        ("resources/unsubscribe", json!({"uri": 3})),
        ("prompts/get", json!({})),
        ("completion/complete", json!({})),
    ] {
        let what = format!("{method} {params}");
        let mut stateless_params = params.clone();
        if let Some(object) = stateless_params.as_object_mut() {
            object.insert("_meta".into(), stateless_meta());
        }
        let request =
            json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": stateless_params});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(uri) = params["uri"].as_str() {
            headers.push(("Mcp-Name", uri));
        }
        let answer = post(http.port, "/mcp", None, &headers, &request.to_string());
        assert_eq!(answer.status, 404, "2026-07-28, {what}: {}", answer.body);
        assert_eq!(
            code_and_id(&message_of(&answer)),
            (-32601, json!(5)),
            "2026-07-28, {what}"
        );
        let request = json!({"jsonrpc": "2.0", "id": 6, "method": method, "params": params});
        let answer = post(http.port, "/mcp", None, &in_session, &request.to_string());
        assert_eq!(answer.status, 200, "session, {what}: {}", answer.body);
        assert_eq!(
            code_and_id(&message_of(&answer)),
            (-32601, json!(6)),
            "session, {what}"
        );
        stdio.line(&request.to_string());
        let answer = stdio
            .next(Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{what}: no answer on stdio"));
        assert_eq!(code_and_id(&answer), (-32601, json!(6)), "stdio, {what}");
    }
    // A method the server serves still has its params judged first.
    let bad = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": 3}});
    let answer = post(http.port, "/mcp", None, &in_session, &bad.to_string());
    assert_eq!(code_and_id(&message_of(&answer)), (-32602, json!(7)));
    let (code, _) = stdio.close();
    assert_eq!(code, Some(0));
}

/// A resource that is not served: the error's `data.uri` names it (a SHOULD of the MCP
/// specification the conformance suite checks), in a session and on the 2026-07-28 path.
#[test]
fn a_resource_not_found_names_its_uri_in_the_error_data() {
    let world = demo_world();
    let http = Listening::start(&world.config, &[], &[]);
    let session = open_session(http.port);
    let in_session: Vec<(&str, &str)> = session.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let uri = "skill://demo/missing.md";
    let request =
        json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": uri}});
    let answer = post(http.port, "/mcp", None, &in_session, &request.to_string());
    let error = &message_of(&answer)["error"];
    assert_eq!(
        error["code"],
        -32002,
        "{answer_body}",
        answer_body = answer.body
    );
    assert_eq!(error["data"]["uri"], uri, "{}", answer.body);
    let request = json!({"jsonrpc": "2.0", "id": 10, "method": "resources/read",
        "params": {"uri": uri, "_meta": stateless_meta()}});
    let answer = post(
        http.port,
        "/mcp",
        None,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", uri),
        ],
        &request.to_string(),
    );
    let error = &message_of(&answer)["error"];
    assert_eq!(error["data"]["uri"], uri, "{}", answer.body);
}

/// RFC 9110 / RFC 9112 §3.2: `Host`, `Authorization` or `Origin` written twice is 400, whichever
/// of the two is the good one; each alone passes.
#[test]
fn a_request_with_a_security_header_written_twice_is_400() {
    let world = super::serve_http::tokens_world();
    let tokens = world.tmp.path().join("tokens.json");
    let http = Listening::start(
        &world.tmp.path().join("skillfold.yaml"),
        &["--tokens", tokens.to_str().expect("utf8")],
        &[],
    );
    let host = format!("127.0.0.1:{}", http.port);
    let own_origin = format!("http://{host}");
    let request = |headers: &[(&str, &str)]| {
        let mut text = "POST /mcp HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n".to_owned();
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str(&format!(
            "Content-Length: {}\r\n\r\n{INITIALIZE}",
            INITIALIZE.len()
        ));
        http_raw::send_raw(http.port, text.as_bytes())
    };
    let good = [
        ("Host", host.as_str()),
        ("Origin", &own_origin),
        ("Authorization", "Bearer default-token"),
    ];
    assert_eq!(request(&good).status, 200);
    let twice: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "Authorization, the good one first",
            vec![
                ("Host", &host),
                ("Authorization", "Bearer default-token"),
                ("Authorization", "Bearer wrong"),
            ],
        ),
        (
            "Authorization, the good one second",
            vec![
                ("Host", &host),
                ("Authorization", "Bearer wrong"),
                ("Authorization", "Bearer default-token"),
            ],
        ),
        (
            "Host, the good one first",
            vec![
                ("Host", &host),
                ("Host", "evil.example"),
                ("Authorization", "Bearer default-token"),
            ],
        ),
        (
            "Host, the good one second",
            vec![
                ("Host", "evil.example"),
                ("Host", &host),
                ("Authorization", "Bearer default-token"),
            ],
        ),
        (
            "Origin",
            vec![
                ("Host", &host),
                ("Origin", &own_origin),
                ("Origin", "http://evil.example"),
                ("Authorization", "Bearer default-token"),
            ],
        ),
    ];
    for (what, headers) in twice {
        let answer = request(&headers);
        assert_eq!(answer.status, 400, "{what}: {}", answer.body);
        assert!(answer.body.contains("only once"), "{what}: {}", answer.body);
    }
    // The probes too (the guard runs on every path).
    let probe = http_raw::send_raw(
        http.port,
        format!(
            "GET /healthz HTTP/1.1\r\nHost: {host}\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    assert_eq!(probe.status, 400, "{}", probe.body);
}
