//! Keyless signatures: a Fulcio certificate and a transparency-log entry, judged against the
//! source's `sigstore` policy (the trusted root and the identities), offline.
//!
//! A cosign ≤ v2 keyless layer carries the leaf (`dev.sigstore.cosign/certificate`, PEM), the
//! chain (`…/chain`, PEM, adding no trust: see [`certificate`]) and the Rekor bundle
//! (`…/bundle`: the entry's body, integrated time, index, log id and signed entry timestamp).
//! It counts when, in this order: `policy.sigstore` is configured (`NotConfigured`); the
//! certificates are PEM certificates within bounds (`Malformed`); the Rekor bundle is present
//! (`LogEntryMissing`: cosign ≤ v2 refuses a keyless signature without one unless told to ignore
//! the log, which skillfold never does) and verifies, its `hashedrekord` body being about this
//! payload, signature and leaf ([`tlog::verify`]); the leaf chains to the trusted root
//! at the entry's integrated time ([`certificate::verify`]); its identity is exactly a
//! configured one (`IdentityNotAllowed`); and the signature verifies under its key as cosign ≤
//! v2 checks it (ECDSA over SHA-256: [`PublicKey::verify`], `BadSignature`).
//!
//! [`PublicKey::verify`]: crate::trust::keys::public_key::PublicKey::verify

use crate::support::escape;
use crate::trust::image::policy::{PublisherPolicy, SigstoreIdentity, SigstorePolicy};
use crate::trust::keys::pem;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::tlog::{self, LogEntry, Signed};
use crate::trust::verdict::{Publisher, Rejection};
use crate::trust::x509::certificate;

/// Judges a cosign ≤ v2 keyless signature: `signature` over `payload`, the PEM leaf
/// `certificate`, the PEM `chain` and the Rekor `bundle` annotation (JSON), if present.
pub fn judge_v2(
    payload: &[u8],
    signature: &[u8],
    certificate: &str,
    chain: Option<&str>,
    bundle: Option<&str>,
    policy: &PublisherPolicy,
) -> Result<Publisher, (Rejection, String)> {
    let malformed = |e: String| (Rejection::Malformed, e);
    let sigstore = policy.sigstore.as_ref().ok_or_else(|| {
        (
            Rejection::NotConfigured,
            "a keyless (certificate) signature, and `verify` has no `sigstore`".to_owned(),
        )
    })?;
    let leaf = pem::certificates(certificate, 1)
        .map_err(|e| malformed(format!("the certificate annotation: {e}")))?
        .remove(0);
    let chain = match chain {
        Some(text) => pem::certificates(text, certificate::MAX_CARRIED_CHAIN)
            .map_err(|e| malformed(format!("the chain annotation: {e}")))?,
        None => Vec::new(),
    };
    let bundle = bundle.ok_or_else(|| {
        (
            Rejection::LogEntryMissing,
            "a keyless signature without its Rekor bundle annotation".to_owned(),
        )
    })?;
    let entry = LogEntry::from_cosign_bundle(bundle).map_err(|e| malformed(e.to_string()))?;
    let signed = Signed::Message {
        message: payload,
        signature,
        verifier_der: &leaf,
    };
    certified_signer(sigstore, &entry, signed, (&leaf, &chain), |key| {
        key.verify(payload, signature)
    })
}

/// What a keyless signature must pass once read, in either layout: its log entry `entry`, about
/// `signed`, verified under the trusted root; the leaf (with the chain it carries, `certificates`)
/// certified at the entry's integrated time; its identity one of the configured ones, exactly;
/// and the signature under the leaf's key (`verifies`).
pub fn certified_signer(
    sigstore: &SigstorePolicy,
    entry: &LogEntry,
    signed: Signed<'_>,
    certificates: (&[u8], &[Vec<u8>]),
    verifies: impl FnOnce(&PublicKey) -> bool,
) -> Result<Publisher, (Rejection, String)> {
    let (leaf, chain) = certificates;
    let signed_at = tlog::verify(&sigstore.root, entry, signed)?;
    let certified = certificate::verify(&sigstore.root, leaf, chain, signed_at)?;
    let identity = allowed(&certified.identity, &sigstore.identities)?;
    if !verifies(&certified.key) {
        return Err((
            Rejection::BadSignature,
            "the signature does not verify under its certificate's key".to_owned(),
        ));
    }
    Ok(Publisher::Identity {
        issuer: identity.issuer.clone(),
        subject: identity.subject.clone(),
    })
}

/// The configured identity `certified` is, exactly.
pub fn allowed<'p>(
    certified: &SigstoreIdentity,
    identities: &'p [SigstoreIdentity],
) -> Result<&'p SigstoreIdentity, (Rejection, String)> {
    identities
        .iter()
        .find(|identity| *identity == certified)
        .ok_or_else(|| {
            (
                Rejection::IdentityNotAllowed,
                format!(
                    "the certificate is for issuer `{}` and subject `{}`, not a configured identity",
                    escape::text(&certified.issuer),
                    escape::text(&certified.subject)
                ),
            )
        })
}

#[cfg(test)]
#[path = "keyless_tests.rs"]
mod tests;
