//! Tests of [`super`]: each check refuses on its own, on hand-made entries, and the entries
//! sigstore-js wrote against @sigstore/mock's log verify.

use super::checkpoint::MAX_CHECKPOINT_SIGNATURES;
use super::*;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::test_support::*;

const TIME: i64 = 1_700_000_000;

struct Case {
    log: TestKey,
    signer: TestKey,
    message: Vec<u8>,
    signature: Vec<u8>,
}

impl Case {
    fn new() -> Case {
        let signer = TestKey::p256();
        let message = b"the signed payload".to_vec();
        let signature = signer.sign(&message);
        Case {
            log: TestKey::p256(),
            signer,
            message,
            signature,
        }
    }

    fn verifier_pem(&self) -> String {
        pem("PUBLIC KEY", &self.signer.spki())
    }

    fn body(&self) -> Vec<u8> {
        hashedrekord_body(&self.message, &self.signature, &self.verifier_pem())
    }

    fn entry(&self) -> LogEntry {
        entry(&self.log, self.body(), 42, TIME)
    }

    fn root(&self) -> TrustedRoot {
        root_with_logs(vec![self.log.log_key(TIME - 10, None)])
    }

    fn signed(&self) -> Signed<'_> {
        Signed::Message {
            message: &self.message,
            signature: &self.signature,
            verifier_der: self.signer_spki(),
        }
    }

    fn signer_spki(&self) -> &'static [u8] {
        Box::leak(self.signer.spki().into_boxed_slice())
    }

    fn verify(&self, entry: &LogEntry) -> Result<i64, (Rejection, String)> {
        verify(&self.root(), entry, self.signed())
    }
}

fn rejection(result: Result<i64, (Rejection, String)>) -> Rejection {
    result.expect_err("refused").0
}

#[test]
fn an_entry_with_a_valid_promise_verifies_and_gives_its_integrated_time() {
    let case = Case::new();
    assert_eq!(case.verify(&case.entry()), Ok(TIME));
}

#[test]
fn inclusion_proofs_verify_at_every_index_of_trees_up_to_17_leaves() {
    let case = Case::new();
    for size in 1..=17usize {
        for index in 0..size {
            let entry = with_proof(case.entry(), &case.log, index, size - 1);
            assert_eq!(case.verify(&entry), Ok(TIME), "size {size} index {index}");
        }
    }
}

#[test]
fn an_entry_of_a_log_outside_the_trusted_root_is_invalid() {
    let case = Case::new();
    let other = TestKey::p256();
    let root = root_with_logs(vec![other.log_key(0, None)]);
    let result = verify(&root, &case.entry(), case.signed());
    assert_eq!(rejection(result), Rejection::LogEntryInvalid);
}

#[test]
fn a_log_key_not_valid_at_the_integrated_time_is_invalid() {
    let case = Case::new();
    for (from, until) in [(TIME + 1, None), (0, Some(TIME - 1))] {
        let root = root_with_logs(vec![case.log.log_key(from, until)]);
        let result = verify(&root, &case.entry(), case.signed());
        assert_eq!(
            rejection(result),
            Rejection::LogEntryInvalid,
            "{from} {until:?}"
        );
    }
    // The bounds themselves are inside the window, as sigstore-go decides.
    let root = root_with_logs(vec![case.log.log_key(TIME, Some(TIME))]);
    assert_eq!(verify(&root, &case.entry(), case.signed()), Ok(TIME));
}

#[test]
fn an_entry_without_a_promise_is_invalid_even_with_a_valid_proof() {
    let case = Case::new();
    let mut entry = with_proof(case.entry(), &case.log, 0, 3);
    entry.promise = None;
    assert_eq!(rejection(case.verify(&entry)), Rejection::LogEntryInvalid);
}

