//! [`SkillsServer`], rmcp's [`ServerHandler`] over a [`Live`] catalogue: `tools/list` and
//! `tools/call` go to the catalogue being served, skill files are resources and skills of the
//! Skills extension, and with `list_changed` every reload is announced to each session (directly
//! to an `initialize`d one, through `subscriptions/listen` on 2026-07-28 sessions). Tool calls run
//! on the blocking pool, so a tool that waits (a script runner) never holds up the protocol — but
//! `load_skill` for a body, which only reads memory, is answered at once (over HTTP with
//! placeholders for its prebuilt bytes, spliced in after rmcp has written the answer:
//! [`super::http::splice`]); an observer, when one is set, hears of every tool call and resource
//! read.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetSkillRequestParams, GetSkillResult, Implementation,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use super::live::{Live, Served};
use super::observe;
use super::tools::{call_result, tools_for};
use super::trace_context::TraceParent;
use crate::runtime::tools::{self, load_skill};

/// The MCP server handler over a [`Live`] catalogue.
#[derive(Debug, Clone)]
pub struct SkillsServer {
    live: Arc<Live>,
    list_changed: bool,
    agent: Option<Arc<str>>,
    observer: Option<Arc<dyn observe::Observer>>,
    remote: bool,
    #[cfg(feature = "http")]
    splicer: Option<Arc<super::http::splice::Splicer>>,
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
            #[cfg(feature = "http")]
            splicer: None,
        }
    }

    #[cfg(feature = "http")]
    /// The same, for clients on other machines (HTTP): the instructions name skills by
    /// `skill://` URI, not by the server's file paths.
    pub fn remote(mut self) -> SkillsServer {
        self.remote = true;
        self
    }

    #[cfg(feature = "http")]
    /// The same, answering `load_skill` for a body with placeholders that `splicer` replaces by
    /// the snapshot's prebuilt bytes in what rmcp writes ([`super::http::splice`]).
    pub(crate) fn spliced(
        mut self,
        splicer: Option<Arc<super::http::splice::Splicer>>,
    ) -> SkillsServer {
        self.splicer = splicer;
        self
    }

    #[cfg(feature = "http")]
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

/// Where a request came from, as observers are told: the MCP session, who the access token
/// named, the W3C trace context and the JSON-RPC id.
pub(crate) struct Origin<'a> {
    pub(crate) session: Option<&'a str>,
    pub(crate) caller: Option<&'a observe::Caller>,
    pub(crate) trace: Option<TraceParent>,
    pub(crate) request_id: &'a rmcp::model::RequestId,
}

impl<'a> Origin<'a> {
    /// The origin of the request of `context`, as rmcp hands it to the handler.
    fn of(context: &'a RequestContext<RoleServer>) -> Origin<'a> {
        Origin {
            session: session_of(&context.extensions),
            caller: caller_of(&context.extensions),
            trace: trace_of(context),
            request_id: &context.id,
        }
    }
}

impl SkillsServer {
    /// Tells the observer, if any, of a tool call: its record when served, else the code of its
    /// refusal and the skill its arguments named (`asked`); `bytes` of text answered.
    fn observe_call(
        &self,
        origin: &Origin<'_>,
        label: &str,
        asked: Option<&str>,
        started: std::time::Instant,
        outcome: Result<&crate::runtime::tools::Record, &str>,
        bytes: usize,
    ) {
        let Some(observer) = &self.observer else {
            return;
        };
        observer.tool_call(&observe::ToolCall {
            agent: self.agent.as_deref(),
            session: origin.session,
            caller: origin.caller,
            trace: origin.trace.as_ref(),
            request_id: Some(origin.request_id),
            record: outcome.ok(),
            asked,
            code: outcome.err(),
            tool: label,
            outcome: if outcome.is_ok() {
                observe::Outcome::Ok
            } else {
                observe::Outcome::Refused
            },
            duration: started.elapsed(),
            bytes,
        });
    }

    /// The name observers see for a call of `name`: itself when the catalogue has such a tool,
    /// else `unknown` (a client's made-up names would otherwise grow their label sets without
    /// bound).
    fn label(served: &Served, name: &str) -> String {
        if served.tools().iter().any(|t| t.name == name) {
            name.to_owned()
        } else {
            "unknown".to_owned()
        }
    }

    /// Tells the observer, if any, of the `result` of a call that answered `outcome`.
    fn observe_result(
        &self,
        origin: &Origin<'_>,
        label: &str,
        asked: Option<&str>,
        started: std::time::Instant,
        outcome: Result<&crate::runtime::tools::Record, &str>,
        result: &rmcp::model::CallToolResult,
    ) {
        if self.observer.is_none() {
            return;
        }
        let bytes = result
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.len())
            .sum();
        self.observe_call(origin, label, asked, started, outcome, bytes);
    }

