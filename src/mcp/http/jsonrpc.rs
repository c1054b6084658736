//! The JSON-RPC judge in front of rmcp's Streamable HTTP server: every POST body to an MCP
//! endpoint is read here (bounded by [`super::MAX_BODY_BYTES`]) and judged by the same
//! [`framing::judge`] that judges every stdio line, so one message gets one JSON-RPC answer on
//! both transports.
//!
//! rmcp alone answers a body that is not one JSON-RPC message it reads (not JSON, a batch, an
//! `id: null`, no `method`) with HTTP 415 and plain text, a request whose params do not fit its
//! method with `-32601` (HTTP 404 on the 2026-07-28 path), and a body it cannot read (a malformed
//! chunk size) with 500. Here, as the MCP Streamable HTTP transport asks ("if the input is not
//! accepted due to … body requirements, the error MUST be of HTTP status code 400"):
//!
//! - a body that is not JSON, empty, or cut short by a broken chunked encoding: 400, `-32700`;
//! - a JSON value that is not one valid message (a batch, a bad `id`, no `method`, a key written
//!   twice), and a notification or response that cannot be used: 400, `-32600`;
//! - `initialize` on the 2026-07-28 path (its `MCP-Protocol-Version` header; that revision
//!   removed the handshake): 404 with `-32601`, as rmcp answers the other removed methods there,
//!   whatever its params;
//! - a request whose params do not fit its method: 200 with the JSON-RPC error `-32602` and the
//!   request's `id` (a request is answered with one JSON object);
//! - a body over [`super::MAX_BODY_BYTES`]: 413 with `-32600` (and the `id` its start shows),
//!   without reading the rest;
//! - anything else goes to rmcp unchanged, but for a leading byte order mark, which both
//!   transports ignore (rmcp would refuse it with 415).
//!
//! Other methods (GET, DELETE) pass through untouched.

use http_body_util::{BodyExt as _, Either, Full};
use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{HeaderMap, Method, Request, Response, StatusCode, header};
use rmcp::model::{ConstString as _, InitializeResultMethod, ProtocolVersion};
use serde_json::Value;

use super::body::Body;
use super::options::MAX_BODY_BYTES;
use super::replies::json;
use crate::mcp::framing::{self, INVALID_PARAMS, LineVerdict};

/// The method of the handshake that the 2026-07-28 revision removed.
const INITIALIZE: &str = InitializeResultMethod::VALUE;

/// A request as rmcp receives it: its own body (not a POST), or the POST body read and judged.
pub type ForRmcp<B> = Request<Either<B, Full<Bytes>>>;

/// A request that passed the judge.
pub enum Screened<B> {
    /// A POST: its head, and its body read whole.
    Post(Parts, Bytes),
    /// Any other method, untouched.
    Other(Request<B>),
}

impl<B> Screened<B> {
    /// The request as rmcp receives it.
    pub fn for_rmcp(self) -> ForRmcp<B> {
        match self {
            Screened::Post(parts, body) => {
                Request::from_parts(parts, Either::Right(Full::new(body)))
            }
            Screened::Other(request) => request.map(Either::Left),
        }
    }

    /// A POST of the notification `notifications/initialized`.
    pub fn is_initialized_notification(&self) -> bool {
        #[derive(serde::Deserialize)]
        struct Notification<'a> {
            #[serde(borrow)]
            method: &'a str,
            id: Option<serde::de::IgnoredAny>,
        }
        match self {
            Screened::Post(_, body) => serde_json::from_slice::<Notification<'_>>(body)
                .is_ok_and(|n| n.id.is_none() && n.method == "notifications/initialized"),
            Screened::Other(_) => false,
        }
    }
}

/// Reads and judges the body of a POST: `Ok` with the request to go on with, `Err` with the
/// answer to send instead.
pub async fn screen<B>(request: Request<B>) -> Result<Screened<B>, Response<Body>>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    if request.method() != Method::POST {
        return Ok(Screened::Other(request));
    }
    let (mut parts, body) = request.into_parts();
    let bytes = read_body(body, MAX_BODY_BYTES).await?;
    if let Some(refusal) = judge(&parts.headers, &bytes) {
        return Err(refusal);
    }
    // A leading byte order mark is ignored, as on stdio: rmcp gets the message without it.
    let kept = framing::without_bom(&bytes).len();
    if kept < bytes.len() {
        parts
            .headers
            .insert(header::CONTENT_LENGTH, header::HeaderValue::from(kept));
        return Ok(Screened::Post(parts, bytes.slice(bytes.len() - kept..)));
    }
    Ok(Screened::Post(parts, bytes))
}

