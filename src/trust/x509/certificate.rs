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
//! `extendedKeyUsage` codeSigning, not a CA, no critical extension but those four). Then the
//! leaf's embedded SCTs ([`sct`]): at least one signed by a CT log the trusted root names, over
//! the leaf as a precertificate issued by the CA that signed it on that path; a leaf without
//! one is untrusted, whatever else holds (cosign, sigstore-go and sigstore-js refuse it too).
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

mod sct;

use std::time::Duration;

use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, UnixTime};

use crate::support::escape;
use crate::support::time::format_unix;
use crate::trust::image::policy::SigstoreIdentity;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::verdict::Rejection;
use crate::trust::x509::trusted_root::TrustedRoot;
use crate::trust::x509::{self, AltName, Certificate};

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
    pub identity: SigstoreIdentity,
}

/// Checks the leaf `leaf_der` (with the intermediates a signature carries, `chain_der`,
/// possibly empty) against `root`'s authorities at `signed_at` (Unix seconds): a chain to one of
/// them valid then, a code-signing leaf, an SCT from one of `root`'s CT logs; the identity it
/// certifies, read.
pub fn verify(
    root: &TrustedRoot,
    leaf_der: &[u8],
    chain_der: &[Vec<u8>],
    signed_at: i64,
) -> Result<Certified, (Rejection, String)> {
    let chained = chain(root, leaf_der, chain_der, signed_at)?;
    sct::check(root, leaf_der, &chained.leaf, &chained.issuer_spki)
        .map_err(|e| (Rejection::CertificateUntrusted, e.to_string()))?;
    Ok(chained.certified)
}

/// A leaf whose chain holds: what it certifies, the leaf as read, and the DER
/// SubjectPublicKeyInfo of the CA that signed it on the path built.
struct Chained {
    certified: Certified,
    leaf: Certificate,
    issuer_spki: Vec<u8>,
}

/// All of [`verify`] but the SCTs: the chain, the leaf's purpose and identity.
fn chain(
    root: &TrustedRoot,
    leaf_der: &[u8],
    chain_der: &[Vec<u8>],
    signed_at: i64,
) -> Result<Chained, (Rejection, String)> {
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
    let identity = identity(&leaf).map_err(|e| malformed(e.to_string()))?;
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
        let path = match end_entity.verify_for_usage(
            ALGORITHMS,
            &anchors,
            &intermediates,
            time,
            webpki::KeyUsage::required_if_present(x509::OID_CODE_SIGNING),
            None,
            None,
        ) {
            Ok(path) => path,
            Err(error) => {
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
        };
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
        return Ok(Chained {
            certified: Certified { key, identity },
            leaf,
            issuer_spki: path.issuer_spki().as_ref().to_vec(),
        });
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
    let malformed = |e: x509::error::X509Error| (Rejection::Malformed, e.to_string());
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

/// Why a Fulcio leaf names no identity a policy can match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum IdentityError {
    #[error("the issuer extension 1.3.6.1.4.1.57264.1.8: {0}")]
    IssuerNotText(String),
    #[error("the issuer extension 1.3.6.1.4.1.57264.1.1 is not UTF-8")]
    LegacyIssuerNotUtf8,
    #[error(
        "the issuer extensions disagree: `{0}` (1.3.6.1.4.1.57264.1.8) and `{1}` (1.3.6.1.4.1.57264.1.1)"
    )]
    IssuersDisagree(String, String),
    #[error("the certificate names no OIDC issuer (extension 1.3.6.1.4.1.57264.1.8 or .1.1)")]
    NoIssuer,
    #[error("the certificate's OIDC issuer is empty")]
    EmptyIssuer,
    #[error("{0}")]
    AltNames(String),
    #[error("the certificate has no subject alternative name")]
    NoSubject,
    #[error(
        "the certificate's subject alternative name is not a URI, an email or a Fulcio username"
    )]
    SubjectKind,
    #[error("the certificate has {0} subject alternative names, not one")]
    Subjects(usize),
    #[error("the certificate's subject alternative name is empty")]
    EmptySubject,
}

