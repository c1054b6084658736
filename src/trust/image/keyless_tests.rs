//! Tests of [`super`]: the cosign ≤ v2 annotations of sigstore-js's fixtures (through
//! [`super::super::cosign_v2::judge`], the way in), each refusal variant, and each check on its
//! own.

use base64::Engine as _;

use super::*;
use crate::trust::image::cosign_v2::{
    self, ANNOTATION_BUNDLE, ANNOTATION_CERTIFICATE, ANNOTATION_CHAIN,
};
use crate::trust::image::material::CosignSignature;
use crate::trust::image::policy::{SigstoreIdentity, SigstorePolicy};
use crate::trust::test_support::*;
use crate::trust::x509::trusted_root::TrustedRoot;

fn fixture_text(name: &str) -> String {
    fs_err::read_to_string(format!(
        "{}/tests/fixtures/sigstore/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn meta() -> serde_json::Value {
    serde_json::from_str(&fixture_text("meta.json")).unwrap()
}

fn identity() -> SigstoreIdentity {
    let meta = meta();
    SigstoreIdentity {
        issuer: meta["issuer"].as_str().unwrap().to_owned(),
        subject: meta["subject"].as_str().unwrap().to_owned(),
    }
}

fn policy(root_name: &str) -> PublisherPolicy {
    PublisherPolicy {
        keys: Vec::new(),
        sigstore: Some(SigstorePolicy {
            root: TrustedRoot::parse(fixture_text(root_name).as_bytes()).unwrap(),
            identities: vec![identity()],
        }),
    }
}

fn layer(name: &str) -> CosignSignature {
    let value: serde_json::Value = serde_json::from_str(&fixture_text(name)).unwrap();
    CosignSignature {
        payload: value["payload"].as_str().unwrap().to_owned(),
        annotations: serde_json::from_value(value["annotations"].clone()).unwrap(),
        found_at: name.to_owned(),
    }
}

fn pinned() -> String {
    meta()["digest"].as_str().unwrap().to_owned()
}

fn verdict(root_name: &str, name: &str) -> Option<Rejection> {
    cosign_v2::judge(&layer(name), &pinned(), &policy(root_name))
        .err()
        .map(|(rejection, _)| rejection)
}

#[test]
fn the_cosign_v2_annotations_of_the_fixtures_verify_keyless() {
    let identity = identity();
    assert_eq!(
        cosign_v2::judge(
            &layer("cosign-v2.json"),
            &pinned(),
            &policy("trusted_root.json")
        ),
        Ok(Publisher::Identity {
            issuer: identity.issuer,
            subject: identity.subject
        })
    );
    assert_eq!(
        verdict("trusted_root.json", "legacy-issuer/cosign-v2.json"),
        None
    );
}

#[test]
fn each_refusal_variant_of_the_fixtures_is_refused_for_its_reason() {
    let cases = [
        (
            "trusted_root.json",
            "other-subject/cosign-v2.json",
            Rejection::IdentityNotAllowed,
        ),
        (
            "trusted_root.json",
            "other-issuer/cosign-v2.json",
            Rejection::IdentityNotAllowed,
        ),
        (
            "trusted_root.json",
            "other-ca/cosign-v2.json",
            Rejection::CertificateUntrusted,
        ),
        (
            "trusted_root.json",
            "other-log/cosign-v2.json",
            Rejection::LogEntryInvalid,
        ),
        (
            "trusted_root.json",
            "expired/cosign-v2.json",
            Rejection::CertificateExpired,
        ),
        (
            "trusted_root.json",
            "no-issuer/cosign-v2.json",
            Rejection::Malformed,
        ),
        (
            "trusted_root.log-ended.json",
            "cosign-v2.json",
            Rejection::LogEntryInvalid,
        ),
        (
            "trusted_root.ca-ended.json",
            "cosign-v2.json",
            Rejection::CertificateExpired,
        ),
    ];
    for (root_name, name, expected) in cases {
        assert_eq!(
            verdict(root_name, name),
            Some(expected),
            "{root_name} {name}"
        );
    }
}

#[test]
fn a_keyless_signature_needs_a_sigstore_policy_and_its_rekor_bundle() {
    let signature = layer("cosign-v2.json");
    let unconfigured = PublisherPolicy {
        keys: vec![TestKey::p256().public()],
        sigstore: None,
    };
    assert_eq!(
        cosign_v2::judge(&signature, &pinned(), &unconfigured)
            .unwrap_err()
            .0,
        Rejection::NotConfigured
    );
    let mut without = signature.clone();
    without.annotations.remove(ANNOTATION_BUNDLE);
    assert_eq!(
        cosign_v2::judge(&without, &pinned(), &policy("trusted_root.json"))
            .unwrap_err()
            .0,
        Rejection::LogEntryMissing
    );
}

#[test]
fn unreadable_certificates_chains_and_bundles_are_malformed() {
    let signature = layer("cosign-v2.json");
    let certificate = signature.annotations[ANNOTATION_CERTIFICATE].clone();
    let cases = [
        (ANNOTATION_CERTIFICATE, "not pem".to_owned()),
        (
            ANNOTATION_CERTIFICATE,
            format!("{certificate}{certificate}"),
        ),
        (
            ANNOTATION_CERTIFICATE,
            certificate.replace("CERTIFICATE", "PUBLIC KEY"),
        ),
        (ANNOTATION_CHAIN, certificate.repeat(9)),
        (ANNOTATION_CHAIN, "junk".to_owned()),
        (ANNOTATION_BUNDLE, "{".to_owned()),
        (ANNOTATION_BUNDLE, "{\"Payload\":{}}".to_owned()),
    ];
    for (annotation, value) in cases {
        let mut changed = signature.clone();
        changed.annotations.insert(annotation.to_owned(), value);
        let refused =
            cosign_v2::judge(&changed, &pinned(), &policy("trusted_root.json")).unwrap_err();
        assert_eq!(
            refused.0,
            Rejection::Malformed,
            "{annotation}: {}",
            refused.1
        );
    }
}

#[test]
fn a_rekor_bundle_about_another_payload_or_signature_is_a_mismatch() {
    let signature = layer("cosign-v2.json");
    let payload = signature.payload.as_bytes();
    let encoded = &signature.annotations["dev.cosignproject.cosign/signature"];
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    let policy = policy("trusted_root.json");
    let certificate = &signature.annotations[ANNOTATION_CERTIFICATE];
    let bundle = Some(signature.annotations[ANNOTATION_BUNDLE].as_str());
    // Another payload (e.g. a transplanted signature's payload rewritten to this image).
    let refused = judge_v2(b"{}", &bytes, certificate, None, bundle, &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::LogEntryMismatch);
    let mut other = bytes.clone();
    let last = other.len() - 1;
    other[last] ^= 1;
    let refused = judge_v2(payload, &other, certificate, None, bundle, &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::LogEntryMismatch);
    // The same signature with another certificate of the same CA: the entry names the original.
    let other_leaf =
        layer("other-subject/cosign-v2.json").annotations[ANNOTATION_CERTIFICATE].clone();
    let refused = judge_v2(payload, &bytes, &other_leaf, None, bundle, &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::LogEntryMismatch);
}

#[test]
fn a_logged_signature_the_leaf_does_not_verify_is_a_bad_signature() {
    let log = TestKey::p256();
    let mut policy = policy("trusted_root.json");
    if let Some(sigstore) = &mut policy.sigstore {
        sigstore.root.logs.push(log.log_key(0, None));
    }
    let signature = layer("cosign-v2.json");
    let certificate = &signature.annotations[ANNOTATION_CERTIFICATE];
    let leaf = pem::certificates(certificate, 1).unwrap().remove(0);
    let payload = signature.payload.as_bytes();
    let forged = TestKey::p256().sign(payload);
    let body = hashedrekord_body(payload, &forged, &pem("CERTIFICATE", &leaf));
    let entry = entry(&log, body, 9, meta()["signed_at"].as_i64().unwrap());
    let annotation = serde_json::json!({
        "SignedEntryTimestamp": b64(entry.promise.as_ref().unwrap()),
        "Payload": {
            "body": b64(&entry.body),
            "integratedTime": entry.integrated_time,
            "logIndex": entry.log_index,
            "logID": crate::support::hex::encode(&entry.log_id),
        }
    })
    .to_string();
    let refused = judge_v2(
        payload,
        &forged,
        certificate,
        None,
        Some(&annotation),
        &policy,
    )
    .unwrap_err();
    assert_eq!(refused.0, Rejection::BadSignature, "{}", refused.1);
}
