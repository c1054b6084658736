//! Tests of [`super`]: the sigstore-js bundles (made against @sigstore/mock) with their trusted
//! root, each refusal variant, and hand-made bundles for each check on its own.

use super::*;
use crate::trust::image::policy::SigstoreIdentity;
use crate::trust::image::policy::SigstorePolicy;
use crate::trust::test_support::*;
use crate::trust::x509::trusted_root::TrustedRoot;

const V03: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
const V02: &str = "application/vnd.dev.sigstore.bundle+json;version=0.2";
const V01: &str = "application/vnd.dev.sigstore.bundle+json;version=0.1";

fn fixture_path(name: &str) -> String {
    format!(
        "{}/tests/fixtures/sigstore/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn fixture_text(name: &str) -> String {
    fs_err::read_to_string(fixture_path(name)).unwrap()
}

fn meta() -> serde_json::Value {
    serde_json::from_str(&fixture_text("meta.json")).unwrap()
}

/// The image digest the DSSE fixtures sign.
fn pinned() -> String {
    meta()["digest"].as_str().unwrap().to_owned()
}

/// The "image" the message fixtures sign: `payload.json` stands for the manifest.
fn message_pinned() -> String {
    format!(
        "sha256:{}",
        hex::sha256_hex(fixture_text("payload.json").as_bytes())
    )
}

fn identity() -> SigstoreIdentity {
    let meta = meta();
    SigstoreIdentity {
        issuer: meta["issuer"].as_str().unwrap().to_owned(),
        subject: meta["subject"].as_str().unwrap().to_owned(),
    }
}

fn root(name: &str) -> TrustedRoot {
    TrustedRoot::parse(fixture_text(name).as_bytes()).unwrap()
}

fn keyless_policy(root: TrustedRoot) -> PublisherPolicy {
    PublisherPolicy {
        keys: Vec::new(),
        sigstore: Some(SigstorePolicy {
            root,
            identities: vec![identity()],
        }),
    }
}

fn sigstore_bundle(media_type: &str, json: String) -> SigstoreBundle {
    SigstoreBundle {
        media_type: media_type.to_owned(),
        json,
        found_at: "test".to_owned(),
    }
}

fn fixture_bundle(name: &str) -> SigstoreBundle {
    let json = fixture_text(name);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    sigstore_bundle(value["mediaType"].as_str().unwrap(), json)
}

/// Our verdict on a fixture: `None` accepted, else the rejection.
fn verdict(root_name: &str, bundle_name: &str) -> Option<Rejection> {
    let pinned = if bundle_name.contains("dsse") {
        pinned()
    } else {
        message_pinned()
    };
    match judge(
        &fixture_bundle(bundle_name),
        &pinned,
        &keyless_policy(root(root_name)),
    ) {
        Ok(signer) => {
            let identity = identity();
            assert_eq!(
                signer,
                Publisher::Identity {
                    issuer: identity.issuer,
                    subject: identity.subject
                }
            );
            None
        }
        Err((rejection, _)) => Some(rejection),
    }
}

const BUNDLES: [&str; 3] = [
    "message.bundle.json",
    "message.v02.bundle.json",
    "dsse.bundle.json",
];

#[test]
fn the_bundles_sigstore_js_made_verify_keyless() {
    for bundle in BUNDLES {
        assert_eq!(verdict("trusted_root.json", bundle), None, "{bundle}");
        let legacy = format!("legacy-issuer/{bundle}");
        assert_eq!(verdict("trusted_root.json", &legacy), None, "{legacy}");
    }
}

#[test]
fn each_refusal_variant_of_the_fixtures_is_refused_for_its_reason() {
    let cases = [
        (
            "trusted_root.json",
            "other-subject",
            Rejection::IdentityNotAllowed,
        ),
        (
            "trusted_root.json",
            "other-issuer",
            Rejection::IdentityNotAllowed,
        ),
        (
            "trusted_root.json",
            "other-ca",
            Rejection::CertificateUntrusted,
        ),
        ("trusted_root.json", "other-log", Rejection::LogEntryInvalid),
        (
            "trusted_root.json",
            "expired",
            Rejection::CertificateExpired,
        ),
        ("trusted_root.json", "no-issuer", Rejection::Malformed),
        (
            "trusted_root.log-ended.json",
            "",
            Rejection::LogEntryInvalid,
        ),
        (
            "trusted_root.ca-ended.json",
            "",
            Rejection::CertificateExpired,
        ),
    ];
    for (root_name, folder, expected) in cases {
        for bundle in BUNDLES {
            let name = if folder.is_empty() {
                bundle.to_owned()
            } else {
                format!("{folder}/{bundle}")
            };
            assert_eq!(
                verdict(root_name, &name),
                Some(expected),
                "{root_name} {name}"
            );
        }
    }
}

#[test]
fn a_signature_for_another_image_is_not_this_image() {
    let policy = keyless_policy(root("trusted_root.json"));
    let other = format!("sha256:{}", "0".repeat(64));
    for bundle in BUNDLES {
        let refused = judge(&fixture_bundle(bundle), &other, &policy).unwrap_err();
        assert_eq!(refused.0, Rejection::NotThisImage, "{bundle}");
    }
    // The message bundle's digest is the payload's, not the image the payload names.
    let refused = judge(&fixture_bundle("message.bundle.json"), &pinned(), &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::NotThisImage);
}

#[test]
fn keyless_bundles_need_a_sigstore_policy_and_a_log_entry() {
    let unconfigured = PublisherPolicy {
        keys: vec![TestKey::p256().public()],
        sigstore: None,
    };
    let refused = judge(
        &fixture_bundle("dsse.bundle.json"),
        &pinned(),
        &unconfigured,
    )
    .unwrap_err();
    assert_eq!(refused.0, Rejection::NotConfigured);

    let mut value: serde_json::Value =
        serde_json::from_str(&fixture_text("dsse.bundle.json")).unwrap();
    value["verificationMaterial"]
        .as_object_mut()
        .unwrap()
        .remove("tlogEntries");
    let bundle = sigstore_bundle(V03, value.to_string());
    let policy = keyless_policy(root("trusted_root.json"));
    assert_eq!(
        judge(&bundle, &pinned(), &policy).unwrap_err().0,
        Rejection::LogEntryMissing
    );
    value["verificationMaterial"]["tlogEntries"] = serde_json::json!([]);
    let bundle = sigstore_bundle(V03, value.to_string());
    assert_eq!(
        judge(&bundle, &pinned(), &policy).unwrap_err().0,
        Rejection::LogEntryMissing
    );
}

#[test]
fn a_tampered_fixture_is_refused() {
    let policy = keyless_policy(root("trusted_root.json"));
    let original: serde_json::Value =
        serde_json::from_str(&fixture_text("dsse.bundle.json")).unwrap();
    // Another signature in the envelope: the log entry records the original one.
    let mut value = original.clone();
    let sig = value["dsseEnvelope"]["signatures"][0]["sig"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut bytes = base64::engine::general_purpose::STANDARD
        .decode(sig)
        .unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    value["dsseEnvelope"]["signatures"][0]["sig"] = b64(&bytes).into();
    let refused = judge(&sigstore_bundle(V03, value.to_string()), &pinned(), &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::LogEntryMismatch);
    // A tampered SET.
    let mut value = original.clone();
    let set = &mut value["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"]["signedEntryTimestamp"];
    let mut bytes = base64::engine::general_purpose::STANDARD
        .decode(set.as_str().unwrap())
        .unwrap();
    bytes[10] ^= 1;
    *set = b64(&bytes).into();
    let refused = judge(&sigstore_bundle(V03, value.to_string()), &pinned(), &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::LogEntryInvalid);
    // A v0.3 bundle's entry without its inclusion proof.
    let mut value = original.clone();
    value["verificationMaterial"]["tlogEntries"][0]
        .as_object_mut()
        .unwrap()
        .remove("inclusionProof");
    let refused = judge(&sigstore_bundle(V03, value.to_string()), &pinned(), &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::Malformed);
    // As a v0.1 bundle the promise suffices (a v0.1 bundle has a chain, not a certificate).
    let leaf = value["verificationMaterial"]["certificate"]["rawBytes"].clone();
    let material = value["verificationMaterial"].as_object_mut().unwrap();
    material.remove("certificate");
    material.insert(
        "x509CertificateChain".into(),
        serde_json::json!({"certificates": [{"rawBytes": leaf}]}),
    );
    value["mediaType"] = V01.into();
    assert!(judge(&sigstore_bundle(V01, value.to_string()), &pinned(), &policy).is_ok());
}

/// A keyless case on the fixture's CA and leaf, logged by a test log the root also trusts: any
/// signature can be logged, so the signature check itself is reached.
#[test]
fn a_logged_signature_that_does_not_verify_under_the_leaf_is_a_bad_signature() {
    let log = TestKey::p256();
    let mut root = root("trusted_root.json");
    root.logs.push(log.log_key(0, None));
    let policy = keyless_policy(root);
    let fixture: serde_json::Value =
        serde_json::from_str(&fixture_text("message.bundle.json")).unwrap();
    let leaf_b64 = fixture["verificationMaterial"]["certificate"]["rawBytes"]
        .as_str()
        .unwrap();
    let leaf = base64::engine::general_purpose::STANDARD
        .decode(leaf_b64)
        .unwrap();
    let payload = fixture_text("payload.json").into_bytes();
    let stranger = TestKey::p256();
    let signed_at = meta()["signed_at"].as_i64().unwrap();
    let bundle_for = |signature: &[u8]| {
        let body = hashedrekord_body(&payload, signature, &pem("CERTIFICATE", &leaf));
        let entry = with_proof(entry(&log, body, 3, signed_at), &log, 0, 0);
        let json = serde_json::json!({
            "mediaType": V03,
            "verificationMaterial": {
                "certificate": {"rawBytes": leaf_b64},
                "tlogEntries": [entry_json(&entry, "hashedrekord")],
            },
            "messageSignature": {
                "messageDigest": {"algorithm": "SHA2_256", "digest": b64(&sha256(&payload))},
                "signature": b64(signature),
            },
        });
        sigstore_bundle(V03, json.to_string())
    };
    let bad = bundle_for(&stranger.sign(&payload));
    let refused = judge(&bad, &message_pinned(), &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::BadSignature, "{}", refused.1);
    // The same construction with the fixture's real signature is accepted.
    let real = base64::engine::general_purpose::STANDARD
        .decode(fixture["messageSignature"]["signature"].as_str().unwrap())
        .unwrap();
    assert!(judge(&bundle_for(&real), &message_pinned(), &policy).is_ok());
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).to_vec()
}

/// A log entry as a bundle's `tlogEntries` element.
fn entry_json(entry: &LogEntry, kind: &str) -> serde_json::Value {
    let mut json = serde_json::json!({
        "logIndex": entry.log_index.to_string(),
        "logId": {"keyId": b64(&entry.log_id)},
        "kindVersion": {"kind": kind, "version": "0.0.1"},
        "integratedTime": entry.integrated_time.to_string(),
        "canonicalizedBody": b64(&entry.body),
    });
    if let Some(promise) = &entry.promise {
        json["inclusionPromise"] = serde_json::json!({"signedEntryTimestamp": b64(promise)});
    }
    if let Some(proof) = &entry.proof {
        json["inclusionProof"] = serde_json::json!({
            "logIndex": proof.log_index.to_string(),
            "rootHash": b64(&proof.root_hash),
            "treeSize": proof.tree_size.to_string(),
            "hashes": proof.hashes.iter().map(|h| b64(h)).collect::<Vec<_>>(),
            "checkpoint": {"envelope": proof.checkpoint},
        });
    }
    json
}

/// A key-based DSSE bundle over a cosign statement for `subject_hex`.
struct KeyCase {
    key: TestKey,
    statement: Vec<u8>,
    signature: Vec<u8>,
}

const SUBJECT: &str = "9ea43bf1799c665c1f6ac0b6bbf7b399a3afe729953437fc7830a2316280e34c";

impl KeyCase {
    fn new() -> KeyCase {
        let key = TestKey::p256();
        let statement = serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"digest": {"sha256": SUBJECT}}],
            "predicateType": dsse::COSIGN_SIGN_PREDICATE,
            "predicate": {},
        })
        .to_string()
        .into_bytes();
        let signature = key.sign(&dsse::pae(dsse::IN_TOTO_PAYLOAD_TYPE, &statement));
        KeyCase {
            key,
            statement,
            signature,
        }
    }

    fn json(&self, entries: Vec<serde_json::Value>) -> serde_json::Value {
        serde_json::json!({
            "mediaType": V03,
            "verificationMaterial": {
                "publicKey": {"hint": "whatever"},
                "tlogEntries": entries,
            },
            "dsseEnvelope": {
                "payload": b64(&self.statement),
                "payloadType": dsse::IN_TOTO_PAYLOAD_TYPE,
                "signatures": [{"sig": b64(&self.signature), "keyid": ""}],
            },
        })
    }

    fn policy(&self) -> PublisherPolicy {
        PublisherPolicy {
            keys: vec![TestKey::p256().public(), self.key.public()],
            sigstore: None,
        }
    }

    fn judge(
        &self,
        json: &serde_json::Value,
        policy: &PublisherPolicy,
    ) -> Result<Publisher, (Rejection, String)> {
        judge(
            &sigstore_bundle(V03, json.to_string()),
            &format!("sha256:{SUBJECT}"),
            policy,
        )
    }
}

