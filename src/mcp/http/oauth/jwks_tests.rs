use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::sync::Mutex;

use serde_json::json;

use super::*;

/// A canned HTTP answer: status, extra headers, body.
#[derive(Clone)]
struct Canned(u16, Vec<(String, String)>, Vec<u8>);

/// A server on 127.0.0.1 answering each path from a table the test changes, counting requests.
struct Idp {
    base: String,
    routes: Arc<Mutex<HashMap<String, Canned>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Idp {
    fn start() -> Idp {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let routes: Arc<Mutex<HashMap<String, Canned>>> = Arc::default();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (r, h) = (Arc::clone(&routes), Arc::clone(&hits));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                *h.lock().unwrap().entry(path.clone()).or_default() += 1;
                let Canned(status, headers, body) = r
                    .lock()
                    .unwrap()
                    .get(&path)
                    .cloned()
                    .unwrap_or(Canned(404, Vec::new(), b"{}".to_vec()));
                let mut answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    answer.push_str(&format!("{name}: {value}\r\n"));
                }
                answer.push_str("\r\n");
                let _ = stream.write_all(answer.as_bytes());
                let _ = stream.write_all(&body);
            }
        });
        Idp { base, routes, hits }
    }

    fn answer(&self, path: &str, canned: Canned) {
        self.routes.lock().unwrap().insert(path.to_owned(), canned);
    }

    fn json(&self, path: &str, value: serde_json::Value) {
        self.answer(
            path,
            Canned(200, Vec::new(), value.to_string().into_bytes()),
        );
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    /// Discovery naming this issuer and a key set of one Ed25519 key.
    fn healthy(&self) {
        self.json(
            "/.well-known/openid-configuration",
            json!({"issuer": self.base, "jwks_uri": format!("{}/keys", self.base)}),
        );
        self.json("/keys", key_set("k1"));
    }
}

fn key_set(kid: &str) -> serde_json::Value {
    json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": kid, "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]})
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn cache(issuer: &str) -> KeyCache {
    KeyCache::new(issuer, Arc::new(Metrics::new())).unwrap()
}

#[test]
fn keys_are_fetched_through_discovery_and_kept_when_a_later_fetch_fails() {
    let idp = Idp::start();
    idp.healthy();
    let cache = cache(&idp.base);
    runtime().block_on(async {
        assert!(cache.keys().is_none());
        assert!(cache.refresh().await, "{:?}", cache.last_error());
        assert_eq!(cache.keys().unwrap()[0].kid.as_deref(), Some("k1"));
        idp.answer("/keys", Canned(503, Vec::new(), Vec::new()));
        assert!(!cache.refresh().await);
        assert!(cache.last_error().unwrap().contains("HTTP 503"));
        assert_eq!(
            cache.keys().unwrap()[0].kid.as_deref(),
            Some("k1"),
            "the cached keys stay"
        );
    });
}

#[test]
fn rfc_8414_metadata_is_the_fallback_of_openid_discovery() {
    let idp = Idp::start();
    idp.json(
        "/realm/.well-known/oauth-authorization-server",
        json!({"issuer": format!("{}/realm", idp.base), "jwks_uri": format!("{}/keys", idp.base)}),
    );
    idp.json("/keys", key_set("k"));
    let cache = cache(&format!("{}/realm", idp.base));
    runtime().block_on(async {
        assert!(cache.refresh().await, "{:?}", cache.last_error());
    });
    assert_eq!(idp.hits("/realm/.well-known/openid-configuration"), 1);
}

#[test]
fn an_issuer_with_a_path_is_discovered_by_rfc_8414_path_insertion() {
    let idp = Idp::start();
    idp.json(
        "/.well-known/oauth-authorization-server/tenant",
        json!({"issuer": format!("{}/tenant", idp.base), "jwks_uri": format!("{}/tenant/keys", idp.base)}),
    );
    idp.json("/tenant/keys", key_set("k"));
    let cache = cache(&format!("{}/tenant", idp.base));
    runtime().block_on(async {
        assert!(cache.refresh().await, "{:?}", cache.last_error());
    });
    assert_eq!(cache.keys().unwrap()[0].kid.as_deref(), Some("k"));
    assert_eq!(idp.hits("/tenant/.well-known/openid-configuration"), 1);
    assert_eq!(
        idp.hits("/.well-known/oauth-authorization-server/tenant"),
        1
    );
}

