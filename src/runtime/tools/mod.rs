//! The tools a catalogue serves to a model, one module per tool, and what they share: the tool
//! definitions (name, description, JSON Schema), the error object, the record each successful
//! call yields for the host, and the policy hook.
//!
//! Input schemas follow the rules the strict tool modes of model APIs share (OpenAI strict mode,
//! Anthropic strict tool use, Gemini's JSON Schema parameters), so one schema works unchanged with
//! each: every object closed (`additionalProperties: false`) with every property listed in
//! `required`; a value that may be absent is required and nullable (`anyOf` with
//! `{"type": "null"}`) instead; no `default`, no `format`, no type lists, no numeric, length or
//! item-count bounds (the bounds are stated in the description and enforced by the call). The
//! server reads inputs as the schema says, with one leniency: a nullable property left out reads
//! as `null` (`load_skill`'s `reference`), since models outside a strict mode omit what they take
//! for optional and `null` is the one meaning it can have. Any other property left out is refused
//! like any other bad input (`skill_run_script`'s `args` is not nullable: `[]` is required).
//!
//! Each tool also has an output schema (its `structuredContent` in MCP, `outputSchema` in
//! `tools/list`), generated from the type it returns. Every refusal is a [`ToolError`] with a
//! stable code, sent as `{"error": {...}}` ([`ToolError::wire_schema`]); bad input is refused
//! before the policy hook or any data is touched.

#[cfg(feature = "mcp")]
pub mod asked;
pub mod code;
pub mod export;
pub mod load_skill;
pub mod read_reference;
pub mod run_script;

use serde::Serialize;
use serde_json::Value;

pub use self::code::ToolCode;
use crate::runtime::guides::Guide;
use crate::runtime::snapshot::{Origin, Snapshot};

/// A tool as offered to a model.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let menu: Vec<String> = catalogue
///     .tools()
///     .iter()
///     .map(|tool| format!("{}: {}", tool.name, tool.description))
///     .collect();
/// assert!(menu[0].starts_with("load_skill: "));
/// assert_eq!(catalogue.tools()[0].input_schema["additionalProperties"], false);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    /// The tool name.
    pub name: &'static str,
    /// What it does and when to use it.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
    /// The JSON Schema of the output of a successful call.
    pub output_schema: Value,
    /// Hints for hosts (MCP tool annotations).
    pub annotations: ToolAnnotations,
}

/// Behaviour hints for hosts, with the names MCP uses.
///
/// ```
/// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let annotations: skillfold::ToolAnnotations = catalogue.tools()[0].annotations;
/// assert!(annotations.read_only_hint && !annotations.open_world_hint);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool changes nothing.
    pub read_only_hint: bool,
    /// Calling it again with the same input has no further effect.
    pub idempotent_hint: bool,
    /// It may reach outside the skill corpus (network, other systems).
    pub open_world_hint: bool,
}

impl ToolAnnotations {
    /// A tool that only reads verified snapshots.
    pub const READ_ONLY: ToolAnnotations = ToolAnnotations {
        read_only_hint: true,
        idempotent_hint: true,
        open_world_hint: false,
    };
}

/// A refused call: a stable code, a message for the model, and the valid values when the input
/// named something that does not exist. The codes (a `ToolCode`): `unknown_tool`,
/// `validation_error`, `policy_denied` (every tool); `invalid_args`, `unknown_skill`,
/// `invalid_path`, `not_found`, `blocked_tool`, `replay_blocked`, `not_approved`, `timeout`,
/// `output_limit`, `script_failed`, `unsupported_platform`, `spawn_failed`, `workdir_missing`
/// (`skill_run_script`);
/// `invalid_args`, `unknown_skill`, `invalid_path`, `not_found`, `too_large`, `not_text`
/// (`skill_read_reference`).
// The example is for rustdoc only: schemars turns doc comments into schema descriptions.
#[cfg_attr(
    doc,
    doc = r#"
