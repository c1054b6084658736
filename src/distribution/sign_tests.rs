//! `push --sign-key`'s key reading, signature layer and `.sig` image, against their rules.

use std::collections::BTreeMap;

use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair};

use super::*;
use crate::descriptor::publishers::PublisherPolicy;
use crate::source::oci::publisher::material::CosignSignature;
use crate::source::oci::publisher::{Rejection, Signer, cosign_v2};

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const OTHER: &str = "sha256:1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn pkcs8() -> Vec<u8> {
    EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
        .unwrap()
        .as_ref()
        .to_vec()
}

fn pem(label: &str, der: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// The envelope as go-securesystemslib writes it (scrypt N = 2^15 to keep the tests quick),
/// then `edit`ed.
fn envelope(password: &[u8], plaintext: &[u8], edit: &dyn Fn(&mut Value)) -> String {
    let salt = [7u8; 32];
    let nonce = [9u8; NONCE_BYTES];
    let params = scrypt::Params::new(15, 8, 1, 32).unwrap();
    let mut key = [0u8; 32];
    scrypt::scrypt(password, &salt, &params, &mut key).unwrap();
    let sealed = crypto_secretbox::XSalsa20Poly1305::new_from_slice(&key)
        .unwrap()
        .encrypt(crypto_secretbox::Nonce::from_slice(&nonce), plaintext)
        .unwrap();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let mut value = json!({
        "kdf": { "name": "scrypt", "params": { "N": 32768, "r": 8, "p": 1 }, "salt": b64(&salt) },
        "cipher": { "name": "nacl/secretbox", "nonce": b64(&nonce) },
        "ciphertext": b64(&sealed),
    });
    edit(&mut value);
    pem(PEM_SIGSTORE, value.to_string().as_bytes())
}

fn read(text: &str, password: Option<&[u8]>) -> Result<SigningKey, SignKeyError> {
    SigningKey::from_pem(text.as_bytes(), password, "cosign.key")
}

fn malformed(text: &str, password: Option<&[u8]>) -> String {
    match read(text, password) {
        Err(SignKeyError::Malformed { reason, .. }) => reason,
        other => panic!("not malformed: {other:?}"),
    }
}

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
        Ok(Signer::Key {
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

#[test]
fn an_encrypted_key_opens_with_its_password_only() {
    let der = pkcs8();
    let text = envelope(b"pw", &der, &|_| {});
    let key = read(&text, Some(b"pw")).unwrap();
    let signature = key.sign(b"message").unwrap();
    assert!(key.public_key().verify(b"message", &signature));
    assert!(matches!(
        read(&text, Some(b"other")),
        Err(SignKeyError::WrongPassword { .. })
    ));
    assert!(matches!(
        read(&text, None),
        Err(SignKeyError::NoPassword { .. })
    ));
    // The older label; an empty password.
    let old = envelope(b"", &der, &|_| {}).replace(PEM_SIGSTORE, PEM_COSIGN);
    assert_eq!(
        read(&old, Some(b"")).unwrap().public_key(),
        key.public_key()
    );
    // The password never appears in a message.
    let message = read(&text, Some(b"s3cret-guess")).unwrap_err().to_string();
    assert!(!message.contains("s3cret-guess"), "{message}");
}

#[test]
fn the_envelope_is_checked_field_by_field() {
    let der = pkcs8();
    let edited = |edit: &dyn Fn(&mut Value)| malformed(&envelope(b"pw", &der, edit), Some(b"pw"));
    assert!(edited(&|v| v["kdf"]["name"] = json!("argon2")).contains("the kdf `argon2`"));
    assert!(edited(&|v| v["cipher"]["name"] = json!("aes")).contains("the cipher `aes`"));
    for (n, r, p) in [
        (1u64 << 30, 8, 1),
        (1 << 14, 8, 1),
        (1 << 16, 16, 1),
        (1 << 16, 8, 2),
    ] {
        let message = edited(&|v| v["kdf"]["params"] = json!({ "N": n, "r": r, "p": p }));
        assert!(
            message.contains("are not one of the sets cosign reads"),
            "{message}"
        );
    }
    let long = base64::engine::general_purpose::STANDARD.encode([0u8; MAX_SALT_BYTES + 1]);
    assert!(edited(&|v| v["kdf"]["salt"] = json!(long)).contains("`salt` is over"));
    assert!(edited(&|v| v["kdf"]["salt"] = json!("***")).contains("`salt` is not standard base64"));
    let short = base64::engine::general_purpose::STANDARD.encode([0u8; 12]);
    assert!(edited(&|v| v["cipher"]["nonce"] = json!(short)).contains("`nonce` is 12 bytes"));
    let long = base64::engine::general_purpose::STANDARD.encode([0u8; 27]);
    assert!(edited(&|v| v["cipher"]["nonce"] = json!(long)).contains("`nonce` is over 24"));
    let tiny = base64::engine::general_purpose::STANDARD.encode([0u8; 15]);
    assert!(edited(&|v| v["ciphertext"] = json!(tiny)).contains("`ciphertext` of 15 bytes"));
    let huge = "A".repeat(MAX_CIPHERTEXT_BYTES / 3 * 4 + 8);
    assert!(edited(&|v| v["ciphertext"] = json!(huge)).contains("`ciphertext` is over"));
    assert!(edited(&|v| v["extra"] = json!(1)).contains("not the JSON cosign writes"));
    assert!(edited(&|v| v["kdf"]["params"]["N"] = json!("65536")).contains("not the JSON"));
    assert!(malformed(&pem(PEM_SIGSTORE, b"not json"), Some(b"pw")).contains("not the JSON"));
}

#[test]
fn only_p256_pkcs8_keys_sign() {
    let message = malformed(&envelope(b"pw", b"not a key", &|_| {}), Some(b"pw"));
    assert_eq!(message, "not a DER PKCS#8 private key");
    let ed25519 = ring::signature::Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let message = malformed(&pem(PEM_PKCS8, ed25519.as_ref()), None);
    assert!(
        message.starts_with("a private key of algorithm 1.3.101.112"),
        "{message}"
    );
    let p384 = EcdsaKeyPair::generate_pkcs8(
        &ring::signature::ECDSA_P384_SHA384_ASN1_SIGNING,
        &SystemRandom::new(),
    )
    .unwrap();
    let message = malformed(&pem(PEM_PKCS8, p384.as_ref()), None);
    assert!(
        message.starts_with("an EC private key on the curve 1.3.132.0.34"),
        "{message}"
    );
    // A P-256 key whose embedded public key is damaged.
    let mut broken = pkcs8();
    let len = broken.len();
    broken[len - 70..len - 66].copy_from_slice(&[0xff; 4]);
    assert!(read(&pem(PEM_PKCS8, &broken), None).is_err());
}

#[test]
fn the_pem_framing_is_strict() {
    let text = pem(PEM_PKCS8, &pkcs8());
    assert!(malformed(&format!("x\n{text}"), None).starts_with("not a PEM key"));
    assert!(malformed(&format!("{text}x"), None).starts_with("text after the PEM block"));
    assert!(malformed(&format!("{text}{text}"), None).starts_with("text after the PEM block"));
    assert!(
        malformed(&text.replace("-----END PRIVATE KEY-----", ""), None)
            .contains("without its END line")
    );
    assert!(malformed(&text.replacen('\n', "\n*", 1), None).contains("not valid base64"));
    let nested = text.replacen('\n', "\n-----BEGIN X-----\n", 1);
    assert!(malformed(&nested, None).contains("exactly one block"));
    let message = malformed(&pem("EC PRIVATE KEY", b"x"), None);
    assert!(
        message.starts_with("a PEM `EC PRIVATE KEY` block: expected"),
        "{message}"
    );
    assert!(malformed(&pem(&"A".repeat(65), b"x"), None).contains("label over 64"));
    let big = " ".repeat(MAX_KEY_FILE_BYTES as usize + 1);
    assert!(malformed(&big, None).contains("larger than"));
    assert!(matches!(
        SigningKey::from_pem(&[0xff, 0xfe], None, "k"),
        Err(SignKeyError::Malformed { .. })
    ));
}

#[test]
fn read_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cosign.key");
    fs_err::write(&path, pem(PEM_PKCS8, &pkcs8())).unwrap();
    assert!(SigningKey::read(&path, None).is_ok());
    let missing = SigningKey::read(&dir.path().join("none.key"), None).unwrap_err();
    assert!(missing.to_string().contains("none.key"), "{missing}");
    fs_err::write(&path, vec![b' '; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
    let big = SigningKey::read(&path, None).unwrap_err().to_string();
    assert!(
        big.contains("cosign.key") && big.contains("larger than"),
        "{big}"
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
