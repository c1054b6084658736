//! The codes of refused tool calls, sent as `error.code` of a tool error (the JSON Schema of
//! the tool error lists them as an `enum`). Declared with
//! [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

use std::borrow::Cow;

crate::support::error_code::error_codes! {
    /// Why a tool call was refused. The commands that call a tool exit 2 on any of them.
    ///
    /// ```
    /// # let (skills, built, catalogue) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
    /// let refused = catalogue.call("no_such_tool", &serde_json::json!({})).unwrap_err();
    /// assert_eq!(refused.code, skillfold::ToolCode::UnknownTool);
    /// assert_eq!(refused.code.as_str(), "unknown_tool");
    /// ```
    pub enum ToolCode: "tool", default Invalid;
    /// The catalogue has no tool of that name.
    UnknownTool = "unknown_tool",
    /// `load_skill`: malformed input, unknown skill or refused reference.
    ValidationError = "validation_error",
    /// The host's policy hook refused the call.
    PolicyDenied = "policy_denied",
    /// Malformed input, or arguments over their bounds.
    InvalidArgs = "invalid_args",
    /// No such skill.
    UnknownSkill = "unknown_skill",
    /// The path breaks the path rules of the tool.
    InvalidPath = "invalid_path",
    /// No such helper or file.
    NotFound = "not_found",
    /// The helper's name or an argument names a blocklisted action.
    BlockedTool = "blocked_tool",
    /// Helpers do not run during a replay.
    ReplayBlocked = "replay_blocked",
    /// No approval for these exact bytes.
    NotApproved = "not_approved",
    /// The helper ran longer than the timeout.
    Timeout = "timeout",
    /// The helper wrote more than allowed.
    OutputLimit = "output_limit",
    /// The helper exited non-zero.
    ScriptFailed = "script_failed",
    /// Helpers run only on Unix.
    UnsupportedPlatform = "unsupported_platform",
    /// The interpreter could not start.
    SpawnFailed = "spawn_failed",
    /// The helper's working directory (the skill's directory) is gone and cannot be stood in
    /// for.
    WorkdirMissing = "workdir_missing",
    /// The reference file is over its bound.
    TooLarge = "too_large",
    /// The reference file is not UTF-8 text.
    NotText = "not_text",
    /// `load_skill`: the reference is a binary file; its bytes are never returned as text.
    BinaryReference = "binary_reference",
    /// A file kept on disk no longer holds the bytes verified when the snapshot was made.
    ReferenceChanged = "reference_changed",
}

impl schemars::JsonSchema for ToolCode {
    fn schema_name() -> Cow<'static, str> {
        "ToolCode".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = ToolCode::ALL.iter().map(|c| c.as_str()).collect();
        schemars::json_schema!({
            "description": "The stable code of the refusal (see docs/error-codes.md).",
            "type": "string",
            "enum": codes,
        })
    }
}
