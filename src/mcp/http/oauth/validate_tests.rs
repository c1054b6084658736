use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{self as sig, KeyPair as _};
use serde_json::{Value, json};

use super::*;

const ISSUER: &str = "https://idp.example";
const AUDIENCE: &str = "https://skills.example/mcp";
const NOW: f64 = 1_800_000_000.0;

fn b64e(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A 2048-bit RSA key for these tests only (an RFC 8017 RSAPrivateKey, DER, base64; made with
/// `openssl genpkey`): ring signs and verifies RSA but does not make RSA keys.
const RSA_KEY: &str = concat!(
    "MIIEpAIBAAKCAQEA7lRZzvkjX5NqIIauVacK77qxCDcoEc/HGbi0SSgmwzHhdG9hFjrag4dj4Dj6C9h5Sz3XKpeH",
    "cCOjuQJscn5YThtPbGKUdeItKJdmggUqCZK+sWJUGSbz865Y92bvDS6O28f+p99tW60O+KmNCk8u2HADMF7tgjVN",
    "E6w66L6a56nYHt4wUNDZzvtIuTimcNtBosRu1y1DS6TsU6XE1ieAaaLskJrlPAh1VQYjxI/pl9c3xgrtULEcKd+S",
    "1RVn/QsCZypPu5SSAT28+Frgm3rksvfFe0/wdfg1FHeNPoXPG0Ytld4W3kJX4E1a2+O/WDS86zJpe0Y3hT0EIGFK",
    "T1lTrQIDAQABAoIBAA4fJuQl7IPnBPiQ6mcOWw5J4mABfqkRhfNe96XHEIbr33dJ+zd5PMXi4ZbhYWWOyd8ctrFi",
    "IacSIYsemuTs2hgks5/RNolGodTgJbWKD0vaa1yw3hlQbs+PUtuz+HGwQsxAjTUOvtjaCANRbpdACl9OQc4drdaT",
    "iHHkOGhelOipkSocjseHh+b1BAiQAsrJreUjEaIBtBhQDrn+D1HGTds2L/gAwd9TX1UG7hDNqK0bKXn6jl+GcKqW",
    "vC5xLymoyX2m43iWSwe8xhJF8vanJOeWRJghwbQNqrxeqTYdiljuBPseWIxqv2nn3ckoxUW3IbTsJ9NNlLEbxWeM",
    "TpWZGIkCgYEA/RqQ4RWgrb/u3/BknysC31Ts+5w4lLFQ8IkRYF/3yGazn0+c96tCPPrORV5qRKP9Szr0fzApoZuF",
    "QcZYXeG4gXnd18dNvl6iuMhldRRduaqpu8hW+Erixs0Y1ZvtXYT0dXIG/A+8a84URPClnlCOsmRHPbtB1ohq8evE",
    "jNtXf6UCgYEA8Q6BbgMVLkBl6yC8NNb2cyjo86EM1igBaTSmNFCiaw95VcdMJ7z11wWjAYE16ZhXvBzcOpobDcd/",
    "wp3il8WGeZSW1uL4fA2MJYZ/z+xuqb1riyGenV7LFQxK0cF/UARr3TaXMlt3SBuQ1aQjx8T9NugqdU7D/N6H59QE",
    "+VGMxWkCgYEA24oFjReDbfKDsr8DqIRYU3uIq56P/XnoaRubdOsJNEzRFSirULC+HcK21LjWmH9eH7kdho0yLzmE",
    "1s7Cq3w03Cnm4VnA95WCs6EvT+TAf2GnJHjb5zadii8wkWhU9b9zg8PKhyznFOOF9V5/adkaTWZp3QPmUb22de05",
    "aayAMvkCgYEAx4exPMWSd6lYc2qyPq6carA3OspZHL8ag+HPnUgNWL8DOSxxbgcsGuKQjcNNQ+EU5iGhbWR39kzn",
    "BMm5cNVQPTzwKkjPU6fHFJyjGRFkfF3NMeoPJ8X6JZ76I2ueHTa7rezs9ALf1jDzDtQBxe7ZheRgmJ8s/ReZuRw3",
    "TcPh2NkCgYAtqqOkOAtgYCoVNkXDPW3PeidT70OD71NS90htT/yB7MycLzZyg9fab4UMh3G7CnGPyumIlhlVwwMK",
    "DU5h+g+CR+mkoKg53A8KMb6dT/DGxJUm+cSxAT3FZ94m8kQok27RaoCkCT7aQ3ocLND6humZHiopeL0eoHatWS0B",
    "u+d3EQ==",
);

/// A signing key made here, its JWK, and how it signs.
enum TestSigner {
    Ed(sig::Ed25519KeyPair),
    Ec(sig::EcdsaKeyPair),
    Rsa(sig::RsaKeyPair),
}

impl TestSigner {
    fn ed() -> TestSigner {
        let rng = SystemRandom::new();
        let pkcs8 = sig::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        TestSigner::Ed(sig::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap())
    }

    fn ec() -> TestSigner {
        let rng = SystemRandom::new();
        let alg = &sig::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = sig::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        TestSigner::Ec(sig::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap())
    }

    fn rsa() -> TestSigner {
        let der = base64::engine::general_purpose::STANDARD
            .decode(RSA_KEY)
            .unwrap();
        TestSigner::Rsa(sig::RsaKeyPair::from_der(&der).unwrap())
    }

    fn jwk(&self, kid: &str) -> Value {
        match self {
            TestSigner::Rsa(pair) => {
                let public: sig::RsaPublicKeyComponents<Vec<u8>> = pair.public().into();
                json!({"kty": "RSA", "kid": kid, "n": b64e(&public.n), "e": b64e(&public.e)})
            }
            TestSigner::Ed(pair) => {
                json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": b64e(pair.public_key().as_ref())})
            }
            TestSigner::Ec(pair) => {
                let point = pair.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": kid, "x": b64e(&point[1..33]), "y": b64e(&point[33..])})
            }
        }
    }

    fn alg(&self) -> &'static str {
        match self {
            TestSigner::Ed(_) => "EdDSA",
            TestSigner::Ec(_) => "ES256",
            TestSigner::Rsa(_) => "RS256",
        }
    }

    fn sign_raw(&self, header: &str, claims: &str) -> String {
        let signed = format!("{}.{}", b64e(header.as_bytes()), b64e(claims.as_bytes()));
        let signature = match self {
            TestSigner::Ed(pair) => pair.sign(signed.as_bytes()).as_ref().to_vec(),
            TestSigner::Ec(pair) => pair
                .sign(&SystemRandom::new(), signed.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            TestSigner::Rsa(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(
                    &sig::RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    signed.as_bytes(),
                    &mut signature,
                )
                .unwrap();
                signature
            }
        };
        format!("{signed}.{}", b64e(&signature))
    }

    fn sign(&self, header: Value, claims: Value) -> String {
        self.sign_raw(&header.to_string(), &claims.to_string())
    }
}

fn claims() -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "bot", "client_id": "bot", "exp": NOW + 300.0, "iat": NOW, "scope": "a b"})
}