#[test]
fn a_promise_over_other_fields_or_tampered_is_invalid() {
    let case = Case::new();
    let mut later = case.entry();
    later.integrated_time += 1;
    let mut moved = case.entry();
    moved.log_index += 1;
    let mut flipped = case.entry();
    if let Some(promise) = &mut flipped.promise {
        let last = promise.len() - 1;
        promise[last] ^= 1;
    }
    let mut other_body = case.entry();
    other_body.body.push(b' ');
    for entry in [later, moved, flipped, other_body] {
        assert_eq!(rejection(case.verify(&entry)), Rejection::LogEntryInvalid);
    }
}

#[test]
fn a_promise_of_a_log_with_a_non_ecdsa_key_is_invalid() {
    let mut case = Case::new();
    case.log = TestKey::ed25519();
    assert_eq!(
        rejection(case.verify(&case.entry())),
        Rejection::LogEntryInvalid
    );
}

#[test]
fn a_wrong_audit_path_is_invalid() {
    let case = Case::new();
    let good = with_proof(case.entry(), &case.log, 2, 6);
    let mut changed = good.clone();
    if let Some(proof) = &mut changed.proof {
        proof.hashes[1][0] ^= 1;
    }
    let mut short = good.clone();
    if let Some(proof) = &mut short.proof {
        proof.hashes.pop();
    }
    let mut long = good.clone();
    if let Some(proof) = &mut long.proof {
        proof.hashes.push(vec![0; 32]);
    }
    let mut outside = good.clone();
    if let Some(proof) = &mut outside.proof {
        proof.log_index = proof.tree_size;
    }
    let mut other_index = good.clone();
    if let Some(proof) = &mut other_index.proof {
        proof.log_index = 3;
    }
    let mut bad_length = good.clone();
    if let Some(proof) = &mut bad_length.proof {
        proof.hashes[0].push(0);
    }
    for (name, entry) in [
        ("changed", changed),
        ("short", short),
        ("long", long),
        ("outside", outside),
        ("other index", other_index),
        ("bad length", bad_length),
    ] {
        assert_eq!(
            rejection(case.verify(&entry)),
            Rejection::LogEntryInvalid,
            "{name}"
        );
    }
}

#[test]
fn a_checkpoint_for_another_tree_or_not_signed_by_the_log_is_invalid() {
    let case = Case::new();
    let good = with_proof(case.entry(), &case.log, 1, 4);
    let proof = good.proof.clone().unwrap();
    let stranger = TestKey::p256();
    let mut other_root = proof.root_hash.clone();
    other_root[0] ^= 1;
    let tampered = proof.checkpoint.replacen("Timestamp: 1", "Timestamp: 2", 1);
    let foreign = checkpoint(&stranger, proof.tree_size, &proof.root_hash);
    // The stranger's signature under the log's key hint.
    let note_end = foreign.find("\n\n").unwrap() + 1;
    let forged_sig = {
        let line = foreign[note_end + 1..].trim_end();
        let encoded = line.rsplit(' ').next().unwrap();
        let mut bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        bytes[..4].copy_from_slice(&case.log.log_id()[..4]);
        format!(
            "{}\n\u{2014} rekor.test {}\n",
            &foreign[..note_end],
            b64(&bytes)
        )
    };
    let cases = [
        (
            "other size",
            checkpoint(&case.log, proof.tree_size + 1, &proof.root_hash),
        ),
        (
            "other root",
            checkpoint(&case.log, proof.tree_size, &other_root),
        ),
        ("tampered note", tampered),
        ("other log's hint", foreign),
        ("other log's signature", forged_sig),
        (
            "no signatures",
            proof.checkpoint[..=proof.checkpoint.find("\n\n").unwrap() + 1].to_owned(),
        ),
        (
            "two blank lines",
            proof
                .checkpoint
                .replacen("Timestamp: 1\n", "\nTimestamp: 1\n", 1),
        ),
        (
            "not a signature line",
            format!("{}junk\n", proof.checkpoint),
        ),
        ("unterminated", proof.checkpoint.trim_end().to_owned()),
        (
            "no size",
            proof
                .checkpoint
                .replacen(&format!("\n{}\n", proof.tree_size), "\nsize\n", 1),
        ),
    ];
    for (name, text) in cases {
        let mut entry = good.clone();
        if let Some(proof) = &mut entry.proof {
            proof.checkpoint = text;
        }
        assert_eq!(
            rejection(case.verify(&entry)),
            Rejection::LogEntryInvalid,
            "{name}"
        );
    }
    // A signature line of another log alongside the log's own is read past.
    let mut entry = good.clone();
    if let Some(proof) = &mut entry.proof {
        let other = checkpoint(&stranger, 1, &[0; 32]);
        let line = &other[other.find("\n\n").unwrap() + 2..];
        proof.checkpoint.push_str(line);
    }
    assert_eq!(case.verify(&entry), Ok(TIME));
}

