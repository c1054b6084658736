//! The cosign "simple signing" payload a cosign ≤ v2 signature signs: `{"critical":{"identity":
//! {"docker-reference":…},"image":{"docker-manifest-digest":"sha256:…"},"type":"cosign container
//! image signature"},"optional":…}`. [`digest_of`] reads the digest it binds; [`payload`] writes
//! one (`push --sign-key`).
//!
//! The shape is sigstore/sigstore's `payload.SimpleContainerImage` (what cosign marshals with Go's
//! `encoding/json`: the fields in that order, `optional` `null` when no annotation is given).
//! Reading is stricter than Go's decoder, never more lenient: the JSON must be valid UTF-8, field
//! names match exactly (Go matches them case-insensitively), a field may not repeat (Go keeps the
//! last), no unknown field may sit beside the known ones in `critical`, and `optional`, free
//! for the signer, must be `null` or an object as Go's `map[string]any` wants.

use serde::Deserialize;

use crate::support::escape;

/// The `type` of a cosign container image signature.
pub const TYPE: &str = "cosign container image signature";

/// The most bytes a payload may hold; a larger one is refused before it is parsed.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// The payload as cosign writes it; unknown top-level fields are ignored as Go ignores them,
/// except a case variant of `critical` or `optional`.
#[derive(Deserialize)]
struct SimpleContainerImage {
    critical: Critical,
    #[serde(default)]
    optional: serde_json::Value,
    #[serde(flatten)]
    others: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    docker_manifest_digest: String,
}

/// Why a payload is not a cosign simple-signing payload (each message names the rule).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// Over [`MAX_PAYLOAD_BYTES`], refused before it is parsed.
    #[error("a simple-signing payload of {bytes} bytes: at most {MAX_PAYLOAD_BYTES}")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Not JSON of the payload's shape (the reader's words, escaped).
    #[error("not a cosign simple-signing payload ({reason})")]
    NotPayload {
        /// What the reader found (escaped).
        reason: String,
    },
    /// A case variant of `critical` or `optional` beside them (Go would read either).
    #[error("a simple-signing payload with a field `{name}` beside `critical` and `optional`")]
    CaseVariant {
        /// The field (escaped).
        name: String,
    },
    /// `optional` is neither null nor an object.
    #[error("a simple-signing payload whose `optional` is neither null nor an object")]
    Optional,
    /// `critical.type` is not cosign's.
    #[error("a simple-signing payload of type `{kind}`, not `{TYPE}`")]
    Type {
        /// The type (escaped).
        kind: String,
    },
    /// `critical.identity.docker-reference` is empty or holds whitespace or control characters.
    #[error(
        "a simple-signing payload whose `docker-reference` is empty or holds whitespace or \
         control characters"
    )]
    Reference,
    /// `critical.image.docker-manifest-digest` is not a lowercase SHA-256 digest.
    #[error(
        "a simple-signing payload whose `docker-manifest-digest` `{digest}` is not `sha256:` and \
         64 lowercase hex digits"
    )]
    Digest {
        /// The digest (escaped).
        digest: String,
    },
}

/// The manifest digest `payload` binds (`critical.image.docker-manifest-digest`), its `type`
/// checked; the error says what is wrong.
pub fn digest_of(payload: &[u8]) -> Result<String, PayloadError> {
    if payload.len() > MAX_PAYLOAD_BYTES {
        return Err(PayloadError::TooLarge {
            bytes: payload.len(),
        });
    }
    let parsed: SimpleContainerImage =
        serde_json::from_slice(payload).map_err(|e| PayloadError::NotPayload {
            reason: escape::text(&e.to_string()).to_string(),
        })?;
    if let Some(name) = parsed
        .others
        .keys()
        .find(|name| name.eq_ignore_ascii_case("critical") || name.eq_ignore_ascii_case("optional"))
    {
        return Err(PayloadError::CaseVariant {
            name: escape::text(name).to_string(),
        });
    }
    if !(parsed.optional.is_null() || parsed.optional.is_object()) {
        return Err(PayloadError::Optional);
    }
    let critical = parsed.critical;
    if critical.kind != TYPE {
        return Err(PayloadError::Type {
            kind: escape::text(&critical.kind).to_string(),
        });
    }
    let reference = &critical.identity.docker_reference;
    if reference.is_empty()
        || reference
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || escape::needs_escape(c))
    {
        return Err(PayloadError::Reference);
    }
    let digest = critical.image.docker_manifest_digest;
    let valid = digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| crate::support::hex::decode_lower_32(hex).is_some());
    if !valid {
        return Err(PayloadError::Digest {
            digest: escape::text(&digest).to_string(),
        });
    }
    Ok(digest)
}

