//! sigstore-python (4.5.1, pinned in `tests/sigstore-python/requirements.txt`, installed by this
//! test into a venv under `target/`) as the reference verdict on every keyless fixture of
//! `tests/fixtures/sigstore`, with the fixture's trusted root, offline: where sigstore-python
//! accepts, skillfold accepts; where skillfold accepts and sigstore-python refuses, the refusal
//! is one of the two format differences named below, and nothing else.
//!
//! The two differences (see `tests/sigstore-python/README.md`):
//! - sigstore-python compares a log entry's verifier as PEM *text* with its own encoding
//!   (64-column lines); @sigstore/mock's log records a single-line PEM, so every entry made
//!   against it is "inconsistent" to sigstore-python. skillfold, sigstore-go and sigstore-js
//!   compare the certificate itself (its DER);
//! - sigstore-python's bundle model requires an inclusion proof in every entry, v0.1 included;
//!   a cosign ≤ v2 signature's Rekor bundle never has one (cosign verifies its promise alone).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::descriptor::publishers::trusted_root::TrustedRoot;
use crate::descriptor::publishers::{Identity, PublisherPolicy, SigstorePolicy};
use crate::source::oci::publisher::material::{CosignSignature, SigstoreBundle};
use crate::source::oci::publisher::{bundle, cosign_v2};
use crate::support::hex;

/// The refusals of sigstore-python that are format differences, not verdicts on the signature.
const FORMAT_ONLY: [&str; 3] = [
    "transparency log entry is inconsistent with other materials",
    "log entry signatures do not match bundle",
    "verificationMaterial.tlogEntries.0.inclusionProof\n  Field required",
];

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv with the pinned sigstore-python, made once.
fn python() -> PathBuf {
    let venv = manifest_dir().join("target/sigstore-python");
    let python = venv.join("bin/python");
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 (with venv) on the test machine");
        assert!(status.success(), "python3 -m venv");
        let status = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--require-hashes", "-r"])
            .arg(manifest_dir().join("tests/sigstore-python/requirements.txt"))
            .status()
            .unwrap();
        assert!(status.success(), "pip install of tests/sigstore-python");
    }
    python
}

fn fixtures() -> PathBuf {
    manifest_dir().join("tests/fixtures/sigstore")
}

fn read(path: &Path) -> String {
    fs_err::read_to_string(path).unwrap()
}

/// Our verdict on `file` under `root`: accepted or not.
fn ours(root: &str, file: &str) -> bool {
    let meta: serde_json::Value =
        serde_json::from_str(&read(&fixtures().join("meta.json"))).unwrap();
    let policy = PublisherPolicy {
        keys: Vec::new(),
        sigstore: Some(SigstorePolicy {
            root: TrustedRoot::parse(read(&fixtures().join(root)).as_bytes()).unwrap(),
            identities: vec![Identity {
                issuer: meta["issuer"].as_str().unwrap().to_owned(),
                subject: meta["subject"].as_str().unwrap().to_owned(),
            }],
        }),
    };
    let text = read(&fixtures().join(file));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let image = meta["digest"].as_str().unwrap().to_owned();
    if file.ends_with("cosign-v2.json") {
        let signature = CosignSignature {
            payload: value["payload"].as_str().unwrap().to_owned(),
            annotations: serde_json::from_value(value["annotations"].clone()).unwrap(),
            found_at: file.to_owned(),
        };
        return cosign_v2::judge(&signature, &image, &policy).is_ok();
    }
    // A message bundle signs `payload.json`, which stands for the manifest here.
    let pinned = if file.contains("dsse") {
        image
    } else {
        format!(
            "sha256:{}",
            hex::sha256_hex(read(&fixtures().join("payload.json")).as_bytes())
        )
    };
    let signature = SigstoreBundle {
        media_type: value["mediaType"].as_str().unwrap().to_owned(),
        json: text,
        found_at: file.to_owned(),
    };
    bundle::judge(&signature, &pinned, &policy).is_ok()
}

#[test]
fn sigstore_python_accepts_nothing_we_refuse_and_refuses_what_we_accept_only_by_format() {
    let output = Command::new(python())
        .arg(manifest_dir().join("tests/sigstore-python/oracle.py"))
        .arg(fixtures())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&output.stdout).unwrap();
    // The committed record is what the pinned sigstore-python says today.
    let recorded: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&read(&fixtures().join("python-oracle.json"))).unwrap();
    assert_eq!(
        verdicts, recorded,
        "tests/fixtures/sigstore/python-oracle.json"
    );
    assert!(verdicts.len() >= 40);
    for (case, verdict) in &verdicts {
        let (root, file) = case.split_once(" + ").unwrap();
        let theirs = verdict["accepted"].as_bool().unwrap();
        let ours = ours(root, file);
        if theirs {
            assert!(ours, "{case}: sigstore-python accepts, we refuse");
        } else if ours {
            let error = verdict["error"].as_str().unwrap();
            assert!(
                FORMAT_ONLY.iter().any(|reason| error.contains(reason)),
                "{case}: we accept, sigstore-python refuses: {error}"
            );
        }
    }
}