#[test]
fn a_body_about_another_message_signature_or_verifier_is_a_mismatch() {
    let case = Case::new();
    let other_signer = TestKey::p256();
    let bodies = [
        (
            "other message",
            hashedrekord_body(b"another", &case.signature, &case.verifier_pem()),
        ),
        (
            "other signature",
            hashedrekord_body(&case.message, &case.signer.sign(b"x"), &case.verifier_pem()),
        ),
        (
            "other verifier",
            hashedrekord_body(
                &case.message,
                &case.signature,
                &pem("PUBLIC KEY", &other_signer.spki()),
            ),
        ),
        (
            "dsse kind",
            dsse_body(&case.message, &[(&case.signature, &case.verifier_pem())]),
        ),
        (
            "intoto kind",
            br#"{"apiVersion":"0.0.2","kind":"intoto","spec":{}}"#.to_vec(),
        ),
        (
            "other version",
            String::from_utf8(case.body())
                .unwrap()
                .replacen("0.0.1", "0.0.2", 1)
                .into_bytes(),
        ),
        (
            "other algorithm",
            String::from_utf8(case.body())
                .unwrap()
                .replacen("\"sha256\"", "\"sha512\"", 1)
                .into_bytes(),
        ),
        ("not JSON", b"not json".to_vec()),
        (
            "a key twice",
            br#"{"kind":"hashedrekord","kind":"dsse"}"#.to_vec(),
        ),
    ];
    for (name, body) in bodies {
        let entry = entry(&case.log, body, 42, TIME);
        assert_eq!(
            rejection(case.verify(&entry)),
            Rejection::LogEntryMismatch,
            "{name}"
        );
    }
}

#[test]
fn a_dsse_body_must_record_this_payload_and_exactly_this_signature() {
    let case = Case::new();
    let verifier = case.verifier_pem();
    let signed = Signed::Dsse {
        payload_type: "application/vnd.in-toto+json",
        payload: &case.message,
        signature: &case.signature,
        verifier_der: case.signer_spki(),
    };
    let good = entry(
        &case.log,
        dsse_body(&case.message, &[(&case.signature, &verifier)]),
        7,
        TIME,
    );
    assert_eq!(verify(&case.root(), &good, signed), Ok(TIME));
    let bodies = [
        (
            "other payload",
            dsse_body(b"other", &[(&case.signature, &verifier)]),
        ),
        (
            "two signatures",
            dsse_body(
                &case.message,
                &[(&case.signature, &verifier), (&case.signature, &verifier)],
            ),
        ),
        ("no signature", dsse_body(&case.message, &[])),
        (
            "other signature",
            dsse_body(&case.message, &[(b"x", &verifier)]),
        ),
        (
            "other verifier",
            dsse_body(
                &case.message,
                &[(&case.signature, &pem("PUBLIC KEY", &TestKey::p256().spki()))],
            ),
        ),
        ("hashedrekord kind", case.body()),
    ];
    for (name, body) in bodies {
        let entry = entry(&case.log, body, 7, TIME);
        assert_eq!(
            rejection(verify(&case.root(), &entry, signed)),
            Rejection::LogEntryMismatch,
            "{name}"
        );
    }
}

