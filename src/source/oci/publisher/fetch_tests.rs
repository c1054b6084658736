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

// ---- hostile answers -----------------------------------------------------------------------

#[test]
fn a_signature_manifest_declared_over_its_bound_is_refused_unread() {
    let mut content = Content::default();
    content.routes.insert(
        sig_path(),
        Reply::bytes(200, vec![b' '; MAX_SIGNATURE_MANIFEST_BYTES as usize + 1]),
    );
    let message = refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("bound of {MAX_SIGNATURE_MANIFEST_BYTES} bytes")),
        "{message}"
    );
}

#[test]
fn an_endless_signature_manifest_is_refused_at_its_bound() {
    let mut content = Content::default();
    content.routes.insert(
        sig_path(),
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Endless,
        },
    );
    let server = content.serve();
    let message = refused(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(message.contains("sha256-"), "{message}");
    // Stopped at the bound: the server wrote little more than it (what the sockets buffer).
    let written = *server.endless_written.lock().unwrap();
    assert!(written < 64 * MAX_SIGNATURE_MANIFEST_BYTES, "{written}");
}

#[test]
fn too_many_signature_layers_are_refused() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let layers: Vec<(&str, &[u8], Value)> = (0..=MAX_SIGNATURE_LAYERS)
        .map(|_| (SIMPLE_SIGNING, payload.as_slice(), json!({})))
        .collect();
    content.sig_manifest(&layers);
    let server = content.serve();
    let message = refused(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!(
            "{} layers, over the bound of {MAX_SIGNATURE_LAYERS}",
            MAX_SIGNATURE_LAYERS + 1
        )),
        "{message}"
    );
    assert!(!server.requested(&blob_path(&digest(&payload))));
}

#[test]
fn exactly_the_most_signature_layers_are_read() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let layers: Vec<(&str, &[u8], Value)> = (0..MAX_SIGNATURE_LAYERS)
        .map(|_| (SIMPLE_SIGNING, payload.as_slice(), json!({})))
        .collect();
    content.sig_manifest(&layers);
    assert_eq!(
        content.serve().fetch().unwrap().cosign.len(),
        MAX_SIGNATURE_LAYERS
    );
}

/// A `.sig` manifest of one simple-signing layer described by `layer` (digest, size, …).
fn sig_manifest_with_layer(content: &mut Content, layer: Value) {
    let config = content.blob(EMPTY_CONFIG.as_bytes());
    let manifest = json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config,
                          "layers": [layer]});
    content.routes.insert(sig_path(), Reply::json(&manifest));
}

#[test]
fn a_signature_layer_declared_over_its_bound_is_refused_unread() {
    let mut content = Content::default();
    let payload = vec![b'a'; MAX_SIGNATURE_PAYLOAD_BYTES as usize + 1];
    let mut layer = content.blob(&payload);
    layer["mediaType"] = json!(SIMPLE_SIGNING);
    sig_manifest_with_layer(&mut content, layer);
    let server = content.serve();
    let message = refused(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("over the bound of {MAX_SIGNATURE_PAYLOAD_BYTES}")),
        "{message}"
    );
    assert!(!server.requested(&blob_path(&digest(&payload))));
}

#[test]
fn a_signature_layer_with_another_digest_is_refused() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let mut layer = content.blob(&payload);
    layer["mediaType"] = json!(SIMPLE_SIGNING);
    sig_manifest_with_layer(&mut content, layer.clone());
    // The registry serves other bytes of the same length under the digest.
    let mut tampered = payload.clone();
    tampered[0] ^= 1;
    content.routes.insert(
        blob_path(layer["digest"].as_str().unwrap()),
        Reply::bytes(200, tampered),
    );
    let message = refused(content.serve().fetch(), DistributionCode::DigestMismatch);
    assert!(message.contains("layer 0"), "{message}");
}

#[test]
fn a_signature_layer_shorter_than_declared_is_refused() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let mut layer = content.blob(&payload);
    layer["mediaType"] = json!(SIMPLE_SIGNING);
    layer["size"] = json!(payload.len() + 1);
    sig_manifest_with_layer(&mut content, layer);
    refused(content.serve().fetch(), DistributionCode::DigestMismatch);
}

#[test]
fn a_signature_layer_longer_than_declared_is_not_read_past_its_size() {
    let mut content = Content::default();
    let payload = simple_signing_payload();
    let mut layer = content.blob(&payload);
    layer["mediaType"] = json!(SIMPLE_SIGNING);
    sig_manifest_with_layer(&mut content, layer.clone());
    let digest_path = blob_path(layer["digest"].as_str().unwrap());
    content.routes.insert(
        digest_path,
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Endless,
        },
    );
    refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
}

