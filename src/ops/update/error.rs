//! Why `update` could look at no update at all: the descriptor breaks a rule, a selector names
//! no source, or `--to` is not a target of a selected source; each with its code.

use crate::descriptor::code::DescriptorCode;
use crate::ops::check::CheckError;
use crate::support::error_code::ErrorCode;
use crate::support::escape;

/// Why no update could be looked at.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateError {
    /// The descriptor cannot be read or breaks a rule.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// A selector matches no Git or OCI source.
    #[error("no Git or OCI source of the descriptor is `{}` (name a source by its location such as `skills[0].git`, its URL, or a bundle it approves)", escape::text(.0))]
    UnknownSource(String),
    /// `--to` is not a target of a selected source.
    #[error("{location}: {message}")]
    InvalidTarget {
        /// The source.
        location: String,
        /// Why (escaped).
        message: String,
    },
    /// A named OCI source has no `track` and no `--to` names a target.
    #[error(
        "{0}: the OCI source has no `track:` tag and no `--to` names an image: add `track: TAG` to it, or give `--to sha256:<digest>` or `--to TAG`"
    )]
    NotTracked(String),
}

impl UpdateError {
    /// Every problem as one line, with its code.
    pub fn lines(&self) -> Vec<String> {
        use crate::support::error_code::Coded as _;
        match self {
            UpdateError::Check(e) => e.lines(),
            other => vec![format!("{other} [{}]", other.error_code())],
        }
    }
}

impl crate::support::error_code::Coded for UpdateError {
    fn error_code(&self) -> ErrorCode {
        match self {
            UpdateError::Check(e) => e.error_code(),
            UpdateError::UnknownSource(_) => DescriptorCode::UnknownSource.into(),
            UpdateError::InvalidTarget { .. } => DescriptorCode::InvalidTarget.into(),
            UpdateError::NotTracked(_) => DescriptorCode::NotTracked.into(),
        }
    }
}
