//! The codes of preparation: fetching the pinned commit, walking its tree, taking and verifying
//! the approved bundles, the corpus on disk and its guard. Declared with
//! [`crate::support::error_code::error_codes!`]; documented in `docs/error-codes.md`.

crate::support::error_code::error_codes! {
    /// Why a source could not be prepared (or a commit pinned).
    pub enum PrepareCode: "preparation", default Invalid;
    /// The server could not be reached or the transfer failed.
    FetchFailed = "fetch_failed" => Retryable,
    /// The server does not have the pinned commit (it may not be pushed yet).
    CommitNotFound = "commit_not_found" => Retryable,
    /// The pinned id names a tree, blob or tag, not a commit.
    NotACommit = "not_a_commit",
    /// The server refused access, or no credentials were available.
    FetchUnauthenticated = "fetch_unauthenticated" => Retryable,
    /// The URL or the pin cannot be used at all.
    FetchInvalid = "fetch_invalid",
    /// A plain `http://` server asks for credentials, which are never sent in clear text.
    FetchCleartextCredentials = "fetch_cleartext_credentials",
    /// A fetch did not finish within its overall deadline (`--fetch-timeout`).
    FetchDeadline = "fetch_deadline" => Retryable,
    /// The server's answer left out objects of the commit: requested blobs, or a tree.
    FetchIncomplete = "fetch_incomplete" => Retryable,
    /// A signal stopped the preparation.
    Interrupted = "interrupted" => Retryable,
    /// The commit's tree holds a symbolic link.
    SymlinkInTree = "symlink_in_tree",
    /// An object of the commit is missing or unreadable.
    ObjectUnreadable = "object_unreadable",
    /// The commit's tree has more entries or tree bytes than allowed (a "tree bomb").
    TreeTooLarge = "tree_too_large",
    /// A path in the commit's tree is longer than allowed.
    TreePathTooLong = "tree_path_too_long",
    /// A tree entry is malformed: an empty, `.` or `..` name, a name holding `/` or NUL, a
    /// duplicate or unsorted entry.
    TreeMalformed = "tree_malformed",
    /// An object of the commit is larger than any skill needs; refused from its header.
    ObjectTooLarge = "object_too_large",
    /// A pack of the fetch runs past the bytes its request may need, or one of its objects past
    /// the size it declares; refused as the bytes arrive.
    PackTooLarge = "pack_too_large",
    /// An approved name has no folder in the commit.
    BundleMissing = "bundle_missing",
    /// The source requires a signed commit and the pinned commit carries no signature.
    SignatureMissing = "signature_missing",
    /// The pinned commit's signature does not verify over the commit.
    SignatureInvalid = "signature_invalid",
    /// The commit is signed by a key the source does not allow (or outside its validity window,
    /// judged by the committer time).
    SignerNotAllowed = "signer_not_allowed",
    /// The commit is signed in a format skillfold does not verify (X.509).
    SignatureUnsupported = "signature_unsupported",
    /// Approved bundles break rules or do not match their pins.
    VerificationFailed = "verification_failed",
    /// `pin --all` found no bundle under the root that can be pinned.
    NoBundles = "no_bundles",
    /// `pin --all` found more folders with a `SKILL.md` under the root than it takes.
    TooManyBundles = "too_many_bundles",
    /// Another preparer holds the corpus.
    GuardHeld = "guard_held" => Retryable,
    /// The guard file could not be opened or locked.
    GuardIo = "guard_io" => Retryable,
    /// A file-system operation on the corpus failed.
    CorpusIo = "corpus_io" => Retryable,
    /// The directory holds something skillfold did not put there.
    CorpusNotManaged = "corpus_not_managed",
    /// A manifest is unreadable or of an unknown format.
    CorpusBadManifest = "corpus_bad_manifest" => Retryable,
    /// `prepare --rollback` found no previous generation.
    CorpusNoPrevious = "corpus_no_previous",
    /// The bytes written into staging do not verify when read back (a disk or file-system
    /// problem: they verified when taken); nothing was published.
    CorpusStagingUnverified = "corpus_staging_unverified" => Retryable,
    /// `prepare --rollback`: the previous generation does not verify against its own manifest
    /// (for any reason, an I/O error included), so it cannot be rolled back to.
    CorpusPreviousUnverified = "corpus_previous_unverified",
    /// This build has no Git fetcher.
    GitDisabled = "git_disabled",
    /// A temporary directory could not be created (`skillfold pin`).
    IoError = "io_error" => Retryable,
    /// `pin --scan`: the scanner did not give a verdict (it could not start, exited with a
    /// status other than 0 or 1, died by a signal, ran past its timeout or its output bound, or
    /// changed its copy of the bundle). The scanner failed, not the bundle: nothing is recorded.
    ScanFailed = "scan_failed" => Retryable,
}

use crate::trust::commit::SignatureError;

/// A commit signature's refusal, judged by [`crate::trust::commit`], is a preparation failure:
/// its code is declared here, with the area's other codes.
impl SignatureError {
    /// Stable error code.
    pub fn code(&self) -> PrepareCode {
        match self {
            SignatureError::Missing { .. } => PrepareCode::SignatureMissing,
            SignatureError::Invalid { .. } => PrepareCode::SignatureInvalid,
            SignatureError::NotAllowed { .. } => PrepareCode::SignerNotAllowed,
            SignatureError::Unsupported { .. } => PrepareCode::SignatureUnsupported,
        }
    }
}

crate::support::error_code::coded_by_code!(SignatureError);