    /// `load_skill` of `name` for a body, answered from the snapshot in memory with the
    /// placeholders of its prebuilt bytes, which the HTTP layer splices into the answer
    /// ([`super::http::splice`]); a refusal is answered as any other. `None` when this is no
    /// such call (another tool, a reference, no splicer, no skills): the call is then made as
    /// any other (and made only once).
    #[cfg(feature = "http")]
    pub(crate) fn call_body_spliced(
        &self,
        name: &str,
        arguments: Option<&rmcp::model::JsonObject>,
        origin: &Origin<'_>,
    ) -> Option<Result<rmcp::model::CallToolResult, ErrorData>> {
        let splicer = self.splicer.as_ref()?;
        if name != load_skill::NAME
            || arguments
                .and_then(|a| a.get("reference"))
                .is_some_and(|r| !r.is_null())
        {
            return None;
        }
        let served = self.live.current();
        let started = std::time::Instant::now();
        let input = Value::Object(arguments.cloned().unwrap_or_default());
        // A host's policy hook that panics fails the call, as on the blocking pool.
        let called = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            served.catalogue().call_body(&input).map(|called| {
                called.map(|(skill, record)| (Arc::clone(load_skill::body_json(skill)), record))
            })
        })) {
            Ok(called) => called?,
            Err(_) => return Some(Err(panicked())),
        };
        let label = Self::label(&served, name);
        Some(Ok(match called {
            Ok((json, record)) => {
                let (text, structured) = splicer.placeholders(&json);
                let result = super::tools::placeholder_result(text, structured, &record);
                self.observe_call(origin, &label, None, started, Ok(&record), json.len());
                result
            }
            Err(error) => {
                let code = error.code.as_str();
                let result = call_result(Err(error), None);
                let asked = tools::asked::skill(name, &input);
                self.observe_result(origin, &label, asked, started, Err(code), &result);
                result
            }
        }))
    }
}

