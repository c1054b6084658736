//! Who published an image, end to end from the CLI against Debian's `docker-registry` on
//! loopback: images pushed with `skillfold push`, signed by an independent signer written here
//! from the cosign v2 format (the simple-signing payload, signed by `openssl`, attached at the
//! tag `sha256-<hex>.sig` over the registry's HTTP API with `curl`), and prepared from a
//! descriptor whose `verify` names the key. The signer is recorded, `verify` checks it again
//! offline, and every refusal leaves nothing published: unsigned, another key, a signature
//! copied from another image, a tampered payload; `check` names a bad key with its rule; and a
//! candidate image in `update` is judged as `prepare` judges its pin.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::oci_source::lab_pins;
use super::push::{Lab, Registry, push_to};
use super::support::bin::{assert_stderr_has, skillfold_with, stderr, stdout};

const MEDIA_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const MEDIA_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const MEDIA_BUNDLE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// A P-256 key pair made by `openssl` in `dir` as `NAME.pem` (private) and `NAME.pub` (SPKI);
/// returns the public key's path.
fn key_pair(dir: &Path, name: &str) -> std::path::PathBuf {
    key_pair_on(dir, name, "prime256v1")
}

/// [`key_pair`] on the named `curve` (`openssl ecparam -name`).
fn key_pair_on(dir: &Path, name: &str, curve: &str) -> std::path::PathBuf {
    let private = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub"));
    openssl(
        &["ecparam", "-name", curve, "-genkey", "-noout", "-out"],
        &private,
    );
    let made = Command::new("openssl")
        .args(["pkey", "-in"])
        .arg(&private)
        .arg("-pubout")
        .arg("-out")
        .arg(&public)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", stderr(&made));
    public
}

pub(super) fn openssl(args: &[&str], last: &Path) {
    let made = Command::new("openssl")
        .args(args)
        .arg(last)
        .output()
        .expect("openssl (scripts/test installs it)");
    assert!(made.status.success(), "{}", stderr(&made));
}

/// `sha256:` and the hex SHA-256 of the key's DER SubjectPublicKeyInfo, as `openssl` computes it.
pub(super) fn fingerprint(public: &Path) -> String {
    let der = Command::new("openssl")
        .args(["pkey", "-pubin", "-outform", "DER", "-in"])
        .arg(public)
        .output()
        .expect("openssl");
    assert!(der.status.success());
    format!("sha256:{}", super::support::world::sha256(&der.stdout))
}

/// The simple-signing payload cosign signs for `repository` (`REGISTRY/REPOSITORY`) at `digest`.
pub(super) fn payload(repository: &str, digest: &str) -> Vec<u8> {
    format!(
        r#"{{"critical":{{"identity":{{"docker-reference":"{repository}"}},"image":{{"docker-manifest-digest":"{digest}"}},"type":"cosign container image signature"}},"optional":null}}"#
    )
    .into_bytes()
}

/// The base64 ECDSA (SHA-256, DER) signature of `message` by the private key `NAME.pem`.
fn sign(dir: &Path, name: &str, message: &[u8]) -> String {
    sign_with(dir, name, message, "-sha256")
}

/// [`sign`] over the hash `hash` (`openssl dgst` option: `-sha256`, `-sha384`).
fn sign_with(dir: &Path, name: &str, message: &[u8], hash: &str) -> String {
    let input = dir.join("to-sign");
    fs_err::write(&input, message).expect("write");
    let made = Command::new("openssl")
        .args(["dgst", hash, "-sign"])
        .arg(dir.join(format!("{name}.pem")))
        .arg(&input)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", stderr(&made));
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(made.stdout)
}

/// The registry's HTTP API, driven with `curl`.
pub(super) struct Api<'a> {
    pub(super) registry: &'a Registry,
    pub(super) dir: &'a Path,
}