#[test]
fn a_payload_that_is_not_utf8_is_refused() {
    let mut content = Content::default();
    let payload = vec![0xff, 0xfe, b'{'];
    content.sig_manifest(&[(SIMPLE_SIGNING, &payload, json!({}))]);
    let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
    assert!(message.contains("not UTF-8"), "{message}");
}

#[test]
fn annotations_that_are_not_strings_are_refused() {
    let mut content = Content::default();
    content.sig_manifest(&[(
        SIMPLE_SIGNING,
        &simple_signing_payload(),
        json!({"dev.cosignproject.cosign/signature": 7}),
    )]);
    refused(content.serve().fetch(), DistributionCode::MalformedImage);
}

#[test]
fn a_signature_manifest_that_is_not_an_image_manifest_is_refused() {
    for (body, says) in [
        (
            json!({"mediaType": MEDIA_INDEX, "manifests": []}),
            "media type",
        ),
        (json!({"schemaVersion": 2}), "`layers`"),
        (json!([1, 2]), "not a JSON object"),
    ] {
        let mut content = Content::default();
        content.routes.insert(sig_path(), Reply::json(&body));
        let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
        assert!(message.contains(says), "{message}");
    }
    let mut content = Content::default();
    content
        .routes
        .insert(sig_path(), Reply::bytes(200, "not json \u{1b}[31m"));
    let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
    assert!(!message.contains('\u{1b}'), "{message}");
}

#[test]
fn the_digest_a_registry_names_for_a_tag_is_not_relied_on() {
    // Registries get `Docker-Content-Digest` wrong for tags; nothing is named by the tag's
    // digest (the layers are checked against theirs), so a wrong or odd one changes nothing.
    for named in [digest(b"another manifest"), "not a digest".to_owned()] {
        let mut content = Content::default();
        let manifest =
            content.sig_manifest(&[(SIMPLE_SIGNING, &simple_signing_payload(), json!({}))]);
        content.routes.insert(
            sig_path(),
            Reply::bytes(200, manifest).header("Docker-Content-Digest", &named),
        );
        assert_eq!(content.serve().fetch().unwrap().cosign.len(), 1);
    }
}

#[test]
fn a_referrers_index_over_its_bound_is_refused() {
    let mut content = Content::default();
    content.routes.insert(
        referrers_path(),
        Reply {
            status: 200,
            headers: vec![("Content-Type".to_owned(), MEDIA_INDEX.to_owned())],
            body: Body::Endless,
        },
    );
    let message = refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("bound of {MAX_REFERRERS_INDEX_BYTES} bytes")),
        "{message}"
    );
}

#[test]
fn a_referrers_tag_index_over_its_bound_is_refused() {
    let mut content = Content::default();
    content.routes.insert(
        tag_index_path(),
        Reply::bytes(200, vec![b' '; MAX_REFERRERS_INDEX_BYTES as usize + 1]),
    );
    refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
}

#[test]
fn a_referrers_index_with_too_many_descriptors_is_refused() {
    let mut content = Content::default();
    let descriptor = json!({"mediaType": MEDIA_MANIFEST, "digest": digest(b"x"), "size": 1,
                            "artifactType": "application/spdx+json"});
    content.referrers_api(vec![descriptor.clone(); MAX_REFERRER_DESCRIPTORS + 1]);
    let message = refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("over the bound of {MAX_REFERRER_DESCRIPTORS}")),
        "{message}"
    );
    // Across pages, all together.
    let mut content = Content::default();
    let half = vec![descriptor; MAX_REFERRER_DESCRIPTORS / 2 + 1];
    content.routes.insert(
        referrers_path(),
        Reply::json(&index(half.clone()))
            .header("Content-Type", MEDIA_INDEX)
            .header("Link", &format!("<{}?p=2>; rel=\"next\"", referrers_path())),
    );
    content.routes.insert(
        format!("{}?p=2", referrers_path()),
        Reply::json(&index(half)).header("Content-Type", MEDIA_INDEX),
    );
    refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
}

#[test]
fn too_many_bundle_referrers_are_refused() {
    let mut content = Content::default();
    let descriptors = (0..=MAX_BUNDLE_REFERRERS)
        .map(|n| content.bundle_referrer(BUNDLE_V03, format!("{{\"n\":{n}}}").as_bytes()))
        .collect();
    content.referrers_api(descriptors);
    let message = refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("more than {MAX_BUNDLE_REFERRERS}")),
        "{message}"
    );
}

