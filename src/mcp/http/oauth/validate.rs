//! The checks on one JWT access token (RFC 9068's profile of RFC 7519), verified with
//! `ring::signature` (the crypto backend rustls already brings): three base64url parts within
//! [`MAX_TOKEN_BYTES`]; a header that is a JSON object written once per key, with `alg` one of the
//! configured [`Algorithm`]s and the one the key's `kty`/`crv` allows (never `none`, never HS*),
//! no `crit`, and `typ` absent, `JWT`, `at+jwt` or `application/at+jwt`; the key chosen by `kid`
//! among those whose type fits `alg` (RFC 7517 §4.5 lets keys of different types share a `kid`:
//! each of at most [`MAX_KEYS_PER_KID`] is tried; a token without `kid` only when exactly one key
//! fits its `alg`); the signature; then the claims: `iss` equal to the issuer, `aud` (a string or
//! an array) holding one of the accepted audiences, `exp` present and not past, `nbf` and `iat`
//! not in the future, each with [`LEEWAY_SECONDS`], and a `sub` or `client_id` to bind a session
//! to.
//!
//! A key set's key is usable only for signatures: a `use` other than `sig` or a `key_ops` without
//! `verify` leaves it out (RFC 7517 §4.2, §4.3), as does a type, curve or `alg` not verified here.

use base64::Engine as _;
use ring::signature;
use serde_json::{Map, Value};

/// The most bytes of a token (header, claims and signature, encoded).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
pub const LEEWAY_SECONDS: f64 = 60.0;

/// The most keys sharing one `kid` whose type fits a token's `alg` that are tried on it.
pub const MAX_KEYS_PER_KID: usize = 4;

/// The most nesting of objects and arrays in a header or the claims.
const MAX_DEPTH: usize = 16;

/// A signature algorithm the server verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (2048 to 8192 bits).
    Rs256,
    /// RSASSA-PSS with SHA-256 (2048 to 8192 bits).
    Ps256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// Ed25519.
    EdDsa,
}

impl Algorithm {
    /// Every algorithm, the default set.
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Rs256,
        Algorithm::Ps256,
        Algorithm::Es256,
        Algorithm::EdDsa,
    ];

    /// The algorithm a JOSE `alg` names, if it is one of these.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        match name {
            "RS256" => Some(Algorithm::Rs256),
            "PS256" => Some(Algorithm::Ps256),
            "ES256" => Some(Algorithm::Es256),
            "EdDSA" => Some(Algorithm::EdDsa),
            _ => None,
        }
    }

    /// Its JOSE name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Rs256 => "RS256",
            Algorithm::Ps256 => "PS256",
            Algorithm::Es256 => "ES256",
            Algorithm::EdDsa => "EdDSA",
        }
    }
}

/// A public key of the issuer's key set, ready to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerKey {
    /// Its `kid`, if it has one.
    pub kid: Option<String>,
    /// The `alg` the key set pins it to, if any.
    pub alg: Option<Algorithm>,
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point `04 || x || y`.
    P256(Vec<u8>),
    Ed25519(Vec<u8>),
}

impl IssuerKey {
    /// Whether this key can verify `alg` (by its type and curve, and its own `alg` if pinned).
    fn allows(&self, alg: Algorithm) -> bool {
        let by_type = match self.material {
            Material::Rsa { .. } => matches!(alg, Algorithm::Rs256 | Algorithm::Ps256),
            Material::P256(_) => alg == Algorithm::Es256,
            Material::Ed25519(_) => alg == Algorithm::EdDsa,
        };
        by_type && self.alg.is_none_or(|pinned| pinned == alg)
    }