#[test]
fn a_key_based_bundle_verifies_under_a_configured_key_without_a_log_entry() {
    let case = KeyCase::new();
    assert_eq!(
        case.judge(&case.json(Vec::new()), &case.policy()),
        Ok(Publisher::Key {
            fingerprint: case.key.public().fingerprint()
        })
    );
}

#[test]
fn a_key_based_bundle_needs_a_configured_key_that_verifies_it() {
    let case = KeyCase::new();
    let none = PublisherPolicy {
        keys: Vec::new(),
        sigstore: Some(SigstorePolicy {
            root: root_with_logs(Vec::new()),
            identities: vec![identity()],
        }),
    };
    assert_eq!(
        case.judge(&case.json(Vec::new()), &none).unwrap_err().0,
        Rejection::NotConfigured
    );
    let other = PublisherPolicy {
        keys: vec![TestKey::p256().public()],
        sigstore: None,
    };
    assert_eq!(
        case.judge(&case.json(Vec::new()), &other).unwrap_err().0,
        Rejection::BadSignature
    );
    // A payload changed after signing (still naming the image).
    let mut json = case.json(Vec::new());
    let changed = String::from_utf8(case.statement.clone())
        .unwrap()
        .replace("\"predicate\":{}", "\"predicate\":{\"x\":1}");
    json["dsseEnvelope"]["payload"] = b64(changed.as_bytes()).into();
    assert_eq!(
        case.judge(&json, &case.policy()).unwrap_err().0,
        Rejection::BadSignature
    );
}

