//! A raw HTTP/1.1 client for the tests of `skillfold serve --listen`: one request per
//! connection (`Connection: close`), the whole answer read and split into status, headers and
//! body. Shared by `serve_http` and `serve_http_rpc`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

/// An HTTP response: status, headers (lowercase names) and body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
pub fn send(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    send_to(
        port,
        &format!("127.0.0.1:{port}"),
        method,
        path,
        headers,
        body,
    )
}

/// The same with `Host: host`.
pub fn send_to(
    port: u16,
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    send_raw(port, request.as_bytes())
}

/// Sends `request` as it is (the whole request, headers and body) and reads the whole answer.
pub fn send_raw(port: u16, request: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream.write_all(request).expect("send");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse(&raw)
}

/// Splits a raw answer into status, headers and body (a chunked body decoded).
pub fn parse(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or((raw, &[][..]), |at| (&raw[..at], &raw[at + 4..]));
    let head = String::from_utf8_lossy(split.0);
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = match chunked.then(|| dechunk(split.1)).flatten() {
        Some(body) => body,
        None => split.1.to_vec(),
    };
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The data of a chunked body (what came of it, if it was cut short); `None` when it is not
/// chunked encoding at all.
fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    while !raw.is_empty() {
        let end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&raw[..end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[end + 2..];
        if size == 0 {
            break;
        }
        let take = size.min(raw.len());
        data.extend_from_slice(&raw[..take]);
        raw = raw.get(take + 2..).unwrap_or_default();
    }
    Some(data)
}

/// An `initialize` request of the 2025-06-18 revision.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The headers of an MCP POST, with a bearer `token` and `extra` headers.
pub fn mcp_headers<'a>(
    token: Option<&'a str>,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, String)> {
    let mut headers = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
    ];
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    headers.extend(extra.iter().map(|(n, v)| (*n, (*v).to_owned())));
    headers
}

/// POSTs `body` to `path` with the MCP headers.
pub fn post(
    port: u16,
    path: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &str,
) -> Answer {
    let headers = mcp_headers(token, extra);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    send(port, "POST", path, &headers, body)
}
