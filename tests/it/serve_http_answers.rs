//! The answers of `skillfold serve --listen` to `load_skill` for a body, which the server
//! splices together from bytes built once per snapshot: byte for byte the answer stdio sends
//! for the same request (a body full of what JSON escapes, on every call, at the revisions with
//! and without `structuredContent` objects kept), whether the direct lane answers it (one JSON
//! object, on a ready session) or rmcp does (an SSE event: before the session is ready, or a
//! request the lane leaves to rmcp); on the stateless 2026-07-28 path the same body, with no
//! placeholder left anywhere.

use std::time::Duration;

use serde_json::{Value, json};

use super::http_raw::{self, post};
use super::mcp_client::Listening;
use super::mcp_framing::Server;
use super::support::world::World;

/// A world whose skill `big` has a body of everything JSON escapes or keeps, 64 KiB and more.
fn world() -> (World, String) {
    let world = World::new();
    let body = "Say \"hi\" \\ then\ttab </script> — ✓ \u{1F600} {\"k\": [1]}\n".repeat(1200);
    let hash = world.bundle(
        "big",
        &format!("---\nname: big\ndescription: A big skill.\n---\n{body}"),
        &[("references/notes.md", "# notes\n")],
    );
    world.descriptor(&format!(
        "skills:\n  - local: {{ name: big, version: '1', directory: big, hash: {hash}, limits: extended }}\n"
    ));
    (world, body)
}

fn call(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": "big", "reference": null}}})
    .to_string()
}

/// The one JSON object the direct lane answers with, as the server wrote it.
fn json_of(answer: &http_raw::Answer) -> &str {
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.header("content-type"),
        Some("application/json"),
        "the direct lane answers: {:.300}",
        answer.body
    );
    answer.body.as_str()
}

/// The `data:` of the one SSE event of an answer, as rmcp wrote it.
fn data_of(answer: &http_raw::Answer) -> &str {
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.header("content-type"),
        Some("text/event-stream"),
        "rmcp answers: {:.300}",
        answer.body
    );
    let data: Vec<&str> = answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| !d.is_empty())
        .collect();
    assert_eq!(data.len(), 1, "one message: {}", answer.body);
    data[0]
}

#[test]
fn a_body_is_answered_over_http_with_the_bytes_stdio_sends() {
    let (world, body) = world();
    let http = Listening::start(&world.config, &[], &[]);
    for protocol in ["2025-03-26", "2025-06-18"] {
        let mut stdio = Server::start(&world);
        stdio.initialize(protocol);
        let initialize = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": protocol, "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string();
        let opened = post(http.port, "/mcp", None, &[], &initialize);
        assert_eq!(opened.status, 200, "{}", opened.body);
        let session = opened
            .header("mcp-session-id")
            .expect("a session")
            .to_owned();
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", protocol),
        ];
        // Before `notifications/initialized` rmcp answers (an SSE event), after it the direct
        // lane (one JSON object); the first call builds the bytes, the next ones reuse them.
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        for id in [4, 5, 6, 7] {
            if id == 5 {
                assert_eq!(
                    post(http.port, "/mcp", None, &headers, initialized).status,
                    202
                );
            }
            stdio.line(&call(id));
            let expected = stdio
                .next_line(Duration::from_secs(30))
                .expect("an answer on stdio");
            let answer = post(http.port, "/mcp", None, &headers, &call(id));
            let got = if id == 4 {
                data_of(&answer)
            } else {
                json_of(&answer)
            };
            let at = got
                .bytes()
                .zip(expected.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected.len()));
            assert!(
                got == expected,
                "{protocol}, call {id}: the answers differ at {at} ({} vs {}): {:?} vs {:?}",
                got.len(),
                expected.len(),
                &got[at.saturating_sub(40)..(at + 80).min(got.len())],
                &expected[at.saturating_sub(40)..(at + 80).min(expected.len())]
            );
            let message: Value = serde_json::from_str(got).expect("json");
            assert!(
                message["result"]["structuredContent"]["content"] == body.as_str(),
                "{protocol}, call {id}: not the body"
            );
        }
        let (code, _) = stdio.close();
        assert_eq!(code, Some(0));
    }

    // The stateless path: the same body, the text the structured content's JSON text.
    let stateless = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "load_skill"),
    ];
    let request = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "load_skill", "arguments": {"name": "big", "reference": null},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}});
    let answer = post(http.port, "/mcp", None, &stateless, &request.to_string());
    assert!(
        !answer.body.contains("skillfold-splice"),
        "a placeholder is left"
    );
    let raw = answer
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|d| !d.is_empty())
        .unwrap_or(answer.body.as_str());
    let message: Value = serde_json::from_str(raw).expect("a JSON-RPC answer");
    let result = &message["result"];
    assert!(
        result["structuredContent"]["content"] == body.as_str(),
        "not the body: {:.300}",
        message.to_string()
    );
    let text = result["content"][0]["text"].as_str().expect("text");
    let structured = result["structuredContent"].to_string();
    assert!(text == structured, "the text is not the output's");
}
