//! The fetch of signature material against Debian's `docker-registry` on 127.0.0.1.

use super::*;

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
