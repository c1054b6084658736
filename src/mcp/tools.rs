//! The library's tools in MCP's shape: a [`ToolDefinition`] as an MCP [`Tool`] (same name,
//! description, schemas and behaviour annotations), a tool's result as a [`CallToolResult`] (a
//! success as `structuredContent` and text, with its record in `_meta`; a refusal as an MCP tool
//! error whose text is the library's JSON error object), and the tool list as a session of a
//! given protocol revision may see it (no `outputSchema` before 2025-06-18, which defines it).

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::runtime::tools::ToolDefinition;

/// The `_meta` key of the record of a successful call.
pub const RECORD_META_KEY: &str = "skillfold/record";

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

/// The result of a tool call as MCP wants it. `text`, when given, is the output's JSON text built
/// before (the bytes of `output.to_string()`, see `load_skill::body_json`), sent instead of
/// serialising the output once more.
pub fn call_result(
    result: Result<(Value, crate::runtime::tools::Record), crate::runtime::tools::ToolError>,
    text: Option<&str>,
) -> CallToolResult {
    match result {
        Ok((output, record)) => {
            let text = match text {
                Some(text) => {
                    debug_assert_eq!(text, output.to_string(), "prebuilt text is the output's");
                    text.to_owned()
                }
                None => output.to_string(),
            };
            success(text, output, &record)
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.to_json().to_string())]),
    }
}

/// The result of a successful call whose text content and `structuredContent` are the
/// placeholders `text` and `structured`, for bytes spliced into the answer after rmcp has
/// serialised it (`http::splice`).
#[cfg(feature = "http")]
pub fn placeholder_result(
    text: String,
    structured: Value,
    record: &crate::runtime::tools::Record,
) -> CallToolResult {
    success(text, structured, record)
}

/// A success: `text`, `output` as `structuredContent`, the record in `_meta`.
fn success(text: String, output: Value, record: &crate::runtime::tools::Record) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(output);
    let mut meta = JsonObject::new();
    meta.insert(
        RECORD_META_KEY.into(),
        serde_json::to_value(record).unwrap_or_default(),
    );
    r.meta = Some(MetaObject(meta));
    r
}

/// The first protocol revision with `outputSchema` (and `structuredContent`).
const OUTPUT_SCHEMA_SINCE: &str = "2025-06-18";

/// The tools as a session of `protocol` sees them: without `outputSchema` before 2025-06-18.
pub(super) fn tools_for(tools: &[Tool], protocol: Option<&str>) -> Vec<Tool> {
    let mut tools = tools.to_vec();
    if protocol.is_some_and(|p| p < OUTPUT_SCHEMA_SINCE) {
        for tool in &mut tools {
            tool.output_schema = None;
        }
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::catalogue::Catalogue;

    #[test]
    fn tool_errors_carry_the_json_error_object_as_text_only() {
        let empty = Catalogue::new(None, Vec::new()).expect("empty catalogue");
        let result = call_result(empty.call("nope", &serde_json::json!({})), None);
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
