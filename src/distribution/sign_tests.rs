//! `push --sign-key`'s signature layer and `.sig` image, against their rules (the key's reading
//! is tested with [`crate::trust::keys::signing_key`]).

use std::collections::BTreeMap;

use super::*;
use crate::trust::image::cosign_v2;
use crate::trust::image::material::CosignSignature;
use crate::trust::image::policy::PublisherPolicy;
use crate::trust::keys::signing_key::PEM_PKCS8;
use crate::trust::keys::signing_key::tests::{pem, pkcs8, read};
use crate::trust::verdict::{Publisher, Rejection};

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const OTHER: &str = "sha256:1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[test]
fn a_signature_pushed_is_one_cosign_v2_judge_accepts() {
    let key = read(&pem(PEM_PKCS8, &pkcs8()), None).unwrap();
    let layer = SignatureLayer::new(&key, "127.0.0.1:5000/platform/skills", DIGEST).unwrap();
    let image = new_signature_image(&layer);
    let manifest: Value = serde_json::from_slice(&image.manifest).unwrap();
    let descriptor = &manifest["layers"][0];
    assert_eq!(descriptor["digest"], sha256(&layer.payload));
    let annotations: BTreeMap<String, String> = descriptor["annotations"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect();
    let material = CosignSignature {
        payload: String::from_utf8(layer.payload.clone()).unwrap(),
        annotations,
        found_at: "test".to_owned(),
    };
    let policy = PublisherPolicy {
        keys: vec![key.public_key().clone()],
        sigstore: None,
    };
    assert_eq!(
        cosign_v2::judge(&material, DIGEST, &policy),
        Ok(Publisher::Key {
            fingerprint: key.public_key().fingerprint()
        })
    );
    // Another image's digest, and another key, refuse.
    assert_eq!(
        cosign_v2::judge(&material, OTHER, &policy).unwrap_err().0,
        Rejection::NotThisImage
    );
    let other = read(&pem(PEM_PKCS8, &pkcs8()), None).unwrap();
    let policy = PublisherPolicy {
        keys: vec![other.public_key().clone()],
        sigstore: None,
    };
    assert_eq!(
        cosign_v2::judge(&material, DIGEST, &policy).unwrap_err().0,
        Rejection::BadSignature
    );
}

fn layer(payload_digest: &str) -> (SigningKey, SignatureLayer) {
    let key = read(&pem(PEM_PKCS8, &pkcs8()), None).unwrap();
    let layer = SignatureLayer::new(&key, "r.example/a", payload_digest).unwrap();
    (key, layer)
}

#[test]
fn an_existing_sig_image_is_appended_to_and_a_duplicate_is_not() {
    let (key, first) = layer(DIGEST);
    let image = new_signature_image(&first);
    assert_eq!(
        existing(&image.manifest, &first, key.public_key()),
        Ok(Existing::AlreadySigned)
    );
    // The same key's new (randomised) signature of the same payload is a duplicate too.
    let again = SignatureLayer::new(&key, "r.example/a", DIGEST).unwrap();
    assert_ne!(again.signature, first.signature);
    assert_eq!(
        existing(&image.manifest, &again, key.public_key()),
        Ok(Existing::AlreadySigned)
    );
    // Another key's signature is appended.
    let (other_key, second) = layer(DIGEST);
    let Ok(Existing::Append {
        config_digest,
        config_size,
    }) = existing(&image.manifest, &second, other_key.public_key())
    else {
        panic!("not an append");
    };
    assert_eq!(config_digest, sha256(&image.config));
    assert_eq!(config_size, image.config.len() as u64);
    let appended = append_signature(&image.manifest, &image.config, &second).unwrap();
    let manifest: Value = serde_json::from_slice(&appended.manifest).unwrap();
    let original: Value = serde_json::from_slice(&image.manifest).unwrap();
    assert_eq!(manifest["layers"][0], original["layers"][0]);
    assert_eq!(
        manifest["layers"][1]["annotations"][ANNOTATION_SIGNATURE],
        second.signature
    );
    assert_eq!(manifest["config"]["digest"], sha256(&appended.config));
    let config: Value = serde_json::from_slice(&appended.config).unwrap();
    assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 2);
    assert_eq!(config["history"].as_array().unwrap().len(), 2);
    // A config that is not the one the manifest names is refused.
    let message = append_signature(&image.manifest, b"{}", &second)
        .unwrap_err()
        .to_string();
    assert!(message.contains("does not have the digest"), "{message}");
}

