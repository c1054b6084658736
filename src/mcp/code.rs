//! The MCP server's own codes: starting it and reloading its catalogue. Declared with
//! [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why the server could not start, or a reload kept the previous catalogue.
    pub enum ServeCode: "mcp", default Invalid;
    /// The descriptor has problems.
    DescriptorInvalid = "descriptor_invalid",
    /// The async runtime could not start.
    RuntimeFailed = "runtime_failed" => Retryable,
    /// The MCP session did not start.
    SessionFailed = "session_failed" => Retryable,
    /// A reload could not prepare the agent's sources (logged, retried with backoff).
    PrepareFailed = "prepare_failed" => Retryable,
    /// After a reload's preparation, bundles failed to load (logged, retried).
    LoadFailed = "load_failed",
    /// `serve --listen` on a reachable address without tokens, `--oauth` or `--insecure-no-auth`.
    InsecureListen = "insecure_listen",
    /// `serve --listen` cannot listen on the address (in use, not permitted).
    ListenFailed = "listen_failed" => Retryable,
    /// The tokens of `serve --listen` cannot be used (the entry is named).
    InvalidTokens = "invalid_tokens",
    /// The `--oauth` file of `serve --listen` cannot be used (the key is named).
    InvalidOauth = "invalid_oauth",
    /// The TLS certificate or key of `serve --listen` cannot be read or do not go together.
    InvalidTls = "invalid_tls",
    /// The audit log of `serve --listen` cannot be opened for appending.
    AuditLogFailed = "audit_log_failed",
}
