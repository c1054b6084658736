//! The JSON Schemas skillfold publishes, generated with `schemars` from the Rust types that read
//! and write the documents, and committed under `schemas/` so editors and other tools can use
//! them. A test fails when the committed files are stale; `skillfold schema --out schemas`
//! rewrites them.

use serde_json::Value;

/// Every published schema: its file name under `schemas/` and its content.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![("skillfold.schema.json", crate::descriptor::json_schema())]
}

/// A schema as written to disk: pretty JSON with a final newline.
pub fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}
