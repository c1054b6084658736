//! The stdio framing in front of rmcp: every line the client sends is read here first, bounded,
//! and judged before rmcp sees it, so that every request with an id gets exactly one answer.
//!
//! rmcp alone drops a line that is not JSON without a word, answers a request whose params do not
//! fit its method with `-32601 method not found` (it falls back to a custom request), answers
//! other malformed messages without an `id`, and drops a line over its own 16 MiB bound silently.
//! This layer sits between the real stdin/stdout and an in-memory duplex that rmcp is served on:
//!
//! - a line longer than [`MAX_MESSAGE_BYTES`] is discarded up to its newline in bounded memory
//!   (only its first [`MAX_MESSAGE_BYTES`] bytes are kept, to find its `id`) and answered with
//!   `-32600`; the server keeps serving;
//! - a line that is not JSON (or not UTF-8) is answered with `-32700 parse error`, `id: null`;
//! - a JSON value that is not one message object (a batch, a number) is answered with `-32600`;
//! - a message with a key written twice in one object ([`keys`]) is answered with `-32600`, with
//!   `id: null` when the key is at its top (even its `id` is then not its own), else its `id`;
//! - a leading UTF-8 byte order mark is ignored (RFC 8259 §8.1): the line is judged, and handed
//!   to rmcp, without it;
//! - a request of a method the server serves whose params do not have that method's shape (as
//!   rmcp's own types read it) is answered with `-32602 invalid params` and its `id`; a method it
//!   does not serve (`logging/setLevel`, `resources/subscribe`, prompts, completions, tasks) is
//!   decided first: rmcp answers it `-32601 method not found` whatever its params (HTTP 404 on
//!   the 2026-07-28 path, which removed some of them);
//! - any other request rmcp could not read is answered with `-32600` and its `id` (or `null` when
//!   the id itself is malformed);
//! - a notification or response that cannot be used is never answered (JSON-RPC forbids it) and
//!   is logged on stderr;
//! - blank lines are skipped; everything else goes to rmcp unchanged.
//!
//! Answers written here and rmcp's own output are written to stdout whole, one line each.
//!
//! [`judge`] is the one judge of a client message: the HTTP transport calls it on every POST
//! body too (`mcp::http::jsonrpc`), so the same message gets the same JSON-RPC error code on
//! both transports.

use std::time::Duration;

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream, ReadHalf,
    WriteHalf,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

#[path = "framing_keys.rs"]
mod keys;

/// The largest message the server reads: the bytes of one line before its `\n`. A longer line is
/// refused with `-32600` (and discarded without being held in memory); the server keeps serving.
/// A tool input is small (a skill name and a path); 4 MiB leaves room for any client metadata.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a valid request (or is too large to be read).
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: the method is not served.
#[cfg(feature = "http")]
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;

/// The longest error message this layer writes, in characters (a parser message may quote the
/// offending value).
const MAX_ERROR_CHARS: usize = 300;

/// The size of the pipes between this layer and rmcp, and of the read buffer on stdin.
const BUFFER_BYTES: usize = 64 * 1024;

/// What to do with one line from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum LineVerdict {
    /// A message rmcp reads as it is: hand it over unchanged.
    Forward,
    /// A blank line: nothing to do.
    Skip,
    /// Answer with this JSON-RPC error response; rmcp never sees the line.
    Reply(Value),
    /// A notification or response that cannot be used; nothing may answer it. Why, for the log.
    Ignore(String),
}

/// The UTF-8 byte order mark: RFC 8259 §8.1 forbids sending one and lets a parser ignore it.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `message` without a leading byte order mark, which both transports ignore: a message that
/// starts with one is judged and handed to rmcp without it.
pub fn without_bom(message: &[u8]) -> &[u8] {
    message.strip_prefix(BOM).unwrap_or(message)
}

