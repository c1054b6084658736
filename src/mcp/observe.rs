//! What the server tells its observers about the requests it answers: each tool call and each
//! resource read, with the endpoint's agent, the outcome, the time it took and the bytes served.
//! The HTTP server's metrics ([`super::http::metrics`]) and audit log ([`super::audit`]) observe;
//! a server without observers (stdio) pays nothing. Observers are called on the request's task after the answer is built and must
//! not block.

// Only the HTTP transport has observers; the stdio server builds the records and tells no one.
#![cfg_attr(
    not(feature = "http"),
    expect(dead_code, reason = "only the HTTP transport has observers")
)]

use std::time::Duration;

use super::trace_context::TraceParent;

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with the content asked for.
    Ok,
    /// Refused: a tool error (`isError`), an unknown resource, a file that changed on disk.
    Refused,
}

impl Outcome {
    /// `ok` or `refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
        }
    }
}

/// Who an OAuth access token named (`serve --listen --oauth`), for the audit record: never the
/// token. Values are the token's claims (client text: observers must escape and bound them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's issuer.
    pub issuer: String,
    /// Its `sub`.
    pub sub: Option<String>,
    /// Its `client_id`.
    pub client_id: Option<String>,
}

/// A tool call that was answered.
#[derive(Debug, Clone)]
pub struct ToolCall<'a> {
    /// The endpoint's agent (`None`: the defaults).
    pub agent: Option<&'a str>,
    /// The MCP session it came in (`None`: stdio, or a stateless request).
    pub session: Option<&'a str>,
    /// Who the request's access token named (`None`: no `--oauth` token).
    pub caller: Option<&'a Caller>,
    /// The W3C trace context the request carried, when valid.
    pub trace: Option<&'a TraceParent>,
    /// The JSON-RPC id of the request (client text when a string: observers must bound and
    /// escape it).
    pub request_id: Option<&'a rmcp::model::RequestId>,
    /// What the library records of a call that served content: skill, version, pinned hash,
    /// the file, bytes and their SHA-256.
    pub record: Option<&'a crate::runtime::tools::Record>,
    /// For a refused call, the skill its arguments named (client text: observers must bound and
    /// escape it); `None` when served, or when the arguments named none.
    pub asked: Option<&'a str>,
    /// The tool error's code, for a refused call.
    pub code: Option<&'a str>,
    /// The tool's name, or `unknown` for a name the catalogue has no tool for.
    pub tool: &'a str,
    /// How it ended.
    pub outcome: Outcome,
    /// How long the call took.
    pub duration: Duration,
    /// The bytes of the answer's content.
    pub bytes: usize,
}

/// A resource read that was answered.
#[derive(Debug, Clone)]
pub struct ResourceRead<'a> {
    /// The endpoint's agent (`None`: the defaults).
    pub agent: Option<&'a str>,
    /// The MCP session it came in.
    pub session: Option<&'a str>,
    /// Who the request's access token named (`None`: no `--oauth` token).
    pub caller: Option<&'a Caller>,
    /// The W3C trace context the request carried, when valid.
    pub trace: Option<&'a TraceParent>,
    /// The JSON-RPC id of the request (client text when a string: observers must bound and
    /// escape it).
    pub request_id: Option<&'a rmcp::model::RequestId>,
    /// The resource asked for (client text: observers must escape or encode it).
    pub uri: &'a str,
    /// What was served.
    pub contents: Option<&'a rmcp::model::ResourceContents>,
    /// The pin of the skill the URI names, when the catalogue serves it.
    pub pin: Option<&'a crate::format::pin::Pin>,
    /// Why it was refused: `resource_not_found`, `reference_changed`.
    pub code: Option<&'a str>,
    /// How it ended.
    pub outcome: Outcome,
    /// The bytes of the file served (0 when refused).
    pub bytes: usize,
}

/// Something told of every answered request.
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// A tool call was answered.
    fn tool_call(&self, call: &ToolCall<'_>);
    /// A resource read was answered.
    fn resource_read(&self, read: &ResourceRead<'_>);
}

/// Several observers, each told in turn.
#[derive(Debug, Default)]
pub struct Fanout(pub Vec<std::sync::Arc<dyn Observer>>);

impl Observer for Fanout {
    fn tool_call(&self, call: &ToolCall<'_>) {
        for observer in &self.0 {
            observer.tool_call(call);
        }
    }

    fn resource_read(&self, read: &ResourceRead<'_>) {
        for observer in &self.0 {
            observer.resource_read(read);
        }
    }
}
