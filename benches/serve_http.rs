//! `skillfold serve --listen` under load, against the stdio server in the same run.
//!
//! 64 concurrent MCP sessions over loopback HTTP/1.1 (keep-alive), each 200 `load_skill` calls
//! for the body of a skill whose body is 64 KiB: errors, p50 and p99 latency per call, calls per
//! second over the whole phase, and the server's peak RSS (`VmHWM`). Then one stdio session of the
//! same server binary making the same calls one after another, for comparison. The client is
//! this program (threads and a minimal HTTP/1.1 reader), so the figures include its own cost on
//! the same two cores.
//!
//!   cargo bench --bench serve_http            # release build of skillfold and of this bench
//!   SESSIONS=16 CALLS=100 cargo bench --bench serve_http

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark's report is what it prints"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_skillfold");

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A bundle whose `SKILL.md` body is 64 KiB, under the `extended` profile; returns the
/// descriptor's path.
fn fixture(dir: &std::path::Path) -> std::path::PathBuf {
    let bundle = dir.join("big");
    fs_err::create_dir_all(&bundle).expect("mkdir");
    let head = "---\nname: big\ndescription: A skill with a 64 KiB body.\n---\n";
    let line = "Follow the steps below carefully and check each result before going on.\n";
    let mut body = String::new();
    while body.len() + line.len() <= 64 * 1024 {
        body.push_str(line);
    }
    body.push_str(&"x".repeat(64 * 1024 - body.len()));
    fs_err::write(bundle.join("SKILL.md"), format!("{head}{body}")).expect("write");
    let out = Command::new(BIN)
        .args(["hash", "--limits", "extended"])
        .arg(&bundle)
        .output()
        .expect("skillfold hash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hash = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("hash")
        .to_owned();
    let config = dir.join("skillfold.yaml");
    fs_err::write(
        &config,
        format!("skills:\n  - local: {{ name: big, version: '1', directory: big, hash: {hash}, limits: extended }}\n"),
    )
    .expect("write");
    config
}

/// One HTTP response: its headers (lowercase names) and body.
struct Answer {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

fn read_answer(reader: &mut BufReader<TcpStream>) -> std::io::Result<Answer> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (mut length, mut chunked, mut session) = (None, false, None);
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Answer {
        status,
        session,
        body,
    })
}

fn post(
    stream: &mut TcpStream,
    reader: &mut BufReader<TcpStream>,
    session: Option<&str>,
    body: &str,
) -> std::io::Result<Answer> {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    read_answer(reader)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"load_skill","arguments":{{"name":"big","reference":null}}}}}}"#
    )
}

/// One session's calls: the latency of each, and how many failed.
fn session(port: u16, calls: usize) -> (Vec<Duration>, usize) {
    let run = || -> std::io::Result<(Vec<Duration>, usize)> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        let mut reader = BufReader::with_capacity(256 * 1024, stream.try_clone()?);
        let opened = post(&mut stream, &mut reader, None, INITIALIZE)?;
        let session = opened.session.expect("a session id");
        post(&mut stream, &mut reader, Some(&session), INITIALIZED)?;
        let mut latencies = Vec::with_capacity(calls);
        let mut errors = 0;
        for id in 1..=calls {
            let started = Instant::now();
            let answer = post(&mut stream, &mut reader, Some(&session), &call(id))?;
            latencies.push(started.elapsed());
            let text = String::from_utf8_lossy(&answer.body);
            if answer.status != 200
                || !text.contains("\"result\"")
                || text.contains("\"isError\":true")
                || answer.body.len() < 64 * 1024
            {
                errors += 1;
            }
        }
        Ok((latencies, errors))
    };
    run().unwrap_or_else(|e| {
        eprintln!("session failed: {e}");
        (Vec::new(), calls)
    })
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(index).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn peak_rss_kib(pid: u32) -> u64 {
    fs_err::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn http_phase(config: &std::path::Path, sessions: usize, calls: usize) {
    let mut server = Command::new(BIN)
        .args(["serve", "-c"])
        .arg(config)
        .args(["--listen", "127.0.0.1:0", "--max-sessions", "4096"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve --listen");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let port: u16 = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            l.split("listening on http://127.0.0.1:")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|p| p.parse().ok())
        })
        .expect("the server's port");
    std::thread::spawn(move || lines.for_each(drop));
    let started = Instant::now();
    let workers: Vec<_> = (0..sessions)
        .map(|_| std::thread::spawn(move || session(port, calls)))
        .collect();
    let mut latencies = Vec::new();
    let mut errors = 0;
    for worker in workers {
        let (l, e) = worker.join().expect("worker");
        latencies.extend(l);
        errors += e;
    }
    let wall = started.elapsed();
    latencies.sort();
    let rss = peak_rss_kib(server.id());
    let _ = Command::new("kill").arg(server.id().to_string()).status();
    let _ = server.wait();
    println!(
        "http   {sessions:>3} sessions x {calls} calls: {} calls, {errors} errors, p50 {:.2} ms, p99 {:.2} ms, {:.0} calls/s, server peak RSS {:.1} MiB",
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.len() as f64 / wall.as_secs_f64(),
        rss as f64 / 1024.0
    );
}

fn stdio_phase(config: &std::path::Path, calls: usize) {
    let mut server = Command::new(BIN)
        .args(["serve", "-c"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut input = server.stdin.take().expect("stdin");
    let mut output = BufReader::with_capacity(256 * 1024, server.stdout.take().expect("stdout"));
    let mut line = String::new();
    writeln!(input, "{INITIALIZE}").expect("write");
    output.read_line(&mut line).expect("read");
    writeln!(input, "{INITIALIZED}").expect("write");
    let mut latencies = Vec::with_capacity(calls);
    let mut errors = 0;
    let started = Instant::now();
    for id in 1..=calls {
        let t = Instant::now();
        writeln!(input, "{}", call(id)).expect("write");
        line.clear();
        output.read_line(&mut line).expect("read");
        latencies.push(t.elapsed());
        if !line.contains("\"result\"") || line.contains("\"isError\":true") {
            errors += 1;
        }
    }
    let wall = started.elapsed();
    latencies.sort();
    let rss = peak_rss_kib(server.id());
    drop(input);
    let _ = server.wait();
    println!(
        "stdio    1 session  x {calls} calls: {} calls, {errors} errors, p50 {:.2} ms, p99 {:.2} ms, {:.0} calls/s, server peak RSS {:.1} MiB",
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.len() as f64 / wall.as_secs_f64(),
        rss as f64 / 1024.0
    );
}

fn main() {
    // `cargo test --benches` runs this with `--test`-like arguments; only a bench run measures.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let sessions = env_or("SESSIONS", 64);
    let calls = env_or("CALLS", 200);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fixture(dir.path());
    http_phase(&config, sessions, calls);
    stdio_phase(&config, sessions * calls / 4);
}
