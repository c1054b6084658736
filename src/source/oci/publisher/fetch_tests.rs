//! The fetch of signature material against a scripted registry on 127.0.0.1 (every answer a
//! test decides, every request recorded), and against Debian's `docker-registry`.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::source::oci::MEDIA_INDEX;

const REPOSITORY: &str = "acme/skills";
/// The pinned image's digest in every scripted test (no image is served: only its signatures).
const PINNED_HEX: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn pinned() -> String {
    format!("sha256:{PINNED_HEX}")
}

/// What a route answers.
#[derive(Clone)]
enum Body {
    /// These bytes, with their `Content-Length`.
    Bytes(Vec<u8>),
    /// A chunked body that never ends (until the client goes away).
    Endless,
    /// Headers, then nothing, ever (until the client goes away).
    Silence,
}

#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
}

impl Reply {
    fn bytes(status: u16, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Body::Bytes(body.into()),
        }
    }

    fn json(value: &Value) -> Reply {
        Reply::bytes(200, value.to_string())
    }

    fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    fn not_found() -> Reply {
        Reply::bytes(404, r#"{"errors":[{"code":"MANIFEST_UNKNOWN"}]}"#)
    }
}

/// One request the server received.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    /// Lowercased names.
    headers: HashMap<String, String>,
}

type Script = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A scripted HTTP/1.1 server on 127.0.0.1: one thread per connection, one answer per
/// connection (`Connection: close`).
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Bytes of endless bodies written, all connections together.
    endless_written: Arc<Mutex<u64>>,
}

