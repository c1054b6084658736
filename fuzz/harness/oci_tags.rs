//! OCI tags: a registry's answers to the `HEAD` and `GET` of a tag's manifest, as `outdated`
//! and `update` resolve a tag.

/// The statuses [`oci_tag`]'s registry answers with, picked by a byte: successes, the refusals
/// and failures a registry sends, and the two that say it does not answer `HEAD` (405, 501). No
/// 401 (its token exchange is not modelled) and no redirect.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
const TAG_STATUSES: [u16; 13] = [
    200, 203, 204, 400, 403, 404, 405, 406, 429, 500, 501, 502, 503,
];

/// One answer of [`TagRegistry`]: a status, a `Docker-Content-Digest` (if any) and a body.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
#[derive(Debug, Clone, Default)]
pub struct TagAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The `Docker-Content-Digest` header, if any.
    pub digest: Option<String>,
    /// The body (the manifest bytes; none is sent for a `HEAD` or a 204).
    pub body: Vec<u8>,
}

/// The `HEAD` and `GET` answers of [`oci_tag`] from `data`: four bytes (the `HEAD`'s status and
/// digest header, the `GET`'s status and digest header), then the manifest bytes and a header
/// value, separated by `0xFF`. A digest-header byte picks none, the digest of the manifest bytes,
/// another well-formed digest, or the header value (printable ASCII without spaces kept).
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
pub fn oci_tag_answers(data: &[u8]) -> (TagAnswer, TagAnswer) {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let rest = data.get(4..).unwrap_or_default();
    let mut parts = rest.splitn(2, |&b| b == 0xFF);
    let body = parts.next().unwrap_or_default().to_vec();
    let value: String = parts
        .next()
        .unwrap_or_default()
        .iter()
        .filter(|b| b.is_ascii_graphic())
        .map(|&b| char::from(b))
        .collect();
    let digest = |pick: u8| match pick % 4 {
        0 => None,
        1 => Some(crate::source::oci::image::sha256(&body)),
        2 => Some(format!("sha256:{}", "0".repeat(64))),
        _ => Some(value.clone()),
    };
    let status = |pick: u8| TAG_STATUSES[usize::from(pick) % TAG_STATUSES.len()];
    let head = TagAnswer {
        status: status(byte(0)),
        digest: digest(byte(1)),
        body: body.clone(),
    };
    let get = TagAnswer {
        status: status(byte(2)),
        digest: digest(byte(3)),
        body,
    };
    (head, get)
}