#[test]
fn a_bundle_declared_over_its_bound_is_skipped_unread() {
    let mut content = Content::default();
    let bundle = vec![b' '; MAX_BUNDLE_BYTES as usize + 1];
    let descriptor = content.bundle_referrer(BUNDLE_V03, &bundle);
    content.referrers_api(vec![descriptor.clone()]);
    let server = content.serve();
    let skipped = skipped(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(
        skipped
            .detail
            .contains(&format!("over the bound of {MAX_BUNDLE_BYTES}")),
        "{}",
        skipped.detail
    );
    assert_eq!(
        skipped.found_at,
        format!("referrer {}", descriptor["digest"].as_str().unwrap())
    );
    assert!(!server.requested(&blob_path(&digest(&bundle))));
}

#[test]
fn a_referrer_manifest_declared_over_its_bound_is_skipped_unread() {
    let mut content = Content::default();
    let mut descriptor = content.bundle_referrer(BUNDLE_V03, b"{}");
    descriptor["size"] = json!(MAX_REFERRER_MANIFEST_BYTES + 1);
    content.referrers_api(vec![descriptor.clone()]);
    let server = content.serve();
    skipped(server.fetch(), DistributionCode::ImageTooLarge);
    let path = v2(&format!(
        "manifests/{}",
        descriptor["digest"].as_str().unwrap()
    ));
    assert!(!server.requested(&path));
}

#[test]
fn a_referrer_manifest_with_another_digest_is_skipped() {
    let mut content = Content::default();
    let descriptor = content.bundle_referrer(BUNDLE_V03, b"{}");
    let path = v2(&format!(
        "manifests/{}",
        descriptor["digest"].as_str().unwrap()
    ));
    let Some(Reply {
        body: Body::Bytes(bytes),
        ..
    }) = content.routes.get(&path).cloned()
    else {
        unreachable!()
    };
    let mut tampered = bytes;
    let last = tampered.len() - 1;
    tampered[last - 1] = b' ';
    content.routes.insert(path, Reply::bytes(200, tampered));
    content.referrers_api(vec![descriptor]);
    skipped(content.serve().fetch(), DistributionCode::DigestMismatch);
}

#[test]
fn a_bundle_with_another_digest_is_skipped() {
    let mut content = Content::default();
    let descriptor = content.bundle_referrer(BUNDLE_V03, b"{\"a\":1}");
    content.routes.insert(
        blob_path(&digest(b"{\"a\":1}")),
        Reply::bytes(200, "{\"a\":2}"),
    );
    content.referrers_api(vec![descriptor]);
    skipped(content.serve().fetch(), DistributionCode::DigestMismatch);
}

#[test]
fn a_referrer_of_another_image_is_skipped() {
    let mut content = Content::default();
    let mut layer = content.blob(b"{}");
    layer["mediaType"] = json!(BUNDLE_V03);
    let other = format!("sha256:{}", "2".repeat(64));
    let manifest = referrer_manifest(BUNDLE_V03, &[layer.clone()], &other);
    let descriptor = content.referrer(&manifest, BUNDLE_V03);
    content.referrers_api(vec![descriptor]);
    let skipped_one = skipped(content.serve().fetch(), DistributionCode::MalformedImage);
    assert!(
        skipped_one.detail.contains("`subject`"),
        "{}",
        skipped_one.detail
    );
    // No subject at all.
    let mut content = Content::default();
    let mut manifest = referrer_manifest(BUNDLE_V03, &[layer], &pinned());
    manifest.as_object_mut().unwrap().remove("subject");
    let descriptor = content.referrer(&manifest, BUNDLE_V03);
    content.referrers_api(vec![descriptor]);
    skipped(content.serve().fetch(), DistributionCode::MalformedImage);
}

#[test]
fn a_bundle_referrer_not_of_one_bundle_layer_is_skipped() {
    let mut content = Content::default();
    let mut bundle = content.blob(b"{}");
    bundle["mediaType"] = json!(BUNDLE_V03);
    let mut tar = content.blob(b"tar");
    tar["mediaType"] = json!("application/vnd.oci.image.layer.v1.tar+gzip");
    for layers in [vec![], vec![bundle.clone(), bundle], vec![tar]] {
        let manifest = referrer_manifest(BUNDLE_V03, &layers, &pinned());
        let descriptor = content.referrer(&manifest, BUNDLE_V03);
        content.referrers_api(vec![descriptor]);
        let server = Server::routes(content.routes.clone());
        skipped(server.fetch(), DistributionCode::MalformedImage);
    }
}

#[test]
fn a_bundle_that_is_not_utf8_is_skipped() {
    let mut content = Content::default();
    let descriptor = content.bundle_referrer(BUNDLE_V03, &[0xc3, 0x28]);
    content.referrers_api(vec![descriptor]);
    skipped(content.serve().fetch(), DistributionCode::MalformedImage);
}

#[test]
fn a_dangling_referrer_is_skipped_beside_a_valid_one_and_said() {
    // Listed by the tag index: one referrer whose manifest is gone, one whose bundle is gone,
    // and one that reads.
    let mut content = Content::default();
    let gone_manifest = content.bundle_referrer(BUNDLE_V03, b"{\"gone\":\"manifest\"}");
    let gone_path = v2(&format!(
        "manifests/{}",
        gone_manifest["digest"].as_str().unwrap()
    ));
    content.routes.remove(&gone_path);
    let gone_bundle = content.bundle_referrer(BUNDLE_V03, b"{\"gone\":\"bundle\"}");
    content
        .routes
        .remove(&blob_path(&digest(b"{\"gone\":\"bundle\"}")));
    let good = content.bundle_referrer(BUNDLE_V03, b"{\"good\":1}");
    content.referrers_tag(vec![gone_manifest.clone(), gone_bundle.clone(), good]);
    let material = content.serve().fetch().unwrap();
    assert_eq!(material.bundles.len(), 1);
    assert_eq!(material.bundles[0].json, "{\"good\":1}");
    let found: Vec<&str> = material
        .skipped
        .iter()
        .map(|s| s.found_at.as_str())
        .collect();
    let listed = |d: &Value| {
        format!(
            "referrer {} (listed by the tag `sha256-{PINNED_HEX}`)",
            d["digest"].as_str().unwrap()
        )
    };
    assert_eq!(found, [listed(&gone_manifest), listed(&gone_bundle)]);
    for skipped in &material.skipped {
        assert!(
            skipped.detail.contains("HTTP 404") && skipped.detail.ends_with("(image_not_found)"),
            "{}",
            skipped.detail
        );
        // Said once, without the image every message of the fetch names.
        assert!(
            !skipped.detail.contains("signature material of"),
            "{}",
            skipped.detail
        );
    }
}

#[test]
fn a_flood_of_unreadable_referrers_still_ends_the_fetch() {
    let mut content = Content::default();
    let descriptors: Vec<Value> = (0..=MAX_BUNDLE_REFERRERS)
        .map(|n| {
            let d = content.bundle_referrer(BUNDLE_V03, format!("{{\"n\":{n}}}").as_bytes());
            content
                .routes
                .remove(&v2(&format!("manifests/{}", d["digest"].as_str().unwrap())));
            d
        })
        .collect();
    content.referrers_api(descriptors);
    let server = content.serve();
    let message = refused(server.fetch(), DistributionCode::ImageTooLarge);
    assert!(
        message.contains(&format!("more than {MAX_BUNDLE_REFERRERS}")),
        "{message}"
    );
    let fetched = server
        .seen()
        .iter()
        .filter(|s| s.path.starts_with(&v2("manifests/sha256:")))
        .count();
    assert_eq!(fetched, MAX_BUNDLE_REFERRERS);
}

#[test]
fn a_registry_failing_or_refusing_a_referrer_still_fails_the_fetch() {
    for (status, code) in [
        (401, DistributionCode::RegistryDenied),
        (503, DistributionCode::RegistryUnavailable),
        (418, DistributionCode::RegistryRefused),
    ] {
        let mut content = Content::default();
        let descriptor = content.bundle_referrer(BUNDLE_V03, b"{}");
        content.routes.insert(
            v2(&format!(
                "manifests/{}",
                descriptor["digest"].as_str().unwrap()
            )),
            Reply::bytes(status, "no"),
        );
        content.referrers_api(vec![descriptor]);
        refused(content.serve().fetch(), code);
    }
}

#[test]
fn an_answer_that_never_ends_is_the_pull_deadline() {
    let mut content = Content::default();
    content.routes.insert(
        sig_path(),
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Silence,
        },
    );
    let server = content.serve();
    let error = server.fetch_within(Duration::from_millis(300)).unwrap_err();
    assert_eq!(
        error.code,
        DistributionCode::PullDeadline,
        "{}",
        error.message
    );
    assert!(error.message.contains("deadline"), "{}", error.message);
}

