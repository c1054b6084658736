//! DSSE envelopes (a Sigstore bundle's `dsseEnvelope`): the pre-authentication encoding a
//! signature covers, and the in-toto statement subject a cosign v3 image signature binds.
//!
//! cosign v3 signs an image as an in-toto statement (payload type
//! `application/vnd.in-toto+json`, `_type` `https://in-toto.io/Statement/v1`, predicate type
//! `https://sigstore.dev/cosign/sign/v1`) whose `subject` names the manifest digest. The
//! statement binds the pinned image when one subject's `digest.sha256` is the pinned digest's
//! hex, as sigstore-go's artifact-digest policy matches it. The statement is read as the bundle
//! is ([`strict_json`]): a key given twice at any depth (two `sha256` in a subject's digest, read
//! as the last by one verifier and refused or read as the first by another) refuses it. Only that
//! predicate type counts as an image signature: an attestation about the image (a provenance, an
//! SBOM) over the same digest says something else, and is refused.

use crate::support::escape;
use crate::trust::strict_json;
use crate::trust::verdict::Rejection;

/// The payload type of an in-toto statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The statement types read (v1, and v0.1 which has the same `subject`).
pub const STATEMENT_TYPES: [&str; 2] = [
    "https://in-toto.io/Statement/v1",
    "https://in-toto.io/Statement/v0.1",
];
/// The predicate type of a cosign v3 image signature.
pub const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
/// The largest statement read.
pub const MAX_STATEMENT: usize = 256 * 1024;
/// The most subjects a statement may list.
pub const MAX_SUBJECTS: usize = 1024;

