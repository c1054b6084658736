//! What a layer that came from a registry is refused with: a [`DistributionCode`] and a message
//! naming the entry (escaped). The strict reader of layers ([`super::unpack`]), the tar header
//! grammar it reads by ([`super::tar_header`]) and the approved bundles' check
//! ([`super::approved`]) make them.

use super::code::DistributionCode;

/// Why a layer is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LayerError {
    /// The stable code.
    pub code: DistributionCode,
    /// What is wrong, naming the entry (escaped).
    pub message: String,
}

/// A [`LayerError`] of `code` saying `message`.
pub(super) fn refuse(code: DistributionCode, message: impl Into<String>) -> LayerError {
    LayerError {
        code,
        message: message.into(),
    }
}

/// A `malformed_layer` [`LayerError`] saying `message`.
pub(super) fn malformed(message: impl Into<String>) -> LayerError {
    refuse(DistributionCode::MalformedLayer, message)
}
