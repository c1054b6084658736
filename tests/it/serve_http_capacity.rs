//! `skillfold serve --listen` behind a proxy, where every client arrives from one address:
//! sessions with valid tokens are not bounded by the per-address cap (raw clients and the
//! official Python SDK client, 256 sessions each, past the cap of 64), an unauthenticated flood from one
//! address takes neither the probes' places nor the authenticated clients', and the per-token
//! bound refuses past it.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::json;

use super::http_raw::{Answer, INITIALIZE, parse, post, send};
use super::mcp_client::{Listening, scenario};
use super::serve_http::tokens_world;
use super::support::world::{World, sha256};

/// Starts the world's server with `count` tokens of the default endpoint (`token-0`, …) and
/// `extra` flags.
fn start_with_tokens(world: &World, count: usize, extra: &[&str]) -> (Listening, Vec<String>) {
    let tokens: Vec<String> = (0..count).map(|i| format!("token-{i}")).collect();
    let entries: Vec<serde_json::Value> = tokens
        .iter()
        .map(|t| json!({"agent": null, "sha256": sha256(t.as_bytes())}))
        .collect();
    let path = world.tmp.path().join("many-tokens.json");
    fs_err::write(&path, serde_json::Value::from(entries).to_string()).expect("write");
    let mut args = vec!["--tokens", path.to_str().expect("utf8")];
    args.extend_from_slice(extra);
    let server = Listening::start(&world.tmp.path().join("skillfold.yaml"), &args, &[]);
    (server, tokens)
}

/// A connection from `source` (any 127.0.0.0/8 address) to the server.
fn connect_from(source: IpAddr, port: u16) -> std::io::Result<TcpStream> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .expect("a runtime")
    });
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source, 0))?;
        socket
            .connect(SocketAddr::from(([127, 0, 0, 1], port)))
            .await
    })?;
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    Ok(stream)
}

/// Writes `request` on `stream` and reads one answer's head and, by its `Content-Length`, its
/// body; the connection stays open. A closed connection answers status 0.
fn exchange(stream: &mut TcpStream, request: &str) -> Answer {
    let Some(mut raw) = write_and_read_head(stream, request) else {
        return parse(b"");
    };
    let head = parse(&raw);
    let length: usize = head
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    if stream.read_exact(&mut body).is_ok() {
        raw.extend_from_slice(&body);
    }
    parse(&raw)
}

/// Writes `request` on `stream` and reads up to the end of the answer's head (or what came
/// before the connection closed); `None` when the request could not be written.
fn write_and_read_head(stream: &mut TcpStream, request: &str) -> Option<Vec<u8>> {
    stream.write_all(request.as_bytes()).ok()?;
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => raw.push(byte[0]),
            _ => break,
        }
    }
    Some(raw)
}

/// The head of a GET stream of session `id`: the answer's status line and headers, the stream
/// left open on `stream`.
fn open_stream(stream: &mut TcpStream, port: u16, token: &str, id: &str) -> Answer {
    exchange_head(
        stream,
        &format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
        ),
    )
}

fn exchange_head(stream: &mut TcpStream, request: &str) -> Answer {
    parse(&write_and_read_head(stream, request).unwrap_or_default())
}

