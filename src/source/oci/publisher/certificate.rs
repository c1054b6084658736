//! Fulcio certificates: a leaf (and the chain a signature carries) checked against the trusted
//! root's certificate authorities at the signing time, with the identity it certifies (the
//! issuer extension and the SAN) and the key it binds.
//!
//! The path is rustls-webpki's (on ring): from the leaf through the authority's own
//! intermediates to its last certificate as the trust anchor, every signature verified (ECDSA
//! P-256/P-384 with SHA-256/384, Ed25519, RSA PKCS#1 v1.5 and PSS), each certificate but the
//! anchor valid at the signing time, issuers CAs by `basicConstraints` with their path lengths,
//! no unknown critical extension, and the code-signing purpose allowed by every certificate that
//! names purposes. Around it, on our own reader ([`x509`]): the anchor valid at the signing time
//! too (as Go's verifier, and so sigstore-go and cosign, require), the authority's `validFor`
//! covering it, and the leaf a code-signing certificate (`keyUsage` digitalSignature,
//! `extendedKeyUsage` codeSigning, not a CA, no critical extension but those four).
//!
//! The chain a signature carries (`chain_der`: cosign's `chain` annotation, a bundle's
//! `x509CertificateChain` after the leaf) adds no trust and no path: only the root's own
//! certificates are used, as sigstore-go does. It is bounded and must be certificates, nothing
//! more. Why not use its intermediates when they chain to a root's CA: an intermediate the root
//! no longer lists (rotated out, or never meant for leaves) would then count again.
//!
//! The identity, as sigstore-go reads it: the issuer from the extension 1.3.6.1.4.1.57264.1.8 (a
//! DER UTF8String) or, without it, the legacy 1.3.6.1.4.1.57264.1.1 (the raw string); when both
//! are present they must agree. The subject is the one SAN: a URI, an email (rfc822Name), or
//! Fulcio's username `otherName` (1.3.6.1.4.1.57264.1.7); a leaf with no SAN or more than one is
//! refused (stricter than sigstore-go, which takes the first kind it finds: a certificate naming
//! two identities names none we can match exactly).

use std::time::Duration;

use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, UnixTime};

use super::Rejection;
use crate::descriptor::publishers::Identity;
use crate::descriptor::publishers::key::PublicKey;
use crate::descriptor::publishers::trusted_root::TrustedRoot;
use crate::descriptor::publishers::trusted_root::x509::{self, AltName, Certificate};
use crate::support::escape;
use crate::support::time::format_unix;

/// The most certificates a signature's own chain may carry.
pub const MAX_CARRIED_CHAIN: usize = 8;

/// The signature algorithms a chain may use (all on ring).
static ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    webpki::ring::ECDSA_P256_SHA256,
    webpki::ring::ECDSA_P256_SHA384,
    webpki::ring::ECDSA_P384_SHA256,
    webpki::ring::ECDSA_P384_SHA384,
    webpki::ring::ED25519,
    webpki::ring::RSA_PKCS1_2048_8192_SHA256,
    webpki::ring::RSA_PKCS1_2048_8192_SHA384,
    webpki::ring::RSA_PKCS1_2048_8192_SHA512,
    webpki::ring::RSA_PKCS1_2048_8192_SHA256_ABSENT_PARAMS,
    webpki::ring::RSA_PKCS1_2048_8192_SHA384_ABSENT_PARAMS,
    webpki::ring::RSA_PKCS1_2048_8192_SHA512_ABSENT_PARAMS,
    webpki::ring::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
    webpki::ring::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
    webpki::ring::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
];