impl Server {
    fn start(script: Arc<Script>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let endless_written: Arc<Mutex<u64>> = Arc::default();
        let (recorded, written) = (Arc::clone(&seen), Arc::clone(&endless_written));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (script, recorded, written) = (
                    Arc::clone(&script),
                    Arc::clone(&recorded),
                    Arc::clone(&written),
                );
                std::thread::spawn(move || serve(stream, &*script, &recorded, &written));
            }
        });
        Server {
            port,
            seen,
            endless_written,
        }
    }

    /// A server answering each path (with its query) from `routes`, 404 otherwise.
    fn routes(routes: HashMap<String, Reply>) -> Server {
        Server::start(Arc::new(move |seen: &Seen| {
            routes
                .get(&seen.path)
                .cloned()
                .unwrap_or_else(Reply::not_found)
        }))
    }

    fn reference(&self) -> ImageReference {
        ImageReference {
            registry: format!("127.0.0.1:{}", self.port),
            repository: REPOSITORY.to_owned(),
            digest: pinned(),
        }
    }

    fn fetch(&self) -> Result<SignatureMaterial, PullError> {
        self.fetch_within(Duration::from_secs(60))
    }

    fn fetch_within(&self, deadline: Duration) -> Result<SignatureMaterial, PullError> {
        fetch(&MaterialRequest {
            reference: &self.reference(),
            plain_http: true,
            deadline,
        })
    }

    fn requested(&self, path: &str) -> bool {
        self.seen.lock().unwrap().iter().any(|s| s.path == path)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, script: &Script, seen: &Mutex<Vec<Seen>>, written: &Mutex<u64>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_default()
        .to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let request = Seen { path, headers };
    seen.lock().unwrap().push(request.clone());
    let reply = script(&request);
    let mut answer = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", reply.status);
    for (name, value) in &reply.headers {
        answer.push_str(&format!("{name}: {value}\r\n"));
    }
    match &reply.body {
        Body::Bytes(body) => {
            if !reply
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            {
                answer.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            answer.push_str("\r\n");
            let _ = stream.write_all(answer.as_bytes());
            let _ = stream.write_all(body);
        }
        Body::Endless => {
            answer.push_str("Transfer-Encoding: chunked\r\n\r\n");
            if stream.write_all(answer.as_bytes()).is_err() {
                return;
            }
            let chunk = [b'{'; 4096];
            loop {
                let framed = [b"1000\r\n".as_slice(), &chunk, b"\r\n"].concat();
                if stream.write_all(&framed).is_err() {
                    return;
                }
                *written.lock().unwrap() += chunk.len() as u64;
            }
        }
        Body::Silence => {
            answer.push_str("Content-Length: 100\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes());
            // Until the client goes away.
            let mut sink = [0u8; 64];
            while stream.read(&mut sink).unwrap_or(0) > 0 {}
        }
    }
}

fn digest(bytes: &[u8]) -> String {
    crate::source::oci::image::sha256(bytes)
}

fn v2(rest: &str) -> String {
    format!("/v2/{REPOSITORY}/{rest}")
}

fn sig_path() -> String {
    v2(&format!("manifests/sha256-{PINNED_HEX}.sig"))
}

fn referrers_path() -> String {
    v2(&format!("referrers/{}", pinned()))
}

fn tag_index_path() -> String {
    v2(&format!("manifests/sha256-{PINNED_HEX}"))
}

fn blob_path(digest: &str) -> String {
    v2(&format!("blobs/{digest}"))
}

const EMPTY_CONFIG: &str = "{}";

/// A registry's content, built by a test: routes by path.
#[derive(Default)]
struct Content {
    routes: HashMap<String, Reply>,
}

impl Content {
    fn blob(&mut self, bytes: &[u8]) -> Value {
        let d = digest(bytes);
        self.routes
            .insert(blob_path(&d), Reply::bytes(200, bytes.to_vec()));
        json!({"digest": d, "size": bytes.len()})
    }

    /// A `sha256-<hex>.sig` manifest of these layers: (media type, payload, annotations).
    fn sig_manifest(&mut self, layers: &[(&str, &[u8], Value)]) -> Vec<u8> {
        let config = self.blob(EMPTY_CONFIG.as_bytes());
        let layers: Vec<Value> = layers
            .iter()
            .map(|(media_type, payload, annotations)| {
                let mut layer = self.blob(payload);
                layer["mediaType"] = json!(media_type);
                layer["annotations"] = annotations.clone();
                layer
            })
            .collect();
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": MEDIA_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": config["digest"], "size": config["size"]},
            "layers": layers,
        });
        let bytes = manifest.to_string().into_bytes();
        self.routes
            .insert(sig_path(), Reply::bytes(200, bytes.clone()));
        bytes
    }

    /// A referrer manifest of one bundle layer, served by its digest; its index descriptor.
    fn bundle_referrer(&mut self, media_type: &str, bundle: &[u8]) -> Value {
        let mut layer = self.blob(bundle);
        layer["mediaType"] = json!(media_type);
        let manifest = referrer_manifest(media_type, &[layer], &pinned());
        self.referrer(&manifest, media_type)
    }

    /// `manifest` served by its digest; its index descriptor, of artifact type `artifact_type`.
    fn referrer(&mut self, manifest: &Value, artifact_type: &str) -> Value {
        let bytes = manifest.to_string().into_bytes();
        let d = digest(&bytes);
        self.routes.insert(
            v2(&format!("manifests/{d}")),
            Reply::bytes(200, bytes.clone()),
        );
        json!({"mediaType": MEDIA_MANIFEST, "digest": d, "size": bytes.len(),
               "artifactType": artifact_type})
    }

    fn referrers_api(&mut self, descriptors: Vec<Value>) {
        self.routes.insert(
            referrers_path(),
            Reply::json(&index(descriptors)).header("Content-Type", MEDIA_INDEX),
        );
    }

    fn referrers_tag(&mut self, descriptors: Vec<Value>) {
        self.routes
            .insert(tag_index_path(), Reply::json(&index(descriptors)));
    }

    fn serve(self) -> Server {
        Server::routes(self.routes)
    }
}

fn referrer_manifest(artifact_type: &str, layers: &[Value], subject: &str) -> Value {
    json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "artifactType": artifact_type,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json",
                   "digest": digest(b"{}"), "size": 2},
        "layers": layers,
        "subject": {"mediaType": MEDIA_MANIFEST, "digest": subject, "size": 1234},
        "annotations": {"dev.sigstore.bundle.predicateType": COSIGN_SIGN_PREDICATE},
    })
}

