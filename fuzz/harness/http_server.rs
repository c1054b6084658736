//! Raw bytes to a `serve --listen` server on 127.0.0.1 ([`HttpWorld`]), each answer judged
//! against a strict reading of the request.

use serde_json::Value;

use crate::format::bundle::Bundle;

/// The tokens of [`HttpWorld`]: the default endpoint's, the `writer` agent's, and `/metrics`'.
#[cfg(feature = "http")]
const HTTP_TOKENS: [(&str, &str); 3] = [
    ("@T", "default-token"),
    ("@W", "writer-token"),
    ("@M", "metrics-token"),
];

/// The only browser origin [`HttpWorld`]'s server is told to allow.
#[cfg(feature = "http")]
const HTTP_ALLOWED_ORIGIN: &str = "https://allowed.example";

/// A `serve --listen` server on 127.0.0.1 for [`http_request`], started once per process (in
/// a thread, on a port picked free): two local bundles, `/mcp` with the defaults, the agent
/// `writer` at `/agents/writer/mcp`, bearer tokens for both and for `/metrics`, one allowed
/// origin, at most 16 sessions idle at most 5 s.
#[cfg(feature = "http")]
pub struct HttpWorld {
    port: u16,
    _dir: tempfile::TempDir,
}

#[cfg(feature = "http")]
impl HttpWorld {
    /// The server, started on first use.
    pub fn get() -> &'static HttpWorld {
        static WORLD: std::sync::OnceLock<HttpWorld> = std::sync::OnceLock::new();
        WORLD.get_or_init(HttpWorld::start)
    }

    fn start() -> HttpWorld {
        use crate::mcp::http::{HttpOptions, run, tokens::Tokens};

        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut descriptor = String::new();
        for (name, agent) in [("alpha", false), ("beta", true)] {
            let bundle = dir.path().join(name);
            fs_err::create_dir(&bundle).expect("a bundle folder");
            fs_err::write(
                bundle.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"),
            )
            .expect("a SKILL.md");
            let digest = Bundle::read_dir(&bundle).expect("a bundle").digest();
            let entry = format!(
                "  - local: {{ name: {name}, version: '1', directory: {name}, hash: {digest} }}\n"
            );
            if agent {
                descriptor.push_str(&format!("agents:\n  writer:\n    skills:\n  {entry}"));
            } else {
                descriptor.insert_str(0, &format!("skills:\n{entry}"));
            }
        }
        let config = dir.path().join("skillfold.yaml");
        fs_err::write(&config, descriptor).expect("a descriptor");
        let agents: std::collections::BTreeSet<String> = ["writer".to_owned()].into();
        let hash = |token: &str| crate::support::hex::sha256_hex(token.as_bytes());
        let tokens = serde_json::json!([
            {"agent": null, "sha256": hash(HTTP_TOKENS[0].1)},
            {"agent": "writer", "sha256": hash(HTTP_TOKENS[1].1)},
        ]);
        let metrics = serde_json::json!([{"agent": null, "sha256": hash(HTTP_TOKENS[2].1)}]);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let options = HttpOptions {
            config,
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            tokens: Some(Tokens::parse(&tokens.to_string(), "fuzz", &agents).expect("tokens")),
            oauth: None,
            allow_origins: vec![HTTP_ALLOWED_ORIGIN.to_owned()],
            insecure_no_auth: false,
            max_sessions: 16,
            session_idle: std::time::Duration::from_secs(5),
            watch: false,
            poll_interval: std::time::Duration::from_secs(2),
            audit_log: None,
            tls: None,
            metrics_tokens: Some(
                Tokens::parse(&metrics.to_string(), "fuzz-metrics", &agents).expect("tokens"),
            ),
            body_timeout: std::time::Duration::from_secs(10),
            write_timeout: std::time::Duration::from_secs(10),
            max_connections: crate::mcp::http::DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: crate::mcp::http::DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            max_connections_per_token: crate::mcp::http::DEFAULT_MAX_CONNECTIONS_PER_TOKEN,
            max_in_flight: crate::mcp::http::DEFAULT_MAX_IN_FLIGHT,
            max_in_flight_per_token: crate::mcp::http::DEFAULT_MAX_IN_FLIGHT_PER_TOKEN,
        };
        std::thread::spawn(move || {
            let result = run(options);
            panic!("the fuzzed HTTP server stopped: {result:?}");
        });
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return HttpWorld { port, _dir: dir };
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the fuzzed HTTP server did not start on port {port}");
    }

    /// The raw request bytes with the placeholders replaced: `@H` by the server's
    /// `127.0.0.1:PORT`, `@T`, `@W` and `@M` by the default, `writer` and metrics tokens.
    pub fn request(&self, data: &[u8]) -> Vec<u8> {
        let host = format!("127.0.0.1:{}", self.port);
        let mut out = Vec::with_capacity(data.len() + 32);
        let mut i = 0;
        while i < data.len() {
            let pair = data.get(i..i + 2);
            let token = HTTP_TOKENS.iter().find(|(p, _)| Some(p.as_bytes()) == pair);
            match (pair, token) {
                (Some(b"@H"), _) => out.extend_from_slice(host.as_bytes()),
                (_, Some((_, token))) => out.extend_from_slice(token.as_bytes()),
                _ => {
                    out.push(data[i]);
                    i += 1;
                    continue;
                }
            }
            i += 2;
        }
        out
    }

    /// Sends `request` on one connection and reads what the server answers: until it closes the
    /// connection, or 100 ms pass without a byte once something arrived, or `patience` passes
    /// without any answer (a request the server is still waiting on, such as a body shorter
    /// than its `Content-Length`); at most 4 MiB. The connection stays open for writing (hyper
    /// drops a pending answer when the client half-closes).
    pub fn exchange(&self, request: &[u8], patience: std::time::Duration) -> Vec<u8> {
        use std::io::{Read as _, Write as _};
        let mut stream =
            std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("the server answers");
        let _ = stream.set_write_timeout(Some(std::time::Duration::from_secs(2)));
        let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(100)));
        let _ = stream.write_all(request);
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        let mut buffer = [0u8; 16 * 1024];
        while out.len() < 4 * 1024 * 1024 {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buffer[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !out.is_empty() || started.elapsed() > patience {
                        break;
                    }
                }
                Err(_) => break,
            }
        }
        out
    }
}

