//! Stable error codes: one enum per area, each code with the exit status it implies.
//!
//! Every refusal skillfold reports carries a `snake_case` code that never changes once released;
//! scripts, the tools' JSON errors and the docs (`docs/error-codes.md`) rely on it. Each area
//! declares its codes once, with [`error_codes!`], as an enum with:
//!
//! - `ALL`, every code in declaration order (for docs and tests);
//! - `as_str()`, the stable spelling, also used by `Display` and `Serialize`;
//! - `exit()`, the [`ExitClass`] a command ends with when this code is why it failed.
//!
//! The exit status is decided here and nowhere else: a command asks the code (through [`Code`])
//! and never compares code strings. Most codes of an area share its default class; a code that
//! differs names its class after `=>`.

/// How a command ends because of a code: the contract 0/1/2 of every command, and the status
/// the binary exits with (`as u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum ExitClass {
    /// Exit 0: reported, but nothing failed (warnings).
    Ok = 0,
    /// Exit 1: transient; running again may succeed (an I/O error, a held guard, a fetch).
    Retryable = 1,
    /// Exit 2: invalid input — a bundle, a pin or a configuration that breaks a rule.
    Invalid = 2,
}

impl ExitClass {
    /// The process exit status.
    pub fn status(self) -> u8 {
        self as u8
    }

    /// The class of `failure`: its code's.
    pub fn of<C: Coded + ?Sized>(failure: &C) -> ExitClass {
        failure.exit_class()
    }

    /// The worst class of `codes`, `Ok` when there are none.
    pub fn worst(codes: impl IntoIterator<Item = ErrorCode>) -> ExitClass {
        codes
            .into_iter()
            .fold(ExitClass::Ok, |exit, code| exit.worse(code.exit()))
    }

    /// The worse of two classes. Invalid input outranks a transient failure: running again
    /// would not fix it.
    pub fn worse(self, other: ExitClass) -> ExitClass {
        self.max(other)
    }
}

/// What every area's code enum offers, so generic code (the binary's exit status, the docs test)
/// can handle any of them.
pub trait Code: Copy + std::fmt::Debug + std::fmt::Display + 'static {
    /// The area, as the docs name it (`bundle`, `descriptor`, `preparation`, …).
    const AREA: &'static str;
    /// Every code of the area, in declaration order.
    fn all() -> &'static [Self];
    /// The stable `snake_case` spelling.
    fn as_str(self) -> &'static str;
    /// The exit class a failure with this code implies.
    fn exit(self) -> ExitClass;
    /// This code as an [`ErrorCode`] (one pointer to its area, spelling and class).
    fn error_code(self) -> ErrorCode;
}

/// What [`ErrorCode`] points to: a code's area, spelling and exit class, one static per code
/// (made by [`error_codes!`]), so an `ErrorCode` stays one pointer wide.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct CodeMeta {
    /// [`Code::AREA`].
    pub area: &'static str,
    /// The spelling.
    pub code: &'static str,
    /// The exit class.
    pub exit: ExitClass,
}

/// A code of any area, for what can fail for reasons of several areas (a bundle that does not
/// load, a preparation, a tool call's wrapped errors). Made only from an area's enum, so it
/// keeps that code's spelling, area and exit class; it serialises as the spelling.
///
/// ```
/// # let (skills, ..) = include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/doctest/example.rs"));
/// let built = skillfold::Runtime::builder()
///     .local("commit-message", "1.0.0", skills.join("commit-message"), &"0".repeat(64))
///     .build()
///     .unwrap();
/// let code: skillfold::ErrorCode = built.refused[0].code;
/// assert_eq!(code.to_string(), "digest_mismatch");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(&'static CodeMeta);

impl ErrorCode {
    /// The code whose area, spelling and class `meta` holds (what [`error_codes!`] declares).
    pub(crate) const fn from_meta(meta: &'static CodeMeta) -> ErrorCode {
        ErrorCode(meta)
    }

    /// The stable `snake_case` spelling.
    pub fn as_str(self) -> &'static str {
        self.0.code
    }

    /// The area whose enum declares it.
    pub fn area(self) -> &'static str {
        self.0.area
    }

    /// The exit class a failure with this code implies.
    pub fn exit(self) -> ExitClass {
        self.0.exit
    }
}

impl<C: Code> From<C> for ErrorCode {
    fn from(code: C) -> ErrorCode {
        code.error_code()
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// What every error (and every report of failures) of skillfold implements: its stable code,
/// from which its exit class — and so a command's exit status — follows. Nothing else decides
/// whether a failure is retryable: no flag, no override (a situation that must exit otherwise
/// gets a code of its own).
///
/// The errors keep their inherent `code()` (the area's typed enum); this trait gives it as an
/// [`ErrorCode`] to the code that handles any of them (the binary's exit status).
pub trait Coded {
    /// The stable code of this failure.
    fn error_code(&self) -> ErrorCode;

    /// The exit class its code implies.
    fn exit_class(&self) -> ExitClass {
        self.error_code().exit()
    }

    /// Whether running again later may succeed: its code's class is [`ExitClass::Retryable`].
    fn is_retryable(&self) -> bool {
        self.exit_class() == ExitClass::Retryable
    }
}

impl Coded for ErrorCode {
    fn error_code(&self) -> ErrorCode {
        *self
    }
}

impl<C: Code> Coded for C {
    fn error_code(&self) -> ErrorCode {
        ErrorCode::from(*self)
    }
}

/// Implements [`Coded`] for error types whose inherent `code()` returns an area's enum or an
/// [`ErrorCode`].
macro_rules! coded_by_code {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::support::error_code::Coded for $ty {
            fn error_code(&self) -> $crate::support::error_code::ErrorCode {
                <$ty>::code(self).into()
            }
        }
    )*};
}

