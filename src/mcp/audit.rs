//! The audit log (`serve --listen --audit-log PATH`, or `-` for stderr): one JSON line per tool
//! call and resource read answered — when, which agent and session, the tool or method, the
//! skill with its pinned version and hash, the file served, how many bytes and the SHA-256 of
//! exactly those bytes, the outcome and the error code. For a tool call it is the record the
//! library gives hosts ([`crate::runtime::tools::Record`]). Never the content, never a token:
//! the log holds only what identifies what was served. With `--oauth`, a line names who the
//! access token named: `issuer`, `sub`, `client_id` (never the token). When the request carried a
//! valid W3C trace context (`params._meta.traceparent`, else the `traceparent` header), the line
//! holds its `trace_id` and `span_id` ([`crate::mcp::trace_context`]); otherwise both are `null`. Lines are appended (the file is opened
//! with `O_APPEND`, one write per line); [`AuditLog::reopen`] opens the path again, so a rotated
//! log continues in a new file after `SIGHUP`.
//!
//! Every string a client chose or could have chosen (the URI, the session id from its header, the
//! file path, the tool and skill names) is bounded and escaped as human output escapes it
//! ([`crate::support::escape::text`]): a right-to-left override, a line separator, a C1 control,
//! DEL or a byte-order mark is written `\u{XXXX}` in the JSON string, so a log viewer shows what
//! was asked and the line stays one valid JSON record.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::mcp::observe::{Caller, Observer, ResourceRead, ToolCall};
use crate::mcp::trace_context::TraceParent;
use crate::support::hex::sha256_hex;

/// The most characters of a client-chosen value (a URI) kept in a line.
const MAX_CLIENT_TEXT: usize = 512;

/// The most characters of the skill name a refused call asked for kept in its line: twice the
/// longest valid name, so a made-up name cannot make a line long.
const MAX_ASKED_SKILL: usize = 128;

/// Where the lines go.
#[derive(Debug)]
enum Sink {
    Stderr,
    File {
        path: PathBuf,
        file: Mutex<std::fs::File>,
    },
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    sink: Sink,
}

fn open_append(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(fs_err::File::into_parts)
        .map(|(file, _)| file)
}

impl AuditLog {
    /// Opens `target` for appending: a path, or `-` for stderr.
    pub fn open(target: &std::path::Path) -> std::io::Result<AuditLog> {
        if target.as_os_str() == "-" {
            return Ok(AuditLog { sink: Sink::Stderr });
        }
        Ok(AuditLog {
            sink: Sink::File {
                path: target.to_owned(),
                file: Mutex::new(open_append(target)?),
            },
        })
    }

    /// Opens the path again (after the log was rotated); stderr stays stderr.
    pub fn reopen(&self) -> std::io::Result<()> {
        if let Sink::File { path, file } = &self.sink {
            let fresh = open_append(path)?;
            *file.lock().unwrap_or_else(|e| e.into_inner()) = fresh;
        }
        Ok(())
    }

    fn write(&self, line: &Value) {
        let mut text = line.to_string();
        text.push('\n');
        let written = match &self.sink {
            Sink::Stderr => std::io::stderr().lock().write_all(text.as_bytes()),
            Sink::File { file, .. } => file
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write_all(text.as_bytes()),
        };
        if let Err(e) = written {
            super::diag(format_args!(
                "skillfold serve: warning: cannot write the audit log: {e}"
            ));
        }
    }
}

/// Now, as RFC 3339 UTC with milliseconds.
fn now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = crate::support::time::format_unix(since.as_secs());
    format!(
        "{}.{:03}Z",
        seconds.trim_end_matches('Z'),
        since.subsec_millis()
    )
}

/// A client's text as a line holds it: its first [`MAX_CLIENT_TEXT`] characters, escaped.
fn bounded(text: &str) -> String {
    capped(text, MAX_CLIENT_TEXT)
}

/// The first `max` characters of a client's text, escaped.
fn capped(text: &str, max: usize) -> String {
    let cut: String = text.chars().take(max).collect();
    crate::support::escape::text(&cut).to_string()
}

