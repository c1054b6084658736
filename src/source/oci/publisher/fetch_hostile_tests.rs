//! Hostile answers of a scripted registry to the fetch of signature material: every bound
//! checked before the bytes it bounds, every digest, the referrers that are skipped and said,
//! and the deadline.

use super::*;

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
