//! The digest against every vector of `tests/data/digest-vectors.json` (a copy of
//! `shared/reference/digest-vectors.json`; refresh it by copying that file again), with the
//! framer and the domain line. (Moved from `tests/it/digest_vectors.rs`: the framer is not host
//! API; `skillfold hash` against the vectors is tested in `tests/it/cli_hash.rs`.)

use crate::format::digest::{BundleDigest, Framer};
use crate::format::file_set::FileSetBuilder;
use serde_json::Value;

fn vectors() -> Value {
    let text = include_str!("../../tests/data/digest-vectors.json");
    serde_json::from_str(text).expect("vectors parse")
}

fn digest_of(files: &serde_json::Map<String, Value>) -> BundleDigest {
    let mut builder = FileSetBuilder::new();
    // Insert in reverse so the test proves the order comes from the file set, not the caller.
    for (path, content) in files.iter().rev() {
        builder.insert(path, content.as_str().expect("text").as_bytes().to_vec());
    }
    let (files, problems) = builder.finish();
    assert!(!problems.has_errors(), "{problems:?}");
    BundleDigest::of(&files)
}

fn framed_in_order(files: &serde_json::Map<String, Value>, order: &[Value]) -> BundleDigest {
    let mut framer = Framer::new();
    for path in order {
        let path = path.as_str().expect("path");
        framer.file(path, files[path].as_str().expect("text").as_bytes());
    }
    framer.finish()
}

#[test]
fn domain_line_matches() {
    let v = vectors();
    assert_eq!(
        v["domain"].as_str().expect("domain").as_bytes(),
        crate::format::digest::DOMAIN
    );
}

#[test]
fn every_vector_matches() {
    let v = vectors();
    let list = v["vectors"].as_array().expect("vectors");
    assert!(list.len() >= 7);
    for vector in list {
        let name = vector["name"].as_str().expect("name");
        let files = vector["files"].as_object().expect("files");
        let want = vector["digest"].as_str().expect("digest");
        assert_eq!(digest_of(files).to_string(), want, "{name}");
        // The preimage order the vector documents is the one we hash in.
        let order = vector["order"].as_array().expect("order");
        assert_eq!(
            framed_in_order(files, order).to_string(),
            want,
            "{name} order"
        );
        // Per-file SHA-256 as reported by `hash --json`.
        for (path, sha) in vector["file_sha256"].as_object().expect("file_sha256") {
            let bytes = files[path].as_str().expect("text").as_bytes();
            use sha2::Digest as _;
            let got: String = sha2::Sha256::digest(bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(&got, sha.as_str().expect("sha"), "{name} {path}");
        }
    }
}

#[test]
fn wrong_orders_are_not_produced() {
    let v = vectors();
    let wrong = &v["wrong_orders"];
    for (vector_name, order_key, digest_key) in [
        (
            "V4-fullpath-vs-walk-order",
            "V4_walk_order",
            "V4_walk_order_digest_if_hashed_in_that_order",
        ),
        (
            "V5-codepoint-vs-utf16-order",
            "V5_utf16_order",
            "V5_utf16_order_digest_if_hashed_in_that_order",
        ),
    ] {
        let vector = v["vectors"]
            .as_array()
            .expect("vectors")
            .iter()
            .find(|x| x["name"] == vector_name)
            .expect("vector present");
        let files = vector["files"].as_object().expect("files");
        let wrong_digest = wrong[digest_key].as_str().expect("digest");
        // The vector's wrong digest really is that order's digest ...
        let order = wrong[order_key].as_array().expect("order");
        assert_eq!(framed_in_order(files, order).to_string(), wrong_digest);
        // ... and ours is not it.
        assert_ne!(digest_of(files).to_string(), wrong_digest, "{vector_name}");
    }
}

#[test]
fn framing_prevents_the_naive_collision() {
    let v = vectors();
    let c = &v["naive_collision"];
    for (bundle, want) in [("bundle_A", "framed_A"), ("bundle_B", "framed_B")] {
        let files = c[bundle].as_object().expect("files");
        assert_eq!(
            digest_of(files).to_string(),
            c[want].as_str().expect("digest")
        );
    }
    assert_ne!(c["framed_A"], c["framed_B"]);
}
