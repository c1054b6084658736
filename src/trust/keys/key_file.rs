//! Reading a key file a trust policy names (an allowed-signers file, an OpenPGP keyring): through
//! the capped input reader, refused over [`MAX_SIGNERS_BYTES`] without reading more, and the error
//! that names the file and, when one is at fault, its line.

use std::path::{Path, PathBuf};

/// The most bytes an allowed-signers file may hold.
pub const MAX_SIGNERS_BYTES: u64 = 1024 * 1024;

/// Why an allowed-signers file (or an OpenPGP keyring) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {refusal}", crate::support::escape::path(.path), .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SignersError {
    /// The file.
    pub path: PathBuf,
    /// The line at fault, if one is.
    pub line: Option<usize>,
    /// What is wrong.
    pub refusal: SignersRefusal,
}

/// What is wrong with an allowed-signers file (or an OpenPGP keyring), or the line at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignersRefusal {
    /// The file cannot be read (the reader's words).
    #[error("{reason}")]
    Unreadable {
        /// Why.
        reason: String,
    },
    /// Over [`MAX_SIGNERS_BYTES`].
    #[error("larger than {MAX_SIGNERS_BYTES} bytes")]
    TooLarge,
    /// Not UTF-8 (the line is the first that is not).
    #[error("not UTF-8 text")]
    NotUtf8,
    /// A NUL byte.
    #[error("a NUL byte (`ssh-keygen` would read the line only up to it)")]
    Nul,
    /// No line lists a signer.
    #[error("no signer is listed")]
    NoSigner,
    /// A line that does not start with principals.
    #[error("expected principals first")]
    Principals,
    /// A line without a key after its principals and options.
    #[error("expected a key type and its base64 data after the principals")]
    NoKey,
    /// The key cannot be read (ssh-key's words).
    #[error("the public key cannot be read: {reason}")]
    Key {
        /// Why.
        reason: String,
    },
    /// A backslash in the options.
    #[error("a backslash in the options (escapes are not supported)")]
    Backslash,
    /// An option given twice.
    #[error(
        "the option `{name}` is given twice (`ssh-keygen` refuses the line: multiple \"{name}\" clauses)"
    )]
    OptionTwice {
        /// The option's name, lowercased.
        name: String,
    },
    /// An option that is not known, or known without (or with) a value.
    #[error("unknown or malformed option `{option}`")]
    UnknownOption {
        /// The option (escaped).
        option: String,
    },
    /// `valid-before` not after `valid-after`.
    #[error("`valid-before` is not after `valid-after` (`ssh-keygen` refuses the line)")]
    ValidityOrder,
    /// A quote left open in the options.
    #[error("an option's quote is not closed")]
    QuoteOpen,
    /// An empty option between commas.
    #[error("an empty option")]
    EmptyOption,
    /// An option value without its double quotes.
    #[error("option values must be double-quoted")]
    Unquoted,
    /// A time that is not `YYYYMMDD[HHMM[SS]][Z]`, or not a valid date and time.
    #[error("`{text}` is not a time (YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally with Z)")]
    NotTime {
        /// The time as written (escaped).
        text: String,
    },
    /// A time at or before the Unix epoch.
    #[error("`{text}` is not after the Unix epoch")]
    BeforeEpoch {
        /// The time as written (escaped).
        text: String,
    },
    /// Not armored OpenPGP public keys (the pgp crate's words).
    #[error("not armored OpenPGP public keys: {reason}")]
    NotArmored {
        /// Why.
        reason: String,
    },
    /// An OpenPGP key that cannot be read.
    #[error("key {index} cannot be read: {reason}")]
    OpenPgpKey {
        /// Its position in the file, from 1.
        index: usize,
        /// Why.
        reason: String,
    },
    /// An OpenPGP key whose self-signatures do not verify.
    #[error("key {index} ({fingerprint}): its self-signatures do not verify: {reason}")]
    SelfSignatures {
        /// Its position in the file, from 1.
        index: usize,
        /// Its fingerprint (uppercase hex).
        fingerprint: String,
        /// Why.
        reason: String,
    },
    /// No OpenPGP public key in the file.
    #[error("no public key is listed")]
    NoPublicKey,
}

/// The bytes of the key file at `path`, refused over [`MAX_SIGNERS_BYTES`] without reading more.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, SignersError> {
    let error = |refusal: SignersRefusal| SignersError {
        path: path.to_owned(),
        line: None,
        refusal,
    };
    crate::format::untrusted_fs::read_input(path, MAX_SIGNERS_BYTES)
        .map_err(|e| error(SignersRefusal::Unreadable { reason: e.reason }))?
        .map_err(|_| error(SignersRefusal::TooLarge))
}
