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
//! up the protocol. The record of each successful call goes to the host in the result's `_meta`
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

#[cfg(feature = "http")]
pub mod audit;
pub mod code;
pub mod framing;
#[cfg(feature = "http")]
pub mod http;
pub mod observe;
pub mod reload;
pub mod skills_extension;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetSkillRequestParams,
    GetSkillResult, Implementation, JsonObject, ListResourcesResult, ListSkillsResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::Value;

use crate::runtime::catalogue::Catalogue;
use crate::runtime::tools::ToolDefinition;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

use self::code::ServeCode;
use self::reload::ReloadError;
use self::skills_extension::SkillIndex;

/// The `_meta` key of the record of a successful call.
pub const RECORD_META_KEY: &str = "skillfold/record";

/// One catalogue as the server offers it: its tools, its prompt and its skill files.
#[derive(Debug)]
pub struct Served {
    catalogue: Catalogue,
    instructions: Option<String>,
    remote_instructions: Option<String>,
    tools: Vec<Tool>,
    index: SkillIndex,
    missing: Vec<String>,
}

impl Served {
    /// Prepares `catalogue` for serving: its tools as MCP tools and the index of its files.
    pub fn new(catalogue: Catalogue) -> Served {
        let tools = catalogue.tools().into_iter().map(mcp_tool).collect();
        let index = SkillIndex::new(&catalogue);
        Served {
            instructions: catalogue.prompt(),
            remote_instructions: catalogue.remote_prompt(),
            catalogue,
            tools,
            index,
            missing: Vec::new(),
        }
    }

    /// The same, noting the approved bundles that failed to load and are not served (each
    /// described with its code).
    pub fn with_missing(mut self, missing: Vec<String>) -> Served {
        self.missing = missing;
        self
    }

    /// The approved bundles that failed to load; empty when the catalogue is complete.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// The catalogue.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The server's instructions: the catalogue prompt (rendered once; rmcp asks often).
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The instructions for a client on another machine: `skill://` locations, no paths.
    pub fn remote_instructions(&self) -> Option<&str> {
        self.remote_instructions.as_deref()
    }

    /// The Skills extension's index of its files.
    pub fn index(&self) -> &SkillIndex {
        &self.index
    }

    /// The MCP tools.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }
}

/// A tool definition of the library as an MCP tool: same name, description, schemas and hints.
pub fn mcp_tool(definition: ToolDefinition) -> Tool {
    let object = |schema: Value| match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let hints = definition.annotations;
    Tool::new_with_raw(
        definition.name,
        Some(Cow::Owned(definition.description)),
        Arc::new(object(definition.input_schema)),
    )
    .with_raw_output_schema(Arc::new(object(definition.output_schema)))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(hints.read_only_hint)
            .idempotent(hints.idempotent_hint)
            .open_world(hints.open_world_hint),
    )
}

