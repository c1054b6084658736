use super::*;

#[test]
fn request_ids_are_written_as_sent_bounded_and_escaped_and_trace_ids_only_when_valid() {
    let hostile = rmcp::model::NumberOrString::String(
        format!("id\u{202e}\u{1b}{}", "x".repeat(2 * MAX_CLIENT_TEXT)).into(),
    );
    let trace = TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    let mut map = serde_json::Map::new();
    trace_fields(&mut map, trace.as_ref(), Some(&hostile));
    let id = map["request_id"].as_str().unwrap();
    assert!(id.starts_with("id\\u{202e}\\u{1b}x"), "{id}");
    assert!(id.chars().count() < MAX_CLIENT_TEXT + 32, "{}", id.len());
    assert_eq!(map["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(map["span_id"], "00f067aa0ba902b7");
    let mut none = serde_json::Map::new();
    trace_fields(
        &mut none,
        None,
        Some(&rmcp::model::NumberOrString::Number(7)),
    );
    assert_eq!(none["request_id"], 7);
    assert_eq!(
        (&none["trace_id"], &none["span_id"]),
        (&Value::Null, &Value::Null)
    );
}

#[test]
fn the_caller_of_a_token_is_written_bounded_and_escaped_and_nothing_without_one() {
    let caller = Caller {
        issuer: "https://idp.example".to_owned(),
        sub: Some(format!(
            "bot\u{202e}\u{2028}{}",
            "x".repeat(2 * MAX_CLIENT_TEXT)
        )),
        client_id: None,
    };
    let mut map = serde_json::Map::new();
    caller_fields(&mut map, Some(&caller));
    assert_eq!(map["issuer"], "https://idp.example");
    assert_eq!(map["client_id"], Value::Null);
    let sub = map["sub"].as_str().unwrap();
    assert!(sub.starts_with("bot\\u{202e}\\u{2028}x"), "{sub}");
    assert!(
        !sub.contains('\u{202e}') && !sub.contains('\u{2028}'),
        "{sub}"
    );
    assert!(sub.chars().count() < MAX_CLIENT_TEXT + 32, "{}", sub.len());
    let mut none = serde_json::Map::new();
    caller_fields(&mut none, None);
    assert!(none.is_empty());
}