/// The extensions a leaf may mark critical (all understood here or by webpki).
const LEAF_CRITICAL: [&[u8]; 4] = [
    x509::OID_KEY_USAGE,
    x509::OID_EXTENDED_KEY_USAGE,
    x509::OID_BASIC_CONSTRAINTS,
    x509::OID_SUBJECT_ALT_NAME,
];

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
    let malformed = |e: String| (Rejection::Malformed, e);
    let leaf = Certificate::parse(leaf_der)
        .map_err(|e| malformed(format!("the certificate is not X.509: {e}")))?;
    if chain_der.len() > MAX_CARRIED_CHAIN {
        return Err(malformed(format!(
            "the signature carries {} chain certificates, over the limit of {MAX_CARRIED_CHAIN}",
            chain_der.len()
        )));
    }
    for (i, der) in chain_der.iter().enumerate() {
        Certificate::parse(der)
            .map_err(|e| malformed(format!("chain certificate {i} is not X.509: {e}")))?;
    }
    code_signing_leaf(&leaf)?;
    let identity = identity(&leaf).map_err(malformed)?;
    let key = PublicKey::from_spki_der(&leaf.spki)
        .map_err(|e| malformed(format!("the certificate's key: {e}")))?;
    if !leaf.valid_at(signed_at) {
        return Err((
            Rejection::CertificateExpired,
            format!(
                "the certificate was valid from {} to {}, not when it signed ({})",
                shown(leaf.not_before),
                shown(leaf.not_after),
                shown(signed_at)
            ),
        ));
    }
    let time = u64::try_from(signed_at)
        .map(|s| UnixTime::since_unix_epoch(Duration::from_secs(s)))
        .map_err(|_| malformed(format!("a signing time before 1970 ({signed_at})")))?;
    let leaf_cert = CertificateDer::from(leaf_der);
    let end_entity = webpki::EndEntityCert::try_from(&leaf_cert)
        .map_err(|e| malformed(format!("the certificate: {e}")))?;

    let mut refusals: Vec<(Rejection, String)> = Vec::new();
    for (index, authority) in root.authorities.iter().enumerate() {
        let Some((anchor_der, intermediates)) = authority.chain.split_last() else {
            continue;
        };
        let anchor_cert = CertificateDer::from(anchor_der.as_slice());
        let Ok(anchor) = webpki::anchor_from_trusted_cert(&anchor_cert) else {
            continue;
        };
        let intermediates: Vec<CertificateDer<'_>> = intermediates
            .iter()
            .map(|der| CertificateDer::from(der.as_slice()))
            .collect();
        let anchors = [anchor];
        let path = end_entity.verify_for_usage(
            ALGORITHMS,
            &anchors,
            &intermediates,
            time,
            webpki::KeyUsage::required_if_present(x509::OID_CODE_SIGNING),
            None,
            None,
        );
        if let Err(error) = path {
            refusals.push(match error {
                webpki::Error::CertExpired { .. } | webpki::Error::CertNotValidYet { .. } => (
                    Rejection::CertificateExpired,
                    format!(
                        "certificate authority {index}: a certificate of the chain was not valid when it signed ({}): {error}",
                        shown(signed_at)
                    ),
                ),
                _ => (
                    Rejection::CertificateUntrusted,
                    format!("certificate authority {index}: {error}"),
                ),
            });
            continue;
        }
        // The path holds; now what webpki leaves to its caller.
        let Ok(anchor_read) = Certificate::parse(anchor_der) else {
            continue;
        };
        if !anchor_read.valid_at(signed_at) {
            refusals.push((
                Rejection::CertificateExpired,
                format!(
                    "certificate authority {index}: its root certificate was valid from {} to {}, not when it signed ({})",
                    shown(anchor_read.not_before),
                    shown(anchor_read.not_after),
                    shown(signed_at)
                ),
            ));
            continue;
        }
        let until = authority.valid_until.unwrap_or(i64::MAX);
        if signed_at < authority.valid_from || signed_at > until {
            refusals.push((
                Rejection::CertificateExpired,
                format!(
                    "certificate authority {index}: the trusted root trusts it from {} to {}, not when it signed ({})",
                    shown(authority.valid_from),
                    authority
                        .valid_until
                        .map_or_else(|| "no end".to_owned(), shown),
                    shown(signed_at)
                ),
            ));
            continue;
        }
        return Ok(Certified { key, identity });
    }
    // An authority that would have certified it but for the time says more than "untrusted".
    let chosen = refusals
        .iter()
        .position(|(rejection, _)| *rejection == Rejection::CertificateExpired)
        .or((!refusals.is_empty()).then_some(0));
    Err(match chosen {
        Some(i) => refusals.swap_remove(i),
        None => (
            Rejection::CertificateUntrusted,
            "the trusted root names no usable certificate authority".to_owned(),
        ),
    })
}