impl Api<'_> {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/v2/{path}", self.registry.port)
    }

    /// Uploads `bytes` as a blob of `repository` (a monolithic upload); returns its digest.
    pub(super) fn blob(&self, repository: &str, bytes: &[u8]) -> String {
        let digest = format!("sha256:{}", super::support::world::sha256(bytes));
        let file = self.dir.join("blob");
        fs_err::write(&file, bytes).expect("write");
        let started = Command::new("curl")
            .args(["-sS", "-f", "-i", "-X", "POST"])
            .arg(self.url(&format!("{repository}/blobs/uploads/")))
            .output()
            .expect("curl");
        assert!(started.status.success(), "{}", stderr(&started));
        let head = stdout(&started);
        let location = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("location")
                    .then(|| value.trim().to_owned())
            })
            .expect("an upload location");
        let location = if location.starts_with('/') {
            format!("http://127.0.0.1:{}{location}", self.registry.port)
        } else {
            location
        };
        let separator = if location.contains('?') { '&' } else { '?' };
        let put = Command::new("curl")
            .args([
                "-sS",
                "-f",
                "-X",
                "PUT",
                "-H",
                "Content-Type: application/octet-stream",
            ])
            .arg("--data-binary")
            .arg(format!("@{}", file.display()))
            .arg(format!("{location}{separator}digest={digest}"))
            .output()
            .expect("curl");
        assert!(put.status.success(), "{}", stderr(&put));
        digest
    }

    /// Puts the manifest `manifest` at `reference` (a tag) of `repository`.
    fn manifest(&self, repository: &str, reference: &str, manifest: &Value) {
        self.put_manifest(repository, reference, manifest, MEDIA_MANIFEST);
    }

    /// Puts `manifest` (of media type `media_type`) at `reference` (a tag or its digest) of
    /// `repository`; returns its digest and size.
    pub(super) fn put_manifest(
        &self,
        repository: &str,
        reference: &str,
        manifest: &Value,
        media_type: &str,
    ) -> (String, usize) {
        let bytes = manifest.to_string();
        let file = self.dir.join("manifest.json");
        fs_err::write(&file, &bytes).expect("write");
        let put = Command::new("curl")
            .args(["-sS", "-f", "-X", "PUT", "-H"])
            .arg(format!("Content-Type: {media_type}"))
            .arg("--data-binary")
            .arg(format!("@{}", file.display()))
            .arg(self.url(&format!("{repository}/manifests/{reference}")))
            .output()
            .expect("curl");
        assert!(put.status.success(), "{}", stderr(&put));
        (
            format!("sha256:{}", super::support::world::sha256(bytes.as_bytes())),
            bytes.len(),
        )
    }

    /// The bytes of the manifest `reference` of `repository`.
    fn get_manifest(&self, repository: &str, reference: &str) -> Vec<u8> {
        let got = Command::new("curl")
            .args(["-sS", "-f", "-H"])
            .arg(format!("Accept: {MEDIA_MANIFEST}"))
            .arg(self.url(&format!("{repository}/manifests/{reference}")))
            .output()
            .expect("curl");
        assert!(got.status.success(), "{}", stderr(&got));
        got.stdout
    }

    /// Attaches the Sigstore bundle `bundle` to the image `digest` of `repository` as cosign v3
    /// does, through the referrers tag schema (Debian's `docker-registry` has no referrers API):
    /// a manifest whose `subject` is the image and whose one layer is the bundle, listed by the
    /// index at the tag `sha256-<hex>`.
    fn refer(&self, repository: &str, digest: &str, bundle: &[u8]) {
        let descriptor = self.referrer(repository, digest, bundle);
        self.list_referrers(repository, digest, &[descriptor]);
    }

    /// The referrer manifest of the Sigstore bundle `bundle` for the image `digest`, put by its
    /// digest; its descriptor in a referrers index.
    fn referrer(&self, repository: &str, digest: &str, bundle: &[u8]) -> Value {
        let image = self.get_manifest(repository, digest);
        let empty = self.blob(repository, b"{}");
        let referrer = json!({
            "schemaVersion": 2,
            "mediaType": MEDIA_MANIFEST,
            "artifactType": MEDIA_BUNDLE,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty, "size": 2},
            "layers": [{"mediaType": MEDIA_BUNDLE, "digest": self.blob(repository, bundle),
                "size": bundle.len()}],
            "subject": {"mediaType": MEDIA_MANIFEST, "digest": digest, "size": image.len()},
            "annotations": {"dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1"},
        });
        let referrer_digest = format!(
            "sha256:{}",
            super::support::world::sha256(referrer.to_string().as_bytes())
        );
        let (_, size) = self.put_manifest(repository, &referrer_digest, &referrer, MEDIA_MANIFEST);
        bundle_descriptor(&referrer_digest, size)
    }

    /// Lists `descriptors` as the referrers of the image `digest`: the index at the tag
    /// `sha256-<hex>` (the referrers tag schema).
    fn list_referrers(&self, repository: &str, digest: &str, descriptors: &[Value]) {
        let index = json!({
            "schemaVersion": 2,
            "mediaType": MEDIA_INDEX,
            "manifests": descriptors,
        });
        let tag = format!("sha256-{}", &digest["sha256:".len()..]);
        self.put_manifest(repository, &tag, &index, MEDIA_INDEX);
    }

    /// Attaches `signatures` (payload, base64 signature) to the image `digest` of `repository`
    /// in the cosign v2 layout: one manifest at the tag `sha256-<hex>.sig`, a layer each.
    fn attach(&self, repository: &str, digest: &str, signatures: &[(Vec<u8>, String)]) {
        let annotated: Vec<(Vec<u8>, Value)> = signatures
            .iter()
            .map(|(payload, signature)| {
                (
                    payload.clone(),
                    json!({"dev.cosignproject.cosign/signature": signature}),
                )
            })
            .collect();
        self.attach_annotated(repository, digest, &annotated);
    }

    /// [`Api::attach`] with each layer's whole annotations given (keyless signatures carry the
    /// certificate, chain and Rekor bundle beside the signature).
    fn attach_annotated(&self, repository: &str, digest: &str, signatures: &[(Vec<u8>, Value)]) {
        let config = br#"{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#;
        let config_digest = self.blob(repository, config);
        let layers: Vec<Value> = signatures
            .iter()
            .map(|(payload, annotations)| {
                json!({
                    "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                    "digest": self.blob(repository, payload),
                    "size": payload.len(),
                    "annotations": annotations,
                })
            })
            .collect();
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest, "size": config.len()},
            "layers": layers,
        });
        let tag = format!("sha256-{}.sig", &digest["sha256:".len()..]);
        self.manifest(repository, &tag, &manifest);
    }
}