/// The payload cosign writes for `reference` (`REGISTRY/REPOSITORY`) at `digest`.
#[cfg(any(feature = "oci", test))]
pub fn payload(reference: &str, digest: &str) -> Vec<u8> {
    let string = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":{}}},"image":{{"docker-manifest-digest":{}}},"type":{}}},"optional":null}}"#,
        string(reference),
        string(digest),
        string(TYPE),
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn with(critical: &str, rest: &str) -> Vec<u8> {
        format!(r#"{{"critical":{critical}{rest}}}"#).into_bytes()
    }

    fn critical(reference: &str, digest: &str, kind: &str) -> String {
        format!(
            r#"{{"identity":{{"docker-reference":"{reference}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"{kind}"}}"#
        )
    }

    fn refusal(payload: &[u8]) -> String {
        digest_of(payload).unwrap_err().to_string()
    }

    #[test]
    fn payload_is_the_bytes_cosign_writes() {
        // A cosign 2.x signature's payload, byte for byte (`cosign sign --key` without `-a`).
        assert_eq!(
            String::from_utf8(payload("127.0.0.1:5000/skills/demo", DIGEST)).unwrap(),
            format!(
                "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"127.0.0.1:5000/skills/demo\"}},\
                 \"image\":{{\"docker-manifest-digest\":\"{DIGEST}\"}},\"type\":\"cosign container \
                 image signature\"}},\"optional\":null}}"
            )
        );
        assert_eq!(
            digest_of(&payload("r.example/a/b", DIGEST)).unwrap(),
            DIGEST
        );
    }

    #[test]
    fn optional_may_be_null_absent_or_an_object() {
        let c = critical("r.example/a", DIGEST, TYPE);
        for rest in [
            "",
            r#","optional":null"#,
            r#","optional":{}"#,
            r#","optional":{"sig":"x","n":[1,{"a":null}]}"#,
        ] {
            assert_eq!(digest_of(&with(&c, rest)).unwrap(), DIGEST, "{rest}");
        }
        for rest in [
            r#","optional":[]"#,
            r#","optional":"x""#,
            r#","optional":1"#,
        ] {
            assert!(refusal(&with(&c, rest)).contains("`optional`"), "{rest}");
        }
        // An unknown top-level field is ignored as cosign ignores it.
        assert_eq!(digest_of(&with(&c, r#","extra":1"#)).unwrap(), DIGEST);
    }

    #[test]
    fn the_type_must_be_cosigns() {
        let c = critical("r.example/a", DIGEST, "atomic container signature");
        assert_eq!(
            refusal(&with(&c, "")),
            "a simple-signing payload of type `atomic container signature`, not `cosign container \
             image signature`"
        );
        let hostile = critical("r.example/a", DIGEST, "x\\u001b[8m");
        assert!(refusal(&with(&hostile, "")).contains("x\\u{1b}[8m"));
    }

    #[test]
    fn the_digest_must_be_sha256_lowercase_hex() {
        for digest in [
            "",
            "sha256:",
            &DIGEST.to_uppercase(),
            &DIGEST.replace("sha256:", "sha512:"),
            &DIGEST.replace("sha256:", "SHA256:"),
            &DIGEST[..DIGEST.len() - 1],
            &format!("{DIGEST}0"),
            &DIGEST.replace('a', "g"),
            &format!(" {DIGEST}"),
        ] {
            let err = digest_of(&with(&critical("r.example/a", digest, TYPE), "")).unwrap_err();
            assert!(
                matches!(err, PayloadError::Digest { .. }),
                "{digest}: {err}"
            );
        }
    }

    #[test]
    fn the_reference_must_be_a_plain_string() {
        for reference in ["", "a b", "r.example/a\\n", "r\\u202ex"] {
            let err = digest_of(&with(&critical(reference, DIGEST, TYPE), "")).unwrap_err();
            assert_eq!(err, PayloadError::Reference, "{reference}");
        }
    }

    #[test]
    fn the_shape_is_strict() {
        let c = critical("r.example/a", DIGEST, TYPE);
        let refused = |payload: &[u8]| {
            let err = digest_of(payload).unwrap_err();
            assert!(matches!(err, PayloadError::NotPayload { .. }), "{err}");
        };
        refused(b"");
        refused(b"null");
        refused(b"[]");
        refused(b"{}");
        refused(
            &with(&c, "")
                .into_iter()
                .chain(*b" trailing")
                .collect::<Vec<_>>(),
        );
        refused(&[&with(&c, "")[..], b"{}"].concat());
        // A repeated field (Go keeps the last one).
        refused(&with(&c, &format!(r#","critical":{c}"#)));
        // A field missing, unknown or of another kind in `critical`.
        refused(&with(
            r#"{"image":{"docker-manifest-digest":"x"},"type":"cosign container image signature"}"#,
            "",
        ));
        refused(&with(&c.replacen('{', r#"{"extra":1,"#, 1), ""));
        refused(&with(
            &c.replace(
                r#""type":"cosign container image signature""#,
                r#""type":1"#,
            ),
            "",
        ));
        refused(&with(
            &c.replace("docker-reference", "Docker-Reference"),
            "",
        ));
        refused(&with(
            &c.replace(&format!(r#""{DIGEST}""#), &format!(r#"["{DIGEST}"]"#)),
            "",
        ));
        // Not UTF-8.
        refused(
            &with(&c.replace("r.example", "r.\u{e9}xample"), "")
                .into_iter()
                .map(|b| if b == 0xc3 { 0xff } else { b })
                .collect::<Vec<_>>(),
        );
        // A case variant of `critical` beside it (Go would match it, and keep the last).
        let variant = with(&c, &format!(r#","Critical":{c}"#));
        assert!(refusal(&variant).contains("a field `Critical` beside"));
        let variant = with(&c, r#","OPTIONAL":[]"#);
        assert!(refusal(&variant).contains("a field `OPTIONAL` beside"));
        // Deep nesting in `optional` stops at serde_json's recursion limit.
        let deep = format!(
            r#","optional":{{"a":{}1{}}}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        );
        refused(&with(&c, &deep));
    }

    #[test]
    fn a_large_payload_is_refused_before_parsing() {
        let c = critical("r.example/a", DIGEST, TYPE);
        let padding = format!(r#","optional":{{"p":"{}"}}"#, "x".repeat(MAX_PAYLOAD_BYTES));
        let message = refusal(&with(&c, &padding));
        assert!(message.contains("at most 65536"), "{message}");
        let not_json = vec![b'x'; MAX_PAYLOAD_BYTES + 1];
        assert!(refusal(&not_json).contains("at most 65536"));
    }
}