#[test]
fn a_key_based_bundles_log_entry_is_checked_when_a_trusted_root_is_configured() {
    let case = KeyCase::new();
    let log = TestKey::p256();
    let verifier = pem("PUBLIC KEY", &case.key.spki());
    let good_body = dsse_body(&case.statement, &[(&case.signature, &verifier)]);
    let good = with_proof(entry(&log, good_body.clone(), 5, 1_700_000_000), &log, 1, 2);
    let mut policy = case.policy();
    policy.sigstore = Some(SigstorePolicy {
        root: root_with_logs(vec![log.log_key(0, None)]),
        identities: Vec::new(),
    });
    assert!(
        case.judge(&case.json(vec![entry_json(&good, "dsse")]), &policy)
            .is_ok()
    );

    let mut forged = good.clone();
    forged.integrated_time += 1;
    assert_eq!(
        case.judge(&case.json(vec![entry_json(&forged, "dsse")]), &policy)
            .unwrap_err()
            .0,
        Rejection::LogEntryInvalid
    );
    let other_key = pem("PUBLIC KEY", &TestKey::p256().spki());
    let about_other = with_proof(
        entry(
            &log,
            dsse_body(&case.statement, &[(&case.signature, &other_key)]),
            5,
            1_700_000_000,
        ),
        &log,
        0,
        0,
    );
    assert_eq!(
        case.judge(&case.json(vec![entry_json(&about_other, "dsse")]), &policy)
            .unwrap_err()
            .0,
        Rejection::LogEntryMismatch
    );
    // Without a trusted root the entry is not judged (the key alone is the anchor).
    assert!(
        case.judge(
            &case.json(vec![entry_json(&forged, "dsse")]),
            &case.policy()
        )
        .is_ok()
    );
}