/// A session of `token`: initialized, its `notifications/initialized` sent; its id.
fn open_session(port: u16, token: &str) -> Result<String, String> {
    let opened = post(port, "/mcp", Some(token), &[], INITIALIZE);
    if opened.status != 200 {
        return Err(format!("initialize: {} {}", opened.status, opened.body));
    }
    let id = opened
        .header("mcp-session-id")
        .ok_or("no session id")?
        .to_owned();
    let notified = post(
        port,
        "/mcp",
        Some(token),
        &[
            ("Mcp-Session-Id", id.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    if notified.status != 202 {
        return Err(format!(
            "initialized: {} {}",
            notified.status, notified.body
        ));
    }
    Ok(id)
}

fn list_tools(port: u16, token: &str, id: &str) -> Answer {
    post(
        port,
        "/mcp",
        Some(token),
        &[
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
}

/// The metrics, read from an address no test floods.
fn metrics(port: u16) -> String {
    let mut stream = connect_from("127.0.0.9".parse().unwrap(), port).expect("connect");
    let request =
        format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse(&raw).body
}

/// The value of the gauge `skillfold_connections{state="STATE"}`.
fn connections(port: u16, state: &str) -> usize {
    let metrics = metrics(port);
    let prefix = format!("skillfold_connections{{state=\"{state}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {prefix}: {metrics}"))
}

#[test]
fn sessions_with_tokens_from_one_address_are_not_bounded_by_the_address_cap() {
    const SESSIONS: usize = 256;
    let world = tokens_world();
    // Default flags: the per-address cap is 64.
    let (server, tokens) = start_with_tokens(&world, SESSIONS, &[]);
    let port = server.port;
    // Every session starts at once (as clients behind a proxy may), holds its GET stream until
    // every session holds its own, then calls on a new connection while all are open.
    let opened = Arc::new(Barrier::new(SESSIONS + 1));
    let done = Arc::new(Barrier::new(SESSIONS + 1));
    let started = Arc::new(Barrier::new(SESSIONS));
    let clients: Vec<_> = tokens
        .iter()
        .cloned()
        .map(|token| {
            let (opened, done, started) = (opened.clone(), done.clone(), started.clone());
            std::thread::spawn(move || {
                started.wait();
                let outcome = (|| {
                    let id = open_session(port, &token)?;
                    let mut stream =
                        TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
                    stream
                        .set_read_timeout(Some(Duration::from_secs(60)))
                        .map_err(|e| e.to_string())?;
                    let head = open_stream(&mut stream, port, &token, &id);
                    Ok::<_, String>((id, head, stream))
                })();
                opened.wait();
                let outcome = outcome.and_then(|(id, head, stream)| {
                    if head.status != 200 {
                        return Err(format!("GET stream: {} {:?}", head.status, head.headers));
                    }
                    let listed = list_tools(port, &token, &id);
                    if listed.status != 200 || !listed.body.contains("load_skill") {
                        return Err(format!("tools/list: {} {}", listed.status, listed.body));
                    }
                    Ok(stream)
                });
                done.wait();
                outcome.map(drop)
            })
        })
        .collect();
    opened.wait();
    // Every GET stream is open at once, each on its own authenticated connection.
    let authenticated = connections(port, "authenticated");
    done.wait();
    let errors: Vec<String> = clients
        .into_iter()
        .filter_map(|c| c.join().expect("client thread").err())
        .collect();
    assert!(
        errors.is_empty(),
        "{} errors: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert!(authenticated >= SESSIONS, "{authenticated}");
}

/// The official Python SDK client, 256 sessions from one address, one token each, with the
/// server's defaults (64 unauthenticated connections per address): every session initializes,
/// holds its GET stream while all 256 do, and lists tools. Four client processes of 64 sessions
/// each (one Python process is too slow to drive 256 on two cores), all at once.
#[test]
fn the_python_sdk_client_holds_256_sessions_from_one_address() {
    const SESSIONS: usize = 256;
    const PROCESSES: usize = 4;
    let world = tokens_world();
    let (server, tokens) = start_with_tokens(&world, SESSIONS, &[]);
    let barrier = world.tmp.path().join("barrier");
    fs_err::create_dir(&barrier).expect("mkdir");
    let url = server.url("/mcp");
    let reports: Vec<serde_json::Value> = std::thread::scope(|scope| {
        let runs: Vec<_> = tokens
            .chunks(SESSIONS / PROCESSES)
            .enumerate()
            .map(|(i, share)| {
                let list = world.tmp.path().join(format!("tokens-{i}.txt"));
                fs_err::write(&list, share.join("\n")).expect("write");
                let (barrier, url) = (&barrier, &url);
                scope.spawn(move || {
                    let parties = PROCESSES.to_string();
                    let args = [
                        "crowd",
                        list.to_str().expect("utf8"),
                        barrier.to_str().expect("utf8"),
                        parties.as_str(),
                    ];
                    scenario(&args, &[url.as_str()], &[]).json
                })
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().expect("client process"))
            .collect()
    });
    let sum = |key: &str| -> u64 { reports.iter().filter_map(|r| r[key].as_u64()).sum() };
    let errors: Vec<&serde_json::Value> = reports
        .iter()
        .flat_map(|r| r["errors"].as_array().expect("errors"))
        .collect();
    let metrics = metrics(server.port);
    let refused: Vec<&str> = metrics
        .lines()
        .filter(|l| {
            l.starts_with("skillfold_connections") && !l.starts_with("skillfold_connections{")
        })
        .collect();
    assert!(
        errors.is_empty(),
        "{} of {SESSIONS} sessions failed: {:?}\n{refused:?}",
        errors.len(),
        &errors[..errors.len().min(3)]
    );
    assert_eq!(sum("listed"), SESSIONS as u64, "{reports:?}");
    assert!(sum("streams") >= SESSIONS as u64, "{reports:?}");
    // Nothing but success: no 429, no 503, on any request of any session.
    for report in &reports {
        for (status, _) in report["statuses"].as_object().expect("statuses") {
            assert!(
                status.ends_with(" 200") || status.ends_with(" 202") || status.ends_with(" 204"),
                "{report}"
            );
        }
    }
}

/// Opens idle connections from `source` (sending nothing) until `count` are open or the
/// server refuses them; returns those it kept.
fn flood(source: IpAddr, port: u16, count: usize) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| connect_from(source, port).ok())
        .collect()
}

#[test]
fn a_flood_from_one_address_takes_neither_probes_nor_authenticated_places() {
    let world = tokens_world();
    let (server, tokens) = start_with_tokens(
        &world,
        8,
        &[
            "--max-connections",
            "24",
            "--max-connections-per-client",
            "8",
        ],
    );
    let port = server.port;
    let proxy: IpAddr = "127.0.0.1".parse().unwrap();
    let hostile: IpAddr = "127.0.0.2".parse().unwrap();
    // Sessions of the proxy's clients, each holding its GET stream (8 authenticated places).
    let mut streams = Vec::new();
    let mut ids = Vec::new();
    for token in &tokens {
        let id = open_session(port, token).expect("session");
        let mut stream = connect_from(proxy, port).expect("connect");
        assert_eq!(open_stream(&mut stream, port, token, &id).status, 200);
        streams.push(stream);
        ids.push(id);
    }
    // A flood of idle connections from one address holds its 8 places (8 more wait, then are
    // closed): the proxy's clients still get theirs, and probes are answered.
    let held = flood(hostile, port, 100);
    let started = Instant::now();
    while connections(port, "unauthenticated") < 8 + 1 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the flood never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for (token, id) in tokens.iter().zip(&ids) {
        let listed = list_tools(port, token, id);
        assert_eq!(listed.status, 200, "{}", listed.body);
    }
    assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);

    // Every ordinary place taken (the proxy's 8 streams, 8 held keep-alive connections, the
    // flood's 8): a flood from another address, under its own cap, gets at most 4 of the 16
    // probe places, so probes from a third are still answered.
    let mut kept = Vec::new();
    for token in &tokens {
        let mut stream = connect_from(proxy, port).expect("connect");
        let answer = exchange(
            &mut stream,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 8\r\n\r\nnot json"
            ),
        );
        assert_eq!(answer.status, 400, "{}", answer.body);
        kept.push(stream);
    }
    let more = flood("127.0.0.4".parse().unwrap(), port, 40);
    let mut probe = connect_from("127.0.0.3".parse().unwrap(), port).expect("connect");
    let health = exchange(
        &mut probe,
        &format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
    );
    assert_eq!(health.status, 200, "{}", health.body);
    // The authenticated clients' GET streams were never closed to make room.
    for stream in &mut streams {
        stream.set_nonblocking(true).expect("nonblocking");
        let mut byte = [0u8; 1];
        let open = matches!(stream.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
            || matches!(stream.peek(&mut byte), Ok(n) if n > 0);
        assert!(open, "an authenticated stream was closed");
        stream.set_nonblocking(false).expect("blocking");
    }
    drop((held, more, kept));
}

#[test]
fn a_client_with_a_token_gets_in_past_a_flood_from_its_own_address() {
    let world = tokens_world();
    let (server, tokens) = start_with_tokens(&world, 1, &["--max-connections-per-client", "8"]);
    let port = server.port;
    let proxy: IpAddr = "127.0.0.1".parse().unwrap();
    // Idle connections from the proxy's own address hold all its unauthenticated places and
    // every waiting place (256).
    let held = flood(proxy, port, 300);
    let started = Instant::now();
    while connections(port, "unauthenticated") < 8 || connections(port, "waiting") < 256 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the flood never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A client with a token (from that same address) gets in at once: it takes a silent
    // waiter's waiting place, then, having shown its token, its token's place.
    let mut stream = connect_from(proxy, port).expect("connect");
    let answer = exchange(
        &mut stream,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
            tokens[0],
            INITIALIZE.len()
        ),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    // It took no connection's place: the flood's 8 are all still held (and the metrics
    // reader's own connection, from another address, counts too).
    let metrics = metrics(port);
    assert!(
        metrics
            .lines()
            .any(|l| l == "skillfold_connections_evicted_total 0"),
        "{metrics}"
    );
    // An earlier metrics reader's connection may still be counted until the server sees it
    // close: wait for that, never for the flood's own 8 to go.
    let started = Instant::now();
    let mut counted = connections(port, "unauthenticated");
    while counted > 8 + 1 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        counted = connections(port, "unauthenticated");
    }
    assert_eq!(counted, 8 + 1);
    drop(held);
}

#[test]
fn connections_of_one_token_are_bounded() {
    let world = tokens_world();
    let (server, tokens) = start_with_tokens(
        &world,
        2,
        &["--max-connections-per-token", "3", "--body-timeout", "600"],
    );
    let port = server.port;
    // Three connections of one token, each with a request whose body is still arriving.
    let stall = |token: &str| {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        stream
            .write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
                )
                .as_bytes(),
            )
            .expect("send");
        stream
    };
    let mut held: Vec<TcpStream> = (0..3).map(|_| stall(&tokens[0])).collect();
    let started = Instant::now();
    while connections(port, "authenticated") < 3 {
        assert!(started.elapsed() < Duration::from_secs(30), "never counted");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A fourth of that token is refused: 429, and its connection closed.
    let refused = post(port, "/mcp", Some(&tokens[0]), &[], INITIALIZE);
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(
        refused
            .body
            .contains("too many open connections for this token")
    );
    // Another token is not held back.
    assert_eq!(
        post(port, "/mcp", Some(&tokens[1]), &[], INITIALIZE).status,
        200
    );
    // Once one of the three hangs up, the token gets in again.
    drop(held.pop());
    let started = Instant::now();
    // Until the server sees the hang-up, the token is still at its bound: each such try is
    // refused (and counted) too.
    let mut refusals = 1;
    loop {
        let answer = post(port, "/mcp", Some(&tokens[0]), &[], INITIALIZE);
        if answer.status == 200 {
            break;
        }
        assert_eq!(answer.status, 429, "{}", answer.body);
        refusals += 1;
        assert!(started.elapsed() < Duration::from_secs(30), "never again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let metrics = metrics(port);
    assert!(
        metrics.contains(&format!(
            "skillfold_connections_refused_total{{reason=\"token\"}} {refusals}"
        )),
        "{metrics}"
    );
}

/// A client that pipelines requests and never reads the answers: once the answers it leaves
/// unread fill the buffers and `--write-timeout` passes, the server closes the connection (its
/// socket and buffers are free again), while probes and other clients are served throughout.
#[test]
fn a_client_that_never_reads_its_answers_is_closed_after_the_write_timeout() {
    let world = tokens_world();
    let (server, _) = start_with_tokens(&world, 1, &["--write-timeout", "0.2"]);
    let port = server.port;
    // A small receive window, so the answers fill it fast.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime");
    let stream = runtime
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.set_recv_buffer_size(4096)?;
            socket
                .connect(SocketAddr::from(([127, 0, 0, 1], port)))
                .await
        })
        .expect("connect");
    let mut stream = stream.into_std().expect("std");
    stream.set_nonblocking(false).expect("blocking");
    stream
        .set_write_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let request = format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    let requests = request.repeat(1000).into_bytes();
    // Pipelines requests (4 MiB at most), reading nothing, until the server closes the
    // connection: a write then fails with a reset or a broken pipe.
    let started = Instant::now();
    let (mut at, mut sent) = (0, 0usize);
    let closed = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "still open after {sent} bytes of requests"
        );
        match stream.write(&requests[at..]) {
            Ok(n) => {
                sent += n;
                at = (at + n) % requests.len();
                if sent > 4 * 1024 * 1024 {
                    // Past 4 MiB the client only waits for the close.
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => break e,
        }
        assert_eq!(send(port, "GET", "/healthz", &[], "").status, 200);
    };
    assert!(
        matches!(
            closed.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
        ),
        "{closed}"
    );
}