```
# let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
let refused = catalogue
    .call("load_skill", &serde_json::json!({"name": "commit-message", "reference": "../etc"}))
    .unwrap_err();
assert_eq!(refused.code, skillfold::ToolCode::ValidationError);
let for_the_model = serde_json::json!({"error": refused});
assert_eq!(for_the_model["error"]["code"], "validation_error");
```"#
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema, thiserror::Error)]
#[error("{message} [{code}]")]
pub struct ToolError {
    /// The stable code.
    pub code: ToolCode,
    /// What was wrong, for the model.
    pub message: String,
    /// The valid values (skill names, reference paths, tools) when the input named something
    /// unknown or malformed; empty otherwise.
    pub valid: Vec<String>,
    /// The exit status of a helper that failed (`script_failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The end of a failed helper's stderr (`script_failed`, at most 4,000 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

impl crate::support::error_code::Coded for ToolError {
    fn error_code(&self) -> crate::support::error_code::ErrorCode {
        self.code.into()
    }
}

impl ToolError {
    /// A refusal with `code`.
    pub fn new(code: ToolCode, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            valid: Vec::new(),
            exit_code: None,
            stderr: None,
        }
    }

    /// The same error, listing the valid values.
    pub fn with_valid(mut self, valid: Vec<String>) -> ToolError {
        self.valid = valid;
        self
    }

    /// The error as the JSON object returned to the model: `{"error": {...}}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(ToolErrorReply { error: self }).unwrap_or_default()
    }

    /// The JSON Schema of [`ToolError::to_json`]: what a refused call sends.
    pub fn wire_schema() -> Value {
        output_schema(serialized_schema::<ToolErrorReply<'static>>())
    }
}

/// A refused call as it is sent: the [`ToolError`] under `error`.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(
    title = "tool error",
    description = "What a refused tool call returns: `{\"error\": {code, message, valid, ...}}`."
)]
struct ToolErrorReply<'a> {
    /// Why the call was refused.
    error: &'a ToolError,
}

/// What a successful call served, for the host's transcript; never shown to the model. The
/// SHA-256 of the exact bytes served lets a session prove what the model read.
// The example is for rustdoc only: schemars turns doc comments into schema descriptions.
#[cfg_attr(
    doc,
    doc = r#"
```
# let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
let input = serde_json::json!({"name": "commit-message", "reference": null});
let (_output, record) = catalogue.call("load_skill", &input).unwrap();
// For the host's transcript: what was served, from which pin, and the SHA-256 of the bytes.
let line = serde_json::to_string(&record).unwrap();
assert!(line.contains(&record.sha256));
assert_eq!(record.hash.as_deref(), Some("b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e"));
```"#
)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Record {
    /// The tool called.
    pub tool: String,
    /// The agent whose catalogue served it (`null` for the defaults).
    pub agent: Option<String>,
    /// The skill.
    pub skill: String,
    /// Its pinned version (`null` for a discovered, unpinned skill).
    pub version: Option<String>,
    /// Its pinned bundle digest (`null` for a discovered skill).
    pub hash: Option<String>,
    /// Where it came from.
    #[schemars(with = "Value")]
    pub origin: Origin,
    /// The supporting file served, or `null` for the body of `SKILL.md`.
    pub reference: Option<String>,
    /// Bytes served.
    pub bytes: u64,
    /// SHA-256 of the bytes served, lowercase hex.
    pub sha256: String,
}

/// What a call is about to serve, as the policy hook sees it — the same resolution the call then
/// uses.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
///     .policy(|access: &skillfold::Access<'_>| match (access.agent, access.reference) {
///         (None, Some(_)) => Err(format!("`{}`: the defaults serve instructions only", access.skill.name())),
///         _ => Ok(()),
///     })
///     .build()
///     .unwrap();
/// # let _ = built;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    /// The agent whose catalogue serves it.
    pub agent: Option<&'a str>,
    /// The tool.
    pub tool: &'a str,
    /// The skill it would read.
    pub skill: Subject<'a>,
    /// The file it would serve or run, or `None` for the body of `SKILL.md`.
    pub reference: Option<&'a str>,
}