/// The descriptor of a cosign v3 signature referrer (a Sigstore bundle artifact) of `digest` and
/// `size`, as a referrers index lists it.
fn bundle_descriptor(digest: &str, size: usize) -> Value {
    json!({"mediaType": MEDIA_MANIFEST, "digest": digest, "size": size,
        "artifactType": MEDIA_BUNDLE,
        "annotations": {"dev.sigstore.bundle.predicateType": "https://sigstore.dev/cosign/sign/v1"}})
}

/// A descriptor in `dir` with one `oci` source pinning `reference`, approving `pins`, whose
/// `verify` is `verify` (YAML flow mapping; none when empty); returns its path.
pub(super) fn descriptor(
    dir: &Path,
    reference: &str,
    pins: &[(String, String)],
    verify: &str,
) -> std::path::PathBuf {
    let mut yaml = format!(
        "skills:\n  - oci:\n      reference: {reference}\n      directory: corpus\n      plain_http: true\n      track: stable\n"
    );
    if !verify.is_empty() {
        yaml.push_str(&format!("      verify: {verify}\n"));
    }
    yaml.push_str("      approved:\n");
    for (name, hash) in pins {
        yaml.push_str(&format!(
            "        - {{ name: {name}, version: '1.0', hash: {hash} }}\n"
        ));
    }
    let path = dir.join("signed.yaml");
    fs_err::write(&path, yaml).expect("write");
    path
}