    fn verify(&self, alg: Algorithm, message: &[u8], signature: &[u8]) -> bool {
        match (&self.material, alg) {
            (Material::Rsa { n, e }, Algorithm::Rs256) => {
                signature::RsaPublicKeyComponents { n, e }
                    .verify(&signature::RSA_PKCS1_2048_8192_SHA256, message, signature)
                    .is_ok()
            }
            (Material::Rsa { n, e }, Algorithm::Ps256) => {
                signature::RsaPublicKeyComponents { n, e }
                    .verify(&signature::RSA_PSS_2048_8192_SHA256, message, signature)
                    .is_ok()
            }
            (Material::P256(point), Algorithm::Es256) => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Algorithm::EdDsa) => {
                signature::UnparsedPublicKey::new(&signature::ED25519, x)
                    .verify(message, signature)
                    .is_ok()
            }
            _ => false,
        }
    }
}

/// The usable keys of a JWKS document; keys of other types, curves, uses or operations are left
/// out (a key set may hold encryption keys and algorithms this server does not verify).
// A string, not a typed error: it is only ever shown (the key cache's warning and `/readyz`).
pub fn parse_key_set(document: &Value) -> Result<Vec<IssuerKey>, String> {
    let keys = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("the key set has no `keys` array")?;
    let mut out = Vec::new();
    for key in keys {
        if let Some(key) = parse_key(key) {
            out.push(key);
        }
    }
    Ok(out)
}

fn member<'a>(key: &'a Value, name: &str) -> Option<&'a str> {
    key.get(name).and_then(Value::as_str)
}

fn b64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
}

/// Whether the key's `use` and `key_ops`, when present, allow verifying signatures.
fn verifies_signatures(key: &Value) -> bool {
    let by_use = key.get("use").is_none_or(|u| u.as_str() == Some("sig"));
    let by_ops = match key.get("key_ops") {
        None => true,
        Some(Value::Array(ops)) => ops.iter().any(|op| op.as_str() == Some("verify")),
        Some(_) => false,
    };
    by_use && by_ops
}

fn parse_key(key: &Value) -> Option<IssuerKey> {
    if !verifies_signatures(key) {
        return None;
    }
    let alg = match key.get("alg") {
        None => None,
        // A key pinned to an algorithm this server does not verify is not usable.
        Some(name) => Some(Algorithm::from_name(name.as_str()?)?),
    };
    let material = match member(key, "kty")? {
        "RSA" => {
            let n = b64(member(key, "n")?)?;
            let e = b64(member(key, "e")?)?;
            Material::Rsa { n, e }
        }
        "EC" if member(key, "crv")? == "P-256" => {
            let x = b64(member(key, "x")?)?;
            let y = b64(member(key, "y")?)?;
            if x.len() != 32 || y.len() != 32 {
                return None;
            }
            let mut point = vec![4];
            point.extend(x);
            point.extend(y);
            Material::P256(point)
        }
        "OKP" if member(key, "crv")? == "Ed25519" => {
            let x = b64(member(key, "x")?)?;
            if x.len() != 32 {
                return None;
            }
            Material::Ed25519(x)
        }
        _ => return None,
    };
    Some(IssuerKey {
        kid: key.get("kid").and_then(Value::as_str).map(str::to_owned),
        alg,
        material,
    })
}

/// Why a token is refused; [`JwtFailure::label`] is the metrics outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwtFailure {
    /// Not three base64url parts of JSON objects within the bounds, or a claim of the wrong type.
    Malformed,
    /// `alg` is not accepted (`none`, HS*, not configured, or not what the key allows), or a
    /// `crit` or `typ` the server does not understand.
    BadAlgorithm,
    /// No key of the key set has its `kid` (after a refresh, if one was allowed).
    UnknownKey,
    /// The signature does not verify.
    BadSignature,
    /// `iss` is not the issuer.
    WrongIssuer,
    /// `aud` does not hold the audience.
    WrongAudience,
    /// `exp` is past (or missing).
    Expired,
    /// `nbf` or `iat` is in the future.
    NotYetValid,
    /// Neither `sub` nor `client_id`.
    NoSubject,
}

