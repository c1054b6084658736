//! Why the X.509 reader refuses a certificate or one of its fields ([`X509Error`]), each
//! message naming the DER or X.509 rule broken and the field as the reader says it; the rules of
//! small INTEGERs ([`IntegerRule`]) and of times ([`TimeRule`]) apart.

/// Why a certificate (or a field of one) is refused: the DER rule or the X.509 rule it breaks,
/// with the field as said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum X509Error {
    /// An element's tag is missing.
    #[error("a DER element is cut short")]
    ElementCut,
    /// A tag of the high-number form (never in a certificate).
    #[error("a DER tag of the high-number form")]
    HighTag,
    /// A length is missing or cut.
    #[error("a DER length is cut short")]
    LengthCut,
    /// An indefinite length, or one of over 4 bytes.
    #[error("a DER length of an unsupported form (indefinite or over 4 bytes)")]
    LengthForm,
    /// A length in more bytes than it needs.
    #[error("a DER length that is not minimal")]
    LengthNotMinimal,
    /// An element longer than what holds it.
    #[error("a DER element runs past its container")]
    PastContainer,
    /// Another tag than the field's.
    #[error("{what}: expected DER tag 0x{expected:02x}, found 0x{found:02x}")]
    Tag {
        /// The field, as said.
        what: String,
        /// The tag it must have.
        expected: u8,
        /// The tag it has.
        found: u8,
    },
    /// Bytes after the field's end.
    #[error("{what}: bytes after its end")]
    Trailing {
        /// The field, as said.
        what: String,
    },
    /// Over the bound of a certificate's bytes.
    #[error("a certificate of {bytes} bytes, over the {max}-byte limit")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The bound.
        max: usize,
    },
    /// No version field.
    #[error("not an X.509 version 3 certificate (no version field)")]
    NoVersion,
    /// Another version than 3.
    #[error("not an X.509 version 3 certificate")]
    NotV3,
    /// `basicConstraints`' cA present and not TRUE.
    #[error("basicConstraints: cA is not a DER TRUE (DEFAULT FALSE is omitted)")]
    CaNotTrue,
    /// `keyUsage` is an empty BIT STRING.
    #[error("keyUsage: an empty BIT STRING")]
    KeyUsageEmpty,
    /// `keyUsage` is a malformed BIT STRING.
    #[error("keyUsage: a malformed BIT STRING")]
    KeyUsageMalformed,
    /// Over the bound of extended key usages.
    #[error("extendedKeyUsage: over {max} purposes")]
    TooManyPurposes {
        /// The bound.
        max: usize,
    },
    /// Over the bound of subject alternative names.
    #[error("subjectAltName: over {max} names")]
    TooManyNames {
        /// The bound.
        max: usize,
    },
    /// Over the bound of extensions.
    #[error("over {max} extensions")]
    TooManyExtensions {
        /// The bound.
        max: usize,
    },
    /// An extension's critical flag present and not TRUE.
    #[error("an extension's critical flag is not a DER TRUE (DEFAULT FALSE is omitted)")]
    CriticalNotTrue,
    /// One extension twice.
    #[error("the extension {oid} appears twice")]
    ExtensionTwice {
        /// The extension's OID, dotted.
        oid: String,
    },
    /// No extensions where one is to be removed.
    #[error("the certificate has no extensions")]
    NoExtensions,
    /// The extension to remove is not there exactly once.
    #[error("the extension {oid} appears {count} times, not once")]
    ExtensionCount {
        /// The extension's OID, dotted.
        oid: String,
        /// How many times it appears.
        count: usize,
    },
    /// A name that must be IA5 is not ASCII.
    #[error("{what} that is not IA5 (ASCII)")]
    NotIa5 {
        /// The name, as said.
        what: String,
    },
    /// A name that must be ASCII is not.
    #[error("{what} that is not ASCII")]
    NotAscii {
        /// The name, as said.
        what: String,
    },
    /// A small INTEGER that breaks a rule.
    #[error("{what}: {rule}")]
    Integer {
        /// The field, as said.
        what: String,
        /// The rule broken.
        rule: IntegerRule,
    },
    /// A time that breaks a rule.
    #[error("{what}: {rule}")]
    Time {
        /// The field, as said.
        what: String,
        /// The rule broken.
        rule: TimeRule,
    },
    /// A `UTF8String` that is not UTF-8.
    #[error("a UTF8String that is not UTF-8")]
    NotUtf8String,
}

/// The rule a small non-negative INTEGER breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IntegerRule {
    /// No content byte.
    #[error("an empty INTEGER")]
    Empty,
    /// The sign bit is set.
    #[error("negative")]
    Negative,
    /// Over 8 bytes of value.
    #[error("too large")]
    TooLarge,
}

/// The rule a certificate's time breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TimeRule {
    /// Not ASCII text.
    #[error("not ASCII")]
    NotAscii,
    /// Neither `YYMMDDHHMMSSZ` (UTCTime) nor `YYYYMMDDHHMMSSZ` (GeneralizedTime).
    #[error("not a UTCTime YYMMDDHHMMSSZ or GeneralizedTime YYYYMMDDHHMMSSZ")]
    Form,
    /// Not ending in `Z`.
    #[error("not in UTC (Z)")]
    NotUtc,
    /// A field that is not digits.
    #[error("not digits")]
    NotDigits,
    /// Not a valid date and time.
    #[error("not a valid date and time")]
    Invalid,
}
