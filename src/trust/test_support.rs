//! What the publisher tests build signature material with: fresh ECDSA P-256 and Ed25519 keys
//! (ring), PEM text, Rekor v1 entry bodies, log entries with their signed entry timestamps,
//! RFC 6962 trees built from the RFC's recursive definitions (independent of the verifier's
//! iterative proof check) and signed checkpoints.

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{self, KeyPair as _};

use crate::support::hex;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::tlog::{self, InclusionProof, LogEntry};
use crate::trust::x509::trusted_root::{LogKey, TrustedRoot};

/// Standard base64.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A PEM block.
pub fn pem(label: &str, der: &[u8]) -> String {
    let body = b64(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A signing key of a test.
pub enum TestKey {
    /// ECDSA P-256, ASN.1 signatures over SHA-256.
    P256(signature::EcdsaKeyPair),
    /// Ed25519.
    Ed25519(signature::Ed25519KeyPair),
}

impl TestKey {
    /// A fresh P-256 key.
    pub fn p256() -> TestKey {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_ASN1_SIGNING;
        let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        TestKey::P256(signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap())
    }

    /// A fresh Ed25519 key.
    pub fn ed25519() -> TestKey {
        let pkcs8 = signature::Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        TestKey::Ed25519(signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap())
    }

    /// Its DER SubjectPublicKeyInfo.
    pub fn spki(&self) -> Vec<u8> {
        let (prefix, point): (&[u8], &[u8]) = match self {
            TestKey::P256(pair) => (
                &[
                    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
                    0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
                ],
                pair.public_key().as_ref(),
            ),
            TestKey::Ed25519(pair) => (
                &[
                    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
                ],
                pair.public_key().as_ref(),
            ),
        };
        [prefix, point].concat()
    }

    /// Its public key.
    pub fn public(&self) -> PublicKey {
        PublicKey::from_spki_der(&self.spki()).unwrap()
    }

    /// Its signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            TestKey::P256(pair) => pair
                .sign(&SystemRandom::new(), message)
                .unwrap()
                .as_ref()
                .to_vec(),
            TestKey::Ed25519(pair) => pair.sign(message).as_ref().to_vec(),
        }
    }

    /// The log id a log with this key has (the SHA-256 of its SubjectPublicKeyInfo).
    pub fn log_id(&self) -> Vec<u8> {
        use sha2::Digest as _;
        sha2::Sha256::digest(self.spki()).to_vec()
    }

    /// A trusted-root log entry for this key, valid from `valid_from` on.
    pub fn log_key(&self, valid_from: i64, valid_until: Option<i64>) -> LogKey {
        LogKey {
            log_id: self.log_id(),
            key: self.public(),
            valid_from,
            valid_until,
        }
    }
}

/// A trusted root with only these logs.
pub fn root_with_logs(logs: Vec<LogKey>) -> TrustedRoot {
    TrustedRoot {
        authorities: Vec::new(),
        logs,
        ct_logs: Vec::new(),
    }
}

/// A `hashedrekord` 0.0.1 body as Rekor canonicalizes it.
pub fn hashedrekord_body(message: &[u8], signature: &[u8], verifier_pem: &str) -> Vec<u8> {
    format!(
        r#"{{"apiVersion":"0.0.1","kind":"hashedrekord","spec":{{"data":{{"hash":{{"algorithm":"sha256","value":"{}"}}}},"signature":{{"content":"{}","publicKey":{{"content":"{}"}}}}}}}}"#,
        hex::sha256_hex(message),
        b64(signature),
        b64(verifier_pem.as_bytes())
    )
    .into_bytes()
}

/// A `dsse` 0.0.1 body as Rekor canonicalizes it (the envelope hash is not checked by anyone).
pub fn dsse_body(payload: &[u8], signatures: &[(&[u8], &str)]) -> Vec<u8> {
    let signatures: Vec<String> = signatures
        .iter()
        .map(|(signature, verifier_pem)| {
            format!(
                r#"{{"signature":"{}","verifier":"{}"}}"#,
                b64(signature),
                b64(verifier_pem.as_bytes())
            )
        })
        .collect();
    format!(
        r#"{{"apiVersion":"0.0.1","kind":"dsse","spec":{{"envelopeHash":{{"algorithm":"sha256","value":"{}"}},"payloadHash":{{"algorithm":"sha256","value":"{}"}},"signatures":[{}]}}}}"#,
        hex::sha256_hex(b"envelope"),
        hex::sha256_hex(payload),
        signatures.join(",")
    )
    .into_bytes()
}

/// A log entry of `body` at `log_index`, integrated at `time`, with `log`'s signed entry
/// timestamp and no proof.
pub fn entry(log: &TestKey, body: Vec<u8>, log_index: u64, time: i64) -> LogEntry {
    let mut entry = LogEntry {
        log_index,
        log_id: log.log_id(),
        integrated_time: time,
        body,
        promise: None,
        proof: None,
    };
    entry.promise = Some(log.sign(tlog::promise_payload(&entry).as_bytes()));
    entry
}

/// RFC 6962 §2.1: the Merkle tree hash of `leaves`.
pub fn tree_hash(leaves: &[Vec<u8>]) -> [u8; 32] {
    match leaves.len() {
        0 => {
            use sha2::Digest as _;
            sha2::Sha256::digest([]).into()
        }
        1 => tlog::checkpoint::leaf_hash(&leaves[0]),
        n => {
            let k = split(n);
            tlog::checkpoint::node_hash(&tree_hash(&leaves[..k]), &tree_hash(&leaves[k..]))
        }
    }
}

/// The largest power of two smaller than `n`.
fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// RFC 6962 §2.1.1: the audit path of leaf `m` in `leaves`.
pub fn audit_path(m: usize, leaves: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = leaves.len();
    if n <= 1 {
        return Vec::new();
    }
    let k = split(n);
    if m < k {
        let mut path = audit_path(m, &leaves[..k]);
        path.push(tree_hash(&leaves[k..]).to_vec());
        path
    } else {
        let mut path = audit_path(m - k, &leaves[k..]);
        path.push(tree_hash(&leaves[..k]).to_vec());
        path
    }
}

/// A checkpoint for `size` and `root` signed by `log` (key hint: the log id's first 4 bytes).
pub fn checkpoint(log: &TestKey, size: u64, root: &[u8]) -> String {
    let note = format!("rekor.test - 1234\n{size}\n{}\nTimestamp: 1\n", b64(root));
    let signature = [&log.log_id()[..4], &log.sign(note.as_bytes())[..]].concat();
    format!("{note}\n\u{2014} rekor.test {}\n", b64(&signature))
}

/// `entry` given an inclusion proof at `index` in a tree whose leaves are `others` with the
/// entry's body at `index`, and `log`'s checkpoint for it.
pub fn with_proof(mut entry: LogEntry, log: &TestKey, index: usize, others: usize) -> LogEntry {
    let mut leaves: Vec<Vec<u8>> = (0..others)
        .map(|i| format!("leaf {i}").into_bytes())
        .collect();
    leaves.insert(index, entry.body.clone());
    let root = tree_hash(&leaves);
    entry.proof = Some(InclusionProof {
        log_index: index as u64,
        tree_size: leaves.len() as u64,
        root_hash: root.to_vec(),
        hashes: audit_path(index, &leaves),
        checkpoint: checkpoint(log, leaves.len() as u64, &root),
    });
    entry
}