/// `DSSEv1 <len(type)> <type> <len(payload)> <payload>`: the bytes a DSSE signature signs.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Whether the envelope's payload is a cosign image-signature statement whose subject includes
/// `pinned` (`sha256:<hex>`): `Malformed` when it is not such a statement, `NotThisImage` when
/// no subject is the pinned digest.
pub fn binds(payload_type: &str, payload: &[u8], pinned: &str) -> Result<(), (Rejection, String)> {
    let malformed = |detail: String| (Rejection::Malformed, detail);
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(malformed(format!(
            "the envelope's payload type is `{}`, not an in-toto statement",
            escape::text(payload_type)
        )));
    }
    if payload.len() > MAX_STATEMENT {
        return Err(malformed(format!(
            "the in-toto statement is {} bytes, over the bound of {MAX_STATEMENT}",
            payload.len()
        )));
    }
    // Read as the bundle around it is read: a key given twice (a subject digest two verifiers
    // would read two ways) refuses the statement.
    let statement = std::str::from_utf8(payload)
        .map_err(|_| malformed("the envelope's payload is not UTF-8".to_owned()))
        .and_then(|text| {
            strict_json::parse(text)
                .map_err(|e| malformed(format!("the envelope's payload is {e}")))
        })?;
    let statement_type = statement.get("_type").and_then(serde_json::Value::as_str);
    if !statement_type.is_some_and(|t| STATEMENT_TYPES.contains(&t)) {
        return Err(malformed(format!(
            "the payload's `_type` is `{}`, not an in-toto statement",
            escape::text(statement_type.unwrap_or("?"))
        )));
    }
    let predicate = statement
        .get("predicateType")
        .and_then(serde_json::Value::as_str);
    if predicate != Some(COSIGN_SIGN_PREDICATE) {
        return Err(malformed(format!(
            "the statement's predicate type is `{}`, not a cosign image signature \
             (`{COSIGN_SIGN_PREDICATE}`)",
            escape::text(predicate.unwrap_or("?"))
        )));
    }
    let subjects = statement
        .get("subject")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| malformed("the statement has no `subject` list".to_owned()))?;
    if subjects.len() > MAX_SUBJECTS {
        return Err(malformed(format!(
            "the statement lists {} subjects, over the bound of {MAX_SUBJECTS}",
            subjects.len()
        )));
    }
    let pinned_hex = pinned.strip_prefix("sha256:").unwrap_or(pinned);
    let named: Vec<&str> = subjects
        .iter()
        .filter_map(|subject| subject.pointer("/digest/sha256"))
        .filter_map(serde_json::Value::as_str)
        .collect();
    if named.contains(&pinned_hex) {
        return Ok(());
    }
    Err((
        Rejection::NotThisImage,
        match named.first() {
            Some(first) => format!(
                "its statement's subject is sha256:{}, not the pinned {pinned}",
                escape::text(first)
            ),
            None => "its statement names no sha256 subject".to_owned(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINNED: &str = "sha256:9ea43bf1799c665c1f6ac0b6bbf7b399a3afe729953437fc7830a2316280e34c";
    const HEX: &str = "9ea43bf1799c665c1f6ac0b6bbf7b399a3afe729953437fc7830a2316280e34c";

    fn statement(subjects: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": subjects,
            "predicateType": COSIGN_SIGN_PREDICATE,
            "predicate": {},
        })
        .to_string()
        .into_bytes()
    }

    #[test]
    fn pae_is_the_dsse_v1_encoding() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab".to_vec());
    }

    #[test]
    fn a_statement_binds_the_pinned_digest_among_its_subjects() {
        let two = statement(serde_json::json!([
            {"digest": {"sha256": "00"}},
            {"name": "x", "digest": {"sha512": "11", "sha256": HEX}},
        ]));
        assert_eq!(binds(IN_TOTO_PAYLOAD_TYPE, &two, PINNED), Ok(()));
    }

    #[test]
    fn a_statement_about_another_image_is_not_this_image() {
        let other = statement(serde_json::json!([{"digest": {"sha256": "00"}}]));
        let upper = statement(serde_json::json!([{"digest": {"sha256": HEX.to_uppercase()}}]));
        let other_algorithm = statement(serde_json::json!([{"digest": {"sha512": HEX}}]));
        for payload in [
            other,
            upper,
            other_algorithm,
            statement(serde_json::json!([])),
        ] {
            let refused = binds(IN_TOTO_PAYLOAD_TYPE, &payload, PINNED).unwrap_err();
            assert_eq!(refused.0, Rejection::NotThisImage);
        }
    }

    #[test]
    fn a_statement_with_a_key_given_twice_is_malformed_whichever_comes_last() {
        // The subject's digest names another image first and the pinned one last (what a
        // last-key-wins reader binds), or the reverse (what a first-key reader binds).
        let other = "00".repeat(32);
        for (first, last) in [(other.as_str(), HEX), (HEX, other.as_str())] {
            let payload = format!(
                r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"digest":{{"sha256":"{first}","sha256":"{last}"}}}}],"predicateType":"{COSIGN_SIGN_PREDICATE}","predicate":{{}}}}"#
            );
            let refused = binds(IN_TOTO_PAYLOAD_TYPE, payload.as_bytes(), PINNED).unwrap_err();
            assert_eq!(refused.0, Rejection::Malformed, "{}", refused.1);
            assert!(refused.1.contains("given twice"), "{}", refused.1);
        }
        // A top-level key twice too (a second `predicateType`).
        let text =
            String::from_utf8(statement(serde_json::json!([{"digest": {"sha256": HEX}}]))).unwrap();
        let twice = text.replacen(
            "\"predicateType\"",
            "\"predicateType\":\"https://slsa.dev/provenance/v1\",\"predicateType\"",
            1,
        );
        let refused = binds(IN_TOTO_PAYLOAD_TYPE, twice.as_bytes(), PINNED).unwrap_err();
        assert_eq!(refused.0, Rejection::Malformed, "{}", refused.1);
        // A payload that is not UTF-8.
        let refused = binds(IN_TOTO_PAYLOAD_TYPE, &[0xc3, 0x28], PINNED).unwrap_err();
        assert_eq!(refused.0, Rejection::Malformed);
    }

    #[test]
    fn what_is_not_a_cosign_signature_statement_is_malformed() {
        let good = statement(serde_json::json!([{"digest": {"sha256": HEX}}]));
        let text = String::from_utf8(good.clone()).unwrap();
        let cases = [
            ("payload type", "application/json", good.clone()),
            ("not JSON", IN_TOTO_PAYLOAD_TYPE, b"{".to_vec()),
            (
                "statement type",
                IN_TOTO_PAYLOAD_TYPE,
                text.replace("in-toto.io/Statement/v1", "example/x")
                    .into_bytes(),
            ),
            (
                "predicate",
                IN_TOTO_PAYLOAD_TYPE,
                text.replace(COSIGN_SIGN_PREDICATE, "https://slsa.dev/provenance/v1")
                    .into_bytes(),
            ),
            (
                "no subject",
                IN_TOTO_PAYLOAD_TYPE,
                text.replace("\"subject\"", "\"subjects\"").into_bytes(),
            ),
            (
                "too many subjects",
                IN_TOTO_PAYLOAD_TYPE,
                statement(serde_json::Value::Array(vec![
                    serde_json::json!({"digest": {"sha256": HEX}});
                    MAX_SUBJECTS + 1
                ])),
            ),
            (
                "too long",
                IN_TOTO_PAYLOAD_TYPE,
                vec![b' '; MAX_STATEMENT + 1],
            ),
        ];
        for (name, payload_type, payload) in cases {
            let refused = binds(payload_type, &payload, PINNED).unwrap_err();
            assert_eq!(refused.0, Rejection::Malformed, "{name}");
        }
    }
}
