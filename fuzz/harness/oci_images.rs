//! OCI images: an image layer's tar read by the strict reader, and a manifest with its blobs
//! pulled from a registry on 127.0.0.1.

use serde_json::Value;

use crate::format::bundle_path::BundlePath;

/// An uncompressed OCI layer tar from a hostile registry, read by the strict reader: it never
/// panics; a refusal carries one of the layer codes; what it accepts holds only the wanted
/// bundle, whose file set obeys the path grammar, and the same tar reads the same way twice.
pub fn oci_layer(data: &[u8]) {
    use crate::source::oci::code::DistributionCode;
    use crate::source::oci::unpack::read_tar;

    let wanted: std::collections::BTreeSet<String> = ["pdf".to_owned()].into();
    let first = read_tar(data, &wanted, crate::format::limits::CHAMVI);
    match &first {
        Ok(bundles) => {
            assert!(bundles.keys().all(|name| name == "pdf"));
            for (files, _problems) in bundles.values() {
                for (path, _) in files.iter() {
                    assert!(BundlePath::parse(path.as_str()).is_ok());
                }
            }
        }
        Err(e) => assert!(matches!(
            e.code,
            DistributionCode::MalformedLayer
                | DistributionCode::LayerTooLarge
                | DistributionCode::LinkInLayer
                | DistributionCode::SpecialFileInLayer
                | DistributionCode::UnsafePathInLayer
                | DistributionCode::DuplicateInLayer
        )),
    }
    let second = read_tar(data, &wanted, crate::format::limits::CHAMVI);
    assert_eq!(first.is_ok(), second.is_ok());
}

/// The blobs a [`FakeRegistry`] serves, by digest (`sha256:<hex>`), the manifest among them.
type Blobs = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>>;

/// A registry on 127.0.0.1 for [`oci_pull`]: answers `GET /v2/fuzz/manifests/<digest>` and
/// `GET /v2/fuzz/blobs/<digest>` with the bytes of that digest (404 for any other), one request
/// per connection.
#[cfg(feature = "oci")]
struct FakeRegistry {
    address: std::net::SocketAddr,
    blobs: Blobs,
}

#[cfg(feature = "oci")]
impl FakeRegistry {
    fn get() -> &'static FakeRegistry {
        static REGISTRY: std::sync::OnceLock<FakeRegistry> = std::sync::OnceLock::new();
        REGISTRY.get_or_init(|| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
            let address = listener.local_addr().expect("its address");
            let blobs = Blobs::default();
            let served = Blobs::clone(&blobs);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = FakeRegistry::answer(stream, &served);
                }
            });
            FakeRegistry { address, blobs }
        })
    }

    fn answer(mut stream: std::net::TcpStream, blobs: &Blobs) -> std::io::Result<()> {
        use std::io::{Read as _, Write as _};
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 65_536 {
            let n = stream.read(&mut buffer)?;
            if n == 0 {
                return Ok(());
            }
            request.extend_from_slice(&buffer[..n]);
        }
        let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
        let path = String::from_utf8_lossy(line)
            .split(' ')
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let digest = path
            .strip_prefix("/v2/fuzz/manifests/")
            .or_else(|| path.strip_prefix("/v2/fuzz/blobs/"));
        let body = digest.and_then(|d| blobs.lock().ok()?.get(d).cloned());
        let head = match &body {
            Some(body) => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ),
            None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                .to_owned(),
        };
        stream.write_all(head.as_bytes())?;
        stream.write_all(body.as_deref().unwrap_or_default())?;
        stream.flush()
    }
}

/// The manifest and blobs of [`oci_pull`]: the manifest text, then each blob, separated by the
/// byte `0xFF`. In the manifest, `@D0`…`@D9` stand for `sha256:<hex>` of blob 0…9 and `@S0`…`@S9`
/// for its size, so a mutated manifest can still name the blobs it is served with.
pub fn oci_manifest_and_blobs(data: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut parts = data.split(|&b| b == 0xFF);
    let template = parts.next().unwrap_or_default();
    let blobs: Vec<Vec<u8>> = parts.map(<[u8]>::to_vec).collect();
    let mut manifest = Vec::with_capacity(template.len());
    let mut i = 0;
    while i < template.len() {
        let placeholder = template.get(i..i + 3).and_then(|p| {
            let index = usize::from(p[2].checked_sub(b'0')?);
            (p[0] == b'@' && index <= 9 && matches!(p[1], b'D' | b'S')).then_some((p[1], index))
        });
        match placeholder {
            Some((kind, index)) => {
                let blob = blobs.get(index).map_or(&[][..], Vec::as_slice);
                let text = if kind == b'D' {
                    crate::source::oci::image::sha256(blob)
                } else {
                    blob.len().to_string()
                };
                manifest.extend_from_slice(text.as_bytes());
                i += 3;
            }
            None => {
                manifest.push(template[i]);
                i += 1;
            }
        }
    }
    (manifest, blobs)
}