/// The identity a Fulcio leaf certifies.
fn identity(leaf: &Certificate) -> Result<SigstoreIdentity, IdentityError> {
    let current = leaf
        .extension(x509::OID_FULCIO_ISSUER_V2)
        .map(|e| {
            x509::utf8_string(&e.value).map_err(|err| IdentityError::IssuerNotText(err.to_string()))
        })
        .transpose()?;
    let legacy = leaf
        .extension(x509::OID_FULCIO_ISSUER_V1)
        .map(|e| String::from_utf8(e.value.clone()).map_err(|_| IdentityError::LegacyIssuerNotUtf8))
        .transpose()?;
    let issuer = match (current, legacy) {
        (Some(current), Some(legacy)) if current != legacy => {
            return Err(IdentityError::IssuersDisagree(
                escape::text(&current).to_string(),
                escape::text(&legacy).to_string(),
            ));
        }
        (Some(issuer), _) | (None, Some(issuer)) => issuer,
        (None, None) => return Err(IdentityError::NoIssuer),
    };
    if issuer.is_empty() {
        return Err(IdentityError::EmptyIssuer);
    }
    let names = leaf
        .alt_names()
        .map_err(|e| IdentityError::AltNames(e.to_string()))?;
    let subject = match names.as_slice() {
        [] => return Err(IdentityError::NoSubject),
        [AltName::Uri(subject) | AltName::Email(subject)] => subject.clone(),
        [
            AltName::Other {
                type_oid,
                value: Some(subject),
            },
        ] if type_oid == x509::OID_FULCIO_USERNAME => subject.clone(),
        [_] => return Err(IdentityError::SubjectKind),
        _ => return Err(IdentityError::Subjects(names.len())),
    };
    if subject.is_empty() {
        return Err(IdentityError::EmptySubject);
    }
    Ok(SigstoreIdentity { issuer, subject })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use base64::Engine as _;
    use serde_json::Value;

    use super::*;
    use crate::trust::x509::trusted_root::CertificateAuthority;

    const ISSUER: &str = "https://token.actions.githubusercontent.com";
    const SUBJECT: &str =
        "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main";

    // ---- the sigstore-js fixtures (tests/fixtures/sigstore) ----

    fn fixture_path(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sigstore")
            .join(name)
    }

    fn fixture_json(name: &str) -> Value {
        serde_json::from_slice(&fs_err::read(fixture_path(name)).unwrap()).unwrap()
    }

    fn fixture_root(name: &str) -> TrustedRoot {
        TrustedRoot::read(&fixture_path(name)).unwrap()
    }

    /// The leaf of a v0.3 bundle and its entry's integrated time.
    fn bundle_leaf(name: &str) -> (Vec<u8>, i64) {
        let bundle = fixture_json(name);
        let material = &bundle["verificationMaterial"];
        let leaf = base64::engine::general_purpose::STANDARD
            .decode(material["certificate"]["rawBytes"].as_str().unwrap())
            .unwrap();
        let time = material["tlogEntries"][0]["integratedTime"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        (leaf, time)
    }

    fn pem_blocks(text: &str) -> Vec<Vec<u8>> {
        text.split("-----BEGIN CERTIFICATE-----")
            .skip(1)
            .map(|block| {
                let body: String = block
                    .split("-----END CERTIFICATE-----")
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .collect();
                base64::engine::general_purpose::STANDARD
                    .decode(body)
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn sigstore_js_leaves_are_certified() {
        let root = fixture_root("trusted_root.json");
        let meta = fixture_json("meta.json");
        let (issuer, subject) = (
            meta["issuer"].as_str().unwrap(),
            meta["subject"].as_str().unwrap(),
        );
        for bundle in [
            "message.bundle.json",
            "dsse.bundle.json",
            "legacy-issuer/message.bundle.json",
        ] {
            let (leaf, time) = bundle_leaf(bundle);
            let certified =
                verify(&root, &leaf, &[], time).unwrap_or_else(|e| panic!("{bundle}: {e:?}"));
            assert_eq!(certified.identity.issuer, issuer, "{bundle}");
            assert_eq!(certified.identity.subject, subject, "{bundle}");
            let spki = Certificate::parse(&leaf).unwrap().spki;
            assert_eq!(certified.key.spki_der(), spki.as_slice(), "{bundle}");
        }
        // cosign v2's annotations: the leaf and the chain as PEM, the time in the Rekor bundle.
        let cosign = fixture_json("cosign-v2.json");
        let annotations = &cosign["annotations"];
        let leaf = pem_blocks(
            annotations["dev.sigstore.cosign/certificate"]
                .as_str()
                .unwrap(),
        );
        let chain = pem_blocks(annotations["dev.sigstore.cosign/chain"].as_str().unwrap());
        let rekor: Value =
            serde_json::from_str(annotations["dev.sigstore.cosign/bundle"].as_str().unwrap())
                .unwrap();
        let time = rekor["Payload"]["integratedTime"].as_i64().unwrap();
        let certified = verify(&root, &leaf[0], &chain, time).unwrap();
        assert_eq!(certified.identity.subject, subject);
    }

    #[test]
    fn sigstore_js_refusals_are_refused() {
        let root = fixture_root("trusted_root.json");
        let (leaf, time) = bundle_leaf("other-ca/message.bundle.json");
        assert_eq!(
            verify(&root, &leaf, &[], time).unwrap_err().0,
            Rejection::CertificateUntrusted
        );
        let (leaf, time) = bundle_leaf("expired/message.bundle.json");
        assert_eq!(
            verify(&root, &leaf, &[], time).unwrap_err().0,
            Rejection::CertificateExpired
        );
        let (leaf, time) = bundle_leaf("no-issuer/message.bundle.json");
        let (rejection, detail) = verify(&root, &leaf, &[], time).unwrap_err();
        assert_eq!(rejection, Rejection::Malformed);
        assert!(detail.contains("names no OIDC issuer"), "{detail}");
        let (leaf, time) = bundle_leaf("message.bundle.json");
        let (rejection, detail) = verify(
            &fixture_root("trusted_root.ca-ended.json"),
            &leaf,
            &[],
            time,
        )
        .unwrap_err();
        assert_eq!(rejection, Rejection::CertificateExpired);
        assert!(
            detail.contains("the trusted root trusts it from"),
            "{detail}"
        );
        // The identity is read, not judged: another subject is certified as what it is.
        let (leaf, time) = bundle_leaf("other-subject/message.bundle.json");
        assert_eq!(
            verify(&root, &leaf, &[], time).unwrap().identity.subject,
            format!("{SUBJECT}-other")
        );
    }

    // ---- certificates made by openssl ----

    /// A scratch PKI: keys and certificates made by the openssl CLI in a temporary folder.
    struct Pki {
        dir: tempfile::TempDir,
        serial: std::cell::Cell<u32>,
    }

    /// A certificate and its key's file.
    struct Issued {
        der: Vec<u8>,
        pem: PathBuf,
        key: PathBuf,
    }

    impl Issued {
        fn read(&self) -> Certificate {
            Certificate::parse(&self.der).unwrap()
        }
    }

    fn openssl(args: &[&str]) {
        let output = Command::new("openssl").args(args).output().unwrap();
        assert!(
            output.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02X}")).collect()
    }

    impl Pki {
        fn new() -> Pki {
            let dir = tempfile::tempdir().unwrap();
            let legacy = hex(ISSUER.as_bytes());
            let leaf = "keyUsage = critical, digitalSignature\n\
                 extendedKeyUsage = codeSigning\n\
                 subjectKeyIdentifier = hash\n\
                 authorityKeyIdentifier = keyid\n";
            let san = format!("subjectAltName = critical, URI:{SUBJECT}\n");
            let v2 = format!("1.3.6.1.4.1.57264.1.8 = ASN1:UTF8String:{ISSUER}\n");
            let v1 = format!("1.3.6.1.4.1.57264.1.1 = DER:{legacy}\n");
            let config = format!(
                "[req]\ndistinguished_name = dn\n[dn]\n\
                 [root]\nbasicConstraints = critical, CA:true\nkeyUsage = critical, keyCertSign, cRLSign\nsubjectKeyIdentifier = hash\n\
                 [intermediate]\nbasicConstraints = critical, CA:true, pathlen:0\nkeyUsage = critical, keyCertSign, cRLSign\nextendedKeyUsage = codeSigning\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n\
                 [intermediate_any]\nbasicConstraints = critical, CA:true\nkeyUsage = critical, keyCertSign, cRLSign\nsubjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n\
                 [leaf]\n{leaf}{san}{v2}{v1}\
                 [leaf_email]\n{leaf}subjectAltName = critical, email:release@acme.example\n{v2}\
                 [leaf_legacy_issuer]\n{leaf}{san}{v1}\
                 [leaf_no_issuer]\n{leaf}{san}\
                 [leaf_issuers_disagree]\n{leaf}{san}{v2}1.3.6.1.4.1.57264.1.1 = DER:{}\n\
                 [leaf_two_sans]\n{leaf}subjectAltName = critical, URI:{SUBJECT}, email:release@acme.example\n{v2}\
                 [leaf_no_san]\n{leaf}{v2}\
                 [leaf_dns_san]\n{leaf}subjectAltName = critical, DNS:acme.example\n{v2}\
                 [leaf_server_auth]\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\n{san}{v2}\
                 [leaf_no_eku]\nkeyUsage = critical, digitalSignature\n{san}{v2}\
                 [leaf_no_digital_signature]\nkeyUsage = critical, keyEncipherment\nextendedKeyUsage = codeSigning\n{san}{v2}\
                 [leaf_no_key_usage]\nextendedKeyUsage = codeSigning\n{san}{v2}\
                 [leaf_ca]\nbasicConstraints = critical, CA:true\nkeyUsage = critical, digitalSignature, keyCertSign\nextendedKeyUsage = codeSigning\n{san}{v2}\
                 [leaf_unknown_critical]\n{leaf}{san}{v2}1.2.3.4 = critical, ASN1:NULL\n",
                hex(b"https://accounts.example")
            );
            fs_err::write(dir.path().join("openssl.cnf"), config).unwrap();
            Pki {
                dir,
                serial: std::cell::Cell::new(1),
            }
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        fn key(&self, name: &str) -> PathBuf {
            let key = self.path(&format!("{name}.key"));
            openssl(&[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
                key.to_str().unwrap(),
            ]);
            key
        }

        fn finish(&self, name: &str, key: PathBuf) -> Issued {
            let pem = self.path(&format!("{name}.pem"));
            let der = self.path(&format!("{name}.der"));
            openssl(&[
                "x509",
                "-in",
                pem.to_str().unwrap(),
                "-outform",
                "DER",
                "-out",
                der.to_str().unwrap(),
            ]);
            Issued {
                der: fs_err::read(der).unwrap(),
                pem,
                key,
            }
        }

        /// A self-signed CA certificate valid `days`.
        fn root(&self, name: &str, days: u32) -> Issued {
            let key = self.key(name);
            let pem = self.path(&format!("{name}.pem"));
            openssl(&[
                "req",
                "-x509",
                "-new",
                "-key",
                key.to_str().unwrap(),
                "-subj",
                &format!("/O=skillfold test/CN={name}"),
                "-days",
                &days.to_string(),
                "-config",
                self.path("openssl.cnf").to_str().unwrap(),
                "-extensions",
                "root",
                "-out",
                pem.to_str().unwrap(),
            ]);
            self.finish(name, key)
        }

        /// A certificate for a new key, issued by `issuer` with the extensions of `section`.
        fn issue(&self, name: &str, issuer: &Issued, section: &str, days: u32) -> Issued {
            let key = self.key(name);
            let csr = self.path(&format!("{name}.csr"));
            let pem = self.path(&format!("{name}.pem"));
            openssl(&[
                "req",
                "-new",
                "-key",
                key.to_str().unwrap(),
                "-subj",
                &format!("/O=skillfold test/CN={name}"),
                "-config",
                self.path("openssl.cnf").to_str().unwrap(),
                "-out",
                csr.to_str().unwrap(),
            ]);
            let serial = self.serial.get() + 1;
            self.serial.set(serial);
            openssl(&[
                "x509",
                "-req",
                "-in",
                csr.to_str().unwrap(),
                "-CA",
                issuer.pem.to_str().unwrap(),
                "-CAkey",
                issuer.key.to_str().unwrap(),
                "-set_serial",
                &serial.to_string(),
                "-days",
                &days.to_string(),
                "-extfile",
                self.path("openssl.cnf").to_str().unwrap(),
                "-extensions",
                section,
                "-out",
                pem.to_str().unwrap(),
            ]);
            self.finish(name, key)
        }
    }

    /// The chain checks of [`verify`] without its SCT check, for openssl's leaves, which carry
    /// none (that `verify` refuses them is its own test).
    fn chain_only(
        root: &TrustedRoot,
        leaf_der: &[u8],
        chain_der: &[Vec<u8>],
        signed_at: i64,
    ) -> Result<Certified, (Rejection, String)> {
        chain(root, leaf_der, chain_der, signed_at).map(|chained| chained.certified)
    }

    /// A trusted root of one authority with this chain (leaf-most first), valid from the epoch.
    fn root_of(chain: &[&Issued]) -> TrustedRoot {
        root_with(chain, 0, None)
    }

    fn root_with(chain: &[&Issued], valid_from: i64, valid_until: Option<i64>) -> TrustedRoot {
        TrustedRoot {
            authorities: vec![CertificateAuthority {
                chain: chain.iter().map(|c| c.der.clone()).collect(),
                valid_from,
                valid_until,
            }],
            logs: Vec::new(),
            ct_logs: Vec::new(),
        }
    }

    /// A moment the leaf is valid: a minute after it starts (the certificates' own times, not
    /// the clock's).
    fn during(leaf: &Issued) -> i64 {
        leaf.read().not_before + 60
    }

    /// The Fulcio-like setting: a root, an intermediate (pathlen 0, codeSigning) and the trusted
    /// root naming both.
    fn fulcio(pki: &Pki) -> (Issued, Issued) {
        let root = pki.root("fulcio-root", 3650);
        let intermediate = pki.issue("fulcio-intermediate", &root, "intermediate", 3650);
        (root, intermediate)
    }

    fn refusal(
        root: &TrustedRoot,
        leaf: &Issued,
        chain: &[&Issued],
        time: i64,
    ) -> (Rejection, String) {
        let chain: Vec<Vec<u8>> = chain.iter().map(|c| c.der.clone()).collect();
        chain_only(root, &leaf.der, &chain, time).unwrap_err()
    }

    fn assert_refused(refused: (Rejection, String), rejection: Rejection, says: &str) {
        assert_eq!(refused.0, rejection, "{}", refused.1);
        assert!(
            refused.1.contains(says),
            "{:?} does not say {says:?}",
            refused.1
        );
    }

    #[test]
    fn a_leaf_through_the_roots_intermediate_is_certified() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        let leaf = pki.issue("leaf", &intermediate, "leaf", 1);
        let certified = chain_only(&trusted, &leaf.der, &[], during(&leaf)).unwrap();
        assert_eq!(
            certified.identity,
            SigstoreIdentity {
                issuer: ISSUER.to_owned(),
                subject: SUBJECT.to_owned()
            }
        );
        assert_eq!(certified.key.spki_der(), leaf.read().spki.as_slice());
        // The chain a signature carries changes nothing when it repeats the root's.
        let carried = [intermediate.der.clone(), root.der.clone()];
        chain_only(&trusted, &leaf.der, &carried, during(&leaf)).unwrap();
        // Both ends of the leaf's validity count.
        let read = leaf.read();
        chain_only(&trusted, &leaf.der, &[], read.not_before).unwrap();
        chain_only(&trusted, &leaf.der, &[], read.not_after).unwrap();
        // An email subject and the legacy issuer extension alone.
        let email = pki.issue("email", &intermediate, "leaf_email", 1);
        let certified = chain_only(&trusted, &email.der, &[], during(&email)).unwrap();
        assert_eq!(certified.identity.subject, "release@acme.example");
        let legacy = pki.issue("legacy", &intermediate, "leaf_legacy_issuer", 1);
        let certified = chain_only(&trusted, &legacy.der, &[], during(&legacy)).unwrap();
        assert_eq!(certified.identity.issuer, ISSUER);
    }

    #[test]
    fn a_leaf_of_another_ca_is_untrusted() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        let other_root = pki.root("other-root", 3650);
        let leaf = pki.issue("leaf", &other_root, "leaf", 1);
        assert_refused(
            refusal(&trusted, &leaf, &[], during(&leaf)),
            Rejection::CertificateUntrusted,
            "UnknownIssuer",
        );
        // The chain it carries, its own root included, adds no trust.
        assert_refused(
            refusal(&trusted, &leaf, &[&other_root], during(&leaf)),
            Rejection::CertificateUntrusted,
            "UnknownIssuer",
        );
        // Nor does an intermediate the trusted root's own root signed, when the trusted root
        // does not list it.
        let root_only = root_of(&[&root]);
        let leaf = pki.issue("leaf-2", &intermediate, "leaf", 1);
        assert_refused(
            refusal(&root_only, &leaf, &[&intermediate], during(&leaf)),
            Rejection::CertificateUntrusted,
            "UnknownIssuer",
        );
        // With no authority at all.
        let empty = TrustedRoot {
            authorities: Vec::new(),
            logs: Vec::new(),
            ct_logs: Vec::new(),
        };
        assert_refused(
            refusal(&empty, &leaf, &[], during(&leaf)),
            Rejection::CertificateUntrusted,
            "no usable certificate authority",
        );
    }

    #[test]
    fn a_leaf_not_valid_when_it_signed_is_expired() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        let leaf = pki.issue("leaf", &intermediate, "leaf", 1);
        let read = leaf.read();
        for time in [read.not_after + 1, read.not_before - 1] {
            assert_refused(
                refusal(&trusted, &leaf, &[], time),
                Rejection::CertificateExpired,
                "the certificate was valid from",
            );
        }
    }

    #[test]
    fn an_intermediate_or_root_not_valid_when_it_signed_is_expired() {
        let pki = Pki::new();
        // An intermediate of one day, a leaf of thirty: signed on the leaf's second day.
        let root = pki.root("root", 3650);
        let short = pki.issue("short-intermediate", &root, "intermediate", 1);
        let leaf = pki.issue("leaf", &short, "leaf", 30);
        let time = short.read().not_after + 1;
        assert!(leaf.read().valid_at(time));
        assert_refused(
            refusal(&root_of(&[&short, &root]), &leaf, &[], time),
            Rejection::CertificateExpired,
            "a certificate of the chain was not valid",
        );
        // A root of one day (webpki does not check a trust anchor's dates; we do).
        let short_root = pki.root("short-root", 1);
        let intermediate = pki.issue("intermediate", &short_root, "intermediate", 30);
        let leaf = pki.issue("leaf-2", &intermediate, "leaf", 30);
        let time = short_root.read().not_after + 1;
        assert!(leaf.read().valid_at(time) && intermediate.read().valid_at(time));
        assert_refused(
            refusal(&root_of(&[&intermediate, &short_root]), &leaf, &[], time),
            Rejection::CertificateExpired,
            "its root certificate was valid from",
        );
    }

    #[test]
    fn an_authority_outside_its_window_is_expired() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let leaf = pki.issue("leaf", &intermediate, "leaf", 1);
        let time = during(&leaf);
        let ended = root_with(&[&intermediate, &root], 0, Some(time - 1));
        assert_refused(
            refusal(&ended, &leaf, &[], time),
            Rejection::CertificateExpired,
            "the trusted root trusts it from",
        );
        let not_yet = root_with(&[&intermediate, &root], time + 1, None);
        assert_refused(
            refusal(&not_yet, &leaf, &[], time),
            Rejection::CertificateExpired,
            "the trusted root trusts it from",
        );
        // Both ends of the window count.
        chain_only(
            &root_with(&[&intermediate, &root], time, Some(time)),
            &leaf.der,
            &[],
            time,
        )
        .unwrap();
        // A second authority, in its window, still certifies.
        let mut two = root_with(&[&intermediate, &root], 0, Some(time - 1));
        two.authorities
            .push(root_of(&[&intermediate, &root]).authorities.remove(0));
        chain_only(&two, &leaf.der, &[], time).unwrap();
    }

    #[test]
    fn a_leaf_must_be_for_code_signing() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        for (section, says) in [
            ("leaf_server_auth", "does not allow codeSigning"),
            ("leaf_no_eku", "has no extendedKeyUsage"),
            (
                "leaf_no_digital_signature",
                "does not allow digitalSignature",
            ),
            ("leaf_no_key_usage", "has no keyUsage"),
            ("leaf_ca", "is a CA certificate"),
            (
                "leaf_unknown_critical",
                "unknown critical extension 1.2.3.4",
            ),
        ] {
            let leaf = pki.issue(section, &intermediate, section, 1);
            assert_refused(
                refusal(&trusted, &leaf, &[], during(&leaf)),
                Rejection::CertificateUntrusted,
                says,
            );
        }
    }

    #[test]
    fn the_identity_must_be_one_and_readable() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        for (section, says) in [
            ("leaf_no_issuer", "names no OIDC issuer"),
            ("leaf_issuers_disagree", "the issuer extensions disagree"),
            ("leaf_two_sans", "2 subject alternative names, not one"),
            ("leaf_no_san", "no subject alternative name"),
            ("leaf_dns_san", "not a URI, an email or a Fulcio username"),
        ] {
            let leaf = pki.issue(section, &intermediate, section, 1);
            assert_refused(
                refusal(&trusted, &leaf, &[], during(&leaf)),
                Rejection::Malformed,
                says,
            );
        }
    }

    #[test]
    fn issuers_must_be_cas_within_their_path_length() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        // Under the pathlen-0 intermediate, another CA, then the leaf.
        let below = pki.issue("below", &intermediate, "intermediate_any", 30);
        let leaf = pki.issue("leaf", &below, "leaf", 1);
        assert_refused(
            refusal(
                &root_of(&[&below, &intermediate, &root]),
                &leaf,
                &[],
                during(&leaf),
            ),
            Rejection::CertificateUntrusted,
            "PathLenConstraintViolated",
        );
        // A leaf issued by a leaf.
        let signer = pki.issue("signer", &intermediate, "leaf", 30);
        let leaf = pki.issue("leaf-of-leaf", &signer, "leaf", 1);
        let refused = refusal(
            &root_of(&[&signer, &intermediate, &root]),
            &leaf,
            &[],
            during(&leaf),
        );
        assert_eq!(refused.0, Rejection::CertificateUntrusted, "{}", refused.1);
    }

    #[test]
    fn what_is_not_a_certificate_is_malformed() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let trusted = root_of(&[&intermediate, &root]);
        let leaf = pki.issue("leaf", &intermediate, "leaf", 1);
        let time = during(&leaf);
        let (rejection, detail) = chain_only(&trusted, b"not DER", &[], time).unwrap_err();
        assert_eq!(rejection, Rejection::Malformed);
        assert!(detail.contains("not X.509"), "{detail}");
        let (rejection, detail) =
            chain_only(&trusted, &leaf.der, &[b"junk".to_vec()], time).unwrap_err();
        assert_eq!(rejection, Rejection::Malformed);
        assert!(
            detail.contains("chain certificate 0 is not X.509"),
            "{detail}"
        );
        let many = vec![intermediate.der.clone(); MAX_CARRIED_CHAIN + 1];
        let (rejection, detail) = chain_only(&trusted, &leaf.der, &many, time).unwrap_err();
        assert_eq!(rejection, Rejection::Malformed);
        assert!(detail.contains("over the limit of 8"), "{detail}");
        // A flipped bit in the leaf's signature: it still reads, and no longer chains.
        let mut forged = leaf.der.clone();
        let last = forged.len() - 2;
        forged[last] ^= 0x01;
        let (rejection, _) = chain_only(&trusted, &forged, &[], time).unwrap_err();
        assert_eq!(rejection, Rejection::CertificateUntrusted);
        // A time before 1970 certifies nothing.
        let (rejection, _) = chain_only(&trusted, &leaf.der, &[], -1).unwrap_err();
        assert_ne!(rejection, Rejection::CertificateUntrusted);
    }

    // ---- hostile input ----

    #[test]
    fn no_truncation_of_a_leaf_reads_or_certifies() {
        let root = fixture_root("trusted_root.json");
        let (leaf, time) = bundle_leaf("message.bundle.json");
        for length in 0..leaf.len() {
            assert!(Certificate::parse(&leaf[..length]).is_err(), "{length}");
            let (rejection, _) = verify(&root, &leaf[..length], &[], time).unwrap_err();
            assert_eq!(rejection, Rejection::Malformed, "{length}");
        }
        // Nor a byte after its end.
        let mut longer = leaf.clone();
        longer.push(0);
        assert_eq!(
            verify(&root, &longer, &[], time).unwrap_err().0,
            Rejection::Malformed
        );
    }

    #[test]
    fn no_single_bit_change_of_a_leaf_is_certified() {
        let root = fixture_root("trusted_root.json");
        let (leaf, time) = bundle_leaf("message.bundle.json");
        verify(&root, &leaf, &[], time).unwrap();
        for index in 0..leaf.len() {
            for bit in [0x01u8, 0x80] {
                let mut changed = leaf.clone();
                changed[index] ^= bit;
                assert!(
                    verify(&root, &changed, &[], time).is_err(),
                    "byte {index} ^ {bit:#04x} still certified"
                );
            }
        }
    }

    #[test]
    fn a_changed_root_certificate_certifies_nothing() {
        let (leaf, time) = bundle_leaf("message.bundle.json");
        let good = fixture_root("trusted_root.json");
        let anchor = good.authorities[0].chain[0].clone();
        // Every byte of the root's key changed in turn: the leaf's signature no longer verifies.
        let spki = Certificate::parse(&anchor).unwrap().spki;
        let at = anchor
            .windows(spki.len())
            .position(|w| w == spki.as_slice())
            .unwrap();
        for index in at + spki.len() - 32..at + spki.len() {
            let mut changed = anchor.clone();
            changed[index] ^= 0x01;
            let mut root = good.clone();
            root.authorities[0].chain[0] = changed;
            assert!(verify(&root, &leaf, &[], time).is_err(), "key byte {index}");
        }
    }

    // ---- SCTs ----

    /// The fixture leaf, its time, the fixture root and the DER SubjectPublicKeyInfo of the CA
    /// that issued the leaf (the root's one certificate).
    fn sct_setting() -> (Vec<u8>, i64, TrustedRoot, Vec<u8>) {
        let (leaf, time) = bundle_leaf("message.bundle.json");
        let root = fixture_root("trusted_root.json");
        let issuer_spki = Certificate::parse(&root.authorities[0].chain[0])
            .unwrap()
            .spki;
        (leaf, time, root, issuer_spki)
    }

    fn sct_refusal(root: &TrustedRoot, leaf: &[u8], issuer_spki: &[u8]) -> String {
        let read = Certificate::parse(leaf).unwrap();
        sct::check(root, leaf, &read, issuer_spki)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn the_sigstore_js_leaves_carry_an_sct_of_the_roots_ct_log() {
        let (leaf, _, root, issuer_spki) = sct_setting();
        let read = Certificate::parse(&leaf).unwrap();
        assert!(read.extension(sct::OID_SCT_LIST).is_some());
        sct::check(&root, &leaf, &read, &issuer_spki).unwrap();
        // Another issuer's key hash is another signed text.
        let other =
            Certificate::parse(&fixture_root("trusted_root.json").authorities[0].chain[0]).unwrap();
        let mut wrong_issuer = other.spki.clone();
        let last = wrong_issuer.len() - 1;
        wrong_issuer[last] ^= 0x01;
        let error = sct_refusal(&root, &leaf, &wrong_issuer);
        assert!(error.contains("does not verify"), "{error}");
    }

    #[test]
    fn a_root_without_the_leafs_ct_log_refuses_it() {
        let (leaf, time, good, issuer_spki) = sct_setting();
        // No CT log at all.
        let mut root = good.clone();
        root.ct_logs.clear();
        let (rejection, detail) = verify(&root, &leaf, &[], time).unwrap_err();
        assert_eq!(rejection, Rejection::CertificateUntrusted, "{detail}");
        assert!(detail.contains("names no CT log"), "{detail}");
        // A CT log of another id (the transparency log's).
        let mut root = good.clone();
        root.ct_logs = good.logs.clone();
        let (rejection, detail) = verify(&root, &leaf, &[], time).unwrap_err();
        assert_eq!(rejection, Rejection::CertificateUntrusted, "{detail}");
        assert!(
            detail.contains("which the trusted root does not name"),
            "{detail}"
        );
        // The leaf's log id with another key (the transparency log's).
        let mut root = good.clone();
        root.ct_logs[0].key = good.logs[0].key.clone();
        let error = sct_refusal(&root, &leaf, &issuer_spki);
        assert!(error.contains("does not verify"), "{error}");
        // The log not valid at the SCT's timestamp: starting after it, or ended before it.
        let mut root = good.clone();
        root.ct_logs[0].valid_from = time + 3600;
        let error = sct_refusal(&root, &leaf, &issuer_spki);
        assert!(error.contains("outside the validity"), "{error}");
        let mut root = good.clone();
        root.ct_logs[0].valid_until = Some(good.ct_logs[0].valid_from);
        let error = sct_refusal(&root, &leaf, &issuer_spki);
        assert!(error.contains("outside the validity"), "{error}");
        // Both at once: the one that is right is enough.
        let mut root = good.clone();
        root.ct_logs.insert(0, good.logs[0].clone());
        verify(&root, &leaf, &[], time).unwrap();
    }

    #[test]
    fn a_leaf_without_an_sct_is_untrusted() {
        let pki = Pki::new();
        let (root, intermediate) = fulcio(&pki);
        let leaf = pki.issue("leaf", &intermediate, "leaf", 1);
        let mut trusted = root_of(&[&intermediate, &root]);
        chain_only(&trusted, &leaf.der, &[], during(&leaf)).unwrap();
        for ct_logs in [Vec::new(), fixture_root("trusted_root.json").ct_logs] {
            trusted.ct_logs = ct_logs;
            assert_refused(
                verify(&trusted, &leaf.der, &[], during(&leaf)).unwrap_err(),
                Rejection::CertificateUntrusted,
                "carries no SCT",
            );
        }
    }

    #[test]
    fn no_single_bit_change_of_the_sct_list_verifies() {
        let (leaf, _, root, issuer_spki) = sct_setting();
        let value = Certificate::parse(&leaf)
            .unwrap()
            .extension(sct::OID_SCT_LIST)
            .unwrap()
            .value
            .clone();
        let at = leaf
            .windows(value.len())
            .position(|w| w == value.as_slice())
            .unwrap();
        let mut refused = 0;
        for index in at..at + value.len() {
            for bit in [0x01, 0x80] {
                let mut changed = leaf.clone();
                changed[index] ^= bit;
                // A change that breaks the certificate's DER is refused before the SCTs.
                let Ok(read) = Certificate::parse(&changed) else {
                    continue;
                };
                assert!(
                    sct::check(&root, &changed, &read, &issuer_spki).is_err(),
                    "byte {index} bit {bit:#x}"
                );
                refused += 1;
            }
        }
        assert!(refused > 2 * 100, "{refused}");
        // The signature's last byte, the timestamp's last byte: each its own refusal.
        let signature_end = at + value.len() - 1;
        let mut changed = leaf.clone();
        changed[signature_end] ^= 0x01;
        let error = sct_refusal(&root, &changed, &issuer_spki);
        assert!(error.contains("does not verify"), "{error}");
    }

    #[test]
    fn a_change_of_the_leafs_tbs_breaks_its_sct() {
        let (leaf, _, root, issuer_spki) = sct_setting();
        // The serial number's last byte (the leaf's CA signature is not checked here: this is
        // the SCT's own check of what it signed).
        let read = Certificate::parse(&leaf).unwrap();
        let at = leaf
            .windows(read.spki.len())
            .position(|w| w == read.spki.as_slice())
            .unwrap();
        let mut changed = leaf.clone();
        changed[at + read.spki.len() - 1] ^= 0x01;
        let error = sct_refusal(&root, &changed, &issuer_spki);
        assert!(error.contains("does not verify"), "{error}");
    }

    #[test]
    fn hostile_sct_lists_are_refused_within_their_bounds() {
        let (leaf, _, root, issuer_spki) = sct_setting();
        let value = Certificate::parse(&leaf)
            .unwrap()
            .extension(sct::OID_SCT_LIST)
            .unwrap()
            .value
            .clone();
        // The value: OCTET STRING (04 len) around a 2-byte list length and the SCTs.
        let header = if value[1] < 0x80 {
            2
        } else {
            2 + usize::from(value[1] & 0x7f)
        };
        let list = &value[header..];
        let one = &list[2..];
        let with = |entries: &[u8]| -> Vec<u8> {
            let mut body = (entries.len() as u16).to_be_bytes().to_vec();
            body.extend_from_slice(entries);
            body
        };
        let read = |body: &[u8]| -> Result<(), sct::SctError> {
            // The check reads the list before anything else; a stand-in certificate whose
            // extension holds `body` is not needed: the reader is reached through `check` with
            // the extension replaced in a parsed copy.
            let mut parsed = Certificate::parse(&leaf).unwrap();
            let extension = parsed
                .extensions
                .iter_mut()
                .find(|e| e.oid == sct::OID_SCT_LIST)
                .unwrap();
            let mut wrapped = vec![0x04];
            if body.len() < 0x80 {
                wrapped.push(body.len() as u8);
            } else if body.len() < 0x100 {
                wrapped.extend_from_slice(&[0x81, body.len() as u8]);
            } else {
                wrapped.extend_from_slice(&[0x82, (body.len() >> 8) as u8, body.len() as u8]);
            }
            wrapped.extend_from_slice(body);
            extension.value = wrapped;
            sct::check(&root, &leaf, &parsed, &issuer_spki)
        };
        read(list).unwrap();
        // Too many SCTs: refused by count, before any is judged.
        let many: Vec<u8> = one.repeat(sct::MAX_SCTS + 1);
        let error = read(&with(&many)).unwrap_err();
        assert_eq!(
            error,
            sct::SctError::List(Box::new(sct::SctError::TooMany)),
            "{error}"
        );
        assert!(error.to_string().contains("over 16 SCTs"), "{error}");
        // As many as allowed, the good one last: read and verified.
        let mut bad = one.to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 0x01;
        let mut entries = bad.repeat(sct::MAX_SCTS - 1);
        entries.extend_from_slice(one);
        read(&with(&entries)).unwrap();
        // Only bad ones: each named.
        let error = read(&with(&bad.repeat(2))).unwrap_err().to_string();
        assert!(
            error.contains("SCT 0:") && error.contains("SCT 1:"),
            "{error}"
        );
        // One byte more inside the SCT's own length.
        let mut trailing = ((one.len() - 2 + 1) as u16).to_be_bytes().to_vec();
        trailing.extend_from_slice(&one[2..]);
        trailing.push(0);
        for (body, says) in [
            (with(&trailing), "bytes after its signature"),
            (Vec::new(), "cut short"),
            (vec![0, 0], "an empty SCT list"),
            ([list, &[0][..]].concat(), "bytes after the SCT list"),
            (with(&one[..one.len() - 1]), "cut short"),
            (with(&[0, 1, 0]), "cut short"),
            (with(&[one, &[0, 0]][..].concat()), "cut short"),
        ] {
            let error = read(&body).unwrap_err().to_string();
            assert!(error.contains(says), "{error:?} does not say {says:?}");
        }
        // A version other than v1 does not count.
        let mut v2 = one.to_vec();
        v2[2] = 1;
        let error = read(&with(&v2)).unwrap_err();
        assert_eq!(
            error,
            sct::SctError::NoneSigned {
                problems: vec![(0, sct::SctRefusal::Version { version: 1 })]
            }
        );
        // Another hash algorithm, another signature algorithm: not counted.
        let extensions_length = usize::from(u16::from_be_bytes([one[2 + 41], one[2 + 42]]));
        let algorithms = 2 + 43 + extensions_length;
        for (offset, value, says) in [(0, 5, "hash algorithm 5"), (1, 1, "signature algorithm 1")] {
            let mut changed = one.to_vec();
            changed[algorithms + offset] = value;
            let error = read(&with(&changed)).unwrap_err().to_string();
            assert!(error.contains(says), "{error:?} does not say {says:?}");
        }
        // Not an OCTET STRING inside the extension.
        let mut parsed = Certificate::parse(&leaf).unwrap();
        for extension in &mut parsed.extensions {
            if extension.oid == sct::OID_SCT_LIST {
                extension.value[0] = 0x30;
            }
        }
        let error = sct::check(&root, &leaf, &parsed, &issuer_spki).unwrap_err();
        assert!(
            matches!(&error, sct::SctError::List(inner) if matches!(**inner, sct::SctError::Extension(_))),
            "{error}"
        );
    }
}