fn index(descriptors: Vec<Value>) -> Value {
    json!({"schemaVersion": 2, "mediaType": MEDIA_INDEX, "manifests": descriptors})
}

const BUNDLE_V03: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

fn simple_signing_payload() -> Vec<u8> {
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"127.0.0.1/acme/skills"}},"image":{{"docker-manifest-digest":"{}"}},"type":"cosign container image signature"}},"optional":null}}"#,
        pinned()
    )
    .into_bytes()
}

/// The one referrer `result` skipped (no bundle read), checked to say why with `code`.
fn skipped(
    result: Result<SignatureMaterial, PullError>,
    code: DistributionCode,
) -> crate::trust::image::material::Skipped {
    let material = result.unwrap();
    assert!(material.bundles.is_empty(), "{material:?}");
    assert_eq!(material.skipped.len(), 1, "{material:?}");
    let skipped = material.skipped[0].clone();
    assert!(
        skipped.detail.ends_with(&format!("({})", code.as_str())),
        "{}",
        skipped.detail
    );
    skipped
}

fn refused(result: Result<SignatureMaterial, PullError>, code: DistributionCode) -> String {
    match result {
        Ok(material) => panic!("fetched {material:?}, expected {code:?}"),
        Err(e) => {
            assert_eq!(e.code, code, "{}", e.message);
            e.message
        }
    }
}

// ---- what is fetched -----------------------------------------------------------------------

#[test]
fn an_image_without_signatures_has_empty_material() {
    let server = Content::default().serve();
    assert_eq!(server.fetch().unwrap(), SignatureMaterial::default());
    // The referrers API answered 404: the tag schema was asked.
    assert!(server.requested(&referrers_path()));
    assert!(server.requested(&tag_index_path()));
}

#[test]
fn cosign_v2_layers_are_read_in_order_with_their_annotations() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let other = b"second payload".to_vec();
    let huge_other_type = vec![0u8; 10];
    content.sig_manifest(&[
        (
            SIMPLE_SIGNING,
            &payload,
            json!({"dev.cosignproject.cosign/signature": "MEUC"}),
        ),
        // Not a signature layer: skipped unread, even declaring a size over any bound.
        ("application/vnd.in-toto+json", &huge_other_type, json!({})),
        (SIMPLE_SIGNING, &other, json!({})),
    ]);
    let skipped = digest(&huge_other_type);
    let server = content.serve();
    let material = server.fetch().unwrap();
    assert!(material.bundles.is_empty());
    assert_eq!(material.cosign.len(), 2);
    let first = &material.cosign[0];
    assert_eq!(first.payload.as_bytes(), payload.as_slice());
    assert_eq!(
        first.annotations.get("dev.cosignproject.cosign/signature"),
        Some(&"MEUC".to_owned())
    );
    assert_eq!(first.found_at, format!("`sha256-{PINNED_HEX}.sig` layer 0"));
    assert_eq!(material.cosign[1].payload, "second payload");
    assert!(material.cosign[1].annotations.is_empty());
    assert_eq!(
        material.cosign[1].found_at,
        format!("`sha256-{PINNED_HEX}.sig` layer 2")
    );
    assert!(!server.requested(&blob_path(&skipped)));
    // The manifest was asked for as an OCI or Docker image manifest.
    let asked = server
        .seen()
        .into_iter()
        .find(|s| s.path == sig_path())
        .unwrap();
    let accept = &asked.headers["accept"];
    assert!(accept.contains(MEDIA_MANIFEST) && accept.contains(MEDIA_DOCKER_MANIFEST));
}

#[test]
fn a_non_signature_layer_over_every_bound_is_skipped_unread() {
    let mut content = Content::default();
    let config = content.blob(EMPTY_CONFIG.as_bytes());
    let manifest = json!({
        "schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config,
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": digest(b"x"), "size": 1u64 << 40}],
    });
    content.routes.insert(sig_path(), Reply::json(&manifest));
    let server = content.serve();
    assert_eq!(server.fetch().unwrap(), SignatureMaterial::default());
    assert!(!server.requested(&blob_path(&digest(b"x"))));
}