/// One parsed HTTP/1.1 response.
#[cfg(feature = "http")]
#[derive(Debug)]
pub struct HttpAnswer {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercase.
    pub headers: Vec<(String, String)>,
    /// The body (an event stream: what arrived of it).
    pub body: Vec<u8>,
}

#[cfg(feature = "http")]
impl HttpAnswer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The responses in `raw`, in order; panics on bytes that are not HTTP/1.1 (or, to an HTTP/1.0
/// request, HTTP/1.0) responses.
#[cfg(feature = "http")]
pub fn http_answers(mut raw: &[u8]) -> Vec<HttpAnswer> {
    let mut answers = Vec::new();
    while !raw.is_empty() {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| {
                panic!(
                    "a response head without its end: {:?}",
                    String::from_utf8_lossy(raw)
                )
            });
        let head = std::str::from_utf8(&raw[..end]).expect("a response head is text");
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l
                    .split_once(':')
                    .unwrap_or_else(|| panic!("a bad header {l:?}"));
                (n.to_ascii_lowercase(), v.trim().to_owned())
            })
            .collect();
        raw = &raw[end + 4..];
        let mut answer = HttpAnswer {
            status,
            headers,
            body: Vec::new(),
        };
        if (100..200).contains(&status) {
            // An interim answer (`100 Continue`): no body, the final answer follows.
            continue;
        }
        if let Some(length) = answer.header("content-length") {
            let length: usize = length.parse().expect("a numeric content-length");
            let length = length.min(raw.len());
            answer.body = raw[..length].to_vec();
            raw = &raw[length..];
        } else if answer
            .header("transfer-encoding")
            .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") else {
                    raw = &[];
                    break;
                };
                let size = std::str::from_utf8(&raw[..line_end])
                    .ok()
                    .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
                    .expect("a chunk size");
                raw = &raw[line_end + 2..];
                let take = size.min(raw.len());
                answer.body.extend_from_slice(&raw[..take]);
                raw = raw.get(take + 2..).unwrap_or_default();
                if size == 0 {
                    break;
                }
            }
        } else {
            // No framing: the body runs to the end of the connection.
            answer.body = raw.to_vec();
            raw = &[];
        }
        answers.push(answer);
    }
    answers
}

/// A request's method, path and headers (names lowercase).
#[cfg(feature = "http")]
type StrictRequest = (String, String, Vec<(String, String)>);

