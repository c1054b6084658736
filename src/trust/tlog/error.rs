//! Why a transparency-log entry cannot be read ([`LogEntryError`]: a bundle's `tlogEntries`
//! element or a cosign ≤ v2 Rekor bundle annotation), and why its inclusion proof does not lead
//! to a root hash ([`ProofError`]). Each message names the field or the rule.

/// Why a log entry (of a bundle, or a cosign ≤ v2 Rekor bundle annotation) cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogEntryError {
    /// A field is missing.
    #[error("the log entry has no {what}")]
    NoField {
        /// The field, as said.
        what: &'static str,
    },
    /// A field is over its bound.
    #[error("the log entry's {what} is over the bound of {max} bytes")]
    OverBound {
        /// The field, as said.
        what: &'static str,
        /// Its bound.
        max: usize,
    },
    /// A field is not standard base64.
    #[error("the log entry's {what} is not base64")]
    NotBase64 {
        /// The field, as said.
        what: &'static str,
    },
    /// An integer field is negative or not an integer.
    #[error("the log entry's {what} is not a non-negative integer")]
    NotNonNegative {
        /// The field, as said.
        what: &'static str,
    },
    /// No positive `integratedTime`.
    #[error("the log entry has no positive `integratedTime`")]
    NoIntegratedTime,
    /// The body is not JSON.
    #[error("the log entry's body is not JSON")]
    BodyNotJson,
    /// `kindVersion` names another kind or version than the body's.
    #[error("the log entry's `kindVersion` is not its body's kind and version")]
    KindVersion,
    /// The annotation is over its bound (twice the body's).
    #[error("the Rekor bundle annotation is over the bound of {max} bytes")]
    AnnotationOverBound {
        /// The bound.
        max: usize,
    },
    /// The annotation is not JSON as read.
    #[error("the Rekor bundle annotation: {0}")]
    AnnotationNotJson(crate::trust::strict_json::StrictJsonError),
    /// The annotation has no `Payload`.
    #[error("the Rekor bundle annotation has no `Payload`")]
    NoPayload,
    /// The annotation has no `logID`.
    #[error("the Rekor bundle annotation has no `logID`")]
    NoLogId,
    /// The annotation's `logID` is not a lowercase SHA-256 in hex.
    #[error("the Rekor bundle annotation's `logID` is not 64 lowercase hex digits")]
    LogIdHex,
    /// The annotation has no positive `integratedTime`.
    #[error("the Rekor bundle annotation has no positive `integratedTime`")]
    AnnotationNoIntegratedTime,
    /// The inclusion proof's `hashes` is not a list.
    #[error("the inclusion proof's `hashes` is not a list")]
    HashesNotList,
    /// Over the bound of hashes an audit path holds.
    #[error("the inclusion proof holds {count} hashes, over the bound of {max}")]
    TooManyHashes {
        /// How many.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// No checkpoint.
    #[error("the inclusion proof has no checkpoint")]
    NoCheckpoint,
    /// The checkpoint is over its bound.
    #[error("the inclusion proof's checkpoint is over the bound of {max} bytes")]
    CheckpointOverBound {
        /// The bound.
        max: usize,
    },
}

/// Why an inclusion proof does not lead from its entry to a root hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The entry's index is not inside the tree.
    #[error("the inclusion proof's index {index} is not inside its tree of {size}")]
    IndexOutside {
        /// The entry's index.
        index: u64,
        /// The tree's size.
        size: u64,
    },
    /// A hash that is not 32 bytes.
    #[error("the inclusion proof holds a hash that is not 32 bytes")]
    HashLength,
    /// Not the number of hashes the index and the size need.
    #[error(
        "the inclusion proof holds {count} hashes, where index {index} in a tree of {size} needs {needs}"
    )]
    HashCount {
        /// How many it holds.
        count: usize,
        /// The entry's index.
        index: u64,
        /// The tree's size.
        size: u64,
        /// How many it needs.
        needs: usize,
    },
}