#[test]
fn referrers_api_bundles_are_read_and_other_referrers_skipped_unread() {
    let mut content = Content::default();
    let bundle = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}"#;
    let wanted = content.bundle_referrer(BUNDLE_V03, bundle);
    // What a registry that ignores (or does not know) an `artifactType` filter lists too: an
    // SBOM, a notation signature, and a cosign attestation of another predicate.
    let sbom = content.referrer(
        &referrer_manifest("application/spdx+json", &[], &pinned()),
        "application/spdx+json",
    );
    let notation = content.referrer(
        &referrer_manifest("application/vnd.cncf.notary.signature", &[], &pinned()),
        "application/vnd.cncf.notary.signature",
    );
    let mut attestation = content.bundle_referrer(BUNDLE_V03, b"{\"an\":\"sbom attestation\"}");
    attestation["annotations"] =
        json!({"dev.sigstore.bundle.predicateType": "https://spdx.dev/Document"});
    let mut signature_annotated = wanted.clone();
    signature_annotated["annotations"] =
        json!({"dev.sigstore.bundle.predicateType": COSIGN_SIGN_PREDICATE});
    content.referrers_api(vec![
        sbom.clone(),
        notation.clone(),
        attestation.clone(),
        signature_annotated,
    ]);
    let server = content.serve();
    let material = server.fetch().unwrap();
    assert!(material.cosign.is_empty());
    assert_eq!(material.bundles.len(), 1);
    let got = &material.bundles[0];
    assert_eq!(got.json.as_bytes(), bundle.as_slice());
    assert_eq!(got.media_type, BUNDLE_V03);
    assert_eq!(
        got.found_at,
        format!("referrer {}", wanted["digest"].as_str().unwrap())
    );
    for skipped in [&sbom, &notation, &attestation] {
        let path = v2(&format!(
            "manifests/{}",
            skipped["digest"].as_str().unwrap()
        ));
        assert!(!server.requested(&path), "{path} was fetched");
    }
    // The registry has the referrers API: the tag schema is not asked.
    assert!(!server.requested(&tag_index_path()));
    // Asked without a filter (a bundle has several media types; the filter takes one), for an
    // OCI image index.
    let asked = server
        .seen()
        .into_iter()
        .find(|s| s.path == referrers_path())
        .unwrap();
    assert_eq!(asked.headers["accept"], MEDIA_INDEX);
}

#[test]
fn every_bundle_media_type_is_read() {
    let mut content = Content::default();
    let descriptors = BUNDLE_MEDIA_TYPES
        .iter()
        .map(|t| content.bundle_referrer(t, format!("{{\"for\":\"{t}\"}}").as_bytes()))
        .collect();
    content.referrers_api(descriptors);
    let material = content.serve().fetch().unwrap();
    let types: Vec<&str> = material
        .bundles
        .iter()
        .map(|b| b.media_type.as_str())
        .collect();
    assert_eq!(types, BUNDLE_MEDIA_TYPES);
}

#[test]
fn referrers_pages_are_followed() {
    let mut content = Content::default();
    let first = content.bundle_referrer(BUNDLE_V03, b"{\"page\":1}");
    let second = content.bundle_referrer(BUNDLE_V03, b"{\"page\":2}");
    content.routes.insert(
        referrers_path(),
        Reply::json(&index(vec![first]))
            .header("Content-Type", MEDIA_INDEX)
            .header(
                "Link",
                &format!("<{}?n=1&last=x>; rel=\"next\"", referrers_path()),
            ),
    );
    content.routes.insert(
        format!("{}?n=1&last=x", referrers_path()),
        Reply::json(&index(vec![second])).header("Content-Type", MEDIA_INDEX),
    );
    let material = content.serve().fetch().unwrap();
    let jsons: Vec<&str> = material.bundles.iter().map(|b| b.json.as_str()).collect();
    assert_eq!(jsons, ["{\"page\":1}", "{\"page\":2}"]);
}