/// Judges one line (without its `\n`; a leading byte order mark is ignored, [`without_bom`]).
pub fn judge(line: &[u8]) -> LineVerdict {
    let line = without_bom(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return LineVerdict::Skip;
    }
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(e) => {
            return LineVerdict::Reply(error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("parse error: the message is not JSON: {e}"),
            ));
        }
    };
    let Value::Object(fields) = &message else {
        let why = if message.is_array() {
            "invalid request: batches are not supported; send one JSON-RPC message at a time"
        } else {
            "invalid request: a JSON-RPC message is a JSON object"
        };
        return LineVerdict::Reply(error_response(Value::Null, INVALID_REQUEST, why));
    };
    let id = fields.get("id");
    let answer_to = id.filter(|id| is_request_id(id)).cloned();
    let answerable = fields.contains_key("method") && id.is_some()
        || !["method", "result", "error"]
            .iter()
            .any(|k| fields.contains_key(*k));
    if let Some(repeated) = keys::repeated_key(line) {
        // Written twice at the top, even the `id` is not the message's own: `null` then.
        let id = answer_to.filter(|_| !repeated.top_level);
        return refuse_or_ignore(
            answerable,
            id,
            INVALID_REQUEST,
            &format!(
                "invalid request: the key {} is written twice in one object",
                quoted_key(&repeated.key)
            ),
        );
    }
    if fields.get("jsonrpc") != Some(&json!("2.0")) {
        return refuse_or_ignore(
            answerable,
            answer_to,
            INVALID_REQUEST,
            "invalid request: `jsonrpc` must be \"2.0\"",
        );
    }
    match (fields.get("method"), id) {
        (Some(Value::String(method)), Some(id)) => judge_request(&message, method, id),
        (Some(Value::String(method)), None) => judge_notification(&message, method),
        (Some(_), _) => refuse_or_ignore(
            answerable,
            answer_to,
            INVALID_REQUEST,
            "invalid request: `method` must be a string",
        ),
        (None, _) if !answerable => match rmcp_reads(&message) {
            Ok(()) => LineVerdict::Forward,
            Err(e) => LineVerdict::Ignore(format!("a response that is not valid JSON-RPC: {e}")),
        },
        (None, _) => LineVerdict::Reply(error_response(
            answer_to.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "invalid request: no `method` (nor `result` or `error`)",
        )),
    }
}

/// The answer to a line longer than [`MAX_MESSAGE_BYTES`], of which `prefix` is the start: the
/// request's `id` when the prefix shows it before anything large, else `null`.
pub fn oversized(prefix: &[u8]) -> Value {
    too_large(prefix, MAX_MESSAGE_BYTES)
}

/// The answer to a message longer than `max` bytes (a line on stdio, a request body over HTTP),
/// of which `prefix` is the start: `-32600` with the request's `id` when the prefix shows it.
pub fn too_large(prefix: &[u8], max: usize) -> Value {
    error_response(
        leading_id(prefix).unwrap_or(Value::Null),
        INVALID_REQUEST,
        &format!("invalid request: the message is larger than {max} bytes and was discarded"),
    )
}

#[cfg(feature = "http")]
/// The answer to a message that must be there but is empty or blank (an HTTP request body; a
/// blank line on stdio is [`LineVerdict::Skip`]ped instead): `-32700`, as for any text that is not
/// JSON.
pub fn blank() -> Value {
    error_response(
        Value::Null,
        PARSE_ERROR,
        "parse error: the message is empty; send one JSON-RPC message",
    )
}

#[cfg(feature = "http")]
/// The answer to a message that could not be received whole (the transport failed mid-way, as a
/// malformed HTTP chunk does): `-32700`, `id: null`, with `why`.
pub fn unreadable(why: &str) -> Value {
    error_response(
        Value::Null,
        PARSE_ERROR,
        &format!("parse error: the message could not be read: {why}"),
    )
}

#[cfg(feature = "http")]
/// The answer to a request of `method`, which the protocol revision it was sent on removed:
/// `-32601` with its `id`, as rmcp answers the methods it does not serve.
pub fn removed_method(id: Value, method: &str, revision: &str) -> Value {
    error_response(
        id,
        METHOD_NOT_FOUND,
        &format!(
            "method not found: `{}` is not part of protocol revision {}",
            crate::support::escape::text(method),
            crate::support::escape::text(revision)
        ),
    )
}

#[cfg(feature = "http")]
/// The answer a transport that must answer every message (HTTP) gives to one that stdio leaves
/// unanswered ([`LineVerdict::Ignore`]): `-32600`, `id: null`, with why it cannot be used.
pub fn unusable(why: &str) -> Value {
    error_response(
        Value::Null,
        INVALID_REQUEST,
        &format!("invalid request: {why}"),
    )
}

