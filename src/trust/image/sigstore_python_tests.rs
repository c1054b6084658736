//! sigstore-python (4.5.1, pinned in `tests/sigstore-python/requirements.txt`, installed by this
//! test into a venv under `target/`) as the reference verdict on every keyless fixture of
//! `tests/fixtures/sigstore`, with the fixture's trusted root, offline. Our verdict must equal
//! sigstore-python's on every case but two kinds, each named and bounded here:
//! - we refuse, sigstore-python accepts: only under the two `*-ended` roots (a CA or log whose
//!   `validFor` ended before the signing time). sigstore-python does not apply those windows;
//!   sigstore-go and sigstore-js do, and so do we (stricter is allowed, never more lenient);
//! - we accept, sigstore-python refuses: only a cosign ≤ v2 signature, for the format reason
//!   that its bundle model requires an inclusion proof in every entry, which a cosign ≤ v2 Rekor
//!   bundle annotation never has (cosign verifies its signed entry timestamp alone, as we do).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::hex;
use crate::trust::image::material::{CosignSignature, SigstoreBundle};
use crate::trust::image::policy::{PublisherPolicy, SigstoreIdentity, SigstorePolicy};
use crate::trust::image::{bundle, cosign_v2};
use crate::trust::x509::trusted_root::TrustedRoot;

/// sigstore-python's refusal of a cosign ≤ v2 signature's entry: no inclusion proof.
const NO_PROOF: &str = "verificationMaterial.tlogEntries.0.inclusionProof\n  Field required";

/// The roots under which we refuse what sigstore-python accepts (validity windows).
const WINDOW_ENDED: [&str; 2] = ["trusted_root.ca-ended.json", "trusted_root.log-ended.json"];

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
            identities: vec![SigstoreIdentity {
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
fn our_verdicts_equal_sigstore_pythons_but_for_the_named_differences() {
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
    let mut differences = 0;
    for (case, verdict) in &verdicts {
        let (root, file) = case.split_once(" + ").unwrap();
        let theirs = verdict["accepted"].as_bool().unwrap();
        let ours = ours(root, file);
        if theirs == ours {
            continue;
        }
        differences += 1;
        if theirs {
            assert!(
                WINDOW_ENDED.contains(&root),
                "{case}: sigstore-python accepts, we refuse"
            );
        } else {
            let error = verdict["error"].as_str().unwrap();
            assert!(
                file.ends_with("cosign-v2.json") && error.contains(NO_PROOF),
                "{case}: we accept, sigstore-python refuses: {error}"
            );
        }
    }
    // 6 bundles under the ended roots, the 2 cosign v2 signatures we accept.
    assert_eq!(differences, 8);
}