/// The error of a tool call whose host policy hook panicked.
fn panicked() -> ErrorData {
    ErrorData::internal_error("the tool call failed: it panicked", None)
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

/// The W3C trace context of a request: its `_meta.traceparent`, else the HTTP request's
/// `traceparent` header, whichever is valid first ([`TraceParent::of_request`]).
fn trace_of(context: &RequestContext<RoleServer>) -> Option<TraceParent> {
    let meta = context.meta.get_traceparent();
    #[cfg(feature = "http")]
    {
        let headers = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .map(|parts| parts.headers.get_all("traceparent"));
        TraceParent::of_request(
            meta,
            headers.into_iter().flatten().map(|value| value.as_bytes()),
        )
    }
    #[cfg(not(feature = "http"))]
    {
        TraceParent::of_request(meta, [])
    }
}

/// Who the access token of the HTTP request named (`serve --listen --oauth`).
fn caller_of(extensions: &rmcp::model::Extensions) -> Option<&observe::Caller> {
    #[cfg(feature = "http")]
    {
        extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<observe::Caller>())
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
        let origin = Origin::of(&context);
        // Over HTTP the body's prebuilt bytes are spliced into the answer rmcp writes.
        #[cfg(feature = "http")]
        if let Some(answered) =
            self.call_body_spliced(&request.name, request.arguments.as_ref(), &origin)
        {
            return answered.map(CallToolResponse::Complete);
        }
        let served = self.live.current();
        let name = request.name.into_owned();
        let label = Self::label(&served, &name);
        let started = std::time::Instant::now();
        let input = Value::Object(request.arguments.unwrap_or_default());
        // The skill the arguments name, for the audit line of a refusal (the input moves below).
        let asked = self
            .observer
            .as_ref()
            .and_then(|_| tools::asked::skill(&name, &input).map(str::to_owned));
        // `load_skill` for a body reads only the snapshot in memory and is answered here; every
        // other call (a helper script that may run to its time limit, a supporting file that may
        // be read again from disk) runs on the blocking pool.
        let in_memory =
            name == load_skill::NAME && input.get("reference").is_none_or(Value::is_null);
        let outcome = if in_memory {
            // A host's policy hook that panics fails the call, as on the blocking pool.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                served.catalogue().call(&name, &input)
            }))
            .map_err(|_| panicked())?
        } else {
            let called = name.clone();
            let serving = Arc::clone(&served);
            tokio::task::spawn_blocking(move || serving.catalogue().call(&called, &input))
                .await
                .map_err(|e| {
                    ErrorData::internal_error(format!("the tool call failed: {e}"), None)
                })?
        };
        // The body of a skill is served as the same text on every call: built once per snapshot.
        let prebuilt = match &outcome {
            Ok((_, record)) if record.tool == load_skill::NAME && record.reference.is_none() => {
                served
                    .catalogue()
                    .get(&record.skill)
                    .map(|skill| Arc::clone(load_skill::body_json(skill)))
            }
            _ => None,
        };
        let observed = self.observer.is_some().then(|| match &outcome {
            Ok((_, record)) => Ok(record.clone()),
            Err(error) => Err(error.code.as_str()),
        });
        let asked = asked.filter(|_| matches!(observed, Some(Err(_))));
        let result = call_result(outcome, prebuilt.as_deref());
        if let Some(observed) = observed {
            self.observe_result(
                &origin,
                &label,
                asked.as_deref(),
                started,
                observed.as_ref().map_err(|c| *c),
                &result,
            );
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
            let origin = Origin::of(&context);
            observer.resource_read(&observe::ResourceRead {
                agent: self.agent.as_deref(),
                session: origin.session,
                caller: origin.caller,
                trace: origin.trace.as_ref(),
                request_id: Some(origin.request_id),
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
            // `data.uri` names the resource (a SHOULD of the specification).
            None => Err(ErrorData::resource_not_found(
                format!("no file is served at {}", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use rmcp::ServiceExt as _;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;
    use crate::mcp::live::Served;

    /// Sends `message` and returns the next line the server writes.
    async fn ask<R, W>(
        lines: &mut tokio::io::Lines<BufReader<R>>,
        write: &mut W,
        message: Value,
    ) -> Option<Value>
    where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin,
    {
        let mut line = message.to_string();
        line.push('\n');
        write.write_all(line.as_bytes()).await.expect("write");
        message.get("id")?;
        let answer = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer in time")
            .expect("read")
            .expect("an answer");
        Some(serde_json::from_str(&answer).expect("json"))
    }

    #[cfg(feature = "http")]
    #[tokio::test]
    async fn a_body_call_refused_on_the_spliced_path_asks_the_policy_once() {
        let temp = tempfile::tempdir().expect("tempdir");
        let runtime = crate::testing::big_skill::runtime(temp.path(), "Body.\n");
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&asked);
        let catalogue = runtime
            .catalogue(None)
            .expect("catalogue")
            .with_policy(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
                Err("not today".to_owned())
            });
        let splicer = crate::mcp::http::splice::Splicer::new().map(Arc::new);
        assert!(splicer.is_some(), "randomness");
        let server = SkillsServer::new(Live::new(Served::new(catalogue)), false).spliced(splicer);
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(ours);
        let mut lines = BufReader::new(read).lines();
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}});
        ask(&mut lines, &mut write, initialize).await;
        let initialized =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        ask(&mut lines, &mut write, initialized).await;
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "load_skill", "arguments": {"name": "big", "reference": null}}});
        let answer = ask(&mut lines, &mut write, call).await.expect("answer");
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        let text = result["content"][0]["text"].as_str().expect("text");
        let error: Value = serde_json::from_str(text).expect("json");
        assert_eq!(error["error"]["code"], "policy_denied", "{answer}");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "the policy is asked once per call"
        );
    }

    #[tokio::test]
    async fn a_body_answered_in_place_is_the_prebuilt_text_and_a_panicking_policy_fails_only_its_call()
     {
        let temp = tempfile::tempdir().expect("tempdir");
        let runtime = crate::testing::big_skill::runtime(temp.path(), "Say \"hi\" \\ — ✓\n");
        let panicked = Arc::new(AtomicBool::new(false));
        let once = Arc::clone(&panicked);
        let catalogue = runtime
            .catalogue(None)
            .expect("catalogue")
            .with_policy(move |_| {
                assert!(
                    once.swap(true, Ordering::SeqCst),
                    "a host policy that panics"
                );
                Ok(())
            });
        let server = SkillsServer::new(Live::new(Served::new(catalogue)), false);
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(theirs).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(ours);
        let mut lines = BufReader::new(read).lines();
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}});
        ask(&mut lines, &mut write, initialize).await;
        let initialized =
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        ask(&mut lines, &mut write, initialized).await;
        let call = |id: u64| {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "load_skill", "arguments": {"name": "big", "reference": null}}})
        };

        // The policy panics on the first call: that call fails, with an answer.
        let failed = ask(&mut lines, &mut write, call(1)).await.expect("answer");
        assert_eq!(failed["id"], 1);
        assert!(
            failed["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("the tool call failed")),
            "{failed}"
        );
        assert!(panicked.load(Ordering::SeqCst));

        // The next call is served, its text the output's JSON text.
        let served = ask(&mut lines, &mut write, call(2)).await.expect("answer");
        let result = &served["result"];
        assert_eq!(result["isError"], false, "{served}");
        let text = result["content"][0]["text"].as_str().expect("text");
        assert_eq!(text, result["structuredContent"].to_string());
        assert_eq!(
            result["structuredContent"]["content"],
            "Say \"hi\" \\ — ✓\n"
        );
    }
}
