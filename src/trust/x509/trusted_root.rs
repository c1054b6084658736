//! The Sigstore trusted root (`verify.sigstore.trusted_root`; the protobuf-specs
//! `TrustedRoot` message as JSON, media type `application/vnd.dev.sigstore.trustedroot+json;version=0.1`):
//! the Fulcio certificate authorities (each a chain and a validity window), the transparency
//! logs' keys and the certificate transparency (CT) logs' keys (each with its log id and validity
//! window). Read with the descriptor, bounded; timestamp authorities are read past, not used (see
//! docs/security.md).
//!
//! Rules, each refusal naming the field: the file is at most [`MAX_FILE`] bytes (checked before
//! it is parsed); `mediaType` is `application/vnd.dev.sigstore.trustedroot+json;version=0.1` or
//! its newer spellings `application/vnd.dev.sigstore.trustedroot.v0.1+json` and
//! `application/vnd.dev.sigstore.trustedroot.v0.2+json` (the same message); at least one and at
//! most [`MAX_AUTHORITIES`] certificate authorities, each with 1 to [`MAX_CHAIN`] certificates
//! (standard base64 of DER, each read as an X.509 certificate, the last usable as a trust
//! anchor) and a `validFor` with a `start`; at least one and at most [`MAX_LOGS`] transparency
//! logs, each with `hashAlgorithm` `SHA2_256`, `publicKey.rawBytes` (a DER SubjectPublicKeyInfo
//! of a kind [`PublicKey`] verifies), `publicKey.validFor.start` and
//! `logId.keyId`; at most [`MAX_LOGS`] CT logs (`ctlogs`), each read by the same rules but one:
//! a CT log whose key is not of a kind we verify is left out (see `ct_log`). A root
//! without CT logs is read, but every keyless signature is then refused: a Fulcio leaf must carry
//! an SCT from a CT log the root names, as cosign, sigstore-go and sigstore-js require. Times are
//! RFC 3339 (`2021-01-12T11:53:27Z`, fractions and offsets allowed).
//! Field names are protobuf JSON's (lowerCamelCase, or the proto's snake_case); unknown fields
//! are read past, as protobuf JSON readers do.
//!
//! A log's id is taken as the root gives it, not recomputed from its key, as sigstore-go does:
//! for a Rekor v1 log it is the SHA-256 of the key's SubjectPublicKeyInfo, but the public-good
//! root names its Rekor v2 log (`log2025-1`) by another id, and refusing that would refuse the
//! root every Sigstore user pins.

use std::path::Path;

use base64::Engine as _;
use serde::Deserialize;

use crate::support::escape;
use crate::trust::keys::public_key::PublicKey;
use crate::trust::x509;

/// The largest trusted root file read (the public-good root is about 7 KiB).
pub const MAX_FILE: u64 = 1024 * 1024;
/// The most certificate authorities a root may name.
pub const MAX_AUTHORITIES: usize = 32;
/// The most certificates in one authority's chain.
pub const MAX_CHAIN: usize = 8;
/// The most transparency logs a root may name.
pub const MAX_LOGS: usize = 32;

/// The media types of a trusted root.
pub const MEDIA_TYPES: [&str; 3] = [
    "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    "application/vnd.dev.sigstore.trustedroot.v0.1+json",
    "application/vnd.dev.sigstore.trustedroot.v0.2+json",
];

/// One Fulcio certificate authority.
#[derive(Debug, Clone)]
pub struct CertificateAuthority {
    /// Its chain, DER, leaf-most first (the last is the root).
    pub chain: Vec<Vec<u8>>,
    /// Valid from (Unix seconds).
    pub valid_from: i64,
    /// Valid until (Unix seconds), if it ends.
    pub valid_until: Option<i64>,
}

/// One transparency log's key.
#[derive(Debug, Clone)]
pub struct LogKey {
    /// The log id, as the root gives it (`logId.keyId`): for a Rekor v1 log the SHA-256 of the
    /// key's DER SubjectPublicKeyInfo, as Rekor names it (not recomputed: see the module doc).
    pub log_id: Vec<u8>,
    /// The key.
    pub key: PublicKey,
    /// Valid from (Unix seconds).
    pub valid_from: i64,
    /// Valid until (Unix seconds), if it ends.
    pub valid_until: Option<i64>,
}