fn shown(time: i64) -> String {
    u64::try_from(time).map_or_else(|_| time.to_string(), format_unix)
}

/// A Fulcio leaf is a code-signing certificate: digitalSignature, codeSigning, not a CA, and no
/// critical extension but those it must understand.
fn code_signing_leaf(leaf: &Certificate) -> Result<(), (Rejection, String)> {
    let untrusted = |e: String| (Rejection::CertificateUntrusted, e);
    let malformed = |e: String| (Rejection::Malformed, e);
    match leaf.key_usage(0).map_err(malformed)? {
        Some(true) => {}
        Some(false) => {
            return Err(untrusted(
                "the certificate's keyUsage does not allow digitalSignature".to_owned(),
            ));
        }
        None => return Err(untrusted("the certificate has no keyUsage".to_owned())),
    }
    let purposes = leaf
        .extended_key_usage()
        .map_err(malformed)?
        .ok_or_else(|| untrusted("the certificate has no extendedKeyUsage".to_owned()))?;
    if !purposes.iter().any(|p| p == x509::OID_CODE_SIGNING) {
        return Err(untrusted(
            "the certificate's extendedKeyUsage does not allow codeSigning".to_owned(),
        ));
    }
    if let Some((true, _)) = leaf.basic_constraints().map_err(malformed)? {
        return Err(untrusted(
            "the certificate is a CA certificate, not a signing leaf".to_owned(),
        ));
    }
    if let Some(extension) = leaf
        .extensions
        .iter()
        .find(|e| e.critical && !LEAF_CRITICAL.contains(&e.oid.as_slice()))
    {
        return Err(untrusted(format!(
            "the certificate has the unknown critical extension {}",
            x509::oid_text(&extension.oid)
        )));
    }
    Ok(())
}

/// The identity a Fulcio leaf certifies.
fn identity(leaf: &Certificate) -> Result<Identity, String> {
    let current = leaf
        .extension(x509::OID_FULCIO_ISSUER_V2)
        .map(|e| {
            x509::utf8_string(&e.value)
                .map_err(|err| format!("the issuer extension 1.3.6.1.4.1.57264.1.8: {err}"))
        })
        .transpose()?;
    let legacy = leaf
        .extension(x509::OID_FULCIO_ISSUER_V1)
        .map(|e| {
            String::from_utf8(e.value.clone())
                .map_err(|_| "the issuer extension 1.3.6.1.4.1.57264.1.1 is not UTF-8".to_owned())
        })
        .transpose()?;
    let issuer = match (current, legacy) {
        (Some(current), Some(legacy)) if current != legacy => {
            return Err(format!(
                "the issuer extensions disagree: `{}` (1.3.6.1.4.1.57264.1.8) and `{}` (1.3.6.1.4.1.57264.1.1)",
                escape::text(&current),
                escape::text(&legacy)
            ));
        }
        (Some(issuer), _) | (None, Some(issuer)) => issuer,
        (None, None) => {
            return Err(
                "the certificate names no OIDC issuer (extension 1.3.6.1.4.1.57264.1.8 or .1.1)"
                    .to_owned(),
            );
        }
    };
    if issuer.is_empty() {
        return Err("the certificate's OIDC issuer is empty".to_owned());
    }
    let names = leaf.alt_names()?;
    let subject = match names.as_slice() {
        [] => return Err("the certificate has no subject alternative name".to_owned()),
        [AltName::Uri(subject) | AltName::Email(subject)] => subject.clone(),
        [
            AltName::Other {
                type_oid,
                value: Some(subject),
            },
        ] if type_oid == x509::OID_FULCIO_USERNAME => subject.clone(),
        [_] => {
            return Err(
                "the certificate's subject alternative name is not a URI, an email or a Fulcio username"
                    .to_owned(),
            );
        }
        _ => {
            return Err(format!(
                "the certificate has {} subject alternative names, not one",
                names.len()
            ));
        }
    };
    if subject.is_empty() {
        return Err("the certificate's subject alternative name is empty".to_owned());
    }
    Ok(Identity { issuer, subject })
}
