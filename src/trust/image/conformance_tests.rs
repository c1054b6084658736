//! The `sigstore/sigstore-conformance` bundle-verify cases (`tests/fixtures/sigstore-conformance`,
//! Apache-2.0, see its README) judged by [`super::bundle::judge`]: the artifact's SHA-256 stands
//! for the pinned digest (a message signature's digest, a DSSE statement's subject), the case's
//! identity (or the suite's default) is the one configured, its trusted root (or the public-good
//! root sigstore-python 4.5.1 ships) the root, its `key.pub` the configured key. Each case has its
//! expected verdict below: a `_fail` case must be refused (for the reason named), a happy path
//! accepted, and what our scope leaves out is named with why.

use std::path::{Path, PathBuf};

use crate::support::hex;
use crate::trust::image::bundle;
use crate::trust::image::material::SigstoreBundle;
use crate::trust::image::policy::{PublisherPolicy, SigstoreIdentity, SigstorePolicy};
use crate::trust::keys::public_key::PublicKey;
use crate::trust::verdict::Rejection;
use crate::trust::x509::trusted_root::TrustedRoot;

const DEFAULT_IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const DEFAULT_ISSUER: &str = "https://token.actions.githubusercontent.com";

fn base() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sigstore-conformance")
}

fn read_if(path: &Path) -> Option<String> {
    path.exists().then(|| fs_err::read_to_string(path).unwrap())
}