impl Observer for AuditLog {
    fn tool_call(&self, call: &ToolCall<'_>) {
        let mut line = json!({
            "time": now(),
            "agent": call.agent,
            "session": call.session.map(bounded),
            "method": "tools/call",
            "tool": bounded(call.tool),
            "outcome": call.outcome.as_str(),
            "code": call.code,
        });
        if let Value::Object(map) = &mut line {
            caller_fields(map, call.caller);
            trace_fields(map, call.trace, call.request_id);
        }
        if let (None, Some(asked), Value::Object(map)) = (call.record, call.asked, &mut line) {
            map.insert("skill".into(), json!(capped(asked, MAX_ASKED_SKILL)));
        }
        if let (Some(record), Value::Object(map)) = (call.record, &mut line) {
            map.insert("skill".into(), json!(bounded(&record.skill)));
            map.insert(
                "version".into(),
                json!(record.version.as_deref().map(bounded)),
            );
            map.insert("hash".into(), json!(record.hash));
            map.insert(
                "path".into(),
                json!(record.reference.as_deref().map(bounded)),
            );
            map.insert("bytes".into(), json!(record.bytes));
            map.insert("sha256".into(), json!(record.sha256));
        }
        self.write(&line);
    }

    fn resource_read(&self, read: &ResourceRead<'_>) {
        use base64::Engine as _;
        let bytes: Option<Vec<u8>> = read.contents.map(|contents| match contents {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                text.as_bytes().to_vec()
            }
            rmcp::model::ResourceContents::BlobResourceContents { blob, .. } => {
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .unwrap_or_default()
            }
            _ => Vec::new(),
        });
        let path = read
            .uri
            .strip_prefix("skill://")
            .and_then(|rest| rest.split_once('/'))
            .map(|(_, path)| path);
        let mut line = json!({
            "time": now(),
            "agent": read.agent,
            "session": read.session.map(bounded),
            "method": "resources/read",
            "uri": bounded(read.uri),
            "skill": read.pin.map(|p| bounded(p.name.as_ref())),
            "version": read.pin.map(|p| p.version.as_str().to_owned()),
            "hash": read.pin.map(|p| p.hash.to_string()),
            "path": read.pin.and(path).map(bounded),
            "bytes": bytes.as_ref().map(Vec::len),
            "sha256": bytes.as_deref().map(sha256_hex),
            "outcome": read.outcome.as_str(),
            "code": read.code,
        });
        if let Value::Object(map) = &mut line {
            caller_fields(map, read.caller);
            trace_fields(map, read.trace, read.request_id);
        }
        self.write(&line);
    }
}

/// Where the request sits in a trace: its JSON-RPC `request_id` (a number, or a client's string
/// bounded and escaped) and the W3C trace context it carried, `trace_id` and `span_id` (the
/// caller's span), each validated lowercase hex ([`TraceParent::parse`]); `null` when it carried
/// none or a malformed one.
fn trace_fields(
    map: &mut serde_json::Map<String, Value>,
    trace: Option<&TraceParent>,
    request_id: Option<&rmcp::model::RequestId>,
) {
    let request_id = match request_id {
        Some(rmcp::model::NumberOrString::Number(n)) => json!(n),
        Some(rmcp::model::NumberOrString::String(s)) => json!(bounded(s)),
        None => Value::Null,
    };
    map.insert("request_id".into(), request_id);
    map.insert("trace_id".into(), json!(trace.map(|t| &t.trace_id)));
    map.insert("span_id".into(), json!(trace.map(|t| &t.span_id)));
}

/// With `--oauth`, who the access token named: `issuer`, `sub`, `client_id`, each bounded and
/// escaped (they are the token's claims); without, nothing is added.
fn caller_fields(map: &mut serde_json::Map<String, Value>, caller: Option<&Caller>) {
    if let Some(caller) = caller {
        map.insert("issuer".into(), json!(bounded(&caller.issuer)));
        map.insert("sub".into(), json!(caller.sub.as_deref().map(bounded)));
        map.insert(
            "client_id".into(),
            json!(caller.client_id.as_deref().map(bounded)),
        );
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
