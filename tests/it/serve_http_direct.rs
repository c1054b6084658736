//! The direct lane of `skillfold serve --listen` (issue 37 §3): `tools/call` of `load_skill` for
//! a body on a ready session is answered without rmcp, as one JSON object; everything the lane
//! must leave to rmcp still goes there (a reference, another tool, a session not yet ready, a
//! 2026-07-28 request, headers rmcp refuses), the audit log records the lane's calls as rmcp's,
//! and a session the lane alone serves is not closed as idle while it is used, and is once it is
//! not.

use std::time::Duration;

use serde_json::{Value, json};

use super::http_raw::{self, post, send};
use super::mcp_client::{Listening, audit_lines};
use super::mcp_framing::demo_world;
use super::serve_http_rpc::{message_of, open_session_at};

fn call(id: u64, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": arguments}})
    .to_string()
}

fn body_call(id: u64) -> String {
    call(id, json!({"name": "demo", "reference": null}))
}

/// Who answered: `json` (the direct lane, or rmcp's own JSON refusals) or `sse` (rmcp).
fn answered_as(answer: &http_raw::Answer) -> &str {
    match answer.header("content-type") {
        Some("application/json") => "json",
        Some("text/event-stream") => "sse",
        other => panic!("{} {other:?}: {}", answer.status, answer.body),
    }
}

fn borrowed<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(n, v)| (*n, v.as_str())).collect()
}

#[test]
fn the_direct_lane_answers_body_calls_on_ready_sessions_and_leaves_the_rest_to_rmcp() {
    let world = demo_world();
    let log = world.path("audit.jsonl");
    let http = Listening::start(
        &world.config,
        &["--audit-log", log.to_str().expect("utf8")],
        &[],
    );
    let port = http.port;
    let session = open_session_at(port, "/mcp");
    let headers = borrowed(&session);

    // A body: the lane, a JSON-RPC answer with the body.
    let direct = post(port, "/mcp", None, &headers, &body_call(1));
    assert_eq!(answered_as(&direct), "json");
    let message = message_of(&direct);
    assert_eq!(message["id"], 1);
    assert_eq!(
        message["result"]["structuredContent"]["content"],
        "# demo\n"
    );
    // A string id comes back as it was sent.
    let named = post(
        port,
        "/mcp",
        None,
        &headers,
        &body_call(0).replace("\"id\":0", "\"id\":\"call-7\""),
    );
    assert_eq!(answered_as(&named), "json");
    assert_eq!(message_of(&named)["id"], "call-7");
    // A refused body call (no such skill) is answered on the lane too, as a tool error.
    let missing = post(
        port,
        "/mcp",
        None,
        &headers,
        &call(2, json!({"name": "nope", "reference": null})),
    );
    assert_eq!(answered_as(&missing), "json");
    assert_eq!(message_of(&missing)["result"]["isError"], true);

    // What the lane leaves to rmcp: a reference, another tool, a 2026-07-28 request on the
    // session, and headers rmcp refuses.
    let reference = post(
        port,
        "/mcp",
        None,
        &headers,
        &call(
            3,
            json!({"name": "demo", "reference": "references/notes.md"}),
        ),
    );
    assert_eq!(answered_as(&reference), "sse");
    assert_eq!(
        message_of(&reference)["result"]["structuredContent"]["content"],
        "# notes\n"
    );
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).to_string();
    assert_eq!(
        answered_as(&post(port, "/mcp", None, &headers, &list)),
        "sse"
    );
    let mut newer = headers.clone();
    newer.retain(|(n, _)| *n != "MCP-Protocol-Version");
    newer.push(("MCP-Protocol-Version", "2026-07-28"));
    let newer = post(port, "/mcp", None, &newer, &body_call(5));
    assert!(
        !(newer.status == 200 && answered_as(&newer) == "json" && newer.body.contains("# demo")),
        "a 2026-07-28 request went down the lane: {}",
        newer.body
    );
    let inline = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": "demo", "reference": null},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}});
    let inline = post(port, "/mcp", None, &headers, &inline.to_string());
    assert!(
        !(inline.status == 200 && answered_as(&inline) == "json" && inline.body.contains("# demo")),
        "a request naming 2026-07-28 in its _meta went down the lane: {}",
        inline.body
    );
    let json_only = send(
        port,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", session[0].1.as_str()),
        ],
        &body_call(6),
    );
    assert_eq!(json_only.status, 406, "rmcp's answer: {}", json_only.body);

    // The audit log has the lane's calls as rmcp's: session, tool, outcome, request id.
    let lines = audit_lines(&log, 4);
    let first = &lines[0];
    assert_eq!(first["session"], session[0].1.as_str(), "{first}");
    assert_eq!(first["tool"], "load_skill", "{first}");
    assert_eq!(first["outcome"], "ok", "{first}");
    assert_eq!(first["request_id"], 1, "{first}");
    assert_eq!(lines[1]["request_id"], "call-7", "{lines:?}");
    assert_eq!(lines[2]["outcome"], "refused", "{lines:?}");

    // A deleted session is gone for the lane too.
    let deleted = send(
        port,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", session[0].1.as_str())],
        "",
    );
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    assert_eq!(
        post(port, "/mcp", None, &headers, &body_call(7)).status,
        404
    );
}

#[test]
fn a_session_the_lane_serves_is_not_idle_while_used_and_expires_when_left() {
    let world = demo_world();
    let http = Listening::start(&world.config, &["--session-idle", "6"], &[]);
    let port = http.port;
    let session = open_session_at(port, "/mcp");
    let headers = borrowed(&session);
    // Used on the lane alone, 40 calls a quarter of a second apart: about ten seconds, past the
    // six of `--session-idle`, yet each call comes long before the session could be idle. A
    // session that only rmcp's idle clock kept would be closed half-way (404).
    for id in 1..=40 {
        let answer = post(port, "/mcp", None, &headers, &body_call(id));
        assert_eq!(answer.status, 200, "call {id}: {}", answer.body);
        assert_eq!(answered_as(&answer), "json");
        std::thread::sleep(Duration::from_millis(250));
    }
    // rmcp still has the session.
    let list = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}).to_string();
    let listed = post(port, "/mcp", None, &headers, &list);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(message_of(&listed)["result"]["tools"].is_array());
    // Left alone, it is closed (watched on `/metrics`, which names no session): then 404 on
    // the lane and at rmcp. The number of looks only keeps a broken server from hanging the
    // test.
    let closed = (0..240).any(|_| {
        std::thread::sleep(Duration::from_millis(250));
        let metrics = send(port, "GET", "/metrics", &[], "");
        assert_eq!(metrics.status, 200, "{}", metrics.body);
        metrics.body.lines().any(|l| l == "skillfold_sessions 0")
    });
    assert!(closed, "the idle session never expired: {}", http.log());
    assert_eq!(
        post(port, "/mcp", None, &headers, &body_call(0)).status,
        404
    );
    assert_eq!(post(port, "/mcp", None, &headers, &list).status, 404);
}
