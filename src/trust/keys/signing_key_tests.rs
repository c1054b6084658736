//! The signing key of `push --sign-key` against its rules: the PEM framing, cosign's encrypted
//! envelope field by field, the password, the algorithms that sign.

use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair};
use serde_json::{Value, json};

use super::*;

/// A new PKCS#8 ECDSA P-256 private key.
pub(crate) fn pkcs8() -> Vec<u8> {
    EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
        .unwrap()
        .as_ref()
        .to_vec()
}

/// `der` as one PEM block labelled `label`.
pub(crate) fn pem(label: &str, der: &[u8]) -> String {
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

/// The key of the PEM `text`.
pub(crate) fn read(text: &str, password: Option<&[u8]>) -> Result<SigningKey, SignKeyError> {
    SigningKey::from_pem(text.as_bytes(), password, "cosign.key")
}

/// Why the cosign envelope of `text` is refused (its rule, as said).
fn malformed(text: &str, password: Option<&[u8]>) -> String {
    match read(text, password) {
        Err(SignKeyError::Malformed { reason, .. }) => reason,
        other => panic!("not malformed: {other:?}"),
    }
}

/// How the form of the key `text` is refused.
fn form(text: &str, password: Option<&[u8]>) -> KeyFormError {
    match read(text, password) {
        Err(SignKeyError::Form { refusal, .. }) => refusal,
        other => panic!("not refused for its form: {other:?}"),
    }
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
    let refusal = form(&envelope(b"pw", b"not a key", &|_| {}), Some(b"pw"));
    assert_eq!(refusal, KeyFormError::NotPkcs8);
    assert_eq!(refusal.to_string(), "not a DER PKCS#8 private key");
    let ed25519 = ring::signature::Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let refusal = form(&pem(PEM_PKCS8, ed25519.as_ref()), None);
    assert_eq!(
        refusal,
        KeyFormError::Algorithm {
            oid: "1.3.101.112".to_owned()
        }
    );
    let p384 = EcdsaKeyPair::generate_pkcs8(
        &ring::signature::ECDSA_P384_SHA384_ASN1_SIGNING,
        &SystemRandom::new(),
    )
    .unwrap();
    let refusal = form(&pem(PEM_PKCS8, p384.as_ref()), None);
    assert_eq!(
        refusal,
        KeyFormError::Curve {
            named: "the curve 1.3.132.0.34".to_owned()
        }
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
    assert_eq!(form(&format!("x\n{text}"), None), KeyFormError::NotPem);
    assert_eq!(form(&format!("{text}x"), None), KeyFormError::TextAfter);
    assert_eq!(
        form(&format!("{text}{text}"), None),
        KeyFormError::TextAfter
    );
    assert_eq!(
        form(&text.replace("-----END PRIVATE KEY-----", ""), None),
        KeyFormError::NoEnd
    );
    assert_eq!(
        form(&text.replacen('\n', "\n*", 1), None),
        KeyFormError::NotBase64
    );
    let nested = text.replacen('\n', "\n-----BEGIN X-----\n", 1);
    assert_eq!(form(&nested, None), KeyFormError::Broken);
    let refusal = form(&pem("EC PRIVATE KEY", b"x"), None);
    assert!(
        refusal
            .to_string()
            .starts_with("a PEM `EC PRIVATE KEY` block: expected"),
        "{refusal}"
    );
    assert_eq!(
        form(&pem(&"A".repeat(65), b"x"), None),
        KeyFormError::LabelTooLong
    );
    let big = " ".repeat(MAX_KEY_FILE_BYTES as usize + 1);
    assert_eq!(form(&big, None), KeyFormError::TooLarge);
    assert!(matches!(
        SigningKey::from_pem(&[0xff, 0xfe], None, "k"),
        Err(SignKeyError::Form {
            refusal: KeyFormError::NotUtf8,
            ..
        })
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
