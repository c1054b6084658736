//! The JSON Schemas skillfold publishes — the descriptor, the `load_skill` input and output, the
//! tool error object and the host record — generated with `schemars` from the Rust types that
//! read and write the documents, and committed under `schemas/` so editors and other tools can use
//! them. A test fails when the committed files are stale; `skillfold schema --out schemas`
//! rewrites them.

use serde_json::Value;

use crate::tools::{Record, ToolError, load_skill, read_reference, run_script};

/// Every published schema: its file name under `schemas/` and its content.
pub fn all() -> Vec<(&'static str, Value)> {
    let to_value = |s: schemars::Schema| serde_json::to_value(s).unwrap_or_default();
    vec![
        ("skillfold.schema.json", crate::descriptor::json_schema()),
        ("load_skill.input.schema.json", load_skill::input_schema()),
        (
            "load_skill.output.schema.json",
            to_value(schemars::schema_for!(load_skill::LoadedSkill)),
        ),
        (
            "skill_run_script.input.schema.json",
            run_script::input_schema(),
        ),
        (
            "skill_run_script.output.schema.json",
            to_value(schemars::schema_for!(run_script::RunScriptOutput)),
        ),
        (
            "skill_read_reference.input.schema.json",
            read_reference::input_schema(),
        ),
        (
            "skill_read_reference.output.schema.json",
            to_value(schemars::schema_for!(read_reference::ReadReferenceOutput)),
        ),
        (
            "tool-error.schema.json",
            to_value(schemars::schema_for!(ToolError)),
        ),
        (
            "record.schema.json",
            to_value(schemars::schema_for!(Record)),
        ),
    ]
}

/// A schema as written to disk: pretty JSON with a final newline.
pub fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}