/// The first request of a byte stream, read strictly (CRLF lines, an origin-form target, token
/// header names, visible header values); `None` when it is not that strict.
#[cfg(feature = "http")]
fn strict_request(raw: &[u8]) -> Option<StrictRequest> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?;
    let target = request_line.next()?;
    if request_line.next()? != "HTTP/1.1"
        || request_line.next().is_some()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || method.is_empty()
        || !target.starts_with('/')
        || !target.bytes().all(|b| b.is_ascii_graphic())
    {
        return None;
    }
    let path = target.split('?').next()?.to_owned();
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return None;
        }
        let value = value.trim_matches([' ', '\t']);
        if !value
            .bytes()
            .all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t')
        {
            return None;
        }
        headers.push((name.to_ascii_lowercase(), value.to_owned()));
    }
    Some((method.to_owned(), path, headers))
}

/// Raw bytes sent to `serve --listen` on one connection (with the placeholders of
/// [`HttpWorld::request`]): hyper's HTTP/1.1 parsing, the routes, the bearer tokens, the
/// Host and Origin checks and rmcp's Streamable HTTP handling of the body (framing, JSON-RPC).
///
/// Invariants: the server answers only with well-formed HTTP/1.1 responses (or closes); never
/// a 5xx but a 503 with `Retry-After`; a 401 carries `WWW-Authenticate: Bearer`; every
/// `application/json` body is JSON. For the first request, read strictly: `GET /healthz` is
/// 200 (or a 4xx, for a header hyper refuses); an MCP endpoint (`/mcp`, `/agents/writer/mcp`) answers 2xx only to its own bearer token,
/// with a loopback `Host` and an `Origin` that is absent, allowed or the server's own loopback
/// origin; `/metrics` answers 2xx only to its token; any other path is never 2xx.
///
/// JSON-RPC errors over HTTP equal to stdio's and probes refusing a foreign `Host` or `Origin`
/// are the serving tests' (tests/it/serve_http_rpc.rs, tests/it/serve_http.rs); no 5xx but a 503
/// with `Retry-After` is asserted here, which covers the judge's answers.
#[cfg(feature = "http")]
pub fn http_request(data: &[u8]) {
    let world = HttpWorld::get();
    let request = world.request(data);
    let raw = world.exchange(&request, std::time::Duration::from_secs(3));
    let answers = http_answers(&raw);
    for answer in &answers {
        assert!(
            answer.status < 500 || (answer.status == 503 && answer.header("retry-after").is_some()),
            "HTTP {} for {:?}",
            answer.status,
            String::from_utf8_lossy(&request)
        );
        if answer.status == 401 {
            assert!(
                answer
                    .header("www-authenticate")
                    .is_some_and(|v| v.starts_with("Bearer"))
            );
        }
        if answer
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
            && answer.header("content-length").is_some()
            && !answer.body.is_empty()
        {
            assert!(
                serde_json::from_slice::<Value>(&answer.body).is_ok(),
                "a JSON answer that is not JSON: {:?}",
                String::from_utf8_lossy(&answer.body)
            );
        }
    }
    let (Some((method, path, headers)), Some(first)) = (strict_request(&request), answers.first())
    else {
        return;
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let bearer_of = |token: &str| {
        header("authorization").is_some_and(|v| {
            v.len() > 7 && v[..7].eq_ignore_ascii_case("bearer ") && &v[7..] == token
        })
    };
    let ok = (200..300).contains(&first.status);
    let loopback_host = |host: &str| {
        let name = host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        matches!(name, "127.0.0.1" | "localhost" | "[::1]")
    };
    let endpoint_token = match path.as_str() {
        "/mcp" => Some(HTTP_TOKENS[0].1),
        "/agents/writer/mcp" => Some(HTTP_TOKENS[1].1),
        _ => None,
    };
    match (method.as_str(), path.as_str(), endpoint_token) {
        // hyper may refuse a header the strict reading lets through (400).
        ("GET", "/healthz", _) => {
            assert!(first.status == 200 || (400..500).contains(&first.status))
        }
        ("GET", "/readyz", _) => {}
        ("GET", "/metrics", _) => {
            assert!(
                !ok || bearer_of(HTTP_TOKENS[2].1),
                "/metrics without its token"
            )
        }
        (_, _, Some(token)) => {
            if ok {
                assert!(
                    bearer_of(token),
                    "{path} answered {} without its token",
                    first.status
                );
                assert!(
                    header("host").is_none_or(loopback_host),
                    "{path} answered {} to Host {:?}",
                    first.status,
                    header("host")
                );
                assert!(
                    header("origin").is_none_or(|o| o == HTTP_ALLOWED_ORIGIN
                        || o.strip_prefix("http://").is_some_and(loopback_host)),
                    "{path} answered {} to Origin {:?}",
                    first.status,
                    header("origin")
                );
            }
        }
        _ => assert!(!ok, "{method} {path} answered {}", first.status),
    }
}