impl JwtFailure {
    /// The bounded label of the metrics.
    pub fn label(self) -> &'static str {
        match self {
            JwtFailure::Malformed => "malformed",
            JwtFailure::BadAlgorithm => "bad_algorithm",
            JwtFailure::UnknownKey => "unknown_key",
            JwtFailure::BadSignature => "bad_signature",
            JwtFailure::WrongIssuer => "wrong_issuer",
            JwtFailure::WrongAudience => "wrong_audience",
            JwtFailure::Expired => "expired",
            JwtFailure::NotYetValid => "not_yet_valid",
            JwtFailure::NoSubject => "no_subject",
        }
    }
}

/// A token taken apart, its signature not yet checked.
#[derive(Debug)]
pub struct Parsed<'t> {
    alg: Algorithm,
    /// The header's `kid`.
    pub kid: Option<String>,
    signed: &'t [u8],
    signature: Vec<u8>,
    claims: Map<String, Value>,
}

/// A JSON object whose objects, at every depth (at most [`MAX_DEPTH`]), write each key once:
/// parsers disagree on which of two counts, and a token that means two things is refused.
fn strict_object(bytes: &[u8]) -> Option<Map<String, Value>> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Strict(0).deserialize_value(&mut de)?;
    de.end().ok()?;
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

struct Strict(usize);

impl Strict {
    fn deserialize_value<'de, D: serde::Deserializer<'de>>(self, de: D) -> Option<Value> {
        serde::de::DeserializeSeed::deserialize(self, de).ok()
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Strict {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.0 >= MAX_DEPTH {
            return Err(serde::de::Error::custom("nested too deep"));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict(self.0 + 1))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.0 >= MAX_DEPTH {
            return Err(serde::de::Error::custom("nested too deep"));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Strict(self.0 + 1))?;
            if out.insert(key, value).is_some() {
                return Err(serde::de::Error::custom("a key written twice"));
            }
        }
        Ok(Value::Object(out))
    }
}

/// Takes a token apart and checks its header against `algorithms`.
pub fn parse<'t>(token: &'t str, algorithms: &[Algorithm]) -> Result<Parsed<'t>, JwtFailure> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtFailure::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtFailure::Malformed);
    };
    let header =
        strict_object(&b64(header).ok_or(JwtFailure::Malformed)?).ok_or(JwtFailure::Malformed)?;
    let claims =
        strict_object(&b64(claims).ok_or(JwtFailure::Malformed)?).ok_or(JwtFailure::Malformed)?;
    let signature = b64(signature).ok_or(JwtFailure::Malformed)?;
    let alg = header
        .get("alg")
        .and_then(Value::as_str)
        .and_then(Algorithm::from_name)
        .filter(|alg| algorithms.contains(alg))
        .ok_or(JwtFailure::BadAlgorithm)?;
    if header.contains_key("crit") {
        return Err(JwtFailure::BadAlgorithm);
    }
    match header.get("typ") {
        None => {}
        Some(Value::String(typ))
            if ["jwt", "at+jwt", "application/at+jwt"]
                .contains(&typ.to_ascii_lowercase().as_str()) => {}
        Some(_) => return Err(JwtFailure::BadAlgorithm),
    }
    let kid = match header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.clone()),
        Some(_) => return Err(JwtFailure::Malformed),
    };
    let signed_len = token.len() - token.rsplit('.').next().map_or(0, str::len) - 1;
    Ok(Parsed {
        alg,
        kid,
        signed: &token.as_bytes()[..signed_len],
        signature,
        claims,
    })
}

/// Whom a valid token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `sub`, if present.
    pub sub: Option<String>,
    /// `client_id`, if present.
    pub client_id: Option<String>,
    /// Every claim, for the rules.
    pub claims: Map<String, Value>,
}

