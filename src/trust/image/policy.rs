//! Who may publish an image (`verify:` of an `oci:` source): cosign public keys and Sigstore
//! identities under a pinned trusted root, read and checked with the descriptor, so a bad key or
//! root refuses the descriptor with the file and the rule (`invalid_trust_policy`).
//!
//! This module holds the policy ([`PublisherPolicy`], [`SigstoreIdentity`]); the public keys a
//! cosign signature is checked with are [`PublicKey`]s, the Sigstore trusted root's Fulcio
//! certificate authorities and transparency-log keys a [`TrustedRoot`]. The verification of
//! signature material against a policy is [`crate::trust::image::verify`]'s.

use serde::{Deserialize, Serialize};

use crate::trust::keys::public_key::PublicKey;
use crate::trust::x509::trusted_root::TrustedRoot;

/// A source's publisher policy: the keys and the identities that may sign its pinned image.
#[derive(Debug, Clone)]
pub struct PublisherPolicy {
    /// `verify.cosign_key`: the keys whose signature suffices.
    pub keys: Vec<PublicKey>,
    /// `verify.sigstore`: keyless signatures by these identities, under this trusted root.
    pub sigstore: Option<SigstorePolicy>,
}

/// Keyless verification: a Fulcio certificate chaining to the trusted root, for one of the
/// identities, with a transparency-log entry the root's log keys vouch for.
#[derive(Debug, Clone)]
pub struct SigstorePolicy {
    /// The trusted root (`verify.sigstore.trusted_root`).
    pub root: TrustedRoot,
    /// The identities whose certificates are accepted, matched exactly.
    pub identities: Vec<SigstoreIdentity>,
}

/// An OIDC identity a Fulcio certificate certifies: the issuer (the certificate's extension
/// 1.3.6.1.4.1.57264.1.8, or the legacy .1.1) and the subject (its one SAN: a URI or an email).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigstoreIdentity {
    /// The OIDC issuer URL, exactly.
    pub issuer: String,
    /// The subject (SAN), exactly.
    pub subject: String,
}
