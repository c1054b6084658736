//! Who published an image: one piece of signature material, judged offline against a fixed
//! publisher policy (a cosign key and the keyless identity of the committed sigstore-js fixtures,
//! under their trusted root).

use crate::trust::image::material::{CosignSignature, SignatureMaterial, SigstoreBundle};
use crate::trust::image::policy::{PublisherPolicy, SigstoreIdentity, SigstorePolicy};
use crate::trust::keys::public_key::PublicKey;
use crate::trust::verdict::Publisher;
use crate::trust::x509::trusted_root::TrustedRoot;

/// The digest the fixtures' signatures bind (`tests/fixtures/sigstore/meta.json`).
pub const FUZZ_PINNED: &str =
    "sha256:9ea43bf1799c665c1f6ac0b6bbf7b399a3afe729953437fc7830a2316280e34c";
const ISSUER: &str = "https://token.actions.githubusercontent.com";
const SUBJECT: &str =
    "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main";
/// A P-256 key the policy lists beside the identity (no seed is signed by it: a key signature
/// that verifies would need its private half).
const KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEHn20LIa74QnawWU1Jmmnp8792kIb
xUKcFpkghMwWjWqzB3xvOJ9Q3st3O9st55TmwNeutt1jhSvLLWVu6LeJTQ==
-----END PUBLIC KEY-----
";

/// The fixed policy: [`KEY`], and [`ISSUER`] with [`SUBJECT`] under the fixtures' trusted root.
pub fn fuzz_publisher_policy() -> PublisherPolicy {
    let root = TrustedRoot::parse(include_bytes!(
        "../../tests/fixtures/sigstore/trusted_root.json"
    ))
    .expect("the fixtures' trusted root");
    PublisherPolicy {
        keys: vec![PublicKey::from_pem(KEY).expect("the fuzz key")],
        sigstore: Some(SigstorePolicy {
            root,
            identities: vec![SigstoreIdentity {
                issuer: ISSUER.to_owned(),
                subject: SUBJECT.to_owned(),
            }],
        }),
    }
}

/// The material `data` stands for: a cosign ≤ v2 signature layer when it is the JSON object
/// `{"payload": STRING, "annotations": {STRING: STRING}}` (what the fixtures' `cosign-v2.json`
/// holds), else a Sigstore bundle of those bytes (lossy UTF-8), of the media type it declares.
pub fn fuzz_material(data: &[u8]) -> SignatureMaterial {
    #[derive(serde::Deserialize)]
    struct Layer {
        payload: String,
        annotations: std::collections::BTreeMap<String, String>,
    }
    match serde_json::from_slice::<Layer>(data) {
        Ok(layer) => SignatureMaterial {
            cosign: vec![CosignSignature {
                payload: layer.payload,
                annotations: layer.annotations,
                found_at: "fuzz".to_owned(),
            }],
            ..SignatureMaterial::default()
        },
        // The registry names a bundle with the media type it declares (its `mediaType`, as its
        // referrer's `artifactType`).
        Err(_) => SignatureMaterial {
            bundles: vec![SigstoreBundle {
                media_type: serde_json::from_slice::<serde_json::Value>(data)
                    .ok()
                    .and_then(|v| v["mediaType"].as_str().map(str::to_owned))
                    .unwrap_or_else(|| "application/vnd.dev.sigstore.bundle.v0.3+json".to_owned()),
                json: String::from_utf8_lossy(data).into_owned(),
                found_at: "fuzz".to_owned(),
            }],
            ..SignatureMaterial::default()
        },
    }
}

/// One signature (a cosign ≤ v2 layer or a Sigstore bundle, as [`fuzz_material`] reads `data`),
/// judged for [`FUZZ_PINNED`] under [`fuzz_publisher_policy`], as `prepare` judges an image.
///
/// Invariants: nothing panics; an accepted signature names a signer the policy lists (the key's
/// fingerprint, or the configured identity, exactly) and keeps exactly the material judged; a
/// refused one gives exactly one rejection, found where it was put, with a detail that says why
/// on one line and holds no raw control character (outside input is escaped); the verdict is
/// the same when judged again.
pub fn image_signature(data: &[u8]) {
    let policy = fuzz_publisher_policy();
    let material = fuzz_material(data);
    let verdict = crate::trust::image::verify(&material, FUZZ_PINNED, &policy);
    match &verdict {
        Ok(verified) => {
            match &verified.signer {
                Publisher::Key { fingerprint } => {
                    assert!(policy.keys.iter().any(|k| &k.fingerprint() == fingerprint));
                }
                Publisher::Identity { issuer, subject } => {
                    assert_eq!((issuer.as_str(), subject.as_str()), (ISSUER, SUBJECT));
                }
            }
            assert_eq!(verified.material, material);
        }
        Err(rejected) => {
            assert_eq!(
                rejected.len(),
                1,
                "one signature, one rejection: {rejected:?}"
            );
            let rejected = &rejected[0];
            assert_eq!(rejected.found_at, "fuzz");
            assert!(!rejected.detail.is_empty(), "a rejection says why");
            assert!(
                !rejected.detail.chars().any(char::is_control),
                "a raw control character in {:?}",
                rejected.detail
            );
        }
    }
    assert_eq!(
        crate::trust::image::verify(&material, FUZZ_PINNED, &policy),
        verdict,
        "judged twice"
    );
}
