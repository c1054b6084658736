//! Issue 37 §4: the W3C trace context of a request (`params._meta.traceparent`, else the HTTP
//! `traceparent` header) is written into its audit line as `trace_id` and `span_id`; `_meta` wins
//! over the header; a malformed or hostile value is ignored and never written.

use serde_json::{Value, json};

use super::http_raw::post;
use super::mcp_client::{Listening, audit_lines};
use super::mcp_framing::demo_world;
use super::serve_http_rpc::{message_of, open_session_at};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN: &str = "00f067aa0ba902b7";
const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const HEADER_SPAN: &str = "b7ad6b7169203331";

fn call(id: u64, traceparent: Option<&str>) -> Value {
    let mut params =
        json!({"name": "load_skill", "arguments": {"name": "demo", "reference": null}});
    if let Some(value) = traceparent {
        params["_meta"] = json!({"traceparent": value});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

#[test]
fn trace_ids_reach_the_audit_line_and_malformed_ones_are_ignored() {
    let world = demo_world();
    let log = world.path("audit.jsonl");
    let http = Listening::start(
        &world.config,
        &["--audit-log", log.to_str().expect("utf8")],
        &[],
    );
    let session = open_session_at(http.port, "/mcp");
    let header = format!("00-{HEADER_TRACE}-{HEADER_SPAN}-01");
    let valid = format!("00-{TRACE}-{SPAN}-01");
    let send = |body: Value, traceparent: Option<&str>| {
        let mut headers: Vec<(&str, &str)> =
            session.iter().map(|(n, v)| (*n, v.as_str())).collect();
        if let Some(value) = traceparent {
            headers.push(("traceparent", value));
        }
        let answer = post(http.port, "/mcp", None, &headers, &body.to_string());
        assert_eq!(answer.status, 200, "{}", answer.body);
        let message = message_of(&answer);
        assert!(message.get("error").is_none(), "{message}");
    };
    let hostile = [
        valid.to_uppercase(),
        format!("00-{}-{SPAN}-01", "0".repeat(32)),
        format!("00-{TRACE}-{}-01", "0".repeat(16)),
        format!("00-{TRACE}-{SPAN}-01\u{1b}[8m\u{202e}"),
        format!("00-{TRACE}-{SPAN}-01-{}", "f".repeat(4096)),
        format!("ff-{TRACE}-{SPAN}-01"),
    ];
    // 1: `_meta` wins over the header. 2: the header alone. 3: neither.
    send(call(1, Some(&valid)), Some(&header));
    send(call(2, None), Some(&header));
    send(call(3, None), None);
    // 4: a malformed `_meta` value falls back to a valid header.
    send(call(4, Some("bogus")), Some(&header));
    // Then each hostile value in `_meta`, and an uppercase header: no ids at all.
    for (i, value) in hostile.iter().enumerate() {
        send(
            call(10 + i as u64, Some(value)),
            Some(&valid.to_uppercase()),
        );
    }
    // A resource read carries them too.
    let read = json!({"jsonrpc": "2.0", "id": 30, "method": "resources/read",
        "params": {"uri": "skill://demo/SKILL.md", "_meta": {"traceparent": valid}}});
    send(read, None);

    let want = 5 + hostile.len();
    let lines = audit_lines(&log, want);
    let text = fs_err::read_to_string(&log).expect("audit log");
    assert_eq!(lines.len(), want, "{text}");
    let ids = |line: &Value| (line["trace_id"].clone(), line["span_id"].clone());
    let of = |trace: &str, span: &str| (json!(trace), json!(span));
    assert_eq!(ids(&lines[0]), of(TRACE, SPAN));
    assert_eq!(lines[0]["request_id"], 1);
    assert_eq!(ids(&lines[1]), of(HEADER_TRACE, HEADER_SPAN));
    assert_eq!(ids(&lines[2]), (Value::Null, Value::Null));
    assert_eq!(ids(&lines[3]), of(HEADER_TRACE, HEADER_SPAN));
    for line in &lines[4..4 + hostile.len()] {
        assert_eq!(ids(line), (Value::Null, Value::Null), "{line}");
        assert_eq!(line["outcome"], "ok", "{line}");
    }
    let last = &lines[want - 1];
    assert_eq!(last["method"], "resources/read");
    assert_eq!(ids(last), of(TRACE, SPAN));
    assert_eq!(last["request_id"], 30);
    // Nothing of a malformed value is written, raw or escaped.
    for needle in [
        "\u{1b}",
        "\u{202e}",
        "[8m",
        "ffffffffffffffff",
        &TRACE.to_uppercase(),
    ] {
        assert!(!text.contains(needle), "{needle:?} in {text}");
    }
}
