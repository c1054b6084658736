//! What the server tells its observers about the requests it answers: each tool call and each
//! resource read, with the endpoint's agent, the outcome, the time it took and the bytes served.
//! The HTTP server's metrics ([`super::http::metrics`]) observe; a server without observers (stdio)
//! pays nothing. Observers are called on the request's task after the answer is built and must
//! not block.

use std::time::Duration;

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

/// A tool call that was answered.
#[derive(Debug, Clone)]
pub struct ToolCall<'a> {
    /// The endpoint's agent (`None`: the defaults).
    pub agent: Option<&'a str>,
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