#[test]
fn more_referrers_pages_than_the_bound_are_refused() {
    // Every page links to itself.
    let server = Server::start(Arc::new(|seen: &Seen| {
        if seen.path.starts_with(&referrers_path()) {
            Reply::json(&index(Vec::new()))
                .header("Content-Type", MEDIA_INDEX)
                .header(
                    "Link",
                    &format!("<{}?again>; rel=\"next\"", referrers_path()),
                )
        } else {
            Reply::not_found()
        }
    }));
    let message = refused(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("more than {MAX_REFERRERS_PAGES} pages")),
        "{message}"
    );
    let pages = server
        .seen()
        .iter()
        .filter(|s| s.path.starts_with(&referrers_path()))
        .count();
    assert_eq!(pages, MAX_REFERRERS_PAGES);
}

#[test]
fn a_next_page_on_another_origin_is_refused() {
    let elsewhere = Content::default().serve();
    let mut content = Content::default();
    content.routes.insert(
        referrers_path(),
        Reply::json(&index(Vec::new()))
            .header("Content-Type", MEDIA_INDEX)
            .header(
                "Link",
                &format!("<http://127.0.0.1:{}/next>; rel=\"next\"", elsewhere.port),
            ),
    );
    let server = content.serve();
    let message = refused(server.fetch(), DistributionCode::MalformedImage);
    assert!(message.contains("`Link`"), "{message}");
    assert!(elsewhere.seen().is_empty());
}

#[test]
fn without_a_referrers_api_the_tag_index_lists_the_referrers() {
    for status in [404, 400, 406] {
        let mut content = Content::default();
        let bundle = content.bundle_referrer(BUNDLE_V03, b"{\"via\":\"tag\"}");
        content.referrers_tag(vec![bundle.clone()]);
        content
            .routes
            .insert(referrers_path(), Reply::bytes(status, "404 page not found"));
        let material = content.serve().fetch().unwrap();
        assert_eq!(material.bundles.len(), 1, "HTTP {status}");
        assert_eq!(material.bundles[0].json, "{\"via\":\"tag\"}");
        assert_eq!(
            material.bundles[0].found_at,
            format!(
                "referrer {} (listed by the tag `sha256-{PINNED_HEX}`)",
                bundle["digest"].as_str().unwrap()
            )
        );
    }
}

#[test]
fn a_referrers_answer_that_is_not_an_index_means_no_referrers_api() {
    let mut content = Content::default();
    let bundle = content.bundle_referrer(BUNDLE_V03, b"{}");
    content.referrers_tag(vec![bundle]);
    content.routes.insert(
        referrers_path(),
        Reply::bytes(200, "<html>welcome</html>").header("Content-Type", "text/html"),
    );
    assert_eq!(content.serve().fetch().unwrap().bundles.len(), 1);
}

#[test]
fn both_layouts_are_fetched_v2_first() {
    let mut content = Content::default();
    content.sig_manifest(&[(SIMPLE_SIGNING, &simple_signing_payload(), json!({}))]);
    let bundle = content.bundle_referrer(BUNDLE_V03, b"{}");
    content.referrers_api(vec![bundle]);
    let material = content.serve().fetch().unwrap();
    assert_eq!(material.cosign.len(), 1);
    assert_eq!(material.bundles.len(), 1);
}

#[test]
fn a_referrer_listed_twice_is_fetched_once() {
    let mut content = Content::default();
    let bundle = content.bundle_referrer(BUNDLE_V03, b"{}");
    content.referrers_api(vec![bundle.clone(), bundle]);
    assert_eq!(content.serve().fetch().unwrap().bundles.len(), 1);
}

/// A `.sig` manifest of one simple-signing layer described by `layer` (digest, size, …).
fn sig_manifest_with_layer(content: &mut Content, layer: Value) {
    let config = content.blob(EMPTY_CONFIG.as_bytes());
    let manifest = json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config,
                          "layers": [layer]});
    content.routes.insert(sig_path(), Reply::json(&manifest));
}

/// Hostile answers: every bound and digest, each refused or skipped as said.
#[path = "fetch_hostile_tests.rs"]
mod hostile;

/// The same fetch against Debian's `docker-registry`.
#[path = "fetch_registry_tests.rs"]
mod registry;