/// What resolving the tag must give, from the rules `resolve_tag` documents (written out
/// again): the digest, or the code of the refusal; and whether a `GET` is sent.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
fn reference_tag(head: &TagAnswer, get: &TagAnswer) -> (Result<String, &'static str>, bool) {
    use crate::source::oci::pull::MAX_MANIFEST_BYTES;

    let failed = |status: u16| match status {
        403 => "registry_denied",
        404 => "tag_not_found",
        500.. => "registry_unavailable",
        _ => "registry_refused",
    };
    let well_formed = |d: &str| {
        d.strip_prefix("sha256:").is_some_and(|hex| {
            hex.len() == 64
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    };
    // A 204 has no body, whatever it says.
    fn body(a: &TagAnswer) -> &[u8] {
        if a.status == 204 { &[] } else { &a.body }
    }
    if !matches!(head.status, 405 | 501) {
        if !(200..300).contains(&head.status) {
            return (Err(failed(head.status)), false);
        }
        if body(head).len() as u64 > MAX_MANIFEST_BYTES {
            return (Err("image_too_large"), false);
        }
        match &head.digest {
            Some(d) if well_formed(d) => return (Ok(d.clone()), false),
            Some(_) => return (Err("malformed_image"), false),
            None => {}
        }
    }
    if !(200..300).contains(&get.status) {
        return (Err(failed(get.status)), true);
    }
    let digest = crate::source::oci::image::sha256(body(get));
    let verdict = match &get.digest {
        Some(d) if !well_formed(d) => Err("malformed_image"),
        Some(d) if *d != digest => Err("digest_mismatch"),
        _ => Ok(digest),
    };
    (verdict, true)
}

/// A registry on 127.0.0.1 for [`oci_tag`]: answers `HEAD` and `GET` of
/// `/v2/fuzz/manifests/stable` with the answers set for the run, and records each method.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
struct TagRegistry {
    address: std::net::SocketAddr,
    /// The answers of this run, and the methods asked so far.
    state: std::sync::Arc<std::sync::Mutex<(TagAnswer, TagAnswer, Vec<String>)>>,
}

#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
impl TagRegistry {
    fn get() -> &'static TagRegistry {
        static REGISTRY: std::sync::OnceLock<TagRegistry> = std::sync::OnceLock::new();
        REGISTRY.get_or_init(|| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
            let address = listener.local_addr().expect("its address");
            let state = std::sync::Arc::default();
            let served = std::sync::Arc::clone(&state);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let _ = TagRegistry::answer(stream, &served);
                }
            });
            TagRegistry { address, state }
        })
    }

    fn answer(
        mut stream: std::net::TcpStream,
        state: &std::sync::Mutex<(TagAnswer, TagAnswer, Vec<String>)>,
    ) -> std::io::Result<()> {
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
        let line =
            String::from_utf8_lossy(request.split(|&b| b == b'\r').next().unwrap_or_default())
                .into_owned();
        let mut words = line.split(' ');
        let method = words.next().unwrap_or_default().to_owned();
        let path = words.next().unwrap_or_default();
        let answer = {
            let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
            state.2.push(method.clone());
            match (method.as_str(), path) {
                ("HEAD", "/v2/fuzz/manifests/stable") => Some(state.0.clone()),
                ("GET", "/v2/fuzz/manifests/stable") => Some(state.1.clone()),
                _ => None,
            }
        };
        let answer = answer.unwrap_or(TagAnswer {
            status: 404,
            ..TagAnswer::default()
        });
        let body = if answer.status == 204 {
            &[][..]
        } else {
            &answer.body[..]
        };
        let mut head = format!(
            "HTTP/1.1 {} Fuzz\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nConnection: close\r\n",
            answer.status
        );
        if answer.status != 204 {
            head += &format!("Content-Length: {}\r\n", body.len());
        }
        if let Some(digest) = &answer.digest {
            head += &format!("Docker-Content-Digest: {digest}\r\n");
        }
        head += "\r\n";
        stream.write_all(head.as_bytes())?;
        if method != "HEAD" {
            stream.write_all(body)?;
        }
        stream.flush()
    }
}

/// Fuzz body for `oci_tag`: a registry's answers to the `HEAD` and the `GET` of a tag's manifest
/// ([`oci_tag_answers`] reads them from `data`), resolved as `outdated` and `update` resolve a
/// tag ([`crate::source::oci::pull::resolve_tag`]). The digest, or the refusal's code, is what the
/// documented rules give ([`reference_tag`], written out again): a `HEAD` naming a well-formed
/// digest is the answer and nothing else is asked; a `HEAD` without one, or answered 405 or 501,
/// is followed by one `GET` whose bytes give the digest, equal to the one it names if any; any
/// other failed `HEAD` is final, with no `GET`. A refusal always says why.
#[cfg(all(feature = "oci", any(feature = "git", fuzzing)))]
pub fn oci_tag(data: &[u8]) {
    let (head, get) = oci_tag_answers(data);
    let registry = TagRegistry::get();
    *registry.state.lock().unwrap_or_else(|e| e.into_inner()) =
        (head.clone(), get.clone(), Vec::new());
    let got = crate::source::oci::pull::resolve_tag(&crate::source::oci::pull::TagRequest {
        registry: &registry.address.to_string(),
        repository: "fuzz",
        tag: "stable",
        plain_http: true,
        deadline: std::time::Duration::from_secs(60),
    });
    let (want, asks_get) = reference_tag(&head, &get);
    match (&got, &want) {
        (Ok(got), Ok(want)) => assert_eq!(got, want),
        (Err(e), Err(code)) => {
            assert_eq!(e.code.as_str(), *code, "{e}");
            assert!(!e.message.is_empty());
        }
        _ => panic!("resolved {got:?}, the rules give {want:?} for {head:?} then {get:?}"),
    }
    let methods = registry
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .2
        .clone();
    let want_methods: &[&str] = if asks_get {
        &["HEAD", "GET"]
    } else {
        &["HEAD"]
    };
    assert_eq!(methods, want_methods, "for {head:?} then {get:?}");
}