/// A parsed trusted root.
#[derive(Debug, Clone)]
pub struct TrustedRoot {
    /// The Fulcio certificate authorities.
    pub authorities: Vec<CertificateAuthority>,
    /// The transparency logs' keys.
    pub logs: Vec<LogKey>,
    /// The certificate transparency logs' keys (`ctlogs`), which sign a Fulcio leaf's SCTs; none
    /// means no keyless signature verifies.
    pub ct_logs: Vec<LogKey>,
}

impl TrustedRoot {
    /// Parses a trusted root's JSON; the error names the rule broken.
    pub fn parse(json: &[u8]) -> Result<TrustedRoot, String> {
        if json.len() as u64 > MAX_FILE {
            return Err(format!(
                "a trusted root of {} bytes, over the {MAX_FILE}-byte limit",
                json.len()
            ));
        }
        let document: Document = serde_json::from_slice(json).map_err(|e| {
            // serde's message quotes what it found: escaped like everything from outside.
            format!(
                "not a Sigstore trusted root (protobuf JSON): {}",
                escape::text(&e.to_string())
            )
        })?;
        let media_type = document.media_type.as_deref().unwrap_or("");
        if !MEDIA_TYPES.contains(&media_type) {
            return Err(format!(
                "`mediaType` is `{}`, not `{}`",
                escape::text(media_type),
                MEDIA_TYPES[0]
            ));
        }
        let authorities = document.certificate_authorities.unwrap_or_default();
        if authorities.is_empty() {
            return Err(
                "`certificateAuthorities` names no Fulcio certificate authority".to_owned(),
            );
        }
        if authorities.len() > MAX_AUTHORITIES {
            return Err(format!(
                "`certificateAuthorities` names {} authorities, over the limit of {MAX_AUTHORITIES}",
                authorities.len()
            ));
        }
        let logs = document.tlogs.unwrap_or_default();
        if logs.is_empty() {
            return Err("`tlogs` names no transparency log".to_owned());
        }
        if logs.len() > MAX_LOGS {
            return Err(format!(
                "`tlogs` names {} logs, over the limit of {MAX_LOGS}",
                logs.len()
            ));
        }
        let ct_logs = document.ctlogs.unwrap_or_default();
        if ct_logs.len() > MAX_LOGS {
            return Err(format!(
                "`ctlogs` names {} logs, over the limit of {MAX_LOGS}",
                ct_logs.len()
            ));
        }
        Ok(TrustedRoot {
            authorities: authorities
                .into_iter()
                .enumerate()
                .map(|(i, a)| authority(a).map_err(|e| format!("`certificateAuthorities[{i}]`{e}")))
                .collect::<Result<_, _>>()?,
            logs: logs
                .into_iter()
                .enumerate()
                .map(|(i, l)| log(l).map_err(|e| format!("`tlogs[{i}]`{e}")))
                .collect::<Result<_, _>>()?,
            ct_logs: ct_logs
                .into_iter()
                .enumerate()
                .map(|(i, l)| ct_log(l).map_err(|e| format!("`ctlogs[{i}]`{e}")))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flatten()
                .collect(),
        })
    }

    /// Reads and parses the file at `path` (bounded).
    pub fn read(path: &Path) -> Result<TrustedRoot, String> {
        use std::io::Read as _;
        let unreadable = |e: std::io::Error| escape::text(&e.to_string()).to_string();
        let file = fs_err::File::open(path).map_err(unreadable)?;
        let mut json = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut json)
            .map_err(unreadable)?;
        if json.len() as u64 > MAX_FILE {
            return Err(format!("a trusted root over the {MAX_FILE}-byte limit"));
        }
        TrustedRoot::parse(&json)
    }
}

