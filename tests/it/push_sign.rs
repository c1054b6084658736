//! `skillfold push --to … --sign-key FILE`: a cosign key file made by an independent
//! implementation of cosign's format (`tests/cosign/cosign_key.py`: Python's `hashlib.scrypt`,
//! PyNaCl's secretbox, `cryptography`'s keys, in a venv under the target directory) signs the
//! pushed image; the `.sig` manifest and payload fetched back over plain HTTP from Debian's
//! `docker-registry` are checked independently (`cryptography` and `openssl dgst -verify`), the
//! payload binds the pushed digest, a second signature is appended and an identical one is not;
//! and every bad key (wrong password, another curve, a tampered envelope, hostile scrypt
//! parameters) is refused with nothing pushed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

use super::push::{Lab, Registry};
use super::support::bin::{assert_stderr_has, stderr};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python with the packages `tests/cosign/requirements.txt` pins, made when missing
/// or stale.
fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        super::support::venv::python_with("tests/cosign/requirements.txt", "cosign-key-venv")
    })
}

fn run(command: &mut Command) -> Output {
    let out = command.output().expect("run");
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `cosign_key.py ARGS` with `COSIGN_PASSWORD=password`.
fn cosign_key(args: &[&str], password: &str) -> Output {
    Command::new(python())
        .arg(manifest_dir().join("tests/cosign/cosign_key.py"))
        .args(args)
        .env("COSIGN_PASSWORD", password)
        .output()
        .expect("run cosign_key.py")
}

/// A key pair made by cosign_key.py in `dir` as `NAME.key` and `NAME.pub`, with `extra` options.
fn make_key(dir: &Path, name: &str, password: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    let mut args = vec![
        "make",
        key.to_str().expect("utf8"),
        public.to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    let made = cosign_key(&args, password);
    assert!(made.status.success(), "{}", stderr(&made));
    (key, public)
}

/// `skillfold push --to TO --plain-http --json --sign-key KEY` with `COSIGN_PASSWORD` as given
/// (`None`: unset).
fn push_signed(lab: &Lab, to: &str, key: &Path, password: Option<&str>) -> Output {
    push_signed_with(lab, to, key, password, &[])
}

/// [`push_signed`] with extra environment `env`.
fn push_signed_with(
    lab: &Lab,
    to: &str,
    key: &Path,
    password: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let config = lab.config();
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillfold"));
    command
        .args(["push", "-c", config.to_str().expect("utf8"), "--to", to])
        .args(["--plain-http", "--json", "--sign-key"])
        .arg(key)
        .env_remove("SKILLFOLD_REGISTRY_AUTH")
        .env_remove("COSIGN_PASSWORD")
        .env("DOCKER_CONFIG", lab.tmp.path().join("no-docker-config"));
    if let Some(password) = password {
        command.env("COSIGN_PASSWORD", password);
    }
    command.envs(env.iter().copied());
    command.output().expect("run skillfold")
}

/// GET `http://127.0.0.1:PORT/v2/REPO/PATH` (the registry is anonymous): the body, or `None`
/// on 404.
fn get(registry: &Registry, repo: &str, path: &str, accept: &str) -> Option<Vec<u8>> {
    get_as(registry, repo, path, accept, None)
}

/// [`get`] as `user` (`USER:PASSWORD`, HTTP Basic) when given.
fn get_as(
    registry: &Registry,
    repo: &str,
    path: &str,
    accept: &str,
    user: Option<&str>,
) -> Option<Vec<u8>> {
    let mut command = Command::new("curl");
    if let Some(user) = user {
        command.args(["-u", user]);
    }
    let out = command
        .args(["-s", "-w", "\n%{http_code}", "-H"])
        .arg(format!("Accept: {accept}"))
        .arg(format!(
            "http://127.0.0.1:{}/v2/{repo}/{path}",
            registry.port
        ))
        .output()
        .expect("curl");
    let mut body = out.stdout;
    let split = body.iter().rposition(|&b| b == b'\n').expect("status");
    let status = String::from_utf8(body.split_off(split + 1)).expect("utf8");
    body.pop();
    match status.as_str() {
        "200" => Some(body),
        "404" => None,
        other => panic!("GET {path}: HTTP {other}"),
    }
}

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

fn sig_manifest(registry: &Registry, digest: &str) -> Option<Value> {
    let tag = format!("{}.sig", digest.replace(':', "-"));
    get(
        registry,
        "platform/skills",
        &format!("manifests/{tag}"),
        OCI_MANIFEST,
    )
    .map(|bytes| serde_json::from_slice(&bytes).expect("json"))
}

fn blob(registry: &Registry, digest: &str) -> Vec<u8> {
    get(
        registry,
        "platform/skills",
        &format!("blobs/{digest}"),
        "*/*",
    )
    .expect("the blob")
}

/// `sha256:` and the hex SHA-256 of the DER of the PEM public key at `public` (openssl).
fn openssl_fingerprint(public: &Path) -> String {
    let der = run(Command::new("openssl")
        .args(["pkey", "-pubin", "-outform", "DER", "-in"])
        .arg(public));
    let tmp = public.with_extension("der");
    fs_err::write(&tmp, &der.stdout).expect("write");
    let sum = run(Command::new("sha256sum").arg(&tmp));
    let hex = String::from_utf8(sum.stdout).expect("utf8");
    format!("sha256:{}", hex.split_whitespace().next().expect("hex"))
}

/// Checks every signature layer of `manifest` independently: `cryptography` (cosign_key.py
/// verify) and `openssl dgst -sha256 -verify` with the public key of its layer, and that the
/// payload binds `digest` and names `repository`.
fn check_layer(
    registry: &Registry,
    layer: &Value,
    public: &Path,
    digest: &str,
    repository: &str,
    dir: &Path,
) {
    assert_eq!(
        layer["mediaType"],
        "application/vnd.dev.cosign.simplesigning.v1+json"
    );
    let payload = blob(registry, layer["digest"].as_str().expect("digest"));
    assert_eq!(layer["size"].as_u64(), Some(payload.len() as u64));
    // The bytes cosign writes, binding the pushed digest.
    assert_eq!(
        String::from_utf8(payload.clone()).expect("utf8"),
        format!(
            "{{\"critical\":{{\"identity\":{{\"docker-reference\":\"{repository}\"}},\"image\":{{\"docker-manifest-digest\":\"{digest}\"}},\"type\":\"cosign container image signature\"}},\"optional\":null}}"
        )
    );
    let signature = layer["annotations"]["dev.cosignproject.cosign/signature"]
        .as_str()
        .expect("the signature annotation");
    let payload_file = dir.join("payload.json");
    fs_err::write(&payload_file, &payload).expect("write");
    let verified = cosign_key(
        &[
            "verify",
            public.to_str().expect("utf8"),
            payload_file.to_str().expect("utf8"),
            signature,
        ],
        "",
    );
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    use base64::Engine as _;
    let signature_file = dir.join("signature.der");
    fs_err::write(
        &signature_file,
        base64::engine::general_purpose::STANDARD
            .decode(signature)
            .expect("base64"),
    )
    .expect("write");
    run(Command::new("openssl")
        .args(["dgst", "-sha256", "-verify"])
        .arg(public)
        .arg("-signature")
        .arg(&signature_file)
        .arg(&payload_file));
    // A flipped payload byte does not verify (the oracle refuses too).
    let mut tampered = payload.clone();
    tampered[20] ^= 1;
    fs_err::write(&payload_file, &tampered).expect("write");
    let refused = cosign_key(
        &[
            "verify",
            public.to_str().expect("utf8"),
            payload_file.to_str().expect("utf8"),
            signature,
        ],
        "",
    );
    assert_eq!(refused.status.code(), Some(1));
}

#[test]
fn an_independently_made_cosign_key_signs_the_pushed_image_and_a_second_key_appends() {
    let lab = Lab::new(&[("pdf", &[("references/forms.md", "# Forms\n")])], &[]);
    let registry = Registry::start(&[]);
    let dir = lab.tmp.path();
    let (key, public) = make_key(dir, "cosign", "correct horse", &[]);
    let to = registry.repository("platform/skills:v1");
    let repository = registry.repository("platform/skills");

    let pushed = push_signed(&lab, &to, &key, Some("correct horse"));
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    assert!(!stderr(&pushed).contains("correct horse"));
    let report: Value = serde_json::from_slice(&pushed.stdout).expect("json");
    let digest = report["digest"].as_str().expect("digest").to_owned();
    let tag = format!("sha256-{}.sig", &digest[7..]);
    let fingerprint = openssl_fingerprint(&public);
    assert_eq!(report["signature"]["tag"], tag.as_str());
    assert_eq!(
        report["signature"]["reference"],
        format!("{repository}:{tag}")
    );
    assert_eq!(report["signature"]["key"], fingerprint.as_str());
    assert_eq!(report["signature"]["already_signed"], false);
    assert_stderr_has(
        &pushed,
        &format!("signature pushed: {repository}:{tag} (key {fingerprint})"),
    );

    let manifest = sig_manifest(&registry, &digest).expect("the .sig manifest");
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(manifest["mediaType"], OCI_MANIFEST);
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1);
    check_layer(&registry, &layers[0], &public, &digest, &repository, dir);
    // The config as cosign (go-containerregistry) writes it.
    let config = blob(
        &registry,
        manifest["config"]["digest"].as_str().expect("digest"),
    );
    assert_eq!(
        String::from_utf8(config).expect("utf8"),
        format!(
            "{{\"architecture\":\"\",\"created\":\"0001-01-01T00:00:00Z\",\"history\":[{{\"created\":\"0001-01-01T00:00:00Z\"}}],\"os\":\"\",\"rootfs\":{{\"type\":\"layers\",\"diff_ids\":[\"{}\"]}},\"config\":{{}}}}",
            layers[0]["digest"].as_str().expect("digest")
        )
    );
    assert_eq!(
        report["signature"]["manifest_digest"].as_str(),
        Some(
            skillfold_sha256(
                &get(
                    &registry,
                    "platform/skills",
                    &format!("manifests/{tag}"),
                    OCI_MANIFEST
                )
                .expect("manifest")
            )
            .as_str()
        )
    );

    // The same key again: its signature of this payload is there already; nothing is added.
    let again = push_signed(&lab, &to, &key, Some("correct horse"));
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let report: Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(report["signature"]["already_signed"], true);
    assert_stderr_has(&again, "already signed by this key");
    assert_eq!(sig_manifest(&registry, &digest), Some(manifest.clone()));

    // Another key (an unencrypted PKCS#8 file) appends its layer after the first.
    let (plain, plain_public) = make_key(dir, "plain", "", &["--plain"]);
    let appended = push_signed(&lab, &to, &plain, None);
    assert_eq!(appended.status.code(), Some(0), "{}", stderr(&appended));
    let after = sig_manifest(&registry, &digest).expect("the .sig manifest");
    let layers = after["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2);
    assert_eq!(layers[0], manifest["layers"][0]);
    check_layer(&registry, &layers[0], &public, &digest, &repository, dir);
    check_layer(
        &registry,
        &layers[1],
        &plain_public,
        &digest,
        &repository,
        dir,
    );
    let config: Value = serde_json::from_slice(&blob(
        &registry,
        after["config"]["digest"].as_str().expect("digest"),
    ))
    .expect("json");
    assert_eq!(
        config["rootfs"]["diff_ids"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(config["history"].as_array().map(Vec::len), Some(2));

    // The older `ENCRYPTED COSIGN PRIVATE KEY` label, and an empty password, sign too.
    let (old, old_public) = make_key(dir, "old", "", &["--label", "ENCRYPTED COSIGN PRIVATE KEY"]);
    let signed = push_signed(&lab, &to, &old, Some(""));
    assert_eq!(signed.status.code(), Some(0), "{}", stderr(&signed));
    let last = sig_manifest(&registry, &digest).expect("manifest");
    let layers = last["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 3);
    check_layer(
        &registry,
        &layers[2],
        &old_public,
        &digest,
        &repository,
        dir,
    );
}

fn skillfold_sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Nothing at all is in the registry: no repository was created.
fn assert_nothing_pushed(registry: &Registry) {
    let repositories = registry.dir().join("data/docker/registry/v2/repositories");
    assert!(
        !repositories.exists()
            || fs_err::read_dir(&repositories)
                .expect("dir")
                .next()
                .is_none(),
        "something was pushed"
    );
}

#[test]
fn a_bad_key_is_refused_before_anything_is_pushed() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Registry::start(&[]);
    let dir = lab.tmp.path();
    let to = registry.repository("platform/skills:v1");
    let (key, _) = make_key(dir, "cosign", "right-Pa55", &[]);

    let wrong = push_signed(&lab, &to, &key, Some("wrong-Pa55"));
    assert_eq!(wrong.status.code(), Some(2), "{}", stderr(&wrong));
    assert_stderr_has(&wrong, "does not open with the password in COSIGN_PASSWORD");
    assert_stderr_has(&wrong, "[sign_key_refused]");
    assert!(!stderr(&wrong).contains("wrong-Pa55") && !stderr(&wrong).contains("right-Pa55"));
    assert!(wrong.stdout.is_empty());

    let unset = push_signed(&lab, &to, &key, None);
    assert_eq!(unset.status.code(), Some(2));
    assert_stderr_has(&unset, "set COSIGN_PASSWORD");

    // A key on another curve, or of another algorithm.
    for (name, curve) in [("p384", "P-384"), ("ed", "ed25519")] {
        let (other, _) = make_key(dir, name, "pw", &["--curve", curve]);
        let refused = push_signed(&lab, &to, &other, Some("pw"));
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert_stderr_has(&refused, "signs with ECDSA P-256 keys");
    }

    // A tampered envelope: one ciphertext character changed (the authenticator refuses it).
    let text = fs_err::read_to_string(&key).expect("read");
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let envelope = String::from_utf8(engine.decode(body).expect("base64")).expect("utf8");
    let mut parsed: Value = serde_json::from_str(&envelope).expect("json");
    let mut ciphertext = engine
        .decode(parsed["ciphertext"].as_str().expect("ciphertext"))
        .expect("base64");
    ciphertext[40] ^= 1;
    parsed["ciphertext"] = Value::String(engine.encode(ciphertext));
    let tampered = dir.join("tampered.key");
    fs_err::write(
        &tampered,
        format!(
            "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n{}\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n",
            engine.encode(parsed.to_string())
        ),
    )
    .expect("write");
    let refused = push_signed(&lab, &to, &tampered, Some("right-Pa55"));
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "does not open with the password");

    // Hostile scrypt parameters are refused before any derivation (the file was sealed with a
    // random key: deriving N = 2^30 would take minutes and a GiB).
    for params in [
        ["--n", "1073741824", "--r", "8", "--p", "1"],
        ["--n", "65536", "--r", "1024", "--p", "1"],
        ["--n", "65536", "--r", "8", "--p", "64"],
        ["--n", "1024", "--r", "8", "--p", "1"],
    ] {
        let mut extra = params.to_vec();
        extra.push("--no-derive");
        let (hostile, _) = make_key(dir, "hostile", "pw", &extra);
        let refused = push_signed(&lab, &to, &hostile, Some("pw"));
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert_stderr_has(&refused, "are not one of the sets cosign reads");
    }

    // A public key where the private one belongs.
    let (_, public) = make_key(dir, "pub", "pw", &[]);
    let refused = push_signed(&lab, &to, &public, Some("pw"));
    assert_eq!(refused.status.code(), Some(2));
    assert_stderr_has(&refused, "a PEM `PUBLIC KEY` block");

    assert_nothing_pushed(&registry);

    // An OCI layout is not signed: refused with the code the docs give, before the key is read
    // (no password asked), nothing written.
    let layout = dir.join("layout");
    let config = lab.config();
    let refused = Command::new(env!("CARGO_BIN_EXE_skillfold"))
        .args(["push", "-c", config.to_str().expect("utf8"), "--oci-layout"])
        .arg(&layout)
        .arg("--sign-key")
        .arg(&key)
        .env_remove("COSIGN_PASSWORD")
        .output()
        .expect("run");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "an OCI layout is not signed");
    assert_stderr_has(&refused, "[sign_key_refused]");
    assert!(!stderr(&refused).contains("COSIGN_PASSWORD"));
    assert!(!layout.exists());

    // docs/cli.md names the codes the binary prints: a wrong password and a layout are both
    // `sign_key_refused`.
    let cli = fs_err::read_to_string(manifest_dir().join("docs/cli.md")).expect("read");
    let row = cli
        .lines()
        .find(|l| l.starts_with("| `--sign-key FILE`"))
        .expect("the --sign-key row of docs/cli.md");
    assert!(
        row.contains("wrong or unset password included: exit 2, `sign_key_refused`"),
        "{row}"
    );
    assert!(
        row.contains("with `--oci-layout` it is refused (`sign_key_refused`"),
        "{row}"
    );
    assert!(!row.contains("invalid_usage"), "{row}");
}

/// An unencrypted PKCS#8 P-256 key made by `openssl genpkey` in `dir` as `NAME.key`, and its
/// public half `NAME.pub`.
fn openssl_key(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    run(Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
        ])
        .arg(&private));
    run(Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&private)
        .arg("-out")
        .arg(&public));
    (private, public)
}