fn keys(signers: &[(&TestSigner, &str)]) -> Vec<IssuerKey> {
    let set = json!({"keys": signers.iter().map(|(s, kid)| s.jwk(kid)).collect::<Vec<_>>()});
    parse_key_set(&set).unwrap()
}

fn judge(token: &str, keys: &[IssuerKey]) -> Result<Identity, JwtFailure> {
    judge_with(token, keys, &Algorithm::ALL)
}

fn judge_with(
    token: &str,
    keys: &[IssuerKey],
    algorithms: &[Algorithm],
) -> Result<Identity, JwtFailure> {
    let parsed = parse(token, algorithms)?;
    parsed.verify(keys)?;
    parsed.check_claims(ISSUER, &[AUDIENCE], NOW)
}

#[test]
fn a_token_signed_by_its_key_passes_every_check() {
    for signer in [TestSigner::ed(), TestSigner::ec()] {
        let keys = keys(&[(&signer, "k1")]);
        let token = signer.sign(
            json!({"alg": signer.alg(), "kid": "k1", "typ": "at+jwt"}),
            claims(),
        );
        let identity = judge(&token, &keys).unwrap();
        assert_eq!(identity.sub.as_deref(), Some("bot"));
        assert_eq!(identity.client_id.as_deref(), Some("bot"));
    }
}

#[test]
fn the_leeway_is_sixty_seconds_on_exp_nbf_and_iat() {
    let signer = TestSigner::ed();
    let keys = keys(&[(&signer, "k")]);
    let header = json!({"alg": "EdDSA", "kid": "k"});
    let with = |name: &str, at: f64| {
        let mut c = claims();
        c[name] = json!(at);
        judge(&signer.sign(header.clone(), c), &keys).map(|_| ())
    };
    assert_eq!(with("exp", NOW - 59.0), Ok(()));
    assert_eq!(with("exp", NOW - 61.0), Err(JwtFailure::Expired));
    assert_eq!(with("nbf", NOW + 59.0), Ok(()));
    assert_eq!(with("nbf", NOW + 61.0), Err(JwtFailure::NotYetValid));
    assert_eq!(with("iat", NOW + 61.0), Err(JwtFailure::NotYetValid));
    let mut no_exp = claims();
    no_exp.as_object_mut().unwrap().remove("exp");
    assert_eq!(
        judge(&signer.sign(header.clone(), no_exp), &keys).map(|_| ()),
        Err(JwtFailure::Expired)
    );
    let mut text_exp = claims();
    text_exp["exp"] = json!("never");
    assert_eq!(
        judge(&signer.sign(header, text_exp), &keys).map(|_| ()),
        Err(JwtFailure::Malformed)
    );
}