/// What a pull of `manifest` must give, judged from the rules `pull` documents (written out
/// again): the digests of the layers pulled, in order, or the code of the first refusal.
#[cfg(feature = "oci")]
fn reference_pull(
    manifest: &[u8],
    served: &std::collections::HashMap<String, Vec<u8>>,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<String>, &'static str> {
    use crate::source::oci::pull::{MAX_LAYER_BYTES, MAX_LAYERS, MAX_MANIFEST_BYTES};

    if manifest.len() as u64 > MAX_MANIFEST_BYTES {
        return Err("image_too_large");
    }
    let manifest: Value = serde_json::from_slice(manifest).map_err(|_| "malformed_image")?;
    let media_type = manifest
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or(crate::source::oci::MEDIA_MANIFEST);
    let index = [
        crate::source::oci::MEDIA_INDEX,
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ];
    if index.contains(&media_type) || manifest.get("manifests").is_some() {
        return Err("image_index");
    }
    if ![
        crate::source::oci::MEDIA_MANIFEST,
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
    .contains(&media_type)
    {
        return Err("malformed_image");
    }
    let layers = manifest
        .get("layers")
        .and_then(Value::as_array)
        .ok_or("malformed_image")?;
    if layers.len() > MAX_LAYERS {
        return Err("image_too_large");
    }
    let mut pulled = Vec::new();
    for layer in layers {
        let kind = layer.get("mediaType").and_then(Value::as_str);
        if !matches!(
            kind,
            Some(
                crate::source::oci::MEDIA_LAYER_TAR_GZIP
                    | "application/vnd.docker.image.rootfs.diff.tar.gzip"
            )
        ) {
            return Err("malformed_image");
        }
        let digest = layer
            .get("digest")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let hex = digest.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64
            || !hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err("malformed_image");
        }
        let size = layer
            .get("size")
            .and_then(Value::as_u64)
            .ok_or("malformed_image")?;
        if size > MAX_LAYER_BYTES {
            return Err("image_too_large");
        }
        let bundle = layer
            .get("annotations")
            .and_then(|a| a.get(crate::source::oci::ANNOTATION_BUNDLE_NAME))
            .and_then(Value::as_str);
        if bundle.is_some_and(|b| !wanted(b)) {
            continue;
        }
        pulled.push((digest.to_owned(), size));
    }
    // Every descriptor is checked before any layer is fetched; then the layers in order.
    for (digest, size) in &pulled {
        let bytes = served.get(digest).ok_or("image_not_found")?;
        if bytes.len() as u64 > *size {
            return Err("image_too_large");
        }
        if bytes.len() as u64 != *size {
            return Err("digest_mismatch");
        }
    }
    Ok(pulled.into_iter().map(|(digest, _)| digest).collect())
}

/// An image manifest and its blobs (see [`oci_manifest_and_blobs`]), served by a registry on
/// 127.0.0.1 and pulled by digest with the pull of `oci:` sources (`prepare::oci::pull`, over
/// reqwest); then each pulled layer through the strict reader (`unpack`: gzip, then tar).
///
/// Invariants: the pull gives exactly what the documented rules give (the layers the manifest
/// lists and `wanted` keeps, in order, each of the declared size and digest; else the first
/// refusal's code: `malformed_image`, `image_index`, `image_too_large`, `image_not_found`,
/// `digest_mismatch`); a pulled layer's bytes are the registry's bytes of its digest; a layer is
/// refused only with the layer codes, and what it yields is the wanted bundle only.
///
/// The image config is not fuzzed: `pull` never reads it (the manifest's layer descriptors say
/// everything a pull uses).
#[cfg(feature = "oci")]
pub fn oci_pull(data: &[u8]) {
    use crate::source::oci::unpack::unpack;

    let (manifest, blobs) = oci_manifest_and_blobs(data);
    let registry = FakeRegistry::get();
    let digest = crate::source::oci::image::sha256(&manifest);
    let served: std::collections::HashMap<String, Vec<u8>> = blobs
        .iter()
        .map(|b| (crate::source::oci::image::sha256(b), b.clone()))
        .chain([(digest.clone(), manifest.clone())])
        .collect();
    *registry.blobs.lock().unwrap_or_else(|e| e.into_inner()) = served.clone();
    let reference = crate::descriptor::plan::ImageReference {
        registry: registry.address.to_string(),
        repository: "fuzz".to_owned(),
        digest,
    };
    let wanted = |name: &str| name != "unwanted";
    let want = reference_pull(&manifest, &served, &wanted);
    // The layers stream into files of a folder of their own; no pull bound (the rules above do
    // not model it) and a deadline that only stops a hung run.
    let into = tempfile::tempdir().expect("a folder for the layers");
    let got = crate::source::oci::pull::pull(&crate::source::oci::pull::PullRequest {
        reference: &reference,
        plain_http: true,
        wanted: &wanted,
        into: into.path(),
        max_bytes: u64::MAX,
        deadline: std::time::Duration::from_secs(60),
    });
    match (&got, &want) {
        (Ok(layers), Ok(digests)) => {
            let got: Vec<&str> = layers.iter().map(|l| l.digest.as_str()).collect();
            assert_eq!(&got, digests, "not the layers the manifest lists");
            for layer in layers {
                let bytes = fs_err::read(&layer.path).expect("the pulled layer's file");
                assert_eq!(Some(&bytes), served.get(&layer.digest));
            }
        }
        (Err(e), Err(code)) => {
            assert_eq!(e.code.as_str(), *code, "{e}");
            assert!(!e.message.is_empty());
        }
        _ => panic!(
            "pulled {:?}, the rules give {want:?}",
            got.as_ref().map(|l| l.len()).map_err(|e| e.to_string())
        ),
    }
    let wanted_bundles: std::collections::BTreeSet<String> = ["pdf".to_owned()].into();
    for layer in got.iter().flatten() {
        let file = fs_err::File::open(&layer.path).expect("the pulled layer's file");
        match unpack(file, &wanted_bundles, crate::format::limits::CHAMVI) {
            Ok(bundles) => {
                assert!(bundles.keys().all(|name| name == "pdf"));
                for (files, _) in bundles.values() {
                    for (path, _) in files.iter() {
                        assert!(BundlePath::parse(path.as_str()).is_ok());
                    }
                }
            }
            Err(e) => assert!(matches!(
                e.code.as_str(),
                "malformed_layer"
                    | "layer_too_large"
                    | "link_in_layer"
                    | "special_file_in_layer"
                    | "unsafe_path_in_layer"
                    | "duplicate_in_layer"
            )),
        }
    }
}
