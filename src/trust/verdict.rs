//! The verdict on an image's signature material: who signed ([`Publisher`], with the material that
//! shows it, [`Verified`]), or why each signature did not count ([`Rejected`], its
//! [`Rejection`]). Types only: the judging is [`crate::trust::image`]'s, the orchestration
//! [`crate::trust::image::verify`]; the source's refusal they make (its code) is
//! [`crate::source::oci::publisher::Refusal`].

use serde::{Deserialize, Serialize};

use crate::trust::image::material::{SignatureMaterial, Skipped};

/// Who signed a verified image: a configured key, or a configured Sigstore identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Publisher {
    /// A `cosign_key`, by its fingerprint (`sha256:<hex of its DER SubjectPublicKeyInfo>`).
    Key {
        /// The key's fingerprint.
        fingerprint: String,
    },
    /// A Fulcio certificate for this identity.
    Identity {
        /// The OIDC issuer.
        issuer: String,
        /// The subject (SAN).
        subject: String,
    },
}

impl std::fmt::Display for Publisher {
    /// `the key sha256:…`, or `SUBJECT (issuer ISSUER)`, escaped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::support::escape;
        match self {
            Publisher::Key { fingerprint } => {
                write!(f, "the key `{}`", escape::text(fingerprint))
            }
            Publisher::Identity { issuer, subject } => write!(
                f,
                "`{}` (issuer `{}`)",
                escape::text(subject),
                escape::text(issuer)
            ),
        }
    }
}

/// Why one signature did not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The material cannot be read (not JSON, a field missing or of the wrong kind, over a bound).
    Malformed,
    /// The signed payload names another image (its `docker-manifest-digest` or in-toto subject
    /// is not the pinned digest): a signature copied from another image.
    NotThisImage,
    /// The signature does not verify over its payload under any configured key (another key, or
    /// a tampered payload or signature), or under its certificate's key.
    BadSignature,
    /// Keyless material and no `sigstore` policy, or the reverse: nothing configured judges it.
    NotConfigured,
    /// The certificate does not chain to a Fulcio certificate authority of the trusted root.
    CertificateUntrusted,
    /// The certificate (or its authority) was not valid at the signing time.
    CertificateExpired,
    /// The certificate's issuer and subject are not a configured identity.
    IdentityNotAllowed,
    /// Keyless material without a transparency-log entry.
    LogEntryMissing,
    /// The log entry's signed entry timestamp, inclusion proof or checkpoint does not verify
    /// under a log key of the trusted root.
    LogEntryInvalid,
    /// The log entry is about another signature, key or payload.
    LogEntryMismatch,
    /// A referrer listed as a signature could not be fetched or read (its manifest or bundle
    /// gone, not what its descriptor names, malformed, over its bound): skipped, as cosign skips
    /// what it cannot read.
    Unreadable,
}

impl Rejection {
    /// The rejection's name, as reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Malformed => "malformed",
            Rejection::NotThisImage => "not_this_image",
            Rejection::BadSignature => "bad_signature",
            Rejection::NotConfigured => "not_configured",
            Rejection::CertificateUntrusted => "certificate_untrusted",
            Rejection::CertificateExpired => "certificate_expired",
            Rejection::IdentityNotAllowed => "identity_not_allowed",
            Rejection::LogEntryMissing => "log_entry_missing",
            Rejection::LogEntryInvalid => "log_entry_invalid",
            Rejection::LogEntryMismatch => "log_entry_mismatch",
            Rejection::Unreadable => "unreadable",
        }
    }
}

/// One signature that did not count, where it was found and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// Where the registry holds it (e.g. `sha256-….sig layer 0`, `referrer sha256:…`).
    pub found_at: String,
    /// Why.
    pub rejection: Rejection,
    /// What exactly (escaped; never raw input).
    pub detail: String,
}

impl From<&Skipped> for Rejected {
    /// A referrer the fetch skipped, as the verdict counts it: `unreadable`.
    fn from(skipped: &Skipped) -> Rejected {
        Rejected {
            found_at: skipped.found_at.clone(),
            rejection: Rejection::Unreadable,
            detail: skipped.detail.clone(),
        }
    }
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} [{}]",
            crate::support::escape::text(&self.found_at),
            self.detail,
            self.rejection.as_str()
        )
    }
}

/// The verdict on an image's signature material: the signer, or every rejection (none: the
/// image has no signature at all).
pub type Verdict = Result<Verified, Vec<Rejected>>;

/// A verified signature: who signed, and the material that shows it (what the corpus manifest
/// records, for `verify` to re-check offline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verified {
    /// Who signed.
    pub signer: Publisher,
    /// The one signature that verified, alone.
    pub material: SignatureMaterial,
}
