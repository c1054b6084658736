//! The MCP stdio framing: one line from a client, judged and answered.

use serde_json::Value;

/// One line from an MCP client, as the stdio framing judges it (`mcp::framing::judge`) and, read
/// as the start of a line over the bound, as it answers that (`mcp::framing::oversized`).
///
/// Invariants: every request (a string `method` and an `id`) gets exactly one answer, forwarded or
/// refused, never dropped; a refusal is a JSON-RPC 2.0 error response with one of the three codes,
/// a bounded message, and the request's own id when that id is valid (else `null`); a line that is
/// not JSON is refused with `-32700`; only a JSON object rmcp reads as a client message is
/// forwarded; only a blank line is skipped.
#[cfg(feature = "mcp")]
pub fn mcp_framing(data: &[u8]) {
    use crate::mcp::framing::{self, INVALID_PARAMS, INVALID_REQUEST, LineVerdict, PARSE_ERROR};
    use serde::Deserialize as _;

    let line = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    let valid_id = |id: &Value| rmcp::model::RequestId::deserialize(id).is_ok();
    let request_id = parsed.as_ref().and_then(|message| {
        let fields = message.as_object()?;
        fields.get("method")?.as_str()?;
        fields.get("id").cloned()
    });
    match framing::judge(data) {
        LineVerdict::Skip => assert!(line.iter().all(u8::is_ascii_whitespace)),
        LineVerdict::Forward => {
            let message = parsed.expect("only JSON is forwarded");
            assert!(message.is_object(), "only objects are forwarded");
            assert_eq!(message.get("jsonrpc"), Some(&Value::from("2.0")));
            assert!(
                rmcp::model::ClientJsonRpcMessage::deserialize(&message).is_ok(),
                "forwarded a message rmcp cannot read"
            );
        }
        LineVerdict::Reply(reply) => {
            let code = check_error_response(&reply, valid_id);
            match &parsed {
                None => assert_eq!(code, PARSE_ERROR, "not JSON, yet code {code}"),
                Some(_) => assert!(code == INVALID_REQUEST || code == INVALID_PARAMS),
            }
            if let Some(id) = parsed
                .as_ref()
                .and_then(|m| m.as_object()?.get("id"))
                .filter(|id| valid_id(id))
            {
                // A key written twice at the top is refused before any id is trusted: `null`.
                let expected = if top_level_key_repeated(data) {
                    &Value::Null
                } else {
                    id
                };
                assert_eq!(&reply["id"], expected, "the answer lost the message's id");
            }
        }
        LineVerdict::Ignore(why) => {
            assert!(!why.is_empty());
            assert!(
                request_id.is_none(),
                "a request with an id was dropped without an answer"
            );
        }
    }
    let code = check_error_response(&framing::oversized(data), valid_id);
    assert_eq!(code, INVALID_REQUEST);
}

/// Checks a JSON-RPC error response's shape and returns its code.
#[cfg(feature = "mcp")]
fn check_error_response(reply: &Value, valid_id: impl Fn(&Value) -> bool) -> i64 {
    let fields = reply.as_object().expect("an answer is an object");
    assert_eq!(fields.len(), 3, "unexpected members in {reply}");
    assert_eq!(reply["jsonrpc"], "2.0");
    assert!(
        reply["id"].is_null() || valid_id(&reply["id"]),
        "bad id in {reply}"
    );
    let message = reply["error"]["message"].as_str().expect("a message");
    assert!(!message.is_empty() && message.chars().count() <= 301);
    let wire = serde_json::to_string(reply).expect("answers serialise");
    assert!(!wire.contains('\n'), "an answer must be one line");
    reply["error"]["code"].as_i64().expect("an integer code")
}

/// Whether the message's top-level object names one key twice (an oracle of its own, apart from
/// the server's walk over every depth).
fn top_level_key_repeated(data: &[u8]) -> bool {
    struct Keys;
    impl<'de> serde::de::Visitor<'de> for Keys {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut seen = std::collections::BTreeSet::new();
            let mut repeated = false;
            while let Some(key) = map.next_key::<String>()? {
                repeated |= !seen.insert(key);
                map.next_value::<serde::de::IgnoredAny>()?;
            }
            Ok(repeated)
        }
    }
    let text = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut parser = serde_json::Deserializer::from_slice(text);
    serde::Deserializer::deserialize_map(&mut parser, Keys).unwrap_or(false)
}
