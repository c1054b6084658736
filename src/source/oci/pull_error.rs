//! What a pull (or a tag's resolution) fails with: a [`DistributionCode`] and a message that is
//! escaped and never holds a credential. The registry session ([`super::session`]) and the pull
//! ([`super::pull`]) both make them.

use super::code::DistributionCode;

/// Why a pull failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct PullError {
    /// The stable code.
    pub code: DistributionCode,
    /// What happened (escaped; never credentials).
    pub message: String,
}

/// A [`PullError`] of `code` saying `message`.
pub(super) fn fail(code: DistributionCode, message: impl Into<String>) -> PullError {
    PullError {
        code,
        message: message.into(),
    }
}