/// A key as an error message names it: escaped, quoted, at most 64 characters.
fn quoted_key(key: &str) -> String {
    let cut: String = key.chars().take(64).collect();
    let more = if cut.len() < key.len() { "…" } else { "" };
    format!("`{}{more}`", crate::support::escape::text(&cut))
}

fn refuse_or_ignore(answerable: bool, id: Option<Value>, code: i64, why: &str) -> LineVerdict {
    if answerable {
        LineVerdict::Reply(error_response(id.unwrap_or(Value::Null), code, why))
    } else {
        LineVerdict::Ignore(why.to_owned())
    }
}

fn judge_request(message: &Value, method: &str, id: &Value) -> LineVerdict {
    if !is_request_id(id) {
        return LineVerdict::Reply(error_response(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: `id` must be a string or an integer",
        ));
    }
    if let Some(check) = shape_of(REQUESTS, method)
        && let Err(e) = check(message)
    {
        return LineVerdict::Reply(error_response(
            id.clone(),
            INVALID_PARAMS,
            &format!("invalid params for `{method}`: {e}"),
        ));
    }
    match rmcp_reads(message) {
        Ok(()) => LineVerdict::Forward,
        Err(e) => LineVerdict::Reply(error_response(
            id.clone(),
            INVALID_REQUEST,
            &format!("invalid request: {e}"),
        )),
    }
}

fn judge_notification(message: &Value, method: &str) -> LineVerdict {
    if let Some(check) = shape_of(NOTIFICATIONS, method)
        && let Err(e) = check(message)
    {
        return LineVerdict::Ignore(format!(
            "a `{}` notification with invalid params: {e}",
            crate::support::escape::text(method)
        ));
    }
    match rmcp_reads(message) {
        Ok(()) => LineVerdict::Forward,
        Err(e) => LineVerdict::Ignore(format!(
            "a `{}` notification that is not valid JSON-RPC: {e}",
            crate::support::escape::text(method)
        )),
    }
}

/// Whether rmcp reads `message` as a client message.
fn rmcp_reads(message: &Value) -> Result<(), serde_json::Error> {
    rmcp::model::ClientJsonRpcMessage::deserialize(message).map(drop)
}

/// A request id as MCP allows it (and rmcp reads it): a string or an integer.
fn is_request_id(id: &Value) -> bool {
    rmcp::model::RequestId::deserialize(id).is_ok()
}

/// Checks a whole message against the shape rmcp's type for its method reads.
type Check = fn(&Value) -> Result<(), serde_json::Error>;

fn shape<T: DeserializeOwned>(message: &Value) -> Result<(), serde_json::Error> {
    T::deserialize(message).map(drop)
}

fn shape_of(table: &[(&str, Check)], method: &str) -> Option<Check> {
    table.iter().find(|(m, _)| *m == method).map(|(_, c)| *c)
}

/// Every request the server serves that rmcp reads with a type of its own. A request of one of
/// these methods whose params do not fit would otherwise fall through to rmcp's custom request and
/// be answered `method not found`. The methods rmcp reads but this server does not serve
/// (`completion/complete`, `logging/setLevel`, `prompts/*`, `resources/subscribe`,
/// `resources/unsubscribe`, `tasks/*`: no capability declares them) are not here: they are not
/// found whatever their params, as the conformance suite checks on the 2026-07-28 path.
static REQUESTS: &[(&str, Check)] = {
    use rmcp::model::*;
    &[
        (PingRequestMethod::VALUE, shape::<PingRequest>),
        (InitializeResultMethod::VALUE, shape::<InitializeRequest>),
        (DiscoverRequestMethod::VALUE, shape::<DiscoverRequest>),
        (
            ListResourcesRequestMethod::VALUE,
            shape::<ListResourcesRequest>,
        ),
        (
            ListResourceTemplatesRequestMethod::VALUE,
            shape::<ListResourceTemplatesRequest>,
        ),
        (
            ReadResourceRequestMethod::VALUE,
            shape::<ReadResourceRequest>,
        ),
        (
            SubscriptionsListenRequestMethod::VALUE,
            shape::<SubscriptionsListenRequest>,
        ),
        (CallToolRequestMethod::VALUE, shape::<CallToolRequest>),
        (ListToolsRequestMethod::VALUE, shape::<ListToolsRequest>),
        (ListSkillsRequestMethod::VALUE, shape::<ListSkillsRequest>),
        (GetSkillRequestMethod::VALUE, shape::<GetSkillRequest>),
        (
            ReadResourceDirectoryRequestMethod::VALUE,
            shape::<ReadResourceDirectoryRequest>,
        ),
    ]
};

