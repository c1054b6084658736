//! Fulcio certificates: a leaf (and the chain a signature carries) checked against the trusted
//! root's certificate authorities at the signing time, with the identity it certifies (the
//! issuer extension and the SAN) and the key it binds.

use super::Rejection;
use crate::descriptor::publishers::Identity;
use crate::descriptor::publishers::key::PublicKey;
use crate::descriptor::publishers::trusted_root::TrustedRoot;

/// What a verified certificate certifies.
#[derive(Debug, Clone)]
pub struct Certified {
    /// The leaf's key.
    pub key: PublicKey,
    /// Its identity.
    pub identity: Identity,
}

/// Checks the leaf `leaf_der` (with the intermediates a signature carries, `chain_der`,
/// possibly empty) against `root`'s authorities at `signed_at` (Unix seconds): a chain to one of
/// them valid then, a code-signing leaf; the identity it certifies, read.
pub fn verify(
    root: &TrustedRoot,
    leaf_der: &[u8],
    chain_der: &[Vec<u8>],
    signed_at: i64,
) -> Result<Certified, (Rejection, String)> {
    let _ = (root, leaf_der, chain_der, signed_at);
    Err((
        Rejection::CertificateUntrusted,
        "not implemented yet".to_owned(),
    ))
}