/// The catalogue being served, replaced atomically on reload.
#[derive(Debug)]
pub struct Live {
    current: RwLock<Arc<Served>>,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Live {
    /// Starts serving `served`.
    pub fn new(served: Served) -> Arc<Live> {
        Arc::new(Live {
            current: RwLock::new(Arc::new(served)),
            changes: tokio::sync::watch::Sender::new(0),
        })
    }

    /// The catalogue a request starts with; it stays valid for that request whatever happens.
    pub fn current(&self) -> Arc<Served> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serves `served` from now on; requests already running finish on what they had.
    pub fn replace(&self, served: Served) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(served);
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// Notified after each replacement.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}

/// The MCP server handler over a [`Live`] catalogue.
#[derive(Debug, Clone)]
pub struct SkillsServer {
    live: Arc<Live>,
    list_changed: bool,
    agent: Option<Arc<str>>,
    observer: Option<Arc<dyn observe::Observer>>,
    remote: bool,
}

impl SkillsServer {
    /// A server for `live`; `list_changed` declares (and sends) list-change notifications, for
    /// servers that reload.
    pub fn new(live: Arc<Live>, list_changed: bool) -> SkillsServer {
        SkillsServer {
            live,
            list_changed,
            agent: None,
            observer: None,
            remote: false,
        }
    }

    /// The same, for clients on other machines (HTTP): the instructions name skills by
    /// `skill://` URI, not by the server's file paths.
    pub fn remote(mut self) -> SkillsServer {
        self.remote = true;
        self
    }

    /// The same, telling `observer` of every tool call and resource read, as the endpoint of
    /// `agent` (`None`: the defaults).
    pub fn observed(
        mut self,
        agent: Option<&str>,
        observer: Arc<dyn observe::Observer>,
    ) -> SkillsServer {
        self.agent = agent.map(Arc::from);
        self.observer = Some(observer);
        self
    }
}

/// The MCP session a request came in, from the HTTP request rmcp passes along (`None` over
/// stdio).
fn session_of(extensions: &rmcp::model::Extensions) -> Option<&str> {
    #[cfg(feature = "http")]
    {
        extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = extensions;
        None
    }
}

/// The bytes of a resource's content (a blob's decoded size).
fn content_bytes(contents: &rmcp::model::ResourceContents) -> usize {
    match contents {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.len(),
        rmcp::model::ResourceContents::BlobResourceContents { blob, .. } => blob.len() / 4 * 3,
        _ => 0,
    }
}

/// The result of a tool call as MCP wants it.
pub fn call_result(
    result: Result<(Value, crate::runtime::tools::Record), crate::runtime::tools::ToolError>,
) -> CallToolResult {
    match result {
        Ok((output, record)) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(output.to_string())]);
            r.structured_content = Some(output);
            let mut meta = JsonObject::new();
            meta.insert(
                RECORD_META_KEY.into(),
                serde_json::to_value(record).unwrap_or_default(),
            );
            r.meta = Some(MetaObject(meta));
            r
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_json().to_string())]),
    }
}

/// The first protocol revision with `outputSchema` (and `structuredContent`).
const OUTPUT_SCHEMA_SINCE: &str = "2025-06-18";

/// The tools as a session of `protocol` sees them: without `outputSchema` before 2025-06-18.
fn tools_for(tools: &[Tool], protocol: Option<&str>) -> Vec<Tool> {
    let mut tools = tools.to_vec();
    if protocol.is_some_and(|p| p < OUTPUT_SCHEMA_SINCE) {
        for tool in &mut tools {
            tool.output_schema = None;
        }
    }
    tools
}

/// Where the server's diagnostic lines go, set once by the host with [`set_diagnostics`]. The
/// library prints nothing itself: without a sink the lines are dropped.
type DiagnosticsSink = Box<dyn Fn(&str) + Send + Sync>;
static DIAGNOSTICS: std::sync::OnceLock<DiagnosticsSink> = std::sync::OnceLock::new();

/// Sends the server's diagnostic lines (warnings at start, reloads, ignored messages) to `sink`
/// (the `skillfold` binary writes them to stderr). Lines hold no raw input: every value from
/// outside is already escaped. The sink must not panic or block for long. Returns `false` when a
/// sink was set before (the first one stays).
pub fn set_diagnostics(sink: impl Fn(&str) + Send + Sync + 'static) -> bool {
    DIAGNOSTICS.set(Box::new(sink)).is_ok()
}

/// Hands one diagnostic line to the host's sink, if it set one. Values from input must be passed
/// through [`crate::support::escape::text`] by the caller.
pub(crate) fn diag(line: std::fmt::Arguments<'_>) {
    if let Some(sink) = DIAGNOSTICS.get() {
        sink(&line.to_string());
    }
}