/// Every notification rmcp's server reads with a type of its own.
static NOTIFICATIONS: &[(&str, Check)] = {
    use rmcp::model::*;
    &[
        (
            CancelledNotificationMethod::VALUE,
            shape::<CancelledNotification>,
        ),
        (
            ProgressNotificationMethod::VALUE,
            shape::<ProgressNotification>,
        ),
        (
            InitializedNotificationMethod::VALUE,
            shape::<InitializedNotification>,
        ),
        (
            RootsListChangedNotificationMethod::VALUE,
            shape::<RootsListChangedNotification>,
        ),
    ]
};

/// A JSON-RPC error response.
fn error_response(id: Value, code: i64, message: &str) -> Value {
    let message: String = if message.chars().count() > MAX_ERROR_CHARS {
        let mut cut: String = message.chars().take(MAX_ERROR_CHARS).collect();
        cut.push('…');
        cut
    } else {
        message.to_owned()
    };
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The value of the top-level `id` of a JSON object that `prefix` starts, if it appears (whole)
/// in the prefix and is a valid request id. The rest of the object may be cut off.
fn leading_id(prefix: &[u8]) -> Option<Value> {
    let mut found = None;
    let mut parser = serde_json::Deserializer::from_slice(prefix);
    // The prefix is cut short: the parse ends in an error once the id has been seen (or not).
    let _ = IdSeeker(&mut found).deserialize(&mut parser);
    found.filter(is_request_id)
}

/// Walks the top-level keys of an object until `id`, keeping its value.
struct IdSeeker<'a>(&'a mut Option<Value>);

impl<'de> DeserializeSeed<'de> for IdSeeker<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdSeeker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                *self.0 = Some(map.next_value::<Value>()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// One line read from the client.
#[derive(Debug, PartialEq, Eq)]
enum ClientLine {
    /// A whole line, without its `\n`.
    Whole(Vec<u8>),
    /// A line over the bound: its first [`MAX_MESSAGE_BYTES`] bytes; the rest was discarded.
    Oversized(Vec<u8>),
}

/// Reads lines of at most `max` bytes; the rest of a longer line is read and dropped, never held.
struct LineReader<R> {
    input: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(input: R, max: usize) -> LineReader<R> {
        LineReader {
            input: BufReader::with_capacity(BUFFER_BYTES, input),
            max,
        }
    }

    /// The next line; `None` at the end of the input. A last line without `\n` counts.
    async fn next(&mut self) -> std::io::Result<Option<ClientLine>> {
        let mut line = Vec::new();
        let mut over = false;
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (over, line.is_empty()) {
                    (true, _) => Some(ClientLine::Oversized(line)),
                    (false, true) => None,
                    (false, false) => Some(ClientLine::Whole(line)),
                });
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            let room = self.max.saturating_sub(line.len());
            if chunk.len() > room {
                over = true;
            }
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = chunk.len() + usize::from(newline.is_some());
            self.input.consume(used);
            if newline.is_some() {
                return Ok(Some(if over {
                    ClientLine::Oversized(line)
                } else {
                    ClientLine::Whole(line)
                }));
            }
        }
    }
}

/// The running framing: the tasks that read the client and write to it.
#[derive(Debug)]
pub struct Framing {
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

/// Starts the framing between the client's `input` and `output` (stdin and stdout) and returns
/// the end of the duplex to serve rmcp on.
pub fn start<R, W>(input: R, output: W) -> (DuplexStream, Framing)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_end, our_end) = tokio::io::duplex(BUFFER_BYTES);
    let (from_rmcp, to_rmcp) = tokio::io::split(our_end);
    let (lines, queue) = mpsc::channel(64);
    let reader = tokio::spawn(read_client(input, to_rmcp, lines.clone()));
    tokio::spawn(relay_rmcp(from_rmcp, lines));
    let writer = tokio::spawn(write_client(queue, output));
    (rmcp_end, Framing { reader, writer })
}