#[test]
fn refusals_and_failures_of_the_registry_are_as_for_layers() {
    for (status, code) in [
        (401, DistributionCode::RegistryDenied),
        (403, DistributionCode::RegistryDenied),
        (500, DistributionCode::RegistryUnavailable),
        (503, DistributionCode::RegistryUnavailable),
        (418, DistributionCode::RegistryRefused),
    ] {
        for path in [sig_path(), referrers_path(), tag_index_path()] {
            let mut content = Content::default();
            content
                .routes
                .insert(path.clone(), Reply::bytes(status, "no"));
            let result = content.serve().fetch();
            let error = result.unwrap_err();
            assert_eq!(
                error.code, code,
                "HTTP {status} for {path}: {}",
                error.message
            );
        }
    }
    // A blob the manifest names but the registry does not have: as a missing layer.
    let mut content = Content::default();
    let payload = simple_signing_payload();
    content.sig_manifest(&[(SIMPLE_SIGNING, &payload, json!({}))]);
    content.routes.remove(&blob_path(&digest(&payload)));
    refused(content.serve().fetch(), DistributionCode::ImageNotFound);
}

#[test]
fn the_token_goes_only_to_the_registry_not_where_it_redirects() {
    // The registry asks for a bearer token (anonymous: the realm hands one out), and redirects
    // the payload's blob to another origin, as registries redirect blobs to storage.
    let storage = Arc::new(Mutex::new(None::<Server>));
    let mut content = Content::default();
    let payload = simple_signing_payload();
    content.sig_manifest(&[(SIMPLE_SIGNING, &payload, json!({}))]);
    let blob = blob_path(&digest(&payload));
    let storage_server = Server::routes(HashMap::from([(
        "/storage/payload".to_owned(),
        Reply::bytes(200, payload.clone()),
    )]));
    let storage_port = storage_server.port;
    *storage.lock().unwrap() = Some(storage_server);
    let routes = content.routes;
    let registry = Server::start(Arc::new(move |seen: &Seen| {
        if seen.path.starts_with("/token") {
            return Reply::json(&json!({"token": "registry-token"}));
        }
        if seen.headers.get("authorization").map(String::as_str) != Some("Bearer registry-token") {
            return Reply::bytes(401, "").header(
                "WWW-Authenticate",
                &format!(
                    "Bearer realm=\"http://{}/token\",service=\"test\"",
                    seen.headers["host"]
                ),
            );
        }
        if seen.path == blob {
            return Reply::bytes(307, "").header(
                "Location",
                &format!("http://127.0.0.1:{storage_port}/storage/payload"),
            );
        }
        routes
            .get(&seen.path)
            .cloned()
            .unwrap_or_else(Reply::not_found)
    }));
    let material = registry.fetch().unwrap();
    assert_eq!(material.cosign.len(), 1);
    assert_eq!(material.cosign[0].payload.as_bytes(), payload.as_slice());
    let storage = storage.lock().unwrap();
    let storage = storage.as_ref().unwrap();
    let at_storage = storage.seen();
    assert_eq!(at_storage.len(), 1);
    assert!(
        !at_storage[0].headers.contains_key("authorization"),
        "{at_storage:?}"
    );
    // The registry itself got the token on the requests after the challenge.
    assert!(registry.seen().iter().any(
        |s| s.headers.get("authorization").map(String::as_str) == Some("Bearer registry-token")
    ));
}

