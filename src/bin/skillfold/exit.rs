//! Exit statuses, the same for every command (documented in the README).

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