#[test]
fn an_unreadable_or_oversized_sig_image_is_refused() {
    let (key, first) = layer(DIGEST);
    let public = key.public_key();
    let image = new_signature_image(&first);
    let mut manifest: Value = serde_json::from_slice(&image.manifest).unwrap();
    let refused = |m: &Value| match existing(m.to_string().as_bytes(), &first, public).unwrap_err()
    {
        SignatureImageError::Unreadable(why) => why,
        other => panic!("{other:?}"),
    };
    assert!(
        existing(b"[", &first, public)
            .unwrap_err()
            .to_string()
            .contains("not JSON")
    );
    let mut v1 = manifest.clone();
    v1["schemaVersion"] = json!(1);
    assert!(refused(&v1).contains("schemaVersion 2"));
    let mut no_layers = manifest.clone();
    no_layers["layers"] = json!({});
    assert!(refused(&no_layers).contains("no `layers` array"));

    // A layer that is not a duplicate, so the config is wanted: its descriptor is checked.
    manifest["layers"][0]["annotations"][ANNOTATION_SIGNATURE] = json!("AAAA");
    let mut big = manifest.clone();
    big["config"]["size"] = json!(MAX_SIGNATURE_CONFIG_BYTES + 1);
    assert!(refused(&big).contains("size is missing or over"));
    let mut bad = manifest.clone();
    bad["config"]["digest"] = json!("sha256:AB");
    assert!(refused(&bad).contains("config's digest"));
    let mut no_config = manifest.clone();
    no_config.as_object_mut().unwrap().remove("config");
    assert!(refused(&no_config).contains("no `config`"));
    // A config without diff IDs, or with a history that is not an array.
    let config_of = |config: &Value| {
        let bytes = config.to_string().into_bytes();
        let mut m = manifest.clone();
        m["config"]["digest"] = json!(sha256(&bytes));
        append_signature(m.to_string().as_bytes(), &bytes, &first)
    };
    let mut config: Value = serde_json::from_slice(&image.config).unwrap();
    assert!(config_of(&config).is_ok());
    config["history"] = json!({});
    assert!(
        config_of(&config)
            .unwrap_err()
            .to_string()
            .contains("`history` is not an array")
    );
    config["rootfs"] = json!({});
    assert!(
        config_of(&config)
            .unwrap_err()
            .to_string()
            .contains("no `rootfs.diff_ids`")
    );
}

/// A `.sig` manifest of `count` layers, each another key's signature of the same payload,
/// and its config.
fn signed_by_others(count: usize) -> (Vec<u8>, Vec<u8>) {
    let (_, first) = layer(DIGEST);
    let mut image = new_signature_image(&first);
    for _ in 1..count {
        let (_, next) = layer(DIGEST);
        image = append(&image.manifest, &image.config, &next).unwrap();
    }
    (image.manifest, image.config)
}

#[test]
fn a_signature_is_appended_only_while_the_verifier_reads_every_layer() {
    use crate::source::oci::publisher::fetch;
    // One bound for both sides: what `push` may write is what the fetch reads.
    assert_eq!(MAX_SIGNATURE_LAYERS, fetch::MAX_SIGNATURE_LAYERS);
    let (key, mine) = layer(DIGEST);
    // One short of the bound: appended, to exactly the bound.
    let (manifest, config) = signed_by_others(MAX_SIGNATURE_LAYERS - 1);
    assert!(matches!(
        existing(&manifest, &mine, key.public_key()),
        Ok(Existing::Append { .. })
    ));
    let full = append_signature(&manifest, &config, &mine).unwrap();
    let layers = |bytes: &[u8]| {
        serde_json::from_slice::<Value>(bytes).unwrap()["layers"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(layers(&full.manifest), MAX_SIGNATURE_LAYERS);
    // At the bound: this key's signature is there (nothing to push), another's is refused.
    assert_eq!(
        existing(&full.manifest, &mine, key.public_key()),
        Ok(Existing::AlreadySigned)
    );
    let (other_key, other) = layer(DIGEST);
    let Err(SignatureImageError::OverBound(why)) =
        existing(&full.manifest, &other, other_key.public_key())
    else {
        panic!("appended past the bound the verifier reads");
    };
    assert!(
        why.contains(&format!("at most {MAX_SIGNATURE_LAYERS} with the new one")),
        "{why}"
    );
    // Over the bound already (cosign wrote more): refused, even with this key's signature.
    let over = append(&full.manifest, &full.config, &other).unwrap();
    assert!(matches!(
        existing(&over.manifest, &mine, key.public_key()),
        Err(SignatureImageError::OverBound(_))
    ));
}

#[test]
fn a_signature_manifest_over_the_verifiers_bytes_is_not_written() {
    let (key, mine) = layer(DIGEST);
    let (manifest, config) = signed_by_others(1);
    // Another signer's layer with a large annotation (a keyless certificate chain, say).
    let mut padded: Value = serde_json::from_slice(&manifest).unwrap();
    let room = MAX_SIGNATURE_MANIFEST_BYTES as usize - manifest.len() - 64;
    padded["layers"][0]["annotations"]["dev.sigstore.cosign/chain"] = json!("A".repeat(room));
    let padded = padded.to_string().into_bytes();
    assert!(padded.len() as u64 <= MAX_SIGNATURE_MANIFEST_BYTES);
    assert!(matches!(
        existing(&padded, &mine, key.public_key()),
        Ok(Existing::Append { .. })
    ));
    let Err(SignatureImageError::OverBound(why)) = append_signature(&padded, &config, &mine) else {
        panic!("a manifest over the verifier's bound was made");
    };
    assert!(why.contains("would be"), "{why}");
    // An existing manifest over the bound is refused before it is read.
    let mut huge = padded.clone();
    huge.extend(std::iter::repeat_n(b' ', 1024));
    assert!(matches!(
        existing(&huge, &mine, key.public_key()),
        Err(SignatureImageError::OverBound(_))
    ));
}

#[test]
fn the_tag_is_cosigns() {
    assert_eq!(
        signature_tag(DIGEST),
        "sha256-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.sig"
    );
}
