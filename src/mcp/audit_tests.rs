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

#[test]
fn a_refused_call_names_the_skill_asked_for_escaped_and_capped_and_a_served_one_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    let asked = format!("gh\u{202e}ost\u{1b}{}", "x".repeat(4 * MAX_ASKED_SKILL));
    fn refused(asked: Option<&str>) -> ToolCall<'_> {
        ToolCall {
            agent: Some("writer"),
            session: None,
            caller: None,
            trace: None,
            request_id: None,
            record: None,
            asked,
            code: Some("skill_not_found"),
            tool: "load_skill",
            outcome: crate::mcp::observe::Outcome::Refused,
            duration: std::time::Duration::ZERO,
            bytes: 0,
        }
    }
    log.tool_call(&refused(Some(&asked)));
    log.tool_call(&refused(None));
    let text = fs_err::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let skill = lines[0]["skill"].as_str().expect("the skill asked for");
    assert!(skill.starts_with("gh\\u{202e}ost\\u{1b}xxx"), "{skill}");
    assert!(!skill.contains('\u{202e}') && !skill.contains('\u{1b}'));
    assert!(
        skill.chars().count() <= MAX_ASKED_SKILL + 16,
        "{}",
        skill.len()
    );
    assert_eq!(lines[0]["code"], "skill_not_found");
    assert_eq!(lines[0]["outcome"], "refused");
    assert!(lines[1].get("skill").is_none(), "{}", lines[1]);
}
