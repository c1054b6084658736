//! Keyless signatures: a Fulcio certificate and a transparency-log entry, judged against the
//! source's `sigstore` policy (the trusted root and the identities), offline.

use super::{Rejection, Signer};
use crate::descriptor::publishers::PublisherPolicy;

/// Judges a cosign ≤ v2 keyless signature: `signature` over `payload`, the PEM leaf
/// `certificate`, the PEM `chain` and the Rekor `bundle` annotation (JSON), if present.
pub fn judge_v2(
    payload: &[u8],
    signature: &[u8],
    certificate: &str,
    chain: Option<&str>,
    bundle: Option<&str>,
    policy: &PublisherPolicy,
) -> Result<Signer, (Rejection, String)> {
    let _ = (payload, signature, certificate, chain, bundle, policy);
    Err((Rejection::NotConfigured, "not implemented yet".to_owned()))
}
