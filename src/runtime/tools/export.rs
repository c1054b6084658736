//! Tool definitions in the request shapes of model APIs, so a host hands a catalogue's tools to a
//! model without writing the mapping itself: [`ToolFormat::OpenAi`] (Chat Completions `tools`
//! entries, strict mode on: our schemas satisfy its rules, see the [parent module](super)),
//! [`ToolFormat::OpenAiResponses`] (the Responses API's flat entries), [`ToolFormat::Anthropic`]
//! (Messages API `tools` entries) and [`ToolFormat::Mcp`] (a `tools/list` entry). Only the
//! definitions are mapped; a call's output goes back to the model as the JSON text of
//! [`Catalogue::call`](crate::Catalogue::call)'s output.
//!
//! ```
//! use skillfold::ToolFormat;
//! # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
//! let body = serde_json::json!({
//!     "model": "gpt-5",
//!     "messages": [{"role": "system", "content": catalogue.prompt()}],
//!     "tools": ToolFormat::OpenAi.tools(&catalogue.tools()),
//! });
//! assert_eq!(body["tools"][0]["function"]["name"], "load_skill");
//! assert_eq!(body["tools"][0]["function"]["strict"], true);
//! ```

use serde_json::{Value, json};

use super::ToolDefinition;

/// A model API's shape for tool definitions.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let body = serde_json::json!({"tools": skillfold::ToolFormat::Anthropic.tools(&catalogue.tools())});
/// assert_eq!(body["tools"][0]["name"], "load_skill");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolFormat {
    /// OpenAI Chat Completions: `{"type": "function", "function": {name, description,
    /// parameters, strict: true}}`.
    OpenAi,
    /// OpenAI Responses: `{"type": "function", name, description, parameters, strict: true}`.
    OpenAiResponses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// An MCP `tools/list` entry: `{name, description, inputSchema, outputSchema, annotations}`.
    Mcp,
}

impl ToolFormat {
    /// Every format with its name, as `from_name` accepts it.
    pub const ALL: [(&'static str, ToolFormat); 4] = [
        ("openai", ToolFormat::OpenAi),
        ("openai-responses", ToolFormat::OpenAiResponses),
        ("anthropic", ToolFormat::Anthropic),
        ("mcp", ToolFormat::Mcp),
    ];

    /// The format called `name` (`openai`, `openai-responses`, `anthropic`, `mcp`).
    pub fn from_name(name: &str) -> Option<ToolFormat> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// One definition in this format.
    pub fn tool(self, definition: &ToolDefinition) -> Value {
        let ToolDefinition {
            name,
            description,
            input_schema,
            output_schema,
            annotations,
        } = definition;
        match self {
            ToolFormat::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": input_schema,
                    "strict": true,
                },
            }),
            ToolFormat::OpenAiResponses => json!({
                "type": "function",
                "name": name,
                "description": description,
                "parameters": input_schema,
                "strict": true,
            }),
            ToolFormat::Anthropic => json!({
                "name": name,
                "description": description,
                "input_schema": input_schema,
            }),
            ToolFormat::Mcp => json!({
                "name": name,
                "description": description,
                "inputSchema": input_schema,
                "outputSchema": output_schema,
                "annotations": annotations,
            }),
        }
    }

    /// Every definition in this format, in order: the `tools` array of a request body.
    pub fn tools(self, definitions: &[ToolDefinition]) -> Value {
        Value::Array(definitions.iter().map(|d| self.tool(d)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::tools::{ToolAnnotations, load_skill};

    fn definition() -> ToolDefinition {
        ToolDefinition {
            name: load_skill::NAME,
            description: "Loads a skill.".into(),
            input_schema: json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
            output_schema: json!({"type": "object"}),
            annotations: ToolAnnotations::READ_ONLY,
        }
    }

    #[test]
    fn each_format_carries_the_name_description_and_input_schema_where_its_api_wants_them() {
        let d = definition();
        let openai = ToolFormat::OpenAi.tool(&d);
        assert_eq!(openai["type"], "function");
        assert_eq!(openai["function"]["name"], "load_skill");
        assert_eq!(openai["function"]["description"], "Loads a skill.");
        assert_eq!(openai["function"]["parameters"], d.input_schema);
        assert_eq!(openai["function"]["strict"], true);
        let responses = ToolFormat::OpenAiResponses.tool(&d);
        assert_eq!(responses["name"], "load_skill");
        assert_eq!(responses["parameters"], d.input_schema);
        assert_eq!(responses["strict"], true);
        let anthropic = ToolFormat::Anthropic.tool(&d);
        assert_eq!(
            anthropic.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["name", "description", "input_schema"]
        );
        assert_eq!(anthropic["input_schema"], d.input_schema);
        let mcp = ToolFormat::Mcp.tool(&d);
        assert_eq!(mcp["inputSchema"], d.input_schema);
        assert_eq!(mcp["outputSchema"], d.output_schema);
        assert_eq!(mcp["annotations"]["readOnlyHint"], true);
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for (name, format) in ToolFormat::ALL {
            assert_eq!(ToolFormat::from_name(name), Some(format));
        }
        assert_eq!(ToolFormat::from_name("OpenAI"), None);
        assert_eq!(ToolFormat::from_name(""), None);
    }
}