#[test]
fn sizes_over_their_bounds_are_malformed_before_any_check() {
    let case = Case::new();
    let mut big_body = case.entry();
    big_body.body = vec![b' '; MAX_BODY + 1];
    let mut big_promise = case.entry();
    big_promise.promise = Some(vec![0; MAX_PROMISE + 1]);
    let mut many_hashes = with_proof(case.entry(), &case.log, 0, 1);
    if let Some(proof) = &mut many_hashes.proof {
        proof.hashes = vec![vec![0; 32]; MAX_PROOF_HASHES + 1];
    }
    let mut long_checkpoint = with_proof(case.entry(), &case.log, 0, 1);
    if let Some(proof) = &mut long_checkpoint.proof {
        proof.checkpoint = "x".repeat(MAX_CHECKPOINT + 1);
    }
    for entry in [big_body, big_promise, many_hashes, long_checkpoint] {
        assert_eq!(rejection(case.verify(&entry)), Rejection::Malformed);
    }
}

#[test]
fn bundle_and_annotation_entries_are_read_and_their_kind_version_checked() {
    let case = Case::new();
    let entry = with_proof(case.entry(), &case.log, 1, 2);
    let proof = entry.proof.clone().unwrap();
    let json = serde_json::json!({
        "logIndex": "42",
        "logId": {"keyId": b64(&entry.log_id)},
        "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
        "integratedTime": TIME.to_string(),
        "inclusionPromise": {"signedEntryTimestamp": b64(entry.promise.as_ref().unwrap())},
        "inclusionProof": {
            "logIndex": "1",
            "rootHash": b64(&proof.root_hash),
            "treeSize": "3",
            "hashes": proof.hashes.iter().map(|h| b64(h)).collect::<Vec<_>>(),
            "checkpoint": {"envelope": proof.checkpoint},
        },
        "canonicalizedBody": b64(&entry.body),
    });
    let read = LogEntry::from_bundle_json(&json).unwrap();
    assert_eq!(case.verify(&read), Ok(TIME));

    let mut wrong_kind = json.clone();
    wrong_kind["kindVersion"]["kind"] = "dsse".into();
    assert_eq!(
        LogEntry::from_bundle_json(&wrong_kind).unwrap_err(),
        LogEntryError::KindVersion
    );
    let mut many = json.clone();
    many["inclusionProof"]["hashes"] = vec![b64(&[0; 32]); MAX_PROOF_HASHES + 1].into();
    assert_eq!(
        LogEntry::from_bundle_json(&many).unwrap_err(),
        LogEntryError::TooManyHashes {
            count: MAX_PROOF_HASHES + 1,
            max: MAX_PROOF_HASHES
        }
    );
    let mut negative = json.clone();
    negative["logIndex"] = "-1".into();
    assert_eq!(
        LogEntry::from_bundle_json(&negative).unwrap_err(),
        LogEntryError::NotNonNegative { what: "`logIndex`" }
    );

    let annotation = serde_json::json!({
        "SignedEntryTimestamp": b64(entry.promise.as_ref().unwrap()),
        "Payload": {
            "body": b64(&entry.body),
            "integratedTime": TIME,
            "logIndex": 42,
            "logID": hex::encode(&entry.log_id),
        }
    });
    let read = LogEntry::from_cosign_bundle(&annotation.to_string()).unwrap();
    assert_eq!(case.verify(&read), Ok(TIME));
    assert_eq!(
        LogEntry::from_cosign_bundle("{}").unwrap_err(),
        LogEntryError::NoPayload
    );
    assert_eq!(
        LogEntry::from_cosign_bundle(&" ".repeat(2 * MAX_BODY + 1)).unwrap_err(),
        LogEntryError::AnnotationOverBound { max: 2 * MAX_BODY }
    );
}

/// The log of `tests/fixtures/sigstore/trusted_root.json` (sigstore-js's @sigstore/mock), read
/// without the trusted-root parser.
fn fixture_root(name: &str) -> TrustedRoot {
    let path = format!(
        "{}/tests/fixtures/sigstore/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let root: serde_json::Value = serde_json::from_slice(&fs_err::read(path).unwrap()).unwrap();
    let decode = |v: &serde_json::Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap()
    };
    let logs = root["tlogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|log| LogKey {
            log_id: decode(&log["logId"]["keyId"]),
            key: PublicKey::from_spki_der(&decode(&log["publicKey"]["rawBytes"])).unwrap(),
            valid_from: 0,
            valid_until: None,
        })
        .collect();
    root_with_logs(logs)
}