impl Parsed<'_> {
    /// Verifies the signature with a key `keys` give for its `kid` and `alg` (`Err(UnknownKey)`:
    /// no key has its `kid`; `Err(BadAlgorithm)`: none of those fits its `alg`).
    pub fn verify(&self, keys: &[IssuerKey]) -> Result<(), JwtFailure> {
        match &self.kid {
            Some(kid) => {
                let mut named = keys
                    .iter()
                    .filter(|k| k.kid.as_deref() == Some(kid.as_str()))
                    .peekable();
                if named.peek().is_none() {
                    return Err(JwtFailure::UnknownKey);
                }
                let mut fitting = named.filter(|k| k.allows(self.alg)).peekable();
                if fitting.peek().is_none() {
                    return Err(JwtFailure::BadAlgorithm);
                }
                if fitting
                    .take(MAX_KEYS_PER_KID)
                    .any(|key| key.verify(self.alg, self.signed, &self.signature))
                {
                    Ok(())
                } else {
                    Err(JwtFailure::BadSignature)
                }
            }
            None => {
                let mut fitting = keys.iter().filter(|k| k.allows(self.alg));
                match (fitting.next(), fitting.next()) {
                    (Some(key), None) if key.verify(self.alg, self.signed, &self.signature) => {
                        Ok(())
                    }
                    (Some(_), None) => Err(JwtFailure::BadSignature),
                    _ => Err(JwtFailure::UnknownKey),
                }
            }
        }
    }

    /// Checks the claims (after [`Parsed::verify`]) at `now` (seconds since the epoch); `aud`
    /// must hold one of `audiences`.
    pub fn check_claims(
        self,
        issuer: &str,
        audiences: &[&str],
        now: f64,
    ) -> Result<Identity, JwtFailure> {
        let claims = self.claims;
        if claims.get("iss").and_then(Value::as_str) != Some(issuer) {
            return Err(JwtFailure::WrongIssuer);
        }
        let audience_held = match claims.get("aud") {
            Some(Value::String(aud)) => audiences.contains(&aud.as_str()),
            Some(Value::Array(auds)) => auds
                .iter()
                .filter_map(Value::as_str)
                .any(|aud| audiences.contains(&aud)),
            _ => false,
        };
        if !audience_held {
            return Err(JwtFailure::WrongAudience);
        }
        let time = |name: &str| -> Result<Option<f64>, JwtFailure> {
            match claims.get(name) {
                None => Ok(None),
                Some(value) => value.as_f64().map(Some).ok_or(JwtFailure::Malformed),
            }
        };
        match time("exp")? {
            Some(exp) if now <= exp + LEEWAY_SECONDS => {}
            _ => return Err(JwtFailure::Expired),
        }
        for name in ["nbf", "iat"] {
            if let Some(at) = time(name)?
                && at > now + LEEWAY_SECONDS
            {
                return Err(JwtFailure::NotYetValid);
            }
        }
        let text = |name: &str| -> Result<Option<String>, JwtFailure> {
            match claims.get(name) {
                None => Ok(None),
                Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
                Some(_) => Err(JwtFailure::Malformed),
            }
        };
        let sub = text("sub")?;
        let client_id = text("client_id")?;
        if sub.is_none() && client_id.is_none() {
            return Err(JwtFailure::NoSubject);
        }
        Ok(Identity {
            sub,
            client_id,
            claims,
        })
    }
}

impl Identity {
    /// The claim that names the principal and its value: `sub`, else `client_id`. A session is
    /// bound to both, so a `sub` never continues a session a `client_id` of the same text opened.
    pub fn principal(&self) -> (&'static str, &str) {
        match (&self.sub, &self.client_id) {
            (Some(sub), _) => ("sub", sub),
            (None, Some(client_id)) => ("client_id", client_id),
            // `check_claims` refuses a token with neither.
            (None, None) => ("", ""),
        }
    }
}

/// Whether `claims` hold `value` in `claim`: equal, in an array, or for `scope` in its
/// space-separated list.
pub fn claim_holds(claims: &Map<String, Value>, claim: &str, value: &str) -> bool {
    match claims.get(claim) {
        Some(Value::String(s)) => {
            s == value || (claim == "scope" && s.split(' ').any(|part| part == value))
        }
        Some(Value::Array(items)) => items.iter().any(|item| item.as_str() == Some(value)),
        _ => false,
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