#[test]
fn the_discovery_urls_are_oidc_appended_then_rfc_8414_inserted() {
    let urls = |issuer: &str| -> Vec<String> {
        discovery_urls(&Url::parse(issuer).unwrap())
            .iter()
            .map(|u| u.to_string())
            .collect()
    };
    assert_eq!(
        urls("https://idp.example/tenant/"),
        [
            "https://idp.example/tenant/.well-known/openid-configuration",
            "https://idp.example/.well-known/oauth-authorization-server/tenant",
            "https://idp.example/.well-known/openid-configuration/tenant",
            "https://idp.example/tenant/.well-known/oauth-authorization-server",
        ]
    );
    assert_eq!(
        urls("https://idp.example"),
        [
            "https://idp.example/.well-known/openid-configuration",
            "https://idp.example/.well-known/oauth-authorization-server",
        ]
    );
}

#[test]
fn every_unsafe_or_unusable_answer_is_refused_naming_why() {
    let rt = runtime();
    let refused = |idp: &Idp, needle: &str| {
        let cache = cache(&idp.base);
        rt.block_on(async {
            assert!(!cache.refresh().await, "{needle}");
        });
        assert!(cache.keys().is_none());
        let error = cache.last_error().unwrap();
        assert!(error.contains(needle), "{needle}: {error}");
    };
    // Metadata of another issuer.
    let idp = Idp::start();
    idp.healthy();
    idp.json(
        "/.well-known/openid-configuration",
        json!({"issuer": "https://evil.example", "jwks_uri": format!("{}/keys", idp.base)}),
    );
    refused(&idp, "names another issuer");
    // A key set on another origin (here another port of the same host).
    let other = Idp::start();
    other.json("/keys", key_set("k"));
    idp.json(
        "/.well-known/openid-configuration",
        json!({"issuer": idp.base, "jwks_uri": format!("{}/keys", other.base)}),
    );
    refused(&idp, "not on the issuer's origin");
    assert_eq!(other.hits("/keys"), 0);
    // A redirect off the issuer's origin is not followed; one on it is.
    idp.healthy();
    idp.answer(
        "/keys",
        Canned(
            302,
            vec![("Location".into(), format!("{}/keys", other.base))],
            Vec::new(),
        ),
    );
    refused(&idp, "/keys");
    assert_eq!(other.hits("/keys"), 0);
    idp.answer(
        "/keys",
        Canned(302, vec![("Location".into(), "/keys2".into())], Vec::new()),
    );
    idp.json("/keys2", key_set("k"));
    let cache = cache(&idp.base);
    rt.block_on(async { assert!(cache.refresh().await, "{:?}", cache.last_error()) });
    // A loop of redirects on the origin ends.
    idp.answer(
        "/keys",
        Canned(302, vec![("Location".into(), "/keys".into())], Vec::new()),
    );
    refused(&idp, "/keys");
    assert!(
        idp.hits("/keys") <= 2 + 1 + MAX_REDIRECTS + 1,
        "{}",
        idp.hits("/keys")
    );
    // A body over the bound.
    let big = format!(
        "{{\"keys\": [], \"pad\": \"{}\"}}",
        "x".repeat(MAX_DOCUMENT_BYTES)
    );
    idp.answer("/keys", Canned(200, Vec::new(), big.into_bytes()));
    refused(&idp, "more than 1048576 bytes");
    // Not JSON, no keys array, no key this server verifies with.
    idp.answer("/keys", Canned(200, Vec::new(), b"<html>".to_vec()));
    refused(&idp, "not JSON");
    idp.json("/keys", json!({"nokeys": []}));
    refused(&idp, "no `keys` array");
    idp.json("/keys", json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}));
    refused(&idp, "holds no key");
    // No discovery at all.
    let empty = Idp::start();
    refused(&empty, "HTTP 404");
}

#[test]
fn an_unknown_kid_fetches_at_most_once_per_cool_down() {
    let idp = Idp::start();
    idp.healthy();
    let cache = cache(&idp.base);
    runtime().block_on(async {
        assert!(cache.refresh().await);
        idp.json("/keys", key_set("k2"));
        cache.refresh_for_unknown_kid().await;
        assert_eq!(cache.keys().unwrap()[0].kid.as_deref(), Some("k2"));
        idp.json("/keys", key_set("k3"));
        cache.refresh_for_unknown_kid().await;
        cache.refresh_for_unknown_kid().await;
    });
    assert_eq!(
        idp.hits("/keys"),
        2,
        "the start, then one fetch for unknown kids"
    );
    assert_eq!(cache.keys().unwrap()[0].kid.as_deref(), Some("k2"));
}