#[test]
fn a_key_based_message_signature_over_the_manifest_digest_verifies_prehashed() {
    let key = TestKey::p256();
    let manifest = b"{\"schemaVersion\":2}";
    let digest = sha256(manifest);
    let signature = key.sign(manifest);
    let json = |digest: &[u8], signature: &[u8]| {
        serde_json::json!({
            "mediaType": V03,
            "verificationMaterial": {"publicKey": {"hint": ""}},
            "messageSignature": {
                "messageDigest": {"algorithm": "SHA2_256", "digest": b64(digest)},
                "signature": b64(signature),
            },
        })
        .to_string()
    };
    let policy = PublisherPolicy {
        keys: vec![key.public()],
        sigstore: None,
    };
    let pinned = format!("sha256:{}", hex::encode(&digest));
    assert!(
        judge(
            &sigstore_bundle(V03, json(&digest, &signature)),
            &pinned,
            &policy
        )
        .is_ok()
    );
    let other = key.sign(b"other manifest");
    assert_eq!(
        judge(
            &sigstore_bundle(V03, json(&digest, &other)),
            &pinned,
            &policy
        )
        .unwrap_err()
        .0,
        Rejection::BadSignature
    );
    // An Ed25519 key cannot verify a digest: refused.
    let ed = TestKey::ed25519();
    let policy = PublisherPolicy {
        keys: vec![ed.public()],
        sigstore: None,
    };
    assert_eq!(
        judge(
            &sigstore_bundle(V03, json(&digest, &ed.sign(manifest))),
            &pinned,
            &policy
        )
        .unwrap_err()
        .0,
        Rejection::BadSignature
    );
}

/// Bundles outside the format, hostile ones and fields given twice: each refused as malformed.
#[path = "bundle_format_tests.rs"]
mod format;
