//! The MCP server (`skillfold serve`): one agent's catalogue over stdio, or every agent's over
//! Streamable HTTP ([`http`], feature `http`), built on the official Rust SDK (`rmcp`). It may use everything below it ([`crate::runtime`] for the catalogue and
//! tools, [`crate::ops`] for the reload's preparation); nothing but the binary uses it.
//!
//! The server is generic over the catalogue. `tools/list` is [`Catalogue::tools`] — name,
//! description, input and output schemas and behaviour annotations exactly as the library
//! defines them (the `outputSchema` only to sessions of protocol 2025-06-18 or later, which
//! define it) — and every `tools/call` goes to [`Catalogue::call`], whatever the tool: a success
//! is the output JSON, as `structuredContent` (valid against the tool's `outputSchema`) and as its
//! text; a refusal is an MCP tool error (`isError: true`, as MCP 2025-06-18 reports tool execution
//! errors) whose text is the library's JSON error object (`{"error": {code, message, valid}}`,
//! `schemas/tool-error.schema.json`). A refusal carries no `structuredContent`: MCP requires
//! structured results to conform to the `outputSchema`, which describes successes. A tool the
//! library adds appears here with the same schemas, results and error codes without a change to
//! this module. Calls run on the blocking pool, so a tool that waits (a script runner) never holds
//! up the protocol (`load_skill` for a body, served from memory, is answered at once). The record of each successful call goes to the host in the result's `_meta`
//! (`skillfold/record`), which hosts keep out of the model's context.
//!
//! The server's instructions are the agent's catalogue prompt. Skill files are served as
//! resources with the Skills extension ([`skills_extension`]). With `--watch`, [`reload`] swaps
//! the catalogue while the server runs; sessions are told through `list_changed` notifications
//! (sent directly to an `initialize`d session, through `subscriptions/listen` on 2026-07-28
//! sessions). Instructions are fixed when a session starts: MCP has no way to update them.
//!
//! [`Live`] holds the catalogue being served behind an `Arc` in a std `RwLock`: each request
//! clones the `Arc` under a read lock held for a few nanoseconds (never across an `.await`), and a
//! reload replaces it under the write lock. A call in flight keeps the snapshot it started with;
//! the old catalogue is freed when the last such call ends. A tokio lock would add nothing here:
//! nothing waits while holding it.
//!
//! rmcp does not read stdin itself: [`framing`] reads every line first, bounds it, answers what
//! rmcp would drop or answer wrongly, and passes the rest on. Diagnostics go to stderr through
//! `diag`, with every value that came from input escaped ([`crate::support::escape::text`]); a closed or
//! full stderr never stops the server.
//!
//! One concept per file: `live.rs` (the catalogue being served and its swap), `tools.rs` (the
//! library's tools in MCP's shape), `handler.rs` (rmcp's `ServerHandler`), `stdio.rs` (the stdio
//! transport), `diagnostics.rs` (the host's sink for diagnostic lines) and `error.rs`
//! ([`ServeError`]); their items are re-exported here.
//!
//! [`Catalogue::tools`]: crate::runtime::catalogue::Catalogue::tools
//! [`Catalogue::call`]: crate::runtime::catalogue::Catalogue::call

#[cfg(feature = "http")]
pub mod audit;
pub mod code;
pub mod framing;
#[cfg(feature = "http")]
pub mod http;
pub mod observe;
pub mod reload;
pub mod skills_extension;
pub mod trace_context;

mod diagnostics;
mod error;
mod handler;
mod live;
mod stdio;
mod tools;

pub use self::diagnostics::set_diagnostics;
pub(crate) use self::diagnostics::{diag, warn_unlisted};
pub use self::error::ServeError;
#[cfg(feature = "http")]
pub use self::handler::SkillsServer;
pub use self::live::{Live, Served};
pub use self::stdio::{ServeOptions, run};