/// The image pushed from `lab` to `repository:tag`: `(REGISTRY/REPOSITORY, digest)`.
fn pushed(lab: &Lab, registry: &Registry, repository: &str, tag: &str) -> (String, String) {
    let out = push_to(
        lab,
        &registry.repository(&format!("{repository}:{tag}")),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reference = stdout(&out).trim().to_owned();
    let (name, digest) = reference.rsplit_once('@').expect("@");
    (name.to_owned(), digest.to_owned())
}

#[test]
fn a_key_signed_image_is_prepared_with_its_signer_recorded_and_checked_again_offline() {
    let lab = Lab::new(&[("pdf", &[("references/forms.md", "# Forms\n")])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    let (name, digest) = pushed(&lab, &registry, "platform/signed", "stable");
    let key = key_pair(dir, "release");
    let signed = payload(&name, &digest);
    let signature = sign(dir, "release", &signed);
    api.attach("platform/signed", &digest, &[(signed, signature)]);
    let config = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &lab_pins(&lab),
        "{ cosign_key: release.pub }",
    );

    let checked = skillfold_with(&config, &["check"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    let prepared = skillfold_with(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    let expected = json!({"key": {"fingerprint": fingerprint(&key)}});
    assert_eq!(report["sources"][0]["publisher"], expected);
    let manifests = dir.join("corpus/.skillfold/manifests");
    let recorded: Value = serde_json::from_slice(
        &fs_err::read(
            fs_err::read_dir(&manifests)
                .expect("manifests")
                .next()
                .expect("one")
                .expect("entry")
                .path(),
        )
        .expect("read"),
    )
    .expect("json");
    assert_eq!(recorded["source"]["publisher"]["signer"], expected);
    let verified = skillfold_with(&config, &["verify"]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));

    // The warm path checks the recorded signature again, with the registry gone.
    drop(registry);
    let warm = skillfold_with(&config, &["prepare", "--json"]);
    assert_eq!(warm.status.code(), Some(0), "{}", stderr(&warm));
    let report: Value = serde_json::from_slice(&warm.stdout).expect("json");
    assert_eq!(report["fetches"], 0);
    assert_eq!(report["sources"][0]["publisher"], expected);

    // Another key in `verify`: the published generation no longer shows who published it.
    key_pair(dir, "other");
    let moved = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &lab_pins(&lab),
        "{ cosign_key: other.pub }",
    );
    let refused = skillfold_with(&moved, &["verify"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "publisher_changed");
    // And `prepare` does not take the warm path: it must fetch again (the registry is gone).
    let cold = skillfold_with(&moved, &["prepare"]);
    assert_eq!(cold.status.code(), Some(1), "{}", stderr(&cold));
    assert!(dir.join("corpus/current/pdf/SKILL.md").exists());
}

#[test]
fn unsigned_wrongly_signed_copied_and_tampered_signatures_are_refused_and_nothing_is_published() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    key_pair(dir, "release");
    key_pair(dir, "stranger");
    let pins = lab_pins(&lab);
    let (name, digest) = pushed(&lab, &registry, "platform/a", "stable");
    let other = Lab::new(&[("pdf", &[("references/other.md", "# Other\n")])], &[]);
    let (other_name, other_digest) = pushed(&other, &registry, "platform/b", "stable");
    assert_ne!(digest, other_digest);
    let verify = "{ cosign_key: release.pub }";
    let config = descriptor(dir, &format!("{name}@{digest}"), &pins, verify);
    let refused = |code: &str, rejection: Option<&str>| {
        let out = skillfold_with(&config, &["prepare"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_stderr_has(&out, &format!("[{code}]"));
        if let Some(rejection) = rejection {
            assert_stderr_has(&out, &format!("[{rejection}]"));
        }
        assert!(!dir.join("corpus/current").exists(), "nothing is published");
    };

    // No signature at all.
    refused("image_unsigned", None);
    // Signed by a key the descriptor does not name.
    let good = payload(&name, &digest);
    api.attach(
        "platform/a",
        &digest,
        &[(good.clone(), sign(dir, "stranger", &good))],
    );
    refused("image_signature_refused", Some("bad_signature"));
    // A valid signature by the configured key, of another image, copied to this one's tag.
    let theirs = payload(&other_name, &other_digest);
    api.attach(
        "platform/a",
        &digest,
        &[(theirs.clone(), sign(dir, "release", &theirs))],
    );
    refused("image_signature_refused", Some("not_this_image"));
    // The payload changed after signing (it still names this digest).
    let tampered = payload("evil.example/other", &digest);
    api.attach(
        "platform/a",
        &digest,
        &[(tampered, sign(dir, "release", &good))],
    );
    refused("image_signature_refused", Some("bad_signature"));
    // Any one valid signature suffices: a bad one beside a good one.
    api.attach(
        "platform/a",
        &digest,
        &[
            (good.clone(), sign(dir, "stranger", &good)),
            (good.clone(), sign(dir, "release", &good)),
        ],
    );
    let out = skillfold_with(&config, &["prepare"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn check_names_a_bad_publisher_policy_with_its_rule() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let pins = [("pdf".to_owned(), "0".repeat(64))];
    let reference = format!("127.0.0.1:1/r@sha256:{}", "1".repeat(64));
    key_pair(dir, "p256");
    openssl(
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:1024",
            "-out",
        ],
        &dir.join("rsa1024.pem"),
    );
    openssl(
        &[
            "pkey",
            "-pubout",
            "-in",
            dir.join("rsa1024.pem").to_str().expect("utf8"),
            "-out",
        ],
        &dir.join("rsa1024.pub"),
    );
    for (verify, location) in [
        ("{}", "skills[0].oci.verify"),
        (
            "{ cosign_key: missing.pub }",
            "skills[0].oci.verify.cosign_key",
        ),
        (
            "{ cosign_key: p256.pem }",
            "skills[0].oci.verify.cosign_key",
        ),
        (
            "{ cosign_key: rsa1024.pub }",
            "skills[0].oci.verify.cosign_key",
        ),
        (
            "{ sigstore: { trusted_root: p256.pub, identities: [] } }",
            "skills[0].oci.verify.sigstore.identities",
        ),
        (
            "{ cosign_key: p256.pub, sigstore: { trusted_root: p256.pub, identities: [ { issuer: 'http://insecure', subject: me } ] } }",
            "skills[0].oci.verify.sigstore.identities[0].issuer",
        ),
        (
            "{ cosign_key: p256.pub, sigstore: { trusted_root: p256.pub, identities: [ { issuer: 'https://issuer', subject: me } ] } }",
            "skills[0].oci.verify.sigstore.trusted_root",
        ),
    ] {
        let config = descriptor(dir, &reference, &pins, verify);
        let out = skillfold_with(&config, &["check"]);
        assert_eq!(out.status.code(), Some(2), "{verify}: {}", stderr(&out));
        assert_stderr_has(&out, &format!("{location}: "));
        assert_stderr_has(&out, "[invalid_trust_policy]");
    }
}

#[test]
fn update_judges_a_candidate_image_as_prepare_judges_its_pin() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    let key = key_pair(dir, "release");
    let pins = lab_pins(&lab);
    let (name, pinned) = pushed(&lab, &registry, "platform/u", "v1");
    // The tracked tag names another image (the same bundles in another order of pushes makes the
    // same digest, so change a bundle).
    let changed = Lab::new(&[("pdf", &[("references/new.md", "# New\n")])], &[]);
    let (_, candidate) = pushed(&changed, &registry, "platform/u", "stable");
    assert_ne!(pinned, candidate);
    let config = descriptor(
        dir,
        &format!("{name}@{pinned}"),
        &pins,
        "{ cosign_key: release.pub }",
    );

    // Unsigned candidate: refused, the descriptor untouched.
    let before = fs_err::read_to_string(&config).expect("read");
    let out = skillfold_with(&config, &["update", "--write", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["error"]["code"], "image_unsigned",
        "{report}"
    );
    assert_eq!(fs_err::read_to_string(&config).expect("read"), before);
    let outdated = skillfold_with(&config, &["outdated", "--json"]);
    let report: Value = serde_json::from_slice(&outdated.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["error"]["code"], "image_unsigned",
        "{report}"
    );

    // Signed by the key: the review names the publisher, and the write goes through.
    let signed = payload(&name, &candidate);
    let signature = sign(dir, "release", &signed);
    api.attach("platform/u", &candidate, &[(signed, signature)]);
    let out = skillfold_with(&config, &["update", "--write", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["publisher"],
        json!({"key": {"fingerprint": fingerprint(&key)}})
    );
    assert!(
        fs_err::read_to_string(&config)
            .expect("read")
            .contains(&candidate)
    );
}

#[test]
fn an_image_signed_by_push_sign_key_is_prepared_under_its_public_key() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    // An unencrypted PKCS#8 P-256 key, as `openssl genpkey` writes it, and its public half.
    let private = dir.join("push.key");
    openssl(
        &[
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
        ],
        &private,
    );
    let public = dir.join("push.pub");
    openssl(
        &[
            "pkey",
            "-pubout",
            "-in",
            private.to_str().expect("utf8"),
            "-out",
        ],
        &public,
    );
    let config = lab.config();
    let out = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args([
            "push",
            "-c",
            config.to_str().expect("utf8"),
            "--plain-http",
            "--to",
        ])
        .arg(registry.repository("platform/self-signed:v1"))
        .arg("--sign-key")
        .arg(&private)
        .env("DOCKER_CONFIG", dir.join("no-docker-config"))
        .env_remove("SKILLFOLD_REGISTRY_AUTH")
        .output()
        .expect("run skillfold");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reference = stdout(&out)
        .lines()
        .rfind(|l| l.contains('@'))
        .expect("the pushed reference")
        .trim()
        .to_owned();
    let descriptor = descriptor(dir, &reference, &lab_pins(&lab), "{ cosign_key: push.pub }");
    let prepared = skillfold_with(&descriptor, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["publisher"],
        json!({"key": {"fingerprint": fingerprint(&public)}})
    );
}

/// The identity the keyless signatures of these tests are made for.
const ISSUER: &str = "https://token.actions.githubusercontent.com";
const SUBJECT: &str =
    "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main";

/// Keyless signatures of the image `digest` (named `reference`) made by sigstore-js with
/// @sigstore/mock's Fulcio and Rekor (`tests/sigstore/make-fixtures.mjs`, installed by `npm ci`),
/// for [`ISSUER`] and [`SUBJECT`], written into `out`; the script fails unless sigstore-js's
/// own verifier gives the verdicts it expects.
#[cfg(feature = "mcp")]
fn keyless_signatures(out: &Path, reference: &str, digest: &str) {
    let harness = super::mcp_client::npm_installed(
        "tests/sigstore",
        "sigstore-fixtures",
        Some("make-fixtures.mjs"),
    );
    let made = Command::new("node")
        .arg(harness.join("make-fixtures.mjs"))
        .args([
            "--digest",
            digest,
            "--reference",
            reference,
            "--issuer",
            ISSUER,
        ])
        .args(["--subject", SUBJECT, "--out"])
        .arg(out)
        .output()
        .expect("node");
    assert!(made.status.success(), "{}{}", stdout(&made), stderr(&made));
}

#[cfg(feature = "mcp")]
#[test]
fn keyless_signatures_in_both_layouts_are_prepared_for_the_configured_identity_only() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    let pins = lab_pins(&lab);
    // Two repositories of one image: one signed in the cosign v2 layout, one in cosign v3's.
    let (v2_name, digest) = pushed(&lab, &registry, "platform/v2", "stable");
    let (v3_name, v3_digest) = pushed(&lab, &registry, "platform/v3", "stable");
    assert_eq!(digest, v3_digest);
    let signed = dir.join("signed");
    keyless_signatures(&signed, &v2_name, &digest);
    let fs_json = |path: &Path| -> Value {
        serde_json::from_slice(&fs_err::read(path).expect("read")).expect("json")
    };
    let v2 = fs_json(&signed.join("cosign-v2.json"));
    api.attach_annotated(
        "platform/v2",
        &digest,
        &[(
            v2["payload"].as_str().expect("payload").as_bytes().to_vec(),
            v2["annotations"].clone(),
        )],
    );
    api.refer(
        "platform/v3",
        &digest,
        &fs_err::read(signed.join("dsse.bundle.json")).expect("read"),
    );
    fs_err::copy(
        signed.join("trusted_root.json"),
        dir.join("trusted_root.json"),
    )
    .expect("copy");
    let sigstore = |subject: &str| {
        format!(
            "{{ sigstore: {{ trusted_root: trusted_root.json, identities: [ {{ issuer: '{ISSUER}', subject: '{subject}' }} ] }} }}"
        )
    };
    let expected = json!({"identity": {"issuer": ISSUER, "subject": SUBJECT}});
    for name in [&v2_name, &v3_name] {
        let _ = fs_err::remove_dir_all(dir.join("corpus"));
        let config = descriptor(dir, &format!("{name}@{digest}"), &pins, &sigstore(SUBJECT));
        let prepared = skillfold_with(&config, &["prepare", "--json"]);
        assert_eq!(
            prepared.status.code(),
            Some(0),
            "{name}: {}",
            stderr(&prepared)
        );
        let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
        assert_eq!(report["sources"][0]["publisher"], expected, "{name}");
        let verified = skillfold_with(&config, &["verify"]);
        assert_eq!(
            verified.status.code(),
            Some(0),
            "{name}: {}",
            stderr(&verified)
        );

        // Another subject: the same signatures are refused, and nothing is published.
        let _ = fs_err::remove_dir_all(dir.join("corpus"));
        let other = descriptor(
            dir,
            &format!("{name}@{digest}"),
            &pins,
            &sigstore(&format!("{SUBJECT}-other")),
        );
        let refused = skillfold_with(&other, &["prepare"]);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{name}: {}",
            stderr(&refused)
        );
        assert_stderr_has(&refused, "[image_signature_refused]");
        assert_stderr_has(&refused, "[identity_not_allowed]");
        assert!(!dir.join("corpus/current").exists());
    }
}

/// A cosign v3 bundle signed with a key, written here from the format: a DSSE envelope of the
/// in-toto statement `cosign sign` makes for `reference` at `digest` (predicate
/// `https://sigstore.dev/cosign/sign/v1`), signed over DSSE's pre-authentication encoding by the
/// private key `NAME.pem`, the key named by a hint, no log entry.
fn key_bundle(dir: &Path, name: &str, reference: &str, digest: &str) -> Vec<u8> {
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": reference, "digest": {"sha256": &digest["sha256:".len()..]}}],
        "predicateType": "https://sigstore.dev/cosign/sign/v1",
        "predicate": {},
    })
    .to_string();
    statement_bundle(dir, name, &statement, "-sha256")
}

/// A bundle of the DSSE envelope of `statement` (its exact bytes), signed over `hash` by the
/// private key `NAME.pem`, the key named by a hint, no log entry.
fn statement_bundle(dir: &Path, name: &str, statement: &str, hash: &str) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let payload_type = "application/vnd.in-toto+json";
    let mut pae = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        statement.len()
    )
    .into_bytes();
    pae.extend_from_slice(statement.as_bytes());
    let signature = sign_with(dir, name, &pae, hash);
    json!({
        "mediaType": MEDIA_BUNDLE,
        "verificationMaterial": {"publicKey": {"hint": name}},
        "dsseEnvelope": {
            "payload": b64(statement.as_bytes()),
            "payloadType": payload_type,
            "signatures": [{"sig": signature}],
        },
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_key_signed_cosign_v3_bundle_is_prepared_and_one_of_another_image_is_not() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    let key = key_pair(dir, "release");
    let pins = lab_pins(&lab);
    let (name, digest) = pushed(&lab, &registry, "platform/v3key", "stable");
    let config = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &pins,
        "{ cosign_key: release.pub }",
    );
    // A bundle by the key for another image, attached to this one: refused.
    let other = format!("sha256:{}", "a".repeat(64));
    api.refer(
        "platform/v3key",
        &digest,
        &key_bundle(dir, "release", &name, &other),
    );
    let refused = skillfold_with(&config, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[not_this_image]");
    assert!(!dir.join("corpus/current").exists());
    // The bundle for this image (the tag index now lists it instead).
    api.refer(
        "platform/v3key",
        &digest,
        &key_bundle(dir, "release", &name, &digest),
    );
    let prepared = skillfold_with(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["publisher"],
        json!({"key": {"fingerprint": fingerprint(&key)}})
    );
}

#[test]
fn a_statement_whose_subject_digest_is_given_twice_is_refused() {
    // Signed by the configured key: the subject's digest names another image, then the pinned
    // one. A reader keeping the last key would bind the pinned image; the statement is read as
    // the bundle is, and a key given twice refuses it.
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    key_pair(dir, "release");
    let (name, digest) = pushed(&lab, &registry, "platform/twice", "stable");
    let other = "a".repeat(64);
    let hex = &digest["sha256:".len()..];
    let statement = format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"{name}","digest":{{"sha256":"{other}","sha256":"{hex}"}}}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{{}}}}"#
    );
    api.refer(
        "platform/twice",
        &digest,
        &statement_bundle(dir, "release", &statement, "-sha256"),
    );
    let config = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &lab_pins(&lab),
        "{ cosign_key: release.pub }",
    );
    let refused = skillfold_with(&config, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[image_signature_refused]");
    assert_stderr_has(&refused, "given twice");
    assert_stderr_has(&refused, "[malformed]");
    assert!(!dir.join("corpus/current").exists());
}

