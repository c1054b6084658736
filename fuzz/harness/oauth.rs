//! An identity provider's documents (discovery, key set, access token), as
//! `serve --listen --oauth` reads them.

use serde_json::Value;

/// The issuer the fuzzed identity-provider documents are read for: one with a path, so every
/// place RFC 8414 and OpenID Connect Discovery put the metadata is a distinct URL.
#[cfg(feature = "http")]
const OAUTH_ISSUER: &str = "https://idp.example/tenant";

/// An identity provider's documents as `serve --listen --oauth` reads them: a discovery document
/// (OpenID Connect or RFC 8414 metadata), a JWKS key set and an access token, separated by the
/// byte `0xFF`.
///
/// Invariants: the discovery URLs of the issuer are distinct, on its origin, and the first is the
/// OpenID Connect one; read from each, the document yields a key set URL exactly when an
/// independent reading does (`issuer` the configured string, `jwks_uri` a URL on the issuer's
/// origin), and then that URL; a refusal says why. The key set is refused exactly when it has no
/// `keys` array; the keys kept are at most the entries an independent reading allows (`use`
/// absent or `sig`, `key_ops` absent or a list holding `verify`, a type this server verifies),
/// each with the `kid` of one of them. The token's verdict with those keys is deterministic, and
/// a verified token names by `kid` a kept key (or carries none).
#[cfg(feature = "http")]
pub fn oauth_documents(data: &[u8]) {
    use crate::mcp::http::oauth::{jwks, validate};
    use crate::source::origin::same_origin;
    use reqwest::Url;

    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let discovery = parts.next().unwrap_or_default();
    let key_set = parts.next().unwrap_or_default();
    let token = parts.next().unwrap_or_default();

    let issuer = Url::parse(OAUTH_ISSUER).expect("the issuer is a URL");
    let urls = jwks::discovery_urls(&issuer);
    assert_eq!(urls.len(), 4, "{urls:?}");
    assert_eq!(
        urls[0].as_str(),
        "https://idp.example/tenant/.well-known/openid-configuration"
    );
    for (i, url) in urls.iter().enumerate() {
        assert!(same_origin(url, &issuer), "{url}");
        assert!(!urls[..i].contains(url), "{url} twice");
    }
    if let Ok(document) = serde_json::from_slice::<Value>(discovery) {
        for at in &urls {
            let expected = (document.get("issuer").and_then(Value::as_str) == Some(OAUTH_ISSUER))
                .then(|| document.get("jwks_uri").and_then(Value::as_str))
                .flatten()
                .and_then(|text| Url::parse(text).ok())
                .filter(|url| same_origin(url, &issuer));
            match jwks::jwks_uri(&document, OAUTH_ISSUER, at) {
                Ok(url) => assert_eq!(Some(url), expected, "{document}"),
                Err(why) => {
                    assert!(expected.is_none(), "refused ({why}): {document}");
                    assert!(!why.is_empty());
                }
            }
        }
    }

    let Ok(document) = serde_json::from_slice::<Value>(key_set) else {
        return;
    };
    let keys = match validate::parse_key_set(&document) {
        Ok(keys) => {
            assert!(document.get("keys").is_some_and(Value::is_array));
            keys
        }
        Err(why) => {
            assert!(!document.get("keys").is_some_and(Value::is_array));
            assert!(!why.is_empty());
            return;
        }
    };
    let allowed: Vec<&Value> = document["keys"]
        .as_array()
        .map(|entries| entries.iter().filter(|e| oauth_key_allowed(e)).collect())
        .unwrap_or_default();
    assert!(
        keys.len() <= allowed.len(),
        "{} of {}",
        keys.len(),
        allowed.len()
    );
    for key in &keys {
        assert!(
            allowed
                .iter()
                .any(|e| e.get("kid").and_then(Value::as_str) == key.kid.as_deref()),
            "a kept key that no allowed entry names: {:?}",
            key.kid
        );
    }
    let Ok(token) = std::str::from_utf8(token) else {
        return;
    };
    if let Ok(parsed) = validate::parse(token, &validate::Algorithm::ALL) {
        let verdict = parsed.verify(&keys);
        assert_eq!(verdict, parsed.verify(&keys), "not deterministic");
        if verdict.is_ok()
            && let Some(kid) = &parsed.kid
        {
            assert!(keys.iter().any(|k| k.kid.as_ref() == Some(kid)));
        }
        if verdict.is_ok()
            && let Ok(identity) =
                parsed.check_claims(OAUTH_ISSUER, &["https://skills.example/mcp"], 1.8e9)
        {
            let (claim, value) = identity.principal();
            assert!(matches!(claim, "sub" | "client_id") && !value.is_empty());
        }
    }
}

/// Whether a JWKS entry may be kept, read independently of the key set parser: `use` absent or
/// `sig`, `key_ops` absent or a list holding `verify`, and a type and curve the server verifies.
#[cfg(feature = "http")]
fn oauth_key_allowed(entry: &Value) -> bool {
    let use_ok = match entry.get("use") {
        None => true,
        Some(value) => value == "sig",
    };
    let ops_ok = match entry.get("key_ops") {
        None => true,
        Some(Value::Array(ops)) => ops.contains(&Value::from("verify")),
        Some(_) => false,
    };
    let type_ok = matches!(
        (
            entry.get("kty").and_then(Value::as_str),
            entry.get("crv").and_then(Value::as_str),
        ),
        (Some("RSA"), _) | (Some("EC"), Some("P-256")) | (Some("OKP"), Some("Ed25519"))
    );
    use_ok && ops_ok && type_ok
}
