//! Tests of the bundle reader's format rules ([`super::super`]): a bundle outside the format, a
//! hostile one, and one giving a field twice, each refused as malformed before any check.

use super::*;

#[test]
fn bundles_outside_the_format_are_malformed() {
    let case = KeyCase::new();
    let good = case.json(Vec::new());
    let policy = case.policy();
    let pinned = format!("sha256:{SUBJECT}");
    let mut cases: Vec<(&str, String, String)> = Vec::new();
    cases.push((
        "registry media type",
        "application/json".into(),
        good.to_string(),
    ));
    cases.push((
        "registry media type of another version",
        V02.into(),
        good.to_string(),
    ));
    cases.push((
        "too big",
        V03.into(),
        format!("{}{}", good, " ".repeat(MAX_BUNDLE)),
    ));
    cases.push(("not JSON", V03.into(), "{".into()));
    let mut edit = |name: &'static str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut value = good.clone();
        f(&mut value);
        cases.push((name, V03.into(), value.to_string()));
    };
    edit("media type", &|v| {
        v["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.4+json".into()
    });
    edit("no material", &|v| {
        v.as_object_mut().unwrap().remove("verificationMaterial");
    });
    edit("two materials", &|v| {
        v["verificationMaterial"]["certificate"] = serde_json::json!({"rawBytes": "AA=="})
    });
    edit("v0.3 chain", &|v| {
        let material = v["verificationMaterial"].as_object_mut().unwrap();
        material.remove("publicKey");
        material.insert(
            "x509CertificateChain".into(),
            serde_json::json!({"certificates": [{"rawBytes": "AA=="}]}),
        );
    });
    edit("no content", &|v| {
        v.as_object_mut().unwrap().remove("dsseEnvelope");
    });
    edit("two contents", &|v| {
        v["messageSignature"] = serde_json::json!({})
    });
    edit("two signatures", &|v| {
        let one = v["dsseEnvelope"]["signatures"][0].clone();
        v["dsseEnvelope"]["signatures"] = serde_json::json!([one.clone(), one]);
    });
    edit("no signature", &|v| {
        v["dsseEnvelope"]["signatures"] = serde_json::json!([])
    });
    edit("payload not base64", &|v| {
        v["dsseEnvelope"]["payload"] = "!!".into()
    });
    edit("two entries", &|v| {
        v["verificationMaterial"]["tlogEntries"] = serde_json::json!([{}, {}])
    });
    edit("an unreadable entry", &|v| {
        v["verificationMaterial"]["tlogEntries"] = serde_json::json!([{}])
    });
    edit("another payload type", &|v| {
        v["dsseEnvelope"]["payloadType"] = "text/plain".into()
    });
    for (name, media_type, json) in cases {
        let refused = judge(&sigstore_bundle(&media_type, json), &pinned, &policy).unwrap_err();
        assert_eq!(refused.0, Rejection::Malformed, "{name}: {}", refused.1);
    }
    let message = |algorithm: &str, digest: &[u8]| {
        serde_json::json!({
            "mediaType": V03,
            "verificationMaterial": {"publicKey": {"hint": ""}},
            "messageSignature": {
                "messageDigest": {"algorithm": algorithm, "digest": b64(digest)},
                "signature": "AA==",
            },
        })
        .to_string()
    };
    for json in [message("SHA2_384", &[0; 32]), message("SHA2_256", &[0; 31])] {
        let refused = judge(&sigstore_bundle(V03, json), &pinned, &policy).unwrap_err();
        assert_eq!(refused.0, Rejection::Malformed);
    }
}

#[test]
fn hostile_bundles_are_refused_without_harm() {
    let case = KeyCase::new();
    let policy = case.policy();
    let pinned = format!("sha256:{SUBJECT}");
    let deep = format!(
        "{{\"mediaType\":\"{V03}\",\"x\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let huge_string = format!(
        "{{\"mediaType\":\"{V03}\",\"x\":\"{}\"}}",
        "A".repeat(MAX_BUNDLE)
    );
    let endless = "[".repeat(MAX_BUNDLE + 1);
    let wrong_kinds = [
        serde_json::json!({"mediaType": V03, "verificationMaterial": [], "dsseEnvelope": 1}),
        serde_json::json!({"mediaType": 3}),
        serde_json::json!([]),
        serde_json::json!({"mediaType": V03, "verificationMaterial": {"publicKey": {}, "tlogEntries": {}}}),
    ];
    let mut inputs = vec![deep, huge_string, endless, String::new(), "\u{0}".into()];
    inputs.extend(wrong_kinds.iter().map(serde_json::Value::to_string));
    for json in inputs {
        let refused = judge(&sigstore_bundle(V03, json), &pinned, &policy).unwrap_err();
        assert_eq!(refused.0, Rejection::Malformed, "{}", refused.1);
    }
    // Over-long fields inside the bound: a checkpoint and a body over theirs.
    let mut json = case.json(Vec::new());
    let log = TestKey::p256();
    let verifier = pem("PUBLIC KEY", &case.key.spki());
    let mut entry = with_proof(
        entry(
            &log,
            dsse_body(&case.statement, &[(&case.signature, &verifier)]),
            5,
            1_700_000_000,
        ),
        &log,
        0,
        0,
    );
    if let Some(proof) = &mut entry.proof {
        proof
            .checkpoint
            .push_str(&"\u{2014} x AAAAAAA=\n".repeat(400));
    }
    json["verificationMaterial"]["tlogEntries"] = serde_json::json!([entry_json(&entry, "dsse")]);
    let refused = judge(&sigstore_bundle(V03, json.to_string()), &pinned, &policy).unwrap_err();
    assert_eq!(refused.0, Rejection::Malformed, "{}", refused.1);
}

#[test]
fn a_bundle_giving_a_field_twice_is_malformed() {
    let case = KeyCase::new();
    let good = case.json(Vec::new()).to_string();
    let twice = good.replacen(
        "\"dsseEnvelope\":",
        "\"messageSignature\":{},\"messageSignature\":",
        1,
    );
    assert_ne!(good, twice);
    let pinned = format!("sha256:{SUBJECT}");
    let refused = judge(&sigstore_bundle(V03, twice), &pinned, &case.policy()).unwrap_err();
    assert_eq!(refused.0, Rejection::Malformed, "{}", refused.1);
    assert!(refused.1.contains("twice"), "{}", refused.1);
}
