//! Exit statuses, the same for every command (documented in the README and
//! `docs/error-codes.md`). This is the one place that turns what a command got into its status,
//! and it looks only at codes: a failure exits as its code's class ([`Coded`], declared once in
//! its area's registry), a command with several failures as the worst of them ([`Exit::worst`]).
//! Commands never compare code strings, set no retryable flag and override no class; what fails
//! without an error of a library area (a lost stdout, a usage error) has a code of the command
//! line's own ([`crate::codes::CommandCode`]).

use crate::support::error_code::Coded;

/// How a command ended: the class of its worst failure, whose discriminant is the exit status.
/// One type with the codes' own class, so no status can be made that no code has.
pub use crate::support::error_code::ExitClass as Exit;

/// The exit status of a command that fails with `code` (any area's, or an [`ErrorCode`]):
/// [`Exit::of`] for a code in hand.
pub fn of(code: impl Coded) -> Exit {
    Exit::of(&code)
}

#[cfg(test)]
mod tests {
    use super::{Exit, of};
    use crate::codes::CommandCode;
    use crate::format::code::ReadCode;
    use crate::runtime::tools::ToolCode;
    use crate::source::code::PrepareCode;
    use crate::support::error_code::ErrorCode;

    #[test]
    fn a_code_decides_its_exit_status() {
        assert_eq!(of(ReadCode::IoError), Exit::Retryable);
        assert_eq!(of(ReadCode::NotFound), Exit::Invalid);
        assert_eq!(of(PrepareCode::GuardHeld), Exit::Retryable);
        assert_eq!(of(PrepareCode::SymlinkInTree), Exit::Invalid);
        assert_eq!(of(ToolCode::Timeout), Exit::Invalid);
        assert_eq!(of(CommandCode::OutputFailed), Exit::Retryable);
        assert_eq!(of(CommandCode::InvalidUsage), Exit::Invalid);
    }

    #[test]
    fn several_failures_exit_as_the_worst_and_none_as_ok() {
        let none: [ErrorCode; 0] = [];
        assert_eq!(Exit::worst(none), Exit::Ok);
        let busy = ErrorCode::from(PrepareCode::GuardHeld);
        let broken = ErrorCode::from(PrepareCode::SymlinkInTree);
        assert_eq!(Exit::worst([busy]), Exit::Retryable);
        assert_eq!(Exit::worst([busy, broken, busy]), Exit::Invalid);
        assert_eq!(Exit::worst([broken, busy]), Exit::Invalid);
    }
}