/// Every code of area `C`, as [`ErrorCode`]s (for [`crate::codes::registry`]).
pub fn codes_of<C: Code>() -> impl Iterator<Item = ErrorCode> {
    C::all().iter().copied().map(ErrorCode::from)
}

/// Declares an area's codes. See the module doc.
///
/// ```text
/// error_codes! {
///     /// Failures of preparation.
///     pub enum PrepareCode: "preparation", default Invalid;
///     /// The fetch failed.
///     FetchFailed = "fetch_failed" => Retryable,
///     /// A symlink in the tree.
///     SymlinkInTree = "symlink_in_tree",
/// }
/// ```
macro_rules! error_codes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $area:literal, default $default:ident;
        $( $(#[$doc:meta])* $variant:ident = $code:literal $(=> $exit:ident)?, )*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        $vis enum $name {
            $( $(#[$doc])* $variant, )*
        }

        impl $name {
            /// Every code, in declaration order (for documentation and tests).
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable `snake_case` spelling of this code.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $code, )*
                }
            }

            /// The exit class a failure with this code implies.
            pub fn exit(self) -> $crate::support::error_code::ExitClass {
                match self {
                    $( $name::$variant =>
                        $crate::support::error_code::error_codes!(@exit $default $($exit)?), )*
                }
            }

            /// Area, spelling and class of every code, in declaration (discriminant) order.
            const META: &'static [$crate::support::error_code::CodeMeta] = &[$(
                $crate::support::error_code::CodeMeta {
                    area: $area,
                    code: $code,
                    exit: $crate::support::error_code::error_codes!(@exit $default $($exit)?),
                },
            )*];

            /// The code spelled `s`, if there is one.
            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|c| c.as_str() == s)
            }
        }

        impl $crate::support::error_code::Code for $name {
            const AREA: &'static str = $area;
            fn all() -> &'static [Self] {
                $name::ALL
            }
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
            fn exit(self) -> $crate::support::error_code::ExitClass {
                $name::exit(self)
            }
            fn error_code(self) -> $crate::support::error_code::ErrorCode {
                $crate::support::error_code::ErrorCode::from_meta(&$name::META[self as usize])
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl ::std::cmp::PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl ::std::cmp::PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
    (@exit $default:ident) => { $crate::support::error_code::ExitClass::$default };
    (@exit $default:ident $exit:ident) => { $crate::support::error_code::ExitClass::$exit };
}
// Crate-private: every area declares its codes with them, naming them by this module's path
// (`crate::support::error_code::error_codes!`), not through the crate root; no host does.
pub(crate) use {coded_by_code, error_codes};

#[cfg(test)]
mod tests {
    use super::{Code, ExitClass};

    crate::support::error_code::error_codes! {
        /// Codes for the test.
        enum Demo: "demo", default Invalid;
        /// Retry.
        Busy = "busy" => Retryable,
        /// Refuse.
        Broken = "broken",
    }

    #[test]
    fn codes_carry_spelling_exit_and_area() {
        assert_eq!(Demo::ALL, &[Demo::Busy, Demo::Broken]);
        assert_eq!(Demo::Busy.exit(), ExitClass::Retryable);
        assert_eq!(Demo::Broken.exit(), ExitClass::Invalid);
        assert_eq!(Demo::Broken.to_string(), "broken");
        assert_eq!(serde_json::to_string(&Demo::Busy).unwrap(), "\"busy\"");
        assert_eq!(Demo::parse("broken"), Some(Demo::Broken));
        assert_eq!(Demo::parse("nope"), None);
        assert_eq!(<Demo as Code>::AREA, "demo");
        assert_eq!(ExitClass::Invalid.status(), 2);
        assert!(Demo::Busy == "busy" && Demo::Busy != "broken");
    }

    #[test]
    fn any_area_code_keeps_spelling_area_and_exit() {
        let code = super::ErrorCode::from(Demo::Busy);
        assert_eq!(code.as_str(), "busy");
        assert_eq!(code.area(), "demo");
        assert_eq!(code.exit(), ExitClass::Retryable);
        assert_eq!(code, "busy");
        assert_eq!(serde_json::to_string(&code).unwrap(), "\"busy\"");
        assert_eq!(super::codes_of::<Demo>().count(), 2);
        assert_eq!(
            super::ErrorCode::from(Demo::Broken).exit(),
            ExitClass::Invalid
        );
        assert_eq!(
            std::mem::size_of::<super::ErrorCode>(),
            std::mem::size_of::<usize>()
        );
    }
}