#[test]
fn a_digest_that_is_not_sha256_is_refused_before_any_request() {
    let server = Content::default().serve();
    let mut reference = server.reference();
    reference.digest = "sha256:../../x".to_owned();
    let error = fetch(&MaterialRequest {
        reference: &reference,
        plain_http: true,
        deadline: Duration::from_secs(60),
    })
    .unwrap_err();
    assert_eq!(error.code, DistributionCode::MalformedImage);
    assert!(server.seen().is_empty());
}

// ---- Debian's `docker-registry` ------------------------------------------------------------

/// Debian's `docker-registry` (the CNCF distribution registry 2.8) on a free loopback port, as
/// `tests/it/push.rs` starts it; `None` (the test skips, saying so) when it is not installed
/// (`scripts/test` installs it).
struct DistributionRegistry {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl DistributionRegistry {
    fn start() -> Option<DistributionRegistry> {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n  secret: test\n",
            dir.path().join("data").display()
        );
        let path = dir.path().join("config.yml");
        fs_err::write(&path, config).unwrap();
        let child = match std::process::Command::new("docker-registry")
            .arg("serve")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                // The skip is said on the test's stderr (cargo test shows it).
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED: docker-registry is not installed ({e}); scripts/test installs it"
                );
                return None;
            }
        };
        let mut registry = DistributionRegistry {
            child,
            port,
            _dir: dir,
        };
        // Ready when it listens; a registry that exited instead (a bad configuration, the port
        // taken) fails the test with its status, whenever that happens.
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = registry.child.try_wait().unwrap() {
                panic!("docker-registry exited before it listened: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(registry)
    }

    /// One HTTP/1.1 request; the status, the headers (lowercased names) and the body.
    fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> (u16, HashMap<String, String>, Vec<u8>) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(content_type) = content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("an HTTP answer");
        let head = String::from_utf8_lossy(&answer[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        (status, headers, answer[split + 4..].to_vec())
    }

    /// Uploads `bytes` as a blob (a monolithic upload); its descriptor.
    fn blob(&self, bytes: &[u8]) -> Value {
        let (status, headers, _) = self.request("POST", &v2("blobs/uploads/"), None, b"");
        assert_eq!(status, 202, "the upload was not started");
        let location = &headers["location"];
        let location = location
            .strip_prefix(&format!("http://127.0.0.1:{}", self.port))
            .unwrap_or(location);
        let separator = if location.contains('?') { '&' } else { '?' };
        let d = digest(bytes);
        let (status, _, body) = self.request(
            "PUT",
            &format!("{location}{separator}digest={d}"),
            Some("application/octet-stream"),
            bytes,
        );
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        json!({"digest": d, "size": bytes.len()})
    }

    /// Puts `manifest` at `reference` (a tag or its digest); its descriptor.
    fn manifest(&self, reference: &str, manifest: &Value) -> Value {
        let media_type = manifest["mediaType"].as_str().unwrap();
        let bytes = manifest.to_string().into_bytes();
        let (status, _, body) = self.request(
            "PUT",
            &v2(&format!("manifests/{reference}")),
            Some(media_type),
            &bytes,
        );
        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
        json!({"mediaType": media_type, "digest": digest(&bytes), "size": bytes.len()})
    }
}

impl Drop for DistributionRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn docker_registry_serves_both_layouts_through_the_referrers_tag_schema() {
    let Some(registry) = DistributionRegistry::start() else {
        return;
    };
    // The image: a config and one layer.
    let config = registry.blob(b"{\"architecture\":\"amd64\",\"os\":\"linux\"}");
    let mut layer = registry.blob(b"not really a tar");
    layer["mediaType"] = json!("application/vnd.oci.image.layer.v1.tar+gzip");
    let mut config_descriptor = config.clone();
    config_descriptor["mediaType"] = json!("application/vnd.oci.image.config.v1+json");
    let image = registry.manifest(
        "v1",
        &json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
                "config": config_descriptor, "layers": [layer]}),
    );
    let pinned = image["digest"].as_str().unwrap().to_owned();
    let hex = &pinned["sha256:".len()..];

    // cosign ≤ v2: the `.sig` manifest, one simple-signing layer with its signature annotation.
    let payload = format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"127.0.0.1/acme/skills"}},"image":{{"docker-manifest-digest":"{pinned}"}},"type":"cosign container image signature"}},"optional":null}}"#
    );
    let mut signature_layer = registry.blob(payload.as_bytes());
    signature_layer["mediaType"] = json!(SIMPLE_SIGNING);
    signature_layer["annotations"] = json!({"dev.cosignproject.cosign/signature": "MEUCIQ=="});
    let mut empty = registry.blob(b"{}");
    empty["mediaType"] = json!("application/vnd.oci.image.config.v1+json");
    registry.manifest(
        &format!("sha256-{hex}.sig"),
        &json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": empty,
                "layers": [signature_layer]}),
    );

    // cosign v3: a bundle referrer, listed by the `sha256-<hex>` tag index (this registry has no
    // referrers API).
    let bundle = br#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}"#;
    let mut bundle_layer = registry.blob(bundle);
    bundle_layer["mediaType"] = json!(BUNDLE_V03);
    let mut empty_config = registry.blob(b"{}");
    empty_config["mediaType"] = json!("application/vnd.oci.empty.v1+json");
    let referrer = json!({
        "schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "artifactType": BUNDLE_V03,
        "config": empty_config, "layers": [bundle_layer],
        "subject": image,
        "annotations": {"dev.sigstore.bundle.predicateType": COSIGN_SIGN_PREDICATE},
    });
    let referrer_digest = digest(referrer.to_string().as_bytes());
    let mut referrer_descriptor = registry.manifest(&referrer_digest, &referrer);
    referrer_descriptor["artifactType"] = json!(BUNDLE_V03);
    registry.manifest(
        &format!("sha256-{hex}"),
        &json!({"schemaVersion": 2, "mediaType": MEDIA_INDEX,
                "manifests": [referrer_descriptor]}),
    );

    // What it answers for the referrers API: 404, so the tag schema is the way.
    let (status, _, _) = registry.request("GET", &v2(&format!("referrers/{pinned}")), None, b"");
    assert_eq!(status, 404, "docker-registry now serves the referrers API");

    let reference = ImageReference {
        registry: format!("127.0.0.1:{}", registry.port),
        repository: REPOSITORY.to_owned(),
        digest: pinned.clone(),
    };
    let material = fetch(&MaterialRequest {
        reference: &reference,
        plain_http: true,
        deadline: Duration::from_secs(60),
    })
    .unwrap();
    assert_eq!(material.cosign.len(), 1);
    assert_eq!(material.cosign[0].payload, payload);
    assert_eq!(
        material.cosign[0].annotations["dev.cosignproject.cosign/signature"],
        "MEUCIQ=="
    );
    assert_eq!(
        material.cosign[0].found_at,
        format!("`sha256-{hex}.sig` layer 0")
    );
    assert_eq!(material.bundles.len(), 1);
    assert_eq!(material.bundles[0].json.as_bytes(), bundle.as_slice());
    assert_eq!(material.bundles[0].media_type, BUNDLE_V03);
    assert_eq!(
        material.bundles[0].found_at,
        format!("referrer {referrer_digest} (listed by the tag `sha256-{hex}`)")
    );

    // An image without signatures in the same registry: empty material, not an error.
    let unsigned = registry.manifest(
        "v2",
        &json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
                "config": config_descriptor, "layers": [], "annotations": {"v": "2"}}),
    );
    let reference = ImageReference {
        digest: unsigned["digest"].as_str().unwrap().to_owned(),
        ..reference
    };
    let material = fetch(&MaterialRequest {
        reference: &reference,
        plain_http: true,
        deadline: Duration::from_secs(60),
    })
    .unwrap();
    assert_eq!(material, SignatureMaterial::default());
}