/// The trusted root as protobuf JSON spells it: what is read. The rest (
/// `timestampAuthorities`, `subject`, `uri`, `keyDetails`, …) is read past without being held.
#[derive(Deserialize)]
struct Document {
    #[serde(rename = "mediaType", alias = "media_type")]
    media_type: Option<String>,
    tlogs: Option<Vec<LogInstance>>,
    ctlogs: Option<Vec<LogInstance>>,
    #[serde(rename = "certificateAuthorities", alias = "certificate_authorities")]
    certificate_authorities: Option<Vec<Authority>>,
}

#[derive(Deserialize)]
struct LogInstance {
    #[serde(rename = "hashAlgorithm", alias = "hash_algorithm")]
    hash_algorithm: Option<String>,
    #[serde(rename = "publicKey", alias = "public_key")]
    public_key: Option<LogPublicKey>,
    #[serde(rename = "logId", alias = "log_id")]
    log_id: Option<LogId>,
}

#[derive(Deserialize)]
struct LogPublicKey {
    #[serde(rename = "rawBytes", alias = "raw_bytes")]
    raw_bytes: Option<String>,
    #[serde(rename = "validFor", alias = "valid_for")]
    valid_for: Option<TimeRange>,
}

#[derive(Deserialize)]
struct LogId {
    #[serde(rename = "keyId", alias = "key_id")]
    key_id: Option<String>,
}

#[derive(Deserialize)]
struct Authority {
    #[serde(rename = "certChain", alias = "cert_chain")]
    cert_chain: Option<CertChain>,
    #[serde(rename = "validFor", alias = "valid_for")]
    valid_for: Option<TimeRange>,
}

#[derive(Deserialize)]
struct CertChain {
    certificates: Option<Vec<RawBytes>>,
}

#[derive(Deserialize)]
struct RawBytes {
    #[serde(rename = "rawBytes", alias = "raw_bytes")]
    raw_bytes: Option<String>,
}

#[derive(Deserialize)]
struct TimeRange {
    start: Option<String>,
    end: Option<String>,
}

fn authority(authority: Authority) -> Result<CertificateAuthority, String> {
    let certificates = authority
        .cert_chain
        .and_then(|c| c.certificates)
        .unwrap_or_default();
    if certificates.is_empty() {
        return Err(".certChain.certificates: no certificate".to_owned());
    }
    if certificates.len() > MAX_CHAIN {
        return Err(format!(
            ".certChain.certificates: {} certificates, over the limit of {MAX_CHAIN}",
            certificates.len()
        ));
    }
    let mut chain = Vec::with_capacity(certificates.len());
    for (i, certificate) in certificates.into_iter().enumerate() {
        let at = format!(".certChain.certificates[{i}].rawBytes");
        let der = base64_field(certificate.raw_bytes.as_deref(), x509::MAX_CERTIFICATE)
            .map_err(|e| format!("{at}: {e}"))?;
        x509::Certificate::parse(&der)
            .map_err(|e| format!("{at}: not an X.509 certificate: {e}"))?;
        chain.push(der);
    }
    if let Some(root) = chain.last() {
        let root = rustls_pki_types::CertificateDer::from(root.as_slice());
        webpki::anchor_from_trusted_cert(&root).map_err(|e| {
            format!(".certChain.certificates (last): not usable as a trust anchor: {e}")
        })?;
    }
    let (valid_from, valid_until) =
        window(authority.valid_for).map_err(|e| format!(".validFor{e}"))?;
    Ok(CertificateAuthority {
        chain,
        valid_from,
        valid_until,
    })
}

fn log(instance: LogInstance) -> Result<LogKey, String> {
    log_entry(instance, false)?
        .ok_or_else(|| ".publicKey.rawBytes: not a usable log key".to_owned())
}

/// A CT log: read by the rules of a transparency log, but one whose key is not a DER
/// SubjectPublicKeyInfo of a kind [`PublicKey`] verifies is left out, not
/// refused: the staging root still lists an old CT log by a PKCS#1 RSA key, and refusing it would
/// refuse that root. Leaving a CT log out only makes its SCTs count for nothing (fail closed).
fn ct_log(instance: LogInstance) -> Result<Option<LogKey>, String> {
    log_entry(instance, true)
}

