use rmcp::model::{CallToolResult, NumberOrString, ServerJsonRpcMessage, ServerResult};
use serde_json::json;

use super::*;
use crate::mcp::tools::{call_result, placeholder_result};
use crate::testing::big_skill::runtime;

/// The answer to request `id` as rmcp writes it.
fn answer(result: CallToolResult, id: i64) -> Vec<u8> {
    let message = ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(result),
        NumberOrString::Number(id),
    );
    serde_json::to_vec(&message).expect("serialise")
}

/// What `splice` makes of `bytes`, the pieces put together.
fn spliced(splicer: &Splicer, bytes: &[u8]) -> Result<Option<Vec<u8>>, Missing> {
    splicer
        .splice(&Bytes::copy_from_slice(bytes))
        .map(|pieces| pieces.map(|pieces| pieces.concat()))
}

/// The answer to a body call with placeholders, and the same answer serialised whole.
fn both_answers(
    splicer: &Splicer,
    catalogue: &crate::runtime::catalogue::Catalogue,
) -> (Vec<u8>, Vec<u8>) {
    let input = json!({"name": "big", "reference": null});
    let (skill, record) = catalogue
        .call_body(&input)
        .expect("a body call")
        .expect("served");
    let json = Arc::clone(crate::runtime::tools::load_skill::body_json(skill));
    let (text, structured) = splicer.placeholders(&json);
    let placeheld = answer(placeholder_result(text, structured, &record), 7);
    let whole = answer(call_result(catalogue.call("load_skill", &input), None), 7);
    (placeheld, whole)
}

#[test]
fn a_spliced_answer_is_byte_for_byte_the_answer_serialised_whole() {
    let temp = tempfile::tempdir().expect("tempdir");
    // Quotes, backslashes, tabs, HTML and non-ASCII: everything JSON escapes or keeps.
    let body = "Say \"hi\" \\ then\ttab </script> — ✓ \u{1F600}\n".repeat(200);
    let runtime = runtime(temp.path(), &body);
    let catalogue = runtime.catalogue(None).expect("catalogue");
    let splicer = Splicer::new().expect("randomness");
    let (placeheld, whole) = both_answers(&splicer, &catalogue);
    assert!(placeheld.len() < 1024, "the placeholders are short");
    let pieces = splicer
        .splice(&Bytes::from(placeheld.clone()))
        .expect("held")
        .expect("spliced");
    // Nothing is copied: the prebuilt bytes are the entry's own.
    assert!(pieces.len() >= 5, "{}", pieces.len());
    assert_eq!(
        String::from_utf8_lossy(&pieces.concat()),
        String::from_utf8_lossy(&whole)
    );
    // As an SSE event, too (rmcp writes one event per frame).
    let event = |data: &[u8]| [b"data: ".as_slice(), data, b"\nid: 0/3\n\n"].concat();
    let spliced_event = spliced(&splicer, &event(&placeheld))
        .expect("held")
        .expect("spliced");
    assert_eq!(spliced_event, event(&whole));
    // An answer without placeholders is left alone.
    assert_eq!(spliced(&splicer, &whole), Ok(None));
}

#[test]
fn placeholders_it_does_not_hold_or_cannot_read_end_the_answer() {
    let temp = tempfile::tempdir().expect("tempdir");
    let runtime = runtime(temp.path(), "Body.\n");
    let catalogue = runtime.catalogue(None).expect("catalogue");
    let splicer = Splicer::new().expect("randomness");
    let (placeheld, _) = both_answers(&splicer, &catalogue);
    let text = String::from_utf8(placeheld).expect("utf-8");
    let tag = &splicer.tag;
    assert!(text.contains(&format!("{tag}0-t\"")), "{text}");
    for forged in [
        format!("{{\"a\":{tag}9-t\"}}"),
        format!("{{\"a\":{tag}-t\"}}"),
        format!("{{\"a\":{tag}0-x\"}}"),
        format!("{{\"a\":[{tag}0-s\":null}}]}}"),
        format!("{{\"a\":{tag}0-s\"}}"),
    ] {
        assert_eq!(
            spliced(&splicer, forged.as_bytes()),
            Err(Missing),
            "{forged}"
        );
    }
    // Another server's placeholders are not this one's.
    let other = Splicer::new().expect("randomness");
    assert_ne!(other.tag, splicer.tag);
    assert_eq!(spliced(&other, text.as_bytes()), Ok(None));
}

#[test]
fn bodies_of_snapshots_no_longer_served_are_kept_for_a_bound() {
    let splicer = Splicer::new().expect("randomness");
    let live: Arc<str> = Arc::from("{\"live\":true}");
    let (first, _) = splicer.placeholders(&live);
    for n in 0..3 * RETIRED {
        let gone: Arc<str> = Arc::from(format!("{{\"n\":{n}}}"));
        splicer.placeholders(&gone);
    }
    let entries = splicer.entries.lock().expect("lock");
    assert!(entries.list.len() <= RETIRED + 1, "{}", entries.list.len());
    assert!(entries.list.iter().any(|e| Arc::ptr_eq(&e.json, &live)));
    drop(entries);
    // The same snapshot's body keeps its placeholder.
    assert_eq!(splicer.placeholders(&live).0, first);
}