#[test]
fn a_referrers_index_that_is_not_an_image_index_is_refused() {
    let manifest = json!({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "manifests": []});
    let docker_list = json!({"schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.list.v2+json", "manifests": []});
    for body in [
        manifest,
        docker_list,
        json!({"schemaVersion": 2}),
        json!("x"),
    ] {
        // From the referrers API …
        let mut content = Content::default();
        content.routes.insert(
            referrers_path(),
            Reply::json(&body).header("Content-Type", MEDIA_INDEX),
        );
        refused(content.serve().fetch(), DistributionCode::MalformedImage);
        // … and from the tag schema.
        let mut content = Content::default();
        content.routes.insert(tag_index_path(), Reply::json(&body));
        refused(content.serve().fetch(), DistributionCode::MalformedImage);
    }
}

#[test]
fn a_docker_v2_signature_manifest_is_read() {
    // What older cosign releases (go-containerregistry's default) wrote.
    let mut content = Content::default();
    let payload = simple_signing_payload();
    content.sig_manifest(&[(SIMPLE_SIGNING, &payload, json!({}))]);
    let Some(Reply {
        body: Body::Bytes(bytes),
        ..
    }) = content.routes.get(&sig_path()).cloned()
    else {
        unreachable!()
    };
    let mut manifest: Value = serde_json::from_slice(&bytes).unwrap();
    manifest["mediaType"] = json!(MEDIA_DOCKER_MANIFEST);
    content.routes.insert(sig_path(), Reply::json(&manifest));
    assert_eq!(content.serve().fetch().unwrap().cosign.len(), 1);
}

