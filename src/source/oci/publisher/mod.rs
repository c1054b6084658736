//! Who published an image: the signature material a registry holds for a pinned manifest digest
//! ([`material`], fetched by [`fetch`]: cosign ≤ v2's `sha256-<hex>.sig` manifest and cosign v3's
//! Sigstore bundles, as OCI 1.1 referrers or under the `sha256-<hex>` tag), read ([`cosign_v2`],
//! [`bundle`], [`simple_signing`], [`dsse`]) and judged against a source's
//! [`PublisherPolicy`] ([`verify`]): a key signature ([`crate::descriptor::publishers::key`]),
//! or a Fulcio certificate chaining to the trusted root at the signing time ([`certificate`])
//! with a transparency-log entry its log keys vouch for ([`tlog`]), offline. Any one signature
//! that binds the pinned digest and verifies suffices, as cosign decides.

pub mod bundle;
pub mod certificate;
#[cfg(test)]
mod conformance_tests;
pub mod cosign_v2;
pub mod dsse;
#[cfg(feature = "oci")]
pub mod fetch;
pub mod keyless;
pub mod material;
pub mod pem;
#[cfg(test)]
mod sigstore_python_tests;
pub mod simple_signing;
pub mod strict_json;
#[cfg(test)]
mod test_support;
pub mod tlog;

use serde::{Deserialize, Serialize};

use super::code::DistributionCode;
use crate::descriptor::plan::ImageReference;
use crate::descriptor::publishers::PublisherPolicy;
use material::SignatureMaterial;

/// Who signed a verified image: a configured key, or a configured Sigstore identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Signer {
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

impl std::fmt::Display for Signer {
    /// `the key sha256:…`, or `SUBJECT (issuer ISSUER)`, escaped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::support::escape;
        match self {
            Signer::Key { fingerprint } => {
                write!(f, "the key `{}`", escape::text(fingerprint))
            }
            Signer::Identity { issuer, subject } => write!(
                f,
                "`{}` (issuer `{}`)",
                escape::text(subject),
                escape::text(issuer)
            ),
        }
    }
}

/// Why one signature did not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
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
        }
    }
}

/// One signature that did not count, where it was found and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejected {
    /// Where the registry holds it (e.g. `sha256-….sig layer 0`, `referrer sha256:…`).
    pub found_at: String,
    /// Why.
    pub rejection: Rejection,
    /// What exactly (escaped; never raw input).
    pub detail: String,
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
    pub signer: Signer,
    /// The one signature that verified, alone.
    pub material: SignatureMaterial,
}

/// Why an image's publisher was refused: the code, the message, and each signature's rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `image_unsigned` (no signature) or `image_signature_refused`.
    pub code: DistributionCode,
    /// What happened.
    pub message: String,
    /// Each signature that did not count, and why.
    pub details: Vec<String>,
}

impl Refusal {
    /// The refusal of `image` (as messages name it) when no signature in `rejected` (none:
    /// unsigned) satisfies the policy.
    pub fn of(image: &str, rejected: &[Rejected]) -> Refusal {
        if rejected.is_empty() {
            return Refusal {
                code: DistributionCode::ImageUnsigned,
                message: format!(
                    "the source requires a publisher's signature and the registry holds none for {image} (no cosign signature tag, no Sigstore bundle referrer)"
                ),
                details: Vec::new(),
            };
        }
        Refusal {
            code: DistributionCode::ImageSignatureRefused,
            message: format!(
                "none of the {} signature(s) of {image} verifies under the source's `verify`",
                rejected.len()
            ),
            details: rejected.iter().map(Rejected::to_string).collect(),
        }
    }
}

/// The signature material the registry holds for `reference`, within `deadline`, with the
/// registry's credentials scoped as for a pull ([`fetch::fetch`]); a build without the registry
/// client refuses (`oci_disabled`).
pub fn fetch_material(
    reference: &ImageReference,
    plain_http: bool,
    deadline: std::time::Duration,
) -> Result<SignatureMaterial, (DistributionCode, String)> {
    #[cfg(feature = "oci")]
    {
        fetch::fetch(&fetch::MaterialRequest {
            reference,
            plain_http,
            deadline,
        })
        .map_err(|e| (e.code, e.message))
    }
    #[cfg(not(feature = "oci"))]
    {
        let _ = (reference, plain_http, deadline);
        Err((
            DistributionCode::OciDisabled,
            "this build of skillfold has no registry client (built without the `oci` feature)"
                .to_owned(),
        ))
    }
}

/// Judges `material` for the image pinned at `pinned` (`sha256:<hex>`) against `policy`, at no
/// network: the first signature (in `material`'s order) that binds `pinned` and verifies under
/// a configured key or identity decides.
pub fn verify(material: &SignatureMaterial, pinned: &str, policy: &PublisherPolicy) -> Verdict {
    let mut rejected = Vec::new();
    for signature in &material.cosign {
        match cosign_v2::judge(signature, pinned, policy) {
            Ok(signer) => {
                return Ok(Verified {
                    signer,
                    material: SignatureMaterial {
                        cosign: vec![signature.clone()],
                        bundles: Vec::new(),
                    },
                });
            }
            Err((rejection, detail)) => rejected.push(Rejected {
                found_at: signature.found_at.clone(),
                rejection,
                detail,
            }),
        }
    }
    for bundle in &material.bundles {
        match bundle::judge(bundle, pinned, policy) {
            Ok(signer) => {
                return Ok(Verified {
                    signer,
                    material: SignatureMaterial {
                        cosign: Vec::new(),
                        bundles: vec![bundle.clone()],
                    },
                });
            }
            Err((rejection, detail)) => rejected.push(Rejected {
                found_at: bundle.found_at.clone(),
                rejection,
                detail,
            }),
        }
    }
    Err(rejected)
}