/// The answer to a whole POST body with `headers`, or `None` to hand it to rmcp.
fn judge(headers: &HeaderMap, body: &[u8]) -> Option<Response<Body>> {
    let verdict = framing::judge(body);
    // The method is decided before its params: one the request's revision removed is not found.
    let judged_params = matches!(&verdict, LineVerdict::Reply(answer)
        if answer["error"]["code"].as_i64() == Some(INVALID_PARAMS));
    if (verdict == LineVerdict::Forward || judged_params)
        && let Some(removed) = removed_method(headers, body)
    {
        return Some(removed);
    }
    let (status, answer) = match verdict {
        LineVerdict::Forward => return None,
        LineVerdict::Skip => (StatusCode::BAD_REQUEST, framing::blank()),
        LineVerdict::Reply(answer) => (status_of(&answer), answer),
        LineVerdict::Ignore(why) => (StatusCode::BAD_REQUEST, framing::unusable(&why)),
    };
    Some(json(status, answer))
}

/// The answer to an `initialize` request on the path of a revision without it (its
/// `MCP-Protocol-Version` header names 2026-07-28, which removed the handshake): 404 with
/// `-32601` and its `id`, as rmcp answers the other methods that revision removed. `None` for
/// any other request (`body` is a request rmcp reads, or one with params that do not fit).
fn removed_method(headers: &HeaderMap, body: &[u8]) -> Option<Response<Body>> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        method: std::borrow::Cow<'a, str>,
        id: Value,
    }
    let revision = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())?;
    let known = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|v| v.as_str() == revision)?;
    if known.has_initialize() {
        return None;
    }
    let request: Request<'_> = serde_json::from_slice(framing::without_bom(body)).ok()?;
    (request.method == INITIALIZE).then(|| {
        json(
            StatusCode::NOT_FOUND,
            framing::removed_method(request.id, INITIALIZE, known.as_str()),
        )
    })
}

/// The HTTP status of a JSON-RPC error this layer answers: a request with its params wrong is a
/// request answered (200); anything else is a body the server cannot accept (400).
fn status_of(answer: &Value) -> StatusCode {
    if answer["error"]["code"].as_i64() == Some(INVALID_PARAMS) {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    }
}

/// Reads at most `max` bytes of `body`: the bytes, or the answer to a body that is larger (413)
/// or cannot be read (400).
async fn read_body<B>(mut body: B, max: usize) -> Result<Bytes, Response<Body>>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut collected = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame
            .map_err(|e| json(StatusCode::BAD_REQUEST, framing::unreadable(&e.to_string())))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if data.len() > max - collected.len() {
            collected.extend_from_slice(&data[..max - collected.len()]);
            return Err(json(
                StatusCode::PAYLOAD_TOO_LARGE,
                framing::too_large(&collected, max),
            ));
        }
        collected.extend_from_slice(&data);
        if body.is_end_stream() {
            break;
        }
    }
    Ok(Bytes::from(collected))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(body: &str) -> Option<StatusCode> {
        judge(&HeaderMap::new(), body.as_bytes()).map(|r| r.status())
    }

    #[test]
    fn a_body_is_judged_as_a_stdio_line_with_the_status_the_transport_asks_for() {
        assert_eq!(status(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(status("not json"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status(""), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status("[]"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            status(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#),
            Some(StatusCode::OK)
        );
    }

    /// A body of the given frames (a data chunk each, or an error).
    struct Frames(std::collections::VecDeque<Result<&'static [u8], &'static str>>);

    impl hyper::body::Body for Frames {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|frame| {
                frame
                    .map(|data| hyper::body::Frame::data(Bytes::from_static(data)))
                    .map_err(std::io::Error::other)
            }))
        }
    }

    fn frames(parts: Vec<Result<&'static [u8], &'static str>>) -> Frames {
        Frames(parts.into())
    }

    #[tokio::test]
    async fn a_body_is_read_up_to_its_bound_and_no_further() {
        let whole = read_body(frames(vec![Ok(b"{\"id\""), Ok(b":7}")]), 9).await;
        assert_eq!(whole.ok().as_deref(), Some(&b"{\"id\":7}"[..]));
        let exact = read_body(frames(vec![Ok(b"123456789")]), 9).await;
        assert!(exact.is_ok(), "a body of exactly the bound is read");
        // Over the bound in the second frame: 413, and the third frame is never read.
        let mut over = frames(vec![
            Ok(b"{\"id\":7,"),
            Ok(b"\"x\":1}"),
            Err("read too far"),
        ]);
        let refused = read_body(&mut over, 9).await.expect_err("over the bound");
        assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(over.0.len(), 1, "the rest is left unread");
        let broken = read_body(frames(vec![Ok(b"{"), Err("invalid chunk size")]), 9)
            .await
            .expect_err("unreadable");
        assert_eq!(broken.status(), StatusCode::BAD_REQUEST);
    }
}