impl Framing {
    /// Stops reading the client and waits, at most `limit`, until every answer queued and
    /// everything rmcp wrote has been written. Call it once rmcp's session has ended.
    pub async fn finish(self, limit: Duration) {
        self.reader.abort();
        let _ = tokio::time::timeout(limit, self.writer).await;
    }
}

/// Reads the client line by line: judged lines go to rmcp or are answered here. At the end of
/// the input (or when rmcp is gone) rmcp's input is closed, which ends its session.
async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: WriteHalf<DuplexStream>,
    answers: mpsc::Sender<Vec<u8>>,
) {
    let mut lines = LineReader::new(input, MAX_MESSAGE_BYTES);
    loop {
        let verdict = match lines.next().await {
            Ok(Some(ClientLine::Whole(line))) => match judge(&line) {
                LineVerdict::Forward => {
                    let mut message = line;
                    if message.starts_with(BOM) {
                        message.drain(..BOM.len());
                    }
                    message.push(b'\n');
                    if to_rmcp.write_all(&message).await.is_err() {
                        break;
                    }
                    continue;
                }
                verdict => verdict,
            },
            Ok(Some(ClientLine::Oversized(prefix))) => {
                super::diag(format_args!(
                    "skillfold serve: refused a message larger than {MAX_MESSAGE_BYTES} bytes"
                ));
                LineVerdict::Reply(oversized(&prefix))
            }
            Ok(None) => break,
            Err(e) => {
                super::diag(format_args!(
                    "skillfold serve: cannot read stdin: {}",
                    crate::support::escape::text(&e.to_string())
                ));
                break;
            }
        };
        match verdict {
            LineVerdict::Reply(answer) => {
                if answers.send(json_line(&answer)).await.is_err() {
                    break;
                }
            }
            LineVerdict::Ignore(why) => {
                super::diag(format_args!("skillfold serve: ignored a message: {why}"));
            }
            LineVerdict::Forward | LineVerdict::Skip => {}
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Passes rmcp's output on, one whole line at a time, until rmcp closes it.
async fn relay_rmcp(from_rmcp: ReadHalf<DuplexStream>, lines: mpsc::Sender<Vec<u8>>) {
    let mut from_rmcp = BufReader::with_capacity(BUFFER_BYTES, from_rmcp);
    loop {
        let mut line = Vec::new();
        match from_rmcp.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if lines.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes every queued line to the client. A failed write (the client went away) stops the
/// writing but not the draining, so neither rmcp nor the reader ever waits on a dead client.
async fn write_client<W: AsyncWrite + Unpin>(mut queue: mpsc::Receiver<Vec<u8>>, mut output: W) {
    let mut broken = false;
    while let Some(line) = queue.recv().await {
        if !broken {
            broken = output.write_all(&line).await.is_err() || output.flush().await.is_err();
        }
    }
}

fn json_line(value: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match judge(line.as_bytes()) {
            LineVerdict::Reply(v) => v,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn code_and_id(v: &Value) -> (i64, Value) {
        (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
    }

    #[test]
    fn a_line_that_is_not_json_gets_a_parse_error_with_a_null_id() {
        for line in [
            "not json",
            "{\"jsonrpc\": \"2.0\", \"id\": 1",
            "\u{7f}\u{1b}[8m",
            "{\"a\":1}x",
        ] {
            assert_eq!(
                code_and_id(&reply(line)),
                (PARSE_ERROR, Value::Null),
                "{line}"
            );
        }
        let v = match judge(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}") {
            LineVerdict::Reply(v) => v,
            other => panic!("{other:?}"),
        };
        assert_eq!(code_and_id(&v), (PARSE_ERROR, Value::Null), "invalid UTF-8");
    }

    #[test]
    fn malformed_params_of_a_known_method_get_invalid_params_and_the_id() {
        for line in [
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load_skill","arguments":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":5}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":7}}"#,
        ] {
            assert_eq!(
                code_and_id(&reply(line)),
                (INVALID_PARAMS, json!(2)),
                "{line}"
            );
        }
        let v =
            reply(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"arguments":{}}}"#);
        assert_eq!(code_and_id(&v), (INVALID_PARAMS, json!("a")));
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`tools/call`"),
            "{v}"
        );
    }

    #[test]
    fn messages_rmcp_reads_are_forwarded() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"x","reference":null}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\r",
            // Methods the server does not serve: rmcp answers them not found, whatever params.
            r#"{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":7}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"resources/unsubscribe"}"#,
        ] {
            assert_eq!(judge(line.as_bytes()), LineVerdict::Forward, "{line}");
        }
        assert_eq!(judge(b"   \r"), LineVerdict::Skip);
        assert_eq!(judge(b""), LineVerdict::Skip);
    }

    #[test]
    fn invalid_messages_get_invalid_request_with_the_id_when_it_is_valid() {
        let cases = [
            ("[1,2]", Value::Null),
            ("5", Value::Null),
            (r#"{"jsonrpc":"2.0","id":7}"#, json!(7)),
            (r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#, json!(7)),
            (r#"{"id":"x","method":"ping"}"#, json!("x")),
            (r#"{"jsonrpc":"2.0","id":7,"method":3}"#, json!(7)),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"ping","result":{}}"#,
                json!(9),
            ),
        ];
        for (line, id) in cases {
            assert_eq!(code_and_id(&reply(line)), (INVALID_REQUEST, id), "{line}");
        }
    }

    #[test]
    fn a_key_written_twice_is_invalid_request_without_the_id_when_it_is_at_the_top() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ] {
            let answer = reply(line);
            assert_eq!(
                code_and_id(&answer),
                (INVALID_REQUEST, Value::Null),
                "{line}"
            );
            assert!(answer.as_object().unwrap().contains_key("id"), "{line}");
        }
        let nested = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","name":"b","arguments":{}}}"#;
        let answer = reply(nested);
        assert_eq!(code_and_id(&answer), (INVALID_REQUEST, json!(3)));
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`name`"),
            "{answer}"
        );
        // A notification is never answered, whatever is wrong with it.
        assert!(matches!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/initialized","method":"x"}"#),
            LineVerdict::Ignore(_)
        ));
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
        ] {
            assert!(
                matches!(judge(line.as_bytes()), LineVerdict::Ignore(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn an_oversized_message_is_answered_with_the_id_its_start_shows() {
        let mut prefix =
            br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":""#.to_vec();
        prefix.resize(MAX_MESSAGE_BYTES, b'a');
        assert_eq!(
            code_and_id(&oversized(&prefix)),
            (INVALID_REQUEST, json!(42))
        );
        let late = br#"{"jsonrpc":"2.0","params":{"name":"aaaaaaaa"#;
        assert_eq!(
            code_and_id(&oversized(late)),
            (INVALID_REQUEST, Value::Null)
        );
        assert_eq!(
            code_and_id(&oversized(b"aaaa")),
            (INVALID_REQUEST, Value::Null)
        );
        let cut_id = br#"{"id":"abc"#;
        assert_eq!(leading_id(cut_id), None, "a cut string is not an id");
    }

    #[test]
    fn error_messages_are_bounded() {
        let huge = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":"{}"}}}}"#,
            "y".repeat(100_000)
        );
        let v = reply(&huge);
        assert!(v["error"]["message"].as_str().unwrap().chars().count() <= MAX_ERROR_CHARS + 1);
    }

    #[tokio::test]
    async fn lines_are_bounded_and_the_rest_of_a_long_line_is_dropped() {
        let mut input = b"ab\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100));
        input.extend(b"\ncd\r\nlast");
        let mut reader = LineReader::new(input.as_slice(), 10);
        let mut got = Vec::new();
        while let Some(line) = reader.next().await.unwrap() {
            got.push(line);
        }
        assert_eq!(
            got,
            [
                ClientLine::Whole(b"ab".to_vec()),
                ClientLine::Oversized(vec![b'x'; 10]),
                ClientLine::Whole(b"cd\r".to_vec()),
                ClientLine::Whole(b"last".to_vec()),
            ]
        );
        let mut exact = LineReader::new(&b"0123456789\n"[..], 10);
        assert_eq!(
            exact.next().await.unwrap(),
            Some(ClientLine::Whole(b"0123456789".to_vec()))
        );
    }
}