#[test]
fn the_most_bytes_one_fetch_reads_is_the_documented_figure() {
    assert_eq!(MAX_FETCHED_BYTES, 18_350_080);
}

#[test]
fn what_the_registry_names_is_escaped_in_messages() {
    let hostile = "application/x\u{1b}[2J\u{7}\nforged: line";
    let mut content = Content::default();
    content.routes.insert(
        sig_path(),
        Reply::json(&json!({"schemaVersion": 2, "mediaType": hostile, "layers": []})),
    );
    let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
    assert!(!message.contains(['\u{1b}', '\u{7}', '\n']), "{message:?}");
    // A bundle layer's media type, a referrer's subject.
    let mut content = Content::default();
    let mut layer = content.blob(b"{}");
    layer["mediaType"] = json!(hostile);
    let manifest = referrer_manifest(BUNDLE_V03, &[layer], &pinned());
    let descriptor = content.referrer(&manifest, BUNDLE_V03);
    content.referrers_api(vec![descriptor]);
    let message = skipped(content.serve().fetch(), DistributionCode::MalformedImage).detail;
    assert!(!message.contains(['\u{1b}', '\u{7}', '\n']), "{message:?}");
    let mut content = Content::default();
    let manifest = referrer_manifest(BUNDLE_V03, &[], hostile);
    let descriptor = content.referrer(&manifest, BUNDLE_V03);
    content.referrers_api(vec![descriptor]);
    let message = skipped(content.serve().fetch(), DistributionCode::MalformedImage).detail;
    assert!(!message.contains(['\u{1b}', '\u{7}', '\n']), "{message:?}");
}