#[test]
fn push_appends_no_signature_past_what_prepare_reads() {
    use super::image_signatures::{Api, descriptor, payload};
    // The layers `prepare` reads of a `.sig` manifest (`publisher::fetch::MAX_SIGNATURE_LAYERS`,
    // the bound `push` shares: a unit test of `distribution::sign` holds them equal).
    const MAX: usize = 64;
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Registry::start(&[]);
    let dir = lab.tmp.path();
    let api = Api {
        registry: &registry,
        dir,
    };
    let to = registry.repository("platform/skills:v1");
    let pushed = super::push::push_to(&lab, &to, &[]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let reference = String::from_utf8(pushed.stdout).expect("utf8");
    let (name, digest) = reference.trim().rsplit_once('@').expect("@");
    // Others' signatures at the `.sig` tag, one short of what `prepare` reads.
    let signed = payload(name, digest);
    let blob = api.blob("platform/skills", &signed);
    let config = br#"{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[],"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let config_digest = api.blob("platform/skills", config);
    use base64::Engine as _;
    let layers: Vec<Value> = (0..MAX - 1)
        .map(|n| {
            serde_json::json!({
                "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                "digest": blob, "size": signed.len(),
                "annotations": {"dev.cosignproject.cosign/signature":
                    base64::engine::general_purpose::STANDARD.encode(format!("not a signature {n}"))},
            })
        })
        .collect();
    let sig = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": config_digest, "size": config.len()},
        "layers": layers,
    });
    let tag = format!("{}.sig", digest.replace(':', "-"));
    api.put_manifest("platform/skills", &tag, &sig, OCI_MANIFEST);

    // The last layer `prepare` reads is this key's.
    let (key, public) = openssl_key(dir, "mine");
    let appended = push_signed(&lab, &to, &key, None);
    assert_eq!(appended.status.code(), Some(0), "{}", stderr(&appended));
    let layer_count = |registry: &Registry| {
        sig_manifest(registry, digest).expect("the .sig")["layers"]
            .as_array()
            .map(Vec::len)
    };
    assert_eq!(layer_count(&registry), Some(MAX));
    assert_eq!(public, dir.join("mine.pub"));
    let source = descriptor(
        dir,
        &format!("{name}@{digest}"),
        &super::oci_source::lab_pins(&lab),
        "{ cosign_key: mine.pub }",
    );
    let prepared = super::support::bin::skillfold_with(&source, &["prepare"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));

    // Full: this key again is already there; another key is refused, nothing written.
    let again = push_signed(&lab, &to, &key, None);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let report: Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(report["signature"]["already_signed"], true);
    let before = get(
        &registry,
        "platform/skills",
        &format!("manifests/{tag}"),
        OCI_MANIFEST,
    );
    let (other, _) = openssl_key(dir, "other");
    let refused = push_signed(&lab, &to, &other, None);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_stderr_has(&refused, "[image_too_large]");
    assert_stderr_has(&refused, &format!("at most {MAX} with the new one"));
    assert_stderr_has(&refused, "was pushed, but its signature was not");
    let after = get(
        &registry,
        "platform/skills",
        &format!("manifests/{tag}"),
        OCI_MANIFEST,
    );
    assert_eq!(before, after, "the .sig image was rewritten");
    let prepared = super::support::bin::skillfold_with(&source, &["prepare"]);
    assert_eq!(prepared.status.code(), Some(0), "{}", stderr(&prepared));
}