#[test]
fn the_issuer_and_the_audience_must_be_exactly_the_configured_ones() {
    let signer = TestSigner::ed();
    let keys = keys(&[(&signer, "k")]);
    let header = json!({"alg": "EdDSA", "kid": "k"});
    let with = |name: &str, value: Value| {
        let mut c = claims();
        c[name] = value;
        judge(&signer.sign(header.clone(), c), &keys).map(|_| ())
    };
    assert_eq!(
        with("aud", json!(["https://other.example", AUDIENCE])),
        Ok(())
    );
    assert_eq!(
        with("aud", json!(["https://other.example"])),
        Err(JwtFailure::WrongAudience)
    );
    assert_eq!(
        with("aud", json!(format!("{AUDIENCE}/"))),
        Err(JwtFailure::WrongAudience)
    );
    assert_eq!(with("aud", json!(null)), Err(JwtFailure::WrongAudience));
    // Every accepted audience is accepted, alone or in an array; no other.
    let accepted = ["https://skills.example/mcp", "api://skills"];
    for aud in [
        json!("api://skills"),
        json!(["x", "https://skills.example/mcp"]),
    ] {
        let mut c = claims();
        c["aud"] = aud.clone();
        let token = signer.sign(header.clone(), c);
        let parsed = parse(&token, &Algorithm::ALL).unwrap();
        parsed.verify(&keys).unwrap();
        assert!(parsed.check_claims(ISSUER, &accepted, NOW).is_ok(), "{aud}");
    }
    let mut c = claims();
    c["aud"] = json!("api://other");
    let token = signer.sign(header.clone(), c);
    let parsed = parse(&token, &Algorithm::ALL).unwrap();
    assert_eq!(
        parsed.check_claims(ISSUER, &accepted, NOW).map(|_| ()),
        Err(JwtFailure::WrongAudience)
    );
    assert_eq!(
        with("iss", json!(format!("{ISSUER}/"))),
        Err(JwtFailure::WrongIssuer)
    );
    assert_eq!(with("iss", json!([ISSUER])), Err(JwtFailure::WrongIssuer));
    let mut anonymous = claims();
    anonymous.as_object_mut().unwrap().remove("sub");
    anonymous.as_object_mut().unwrap().remove("client_id");
    assert_eq!(
        judge(&signer.sign(header, anonymous), &keys).map(|_| ()),
        Err(JwtFailure::NoSubject)
    );
}

#[test]
fn the_algorithm_must_be_configured_and_fit_the_key() {
    let ed = TestSigner::ed();
    let ec = TestSigner::ec();
    let keys = keys(&[(&ed, "ed"), (&ec, "ec")]);
    // An Ed25519 signature presented as ES256 under the EC key, and the other way round.
    let token = ed.sign(json!({"alg": "EdDSA", "kid": "ec"}), claims());
    assert_eq!(
        judge(&token, &keys).map(|_| ()),
        Err(JwtFailure::BadAlgorithm)
    );
    let token = ed.sign(json!({"alg": "EdDSA", "kid": "ed"}), claims());
    assert_eq!(
        judge_with(&token, &keys, &[Algorithm::Es256]).map(|_| ()),
        Err(JwtFailure::BadAlgorithm)
    );
    for alg in ["none", "HS256", "HS512", "RS512", "ES384", "eddsa"] {
        let token = ed.sign(json!({"alg": alg, "kid": "ed"}), claims());
        assert_eq!(
            judge(&token, &keys).map(|_| ()),
            Err(JwtFailure::BadAlgorithm),
            "{alg}"
        );
    }
    // A key set that pins a key to another algorithm.
    let mut pinned = ec.jwk("p");
    pinned["alg"] = json!("EdDSA");
    let pinned = parse_key_set(&json!({"keys": [pinned]})).unwrap();
    let token = ec.sign(json!({"alg": "ES256", "kid": "p"}), claims());
    assert_eq!(
        judge(&token, &pinned).map(|_| ()),
        Err(JwtFailure::BadAlgorithm)
    );
}