/// Our verdict on one case: `Ok(())` accepted, else the rejection and its detail.
pub fn judge_case(name: &str) -> Result<(), (Rejection, String)> {
    let dir = base().join("bundle-verify").join(name);
    let root_text = read_if(&dir.join("trusted_root.json")).unwrap_or_else(|| {
        fs_err::read_to_string(base().join("public-good.trusted_root.json")).unwrap()
    });
    let root = TrustedRoot::parse(root_text.as_bytes())
        .map_err(|e| (Rejection::Malformed, format!("trusted root: {e}")))?;
    let identity = SigstoreIdentity {
        issuer: read_if(&dir.join("issuer"))
            .map_or(DEFAULT_ISSUER.to_owned(), |s| s.trim().to_owned()),
        subject: read_if(&dir.join("identity"))
            .map_or(DEFAULT_IDENTITY.to_owned(), |s| s.trim().to_owned()),
    };
    let artifact = if dir.join("artifact").exists() {
        fs_err::read(dir.join("artifact")).unwrap()
    } else {
        fs_err::read(base().join("bundle-verify/a.txt")).unwrap()
    };
    let keys = match read_if(&dir.join("key.pub")) {
        Some(pem) => vec![
            PublicKey::from_pem(&pem)
                .map_err(|e| (Rejection::NotConfigured, format!("key.pub: {e}")))?,
        ],
        None => Vec::new(),
    };
    let policy = PublisherPolicy {
        keys,
        sigstore: Some(SigstorePolicy {
            root,
            identities: vec![identity],
        }),
    };
    let json = fs_err::read_to_string(dir.join("bundle.sigstore.json")).unwrap();
    let media_type = serde_json::from_str::<serde_json::Value>(&json)
        .ok()
        .and_then(|v| v["mediaType"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "application/vnd.dev.sigstore.bundle.v0.3+json".to_owned());
    let signature = SigstoreBundle {
        media_type,
        json,
        found_at: name.to_owned(),
    };
    let pinned = format!("sha256:{}", hex::sha256_hex(&artifact));
    bundle::judge(&signature, &pinned, &policy).map(|_| ())
}

/// The signature alone of a DSSE case (read, then [`bundle::judge_signature`]): the suite's
/// in-toto cases sign SLSA provenance, which [`super::dsse::binds`] refuses as not a cosign image
/// signature before any other check; this reaches the checks each case is about.
fn judge_dsse_signature(name: &str) -> Result<(), (Rejection, String)> {
    let dir = base().join("bundle-verify").join(name);
    let json = fs_err::read_to_string(dir.join("bundle.sigstore.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let signature = SigstoreBundle {
        media_type: value["mediaType"].as_str().unwrap().to_owned(),
        json,
        found_at: name.to_owned(),
    };
    let root_text = read_if(&dir.join("trusted_root.json")).unwrap_or_else(|| {
        fs_err::read_to_string(base().join("public-good.trusted_root.json")).unwrap()
    });
    let policy = PublisherPolicy {
        keys: Vec::new(),
        sigstore: Some(SigstorePolicy {
            root: TrustedRoot::parse(root_text.as_bytes()).unwrap(),
            identities: vec![SigstoreIdentity {
                issuer: DEFAULT_ISSUER.to_owned(),
                subject: read_if(&dir.join("identity"))
                    .map_or(DEFAULT_IDENTITY.to_owned(), |s| s.trim().to_owned()),
            }],
        }),
    };
    let read = bundle::Read::parse(&signature).map_err(|e| (Rejection::Malformed, e))?;
    bundle::judge_signature(&read, &policy).map(|_| ())
}

use Rejection::*;

/// Each case: our verdict through [`bundle::judge`] (`None`: accepted). Where the suite's
/// verdict differs, or the reason is not the case's own, the comment says why.
const EXPECTED: &[(&str, Option<Rejection>)] = &[
    ("bundle-empty-certificate-chain_fail", Some(Malformed)),
    ("bundle-from-wrong-instance_fail", Some(LogEntryInvalid)),
    ("bundle-invalid-base64-signature_fail", Some(Malformed)),
    ("bundle-malformed-json_fail", Some(Malformed)),
    ("bundle-negative-log-index_fail", Some(Malformed)),
    ("bundle-unknown-version_fail", Some(Malformed)),
    // Refused before the root certificate in its chain is looked at: its inclusion proof has no
    // checkpoint, which we require of every proof.
    ("bundle-with-root-cert_fail", Some(Malformed)),
    // Out of scope (suite: accept): its signing time comes from a TSA timestamp (no integrated
    // time); skillfold reads no timestamp authority, so it refuses.
    ("bundle-with-sct-with-extensions", Some(Malformed)),
    ("checkpoint-bad-keyhint_fail", Some(LogEntryInvalid)),
    ("checkpoint-wrong-roothash_fail", Some(LogEntryInvalid)),
    // The in-toto cases sign SLSA provenance, not a cosign image signature: refused as such.
    // `DSSE_SIGNATURE` below checks the signature of each.
    ("dsse-invalid-sig_fail", Some(Malformed)),
    ("dsse-mismatch-envelope_fail", Some(Malformed)),
    ("dsse-mismatch-sig_fail", Some(Malformed)),
    ("happy-path-intoto-in-dsse-v3", Some(Malformed)),
    ("happy-path-v0.1", None),
    ("happy-path-v0.2", None),
    ("happy-path-v0.3", None),
    ("happy-path-v0.3-new-mediaType", None),
    ("inclusion-proof-corrupted-hash_fail", Some(LogEntryInvalid)),
    // The entry's recorded key was changed, so the log's promise over the body fails first.
    ("incorrect-public-key_fail", Some(LogEntryInvalid)),
    ("integrated-time-in-future_fail", Some(CertificateExpired)),
    ("intoto-expired-certificate_fail", Some(Malformed)),
    ("intoto-log-entry-mismatch_fail", Some(Malformed)),
    ("intoto-missing-inclusion-proof_fail", Some(Malformed)),
    (
        "intoto-set-outside-signing-cert-validity_fail",
        Some(Malformed),
    ),
    (
        "intoto-tsa-timestamp-outside-cert-validity_fail",
        Some(Malformed),
    ),
    ("intoto-with-custom-trust-root", Some(Malformed)),
    ("invalid-checkpoint-signature_fail", Some(LogEntryInvalid)),
    // The leaf's SCT is from a CT log the root does not name (as sigstore-go and
    // sigstore-python refuse it).
    ("invalid-ct-key_fail", Some(CertificateUntrusted)),
    // Its old proof has no checkpoint: refused when read.
    ("invalid-inclusion-proof_fail", Some(Malformed)),
    ("managed-key-and-trusted-root", None),
    // Suite: accept with the key; its TSA timestamp is read past (a key bundle needs no time).
    ("managed-key-happy-path", None),
    ("managed-key-no-key_fail", Some(NotConfigured)),
    // Its key.pub is not a valid key (the suite's way to give a wrong key): not configurable.
    ("managed-key-wrong-key_fail", Some(NotConfigured)),
    ("message-digest-mismatch_fail", Some(NotThisImage)),
    ("set-invalid-signature_fail", Some(LogEntryInvalid)),
    ("signature-mismatch_fail", Some(LogEntryMismatch)),
    (
        "trust-root-tlog-missing-validity-start_fail",
        Some(Malformed),
    ),
    ("trust-root-tlog-validity-end-inclusive", None),
    // Out of scope (suite: accept): TSA time only.
    ("trust-root-tsa-validity-end-inclusive", Some(Malformed)),
    ("wrong-hashedrekord-artifact_fail", Some(LogEntryMismatch)),
    (
        "wrong-hashedrekord-cert-and-sig_fail",
        Some(LogEntryMismatch),
    ),
    ("wrong-hashedrekord-entry_fail", Some(LogEntryMismatch)),
    ("wrong-material_fail", Some(NotThisImage)),
];

/// The DSSE cases' signatures alone ([`judge_dsse_signature`]).
const DSSE_SIGNATURE: &[(&str, Option<Rejection>)] = &[
    // The envelope's signature was changed; the log entry records the original one.
    ("dsse-invalid-sig_fail", Some(LogEntryMismatch)),
    ("dsse-mismatch-envelope_fail", Some(LogEntryMismatch)),
    ("dsse-mismatch-sig_fail", Some(LogEntryMismatch)),
    ("happy-path-intoto-in-dsse-v3", None),
    // `intoto` 0.0.2 entries are refused as not about a DSSE signature (sigstore-python refuses
    // them too), before the expired certificate is looked at.
    ("intoto-expired-certificate_fail", Some(LogEntryMismatch)),
    ("intoto-log-entry-mismatch_fail", Some(LogEntryMismatch)),
    ("intoto-missing-inclusion-proof_fail", Some(Malformed)),
    (
        "intoto-set-outside-signing-cert-validity_fail",
        Some(LogEntryMismatch),
    ),
];

#[test]
fn every_conformance_case_gets_its_expected_verdict() {
    let mut names: Vec<String> = fs_err::read_dir(base().join("bundle-verify"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "a.txt")
        .collect();
    names.sort();
    let listed: Vec<&str> = EXPECTED.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, listed, "every copied case has an expectation");
    let mut wrong = Vec::new();
    for (name, expected) in EXPECTED {
        let got = judge_case(name);
        if got.as_ref().err().map(|(r, _)| *r) != *expected {
            wrong.push(format!("{name}: expected {expected:?}, got {got:?}"));
        }
    }
    for (name, expected) in DSSE_SIGNATURE {
        let got = judge_dsse_signature(name);
        if got.as_ref().err().map(|(r, _)| *r) != *expected {
            wrong.push(format!(
                "{name} (signature): expected {expected:?}, got {got:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