fn fixture(name: &str) -> serde_json::Value {
    let path = format!(
        "{}/tests/fixtures/sigstore/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&fs_err::read(path).unwrap()).unwrap()
}

#[test]
fn the_entries_sigstore_js_wrote_against_the_mock_log_verify() {
    let root = fixture_root("trusted_root.json");
    let payload = fs_err::read(format!(
        "{}/tests/fixtures/sigstore/payload.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let decode = |v: &serde_json::Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap())
            .unwrap()
    };
    let bundle = fixture("message.bundle.json");
    let entry =
        LogEntry::from_bundle_json(&bundle["verificationMaterial"]["tlogEntries"][0]).unwrap();
    assert!(entry.proof.is_some());
    let leaf = decode(&bundle["verificationMaterial"]["certificate"]["rawBytes"]);
    let signature = decode(&bundle["messageSignature"]["signature"]);
    let signed = Signed::Message {
        message: &payload,
        signature: &signature,
        verifier_der: &leaf,
    };
    let time = verify(&root, &entry, signed).unwrap();
    assert_eq!(time, fixture("meta.json")["signed_at"].as_i64().unwrap());

    // The same signature as cosign ≤ v2's annotation: the promise alone.
    let cosign = fixture("cosign-v2.json");
    let annotation = cosign["annotations"]["dev.sigstore.cosign/bundle"]
        .as_str()
        .unwrap();
    let entry = LogEntry::from_cosign_bundle(annotation).unwrap();
    assert_eq!(verify(&root, &entry, signed), Ok(time));

    // The DSSE bundle's dsse entry.
    let bundle = fixture("dsse.bundle.json");
    let entry =
        LogEntry::from_bundle_json(&bundle["verificationMaterial"]["tlogEntries"][0]).unwrap();
    let leaf = decode(&bundle["verificationMaterial"]["certificate"]["rawBytes"]);
    let envelope = &bundle["dsseEnvelope"];
    let payload = decode(&envelope["payload"]);
    let signature = decode(&envelope["signatures"][0]["sig"]);
    let signed = Signed::Dsse {
        payload_type: envelope["payloadType"].as_str().unwrap(),
        payload: &payload,
        signature: &signature,
        verifier_der: &leaf,
    };
    assert_eq!(verify(&root, &entry, signed), Ok(time));

    // The other log's entry is not vouched for by this root.
    let bundle = fixture("other-log/message.bundle.json");
    let entry =
        LogEntry::from_bundle_json(&bundle["verificationMaterial"]["tlogEntries"][0]).unwrap();
    let leaf = decode(&bundle["verificationMaterial"]["certificate"]["rawBytes"]);
    let signature = decode(&bundle["messageSignature"]["signature"]);
    let payload = fs_err::read(format!(
        "{}/tests/fixtures/sigstore/payload.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let signed = Signed::Message {
        message: &payload,
        signature: &signature,
        verifier_der: &leaf,
    };
    assert_eq!(
        rejection(verify(&root, &entry, signed)),
        Rejection::LogEntryInvalid
    );
}

#[test]
fn a_checkpoint_with_more_signature_lines_than_the_bound_is_invalid() {
    let case = Case::new();
    let mut entry = with_proof(case.entry(), &case.log, 0, 1);
    if let Some(proof) = &mut entry.proof {
        let other = checkpoint(&TestKey::p256(), 1, &[0; 32]);
        let line = other[other.find("\n\n").unwrap() + 2..].to_owned();
        proof
            .checkpoint
            .push_str(&line.repeat(MAX_CHECKPOINT_SIGNATURES));
        assert!(proof.checkpoint.len() <= MAX_CHECKPOINT);
    }
    assert_eq!(rejection(case.verify(&entry)), Rejection::LogEntryInvalid);
}