#[test]
fn crit_and_a_foreign_typ_are_refused() {
    let signer = TestSigner::ed();
    let keys = keys(&[(&signer, "k")]);
    let token = signer.sign(
        json!({"alg": "EdDSA", "kid": "k", "crit": ["exp"]}),
        claims(),
    );
    assert_eq!(
        judge(&token, &keys).map(|_| ()),
        Err(JwtFailure::BadAlgorithm)
    );
    let token = signer.sign(
        json!({"alg": "EdDSA", "kid": "k", "typ": "dpop+jwt"}),
        claims(),
    );
    assert_eq!(
        judge(&token, &keys).map(|_| ()),
        Err(JwtFailure::BadAlgorithm)
    );
    for typ in ["JWT", "at+jwt", "application/at+JWT"] {
        let token = signer.sign(json!({"alg": "EdDSA", "kid": "k", "typ": typ}), claims());
        assert!(judge(&token, &keys).is_ok(), "{typ}");
    }
}

#[test]
fn a_key_written_twice_deep_nesting_and_bad_encodings_are_malformed() {
    let signer = TestSigner::ed();
    let keys = keys(&[(&signer, "k")]);
    let header = r#"{"alg":"EdDSA","kid":"k"}"#;
    let body = claims().to_string();
    // The second `iss` would win in most parsers.
    let twice = format!(r#"{{"iss":"https://evil.example",{}"#, &body[1..]);
    assert_eq!(
        judge(&signer.sign_raw(header, &twice), &keys).map(|_| ()),
        Err(JwtFailure::Malformed)
    );
    let twice_header = r#"{"alg":"EdDSA","kid":"k","kid":"k"}"#;
    assert_eq!(
        judge(&signer.sign_raw(twice_header, &body), &keys).map(|_| ()),
        Err(JwtFailure::Malformed)
    );
    let deep = format!(
        r#"{{"x":{}{},{}"#,
        "[".repeat(40),
        "]".repeat(40),
        &body[1..]
    );
    assert_eq!(
        judge(&signer.sign_raw(header, &deep), &keys).map(|_| ()),
        Err(JwtFailure::Malformed)
    );
    let shallow = format!(r#"{{"x":{}{},{}"#, "[".repeat(8), "]".repeat(8), &body[1..]);
    assert!(judge(&signer.sign_raw(header, &shallow), &keys).is_ok());
    let good = signer.sign_raw(header, &body);
    let parts: Vec<&str> = good.split('.').collect();
    for bad in [
        format!("{}.{}", parts[0], parts[1]),
        format!("{good}.x"),
        format!("{}=.{}.{}", parts[0], parts[1], parts[2]),
        format!("{}.{}.{}+", parts[0], parts[1], parts[2]),
        format!("{}.{}.{}", b64e(b"[1]"), parts[1], parts[2]),
        format!("{}.{}.{}", b64e(b"{} trailing"), parts[1], parts[2]),
        format!(
            "{}.{}.{}",
            b64e(format!(r#"{{"alg":"EdDSA","p":"{}"}}"#, "x".repeat(MAX_TOKEN_BYTES)).as_bytes()),
            parts[1],
            parts[2]
        ),
    ] {
        assert_eq!(
            judge(&bad, &keys).map(|_| ()),
            Err(JwtFailure::Malformed),
            "{bad:.80}"
        );
    }
    // The signature covers both parts: one changed byte of the claims fails it.
    let mut forged = claims();
    forged["scope"] = json!("a b admin");
    let forged = format!(
        "{}.{}.{}",
        parts[0],
        b64e(forged.to_string().as_bytes()),
        parts[2]
    );
    assert_eq!(
        judge(&forged, &keys).map(|_| ()),
        Err(JwtFailure::BadSignature)
    );
}

#[test]
fn a_token_without_kid_needs_exactly_one_fitting_key() {
    let a = TestSigner::ed();
    let b = TestSigner::ed();
    let ec = TestSigner::ec();
    let token = a.sign(json!({"alg": "EdDSA"}), claims());
    assert!(judge(&token, &keys(&[(&a, "a"), (&ec, "ec")])).is_ok());
    assert_eq!(
        judge(&token, &keys(&[(&a, "a"), (&b, "b")])).map(|_| ()),
        Err(JwtFailure::UnknownKey)
    );
    let named = a.sign(json!({"alg": "EdDSA", "kid": "zzz"}), claims());
    assert_eq!(
        judge(&named, &keys(&[(&a, "a")])).map(|_| ()),
        Err(JwtFailure::UnknownKey)
    );
    // Another key under the token's kid: the signature fails.
    let token = a.sign(json!({"alg": "EdDSA", "kid": "b"}), claims());
    assert_eq!(
        judge(&token, &keys(&[(&b, "b")])).map(|_| ()),
        Err(JwtFailure::BadSignature)
    );
}

#[test]
fn keys_of_other_types_may_share_a_kid_and_the_one_that_fits_the_algorithm_verifies() {
    let ed = TestSigner::ed();
    let ec = TestSigner::ec();
    let rsa = TestSigner::rsa();
    let other_ed = TestSigner::ed();
    // The issue's case: an EC key and an RSA key under one kid, the EC key first.
    for order in [
        [(&ec, "same"), (&rsa, "same"), (&ed, "same")],
        [(&ed, "same"), (&rsa, "same"), (&ec, "same")],
    ] {
        let set = keys(&order);
        for signer in [&ed, &ec, &rsa] {
            let token = signer.sign(json!({"alg": signer.alg(), "kid": "same"}), claims());
            assert!(judge(&token, &set).is_ok(), "{}", signer.alg());
        }
    }
    // Two keys of one type under one kid: each is tried, the signer's verifies.
    let set = keys(&[(&other_ed, "same"), (&ed, "same"), (&ec, "same")]);
    let token = ed.sign(json!({"alg": "EdDSA", "kid": "same"}), claims());
    assert!(judge(&token, &set).is_ok());
    let stranger = TestSigner::ed();
    let token = stranger.sign(json!({"alg": "EdDSA", "kid": "same"}), claims());
    assert_eq!(
        judge(&token, &set).map(|_| ()),
        Err(JwtFailure::BadSignature)
    );
    // At most MAX_KEYS_PER_KID of them are tried.
    let decoys: Vec<TestSigner> = (0..MAX_KEYS_PER_KID).map(|_| TestSigner::ed()).collect();
    let mut crowd: Vec<(&TestSigner, &str)> = decoys.iter().map(|d| (d, "same")).collect();
    crowd.push((&ed, "same"));
    let token = ed.sign(json!({"alg": "EdDSA", "kid": "same"}), claims());
    assert_eq!(
        judge(&token, &keys(&crowd)).map(|_| ()),
        Err(JwtFailure::BadSignature)
    );
}

#[test]
fn the_key_set_keeps_only_signing_keys_it_can_verify_with() {
    let ed = TestSigner::ed();
    let mut encryption = ed.jwk("enc");
    encryption["use"] = json!("enc");
    let mut encrypt_ops = ed.jwk("encrypt-ops");
    encrypt_ops["key_ops"] = json!(["encrypt", "wrapKey"]);
    let mut sign_ops = ed.jwk("sign-ops");
    sign_ops["key_ops"] = json!(["sign"]);
    let mut ops_not_a_list = ed.jwk("ops-string");
    ops_not_a_list["key_ops"] = json!("verify");
    let mut verify_ops = ed.jwk("verify-ops");
    verify_ops["key_ops"] = json!(["verify"]);
    verify_ops["use"] = json!("sig");
    let set = json!({"keys": [
        encryption,
        encrypt_ops,
        sign_ops,
        ops_not_a_list,
        {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
        {"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA", "kid": "p384"},
        {"kty": "OKP", "crv": "Ed25519", "x": "AAAA", "kid": "short"},
        {"kty": "RSA", "n": "!!", "e": "AQAB", "kid": "bad-n"},
        {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "rsa", "alg": "RS512"},
        ed.jwk("sig"),
        verify_ops,
    ]});
    let keys = parse_key_set(&set).unwrap();
    let kids: Vec<_> = keys.iter().map(|k| k.kid.as_deref()).collect();
    assert_eq!(kids, [Some("sig"), Some("verify-ops")]);
    assert!(parse_key_set(&json!({"keys": {}})).is_err());
    assert!(parse_key_set(&json!([])).is_err());
}

#[test]
fn a_rule_matches_an_equal_string_an_array_member_or_a_scope_word() {
    let claims =
        json!({"scope": "skills.a skills.b", "groups": ["x", "y"], "client_id": "bot", "n": 1})
            .as_object()
            .unwrap()
            .clone();
    assert!(claim_holds(&claims, "scope", "skills.b"));
    assert!(!claim_holds(&claims, "scope", "skills"));
    assert!(claim_holds(&claims, "groups", "y"));
    assert!(claim_holds(&claims, "client_id", "bot"));
    // Only `scope` is split on spaces.
    let spaced = json!({"name": "a b"}).as_object().unwrap().clone();
    assert!(!claim_holds(&spaced, "name", "a"));
    assert!(!claim_holds(&claims, "n", "1"));
    assert!(!claim_holds(&claims, "missing", "bot"));
}