/// The skill a call is about: a verified, pinned snapshot, or a discovered (unpinned) skill.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e")
///     .policy(|access| match access.skill {
///         skillfold::Subject::Pinned(snapshot) if snapshot.pin().version.as_str() != "0" => Ok(()),
///         skillfold::Subject::Pinned(_) => Err("a version 0 is not served".to_owned()),
///         skillfold::Subject::Discovered(_) => Err("only pinned skills here".to_owned()),
///     })
///     .build()
///     .unwrap();
/// # let _ = built;
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// A pinned bundle.
    Pinned(&'a Snapshot),
    /// A skill found under the guides folder.
    Discovered(&'a Guide),
}

impl Subject<'_> {
    /// The name the tools use for it.
    pub fn name(&self) -> &str {
        match self {
            Subject::Pinned(s) => s.pin().name.as_str(),
            Subject::Discovered(g) => &g.id,
        }
    }

    /// The pinned snapshot, if it is one.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        match self {
            Subject::Pinned(s) => Some(s),
            Subject::Discovered(_) => None,
        }
    }
}

/// A host's policy: `Err(reason)` refuses the call; nothing is served or recorded.
// A String: the host's own reason, passed on in the refusal; skillfold never matches it.
pub type Policy = dyn Fn(&Access<'_>) -> Result<(), String> + Send + Sync;

/// A tool input schema as strict-mode tool APIs want it (see the module doc): portable, every
/// object closed with every property required, no `default`, no `$schema` or `title` at the root.
pub(crate) fn strict_input_schema(schema: schemars::Schema) -> Value {
    let mut schema = serde_json::to_value(schema).unwrap_or_default();
    crate::support::json_schema::make_portable(&mut schema);
    crate::support::json_schema::visit_schemas(&mut schema, &mut |obj| {
        obj.remove("default");
        if let Some(names) = obj.get("properties").and_then(Value::as_object) {
            let names: Vec<Value> = names.keys().cloned().map(Value::String).collect();
            obj.insert("required".into(), Value::Array(names));
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
    });
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

/// The schema of `T` as serialized: a property that is always written (an `Option` included) is
/// required.
pub(crate) fn serialized_schema<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A published output schema: portable, and every object closed, so it describes exactly what
/// is sent.
pub(crate) fn output_schema(schema: schemars::Schema) -> Value {
    let mut schema = serde_json::to_value(schema).unwrap_or_default();
    crate::support::json_schema::make_portable(&mut schema);
    crate::support::json_schema::visit_schemas(&mut schema, &mut |obj| {
        if obj.contains_key("properties") {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
    });
    schema
}

/// `schema` with its string property `property` narrowed to exactly `values` (the skills of one
/// catalogue), so a model can only name what exists.
pub(crate) fn narrowed(mut schema: Value, property: &str, values: &[&str]) -> Value {
    if let Some(obj) = schema
        .pointer_mut(&format!("/properties/{property}"))
        .and_then(Value::as_object_mut)
    {
        obj.insert("enum".into(), Value::from(values.to_vec()));
    }
    schema
}

/// Builds the record of a successful call.
pub(crate) fn record(access: &Access<'_>, content: &[u8]) -> Record {
    let (version, hash, origin, known_sha256) = match access.skill {
        Subject::Pinned(s) => (
            Some(s.pin().version.to_string()),
            Some(s.pin().hash.to_string()),
            s.origin().clone(),
            s.served_sha256(access.reference),
        ),
        Subject::Discovered(g) => (
            None,
            None,
            Origin {
                kind: crate::descriptor::kind::SourceKind::Discovered,
                location: g.dir().display().to_string(),
                url: None,
                commit: None,
                generation: None,
            },
            None,
        ),
    };
    Record {
        tool: access.tool.to_owned(),
        agent: access.agent.map(str::to_owned),
        skill: access.skill.name().to_owned(),
        version,
        hash,
        origin,
        reference: access.reference.map(str::to_owned),
        bytes: content.len() as u64,
        sha256: known_sha256
            .map_or_else(|| crate::support::hex::sha256_hex(content), str::to_owned),
    }
}
