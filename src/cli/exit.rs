//! Exit statuses, the same for every command (documented in the README and
//! `docs/error-codes.md`). A failure with a code exits as [`of`] says: the code's class, declared
//! once in its area's registry (`crate::support::error_code`); commands never compare code strings.

use crate::support::error_code::{ErrorCode, ExitClass};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Everything held.
    Ok = 0,
    /// A transient failure; running again may succeed (I/O errors, a held guard).
    Retryable = 1,
    /// Invalid input: a bundle, a pin or a configuration that breaks a rule. Also usage errors.
    Invalid = 2,
}

impl Exit {
    /// `Invalid` when something was refused, else `Retryable` when something could not be
    /// done this time, else `Ok`.
    pub fn judged(refused: bool, retryable: bool) -> Exit {
        if refused {
            Exit::Invalid
        } else if retryable {
            Exit::Retryable
        } else {
            Exit::Ok
        }
    }

    /// The worse of two outcomes. Invalid input outranks a transient failure: rerunning would
    /// not fix it.
    pub fn worse(self, other: Exit) -> Exit {
        if self == Exit::Invalid || other == Exit::Invalid {
            Exit::Invalid
        } else if self == Exit::Retryable || other == Exit::Retryable {
            Exit::Retryable
        } else {
            Exit::Ok
        }
    }
}

impl From<ExitClass> for Exit {
    fn from(class: ExitClass) -> Exit {
        match class {
            ExitClass::Ok => Exit::Ok,
            ExitClass::Retryable => Exit::Retryable,
            ExitClass::Invalid => Exit::Invalid,
        }
    }
}

/// The exit status of a command that fails with `code` (any area's enum, or an [`ErrorCode`]).
pub fn of(code: impl Into<ErrorCode>) -> Exit {
    Exit::from(code.into().exit())
}

#[cfg(test)]
mod tests {
    use super::{Exit, of};
    use crate::format::code::ReadCode;
    use crate::runtime::tools::ToolCode;
    use crate::source::code::PrepareCode;

    #[test]
    fn a_code_decides_its_exit_status() {
        assert_eq!(of(ReadCode::IoError), Exit::Retryable);
        assert_eq!(of(ReadCode::NotFound), Exit::Invalid);
        assert_eq!(of(PrepareCode::GuardHeld), Exit::Retryable);
        assert_eq!(of(PrepareCode::SymlinkInTree), Exit::Invalid);
        assert_eq!(of(ToolCode::Timeout), Exit::Invalid);
    }
}
