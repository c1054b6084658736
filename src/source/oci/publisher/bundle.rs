//! Sigstore bundles v0.1–v0.3 (`application/vnd.dev.sigstore.bundle…+json`): the verification
//! material (a certificate, a chain or a public-key hint), the transparency-log entries, and the
//! content (a DSSE envelope, or a message signature), read within bounds and judged.

use super::material::SigstoreBundle;
use super::{Rejection, Signer};
use crate::descriptor::publishers::PublisherPolicy;

/// Judges one Sigstore bundle for the image at `pinned`: its content must bind `pinned` (a DSSE
/// in-toto statement's subject, or a message signature's digest), and verify under a
/// configured key or a certificate for a configured identity with a log entry.
pub fn judge(
    bundle: &SigstoreBundle,
    pinned: &str,
    policy: &PublisherPolicy,
) -> Result<Signer, (Rejection, String)> {
    let _ = (bundle, pinned, policy);
    Err((Rejection::Malformed, "not implemented yet".to_owned()))
}