/// One log of `tlogs` or `ctlogs`; `None` when its key is not usable and `skip_unusable_key`.
fn log_entry(instance: LogInstance, skip_unusable_key: bool) -> Result<Option<LogKey>, String> {
    // The Merkle tree's hash; sigstore-go refuses any other (or none), and so does this reader.
    let hash = instance.hash_algorithm.as_deref().unwrap_or("");
    if hash != "SHA2_256" {
        return Err(format!(
            ".hashAlgorithm: `{}`, not `SHA2_256`",
            escape::text(hash)
        ));
    }
    let public_key = instance.public_key.ok_or(".publicKey: missing")?;
    // A DER SubjectPublicKeyInfo of an RSA 4096-bit key is about 550 bytes.
    let spki = base64_field(public_key.raw_bytes.as_deref(), 16 * 1024)
        .map_err(|e| format!(".publicKey.rawBytes: {e}"))?;
    let log_id = base64_field(instance.log_id.and_then(|l| l.key_id).as_deref(), 64)
        .map_err(|e| format!(".logId.keyId: {e}"))?;
    if log_id.is_empty() {
        return Err(".logId.keyId: empty".to_owned());
    }
    let (valid_from, valid_until) =
        window(public_key.valid_for).map_err(|e| format!(".publicKey.validFor{e}"))?;
    let key = match PublicKey::from_spki_der(&spki) {
        Ok(key) => key,
        Err(_) if skip_unusable_key => return Ok(None),
        Err(e) => return Err(format!(".publicKey.rawBytes: not a usable log key: {e}")),
    };
    Ok(Some(LogKey {
        log_id,
        key,
        valid_from,
        valid_until,
    }))
}

/// Standard base64 (protobuf JSON's `bytes`), its encoded length bounded before decoding.
fn base64_field(text: Option<&str>, max_decoded: usize) -> Result<Vec<u8>, String> {
    let text = text.ok_or("missing")?;
    if text.len() > max_decoded.div_ceil(3) * 4 {
        return Err(format!("over the {max_decoded}-byte limit"));
    }
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("not standard base64: {e}"))
}

/// A `validFor` range: its start (required) and end (optional), Unix seconds.
fn window(range: Option<TimeRange>) -> Result<(i64, Option<i64>), String> {
    let range = range.ok_or(": missing")?;
    let start = range.start.as_deref().ok_or(".start: missing")?;
    let start = rfc3339(start).map_err(|e| format!(".start: {e}"))?;
    let end = match range.end.as_deref() {
        Some(end) => Some(rfc3339(end).map_err(|e| format!(".end: {e}"))?),
        None => None,
    };
    if end.is_some_and(|end| end < start) {
        return Err(": ends before it starts".to_owned());
    }
    Ok((start, end))
}