#[test]
fn unreadable_referrers_are_skipped_beside_a_valid_signature_and_refused_alone() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    let key = key_pair(dir, "release");
    let pins = lab_pins(&lab);
    let repository = "platform/dangling";
    let (name, digest) = pushed(&lab, &registry, repository, "stable");
    let config = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &pins,
        "{ cosign_key: release.pub }",
    );
    // A referrer whose manifest is gone since it was listed (the registry checks that what an
    // index lists exists: it is taken away beneath it, as a deletion does), and one whose
    // manifest holds two layers, not one bundle.
    let dangling = api.referrer(repository, &digest, b"{\"gone\":1}");
    let gone = dangling["digest"].as_str().expect("digest").to_owned();
    let image = api.get_manifest(repository, &digest);
    let empty = api.blob(repository, b"{}");
    let second = api.blob(repository, b"{\"second\":1}");
    let two_layers = json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "artifactType": MEDIA_BUNDLE,
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": empty, "size": 2},
        "layers": [{"mediaType": MEDIA_BUNDLE, "digest": empty, "size": 2},
            {"mediaType": MEDIA_BUNDLE, "digest": second, "size": 12}],
        "subject": {"mediaType": MEDIA_MANIFEST, "digest": digest, "size": image.len()},
    });
    let two_digest = format!(
        "sha256:{}",
        super::support::world::sha256(two_layers.to_string().as_bytes())
    );
    let (_, two_size) = api.put_manifest(repository, &two_digest, &two_layers, MEDIA_MANIFEST);
    let malformed = bundle_descriptor(&two_digest, two_size);

    // Alone, they leave no signature: refused as unverified (exit 2), not retried as a missing
    // image (exit 1, `image_not_found`), each named with why.
    api.list_referrers(repository, &digest, &[dangling.clone(), malformed.clone()]);
    let revision = registry
        .dir()
        .join("data/docker/registry/v2/repositories")
        .join(repository)
        .join("_manifests/revisions/sha256")
        .join(&gone["sha256:".len()..]);
    fs_err::remove_dir_all(&revision).expect("the referrer's revision");
    let refused = skillfold_with(&config, &["prepare"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[image_signature_refused]");
    assert_stderr_has(&refused, &format!("referrer {gone}"));
    assert_stderr_has(&refused, "(image_not_found) [unreadable]");
    assert_stderr_has(&refused, &format!("referrer {two_digest}"));
    assert_stderr_has(&refused, "(malformed_image) [unreadable]");
    assert!(
        !stderr(&refused).contains("[image_not_found]"),
        "{}",
        stderr(&refused)
    );
    assert!(!dir.join("corpus/current").exists());

    // Beside a valid signature: prepared, and what was skipped is said.
    let valid = api.referrer(
        repository,
        &digest,
        &key_bundle(dir, "release", &name, &digest),
    );
    fs_err::create_dir_all(&revision).expect("mkdir");
    fs_err::write(revision.join("link"), &gone).expect("link");
    api.list_referrers(repository, &digest, &[dangling, malformed, valid]);
    fs_err::remove_dir_all(&revision).expect("the referrer's revision");
    let prepared = skillfold_with(&config, &["prepare", "--json"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    let report: Value = serde_json::from_slice(&prepared.stdout).expect("json");
    assert_eq!(
        report["sources"][0]["publisher"],
        json!({"key": {"fingerprint": fingerprint(&key)}})
    );
    assert_stderr_has(&prepared, &format!("skipped referrer {gone}"));
    assert_stderr_has(&prepared, &format!("skipped referrer {two_digest}"));
    let verified = skillfold_with(&config, &["verify"]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
}

#[test]
fn a_p384_key_verifies_sha256_in_a_sig_layer_and_sha384_in_a_bundle_as_documented() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let dir = lab.tmp.path();
    let registry = Registry::start(&[]);
    let api = Api {
        registry: &registry,
        dir,
    };
    key_pair_on(dir, "p384", "secp384r1");
    let pins = lab_pins(&lab);
    let prepare = |name: &str, digest: &str| {
        let _ = fs_err::remove_dir_all(dir.join("corpus"));
        let config = descriptor(
            dir,
            &format!("{name}@{digest}"),
            &pins,
            "{ cosign_key: p384.pub }",
        );
        skillfold_with(&config, &["prepare"])
    };
    // cosign <= v2's layer: SHA-256 whatever the curve (`cosign verify --key`).
    let (v2, digest) = pushed(&lab, &registry, "platform/p384v2", "stable");
    let signed = payload(&v2, &digest);
    let sha384 = sign_with(dir, "p384", &signed, "-sha384");
    api.attach("platform/p384v2", &digest, &[(signed.clone(), sha384)]);
    let refused = prepare(&v2, &digest);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[bad_signature]");
    let sha256 = sign_with(dir, "p384", &signed, "-sha256");
    api.attach("platform/p384v2", &digest, &[(signed, sha256)]);
    let prepared = prepare(&v2, &digest);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    // A bundle: SHA-384, the key's own hash, as sigstore-go and cosign v3 sign it; SHA-256 (what
    // sigstore-js 5 uses for every EC key) is refused.
    let (v3, digest) = pushed(&lab, &registry, "platform/p384v3", "stable");
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": v3, "digest": {"sha256": &digest["sha256:".len()..]}}],
        "predicateType": "https://sigstore.dev/cosign/sign/v1",
        "predicate": {},
    })
    .to_string();
    api.refer(
        "platform/p384v3",
        &digest,
        &statement_bundle(dir, "p384", &statement, "-sha256"),
    );
    let refused = prepare(&v3, &digest);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[bad_signature]");
    api.refer(
        "platform/p384v3",
        &digest,
        &statement_bundle(dir, "p384", &statement, "-sha384"),
    );
    let prepared = prepare(&v3, &digest);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
    // What docs/security.md says of it.
    let security =
        fs_err::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/security.md"))
            .expect("read");
    let said = security.split_whitespace().collect::<Vec<_>>().join(" ");
    for claim in [
        "ECDSA with SHA-256 whatever the curve (P-384 too)",
        "**P-384 with SHA-384**",
        "sigstore-js 5 differs for P-384",
        "skillfold interoperates with cosign and sigstore-go",
    ] {
        assert!(
            said.contains(claim),
            "docs/security.md does not say: {claim}"
        );
    }
}