impl ServerHandler for SkillsServer {
    fn get_info(&self) -> ServerConfig {
        let served = self.live.current();
        let capabilities = if self.list_changed {
            ServerCapabilities::builder()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_skills_with_directory_read()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_resources()
                .enable_tools()
                .enable_skills_with_directory_read()
                .build()
        };
        let mut info = ServerConfig::new(capabilities).with_server_info(
            Implementation::new("skillfold", env!("CARGO_PKG_VERSION"))
                .with_description("verified Agent Skills bundles"),
        );
        let instructions = if self.remote {
            served.remote_instructions()
        } else {
            served.instructions()
        };
        if let Some(prompt) = instructions {
            info = info.with_instructions(prompt);
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let protocol = context.protocol_version();
        Ok(ListToolsResult::with_all_items(tools_for(
            self.live.current().tools(),
            protocol.as_ref().map(|p| p.as_str()),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let served = self.live.current();
        let name = request.name.into_owned();
        // Observers see only the names of tools that exist: a client's made-up names would
        // otherwise grow their label sets without bound.
        let label = if served.tools().iter().any(|t| t.name == name) {
            name.clone()
        } else {
            "unknown".to_owned()
        };
        let started = std::time::Instant::now();
        let input = Value::Object(request.arguments.unwrap_or_default());
        let called = name.clone();
        let outcome = tokio::task::spawn_blocking(move || served.catalogue().call(&called, &input))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool call failed: {e}"), None))?;
        let observed = self.observer.as_ref().map(|observer| {
            let (record, code) = match &outcome {
                Ok((_, record)) => (Some(record.clone()), None),
                Err(error) => (None, Some(error.code.as_str())),
            };
            (Arc::clone(observer), record, code)
        });
        let result = call_result(outcome);
        if let Some((observer, record, code)) = observed {
            observer.tool_call(&observe::ToolCall {
                agent: self.agent.as_deref(),
                session: session_of(&context.extensions),
                record: record.as_ref(),
                code,
                tool: &label,
                outcome: if result.is_error == Some(true) {
                    observe::Outcome::Refused
                } else {
                    observe::Outcome::Ok
                },
                duration: started.elapsed(),
                bytes: result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .map(|t| t.text.len())
                    .sum(),
            });
        }
        Ok(CallToolResponse::Complete(result))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.live.current().index().resources(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = self.live.current();
        let read = served.index().read(&request.uri);
        if let Some(observer) = &self.observer {
            let skill = request
                .uri
                .strip_prefix("skill://")
                .and_then(|rest| rest.split('/').next())
                .and_then(|name| served.catalogue().get(name));
            observer.resource_read(&observe::ResourceRead {
                agent: self.agent.as_deref(),
                session: session_of(&context.extensions),
                uri: &request.uri,
                pin: skill.map(|s| s.pin()),
                contents: match &read {
                    Some(Ok(contents)) => Some(contents),
                    _ => None,
                },
                code: match &read {
                    Some(Ok(_)) => None,
                    Some(Err(_)) => {
                        Some(crate::runtime::tools::code::ToolCode::ReferenceChanged.as_str())
                    }
                    None => Some("resource_not_found"),
                },
                outcome: match &read {
                    Some(Ok(_)) => observe::Outcome::Ok,
                    _ => observe::Outcome::Refused,
                },
                bytes: match &read {
                    Some(Ok(contents)) => content_bytes(contents),
                    _ => 0,
                },
            });
        }
        match read {
            Some(Ok(contents)) => Ok(ReadResourceResult::new(vec![contents]).into()),
            Some(Err(e)) => Err(ErrorData::internal_error(
                e.to_string(),
                Some(serde_json::json!({
                    "code": crate::runtime::tools::code::ToolCode::ReferenceChanged.as_str(),
                })),
            )),
            None => Err(ErrorData::resource_not_found(
                format!("no file is served at {}", request.uri),
                None,
            )),
        }
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(ListSkillsResult::with_all_items(
            self.live.current().index().skills().to_vec(),
        ))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        match self.live.current().index().skill(&request.uri) {
            Some(skill) => Ok(GetSkillResult::new(skill.clone())),
            None => Err(ErrorData::invalid_params(
                format!("no skill is served at {}", request.uri),
                None,
            )),
        }
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        match self.live.current().index().directory(&request.uri) {
            Some(children) => Ok(ReadResourceDirectoryResult::with_all_items(
                children.to_vec(),
            )),
            None => Err(ErrorData::invalid_params(
                format!("{} is not a directory resource", request.uri),
                None,
            )),
        }
    }

    /// A session that began with `initialize` is told of every reload directly (2026-07-28
    /// sessions subscribe through `subscriptions/listen` instead, see `listen`). The forwarder
    /// ends with the session: when a notification cannot be sent, or when the transport is found
    /// closed (checked every few seconds, so a client that left leaves nothing behind).
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        if !self.list_changed {
            return;
        }
        let peer = context.peer;
        let mut changes = self.live.subscribe();
        tokio::spawn(async move {
            let mut check = tokio::time::interval(Duration::from_secs(5));
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err()
                            || peer.notify_tool_list_changed().await.is_err()
                            || peer.notify_resource_list_changed().await.is_err()
                        {
                            return;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.list_changed.then(|| {
            SubscriptionFilter::builder()
                .tools_list_changed()
                .resources_list_changed()
                .build()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.live.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let sink = context.sink();
                    if sink.notify_tool_list_changed().await.is_err()
                        || sink.notify_resource_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The descriptor.
    pub config: PathBuf,
    /// The agent whose catalogue to serve (`None`: the defaults).
    pub agent: Option<String>,
    /// Reload on a change of the descriptor or `SIGHUP`.
    pub watch: bool,
    /// How often the descriptor is checked with `watch`.
    pub poll_interval: Duration,
}

/// Names on stderr the skills left out of the Skills extension's listing.
fn warn_unlisted(served: &Served) {
    for line in served.index().unlisted() {
        diag(format_args!(
            "skillfold serve: warning: {}",
            escape::text(line)
        ));
    }
}

/// The default poll interval of `--watch`.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The catalogue could not be loaded at start.
    #[error(transparent)]
    Load(#[from] ReloadError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The MCP session could not start (the client closed the connection or sent garbage).
    #[error("the MCP session did not start: {0}")]
    Session(String),
    /// A reachable address without tokens, and no `--insecure-no-auth`.
    #[error(
        "refusing to serve {0} without authentication: give --tokens FILE (or SKILLFOLD_SERVE_TOKENS), listen on a loopback address, or pass --insecure-no-auth to accept that anyone who reaches it gets every agent's skills"
    )]
    Insecure(std::net::SocketAddr),
    /// The address cannot be listened on.
    #[error("cannot listen on {0}: {1}")]
    Listen(std::net::SocketAddr, std::io::Error),
    /// The TLS certificate or key cannot be used.
    #[cfg(feature = "http")]
    #[error("cannot serve HTTPS: {0}")]
    Tls(http::tls::TlsError),
    /// The audit log cannot be opened.
    #[error("cannot open the audit log `{}`: {error}", escape::path(.path))]
    AuditLog {
        /// The path given.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl ServeError {
    /// Stable error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ServeError::Load(e) => e.code(),
            ServeError::Runtime(_) => ServeCode::RuntimeFailed.into(),
            ServeError::Session(_) => ServeCode::SessionFailed.into(),
            ServeError::Insecure(_) => ServeCode::InsecureListen.into(),
            ServeError::Listen(..) => ServeCode::ListenFailed.into(),
            ServeError::AuditLog { .. } => ServeCode::AuditLogFailed.into(),
            #[cfg(feature = "http")]
            ServeError::Tls(_) => ServeCode::InvalidTls.into(),
        }
    }
}

crate::coded_by_code!(ServeError);

/// Serves the catalogue over stdio until the client closes the connection or SIGTERM/SIGINT
/// arrive. Bundles that fail to load at start are named on stderr and left out (and, with
/// `watch`, retried).
pub fn run(options: ServeOptions) -> Result<(), ServeError> {
    let loaded = reload::load(&options.config, options.agent.as_deref())?;
    for failure in &loaded.failures {
        diag(format_args!(
            "skillfold serve: warning: {} [{}]",
            escape::text(&failure.to_string()),
            failure.code
        ));
        for detail in &failure.details {
            diag(format_args!("  {}", escape::text(detail)));
        }
    }
    let served = Served::new(loaded.catalogue);
    warn_unlisted(&served);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let shutdown = Arc::new(AtomicBool::new(false));
    let result = runtime.block_on(serve_stdio(
        Live::new(served),
        &options,
        !loaded.failures.is_empty(),
        Arc::clone(&shutdown),
    ));
    shutdown.store(true, Ordering::Relaxed);
    // A preparation under way sees the flag and cleans up; do not wait on stdin or on it forever.
    runtime.shutdown_timeout(Duration::from_secs(5));
    result
}

async fn serve_stdio(
    live: Arc<Live>,
    options: &ServeOptions,
    start_failed: bool,
    shutdown: Arc<AtomicBool>,
) -> Result<(), ServeError> {
    reload::hold_hangup().map_err(ServeError::Runtime)?;
    if options.watch {
        tokio::spawn(reload::watch(
            vec![(options.agent.clone(), Arc::clone(&live))],
            reload::WatchOptions {
                config: options.config.clone(),
                poll_interval: options.poll_interval,
                start_failed,
                on_reload: None,
            },
            Arc::clone(&shutdown),
        ));
    }
    let server = SkillsServer::new(Arc::clone(&live), options.watch);
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (transport, framing) = framing::start(stdin, stdout);
    let result = session(server, transport, &shutdown).await;
    // Answers already queued (to lines rmcp never saw, or rmcp's last) reach the client.
    framing.finish(Duration::from_secs(2)).await;
    result
}

/// Runs one MCP session on `transport` until the client leaves or SIGTERM/SIGINT arrive.
async fn session(
    server: SkillsServer,
    transport: tokio::io::DuplexStream,
    shutdown: &AtomicBool,
) -> Result<(), ServeError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).map_err(ServeError::Runtime)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Runtime)?;
    let session = tokio::select! {
        s = server.serve(transport) => s,
        _ = terminate.recv() => return Ok(()),
        _ = interrupt.recv() => return Ok(()),
    };
    let running = match session {
        Ok(running) => running,
        // A client that connects and leaves at once is not an error of the server.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(ServeError::Session(e.to_string())),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        _ = terminate.recv() => cancel.cancel(),
        _ = interrupt.recv() => cancel.cancel(),
    }
    shutdown.store(true, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_swaps_while_held_catalogues_stay_valid() {
        let empty = Catalogue::new(None, Vec::new()).expect("empty catalogue");
        let live = Live::new(Served::new(empty.clone()));
        let changes = live.subscribe();
        let held = live.current();
        live.replace(Served::new(empty));
        assert!(changes.has_changed().unwrap());
        assert!(!Arc::ptr_eq(&held, &live.current()));
        assert_eq!(held.tools().len(), 0);
    }

    #[test]
    fn tool_errors_carry_the_json_error_object_as_text_only() {
        let empty = Catalogue::new(None, Vec::new()).expect("empty catalogue");
        let result = call_result(empty.call("nope", &serde_json::json!({})));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, None, "errors are not outputs");
        let text = result.content[0].as_text().expect("text").text.clone();
        let json: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(json["error"]["code"], "unknown_tool");
    }

    #[test]
    fn output_schemas_are_shown_only_to_sessions_that_define_them() {
        let tool = mcp_tool(crate::runtime::tools::load_skill::definition(&["a"]));
        assert!(tool.output_schema.is_some());
        let tools = std::slice::from_ref(&tool);
        for (protocol, shown) in [
            (Some("2024-11-05"), false),
            (Some("2025-03-26"), false),
            (Some("2025-06-18"), true),
            (Some("2026-07-28"), true),
            (None, true),
        ] {
            assert_eq!(
                tools_for(tools, protocol)[0].output_schema.is_some(),
                shown,
                "{protocol:?}"
            );
        }
    }
}