/// Unix seconds of an RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); a fraction
/// is dropped (times are compared to the second).
pub fn rfc3339(text: &str) -> Result<i64, String> {
    let wrong = || format!("`{}` is not an RFC 3339 time", escape::text(text));
    let bytes = text.as_bytes();
    if text.len() < 20 || text.len() > 40 || !text.is_ascii() {
        return Err(wrong());
    }
    let number = |range: std::ops::Range<usize>| -> Result<i64, String> {
        let part = &text[range];
        if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse().map_err(|_| wrong())
        } else {
            Err(wrong())
        }
    };
    if bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return Err(wrong());
    }
    let seconds = x509::unix_time(
        number(0..4)?,
        number(5..7)?,
        number(8..10)?,
        number(11..13)?,
        number(14..16)?,
        number(17..19)?,
    )
    .ok_or_else(wrong)?;
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(wrong());
        }
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':' =>
        {
            let hours = number(text.len() - 5..text.len() - 3)?;
            let minutes = number(text.len() - 2..text.len())?;
            if hours > 23 || minutes > 59 {
                return Err(wrong());
            }
            let offset = hours * 3600 + minutes * 60;
            if rest.starts_with('-') {
                -offset
            } else {
                offset
            }
        }
        _ => return Err(wrong()),
    };
    Ok(seconds - offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sigstore/trusted_root.json"
    );

    fn fixture() -> Value {
        serde_json::from_slice(&fs_err::read(FIXTURE).unwrap()).unwrap()
    }

    fn signed_at() -> i64 {
        let meta: Value = serde_json::from_slice(
            &fs_err::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/sigstore/meta.json"
            ))
            .unwrap(),
        )
        .unwrap();
        meta["signed_at"].as_i64().unwrap()
    }

    fn refusal(document: &Value) -> String {
        TrustedRoot::parse(&serde_json::to_vec(document).unwrap()).unwrap_err()
    }

    /// `change` applied to the fixture makes the root refused with a message holding `rule`.
    fn refused(change: impl FnOnce(&mut Value), rule: &str) {
        let mut document = fixture();
        change(&mut document);
        let error = refusal(&document);
        assert!(error.contains(rule), "{error:?} does not say {rule:?}");
    }

    #[test]
    fn the_sigstore_js_root_is_read() {
        let root = TrustedRoot::read(Path::new(FIXTURE)).unwrap();
        assert_eq!(root.authorities.len(), 1);
        assert_eq!(root.authorities[0].chain.len(), 1);
        assert_eq!(root.authorities[0].valid_from, signed_at() - 3600);
        assert_eq!(root.authorities[0].valid_until, None);
        assert_eq!(root.logs.len(), 1);
        let log = &root.logs[0];
        assert_eq!(
            crate::support::hex::sha256_hex(log.key.spki_der()),
            log.log_id
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            "a Rekor v1 log id is the SHA-256 of its key"
        );
        assert_eq!(log.valid_from, signed_at() - 3600);
        assert_eq!(log.valid_until, None);
    }

    #[test]
    fn every_spelling_of_the_media_type_and_field_names_is_read() {
        for media_type in MEDIA_TYPES {
            let mut document = fixture();
            document["mediaType"] = json!(media_type);
            TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        }
        // The proto's own field names, as protobuf JSON readers accept them.
        let text = serde_json::to_string(&fixture())
            .unwrap()
            .replace("\"certificateAuthorities\"", "\"certificate_authorities\"")
            .replace("\"certChain\"", "\"cert_chain\"")
            .replace("\"rawBytes\"", "\"raw_bytes\"")
            .replace("\"validFor\"", "\"valid_for\"")
            .replace("\"publicKey\"", "\"public_key\"")
            .replace("\"logId\"", "\"log_id\"")
            .replace("\"keyId\"", "\"key_id\"")
            .replace("\"mediaType\"", "\"media_type\"");
        let root = TrustedRoot::parse(text.as_bytes()).unwrap();
        assert_eq!((root.authorities.len(), root.logs.len()), (1, 1));
    }

    #[test]
    fn the_end_of_a_window_is_read() {
        let mut document = fixture();
        document["certificateAuthorities"][0]["validFor"]["end"] =
            json!("2030-01-02T03:04:05.123Z");
        document["tlogs"][0]["publicKey"]["validFor"]["end"] = json!("2030-01-02T05:04:05+02:00");
        let root = TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        assert_eq!(root.authorities[0].valid_until, Some(1_893_553_445));
        assert_eq!(root.logs[0].valid_until, Some(1_893_553_445));
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_it_is_parsed() {
        let big = vec![b' '; MAX_FILE as usize + 1];
        assert!(TrustedRoot::parse(&big).unwrap_err().contains("limit"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted_root.json");
        fs_err::write(&path, &big).unwrap();
        assert!(TrustedRoot::read(&path).unwrap_err().contains("limit"));
    }

    #[test]
    fn hostile_json_is_refused_or_read_past_within_the_bound() {
        // Nesting far deeper than serde_json's recursion limit: refused, no stack overflow.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(
            TrustedRoot::parse(deep.as_bytes())
                .unwrap_err()
                .contains("not a Sigstore trusted root")
        );
        let mut document = fixture();
        document["aFutureSection"] = json!([[[[[[[[{"a": [1, 2, 3]}]]]]]]]]);
        document["timestampAuthorities"] = Value::Array(vec![json!({"x": "y"}); 50_000]);
        assert!(serde_json::to_vec(&document).unwrap().len() < MAX_FILE as usize);
        TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        // A field of the wrong kind is refused, not guessed at.
        refused(
            |d| d["tlogs"] = json!({"0": {}}),
            "not a Sigstore trusted root",
        );
        refused(
            |d| d["certificateAuthorities"][0]["validFor"]["start"] = json!(1_600_000_000),
            "not a Sigstore trusted root",
        );
    }

    #[test]
    fn what_is_not_a_trusted_root_is_refused() {
        assert!(
            TrustedRoot::parse(b"{")
                .unwrap_err()
                .contains("not a Sigstore trusted root")
        );
        assert!(
            TrustedRoot::parse(b"[]")
                .unwrap_err()
                .contains("not a Sigstore trusted root")
        );
        refused(
            |d| d["mediaType"] = json!("application/vnd.dev.sigstore.bundle.v0.3+json"),
            "`mediaType`",
        );
        refused(
            |d| {
                d.as_object_mut()
                    .unwrap()
                    .remove("mediaType")
                    .map(drop)
                    .unwrap()
            },
            "`mediaType`",
        );
        refused(|d| d["mediaType"] = json!("a\u{1b}[8m"), "a\\u{1b}[8m");
        // What serde quotes is escaped too.
        let error = TrustedRoot::parse(b"{\"tlogs\": \"\\u202e\\u001b[8m\"}").unwrap_err();
        assert!(error.contains("invalid type: string"), "{error:?}");
        assert!(
            !error.contains('\u{202e}') && !error.contains('\u{1b}'),
            "{error:?}"
        );
    }

    #[test]
    fn authorities_are_counted_and_required() {
        refused(
            |d| d["certificateAuthorities"] = json!([]),
            "no Fulcio certificate authority",
        );
        refused(
            |d| {
                let one = d["certificateAuthorities"][0].clone();
                d["certificateAuthorities"] = Value::Array(vec![one; MAX_AUTHORITIES + 1]);
            },
            "over the limit of 32",
        );
        refused(
            |d| d["certificateAuthorities"][0]["certChain"]["certificates"] = json!([]),
            "`certificateAuthorities[0]`.certChain.certificates: no certificate",
        );
        refused(
            |d| {
                let chain = &mut d["certificateAuthorities"][0]["certChain"]["certificates"];
                let one = chain[0].clone();
                *chain = Value::Array(vec![one; MAX_CHAIN + 1]);
            },
            "over the limit of 8",
        );
    }

    fn first_certificate(document: &mut Value) -> &mut Value {
        &mut document["certificateAuthorities"][0]["certChain"]["certificates"][0]["rawBytes"]
    }

    #[test]
    fn each_certificate_is_read_as_x509() {
        let at = "`certificateAuthorities[0]`.certChain.certificates[0].rawBytes";
        let cert = first_certificate;
        refused(
            |d| *cert(d) = json!("not base64!"),
            &format!("{at}: not standard base64"),
        );
        refused(
            |d| *cert(d) = json!("MAA="),
            &format!("{at}: not an X.509 certificate"),
        );
        refused(
            |d| *cert(d) = json!("A".repeat(100_000)),
            &format!("{at}: over the 65536-byte limit"),
        );
        refused(
            |d| {
                cert(d).take();
            },
            &format!("{at}: missing"),
        );
        // A byte of the signature changed still parses; a byte of the structure does not.
        refused(
            |d| {
                use base64::Engine as _;
                let engine = base64::engine::general_purpose::STANDARD;
                let mut der = engine.decode(cert(d).as_str().unwrap()).unwrap();
                der[1] ^= 0x01;
                *cert(d) = json!(engine.encode(der));
            },
            &format!("{at}: not an X.509 certificate"),
        );
    }

    #[test]
    fn windows_need_a_start_and_an_order() {
        refused(
            |d| {
                d["certificateAuthorities"][0]["validFor"]
                    .as_object_mut()
                    .unwrap()
                    .remove("start");
            },
            "`certificateAuthorities[0]`.validFor.start: missing",
        );
        refused(
            |d| {
                d["certificateAuthorities"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("validFor");
            },
            "`certificateAuthorities[0]`.validFor: missing",
        );
        refused(
            |d| {
                d["tlogs"][0]["publicKey"]["validFor"]
                    .as_object_mut()
                    .unwrap()
                    .remove("start");
            },
            "`tlogs[0]`.publicKey.validFor.start: missing",
        );
        refused(
            |d| d["tlogs"][0]["publicKey"]["validFor"]["end"] = json!("2001-01-01T00:00:00Z"),
            "`tlogs[0]`.publicKey.validFor: ends before it starts",
        );
        refused(
            |d| d["certificateAuthorities"][0]["validFor"]["start"] = json!("yesterday"),
            "is not an RFC 3339 time",
        );
    }

    #[test]
    fn logs_are_counted_and_their_keys_read() {
        refused(
            |d| d["tlogs"] = json!([]),
            "`tlogs` names no transparency log",
        );
        refused(
            |d| {
                let one = d["tlogs"][0].clone();
                d["tlogs"] = Value::Array(vec![one; MAX_LOGS + 1]);
            },
            "over the limit of 32",
        );
        refused(
            |d| d["tlogs"][0]["publicKey"]["rawBytes"] = json!("AAAA"),
            "`tlogs[0]`.publicKey.rawBytes: not a usable log key",
        );
        refused(
            |d| {
                d["tlogs"][0].as_object_mut().unwrap().remove("publicKey");
            },
            "`tlogs[0]`.publicKey: missing",
        );
        refused(
            |d| {
                d["tlogs"][0].as_object_mut().unwrap().remove("logId");
            },
            "`tlogs[0]`.logId.keyId: missing",
        );
        refused(
            |d| d["tlogs"][0]["logId"]["keyId"] = json!(""),
            "`tlogs[0]`.logId.keyId: empty",
        );
        refused(
            |d| d["tlogs"][0]["hashAlgorithm"] = json!("SHA2_384"),
            "`tlogs[0]`.hashAlgorithm: `SHA2_384`, not `SHA2_256`",
        );
        refused(
            |d| {
                d["tlogs"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("hashAlgorithm");
            },
            "`tlogs[0]`.hashAlgorithm: ``, not `SHA2_256`",
        );
    }

    #[test]
    fn ct_logs_are_read_counted_and_optional() {
        let root = TrustedRoot::read(Path::new(FIXTURE)).unwrap();
        assert_eq!(root.ct_logs.len(), 1);
        let ct_log = &root.ct_logs[0];
        assert_eq!(ct_log.log_id.len(), 32);
        assert_eq!(ct_log.valid_from, signed_at() - 3600);
        assert_eq!(ct_log.valid_until, None);

        // None: read (every keyless signature is then refused, by the certificate check).
        let mut document = fixture();
        document.as_object_mut().unwrap().remove("ctlogs");
        let root = TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        assert!(root.ct_logs.is_empty());
        let mut document = fixture();
        document["ctlogs"] = json!([]);
        let root = TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        assert!(root.ct_logs.is_empty());

        refused(
            |d| {
                let one = d["ctlogs"][0].clone();
                d["ctlogs"] = Value::Array(vec![one; MAX_LOGS + 1]);
            },
            "`ctlogs` names 33 logs, over the limit of 32",
        );
        // A key of a kind not verified (here the PKCS#1 RSA key the staging root lists for its old
        // CT log `ctfe.sigstage.dev/test`) leaves that log out; the root is read.
        let mut document = fixture();
        let pkcs1_rsa = "MIICCgKCAgEA27A2MPQXm0I0v7/Ly5BIauDjRZF5Jor9vU+QheoE2UIIsZHcyYq3slHzSSHy2lLj1ZD2d91CtJ492ZXqnBmsr4TwZ9jQ05tW2mGIRI8u2DqN8LpuNYZGz/f9SZrjhQQmUttqWmtu3UoLfKz6NbNXUnoo+NhZFcFRLXJ8VporVhuiAmL7zqT53cXR3yQfFPCUDeGnRksnlhVIAJc3AHZZSHQJ8DEXMhh35TVv2nYhTI3rID7GwjXXw4ocz7RGDD37ky6p39Tl5NB71gT1eSqhZhGHEYHIPXraEBd5+3w9qIuLWlp5Ej/K6Mu4ELioXKCUimCbwy+Cs8UhHFlqcyg4AysOHJwIadXIa8LsY51jnVSGrGOEBZevopmQPNPtyfFY3dmXSS+6Z3RD2Gd6oDnNGJzpSyEk410Ag5uvNDfYzJLCWX9tU8lIxNwdFYmIwpd89HijyRyoGnoJ3entd63cvKfuuix5r+GHyKp1Xm1L5j5AWM6P+z0xigwkiXnt+adexAl1J9wdDxv/pUFEESRF4DG8DFGVtbdH6aR1A5/vD4krO4tC1QYUSeyL5Mvsw8WRqIFHcXtgybtxylljvNcGMV1KXQC8UFDmpGZVDSHx6v3e/BHMrZ7gjoCCfVMZ/cFcQi0W2AIHPYEMH/C95J2r4XbHMRdYXpovpOoT5Ca78gsCAwEAAQ==";
        document["ctlogs"][0]["publicKey"]["rawBytes"] = json!(pkcs1_rsa);
        let root = TrustedRoot::parse(&serde_json::to_vec(&document).unwrap()).unwrap();
        assert!(root.ct_logs.is_empty());
        // The same key for a transparency log refuses the root, as before.
        refused(
            |d| d["tlogs"][0]["publicKey"]["rawBytes"] = json!(pkcs1_rsa),
            "`tlogs[0]`.publicKey.rawBytes: not a usable log key",
        );
        refused(
            |d| d["ctlogs"][0]["publicKey"]["rawBytes"] = json!("not base64!"),
            "`ctlogs[0]`.publicKey.rawBytes: not standard base64",
        );
        refused(
            |d| {
                d["ctlogs"][0].as_object_mut().unwrap().remove("logId");
            },
            "`ctlogs[0]`.logId.keyId: missing",
        );
        refused(
            |d| d["ctlogs"][0]["logId"]["keyId"] = json!(""),
            "`ctlogs[0]`.logId.keyId: empty",
        );
        refused(
            |d| {
                d["ctlogs"][0]["publicKey"]["validFor"]
                    .as_object_mut()
                    .unwrap()
                    .remove("start");
            },
            "`ctlogs[0]`.publicKey.validFor.start: missing",
        );
        refused(
            |d| d["ctlogs"][0]["hashAlgorithm"] = json!("SHA2_384"),
            "`ctlogs[0]`.hashAlgorithm: `SHA2_384`, not `SHA2_256`",
        );
        refused(|d| d["ctlogs"] = json!({}), "not a Sigstore trusted root");
    }

    #[test]
    fn rfc3339_times_are_read_to_the_second() {
        assert_eq!(rfc3339("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(rfc3339("2021-01-12T11:53:27Z"), Ok(1_610_452_407));
        assert_eq!(rfc3339("2021-01-12T11:53:27.999999999Z"), Ok(1_610_452_407));
        assert_eq!(rfc3339("2021-01-12T12:53:27+01:00"), Ok(1_610_452_407));
        assert_eq!(rfc3339("2021-01-12T10:53:27-01:00"), Ok(1_610_452_407));
        for wrong in [
            "",
            "2021-01-12",
            "2021-01-12 11:53:27Z",
            "2021-01-12T11:53:27",
            "2021-02-30T11:53:27Z",
            "2021-01-12T11:53:60Z",
            "2021-01-12T11:53:27.Z",
            "2021-01-12T11:53:27+1:00",
            "2021-01-12T11:53:27+24:00",
            "+021-01-12T11:53:27Z",
            "2021-01-12T11:53:27.0000000000Z",
        ] {
            assert!(rfc3339(wrong).is_err(), "{wrong:?}");
        }
    }
}
