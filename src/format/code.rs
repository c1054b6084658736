//! The codes of the two areas `format` owns besides the bundle rules ([`ProblemCode`]):
//! reading a bundle directory ([`ReadCode`]) and checking a bundle against its pin
//! ([`PinCode`]). Declared with [`crate::support::error_code::error_codes!`];
//! documented in `docs/error-codes.md`.
//!
//! [`ProblemCode`]: crate::format::problem::ProblemCode

crate::support::error_code::error_codes! {
    /// Why a bundle directory could not be read, or was read and breaks the bundle rules.
    pub enum ReadCode: "bundle directory", default Invalid;
    /// The directory does not exist.
    NotFound = "not_found",
    /// The path is not a directory.
    NotADirectory = "not_a_directory",
    /// The bundle directory itself is a symbolic link (never followed).
    RootIsSymlink = "root_is_symlink",
    /// Reading failed (permissions, a disk error).
    IoError = "io_error" => Retryable,
    /// The directory was read but breaks the bundle rules; every problem is listed.
    InvalidBundle = "invalid_bundle",
}

crate::support::error_code::error_codes! {
    /// Why a bundle does not match its pin `{name, version, hash}`, or a pin's part is refused.
    pub enum PinCode: "pin", default Invalid;
    /// A digest is not 64 lowercase hexadecimal digits.
    InvalidDigest = "invalid_digest",
    /// The bundle's digest differs from the pin.
    DigestMismatch = "digest_mismatch",
    /// The frontmatter `name` differs from the pinned name.
    NameMismatch = "name_mismatch",
    /// The bundle declares a version that differs from the pinned label.
    VersionMismatch = "version_mismatch",
    /// A version label is blank.
    VersionBlank = "version_blank",
    /// A version label is longer than its bound.
    VersionTooLong = "version_too_long",
    /// A version label holds whitespace.
    VersionWhitespace = "version_whitespace",
    /// A version label holds a control character.
    VersionControlChar = "version_control_char",
    /// A version label uses range or wildcard syntax.
    VersionRange = "version_range",
    /// A rolling label (`latest`, `main`, ...).
    VersionRolling = "version_rolling",
}
