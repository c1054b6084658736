use super::*;

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
