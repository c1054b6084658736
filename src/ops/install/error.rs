//! The one error of `install` and `verify --installed`: a code (an install code, or the code of
//! the preparation or load that failed), a message with untrusted names escaped, and the details.

use crate::support::error_code::{Coded, ErrorCode};

use super::code::InstallCode;

/// Why `install` or `verify --installed` stopped. Nothing in the target folder was changed by a
/// refusal found while planning; an I/O failure while applying leaves every bundle old or new.
#[derive(Debug, Clone)]
pub struct InstallError {
    /// Stable code (an install code, or the code of the preparation or load that failed).
    pub code: ErrorCode,
    /// What went wrong, untrusted names escaped.
    pub message: String,
    /// Every problem, one per line, when there were several.
    pub details: Vec<String>,
}

impl InstallError {
    /// A failure with `code`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> InstallError {
        InstallError {
            code: code.into(),
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// An I/O failure on `what` (already escaped): a read-only file system or a refused
    /// permission is `install_not_writable` (exit 2: it will not succeed until someone changes
    /// the folder), anything else — a full disk included — `install_io` (exit 1).
    pub fn io(what: &str, e: &std::io::Error) -> InstallError {
        use rustix::io::Errno;
        let errno = e.raw_os_error().map(Errno::from_raw_os_error);
        let code = match errno {
            Some(Errno::ROFS | Errno::ACCESS | Errno::PERM) => InstallCode::InstallNotWritable,
            _ => InstallCode::InstallIo,
        };
        InstallError::new(code, format!("`{what}`: {e}"))
    }
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.message, self.code)
    }
}

impl std::error::Error for InstallError {}

impl Coded for InstallError {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}