#[test]
fn a_registry_with_credentials_gets_the_signature_with_them() {
    let lab = Lab::new(&[("pdf", &[])], &[]);
    let registry = Registry::start(&[("ci", "s3cret-Pa55")]);
    let dir = lab.tmp.path();
    let (key, public) = make_key(dir, "cosign", "pw", &[]);
    let to = registry.repository("platform/skills:v1");
    let auth = [("SKILLFOLD_REGISTRY_AUTH", "ci:s3cret-Pa55")];
    let pushed = push_signed_with(&lab, &to, &key, Some("pw"), &auth);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    assert!(!stderr(&pushed).contains("s3cret-Pa55"));
    let report: Value = serde_json::from_slice(&pushed.stdout).expect("json");
    let digest = report["digest"].as_str().expect("digest");
    let tag = format!("{}.sig", digest.replace(':', "-"));
    let user = Some("ci:s3cret-Pa55");
    let manifest: Value = serde_json::from_slice(
        &get_as(
            &registry,
            "platform/skills",
            &format!("manifests/{tag}"),
            OCI_MANIFEST,
            user,
        )
        .expect("the .sig manifest"),
    )
    .expect("json");
    let layer = &manifest["layers"][0];
    let payload = get_as(
        &registry,
        "platform/skills",
        &format!("blobs/{}", layer["digest"].as_str().expect("digest")),
        "*/*",
        user,
    )
    .expect("payload");
    let payload_file = dir.join("payload.json");
    fs_err::write(&payload_file, &payload).expect("write");
    let signature = layer["annotations"]["dev.cosignproject.cosign/signature"]
        .as_str()
        .expect("signature");
    let verified = cosign_key(
        &[
            "verify",
            public.to_str().expect("utf8"),
            payload_file.to_str().expect("utf8"),
            signature,
        ],
        "",
    );
    assert!(verified.status.success());
    // A second key appends through the same credentials (the existing manifest and config read
    // with them).
    let (second, _) = make_key(dir, "second", "pw", &[]);
    let appended = push_signed_with(&lab, &to, &second, Some("pw"), &auth);
    assert_eq!(appended.status.code(), Some(0), "{}", stderr(&appended));
    let manifest: Value = serde_json::from_slice(
        &get_as(
            &registry,
            "platform/skills",
            &format!("manifests/{tag}"),
            OCI_MANIFEST,
            user,
        )
        .expect("the .sig manifest"),
    )
    .expect("json");
    assert_eq!(manifest["layers"].as_array().map(Vec::len), Some(2));
    // Without credentials the image push is refused, and so nothing is signed.
    let anonymous = push_signed(&lab, &to, &key, Some("pw"));
    assert_eq!(anonymous.status.code(), Some(2));
    assert_stderr_has(&anonymous, "[registry_denied]");
}