#[test]
fn deeply_nested_json_within_the_bound_is_refused_not_overflowed() {
    let depth = 100_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let mut content = Content::default();
    content
        .routes
        .insert(sig_path(), Reply::bytes(200, nested.clone()));
    refused(content.serve().fetch(), DistributionCode::MalformedImage);
    let mut content = Content::default();
    content.routes.insert(
        referrers_path(),
        Reply::bytes(200, nested).header("Content-Type", MEDIA_INDEX),
    );
    refused(content.serve().fetch(), DistributionCode::MalformedImage);
}

#[test]
fn descriptors_without_a_sha256_digest_or_a_size_are_refused() {
    let payload = simple_signing_payload();
    let good = digest(&payload);
    for (digest_value, size) in [
        (json!(good.to_uppercase()), json!(payload.len())),
        (
            json!(format!("sha512:{}", "a".repeat(128))),
            json!(payload.len()),
        ),
        (json!(format!("{good}/../x")), json!(payload.len())),
        (json!(null), json!(payload.len())),
        (json!(good), json!(-1)),
        (json!(good), json!(1.5)),
        (json!(good), json!("12")),
        (json!(good), json!(null)),
    ] {
        let mut content = Content::default();
        content.blob(&payload);
        sig_manifest_with_layer(
            &mut content,
            json!({"mediaType": SIMPLE_SIGNING, "digest": digest_value, "size": size}),
        );
        let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
        assert!(message.contains("layer 0"), "{message}");
    }
    // The largest size JSON can say is over the bound, not an overflow.
    let mut content = Content::default();
    sig_manifest_with_layer(
        &mut content,
        json!({"mediaType": SIMPLE_SIGNING, "digest": good, "size": u64::MAX}),
    );
    refused(content.serve().fetch(), DistributionCode::ImageTooLarge);
    // In the referrers index too.
    let mut content = Content::default();
    content.referrers_api(vec![
        json!({"mediaType": MEDIA_MANIFEST, "digest": "sha256:x",
                                      "size": 10, "artifactType": BUNDLE_V03}),
    ]);
    refused(content.serve().fetch(), DistributionCode::MalformedImage);
}

#[test]
fn the_next_link_is_found_among_others() {
    let mut content = Content::default();
    let first = content.bundle_referrer(BUNDLE_V03, b"{\"page\":1}");
    let second = content.bundle_referrer(BUNDLE_V03, b"{\"page\":2}");
    content.routes.insert(
        referrers_path(),
        Reply::json(&index(vec![first]))
            .header("Content-Type", MEDIA_INDEX)
            .header(
                "Link",
                &format!(
                    "<{0}?prev>; rel=\"prev\", <{0}?p=2>; title=\"a, b\"; rel=\"next\"",
                    referrers_path()
                ),
            ),
    );
    content.routes.insert(
        format!("{}?p=2", referrers_path()),
        Reply::json(&index(vec![second]))
            .header("Content-Type", MEDIA_INDEX)
            .header("Link", &format!("<{}>; rel=\"prev\"", referrers_path())),
    );
    let server = content.serve();
    let material = server.fetch().unwrap();
    assert_eq!(material.bundles.len(), 2);
    assert!(!server.requested(&format!("{}?prev", referrers_path())));
}

#[test]
fn two_next_links_or_a_malformed_link_are_refused() {
    for link in [
        format!(
            "<{0}?a>; rel=\"next\", <{0}?b>; rel=\"next\"",
            referrers_path()
        ),
        format!("{}?a; rel=\"next\"", referrers_path()),
        format!("<{}?a>; rel", referrers_path()),
    ] {
        let mut content = Content::default();
        content.routes.insert(
            referrers_path(),
            Reply::json(&index(Vec::new()))
                .header("Content-Type", MEDIA_INDEX)
                .header("Link", &link),
        );
        let message = refused(content.serve().fetch(), DistributionCode::MalformedImage);
        assert!(message.contains("`Link`"), "{link}: {message}");
    }
}
