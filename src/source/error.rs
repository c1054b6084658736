//! [`SourceError`]: why one source (a Git commit or branch, an OCI image or tag) could not be
//! used by `outdated` or `update` — a stable code and the message — as both commands report it,
//! per source, without ending the run.

use serde::Serialize;

use crate::support::error_code::{Coded, ErrorCode};

/// Why a candidate (or anything else about one source) could not be used. Whether trying again
/// later may succeed is its code's class ([`Coded`]); the report's `retryable` field is written
/// from the code and nowhere else.
#[derive(Debug, Clone)]
pub struct SourceError {
    /// Stable code.
    pub code: ErrorCode,
    /// What went wrong.
    pub message: String,
}

impl SourceError {
    /// An error with `code` and `error`'s text.
    pub fn of(code: impl Into<ErrorCode>, error: &dyn std::fmt::Display) -> Self {
        SourceError {
            code: code.into(),
            message: error.to_string(),
        }
    }

    /// An error with `error`'s code and text.
    pub fn from_error<E: Coded + std::fmt::Display>(error: &E) -> Self {
        SourceError::of(error.error_code(), error)
    }
}

impl Coded for SourceError {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}

impl Serialize for SourceError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The report's shape: `{code, message, retryable}`.
        #[derive(Serialize)]
        struct SourceErrorJson<'a> {
            code: ErrorCode,
            message: &'a str,
            retryable: bool,
        }
        SourceErrorJson {
            code: self.code,
            message: &self.message,
            retryable: self.is_retryable(),
        }
        .serialize(serializer)
    }
}
